"""NumPy kernels for the shape and view ops of ``fnx.ir.aten.shape`` and ``.arrange``.

View kernels return NumPy *views* (basic slicing, ``transpose``, ``squeeze``, or an
``ndarray`` built over the owning array's buffer with PyTorch's strides), so writes
through a view reach the base.  The stride arithmetic comes from fnx/ir/strides.py;
here it is only applied to memory.  Copying kernels return fresh arrays.
"""
from __future__ import annotations

import numpy as np

from ...ir.aten import arrange as A
from ...ir.aten import shape as S
from ...ir.scalars import checked_convert
from ...ir.dims import infer_size, wrap_dims
from ...ir.strides import (VIEW_ERROR, cat_geometry, channels_last_rank, check_as_strided,
                           check_permutation, check_select, check_slice, check_split_sizes,
                           diagonal_geometry, expand_geometry, ints, memory_format_name,
                           pad_geometry, repeat_shape, shape_str, slice_bounds, squeeze_dims,
                           unfold_geometry, unsqueeze_geometry, view_strides)
from ._core import data, kernel, wrap
import math

_ALL = slice(None)


# --------------------------------------------------------------------------- strided memory

def storage_root(arr):
    """The array that owns ``arr``'s memory (following views and as_strided wrappers)."""
    a = arr
    while True:
        b = a.base
        if b is None:
            return a
        if not isinstance(b, np.ndarray):
            b = getattr(b, "base", None)      # numpy's as_strided DummyArray, a memoryview
            if not isinstance(b, np.ndarray):
                return a
        a = b


def _ptr(a) -> int:
    return a.__array_interface__["data"][0]


class _Interface:
    """A raw ``__array_interface__`` (for memory whose owner is not a plain buffer)."""

    def __init__(self, interface, base):
        self.__array_interface__ = interface
        self.base = base


def _over_storage(root, dtype, shape, strides, byte_offset, keep):
    """An ndarray of ``dtype`` over ``root``'s memory; ``strides`` in elements of dtype."""
    isz = dtype.itemsize
    bstrides = tuple(s * isz for s in strides)
    if root.flags.c_contiguous or root.flags.f_contiguous:
        if 0 in shape:
            byte_offset = min(byte_offset, root.nbytes)
        return np.ndarray(shape, dtype, root, byte_offset, bstrides)
    # memory owned by something else (e.g. a foreign buffer): describe it by hand
    iface = {"data": (_ptr(root) + byte_offset, not root.flags.writeable), "shape": shape,
             "strides": bstrides, "typestr": f"|V{isz}", "version": 3}
    return np.asarray(_Interface(iface, keep)).view(dtype)


def strided_view(arr, shape, strides, offset=0, dtype=None):
    """A view of ``arr`` with ``shape``/``strides``/``offset`` in elements, relative to
    ``arr``'s first element (like ``Tensor.as_strided`` relative to its storage offset)."""
    dt = arr.dtype if dtype is None else np.dtype(dtype)
    root = storage_root(arr)
    off = _ptr(arr) - _ptr(root) + offset * dt.itemsize
    return _over_storage(root, dt, tuple(shape), strides, off, arr)


def storage_offset(arr, itemsize) -> int:
    """``Tensor.storage_offset()`` of a NumPy-backed tensor, in elements."""
    return (_ptr(arr) - _ptr(storage_root(arr))) // itemsize


# --------------------------------------------------------------------------- view kernels

@kernel(S.view)
def _view(ks, self, size):
    a = self._data
    shape = infer_size(ints(size, "view"), a.size)
    if a.flags.c_contiguous:
        return wrap(a.reshape(shape), self._dtype)
    strides = view_strides(a.shape, self.stride(), shape)
    if strides is None:
        raise RuntimeError(VIEW_ERROR)
    return wrap(strided_view(a, shape, strides), self._dtype)


