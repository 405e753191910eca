"""OpInfo entries for fnx/ir/aten/index_ops.py: index_add/copy/fill/reduce, take, put,
searchsorted, bucketize, histc, bincount, unique, unique_consecutive.

The NumPy references restate PyTorch's rules: the index ops loop over the 1-D index and
write (add, combine) ``source``'s row i at row ``index[i]`` along ``dim``, accumulating
in float64/int64; ``index_fill`` and ``take``/``put`` wrap negative indices;
``searchsorted`` is NumPy's per row of the boundaries; ``histc`` is ``np.histogram``
over [min, max] (the data's range when both are 0, widened by 1 when it is one value);
``bincount`` is ``np.bincount``; ``unique`` is ``np.unique`` (NaNs kept apart).
Samples with plain writes (index_copy, put without accumulate) use distinct indices:
duplicates are unspecified in PyTorch.
"""
from __future__ import annotations

import numpy as np

import fnx

from ...core import dtype as D
from ...ir.aten import index_ops as X
from ..database import FLOATS, INTS, ErrorInput, OpInfo, SampleInput, register
from ..database import make_tensor as mk
from ..database import make_transposed as _t
from .indexing import _scatter_reduce_ref

NUMERIC = FLOATS + INTS
DATA_DEPENDENT = {
    "meta": "the output size depends on the data: the meta function raises",
    "decomp_core": "data-dependent output size: an eager NumPy kernel, no decomposition",
    "decomp_prims": "data-dependent output size: an eager NumPy kernel, no decomposition",
    "lowering": "data-dependent output size: cannot be traced",
}
TOLS = {D.float16: (2e-3, 2e-3), D.bfloat16: (1.6e-2, 2e-2)}


def ix(values, device, dtype=D.int64):
    return fnx.tensor(values, dtype=dtype, device=device)


def _perm(n, k, device, seed=0, dtype=D.int64):
    """``k`` distinct positions below ``n``."""
    return ix(np.random.default_rng(seed + n).permutation(n)[:k].tolist(), device, dtype)


def _wide(a):
    return a.astype(np.float64 if a.dtype.kind in "fV" else np.int64)


# --------------------------------------------------------------------------- references

def _rows(a, dim):
    """``a`` as >= 1-D with ``dim`` moved first (a view for writing rows)."""
    a1 = a.reshape(1) if a.ndim == 0 else a
    return np.moveaxis(a1, dim % a1.ndim, 0)


def _index_add_ref(a, dim, index, source, *, alpha=1):
    out = _wide(a)
    rows, src = _rows(out, dim), _rows(_wide(source), dim)
    for i, k in enumerate(index.reshape(-1)):
        rows[k] += alpha * src[i]
    return out.astype(a.dtype)


def _index_copy_ref(a, dim, index, source):
    out = a.copy()
    rows, src = _rows(out, dim), _rows(source, dim)
    for i, k in enumerate(index.reshape(-1)):
        rows[k] = src[i]
    return out


def _index_fill_ref(a, dim, index, value):
    out = a.copy()
    rows = _rows(out, dim)
    for k in index.reshape(-1):
        rows[k] = np.asarray(value).astype(a.dtype)
    return out


def _index_reduce_ref(a, dim, index, source, reduce, *, include_self=True):
    a1 = a.reshape(1) if a.ndim == 0 else a
    s1 = source.reshape(1) if source.ndim == 0 else source
    d = dim % a1.ndim
    view = [1] * s1.ndim
    view[d] = -1
    full = np.broadcast_to(index.reshape(view), s1.shape).copy()
    out = _scatter_reduce_ref(a1, d, full, s1, reduce, include_self=include_self)
    return out.reshape(a.shape)


def _take_ref(a, index):
    return a.reshape(-1)[index]


def _put_ref(a, index, source, accumulate=False):
    flat = _wide(a).reshape(-1)
    idx, src = index.reshape(-1), _wide(source).reshape(-1)
    if accumulate:
        np.add.at(flat, idx, src)
    else:
        flat[idx] = src
    return flat.reshape(a.shape).astype(a.dtype)


