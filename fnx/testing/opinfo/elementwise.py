"""OpInfo entries for the pointwise ops (fnx/ir/aten/elementwise.py), table-driven.

Each row names the op, its NumPy reference, its dtypes and what its samples need (a
domain, non-zero integer divisors, ...).  Samples cover 0-dim, empty, broadcasting,
non-contiguous (strided and transposed) inputs, Python-scalar operands, mixed dtypes,
and for floating dtypes the extremal values (NaN, +-inf, -0.0, division by zero).  The
in-place and ``out=`` variants are derived from these entries (fnx.testing.variant_entries).
"""
from __future__ import annotations

import numpy as np
import scipy.special as sp

import fnx

from ...core import dtype as D
from ...ir.aten import elementwise as E
from ..database import (ALL_DTYPES, FLOATS, INTS, ErrorInput, OpInfo, SampleInput, make_tensor,
                        register)
from ..reference_dtypes import DEFAULT, INT_TO_FLOAT, category, pointwise, result_dtype

NUMERIC = FLOATS + INTS
INTEGRAL = INTS + (D.bool,)
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5]
SPECIAL_OTHER = [1.0, 0.0, -0.0, np.nan, 2.0, np.inf, -np.inf, 0.0, -1.5, 3.0]


def _special(dtype, device, values=SPECIAL):
    t = fnx.from_numpy(np.array(values, np.float64).astype(dtype.numpy))
    return t if str(device) == "cpu" else t.to(device)


def _is_float(dtype):
    return dtype.is_floating_point or dtype.is_complex


# --------------------------------------------------------------------------- references

def _sign(a):
    if a.dtype == np.bool_:
        return a.copy()
    # PyTorch's sign is (0 < a) - (a < 0): NaN gives 0 (NumPy's sign gives NaN)
    return ((a > 0).astype(a.dtype) - (a < 0).astype(a.dtype)).astype(a.dtype)


def _keep_int(fn):
    """ceil/floor/round/trunc: integers pass through unchanged."""
    def f(a):
        return a.copy() if a.dtype.kind in "iu" else fn(a)
    return f


def _frac(a):
    return a - np.trunc(a)


def _shift_amounts(a, b):
    """PyTorch shifts every bit out for an amount < 0 or >= the bit width."""
    b = np.asarray(b).astype(np.int64)
    out_of_range = (b < 0) | (b >= 8 * a.dtype.itemsize)
    return out_of_range, np.where(out_of_range, 0, b)


def _shift_left(a, b):
    gone, s = _shift_amounts(a, b)
    # in Python integers (exact), then wrapped to the dtype's width
    exact = np.vectorize(lambda x, k: int(x) << int(k), otypes=[object])(a, s)
    wrapped = np.vectorize(lambda v: v & ((1 << 8 * a.dtype.itemsize) - 1),
                           otypes=[object])(exact).astype(np.uint64)
    r = wrapped.astype(np.dtype(f"u{a.dtype.itemsize}")).view(a.dtype)
    return np.where(gone, 0, r).astype(a.dtype)


