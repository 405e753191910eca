"""Embedding lookups: ``embedding``, its dense backward, ``_embedding_bag`` and ``one_hot``."""
from __future__ import annotations

import math

from ....core import dtype as D
from ....ops import aten
from ...registry import TensorMeta, defop, derivative, nondifferentiable
from ._common import CORE, _arange, _full, _to, _up


def _check_indices(name, indices, arg="indices", pos=1):
    if indices.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"Expected tensor for argument #{pos} '{arg}' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{indices.device.type.upper()}{indices.dtype.scalar_type}Type "
                           f"instead (while checking arguments for {name})")


def _embedding_meta(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    _check_indices("embedding", indices)
    if weight.ndim != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {weight.ndim}-dimensional "
                           f"tensor for argument #1 'weight' (while checking arguments for "
                           f"embedding)")
    return TensorMeta(tuple(indices.shape) + (weight.shape[1],), weight.dtype)


def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    shape = _embedding_meta(weight, indices).shape
    flat = aten.reshape(indices, [indices.numel()])
    rows = aten.index_select(weight, 0, flat)
    if padding_idx >= 0 and (weight.dtype.is_floating_point or weight.dtype.is_complex):
        # the padding row gets no gradient: its lookups are constants to a program that
        # JAX differentiates (jax.vjp of a compiled module, fnx.lower.jax_autograd), as
        # they are to embedding_dense_backward
        pad = aten.unsqueeze(aten.eq.Scalar(flat, padding_idx), 1)
        rows = aten.where.self(pad, aten.detach(rows), rows)
    return aten.view(rows, list(shape))


embedding = defop("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
                  "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor", tags=CORE,
                  meta=_embedding_meta, decomposition=_embedding, explicit=True)


@derivative(embedding)
def _embedding_backward(grad, weight, indices, padding_idx, scale_grad_by_freq):
    # sparse=True still gets a dense gradient (fnx has no sparse tensors)
    return (aten.embedding_dense_backward(grad, indices, weight.shape[0], padding_idx,
                                          scale_grad_by_freq), None)


def _embedding_dense_backward_meta(grad_output, indices, num_weights, padding_idx,
                                   scale_grad_by_freq):
    _check_indices("embedding_backward", indices, "indices", 2)
    return TensorMeta((num_weights, grad_output.shape[-1]), grad_output.dtype)


def _embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
                              scale_grad_by_freq):
    _check_indices("embedding_backward", indices, "indices", 2)    # float indices: error
    n = indices.numel()
    dim = grad_output.shape[-1]
    idx = aten.reshape(indices, [n])
    if idx.dtype is not D.int64:
        idx = _to(idx, D.int64)
    grad = aten.reshape(_up(grad_output), [n, dim])
    if scale_grad_by_freq:
        counts = aten.index_put(_full([num_weights], 0, D.int64, idx.device), [idx],
                                _full([n], 1, D.int64, idx.device), True)
        grad = grad / aten.unsqueeze(aten.index_select(counts, 0, idx), 1)
    if padding_idx >= 0:
        grad = aten.where.self(aten.unsqueeze(aten.eq.Scalar(idx, padding_idx), 1), 0.0, grad)
    out = _full([num_weights, dim], 0, grad.dtype, grad.device)
    return _to(aten.index_put(out, [idx], grad, True), grad_output.dtype)


embedding_dense_backward = defop(
    "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, "
    "SymInt padding_idx, bool scale_grad_by_freq) -> Tensor", tags=CORE,
    meta=_embedding_dense_backward_meta, decomposition=_embedding_dense_backward, explicit=True)


