"""NumPy kernels of the SparseCPU (COO) and SparseCsrCPU (csr/csc/bsr/bsc) keys, and the
CPU kernels that make sparse tensors from dense ones (constructors, ``to_sparse*``).

Every conversion goes through two NumPy forms: the COO arrays (``_coo``: indices, values)
and the dense array (``_dense``); a kernel reads its operands in whichever form suits it.
Results are new tensors; only the ``sparse_resize*`` ops write their argument.
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...core.dispatch_key import AUTOGRAD_BITS, DispatchKey
from ...core.tensor import Tensor
from ...core.layout import (COMPRESSED, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc,
                            sparse_csr, strided)
from ...ir.aten import sparse as S
from ...ops import aten
from ..cpu._core import wrap
from .storage import make_compressed, make_coo

__all__ = ["coo_arrays", "dense_array", "from_dense", "coalesce_arrays"]

_SPARSE = DispatchKey.SparseCPU
_CSR = DispatchKey.SparseCsrCPU
_ROW_MAJOR = (sparse_csr, sparse_bsr)
_NAME = {sparse_coo: "Sparse", sparse_csr: "SparseCsr", sparse_csc: "SparseCsc",
         sparse_bsr: "SparseBsr", sparse_bsc: "SparseBsc", strided: "Strided"}


def _kernel(*ops, keys=(_SPARSE, _CSR)):
    def deco(fn):
        for op in ops:
            for k in keys:
                op.register(k, fn)
        return fn
    return deco


def _handle(t):
    """A new handle on the data of component ``t``, outside autograd: a sparse tensor never
    holds, nor hands out, a tensor someone else tracks (writes still reach its data)."""
    return Tensor._make(t._data, t._dtype, t._device, t._ks & ~AUTOGRAD_BITS)


def _i64(a):
    return wrap(np.ascontiguousarray(a, dtype=np.int64), D.int64)


# ------------------------------------------------------------------ NumPy forms

def coalesce_arrays(idx, vals, shape):
    """Sorted unique indices (row-major) and the summed values of each position."""
    sd = idx.shape[0]
    if idx.shape[1] == 0:
        return idx, vals
    lin = np.ravel_multi_index(tuple(idx), shape[:sd]) if sd else np.zeros(idx.shape[1], int)
    uniq, inv = np.unique(lin, return_inverse=True)
    out = np.zeros((len(uniq),) + vals.shape[1:], vals.dtype)
    np.add.at(out, inv.reshape(-1), vals)
    new_idx = np.stack(np.unravel_index(uniq, shape[:sd])) if sd else \
        np.zeros((0, len(uniq)), np.int64)
    return new_idx.astype(np.int64).reshape(sd, len(uniq)), out


def _major(comp):
    """The compressed dim's index of every stored entry."""
    return np.repeat(np.arange(len(comp) - 1), np.diff(comp))


def coo_arrays(t):
    """(indices [sparse_dim, nnz], values) of any sparse tensor; a blocked one's via its
    dense array."""
    st = t._data
    if st.layout is sparse_coo:
        return st.indices._data, st.values._data
    if st.blocksize is not None:
        return from_dense(dense_array(t), 2)
    comp, plain = st.compressed._data, st.plain._data
    rows, cols = (_major(comp), plain) if st.layout is sparse_csr else (plain, _major(comp))
    return np.stack([rows, cols]).astype(np.int64).reshape(2, -1), st.values._data


def dense_array(t):
    """The dense NumPy array of a sparse tensor (duplicates summed)."""
    st = t._data
    out = np.zeros(st.shape, t._dtype.numpy)
    if st.layout is sparse_coo or st.blocksize is None:
        idx, vals = coo_arrays(t)
        np.add.at(out, tuple(idx), vals)
        return out
    bh, bw = st.blocksize
    nr, nc = st.shape[0] // bh, st.shape[1] // bw
    blocks = np.zeros((nr, nc, bh, bw) + st.shape[2:], out.dtype)
    major, plain = _major(st.compressed._data), st.plain._data
    rb, cb = (major, plain) if st.layout is sparse_bsr else (plain, major)
    np.add.at(blocks, (rb, cb), st.values._data)
    return np.swapaxes(blocks, 1, 2).reshape(st.shape)


