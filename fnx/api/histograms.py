"""``histogram`` (function and Tensor method, PyTorch's signature)."""
from __future__ import annotations

import math

from ..core.tensor import Tensor, tensor_method
from ..ir.aten import histogram as H
from ..ops import aten
from .reduction import return_types

__all__ = ["histogram", "histogramdd"]

return_types.make("histogram", ["hist", "bin_edges"])
return_types.make("histogramdd", ["hist", "bin_edges"])


@tensor_method()
def histogram(input, bins, *, range=None, weight=None, density=False):
    """``(hist, bin_edges)``: a histogram of ``input``'s values in ``bins`` equal bins over
    ``range`` (the data's min and max by default), or in the bins between the increasing
    edges of a 1-D tensor ``bins``; ``weight`` weighs each element, ``density`` normalizes
    to a density (integral 1).  Values outside the edges are not counted; the last edge is
    in the last bin.

    >>> import fnx
    >>> fnx.histogram(fnx.tensor([1., 2., 1., 4.]), 3).hist
    tensor([2., 1., 1.])
    >>> fnx.histogram(fnx.tensor([1., 2., 1.]), fnx.tensor([0., 1.5, 4.])).hist
    tensor([2., 1.])
    """
    if isinstance(bins, Tensor):
        r = H.histogram_bins_tensor(input, bins, weight=weight, density=density)
    else:
        r = H.histogram_bin_ct(input, bins, range=None if range is None else list(range),
                               weight=weight, density=density)
    return return_types.histogram(r)


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """``(hist, bin_edges)``: a histogram of the points in the rows of ``input`` (its last
    dim holds each point's N coordinates). ``bins`` is one bin count for every dim, a
    count per dim, or a 1-D tensor of increasing edges per dim; ``range`` is
    ``[min0, max0, min1, max1, ...]`` (the data's min and max by default); ``weight`` (of
    ``input``'s shape without its last dim) weighs each point; ``density`` divides by the
    total and the bins' volumes. A point outside the edges of any dim is not counted.

    >>> import fnx
    >>> pts = fnx.tensor([[0., 0.], [1., 1.], [0.5, 2.]])
    >>> fnx.histogramdd(pts, [2, 3]).hist
    tensor([[1., 0., 0.],
            [0., 1., 1.]])
    """
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 "
                           "dimensions")
    n = input.shape[-1]
    if isinstance(bins, int):
        bins = [bins] * n
    bins = list(bins)
    if len(bins) != n:
        if bins and isinstance(bins[0], Tensor):
            raise RuntimeError(f"torch.histogramdd: expected {n} sequences of bin edges for "
                               f"a {n}-dimensional histogram but got {len(bins)}")
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if range is not None and len(range) != 2 * n:
        raise RuntimeError(f"torch.histogramdd: for a {n}-dimensional histogram range "
                           f"should have {2 * n} elements, but got {len(range)}")
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have "
                           f"the same shape as the input tensor excluding its innermost "
                           f"dimension, but got input with shape {list(input.shape)} and "
                           f"weight with shape {list(weight.shape)}")
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, it should have "
                           f"the same dtype as the input tensor, but got "
                           f"{weight.dtype.scalar_type}")
    points = input.reshape(-1, n)
    count = points.shape[0]
    w = input.new_ones(count) if weight is None else weight.reshape(-1)
    flat, inside, edges = None, None, []
    for d, b in enumerate(bins):
        x = points[:, d]
        part = None if range is None else [range[2 * d], range[2 * d + 1]]
        e = H.bin_edges(x, b, None if isinstance(b, Tensor) else part)
        edges.append(e)
        nb = e.shape[0] - 1
        if nb == 0 or count == 0:
            continue
        pos, ok = H.bin_positions(x, e, aten.searchsorted.Tensor(e, x, right=True) - 1)
        flat = pos if flat is None else flat * nb + pos
        inside = ok if inside is None else inside & ok
    shape = [e.shape[0] - 1 for e in edges]
    hist = aten.zeros.default([math.prod(shape)], dtype=input.dtype, device=input.device)
    if flat is not None and math.prod(shape):
        hist = hist.scatter_add(0, flat, w.where(inside, w.new_zeros(())))
    hist = hist.reshape(shape)
    if density:
        volume = None
        for d, e in enumerate(edges):
            width = (e[1:] - e[:-1]).reshape([-1] + [1] * (n - 1 - d))
            volume = width if volume is None else volume * width
        hist = hist / (hist.sum() * volume)
    return return_types.histogramdd((hist, tuple(edges)))
