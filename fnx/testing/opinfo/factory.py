"""OpInfo entries for factories (fnx/ir/aten/factory.py): full, full_like, empty, empty_strided,
arange, linspace, logspace, eye, zeros/ones and their ``*_like`` and ``new_*`` forms.

Every sample passes ``device=`` (so the meta check builds on meta) and, for each dtype of
the entry, ``dtype=`` that dtype; a few samples leave ``dtype`` out to check PyTorch's
inference (int fill -> int64, float -> the default float, bool -> bool, ``*_like`` ->
self's).  Sizes include 0-dim (``[]``) and empty ones.  ``empty*`` contents are undefined,
so only their dtype and shape are compared.  The references are NumPy, written from
PyTorch's documented semantics: arange's length is ``ceil((end - start) / step)`` and its
values ``start + i * step``; linspace's ends are exact.
"""
from __future__ import annotations

import math

import numpy as np

from ...core import dtype as D
from ...ops import aten
from ..database import (ALL_DTYPES, FLOATS, INTS, ErrorInput, OpInfo, SampleInput, make_tensor,
                        register)

SIZES = ([2, 3], [], [0, 4], [5])


def _self_samples(info, device, dtype):
    for shape in SIZES:
        yield SampleInput(make_tensor(shape, dtype, device))
    yield SampleInput(make_tensor((3, 4), dtype, device, noncontiguous=True))
NUMERIC = FLOATS + INTS


def _default_dtype(value):
    """The dtype PyTorch infers for a fill value (independently of fnx)."""
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        return np.dtype(np.int64)
    if isinstance(value, complex):
        return np.dtype(np.complex64)
    return np.dtype(np.float32)


def _np(dtype, default):
    return default if dtype is None else np.dtype(dtype.numpy)


def _fill_for(dtype):
    """A fill value every dtype holds exactly (and one that needs truncation for ints)."""
    if dtype is D.bool:
        return True
    if dtype.is_floating_point:
        return -2.5
    return 7 if dtype is D.uint8 else -3


# --------------------------------------------------------------------------- full

def _full_samples(info, device, dtype):
    fill = _fill_for(dtype)
    for size in SIZES:
        yield SampleInput(size, fill, dtype=dtype, device=device)
    yield SampleInput([3], 1, dtype=dtype, device=device)        # an int fill, any dtype
    if dtype is D.float32:          # inferred dtypes
        for v in (4, 2.5, False):
            yield SampleInput([2, 2], v, device=device)


def _full_ref(size, fill_value, *, dtype=None, device=None, **_):
    return np.full(size, fill_value, _np(dtype, _default_dtype(fill_value)))


def _full_errors(info, device):
    yield ErrorInput(SampleInput([2], 300, dtype=D.int8, device=device), RuntimeError,
                     "value cannot be converted to type int8_t without overflow")
    yield ErrorInput(SampleInput([2, -1], 0, device=device), RuntimeError,
                     "negative dimension -1")


def _full_like_samples(info, device, dtype):
    fill = _fill_for(dtype)
    yield SampleInput(make_tensor((2, 3), dtype, device), fill)
    yield SampleInput(make_tensor((), dtype, device), fill)
    yield SampleInput(make_tensor((0, 3), dtype, device), fill, dtype=dtype)
    yield SampleInput(make_tensor((3, 2), dtype, device, noncontiguous=True), 1)
    yield SampleInput(make_tensor((4,), D.float64, device), fill, dtype=dtype, device=device)


def _full_like_ref(a, fill_value, *, dtype=None, **_):
    return np.full(a.shape, fill_value, _np(dtype, a.dtype))


# --------------------------------------------------------------------------- zeros, ones

def _sized_samples(info, device, dtype):
    for size in SIZES:
        yield SampleInput(size, dtype=dtype, device=device)
    if dtype is D.float32:
        yield SampleInput([2], device=device)       # the default dtype