def from_dense(arr, sd):
    """COO arrays of the non-zero entries of ``arr`` over its first ``sd`` dims (row-major)."""
    lead = arr.shape[:sd]
    flat = arr.reshape(lead + (-1,)) if arr.ndim > sd else arr[..., None]
    nz = np.nonzero(np.any(flat != 0, axis=-1))
    idx = np.stack(nz).astype(np.int64) if sd else np.zeros((0, int(flat.any())), np.int64)
    return idx.reshape(sd, -1), (arr[nz] if sd else arr[None][:idx.shape[1]])


def _compress(major, minor, n_major, order_vals):
    order = np.lexsort((minor, major))
    counts = np.bincount(major, minlength=n_major)
    comp = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return comp, minor[order], order_vals[order]


def _to_compressed(t, layout, blocksize, dense_dim, dtype):
    """``t`` (dense or sparse) in a compressed layout (2 sparse dims, no batch dims)."""
    what = "to_sparse_" + layout.name[7:]
    dd = dense_dim if dense_dim is not None else \
        (t._data.dense_dim if t.layout is not strided else 0)
    ndim = len(t.shape)
    if ndim - dd != 2:
        raise RuntimeError(f"{what}: expected a tensor with 2 sparse dims (and {dd} dense "
                           f"dims; fnx has no batch dims for compressed layouts), got "
                           f"{ndim} dims")
    shape = tuple(t.shape)
    if layout in (sparse_bsr, sparse_bsc):
        arr = t._data if t.layout is strided else dense_array(t)
        bh, bw = (int(b) for b in blocksize)
        if bh <= 0 or bw <= 0 or shape[0] % bh or shape[1] % bw:
            raise RuntimeError(f"{what}: tensor sparse size ({shape[0]}, {shape[1]}) must be "
                               f"divisible by given blocksize ({bh}, {bw}).")
        nr, nc = shape[0] // bh, shape[1] // bw
        blocks = np.swapaxes(arr.reshape((nr, bh, nc, bw) + shape[2:]), 1, 2)
        flat = blocks.reshape((nr, nc, -1))
        rb, cb = np.nonzero(np.any(flat != 0, axis=-1))
        vals = blocks[rb, cb]
        major, minor, n = (rb, cb, nr) if layout is sparse_bsr else (cb, rb, nc)
        comp, plain, vals = _compress(major, minor, n, vals)
        return make_compressed(layout, _i64(comp), _i64(plain), wrap(np.ascontiguousarray(vals),
                               dtype), shape, dtype, (bh, bw))
    if t.layout is strided:
        idx, vals = from_dense(t._data, 2)
    else:
        idx, vals = coalesce_arrays(*coo_arrays(t), shape)
    rows, cols = idx[0], idx[1]
    major, minor, n = (rows, cols, shape[0]) if layout is sparse_csr else (cols, rows, shape[1])
    comp, plain, vals = _compress(major, minor, n, vals)
    return make_compressed(layout, _i64(comp), _i64(plain), wrap(np.ascontiguousarray(vals),
                           dtype), shape, dtype)


def _coo(idx, vals, shape, dtype, coalesced=False):
    return make_coo(_i64(idx), wrap(np.ascontiguousarray(vals, dtype=dtype.numpy), dtype),
                    shape, dtype, coalesced)


def _to_coo(t, sd=None):
    if t.layout is sparse_coo and (sd is None or sd == t._data.sparse_dim):
        return t
    if t.layout is strided or sd is not None:
        arr = t._data if t.layout is strided else dense_array(t)
        sd = arr.ndim if sd is None else sd
        if not 0 <= sd <= arr.ndim:
            raise RuntimeError(f"sparse_dim argument must be in [0, {arr.ndim}] range, but "
                               f"{sd} is given")
        idx, vals = from_dense(arr, sd)
        return _coo(idx, vals, arr.shape, t._dtype, True)
    idx, vals = coalesce_arrays(*coo_arrays(t), t.shape)
    return _coo(idx, vals, t.shape, t._dtype, True)


# ------------------------------------------------------------------ constructors

