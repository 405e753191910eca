"""``torch.sparse``: products, sums and softmaxes of sparse tensors (the tensors themselves
and their layouts are ``fnx.sparse_coo_tensor``, ``Tensor.to_sparse``, ...).

The softmaxes run on the dense form, the unstored entries taken as ``-inf``: correct and
differentiable, but as costly as a dense softmax.

>>> import fnx
>>> s = fnx.tensor([[0., 1.], [2., 3.]]).to_sparse()
>>> fnx.sparse.sum(s).item(), fnx.sparse.mm(s, fnx.ones(2, 1)).tolist()
(6.0, [[1.0], [5.0]])
"""
from __future__ import annotations

import numpy as np

import fnx.api as fnx
from ..ir.aten import sparse as S
from ..ops import aten

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "sampled_addmm", "spdiags",
           "check_sparse_tensor_invariants"]


def mm(mat1, mat2, reduce=None):
    """``mat1 @ mat2`` with sparse ``mat1``: dense for a dense ``mat2``, else sparse in
    ``mat1``'s layout.

    >>> import fnx
    >>> fnx.sparse.mm(fnx.eye(2).to_sparse(), fnx.eye(2).to_sparse()).layout
    fnx.sparse_coo
    """
    if reduce is not None:
        raise NotImplementedError("fnx.sparse.mm: reduce= is not supported")
    if mat2.layout is fnx.strided:
        return aten.mm.default(mat1, mat2)
    out = aten.mm.default(mat1, mat2.to_dense())
    return S.to_sparse(out, layout=mat1.layout, blocksize=_blocksize(mat1))


