"""Sparse tensors' public face, as PyTorch's: the layouts (``fnx.strided``,
``fnx.sparse_coo``, ...), the constructors (``sparse_coo_tensor``, ``sparse_csr_tensor``,
..., with PyTorch's checks and size inference), the Tensor methods (``to_dense``,
``to_sparse*``, ``indices``, ``values``, ``coalesce``, ``sparse_mask``, the sparse
resizes, ...), the component ``*_copy`` forms and the sparse products (``smm``, ``hspmm``,
``dsmm``, ``spmm``, ``saddmm``, ``sspaddmm``).

Each is a call of an ATen op of ``fnx/ir/aten/sparse.py`` (or of ``mm``/``addmm``), whose
kernels are those of the sparse keys (``fnx/backends/sparse``); the constructors check
their arguments here, always (PyTorch checks the index invariants only when asked: fnx
never builds a tensor whose indices point outside it).

>>> import fnx
>>> s = fnx.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3., 4., 5.], (2, 3))
>>> s.to_dense().tolist(), s.layout, s.is_sparse
([[0.0, 0.0, 3.0], [4.0, 0.0, 5.0]], fnx.sparse_coo, True)
"""
from __future__ import annotations

import numpy as np

from ..core import dtype as D
from ..core.layout import (COMPRESSED, layout, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc,
                           sparse_csr, strided)
from ..core.tensor import Tensor, tensor_method
from ..ir.aten import sparse as S
from ..ops import aten
from .creation import as_tensor as _as_tensor

__all__ = ["layout", "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
           "sparse_bsc", "sparse_coo_tensor", "sparse_compressed_tensor", "sparse_csr_tensor",
           "sparse_csc_tensor", "sparse_bsr_tensor", "sparse_bsc_tensor", "indices_copy",
           "values_copy", "crow_indices_copy", "col_indices_copy", "ccol_indices_copy",
           "row_indices_copy", "smm", "hsmm", "hspmm", "dsmm", "spmm", "saddmm", "sspaddmm",
           "resize_as_sparse_"]


def _values_tensor(values, dtype):
    v = values if isinstance(values, Tensor) else _as_tensor(values, dtype=dtype)
    if v.layout is not strided:
        raise RuntimeError(f"values must be a strided tensor, got layout {v.layout}")
    return v


def _index_tensor(x, what):
    t = x if isinstance(x, Tensor) else _as_tensor(x)
    if t.layout is not strided:
        raise RuntimeError(f"{what} must be a strided tensor, got layout {t.layout}")
    if t._dtype is not D.int64:
        if t._dtype.is_complex or t._dtype is D.bool:
            raise RuntimeError(f"{what} must be an int64 tensor, got {t._dtype}")
        t = t.to(D.int64)
    return t


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None,
                      is_coalesced=None):
    """A sparse COO tensor: ``values[k]`` at the coordinates ``indices[:, k]`` (duplicates
    add up); without ``size``, the smallest that holds every index.

    >>> import fnx
    >>> s = fnx.sparse_coo_tensor([[0, 0], [1, 1]], [1., 2.])
    >>> s.shape, s.to_dense().tolist(), s.is_coalesced()
    (fnx.Size([1, 2]), [[0.0, 3.0]], False)
    """
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"sparse_coo_tensor: fnx has sparse tensors on the cpu only, "
                           f"got device {device}")
    idx = _index_tensor(indices, "indices")
    vals = _values_tensor(values, dtype)
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    sd, nnz = idx.shape
    if vals.ndim == 0:
        raise RuntimeError("values must have at least one dim (nnz), got a 0-dim tensor")
    if vals.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {vals.shape[0]}")
    a = idx._data
    if nnz and a.min() < 0:
        d = int(np.nonzero(a.min(axis=1) < 0)[0][0])
        raise RuntimeError(f"found negative index {int(a[d].min())} for dim {d}")
    dense = list(vals.shape[1:])
    if size is None:
        size = [int(m) + 1 for m in a.max(axis=1)] if nnz else [0] * sd
        size += dense
    else:
        size = [int(s) for s in size]
        if len(size) != sd + len(dense):
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                               f"len(size) = {len(size)}, sparse_dim = {sd}, dense_dim = "
                               f"{len(dense)}")
        if size[sd:] != dense:
            raise RuntimeError(f"values has incorrect size, expected {[nnz] + size[sd:]}, got "
                               f"{[nnz] + dense}")
        if nnz:
            top = a.max(axis=1)
            for d in range(sd):
                if top[d] >= size[d]:
                    raise RuntimeError(f"size is inconsistent with indices: for dim {d}, "
                                       f"size is {size[d]} but found index {int(top[d])}")
    out = S.sparse_coo_tensor_with_dims_and_tensors(
        sd, len(dense), size, idx, vals, dtype=dtype or vals._dtype,
        is_coalesced=bool(is_coalesced) if is_coalesced is not None else nnz <= 1)
    return _finish(out, requires_grad)


