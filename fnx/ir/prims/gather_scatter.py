"""Gather/scatter prims along one dim (``torch.gather`` / ``torch.scatter`` semantics with
normalized dims and an int64 index of the operand's rank; index bounds are checked by the
kernels, on the data).
"""
from __future__ import annotations

from ...core import dtype as D
from ...ops import prims as _p
from ..registry import TensorMeta, derivative
from ._common import like, over, prim, times, zeros
from .checks import BIF, check_category, check_tensor, dim_arg, fail, same_dtype, same_shape

__all__ = ["gather", "scatter", "SCATTER_REDUCES"]


def _index_checks(name, self, dim, index):
    check_tensor(name, "self", self)
    check_tensor(name, "index", index)
    if index.dtype is not D.int64:
        raise fail(name, f"expected an int64 index, got {index.dtype.name}")
    if index.ndim != self.ndim:
        raise fail(name, f"index has rank {index.ndim}, self has rank {self.ndim}")
    dim = dim_arg(name, dim, self.ndim)
    for d in range(self.ndim):
        if d != dim and index.shape[d] > self.shape[d]:
            raise fail(name, f"index size {index.shape[d]} at dim {d} exceeds self's size "
                             f"{self.shape[d]}")
    return dim


def _gather_meta(self, dim, index):
    _index_checks("gather", self, dim, index)
    return TensorMeta(tuple(index.shape), self.dtype)


gather = prim("gather(Tensor self, int dim, Tensor index) -> Tensor", _gather_meta)


@derivative(gather)
def _gather_backward(grad, self_shape, dim, index):
    return _p.scatter(zeros(self_shape, grad), dim, index, grad, "add"), None


SCATTER_REDUCES = ("none", "add", "mul", "max", "min")


def _scatter_meta(self, dim, index, src, reduce="none"):
    n = "scatter"
    _index_checks(n, self, dim, index)
    check_tensor(n, "src", src)
    same_shape(n, ("index", index), ("src", src))
    same_dtype(n, ("self", self), ("src", src))
    if reduce not in SCATTER_REDUCES:
        raise fail(n, f"reduce must be one of {', '.join(SCATTER_REDUCES)}, got {reduce!r}")
    if reduce in ("max", "min"):
        check_category(n, self, BIF)
    return TensorMeta(tuple(self.shape), self.dtype)


scatter = prim("scatter(Tensor self, int dim, Tensor index, Tensor src, "
                "str reduce=\"none\") -> Tensor", _scatter_meta)


def _scatter_mul_src_grad(grad, self, dim, index, src, result):
    """d result / d src of a scatter-multiply: the product of everything else written to the
    same slot. Division by ``src`` is exact except at zeros: a slot's only zero gets the
    product of the rest recomputed; with two or more zeros every product is 0 anyway."""
    zero, one = like(src, 0), like(src, 1)
    src_zero = _p.eq(src, zero)
    zeros_in_slot = _p.gather(_p.scatter(zeros(self.shape, src), dim, index,
                                         _p.convert_element_type(src_zero, src.dtype), "add"),
                              dim, index)
    single = _p.bitwise_and(src_zero, _p.eq(zeros_in_slot, one))
    others = _p.scatter(self, dim, index, _p.where(single, one, src), "mul")
    from_others = _p.gather(times(grad, others), dim, index)
    from_result = over(_p.gather(times(grad, result), dim, index),
                        _p.where(src_zero, one, src))
    return _p.where(single, from_others, from_result)


# One formula per reduction, so that each call saves only what its own reduction reads.

@derivative(scatter, reduce=("none", "add"))
def _scatter_backward(grad, dim, index, reduce, needs_input_grad):
    # the index alone: the values of self, src and the result are not needed
    gs = gsrc = None
    if needs_input_grad[0]:
        # "none": overwritten slots get nothing (a duplicate index: every writer gets the
        # slot's gradient, as PyTorch's scatter)
        gs = grad if reduce == "add" else \
            _p.scatter(grad, dim, index, zeros(index.shape, grad), "none")
    if needs_input_grad[2]:
        gsrc = _p.gather(grad, dim, index)
    return gs, None, gsrc


@derivative(scatter, reduce=("mul",))
def _scatter_mul_backward(grad, self, dim, index, src, result, needs_input_grad):
    gs = gsrc = None
    if needs_input_grad[0]:
        gs = times(grad, _p.scatter(like(self, 1), dim, index, src, "mul"))
    if needs_input_grad[2]:
        gsrc = _scatter_mul_src_grad(grad, self, dim, index, src, result)
    return gs, None, gsrc


@derivative(scatter, reduce=("max", "min"))
def _scatter_extremum_backward(grad, self, dim, index, src, result, needs_input_grad):
    # every value equal to the result shares the slot's gradient evenly
    value = _p.gather(result, dim, index)
    self_hit = _p.convert_element_type(_p.eq(self, result), grad.dtype)
    src_hit = _p.convert_element_type(_p.eq(src, value), grad.dtype)
    share = _p.div(grad, _p.scatter(self_hit, dim, index, src_hit, "add"))
    return (_p.mul(share, self_hit) if needs_input_grad[0] else None, None,
            _p.mul(_p.gather(share, dim, index), src_hit) if needs_input_grad[2] else None)
