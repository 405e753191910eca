"""Small helpers shared by derivative formulas (written with fnx ops, so differentiable)."""
from __future__ import annotations

__all__ = ["conj", "is_tensor", "zeros_like", "expand_reduced"]


def is_tensor(x) -> bool:
    return hasattr(x, "_ks")


def conj(x):
    """``x.conj()`` for complex tensors; real tensors and numbers are returned as they are."""
    if is_tensor(x):
        return x.conj() if x._dtype.is_complex else x
    return x.conjugate() if isinstance(x, complex) else x


def zeros_like(x):
    from ..ops import aten
    return aten.zeros_like.default(x)


def expand_reduced(g, shape, dims, keepdim):
    """Broadcast a reduction's gradient ``g`` back over the input ``shape``."""
    from ..ops import aten
    if not keepdim and dims is not None:
        for d in sorted(x % max(len(shape), 1) for x in dims):
            g = aten.unsqueeze.default(g, d)
    elif not keepdim and len(shape):
        g = aten.reshape.default(g, [1] * len(shape))
    return aten.expand.default(g, list(shape))