def _shift_right(a, b):
    gone, s = _shift_amounts(a, b)
    # floor division by 2**s is the arithmetic shift of signed and the logical of unsigned
    r = np.vectorize(lambda x, k: int(x) // (1 << int(k)), otypes=[object])(a, s)
    sign = np.where(np.asarray(a) < 0, -1, 0)
    return np.where(gone, sign, r).astype(a.dtype)


def _signbit(a):
    if a.dtype.kind == "f":
        return np.signbit(a)
    return a < 0 if a.dtype.kind == "i" else np.zeros(a.shape, bool)


def _rsqrt(a):
    return 1.0 / np.sqrt(a)


def _relu(a):
    return np.where(np.isnan(a), a, np.where(a > 0, a, 0)).astype(a.dtype) \
        if a.dtype.kind == "f" else np.where(a > 0, a, 0).astype(a.dtype)


def _square(a):
    return a * a


def _square_ref(a):
    # PyTorch's square is pow(a, 2): a bool tensor squares to int64 (tensor-scalar promotion)
    return pointwise(lambda x, _: x * x)(a, 2)


def _int_trunc_div(a, b):
    q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    return (np.sign(a.astype(np.int64)) * np.sign(b.astype(np.int64)) * q).astype(a.dtype)


def _float_floor_div(a, b):
    """PyTorch's floor division of floats (Python's algorithm: via fmod, exact)."""
    mod = np.fmod(a, b)
    div = (a - mod) / b
    div = np.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    fl = np.floor(div)
    fl = np.where(div - fl > 0.5, fl + 1, fl)
    res = np.where(div != 0, fl, np.copysign(0.0, a / b))
    return np.where(b == 0, a / b, res)


def _floor_div(a, b):
    if a.dtype.kind in "iu":
        return np.floor_divide(a, b)
    return _float_floor_div(a, b)


def _div_mode_ref(a, b, *, rounding_mode=None):
    """div with a rounding mode; ``None`` is true division (integers give floats)."""
    if rounding_mode is None:
        return pointwise(np.true_divide, INT_TO_FLOAT)(a, b)
    return pointwise(_div_mode, DEFAULT)(a, b, rounding_mode=rounding_mode)


def _div_mode(a, b, rounding_mode=None):
    if rounding_mode is None:
        return np.true_divide(a, b)
    if rounding_mode == "trunc":
        return _int_trunc_div(a, b) if a.dtype.kind in "iu" else np.trunc(a / b)
    return _floor_div(a, b)


def _remainder(a, b):
    if a.dtype.kind in "iu":
        return a - _floor_div(a, b) * b
    mod = np.fmod(a, b)
    return np.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)


def _pow(a, b):
    if a.dtype.kind in "iu":
        b = np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape))
        a = np.broadcast_to(a, b.shape)
        pos = np.power(a, np.where(b < 0, 0, b))
        # integer powers with a negative exponent: 1 -> 1, -1 -> +-1, anything else 0
        neg = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 != 0, -1, 1), 0))
        return np.where(b < 0, neg, pos).astype(a.dtype)
    return np.power(a, b)


def _add(a, b, alpha=1):
    if a.dtype == np.bool_:
        return np.logical_or(a, np.logical_and(b, bool(alpha)))
    return a + b * np.asarray(alpha).astype(a.dtype) if alpha != 1 else a + b


def _sub(a, b, alpha=1):
    return a - b * np.asarray(alpha).astype(a.dtype) if alpha != 1 else a - b


def _rsub(a, b, alpha=1):
    return _sub(b, a, alpha)


def _mul(a, b):
    return np.logical_and(a, b) if a.dtype == np.bool_ else a * b


def _max(a, b):
    return np.maximum(a, b)


def _min(a, b):
    return np.minimum(a, b)


# name -> (NumPy function, dtypes, sample options)
UNARY = {
    "abs": (np.abs, NUMERIC, {}), "neg": (np.negative, NUMERIC, {}),
    "sign": (_sign, ALL_DTYPES, {}),
    "acos": (np.arccos, ALL_DTYPES, {"domain": (-1, 1)}),
    "acosh": (np.arccosh, ALL_DTYPES, {"domain": (1, 9)}),
    "asin": (np.arcsin, ALL_DTYPES, {"domain": (-1, 1)}),
    "asinh": (np.arcsinh, ALL_DTYPES, {}), "atan": (np.arctan, ALL_DTYPES, {}),
    "atanh": (np.arctanh, ALL_DTYPES, {"domain": (-1, 1)}),
    "cos": (np.cos, ALL_DTYPES, {}), "cosh": (np.cosh, ALL_DTYPES, {}),
    "sin": (np.sin, ALL_DTYPES, {}), "sinh": (np.sinh, ALL_DTYPES, {}),
    "tan": (np.tan, ALL_DTYPES, {}), "tanh": (np.tanh, ALL_DTYPES, {}),
    "erf": (sp.erf, ALL_DTYPES, {}), "exp": (np.exp, ALL_DTYPES, {}),
    "expm1": (np.expm1, ALL_DTYPES, {}), "log": (np.log, ALL_DTYPES, {}),
    "log10": (np.log10, ALL_DTYPES, {}), "log1p": (np.log1p, ALL_DTYPES, {}),
    "log2": (np.log2, ALL_DTYPES, {}), "reciprocal": (np.reciprocal, ALL_DTYPES, {}),
    "rsqrt": (_rsqrt, ALL_DTYPES, {}), "sqrt": (np.sqrt, ALL_DTYPES, {}),
    "sigmoid": (sp.expit, ALL_DTYPES, {}), "exp2": (np.exp2, ALL_DTYPES, {}),
    "erfinv": (sp.erfinv, ALL_DTYPES, {"domain": (-1, 1)}),
    "ceil": (_keep_int(np.ceil), NUMERIC, {}), "floor": (_keep_int(np.floor), NUMERIC, {}),
    "round": (_keep_int(np.round), NUMERIC, {}), "trunc": (_keep_int(np.trunc), NUMERIC, {}),
    "frac": (_frac, FLOATS, {}), "relu": (_relu, NUMERIC, {}),
    "bitwise_not": (np.invert, INTEGRAL, {}),
    "isnan": (np.isnan, ALL_DTYPES, {}), "isinf": (np.isinf, ALL_DTYPES, {}),
    "isfinite": (np.isfinite, ALL_DTYPES, {}), "logical_not": (np.logical_not, ALL_DTYPES, {}),
    "signbit": (_signbit, ALL_DTYPES, {}), "square": (_square, ALL_DTYPES, {}),
}