def _blocksize(t):
    return list(t.values().shape[1:3]) if t.layout in (fnx.sparse_bsr, fnx.sparse_bsc) \
        else None


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * mat + alpha * (mat1 @ mat2)`` with sparse ``mat1``, dense.

    >>> import fnx
    >>> fnx.sparse.addmm(fnx.ones(2, 2), fnx.eye(2).to_sparse(), fnx.eye(2)).tolist()
    [[2.0, 1.0], [1.0, 2.0]]
    """
    return aten.addmm.default(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input, dim=None, dtype=None):
    """The sum of a sparse tensor's entries: all of them (a dense 0-dim tensor), or over
    ``dim`` (sparse while sparse dims remain).

    >>> import fnx
    >>> s = fnx.tensor([[0., 1.], [2., 3.]]).to_sparse()
    >>> fnx.sparse.sum(s, 0).to_dense().tolist()
    [2.0, 4.0]
    """
    if dtype is not None:
        input = aten._to_copy.default(input, dtype=dtype)
    if dim is None:
        return S.sparse_sum(input)
    dims = [dim] if isinstance(dim, int) else list(dim)
    return S.sparse_sum_dim(input, dims)


def _masked(fn, input, dim, dtype):
    if input.layout is not fnx.sparse_coo:
        raise NotImplementedError(f"fnx.sparse.{fn.__name__}: only sparse COO tensors are "
                                  f"supported, got {input.layout}")
    c = input.coalesce()
    if dtype is not None:
        c = aten._to_copy.default(c, dtype=dtype)
    pattern = fnx.sparse_coo_tensor(c._indices(), fnx.ones(c._values().shape, dtype=fnx.bool),
                                    c.shape).to_dense()
    x = fnx.where(pattern, c.to_dense(), float("-inf"))
    y = fnx.where(pattern, fn(x, dim), 0.0)
    return y.sparse_mask(c)


def softmax(input, dim, dtype=None):
    """The softmax over ``dim`` of the stored entries of a COO tensor (the unstored ones
    count as ``-inf``: they stay unstored), as a COO tensor of the same pattern.

    >>> import fnx
    >>> s = fnx.sparse_coo_tensor([[0, 0], [0, 2]], [1., 1.], (1, 3))
    >>> fnx.sparse.softmax(s, 1).to_dense().tolist()
    [[0.5, 0.0, 0.5]]
    """
    return _masked(fnx.softmax, input, dim, dtype)


def log_softmax(input, dim, dtype=None):
    """The log-softmax over ``dim`` of the stored entries of a COO tensor (see ``softmax``).

    >>> import fnx
    >>> s = fnx.sparse_coo_tensor([[0, 0], [0, 2]], [1., 1.], (1, 3))
    >>> round(fnx.sparse.log_softmax(s, 1).values()[0].item(), 4)
    -0.6931
    """
    return _masked(fnx.log_softmax, input, dim, dtype)


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """``beta * input + alpha * (mat1 @ mat2)`` at the entries the CSR tensor ``input``
    stores only: a CSR tensor of ``input``'s pattern.

    >>> import fnx
    >>> r = fnx.sparse.sampled_addmm(fnx.eye(2).to_sparse_csr(), fnx.ones(2, 1),
    ...                              fnx.ones(1, 2), beta=2.0)
    >>> r.layout, r.values().tolist()
    (fnx.sparse_csr, [3.0, 3.0])
    """
    if out is not None:
        raise NotImplementedError("fnx.sparse.sampled_addmm: out= is not supported")
    if input.layout is not fnx.sparse_csr:
        raise RuntimeError(f"sampled_addmm: Expected input to have sparse csr layout, but got "
                           f"{input.layout}")
    prod = aten.mm.default(mat1, mat2).sparse_mask(input)
    vals = aten.add.Tensor(aten.mul.Scalar(input.values(), beta),
                           aten.mul.Scalar(prod.values(), alpha))
    return S.sparse_compressed_tensor_unsafe(input.crow_indices(), input.col_indices(), vals,
                                             list(input.shape), dtype=vals.dtype,
                                             layout=fnx.sparse_csr)


def spdiags(diagonals, offsets, shape, layout=None):
    """A sparse matrix of ``shape`` from diagonals: ``diagonals[k, j]`` lands at
    ``(j - offsets[k], j)`` where that lies inside (SciPy's ``spdiags`` rule).

    >>> import fnx
    >>> fnx.sparse.spdiags(fnx.tensor([[1., 2., 3.]]), fnx.tensor([1]), (3, 3)).to_dense().tolist()
    [[0.0, 2.0, 0.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]]
    """
    offs = offsets if isinstance(offsets, fnx.Tensor) else fnx.tensor(offsets)
    if offs.ndim != 1:
        raise RuntimeError("spdiags(): Offsets must be one-dimensional")
    if diagonals.ndim == 1:
        diagonals = diagonals.unsqueeze(0)
    if diagonals.ndim != 2:
        raise RuntimeError("spdiags(): Diagonals must be vector or matrix")
    if diagonals.shape[0] != offs.shape[0]:
        raise RuntimeError(f"spdiags(): Number of diagonals ({diagonals.shape[0]}) does not "
                           f"match the number of offsets ({offs.shape[0]})")
    o = np.asarray(offs.tolist(), np.int64)
    if len(set(o.tolist())) != len(o):
        raise RuntimeError("spdiags(): Offset tensor contains duplicate values")
    rows_n, cols_n = (int(s) for s in shape)
    ks, js = [], []
    for k, off in enumerate(o):
        j = np.arange(min(cols_n, diagonals.shape[1]))
        j = j[(j - off >= 0) & (j - off < rows_n)]
        ks.append(np.full(len(j), k))
        js.append(j)
    k = np.concatenate(ks).astype(np.int64) if ks else np.zeros(0, np.int64)
    j = np.concatenate(js).astype(np.int64) if js else np.zeros(0, np.int64)
    vals = diagonals[fnx.tensor(k), fnx.tensor(j)]
    idx = fnx.tensor(np.stack([j - o[k], j]))
    out = fnx.sparse_coo_tensor(idx, vals, (rows_n, cols_n))
    if layout is None or layout is fnx.sparse_coo:
        return out
    if layout not in (fnx.sparse_csr, fnx.sparse_csc):
        raise RuntimeError(f"spdiags(): only sparse_coo, sparse_csr and sparse_csc layouts are "
                           f"supported, got {layout}")
    return S.to_sparse(out, layout=layout)


class check_sparse_tensor_invariants:
    """``torch.sparse.check_sparse_tensor_invariants``: a context manager and the switch of
    the constructors' index checks. fnx's constructors check always (a tensor whose indices
    point outside it is never built), so the switch is kept for the API and changes nothing.

    >>> import fnx
    >>> with fnx.sparse.check_sparse_tensor_invariants():
    ...     fnx.sparse.check_sparse_tensor_invariants.is_enabled()
    True
    """

    _enabled = False

    def __init__(self, enable=True):
        self.state = enable
        self.saved = None

    @staticmethod
    def is_enabled():
        return check_sparse_tensor_invariants._enabled

    @staticmethod
    def enable():
        check_sparse_tensor_invariants._enabled = True

    @staticmethod
    def disable():
        check_sparse_tensor_invariants._enabled = False

    def __enter__(self):
        self.saved = check_sparse_tensor_invariants._enabled
        check_sparse_tensor_invariants._enabled = self.state

    def __exit__(self, *exc):
        check_sparse_tensor_invariants._enabled = self.saved
