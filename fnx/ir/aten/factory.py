"""Factories: ops that make a tensor from a size, a range or another tensor's metadata.

A factory with no tensor argument (``zeros``, ``arange``, ``rand``...) cannot pick a
backend from its arguments' keys, so it gets a ``BackendSelect`` kernel: it reads
``device=`` (None means cpu) and redispatches to that device's backend key.  ``*_like``
and ``new_*`` ops take ``Tensor self`` and dispatch on its keys; their device is
self's unless ``device=`` says otherwise.

Core factories (``empty.memory_format``, ``empty_strided``, ``full``, ``full_like``,
``arange.start_step``, ``scalar_tensor``) need a kernel per backend; the others
decompose to them (and CPU also has direct kernels where they save a dispatch).
The helpers here (``size_arg``, ``dtype_arg``) hold
PyTorch's argument checks, shared by every meta function and kernel.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ...core import dtype as D
from ...ops import aten, prims
from ..backend_select import backend_select, device_arg
from ..registry import TensorMeta, decomposition, defop, nondifferentiable
from .elementwise import full as typed_full
from ..scalars import checked_convert, scalar_dtype, scalar_value
from ..strides import is_symbolic_size as _symbolic, size_index

__all__ = ["size_arg", "dtype_arg", "arange_params"]

# ---------------------------------------------------------------------------- argument checks

# c10::ScalarType numbers, for schema defaults such as ``ScalarType? dtype=4`` (Long).
SCALAR_TYPES = {0: D.uint8, 1: D.int8, 2: D.int16, 3: D.int32, 4: D.int64, 5: D.float16,
                6: D.float32, 7: D.float64, 9: D.complex64, 10: D.complex128, 11: D.bool,
                15: D.bfloat16}



def dtype_arg(name: str, dtype, default):
    """``dtype=`` of a factory: a fnx dtype, a ScalarType number, or None for ``default``."""
    if dtype is None:
        return default
    if isinstance(dtype, D.dtype):
        return dtype
    if type(dtype) is int and dtype in SCALAR_TYPES:
        return SCALAR_TYPES[dtype]
    raise TypeError(f"{name}(): argument 'dtype' must be fnx.dtype, not {type(dtype).__name__}")




def size_arg(name: str, size) -> tuple:
    """A size as a tuple of ints, with PyTorch's errors for non-ints and negative dims."""
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool) or \
            _symbolic(size):
        size = (size,)
    elif not isinstance(size, (list, tuple)):
        raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not "
                        f"{type(size).__name__}")
    out = []
    for i, s in enumerate(size):
        if isinstance(s, (bool, float, np.floating)) or not hasattr(s, "__index__"):
            raise TypeError(f"{name}(): argument 'size' must be tuple of ints, but found "
                            f"element of type {type(s).__name__} at pos {i}")
        out.append(size_index(s))
    for s in out:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {out}")
    return tuple(out)


def _fill_value(value, dtype):
    """``full``'s fill value: checked, but PyTorch 2.13 lets float16/bfloat16 round to inf."""
    return checked_convert(value, dtype, check_half=False)


def _op(name):
    packet, _, overload = name.partition(".")
    return getattr(getattr(aten, packet), overload or "default")


# ---------------------------------------------------------------------------- schemas

OPTS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
CORE = ("core", "factory")
ATEN = ("factory",)


def _sized_meta(name):
    def meta(size, *, dtype=None, layout=None, device=None, pin_memory=None,
             memory_format=None):
        return TensorMeta(size_arg(name, size), dtype_arg(name, dtype, D.get_default_dtype()))
    return meta


def _like_meta(name):
    def meta(self, *, dtype=None, layout=None, device=None, pin_memory=None,
             memory_format=None):
        return TensorMeta(tuple(self.shape), dtype_arg(name, dtype, self.dtype))
    return meta


def _new_meta(name):
    def meta(self, size, *, dtype=None, layout=None, device=None, pin_memory=None):
        return TensorMeta(size_arg(name, size), dtype_arg(name, dtype, self.dtype))
    return meta