_INT_DIVISOR = {"div_mode", "floor_divide", "remainder", "fmod"}

# name -> (NumPy function, dtypes, sample options)
BINARY = {
    "add": (_add, ALL_DTYPES, {"alpha": True}), "sub": (_sub, NUMERIC, {"alpha": True}),
    "rsub": (_rsub, NUMERIC, {"alpha": True}), "mul": (_mul, ALL_DTYPES, {}),
    "div": (np.true_divide, ALL_DTYPES, {}),
    "div_mode": (_div_mode, NUMERIC, {"nonzero": True}),
    "floor_divide": (_floor_div, NUMERIC, {"nonzero": True}),
    "remainder": (_remainder, NUMERIC, {"nonzero": True}),
    "fmod": (np.fmod, NUMERIC, {"nonzero": True}),
    "pow": (_pow, NUMERIC, {"pow": True}), "atan2": (np.arctan2, ALL_DTYPES, {}),
    "maximum": (_max, ALL_DTYPES, {}), "minimum": (_min, ALL_DTYPES, {}),
    "bitwise_and": (np.bitwise_and, INTEGRAL, {"bitwise": True}),
    "bitwise_or": (np.bitwise_or, INTEGRAL, {"bitwise": True}),
    "bitwise_xor": (np.bitwise_xor, INTEGRAL, {"bitwise": True}),
    "bitwise_left_shift": (_shift_left, INTS, {"shift": True}),
    "bitwise_right_shift": (_shift_right, INTS, {"shift": True}),
    "logical_and": (np.logical_and, ALL_DTYPES, {}),
    "logical_or": (np.logical_or, ALL_DTYPES, {}),
    "logical_xor": (np.logical_xor, ALL_DTYPES, {}),
    "eq": (np.equal, ALL_DTYPES, {}), "ne": (np.not_equal, ALL_DTYPES, {}),
    "lt": (np.less, ALL_DTYPES, {}), "le": (np.less_equal, ALL_DTYPES, {}),
    "gt": (np.greater, ALL_DTYPES, {}), "ge": (np.greater_equal, ALL_DTYPES, {}),
}

# Known failures, as data: entry name -> [Known, ...]; the keys "inplace" and "out" of
# VARIANT_KNOWN hold those of the derived variants.
KNOWN: dict = {}          # entry name -> [Known, ...]
VARIANT_KNOWN: dict = {}  # entry name -> {"inplace" | "out": [Known, ...]}


# --------------------------------------------------------------------------- samples

def _unary_samples(opts):
    lo, hi = opts.get("domain", (None, None))

    def samples(info, device, dtype):
        def mk(shape, **kw):
            return make_tensor(shape, dtype, device, low=lo, high=hi, **kw)
        yield SampleInput(mk((3, 4)))
        yield SampleInput(mk(()))
        yield SampleInput(mk((0, 3)))
        yield SampleInput(mk((2, 3), noncontiguous=True))
        yield SampleInput(mk((4, 3)).t())
        if _is_float(dtype):
            yield SampleInput(_special(dtype, device))
    return samples


