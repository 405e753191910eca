"""CPU kernels of the prims (NumPy/SciPy; RNG through ``jax.random`` on the CPU platform).

Every kernel first calls its prim's meta function, so eager calls are exactly as strict as
traced ones (no broadcasting, no promotion, normalized dims), then computes with NumPy and
returns a fresh array of exactly the meta's dtype.  float16/bfloat16 compute in float32
and round back once (XLA's CPU behaviour), except where that would change the result
(``nextafter``).  Data-dependent checks (integer division by zero, gather/scatter index
bounds, integer negative powers) happen here, before anything is written.
"""
from __future__ import annotations

import builtins

import jax
import numpy as np
import scipy.special as sp

from ...core import dtype as D
from ...core.device import device as _device
from ...ir import prims as P
from ...ir.prims.assertions import linalg_error, range_error
from ...ir.prims.checks import I, fail, scalar_for
from ...ir.prims.contraction import conv_shape, dot_general_dims
from ...ir.prims.data_dependent import nonzero_check
from ._core import data, kernel, register, wrap
import math

_HALF = (D.float16.numpy, D.bfloat16.numpy)
_F32 = np.dtype(np.float32)


def _np(x, name):
    return data(x, f"prims.{name}")


def _up(a):
    """The compute array: half types widen to float32 (exactly)."""
    return a.astype(_F32) if a.dtype in _HALF else a


def _out(r, dtype, src=None):
    """``r`` as a fresh array of ``dtype`` (never a view of the input ``src``)."""
    r = np.asarray(r)
    if r.dtype != dtype.numpy:
        return wrap(r.astype(dtype.numpy), dtype)
    if src is not None and np.may_share_memory(r, src):
        r = r.copy()
    return wrap(r, dtype)


# ----------------------------------------------------------------------------- elementwise

def _sign(a):
    if a.dtype.kind == "f" or a.dtype == D.bfloat16.numpy:
        return np.where(a == 0, a, np.sign(a))     # keeps -0.0 (lax.sign)
    return np.sign(a)


def _digamma(a):
    # lax.digamma is NaN at the poles (0, -1, -2, ...), where SciPy gives -inf or NaN.
    r = sp.psi(a)
    return np.where((a <= 0) & (a == np.floor(a)), np.nan, r).astype(r.dtype)


def _lgamma(a):
    return np.where(a == -np.inf, np.inf, sp.gammaln(a))    # log|gamma(-inf)| = inf


UNARY_FNS = {
    P.abs: np.abs, P.neg: np.negative, P.sign: _sign, P.exp: np.exp, P.exp2: np.exp2,
    P.expm1: np.expm1, P.log: np.log, P.log1p: np.log1p, P.log2: np.log2, P.log10: np.log10,
    P.sin: np.sin, P.cos: np.cos, P.tan: np.tan, P.asin: np.arcsin, P.acos: np.arccos,
    P.atan: np.arctan, P.sinh: np.sinh, P.cosh: np.cosh, P.tanh: np.tanh,
    P.asinh: np.arcsinh, P.acosh: np.arccosh, P.atanh: np.arctanh, P.sqrt: np.sqrt,
    P.rsqrt: lambda a: 1 / np.sqrt(a), P.reciprocal: lambda a: 1 / a, P.erf: sp.erf,
    P.erfc: sp.erfc, P.erf_inv: sp.erfinv, P.lgamma: _lgamma, P.digamma: _digamma,
    P.floor: np.floor, P.ceil: np.ceil, P.round: np.rint, P.trunc: np.trunc,
    P.bitwise_not: np.invert, P.conj: np.conj, P.signbit: np.signbit,
    P.isfinite: np.isfinite, P.real: np.real, P.imag: np.imag,
    P.bessel_i0e: sp.i0e, P.bessel_i1e: sp.i1e,
}


def _int_zero_check(name, a, b):
    if a.dtype.kind in "iu" and (b == 0).any():
        raise fail(name, f"ZeroDivisionError (integer {name} by zero)")


def _div(a, b):
    if a.dtype.kind not in "iu":
        return np.true_divide(a, b)
    _int_zero_check("div", a, b)
    q = np.floor_divide(a, b)     # C division truncates toward zero: fix floor's rounding
    return q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0))).astype(a.dtype)


