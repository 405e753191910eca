"""OpInfo entries for the prims (fnx/ir/prims.py), with NumPy/SciPy references following the
prims' lax-like semantics (/tmp/prompts/prims_spec.md): no broadcasting, no promotion, the
operand dtype is the result dtype unless stated, integer division truncates, ``rem`` has
C's fmod sign rule, reductions over an empty extent give the identity.

Elementwise entries are made from the prim tables themselves (``UNARY``/``BINARY`` and
each op's accepted dtype categories), so a new elementwise prim only needs a reference.
"""
from __future__ import annotations

import itertools

import numpy as np
import scipy.special as sp

import fnx

from ...core import dtype as D
from ...ir import prims as P
from ...ir.prims.checks import B, C, F, I
from ...ops import prims
from ..database import FLOATS, INTS, ErrorInput, OpInfo, SampleInput, _gen, make_tensor, register
from .elementwise import _int_trunc_div

COMPLEX = (D.complex64, D.complex128)
_BY_CATEGORY = {B: (D.bool,), I: INTS, F: FLOATS, C: COMPLEX}
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5]
SPECIAL_OTHER = [1.0, 0.0, -0.0, np.nan, 2.0, np.inf, -np.inf, 0.0, -1.5, 3.0]
ALL = FLOATS + INTS + (D.bool,)
RNG_DTYPES = (D.float32, D.bfloat16)


def _dtypes(cats):
    return tuple(d for c in (F, I, B, C) if c in cats for d in _BY_CATEGORY[c])


def _tensor(values, dtype, device="cpu"):
    with np.errstate(all="ignore"):
        t = fnx.from_numpy(np.array(values).astype(dtype.numpy))
    return t if str(device) == "cpu" else t.to(device)


def _is_float(d):
    return d.is_floating_point


def _wide(a):
    """float64/complex128 for floating inputs (a more precise reference), else as is."""
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        return a.astype(np.float64)
    return a


def _same(fn, rule="same"):
    """Reference of an elementwise prim: compute wide, cast to the prim's result dtype."""
    def ref(*args):
        d = args[0].dtype
        with np.errstate(all="ignore"):
            r = np.asarray(fn(*(_wide(a) for a in args)))
        if rule == "bool":
            return r.astype(np.bool_)
        if rule == "real" and d.kind == "c":
            return r.real.astype(np.float32 if d == np.complex64 else np.float64)
        return r.astype(d)
    return ref


# --------------------------------------------------------------------------- references

def _digamma(a):
    r = sp.psi(a)
    return np.where((a <= 0) & (a == np.floor(a)), np.nan, r)     # NaN at the poles (lax)


def _lgamma(a):
    return np.where(np.isneginf(a), np.inf, sp.gammaln(a))     # C's lgamma(-inf) = +inf


def _sign(a):
    return np.sign(a) if a.dtype.kind != "c" else np.where(a == 0, 0, a / np.abs(a))


def _signbit(a):
    return np.signbit(a) if a.dtype.kind == "f" else a < 0


UNARY_REFS = {
    "abs": np.abs, "neg": np.negative, "sign": _sign, "exp": np.exp, "exp2": np.exp2,
    "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "log2": np.log2, "log10": np.log10,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "sqrt": np.sqrt,
    "rsqrt": lambda a: 1 / np.sqrt(a), "reciprocal": lambda a: 1 / a, "erf": sp.erf,
    "erfc": sp.erfc, "erf_inv": sp.erfinv, "lgamma": _lgamma, "digamma": _digamma,
    "floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc,
    "bitwise_not": np.invert, "conj": np.conj, "signbit": _signbit, "isfinite": np.isfinite,
    "real": np.real, "imag": np.imag,
}
UNARY_DOMAIN = {"asin": (-1, 1), "acos": (-1, 1), "atanh": (-1, 1), "erf_inv": (-1, 1),
                "acosh": (1, 9)}


def _div(a, b):
    if a.dtype.kind in "iu":
        return _int_trunc_div(a, b)
    if a.dtype == np.bool_:
        return a
    return a / b


def _shift_left(a, b):
    bits = a.dtype.itemsize * 8
    out = np.left_shift(a, np.clip(b, 0, bits - 1).astype(a.dtype))
    return np.where((b < 0) | (b >= bits), 0, out).astype(a.dtype)


def _shift_right_arithmetic(a, b):
    bits = a.dtype.itemsize * 8
    signed = np.dtype(f"i{a.dtype.itemsize}")
    x = a.astype(np.int64)
    if a.dtype.kind == "u":       # the two's-complement bits, read as signed
        x = np.where(x >= 2 ** (bits - 1), x - 2 ** bits, x)
    amount = np.where((b < 0) | (b >= bits), bits - 1, b).astype(np.int64)
    return (x >> amount).astype(signed).astype(a.dtype)


def _or_and(arith, logical):
    return lambda a, b: logical(a, b) if a.dtype == np.bool_ else arith(a, b)


BINARY_REFS = {
    "add": _or_and(np.add, np.logical_or), "sub": np.subtract,
    "mul": _or_and(np.multiply, np.logical_and), "div": _div, "rem": np.fmod,
    "pow": np.power, "atan2": np.arctan2, "maximum": np.maximum, "minimum": np.minimum,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "shift_left": _shift_left,
    "shift_right_arithmetic": _shift_right_arithmetic, "nextafter": None,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}