_WORDS = {sparse_csr: ("crow", "col", "rows", "ncols"), sparse_bsr: ("crow", "col", "rows",
                                                                     "ncols"),
          sparse_csc: ("ccol", "row", "columns", "nrows"),
          sparse_bsc: ("ccol", "row", "columns", "nrows")}


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *,
                             dtype=None, layout=None, device=None, pin_memory=False,
                             requires_grad=False, check_invariants=None):
    """A sparse compressed tensor of ``layout`` (csr, csc, bsr or bsc): ``values`` of the
    entries (blocks for bsr/bsc) of each row (column), whose columns (rows) are
    ``plain_indices[compressed_indices[i]:compressed_indices[i + 1]]``.

    >>> import fnx
    >>> s = fnx.sparse_compressed_tensor([0, 1, 2], [1, 0], [5., 6.], layout=fnx.sparse_csr)
    >>> s.to_dense().tolist()
    [[0.0, 5.0], [6.0, 0.0]]
    """
    if layout not in COMPRESSED:
        raise RuntimeError(f"sparse_compressed_tensor expected sparse compressed tensor "
                           f"layout but got {layout}")
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"sparse_compressed_tensor: fnx has sparse tensors on the cpu "
                           f"only, got device {device}")
    comp_w, plain_w, major_w, minor_w = _WORDS[layout]
    comp = _index_tensor(compressed_indices, f"{comp_w}_indices")
    plain = _index_tensor(plain_indices, f"{plain_w}_indices")
    vals = _values_tensor(values, dtype)
    blocked = layout in (sparse_bsr, sparse_bsc)
    if comp.ndim != 1 or plain.ndim != 1:
        raise RuntimeError(f"{comp_w}_indices and {plain_w}_indices must be 1-D (fnx has no "
                           f"batch dims for compressed layouts), got {comp.ndim}-D and "
                           f"{plain.ndim}-D")
    if vals.ndim < (3 if blocked else 1):
        raise RuntimeError(f"values must be a {'3' if blocked else '1'}-D tensor at least "
                           f"(nnz{', block rows, block columns' if blocked else ''}), got "
                           f"{vals.ndim}-D")
    nnz = plain.shape[0]
    if vals.shape[0] != nnz:
        raise RuntimeError(f"{plain_w}_indices and values must have the same number of "
                           f"elements, but got {nnz} and {vals.shape[0]}")
    bh, bw = (vals.shape[1], vals.shape[2]) if blocked else (1, 1)
    dense = list(vals.shape[3 if blocked else 1:])
    c, p = comp._data, plain._data
    n_major = len(c) - 1
    row_major = layout in (sparse_csr, sparse_bsr)
    if size is None:
        n_minor = int(p.max()) + 1 if nnz else 0
        rows, cols = (n_major, n_minor) if row_major else (n_minor, n_major)
        size = [rows * bh, cols * bw] + dense
    size = [int(s) for s in size]
    if len(size) != 2 + len(dense):
        raise RuntimeError(f"tensor dimensionality must be {2 + len(dense)} (2 sparse dims "
                           f"and {len(dense)} dense dims), but got {len(size)}")
    if size[2:] != dense:
        raise RuntimeError(f"values has incorrect size: dense dims {dense}, size has "
                           f"{size[2:]}")
    if size[0] % bh or size[1] % bw:
        raise RuntimeError(f"size {size[:2]} must be divisible by the blocksize ({bh}, {bw})")
    rows, cols = size[0] // bh, size[1] // bw
    major, minor = (rows, cols) if row_major else (cols, rows)
    if len(c) != major + 1:
        raise RuntimeError(f"{comp_w}_indices.shape[-1] must be equal to the number of "
                           f"{major_w} + 1 (={major + 1}), but got {len(c)}")
    checks = ((c[0] == 0, f"`{comp_w}_indices[..., 0] == 0`"),
              (c[-1] == nnz, f"`{comp_w}_indices[..., -1] == nnz`"),
              (np.all((np.diff(c) >= 0) & (np.diff(c) <= minor)),
               f"`0 <= {comp_w}_indices[..., 1:] - {comp_w}_indices[..., :-1] <= {minor_w}`"),
              (nnz == 0 or (p.min() >= 0 and p.max() < minor),
               f"`0 <= {plain_w}_indices < {minor_w}`"))
    for ok, what in checks:
        if not ok:
            raise RuntimeError(f"{what} is not satisfied.")
    for i in range(major):
        seg = p[c[i]:c[i + 1]]
        if len(seg) > 1 and np.any(np.diff(seg) <= 0):
            raise RuntimeError(f"`{plain_w}_indices[..., {comp_w}_indices[..., i - 1]:"
                               f"{comp_w}_indices[..., i]] for all i = 1, ..., {major_w} are "
                               f"sorted and distinct along the last dimension values` is not "
                               f"satisfied.")
    out = S.sparse_compressed_tensor_unsafe(comp, plain, vals, size, dtype=dtype or vals._dtype,
                                            layout=layout)
    return _finish(out, requires_grad)


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None,
                      device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """A sparse CSR tensor: row ``i`` holds ``values[crow_indices[i]:crow_indices[i + 1]]``
    at the columns ``col_indices[crow_indices[i]:crow_indices[i + 1]]``.

    >>> import fnx
    >>> fnx.sparse_csr_tensor([0, 1, 2], [1, 0], [1., 2.]).to_dense().tolist()
    [[0.0, 1.0], [2.0, 0.0]]
    """
    return sparse_compressed_tensor(crow_indices, col_indices, values, size, dtype=dtype,
                                    layout=sparse_csr, device=device,
                                    requires_grad=requires_grad)


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None,
                      device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """A sparse CSC tensor: column ``j`` holds ``values[ccol_indices[j]:ccol_indices[j + 1]]``
    at the rows ``row_indices[ccol_indices[j]:ccol_indices[j + 1]]``.

    >>> import fnx
    >>> fnx.sparse_csc_tensor([0, 1, 2], [1, 0], [1., 2.]).to_dense().tolist()
    [[0.0, 2.0], [1.0, 0.0]]
    """
    return sparse_compressed_tensor(ccol_indices, row_indices, values, size, dtype=dtype,
                                    layout=sparse_csc, device=device,
                                    requires_grad=requires_grad)


