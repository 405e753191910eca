"""Reduction prims: reduce_sum, reduce_prod, reduce_max, reduce_min, argmax and argmin.

The output dtype is the input's (callers convert first); on bool, sum is "any" and prod
"all" (add/mul on bool are or/and).  Over an empty extent: the reduction's identity.
"""
from __future__ import annotations

from ...core import dtype as D
from ...ops import prims as _p
from ..registry import TensorMeta, derivative, nondifferentiable
from ._common import permute_to, prim, shift, times, unreduce, zeros
from .checks import ANY, BIF, check_category, check_dims, check_tensor, dim_arg, fail
import math

__all__ = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "argmax", "argmin"]


def _reduce_meta(name, cats):
    def meta(self, dims):
        check_tensor(name, "self", self)
        check_category(name, self, cats)
        dims = check_dims(name, dims, self.ndim)
        return TensorMeta(tuple(s for i, s in enumerate(self.shape) if i not in dims),
                          self.dtype)
    return meta


def _reduce(name, cats):
    return prim(f"{name}(Tensor self, int[] dims) -> Tensor", _reduce_meta(name, cats))


reduce_sum = _reduce("reduce_sum", ANY)
reduce_prod = _reduce("reduce_prod", ANY)
reduce_max = _reduce("reduce_max", BIF)
reduce_min = _reduce("reduce_min", BIF)


@derivative(reduce_sum)
def _reduce_sum_backward(grad, self_shape, dims):
    return unreduce(grad, self_shape, dims)


def _exclusive_products(x):
    """Along the last dim: each element's product of all the others, without division (so
    zeros are exact): the exclusive product from the left times that from the right."""
    d = x.ndim - 1
    left = _p.cumprod(shift(x, d, -1, 1), d)
    right = _p.rev(_p.cumprod(_p.rev(shift(x, d, 1, 1), [d]), d), [d])
    return _p.mul(left, right)


@derivative(reduce_prod)
def _reduce_prod_backward(grad, self, dims):
    dims = sorted(dims)
    if not dims:
        return grad
    if math.prod(self.shape) == 0:
        return zeros(self.shape, grad)
    # The reduced dims last and flattened into one, the products of the others along it.
    keep = [d for d in range(self.ndim) if d not in dims]
    perm = keep + dims
    x = self if perm == sorted(perm) else _p.transpose(self, perm)
    moved = [self.shape[d] for d in perm]
    x = _p.reshape(x, [self.shape[d] for d in keep] + [math.prod(self.shape[d] for d in dims)])
    others = _p.reshape(_exclusive_products(x), moved)
    others = permute_to(others, perm)
    return times(unreduce(grad, self.shape, dims), others)


def _extremum_backward(grad, self, dims, result):
    # Ties share the gradient evenly (PyTorch's amax/amin rule).
    hit = _p.convert_element_type(_p.eq(self, unreduce(result, self.shape, dims)), grad.dtype)
    share = _p.div(grad, _p.reduce_sum(hit, dims))
    return _p.mul(unreduce(share, self.shape, dims), hit)


derivative(reduce_max, reduce_min)(_extremum_backward)


def _arg_meta(name):
    def meta(self, dim):
        check_tensor(name, "self", self)
        check_category(name, self, BIF)
        dim = dim_arg(name, dim, self.ndim)
        if self.shape[dim] == 0:
            raise fail(name, f"cannot take {name} over dim {dim} of size 0")
        return TensorMeta(tuple(s for i, s in enumerate(self.shape) if i != dim), D.int64)
    return meta


argmax = prim("argmax(Tensor self, int dim) -> Tensor", _arg_meta("argmax"))
argmin = prim("argmin(Tensor self, int dim) -> Tensor", _arg_meta("argmin"))
nondifferentiable(argmax, argmin)