def _scalar_for(dtype, opts, which=0):
    """A Python number for ``dtype``'s samples: the same kind, or the other kind (which=1)."""
    if opts.get("bitwise"):
        return True if dtype is D.bool else (3, 5)[which]
    if opts.get("shift"):
        return (3, 9)[which]         # 9 shifts all of an 8-bit value out
    if opts.get("pow"):
        return (2, 0.5)[which] if not _is_float(dtype) else (3, -1.5)[which]
    if dtype is D.bool:
        return (True, 2)[which]
    if _is_float(dtype):
        return (2.5, 3)[which] if not opts.get("nonzero") else (-2.5, 3)[which]
    if dtype is D.uint8:
        return (3, 1.5)[which]
    return (-3, 1.5)[which]


def _mixed_dtype(dtype, opts):
    """A second dtype for a mixed-dtype sample (promotion across categories)."""
    if opts.get("bitwise"):
        return D.bool if dtype is not D.bool else D.int32
    if opts.get("shift"):
        return D.int64 if dtype is not D.int64 else D.int8
    if dtype is D.bool:
        return D.int64
    if _is_float(dtype):
        return D.int64 if dtype is not D.float64 else D.float32
    return D.float32


def _binary_tensor_samples(opts):
    nonzero = opts.get("nonzero", False)
    is_pow = opts.get("pow", False)

    def samples(info, device, dtype):
        def a(shape, d=dtype, **kw):
            if is_pow:
                lo, hi = (-3, 3) if _is_float(d) else (-2, 3)
                return make_tensor(shape, d, device, low=lo, high=hi, **kw)
            return make_tensor(shape, d, device, **kw)

        def b(shape, d=dtype, **kw):
            if is_pow:
                lo, hi = (-3, 3) if _is_float(d) else (0, 4)
                return make_tensor(shape, d, device, low=lo, high=hi, **kw)
            return make_tensor(shape, d, device, exclude_zero=nonzero and not _is_float(d),
                               **kw)
        yield SampleInput(a((3, 4)), b((3, 4)))
        yield SampleInput(a((3, 1)), b((1, 4)))
        yield SampleInput(a((2, 3, 4)), b((4,)))
        yield SampleInput(a(()), b(()))
        yield SampleInput(a((3, 4)), b(()))
        yield SampleInput(a((0, 3)), b((3,)))
        yield SampleInput(a((3, 4), noncontiguous=True), b((4, 3)).t())
        yield SampleInput(a((2, 3)), _scalar_for(dtype, opts, 0))
        yield SampleInput(a((2, 3)), _scalar_for(dtype, opts, 1))
        yield SampleInput(a((2, 3)), b((2, 3), _mixed_dtype(dtype, opts)))
        if opts.get("shift"):
            # amounts past the width of every dtype, and a signed dtype's negative amounts
            amounts = [0, 1, 7, 8, 15, 16, 31, 32, 63, 64, 70] + ([-1] if dtype.is_signed else [])
            yield SampleInput(a((len(amounts),)), fnx.tensor(amounts, dtype=dtype)
                              if dtype in (D.int64, D.int32) else
                              fnx.tensor([min(v, 127) for v in amounts], dtype=dtype))
        if is_pow and dtype.is_signed and not _is_float(dtype):
            # integer powers with negative exponents: 1, -1 and 0 for anything else
            yield SampleInput(a((4, 5)), make_tensor((4, 5), dtype, device, low=-3, high=3))
        if _is_float(dtype):
            yield SampleInput(_special(dtype, device), _special(dtype, device, SPECIAL_OTHER))
    return samples


def _binary_scalar_samples(opts):
    nonzero = opts.get("nonzero", False)

    def samples(info, device, dtype):
        lo, hi = ((-3, 3) if _is_float(dtype) else (-2, 3)) if opts.get("pow") else \
            (None, None)

        def a(shape, **kw):
            return make_tensor(shape, dtype, device, low=lo, high=hi, **kw)
        s0, s1 = _scalar_for(dtype, opts, 0), _scalar_for(dtype, opts, 1)
        yield SampleInput(a((3, 4)), s0)
        yield SampleInput(a(()), s0)
        yield SampleInput(a((0, 3)), s0)
        yield SampleInput(a((2, 3), noncontiguous=True), s1)
        yield SampleInput(a((4, 3)).t(), s1)
        if _is_float(dtype):
            yield SampleInput(_special(dtype, device), 0.0 if not nonzero else -0.0)
            yield SampleInput(_special(dtype, device), float("inf"))
    return samples