def _nextafter_ref(a, b):
    if a.dtype.name != "bfloat16":
        return np.nextafter(a, b)
    # bfloat16: the neighbouring bit pattern toward b (independent of the kernel's method)
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    out = []
    for x, y in zip(fa.ravel(), fb.ravel()):
        if np.isnan(x) or np.isnan(y):
            out.append(np.nan)
            continue
        if x == y:
            out.append(y)
            continue
        cands = np.arange(2 ** 16, dtype=np.uint32).astype(np.uint16).view(a.dtype)
        vals = cands.astype(np.float64)
        vals = vals[~np.isnan(vals)]
        side = vals[vals > x] if y > x else vals[vals < x]
        out.append(side.min() if y > x else side.max())
    return np.array(out, np.float64).reshape(a.shape).astype(a.dtype)


# --------------------------------------------------------------------------- elementwise

def _unary_samples(name):
    lo, hi = UNARY_DOMAIN.get(name, (None, None))

    def samples(info, device, dtype):
        yield SampleInput(make_tensor((3, 4), dtype, device, low=lo, high=hi))
        yield SampleInput(make_tensor((), dtype, device, low=lo, high=hi))
        yield SampleInput(make_tensor((0, 3), dtype, device))
        yield SampleInput(make_tensor((4, 3), dtype, device, low=lo, high=hi).t())
        if _is_float(dtype):
            yield SampleInput(_tensor(SPECIAL, dtype, device))
    return samples


def _binary_samples(name):
    nonzero = name in ("div", "rem")
    shift = name.startswith("shift")

    def samples(info, device, dtype):
        def a(shape, **kw):
            if name == "pow" and not dtype.is_floating_point and not dtype.is_complex:
                return make_tensor(shape, dtype, device, low=-2, high=3, **kw)
            return make_tensor(shape, dtype, device, **kw)

        def b(shape, **kw):
            if shift:
                return make_tensor(shape, dtype, device, low=0, high=dtype.itemsize * 8, **kw)
            if name == "pow" and not dtype.is_floating_point and not dtype.is_complex:
                return make_tensor(shape, dtype, device, low=0, high=4, **kw)
            if name == "pow" and dtype.is_floating_point:
                return make_tensor(shape, dtype, device, low=-3, high=3, **kw)
            return make_tensor(shape, dtype, device,
                               exclude_zero=nonzero and not _is_float(dtype), **kw)
        yield SampleInput(a((3, 4)), b((3, 4)))
        yield SampleInput(a(()), b(()))
        yield SampleInput(a((0, 3)), b((0, 3)))
        yield SampleInput(a((3, 4), noncontiguous=True), b((4, 3)).t())
        if shift:
            big = [0, dtype.itemsize * 8, 100, 1] if dtype is not D.uint8 else [0, 8, 100, 1]
            yield SampleInput(_tensor([-5, 3, 7, 127] if dtype.is_signed else [5, 3, 7, 250],
                                      dtype, device), _tensor(big, dtype, device))
        if _is_float(dtype):
            yield SampleInput(_tensor(SPECIAL, dtype, device),
                              _tensor(SPECIAL_OTHER, dtype, device))
    return samples


def _elementwise_errors(name, n, cats, tolerant_scalars=False):
    def errors(info, device):
        d = _dtypes(cats)[0]
        other = next((x for x in ALL + COMPLEX if x.category not in cats), None)
        x = make_tensor((2, 3), d, device)
        if other is not None:
            bad = make_tensor((2, 3), other, device)
            yield ErrorInput(SampleInput(*([bad] * n)), RuntimeError,
                             f"prims.{name}: expected a .* tensor")
        if n == 1:      # a number for the first tensor: the call itself rejects it
            yield ErrorInput(SampleInput(2), TypeError, "must be Tensor, not int")
        else:
            yield ErrorInput(SampleInput(x, 2), RuntimeError,
                             f"prims.{name}: expected a Tensor .* no Python scalars")
        if n == 2:
            yield ErrorInput(SampleInput(x, make_tensor((3,), d, device)), RuntimeError,
                             f"prims.{name}: shape mismatch")
            d2 = next(y for y in _dtypes(cats) + ALL if y is not d and y.category == d.category)
            yield ErrorInput(SampleInput(x, make_tensor((2, 3), d2, device)), RuntimeError,
                             f"prims.{name}: dtype mismatch")
    return errors


def _elementwise_entries():
    out = []
    for name, cats, rule in P.UNARY:
        out.append(OpInfo(P.OPS[name], _same(UNARY_REFS[name], rule), _dtypes(cats),
                          _unary_samples(name),
                          error_inputs=_elementwise_errors(name, 1, cats)))
    for name, cats, rule in P.BINARY:
        fn = BINARY_REFS[name]
        ref = _same(fn, rule) if fn is not None else _nextafter_ref
        errs = _elementwise_errors(name, 2, cats)
        if name in ("div", "rem"):
            errs = _with_extra(errs, lambda device, name=name: ErrorInput(
                SampleInput(make_tensor((2,), D.int64, device), _tensor([1, 0], D.int64)),
                RuntimeError, "ZeroDivisionError", meta=False))
        if name == "pow":
            errs = _with_extra(errs, lambda device: ErrorInput(
                SampleInput(make_tensor((2,), D.int64, device), _tensor([1, -1], D.int64)),
                RuntimeError, "Integers to negative integer powers are not allowed",
                meta=False))
        tols = {D.complex64: (1e-5, 1e-5)} if name == "pow" else None
        out.append(OpInfo(P.OPS[name], ref, _dtypes(cats), _binary_samples(name),
                          error_inputs=errs, tols=tols))
    return out


