"""``histogram`` (``torch.histogram``): counts of a float tensor's elements in bins given
by their number over a range (``bin_ct``, equal bins over ``range`` or the data's min and
max, widened by 0.5 each way when they are equal) or by a 1-D tensor of increasing edges
(``bins_tensor``); optional per-element ``weight`` and ``density`` normalization.

Both decompose onto ordinary ops (edges, a bin index per element corrected against the
edges so values on an edge land as PyTorch's do, one ``scatter_add``), so they run eagerly,
compiled and on cuda.  Elements outside the edges (and NaN) are not counted; the last edge
belongs to the last bin.  Not differentiable (PyTorch defines no derivative).
"""
from __future__ import annotations

from ...core import dtype as D
from ...ops import aten
from .. import refs
from ..registry import TensorMeta, defop, nondifferentiable
from .shape import _reshape_to

__all__ = ["histogram_bin_ct", "histogram_bins_tensor", "bin_positions", "bin_edges"]


def _check(self, weight, name="histogramdd"):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"{name}" not implemented for '
                                  f"'{self.dtype.scalar_type}'")
    if weight is not None:
        if weight.dtype is not self.dtype:
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, it should "
                               f"have the same dtype as the input tensor, but got "
                               f"{weight.dtype.scalar_type}")
        if tuple(weight.shape) != tuple(self.shape):
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should "
                               "have the same shape as the input tensor excluding its "
                               "innermost dimension")


def _bin_ct_meta(self, bins=100, *, range=None, weight=None, density=False):
    _check(self, weight)
    if bins <= 0:
        raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {bins} for "
                           f"dimension 0")
    if range is not None:
        if len(range) != 2:
            raise RuntimeError(f"torch.histogramdd: for a 1-dimensional histogram range "
                               f"should have 2 elements, but got {len(range)}")
        if range[0] > range[1]:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{range[0]} max {range[1]} for dimension 0")
    return TensorMeta((bins,), self.dtype), TensorMeta((bins + 1,), self.dtype)


def _bins_tensor_meta(self, bins, *, weight=None, density=False):
    _check(self, weight)
    if bins.dtype is not self.dtype:
        raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have "
                           f"the same dtype, but got input {self.dtype.scalar_type} and "
                           f"bins {bins.dtype.scalar_type}")
    if bins.ndim != 1:
        raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but "
                           f"got {bins.ndim} dimensions in the bins tensor for dimension 0")
    if bins.shape[0] < 1:
        raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, "
                           "but got 0 elements for dimension 0")
    nb = max(bins.shape[0] - 1, 0)
    return TensorMeta((nb,), self.dtype), TensorMeta(tuple(bins.shape), self.dtype)


def bin_positions(x, edges, pos):
    """``(bin, inside)`` of each element of flat ``x`` among the bins between ``edges``
    (at least two), given a tentative bin ``pos`` (int64): the bin index corrected against
    the edges, and whether the element lies within the outer edges (NaN does not)."""
    nb = edges.shape[0] - 1
    dev = x.device
    last = refs.scalar(nb - 1, D.int64, dev)
    pos = aten.clamp.Tensor(pos, refs.scalar(0, D.int64, dev), last)
    # an element below its bin's left edge belongs to the bin before; at or above the next
    # edge to the bin after (rounding of the bin-index formula)
    left = aten.gather.default(edges, 0, pos)
    pos = aten.where.self(aten.lt.Tensor(x, left), aten.sub.Scalar(pos, 1), pos)
    right = aten.gather.default(edges, 0, aten.add.Scalar(pos, 1))
    pos = aten.where.self(aten.logical_and.default(aten.ge.Tensor(x, right),
                                                   aten.lt.Tensor(pos, last)),
                          aten.add.Scalar(pos, 1), pos)
    pos = aten.clamp.Tensor(pos, refs.scalar(0, D.int64, dev), last)
    lo, hi = aten.select.int(edges, 0, 0), aten.select.int(edges, 0, nb)
    return pos, aten.logical_and.default(aten.ge.Tensor(x, lo), aten.le.Tensor(x, hi))