def _rem(a, b):
    _int_zero_check("rem", a, b)
    return np.fmod(a, b)


def _pow(a, b):
    if a.dtype.kind in "iu" and (b < 0).any():
        raise fail("pow", "Integers to negative integer powers are not allowed.")
    return np.power(a, b)


def _shift_amounts(a, b):
    bits = a.dtype.itemsize * 8
    bad = (b < 0) | (b >= bits)      # lax: the amount is unsigned; too large shifts all out
    return bits, bad, np.where(bad, 0, b).astype(a.dtype)


def _shift_left(a, b):
    _, bad, s = _shift_amounts(a, b)
    return np.where(bad, a.dtype.type(0), np.left_shift(a, s))


def _shift_right_arithmetic(a, b):
    # Arithmetic on the two's-complement bits, also for unsigned dtypes (as XLA does).
    bits, bad, s = _shift_amounts(a, b)
    signed = np.dtype(f"i{a.dtype.itemsize}")
    x = a.view(signed) if a.dtype != signed else a
    r = np.where(bad, np.right_shift(x, bits - 1), np.right_shift(x, s.view(signed)))
    return r.astype(signed).view(a.dtype)


def _nextafter(a, b):
    if a.dtype != D.bfloat16.numpy:
        return np.nextafter(a, b)
    # bfloat16 (no NumPy loop): step the 16-bit pattern by one ulp toward ``b``.
    fa, fb = a.astype(_F32), b.astype(_F32)
    bits = a.view(np.uint16).astype(np.int32)
    mag_up = (fb > fa) == (fa >= 0)       # moving away from zero grows the magnitude
    stepped = np.where(mag_up, bits + 1, bits - 1)
    tiny = np.where(fb > 0, 0x0001, 0x8001)    # from +-0: the smallest subnormal toward b
    r = np.where(fa == 0, tiny, stepped).astype(np.uint16).view(D.bfloat16.numpy)
    r = np.where(fa == fb, b, r)
    return np.where(np.isnan(fa) | np.isnan(fb), np.array(np.nan, D.bfloat16.numpy), r)


BINARY_FNS = {
    P.add: np.add, P.sub: np.subtract, P.mul: np.multiply, P.div: _div, P.rem: _rem,
    P.pow: _pow, P.atan2: np.arctan2, P.maximum: np.maximum, P.minimum: np.minimum,
    P.bitwise_and: np.bitwise_and, P.bitwise_or: np.bitwise_or,
    P.bitwise_xor: np.bitwise_xor, P.shift_left: _shift_left,
    P.shift_right_arithmetic: _shift_right_arithmetic, P.nextafter: _nextafter,
    P.eq: np.equal, P.ne: np.not_equal, P.lt: np.less, P.le: np.less_equal,
    P.gt: np.greater, P.ge: np.greater_equal,
    P.igamma: sp.gammainc, P.igammac: sp.gammaincc, P.polygamma: sp.polygamma,
    P.zeta: sp.zeta,
}
_NO_UPCAST = {P.nextafter}      # its half types step their own bits (no float32 detour)


def _unary_kernel(op, fn):
    name, meta = op.name, op.meta

    def k(ks, self):
        m = meta(self)
        a = _np(self, name)
        with np.errstate(all="ignore"):
            r = fn(_up(a))
        return _out(r, m.dtype, a)
    return k


def _binary_kernel(op, fn):
    name, meta = op.name, op.meta
    up = (lambda a: a) if op in _NO_UPCAST else _up

    def k(ks, self, other):
        m = meta(self, other)
        a, b = _np(self, name), _np(other, name)
        with np.errstate(all="ignore"):
            r = fn(up(a), up(b))
        return _out(r, m.dtype, a)
    return k


for _op, _fn in UNARY_FNS.items():
    register(_op, _unary_kernel(_op, _fn))
for _op, _fn in BINARY_FNS.items():
    register(_op, _binary_kernel(_op, _fn))


@kernel(P.complex)
def _complex(ks, real, imag):
    m = P.complex.meta(real, imag)
    r = np.empty(m.shape, m.dtype.numpy)
    r.real = _np(real, "complex")      # not re + 1j * im: 1j * inf would give a NaN real part
    r.imag = _np(imag, "complex")
    return wrap(r, m.dtype)


