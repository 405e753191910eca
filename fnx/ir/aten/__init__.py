"""Operator definitions, one module per family; importing this package defines them all."""
from .. import prims
from . import (amp, arrange, conversion, elementwise, elementwise_ternary, elementwise_unary,
               factorizations, factory, indexing, linalg, matrix_functions, nn, random,
               reduction, shape, sorting, statistics)

__all__ = ["prims", "amp", "arrange", "conversion", "elementwise", "elementwise_ternary",
           "elementwise_unary", "factorizations", "factory", "indexing", "linalg",
           "matrix_functions", "nn", "random", "reduction", "shape", "sorting", "statistics"]
