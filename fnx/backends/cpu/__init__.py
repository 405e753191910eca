"""The CPU backend: NumPy kernels registered on ``DispatchKey.CPU``.

NumPy views give real aliasing, so ``y = x[0]; y.add_(1)`` changes ``x``.
"""
from . import (conversion, elementwise, elementwise_ternary, factorizations, factory, index_ops,
               indexing, linalg, nn, pointwise_math, prims, random, recurrence, reduction, shape,
               sorting, special)
from . import ctc  # noqa: F401 - the CTC prims' kernels
from ._core import CPU_KS, wrap, wrap_resident

__all__ = ["CPU_KS", "wrap", "wrap_resident", "conversion", "elementwise",
           "elementwise_ternary", "factorizations", "factory", "index_ops", "indexing", "linalg",
           "nn", "pointwise_math", "prims", "random", "recurrence", "reduction", "shape", "sorting",
           "special"]