@kernel(P.where)
def _where(ks, pred, self, other):
    m = P.where.meta(pred, self, other)
    return _out(np.where(_np(pred, "where"), _np(self, "where"), _np(other, "where")), m.dtype)


def convert(a, dst):
    """``a`` converted to fnx dtype ``dst`` with convert_element_type's semantics."""
    with np.errstate(all="ignore"):
        if a.dtype.kind == "c" and not dst.is_complex:
            if dst is D.bool:
                return a != 0
            a = a.real
        if dst is D.bool:
            return _up(a) != 0
        if a.dtype.kind == "f" or a.dtype in _HALF:
            if dst.category == I:
                # Truncate toward zero and saturate; NaN -> 0 (XLA's conversion).
                f = np.trunc(a.astype(np.float64))
                info = np.iinfo(dst.numpy)
                hi, lo = f >= float(info.max), f <= float(info.min)
                r = np.where(hi | lo | np.isnan(f), 0, f).astype(dst.numpy)
                r[hi] = info.max
                r[lo] = info.min
                return r
        return a.astype(dst.numpy)


@kernel(P.convert_element_type)
def _convert_element_type(ks, self, dtype):
    m = P.convert_element_type.meta(self, dtype)
    a = _np(self, "convert_element_type")
    return _out(convert(a, m.dtype), m.dtype, a)


@kernel(P.stop_gradient)
def _stop_gradient(ks, self):
    m = P.stop_gradient.meta(self)
    return wrap(_np(self, "stop_gradient").copy(), m.dtype)


@kernel(P.device_put)
def _device_put(ks, self, device):
    m = P.device_put.meta(self, device)
    dev = _device(device)
    if dev.type != "cpu":
        raise fail("device_put", f"the CPU kernel copies to cpu only, not to {dev}; the "
                                 f"target backend registers its own kernel")
    return wrap(_np(self, "device_put").copy(), m.dtype)


# ----------------------------------------------------------------------------- layout

def broadcast_in_dim(a, shape, broadcast_dimensions):
    """``prims.broadcast_in_dim`` on a NumPy array: a read-only view when it broadcasts
    (also the host value checks' rule, ``fnx.lower.host_checks``)."""
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = a.shape[i]
    a = a.reshape(expanded)
    shape = tuple(shape)
    return a if a.shape == shape else np.broadcast_to(a, shape)


@kernel(P.broadcast_in_dim)
def _broadcast_in_dim(ks, self, shape, broadcast_dimensions):
    m = P.broadcast_in_dim.meta(self, shape, broadcast_dimensions)
    a = _np(self, "broadcast_in_dim")
    return wrap(np.array(broadcast_in_dim(a, m.shape, broadcast_dimensions)), m.dtype)


@kernel(P.reshape)
def _reshape(ks, self, shape):
    m = P.reshape.meta(self, shape)
    return wrap(_np(self, "reshape").reshape(m.shape).copy(), m.dtype)


@kernel(P.transpose)
def _transpose(ks, self, permutation):
    m = P.transpose.meta(self, permutation)
    return wrap(np.transpose(_np(self, "transpose"), tuple(permutation)).copy(), m.dtype)


@kernel(P.squeeze)
def _squeeze(ks, self, dimensions):
    m = P.squeeze.meta(self, dimensions)
    return wrap(_np(self, "squeeze").reshape(m.shape).copy(), m.dtype)


@kernel(P.slice)
def _slice(ks, self, start_indices, limit_indices, strides=None):
    m = P.slice.meta(self, start_indices, limit_indices, strides)
    st = strides if strides is not None else [1] * len(start_indices)
    idx = tuple(builtins.slice(int(s), int(e), int(k))
                for s, e, k in zip(start_indices, limit_indices, st))
    return wrap(_np(self, "slice")[idx].copy(), m.dtype)


