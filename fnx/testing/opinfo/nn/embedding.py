"""OpInfo entries for the embedding ops (fnx/ir/aten/nn/embedding.py)."""
from __future__ import annotations

import numpy as np

from ....core import dtype as D
from ....ops import aten
from ...database import ErrorInput, Known, OpInfo, SampleInput, register
from ._common import F, TOLS, _floatref, _idx, _t


def _embedding_ref(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return weight[indices]


def _embedding_samples(info, device, dtype):
    w = _t((5, 3), dtype, device)
    yield SampleInput(w, _idx([[0, 4], [2, 2], [1, 0]], device))
    yield SampleInput(w, _idx([3, 1, 3], device, D.int32), 1).at_kink(
        "the padding_idx row gets no gradient by definition (PyTorch's rule), which is not "
        "d out / d weight")
    yield SampleInput(w, _idx(3, device))
    yield SampleInput(w, _idx(np.zeros(0, np.int64), device))
    yield SampleInput(_t((6, 4), dtype, device, noncontiguous=True), _idx([[5], [0]], device))


def _embedding_errors(info, device):
    w = _t((5, 3), D.float32, device)
    yield ErrorInput(SampleInput(w, _t((2,), D.float32, device)), RuntimeError,
                     "Expected tensor for argument #1 'indices' to have one of the following "
                     "scalar types: Long, Int")
    yield ErrorInput(SampleInput(_t((3,), D.float32, device), _idx([0], device)), RuntimeError,
                     "Expected 2-dimensional tensor, but got 1-dimensional tensor for "
                     "argument #1 'weight'")
    yield ErrorInput(SampleInput(w, _idx([5], device)), IndexError, "index out of range",
                     meta=False)


def _embedding_backward_ref(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    d = grad.shape[-1]
    flat = indices.reshape(-1)
    rows = grad.reshape(-1, d)
    counts = np.bincount(flat, minlength=num_weights)
    out = np.zeros((num_weights, d))
    for i, row in zip(flat, rows):
        if i == padding_idx:
            continue
        out[i] += row / (counts[i] if scale_grad_by_freq else 1)
    return out


def _embedding_backward_samples(info, device, dtype):
    idx = _idx([[0, 2, 2], [4, 2, 0]], device)
    for padding_idx, scale in ((-1, False), (2, True), (0, False)):
        yield SampleInput(_t((2, 3, 4), dtype, device), idx, 6, padding_idx, scale)
    yield SampleInput(_t((3, 2), dtype, device), _idx([1, 1, 0], device, D.int32), 2, -1,
                      True)
    yield SampleInput(_t((0, 4), dtype, device), _idx(np.zeros(0, np.int64), device), 3, -1,
                      False)


def _embedding_backward_errors(info, device):
    yield ErrorInput(SampleInput(_t((2, 4), D.float32, device), _t((2,), D.float32, device), 3,
                                 -1, False), RuntimeError,
                     "Expected tensor for argument #2 'indices' to have one of the following "
                     "scalar types: Long, Int")


def _embedding_bag_ref(weight, indices, offsets, scale_grad_by_freq=False, mode=0,
                       sparse=False, per_sample_weights=None, include_last_offset=False,
                       padding_idx=-1):
    """(output, offset2bag, bag_size, max_indices).  PyTorch leaves max_indices unwritten
    for sum and mean (fnx: zeros) and may skip offset2bag in its sum fast path (fnx always
    gives the bag of each index)."""
    n, d = indices.shape[0], weight.shape[1]
    bags = len(offsets) - (1 if include_last_offset else 0)
    ends = list(offsets[1:bags]) + ([offsets[bags]] if include_last_offset else [n])
    out = np.zeros((bags, d))
    o2b = np.zeros(n, np.int64)
    size = np.zeros(bags, np.int64)
    max_idx = np.full((bags, d), -1, np.int64) if mode == 2 else np.zeros(bags, np.int64)
    for b in range(bags):
        lo, hi = int(offsets[b]), int(ends[b])
        o2b[lo:hi] = b
        keep = [i for i in range(lo, hi) if indices[i] != padding_idx or padding_idx < 0]
        size[b] = len(keep)
        if not keep:
            continue
        rows = weight[indices[keep]]
        if mode == 0:
            if per_sample_weights is not None:
                rows = rows * per_sample_weights[keep][:, None]
            out[b] = rows.sum(0)
        elif mode == 1:
            out[b] = rows.mean(0)
        else:
            j = rows.argmax(0)
            out[b] = rows[j, np.arange(d)]
            max_idx[b] = indices[keep][j]
    it = indices.dtype
    return (out.astype(weight.dtype), o2b.astype(it), size.astype(it), max_idx.astype(it))


def _embedding_bag_samples(info, device, dtype):
    w = _t((6, 3), dtype, device)
    idx = _idx([1, 2, 4, 5, 4, 3, 2], device)
    off = _idx([0, 2, 2, 5], device)             # bag 1 is empty
    for mode in (1, 2):
        yield SampleInput(w, idx, off, False, mode)
    yield SampleInput(w, idx, off, False, 0, False, _t((7,), dtype, device))      # weighted sum
    yield SampleInput(w, idx, _idx([0, 2, 7], device), False, 0, False, None, True)
    yield SampleInput(w, idx, off, False, 1, False, None, False, 4)      # padding_idx
    yield SampleInput(w, _idx([0, 5, 1], device, D.int32), _idx([0, 1], device, D.int32),
                      False, 2)


def _embedding_bag_errors(info, device):
    w = _t((6, 3), D.float32, device)
    idx, off = _idx([1, 2, 3], device), _idx([0, 2], device)
    yield ErrorInput(SampleInput(w, idx, off, False, 3), RuntimeError,
                     "mode has to be one of sum, mean or max")
    yield ErrorInput(SampleInput(w, _idx([[1, 2]], device), off), ValueError,
                     "input has to be 1D, and offsets has to be 1D")
    yield ErrorInput(SampleInput(w, _t((3,), D.float32, device), off), RuntimeError,
                     "Expected tensor for argument #2 'indices'")
    yield ErrorInput(SampleInput(w, idx, off, False, 1, False, _t((3,), D.float32, device)),
                     NotImplementedError, "per_sample_weights is only supported for "
                                          "mode='sum'")


def _one_hot_ref(x, num_classes=-1):
    n = int(x.max()) + 1 if num_classes == -1 else num_classes
    return (x[..., None] == np.arange(n)).astype(np.int64)


def _one_hot_samples(info, device, dtype):
    yield SampleInput(_idx([0, 2, 1], device), 4)
    yield SampleInput(_idx([[1], [0], [3]], device))
    yield SampleInput(_idx(2, device), 3)
    yield SampleInput(_idx(np.zeros((0, 2), np.int64), device), 3)


def _one_hot_errors(info, device):
    yield ErrorInput(SampleInput(_t((3,), D.float32, device), 3), RuntimeError,
                     "one_hot is only applicable to index tensor")
    yield ErrorInput(SampleInput(_idx(np.zeros(0, np.int64), device)), RuntimeError,
                     "Can not infer total number of classes from empty tensor")
    yield ErrorInput(SampleInput(_idx([3], device), 3), RuntimeError,
                     "Class values must be smaller than num_classes", meta=False)
    yield ErrorInput(SampleInput(_idx([-1, 0], device), 3), RuntimeError,
                     "Class values must be non-negative", meta=False)


_ONE_HOT = ("one_hot reads the data (min/max with .item()) to check the classes and, for "
            "num_classes=-1, to size the result: the shape depends on values")
register(
    OpInfo(aten.embedding.default, _floatref(_embedding_ref), F, _embedding_samples,
           error_inputs=_embedding_errors),
    OpInfo(aten.embedding_dense_backward.default, _floatref(_embedding_backward_ref), F,
           _embedding_backward_samples, tols=TOLS, error_inputs=_embedding_backward_errors),
    OpInfo(aten._embedding_bag.default, _floatref(_embedding_bag_ref), F,
           _embedding_bag_samples, tols=TOLS, error_inputs=_embedding_bag_errors),
    OpInfo(aten.one_hot.default, _one_hot_ref, (D.int64,), _one_hot_samples,
           error_inputs=_one_hot_errors,
           known_failures=[Known("meta", reason=_ONE_HOT)]),
)
