"""Operator definitions, one module per family; importing this package defines them all."""
from .. import prims
from . import (arrange, conversion, elementwise, elementwise_unary, factory, fft, indexing, linalg,
               nn, pointwise_math, random, reduction, shape, sorting, special)

__all__ = ["prims", "arrange", "conversion", "elementwise", "elementwise_unary", "factory",
           "fft", "indexing", "linalg", "nn", "pointwise_math", "random", "reduction", "shape",
           "sorting", "special"]
