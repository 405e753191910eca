"""Sorting prims: sort and top_k along one dim (values and int64 indices; NaN sorts as
the largest value)."""
from __future__ import annotations

from ...core import dtype as D
from ...ops import prims as _p
from ..registry import TensorMeta, derivative
from ._common import like, prim, zeros
from .checks import BIF, check_category, check_tensor, dim_arg, fail, int_arg

__all__ = ["sort", "top_k"]


def _sort_meta(self, dim, descending, stable):
    check_tensor("sort", "self", self)
    check_category("sort", self, BIF)
    dim_arg("sort", dim, self.ndim)
    return (TensorMeta(tuple(self.shape), self.dtype), TensorMeta(tuple(self.shape), D.int64))


sort = prim("sort(Tensor self, int dim, bool descending, bool stable) "
             "-> (Tensor values, Tensor indices)", _sort_meta)


@derivative(sort)
def _sort_backward(grad, dim, result1):
    # the indices (output 1) are a permutation along dim: each slot is written exactly once
    return _p.scatter(like(grad, 0), dim, result1, grad, "none")


def _top_k_meta(self, k, dim, largest):
    n = "top_k"
    check_tensor(n, "self", self)
    check_category(n, self, BIF)
    dim = dim_arg(n, dim, self.ndim)
    k = int_arg(n, "k", k)
    if not 0 <= k <= self.shape[dim]:
        raise fail(n, f"k ({k}) must be in [0, {self.shape[dim]}] (the size of dim {dim})")
    shape = list(self.shape)
    shape[dim] = k
    return (TensorMeta(tuple(shape), self.dtype), TensorMeta(tuple(shape), D.int64))


top_k = prim("top_k(Tensor self, int k, int dim, bool largest) "
              "-> (Tensor values, Tensor indices)", _top_k_meta)


@derivative(top_k)
def _top_k_backward(grad, self_shape, dim, result1):
    return _p.scatter(zeros(self_shape, grad), dim, result1, grad, "none")
