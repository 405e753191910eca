"""The IR: schemas, op definitions (fnx.ir.ops), shapes and promotion helpers."""
