"""OpInfo entries of the elementwise prims (fnx/ir/prims/elementwise.py).

The references compute element by element with Python's float64 ``math`` and ``cmath``
and Python ints (the kernels call NumPy/SciPy ufuncs), and spell out lax's semantics
where ``math`` raises or differs: IEEE infinities at poles and on overflow, NaN outside a
domain, C's truncating integer division and fmod, round half to even, ``sign`` keeping
-0.0 and NaN, two's-complement wrap-around for integers. The result is rounded once to
the prim's result dtype.
"""
from __future__ import annotations

import builtins
import cmath
import math

import numpy as np

import fnx

from ....core import dtype as D
from ....ir import prims as P
from ...database import FLOATS, INTS, ErrorInput, OpInfo, SampleInput, make_tensor, register
from ._common import (ALL, ALLC, COMPLEX, SPECIAL, SPECIAL_OTHER, dtypes_of, from_py, is_float,
                      py_values, tensor)

_NAN, _INF = math.nan, math.inf


# --------------------------------------------------------------------------- element by element

def _pointwise(fn, rule="same", with_dtype=False):
    """The reference of an elementwise prim: ``fn`` on each element's Python value (and the
    NumPy dtype when ``with_dtype``), rounded once to the result dtype of ``rule``: "same",
    "bool" or "real" (a complex input gives its float type)."""
    def ref(*arrays):
        d = arrays[0].dtype
        extra = (d,) if with_dtype else ()
        out = [fn(*xs, *extra) for xs in zip(*(py_values(a) for a in arrays))]
        if rule == "bool":
            d = np.dtype(np.bool_)
        elif rule == "real" and d.kind == "c":
            d = np.dtype(np.float32 if d == np.complex64 else np.float64)
        return from_py(out, d, arrays[0].shape)
    return ref


def _ieee(fn, domain=lambda x: _NAN, overflow=lambda x: _INF):
    """``fn`` of a float with IEEE results where ``math`` raises: ``domain(x)`` (a pole's
    infinity, or NaN) and ``overflow(x)`` (an infinity)."""
    def f(x):
        try:
            return fn(x)
        except ValueError:
            return domain(x)
        except OverflowError:
            return overflow(x)
    return f


def _cplx(fn):
    """``fn`` of a complex (``cmath``); NaN where cmath raises."""
    def f(z):
        try:
            return fn(z)
        except (ValueError, OverflowError, ZeroDivisionError):
            return complex(_NAN, _NAN)
    return f


def _fc(real_fn, complex_fn):
    """A prim on floats and complex numbers: ``math`` for one, ``cmath`` for the other."""
    real_fn, complex_fn = _ieee(real_fn), _cplx(complex_fn)
    return lambda x: complex_fn(x) if isinstance(x, complex) else real_fn(x)


def _neg_inf_at(pole):
    return lambda x: -_INF if x == pole else _NAN


# --------------------------------------------------------------------------- unary references

def _abs(x):
    if isinstance(x, complex):
        return math.hypot(x.real, x.imag)
    return math.fabs(x) if isinstance(x, float) else builtins.abs(x)


def _sign(x):
    """lax.sign: -1/0/1, keeping -0.0 and NaN; z / |z| for complex (0 at 0)."""
    if isinstance(x, complex):
        return 0j if x == 0 else x / math.hypot(x.real, x.imag)
    if isinstance(x, float):
        return x if x == 0 or x != x else math.copysign(1.0, x)
    return (x > 0) - (x < 0)


def _on_finite(fn):
    """floor/ceil/trunc/round: non-finite values unchanged, a zero result keeps the input's
    sign (IEEE: ceil(-0.5) = -0.0)."""
    def f(x):
        if not math.isfinite(x):
            return x
        return math.copysign(float(fn(x)), x)
    return f


def _reciprocal(x):
    if x == 0:
        return complex(_NAN, _NAN) if isinstance(x, complex) else math.copysign(_INF, x)
    return 1 / x


def _rsqrt(x):
    if isinstance(x, complex):
        return _cplx(lambda z: 1 / cmath.sqrt(z))(x)
    if x == 0:
        return math.copysign(_INF, x)       # 1 / sqrt(-0.0) = 1 / -0.0
    return _ieee(lambda v: 1 / math.sqrt(v))(x)