def sparse_bsr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None,
                      device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """A sparse BSR tensor: CSR over blocks, ``values`` of shape (nnz, block rows, block
    columns).

    >>> import fnx
    >>> fnx.sparse_bsr_tensor([0, 1], [0], [[[1., 2.], [3., 4.]]]).to_dense().tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    return sparse_compressed_tensor(crow_indices, col_indices, values, size, dtype=dtype,
                                    layout=sparse_bsr, device=device,
                                    requires_grad=requires_grad)


def sparse_bsc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None,
                      device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """A sparse BSC tensor: CSC over blocks, ``values`` of shape (nnz, block rows, block
    columns).

    >>> import fnx
    >>> fnx.sparse_bsc_tensor([0, 1], [0], [[[1., 2.], [3., 4.]]]).to_dense().tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    return sparse_compressed_tensor(ccol_indices, row_indices, values, size, dtype=dtype,
                                    layout=sparse_bsc, device=device,
                                    requires_grad=requires_grad)


# ------------------------------------------------------------------ Tensor methods

@tensor_method()
def to_dense(self, dtype=None, *, masked_grad=None):
    """The dense (strided) tensor of a sparse one; a strided tensor itself.

    >>> import fnx
    >>> fnx.sparse_coo_tensor([[1]], [2.], (3,)).to_dense()
    tensor([0., 2., 0.])
    """
    if self.layout is strided:
        return self if dtype is None or dtype is self._dtype else self.to(dtype)
    return S.to_dense(self, dtype, masked_grad)