def _with_extra(errors, extra):
    def fn(info, device):
        yield from errors(info, device)
        yield extra(device)
    return fn


# --------------------------------------------------------------------------- select, convert

def _complex_samples(info, device, dtype):
    for shape in ((3, 4), (), (0, 2)):
        yield SampleInput(make_tensor(shape, dtype, device), make_tensor(shape, dtype, device))
    yield SampleInput(_tensor(SPECIAL, dtype, device), _tensor(SPECIAL_OTHER, dtype, device))


def _complex_ref(re, im):
    out = np.complex64 if re.dtype == np.float32 else np.complex128
    r = np.empty(re.shape, out)
    r.real, r.imag = re, im          # (re + 1j * im would turn inf * 0 into NaN)
    return r


def _where_samples(info, device, dtype):
    for shape in ((3, 4), (), (0, 3)):
        yield SampleInput(make_tensor(shape, D.bool, device), make_tensor(shape, dtype, device),
                          make_tensor(shape, dtype, device))
    yield SampleInput(make_tensor((4, 3), D.bool, device).t(),
                      make_tensor((3, 4), dtype, device, noncontiguous=True),
                      make_tensor((3, 4), dtype, device))


def _where_errors(info, device):
    x = make_tensor((2, 3), D.float32, device)
    yield ErrorInput(SampleInput(x, x, x), RuntimeError, "prims.where: expected a bool tensor")
    c = make_tensor((2, 3), D.bool, device)
    yield ErrorInput(SampleInput(c, x, make_tensor((3,), D.float32, device)), RuntimeError,
                     "prims.where: shape mismatch")
    yield ErrorInput(SampleInput(c, x, make_tensor((2, 3), D.float64, device)), RuntimeError,
                     "prims.where: dtype mismatch")


TARGETS = FLOATS + INTS + (D.bool,) + COMPLEX


def _convert_samples(info, device, dtype):
    for i, target in enumerate(TARGETS):
        shape = ((3, 4), (), (0, 2), (2, 3))[i % 4]
        low = 0 if target is D.uint8 or dtype is D.uint8 else None
        yield SampleInput(make_tensor(shape, dtype, device, low=low,
                                      noncontiguous=i % 4 == 3), target)
    if _is_float(dtype):
        # out of range, NaN and inf saturate (XLA); NaN -> 0
        big = [np.nan, np.inf, -np.inf, 1e30, -1e30, 300.0, -300.0, 2.7, -2.7]
        for target in (D.int32, D.uint8, D.int8, D.bool, D.float16, D.float64):
            yield SampleInput(_tensor(big, dtype, device), target)


def _convert_ref(a, dtype):
    dst = dtype.numpy
    with np.errstate(all="ignore"):
        if a.dtype.kind == "c" and dtype.category != C:
            if dtype is D.bool:
                return a != 0
            a = a.real
        if dtype is D.bool:
            return a.astype(np.float64 if a.dtype.kind != "c" else a.dtype) != 0
        if dtype.category == I and (a.dtype.kind == "f" or a.dtype.name == "bfloat16"):
            info = np.iinfo(dst)
            f = np.trunc(a.astype(np.float64))
            f = np.where(np.isnan(f), 0, np.clip(f, float(info.min), float(info.max)))
            return f.astype(dst)
        return a.astype(dst)


def _device_put_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device), fnx.device("cpu"))
    yield SampleInput(make_tensor((), dtype, device), "cpu")
    yield SampleInput(make_tensor((4, 3), dtype, device).t(), "cpu")


# --------------------------------------------------------------------------- layout

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
    view = [1] * len(shape)
    for i, d in enumerate(dims):
        view[d] = a.shape[i]
    return np.broadcast_to(a.reshape(view), shape).copy()


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
    return a[tuple(slice(s, lim, st) for s, lim, st in zip(start, limit, strides))].copy()


def _slice_errors(info, device):
    x = make_tensor((5, 6), D.float32, device)
    yield ErrorInput(SampleInput(x, [0, 0], [6, 6]), RuntimeError, "prims.slice: dim 0")
    yield ErrorInput(SampleInput(x, [0, 0], [5, 6], [1, 0]), RuntimeError, "stride 0")


def _pad_value(dtype):
    if dtype is D.bool:
        return True
    return 0.5 if _is_float(dtype) else (3 if dtype is D.uint8 else -1)


def _pad_samples(info, device, dtype):
    v = _pad_value(dtype)
    yield SampleInput(make_tensor((3, 4), dtype, device), v, [1, 0], [0, 2], [0, 1])
    yield SampleInput(make_tensor((3, 4), dtype, device), v, [-1, 2], [1, -2], [1, 0])
    yield SampleInput(make_tensor((0, 2), dtype, device), v, [1, 1], [1, 0], [2, 2])
    yield SampleInput(make_tensor((), dtype, device), v, [], [], [])
    yield SampleInput(make_tensor((4, 3), dtype, device).t(), v, [0, 1], [1, 0], [1, 1])


def _pad_ref(a, value, low, high, interior):
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
    return np.concatenate(tensors, axis=dim)


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
    return np.flip(a, tuple(dims)).copy() if dims else a.copy()


def _dims_errors(name, *extra):
    def errors(info, device):
        x = make_tensor((2, 3), D.float32, device)
        yield ErrorInput(SampleInput(x, [2], *extra), RuntimeError,
                         f"prims.{name}: dim 2 .* out of range")
        yield ErrorInput(SampleInput(x, [-1], *extra), RuntimeError,
                         f"prims.{name}: dim -1 .* out of range")
    return errors


