"""Operator definitions, one module per family; importing this package defines them all."""
from .. import prims
from . import (amp, arrange, conversion, elementwise, elementwise_ternary, elementwise_unary,
               factorizations, factory, fft, indexing, linalg, matrix_functions, nn,
               pointwise_math, random, reduction, shape, sorting, special, statistics)
from . import combine

__all__ = ["prims", "amp", "arrange", "combine", "conversion", "elementwise", "elementwise_ternary",
           "elementwise_unary", "factorizations", "factory", "fft", "indexing", "linalg",
           "matrix_functions", "nn", "pointwise_math", "random", "reduction", "shape", "sorting",
           "special", "statistics"]
