"""PyTorch's CPU sampling transforms over the raw mt19937 stream, vectorized in NumPy.

Each function takes an ``fnx.Generator`` (``core.random``) and returns what PyTorch 2.x's
CPU kernels write for a contiguous tensor of ``n`` elements, bit for bit:

* uniform: 24 random bits of one 32-bit draw (float, half, bfloat16) or 53 of one 64-bit
  draw (double), times 2**-digits, then ``fma(u, to - from, from)``:
  PyTorch's kernel is compiled with FMA contraction, which changes the last bit.
* normal, >= 16 elements: fill with uniforms, then Box-Muller over blocks of 16 (pairs
  ``j``, ``j + 8``); when the size is not a multiple of 16 the last 16 values are redrawn
  and transformed again.  float32 goes through PyTorch's AVX2 code: the Cephes-derived
  float32 ``log``/``sincos`` polynomials (``avx_mathfun.h``), again with contracted FMAs;
  float64 through libm ``log``/``cos``/``sin`` (Python's ``math`` is the same libm).
* normal, < 16 elements (or non-contiguous): a double Box-Muller per pair of 64-bit
  uniforms, whose second value the generator caches for the next call.
"""
from __future__ import annotations

import math

import numpy as np

_F32 = np.float32
_F64 = np.float64
_U53 = np.uint64((1 << 53) - 1)
_TWO_PI_F32 = _F32(2.0 * math.pi)


# ---------------------------------------------------------------------------- fused mul-add

def _round_to_odd(s, err):
    """``s`` (a float64 sum rounded to nearest) rounded to odd instead, given its exact
    error ``err``: a later rounding to fewer bits then rounds the exact sum correctly."""
    fix = (err != 0) & ((s.view(np.uint64) & np.uint64(1)) == 0)
    if fix.any():
        s = np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


_LOW29 = np.uint64((1 << 29) - 1)
_MID29 = np.uint64(1 << 28)
_TINY32 = 2.0 ** -126


def fma32(a, b, c):
    """float32 ``a * b + c`` rounded once (an FMA instruction's result).  The product is
    exact in float64 (24 + 24 bits), so the float64 sum rounded to float32 is right
    except where that sum sits exactly halfway between two float32s (or is subnormal in
    float32): there the sum is redone rounded to odd, then rounded to float32."""
    p = np.asarray(a, _F64) * np.asarray(b, _F64)
    c = np.asarray(c, _F64)
    s = np.asarray(p + c)
    risky = ((s.view(np.uint64) & _LOW29) == _MID29) | (np.abs(s) < _TINY32)
    if risky.any():
        pb, cb = np.broadcast_to(p, s.shape), np.broadcast_to(c, s.shape)
        s2, err = _two_sum(pb[risky], cb[risky])
        s = s.copy()
        s[risky] = _round_to_odd(np.asarray(s2), np.asarray(err))
    return s.astype(_F32)


_SPLIT = _F64(134217729.0)      # 2**27 + 1: Veltkamp's splitting constant