@tensor_method()
def to_sparse(self, *args, layout=None, blocksize=None, dense_dim=None):
    """This tensor in a sparse layout: ``to_sparse(sparse_dim)`` (COO over the first
    ``sparse_dim`` dims), or ``to_sparse(layout=, blocksize=, dense_dim=)``.

    >>> import fnx
    >>> fnx.tensor([[0., 1.], [2., 0.]]).to_sparse().indices().tolist()
    [[0, 1], [1, 0]]
    """
    if args:
        if len(args) > 1 or layout is not None or blocksize is not None:
            raise TypeError("to_sparse() takes one positional argument (sparse_dim) or the "
                            "keywords layout, blocksize and dense_dim")
        return S.to_sparse_sparse_dim(self, int(args[0]))
    if layout is not None and not isinstance(layout, type(strided)):
        raise TypeError(f"to_sparse(): layout must be a fnx.layout, not "
                        f"{type(layout).__name__}")
    if layout is strided:
        return to_dense(self)
    return S.to_sparse(self, layout=layout, blocksize=None if blocksize is None else
                       [int(b) for b in blocksize], dense_dim=dense_dim)


@tensor_method()
def to_sparse_coo(self):
    """This tensor as a sparse COO tensor (``to_sparse()``).

    >>> import fnx
    >>> fnx.eye(2).to_sparse_coo().layout
    fnx.sparse_coo
    """
    return S.to_sparse(self)


@tensor_method()
def to_sparse_csr(self, dense_dim=None):
    """This 2-D tensor (plus ``dense_dim`` trailing dense dims) in the CSR layout.

    >>> import fnx
    >>> fnx.tensor([[0., 1.], [2., 0.]]).to_sparse_csr().crow_indices().tolist()
    [0, 1, 2]
    """
    return S.to_sparse_csr(self, dense_dim)


@tensor_method()
def to_sparse_csc(self, dense_dim=None):
    """This 2-D tensor in the CSC layout.

    >>> import fnx
    >>> fnx.tensor([[0., 1.], [2., 0.]]).to_sparse_csc().row_indices().tolist()
    [1, 0]
    """
    return S.to_sparse_csc(self, dense_dim)


@tensor_method()
def to_sparse_bsr(self, blocksize, dense_dim=None):
    """This 2-D tensor in the BSR layout, of ``blocksize`` blocks.

    >>> import fnx
    >>> fnx.eye(4).to_sparse_bsr((2, 2)).values().shape
    fnx.Size([2, 2, 2])
    """
    return S.to_sparse_bsr(self, [int(b) for b in blocksize], dense_dim)


@tensor_method()
def to_sparse_bsc(self, blocksize, dense_dim=None):
    """This 2-D tensor in the BSC layout, of ``blocksize`` blocks.

    >>> import fnx
    >>> fnx.eye(4).to_sparse_bsc((2, 2)).ccol_indices().tolist()
    [0, 1, 2]
    """
    return S.to_sparse_bsc(self, [int(b) for b in blocksize], dense_dim)


def _method(name, op, doc):
    def m(self):
        return op(self)
    m.__name__ = m.__qualname__ = name
    m.__doc__ = doc
    tensor_method(name)(m)
    return m


_EX = "    >>> import fnx\n    >>> s = fnx.tensor([[0., 1.], [2., 0.]]).to_sparse{}()\n"
_method("indices", S.indices, "The indices of a coalesced COO tensor.\n\n" + _EX.format("")
        + "    >>> s.indices().tolist()\n    [[0, 1], [1, 0]]\n")
_method("values", S.values, "The values of a coalesced COO tensor or a compressed one.\n\n"
        + _EX.format("") + "    >>> s.values().tolist()\n    [1.0, 2.0]\n")
