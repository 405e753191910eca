"""Python scalars as op arguments: their value, the dtype PyTorch gives them, and c10's
checked conversion to a tensor's dtype (the one place ``fill_``, ``full``, ``masked_fill``,
``constant_pad_nd``, indexing assignments and scatter's value convert a Scalar).
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from ..core import dtype as D
from .strides import is_symbolic_size

__all__ = ["scalar_value", "scalar_dtype", "checked_convert"]

# A Python int PyTorch accepts as a Scalar: int64's range, or uint64's above it.
_SCALAR_INT_MIN, _SCALAR_INT_MAX = -(1 << 63), (1 << 64) - 1


def scalar_value(x):
    """A Scalar argument as a Python number (0-dim tensors and NumPy scalars unwrap)."""
    if hasattr(x, "_ks") or isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (bool, int, float, complex)):
        return x
    if is_symbolic_size(x):
        return int(x)       # a symbolic size (fnx.graph.symint): specialized, with its guard
    raise TypeError(f"expected a Number, got {type(x).__name__}")


def scalar_dtype(x):
    """The dtype PyTorch infers for a Scalar (``full``'s fill value): bool, int64, the
    default float or complex dtype."""
    return D.scalar_dtype(scalar_value(x))


def _float_max(dtype) -> float:
    """The largest finite value of a floating dtype (ml_dtypes knows bfloat16)."""
    return float(ml_dtypes.finfo(dtype.numpy).max)


def checked_convert(value, dtype, *, strict_unsigned=False, check_half=True):
    """``value`` converted to a Python number of ``dtype`` as c10's checked conversion
    does: a value out of the type's range is an overflow error (float and complex types
    check finite values only), an integer's fraction is truncated, any number converts to
    bool, and a negative integer wraps into an unsigned type unless ``strict_unsigned``
    (``constant_pad_nd``). ``check_half=False`` lets float16/bfloat16 round to inf
    unchecked, as ``full`` and indexing assignments do in PyTorch 2.13.

    >>> import fnx
    >>> checked_convert(-1, fnx.uint8), checked_convert(-2.7, fnx.int32)
    (255, -2)
    >>> checked_convert(2, fnx.bool), checked_convert(1e10, fnx.float16, check_half=False)
    (True, 10000000000.0)
    >>> checked_convert(300, fnx.uint8)
    Traceback (most recent call last):
      ...
    RuntimeError: value cannot be converted to type uint8_t without overflow
    """
    v = scalar_value(value)
    if isinstance(v, int) and not _SCALAR_INT_MIN <= v <= _SCALAR_INT_MAX:
        raise OverflowError("int too big to convert" if v > 0 else
                            "can't convert negative int to unsigned")
    if dtype is D.bool:
        return bool(v)
    overflow = RuntimeError(f"value cannot be converted to type {dtype.c_type} "
                            f"without overflow")
    if isinstance(v, complex) and not dtype.is_complex:
        if v.imag != 0 and not math.isnan(v.imag):
            raise overflow
        v = v.real
    if dtype.is_floating_point or dtype.is_complex:
        if check_half or dtype.itemsize > 2 or dtype.is_complex:
            fmax = _float_max(dtype.to_real())
            parts = (v.real, v.imag) if isinstance(v, complex) else (float(v),)
            if any(math.isfinite(p) and abs(p) > fmax for p in parts):
                raise overflow
        if dtype.is_complex:
            return complex(v)
        # a float subclass other than NumPy's (fnx.compile's SymFloat) stays itself
        return v if isinstance(v, float) and not isinstance(v, np.floating) else float(v)
    info = np.iinfo(dtype.numpy)
    lo, hi = int(info.min), int(info.max)
    if isinstance(v, float):
        if math.isnan(v) or not lo <= v <= hi:
            raise overflow
        return int(v)                                       # truncates toward zero
    if v > hi or (v < lo and (strict_unsigned or lo != 0 or -v > hi)):
        raise overflow
    return v & hi if lo == 0 else v                         # unsigned: negatives wrap
