"""Operator definitions, one module per family; importing this package defines them all."""
from . import (conversion, elementwise, factory, indexing, linalg, random,  # noqa: F401
               reduction, shape, sorting)