def _sized_ref(fill):
    def ref(size, *, dtype=None, **_):
        return np.full(size, fill, _np(dtype, np.dtype(np.float32)))
    return ref


def _like_samples(info, device, dtype):
    yield SampleInput(make_tensor((2, 3), dtype, device))
    yield SampleInput(make_tensor((), dtype, device))
    yield SampleInput(make_tensor((0, 2), dtype, device))
    yield SampleInput(make_tensor((3, 2), dtype, device, noncontiguous=True))
    yield SampleInput(make_tensor((4,), D.int32, device), dtype=dtype, device=device)


def _like_ref(fill):
    def ref(a, *, dtype=None, **_):
        return np.full(a.shape, fill, _np(dtype, a.dtype))
    return ref


def _new_samples(info, device, dtype):
    yield SampleInput(make_tensor((2,), dtype, device), [2, 3])
    yield SampleInput(make_tensor((), dtype, device), [])
    yield SampleInput(make_tensor((3,), D.float64, device), [0, 2], dtype=dtype,
                      device=device)


def _new_ref(fill):
    def ref(a, size, *, dtype=None, **_):
        return np.full(size, fill, _np(dtype, a.dtype))
    return ref


def _new_full_samples(info, device, dtype):
    fill = _fill_for(dtype)
    yield SampleInput(make_tensor((2,), dtype, device), [2, 3], fill)
    yield SampleInput(make_tensor((), dtype, device), [], fill)
    yield SampleInput(make_tensor((3,), D.float64, device), [0, 2], fill, dtype=dtype,
                      device=device)


def _new_full_ref(a, size, fill_value, *, dtype=None, **_):
    return np.full(size, fill_value, _np(dtype, a.dtype))


# --------------------------------------------------------------------------- empty

def _empty_strided_samples(info, device, dtype):
    yield SampleInput([2, 3], [3, 1], dtype=dtype, device=device)
    yield SampleInput([2, 3], [1, 2], dtype=dtype, device=device)
    yield SampleInput([], [], dtype=dtype, device=device)
    yield SampleInput([0, 5], [5, 1], dtype=dtype, device=device)


def _empty_strided_ref(size, stride, *, dtype=None, **_):
    return np.zeros(size, _np(dtype, np.dtype(np.float32)))


def _new_empty_strided_samples(info, device, dtype):
    yield SampleInput(make_tensor((2,), dtype, device), [2, 3], [1, 2])
    yield SampleInput(make_tensor((2,), D.float32, device), [4], [1], dtype=dtype,
                      device=device)


def _new_empty_strided_ref(a, size, stride, *, dtype=None, **_):
    return np.zeros(size, _np(dtype, a.dtype))


def _empty_errors(info, device):
    yield ErrorInput(SampleInput([2, -3], dtype=D.float32, device=device), RuntimeError,
                     "negative dimension -3")


# --------------------------------------------------------------------------- ranges

def _arange_args(dtype):
    """(start, end, step) triples whose values ``dtype`` holds exactly."""
    if dtype.is_floating_point:
        return [(0, 5, 1), (0.0, 2.5, 0.5), (3.0, -1.5, -0.75), (1, 1, 1), (-2, 4, 3)]
    if dtype is D.uint8:
        return [(0, 5, 1), (1, 10, 3), (9, 0, -2), (4, 4, 1)]
    return [(0, 5, 1), (-4, 10, 3), (9, -6, -2), (4, 4, 1)]


def _arange_ref(start, end, step=1, *, dtype=None, **_):
    n = max(0, math.ceil((end - start) / step))
    if dtype is None:
        infer = all(isinstance(v, int) for v in (start, end, step))
        dt = np.dtype(np.int64) if infer else np.dtype(np.float32)
    else:
        dt = np.dtype(dtype.numpy)
    return (start + np.arange(n, dtype=np.float64) * step).astype(dt)


