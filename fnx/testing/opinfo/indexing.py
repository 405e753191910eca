"""OpInfo entries for the indexing ops (fnx/ir/aten/indexing.py).

The NumPy references restate PyTorch's rules on their own: advanced indexing is NumPy's
(index tensors broadcast together, negative indices wrap, a bool mask stands for its
nonzero coordinates, the indexed dims stay in place when adjacent and go first
otherwise); ``index_put`` with ``accumulate`` adds every duplicate, and with one bool
mask and a one-element value it is a masked fill that casts the value; gather/scatter
index along one dim with an index no larger than ``self`` elsewhere (and than ``src``);
scatter_reduce's ``mean`` divides by the number of contributions (``self`` counting as
one when included) and rounds integers down; amax/amin propagate NaN.  References for
the scatters loop over the index in row-major order and accumulate in float64.

Samples: several index tensors, None entries, broadcasting, negative indices, int32 and
uint8 index dtypes, bool masks, 0-dim and empty tensors and indices, non-contiguous
inputs.  Scatter samples without ``reduce`` use distinct targets (duplicates are
unspecified in PyTorch).  Ops whose output shape depends on the data (nonzero, argwhere,
masked_select, indexing with a bool mask) have no meta check.
"""
from __future__ import annotations

import numpy as np

import fnx

from ...core import dtype as D
from ...ir.aten import indexing as I
from ..database import ALL_DTYPES, ErrorInput, Known, OpInfo, SampleInput, register
from ..database import make_tensor as mk
from ..database import make_transposed as _t

DATA_DEPENDENT = {"meta": "the output shape depends on the data: the meta function raises"}
# scatter_reduce's sums: the reference rounds a float64 sum, the decomposition a float32 one
TOLS = {D.float16: (2e-3, 2e-3), D.bfloat16: (1.6e-2, 2e-2)}


def ix(values, device, dtype=D.int64):
    return fnx.tensor(values, dtype=dtype, device=device)


def rand_index(shape, high, device, low=0):
    return mk(shape, D.int64, device, low=low, high=high)


def _distinct(shape, size, device, dim):
    """An index whose entries along ``dim`` are distinct positions < ``size``."""
    rng = np.random.default_rng(sum(shape) + size)
    moved = list(shape)
    moved.append(moved.pop(dim))
    rows = [rng.permutation(size)[:moved[-1]] for _ in range(int(np.prod(moved[:-1])))]
    a = np.array(rows, np.int64).reshape(moved)
    return fnx.tensor(np.moveaxis(a, -1, dim).copy(), device=device)


def _value(dtype, i=0):
    if dtype is D.bool:
        return (True, False)[i % 2]
    return (-2.5, 4.0)[i % 2] if dtype.is_floating_point else (3, 7)[i % 2]


# --------------------------------------------------------------------------- references

def _np_index(indices):
    """PyTorch's index list as a NumPy index tuple (uint8 masks are masks)."""
    out = []
    for x in indices:
        if x is None:
            out.append(slice(None))
        elif x.dtype == np.uint8:
            out.append(x.astype(bool))
        else:
            out.append(x)
    return tuple(out)


def _index_ref(a, indices):
    return np.array(a[_np_index(indices)])


def _index_put_ref(a, indices, values, accumulate=False):
    out = a.copy()
    idx = _np_index(indices)
    masks = [x for x in indices if x is not None]
    if not accumulate and values.size == 1 and len(masks) == 1 and \
            masks[0].dtype in (np.bool_, np.uint8):
        out[idx] = values.reshape(()).astype(a.dtype)      # a masked fill: value cast
        return out
    if not accumulate:
        out[idx] = values
        return out
    target = out[idx]
    v = np.broadcast_to(values, target.shape)
    if a.dtype == np.bool_:
        np.logical_or.at(out, idx, v)
        return out
    wide = np.float64 if a.dtype.kind in "fV" else np.int64
    acc = out.astype(wide)
    np.add.at(acc, idx, v.astype(wide))
    return acc.astype(a.dtype)