def _erf_inv(y):
    """The inverse of math.erf by Newton's method: from 0 the iterates increase to the
    root monotonically (erf is concave on x > 0)."""
    if y != y or builtins.abs(y) > 1:
        return _NAN
    if builtins.abs(y) == 1:
        return math.copysign(_INF, y)
    t, x = builtins.abs(y), 0.0
    for _ in range(200):
        step = (math.erf(x) - t) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
        x -= step
        if builtins.abs(step) <= 1e-16 * builtins.max(x, 1.0):
            break
    return math.copysign(x, y)


def _digamma(x):
    """psi(x) by reflection (x < 0), the recurrence psi(x) = psi(x + 1) - 1 / x up to
    x >= 10, and the asymptotic series there; NaN at the poles 0, -1, -2, ... (lax)."""
    if x != x or x == -_INF or (x <= 0 and x == math.floor(x)):
        return _NAN
    if x == _INF:
        return _INF
    acc = 0.0
    if x < 0:
        acc, x = -math.pi / math.tan(math.pi * x), 1 - x
    while x < 10:
        acc, x = acc - 1 / x, x + 1
    w = 1 / (x * x)
    tail = w * (1 / 12 - w * (1 / 120 - w * (1 / 252 - w * (1 / 240 - w / 132))))
    return acc + math.log(x) - 0.5 / x - tail


def _log2(z):
    return cmath.log(z) / math.log(2)


def _exp2(x):
    if isinstance(x, complex):
        return _cplx(cmath.exp)(x * math.log(2))
    return _ieee(lambda v: 2.0 ** v)(x)


_LOG_POLE = _neg_inf_at(0)

UNARY_REFS = {
    P.abs: (_abs, "real"),
    P.neg: (lambda x: -x, "same"),
    P.sign: (_sign, "same"),
    P.exp: (_fc(math.exp, cmath.exp), "same"),
    P.exp2: (_exp2, "same"),
    P.expm1: (_fc(math.expm1, lambda z: cmath.exp(z) - 1), "same"),
    P.log: (_fc(_ieee(math.log, _LOG_POLE), cmath.log), "same"),
    P.log1p: (_fc(_ieee(math.log1p, _neg_inf_at(-1)), lambda z: cmath.log(1 + z)), "same"),
    P.log2: (_fc(_ieee(math.log2, _LOG_POLE), _log2), "same"),
    P.log10: (_fc(_ieee(math.log10, _LOG_POLE), cmath.log10), "same"),
    P.sin: (_fc(math.sin, cmath.sin), "same"),
    P.cos: (_fc(math.cos, cmath.cos), "same"),
    P.tan: (_fc(math.tan, cmath.tan), "same"),
    P.asin: (_fc(math.asin, cmath.asin), "same"),
    P.acos: (_fc(math.acos, cmath.acos), "same"),
    P.atan: (_fc(math.atan, cmath.atan), "same"),
    P.sinh: (_fc(_ieee(math.sinh, overflow=lambda x: math.copysign(_INF, x)), cmath.sinh),
             "same"),
    P.cosh: (_fc(math.cosh, cmath.cosh), "same"),
    P.tanh: (_fc(math.tanh, cmath.tanh), "same"),
    P.asinh: (_fc(math.asinh, cmath.asinh), "same"),
    P.acosh: (_fc(math.acosh, cmath.acosh), "same"),
    P.atanh: (_fc(_ieee(math.atanh, lambda x: math.copysign(_INF, x)
                        if builtins.abs(x) == 1 else _NAN), cmath.atanh), "same"),
    P.sqrt: (_fc(math.sqrt, cmath.sqrt), "same"),
    P.rsqrt: (_rsqrt, "same"),
    P.reciprocal: (_reciprocal, "same"),
    P.erf: (math.erf, "same"),
    P.erfc: (math.erfc, "same"),
    P.erf_inv: (_erf_inv, "same"),
    P.lgamma: (_ieee(math.lgamma, lambda x: _INF), "same"),     # log|gamma|, +inf at poles
    P.digamma: (_digamma, "same"),
    P.floor: (_on_finite(math.floor), "same"),
    P.ceil: (_on_finite(math.ceil), "same"),
    P.round: (_on_finite(builtins.round), "same"),     # Python rounds half to even
    P.trunc: (_on_finite(math.trunc), "same"),
    P.bitwise_not: (lambda x: not x if isinstance(x, bool) else ~x, "same"),
    P.conj: (lambda x: x.conjugate() if isinstance(x, complex) else x, "same"),
    P.signbit: (lambda x: math.copysign(1.0, x) < 0 if isinstance(x, float) else x < 0,
                "bool"),
    P.isfinite: (math.isfinite, "bool"),
    P.real: (lambda z: z.real, "real"),
    P.imag: (lambda z: z.imag, "real"),
}
UNARY_DOMAIN = {P.asin: (-1, 1), P.acos: (-1, 1), P.atanh: (-1, 1), P.erf_inv: (-1, 1),
                P.acosh: (1, 9)}