@_kernel(S.sparse_coo_tensor_with_dims_and_tensors, keys=(DispatchKey.CPU,))
def _new_coo(ks, sparse_dim, dense_dim, size, indices, values, *, dtype=None, layout=None,
             device=None, pin_memory=None, is_coalesced=None):
    dtype = dtype or values._dtype
    v = _handle(values) if dtype is values._dtype else wrap(values._data.astype(dtype.numpy),
                                                            dtype)
    return make_coo(_handle(indices), v, tuple(size), dtype, bool(is_coalesced))


@_kernel(S.sparse_compressed_tensor_unsafe, keys=(DispatchKey.CPU,))
def _new_compressed(ks, compressed_indices, plain_indices, values, size, *, dtype=None,
                    layout=None, device=None, pin_memory=None):
    dtype = dtype or values._dtype
    layout = layout or sparse_csr
    values = _handle(values) if values._dtype is dtype else \
        wrap(values._data.astype(dtype.numpy), dtype)
    blocksize = tuple(values.shape[1:3]) if layout in (sparse_bsr, sparse_bsc) else None
    return make_compressed(layout, _handle(compressed_indices), _handle(plain_indices), values,
                           tuple(size), dtype, blocksize)


# ------------------------------------------------------------------ conversions

@_kernel(S.to_dense)
def _to_dense(ks, self, dtype=None, masked_grad=None):
    out = dense_array(self)
    dtype = dtype or self._dtype
    return wrap(out.astype(dtype.numpy, copy=False), dtype)


@_kernel(S.to_sparse_sparse_dim, keys=(DispatchKey.CPU, _SPARSE, _CSR))
def _to_sparse_dim(ks, self, sparse_dim):
    return _to_coo(self, sparse_dim)


@_kernel(S.to_sparse, keys=(DispatchKey.CPU, _SPARSE, _CSR))
def _to_sparse(ks, self, *, layout=None, blocksize=None, dense_dim=None):
    layout = layout or sparse_coo
    if layout is sparse_coo:
        if blocksize is not None:
            raise RuntimeError("to_sparse for Strided to Sparse conversion does not use "
                               "specified blocksize")
        return _to_coo(self) if dense_dim is None else _to_coo(self, self.ndim - dense_dim)
    if layout in (sparse_bsr, sparse_bsc) and blocksize is None:
        raise RuntimeError(f"to_sparse: conversion to {_NAME[layout]} requires blocksize")
    return _convert(self, layout, blocksize, dense_dim)


def _convert(self, layout, blocksize=None, dense_dim=None):
    st = self._data
    if self.layout is layout and (blocksize is None or tuple(blocksize) == st.blocksize):
        return self
    return _to_compressed(self, layout, blocksize, dense_dim, self._dtype)


for _op, _lay in ((S.to_sparse_csr, sparse_csr), (S.to_sparse_csc, sparse_csc)):
    _kernel(_op, keys=(DispatchKey.CPU, _SPARSE, _CSR))(
        lambda ks, self, dense_dim=None, _lay=_lay: _convert(self, _lay, None, dense_dim))
for _op, _lay in ((S.to_sparse_bsr, sparse_bsr), (S.to_sparse_bsc, sparse_bsc)):
    _kernel(_op, keys=(DispatchKey.CPU, _SPARSE, _CSR))(
        lambda ks, self, blocksize, dense_dim=None, _lay=_lay:
            _convert(self, _lay, blocksize, dense_dim))


# ------------------------------------------------------------------ components

def _expect(self, what, layouts, expected):
    if self.layout not in layouts:
        raise RuntimeError(f"{what} expected {expected} layout but got "
                           f"{_NAME[self.layout]}")


_COO_WORDS = "sparse coordinate tensor"


def _component(op, read, coalesced_only, layouts, words):
    name = op.name.lstrip("_")

    def kernel(ks, self):
        _expect(self, name, layouts, words)
        if coalesced_only and not self._data.coalesced:
            raise RuntimeError(f"Cannot get {name} on an uncoalesced tensor, please call "
                               f".coalesce() first")
        return _handle(read(self._data))
    for k in (_SPARSE, _CSR, DispatchKey.CPU):    # (on a strided tensor: PyTorch's error)
        op.register(k, kernel)


_component(S.indices, lambda st: st.indices, True, (sparse_coo,), _COO_WORDS)
_component(S.indices_, lambda st: st.indices, False, (sparse_coo,), _COO_WORDS)
_component(S.values, lambda st: st.values, True, (sparse_coo, *COMPRESSED),
           "sparse tensor")