def _embedding_bag_meta(weight, indices, offsets, scale_grad_by_freq=False, mode=0,
                        sparse=False, per_sample_weights=None, include_last_offset=False,
                        padding_idx=-1):
    _check_indices("embedding_bag", indices, "indices", 2)
    _check_indices("embedding_bag", offsets, "offsets", 3)
    if weight.ndim != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {weight.ndim}-dimensional "
                           f"tensor for argument #1 'weight' (while checking arguments for "
                           f"embedding_bag)")
    if indices.ndim != 1 or offsets.ndim != 1:
        raise ValueError("input has to be 1D, and offsets has to be 1D (2D input is handled "
                         "by embedding_bag)")
    if mode not in (0, 1, 2):
        raise RuntimeError(f"mode has to be one of sum, mean or max, got {mode}")
    if per_sample_weights is not None:
        if mode != 0:
            raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                      "per_sample_weights is only supported for mode='sum'")
        if tuple(per_sample_weights.shape) != tuple(indices.shape):
            raise RuntimeError("embedding_bag: per_sample_weights must have the same shape "
                               "as indices")
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    bags = max(bags, 0)
    d = weight.shape[1]
    idt = indices.dtype
    return (TensorMeta((bags, d), weight.dtype), TensorMeta((indices.shape[0],), idt),
            TensorMeta((bags,), idt), TensorMeta((bags, d) if mode == 2 else (bags,), idt))


def _bag_layout(indices, offsets, bags, include_last_offset, padding_idx):
    """int64 indices, each index's bag (-1 before the first offset), whether it counts
    (inside a bag, not padding), its bag clamped to >= 0, and each bag's count."""
    n = indices.shape[0]
    dev = indices.device
    idx = _to(indices, D.int64)
    offs = _to(offsets, D.int64)
    # bag of each index: how many bag starts are <= its position, minus one
    pos = _arange(n, D.int64, dev)
    starts = aten.slice.Tensor(offs, 0, 0, bags)
    offset2bag = aten.sub.Scalar(aten.sum.dim_IntList(
        aten.ge.Tensor(aten.unsqueeze(pos, 1), aten.unsqueeze(starts, 0)), [1]), 1)
    in_bag = aten.ge.Scalar(offset2bag, 0)
    if include_last_offset and bags >= 0 and offs.shape[0] > 0:
        in_bag = aten.logical_and(in_bag, aten.lt.Tensor(pos, aten.select.int(offs, 0, -1)))
    keep = in_bag
    if padding_idx >= 0:
        keep = aten.logical_and(keep, aten.ne.Scalar(idx, padding_idx))
    bag = aten.clamp(offset2bag, 0, None)
    count = aten.index_put(_full([bags], 0, D.int64, dev), [bag], _to(keep, D.int64), True)
    return idx, offset2bag, keep, bag, count


def _embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                   per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    metas = _embedding_bag_meta(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                                per_sample_weights, include_last_offset, padding_idx)
    bags, d = metas[0].shape
    n = indices.shape[0]
    dev = weight.device
    idx, offset2bag, keep, bag, count = _bag_layout(indices, offsets, bags,
                                                    include_last_offset, padding_idx)
    rows = aten.index_select(weight, 0, idx)
    if mode == 2:
        fill = -math.inf if weight.dtype.is_floating_point else 0
        vals = aten.where.self(aten.unsqueeze(keep, 1), rows, fill)
        init = _full([bags, d], fill, weight.dtype, dev)
        # scatter_reduce-free max: compare every index with every bag
        onehot = aten.logical_and(aten.eq.Tensor(aten.unsqueeze(bag, 0),
                                                 aten.unsqueeze(_arange(bags, D.int64, dev), 1)),
                                  aten.unsqueeze(keep, 0))           # (bags, n)
        cand = aten.where.self(aten.unsqueeze(onehot, 2), aten.unsqueeze(vals, 0),
                               aten.unsqueeze(init, 1))             # (bags, n, d)
        if n:
            out, arg = aten.max.dim(cand, 1)
            max_idx = aten.where.self(aten.unsqueeze(count > 0, 1), aten.index_select(idx, 0,
                                      aten.reshape(arg, [bags * d])).reshape([bags, d]), -1)
            out = aten.where.self(aten.unsqueeze(count > 0, 1), out, 0)
        else:
            out = _full([bags, d], 0, weight.dtype, dev)
            max_idx = _full([bags, d], -1, D.int64, dev)
        max_indices = _to(max_idx, indices.dtype)
    else:
        contrib = aten.where.self(aten.unsqueeze(keep, 1), rows, 0)
        if per_sample_weights is not None:
            contrib = contrib * aten.unsqueeze(per_sample_weights, 1)
        out = aten.index_put(_full([bags, d], 0, weight.dtype, dev), [bag], contrib, True)
        if mode == 1:
            out = out / aten.unsqueeze(aten.clamp(count, 1, None), 1)
            out = _to(out, weight.dtype)
        max_indices = _full([bags], 0, indices.dtype, dev)
    return (out, _to(aten.clamp(offset2bag, 0, None), indices.dtype),
            _to(count, indices.dtype), max_indices)