def _arange_start_step_samples(info, device, dtype):
    for start, end, step in _arange_args(dtype):
        yield SampleInput(start, end, step, dtype=dtype, device=device)
    if dtype is D.float32:          # inferred: int64 for ints, else the default float
        yield SampleInput(1, 8, 2, device=device)
        yield SampleInput(0, 1, 0.25, device=device)


def _arange_start_samples(info, device, dtype):
    for start, end, _ in _arange_args(dtype)[:2]:
        yield SampleInput(start, end, dtype=dtype, device=device)


def _arange_end_samples(info, device, dtype):
    yield SampleInput(5, dtype=dtype, device=device)
    yield SampleInput(0, dtype=dtype, device=device)
    if dtype is D.float32:
        yield SampleInput(3, device=device)
        yield SampleInput(2.5, device=device)


def _arange_start_ref(start, end, **kw):
    return _arange_ref(start, end, 1, **kw)


def _arange_end_ref(end, **kw):
    return _arange_ref(0, end, 1, **kw)


def _arange_errors(info, device):
    yield ErrorInput(SampleInput(0, 5, 0, device=device), RuntimeError,
                     "step must be nonzero")
    yield ErrorInput(SampleInput(0, 5, -1, device=device), RuntimeError,
                     "upper bound and larger bound inconsistent with step sign")


def _linspace_samples(info, device, dtype):
    # integer dtypes: ends and steps that give whole numbers (truncation is exact)
    args = [(0, 10, 6), (-3, 7, 3), (5, 5, 1), (2, 4, 0), (8, -2, 6)] \
        if not dtype.is_floating_point else \
        [(0, 1, 5), (-3.5, 7.25, 8), (2.5, 2.5, 1), (1, 4, 0), (10, -2, 7)]
    if dtype is D.uint8:    # a negative float -> uint8 cast is undefined (C casts)
        args = [(0, 10, 6), (5, 5, 1), (9, 1, 5), (2, 4, 0)]
    for start, end, steps in args:
        yield SampleInput(start, end, steps, dtype=dtype, device=device)
    if dtype is D.float32:
        yield SampleInput(0, 1, 4, device=device)           # the default float dtype


def _linspace_ref(start, end, steps, *, dtype=None, **_):
    dt = _np(dtype, np.dtype(np.float32))
    if dtype in (D.float16, D.bfloat16) and steps > 1:
        # PyTorch's half linspace rounds after each operation (c10's Half arithmetic):
        # step = (end - start) / (steps - 1), then start + step * i (end - step * k for
        # the second half), each result rounded to the half type
        h = dt.type
        a, b = h(np.float32(start)), h(np.float32(end))
        step = h(h(b - a) / h(steps - 1))
        return np.array([h(a + h(step * h(i))) if i < steps // 2 else
                         h(b - h(step * h(steps - 1 - i))) for i in range(steps)], dt)
    return np.linspace(start, end, steps, dtype=np.float64).astype(dt)


def _logspace_samples(info, device, dtype):
    if dtype.is_floating_point:
        yield SampleInput(-2, 2, 5, dtype=dtype, device=device)
        yield SampleInput(0.5, 1.5, 3, 2.0, dtype=dtype, device=device)
        yield SampleInput(1, 1, 1, dtype=dtype, device=device)
    else:
        yield SampleInput(0, 3, 4, 2.0, dtype=dtype, device=device)
        yield SampleInput(0, 2, 3, dtype=dtype, device=device)
    yield SampleInput(0, 1, 0, dtype=dtype, device=device)


def _logspace_ref(start, end, steps, base=10.0, *, dtype=None, **_):
    dt = _np(dtype, np.dtype(np.float32))
    return np.power(base, np.linspace(start, end, steps, dtype=np.float64)).astype(dt)


def _space_errors(info, device):
    yield ErrorInput(SampleInput(0, 1, -1, device=device), RuntimeError,
                     "number of steps must be non-negative")


