"""Helpers for decompositions written with prims: explicit dtypes, shapes and scalars.

Prims neither broadcast nor promote; a decomposition says what it wants with these
helpers, and pointwise decompositions get PyTorch's type promotion by declaration:

    @pointwise(aten.atan2.default, args=("self", "other"))
    def _(self, other):
        return prims.atan2(self, other)     # both already promoted and broadcast

>>> import fnx
>>> from fnx.ir import refs
>>> refs.broadcast_to(fnx.tensor([1., 2.]), (2, 2))
tensor([[1., 2.],
        [1., 2.]])
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from ..core import dtype as D
from ..core.device import CPU
from ..core.tensor import Tensor
from ..ops import aten, prims
from .promotion import NO_OPMATH, elementwise_dtypes, opmath_dtype
from .registry import decomposition
from .dims import broadcast_shapes

__all__ = ["to_dtype", "broadcast_to", "broadcast", "scalar", "full", "as_tensor",
           "device_of", "opmath_dtype", "wrap_int", "promote", "pointwise", "checked"]


def to_dtype(x: Tensor, dtype) -> Tensor:
    """``x`` converted to ``dtype`` (no-op when it already is)."""
    return x if x.dtype is dtype else prims.convert_element_type(x, dtype)


def broadcast_to(x: Tensor, shape) -> Tensor:
    """``x`` broadcast to ``shape`` by NumPy's right-aligned rule (no-op when equal)."""
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    lead = len(shape) - x.ndim
    return prims.broadcast_in_dim(x, list(shape), list(range(lead, len(shape))))


def broadcast(*xs: Tensor):
    """All of ``xs`` broadcast to their common shape."""
    shape = broadcast_shapes(*(tuple(x.shape) for x in xs))
    return [broadcast_to(x, shape) for x in xs]


def checked(x: Tensor, ok: Tensor, message: str, fill) -> Tensor:
    """``x`` after a value check that every element of the bool tensor ``ok`` (``x``'s
    shape, or one that broadcasts to it) holds, else PyTorch's RuntimeError ``message``: the
    refusal an eager kernel makes, made by compiled programs and the cuda backend too. The
    check's result is used (so no pass drops it): where checks are turned off
    (``value_checks=False``), the elements of ``x`` whose ``ok`` fails read ``fill``."""
    flags = prims.check_in_range(to_dtype(aten.logical_not(ok), D.int64), 0, 1,
                                 "RuntimeError", message)
    return aten.where.self(aten.eq.Scalar(flags, 0), x, fill)


def full(shape, value, dtype, device=CPU) -> Tensor:
    return prims.full(list(shape), value, dtype=dtype, device=device)


def scalar(value, dtype, device=CPU) -> Tensor:
    """A 0-dim tensor holding ``value``."""
    return prims.full([], value, dtype=dtype, device=device)


def as_tensor(value, dtype, device=CPU) -> Tensor:
    """A tensor argument converted to ``dtype``, or a Python scalar made a 0-dim tensor."""
    if isinstance(value, Tensor):
        return to_dtype(value, dtype)
    return scalar(value, dtype, device)


def device_of(*values):
    """The device of the first tensor among ``values`` (CPU when there is none)."""
    for v in values:
        if isinstance(v, Tensor):
            return v.device
    return CPU


def wrap_int(value, dtype):
    """A Python int that overflows integer ``dtype`` wrapped around (two's complement), as
    the eager kernels' C casts do (``int8_tensor + 1000``); any other value unchanged."""
    if type(value) is not int or dtype.category != D.int64.category:
        return value
    info = np.iinfo(dtype.numpy)
    lo, hi = int(info.min), int(info.max)
    return value if lo <= value <= hi else (value - lo) % (hi - lo + 1) + lo


def promote(kind: str, args=("self", "other")):
    """Decorator: apply the promotion ``kind`` to the parameters named in ``args``.

    Those arguments (tensors or Python scalars; ``None`` is left alone; Python ints wrap into
    an integer computation dtype) are converted to the computation dtype and broadcast to
    one shape; the result is converted to the
    result dtype.  Half types compute in float32 unless ``kind`` is NO_OPMATH.
    """
    def deco(fn):
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapper(*a, **kw):
            bound = sig.bind(*a, **kw)
            bound.apply_defaults()
            values = [bound.arguments[n] for n in args if bound.arguments[n] is not None]
            compute, result = elementwise_dtypes(kind, *values)
            if kind != NO_OPMATH:
                compute = opmath_dtype(compute)
            device = device_of(*values)
            tensors = broadcast(*(as_tensor(wrap_int(v, compute), compute, device)
                                  for v in values))
            it = iter(tensors)
            for n in args:
                if bound.arguments[n] is not None:
                    bound.arguments[n] = next(it)
            out = fn(*bound.args, **bound.kwargs)
            return to_dtype(out, result)
        return wrapper
    return deco


def pointwise(op, args=("self", "other"), kind=None):
    """Decorator: register a decomposition of pointwise ``op`` with its declared promotion."""
    def deco(fn):
        return decomposition(op)(promote(kind or op.promotion, args)(fn))
    return deco
