"""Operator definitions, one module per family; importing this package defines them all."""
from .. import prims
from . import (amp, arrange, combine, complex_ops, conversion, elementwise, elementwise_ternary,
               elementwise_unary, factorizations, factory, fft, index_ops, indexing, linalg,
               matrix_functions, nn, order_statistics, pointwise_math, random, reduction, shape,
               sorting, sparse, special, statistics)
from . import bessel, histogram, polynomials, quantization
from . import out_variants  # after the ops it gives out= forms

__all__ = ["prims", "amp", "arrange", "combine", "complex_ops", "conversion", "elementwise",
           "elementwise_ternary", "elementwise_unary", "factorizations", "factory", "fft",
           "index_ops", "indexing", "linalg", "matrix_functions", "nn", "order_statistics",
           "pointwise_math", "random", "reduction", "shape", "sorting", "sparse", "special",
           "statistics", "histogram", "bessel", "polynomials", "quantization", "out_variants"]
