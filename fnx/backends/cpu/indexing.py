"""NumPy kernels for the indexing ops of ``fnx.ir.aten.indexing``.

Index tensors become NumPy index tuples (bool masks their nonzero coordinates), and
every bound is checked before anything is written, so a failing in-place op leaves
``self`` untouched.  Accumulating writes use ``ufunc.at`` (duplicates add up).
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...ir.aten import indexing as I
from ...ir.scalars import checked_convert
from ...ir.dims import broadcast_shapes
from ._core import data, kernel, wrap

_ALL = slice(None)


def _first_bad(idx, lo, hi):
    bad = idx[(idx < lo) | (idx >= hi)]
    return int(bad.flat[0]) if bad.size else None


def index_tuple(self, indices, name):
    """(NumPy index tuple, result shape) for ``index``/``index_put``; all checks done."""
    shape = self._data.shape
    I.check_indices(shape, indices)
    idx, entries, dim = [], [], 0
    for x in indices:
        if x is None:
            idx.append(_ALL)
            entries.append(None)
            dim += 1
            continue
        a = data(x, name)
        if I.is_mask(x):
            if a.ndim == 0:
                raise IndexError(f"{name}: a 0-dim boolean index is not supported here; index "
                                 f"with a Python bool or unsqueeze first")
            for nz in np.nonzero(a):
                idx.append(nz)
                entries.append(nz.shape)
            dim += a.ndim
            continue
        size = shape[dim]
        if a.size:
            bad = _first_bad(a, -size, size) if (a.min() < -size or a.max() >= size) else None
            if bad is not None:
                raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size "
                                 f"{size}")
        idx.append(a)
        entries.append(a.shape)
        dim += 1
    return tuple(idx), I.advanced_index_shape(shape, entries)


@kernel(I.index_Tensor)
def _index(ks, self, indices):
    idx, _ = index_tuple(self, indices, "index")
    a = data(self, "index")
    out = a[idx]
    if all(i is _ALL for i in idx) or not out.flags.c_contiguous:
        out = out.copy()       # slices alone give a NumPy view; index always copies
    return wrap(out, self._dtype)


def _index_put_into(out, self, indices, values, accumulate):
    """Validate everything, then write ``values`` into ``out`` (``self`` or its copy)."""
    idx, rshape = index_tuple(self, indices, "index_put_")
    if I.masked_fill_dispatch(self, indices, values, accumulate):
        v = checked_convert(values, self._dtype)
        out[idx] = v
        return
    I.check_index_put(self, indices, values, accumulate, rshape)
    v = data(values, "index_put_")
    if accumulate:
        np.add.at(out, idx, np.broadcast_to(v, rshape))
    else:
        out[idx] = v


@kernel(I.index_put_)
def _index_put_(ks, self, indices, values, accumulate=False):
    _index_put_into(data(self, "index_put_"), self, indices, values, accumulate)
    return self


@kernel(I.index_put)
def _index_put(ks, self, indices, values, accumulate=False):
    out = np.array(data(self, "index_put"), order="K", copy=True)
    _index_put_into(out, self, indices, values, accumulate)
    return wrap(out, self._dtype)


@kernel(I.index_select)
def _index_select(ks, self, dim, index):
    d, shape = I.check_index_select(self, dim, index)
    a, ix = data(self, "index_select"), data(index, "index_select").reshape(-1)
    size = a.shape[d] if a.ndim else 1
    if ix.size and (ix.min() < 0 or ix.max() >= size):
        raise IndexError("index out of range in self")
    src = a if a.ndim else a.reshape(1)
    return wrap(np.take(src, ix, axis=d).reshape(shape), self._dtype)


def _check_bounds(ix, size, d):
    if ix.size and (ix.min() < 0 or ix.max() >= size):
        raise RuntimeError(f"index {_first_bad(ix, 0, size)} is out of bounds for dimension {d} "
                           f"with size {size}")


@kernel(I.gather)
def _gather(ks, self, dim, index, *, sparse_grad=False):
    d = I.check_gather(self, dim, index)
    a, ix = data(self, "gather"), data(index, "gather")
    out_shape = ix.shape
    a1 = a.reshape(1) if a.ndim == 0 else a
    ix1 = ix.reshape(1) if ix.ndim == 0 else ix
    if ix1.size == 0:
        return wrap(np.empty(out_shape, a.dtype), self._dtype)
    _check_bounds(ix1, a1.shape[d], d)
    sub = a1[tuple(_ALL if i == d else slice(0, ix1.shape[i]) for i in range(a1.ndim))]
    return wrap(np.take_along_axis(sub, ix1, axis=d).reshape(out_shape), self._dtype)


_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}


def _scatter_into(out, self, dim, index, src, mode, name, include_self=True):
    """Validate, then write ``src`` (tensor or scalar) into ``out`` at ``index`` along dim."""
    d = I.check_scatter(name, self, dim, index, src if hasattr(src, "_ks") else None)
    ix = data(index, name)
    o = out.reshape(1) if out.ndim == 0 else out          # a view: writes reach out
    ix = ix.reshape(1) if ix.ndim == 0 else ix
    if hasattr(src, "_ks"):
        s = data(src, name)
        s = s.reshape(1) if s.ndim == 0 else s
        vals = s[tuple(slice(0, n) for n in ix.shape)]
    else:
        vals = checked_convert(src, self._dtype)
    if ix.size == 0:
        return
    _check_bounds(ix, o.shape[d], d)
    coords = list(np.indices(ix.shape, sparse=True))
    coords[d] = ix
    coords = tuple(coords)
    if mode == "set":
        o[coords] = vals
        return
    if not include_self:
        o[coords] = _reduce_identity(mode, o.dtype)
    ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
             "amin": np.minimum}[mode]
    ufunc.at(o, coords, np.broadcast_to(vals, ix.shape))
    if mode == "mean":
        count = np.ones(o.shape, np.int64) if include_self else np.zeros(o.shape, np.int64)
        np.add.at(count, coords, 1)
        count[count == 0] = 1
        if o.dtype.kind in "iub":
            o[...] = np.floor_divide(o, count).astype(o.dtype)
        else:
            o[...] = (o / count).astype(o.dtype)


def _reduce_identity(mode, dtype):
    if mode in _IDENTITY:
        return _IDENTITY[mode]
    if dtype.kind == "b":
        return mode == "amin"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if mode == "amax" else info.max
    return -np.inf if mode == "amax" else np.inf


def _scatter_kernel(name, mode, inplace):
    def k(ks, self, dim, index, src):
        if inplace:
            _scatter_into(data(self, name), self, dim, index, src, mode, name)
            return self
        out = np.array(data(self, name), order="K", copy=True)
        _scatter_into(out, self, dim, index, src, mode, name)
        return wrap(out, self._dtype)
    return k


kernel(I.scatter_src, I.scatter_value)(_scatter_kernel("scatter", "set", False))
kernel(I.scatter__src, I.scatter__value)(_scatter_kernel("scatter", "set", True))
kernel(I.scatter_add)(_scatter_kernel("scatter_add", "sum", False))
kernel(I.scatter_add_)(_scatter_kernel("scatter_add", "sum", True))


def _scatter_reduce_kernel(inplace):
    def k(ks, self, dim, index, src, reduce, *, include_self=True):
        I.check_reduce(reduce)
        if inplace:
            _scatter_into(data(self, "scatter_reduce_"), self, dim, index, src, reduce,
                          "scatter_reduce", include_self)
            return self
        out = np.array(data(self, "scatter_reduce"), order="K", copy=True)
        _scatter_into(out, self, dim, index, src, reduce, "scatter_reduce", include_self)
        return wrap(out, self._dtype)
    return k


kernel(I.scatter_reduce_two)(_scatter_reduce_kernel(False))
kernel(I.scatter_reduce__two)(_scatter_reduce_kernel(True))


@kernel(I.masked_select)
def _masked_select(ks, self, mask):
    I.check_mask("masked_select", mask)
    a, m = data(self, "masked_select"), data(mask, "masked_select")
    shape = broadcast_shapes(a.shape, m.shape)
    return wrap(np.broadcast_to(a, shape)[np.broadcast_to(m, shape)], self._dtype)


def _masked_scatter_into(out, mask, source):
    m = np.broadcast_to(data(mask, "masked_scatter"), out.shape)
    n = int(np.count_nonzero(m))
    src = data(source, "masked_scatter").reshape(-1)
    if n > src.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[m] = src[:n]


@kernel(I.masked_scatter)
def _masked_scatter(ks, self, mask, source):
    meta = I.check_masked_scatter(self, mask, source, False)
    out = np.broadcast_to(data(self, "masked_scatter"), meta.shape).copy()
    _masked_scatter_into(out, mask, source)
    return wrap(out, self._dtype)


@kernel(I.masked_scatter_)
def _masked_scatter_(ks, self, mask, source):
    I.check_masked_scatter(self, mask, source, True)
    _masked_scatter_into(data(self, "masked_scatter_"), mask, source)
    return self


@kernel(I.nonzero)
def _nonzero(ks, self):
    return wrap(np.argwhere(data(self, "nonzero")).astype(np.int64, copy=False), D.int64)