_method("_indices", S.indices_, "The indices of a COO tensor, coalesced or not.\n\n"
        + _EX.format("") + "    >>> s._indices().shape\n    fnx.Size([2, 2])\n")
_method("_values", S.values_, "The values of a COO tensor, coalesced or not.\n\n"
        + _EX.format("") + "    >>> s._values().shape\n    fnx.Size([2])\n")
_method("crow_indices", S.crow_indices, "The compressed row indices of a csr/bsr tensor.\n\n"
        + _EX.format("_csr") + "    >>> s.crow_indices().tolist()\n    [0, 1, 2]\n")
_method("col_indices", S.col_indices, "The column indices of a csr/bsr tensor.\n\n"
        + _EX.format("_csr") + "    >>> s.col_indices().tolist()\n    [1, 0]\n")
_method("ccol_indices", S.ccol_indices, "The compressed column indices of a csc/bsc "
        "tensor.\n\n" + _EX.format("_csc") + "    >>> s.ccol_indices().tolist()\n"
        "    [0, 1, 2]\n")
_method("row_indices", S.row_indices, "The row indices of a csc/bsc tensor.\n\n"
        + _EX.format("_csc") + "    >>> s.row_indices().tolist()\n    [1, 0]\n")
_method("coalesce", S.coalesce, "This COO tensor with its indices sorted and unique "
        "(duplicates summed).\n\n    >>> import fnx\n    >>> s = fnx.sparse_coo_tensor("
        "[[1, 0, 1]], [1., 2., 3.]).coalesce()\n    >>> s.indices().tolist(), "
        "s.values().tolist()\n    ([[0, 1]], [2.0, 4.0])\n")
_method("is_coalesced", S.is_coalesced, "True when this COO tensor's indices are sorted "
        "and unique.\n\n" + _EX.format("") + "    >>> s.is_coalesced()\n    True\n")
_method("_nnz", S.nnz, "The number of stored entries (blocks for bsr/bsc).\n\n"
        + _EX.format("") + "    >>> s._nnz()\n    2\n")


@tensor_method()
def sparse_dim(self):
    """The number of sparse dims (0 for a strided tensor).

    >>> import fnx
    >>> fnx.zeros(2, 3).to_sparse(1).sparse_dim(), fnx.zeros(2, 3).sparse_dim()
    (1, 0)
    """
    return 0 if self.layout is strided else S.sparse_dim(self)


@tensor_method()
def dense_dim(self):
    """The number of dense dims (all of a strided tensor's).

    >>> import fnx
    >>> fnx.zeros(2, 3).to_sparse(1).dense_dim(), fnx.zeros(2, 3).dense_dim()
    (1, 2)
    """
    return self.ndim if self.layout is strided else S.dense_dim(self)


@tensor_method()
def sparse_mask(self, mask):
    """This dense tensor's values at the entries ``mask`` (sparse) stores, in its layout.

    >>> import fnx
    >>> m = fnx.tensor([[0., 1.], [1., 0.]]).to_sparse()
    >>> fnx.tensor([[5., 6.], [7., 8.]]).sparse_mask(m).values().tolist()
    [6.0, 7.0]
    """
    return S.sparse_mask(self, mask)


@tensor_method()
def sparse_resize_(self, size, sparse_dim, dense_dim):
    """Resize this COO tensor in place; a non-empty one may only grow its sparse dims.

    >>> import fnx
    >>> s = fnx.sparse_coo_tensor([[1]], [2.]); s.sparse_resize_((4,), 1, 0).shape
    fnx.Size([4])
    """
    return S.sparse_resize_(self, [int(s) for s in size], sparse_dim, dense_dim)


@tensor_method()
def sparse_resize_and_clear_(self, size, sparse_dim, dense_dim):
    """Empty this COO tensor in place and give it ``size``.

    >>> import fnx
    >>> s = fnx.sparse_coo_tensor([[1]], [2.]).sparse_resize_and_clear_((2, 2), 2, 0)
    >>> s.shape, s._nnz()
    (fnx.Size([2, 2]), 0)
    """
    return S.sparse_resize_and_clear_(self, [int(s) for s in size], sparse_dim, dense_dim)