def _searchsorted_ref(boundaries, values, *, out_int32=False, right=False, side=None,
                      sorter=None):
    side = "right" if right or side == "right" else "left"
    dt = np.int32 if out_int32 else np.int64
    if sorter is not None:
        boundaries = np.take_along_axis(boundaries, sorter, -1)
    v = np.asarray(values)
    if boundaries.ndim == 1:
        return np.asarray(np.searchsorted(boundaries, v, side=side)).astype(dt)
    b2 = boundaries.reshape(-1, boundaries.shape[-1])
    v2 = v.reshape(b2.shape[0], -1)
    out = np.stack([np.searchsorted(b2[i], v2[i], side=side) for i in range(b2.shape[0])])
    return out.reshape(v.shape).astype(dt)


def _bucketize_ref(a, boundaries, *, out_int32=False, right=False):
    return _searchsorted_ref(boundaries, a, out_int32=out_int32, right=right)


def _histc_ref(a, bins=100, min=0, max=0):
    x = a.astype(np.float64).reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    counts, _ = np.histogram(x, bins=bins, range=(lo, hi))
    return counts.astype(a.dtype)


def _bincount_ref(a, weights=None, minlength=0):
    if weights is None:
        return np.bincount(a.astype(np.int64), minlength=minlength).astype(np.int64)
    dt = np.float32 if weights.dtype == np.float32 else np.float64
    return np.bincount(a.astype(np.int64), weights.astype(np.float64),
                       minlength=minlength).astype(dt)


_EMPTY = np.zeros(0, np.int64)


def _unique2_ref(a, sorted=True, return_inverse=False, return_counts=False):
    values, inverse, counts = np.unique(a.reshape(-1), return_inverse=True,
                                        return_counts=True, equal_nan=False)
    return (values, inverse.reshape(a.shape) if return_inverse else _EMPTY,
            counts if return_counts else _EMPTY)


def _unique_dim_ref(a, dim, sorted=True, return_inverse=False, return_counts=False):
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True,
                                        axis=dim % a.ndim)
    return (values, inverse.reshape(-1) if return_inverse else _EMPTY,
            counts if return_counts else _EMPTY)


def _unique_consecutive_ref(a, return_inverse=False, return_counts=False, dim=None):
    x = a.reshape(-1) if dim is None else np.moveaxis(a, dim % a.ndim, 0)
    keep, inverse, counts = [], [], []
    for i in range(x.shape[0]):
        if i == 0 or not np.array_equal(x[i], x[i - 1]):
            keep.append(i)
            counts.append(0)
        counts[-1] += 1
        inverse.append(len(keep) - 1)
    values = x[keep]
    if dim is not None:
        values = np.moveaxis(values, 0, dim % a.ndim)
    inv = np.array(inverse, np.int64)
    if dim is None:
        inv = inv.reshape(a.shape)
    return (values, inv if return_inverse else _EMPTY,
            np.array(counts, np.int64) if return_counts else _EMPTY)


# --------------------------------------------------------------------------- samples

def _alpha(dtype):
    return 2 if not dtype.is_floating_point else 0.5


def _index_add_samples(info, device, dtype):
    m = mk((4, 5), dtype, device)
    yield SampleInput(m, 0, ix([0, 2, 0], device), mk((3, 5), dtype, device))
    yield SampleInput(m, 1, ix([4, 4, 1], device, D.int32), mk((4, 3), dtype, device),
                      alpha=_alpha(dtype))
    yield SampleInput(_t((3, 4), dtype, device), -1, ix([3], device), mk((3, 1), dtype, device))
    yield SampleInput(mk((), dtype, device), 0, ix([0], device), mk((), dtype, device))
    yield SampleInput(m, 0, ix([], device), mk((0, 5), dtype, device))


def _index_copy_samples(info, device, dtype):
    m = mk((4, 5), dtype, device)
    yield SampleInput(m, 0, _perm(4, 3, device), mk((3, 5), dtype, device))
    yield SampleInput(_t((3, 4), dtype, device), -1, _perm(4, 2, device), mk((3, 2), dtype, device))
    yield SampleInput(mk((), dtype, device), 0, ix(0, device), mk((), dtype, device))


def _fill_value(dtype):
    if dtype is D.bool:
        return True
    return -1.5 if dtype.is_floating_point else 3


def _index_fill_samples(info, device, dtype):
    m = mk((4, 5), dtype, device)
    yield SampleInput(m, 1, ix([0, -1, 0], device), _fill_value(dtype))
    yield SampleInput(_t((3, 4), dtype, device), 0, ix(2, device), _fill_value(dtype))
    yield SampleInput(mk((), dtype, device), 0, ix([0], device), _fill_value(dtype))