def _two_prod(a, b):
    """``a * b == p + e`` exactly (Dekker), for products far from overflow."""
    p = a * b
    ta = _SPLIT * a
    ah = ta - (ta - a)
    al = a - ah
    tb = _SPLIT * b
    bh = tb - (tb - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def fma64(a, b, c):
    """float64 ``a * b + c`` rounded once (Boldo and Melquiond's emulation: exact
    product, exact sum with ``c``, the two tails added with rounding to odd)."""
    a, b, c = (np.asarray(v, _F64) for v in (a, b, c))
    if b.ndim == 0 and c.ndim == 0 and b == 1 and c == 0:
        return a + 0.0          # exact (and -0.0 + 0.0 is +0.0, as the FMA gives)
    ph, pl = _two_prod(a, b)
    th, tl = _two_sum(c, ph)
    v, verr = _two_sum(tl, pl)
    out = th + _round_to_odd(np.asarray(v), np.asarray(verr))
    # Outside the emulation's range (inf/nan operands, products near overflow) the
    # plain expression is what the hardware gives too, up to the last bit.
    plain = a * b + c
    return np.where(np.isfinite(out) & np.isfinite(plain), out, plain)


# ---------------------------------------------------------------------------- uniform

# Samples a big fill draws and transforms at a time (a multiple of 16, normal_fill's block):
# the transforms' float64 temporaries are a few of these, not several copies of the tensor.
CHUNK = 1 << 20


def uniform_bits(gen, n, digits):
    """``n`` uniforms in [0, 1) from ``digits`` random bits each (float64 array)."""
    if digits > 32:
        return (gen.random64(n) & _U53).astype(_F64) * 2.0 ** -53
    return (gen.random32(n) & np.uint64((1 << digits) - 1)).astype(_F64) * 2.0 ** -digits


def uniform(gen, n, double, low=0.0, high=1.0):
    """``uniform_(low, high)``: float64 arithmetic on 53-bit uniforms for doubles, else
    float32 on 24-bit ones with float32 bounds (half/bfloat16 too: the caller rounds the
    result, and, as PyTorch, replaces a result that rounded to ``high`` by ``low``)."""
    if double:
        u = uniform_bits(gen, n, 53)
        lo, hi = _F64(low), _F64(high)
        return u if (lo, hi) == (0.0, 1.0) else fma64(u, hi - lo, lo)
    u = uniform_bits(gen, n, 24).astype(_F32)
    lo, hi = _F32(low), _F32(high)
    return u if (lo, hi) == (0.0, 1.0) else fma32(u, hi - lo, lo)


# ---------------------------------------------------------------------------- float32 maths
# PyTorch's AVX2 normal fill uses avx_mathfun.h (Cephes polynomials, Pommier's SSE port);
# these replay its float32 operations in order, FMAs where the compiler contracts them.

_LOG_P = [_F32(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1,
                            -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                            2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)]
_LOG_Q1, _LOG_Q2 = _F32(-2.12194440e-4), _F32(0.693359375)
_MIN_NORM = np.array(0x00800000, np.int32).view(_F32)
_HALF_BITS = int(np.array(0.5, _F32).view(np.int32))


def log_f32(x):
    """Cephes float32 natural log, as ``log256_ps`` computes it (NaN for x <= 0)."""
    x = np.asarray(x, _F32)
    invalid = x <= 0
    xi = np.maximum(x, _MIN_NORM).view(np.int32)
    e = ((xi >> 23) - 0x7F).astype(_F32) + _F32(1)
    m = ((xi & ~0x7F800000) | _HALF_BITS).view(_F32)       # mantissa in [0.5, 1)
    small = m < _F32(0.707106781186547524)
    e = e - small.astype(_F32)
    x = (m - _F32(1)) + np.where(small, m, _F32(0))
    z = x * x
    y = np.full_like(x, _LOG_P[0])
    for p in _LOG_P[1:]:
        y = fma32(y, x, p)
    y = y * x
    y = fma32(y, z, e * _LOG_Q1)
    y = y - z * _F32(0.5)
    x = (x + y) + e * _LOG_Q2
    return np.where(invalid, _F32(np.nan), x)


_FOPI = _F32(1.27323954473516)      # 4 / pi
_DP = [_F32(v) for v in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8)]
_COS_P = [_F32(v) for v in (2.443315711809948E-005, -1.388731625493765E-003,
                            4.166664568298827E-002)]
_SIN_P = [_F32(v) for v in (-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1)]