def _with_kwargs(samples_fn, variants):
    """Cycle keyword arguments (``alpha=``, ``rounding_mode=``) over the samples."""
    def samples(info, device, dtype):
        for i, s in enumerate(samples_fn(info, device, dtype)):
            kw = variants(dtype)[i % len(variants(dtype))]
            yield SampleInput(s.input, *s.args, **{**s.kwargs, **kw})
    return samples


def _alpha_kwargs(dtype):
    if dtype is D.bool:
        return [{}]
    return [{}, {"alpha": 2}] if not _is_float(dtype) else [{}, {"alpha": 0.5}, {"alpha": 2}]


def _mode_kwargs(dtype):
    return [{"rounding_mode": "floor"}, {"rounding_mode": "trunc"}, {"rounding_mode": None}]


# --------------------------------------------------------------------------- error inputs

def _errors_for(name, overload):
    def errors(info, device):
        f = make_tensor((2, 3), D.float32, device)
        i = make_tensor((2, 3), D.int64, device)
        bo = make_tensor((2, 3), D.bool, device)
        scalar = overload in ("Scalar", "Scalar_mode", "Tensor_Scalar")
        if overload in ("Tensor", "default", "Tensor_mode", "Tensor_Tensor") and \
                name not in UNARY:
            d = D.int64 if name.startswith("bitwise") else D.float32
            kw = {"rounding_mode": "trunc"} if overload == "Tensor_mode" else {}
            yield ErrorInput(SampleInput(make_tensor((2, 3), d, device),
                                         make_tensor((3, 2), d, device), **kw),
                             RuntimeError, r"size of tensor a \(3\) must match the size of "
                             r"tensor b \(2\)|must match the size")
        if name in ("sub", "rsub"):
            yield ErrorInput(SampleInput(bo, True if scalar else bo), RuntimeError,
                             "Subtraction, the `-` operator, with (two )?bool tensors? is not "
                             "supported")
        if name == "neg":
            yield ErrorInput(SampleInput(bo), RuntimeError,
                             "Negation, the `-` operator, on a bool tensor is not supported")
        if name.startswith("bitwise") and name != "bitwise_not":
            # (a dispatch error in the kernel: PyTorch's meta functions accept floats)
            yield ErrorInput(SampleInput(f, 1 if scalar else f), RuntimeError,
                             "not implemented for 'Float'", meta=False)
        if name == "bitwise_not":
            yield ErrorInput(SampleInput(f), RuntimeError, "not implemented for 'Float'",
                             meta=False)
        if name in ("floor_divide", "remainder", "fmod") or \
                (name == "div" and "mode" in overload):
            kw = {"rounding_mode": "floor"} if name == "div" else {}
            zero = 0 if scalar else make_tensor((2, 3), D.int64, device, low=0, high=1)
            yield ErrorInput(SampleInput(i, zero, **kw), RuntimeError, "ZeroDivisionError",
                             meta=False)
        if name == "div" and "mode" in overload:
            yield ErrorInput(SampleInput(f, 2 if scalar else f, rounding_mode="bad"),
                             RuntimeError, "rounding_mode")
        if name == "pow" and overload == "Tensor_Scalar":
            yield ErrorInput(SampleInput(i, -2), RuntimeError,
                             "Integers to negative integer powers are not allowed")
        if name == "frac":
            yield ErrorInput(SampleInput(i), RuntimeError, "not implemented for 'Long'",
                             meta=False)
        if name in ("ceil", "floor", "round", "trunc", "abs"):
            yield ErrorInput(SampleInput(bo), RuntimeError, "not implemented for 'Bool'",
                             meta=False)
    return errors


_HAS_ERRORS = {"add", "sub", "rsub", "mul", "div", "floor_divide", "remainder", "fmod", "pow",
               "atan2", "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor",
               "logical_and", "logical_or", "logical_xor", "eq", "ne", "lt", "le", "gt", "ge",
               "neg", "bitwise_not", "frac", "ceil", "floor", "round", "trunc", "abs",
               "bitwise_left_shift", "bitwise_right_shift"}