def _index_select_ref(a, dim, index):
    flat = index.reshape(-1)
    if a.ndim == 0:
        return a.reshape(1)[flat].reshape(())
    return np.take(a, flat, axis=dim % a.ndim)


def _gather_ref(a, dim, index):
    if a.ndim == 0:
        return a.reshape(1)[index.reshape(-1)].reshape(index.shape)
    out = np.empty(index.shape, a.dtype)
    d = dim % a.ndim
    for pos in np.ndindex(*index.shape):
        src = list(pos)
        src[d] = index[pos]
        out[pos] = a[tuple(src)]
    return out


def _scatter_loop(a, dim, index, src, combine):
    """``out[... index[p] ...] = combine(out[...], src[p])`` over the index, row-major."""
    out = a.reshape(1).copy() if a.ndim == 0 else a.copy()
    index = index.reshape(1) if index.ndim == 0 else index
    d = dim % out.ndim
    for pos in np.ndindex(*index.shape):
        dst = list(pos)
        dst[d] = index[pos]
        dst = tuple(dst)
        value = src if np.ndim(src) == 0 else (src.reshape(1)[0] if src.ndim == 0
                                               else src[pos])
        out[dst] = combine(out[dst], value)
    return out.reshape(a.shape)


def _scatter_src_ref(a, dim, index, src):
    return _scatter_loop(a, dim, index, src, lambda old, new: new)


def _scatter_value_ref(a, dim, index, value):
    return _scatter_loop(a, dim, index, np.asarray(value).astype(a.dtype),
                         lambda old, new: new)


def _scatter_add_ref(a, dim, index, src):
    return _scatter_reduce_ref(a, dim, index, src, "sum")


def _nan_max(x, y):
    return x if np.isnan(x) else (y if np.isnan(y) else max(x, y))


def _nan_min(x, y):
    return x if np.isnan(x) else (y if np.isnan(y) else min(x, y))


def _scatter_reduce_ref(a, dim, index, src, reduce, *, include_self=True):
    is_float = a.dtype.kind in "fV"
    wide = np.float64 if is_float else (np.bool_ if a.dtype == np.bool_ else np.int64)
    x, s = a.astype(wide), src.astype(wide)
    x1 = x.reshape(1) if x.ndim == 0 else x
    i1 = index.reshape(1) if index.ndim == 0 else index
    s1 = s.reshape(1) if s.ndim == 0 else s
    d = dim % x1.ndim
    targets = {}
    for pos in np.ndindex(*i1.shape):
        dst = list(pos)
        dst[d] = i1[pos]
        targets.setdefault(tuple(dst), []).append(s1[pos])
    out = x1.copy()
    for dst, vals in targets.items():
        vals = ([x1[dst]] if include_self else []) + vals
        if reduce == "sum":
            r = np.any(vals) if wide is np.bool_ else sum(vals)
        elif reduce == "prod":
            r = np.all(vals) if wide is np.bool_ else np.prod(vals)
        elif reduce == "amax":
            r = vals[0]
            for v in vals[1:]:
                r = _nan_max(r, v) if is_float else max(r, v)
        elif reduce == "amin":
            r = vals[0]
            for v in vals[1:]:
                r = _nan_min(r, v) if is_float else min(r, v)
        else:           # mean: integers round down
            r = sum(vals) / len(vals) if is_float else sum(vals) // len(vals)
        out[dst] = r
    return out.reshape(a.shape).astype(a.dtype)


def _masked_select_ref(a, mask):
    shape = np.broadcast_shapes(a.shape, mask.shape)
    return np.broadcast_to(a, shape)[np.broadcast_to(mask, shape)].copy()


def _masked_scatter_ref(a, mask, source):
    shape = np.broadcast_shapes(a.shape, mask.shape)
    out = np.broadcast_to(a, shape).copy()
    m = np.broadcast_to(mask, shape)
    out[m] = source.reshape(-1)[:int(m.sum())]
    return out


