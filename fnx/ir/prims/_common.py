"""What the prim family modules share: the registry of prims by name (``OPS``), the
definer (``prim``), and the prim-level helpers their derivative formulas are written with.

Derivative formulas (``@derivative``, next to each prim) are written with prims (``_p``), so
the backward of a prim-level graph stays prim level and is itself differentiable. Complex
inputs follow PyTorch's convention: the gradient of a holomorphic f is grad * conj(f'(z)).
Shapes are static, so formulas branch on shapes and dtypes, never on values.
"""
from __future__ import annotations

from ...ops import prims as _p
from ..registry import defop

__all__ = ["OPS", "PRIM", "POINTWISE", "RNG", "prim", "like", "zeros", "cj", "scale", "plus",
           "rsub", "square", "to_complex", "times", "over", "shift", "permute_to", "unreduce"]

PRIM = ("prim",)
POINTWISE = ("prim", "pointwise")
RNG = ("prim", "nondeterministic")

# ``OPS[name]``: every prim by name (the namespace is also ``fnx.ops.prims``).
OPS = {}


def prim(schema, meta, tags=PRIM):
    """Define the prim of ``schema`` with its meta function."""
    op = defop(schema, tags=tags, meta=meta, namespace="prims")
    OPS[op.name] = op
    return op


# ----------------------------------------------------------------------------- formula helpers

def like(x, value, dtype=None):
    """A tensor of ``x``'s shape and device (and dtype, unless given) filled with ``value``."""
    return _p.full(list(x.shape), value, dtype=dtype or x.dtype, device=x.device)


def zeros(shape, ref):
    """Zeros of ``shape`` with ``ref``'s dtype and device."""
    return _p.full(list(shape), 0, dtype=ref.dtype, device=ref.device)


def cj(x):
    return _p.conj(x) if x.dtype.is_complex else x


def scale(x, c):
    return _p.mul(x, like(x, c))


def plus(x, c):
    return _p.add(x, like(x, c))


def rsub(c, x):
    return _p.sub(like(x, c), x)


def square(x):
    return _p.mul(x, x)


def to_complex(x):
    """A real tensor as the complex tensor ``x + 0j``."""
    return _p.complex(x, like(x, 0))


def times(grad, d):
    """``grad * conj(d)``: the chain rule through a function whose derivative is ``d``."""
    return _p.mul(grad, cj(d))


def over(grad, d):
    """``grad / conj(d)``."""
    return _p.div(grad, cj(d))


def shift(x, dim, d, fill):
    """``y[k] = x[k + d]`` along ``dim``, ``fill`` where ``k + d`` is out of range."""
    low, high = [0] * x.ndim, [0] * x.ndim
    low[dim], high[dim] = -d, d
    return _p.pad(x, fill, low, high, [0] * x.ndim)


def permute_to(x, src):
    """``x``, whose dim ``j`` is dim ``src[j]`` of the wanted layout, transposed into it."""
    perm = [src.index(d) for d in range(len(src))]
    return x if perm == list(range(len(perm))) else _p.transpose(x, perm)


def unreduce(g, shape, dims):
    """A reduction's result-shaped ``g`` broadcast back over the reduced ``dims``."""
    keep = [d for d in range(len(shape)) if d not in dims]
    return _p.broadcast_in_dim(g, list(shape), keep)