def _eye_samples(info, device, dtype):
    for n in (3, 1, 0):
        yield SampleInput(n, dtype=dtype, device=device)


def _eye_m_samples(info, device, dtype):
    for n, m in ((2, 4), (4, 2), (3, 0)):
        yield SampleInput(n, m, dtype=dtype, device=device)


def _eye_ref(n, m=None, *, dtype=None, **_):
    return np.eye(n, n if m is None else m, dtype=_np(dtype, np.dtype(np.float32)))


def _eye_errors(info, device):
    yield ErrorInput(SampleInput(-1, device=device), RuntimeError,
                     "n must be greater or equal to 0, got -1")


_EMPTY = "the contents of an uninitialized tensor are undefined: dtype and shape only"

register(
    OpInfo(aten.full.default, _full_ref, ALL_DTYPES, _full_samples,
           error_inputs=_full_errors),
    OpInfo(aten.full_like.default, _full_like_ref, ALL_DTYPES, _full_like_samples),
    OpInfo(aten.zeros.default, _sized_ref(0), ALL_DTYPES, _sized_samples),
    OpInfo(aten.ones.default, _sized_ref(1), ALL_DTYPES, _sized_samples),
    OpInfo(aten.zeros_like.default, _like_ref(0), ALL_DTYPES, _like_samples),
    OpInfo(aten.ones_like.default, _like_ref(1), ALL_DTYPES, _like_samples),
    OpInfo(aten.new_zeros.default, _new_ref(0), ALL_DTYPES, _new_samples),
    OpInfo(aten.new_ones.default, _new_ref(1), ALL_DTYPES, _new_samples),
    OpInfo(aten.new_full.default, _new_full_ref, ALL_DTYPES, _new_full_samples),
    # uninitialized memory: only dtype and shape are compared (``nondeterministic``)
    OpInfo(aten.empty.memory_format, _sized_ref(0), ALL_DTYPES, _sized_samples,
           error_inputs=_empty_errors, nondeterministic=True),
    OpInfo(aten.empty_like.default, _like_ref(0), ALL_DTYPES, _like_samples,
           nondeterministic=True),
    OpInfo(aten.new_empty.default, _new_ref(0), ALL_DTYPES, _new_samples,
           nondeterministic=True),
    OpInfo(aten.empty_strided.default, _empty_strided_ref, ALL_DTYPES,
           _empty_strided_samples, nondeterministic=True),
    OpInfo(aten.new_empty_strided.default, _new_empty_strided_ref, ALL_DTYPES,
           _new_empty_strided_samples, nondeterministic=True),
    OpInfo(aten.arange.start_step, _arange_ref, NUMERIC, _arange_start_step_samples,
           error_inputs=_arange_errors),
    OpInfo(aten.arange.start, _arange_start_ref, NUMERIC, _arange_start_samples),
    OpInfo(aten.arange.default, _arange_end_ref, NUMERIC, _arange_end_samples),
    OpInfo(aten.linspace.default, _linspace_ref, NUMERIC, _linspace_samples,
           error_inputs=_space_errors),
    OpInfo(aten.logspace.default, _logspace_ref, NUMERIC, _logspace_samples,
           error_inputs=_space_errors),
    OpInfo(aten.eye.default, _eye_ref, ALL_DTYPES, _eye_samples, error_inputs=_eye_errors),
    OpInfo(aten.eye.m, _eye_ref, ALL_DTYPES, _eye_m_samples),
    # in-place ops with no functional entry to derive from
    OpInfo(aten.zero_.default, lambda a: np.zeros_like(a), ALL_DTYPES, _self_samples,
           variant="inplace", variants=False),
    # detach_ changes autograd state only: no data write, no version bump (as PyTorch)
    OpInfo(aten.detach_.default, lambda a: a.copy(), ALL_DTYPES, _self_samples,
           variants=False),
)
