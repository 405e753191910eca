"""CPU kernels for factories: NumPy allocations, fills and ranges.

Each kernel asks the op's meta function for the output shape and dtype first, so the
checks (negative sizes, bad dtypes, fill overflow, arange step sign) are the same on
every backend and happen before anything is allocated.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...core import dtype as D
from ...ir.aten import factory as F
from ._core import kernel, wrap
from ...ir.scalars import scalar_value


@kernel(F.empty)
def _empty(ks, size, *, dtype=None, layout=None, device=None, pin_memory=None,
           memory_format=None):
    m = F.empty.meta(size, dtype=dtype)
    return wrap(np.empty(m.shape, m.dtype.numpy), m.dtype)


@kernel(F.empty_strided)
def _empty_strided(ks, size, stride, *, dtype=None, layout=None, device=None,
                   pin_memory=None):
    m = F.empty_strided.meta(size, stride, dtype=dtype)
    stride = tuple(int(s) for s in stride)
    n = 0 if 0 in m.shape else 1 + sum((sz - 1) * st for sz, st in zip(m.shape, stride))
    buf = np.empty(n, m.dtype.numpy)
    isz = buf.itemsize
    return wrap(np.lib.stride_tricks.as_strided(buf, m.shape, tuple(s * isz for s in stride)),
                m.dtype)


@kernel(F.zeros)
def _zeros(ks, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    m = F.zeros.meta(size, dtype=dtype)
    return wrap(np.zeros(m.shape, m.dtype.numpy), m.dtype)


@kernel(F.ones)
def _ones(ks, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    m = F.ones.meta(size, dtype=dtype)
    return wrap(np.ones(m.shape, m.dtype.numpy), m.dtype)


@kernel(F.full)
def _full(ks, size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    m = F.full.meta(size, fill_value, dtype=dtype)
    return wrap(np.full(m.shape, F._fill_value(fill_value, m.dtype), m.dtype.numpy), m.dtype)


def _other_device(self, device):
    return device is not None and F.device_arg(device) is not self._device


@kernel(F.full_like)
def _full_like(ks, self, fill_value, *, dtype=None, layout=None, device=None,
               pin_memory=None, memory_format=None):
    m = F.full_like.meta(self, fill_value, dtype=dtype)
    if _other_device(self, device):     # that device's backend makes it
        return F.full(list(m.shape), fill_value, dtype=m.dtype, device=device)
    return wrap(np.full(m.shape, F._fill_value(fill_value, m.dtype), m.dtype.numpy), m.dtype)


def _like_kernel(op, np_fn, factory):
    def k(ks, self, *, dtype=None, layout=None, device=None, pin_memory=None,
          memory_format=None):
        m = op.meta(self, dtype=dtype)
        if _other_device(self, device):
            return factory(list(m.shape), dtype=m.dtype, device=device)
        return wrap(np_fn(m.shape, m.dtype.numpy), m.dtype)
    kernel(op)(k)


_like_kernel(F.empty_like, np.empty, F.empty)
_like_kernel(F.zeros_like, np.zeros, F.zeros)
_like_kernel(F.ones_like, np.ones, F.ones)


@kernel(F.arange_start_step)
def _arange(ks, start, end, step=1, *, dtype=None, layout=None, device=None,
            pin_memory=None):
    m = F.arange_start_step.meta(start, end, step, dtype=dtype)
    start, step, n = F.arange_params(scalar_value(start), scalar_value(end),
                                     scalar_value(step), m.dtype)
    if isinstance(start, int) and isinstance(step, int):
        out = start + np.arange(n, dtype=np.int64) * step
    else:   # PyTorch accumulates start + i * step in double on CPU
        out = float(start) + np.arange(n, dtype=np.float64) * float(step)
    return wrap(out.astype(m.dtype.numpy), m.dtype)


def _space(start, end, steps, dtype):
    """PyTorch's CPU linspace, value for value: from both ends towards the middle (the
    first half ``start + step * i``, the second ``end - step * (steps - 1 - i)``), with
    PyTorch's arithmetic. float32 and float64 take each value as one fused multiply-add
    (its kernel is compiled with FMA contraction); half types round after every operation
    (c10's Half/BFloat16 arithmetic); integer dtypes truncate start and end, then step in
    double."""
    start, end = scalar_value(start), scalar_value(end)
    if dtype.is_complex:
        ct = np.complex128
    elif dtype.is_floating_point:
        ct = dtype.numpy.type
    else:
        ct = np.float64
        start, end = int(start.real if isinstance(start, complex) else start), \
            int(end.real if isinstance(end, complex) else end)
    if dtype in (D.float16, D.bfloat16):
        start, end = np.float32(start), np.float32(end)     # (c10 converts via float)
    if steps == 1:
        return np.asarray([start], dtype=ct)
    a, b = ct(start), ct(end)
    step = ct((b - a) / ct(steps - 1))
    i = np.arange(steps)
    half = steps // 2
    up, down = i[:half], steps - 1 - i[half:]
    if ct is np.float32:
        # the product of a float32 and an index is exact in float64: one rounding there
        lo = (np.float64(a) + np.float64(step) * up).astype(ct)
        hi = (np.float64(b) - np.float64(step) * down).astype(ct)
    elif ct is np.float64:
        lo, hi = _fma(step, up.astype(ct), a), _fma(-step, down.astype(ct), b)
    else:       # half types, complex, integers: the dtype's own arithmetic, step by step
        lo = a + (step * up.astype(ct)).astype(ct)
        hi = b - (step * down.astype(ct)).astype(ct)
    return np.concatenate([lo, hi]).astype(ct)


def _fma(a, b, c):
    """``a * b + c`` rounded once (float64; ``b`` integral), as a fused multiply-add.

    The product is split exactly (Dekker), the sum with its rounding error (Knuth's
    TwoSum); the error terms decide the rounding but where they sit within a hair of
    half an ulp, which ``fractions`` settles exactly."""
    b = np.asarray(b, np.float64)
    p = a * b
    split = 134217729.0                     # 2**27 + 1
    ta, tb = split * a, split * b
    ah, bh = ta - (ta - a), tb - (tb - b)
    al, bl = a - ah, b - bh
    pe = ((ah * bh - p) + ah * bl + al * bh) + al * bl      # a * b == p + pe exactly
    s = c + p
    bv = s - c
    se = (c - (s - bv)) + (p - bv)                          # c + p == s + se exactly
    tail = se + pe
    out = s + tail
    half_ulp = np.spacing(np.abs(s)) / 2
    near = np.abs(np.abs(tail) - half_ulp) <= 4 * np.spacing(np.abs(tail)) + 1e-300
    for k in np.flatnonzero(near):
        out[k] = float(Fraction(float(c)) + Fraction(float(a)) * Fraction(float(b[k])))
    return out


@kernel(F.linspace)
def _linspace(ks, start, end, steps, *, dtype=None, layout=None, device=None,
              pin_memory=None):
    m = F.linspace.meta(start, end, steps, dtype=dtype)
    return wrap(_space(start, end, m.shape[0], m.dtype).astype(m.dtype.numpy), m.dtype)


@kernel(F.logspace)
def _logspace(ks, start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
              pin_memory=None):
    m = F.logspace.meta(start, end, steps, base, dtype=dtype)
    wide = D.complex128 if m.dtype.is_complex else D.float64
    exps = _space(start, end, m.shape[0], wide)
    with np.errstate(over="ignore"):
        out = np.power(np.float64(base), exps)
    return wrap(out.astype(m.dtype.numpy), m.dtype)


@kernel(F.eye, F.eye_m)
def _eye(ks, n, m=None, *, dtype=None, layout=None, device=None, pin_memory=None):
    meta = F.eye.meta(n, m, dtype=dtype)
    return wrap(np.eye(*meta.shape, dtype=meta.dtype.numpy), meta.dtype)