# --------------------------------------------------------------------------- reductions

def _reduce_samples(low=None, high=None):
    def samples(info, device, dtype):
        def t(shape, **kw):
            return make_tensor(shape, dtype, device, low=low, high=high, **kw)
        yield SampleInput(t((3, 4)), [1])
        yield SampleInput(t((3, 4)), [0, 1])
        yield SampleInput(t((2, 3, 4), noncontiguous=True), [0, 2])
        yield SampleInput(t((3, 4)), [])
        yield SampleInput(t((0, 3)), [0])            # the identity over an empty extent
        yield SampleInput(t(()), [])
        if _is_float(dtype):
            yield SampleInput(_tensor([[1.0, np.nan, 2.0], [3.0, -np.inf, 0.5]], dtype,
                                      device), [1])
    return samples


def _reduce_ref(kind):
    def ref(a, dims):
        axis = tuple(dims)
        if a.dtype == np.bool_:
            fn = {"sum": np.any, "prod": np.all, "max": np.any, "min": np.all}[kind]
            return np.asarray(fn(a, axis=axis))
        w = _wide(a)
        if kind in ("max", "min"):
            if a.dtype.kind in "iu":
                info = np.iinfo(a.dtype)
                ident = info.min if kind == "max" else info.max
            else:
                ident = -np.inf if kind == "max" else np.inf
            fn = np.max if kind == "max" else np.min
            r = fn(w, axis=axis, initial=ident) if w.size or axis else w.copy()
        else:
            fn = np.sum if kind == "sum" else np.prod
            with np.errstate(all="ignore"):
                r = fn(w, axis=axis)
        return np.asarray(r).astype(a.dtype)
    return ref


def _arg_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device), 1)
    yield SampleInput(make_tensor((3, 4), dtype, device, low=0, high=2), 0)   # ties
    yield SampleInput(make_tensor((2, 3), dtype, device, noncontiguous=True), 1)
    yield SampleInput(make_tensor((0, 3), dtype, device), 1)
    if _is_float(dtype):
        yield SampleInput(_tensor([[1.0, np.nan, 2.0, np.nan], [3.0, -np.inf, np.inf, 0.5]],
                                  dtype, device), 1)


def _arg_ref(kind):
    def ref(a, dim):
        w = _wide(a).astype(np.float64) if a.dtype != np.bool_ else a.astype(np.int8)
        if w.dtype.kind == "f":
            # a NaN is the extreme either way: the first NaN wins
            nan = np.isnan(w)
            w = np.where(nan, np.inf if kind == "max" else -np.inf, w)
            first_nan = np.argmax(nan, axis=dim)
            base = np.argmax(w, axis=dim) if kind == "max" else np.argmin(w, axis=dim)
            return np.where(nan.any(axis=dim), first_nan, base).astype(np.int64)
        fn = np.argmax if kind == "max" else np.argmin
        return fn(w, axis=dim).astype(np.int64)
    return ref


def _arg_errors(name):
    def errors(info, device):
        yield ErrorInput(SampleInput(make_tensor((3, 0), D.float32, device), 1), RuntimeError,
                         f"prims.{name}: cannot take {name} over dim 1 of size 0")
    return errors


def _scan_samples(info, device, dtype):
    lo, hi = (-2, 3) if dtype is not D.uint8 else (0, 3)
    yield SampleInput(make_tensor((3, 4), dtype, device, low=lo, high=hi), 1)
    yield SampleInput(make_tensor((3, 4), dtype, device, low=lo, high=hi), 0)
    yield SampleInput(make_tensor((0, 3), dtype, device), 1)
    yield SampleInput(make_tensor((4, 3), dtype, device, low=lo, high=hi).t(), 1)


def _scan_ref(kind):
    def ref(a, dim):
        if a.dtype == np.bool_:
            fn = np.logical_or if kind == "sum" else np.logical_and
            return fn.accumulate(a, axis=dim) if a.size else a.copy()
        fn = np.cumsum if kind == "sum" else np.cumprod
        return fn(_wide(a), axis=dim).astype(a.dtype)
    return ref


# --------------------------------------------------------------------------- creation

def _iota_samples(info, device, dtype):
    yield SampleInput([3, 4], 1, dtype=dtype, device=device)
    yield SampleInput([5], 0, dtype=dtype, device=device)
    yield SampleInput([0, 2], 0, dtype=dtype, device=device)


def _iota_ref(shape, dimension, *, dtype, device=None):
    view = [1] * len(shape)
    view[dimension] = shape[dimension]
    return np.broadcast_to(np.arange(shape[dimension]).reshape(view),
                           shape).astype(dtype.numpy)


def _full_samples(info, device, dtype):
    v = True if dtype is D.bool else (3 if not _is_float(dtype) else -1.5)
    yield SampleInput([3, 4], v, dtype=dtype, device=device)
    yield SampleInput([], v, dtype=dtype, device=device)
    yield SampleInput([0, 2], v, dtype=dtype, device=device)
    if _is_float(dtype):
        yield SampleInput([2], float("nan"), dtype=dtype, device=device)
        yield SampleInput([2], 7, dtype=dtype, device=device)


def _full_ref(shape, value, *, dtype, device=None):
    return np.full(shape, value, dtype.numpy)


def _full_errors(info, device):
    yield ErrorInput(SampleInput([2], 1.5, dtype=D.int64, device=device), RuntimeError,
                     "prims.full: value 1.5 is not representable")
    yield ErrorInput(SampleInput([-1], 1, dtype=D.int64, device=device), RuntimeError,
                     "negative size")