def _full_meta(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = dtype_arg("full", dtype, None) or scalar_dtype(fill_value)
    _fill_value(fill_value, dtype)
    return TensorMeta(size_arg("full", size), dtype)


def _full_like_meta(self, fill_value, *, dtype=None, layout=None, device=None,
                    pin_memory=None, memory_format=None):
    dtype = dtype_arg("full_like", dtype, self.dtype)
    _fill_value(fill_value, dtype)
    return TensorMeta(tuple(self.shape), dtype)


def _empty_strided_meta(size, stride, *, dtype=None, layout=None, device=None,
                        pin_memory=None):
    shape = size_arg("empty_strided", size)
    stride = tuple(operator.index(s) for s in stride)
    if len(stride) != len(shape):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} strides "
                           f"for {len(shape)} dims")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {list(stride)}")
    return TensorMeta(shape, dtype_arg("empty_strided", dtype, D.get_default_dtype()))


def _full_dtype(dtype, name):
    return dtype_arg(name, dtype, D.get_default_dtype())


empty = defop(f"empty.memory_format(SymInt[] size, *, {OPTS}, "
              f"MemoryFormat? memory_format=None) -> Tensor", tags=CORE,
              meta=_sized_meta("empty"))
empty_strided = defop(f"empty_strided(SymInt[] size, SymInt[] stride, *, {OPTS}) -> Tensor",
                      tags=CORE, meta=_empty_strided_meta)
full = defop(f"full(SymInt[] size, Scalar fill_value, *, {OPTS}) -> Tensor", tags=CORE,
             meta=_full_meta)
zeros = defop(
    f"zeros(SymInt[] size, *, {OPTS}) -> Tensor", tags=ATEN, meta=_sized_meta("zeros"),
    decomposition=lambda size, *, dtype=None, layout=None, device=None, pin_memory=None:
    _op("full")(size, 0, dtype=_full_dtype(dtype, "zeros"), device=device))
ones = defop(
    f"ones(SymInt[] size, *, {OPTS}) -> Tensor", tags=ATEN, meta=_sized_meta("ones"),
    decomposition=lambda size, *, dtype=None, layout=None, device=None, pin_memory=None:
    _op("full")(size, 1, dtype=_full_dtype(dtype, "ones"), device=device))

_LIKE = f"(Tensor self, *, {OPTS}, MemoryFormat? memory_format=None) -> Tensor"
full_like = defop(f"full_like(Tensor self, Scalar fill_value, *, {OPTS}, "
                  f"MemoryFormat? memory_format=None) -> Tensor", tags=CORE,
                  meta=_full_like_meta)


def _like_decomp(fill):
    def decomp(self, *, dtype=None, layout=None, device=None, pin_memory=None,
               memory_format=None):
        dtype = dtype_arg("like", dtype, self.dtype)
        dev = self.device if device is None else device
        if fill is None:
            return _op("empty.memory_format")(list(self.shape), dtype=dtype, device=dev)
        return _op("full_like")(self, fill, dtype=dtype, device=dev)
    return decomp


empty_like = defop("empty_like" + _LIKE, tags=ATEN, meta=_like_meta("empty_like"),
                   decomposition=_like_decomp(None))
zeros_like = defop("zeros_like" + _LIKE, tags=ATEN, meta=_like_meta("zeros_like"),
                   decomposition=_like_decomp(0))
ones_like = defop("ones_like" + _LIKE, tags=ATEN, meta=_like_meta("ones_like"),
                  decomposition=_like_decomp(1))


def _new_decomp(kind):
    def decomp(self, size, *args, dtype=None, layout=None, device=None, pin_memory=None):
        dtype = dtype_arg("new_" + kind, dtype, self.dtype)
        dev = self.device if device is None else device
        if kind == "empty":
            return _op("empty.memory_format")(size, dtype=dtype, device=dev)
        if kind == "empty_strided":
            return _op("empty_strided")(size, args[0], dtype=dtype, device=dev)
        value = args[0] if kind == "full" else (0 if kind == "zeros" else 1)
        return _op("full")(size, value, dtype=dtype, device=dev)
    return decomp