# --------------------------------------------------------------------------- binary references

def _trunc_div(a, b):
    """C's integer division: the quotient truncated toward zero."""
    q = builtins.abs(a) // builtins.abs(b)
    return q if (a < 0) == (b < 0) else -q


def _div(a, b):
    if isinstance(a, int):
        return _trunc_div(a, b)
    if b == 0 and not isinstance(b, complex):
        return _NAN if a == 0 or a != a else math.copysign(_INF, a) * math.copysign(1.0, b)
    return _cplx(lambda z: z / b)(a) if isinstance(a, complex) else a / b


def _rem(a, b):
    if isinstance(a, int):
        return a - _trunc_div(a, b) * b         # the sign of the dividend (C's %)
    return _ieee(lambda x: math.fmod(x, b))(a)


def _odd_integer(b):
    return b == math.floor(b) and math.fmod(b, 2) != 0 if math.isfinite(b) else False


def _pow(a, b):
    if isinstance(a, complex):
        return _cplx(lambda z: z ** b)(a)
    if isinstance(a, int):
        return a ** b
    sign = -1.0 if a < 0 and _odd_integer(b) else 1.0
    try:
        return math.pow(a, b)      # C99's pow for the special values (pow(nan, 0) = 1)
    except ValueError:             # 0 to a negative power: inf; a < 0 to a fraction: NaN
        return math.copysign(_INF, a if _odd_integer(b) else 1.0) if a == 0 else _NAN
    except OverflowError:
        return sign * _INF


def _extremum(pick, logical):
    """maximum/minimum: NaN wins (lax), bools are or/and."""
    def f(a, b):
        if isinstance(a, bool):
            return logical(a, b)
        if a != a or b != b:
            return _NAN
        return pick(a, b)
    return f


def _or_and(arith, logical):
    return lambda a, b: logical(a, b) if isinstance(a, bool) else arith(a, b)


def _bits(dtype):
    return np.dtype(dtype).itemsize * 8


def _shift_left(a, b, dtype):
    return 0 if b < 0 or b >= _bits(dtype) else a << b      # too far: every bit shifted out


def _shift_right_arithmetic(a, b, dtype):
    # on the two's-complement bits read as signed, also for unsigned dtypes (as XLA)
    n = _bits(dtype)
    if a >= 1 << (n - 1):
        a -= 1 << n
    return a >> (n - 1 if b < 0 or b >= n else b)


def _nextafter(a, b, dtype):
    """The next value of ``dtype`` from ``a`` toward ``b``: float64 through math.nextafter,
    narrower floats by stepping the sign-magnitude bit pattern read as an ordered integer."""
    if a != a or b != b:
        return _NAN
    if a == b:
        return b
    if dtype == np.float64:
        return math.nextafter(a, b)
    bits = np.dtype(f"u{dtype.itemsize}")
    sign = 1 << (8 * dtype.itemsize - 1)
    u = int(np.array(a, dtype).view(bits))
    key = -(u & ~sign) if u & sign else u          # -0.0 and +0.0 are both key 0
    key += 1 if b > a else -1
    if key == 0:
        return math.copysign(0.0, a)
    u = key if key > 0 else sign | -key
    return float(np.array(u, bits).view(dtype))


