"""NumPy kernels for the data-dependent ops of ``fnx.ir.aten.index_ops``: bincount and
unique (sorted, by dim, consecutive runs), whose output size depends on the values."""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...ir.aten import index_ops as X
from ...ir.dims import wrap_dim
from ._core import data, kernel, wrap


@kernel(X.bincount)
def _bincount(ks, self, weights=None, minlength=0):
    out_dtype = X.check_bincount(self, weights, minlength)
    a = data(self, "bincount").astype(np.int64)
    if a.size and a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return wrap(np.bincount(a, minlength=minlength).astype(np.int64), D.int64)
    w = data(weights, "bincount").astype(np.float64)
    return wrap(np.bincount(a, w, minlength=minlength).astype(out_dtype.numpy), out_dtype)


def _runs(a, axis):
    """Start flags of the runs of equal slices of ``a`` along ``axis`` (NaN != NaN)."""
    n = a.shape[axis]
    moved = np.moveaxis(a, axis, 0).reshape(n, -1)
    new = np.ones(n, bool)
    if n > 1:
        new[1:] = np.any(moved[1:] != moved[:-1], axis=1)
    return new


def _consecutive(a, axis, return_inverse, return_counts, inverse_shape):
    new = _runs(a, axis)
    starts = np.flatnonzero(new)
    values = np.take(a, starts, axis=axis)
    inverse = (np.cumsum(new) - 1).reshape(inverse_shape)
    counts = np.diff(np.append(starts, a.shape[axis]))
    return values, inverse, counts


def _results(self, values, inverse, counts, return_inverse, return_counts):
    empty = np.zeros(0, np.int64)
    return (wrap(np.ascontiguousarray(values), self._dtype),
            wrap(inverse.astype(np.int64) if return_inverse else empty, D.int64),
            wrap(counts.astype(np.int64) if return_counts else empty, D.int64))


def _sorted_unique(a, axis, inverse_shape):
    """Sort slices along ``axis`` (a stable lexicographic order), then take the runs."""
    n = a.shape[axis]
    if n == 0:
        return a, np.zeros(inverse_shape, np.int64), np.zeros(0, np.int64)
    moved = np.moveaxis(a, axis, 0).reshape(n, -1)
    order = np.lexsort(moved.T[::-1]) if moved.shape[1] else np.arange(n)
    srt = np.take(a, order, axis=axis)
    values, run, counts = _consecutive(srt, axis, True, True, (n,))
    inverse = np.empty(n, np.int64)
    inverse[order] = run
    return values, inverse.reshape(inverse_shape), counts


@kernel(X.unique2)
def _unique2(ks, self, sorted=True, return_inverse=False, return_counts=False):
    # PyTorch's CPU unique always sorts, whatever ``sorted`` says
    a = data(self, "unique")
    values, inverse, counts = _sorted_unique(a.reshape(-1), 0, a.shape)
    return _results(self, values, inverse, counts, return_inverse, return_counts)


@kernel(X.unique_dim)
def _unique_dim(ks, self, dim, sorted=True, return_inverse=False, return_counts=False):
    a = data(self, "unique_dim")
    d = wrap_dim(dim, a.ndim)
    values, inverse, counts = _sorted_unique(a, d, (a.shape[d],))
    return _results(self, values, inverse, counts, return_inverse, return_counts)


@kernel(X.unique_consecutive)
def _unique_consecutive(ks, self, return_inverse=False, return_counts=False, dim=None):
    a = data(self, "unique_consecutive")
    if dim is None:
        flat = a.reshape(-1)
        if flat.size == 0:
            return _results(self, flat, np.zeros(a.shape, np.int64), np.zeros(0, np.int64),
                            return_inverse, return_counts)
        values, inverse, counts = _consecutive(flat, 0, return_inverse, return_counts, a.shape)
    else:
        d = wrap_dim(dim, a.ndim)
        if a.shape[d] == 0:
            return _results(self, a, np.zeros(0, np.int64), np.zeros(0, np.int64),
                            return_inverse, return_counts)
        values, inverse, counts = _consecutive(a, d, return_inverse, return_counts,
                                               (a.shape[d],))
    return _results(self, values, inverse, counts, return_inverse, return_counts)


def _insertion_points(boundaries, values, right, sorter, out_int32):
    b, v = data(boundaries, "searchsorted"), np.asarray(data(values, "searchsorted"))
    if sorter is not None:
        s = data(sorter, "searchsorted")
        if s.size and (s.min() < 0 or s.max() >= b.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        b = np.take_along_axis(b, s, -1)
    side = "right" if right else "left"
    if b.ndim == 1:
        out = np.searchsorted(b, v, side=side)
    else:                  # one row of boundaries per row of values
        rows = b.reshape(-1, b.shape[-1])
        vals = v.reshape(rows.shape[0], -1)
        out = np.stack([np.searchsorted(r, x, side=side) for r, x in zip(rows, vals)])
    dt = D.int32 if out_int32 else D.int64
    return wrap(np.asarray(out).reshape(v.shape).astype(dt.numpy), dt)


@kernel(X.searchsorted_Tensor, X.searchsorted_Scalar)
def _searchsorted(ks, sorted_sequence, self, *, out_int32=False, right=False, side=None,
                  sorter=None):
    # a binary search per value: the decomposition compares every value with every boundary
    right = X.check_searchsorted(sorted_sequence, self, right, side, sorter)
    return _insertion_points(sorted_sequence, self, right, sorter, out_int32)


@kernel(X.bucketize_Tensor, X.bucketize_Scalar)
def _bucketize(ks, self, boundaries, *, out_int32=False, right=False):
    X.check_bucketize(boundaries)
    X.check_searchsorted(boundaries, self, right, None, None)
    return _insertion_points(boundaries, self, right, None, out_int32)