@kernel(S._unsafe_view)
def _unsafe_view(ks, self, size):
    a = data(self, "_unsafe_view")
    return wrap(a.reshape(infer_size(ints(size, "_unsafe_view"), a.size)), self._dtype)


@kernel(S.permute)
def _permute(ks, self, dims):
    a = data(self, "permute")
    return wrap(a.transpose(check_permutation(a.ndim, dims)), self._dtype)


@kernel(S.expand)
def _expand(ks, self, size, *, implicit=False):
    a = data(self, "expand")
    shape, strides = expand_geometry(a.shape, self.stride(), size, self._dtype)
    if shape == a.shape:
        return wrap(a.view(), self._dtype)
    return wrap(strided_view(a, shape, strides), self._dtype)


@kernel(S.squeeze_dim)
def _squeeze_dim(ks, self, dim):
    a = data(self, "squeeze")
    return wrap(a.squeeze(axis=squeeze_dims(a.shape, (dim,))), self._dtype)


@kernel(S.squeeze_dims_op)
def _squeeze_dims(ks, self, dim):
    a = data(self, "squeeze")
    return wrap(a.squeeze(axis=squeeze_dims(a.shape, dim)), self._dtype)


@kernel(S.unsqueeze)
def _unsqueeze(ks, self, dim):
    a = data(self, "unsqueeze")
    shape, strides, _ = unsqueeze_geometry(a.shape, self.stride(), dim)
    if a.flags.c_contiguous:
        return wrap(a.reshape(shape), self._dtype)
    return wrap(strided_view(a, shape, strides), self._dtype)


@kernel(S.select_int)
def _select(ks, self, dim, index):
    a = data(self, "select")
    d, i = check_select(a.shape, dim, index)
    # the trailing Ellipsis keeps a 0-dim result a view instead of a NumPy scalar
    return wrap(a[(_ALL,) * d + (i, Ellipsis)], self._dtype)


@kernel(S.slice_Tensor)
def _slice(ks, self, dim=0, start=None, end=None, step=1):
    a = data(self, "slice")
    d = check_slice(a.shape, dim)
    lo, hi, _ = slice_bounds(a.shape[d], start, end, step)
    return wrap(a[(_ALL,) * d + (slice(lo, hi, step),)], self._dtype)


@kernel(S.diagonal)
def _diagonal(ks, self, offset=0, dim1=0, dim2=1):
    a = data(self, "diagonal")
    shape, strides, off = diagonal_geometry(a.shape, self.stride(), offset, dim1, dim2)
    return wrap(strided_view(a, shape, strides, off), self._dtype)


@kernel(S.as_strided)
def _as_strided(ks, self, size, stride, storage_offset=None):
    a = data(self, "as_strided")
    size, stride = check_as_strided(size, stride, storage_offset)
    root = storage_root(a)
    isz = a.itemsize
    off = (_ptr(a) - _ptr(root)) // isz if storage_offset is None else int(storage_offset)
    need = off + 1 + sum((s - 1) * st for s, st in zip(size, stride)) if math.prod(size) else 0
    if need * isz > root.nbytes:
        raise RuntimeError(f"setStorage: sizes {shape_str(size)}, strides {shape_str(stride)}, "
                           f"storage offset {off}, and itemsize {isz} requiring a storage size "
                           f"of {need * isz} are out of bounds for storage of size "
                           f"{root.nbytes}")
    return wrap(_over_storage(root, a.dtype, size, stride, off * isz, a), self._dtype)


@kernel(S.alias, S.detach)
def _alias(ks, self):
    return wrap(data(self, "alias").view(), self._dtype)


@kernel(S.split_with_sizes)
def _split_with_sizes(ks, self, split_sizes, dim=0):
    a = data(self, "split_with_sizes")
    d, sizes = check_split_sizes(a.shape, split_sizes, dim)
    out, start, lead = [], 0, (_ALL,) * d
    for s in sizes:
        out.append(wrap(a[lead + (slice(start, start + s),)], self._dtype))
        start += s
    return out