_component(S.values_, lambda st: st.values, False, (sparse_coo,), _COO_WORDS)
_component(S.crow_indices, lambda st: st.compressed, False, _ROW_MAJOR,
           "sparse row compressed tensor")
_component(S.col_indices, lambda st: st.plain, False, _ROW_MAJOR,
           "sparse row compressed tensor")
_component(S.ccol_indices, lambda st: st.compressed, False, (sparse_csc, sparse_bsc),
           "sparse column compressed tensor")
_component(S.row_indices, lambda st: st.plain, False, (sparse_csc, sparse_bsc),
           "sparse column compressed tensor")


@_kernel(S.values, keys=(_CSR,))
def _compressed_values(ks, self):
    return _handle(self._data.values)


@_kernel(S.coalesce, keys=(_SPARSE, _CSR, DispatchKey.CPU))
def _coalesce(ks, self):
    _expect(self, "coalesce", (sparse_coo,), _COO_WORDS)
    if self._data.coalesced:
        return self
    idx, vals = coalesce_arrays(*coo_arrays(self), self.shape)
    return _coo(idx, vals, self.shape, self._dtype, True)


@_kernel(S.is_coalesced, keys=(_SPARSE, _CSR, DispatchKey.CPU))
def _is_coalesced(ks, self):
    _expect(self, "is_coalesced", (sparse_coo,), _COO_WORDS)
    return self._data.coalesced


_kernel(S.sparse_dim)(lambda ks, self: self._data.sparse_dim)
_kernel(S.dense_dim)(lambda ks, self: self._data.dense_dim)
_kernel(S.nnz)(lambda ks, self: self._data.nnz)


