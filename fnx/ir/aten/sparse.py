"""Sparse tensors' operators: the constructors from components, the conversions between
layouts, the component accessors and the ops only sparse tensors have (coalesce, sparse_mask,
the sparse resizes, ``_sparse_sum``), with their derivative formulas.

Their kernels live in ``fnx.backends.sparse`` (the SparseCPU and SparseCsrCPU keys; the
constructors and ``to_sparse*`` of a dense tensor on the CPU key). Dense ops that also take
sparse operands (``mm``, ``add``, ``mul``, ``t``, ...) keep their own definitions and
formulas, which are written so a sparse operand or gradient goes through.

A gradient reaching a sparse input may be sparse (of any pattern) or dense, as in PyTorch
(``mm`` gives a dense one): the formulas here take either (``_dense``).
"""
from __future__ import annotations

from ...core.layout import sparse_bsr, sparse_coo, sparse_csr, strided
from ...ops import aten
from ..registry import defop, derivative, nondifferentiable

__all__ = ["sparse_coo_tensor_with_dims_and_tensors", "sparse_compressed_tensor_unsafe",
           "to_dense", "to_sparse_sparse_dim", "to_sparse", "to_sparse_csr", "to_sparse_csc",
           "to_sparse_bsr", "to_sparse_bsc", "indices", "values", "indices_", "values_",
           "crow_indices", "col_indices", "ccol_indices", "row_indices", "coalesce",
           "is_coalesced", "sparse_dim", "dense_dim", "nnz", "sparse_mask", "sparse_resize_",
           "sparse_resize_and_clear_", "resize_as_sparse_", "sparse_sum", "sparse_sum_dim",
           "compressed_of", "plain_of"]

_OPTS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"

sparse_coo_tensor_with_dims_and_tensors = defop(
    "_sparse_coo_tensor_with_dims_and_tensors(int sparse_dim, int dense_dim, SymInt[] size, "
    "Tensor indices, Tensor values, *, " + _OPTS + ", bool? is_coalesced=None) -> Tensor")
sparse_compressed_tensor_unsafe = defop(
    "_sparse_compressed_tensor_unsafe(Tensor compressed_indices, Tensor plain_indices, "
    "Tensor values, SymInt[] size, *, " + _OPTS + ") -> Tensor")
to_dense = defop("_to_dense(Tensor self, ScalarType? dtype=None, bool? masked_grad=None) "
                 "-> Tensor")
to_sparse_sparse_dim = defop("_to_sparse.sparse_dim(Tensor self, int sparse_dim) -> Tensor")
to_sparse = defop("_to_sparse(Tensor self, *, Layout? layout=None, int[2]? blocksize=None, "
                  "int? dense_dim=None) -> Tensor")
to_sparse_csr = defop("_to_sparse_csr(Tensor self, int? dense_dim=None) -> Tensor")
to_sparse_csc = defop("_to_sparse_csc(Tensor self, int? dense_dim=None) -> Tensor")
to_sparse_bsr = defop("_to_sparse_bsr(Tensor self, int[2] blocksize, int? dense_dim=None) "
                      "-> Tensor")
to_sparse_bsc = defop("_to_sparse_bsc(Tensor self, int[2] blocksize, int? dense_dim=None) "
                      "-> Tensor")
# The components: the tensors the sparse tensor holds (writes to them show in it).
indices = defop("indices(Tensor self) -> Tensor")
values = defop("values(Tensor self) -> Tensor")
indices_ = defop("_indices(Tensor self) -> Tensor")
values_ = defop("_values(Tensor self) -> Tensor")
crow_indices = defop("crow_indices(Tensor self) -> Tensor")
col_indices = defop("col_indices(Tensor self) -> Tensor")
ccol_indices = defop("ccol_indices(Tensor self) -> Tensor")
row_indices = defop("row_indices(Tensor self) -> Tensor")
coalesce = defop("coalesce(Tensor self) -> Tensor")
is_coalesced = defop("is_coalesced(Tensor self) -> bool")
sparse_dim = defop("sparse_dim(Tensor self) -> int")
dense_dim = defop("dense_dim(Tensor self) -> int")
nnz = defop("_nnz(Tensor self) -> int")
sparse_mask = defop("sparse_mask(Tensor self, Tensor mask) -> Tensor")
sparse_resize_ = defop("sparse_resize_(Tensor(a!) self, int[] size, int sparse_dim, "
                       "int dense_dim) -> Tensor(a!)")
