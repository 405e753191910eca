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

import fnx.api as fnx
from ..ir.aten import sparse as S
from ..ops import aten

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax"]


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
