"""Operator definitions, one module per family; importing this package defines them all."""
from . import elementwise  # noqa: F401