# --------------------------------------------------------------------------- contraction

def _dot_samples(info, device, dtype):
    lo, hi = (-3, 4) if not _is_float(dtype) else (None, None)

    def t(shape, **kw):
        return make_tensor(shape, dtype, device, low=lo, high=hi, **kw)
    yield SampleInput(t((3, 4)), t((4, 5)), [1], [0], [], [])               # matmul
    yield SampleInput(t((2, 3, 4)), t((2, 4, 5)), [2], [1], [0], [0])       # batched
    yield SampleInput(t((3,)), t((2,)), [], [], [], [])                     # outer
    yield SampleInput(t((4, 3)).t(), t((2, 4), noncontiguous=True), [1], [1], [], [])
    yield SampleInput(t((2, 0)), t((0, 3)), [1], [0], [], [])               # empty sum
    yield SampleInput(t((4, 2, 3)), t((3, 2, 5)), [2, 1], [0, 1], [], [])   # two dims


def _dot_ref(lhs, rhs, lc, rc, lb, rb):
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    ls = [next(letters) for _ in range(lhs.ndim)]
    rs = [next(letters) for _ in range(rhs.ndim)]
    for a, b in itertools.chain(zip(lc, rc), zip(lb, rb)):
        rs[b] = ls[a]
    out = [ls[d] for d in lb]
    out += [ls[d] for d in range(lhs.ndim) if d not in lc and d not in lb]
    out += [rs[d] for d in range(rhs.ndim) if d not in rc and d not in rb]
    spec = f"{''.join(ls)},{''.join(rs)}->{''.join(out)}"
    if lhs.dtype == np.bool_:
        r = np.einsum(spec, lhs.astype(np.int64), rhs.astype(np.int64)) != 0
        return r
    return np.einsum(spec, _wide(lhs), _wide(rhs)).astype(lhs.dtype)


def _dot_errors(info, device):
    a = make_tensor((3, 4), D.float32, device)
    yield ErrorInput(SampleInput(a, make_tensor((5, 2), D.float32, device), [1], [0], [], []),
                     RuntimeError, "prims.dot_general: contracting dims have different sizes")
    yield ErrorInput(SampleInput(a, make_tensor((4, 2), D.float64, device), [1], [0], [], []),
                     RuntimeError, "prims.dot_general: dtype mismatch")


def _conv_samples(info, device, dtype):
    def t(shape, **kw):
        return make_tensor(shape, dtype, device, low=-2, high=3, **kw)
    # lhs, rhs, strides, pad low, pad high, lhs dilation, rhs dilation, groups
    yield SampleInput(t((2, 3, 7)), t((4, 3, 3)), [1], [0], [0], [1], [1], 1)
    yield SampleInput(t((1, 4, 6, 5)), t((6, 2, 3, 2)), [2, 1], [1, 0], [1, 2], [1, 1],
                      [1, 2], 2)
    yield SampleInput(t((1, 2, 4)), t((3, 2, 2)), [1], [1], [1], [2], [1], 1)     # transposed
    yield SampleInput(t((1, 1, 3, 3, 3)), t((2, 1, 2, 2, 2)), [1, 1, 2], [0, 0, 0],
                      [0, 0, 0], [1, 1, 1], [1, 1, 1], 1)
    yield SampleInput(t((2, 3, 5)), t((2, 3, 2)), [1], [-1], [0], [1], [1], 1)   # crop
    yield SampleInput(t((0, 3, 5)), t((2, 3, 2)), [1], [0], [0], [1], [1], 1)