def pad_array(a, value, low, high, interior):
    """``lax.pad`` on a NumPy array: negative low/high crop, interior inserts ``value``."""
    low, high, interior = ([int(x) for x in xs] for xs in (low, high, interior))
    dilated = [s + max(s - 1, 0) * it for s, it in zip(a.shape, interior)]
    buf = np.full([max(lo, 0) + d + max(hi, 0) for lo, d, hi in zip(low, dilated, high)],
                  value, a.dtype)
    buf[tuple(builtins.slice(max(lo, 0), max(lo, 0) + d, it + 1)
              for lo, d, it in zip(low, dilated, interior))] = a
    return buf[tuple(builtins.slice(max(-lo, 0), n - max(-hi, 0))
                     for lo, hi, n in zip(low, high, buf.shape))]


@kernel(P.pad)
def _pad(ks, self, padding_value, low, high, interior):
    m = P.pad.meta(self, padding_value, low, high, interior)
    a = _np(self, "pad")
    value = scalar_for("pad", padding_value, m.dtype)
    return _out(pad_array(a, value, low, high, interior), m.dtype, a)


@kernel(P.concatenate)
def _concatenate(ks, tensors, dim):
    m = P.concatenate.meta(tensors, dim)
    return wrap(np.concatenate([_np(t, "concatenate") for t in tensors], axis=dim), m.dtype)


@kernel(P.rev)
def _rev(ks, self, dims):
    m = P.rev.meta(self, dims)
    return wrap(np.flip(_np(self, "rev"), axis=tuple(dims)).copy(), m.dtype)


# ----------------------------------------------------------------------------- reductions

def _identity(a, which):
    if a.dtype.kind == "b":
        return which == "min"
    if a.dtype.kind in "iu":
        info = np.iinfo(a.dtype)
        return info.min if which == "max" else info.max
    return -np.inf if which == "max" else np.inf


def _reduce_sum(a, dims):
    if a.dtype.kind == "b":
        return np.any(a, axis=dims)
    return np.sum(_up(a), axis=dims, dtype=a.dtype if a.dtype.kind in "iu" else None)


def _reduce_prod(a, dims):
    if a.dtype.kind == "b":
        return np.all(a, axis=dims)
    return np.prod(_up(a), axis=dims, dtype=a.dtype if a.dtype.kind in "iu" else None)


def _reduce_max(a, dims):
    return np.max(_up(a), axis=dims, initial=_identity(a, "max"))


def _reduce_min(a, dims):
    return np.min(_up(a), axis=dims, initial=_identity(a, "min"))


def _reduce_kernel(op, fn):
    def k(ks, self, dims):
        m = op.meta(self, dims)
        a = _np(self, op.name)
        with np.errstate(all="ignore"):
            r = fn(a, tuple(dims))
        return _out(r, m.dtype, a)
    return k


for _op, _fn in ((P.reduce_sum, _reduce_sum), (P.reduce_prod, _reduce_prod),
                 (P.reduce_max, _reduce_max), (P.reduce_min, _reduce_min)):
    register(_op, _reduce_kernel(_op, _fn))


def _arg_kernel(op, fn):
    def k(ks, self, dim):
        m = op.meta(self, dim)
        # NumPy's argmax/argmin: first index of the extreme, and a NaN is the extreme.
        return _out(fn(_up(_np(self, op.name)), axis=dim), m.dtype)
    return k


register(P.argmax, _arg_kernel(P.argmax, np.argmax))
register(P.argmin, _arg_kernel(P.argmin, np.argmin))


def _scan_kernel(op, fn):
    def k(ks, self, dim):
        m = op.meta(self, dim)
        a = _np(self, op.name)
        with np.errstate(all="ignore"):
            r = fn(_up(a), axis=dim, dtype=a.dtype if a.dtype.kind in "iub" else None)
        return _out(r, m.dtype, a)
    return k


register(P.cumsum, _scan_kernel(P.cumsum, np.cumsum))
register(P.cumprod, _scan_kernel(P.cumprod, np.cumprod))


# ----------------------------------------------------------------------------- creation

@kernel(P.iota)
def _iota(ks, shape, dimension, *, dtype, device):
    m = P.iota.meta(shape, dimension, dtype=dtype, device=device)
    n = m.shape[dimension]
    along = [1] * len(m.shape)
    along[dimension] = n
    r = np.arange(n, dtype=np.int64).astype(m.dtype.numpy).reshape(along)
    return wrap(np.broadcast_to(r, m.shape).copy(), m.dtype)


