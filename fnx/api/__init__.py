"""The public functions (``fnx.add``, ``fnx.sum``, ``fnx.zeros``, ...) and Tensor methods.

Each module maps PyTorch's Python signatures onto operator overloads and attaches
the matching ``Tensor`` methods; none of them computes anything itself.
"""
from . import conversion, creation, indexing, linalg, math, nn, reduction, shape, sorting
from .conversion import *  # noqa: F401,F403
from .creation import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .math import *  # noqa: F401,F403
from .nn import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403

__all__ = (conversion.__all__ + creation.__all__ + indexing.__all__ + linalg.__all__ +
           math.__all__ + nn.__all__ + reduction.__all__ + shape.__all__ + sorting.__all__)