# --------------------------------------------------------------------------- entries

def _entry(op, fn, kind, dtypes, samples, errors=None, known=(), **kw):
    n = 1 if op.name in UNARY else 2
    if errors is not None and not list(errors(None, "cpu")):
        errors = None
    ref = {_div_mode: _div_mode_ref, _square: _square_ref}.get(fn) or pointwise(fn, kind, n=n)
    name = f"{op.name}.{op.overload_name}"
    return OpInfo(op, ref, dtypes, samples, error_inputs=errors,
                  known_failures=list(known) + KNOWN.get(name, []),
                  variant_known=VARIANT_KNOWN.get(name), **kw)


def _build():
    out = []
    for op in E.VARIANTS:
        if op.name in UNARY:
            fn, dtypes, opts = UNARY[op.name]
            out.append(_entry(op, fn, op.promotion, dtypes, _unary_samples(opts),
                              _errors_for(op.name, "default") if op.name in _HAS_ERRORS
                              else None))
            continue
        key = "div_mode" if op.name == "div" and "mode" in op.overload_name else op.name
        if key not in BINARY:
            continue
        fn, dtypes, opts = BINARY[key]
        scalar = op.overload_name in ("Scalar", "Scalar_mode", "Tensor_Scalar")
        samples = (_binary_scalar_samples if scalar else _binary_tensor_samples)(opts)
        if opts.get("alpha"):
            samples = _with_kwargs(samples, _alpha_kwargs)
        if key == "div_mode":
            samples = _with_kwargs(samples, _mode_kwargs)
        out.append(_entry(op, fn, op.promotion, dtypes, samples,
                          _errors_for(op.name, op.overload_name)
                          if op.name in _HAS_ERRORS else None))
    return out


# pow.Scalar: a Python number to the power of a tensor
def _pow_scalar_samples(info, device, dtype):
    lo, hi = (-3, 3) if _is_float(dtype) else (0, 4)
    base = (2.0, 3) if _is_float(dtype) else (2, 1.5)
    yield SampleInput(base[0], make_tensor((3, 4), dtype, device, low=lo, high=hi))
    yield SampleInput(base[1], make_tensor((), dtype, device, low=lo, high=hi))
    yield SampleInput(base[0], make_tensor((0, 2), dtype, device, low=lo, high=hi))
    yield SampleInput(base[1], make_tensor((4, 3), dtype, device, low=lo, high=hi).t())
    if _is_float(dtype):
        yield SampleInput(0.0, _special(dtype, device))
        yield SampleInput(-2.0, _special(dtype, device))


def _round_decimals_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device), decimals=1)
    yield SampleInput(make_tensor((), dtype, device), decimals=0)
    yield SampleInput(make_tensor((0, 3), dtype, device), decimals=2)
    yield SampleInput(make_tensor((2, 3), dtype, device, low=-200, high=200,
                                  noncontiguous=True), decimals=-1)
    yield SampleInput(make_tensor((4, 3), dtype, device).t(), decimals=2)
    yield SampleInput(_special(dtype, device), decimals=1)


def _round_decimals_ref(a, *, decimals):
    # PyTorch computes in the op math type (float32 for half types): the same here
    work = np.float64 if a.dtype == np.float64 else np.float32
    return np.round(a.astype(work), decimals).astype(a.dtype)


def _where_samples(info, device, dtype):
    def c(shape):
        return make_tensor(shape, D.bool, device)

    def t(shape, d=dtype, **kw):
        return make_tensor(shape, d, device, **kw)
    yield SampleInput(c((3, 4)), t((3, 4)), t((3, 4)))
    yield SampleInput(c((3, 1)), t((1, 4)), t(()))
    yield SampleInput(c(()), t(()), t(()))
    yield SampleInput(c((0, 3)), t((3,)), t((0, 1)))
    yield SampleInput(c((4, 3)).t(), t((3, 4), noncontiguous=True), t((3, 4)))
    yield SampleInput(c((2, 3)), t((2, 3)), t((2, 3), _mixed_dtype(dtype, {})))
    if _is_float(dtype):
        yield SampleInput(c((10,)), _special(dtype, device),
                          _special(dtype, device, SPECIAL_OTHER))


