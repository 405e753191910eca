"""``finfo`` and ``iinfo``: the numerical limits of a dtype, as PyTorch's ``torch.finfo`` and
``torch.iinfo`` give them (Python floats and ints; a complex dtype reports its real part's).
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from . import dtype as D

__all__ = ["finfo", "iinfo"]


def _name(t) -> str:
    return repr(t) if isinstance(t, D.dtype) else type(t).__name__


class _TypeInfo:
    """What ``finfo`` and ``iinfo`` share: equal when they describe the same dtype."""
    __slots__ = ("_type",)

    def __eq__(self, other):
        return type(other) is type(self) and other._type is self._type

    def __hash__(self):
        return hash((type(self).__name__, self._type.name))


class finfo(_TypeInfo):
    """The limits of a floating point (or complex) dtype; the default dtype when none is
    given. ``bits``, ``eps`` (the gap above 1.0), ``max``, ``min``, ``tiny`` (the smallest
    normal, also ``smallest_normal``), ``resolution`` (``10 ** -digits``) and ``dtype``
    (the name of the real type).

    >>> import fnx
    >>> fi = fnx.finfo(fnx.float16)
    >>> fi.max, fi.eps, fi.tiny, fi.resolution
    (65504.0, 0.0009765625, 6.103515625e-05, 0.001)
    >>> fnx.finfo(fnx.complex64).dtype, fnx.finfo().bits
    ('float32', 32)
    """

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                 "dtype")

    def __init__(self, type=None):
        t = D.get_default_dtype() if type is None else type
        if not isinstance(t, D.dtype):
            raise TypeError(f"finfo(): argument 'type' must be fnx.dtype, not {_name(t)}")
        if not (t.is_floating_point or t.is_complex):
            raise TypeError(f"fnx.finfo() requires a floating point input type, got {t!r}; "
                            f"use fnx.iinfo for it")
        real = t.to_real()
        info = ml_dtypes.finfo(real.numpy)
        self._type = t
        self.bits = real.itemsize * 8
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        # 10 ** -(decimal digits the type holds), computed in double as PyTorch does
        # (NumPy's own resolution is rounded to the type: float32's is 9.99999997e-07)
        self.resolution = math.pow(10.0, -int(info.precision))
        self.dtype = real.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo(_TypeInfo):
    """The limits of an integer dtype: ``bits``, ``max``, ``min`` (Python ints) and
    ``dtype`` (its name). ``bool`` is not an integer type here, as in PyTorch.

    >>> import fnx
    >>> fnx.iinfo(fnx.int32).max, fnx.iinfo(fnx.uint8).min, fnx.iinfo(fnx.int64).bits
    (2147483647, 0, 64)
    """

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):
        if not isinstance(type, D.dtype):
            raise TypeError(f"iinfo(): argument 'type' must be fnx.dtype, not {_name(type)}")
        if type is D.bool:
            raise TypeError("fnx.bool is not supported by fnx.iinfo")
        if type.category != D._INT:
            raise TypeError(f"fnx.iinfo() requires an integer input type, got {type!r}; "
                            f"use fnx.finfo for it")
        info = np.iinfo(type.numpy)
        self._type = type
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = type.name

    def __repr__(self):
        # (PyTorch prints the limits as doubles: iinfo(min=-2.14748e+09, ...))
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"
