"""OpInfo entries of the layout prims (fnx/ir/prims/layout.py). The references place each
output element by index arithmetic (``_by_source``) where the kernels call NumPy's view
functions, so a permutation or an offset read the wrong way round shows."""
from __future__ import annotations

import numpy as np

from ....core import dtype as D
from ....ir import prims as P
from ...database import ErrorInput, OpInfo, SampleInput, make_tensor, register
from ._common import ALL, ALLC, dims_errors, is_float

__all__ = ["pad_ref"]


def _by_source(a, shape, source):
    """The array of ``shape`` whose element at position p is ``a[source(p)]``."""
    out = np.empty(tuple(shape), a.dtype)
    for p in np.ndindex(*out.shape):
        out[p] = a[source(p)]
    return out


def _transpose_ref(a, perm):
    # output dim j is operand dim perm[j]
    def source(p):
        q = [0] * a.ndim
        for j, d in enumerate(perm):
            q[d] = p[j]
        return tuple(q)
    return _by_source(a, [a.shape[d] for d in perm], source)


def _broadcast_in_dim_samples(info, device, dtype):
    def t(shape, **kw):
        return make_tensor(shape, dtype, device, **kw)
    yield SampleInput(t((3,)), [2, 3], [1])
    yield SampleInput(t((3, 1)), [3, 4], [0, 1])
    yield SampleInput(t((3,)), [3, 2, 5], [0])
    yield SampleInput(t(()), [2, 2], [])
    yield SampleInput(t((0,)), [2, 0], [1])
    yield SampleInput(t((1, 3), noncontiguous=True), [2, 1, 3], [1, 2])


def _broadcast_in_dim_ref(a, shape, dims):
    # output position p reads operand position (p[dims[i]], or 0 where operand dim i is 1)
    return _by_source(a, shape, lambda p: tuple(p[d] if n != 1 else 0
                                                for d, n in zip(dims, a.shape)))


def _broadcast_in_dim_errors(info, device):
    x = make_tensor((3,), D.float32, device)
    yield ErrorInput(SampleInput(x, [2, 4], [1]), RuntimeError,
                     "prims.broadcast_in_dim: operand dim 0 has size 3")
    yield ErrorInput(SampleInput(make_tensor((3, 3), D.float32, device), [3, 3], [1, 0]),
                     RuntimeError, "strictly increasing")
    yield ErrorInput(SampleInput(x, [2, 3], [0, 1]), RuntimeError, "one entry per operand dim")


def _reshape_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device), [2, 6])
    yield SampleInput(make_tensor((), dtype, device), [1, 1])
    yield SampleInput(make_tensor((0, 3), dtype, device), [3, 0])
    yield SampleInput(make_tensor((4, 3), dtype, device).t(), [12])


def _reshape_errors(info, device):
    x = make_tensor((3, 4), D.float32, device)
    yield ErrorInput(SampleInput(x, [5, 2]), RuntimeError, "prims.reshape: cannot reshape")
    yield ErrorInput(SampleInput(x, [-1, 4]), RuntimeError, "negative size")


def _transpose_samples(info, device, dtype):
    yield SampleInput(make_tensor((2, 3, 4), dtype, device), [2, 0, 1])
    yield SampleInput(make_tensor((), dtype, device), [])
    yield SampleInput(make_tensor((0, 3), dtype, device), [1, 0])
    yield SampleInput(make_tensor((3, 4), dtype, device, noncontiguous=True), [1, 0])


def _squeeze_samples(info, device, dtype):
    yield SampleInput(make_tensor((1, 3, 1), dtype, device), [0, 2])
    yield SampleInput(make_tensor((1,), dtype, device), [0])
    yield SampleInput(make_tensor((3,), dtype, device), [])
    yield SampleInput(make_tensor((1, 0), dtype, device), [0])


def _slice_samples(info, device, dtype):
    yield SampleInput(make_tensor((5, 6), dtype, device), [1, 0], [4, 6])
    yield SampleInput(make_tensor((5, 6), dtype, device), [0, 1], [5, 6], [2, 3])
    yield SampleInput(make_tensor((5, 6), dtype, device), [2, 2], [2, 5])
    yield SampleInput(make_tensor((), dtype, device), [], [])
    yield SampleInput(make_tensor((6, 5), dtype, device).t(), [1, 1], [5, 5], [3, 1])


def _slice_ref(a, start, limit, strides=None):
    strides = strides or [1] * a.ndim
    shape = [len(range(s, lim, st)) for s, lim, st in zip(start, limit, strides)]
    return _by_source(a, shape, lambda p: tuple(s + i * st
                                                for s, i, st in zip(start, p, strides)))


def _slice_errors(info, device):
    x = make_tensor((5, 6), D.float32, device)
    yield ErrorInput(SampleInput(x, [0, 0], [6, 6]), RuntimeError, "prims.slice: dim 0")
    yield ErrorInput(SampleInput(x, [0, 0], [5, 6], [1, 0]), RuntimeError, "stride 0")