def _index_fill_tensor_samples(info, device, dtype):
    m = mk((4, 5), dtype, device)
    yield SampleInput(m, 0, ix([1, -2], device), mk((), dtype, device))


def _index_reduce_samples(info, device, dtype):
    for reduce in ("prod", "mean", "amax", "amin"):
        small = dict(low=-2, high=3) if reduce == "prod" else {}
        for include_self in (True, False):
            yield SampleInput(mk((4, 3), dtype, device, **small), 0, ix([0, 3, 0, 0], device),
                              mk((4, 3), dtype, device, **small), reduce,
                              include_self=include_self)
        yield SampleInput(_t((3, 4), dtype, device, **small), -1, ix([1, 1], device, D.int32),
                          mk((3, 2), dtype, device, **small), reduce)


def _take_samples(info, device, dtype):
    yield SampleInput(mk((3, 4), dtype, device), ix([[0, -1], [11, 5]], device))
    yield SampleInput(_t((3, 4), dtype, device), ix([2, 7, -12], device))
    yield SampleInput(mk((), dtype, device), ix([0, -1], device))
    yield SampleInput(mk((3,), dtype, device), ix([], device))


def _put_samples(info, device, dtype):
    m = mk((3, 4), dtype, device)
    yield SampleInput(m, _perm(12, 5, device), mk((5,), dtype, device))
    yield SampleInput(m, ix([[0, -1], [11, 0]], device), mk((2, 2), dtype, device), True)
    yield SampleInput(mk((), dtype, device), ix([-1], device), mk((1,), dtype, device))


def _sorted(shape, dtype, device):
    a = mk(shape, dtype, device)
    return fnx.sort(a, dim=-1)[0]


def _searchsorted_samples(info, device, dtype):
    b = _sorted((6,), dtype, device)
    yield SampleInput(b, mk((3, 4), dtype, device))
    yield SampleInput(b, mk((5,), dtype, device), right=True)
    yield SampleInput(b, b, side="right", out_int32=True)
    yield SampleInput(b, b)
    yield SampleInput(_sorted((2, 5), dtype, device), mk((2, 3), dtype, device))
    u = mk((5,), dtype, device)
    yield SampleInput(u, mk((4,), dtype, device), sorter=fnx.argsort(u, stable=True))


def _bucketize_samples(info, device, dtype):
    b = _sorted((5,), dtype, device)
    yield SampleInput(mk((3, 4), dtype, device), b)
    yield SampleInput(b, b, right=True, out_int32=True)


def _histc_samples(info, device, dtype):
    yield SampleInput(mk((20,), dtype, device), 7, -3, 3)
    yield SampleInput(mk((4, 5), dtype, device), 5)
    yield SampleInput(fnx.ones(3, dtype=dtype, device=device), 3)
    yield SampleInput(mk((0,), dtype, device), 4, 0, 1)


def _bincount_samples(info, device, dtype):
    yield SampleInput(mk((20,), dtype, device, low=0, high=7))
    yield SampleInput(mk((6,), dtype, device, low=0, high=4), mk((6,), D.float32, device))
    yield SampleInput(mk((6,), dtype, device, low=0, high=4), mk((6,), D.float64, device), 9)
    yield SampleInput(mk((0,), dtype, device), None, 3)


def _unique2_samples(info, device, dtype):
    yield SampleInput(mk((4, 5), dtype, device, low=0, high=4), True, True, True)
    yield SampleInput(mk((7,), dtype, device, low=0, high=3))
    yield SampleInput(mk((0,), dtype, device), True, True, True)


def _unique_dim_samples(info, device, dtype):
    x = fnx.tensor([[1, 0, 1], [0, 1, 0], [1, 0, 1], [0, 0, 0]], device=device).to(dtype)
    yield SampleInput(x, 0, True, True, True)
    yield SampleInput(x, 1, True, True, False)


def _unique_consecutive_samples(info, device, dtype):
    yield SampleInput(mk((12,), dtype, device, low=0, high=2), True, True)
    yield SampleInput(mk((3, 4), dtype, device, low=0, high=2), True, True)
    x = fnx.tensor([[1, 1, 0, 0], [1, 1, 0, 1]], device=device).to(dtype)
    yield SampleInput(x, True, True, 1)


# --------------------------------------------------------------------------- error inputs

def _f(shape, device, dtype=D.float32):
    return mk(shape, dtype, device)