BINARY_REFS = {
    P.add: (_or_and(lambda a, b: a + b, lambda a, b: a or b), "same"),
    P.sub: (lambda a, b: a - b, "same"),
    P.mul: (_or_and(lambda a, b: a * b, lambda a, b: a and b), "same"),
    P.div: (_div, "same"),
    P.rem: (_rem, "same"),
    P.pow: (_pow, "same"),
    P.atan2: (math.atan2, "same"),
    P.maximum: (_extremum(builtins.max, lambda a, b: a or b), "same"),
    P.minimum: (_extremum(builtins.min, lambda a, b: a and b), "same"),
    P.bitwise_and: (lambda a, b: a & b, "same"),
    P.bitwise_or: (lambda a, b: a | b, "same"),
    P.bitwise_xor: (lambda a, b: a ^ b, "same"),
    P.shift_left: (_shift_left, "dtype"),
    P.shift_right_arithmetic: (_shift_right_arithmetic, "dtype"),
    P.nextafter: (_nextafter, "dtype"),
    P.eq: (lambda a, b: a == b, "bool"),
    P.ne: (lambda a, b: a != b, "bool"),
    P.lt: (lambda a, b: a < b, "bool"),
    P.le: (lambda a, b: a <= b, "bool"),
    P.gt: (lambda a, b: a > b, "bool"),
    P.ge: (lambda a, b: a >= b, "bool"),
}
_NONZERO_DIVISOR = {P.div, P.rem}
_SHIFTS = {P.shift_left, P.shift_right_arithmetic}


# --------------------------------------------------------------------------- samples, errors

def _unary_samples(op):
    lo, hi = UNARY_DOMAIN.get(op, (None, None))

    def samples(info, device, dtype):
        yield SampleInput(make_tensor((3, 4), dtype, device, low=lo, high=hi))
        yield SampleInput(make_tensor((), dtype, device, low=lo, high=hi))
        yield SampleInput(make_tensor((0, 3), dtype, device))
        yield SampleInput(make_tensor((4, 3), dtype, device, low=lo, high=hi).t())
        if is_float(dtype):
            yield SampleInput(tensor(SPECIAL, dtype, device))
    return samples


def _binary_samples(op):
    nonzero, shift = op in _NONZERO_DIVISOR, op in _SHIFTS

    def samples(info, device, dtype):
        integral = not dtype.is_floating_point and not dtype.is_complex

        def a(shape, **kw):
            if op is P.pow and integral:
                return make_tensor(shape, dtype, device, low=-2, high=3, **kw)
            return make_tensor(shape, dtype, device, **kw)

        def b(shape, **kw):
            if shift:
                return make_tensor(shape, dtype, device, low=0, high=dtype.itemsize * 8, **kw)
            if op is P.pow and integral:
                return make_tensor(shape, dtype, device, low=0, high=4, **kw)
            if op is P.pow and dtype.is_floating_point:
                return make_tensor(shape, dtype, device, low=-3, high=3, **kw)
            return make_tensor(shape, dtype, device,
                               exclude_zero=nonzero and not is_float(dtype), **kw)
        yield SampleInput(a((3, 4)), b((3, 4)))
        yield SampleInput(a(()), b(()))
        yield SampleInput(a((0, 3)), b((0, 3)))
        yield SampleInput(a((3, 4), noncontiguous=True), b((4, 3)).t())
        if shift:
            big = [0, dtype.itemsize * 8, 100, 1] if dtype is not D.uint8 else [0, 8, 100, 1]
            yield SampleInput(tensor([-5, 3, 7, 127] if dtype.is_signed else [5, 3, 7, 250],
                                     dtype, device), tensor(big, dtype, device))
        if is_float(dtype):
            yield SampleInput(tensor(SPECIAL, dtype, device),
                              tensor(SPECIAL_OTHER, dtype, device))
    return samples