new_empty = defop(f"new_empty(Tensor self, SymInt[] size, *, {OPTS}) -> Tensor", tags=ATEN,
                  meta=_new_meta("new_empty"), decomposition=_new_decomp("empty"))
new_zeros = defop(f"new_zeros(Tensor self, SymInt[] size, *, {OPTS}) -> Tensor", tags=ATEN,
                  meta=_new_meta("new_zeros"), decomposition=_new_decomp("zeros"))
new_ones = defop(f"new_ones(Tensor self, SymInt[] size, *, {OPTS}) -> Tensor", tags=ATEN,
                 meta=_new_meta("new_ones"), decomposition=_new_decomp("ones"))
new_full = defop(
    f"new_full(Tensor self, SymInt[] size, Scalar fill_value, *, {OPTS}) -> Tensor",
    tags=ATEN, decomposition=_new_decomp("full"),
    meta=lambda self, size, fill_value, *, dtype=None, **kw: _full_meta(
        size, fill_value, dtype=dtype_arg("new_full", dtype, self.dtype)))
new_empty_strided = defop(
    f"new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, *, {OPTS}) -> Tensor",
    tags=ATEN, decomposition=_new_decomp("empty_strided"),
    meta=lambda self, size, stride, *, dtype=None, **kw: _empty_strided_meta(
        size, stride, dtype=dtype_arg("new_empty_strided", dtype, self.dtype)))


# ---------------------------------------------------------------------------- ranges