_embedding_bag_op = defop(
    "_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, "
    "int mode=0, bool sparse=False, Tensor? per_sample_weights=None, "
    "bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)",
    tags=CORE, meta=_embedding_bag_meta, decomposition=_embedding_bag, explicit=True)


@derivative(_embedding_bag_op)
def _embedding_bag_derivative(grad, weight, indices, offsets, scale_grad_by_freq, mode,
                              per_sample_weights, include_last_offset, padding_idx, result3,
                              needs_input_grad):
    """Each kept index's row gets its bag's gradient (divided by the bag's count for mean,
    times its per-sample weight for sum); max sends it to the rows the max picked (the
    saved max indices, ``result3``: the bags themselves are not saved)."""
    num, d = weight.shape
    bags = grad.shape[0]
    dev = grad.device
    g = _up(grad)
    if mode == 2:
        mi = _to(result3, D.int64)
        valid = aten.ge.Scalar(mi, 0)
        flat = aten.where.self(valid, mi * d + aten.unsqueeze(_arange(d, D.int64, dev), 0), 0)
        vals = aten.where.self(valid, g, 0.0)
        gw = aten.index_put(_full([num * d], 0, g.dtype, dev), [aten.reshape(flat, [bags * d])],
                            aten.reshape(vals, [bags * d]), True)
        return aten.view(gw, [num, d]), None, None, None
    idx, _, keep, bag, count = _bag_layout(indices, offsets, bags, include_last_offset,
                                           padding_idx)
    rows = aten.index_select(g, 0, bag)                                   # (n, d)
    if mode == 1:
        rows = rows / aten.unsqueeze(_to(aten.index_select(aten.clamp(count, 1, None), 0, bag),
                                         g.dtype), 1)
    gpsw = None
    if per_sample_weights is not None and needs_input_grad[3]:
        dots = aten.sum.dim_IntList(rows * aten.index_select(_up(weight), 0, idx), [1], False)
        gpsw = aten.where.self(keep, dots, 0.0)
    if per_sample_weights is not None:
        rows = rows * aten.unsqueeze(_up(per_sample_weights), 1)
    if scale_grad_by_freq:
        freq = aten.index_put(_full([num], 0, D.int64, dev), [idx],
                              _full([idx.shape[0]], 1, D.int64, dev), True)
        rows = rows / aten.unsqueeze(_to(aten.index_select(freq, 0, idx), g.dtype), 1)
    rows = aten.where.self(aten.unsqueeze(keep, 1), rows, 0.0)
    gw = aten.index_put(_full([num, d], 0, g.dtype, dev), [idx], rows, True)
    return gw, None, None, gpsw


def _one_hot(self, num_classes=-1):
    if self.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if self.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(aten.max(self).item()) + 1
    elif self.numel() > 0:
        if int(aten.min(self).item()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(aten.max(self).item()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    classes = _arange(num_classes, D.int64, self.device)
    return _to(aten.eq.Tensor(aten.unsqueeze(self, -1), classes), D.int64)


one_hot = defop("one_hot(Tensor self, int num_classes=-1) -> Tensor", decomposition=_one_hot)
nondifferentiable(one_hot)
