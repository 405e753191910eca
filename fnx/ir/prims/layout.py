"""Layout prims: broadcast_in_dim, reshape, transpose, squeeze, slice, pad, concatenate and
rev (lax's shape operations). ``slice`` shadows the builtin in this module, which does not
use it.
"""
from __future__ import annotations

from ...ops import prims as _p
from ..registry import TensorMeta, derivative
from ._common import prim
from .checks import (check_dims, check_tensor, dim_arg, fail, int_list, per_dim, same_dtype,
                     scalar_for, shape_arg)
import math

__all__ = ["broadcast_in_dim", "reshape", "transpose", "squeeze", "slice", "pad", "pad_sizes",
           "concatenate", "rev"]


def _broadcast_in_dim_meta(self, shape, broadcast_dimensions):
    n = "broadcast_in_dim"
    check_tensor(n, "self", self)
    shape = shape_arg(n, shape)
    bd = int_list(n, "broadcast_dimensions", broadcast_dimensions)
    if len(bd) != self.ndim:
        raise fail(n, f"broadcast_dimensions {list(bd)} must have one entry per operand dim "
                      f"(operand rank {self.ndim})")
    check_dims(n, bd, len(shape), "broadcast_dimensions")
    if any(a >= b for a, b in zip(bd, bd[1:])):
        raise fail(n, f"broadcast_dimensions {list(bd)} must be strictly increasing")
    for i, d in enumerate(bd):
        if self.shape[i] not in (1, shape[d]):
            raise fail(n, f"operand dim {i} has size {self.shape[i]}, which is neither 1 nor "
                          f"the output size {shape[d]} at output dim {d}")
    return TensorMeta(shape, self.dtype)


broadcast_in_dim = prim(
    "broadcast_in_dim(Tensor self, SymInt[] shape, int[] broadcast_dimensions) -> Tensor",
    _broadcast_in_dim_meta)


@derivative(broadcast_in_dim)
def _broadcast_in_dim_backward(grad, shape, broadcast_dimensions):
    # Sum the new dims away; operand dims of size 1 that were expanded are summed by autograd
    # (which knows the operand's shape), so ``self`` need not be saved.
    new = [d for d in range(len(shape)) if d not in broadcast_dimensions]
    return _p.reduce_sum(grad, new) if new else grad


def _reshape_meta(self, shape):
    check_tensor("reshape", "self", self)
    shape = shape_arg("reshape", shape)
    if math.prod(shape) != math.prod(self.shape):
        raise fail("reshape", f"cannot reshape a tensor of shape {list(self.shape)} "
                              f"({math.prod(self.shape)} elements) to {list(shape)}")
    return TensorMeta(shape, self.dtype)


reshape = prim("reshape(Tensor self, SymInt[] shape) -> Tensor", _reshape_meta)


@derivative(reshape)
def _reshape_backward(grad, self_shape):
    return _p.reshape(grad, list(self_shape))


def _transpose_meta(self, permutation):
    check_tensor("transpose", "self", self)
    perm = int_list("transpose", "permutation", permutation)
    if sorted(perm) != list(range(self.ndim)):
        raise fail("transpose", f"permutation {list(perm)} is not a permutation of the "
                                f"{self.ndim} dims")
    return TensorMeta(tuple(self.shape[p] for p in perm), self.dtype)


transpose = prim("transpose(Tensor self, int[] permutation) -> Tensor", _transpose_meta)


@derivative(transpose)
def _transpose_backward(grad, permutation):
    return _p.transpose(grad, [list(permutation).index(d) for d in range(len(permutation))])


def _squeeze_meta(self, dimensions):
    check_tensor("squeeze", "self", self)
    dims = check_dims("squeeze", dimensions, self.ndim, "dimensions")
    for d in dims:
        if self.shape[d] != 1:
            raise fail("squeeze", f"dim {d} has size {self.shape[d]}, not 1")
    return TensorMeta(tuple(s for i, s in enumerate(self.shape) if i not in dims), self.dtype)


squeeze = prim("squeeze(Tensor self, int[] dimensions) -> Tensor", _squeeze_meta)


@derivative(squeeze)
def _squeeze_backward(grad, dimensions):
    shape = list(grad.shape)
    for d in sorted(dimensions):
        shape.insert(d, 1)
    return _p.reshape(grad, shape)


