"""NumPy kernels of ``addcmul``, ``addcdiv`` and ``lerp`` (``fnx.ir.aten.elementwise_ternary``)
and of their in-place and ``out=`` variants: one NumPy expression each instead of the
decomposition's chain of prims (optimizers call them on every parameter, every step).

The result dtype and shape come from the op's meta function (its promotion, PyTorch's
checks); the math runs in the op-math dtype (half types in float32) and is cast back.
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...core.device import CPU
from ...core.tensor import Tensor
from ...ir.aten import elementwise_ternary as T
from ...ir.aten.elementwise import _python_value
from ...ir.promotion import opmath_dtype
from ...ir.variants import VARIANTS
from ._core import data, register, wrap
from .elementwise import _cast, inplace_from, out_from


def _addc(op, combine):
    """``self + (value * tensor1) <combine> tensor2`` (PyTorch's order of operations)."""
    def kernel(ks, self, tensor1, tensor2, *, value=1):
        meta = op.meta(self, tensor1, tensor2, value=value)
        compute = opmath_dtype(meta.dtype).numpy
        a, b, c = (_cast(data(x, op.name), compute) for x in (self, tensor1, tensor2))
        value = _python_value(value)
        if value != 1 or isinstance(value, complex):
            b = _cast(value, compute) * b       # the value cast to the compute dtype
        with np.errstate(all="ignore"):
            r = np.asarray(a + combine(b, c))
        return wrap(r.astype(meta.dtype.numpy, copy=False), meta.dtype)
    return kernel


def _lerp(op):
    """``self + w (end - self)`` for ``|w| < 0.5``, else ``end - (end - self)(1 - w)``."""
    def kernel(ks, self, end, weight):
        meta = op.meta(self, end, weight)
        compute = opmath_dtype(meta.dtype).numpy
        s, e = _cast(data(self, op.name), compute), _cast(data(end, op.name), compute)
        with np.errstate(all="ignore"):
            diff = e - s
            if isinstance(weight, Tensor):
                w = _cast(data(weight, op.name), compute)
                r = np.where(np.abs(w) < 0.5, s + w * diff, e - diff * (1 - w))
            else:
                w = _cast(_python_value(weight), compute)
                r = s + w * diff if abs(w) < 0.5 else e - diff * (1 - w)
        r = np.broadcast_to(r, meta.shape) if np.shape(r) != tuple(meta.shape) else r
        return wrap(np.array(r, dtype=meta.dtype.numpy), meta.dtype)
    return kernel


def _same(self, *others) -> bool:
    """The in-place shortcut applies: CPU float32/float64 tensors of one dtype and shape,
    with at least one dimension (NumPy gives a 0-dim result as a scalar, not an array that
    ``out=`` can write: a 0-dim parameter, CLIP's ``logit_scale``, takes the checked path)."""
    d = self._dtype
    if self._device is not CPU or (d is not D.float32 and d is not D.float64):
        return False
    shape = self._data.shape
    if not shape:
        return False
    return all(o.__class__ is Tensor and o._dtype is d and o._device is CPU and
               o._data.shape == shape for o in others)


def _addc_(combine, checked):
    """``addcmul_``/``addcdiv_`` with one temporary, written into ``self`` (the optimizers'
    case); anything else, or a failed write, takes the checked path."""
    def kernel(ks, self, tensor1, tensor2, *, value=1):
        if _same(self, tensor1, tensor2) and not isinstance(value, (Tensor, complex)):
            s = self._data
            try:
                with np.errstate(all="ignore"):
                    tmp = np.multiply(tensor1._data, value) if value != 1 else \
                        tensor1._data.copy()
                    combine(tmp, tensor2._data, out=tmp)
                    np.add(s, tmp, out=s)
                return self
            except ValueError:          # read-only data: the checked path says why
                pass
        return checked(ks, self, tensor1, tensor2, value=value)
    return kernel


def _lerp_(checked):
    """``lerp_`` with a number weight and one temporary (the optimizers' case)."""
    def kernel(ks, self, end, weight):
        if _same(self, end) and isinstance(weight, (int, float)):
            s, e = self._data, end._data
            w = s.dtype.type(weight)
            try:
                with np.errstate(all="ignore"):
                    diff = np.subtract(e, s)
                    if abs(w) < 0.5:
                        np.multiply(diff, w, out=diff)
                        np.add(s, diff, out=s)
                    else:
                        np.multiply(diff, s.dtype.type(1) - w, out=diff)
                        np.subtract(e, diff, out=s)
                return self
            except ValueError:
                pass
        return checked(ks, self, end, weight)
    return kernel


def _register_all():
    kernels = {T.addcmul: _addc(T.addcmul, np.multiply),
               T.addcdiv: _addc(T.addcdiv, np.true_divide),
               T.lerp_Scalar: _lerp(T.lerp_Scalar), T.lerp_Tensor: _lerp(T.lerp_Tensor)}
    fast = {T.addcmul: lambda c: _addc_(np.multiply, c),
            T.addcdiv: lambda c: _addc_(np.true_divide, c), T.lerp_Scalar: _lerp_}
    for op, fk in kernels.items():
        family = VARIANTS[op]
        register(op, fk)
        inplace = inplace_from(fk, family["inplace"].name)
        register(family["inplace"], fast[op](inplace) if op in fast else inplace)
        register(family["out"], out_from(fk, op.name))


_register_all()