def _index_add_errors(info, device):
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, _f((1,), device), _f((1, 4), device)),
                     RuntimeError, r"index_add_\(\): Expected dtype int32/int64 for index")
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([[0]], device), _f((1, 4), device)),
                     IndexError, "Index is supposed to be a vector")
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([0], device), _f((2, 4), device)),
                     RuntimeError, r"Number of indices \(1\) should be equal to source")
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([0], device), _f((1, 3), device)),
                     RuntimeError, "source tensor shape must match self tensor shape")
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([0], device),
                                 _f((1, 4), device, D.float64)),
                     RuntimeError, "must have the same scalar type")
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([3], device), _f((1, 4), device)),
                     RuntimeError, "index 3 is out of bounds for dimension 0 with size 3",
                     meta=False)
    yield ErrorInput(SampleInput(_f((3, 4), device), 1, ix([-1], device), _f((3, 1), device)),
                     RuntimeError, "index -1 is out of bounds for dimension 1 with size 4",
                     meta=False)


def _index_copy_errors(info, device):
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([0], device, D.int32),
                                 _f((1, 4), device)),
                     RuntimeError, "Expected a long tensor for index, but got Int")
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([0], device), _f((2, 4), device)),
                     IndexError, r"Number of indices \(1\) should be equal")
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([0], device),
                                 _f((1, 4), device, D.float64)),
                     RuntimeError, "expected to have the same dtype")
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([3], device), _f((1, 4), device)),
                     IndexError, r"index_copy_\(\): index 3 is out of bounds", meta=False)


def _index_fill_errors(info, device):
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([0], device, D.int32), 1.0),
                     IndexError, "Expected dtype int64 for index")
    yield ErrorInput(SampleInput(_f((3, 4), device), 1, ix([4], device), 1.0),
                     IndexError, "index 4 is out of bounds for dimension 1 with size 4",
                     meta=False)


def _index_fill_tensor_errors(info, device):
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([0], device), _f((1,), device)),
                     RuntimeError, "only supports a 0-dimensional value tensor")


def _index_reduce_errors(info, device):
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([0], device), _f((1, 4), device),
                                 "sum"), RuntimeError, "Expected reduce to be one of prod")
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([3], device), _f((1, 4), device),
                                 "prod"), IndexError, "index out of range in self", meta=False)


def _take_errors(info, device):
    yield ErrorInput(SampleInput(_f((3, 4), device), ix([0], device, D.int32)), RuntimeError,
                     r"take\(\): Expected a long tensor for index")
    yield ErrorInput(SampleInput(_f((3, 4), device), ix([12], device)), IndexError,
                     "out of range: tried to access index 12 on a tensor of 12 elements",
                     meta=False)
    yield ErrorInput(SampleInput(_f((3, 4), device), ix([-13], device)), IndexError,
                     "tried to access index -13", meta=False)


def _put_errors(info, device):
    yield ErrorInput(SampleInput(_f((3, 4), device), ix([0, 1], device), _f((1,), device)),
                     IndexError, "Expected source and index to have the same number")
    yield ErrorInput(SampleInput(_f((3, 4), device), ix([0], device),
                                 _f((1,), device, D.float64)),
                     RuntimeError, "self and source expected to have the same dtype")
    yield ErrorInput(SampleInput(_f((3, 4), device), ix([12], device), _f((1,), device)),
                     IndexError, "tried to access index 12 on a tensor of 12", meta=False)


def _searchsorted_errors(info, device):
    yield ErrorInput(SampleInput(_f((2, 2), device), _f((2,), device)), RuntimeError,
                     "boundaries tensor should be 1 dimension or the first N-1")
    yield ErrorInput(SampleInput(_f((2,), device), _f((2,), device), side="foo"), RuntimeError,
                     "side can only be 'left' or 'right'")
    yield ErrorInput(SampleInput(_f((2,), device), _f((2,), device), right=True, side="left"),
                     RuntimeError, "side and right can't be set to opposites")
    yield ErrorInput(SampleInput(_f((2,), device), _f((2,), device), sorter=ix([0], device)),
                     RuntimeError, "boundary and sorter must have the same size")
    yield ErrorInput(SampleInput(_f((2,), device), _f((2,), device), sorter=ix([0, 5], device)),
                     RuntimeError, "sorter index out of range", meta=False)