@kernel(S.unfold)
def _unfold(ks, self, dimension, size, step):
    a = data(self, "unfold")
    shape, strides = unfold_geometry(a.shape, self.stride(), dimension, size, step)
    return wrap(strided_view(a, shape, strides), self._dtype)


@kernel(S.view_as_real)
def _view_as_real(ks, self):
    a = data(self, "view_as_real")
    meta = S.view_as_real.meta(self)
    strides = tuple(2 * s for s in self.stride()) + (1,)
    return wrap(strided_view(a, meta.shape, strides, 0, meta.dtype.numpy), meta.dtype)


@kernel(S.view_as_complex)
def _view_as_complex(ks, self):
    a = data(self, "view_as_complex")
    meta = S.view_as_complex.meta(self)
    strides = tuple(s // 2 for s in self.stride()[:-1])
    return wrap(strided_view(a, meta.shape, strides, 0, meta.dtype.numpy), meta.dtype)


# --------------------------------------------------------------------------- copies

def _dense(shape, strides) -> bool:
    """PyTorch's is_non_overlapping_and_dense: a permutation of contiguous strides."""
    dims = sorted((st, sz) for sz, st in zip(shape, strides) if sz != 1)
    expected = 1
    for st, sz in dims:
        if st != expected:
            return False
        expected *= sz
    return True


def clone_array(a, strides, memory_format=None):
    mf = memory_format_name(memory_format)
    rank = channels_last_rank(mf)
    if rank is not None:
        if a.ndim != rank:
            raise RuntimeError(f"required rank {rank} tensor to use {mf} format")
        # copied in (N, spatial..., C) order, viewed back as (N, C, spatial...)
        last = (0, *range(2, rank), 1)
        return a.transpose(last).copy().transpose(np.argsort(last))
    if mf == "preserve_format" and _dense(a.shape, strides):
        return np.array(a, order="K", copy=True)
    return np.array(a, order="C", copy=True)


@kernel(S.clone)
def _clone(ks, self, *, memory_format=None):
    a = data(self, "clone")
    return wrap(clone_array(a, self.stride(), memory_format), self._dtype)


@kernel(A.cat)
def _cat(ks, tensors, dim=0):
    shape, d, used = cat_geometry(tensors, dim)
    dt = A.cat_dtype(tensors)
    if not used:
        return wrap(np.empty((0,), dt.numpy), dt)
    arrays = [data(tensors[i], "cat") for i in used]
    return wrap(np.concatenate(arrays, axis=d, dtype=dt.numpy, casting="unsafe"), dt)


@kernel(A.flip)
def _flip(ks, self, dims):
    a = data(self, "flip")
    dims = wrap_dims(ints(dims, "flip", "dims"), a.ndim)
    # A 0-dim tensor has nothing to reverse (dim 0 wraps onto it): a copy, as PyTorch.
    return wrap(np.flip(a, axis=dims).copy() if dims and a.ndim else a.copy(), self._dtype)


@kernel(A.repeat)
def _repeat(ks, self, repeats):
    a = data(self, "repeat")
    shape, reps = repeat_shape(a.shape, repeats)
    padded = (1,) * (len(reps) - a.ndim) + a.shape
    out = np.tile(a.reshape(padded), reps) if reps else a.copy()
    return wrap(out, self._dtype)


@kernel(A.constant_pad_nd)
def _constant_pad_nd(ks, self, pad, value=0):
    a = data(self, "constant_pad_nd")
    shape, regions = pad_geometry(a.shape, pad)
    out = np.full(shape, checked_convert(value, self._dtype, strict_unsigned=True), dtype=a.dtype)
    src = tuple(slice(s, e) for s, e, _ in regions)
    dst = tuple(slice(o, o + e - s) for s, e, o in regions)
    out[dst] = a[src]
    return wrap(out, self._dtype)


def _tri(fn, name, inplace):
    def k(ks, self, diagonal=0):
        a = data(self, name)
        if a.ndim < 2:
            raise RuntimeError(f"{name.rstrip('_')}: input tensor must have at least 2 "
                               f"dimensions")
        r = fn(a, diagonal)
        if inplace:
            np.copyto(a, r)
            return self
        return wrap(r, self._dtype)
    return k


kernel(A.tril)(_tri(np.tril, "tril", False))
kernel(A.triu)(_tri(np.triu, "triu", False))
kernel(A.tril_)(_tri(np.tril, "tril_", True))
kernel(A.triu_)(_tri(np.triu, "triu_", True))


# --------------------------------------------------------------------------- scatter views

def _copy_of(self, name):
    a = data(self, name)
    return np.array(a, order="K", copy=True)


@kernel(S.select_scatter)
def _select_scatter(ks, self, src, dim, index):
    S.select_scatter.meta(self, src, dim, index)
    d, i = check_select(self._data.shape, dim, index)
    out = _copy_of(self, "select_scatter")
    out[(_ALL,) * d + (i, Ellipsis)] = data(src, "select_scatter")
    return wrap(out, self._dtype)


@kernel(S.slice_scatter)
def _slice_scatter(ks, self, src, dim=0, start=None, end=None, step=1):
    S.slice_scatter.meta(self, src, dim, start, end, step)
    d = check_slice(self._data.shape, dim)
    lo, hi, _ = slice_bounds(self._data.shape[d], start, end, step)
    out = _copy_of(self, "slice_scatter")
    out[(_ALL,) * d + (slice(lo, hi, step),)] = data(src, "slice_scatter")
    return wrap(out, self._dtype)


@kernel(S.diagonal_scatter)
def _diagonal_scatter(ks, self, src, offset=0, dim1=0, dim2=1):
    S.diagonal_scatter.meta(self, src, offset, dim1, dim2)
    out = _copy_of(self, "diagonal_scatter")
    strides = tuple(s // out.itemsize for s in out.strides)
    shape, st, off = diagonal_geometry(out.shape, strides, offset, dim1, dim2)
    strided_view(out, shape, st, off)[...] = data(src, "diagonal_scatter")
    return wrap(out, self._dtype)


# --------------------------------------------------------------------------- fill, masked_fill

@kernel(A.fill_Scalar, A.fill_Tensor)
def _fill(ks, self, value):
    A.fill_Scalar.meta(self, value)
    a = data(self, "fill")
    out = np.empty_like(a)
    out.fill(checked_convert(value, self._dtype))
    return wrap(out, self._dtype)


@kernel(A.fill__Scalar, A.fill__Tensor)
def _fill_(ks, self, value):
    if hasattr(value, "_ks"):
        A.fill__Tensor.meta(self, value)
    data(self, "fill_").fill(checked_convert(value, self._dtype))
    return self


@kernel(A.zero_)
def _zero_(ks, self):
    data(self, "zero_").fill(0)
    return self


@kernel(A.masked_fill_Scalar, A.masked_fill_Tensor)
def _masked_fill(ks, self, mask, value):
    meta = A.masked_fill_check(self, mask, value, False)
    v = checked_convert(value, self._dtype)
    out = np.broadcast_to(data(self, "masked_fill"), meta.shape).copy()
    np.copyto(out, v, where=np.broadcast_to(data(mask, "masked_fill"), meta.shape),
              casting="unsafe")
    return wrap(out, self._dtype)


@kernel(A.masked_fill__Scalar, A.masked_fill__Tensor)
def _masked_fill_(ks, self, mask, value):
    A.masked_fill_check(self, mask, value, True)
    v = checked_convert(value, self._dtype)
    np.copyto(data(self, "masked_fill_"), v, where=data(mask, "masked_fill_"), casting="unsafe")
    return self