def _conv_ref(lhs, rhs, strides, low, high, lhs_dil, rhs_dil, groups):
    x, w = _wide(lhs), _wide(rhs)
    nsp = x.ndim - 2
    # input dilation (transposed convolution), then padding (negative crops)
    x = _pad_ref(x, 0, [0, 0] + list(low), [0, 0] + list(high),
                 [0, 0] + [d - 1 for d in lhs_dil])
    # kernel dilation: zeros between taps
    w = _pad_ref(w, 0, [0] * w.ndim, [0] * w.ndim, [0, 0] + [d - 1 for d in rhs_dil])
    ksp = w.shape[2:]
    n, c = x.shape[:2]
    o = w.shape[0]
    out_sp = [(x.shape[2 + i] - ksp[i]) // strides[i] + 1 for i in range(nsp)]
    out = np.zeros((n, o, *out_sp), np.result_type(x, w))
    cg, og = c // groups, o // groups
    for pos in itertools.product(*(range(s) for s in out_sp)):
        idx = tuple(slice(p * s, p * s + k) for p, s, k in zip(pos, strides, ksp))
        win = x[(slice(None), slice(None)) + idx]           # (N, C, *k)
        for g in range(groups):
            xs = win[:, g * cg:(g + 1) * cg]
            ws = w[g * og:(g + 1) * og]
            out[(slice(None), slice(g * og, (g + 1) * og)) + pos] = np.tensordot(
                xs, ws, axes=(list(range(1, xs.ndim)), list(range(1, ws.ndim))))
    return out.astype(lhs.dtype)


def _conv_errors(info, device):
    x = make_tensor((1, 4, 5), D.float32, device)
    yield ErrorInput(SampleInput(x, make_tensor((2, 3, 2), D.float32, device), [1], [0], [0],
                                 [1], [1], 1), RuntimeError, "prims.conv_general: rhs has 3")
    yield ErrorInput(SampleInput(x, make_tensor((2, 4, 2), D.float32, device), [0], [0], [0],
                                 [1], [1], 1), RuntimeError, "prims.conv_general: .* >= 1")


# --------------------------------------------------------------------------- gather/scatter

def _index(shape, size, device, unique_dim=None):
    g = _gen()
    if unique_dim is None:
        a = g.integers(0, max(size, 1), shape) if size else np.zeros(shape, np.int64)
    else:       # distinct indices along ``unique_dim`` (scatter "none": no duplicate writes)
        a = np.argsort(g.random(shape[:unique_dim] + (size,) + shape[unique_dim + 1:]),
                       axis=unique_dim)
        a = np.take(a, np.arange(shape[unique_dim]), axis=unique_dim)
    t = fnx.from_numpy(np.array(a, np.int64).reshape(shape))
    return t if str(device) == "cpu" else t.to(device)


def _gather_samples(info, device, dtype):
    x = make_tensor((3, 5), dtype, device)
    yield SampleInput(x, 1, _index((3, 4), 5, device))
    yield SampleInput(x, 0, _index((2, 5), 3, device))
    yield SampleInput(make_tensor((4, 5), dtype, device), 0, _index((2, 3), 4, device))
    yield SampleInput(make_tensor((3, 5), dtype, device), 1, _index((3, 0), 5, device))


def _gather_ref(a, dim, index):
    sl = tuple(slice(0, s) if d != dim else slice(None) for d, s in enumerate(index.shape))
    return np.take_along_axis(a[sl], index, axis=dim)


def _gather_errors(info, device):
    x = make_tensor((3, 5), D.float32, device)
    yield ErrorInput(SampleInput(x, 1, _index((3, 2), 5, device).to(D.int32)), RuntimeError,
                     "prims.gather: expected an int64 index")
    yield ErrorInput(SampleInput(x, 1, _tensor([[0, 5]], D.int64, device)), RuntimeError,
                     "index out of bounds", meta=False)


def _scatter_samples(info, device, dtype):
    reduces = ["none", "add", "mul", "max", "min"]
    if dtype is D.bool:
        reduces = ["none", "max", "min"]
    for i, r in enumerate(reduces):
        self = make_tensor((3, 5), dtype, device, low=-2, high=3)
        if r == "none":
            idx = _index((3, 4), 5, device, unique_dim=1)
        else:
            idx = _index((3, 4), 5, device)
        yield SampleInput(self, 1, idx, make_tensor((3, 4), dtype, device, low=-2, high=3), r)
    yield SampleInput(make_tensor((4, 3), dtype, device), 0, _index((2, 3), 4, device, 0),
                      make_tensor((2, 3), dtype, device))
    yield SampleInput(make_tensor((3, 5), dtype, device), 1, _index((3, 0), 5, device),
                      make_tensor((3, 0), dtype, device), "add")


def _scatter_ref(a, dim, index, src, reduce="none"):
    out = _wide(a).copy() if a.dtype != np.bool_ else a.copy()
    src = _wide(src) if a.dtype != np.bool_ else src
    full = list(np.indices(index.shape, sparse=False))
    full[dim] = index
    where = tuple(full)
    if reduce == "none":
        out[where] = src
    else:
        ufunc = {"add": np.add, "mul": np.multiply, "max": np.maximum,
                 "min": np.minimum}[reduce]
        if a.dtype == np.bool_:
            ufunc = {"max": np.logical_or, "min": np.logical_and}.get(reduce, ufunc)
        ufunc.at(out, where, src)
    return out.astype(a.dtype)


def _scatter_errors(info, device):
    x = make_tensor((3, 5), D.float32, device)
    idx = _index((3, 4), 5, device)
    yield ErrorInput(SampleInput(x, 1, idx, make_tensor((3, 4), D.float32, device), "sum"),
                     RuntimeError, "prims.scatter: reduce must be one of")


# --------------------------------------------------------------------------- sorting

def _distinct(shape, dtype, device):
    """Values without ties (non-stable sorts may order ties either way)."""
    n = int(np.prod(shape)) if shape else 1
    vals = _gen().permutation(n).reshape(shape)
    if dtype is D.bool:
        vals = vals % 2
    elif dtype.is_signed or _is_float(dtype):
        vals = vals - n // 2
    t = fnx.from_numpy(np.asarray(vals).astype(dtype.numpy))
    return t if str(device) == "cpu" else t.to(device)


def _sort_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 5), dtype, device), 1, False, True)
    yield SampleInput(make_tensor((3, 5), dtype, device), 0, True, True)
    yield SampleInput(make_tensor((5, 3), dtype, device).t(), 1, True, True)
    yield SampleInput(make_tensor((0, 3), dtype, device), 1, False, True)
    if dtype is not D.bool:
        yield SampleInput(_distinct((4, 3), dtype, device), 0, False, False)
    if _is_float(dtype):
        yield SampleInput(_tensor([3.0, np.nan, -1.0, np.inf, np.nan, -np.inf, 0.0], dtype,
                                  device), 0, True, True)
        yield SampleInput(_tensor([3.0, np.nan, -1.0, np.inf, np.nan, -np.inf, 0.0], dtype,
                                  device), 0, False, True)


