"""Small compositions PyTorch names (NumPy's spellings, mostly): ``fmax``/``fmin`` (NaN-ignoring),
``positive``, ``isposinf``/``isneginf``, ``isreal``, ``inner``, ``vdot``, ``deg2rad``/
``rad2deg``, ``trapz``.

>>> import fnx
>>> fnx.absolute(fnx.tensor([-1, 2])).tolist(), fnx.tensor([1.5, -1.5]).fix().tolist()
([1, 2], [1.0, -1.0])
>>> fnx.fmax(fnx.tensor([1.0, float("nan")]), fnx.tensor([float("nan"), 2.0])).tolist()
[1.0, 2.0]
"""
from __future__ import annotations

import math

from ..core import dtype as D
from ..core.tensor import tensor_method
from . import combine as _combine
from . import math as _m
from .creation import ones_like as _ones_like
from .linalg import dot as _dot
from .linalg import tensordot as _tensordot

__all__ = ["fmax", "fmin", "positive", "isposinf", "isneginf", "isreal", "inner", "vdot",
           "deg2rad", "rad2deg", "trapz"]

def _nan_ignoring(pick):
    def fn(input, other):
        r = pick(input, other)
        if not (r.dtype.is_floating_point or r.dtype.is_complex):
            return r
        return _m.where(_m.isnan(input), other, _m.where(_m.isnan(other), input, r)).to(r.dtype)
    return fn


@tensor_method()
def fmax(input, other):
    """The elementwise maximum, ignoring NaN (NaN only where both are NaN).

    >>> import fnx
    >>> fnx.fmax(fnx.tensor([1.0, 5.0]), fnx.tensor([float("nan"), 2.0])).tolist()
    [1.0, 5.0]
    """
    return _nan_ignoring(_m.maximum)(input, other)


@tensor_method()
def fmin(input, other):
    """The elementwise minimum, ignoring NaN (NaN only where both are NaN).

    >>> import fnx
    >>> fnx.fmin(fnx.tensor([1.0, 5.0]), fnx.tensor([float("nan"), 2.0])).tolist()
    [1.0, 2.0]
    """
    return _nan_ignoring(_m.minimum)(input, other)


@tensor_method()
def positive(input):
    """``input`` itself (``+input``); refused for bool as PyTorch refuses it.

    >>> import fnx
    >>> fnx.positive(fnx.tensor([-1, 2])).tolist()
    [-1, 2]
    """
    if input.dtype is D.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@tensor_method()
def isposinf(input):
    """Where ``input`` is +inf.

    >>> import fnx
    >>> fnx.isposinf(fnx.tensor([float("inf"), -float("inf"), 1.0])).tolist()
    [True, False, False]
    """
    return _m.logical_and(_m.isinf(input), _m.gt(input, 0))


@tensor_method()
def isneginf(input):
    """Where ``input`` is -inf.

    >>> import fnx
    >>> fnx.isneginf(fnx.tensor([float("inf"), -float("inf"), 1.0])).tolist()
    [False, True, False]
    """
    return _m.logical_and(_m.isinf(input), _m.lt(input, 0))


@tensor_method()
def isreal(input):
    """Where ``input`` is real: a zero imaginary part (every element of a real tensor).

    >>> import fnx
    >>> fnx.isreal(fnx.tensor([1 + 0j, 1j])).tolist()
    [True, False]
    """
    if input.dtype.is_complex:
        return _m.eq(input.imag, 0)
    return _ones_like(input, dtype=D.bool)


@tensor_method()
def inner(input, other):
    """The inner product over the last dims (a product when either is 0-dim).

    >>> import fnx
    >>> fnx.inner(fnx.tensor([1., 2.]), fnx.tensor([3., 4.])).item()
    11.0
    """
    if input.ndim == 0 or other.ndim == 0:
        return _m.mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return _tensordot(input, other, dims=([input.ndim - 1], [other.ndim - 1]))


@tensor_method()
def vdot(input, other):
    """The dot product of two 1-D tensors, the first conjugated.

    >>> import fnx
    >>> fnx.vdot(fnx.tensor([1j, 2.]), fnx.tensor([1j, 1.])).item()
    (3+0j)
    """
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           f"tensors")
    return _dot(input.conj() if input.dtype.is_complex else input, other)


@tensor_method()
def deg2rad(input):
    """Degrees to radians.

    >>> import fnx
    >>> round(fnx.deg2rad(fnx.tensor([180.0])).item(), 4)
    3.1416
    """
    return _m.mul(input, math.pi / 180)


@tensor_method()
def rad2deg(input):
    """Radians to degrees.

    >>> import fnx
    >>> round(fnx.rad2deg(fnx.tensor([3.141592653589793])).item(), 4)
    180.0
    """
    return _m.mul(input, 180 / math.pi)


def trapz(y, x=None, *, dx=None, dim=-1):
    """``trapezoid``'s older name.

    >>> import fnx
    >>> fnx.trapz(fnx.tensor([1., 2., 3.])).item()
    4.0
    """
    if x is not None:
        return _combine.trapezoid(y, x, dim=dim)
    return _combine.trapezoid(y, dx=1 if dx is None else dx, dim=dim)