@kernel(P.full)
def _full(ks, shape, fill_value, *, dtype, device):
    m = P.full.meta(shape, fill_value, dtype=dtype, device=device)
    return wrap(np.full(m.shape, scalar_for("full", fill_value, m.dtype), m.dtype.numpy),
                m.dtype)


# ----------------------------------------------------------------------------- contraction



@kernel(P.dot_general)
def _dot_general(ks, lhs, rhs, lhs_contracting_dims, rhs_contracting_dims, lhs_batch_dims,
                 rhs_batch_dims):
    args = (lhs, rhs, lhs_contracting_dims, rhs_contracting_dims, lhs_batch_dims,
            rhs_batch_dims)
    m = P.dot_general.meta(*args)
    lc, rc, lb, rb, lf, rf = dot_general_dims(*args)
    a, b = _up(_np(lhs, "dot_general")), _up(_np(rhs, "dot_general"))
    nb = math.prod(a.shape[d] for d in lb)
    nk = math.prod(a.shape[d] for d in lc)
    nm = math.prod(a.shape[d] for d in lf)
    nn = math.prod(b.shape[d] for d in rf)
    # As one batched matmul: (B, M, K) @ (B, K, N).
    x = np.transpose(a, lb + lf + lc).reshape(nb, nm, nk)
    y = np.transpose(b, rb + rc + rf).reshape(nb, nk, nn)
    with np.errstate(all="ignore"):
        r = np.matmul(x, y)
    return _out(r.reshape(m.shape), m.dtype)