@_kernel(S.sparse_mask)
def _sparse_mask(ks, self, mask):
    """``self``'s values at ``mask``'s stored entries, in ``mask``'s layout and order."""
    if self.layout is not strided:
        self = aten._to_dense.default(self)
    if tuple(self.shape) != tuple(mask.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self.shape)} but mask has size {list(mask.shape)}.")
    arr, st = self._data, mask._data
    if st.layout is sparse_coo or st.blocksize is None:
        idx = coo_arrays(mask)[0]
        vals = np.ascontiguousarray(arr[tuple(idx)])
    else:
        bh, bw = st.blocksize
        shape = st.shape
        blocks = np.swapaxes(arr.reshape((shape[0] // bh, bh, shape[1] // bw, bw) + shape[2:]),
                             1, 2)
        major, plain = _major(st.compressed._data), st.plain._data
        rb, cb = (major, plain) if st.layout is sparse_bsr else (plain, major)
        vals = np.ascontiguousarray(blocks[rb, cb])
    v = wrap(vals, self._dtype)
    if st.layout is sparse_coo:
        return make_coo(st.indices, v, st.shape, self._dtype, st.coalesced)
    return make_compressed(st.layout, st.compressed, st.plain, v, st.shape, self._dtype,
                           st.blocksize)


# ------------------------------------------------------------------ resizes (COO)

def _check_resize(self, size, sparse_dim, dense_dim, what):
    _expect(self, what, (sparse_coo,), _COO_WORDS)
    if sparse_dim + dense_dim != len(size):
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + "
                           f"dense_dim ({dense_dim}), but got {len(size)}")


@_kernel(S.sparse_resize_, keys=(_SPARSE,))
def _sparse_resize(ks, self, size, sparse_dim, dense_dim):
    _check_resize(self, size, sparse_dim, dense_dim, "sparse_resize_")
    st = self._data
    if st.nnz:
        if sparse_dim != st.sparse_dim or dense_dim != st.dense_dim:
            raise RuntimeError("resize_ on a non-empty sparse tensor cannot change sparse_dim "
                               "or dense_dim")
        old = st.shape
        if any(n < o for n, o in zip(size[sparse_dim:], old[sparse_dim:])) or (
                st.indices._data.size and np.any(st.indices._data.max(axis=1) >=
                                                 np.asarray(size[:sparse_dim]))):
            raise RuntimeError("shrinking the size of a non-empty sparse tensor is not "
                               "supported (resize_and_clear_ empties it first)")
        if tuple(size[sparse_dim:]) != tuple(old[sparse_dim:]):
            raise RuntimeError("resizing the dense dims of a non-empty sparse tensor is not "
                               "supported")
        st.shape = tuple(size)
        return self
    _clear(self, size, sparse_dim, dense_dim)
    return self


def _clear(self, size, sparse_dim, dense_dim):
    st = self._data
    st.indices = _i64(np.zeros((sparse_dim, 0)))
    st.values = wrap(np.zeros((0,) + tuple(size[sparse_dim:]), self._dtype.numpy), self._dtype)
    st.shape, st.sparse_dim, st.dense_dim, st.coalesced = tuple(size), sparse_dim, dense_dim, \
        True


@_kernel(S.sparse_resize_and_clear_, keys=(_SPARSE,))
def _sparse_resize_and_clear(ks, self, size, sparse_dim, dense_dim):
    _check_resize(self, size, sparse_dim, dense_dim, "sparse_resize_and_clear_")
    _clear(self, size, sparse_dim, dense_dim)
    return self


@_kernel(S.resize_as_sparse_, keys=(_SPARSE,))
def _resize_as_sparse(ks, self, the_template):
    _expect(the_template, "resize_as_sparse_", (sparse_coo,), _COO_WORDS)
    t = the_template._data
    return _sparse_resize(ks, self, list(t.shape), t.sparse_dim, t.dense_dim)


# ------------------------------------------------------------------ reductions

@_kernel(S.sparse_sum)
def _sparse_sum(ks, self):
    return wrap(np.asarray(dense_array(self).sum(), self._dtype.numpy), self._dtype)


@_kernel(S.sparse_sum_dim)
def _sparse_sum_dim(ks, self, dim):
    n = self.ndim
    dims = sorted({d % n for d in dim})
    for d in dim:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
    arr = dense_array(self).sum(axis=tuple(dims))
    sd = self._data.sparse_dim if self.layout is sparse_coo else 2
    left = sd - sum(1 for d in dims if d < sd)
    if left == 0:
        return wrap(np.asarray(arr, self._dtype.numpy), self._dtype)
    idx, vals = from_dense(arr, left)
    return _coo(idx, vals, arr.shape, self._dtype, True)


# ------------------------------------------------------------------ products

def _sparse_mm(a, b):
    """sparse ``a`` (2-D) @ dense ``b`` as a dense NumPy array."""
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"mm: expected 2-D tensors, got {a.ndim}-D and {b.ndim}-D")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x"
                           f"{a.shape[1]} and {b.shape[0]}x{b.shape[1]})")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: "
                           f"{a._dtype.name} != {b._dtype.name}".replace("fnx.", ""))
    if a._data.sparse_dim != 2:         # a hybrid COO matrix: rows of dense values
        return dense_array(a) @ b._data
    idx, vals = coo_arrays(a)
    out = np.zeros((a.shape[0], b.shape[1]), a._dtype.numpy)
    np.add.at(out, idx[0], vals[:, None] * b._data[idx[1]])
    return out


def _mm(ks, self, mat2):
    if self.layout is strided:      # dense @ sparse = (sparse^T @ dense^T)^T
        return wrap(np.ascontiguousarray(_sparse_mm(_transpose(mat2, 0, 1),
                                                    _dense_t(self)).T), self._dtype)
    if mat2.layout is not strided:
        mat2 = aten._to_dense.default(mat2)
    return wrap(_sparse_mm(self, mat2), self._dtype)


def _dense_t(x):
    return wrap(np.ascontiguousarray(x._data.T), x._dtype)


_kernel(aten.mm.default)(_mm)


@_kernel(aten.matmul.default)
def _matmul(ks, self, other):
    if other.ndim == 1 and self.ndim == 2 and self.layout is not strided:
        return aten.squeeze.dim(_mm(ks, self, aten.unsqueeze.default(other, 1)), 1)
    return _mm(ks, self, other)


@_kernel(aten.addmm.default)
def _addmm(ks, self, mat1, mat2, *, beta=1, alpha=1):
    prod = _mm(ks, mat1, mat2)._data
    base = dense_array(self) if self.layout is not strided else self._data
    out = prod * alpha if beta == 0 else np.broadcast_to(base, prod.shape) * beta + prod * alpha
    return wrap(np.ascontiguousarray(out, mat1._dtype.numpy), mat1._dtype)


# ------------------------------------------------------------------ pointwise and shape