def _nonzero_ref(a):
    nz = a.astype(np.float32) != 0 if a.dtype.kind == "V" else a != 0
    return np.argwhere(nz).astype(np.int64)


def _take_along_dim_ref(a, indices, dim=None):
    if dim is None:
        return a.reshape(-1)[indices.reshape(-1)]
    d = dim % a.ndim
    # non-indexed dims broadcast between a and indices
    sa, si = list(a.shape), list(indices.shape)
    sa[d] = si[d] = 1
    b = np.broadcast_shapes(tuple(sa), tuple(si))
    ta, ti = list(b), list(b)
    ta[d], ti[d] = a.shape[d], indices.shape[d]
    return np.take_along_axis(np.broadcast_to(a, ta), np.broadcast_to(indices, ti), d)


# --------------------------------------------------------------------------- samples

def _index_samples(info, device, dtype):
    x = mk((3, 4, 5), dtype, device)
    yield SampleInput(x, [ix([0, -1, 2, 0], device)])
    yield SampleInput(x, [None, ix([[0], [3]], device), ix([1, -2, 4], device)])
    yield SampleInput(x, [ix([0, 2], device), None, ix([1, -2], device)])   # non-adjacent
    yield SampleInput(_t((3, 4, 5), dtype, device), [ix([[0, 2]], device),
                                                     ix([[1], [3]], device), ix([4], device)])
    yield SampleInput(x, [None, None, ix(2, device)])
    yield SampleInput(x, [ix([], device)])
    yield SampleInput(x, [ix([1, 2], device, D.int32), None])
    yield SampleInput(mk((0, 5), dtype, device), [ix([], device), ix([], device)])
    yield SampleInput(mk((4,), dtype, device), [ix(-4, device)])


def _index_mask_samples(info, device, dtype):
    x = mk((3, 4, 5), dtype, device)
    yield SampleInput(x, [ix([True, False, True], device, D.bool)])
    yield SampleInput(x, [None, mk((4,), D.bool, device)])
    yield SampleInput(_t((3, 4, 5), dtype, device), [mk((3, 4), D.bool, device)])
    yield SampleInput(x, [ix([2], device), None, mk((5,), D.bool, device)])
    yield SampleInput(mk((4, 5), dtype, device), [ix([1, 0, 1, 1], device, D.uint8)])
    yield SampleInput(mk((0, 3), dtype, device), [mk((0,), D.bool, device)])


def _index_put_samples(info, device, dtype):
    x = mk((3, 4, 5), dtype, device)
    yield SampleInput(x, [ix([0, 2, 0], device), ix([1, 3, 1], device)],
                      mk((3, 5), dtype, device), True)
    yield SampleInput(x, [ix([0, 2], device), ix([1, 3], device)], mk((5,), dtype, device))
    yield SampleInput(_t((3, 4, 5), dtype, device), [ix([0, 2], device), None,
                                                     ix([1, -3], device)],
                      mk((2, 4), dtype, device))
    yield SampleInput(x, [None, ix([[0], [3]], device), ix([1, -2], device)],
                      mk((3, 2, 2), dtype, device), True)
    yield SampleInput(x, [None, mk((4,), D.bool, device)], mk((), dtype, device))
    yield SampleInput(x, [None, mk((4,), D.bool, device)], mk((5,), dtype, device), True)
    yield SampleInput(mk((4, 5), dtype, device), [mk((4, 5), D.bool, device)],
                      mk((1,), D.float64, device, low=0, high=3))
    yield SampleInput(mk((4, 5), dtype, device), [None], mk((5,), dtype, device))
    yield SampleInput(mk((0, 5), dtype, device), [ix([], device)], mk((5,), dtype, device))
    yield SampleInput(mk((6,), dtype, device), [ix([1, 1, 3, 5, 1], device)],
                      mk((5,), dtype, device), True)