@tensor_method()
def resize_as_sparse_(input, the_template):
    """Resize the COO tensor ``input`` in place to ``the_template``'s size and dims.

    >>> import fnx
    >>> s = fnx.sparse_coo_tensor([[1]], [2.])
    >>> fnx.resize_as_sparse_(s, fnx.zeros(5).to_sparse()).shape
    fnx.Size([5])
    """
    return S.resize_as_sparse_(input, the_template)


def _copy(name, method):
    def form(input):
        return aten.clone.default(getattr(input, method)())
    form.__name__ = form.__qualname__ = name
    lay = "_csr" if method in ("crow_indices", "col_indices") else \
        "_csc" if method in ("ccol_indices", "row_indices") else ""
    form.__doc__ = (f"A copy of ``input.{method}()``, sharing nothing with ``input``.\n\n"
                    + _EX.format(lay) + f"    >>> fnx.{name}(s).equal(s.{method}())\n"
                    f"    True\n")
    return form


indices_copy = _copy("indices_copy", "indices")
values_copy = _copy("values_copy", "values")
crow_indices_copy = _copy("crow_indices_copy", "crow_indices")
col_indices_copy = _copy("col_indices_copy", "col_indices")
ccol_indices_copy = _copy("ccol_indices_copy", "ccol_indices")
row_indices_copy = _copy("row_indices_copy", "row_indices")


# ------------------------------------------------------------------ products

@tensor_method()
def smm(input, mat):
    """The product of sparse ``input`` and dense ``mat``, as a sparse COO tensor.

    >>> import fnx
    >>> fnx.smm(fnx.eye(2).to_sparse(), fnx.ones(2, 2)).layout
    fnx.sparse_coo
    """
    return S.to_sparse(aten.mm.default(input, mat))


@tensor_method()
def hspmm(mat1, mat2):
    """The product of sparse ``mat1`` and dense ``mat2`` as a hybrid COO tensor: sparse rows
    of dense values.

    >>> import fnx
    >>> r = fnx.hspmm(fnx.eye(2).to_sparse(), fnx.ones(2, 3))
    >>> r.sparse_dim(), r.dense_dim(), r.to_dense().tolist()
    (1, 1, [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    """
    return S.to_sparse_sparse_dim(aten.mm.default(mat1, mat2), 1)


def hsmm(mat1, mat2):
    """``hspmm``: the product of sparse ``mat1`` and dense ``mat2``, a hybrid COO tensor.

    >>> import fnx
    >>> fnx.hsmm(fnx.eye(2).to_sparse(), fnx.ones(2, 1)).layout
    fnx.sparse_coo
    """
    return hspmm(mat1, mat2)


def dsmm(input, mat2):
    """The product of sparse ``input`` and dense ``mat2``, dense.

    >>> import fnx
    >>> fnx.dsmm(fnx.eye(2).to_sparse(), fnx.ones(2, 1)).tolist()
    [[1.0], [1.0]]
    """
    return aten.mm.default(input, mat2)


def spmm(input, mat2):
    """The product of sparse ``input`` and dense ``mat2``, dense (as ``fnx.mm``).

    >>> import fnx
    >>> fnx.spmm(fnx.eye(2).to_sparse_csr(), fnx.ones(2, 1)).tolist()
    [[1.0], [1.0]]
    """
    return aten.mm.default(input, mat2)


def saddmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)`` for sparse ``input`` and ``mat1``, sparse.

    >>> import fnx
    >>> e = fnx.eye(2).to_sparse()
    >>> fnx.saddmm(e, e, fnx.ones(2, 2), beta=2).to_dense().tolist()
    [[3.0, 1.0], [1.0, 3.0]]
    """
    return S.to_sparse(aten.addmm.default(input, mat1, mat2, beta=beta, alpha=alpha))


@tensor_method()
def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)`` for sparse ``input`` and ``mat1``, sparse.

    >>> import fnx
    >>> e = fnx.eye(2).to_sparse()
    >>> fnx.sspaddmm(e, e, fnx.ones(2, 2), alpha=3).to_dense().tolist()
    [[4.0, 3.0], [3.0, 4.0]]
    """
    return saddmm(input, mat1, mat2, beta=beta, alpha=alpha)
