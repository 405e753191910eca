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