def _elementwise_errors(op, n):
    name, cats = op.name, op.categories

    def errors(info, device):
        d = dtypes_of(cats)[0]
        other = next((x for x in ALLC if x.category not in cats), None)
        x = make_tensor((2, 3), d, device)
        if other is not None:
            bad = make_tensor((2, 3), other, device)
            yield ErrorInput(SampleInput(*([bad] * n)), RuntimeError,
                             f"prims.{name}: expected a .* tensor")
        if n == 1:      # a number for the first tensor: the call itself rejects it
            yield ErrorInput(SampleInput(2), TypeError, "must be Tensor, not int")
            return
        yield ErrorInput(SampleInput(x, 2), RuntimeError,
                         f"prims.{name}: expected a Tensor .* no Python scalars")
        yield ErrorInput(SampleInput(x, make_tensor((3,), d, device)), RuntimeError,
                         f"prims.{name}: shape mismatch")
        d2 = next(y for y in dtypes_of(cats) + ALL if y is not d and y.category == d.category)
        yield ErrorInput(SampleInput(x, make_tensor((2, 3), d2, device)), RuntimeError,
                         f"prims.{name}: dtype mismatch")
        if op in _NONZERO_DIVISOR:
            yield ErrorInput(SampleInput(make_tensor((2,), D.int64, device),
                                         tensor([1, 0], D.int64)),
                             RuntimeError, "ZeroDivisionError", meta=False)
        if op is P.pow:
            yield ErrorInput(SampleInput(make_tensor((2,), D.int64, device),
                                         tensor([1, -1], D.int64)),
                             RuntimeError, "Integers to negative integer powers are not allowed",
                             meta=False)
    return errors


def _elementwise_entries():
    out = []
    for op, (fn, rule) in UNARY_REFS.items():
        out.append(OpInfo(op, _pointwise(fn, rule), dtypes_of(op.categories),
                          _unary_samples(op), error_inputs=_elementwise_errors(op, 1)))
    for op, (fn, rule) in BINARY_REFS.items():
        ref = _pointwise(fn, with_dtype=True) if rule == "dtype" else _pointwise(fn, rule)
        tols = {D.complex64: (1e-5, 1e-5)} if op is P.pow else None
        if op is P.nextafter:
            tols = {d: (0.0, 0.0) for d in FLOATS}       # one ulp is all there is to see
        out.append(OpInfo(op, ref, dtypes_of(op.categories), _binary_samples(op),
                          error_inputs=_elementwise_errors(op, 2), tols=tols))
    return out


# --------------------------------------------------------------------------- complex, where, ...

def _complex_samples(info, device, dtype):
    for shape in ((3, 4), (), (0, 2)):
        yield SampleInput(make_tensor(shape, dtype, device), make_tensor(shape, dtype, device))
    yield SampleInput(tensor(SPECIAL, dtype, device), tensor(SPECIAL_OTHER, dtype, device))


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


def _where_ref(pred, a, b):
    out = b.copy()
    out[pred] = a[pred]
    return out


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
    if is_float(dtype):
        # out of range, NaN and inf saturate (XLA); NaN -> 0
        big = [np.nan, np.inf, -np.inf, 1e30, -1e30, 300.0, -300.0, 2.7, -2.7]
        for target in (D.int32, D.uint8, D.int8, D.bool, D.float16, D.float64):
            yield SampleInput(tensor(big, dtype, device), target)


def _convert_value(x, dtype):
    """One element converted as XLA does: complex to real drops the imaginary part,
    anything to bool is ``!= 0``, float to int truncates and saturates (NaN -> 0)."""
    if dtype is D.bool:
        return x != 0
    if isinstance(x, complex) and not dtype.is_complex:
        x = x.real
    if dtype.is_floating_point or dtype.is_complex:
        return x
    info = np.iinfo(dtype.numpy)
    if isinstance(x, float):
        return 0 if x != x else int(builtins.min(builtins.max(x, info.min), info.max))
    return int(x)          # wrapped by from_py


def _convert_ref(a, dtype):
    return from_py([_convert_value(x, dtype) for x in py_values(a)], dtype.numpy, a.shape)


def _device_put_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device), fnx.device("cpu"))
    yield SampleInput(make_tensor((), dtype, device), "cpu")
    yield SampleInput(make_tensor((4, 3), dtype, device).t(), "cpu")


def _stop_gradient_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device))
    yield SampleInput(make_tensor((), dtype, device))
    yield SampleInput(make_tensor((0, 2), dtype, device))


register(
    *_elementwise_entries(),
    OpInfo(P.complex, _complex_ref, (D.float32, D.float64), _complex_samples),
    OpInfo(P.where, _where_ref, ALLC, _where_samples, error_inputs=_where_errors),
    OpInfo(P.convert_element_type, _convert_ref, ALLC, _convert_samples),
    OpInfo(P.device_put, lambda a, device: a.copy(), ALL, _device_put_samples),
    OpInfo(P.stop_gradient, lambda a: a.copy(), ALLC, _stop_gradient_samples),
)