def _index_select_samples(info, device, dtype):
    yield SampleInput(mk((3, 4, 5), dtype, device), -1, ix([4, 0, 0], device))
    yield SampleInput(_t((3, 4), dtype, device), 1, ix([], device, D.int32))
    yield SampleInput(mk((), dtype, device), 0, ix([0], device))
    yield SampleInput(mk((4, 5), dtype, device), 0, ix(3, device))
    yield SampleInput(mk((0, 5), dtype, device), 1, ix([2, 2], device, D.int32))


def _gather_samples(info, device, dtype):
    m = mk((4, 5), dtype, device)
    yield SampleInput(m, 0, rand_index((3, 4), 4, device))
    yield SampleInput(_t((3, 4, 5), dtype, device), -1, rand_index((2, 3, 7), 5, device))
    yield SampleInput(mk((), dtype, device), 0, ix(0, device))
    yield SampleInput(m, 1, rand_index((4, 0), 5, device))
    yield SampleInput(mk((5,), dtype, device), 0, ix([4, -0, 4], device))
    yield SampleInput(m, 1, ix([[0, 4], [2, 2]], device, D.int32))     # int32: as PyTorch


def _scatter_src_samples(info, device, dtype):
    m = mk((4, 5), dtype, device)
    yield SampleInput(m, 1, _distinct((3, 2), 5, device, 1), mk((4, 6), dtype, device))
    yield SampleInput(m, 0, _distinct((4, 5), 4, device, 0), mk((4, 5), dtype, device))
    yield SampleInput(mk((), dtype, device), 0, ix(0, device), mk((), dtype, device))
    yield SampleInput(_t((3, 4), dtype, device), -1, _distinct((2, 2), 4, device, 1),
                      mk((2, 2), dtype, device))
    yield SampleInput(m, 0, rand_index((0, 5), 4, device), mk((1, 5), dtype, device))


def _scatter_value_samples(info, device, dtype):
    m = mk((4, 5), dtype, device)
    yield SampleInput(m, 1, rand_index((3, 2), 5, device), _value(dtype))
    yield SampleInput(_t((3, 4), dtype, device), -1, rand_index((2, 2), 4, device),
                      _value(dtype, 1))
    yield SampleInput(mk((), dtype, device), 0, ix(0, device), _value(dtype))


def _scatter_add_samples(info, device, dtype):
    m = mk((4, 5), dtype, device)
    yield SampleInput(m, 0, rand_index((3, 5), 4, device), mk((4, 6), dtype, device))
    yield SampleInput(m, -1, rand_index((4, 7), 5, device), mk((4, 7), dtype, device))
    yield SampleInput(m, 1, ix([[0, 4, 0]], device, D.int32), mk((1, 3), dtype, device))
    yield SampleInput(mk((), dtype, device), 0, ix([0, 0], device), mk((2,), dtype, device))
    yield SampleInput(m, 0, rand_index((0, 5), 4, device), mk((1, 5), dtype, device))


def _scatter_reduce_samples(info, device, dtype):
    m = mk((4, 5), dtype, device)
    reduces = ("sum", "prod", "mean", "amax", "amin")
    if dtype is D.bool:
        reduces = ("sum", "prod", "amax", "amin")
    for i, reduce in enumerate(reduces):
        for include_self in (True, False):
            small = dict(low=-2, high=3) if reduce == "prod" and dtype is not D.bool else {}
            base = mk((4, 5), dtype, device, **small) if small else m
            yield SampleInput(base, 0, rand_index((5, 3), 4, device),
                              mk((5, 3), dtype, device, **small), reduce,
                              include_self=include_self)
            if i % 2 == int(include_self):
                yield SampleInput(_t((3, 4), dtype, device), -1,
                                  ix([[0, 0, 3], [1, 1, 1]], device),
                                  mk((2, 4), dtype, device, **small), reduce,
                                  include_self=include_self)
    if dtype.is_floating_point:
        nan = fnx.tensor([np.nan, 5.0, -1.0, 7.0], dtype=dtype, device=device)
        base = fnx.tensor([0.0, 1.0, 2.0], dtype=dtype, device=device)
        for reduce in ("amax", "amin"):
            yield SampleInput(base, 0, ix([0, 0, 1, 2], device), nan, reduce)
    yield SampleInput(mk((), dtype, device), 0, ix(0, device), mk((), dtype, device), "sum")