def _where_ref(cond, a, b):
    d = result_dtype(a, b)
    return np.where(cond, np.asarray(a).astype(d), np.asarray(b).astype(d))


def _where_errors(info, device):
    x = make_tensor((2, 3), D.float32, device)
    yield ErrorInput(SampleInput(make_tensor((2, 3), D.float32, device), x, x), RuntimeError,
                     "where expected condition to be a boolean tensor")
    yield ErrorInput(SampleInput(make_tensor((2, 3), D.bool, device), x,
                                 make_tensor((4,), D.float32, device)), RuntimeError,
                     "must match the size")


def _clamp_ref(a, min=None, max=None):
    d = result_dtype(a, min, max)
    work = np.float64 if category(d) == 2 else d
    r = np.asarray(a).astype(d).astype(work)
    with np.errstate(invalid="ignore"):
        if min is not None:
            r = np.maximum(r, np.asarray(min).astype(d).astype(work))
        if max is not None:
            r = np.minimum(r, np.asarray(max).astype(d).astype(work))
    return r.astype(d)


def _clamp_samples(info, device, dtype):
    def t(shape, **kw):
        return make_tensor(shape, dtype, device, **kw)
    lo, hi = (-2, 3) if dtype is not D.uint8 else (2, 6)
    yield SampleInput(t((3, 4)), lo, hi)
    yield SampleInput(t(()), lo)
    yield SampleInput(t((0, 3)), None, hi)
    yield SampleInput(t((2, 3), noncontiguous=True), hi, lo)      # min > max: all max
    yield SampleInput(t((4, 3)).t(), 0.5, 4.5)                    # float bounds promote ints
    yield SampleInput(t((2, 3)), max=hi)
    if _is_float(dtype):
        yield SampleInput(_special(dtype, device), -1.0, 1.0)


def _clamp_tensor_samples(info, device, dtype):
    def t(shape, d=dtype, low=None, high=None, **kw):
        return make_tensor(shape, d, device, low=low, high=high, **kw)
    lo_hi = (0, 5) if dtype is D.uint8 else (-5, 0)
    yield SampleInput(t((3, 4)), t((3, 4), low=lo_hi[0], high=lo_hi[1]), t((3, 4), low=5))
    yield SampleInput(t((3, 4)), t((4,), low=lo_hi[0], high=lo_hi[1]), None)
    yield SampleInput(t((3, 4)), None, t((3, 1)))
    yield SampleInput(t(()), t(()), t(()))
    yield SampleInput(t((0, 3)), t((3,)), t((1, 3)))
    yield SampleInput(t((4, 3)).t(), t((3, 4), noncontiguous=True), None)
    yield SampleInput(t((2, 3)), t((2, 3), _mixed_dtype(dtype, {})), None)
    if _is_float(dtype):
        yield SampleInput(_special(dtype, device), _special(dtype, device, [-1.0] * 10),
                          _special(dtype, device, [1.0] * 10))


def _clamp_errors(info, device):
    x = make_tensor((2, 3), D.float32, device)
    yield ErrorInput(SampleInput(x), RuntimeError,
                     "At least one of 'min' or 'max' must not be None")


def _clamp_tensor_errors(info, device):
    x = make_tensor((2, 3), D.float32, device)
    yield ErrorInput(SampleInput(x), RuntimeError,
                     "At least one of 'min' or 'max' must not be None")
    yield ErrorInput(SampleInput(x, make_tensor((4,), D.float32, device)), RuntimeError,
                     "must match the size")


def _extra():
    return [
        OpInfo(E.pow_Scalar, pointwise(_pow, DEFAULT, n=2), NUMERIC, _pow_scalar_samples),
        OpInfo(E.round_decimals, _round_decimals_ref, FLOATS, _round_decimals_samples),
        OpInfo(E.where_self, _where_ref, ALL_DTYPES, _where_samples,
               error_inputs=_where_errors),
        OpInfo(E.clamp, _clamp_ref, NUMERIC, _clamp_samples, error_inputs=_clamp_errors),
        OpInfo(E.clamp_Tensor, _clamp_ref, NUMERIC, _clamp_tensor_samples,
               error_inputs=_clamp_tensor_errors),
    ]


register(*_build(), *_extra())