def conv_array(x, w, c):
    """conv_general on NumPy arrays: ``c`` is ``fnx.ir.prims.contraction.conv_shape``'s dict."""
    ns = x.ndim - 2
    out_shape = c["shape"]
    if 0 in out_shape:
        return np.zeros(out_shape, x.dtype)
    # Input dilation is interior padding; explicit padding (negative crops) the low/high.
    x = pad_array(x, 0, [0, 0] + list(c["plo"]), [0, 0] + list(c["phi"]),
                  [0, 0] + [d - 1 for d in c["ld"]])
    kernel_sizes = w.shape[2:]
    dilated = [(k - 1) * r + 1 for k, r in zip(kernel_sizes, c["rd"])]
    spatial = tuple(range(2, 2 + ns))
    v = np.lib.stride_tricks.sliding_window_view(x, dilated, axis=spatial)
    # v: (N, C, *positions, *window); keep strided positions and dilated window taps.
    v = v[(builtins.slice(None),) * 2
          + tuple(builtins.slice(None, None, s) for s in c["strides"])
          + tuple(builtins.slice(None, None, r) for r in c["rd"])]
    v = v[(builtins.slice(None),) * 2 + tuple(builtins.slice(0, o) for o in out_shape[2:])]
    g = c["groups"]
    n, ch = x.shape[:2]
    o = w.shape[0]
    v = v.reshape((n, g, ch // g) + v.shape[2:])
    w = w.reshape((g, o // g) + w.shape[1:])
    pos = "pqr"[:ns]
    win = "xyz"[:ns]
    r = np.einsum(f"ngc{pos}{win},goc{win}->ngo{pos}", v, w, optimize=True)
    return r.reshape(out_shape)


@kernel(P.conv_general)
def _conv_general(ks, lhs, rhs, window_strides, padding_low, padding_high, lhs_dilation,
                  rhs_dilation, feature_group_count):
    c = conv_shape(lhs, rhs, window_strides, padding_low, padding_high, lhs_dilation,
                     rhs_dilation, feature_group_count)
    x, w = _up(_np(lhs, "conv_general")), _up(_np(rhs, "conv_general"))
    with np.errstate(all="ignore"):
        r = conv_array(x, w, c)
    return _out(r, lhs.dtype)


# ----------------------------------------------------------------------------- value checks

@kernel(P.check_in_range)
def _check_in_range(ks, self, low, high, error, message):
    m = P.check_in_range.meta(self, low, high, error, message)
    a = _np(self, "check_in_range")
    if a.size and (a.min() < low or a.max() >= high):
        raise range_error(error, message, int(a[(a < low) | (a >= high)].flat[0]))
    return wrap(a.copy(), m.dtype)


@kernel(P.check_linalg_info)
def _check_linalg_info(ks, self, info, api, message):
    m = P.check_linalg_info.meta(self, info, api, message)
    flat = _np(info, "check_linalg_info").reshape(-1)
    bad = np.flatnonzero(flat)
    if bad.size:
        raise linalg_error(api, message, int(flat[bad[0]]), int(bad[0]), info.ndim > 0)
    return wrap(_np(self, "check_linalg_info").copy(), m.dtype)


# ----------------------------------------------------------------------------- gather/scatter

def _check_bounds(name, idx, size):
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = idx[(idx < 0) | (idx >= size)].flat[0]
        raise fail(name, f"index out of bounds: index {bad} for a dim of size {size}")


@kernel(P.gather)
def _gather(ks, self, dim, index):
    m = P.gather.meta(self, dim, index)
    a, idx = _np(self, "gather"), _np(index, "gather")
    _check_bounds("gather", idx, a.shape[dim])
    part = a[tuple(builtins.slice(None) if d == dim else builtins.slice(0, idx.shape[d])
                   for d in range(a.ndim))]
    return _out(np.take_along_axis(part, idx, axis=dim), m.dtype, a)


_SCATTER_UFUNCS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


@kernel(P.scatter)
def _scatter(ks, self, dim, index, src, reduce="none"):
    m = P.scatter.meta(self, dim, index, src, reduce)
    a, idx, s = _np(self, "scatter"), _np(index, "scatter"), _np(src, "scatter")
    _check_bounds("scatter", idx, a.shape[dim])
    if reduce == "none":
        out = a.copy()
    else:
        out, s = _up(a).copy(), _up(s)
    if idx.size:
        where = list(np.indices(idx.shape, sparse=True))
        where[dim] = idx
        if reduce == "none":
            # Duplicate targets: the last write (in row-major order of index) wins.
            lin = np.ravel_multi_index([w.ravel() for w in np.broadcast_arrays(*where)],
                                       out.shape)
            _, first_from_end = np.unique(lin[::-1], return_index=True)
            keep = lin.size - 1 - first_from_end
            out.reshape(-1)[lin[keep]] = s.reshape(-1)[keep]
        else:
            with np.errstate(all="ignore"):
                _SCATTER_UFUNCS[reduce].at(out, tuple(where), s)
    return _out(out, m.dtype)


# ----------------------------------------------------------------------------- sorting

def sort_indices(a, dim, descending):
    """Stable sort order along ``dim``; NaN is the largest value."""
    key = _up(a)
    if not descending:
        return np.argsort(key, axis=dim, kind="stable")
    # Descending and stable: sort the reversed array ascending, then reverse the order.
    n = a.shape[dim]
    i = np.argsort(np.flip(key, dim), axis=dim, kind="stable")
    return (n - 1) - np.flip(i, dim)


@kernel(P.sort)
def _sort(ks, self, dim, descending, stable):
    mv, mi = P.sort.meta(self, dim, descending, stable)
    a = _np(self, "sort")
    idx = sort_indices(a, dim, descending)
    return (wrap(np.take_along_axis(a, idx, axis=dim), mv.dtype), _out(idx, mi.dtype))


@kernel(P.top_k)
def _top_k(ks, self, k, dim, largest):
    mv, mi = P.top_k.meta(self, k, dim, largest)
    a = _np(self, "top_k")
    idx = sort_indices(a, dim, largest)
    idx = idx[tuple(builtins.slice(0, k) if d == dim else builtins.slice(None)
                    for d in range(a.ndim))]
    return (wrap(np.take_along_axis(a, idx, axis=dim), mv.dtype), _out(idx, mi.dtype))


@kernel(P.nonzero)
def _nonzero(ks, self):
    nonzero_check(self)
    a = _np(self, "nonzero")
    return _out(np.argwhere(_up(a) != 0), D.int64)


# ----------------------------------------------------------------------------- fft

@kernel(P.fft_c2c)
def _fft_c2c(ks, self, dim, forward):
    m = P.fft_c2c.meta(self, dim, forward)
    a = _np(self, "fft_c2c")
    if not dim:
        return wrap(a.copy(), m.dtype)
    axes = tuple(dim)
    r = np.fft.fftn(a, axes=axes) if forward else np.fft.ifftn(a, axes=axes, norm="forward")
    return _out(r, m.dtype)


@kernel(P.fft_r2c)
def _fft_r2c(ks, self, dim, onesided):
    m = P.fft_r2c.meta(self, dim, onesided)
    a = _np(self, "fft_r2c")
    if not dim:
        return _out(a, m.dtype)
    axes = tuple(dim)
    r = np.fft.rfftn(a, axes=axes) if onesided else np.fft.fftn(a, axes=axes)
    return _out(r, m.dtype)


@kernel(P.fft_c2r)
def _fft_c2r(ks, self, dim, last_dim_size):
    m = P.fft_c2r.meta(self, dim, last_dim_size)
    a = _np(self, "fft_c2r")
    axes = tuple(dim)
    sizes = [a.shape[d] for d in axes[:-1]] + [int(last_dim_size)]
    return _out(np.fft.irfftn(a, s=sizes, axes=axes, norm="forward"), m.dtype)


# ----------------------------------------------------------------------------- random

def _jax():
    return jax


def _key(name, key):
    k = _np(key, name)
    if ((k < 0) | (k >= 1 << 32)).any():
        raise fail(name, f"key words must be in [0, 2**32), got {k.tolist()}")
    jax = _jax()
    return jax.random.wrap_key_data(k.astype(np.uint32), impl="threefry2x32")


def _on_cpu(fn, x64=False):
    """Run ``fn`` on JAX's CPU platform (64-bit types enabled only when asked)."""
    jax = _jax()
    with jax.default_device(jax.devices("cpu")[0]), jax.enable_x64(bool(x64)):
        return np.array(fn())


@kernel(P.random_bits)
def _random_bits(ks, key, shape):
    m = P.random_bits.meta(key, shape)
    jax = _jax()
    k = _key("random_bits", key)
    bits = _on_cpu(lambda: jax.random.bits(k, m.shape, dtype=np.uint32))
    return _out(bits, D.int64)


@kernel(P.uniform)
def _uniform(ks, key, shape, low, high, *, dtype):
    m = P.uniform.meta(key, shape, low, high, dtype=dtype)
    jax = _jax()
    k = _key("uniform", key)
    lo, hi = (scalar_for("uniform", v, m.dtype) for v in (low, high))
    r = _on_cpu(lambda: jax.random.uniform(k, m.shape, m.dtype.numpy, minval=lo, maxval=hi),
                m.dtype is D.float64)
    return _out(r, m.dtype)


@kernel(P.normal)
def _normal(ks, key, shape, mean, std, *, dtype):
    m = P.normal.meta(key, shape, mean, std, dtype=dtype)
    jax = _jax()
    k = _key("normal", key)
    mu, sigma = (scalar_for("normal", v, m.dtype) for v in (mean, std))
    # The lowering must compute the same expression, in the same dtype, to match bits.
    r = _on_cpu(lambda: jax.random.normal(k, m.shape, m.dtype.numpy) * sigma + mu,
                m.dtype is D.float64)
    return _out(r, m.dtype)


@kernel(P.split_key)
def _split_key(ks, key, num):
    m = P.split_key.meta(key, num)
    jax = _jax()
    k = _key("split_key", key)
    keys = _on_cpu(lambda: jax.random.key_data(jax.random.split(k, int(num))))
    return _out(keys.reshape(m.shape), D.int64)


# poisson / binomial: the same JAX expressions as their lowerings (fnx/lower/jax.py), so
# eager and compiled draw the same counts from one key
@kernel(P.poisson)
def _poisson(ks, key, rate):
    m = P.poisson.meta(key, rate)
    k = _key("poisson", key)
    lam = _np(rate, "poisson")
    r = _on_cpu(lambda: jax.random.poisson(k, lam, lam.shape).astype(lam.dtype),
                m.dtype is D.float64)
    return _out(r, m.dtype)


@kernel(P.binomial)
def _binomial(ks, key, count, prob):
    m = P.binomial.meta(key, count, prob)
    k = _key("binomial", key)
    n, p = _np(count, "binomial"), _np(prob, "binomial")
    r = _on_cpu(lambda: jax.random.binomial(k, n, p, p.shape, p.dtype).astype(p.dtype),
                m.dtype is D.float64)
    return _out(r, m.dtype)