def _scalar(x):
    if hasattr(x, "_ks"):
        if x.layout is not strided or x.ndim:
            return None
        return x._data[()]
    return x


def _result_dtype(self, s):
    if isinstance(s, float) and not (self._dtype.is_floating_point or self._dtype.is_complex):
        return D.get_default_dtype()
    return self._dtype


def _with_values(self, vals, dtype):
    st = self._data
    v = wrap(np.ascontiguousarray(vals, dtype.numpy), dtype)
    if st.layout is sparse_coo:
        return make_coo(st.indices, v, st.shape, dtype, st.coalesced)
    return make_compressed(st.layout, st.compressed, st.plain, v, st.shape, dtype,
                           st.blocksize)


def _unsupported(op, what):
    return NotImplementedError(f"{op}: {what} is not supported for sparse tensors in fnx")


@_kernel(aten.mul.Tensor, aten.mul.Scalar)
def _mul(ks, self, other):
    if self.layout is strided:
        self, other = other, self
    s = _scalar(other)
    if s is None:
        if other.layout is strided and tuple(other.shape) == tuple(self.shape) and \
                self.layout is sparse_coo:
            idx, vals = coo_arrays(self)
            return _with_values(self, vals * other._data[tuple(idx)], self._dtype)
        raise _unsupported("mul", "a product of two sparse tensors, or with a broadcast "
                           "dense tensor,")
    dtype = _result_dtype(self, s)
    return _with_values(self, self._data.values._data * s, dtype)


@_kernel(aten.div.Tensor, aten.div.Scalar)
def _div(ks, self, other):
    s = _scalar(other)
    if self.layout is strided or s is None:
        raise _unsupported("div", "a sparse divisor, or a tensor one,")
    vals = self._data.values._data / s
    dtype = self._dtype if self._dtype.is_floating_point or self._dtype.is_complex else \
        D.get_default_dtype()
    return _with_values(self, vals, dtype)


@_kernel(aten.neg.default)
def _neg(ks, self):
    return _with_values(self, -self._data.values._data, self._dtype)


@_kernel(aten.clone.default)
def _clone(ks, self, *, memory_format=None):
    st = self._data
    v = wrap(st.values._data.copy(), self._dtype)
    if st.layout is sparse_coo:
        return make_coo(_i64(st.indices._data.copy()), v, st.shape, self._dtype, st.coalesced)
    return make_compressed(st.layout, _i64(st.compressed._data.copy()),
                           _i64(st.plain._data.copy()), v, st.shape, self._dtype, st.blocksize)


def _add_arrays(a, b, alpha):
    """sparse ``a`` + alpha * sparse ``b`` of one layout: COO entries joined (uncoalesced,
    as PyTorch's), compressed ones through COO and back."""
    ia, va = coo_arrays(a)
    ib, vb = coo_arrays(b)
    dtype = a._dtype
    idx = np.concatenate([ia, ib], axis=1)
    vals = np.concatenate([va, vb * alpha]).astype(dtype.numpy)
    return idx, vals


@_kernel(aten.add.Tensor)
def _add(ks, self, other, *, alpha=1):
    return _add_impl(self, other, alpha)


def _add_impl(self, other, alpha):
    if _scalar(other) is not None and not hasattr(other, "_ks"):
        raise _unsupported("add", "adding a scalar")
    if self.layout is strided or other.layout is strided:
        if tuple(self.shape) != tuple(other.shape):
            raise RuntimeError(f"add: expected sizes {list(self.shape)} and "
                               f"{list(other.shape)} to match")
        a = self._data if self.layout is strided else dense_array(self)
        b = other._data if other.layout is strided else dense_array(other)
        dtype = D.promote_types(self._dtype, other._dtype)
        return wrap(np.ascontiguousarray(a + alpha * b, dtype.numpy), dtype)
    if self.layout is not other.layout:
        raise RuntimeError(f"add: expected both sparse operands in one layout, got "
                           f"{self.layout} and {other.layout}")
    if self._dtype is not other._dtype:
        raise _unsupported("add", "adding sparse tensors of two dtypes")
    if tuple(self.shape) != tuple(other.shape):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(self.shape)} while other has size {list(other.shape)} "
                           f"(FYI: dense-sparse addition does not currently support "
                           f"broadcasting)")
    idx, vals = _add_arrays(self, other, alpha)
    if self.layout is sparse_coo:
        if self._data.coalesced and other._data.coalesced:
            # two coalesced operands merge into a coalesced sum, as PyTorch's
            idx, vals = coalesce_arrays(idx, vals, self.shape)
            return _coo(idx, vals, self.shape, self._dtype, True)
        return _coo(idx, vals, self.shape, self._dtype, False)
    coo = _coo(idx, vals, self.shape, self._dtype, False)
    return _to_compressed(coo, self.layout, self._data.blocksize, None, self._dtype)


