"""A sparse tensor's storage: its layout, size and component tensors, as PyTorch's
``SparseTensorImpl`` (COO: ``indices`` int64 [sparse_dim, nnz] and ``values``
[nnz, *dense dims]) and ``SparseCsrTensorImpl`` (compressed and plain indices and ``values``
[nnz, *block shape, *dense dims]). A tensor's ``_data`` is one of these, so ``shape`` and
``layout`` read it like a dense array's; only the sparse keys' kernels look inside.
"""
from __future__ import annotations

from ...core.device import CPU
from ...core.dispatch_key import SPARSE_CSR_KS, SPARSE_KS
from ...core.layout import sparse_coo
from ...core.tensor import Tensor

__all__ = ["SparseStorage", "make_coo", "make_compressed", "storage"]


class SparseStorage:
    """The components of one sparse tensor (``compressed``/``plain`` for the compressed
    layouts, ``indices`` for COO; ``values`` for both)."""

    __slots__ = ("layout", "shape", "indices", "values", "compressed", "plain", "blocksize",
                 "sparse_dim", "dense_dim", "coalesced")

    def __init__(self, layout, shape, values, *, indices=None, compressed=None, plain=None,
                 blocksize=None, sparse_dim=2, dense_dim=0, coalesced=False):
        self.layout = layout
        self.shape = tuple(int(s) for s in shape)
        self.values = values
        self.indices = indices
        self.compressed = compressed
        self.plain = plain
        self.blocksize = blocksize
        self.sparse_dim = sparse_dim
        self.dense_dim = dense_dim
        self.coalesced = coalesced

    @property
    def nnz(self) -> int:
        return int(self.values.shape[0])


def make_coo(indices, values, shape, dtype, coalesced=False):
    """A COO tensor over the component tensors ``indices`` and ``values``."""
    sd = int(indices.shape[0])
    st = SparseStorage(sparse_coo, shape, values, indices=indices, sparse_dim=sd,
                       dense_dim=len(shape) - sd, coalesced=coalesced)
    return Tensor._make(st, dtype, CPU, SPARSE_KS)


def make_compressed(layout, compressed, plain, values, shape, dtype, blocksize=None):
    """A compressed (csr/csc/bsr/bsc) tensor over its component tensors."""
    dd = len(shape) - 2
    st = SparseStorage(layout, shape, values, compressed=compressed, plain=plain,
                       blocksize=blocksize, sparse_dim=2, dense_dim=dd)
    return Tensor._make(st, dtype, CPU, SPARSE_CSR_KS)


def storage(t) -> SparseStorage:
    return t._data