def _counts(x, w, edges, pos, density):
    """The histogram of flat ``x`` given each element's tentative bin ``pos`` (int64)."""
    nb = edges.shape[0] - 1
    dev = x.device
    if nb == 0:
        return refs.full([0], 0.0, x.dtype, dev)
    pos, inside = bin_positions(x, edges, pos)
    w = aten.where.self(inside, w, refs.scalar(0.0, x.dtype, dev))
    hist = aten.scatter_add.default(refs.full([nb], 0.0, x.dtype, dev), 0, pos, w)
    if density:
        widths = aten.sub.Tensor(aten.slice.Tensor(edges, 0, 1, nb + 1),
                                 aten.slice.Tensor(edges, 0, 0, nb))
        hist = aten.div.Tensor(hist, aten.mul.Tensor(aten.sum.default(hist), widths))
    return hist


def _flat_inputs(self, weight):
    x = _reshape_to(self, [self.numel()])
    w = refs.full([self.numel()], 1.0, self.dtype, self.device) if weight is None else \
        _reshape_to(weight, [weight.numel()])
    return x, w


def _equal_edges(x, bins, range):
    """``(lo, hi, edges)``: ``bins`` equal bins of flat ``x`` over ``range`` or its min
    and max, widened by 0.5 each way when they are equal; the last edge is ``hi`` itself."""
    dev, dt = x.device, x.dtype
    if range is not None:
        lo, hi = refs.scalar(float(range[0]), dt, dev), refs.scalar(float(range[1]), dt, dev)
    elif x.numel():
        lo, hi = aten.amin.default(x), aten.amax.default(x)
    else:
        lo = hi = refs.scalar(0.0, dt, dev)
    same = aten.eq.Tensor(lo, hi)
    lo = aten.where.self(same, aten.sub.Scalar(lo, 0.5), lo)
    hi = aten.where.self(same, aten.add.Scalar(hi, 0.5), hi)
    steps = aten.div.Scalar(aten.arange.default(bins + 1, dtype=dt, device=dev), bins)
    edges = aten.add.Tensor(lo, aten.mul.Tensor(steps, aten.sub.Tensor(hi, lo)))
    edges = aten.where.self(aten.eq.Scalar(aten.arange.default(bins + 1, device=dev), bins),
                            hi, edges)
    return lo, hi, edges


def bin_edges(x, bins, range=None):
    """The edges ``histogram(x, bins, range=range)`` uses, with its checks: ``bins`` a
    count (equal bins) or a 1-D tensor of edges (returned as a copy); ``x`` 1-D."""
    if isinstance(bins, int):
        _bin_ct_meta(x, bins, range=range)
        return _equal_edges(x, bins, range)[2]
    _bins_tensor_meta(x, bins)
    return aten.clone.default(bins)


def _bin_ct(self, bins=100, *, range=None, weight=None, density=False):
    _bin_ct_meta(self, bins, range=range, weight=weight, density=density)
    x, w = _flat_inputs(self, weight)
    lo, hi, edges = _equal_edges(x, bins, range)
    pos = aten.floor.default(aten.div.Tensor(aten.mul.Scalar(aten.sub.Tensor(x, lo), bins),
                                             aten.sub.Tensor(hi, lo)))
    pos = aten.nan_to_num.default(pos, 0.0)
    pos = refs.to_dtype(aten.clamp.default(pos, -1, bins), D.int64)
    return _counts(x, w, edges, pos, density), edges


def _bins_tensor(self, bins, *, weight=None, density=False):
    _bins_tensor_meta(self, bins, weight=weight, density=density)
    x, w = _flat_inputs(self, weight)
    pos = aten.sub.Scalar(aten.searchsorted.Tensor(bins, x, right=True), 1)
    edges = aten.clone.default(bins)
    return _counts(x, w, edges, pos, density), edges


histogram_bin_ct = defop("histogram.bin_ct(Tensor self, int bins=100, *, float[]? range=None, "
                         "Tensor? weight=None, bool density=False) -> (Tensor hist, "
                         "Tensor bin_edges)", meta=_bin_ct_meta, decomposition=_bin_ct)
histogram_bins_tensor = defop("histogram.bins_tensor(Tensor self, Tensor bins, *, "
                              "Tensor? weight=None, bool density=False) -> (Tensor hist, "
                              "Tensor bin_edges)", meta=_bins_tensor_meta,
                              decomposition=_bins_tensor)
nondifferentiable(histogram_bin_ct, histogram_bins_tensor)
