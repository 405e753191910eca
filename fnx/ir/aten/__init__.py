"""Operator definitions, one module per family; importing this package defines them all."""
from .. import prims  # noqa: F401
from . import (conversion, elementwise, factory, indexing, linalg, nn, random,  # noqa: F401
               reduction, shape, sorting)