def arange_params(start, end, step, dtype):
    """``(first value, step, length)`` of ``arange`` in ``dtype``, with PyTorch's checks.

    Integer dtypes truncate start, end and step to integers first (PyTorch converts them to
    the accumulate type), so ``arange(0, 5, 0.5, dtype=int64)`` has a zero step."""
    for v in (start, end, step):
        if isinstance(v, complex):
            raise RuntimeError("arange: complex start, end and step are not supported")
    if dtype is D.bool or dtype.is_complex:
        raise RuntimeError(f"\"arange_cpu\" not implemented for '{dtype.scalar_type}'")
    integral = not dtype.is_floating_point
    if not all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    xstart, xend, xstep = (int(v) for v in (start, end, step)) if integral else \
        (start, end, step)
    if xstep == 0:
        raise RuntimeError("step must be nonzero")
    if not ((xstep > 0 and xend >= xstart) or (xstep < 0 and xend <= xstart)):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if all(isinstance(v, int) for v in (start, end, step)) or dtype is D.int64:
        n = -((xstart - xend) // xstep)        # exact ceil for Python ints
    else:
        n = math.ceil((float(end) - float(start)) / float(step))
    n = max(int(n), 0)
    if integral and n > 0:
        info = np.iinfo(dtype.numpy)
        last = xstart + (n - 1) * xstep
        if not info.min <= last <= info.max:
            raise RuntimeError(f"arange: the last value {last} does not fit in {dtype}")
    return xstart, xstep, n



def arange_dtype(start, end, step, dtype):
    """int64 when start, end and step are all integers, else the default float dtype."""
    if dtype is not None:
        return dtype_arg("arange", dtype, None)
    vals = [scalar_value(v) for v in (start, end, step)]
    if all(isinstance(v, int) for v in vals):      # bool is an int too, as in PyTorch
        return D.int64
    if any(isinstance(v, complex) for v in vals):
        return D.default_complex_dtype()
    return D.get_default_dtype()


def _arange_meta(start, end, step=1, *, dtype=None, layout=None, device=None,
                 pin_memory=None):
    if _symbolic_end(start, end, step):
        dtype = D.int64 if dtype is None else dtype_arg("arange", dtype, None)
        return TensorMeta((_symbolic_length(start, end, step, dtype),), dtype)
    dtype = arange_dtype(start, end, step, dtype)
    n = arange_params(scalar_value(start), scalar_value(end), scalar_value(step), dtype)[2]
    return TensorMeta((n,), dtype)


def _symbolic_end(start, end, step) -> bool:
    """``arange(start, end, step)`` with an int step, ints or symbolic sizes as its bounds,
    and at least one of those symbolic (``arange(T)``, ``arange(pos, pos + T)`` while
    tracing with symbolic sizes or ints): its length stays symbolic."""
    symbolic = [_symbolic(v) for v in (start, end)]
    return any(symbolic) and type(step) is int and \
        all(s or type(v) is int for s, v in zip(symbolic, (start, end)))


def _symbolic_length(start, end, step, dtype):
    """``arange_params``' length for an int start and step and a symbolic end: the same
    integer arithmetic, its decisions guarded (``fnx.graph.symint``)."""
    if dtype is D.bool or dtype.is_complex:
        raise RuntimeError(f"\"arange_cpu\" not implemented for '{dtype.scalar_type}'")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = -((start - end) // step)
    if not dtype.is_floating_point:
        info = np.iinfo(dtype.numpy)
        if n > 0 and not info.min <= start + (n - 1) * step <= info.max:
            raise RuntimeError(f"arange: the last value does not fit in {dtype}")
    return n


arange_start_step = defop(f"arange.start_step(Scalar start, Scalar end, Scalar step=1, *, "
                          f"{OPTS}) -> Tensor", tags=CORE, meta=_arange_meta)
arange = defop(
    f"arange(Scalar end, *, {OPTS}) -> Tensor", tags=ATEN,
    meta=lambda end, **kw: _arange_meta(0, end, 1, **kw),
    decomposition=lambda end, **kw: arange_start_step(0, end, 1, **kw))
arange_start = defop(
    f"arange.start(Scalar start, Scalar end, *, {OPTS}) -> Tensor", tags=ATEN,
    meta=lambda start, end, **kw: _arange_meta(start, end, 1, **kw),
    decomposition=lambda start, end, **kw: arange_start_step(start, end, 1, **kw))


def _space_dtype(name, start, end, dtype):
    if dtype is not None:
        return dtype_arg(name, dtype, None)
    if any(isinstance(scalar_value(v), complex) for v in (start, end)):
        return D.default_complex_dtype()
    return D.get_default_dtype()


def _space_meta(name):
    def meta(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
             pin_memory=None):
        if isinstance(steps, bool) or not hasattr(steps, "__index__"):
            raise TypeError(f"{name}(): argument 'steps' must be int, not "
                            f"{type(steps).__name__}")
        if operator.index(steps) < 0:
            raise RuntimeError("number of steps must be non-negative")
        return TensorMeta((operator.index(steps),), _space_dtype(name, start, end, dtype))
    return meta


def _space_dtype_compute(dtype):
    """The dtype linspace computes in: its own for floating dtypes (PyTorch's CPU kernel:
    half types round after each operation), complex128 for complex ones, float64 for
    integers."""
    if dtype.is_complex:
        return D.complex128
    if dtype.is_floating_point:
        return dtype
    return D.float64


def _space_decomp(start, end, steps, ct, device):
    """``steps`` evenly spaced values from ``start`` to ``end`` in dtype ``ct``, with prims:
    PyTorch's CPU linspace (``fnx.backends.cpu.factory._space`` is the eager twin).

    Filled from both ends as PyTorch does, so the last value is exactly ``end``: the
    first half is ``start + step * i``, the second ``end - step * (steps - 1 - i)``. The
    step is computed in ``ct`` (a constant, on the host). float32 values are one rounding
    of the exact float64 result (PyTorch's fused multiply-add); half types round after
    each operation. Integer dtypes truncate start and end first."""
    start, end = scalar_value(start), scalar_value(end)
    if not (ct.is_floating_point or ct.is_complex):
        start, end = (int(v.real if isinstance(v, complex) else v) for v in (start, end))
        ct = D.float64
    if steps <= 1:
        return _typed_full([steps], start, ct, device)
    np_ct = ct.numpy.type
    if ct in (D.float16, D.bfloat16):
        start, end = np.float32(start), np.float32(end)     # (c10 converts via float)
    a, b = np_ct(start), np_ct(end)
    step = np_ct((b - a) / np_ct(steps - 1))
    step = complex(step) if ct.is_complex else float(step)
    wide = D.float64 if ct is D.float32 else ct     # (the exact product and sum)
    i = prims.iota([steps], 0, dtype=D.int64, device=device)
    rev = prims.sub(_typed_full([steps], steps - 1, D.int64, device), i)

    def side(origin, op, count):
        if ct is D.float64 and steps < 1 << 26:
            return _fma64(step if op is prims.add else -step, count, origin, device)
        prod = prims.mul(_typed_full([steps], step, wide, device),
                         prims.convert_element_type(count, wide))
        return _convert(op(_typed_full([steps], origin, wide, device), prod), ct)
    lo = side(complex(a) if ct.is_complex else float(a), prims.add, i)
    hi = side(complex(b) if ct.is_complex else float(b), prims.sub, rev)
    first_half = prims.lt(i, _typed_full([steps], steps // 2, D.int64, device))
    return prims.where(first_half, lo, hi)


def _fma64(a, count, c, device):
    """``c + a * count`` rounded once, in float64 prims (PyTorch's fused multiply-add):
    ``a`` split in halves of 26 bits makes both partial products exact for counts below
    2**26 (Dekker), the sum's error is recovered exactly (TwoSum), and the errors enter
    with one final rounding."""
    n = count.shape
    hi = float(np.float64(a) * 134217729.0 - (np.float64(a) * 134217729.0 - np.float64(a)))
    lo = a - hi
    k = prims.convert_element_type(count, D.float64)

    def full(v):
        return _typed_full(n, v, D.float64, device)
    p = prims.mul(full(a), k)
    pe = prims.add(prims.sub(prims.mul(full(hi), k), p), prims.mul(full(lo), k))
    s = prims.add(full(c), p)
    back = prims.sub(s, full(c))
    se = prims.add(prims.sub(full(c), prims.sub(s, back)), prims.sub(p, back))
    return prims.add(s, prims.add(se, pe))


def _typed_full(shape, value, dtype, device):
    return typed_full(shape, value, dtype, device)


def _convert(t, dtype):
    return t if t.dtype is dtype else prims.convert_element_type(t, dtype)


def _linspace_decomp(start, end, steps, *, dtype=None, layout=None, device=None,
                     pin_memory=None):
    m = linspace.meta(start, end, steps, dtype=dtype)
    ct = _space_dtype_compute(m.dtype)
    if not (m.dtype.is_floating_point or m.dtype.is_complex):
        ct = m.dtype      # integer linspace: truncated ends, float64 steps, truncated values
    return _convert(_space_decomp(start, end, m.shape[0], ct, device_arg(device)), m.dtype)


def _logspace_decomp(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
                     pin_memory=None):
    m = logspace.meta(start, end, steps, base, dtype=dtype)
    # Exponents and powers in double precision (complex128 for complex), whatever the dtype
    wide = D.complex128 if m.dtype.is_complex else D.float64
    dev = device_arg(device)
    exps = _space_decomp(start, end, m.shape[0], wide, dev)
    powers = prims.pow(_typed_full(exps.shape, base, wide, dev), exps)
    return _convert(powers, m.dtype)


linspace = defop(f"linspace(Scalar start, Scalar end, int steps, *, {OPTS}) -> Tensor",
                 tags=ATEN, meta=_space_meta("linspace"), decomposition=_linspace_decomp)
logspace = defop(f"logspace(Scalar start, Scalar end, int steps, float base=10.0, *, "
                 f"{OPTS}) -> Tensor", tags=ATEN, meta=_space_meta("logspace"),
                 decomposition=_logspace_decomp)


def _eye_meta(n, m=None, *, dtype=None, layout=None, device=None, pin_memory=None):
    n = operator.index(n)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    m = n if m is None else operator.index(m)
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    return TensorMeta((n, m), dtype_arg("eye", dtype, D.get_default_dtype()))


def _eye_decomp(n, m=None, *, dtype=None, layout=None, device=None, pin_memory=None):
    """The identity as row index == column index, converted to the dtype."""
    meta = _eye_meta(n, m, dtype=dtype)
    dev = device_arg(device)
    rows = prims.iota(list(meta.shape), 0, dtype=D.int64, device=dev)
    cols = prims.iota(list(meta.shape), 1, dtype=D.int64, device=dev)
    return prims.convert_element_type(prims.eq(rows, cols), meta.dtype)


eye = defop(f"eye(SymInt n, *, {OPTS}) -> Tensor", tags=ATEN, meta=_eye_meta,
            decomposition=_eye_decomp)
eye_m = defop(f"eye.m(SymInt n, SymInt m, *, {OPTS}) -> Tensor", tags=ATEN, meta=_eye_meta,
              decomposition=_eye_decomp)

# Factories without a tensor argument choose their backend from ``device=``.
for _f in (empty, empty_strided, full, zeros, ones, arange_start_step, arange, arange_start,
           linspace, logspace, eye, eye_m):
    backend_select(_f)

# ---------------------------------------------------------------------------- decompositions
# The core factories decompose to prims.full / prims.iota; the others already decompose
# to the core ones (above).



def _prims():
    return prims


@decomposition(full)
def _full_decomp(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    m = full.meta(size, fill_value, dtype=dtype)       # dtype inference, overflow errors
    return _prims().full(list(m.shape), _fill_value(fill_value, m.dtype), dtype=m.dtype,
                         device=device_arg(device))


@decomposition(full_like)
def _full_like_decomp(self, fill_value, *, dtype=None, layout=None, device=None,
                      pin_memory=None, memory_format=None):
    m = full_like.meta(self, fill_value, dtype=dtype)
    dev = self.device if device is None else device_arg(device)
    return _prims().full(list(m.shape), _fill_value(fill_value, m.dtype), dtype=m.dtype,
                         device=dev)


def _zero(dtype):
    return False if dtype is D.bool else 0


@decomposition(empty)
def _empty_decomp(size, *, dtype=None, layout=None, device=None, pin_memory=None,
                  memory_format=None):
    # Uninitialized memory has no functional meaning: zeros are one valid content.
    m = empty.meta(size, dtype=dtype)
    return _prims().full(list(m.shape), _zero(m.dtype), dtype=m.dtype,
                         device=device_arg(device))


@decomposition(empty_strided)
def _empty_strided_decomp(size, stride, *, dtype=None, layout=None, device=None,
                          pin_memory=None):
    # Strides are a layout detail: the functional result only has a shape.
    m = empty_strided.meta(size, stride, dtype=dtype)
    return _prims().full(list(m.shape), _zero(m.dtype), dtype=m.dtype,
                         device=device_arg(device))


@decomposition(arange_start_step)
def _arange_decomp(start, end, step=1, *, dtype=None, layout=None, device=None,
                   pin_memory=None):
    """``start + i * step`` for i in 0..n-1, then converted to the dtype.

    As the eager kernel (and PyTorch's CPU one): integer start and step accumulate in int64
    exactly, anything else in double precision; the length comes from ``arange_params``
    (integer dtypes truncate start, end and step first)."""
    prims = _prims()
    m = arange_start_step.meta(start, end, step, dtype=dtype)
    if _symbolic_end(start, end, step):
        first, n = start, m.shape[0]
    else:
        first, step, n = arange_params(scalar_value(start), scalar_value(end),
                                       scalar_value(step), m.dtype)
    ct = D.int64 if (isinstance(first, int) or _symbolic_end(start, end, step)) and \
        isinstance(step, int) else D.float64
    dev = device_arg(device)
    i = prims.iota([n], 0, dtype=ct, device=dev)
    values = prims.add(prims.mul(i, prims.full([n], step, dtype=ct, device=dev)),
                       prims.full([n], first, dtype=ct, device=dev))
    return values if ct is m.dtype else prims.convert_element_type(values, m.dtype)


# ---------------------------------------------------------------------------- autograd
# A factory's values do not depend on any tensor's values: no gradient flows through it.


nondifferentiable(empty, empty_strided, full, zeros, ones, full_like, empty_like, zeros_like,
                  ones_like, new_empty, new_zeros, new_ones, new_full, new_empty_strided,
                  arange_start_step, arange, arange_start, linspace, logspace, eye, eye_m)