def _sort_ref(a, dim, descending, stable):
    w = _wide(a).astype(np.float64) if a.dtype != np.bool_ else a.astype(np.float64)
    nan = np.isnan(w)
    if descending:
        # stable, NaN (the largest) first: sort by (not NaN, -value), stably
        key = np.where(nan, 0.0, -w)
        order = np.argsort(key, axis=dim, kind="stable")
        nan_sorted = np.take_along_axis(nan, order, axis=dim)
        order2 = np.argsort(~nan_sorted, axis=dim, kind="stable")
        order = np.take_along_axis(order, order2, axis=dim)
    else:
        order = np.argsort(np.where(nan, np.inf, w), axis=dim, kind="stable")
        nan_sorted = np.take_along_axis(nan, order, axis=dim)
        order2 = np.argsort(nan_sorted, axis=dim, kind="stable")
        order = np.take_along_axis(order, order2, axis=dim)
    return np.take_along_axis(a, order, axis=dim), order.astype(np.int64)


def _top_k_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 5), dtype, device), 2, 1, True)
    yield SampleInput(make_tensor((3, 5), dtype, device), 3, 1, False)
    yield SampleInput(make_tensor((4, 3), dtype, device, low=0, high=2), 4, 0, True)  # ties
    yield SampleInput(make_tensor((3, 5), dtype, device), 0, 1, True)
    yield SampleInput(make_tensor((5, 3), dtype, device).t(), 5, 1, False)


def _top_k_ref(a, k, dim, largest):
    vals, idx = _sort_ref(a, dim, largest, True)
    take = np.arange(k)
    return np.take(vals, take, axis=dim), np.take(idx, take, axis=dim)


def _top_k_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((3, 5), D.float32, device), 6, 1, True),
                     RuntimeError, r"prims.top_k: k \(6\) must be in \[0, 5\]")


def _nonzero_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device, low=0, high=2))
    yield SampleInput(make_tensor((), dtype, device, low=0, high=2))
    yield SampleInput(make_tensor((0, 3), dtype, device))
    yield SampleInput(make_tensor((4, 3), dtype, device, low=0, high=2).t())


def _nonzero_ref(a):
    return np.argwhere(a).astype(np.int64)


# --------------------------------------------------------------------------- fft

def _c2c_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device), [1], True)
    yield SampleInput(make_tensor((3, 4), dtype, device), [0, 1], False)
    yield SampleInput(make_tensor((2, 3, 4), dtype, device, noncontiguous=True), [0, 2], True)


def _c2c_ref(a, dim, forward):
    dims = tuple(dim)
    n = int(np.prod([a.shape[d] for d in dims])) if dims else 1
    w = _wide(a)
    r = np.fft.fftn(w, axes=dims) if forward else np.fft.ifftn(w, axes=dims) * n
    return r.astype(a.dtype)


def _r2c_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device), [1], True)
    yield SampleInput(make_tensor((3, 5), dtype, device), [0, 1], False)
    yield SampleInput(make_tensor((2, 3, 4), dtype, device).transpose(0, 2), [2, 1], True)


def _r2c_ref(a, dim, onesided):
    dims = tuple(dim)
    out = np.complex64 if a.dtype == np.float32 else np.complex128
    r = np.fft.rfftn(_wide(a), axes=dims) if onesided else np.fft.fftn(_wide(a), axes=dims)
    return r.astype(out)


def _c2r_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 3), dtype, device), [1], 4)
    yield SampleInput(make_tensor((4, 3), dtype, device), [0, 1], 5)
    yield SampleInput(make_tensor((2, 3), dtype, device), [1], 5)


def _c2r_ref(a, dim, last_dim_size):
    dims = tuple(dim)
    s = [a.shape[d] for d in dims[:-1]] + [last_dim_size]
    n = int(np.prod(s))
    out = np.float32 if a.dtype == np.complex64 else np.float64
    return (np.fft.irfftn(_wide(a), s=s, axes=dims) * n).astype(out)


# --------------------------------------------------------------------------- random

def _key(device, seed=0):
    return _tensor([0, seed], D.int64, device)


# (few samples: each new shape compiles a JAX program on first use)
def _random_bits_samples(info, device, dtype):
    yield SampleInput(_key(device), [3, 4])
    yield SampleInput(_key(device, 7), [])


def _sampler_samples(info, device, dtype):
    yield SampleInput(_key(device), [3, 4], 0.0, 1.0, dtype=dtype)
    yield SampleInput(_key(device, 3), [], -2.0, 5.0, dtype=dtype)


def _shape_only(dtype_of):
    """A reference for random prims: the shape and dtype (values are not compared)."""
    def ref(key, shape, *args, **kwargs):
        return np.zeros(tuple(shape), dtype_of(kwargs).numpy)
    return ref


def _split_key_samples(info, device, dtype):
    yield SampleInput(_key(device), 3)
    yield SampleInput(_key(device, 9), 0)


def _key_errors(name, *args, **kwargs):
    def errors(info, device):
        yield ErrorInput(SampleInput(_tensor([1, 2, 3], D.int64, device), *args, **kwargs),
                         RuntimeError, f"prims.{name}: expected an int64 key of shape \\[2\\]")
    return errors