def _masked_select_samples(info, device, dtype):
    yield SampleInput(mk((3, 4, 5), dtype, device), mk((4, 1), D.bool, device))
    yield SampleInput(mk((), dtype, device), mk((2, 2), D.bool, device))
    yield SampleInput(_t((3, 4), dtype, device), mk((3, 4), D.bool, device))
    yield SampleInput(mk((0, 3), dtype, device), mk((3,), D.bool, device))


def _masked_scatter_samples(info, device, dtype):
    yield SampleInput(mk((3, 4, 5), dtype, device), mk((4, 1), D.bool, device),
                      mk((60,), dtype, device))
    yield SampleInput(mk((), dtype, device), mk((2, 3), D.bool, device),
                      mk((2, 4), dtype, device))
    yield SampleInput(_t((3, 4), dtype, device), mk((3, 4), D.bool, device),
                      _t((4, 3), dtype, device))
    yield SampleInput(mk((3,), dtype, device), fnx.zeros(3, dtype=D.bool, device=device),
                      mk((0,), dtype, device))


def _nonzero_samples(info, device, dtype):
    yield SampleInput(mk((3, 4), dtype, device, low=0, high=2))
    yield SampleInput(mk((), dtype, device))
    yield SampleInput(mk((0, 3), dtype, device))
    yield SampleInput(_t((2, 3, 4), dtype, device))


def _take_along_dim_samples(info, device, dtype):
    x = mk((3, 4, 5), dtype, device)
    yield SampleInput(x, rand_index((1, 4, 2), 5, device), -1)
    yield SampleInput(x, rand_index((7,), 60, device))
    yield SampleInput(_t((3, 4), dtype, device), rand_index((2, 1), 3, device), 0)


# --------------------------------------------------------------------------- error inputs

def _f(shape, device, dtype=D.float32):
    return mk(shape, dtype, device)


def _index_errors(info, device):
    yield ErrorInput(SampleInput(_f((3, 4), device), [_f((1,), device)]), IndexError,
                     "tensors used as indices must be long, int, byte or bool tensors")
    yield ErrorInput(SampleInput(_f((3, 4), device), [None, None, ix([0], device)]),
                     IndexError, "too many indices")
    yield ErrorInput(SampleInput(_f((3, 4), device), [ix([0, 1], device),
                                                      ix([0, 1, 2], device)]),
                     IndexError, "could not be broadcast")
    yield ErrorInput(SampleInput(_f((3, 4), device), [ix([True, False], device, D.bool)]),
                     IndexError, "shape of the mask")
    # bounds are data: eager only
    yield ErrorInput(SampleInput(_f((3, 4), device), [None, ix([4], device)]), IndexError,
                     "out of bounds", meta=False)


def _index_put_errors(info, device):
    yield ErrorInput(SampleInput(_f((3, 4), device), [ix([0], device)], _f((3,), device)),
                     RuntimeError, "shape mismatch")
    yield ErrorInput(SampleInput(_f((3, 4), device), [ix([0], device)],
                                 _f((4,), device, D.float64)),
                     RuntimeError, "Index put requires the source and destination dtypes")


def _index_select_errors(info, device):
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([[0]], device)), IndexError,
                     "Index is supposed to be a vector")
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, _f((1,), device)), RuntimeError,
                     "Expected dtype int32 or int64 for index")
    yield ErrorInput(SampleInput(_f((3, 4), device), 1, ix([-1], device)), IndexError,
                     "index out of range", meta=False)


