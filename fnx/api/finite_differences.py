"""``gradient`` (``torch.gradient``): derivatives of sampled values by finite differences,
as NumPy's ``gradient``: second-order central differences inside, first- or second-order
one-sided ones at the edges (``edge_order``), on a uniform grid (a spacing per dim) or at
given coordinates. Written with slices and arithmetic, so it differentiates and compiles.

>>> import fnx
>>> fnx.gradient(fnx.tensor([1., 2., 4., 8.]))
(tensor([1.0000, 1.5000, 3.0000, 4.0000]),)
"""
from __future__ import annotations

from ..core import dtype as D
from ..core.tensor import Tensor
from .shape import cat

__all__ = ["gradient"]


def _cut(t, dim, start, stop):
    return t.narrow(dim, start, stop - start)


def _along(v, dim, ndim):
    """A 1-D tensor ``v`` shaped to broadcast along ``dim`` of an ``ndim``-dim tensor."""
    return v.reshape([-1] + [1] * (ndim - 1 - dim))


def _uniform(f, dim, h, edge_order):
    n = f.shape[dim]
    inner = (_cut(f, dim, 2, n) - _cut(f, dim, 0, n - 2)) / (2 * h)
    a, b = _cut(f, dim, 0, 1), _cut(f, dim, 1, 2)
    y, z = _cut(f, dim, n - 1, n), _cut(f, dim, n - 2, n - 1)
    if edge_order == 1:
        first, last = (b - a) / h, (y - z) / h
    else:
        c, x = _cut(f, dim, 2, 3), _cut(f, dim, n - 3, n - 2)
        first = (-1.5 * a + 2 * b - 0.5 * c) / h
        last = (0.5 * x - 2 * z + 1.5 * y) / h
    return cat([first, inner, last], dim)


def _coordinates(f, dim, x, edge_order):
    n, nd = f.shape[dim], f.ndim
    dx = x[1:] - x[:-1]
    hs, hd = _along(dx[:-1], dim, nd), _along(dx[1:], dim, nd)
    inner = (-hd / (hs * (hs + hd)) * _cut(f, dim, 0, n - 2)
             + (hd - hs) / (hs * hd) * _cut(f, dim, 1, n - 1)
             + hs / (hd * (hs + hd)) * _cut(f, dim, 2, n))
    a, b = _cut(f, dim, 0, 1), _cut(f, dim, 1, 2)
    y, z = _cut(f, dim, n - 1, n), _cut(f, dim, n - 2, n - 1)
    if edge_order == 1:
        first, last = (b - a) / dx[0], (y - z) / dx[-1]
    else:
        c, w = _cut(f, dim, 2, 3), _cut(f, dim, n - 3, n - 2)
        h1, h2 = dx[0], dx[1]
        first = (-(2 * h1 + h2) / (h1 * (h1 + h2)) * a + (h1 + h2) / (h1 * h2) * b
                 - h1 / (h2 * (h1 + h2)) * c)
        h1, h2 = dx[-2], dx[-1]
        last = (h2 / (h1 * (h1 + h2)) * w - (h1 + h2) / (h1 * h2) * z
                + (2 * h2 + h1) / (h2 * (h1 + h2)) * y)
    return cat([first, inner, last], dim)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """A tuple with the derivative of ``input`` along each of ``dim`` (every dim by
    default). ``spacing`` is one step for every dim, a step per dim, or a 1-D tensor of
    coordinates per dim (an uneven grid); ``edge_order`` (1 or 2) is the accuracy of the
    one-sided differences at the ends.

    >>> import fnx
    >>> fnx.gradient(fnx.tensor([[1., 2.], [4., 8.]]), dim=1)
    (tensor([[1., 1.],
            [4., 4.]]),)
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(range(input.ndim)) if dim is None else \
        [dim] if isinstance(dim, int) else list(dim)
    dims = [d + input.ndim if d < 0 else d for d in dims]
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            given = "dim argument was not given" if dim is None else "dim was given"
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a "
                               f"scalar, or a list of length equal to 'self.dim() = "
                               f"{input.ndim}', since {given}, but got a list of length "
                               f"{len(spacing)}")
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    f = input if input.dtype.is_floating_point or input.dtype.is_complex else \
        input.to(D.get_default_dtype())
    out = []
    for d, h in zip(dims, steps):
        if isinstance(h, Tensor):
            if h.ndim != 1 or h.shape[0] != input.shape[d]:
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same "
                                   f"device and a 1-D tensor of size {input.shape[d]} (the "
                                   f"size of dim {d}), but got size {list(h.shape)}")
            x = h if h.dtype.is_floating_point else h.to(f.dtype)
            out.append(_coordinates(f, d, x, edge_order))
        else:
            out.append(_uniform(f, d, h, edge_order))
    return tuple(out)