_kernel(aten.sub.Tensor)(lambda ks, self, other, *, alpha=1: _add_impl(self, other, -alpha))


def _transpose(self, d0, d1):
    n = self.ndim
    d0, d1 = d0 % n, d1 % n
    if d0 == d1:
        return self
    st = self._data
    if st.layout is sparse_coo:
        if d0 >= st.sparse_dim or d1 >= st.sparse_dim:
            raise _unsupported("transpose", "swapping dense dims")
        idx = st.indices._data.copy()
        idx[[d0, d1]] = idx[[d1, d0]]
        shape = list(st.shape)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        return make_coo(_i64(idx), st.values, shape, self._dtype, False)
    if {d0, d1} != {0, 1}:
        raise _unsupported("transpose", "swapping dense dims")
    # a compressed matrix's arrays are those of its transpose in the other orientation
    flip = {sparse_csr: sparse_csc, sparse_csc: sparse_csr, sparse_bsr: sparse_bsc,
            sparse_bsc: sparse_bsr}[st.layout]
    vals = st.values
    bs = st.blocksize
    if bs is not None:
        vals = wrap(np.ascontiguousarray(np.swapaxes(vals._data, 1, 2)), self._dtype)
        bs = (bs[1], bs[0])
    shape = (st.shape[1], st.shape[0]) + st.shape[2:]
    return make_compressed(flip, st.compressed, st.plain, vals, shape, self._dtype, bs)


_kernel(aten.transpose.int)(lambda ks, self, dim0, dim1: _transpose(self, dim0, dim1))


@_kernel(aten.t.default)
def _t(ks, self):
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, "
                           f"but self is {self.ndim}D")
    return self if self.ndim < 2 else _transpose(self, 0, 1)


@_kernel(aten.permute.default)
def _permute(ks, self, dims):
    n = self.ndim
    dims = [d % n for d in dims]
    if sorted(dims) != list(range(n)):
        raise RuntimeError("permute(sparse): dims must be a permutation of the tensor's dims")
    moved = [i for i, d in enumerate(dims) if d != i]
    if not moved:
        return self
    if len(moved) == 2:
        return _transpose(self, *moved)
    raise _unsupported("permute", "a permutation other than one swap")


@_kernel(aten._to_copy.default)
def _to_copy(ks, self, *, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=False, memory_format=None):
    if device is not None and str(device) != "cpu":
        raise _unsupported("to", f"device {device}")
    if layout is strided:
        return _to_dense(ks, self, dtype)
    dtype = dtype or self._dtype
    return _with_values(self, self._data.values._data.astype(dtype.numpy), dtype)


@_kernel(aten.detach.default, aten.alias.default)
def _detach(ks, self):
    # a new handle on the same storage (components shared), outside autograd
    return type(self)._make(self._data, self._dtype, self._device, self._ks & ~AUTOGRAD_BITS)


@_kernel(aten.zeros.default, aten.empty.memory_format)
def _zeros(ks, size, *, dtype=None, layout=None, device=None, pin_memory=None,
           memory_format=None):
    """``zeros(size, layout=fnx.sparse_coo)``: no stored entry, every dim sparse."""
    if layout is not sparse_coo:
        raise RuntimeError(f"zeros: fnx makes empty sparse tensors of the sparse_coo layout "
                           f"only, got {layout}")
    dtype = dtype or D.get_default_dtype()
    size = tuple(int(s) for s in size)
    return _coo(np.zeros((len(size), 0)), np.zeros((0,)), size, dtype, True)


@_kernel(aten.sum.default)
def _sum(ks, self, *, dtype=None):
    out = aten._sparse_sum.default(self)
    return out if dtype is None else out.to(dtype)