def _entries():
    F = FLOATS
    ALLC = ALL + COMPLEX
    e = [
        OpInfo(prims.complex.default, _complex_ref, (D.float32, D.float64), _complex_samples),
        OpInfo(prims.where.default, lambda c, a, b: np.where(c, a, b), ALLC, _where_samples,
               error_inputs=_where_errors),
        OpInfo(prims.convert_element_type.default, _convert_ref, ALLC, _convert_samples),
        OpInfo(prims.device_put.default, lambda a, device: a.copy(), ALL, _device_put_samples),
        OpInfo(prims.broadcast_in_dim.default, _broadcast_in_dim_ref, ALLC,
               _broadcast_in_dim_samples, error_inputs=_broadcast_in_dim_errors),
        OpInfo(prims.reshape.default, lambda a, shape: a.reshape(shape), ALLC,
               _reshape_samples, error_inputs=_reshape_errors),
        OpInfo(prims.transpose.default, lambda a, perm: np.transpose(a, perm).copy(), ALLC,
               _transpose_samples),
        OpInfo(prims.squeeze.default, lambda a, dims: np.squeeze(a, tuple(dims)).copy(), ALLC,
               _squeeze_samples),
        OpInfo(prims.slice.default, _slice_ref, ALLC, _slice_samples,
               error_inputs=_slice_errors),
        OpInfo(prims.pad.default, _pad_ref, ALL, _pad_samples, error_inputs=_pad_errors),
        OpInfo(prims.concatenate.default, _concatenate_ref, ALLC, _concatenate_samples,
               error_inputs=_concatenate_errors),
        OpInfo(prims.rev.default, _rev_ref, ALLC, _rev_samples,
               error_inputs=_dims_errors("rev")),
        OpInfo(prims.reduce_sum.default, _reduce_ref("sum"), ALL, _reduce_samples(),
               error_inputs=_dims_errors("reduce_sum"),
               tols={D.float16: (2e-3, 1e-2), D.bfloat16: (1.6e-2, 1e-1)}),
        OpInfo(prims.reduce_prod.default, _reduce_ref("prod"), ALL, _reduce_samples(-2, 3),
               error_inputs=_dims_errors("reduce_prod")),
        OpInfo(prims.reduce_max.default, _reduce_ref("max"), ALL, _reduce_samples(),
               error_inputs=_dims_errors("reduce_max")),
        OpInfo(prims.reduce_min.default, _reduce_ref("min"), ALL, _reduce_samples(),
               error_inputs=_dims_errors("reduce_min")),
        OpInfo(prims.argmax.default, _arg_ref("max"), ALL, _arg_samples,
               error_inputs=_arg_errors("argmax")),
        OpInfo(prims.argmin.default, _arg_ref("min"), ALL, _arg_samples,
               error_inputs=_arg_errors("argmin")),
        OpInfo(prims.cumsum.default, _scan_ref("sum"), ALL, _scan_samples,
               tols={D.float16: (2e-3, 1e-2), D.bfloat16: (1.6e-2, 1e-1)}),
        OpInfo(prims.cumprod.default, _scan_ref("prod"), ALL, _scan_samples),
        OpInfo(prims.iota.default, _iota_ref, F + INTS, _iota_samples),
        OpInfo(prims.full.default, _full_ref, ALLC, _full_samples, error_inputs=_full_errors),
        OpInfo(prims.dot_general.default, _dot_ref, ALL, _dot_samples,
               error_inputs=_dot_errors,
               tols={D.float16: (2e-3, 1e-2), D.bfloat16: (1.6e-2, 1e-1),
                     D.float32: (1e-5, 1e-5)}),
        OpInfo(prims.conv_general.default, _conv_ref, FLOATS + (D.int64, D.int32),
               _conv_samples, error_inputs=_conv_errors,
               tols={D.float16: (2e-3, 1e-2), D.bfloat16: (1.6e-2, 1e-1),
                     D.float32: (1e-5, 1e-5)}),
        OpInfo(prims.gather.default, _gather_ref, ALL, _gather_samples,
               error_inputs=_gather_errors),
        OpInfo(prims.scatter.default, _scatter_ref, ALL, _scatter_samples,
               error_inputs=_scatter_errors),
        OpInfo(prims.sort.default, _sort_ref, ALL, _sort_samples),
        OpInfo(prims.top_k.default, _top_k_ref, FLOATS + INTS, _top_k_samples,
               error_inputs=_top_k_errors),
        OpInfo(prims.nonzero.default, _nonzero_ref, ALL, _nonzero_samples,
               skips={"meta": "the output shape depends on the data (the meta function "
                              "raises NotImplementedError by design)",
                      "lowering": "data-dependent output shape: runs eagerly, never traced"}),
        OpInfo(prims.fft_c2c.default, _c2c_ref, COMPLEX, _c2c_samples,
               tols={D.complex64: (1e-5, 1e-4)}),
        OpInfo(prims.fft_r2c.default, _r2c_ref, (D.float32, D.float64), _r2c_samples,
               tols={D.float32: (1e-5, 1e-4), D.complex64: (1e-5, 1e-4)}),
        OpInfo(prims.fft_c2r.default, _c2r_ref, COMPLEX, _c2r_samples,
               tols={D.complex64: (1e-5, 1e-4), D.float32: (1e-5, 1e-4)}),
        OpInfo(prims.random_bits.default, _shape_only(lambda kw: D.int64), (D.int64,),
               _random_bits_samples, nondeterministic=True,
               error_inputs=_key_errors("random_bits", [2])),
        OpInfo(prims.uniform.default, _shape_only(lambda kw: kw["dtype"]), RNG_DTYPES,
               _sampler_samples, nondeterministic=True,
               error_inputs=_key_errors("uniform", [2], 0.0, 1.0, dtype=D.float32)),
        OpInfo(prims.normal.default, _shape_only(lambda kw: kw["dtype"]), RNG_DTYPES,
               _sampler_samples, nondeterministic=True,
               error_inputs=_key_errors("normal", [2], 0.0, 1.0, dtype=D.float32)),
        OpInfo(prims.split_key.default, lambda key, num: np.zeros((num, 2), np.int64),
               (D.int64,), _split_key_samples, nondeterministic=True,
               error_inputs=_key_errors("split_key", 2)),
    ]
    return e


register(*_elementwise_entries(), *_entries())