def _gather_errors(info, device):
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([0], device)), RuntimeError,
                     "same number of dimensions")
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, _f((1, 1), device)),
                     RuntimeError, "Expected dtype int32/int64 for index")
    yield ErrorInput(SampleInput(_f((3, 4), device), 2, ix([[0]], device)), IndexError,
                     "Dimension out of range")
    yield ErrorInput(SampleInput(_f((3, 4), device), 1, ix([[4]], device)), RuntimeError,
                     "out of bounds", meta=False)


def _scatter_errors(info, device):
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([[0]], device),
                                 _f((1, 1), device, D.float64)),
                     RuntimeError, "Expected self.dtype to be equal to src.dtype")
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([[0, 1, 2, 0, 1]], device),
                                 _f((1, 5), device)),
                     RuntimeError, "to be smaller than self")


def _scatter_reduce_errors(info, device):
    yield ErrorInput(SampleInput(_f((3, 4), device), 0, ix([[0]], device), _f((1, 1), device),
                                 "max"), RuntimeError, "reduce argument must be either")


def _masked_select_errors(info, device):
    yield ErrorInput(SampleInput(_f((3, 4), device), _f((3, 4), device, D.int64)),
                     RuntimeError, "expected BoolTensor for mask")


def _masked_scatter_errors(info, device):
    yield ErrorInput(SampleInput(_f((3,), device), _f((3,), device, D.bool),
                                 _f((3,), device, D.int64)),
                     RuntimeError, "expected self and source to have same dtypes")
    yield ErrorInput(SampleInput(_f((3,), device), ix([True, True, False], device, D.bool),
                                 _f((1,), device)),
                     RuntimeError, "Number of elements of source", meta=False)


# --------------------------------------------------------------------------- entries

# masked_scatter_ expands the mask to self: a mask of more dims fails with expand's message
# (as in PyTorch), not with the derived entry's "doesn't match the broadcast shape".
_MASKED_SCATTER__SHAPE = Known("errors", reason="masked_scatter_ with a mask of more dims "
                                                "than self raises expand's error (PyTorch's "
                                                "too), not the broadcast-shape message")


def _entries():
    A = ALL_DTYPES
    return [
        OpInfo(I.index_Tensor, _index_ref, A, _index_samples, error_inputs=_index_errors),
        # the same op with bool masks: data-dependent, so no meta check
        OpInfo(I.index_Tensor, _index_ref, A, _index_mask_samples, name="index.Tensor(mask)",
               skips=DATA_DEPENDENT, variants=False),
        OpInfo(I.index_put, _index_put_ref, A, _index_put_samples, tols=TOLS,
               error_inputs=_index_put_errors),
        OpInfo(I.index_select, _index_select_ref, A, _index_select_samples,
               error_inputs=_index_select_errors),
        OpInfo(I.gather, _gather_ref, A, _gather_samples, error_inputs=_gather_errors),
        OpInfo(I.scatter_src, _scatter_src_ref, A, _scatter_src_samples,
               error_inputs=_scatter_errors),
        OpInfo(I.scatter_value, _scatter_value_ref, A, _scatter_value_samples),
        OpInfo(I.scatter_add, _scatter_add_ref, A, _scatter_add_samples, tols=TOLS),
        OpInfo(I.scatter_reduce_two, _scatter_reduce_ref, A, _scatter_reduce_samples,
               tols=TOLS, error_inputs=_scatter_reduce_errors),
        OpInfo(I.masked_select, _masked_select_ref, A, _masked_select_samples,
               skips=DATA_DEPENDENT, error_inputs=_masked_select_errors),
        OpInfo(I.masked_scatter, _masked_scatter_ref, A, _masked_scatter_samples,
               error_inputs=_masked_scatter_errors,
               variant_known={"inplace": [_MASKED_SCATTER__SHAPE]}),
        OpInfo(I.nonzero, _nonzero_ref, A, _nonzero_samples, skips=DATA_DEPENDENT),
        OpInfo(I.argwhere, _nonzero_ref, A, _nonzero_samples, skips=DATA_DEPENDENT),
        OpInfo(I.take_along_dim, _take_along_dim_ref, A, _take_along_dim_samples),
    ]


register(*_entries())
