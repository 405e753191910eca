"""The IR: schemas, op definitions (fnx.ir.aten), shapes and promotion helpers."""