sparse_resize_and_clear_ = defop("sparse_resize_and_clear_(Tensor(a!) self, int[] size, "
                                 "int sparse_dim, int dense_dim) -> Tensor(a!)")
resize_as_sparse_ = defop("resize_as_sparse_(Tensor(a!) self, Tensor the_template) "
                          "-> Tensor(a!)")
sparse_sum = defop("_sparse_sum(Tensor self) -> Tensor")
sparse_sum_dim = defop("_sparse_sum.dim(Tensor self, int[1] dim) -> Tensor")

nondifferentiable(indices, indices_, crow_indices, col_indices, ccol_indices, row_indices,
                  is_coalesced, sparse_dim, dense_dim, nnz, sparse_resize_,
                  sparse_resize_and_clear_, resize_as_sparse_)


def compressed_of(t):
    """A compressed tensor's compressed indices (crow for csr/bsr, ccol for csc/bsc)."""
    return crow_indices(t) if t.layout in (sparse_csr, sparse_bsr) else ccol_indices(t)


def plain_of(t):
    """A compressed tensor's plain indices (col for csr/bsr, row for csc/bsc)."""
    return col_indices(t) if t.layout in (sparse_csr, sparse_bsr) else row_indices(t)


def _dense(g):
    return g if g.layout is strided else to_dense(g)


def _like(grad, t):
    """``grad`` (dense or sparse) as a gradient of ``t``: dense for a dense ``t``, else
    ``t``'s layout and pattern (coalesced: a duplicated entry would count twice when the
    gradient is read back densely)."""
    g = _dense(grad)
    if t.layout is strided:
        return g
    return sparse_mask(g, coalesce(t) if t.layout is sparse_coo else t)


@derivative(sparse_coo_tensor_with_dims_and_tensors)
def _coo_constructor_backward(grad, result):
    # the values' gradient is the output's gradient read at each stored entry (every
    # duplicate of a position gets it): the values of the gradient masked to the pattern
    # the constructor made, which keeps the given order
    return None, values_(sparse_mask(_dense(grad), result))


@derivative(sparse_compressed_tensor_unsafe)
def _compressed_constructor_backward(grad, result):
    return None, None, values(sparse_mask(_dense(grad), result))


@derivative(to_dense)
def _to_dense_backward(grad, self):
    return _like(grad, self)


@derivative(to_sparse_sparse_dim, to_sparse, to_sparse_csr, to_sparse_csc, to_sparse_bsr,
            to_sparse_bsc, coalesce)
def _conversion_backward(grad, self):
    return _like(grad, self)


@derivative(values, values_)
def _values_backward(grad, self):
    if self.layout is sparse_coo:
        return sparse_coo_tensor_with_dims_and_tensors(
            sparse_dim(self), dense_dim(self), list(self.shape), indices_(self), grad,
            dtype=grad.dtype, device=grad.device)
    return sparse_compressed_tensor_unsafe(compressed_of(self), plain_of(self), grad,
                                           list(self.shape), dtype=grad.dtype,
                                           layout=self.layout, device=grad.device)


@derivative(sparse_mask)
def _sparse_mask_backward(grad, needs_input_grad):
    return (_dense(grad) if needs_input_grad[0] else None), None


@derivative(sparse_sum)
def _sparse_sum_backward(grad, self):
    return _like(_expand(grad, (), self), self)


@derivative(sparse_sum_dim)
def _sparse_sum_dim_backward(grad, self, dim):
    return _like(_expand(_dense(grad), dim, self), self)


def _expand(g, dims, self):
    n = self.ndim
    for d in sorted(d % n for d in dims):
        g = aten.unsqueeze.default(g, d)
    return aten.expand.default(g, list(self.shape))

