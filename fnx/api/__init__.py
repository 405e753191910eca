"""The public functions (``fnx.add``, ``fnx.sum``, ``fnx.zeros``, ...) and Tensor methods.

Each module maps PyTorch's Python signatures onto operator overloads and attaches
the matching ``Tensor`` methods; none of them computes anything itself.
"""
from . import creation, math
from .creation import *  # noqa: F401,F403
from .math import *  # noqa: F401,F403

__all__ = creation.__all__ + math.__all__