def sincos_f32(x):
    """Cephes float32 ``(sin, cos)``, as ``sincos256_ps`` computes them."""
    x = np.asarray(x, _F32)
    neg = x < 0
    x = np.abs(x)
    j = ((x * _FOPI).astype(np.int32) + 1) & ~1      # octant, rounded to even
    y = j.astype(_F32)
    # Extended-precision reduction x - j * pi/4 (the first two products are exact).
    x = x + y * _DP[0]
    x = x + y * _DP[1]
    x = fma32(y, _DP[2], x)
    sin_neg = neg ^ ((j & 4) != 0)
    cos_neg = (~(j - 2) & 4) != 0
    poly_is_cos = (j & 2) != 0
    z = x * x
    yc = fma32(np.full_like(z, _COS_P[0]), z, _COS_P[1])
    yc = fma32(yc, z, _COS_P[2])
    yc = fma32(yc * z, z, -(z * _F32(0.5))) + _F32(1)
    ys = fma32(np.full_like(z, _SIN_P[0]), z, _SIN_P[1])
    ys = fma32(ys, z, _SIN_P[2])
    ys = fma32(ys * z, x, x)
    s = np.where(poly_is_cos, yc, ys)
    c = np.where(poly_is_cos, ys, yc)
    return np.where(sin_neg, -s, s), np.where(cos_neg, -c, c)


# ---------------------------------------------------------------------------- normal

def _box_muller16_f32(u, mean, std):
    u = u.reshape(-1, 16)
    radius = np.sqrt(_F32(-2) * log_f32(_F32(1) - u[:, :8]))
    s, c = sincos_f32(_TWO_PI_F32 * u[:, 8:])
    m, sd = _F32(mean), _F32(std)
    return np.concatenate([fma32(radius * c, sd, m), fma32(radius * s, sd, m)],
                          axis=1).reshape(-1)


def _box_muller16_f64(u, mean, std):
    u = u.reshape(-1, 16)
    # libm's log, as PyTorch calls it (NumPy's own SIMD log differs in the last bit).
    logs = np.fromiter(map(math.log, (1.0 - u[:, :8]).ravel().tolist()), _F64,
                       count=u.shape[0] * 8).reshape(-1, 8)
    radius = np.sqrt(-2.0 * logs)
    theta = (2.0 * math.pi) * u[:, 8:]
    return np.concatenate([fma64(radius * np.cos(theta), std, mean),
                           fma64(radius * np.sin(theta), std, mean)], axis=1).reshape(-1)


def normal_fill(gen, n, mean, std, double):
    """PyTorch's vectorized normal fill for ``n >= 16`` contiguous elements."""
    digits = 53 if double else 24
    box = _box_muller16_f64 if double else _box_muller16_f32
    cast = _F64 if double else _F32
    mean, std = cast(mean), cast(std)
    data = np.empty(n, cast)
    k = n - n % 16
    # drawn and transformed a block at a time (CHUNK, a multiple of 16): the same draws
    # in the same order, with float64 temporaries of one block, not of the whole fill
    for start in range(0, n, CHUNK):
        stop = min(start + CHUNK, n)
        part = data[start:stop]
        part[:] = uniform_bits(gen, stop - start, digits)
        whole = min(stop, k) - start
        if whole > 0:
            part[:whole] = box(part[:whole], mean, std)
    if k != n:      # redraw the last 16 and transform them as one more block
        data[n - 16:] = box(uniform_bits(gen, 16, digits).astype(cast), mean, std)
    return data


def normal_scalar(gen, n, mean, std):
    """PyTorch's scalar normal sampler (doubles) ``n`` times: each fresh pair of 64-bit
    uniforms gives ``r cos``, then ``r sin`` from the generator's cache ``gen._normal``
    (a cached value left by an earlier call is used first)."""
    out = np.empty(n, _F64)
    start = 0
    if n and gen._normal is not None:
        out[0], gen._normal, start = gen._normal, None, 1
    pairs = (n - start + 1) // 2
    if pairs:
        u = uniform_bits(gen, 2 * pairs, 53)
        # libm's log1p, as PyTorch calls it (NumPy's differs in the last bit).
        logs = np.fromiter(map(math.log1p, (-u[1::2]).tolist()), _F64, count=pairs)
        r = np.sqrt(-2.0 * logs)
        theta = (2.0 * math.pi) * u[0::2]
        z = np.empty(2 * pairs, _F64)
        z[0::2] = r * np.cos(theta)
        z[1::2] = r * np.sin(theta)
        out[start:] = z[:n - start]
        if (n - start) % 2:
            gen._normal = float(z[-1])
    return fma64(out, std, mean)
