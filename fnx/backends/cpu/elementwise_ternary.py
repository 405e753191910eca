"""NumPy kernels of ``addcmul``, ``addcdiv`` and ``lerp`` (``fnx.ir.aten.elementwise_ternary``)
and of their in-place and ``out=`` variants: one NumPy expression each instead of the
decomposition's chain of prims (optimizers call them on every parameter, every step).

The result dtype and shape come from the op's meta function (its promotion, PyTorch's
checks); the math runs in the op-math dtype (half types in float32) and is cast back.
"""
from __future__ import annotations

import numpy as np

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


def _register_all():
    kernels = {T.addcmul: _addc(T.addcmul, np.multiply),
               T.addcdiv: _addc(T.addcdiv, np.true_divide),
               T.lerp_Scalar: _lerp(T.lerp_Scalar), T.lerp_Tensor: _lerp(T.lerp_Tensor)}
    for op, fk in kernels.items():
        family = VARIANTS[op]
        register(op, fk)
        register(family["inplace"], inplace_from(fk, family["inplace"].name))
        register(family["out"], out_from(fk, op.name))


_register_all()
