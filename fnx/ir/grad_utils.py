"""Small helpers shared by derivative formulas (written with fnx ops, so differentiable)."""
from __future__ import annotations

import math

from ..ops import aten, prims
from .dims import wrap_dims

__all__ = ["conj", "is_tensor", "zeros_like", "expand_reduced"]


def is_tensor(x) -> bool:
    return hasattr(x, "_ks")


def conj(x):
    """``x.conj()`` for complex tensors; real tensors and numbers are returned as they are."""
    if is_tensor(x):
        if not x._dtype.is_complex:
            return x
        return prims.conj(x)
    return x.conjugate() if isinstance(x, complex) else x


def zeros_like(x):
    return aten.zeros_like.default(x)


def expand_reduced(g, shape, dims, keepdim):
    """Broadcast a reduction's gradient ``g`` back over the input ``shape``."""
    if not keepdim and dims is not None:
        for d in sorted(x % max(len(shape), 1) for x in dims):
            g = aten.unsqueeze.default(g, d)
    elif not keepdim and len(shape):
        g = aten.reshape.default(g, [1] * len(shape))
    return aten.expand.default(g, list(shape))


# ---------------------------------------------------------------------------- core ops
# (helpers of the formulas in ops/elementwise, reduction, linalg, shape, indexing, sorting)

def zeros(shape, like):
    """Zeros of ``shape`` with ``like``'s dtype and device."""
    return aten.zeros.default(list(shape), dtype=like.dtype, device=like.device)


def sgn(x):
    """``x / |x|`` (0 where x is 0): sign for real tensors, the unit phase for complex."""
    if not x._dtype.is_complex:
        return aten.sign.default(x)
    a = aten.abs.default(x)
    zero = aten.eq.Scalar(a, 0)
    return aten.where.self(zero, 0.0, aten.div.Tensor(x, aten.masked_fill.Scalar(a, zero, 1)))


def reduced_dims(dim, ndim):
    """A reduction's ``dim`` argument as sorted non-negative dims (None/[]: every dim;
    a 0-dim input has none)."""
    if ndim == 0:
        return ()
    if dim is None:
        return tuple(range(ndim))
    if not isinstance(dim, (list, tuple)):
        dim = (dim,)
    if len(dim) == 0:
        return tuple(range(ndim))
    return tuple(sorted(wrap_dims(dim, ndim)))


def unreduce(g, shape, dims, keepdim):
    """``g``, the gradient of a reduction over ``dims`` (sorted, non-negative; see
    ``reduced_dims``), with the reduced dims put back as size 1 (not expanded)."""
    if keepdim or not dims or len(shape) == 0:
        return g
    if len(dims) == len(shape):
        return aten.reshape.default(g, [1] * len(shape))
    for d in dims:
        g = aten.unsqueeze.default(g, d)
    return g


def reverse_cumsum(x, dim):
    """``sum(x[..., i:, ...])`` at each ``i`` along ``dim`` (cumsum's backward)."""
    if x.ndim == 0:
        return x
    return aten.flip.default(aten.cumsum.default(aten.flip.default(x, [dim]), dim), [dim])


def trigamma(x):
    """polygamma(1, x) for a float tensor, from differentiable ops: the reflection formula
    below 1/2, six recurrence steps, then the asymptotic series (relative error < 1e-12)."""
    small = aten.lt.Scalar(x, 0.5)
    y = aten.where.self(small, aten.rsub.Scalar(x, 1.0), x)
    acc = None
    for k in range(6):
        term = aten.reciprocal.default(aten.square.default(aten.add.Scalar(y, float(k))))
        acc = term if acc is None else aten.add.Tensor(acc, term)
    z = aten.add.Scalar(y, 6.0)
    inv = aten.reciprocal.default(z)
    inv2 = aten.square.default(inv)
    # 1/z + 1/(2z^2) + 1/(6z^3) - 1/(30z^5) + 1/(42z^7) - 1/(30z^9) + 5/(66z^11)
    poly = aten.full_like.default(inv2, 5 / 66)
    for c in (-1 / 30, 1 / 42, -1 / 30, 1 / 6):      # Horner in 1/z^2
        poly = aten.add.Scalar(aten.mul.Tensor(poly, inv2), c)
    series = aten.add.Tensor(aten.add.Tensor(inv, aten.mul.Scalar(inv2, 0.5)),
                             aten.mul.Tensor(aten.mul.Tensor(poly, inv2), inv))
    t = aten.add.Tensor(acc, series)
    s = aten.sin.default(aten.mul.Scalar(x, math.pi))
    reflected = aten.sub.Tensor(aten.div.Tensor(aten.full_like.default(x, math.pi ** 2),
                                                aten.square.default(s)), t)
    return aten.where.self(small, reflected, t)