def _slice_meta(self, start_indices, limit_indices, strides=None):
    n = "slice"
    check_tensor(n, "self", self)
    start = per_dim(n, "start_indices", start_indices, self.ndim)
    limit = per_dim(n, "limit_indices", limit_indices, self.ndim)
    strides = (1,) * self.ndim if strides is None else per_dim(n, "strides", strides, self.ndim)
    out = []
    for d, (s, lim, st, size) in enumerate(zip(start, limit, strides, self.shape)):
        if not 0 <= s <= lim <= size:
            raise fail(n, f"dim {d}: need 0 <= start ({s}) <= limit ({lim}) <= size ({size})")
        if st < 1:
            raise fail(n, f"dim {d}: stride {st} must be >= 1")
        out.append(-(-(lim - s) // st))
    return TensorMeta(tuple(out), self.dtype)


slice = prim("slice(Tensor self, SymInt[] start_indices, SymInt[] limit_indices, "
             "SymInt[]? strides=None) -> Tensor", _slice_meta)


@derivative(slice)
def _slice_backward(grad, self_shape, start_indices, strides):
    # Scatter the slice back with pad: interior padding fills the strides' gaps.
    strides = strides or [1] * len(self_shape)
    high = []
    for start, stride, n, size in zip(start_indices, strides, grad.shape, self_shape):
        last = start + (n - 1) * stride if n else start - 1
        high.append(size - last - 1)
    return _p.pad(grad, 0, list(start_indices), high, [st - 1 for st in strides])


def pad_sizes(name, shape, low, high, interior) -> tuple:
    """Output sizes of ``lax.pad``; shared with conv_general's input dilation."""
    out = []
    for d, (size, lo, hi, it) in enumerate(zip(shape, low, high, interior)):
        if it < 0:
            raise fail(name, f"dim {d}: interior padding {it} must be >= 0")
        n = lo + hi + size + max(size - 1, 0) * it
        if n < 0:
            raise fail(name, f"dim {d}: padding ({lo}, {hi}, {it}) of size {size} gives a "
                             f"negative size {n}")
        out.append(n)
    return tuple(out)


def _pad_meta(self, padding_value, low, high, interior):
    n = "pad"
    check_tensor(n, "self", self)
    scalar_for(n, padding_value, self.dtype)
    low = per_dim(n, "low", low, self.ndim)
    high = per_dim(n, "high", high, self.ndim)
    interior = per_dim(n, "interior", interior, self.ndim)
    return TensorMeta(pad_sizes(n, self.shape, low, high, interior), self.dtype)


pad = prim("pad(Tensor self, Scalar padding_value, SymInt[] low, SymInt[] high, "
           "SymInt[] interior) -> Tensor", _pad_meta)


@derivative(pad)
def _pad_backward(grad, low, high, interior):
    # Undo the edges (cropped elements come back as zeros), then drop the interior padding.
    dilated = _p.pad(grad, 0, [-x for x in low], [-x for x in high], [0] * grad.ndim)
    if not any(interior):
        return dilated
    return _p.slice(dilated, [0] * grad.ndim, list(dilated.shape), [i + 1 for i in interior])


def _concatenate_meta(tensors, dim):
    n = "concatenate"
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise fail(n, "expected a non-empty list of tensors")
    for i, t in enumerate(tensors):
        check_tensor(n, f"tensors[{i}]", t)
    first = tensors[0]
    dim = dim_arg(n, dim, first.ndim)
    total = 0
    for i, t in enumerate(tensors):
        same_dtype(n, ("tensors[0]", first), (f"tensors[{i}]", t))
        if t.ndim != first.ndim:
            raise fail(n, f"tensors[{i}] has rank {t.ndim}, tensors[0] has rank {first.ndim}")
        for d in range(first.ndim):
            if d != dim and t.shape[d] != first.shape[d]:
                raise fail(n, f"tensors[{i}] has size {t.shape[d]} at dim {d}, tensors[0] "
                              f"has {first.shape[d]}")
        total += t.shape[dim]
    shape = list(first.shape)
    shape[dim] = total
    return TensorMeta(tuple(shape), first.dtype)


concatenate = prim("concatenate(Tensor[] tensors, int dim) -> Tensor", _concatenate_meta)


@derivative(concatenate)
def _concatenate_backward(grad, tensors_shape, dim):
    out, start = [], 0
    limit = list(grad.shape)
    for shape in tensors_shape:
        lo = [0] * grad.ndim
        lo[dim], limit[dim] = start, start + shape[dim]
        out.append(_p.slice(grad, lo, list(limit)))
        start = limit[dim]
    return out


def _rev_meta(self, dims):
    check_tensor("rev", "self", self)
    check_dims("rev", dims, self.ndim)
    return TensorMeta(tuple(self.shape), self.dtype)


rev = prim("rev(Tensor self, int[] dims) -> Tensor", _rev_meta)


@derivative(rev)
def _rev_backward(grad, dims):
    return _p.rev(grad, dims)
