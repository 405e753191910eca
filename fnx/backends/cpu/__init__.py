"""The CPU backend: NumPy kernels registered on ``DispatchKey.CPU``.

NumPy views give real aliasing, so ``y = x[0]; y.add_(1)`` changes ``x``.
"""
import warnings

from . import (conversion, elementwise, elementwise_ternary, factorizations, factory, index_ops,
               indexing, linalg, nn, pointwise_math, prims, random, recurrence, reduction, shape,
               sorting, special)
from . import bessel  # noqa: F401  (after special: the Bessel ATen ops' kernels)
from . import polynomials  # noqa: F401  (the orthogonal-polynomial prims' kernels)
from . import out_variants  # noqa: F401  (the out= forms of decomposed ops)

from . import ctc  # noqa: F401 - the CTC prims' kernels
from ._core import CPU_KS, wrap, wrap_resident

# IEEE results (inf - inf = nan, 0 * inf = nan, log(0) = -inf) are what PyTorch returns,
# silently; NumPy warns. A filter on these modules' warnings costs nothing per call, where
# np.errstate around every shortcut kernel would cost a few microseconds.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"fnx\.backends\.cpu(\.|$)")

__all__ = ["CPU_KS", "wrap", "wrap_resident", "conversion", "elementwise",
           "elementwise_ternary", "factorizations", "factory", "index_ops", "indexing", "linalg",
           "nn", "pointwise_math", "prims", "random", "recurrence", "reduction", "shape", "sorting",
           "special"]