def _pad_value(dtype):
    if dtype is D.bool:
        return True
    return 0.5 if is_float(dtype) else (3 if dtype is D.uint8 else -1)


def _pad_samples(info, device, dtype):
    v = _pad_value(dtype)
    yield SampleInput(make_tensor((3, 4), dtype, device), v, [1, 0], [0, 2], [0, 1])
    yield SampleInput(make_tensor((3, 4), dtype, device), v, [-1, 2], [1, -2], [1, 0])
    yield SampleInput(make_tensor((0, 2), dtype, device), v, [1, 1], [1, 0], [2, 2])
    yield SampleInput(make_tensor((), dtype, device), v, [], [], [])
    yield SampleInput(make_tensor((4, 3), dtype, device).t(), v, [0, 1], [1, 0], [1, 1])


def pad_ref(a, value, low, high, interior):
    out = a
    for d, (lo, hi, it) in enumerate(zip(low, high, interior)):
        n = out.shape[d]
        size = n + max(n - 1, 0) * it
        shape = list(out.shape)
        shape[d] = size
        dil = np.full(shape, value, a.dtype)
        idx = [slice(None)] * out.ndim
        idx[d] = slice(0, size, it + 1)
        dil[tuple(idx)] = out
        # positive padding adds values, negative padding crops
        before = [(0, 0)] * out.ndim
        before[d] = (max(lo, 0), max(hi, 0))
        dil = np.pad(dil, before, constant_values=value)
        idx = [slice(None)] * out.ndim
        idx[d] = slice(max(-lo, 0), dil.shape[d] - max(-hi, 0))
        out = dil[tuple(idx)]
    return np.array(out, copy=True)


def _pad_errors(info, device):
    x = make_tensor((3,), D.int64, device)
    yield ErrorInput(SampleInput(x, 0.5, [0], [0], [0]), RuntimeError,
                     "prims.pad: value 0.5 is not representable")
    yield ErrorInput(SampleInput(x, 0, [0], [0], [-1]), RuntimeError, "interior padding")


def _concatenate_samples(info, device, dtype):
    def t(shape, **kw):
        return make_tensor(shape, dtype, device, **kw)
    yield SampleInput([t((2, 3)), t((1, 3))], 0)
    yield SampleInput([t((2, 0)), t((2, 3)), t((3, 2)).t()], 1)
    yield SampleInput([t((4,))], 0)


def _concatenate_ref(tensors, dim):
    shape = list(tensors[0].shape)
    shape[dim] = sum(t.shape[dim] for t in tensors)
    out = np.empty(shape, tensors[0].dtype)
    start = 0
    for t in tensors:
        out[(slice(None),) * dim + (slice(start, start + t.shape[dim]),)] = t
        start += t.shape[dim]
    return out


def _concatenate_errors(info, device):
    a = make_tensor((2, 3), D.float32, device)
    yield ErrorInput(SampleInput([a, make_tensor((2, 3), D.float64, device)], 0), RuntimeError,
                     "prims.concatenate: dtype mismatch")
    yield ErrorInput(SampleInput([a, make_tensor((3,), D.float32, device)], 0), RuntimeError,
                     "prims.concatenate: tensors\\[1\\] has rank 1")


def _rev_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device), [0, 1])
    yield SampleInput(make_tensor((3, 4), dtype, device, noncontiguous=True), [1])
    yield SampleInput(make_tensor((0, 2), dtype, device), [0])
    yield SampleInput(make_tensor((), dtype, device), [])


def _rev_ref(a, dims):
    return _by_source(a, a.shape, lambda p: tuple(n - 1 - i if d in dims else i
                                                  for d, (i, n) in enumerate(zip(p, a.shape))))


register(
    OpInfo(P.broadcast_in_dim, _broadcast_in_dim_ref, ALLC, _broadcast_in_dim_samples,
           error_inputs=_broadcast_in_dim_errors),
    OpInfo(P.reshape, lambda a, shape: a.reshape(shape), ALLC, _reshape_samples,
           error_inputs=_reshape_errors),
    OpInfo(P.transpose, _transpose_ref, ALLC, _transpose_samples),
    OpInfo(P.squeeze, lambda a, dims: np.squeeze(a, tuple(dims)).copy(), ALLC,
           _squeeze_samples),
    OpInfo(P.slice, _slice_ref, ALLC, _slice_samples, error_inputs=_slice_errors),
    OpInfo(P.pad, pad_ref, ALL, _pad_samples, error_inputs=_pad_errors),
    OpInfo(P.concatenate, _concatenate_ref, ALLC, _concatenate_samples,
           error_inputs=_concatenate_errors),
    OpInfo(P.rev, _rev_ref, ALLC, _rev_samples, error_inputs=dims_errors("rev")),
)