def _bucketize_errors(info, device):
    yield ErrorInput(SampleInput(_f((2,), device), _f((1, 2), device)), RuntimeError,
                     "boundaries tensor must be 1 dimension")


def _histc_errors(info, device):
    yield ErrorInput(SampleInput(_f((3,), device, D.int64)), NotImplementedError,
                     "not implemented for 'Long'")
    yield ErrorInput(SampleInput(_f((3,), device), 0), RuntimeError, "bins must be > 0")
    yield ErrorInput(SampleInput(_f((3,), device), 3, 2, 1), RuntimeError,
                     "max must be larger than min")
    yield ErrorInput(SampleInput(_f((3,), device), 3, 0, float("inf")), RuntimeError,
                     r"range of \[0, inf\] is not finite")
    yield ErrorInput(SampleInput(fnx.tensor([1.0, float("nan")], device=device), 3),
                     RuntimeError, "is not finite", meta=False)


def _bincount_errors(info, device):
    yield ErrorInput(SampleInput(ix([[1, 2]], device)), RuntimeError,
                     "bincount only supports 1-d non-negative integral inputs")
    yield ErrorInput(SampleInput(ix([-1, 2], device)), RuntimeError,
                     "bincount only supports 1-d non-negative integral inputs", meta=False)
    yield ErrorInput(SampleInput(_f((2,), device)), NotImplementedError,
                     "not implemented for 'Float'")
    yield ErrorInput(SampleInput(ix([1, 2], device), None, -1), RuntimeError,
                     "minlength should be >= 0")
    yield ErrorInput(SampleInput(ix([1, 2], device), _f((3,), device)), RuntimeError,
                     "weights should be 1-d and have the same length as input")


def _unique_dim_errors(info, device):
    yield ErrorInput(SampleInput(_f((2, 2), device), 2), IndexError, "Dimension out of range")


def _unique_consecutive_errors(info, device):
    yield ErrorInput(SampleInput(_f((2, 2), device), False, False, 2), IndexError,
                     "Dimension out of range")


# --------------------------------------------------------------------------- entries

def _entries():
    return [
        OpInfo(X.index_add, _index_add_ref, NUMERIC + (D.bool,), _index_add_samples, tols=TOLS,
               error_inputs=_index_add_errors),
        OpInfo(X.index_copy, _index_copy_ref, NUMERIC + (D.bool,), _index_copy_samples,
               error_inputs=_index_copy_errors),
        OpInfo(X.index_fill_int_Scalar, _index_fill_ref, NUMERIC + (D.bool,),
               _index_fill_samples, error_inputs=_index_fill_errors),
        OpInfo(X.index_fill_int_Tensor, _index_fill_ref, NUMERIC + (D.bool,),
               _index_fill_tensor_samples, error_inputs=_index_fill_tensor_errors),
        OpInfo(X.index_reduce, _index_reduce_ref, NUMERIC, _index_reduce_samples, tols=TOLS,
               error_inputs=_index_reduce_errors),
        OpInfo(X.take, _take_ref, NUMERIC + (D.bool,), _take_samples, error_inputs=_take_errors),
        OpInfo(X.put, _put_ref, NUMERIC + (D.bool,), _put_samples, tols=TOLS,
               error_inputs=_put_errors),
        OpInfo(X.searchsorted_Tensor, _searchsorted_ref, NUMERIC, _searchsorted_samples,
               error_inputs=_searchsorted_errors),
        OpInfo(X.bucketize_Tensor, _bucketize_ref, NUMERIC, _bucketize_samples,
               error_inputs=_bucketize_errors),
        OpInfo(X.histc, _histc_ref, (D.float32, D.float64), _histc_samples,
               error_inputs=_histc_errors),
        OpInfo(X.bincount, _bincount_ref, INTS, _bincount_samples, skips=DATA_DEPENDENT,
               error_inputs=_bincount_errors),
        OpInfo(X.unique2, _unique2_ref, NUMERIC, _unique2_samples, skips=DATA_DEPENDENT),
        OpInfo(X.unique_dim, _unique_dim_ref, NUMERIC, _unique_dim_samples,
               skips=DATA_DEPENDENT, error_inputs=_unique_dim_errors),
        OpInfo(X.unique_consecutive, _unique_consecutive_ref, NUMERIC,
               _unique_consecutive_samples, skips=DATA_DEPENDENT,
               error_inputs=_unique_consecutive_errors),
    ]


register(*_entries())
