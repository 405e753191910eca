"""PyTorch's type promotion and the pointwise ops' values.

Every expected dtype here is written out by hand from PyTorch's rules (c10's
promoteTypes table and TensorIterator's three-tier rule: dimensioned tensors, then
zero-dim tensors, then Python scalars, a lower tier only counting when it is of a
higher category); nothing is computed with fnx's own promotion code.  The second half
sweeps the pointwise ops of ``fnx/ir/aten/elementwise.py`` against NumPy/SciPy with
PyTorch's semantics (integer division and remainder signs, rounding modes, integer pow,
bitwise ops on bool) and checks PyTorch's errors.
"""
import math

import numpy as np
import pytest
import scipy.special as sp

import fnx
from fnx.ir.aten import elementwise as E

D = {"b": fnx.bool, "u1": fnx.uint8, "i1": fnx.int8, "i2": fnx.int16, "i4": fnx.int32,
     "i8": fnx.int64, "f2": fnx.float16, "bf": fnx.bfloat16, "f4": fnx.float32,
     "f8": fnx.float64, "c4": fnx.complex64, "c8": fnx.complex128}

# PyTorch's promote_types, all 144 pairs (row dtype with column dtype).
COLS = "b u1 i1 i2 i4 i8 f2 bf f4 f8 c4 c8".split()
PROMOTE_TABLE = """
b   b  u1 i1 i2 i4 i8 f2 bf f4 f8 c4 c8
u1  u1 u1 i2 i2 i4 i8 f2 bf f4 f8 c4 c8
i1  i1 i2 i1 i2 i4 i8 f2 bf f4 f8 c4 c8
i2  i2 i2 i2 i2 i4 i8 f2 bf f4 f8 c4 c8
i4  i4 i4 i4 i4 i4 i8 f2 bf f4 f8 c4 c8
i8  i8 i8 i8 i8 i8 i8 f2 bf f4 f8 c4 c8
f2  f2 f2 f2 f2 f2 f2 f2 f4 f4 f8 c4 c8
bf  bf bf bf bf bf bf f4 bf f4 f8 c4 c8
f4  f4 f4 f4 f4 f4 f4 f4 f4 f4 f8 c4 c8
f8  f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 c8 c8
c4  c4 c4 c4 c4 c4 c4 c4 c4 c4 c8 c4 c8
c8  c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8
"""
PAIRS = []
for _line in PROMOTE_TABLE.strip().splitlines():
    _row, *_cells = _line.split()
    PAIRS += [(_row, _col, _cell) for _col, _cell in zip(COLS, _cells)]


@pytest.mark.parametrize("a, b, expected", PAIRS, ids=[f"{a}+{b}" for a, b, _ in PAIRS])
def test_promote_types_table(a, b, expected):
    assert fnx.promote_types(D[a], D[b]) is D[expected]


@pytest.mark.parametrize("a, b, expected", [
    ("u1", "i1", "i2"), ("b", "f2", "f2"), ("b", "c8", "c8"), ("i8", "f2", "f2"),
    ("f2", "bf", "f4"), ("f8", "c4", "c8"), ("bf", "c4", "c4"), ("u1", "bf", "bf"),
    ("i4", "u1", "i4"), ("i8", "bf", "bf"),
])
def test_promote_types_highlights(a, b, expected):
    """The pairs people get wrong, spelled out once more."""
    assert fnx.promote_types(D[a], D[b]) is D[expected]
    assert fnx.promote_types(D[b], D[a]) is D[expected]


def t(values, dtype):
    return fnx.tensor(values, dtype=dtype)


def z(value, dtype):
    """A zero-dim tensor."""
    return fnx.tensor(value, dtype=dtype)


@pytest.mark.parametrize("operands, expected", [
    # dimensioned tensors only: promote_types
    (lambda: (t([1], fnx.uint8), t([1], fnx.int8)), fnx.int16),
    (lambda: (t([1], fnx.int32), t([1], fnx.float16)), fnx.float16),
    (lambda: (t([1], fnx.float16), t([1], fnx.bfloat16)), fnx.float32),
    (lambda: (t([1], fnx.bool), t([1], fnx.bool)), fnx.bool),
    # zero-dim tensors do not promote a dimensioned one within a category
    (lambda: (t([1], fnx.float16), z(1.0, fnx.float64)), fnx.float16),
    (lambda: (t([1], fnx.int32), z(1.0, fnx.float64)), fnx.float64),
    (lambda: (t([1], fnx.uint8), z(1, fnx.int64)), fnx.uint8),
    (lambda: (t([1], fnx.int8), z(1000, fnx.int64)), fnx.int8),
    (lambda: (t([1], fnx.bool), z(1, fnx.int64)), fnx.int64),
    (lambda: (t([1], fnx.int64), z(1, fnx.complex128)), fnx.complex128),
    (lambda: (t([1], fnx.float32), z(1, fnx.complex128)), fnx.complex64),
    (lambda: (t([1], fnx.float64), z(1, fnx.complex64)), fnx.complex128),
    # zero-dim tensors among themselves: promote_types
    (lambda: (z(1, fnx.int32), z(1.0, fnx.float16)), fnx.float16),
    (lambda: (z(1, fnx.uint8), z(1, fnx.int8)), fnx.int16),
    # Python scalars: int -> int64, float -> default float, complex -> default complex
    (lambda: (t([1, 2], fnx.int64), 2.5), fnx.float32),
    (lambda: (t([1, 2], fnx.int8), 1000), fnx.int8),
    (lambda: (t([1], fnx.uint8), -1), fnx.uint8),
    (lambda: (t([True], fnx.bool), 1), fnx.int64),
    (lambda: (t([True], fnx.bool), 1.5), fnx.float32),
    (lambda: (t([True], fnx.bool), True), fnx.bool),
    (lambda: (t([1.0], fnx.float16), 2.5), fnx.float16),
    (lambda: (t([1.0], fnx.float64), 2.5), fnx.float64),
    (lambda: (t([1], fnx.int32), 1j), fnx.complex64),
    (lambda: (t([1.0], fnx.float64), 1j), fnx.complex128),
    # PyTorch gives ComplexHalf here; fnx has no complex32, so complex64
    (lambda: (t([1.0], fnx.float16), 1j), fnx.complex64),
    (lambda: (z(1, fnx.int8), 5), fnx.int8),
    (lambda: (z(1, fnx.bool), 5), fnx.int64),
    (lambda: (z(1.0, fnx.float64), 2.5), fnx.float64),
    (lambda: (z(1, fnx.int32), 2.5), fnx.float32),
    (lambda: (1, 2), fnx.int64),
    (lambda: (1, 2.5), fnx.float32),
    (lambda: (True, False), fnx.bool),
    # three tiers at once
    (lambda: (t([1], fnx.int8), z(1, fnx.int64), 2.5), fnx.float32),
    (lambda: (t([1], fnx.int16), z(1.0, fnx.float64), 1), fnx.float64),
    (lambda: (t([1.0], fnx.float16), z(1, fnx.int64), 1j), fnx.complex64),
])
def test_result_type(operands, expected):
    assert fnx.result_type(*operands()) is expected


def test_default_dtype_changes_python_floats_and_int_to_float(monkeypatch):
    assert fnx.get_default_dtype() is fnx.float32
    fnx.set_default_dtype(fnx.float64)
    try:
        assert fnx.get_default_dtype() is fnx.float64
        ints = fnx.tensor([1, 2])
        assert fnx.tensor(1.5).dtype is fnx.float64
        assert fnx.result_type(ints, 2.5) is fnx.float64
        assert fnx.result_type(ints, 1j) is fnx.complex128
        assert fnx.result_type(t([1.0], fnx.float32), 2.5) is fnx.float32
        assert (ints + 2.5).dtype is fnx.float64
        assert (ints / ints).dtype is fnx.float64
        assert fnx.exp(ints).dtype is fnx.float64
        assert (t([1.0], fnx.float32) * 2.5).dtype is fnx.float32
    finally:
        fnx.set_default_dtype(fnx.float32)
    assert fnx.tensor(1.5).dtype is fnx.float32
    assert (fnx.tensor([1, 2]) / 2).dtype is fnx.float32


def test_set_default_dtype_rejects_non_floating():
    with pytest.raises(TypeError, match="only floating-point types"):
        fnx.set_default_dtype(fnx.int64)
    assert fnx.get_default_dtype() is fnx.float32


def test_can_cast_same_kind():
    assert fnx.can_cast(fnx.int64, fnx.float16)
    assert fnx.can_cast(fnx.bool, fnx.uint8)
    assert fnx.can_cast(fnx.float64, fnx.float16)
    assert not fnx.can_cast(fnx.float32, fnx.int64)
    assert not fnx.can_cast(fnx.complex64, fnx.float64)
    assert not fnx.can_cast(fnx.int8, fnx.bool)


# --------------------------------------------------------------------------- through ops

def test_promotion_through_real_ops():
    ints = fnx.tensor([1, 2])
    assert ints.dtype is fnx.int64
    r = ints + 2.5
    assert r.dtype is fnx.float32 and r.tolist() == [3.5, 4.5]
    assert (2.5 + ints).dtype is fnx.float32
    assert (ints + 2).dtype is fnx.int64
    assert (ints * True).dtype is fnx.int64
    assert (ints < 1.5).dtype is fnx.bool and (ints < 1.5).tolist() == [True, False]
    assert (ints == ints).dtype is fnx.bool
    q = ints / fnx.tensor([2, 2])
    assert q.dtype is fnx.float32 and q.tolist() == [0.5, 1.0]
    assert (t([1, 2], fnx.int8) + 1000).dtype is fnx.int8
    assert (t([1.0, 2.0], fnx.float16) + z(1.0, fnx.float64)).dtype is fnx.float16
    assert (t([1, 2], fnx.int32) + z(1.0, fnx.float64)).dtype is fnx.float64
    assert (t([1, 2], fnx.uint8) + z(1, fnx.int64)).dtype is fnx.uint8
    assert (t([True], fnx.bool) + 1).dtype is fnx.int64
    assert (z(1, fnx.int8) + 5).dtype is fnx.int8
    assert (t([1.0], fnx.float16) * 1j).dtype is fnx.complex64
    assert (t([1], fnx.uint8) + t([1], fnx.int8)).dtype is fnx.int16
    assert (t([1.0], fnx.float16) + t([1.0], fnx.bfloat16)).dtype is fnx.float32
    assert (t([1], fnx.int64) + t([1.0], fnx.float16)).dtype is fnx.float16
    assert fnx.where(fnx.tensor([True]), t([1], fnx.int32), 2.5).dtype is fnx.float32


def test_inplace_cannot_downcast_and_leaves_the_tensor_unchanged():
    x = fnx.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        x.add_(1.5)
    assert x.tolist() == [1, 2] and x.dtype is fnx.int64
    assert x._version == 0
    b = fnx.tensor([True, False])
    with pytest.raises(RuntimeError, match="result type Long can't be cast to the desired "
                                           "output type Bool"):
        b.add_(fnx.tensor([1, 1]))
    assert b.tolist() == [True, False]
    f = fnx.tensor([1.0, 2.0])
    f.add_(fnx.tensor([1, 1]))                       # int into float: fine
    assert f.tolist() == [2.0, 3.0] and f.dtype is fnx.float32 and f._version == 1
    h = t([1.0], fnx.float16)
    h.mul_(z(3.0, fnx.float64))                      # same category: stays float16
    assert h.dtype is fnx.float16 and h.tolist() == [3.0]


# --------------------------------------------------------------------------- pointwise sweep

# Expected result dtype per promotion kind and input dtype, written out.
EXPECTED = {
    "default": {"float32": fnx.float32, "float64": fnx.float64, "int64": fnx.int64,
                "bool": fnx.bool},
    "int_to_float": {"float32": fnx.float32, "float64": fnx.float64, "int64": fnx.float32,
                     "bool": fnx.float32},
    "always_bool": {"float32": fnx.bool, "float64": fnx.bool, "int64": fnx.bool,
                    "bool": fnx.bool},
    "complex_to_float": {"float32": fnx.float32, "float64": fnx.float64, "int64": fnx.int64,
                         "bool": fnx.bool},
}

UNARY_INPUTS = {
    "float32": np.array([-2.5, -1.0, -0.5, 0.0, 0.3, 0.5, 1.0, 2.5, 7.0], np.float32),
    "float64": np.array([-2.5, -1.0, -0.5, 0.0, 0.3, 0.5, 1.0, 2.5, 7.0, np.nan, np.inf]),
    "int64": np.array([-3, -1, 0, 1, 2, 5], np.int64),
    "bool": np.array([True, False, True]),
}


def _identity(a):
    return a.copy()


def _rnd(fn):
    """ceil/floor/round/trunc leave integers alone (PyTorch gh-70918)."""
    return lambda a: a.copy() if a.dtype.kind in "iu" else fn(a)


UNARY_REF = {
    # PyTorch's sign is (0 < a) - (a < 0): nan gives 0, where np.sign gives nan
    "abs": np.abs, "neg": np.negative, "sign": lambda a: a.copy() if a.dtype == bool
    else np.sign(np.where(np.isnan(a), 0, a)).astype(a.dtype), "acos": np.arccos,
    "acosh": np.arccosh, "asin": np.arcsin,
    "asinh": np.arcsinh, "atan": np.arctan, "atanh": np.arctanh, "cos": np.cos,
    "cosh": np.cosh, "sin": np.sin, "sinh": np.sinh, "tan": np.tan, "tanh": np.tanh,
    "erf": sp.erf, "exp": np.exp, "expm1": np.expm1, "log": np.log, "log10": np.log10,
    "log1p": np.log1p, "log2": np.log2, "reciprocal": lambda a: 1 / a,
    "rsqrt": lambda a: 1 / np.sqrt(a), "sqrt": np.sqrt, "sigmoid": sp.expit,
    "exp2": np.exp2, "erfinv": sp.erfinv, "ceil": _rnd(np.ceil), "floor": _rnd(np.floor),
    "round": _rnd(np.round), "trunc": _rnd(np.trunc), "frac": lambda a: a - np.trunc(a),
    "relu": lambda a: np.where((a > 0) | np.isnan(a), a, 0).astype(a.dtype),   # NaN stays
    "bitwise_not": np.invert,
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "logical_not": np.logical_not,
    "signbit": lambda a: np.zeros(a.shape, bool) if a.dtype == bool else np.signbit(a),
    "square": np.square,
}

# (op, input dtype) pairs where PyTorch raises, with the message it raises
UNARY_ERRORS = {
    ("neg", "bool"): "Negation, the `-` operator, on a bool tensor is not supported",
    ("abs", "bool"): "not implemented for 'Bool'",
    ("ceil", "bool"): "not implemented for 'Bool'",
    ("floor", "bool"): "not implemented for 'Bool'",
    ("round", "bool"): "not implemented for 'Bool'",
    ("trunc", "bool"): "not implemented for 'Bool'",
    ("frac", "bool"): "not implemented for 'Bool'",
    ("frac", "int64"): "not implemented for 'Long'",
    ("relu", "bool"): "not implemented for 'Bool'",
    ("bitwise_not", "float32"): "not implemented for 'Float'",
    ("bitwise_not", "float64"): "not implemented for 'Double'",
}

UNARY_CASES = [(name, kind, dt) for name, kind, _ in E.UNARY for dt in UNARY_INPUTS]


def _unary_marks(name, dt):
    return []


@pytest.mark.parametrize(
    "name, kind, dt",
    [pytest.param(n, k, d, marks=_unary_marks(n, d), id=f"{n}-{d}")
     for n, k, d in UNARY_CASES])
def test_unary_against_numpy(name, kind, dt):
    a = UNARY_INPUTS[dt]
    x = fnx.tensor(a)
    op = getattr(fnx, name)
    if (name, dt) in UNARY_ERRORS:
        with pytest.raises(RuntimeError, match=UNARY_ERRORS[name, dt]):
            op(x)
        return
    expected_dtype = {"square": {"bool": fnx.int64}}.get(name, {}).get(
        dt, EXPECTED[kind][dt])
    r = op(x)
    assert r.dtype is expected_dtype
    assert r.shape == x.shape
    compute = a.astype(np.float32) if expected_dtype is fnx.float32 and dt != "float32" else a
    with np.errstate(all="ignore"):
        ref = np.asarray(UNARY_REF[name](compute)).astype(expected_dtype.numpy)
    got = r.numpy()
    if expected_dtype.is_floating_point:
        rtol = 2e-6 if expected_dtype is fnx.float32 else 1e-12
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=1e-7, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, ref)


def test_unary_zero_dim_and_empty():
    r = fnx.exp(fnx.tensor(0.0))
    assert r.shape == () and r.dtype is fnx.float32 and r.item() == 1.0
    e = fnx.sqrt(fnx.tensor([], dtype=fnx.int64))
    assert e.shape == (0,) and e.dtype is fnx.float32


def test_rounding_is_half_to_even():
    r = fnx.round(fnx.tensor([0.5, 1.5, 2.5, -0.5, -1.5]))
    assert r.tolist() == [0.0, 2.0, 2.0, -0.0, -2.0]


BIN_A = {
    "float32": np.array([-7.5, -3.0, -1.0, 0.0, 2.25, 5.0, 9.0], np.float32),
    "float64": np.array([-7.5, -3.0, -1.0, 0.0, 2.25, 5.0, 9.0]),
    "int64": np.array([-7, -3, -1, 0, 2, 5, 9], np.int64),
    "bool": np.array([True, False, True, False, True, True, False]),
}
BIN_B = {
    "float32": np.array([2.0, -2.0, 3.0, 0.5, -4.0, 3.0, 2.0], np.float32),
    "float64": np.array([2.0, -2.0, 3.0, 0.5, -4.0, 3.0, 2.0]),
    "int64": np.array([2, -2, 3, 1, -4, 3, 2], np.int64),
    "bool": np.array([True, True, False, False, True, False, True]),
}
SCALAR = {"float32": 2.5, "float64": -1.5, "int64": 3, "bool": True}


def _int_pow(a, b):
    """PyTorch's integer pow: a negative exponent gives 1, +-1 or 0 (no error)."""
    def one(x, y):
        x, y = int(x), int(y)
        if y >= 0:
            return x ** y
        return 1 if x == 1 else ((-1) ** (-y) if x == -1 else 0)
    a, b = np.broadcast_arrays(a, b)
    return np.array([one(x, y) for x, y in zip(a.ravel(), b.ravel())]).reshape(a.shape)


BINARY_REF = {
    "add": np.add, "sub": np.subtract, "rsub": lambda a, b: np.subtract(b, a),
    "mul": np.multiply, "div": np.true_divide, "floor_divide": np.floor_divide,
    "remainder": np.remainder, "fmod": np.fmod,
    "pow": lambda a, b: _int_pow(a, b) if a.dtype.kind == "i" else
    # bool ** True copies, bool ** False is ones (PyTorch special-cases exponents 0 and 1)
    (np.broadcast_to(a if b else True, a.shape) if a.dtype == bool else np.power(a, b)),
    "atan2": np.arctan2, "maximum": np.maximum, "minimum": np.minimum,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "logical_and": np.logical_and,
    "logical_or": np.logical_or, "logical_xor": np.logical_xor, "eq": np.equal,
    "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal,
}
BINARY_ERRORS = {
    ("sub", "bool"): "Subtraction, the `-` operator, with two bool tensors is not supported",
    ("rsub", "bool"): "Subtraction, the `-` operator, with two bool tensors is not supported",
    ("floor_divide", "bool"): "not implemented for 'Bool'",
    ("remainder", "bool"): "not implemented for 'Bool'",
    ("fmod", "bool"): "not implemented for 'Bool'",
    ("pow", "bool"): "not implemented for 'Bool'",
}
for _n in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    BINARY_ERRORS[_n, "float32"] = "not implemented for 'Float'"
    BINARY_ERRORS[_n, "float64"] = "not implemented for 'Double'"


def _shift_ref(left):
    """PyTorch's shifts: an amount < 0 or >= the bit width moves every bit out."""
    def ref(a, b):
        amount = np.asarray(b).astype(np.int64)
        gone = (amount < 0) | (amount >= 8 * a.dtype.itemsize)
        s = np.where(gone, 0, amount).astype(a.dtype)
        if left:
            return np.where(gone, 0, np.left_shift(a, s))
        return np.where(gone, np.where(a < 0, -1, 0), np.right_shift(a, s))
    return ref


BINARY_REF["bitwise_left_shift"] = _shift_ref(True)
BINARY_REF["bitwise_right_shift"] = _shift_ref(False)
for _n in ("bitwise_left_shift", "bitwise_right_shift"):
    BINARY_ERRORS[_n, "float32"] = "not implemented for 'Float'"
    BINARY_ERRORS[_n, "float64"] = "not implemented for 'Double'"
    BINARY_ERRORS[_n, "bool"] = "not implemented for 'Bool'"

BINARY_CASES = [(name, ov, kind, dt) for name, ov, args, kind, _ in E.BINARY
                if not ov.endswith("_mode") for dt in BIN_A]


@pytest.mark.parametrize("name, ov, kind, dt", BINARY_CASES,
                         ids=[f"{n}.{o}-{d}" for n, o, _, d in BINARY_CASES])
def test_binary_against_numpy(name, ov, kind, dt):
    a = BIN_A[dt]
    scalar = ov == "Scalar" or ov == "Tensor_Scalar"
    b = SCALAR[dt] if scalar else BIN_B[dt]
    op = getattr(getattr(fnx.ops.aten, name), ov)
    x = fnx.tensor(a)
    y = b if scalar else fnx.tensor(b)
    if (name, dt) in BINARY_ERRORS and (name, ov) != ("pow", "Tensor_Scalar"):
        with pytest.raises(RuntimeError, match=BINARY_ERRORS[name, dt]):
            op(x, y)
        return
    expected_dtype = EXPECTED[kind][dt]
    r = op(x, y)
    assert r.dtype is expected_dtype
    assert r.shape == x.shape
    if expected_dtype.is_floating_point and dt in ("int64", "bool"):
        ca, cb = a.astype(np.float32), np.asarray(b).astype(np.float32)
    else:
        ca, cb = a, np.asarray(b).astype(a.dtype)
    with np.errstate(all="ignore"):
        ref = np.asarray(BINARY_REF[name](ca, cb)).astype(expected_dtype.numpy)
    got = r.numpy()
    if expected_dtype.is_floating_point:
        rtol = 2e-6 if expected_dtype is fnx.float32 else 1e-12
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=1e-7, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, ref)


def test_binary_broadcasting_zero_dim_and_empty():
    a = fnx.tensor([[1.0], [2.0]])
    b = fnx.tensor([10.0, 20.0, 30.0])
    r = a + b
    assert r.shape == (2, 3)
    np.testing.assert_array_equal(r.numpy(), np.array([[1.0], [2.0]], np.float32) +
                                  np.array([10, 20, 30], np.float32))
    s = fnx.tensor(2.0) * fnx.tensor(3.0)
    assert s.shape == () and s.item() == 6.0
    e = fnx.tensor([], dtype=fnx.int64).reshape(0, 1) + fnx.tensor([1, 2]) \
        if hasattr(fnx.Tensor, "reshape") else fnx.tensor([], dtype=fnx.int64) + 1
    assert e.numel() == 0 and e.dtype is fnx.int64


# --------------------------------------------------------------------------- semantics

def test_integer_division_and_remainder_signs():
    a = fnx.tensor([-7, 7, -7, 7])
    b = fnx.tensor([2, 2, -2, -2])
    assert fnx.floor_divide(a, b).tolist() == [-4, 3, 3, -4]
    assert fnx.remainder(a, b).tolist() == [1, 1, -1, -1]      # sign of the divisor
    assert fnx.fmod(a, b).tolist() == [-1, 1, -1, 1]           # sign of the dividend
    assert (a % b).tolist() == [1, 1, -1, -1]
    assert (a // b).dtype is fnx.int64


@pytest.mark.parametrize("mode, expected", [("trunc", [-3, 3, 3, -3]),
                                            ("floor", [-4, 3, 3, -4])])
def test_div_rounding_modes_on_ints(mode, expected):
    a = fnx.tensor([-7, 7, -7, 7])
    b = fnx.tensor([2, 2, -2, -2])
    r = fnx.div(a, b, rounding_mode=mode)
    assert r.dtype is fnx.int64 and r.tolist() == expected
    r2 = fnx.ops.aten.div.Scalar_mode(a, 2, rounding_mode=mode)
    assert r2.dtype is fnx.int64
    assert r2.tolist() == {"trunc": [-3, 3, -3, 3], "floor": [-4, 3, -4, 3]}[mode]


@pytest.mark.parametrize("mode, expected", [("trunc", [-3.0, 3.0, 3.0, -3.0]),
                                            ("floor", [-4.0, 3.0, 3.0, -4.0]),
                                            (None, [-3.75, 3.75, 3.75, -3.75])])
def test_div_rounding_modes_on_floats(mode, expected):
    a = fnx.tensor([-7.5, 7.5, -7.5, 7.5])
    b = fnx.tensor([2.0, 2.0, -2.0, -2.0])
    r = fnx.div(a, b, rounding_mode=mode)
    assert r.dtype is fnx.float32 and r.tolist() == expected


def test_div_of_ints_is_true_division():
    r = fnx.tensor([-7, 7]) / 2
    assert r.dtype is fnx.float32 and r.tolist() == [-3.5, 3.5]
    z0 = fnx.tensor([1, -1, 0]) / 0                # true division by zero: IEEE results
    assert z0.tolist()[:2] == [math.inf, -math.inf] and math.isnan(z0.tolist()[2])


def test_div_rounding_mode_error():
    with pytest.raises(RuntimeError, match="rounding_mode to be one of None, 'trunc', or "
                                           "'floor' but found 'round'"):
        fnx.div(fnx.tensor([1]), 2, rounding_mode="round")


def test_pow_of_ints():
    a = fnx.tensor([2, 3, -2, 0])
    r = a ** fnx.tensor([3, 2, 3, 0])
    assert r.dtype is fnx.int64 and r.tolist() == [8, 9, -8, 1]
    assert (a ** 2).tolist() == [4, 9, 4, 0] and (a ** 2).dtype is fnx.int64
    f = a ** 0.5
    assert f.dtype is fnx.float32
    with np.errstate(invalid="ignore"):
        ref = np.array([2, 3, -2, 0], np.float32) ** 0.5
    np.testing.assert_allclose(f.numpy(), ref, equal_nan=True)
    p = fnx.pow(2, fnx.tensor([0, 1, 3]))
    assert p.dtype is fnx.int64 and p.tolist() == [1, 2, 8]
    assert fnx.pow(2.5, fnx.tensor([0, 2])).dtype is fnx.float32
    # a negative *tensor* exponent follows C integer pow; a negative *scalar* one raises
    n = fnx.tensor([1, -1, -1, 2, 0]) ** fnx.tensor([-2, -3, -2, -1, 2])
    assert n.tolist() == [1, -1, 1, 0, 0]
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not "
                                           "allowed"):
        fnx.tensor([2, 3]) ** -1
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        fnx.ops.aten.pow.Tensor_Scalar(fnx.tensor([2]), -2)
    assert (fnx.tensor([2.0]) ** -1).tolist() == [0.5]
    b = fnx.tensor([True, False])
    assert (b ** False).tolist() == [True, True] and (b ** True).tolist() == [True, False]
    assert (b ** False).dtype is fnx.bool
    assert (b ** 2).dtype is fnx.int64
    with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
        b ** fnx.tensor([True, True])


def test_bitwise_on_bool_and_int():
    t_, f_ = True, False
    a = fnx.tensor([t_, f_, t_, f_])
    b = fnx.tensor([t_, t_, f_, f_])
    assert (a & b).tolist() == [t_, f_, f_, f_] and (a & b).dtype is fnx.bool
    assert (a | b).tolist() == [t_, t_, t_, f_]
    assert (a ^ b).tolist() == [f_, t_, t_, f_]
    assert (~a).tolist() == [f_, t_, f_, t_] and (~a).dtype is fnx.bool
    i = fnx.tensor([12, -1, 0])
    j = fnx.tensor([10, 5, 7])
    assert (i & j).tolist() == [8, 5, 0]
    assert (i | j).tolist() == [14, -1, 7]
    assert (i ^ j).tolist() == [6, -6, 7]
    assert (~i).tolist() == [-13, 0, -1]
    assert (i & True).dtype is fnx.int64
    u = fnx.tensor([0, 255], dtype=fnx.uint8)
    assert (~u).tolist() == [255, 0] and (~u).dtype is fnx.uint8


def test_add_alpha_rules():
    add = fnx.ops.aten.add.Tensor
    f = fnx.tensor([1.0, 2.0])
    i = fnx.tensor([3, 4])
    assert add(f, i, alpha=0.5).tolist() == [2.5, 4.0]      # alpha applied in float
    assert add(i, i, alpha=2).tolist() == [9, 12]
    assert fnx.sub(f, i, alpha=2).tolist() == [-5.0, -6.0]
    r = fnx.ops.aten.rsub.Tensor(f, fnx.tensor([10.0, 10.0]), alpha=2)
    assert r.tolist() == [8.0, 6.0]                          # other - alpha * self
    assert fnx.ops.aten.rsub.Scalar(i, 10).tolist() == [7, 6]
    with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha must "
                                           "not be a floating point number"):
        add(i, i, alpha=0.5)
    with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha"):
        add(i, i, alpha=1.0)
    with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results"):
        add(i, i, alpha=True)
    with pytest.raises(RuntimeError, match="alpha must not be a complex number"):
        add(f, f, alpha=1j)
    b = fnx.tensor([True, False])
    assert add(b, b, alpha=True).tolist() == [True, False]


def test_float16_results():
    h = fnx.tensor([0.5, 1.0, 2.0], dtype=fnx.float16)
    e = fnx.exp(h)
    assert e.dtype is fnx.float16
    np.testing.assert_allclose(e.numpy().astype(np.float32),
                               np.exp(np.float32([0.5, 1.0, 2.0])), rtol=1e-3)
    s = h + h
    assert s.dtype is fnx.float16 and s.tolist() == [1.0, 2.0, 4.0]
    assert (h / 3).dtype is fnx.float16
    assert fnx.sqrt(fnx.tensor([4], dtype=fnx.int16)).dtype is fnx.float32
    bf = fnx.tensor([1.5], dtype=fnx.bfloat16)
    assert (bf * 2).dtype is fnx.bfloat16 and (bf * 2).tolist() == [3.0]
    assert (bf < 2).dtype is fnx.bool


def test_nan_propagation_in_maximum_minimum():
    a = fnx.tensor([1.0, math.nan])
    b = fnx.tensor([math.nan, 0.0])
    assert all(math.isnan(v) for v in fnx.maximum(a, b).tolist())
    assert all(math.isnan(v) for v in fnx.minimum(a, b).tolist())


# --------------------------------------------------------------------------- errors

def test_bitwise_on_float_raises():
    x = fnx.tensor([1.0])
    with pytest.raises(RuntimeError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
        x & x
    with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
        ~x
    with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
        fnx.tensor([1]) | 1.5          # promotes to float first


def test_sub_and_neg_of_bools_raise():
    b = fnx.tensor([True, False])
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool "
                                           "tensors is not supported"):
        b - b
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor "
                                           "is not supported"):
        b - fnx.tensor([1, 1])
    with pytest.raises(RuntimeError, match="with a bool tensor is not supported"):
        fnx.tensor([1, 1]) - b
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        -b


@pytest.mark.parametrize("fn", [
    lambda a, b: a // b,
    lambda a, b: a % b,
    lambda a, b: fnx.fmod(a, b),
    lambda a, b: fnx.div(a, b, rounding_mode="trunc"),
    lambda a, b: fnx.div(a, b, rounding_mode="floor"),
    lambda a, b: a // 0,
], ids=["floor_divide", "remainder", "fmod", "div_trunc", "div_floor", "scalar"])
def test_integer_division_by_zero_raises(fn):
    a = fnx.tensor([1, 2])
    before = a.tolist()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(a, fnx.tensor([1, 0]))
    assert a.tolist() == before


def test_float_division_by_zero_is_ieee():
    r = fnx.tensor([1.0, -1.0]) // fnx.tensor([0.0, 0.0])
    assert r.tolist() == [math.inf, -math.inf]
    m = fnx.remainder(fnx.tensor([1.0]), 0.0)
    assert math.isnan(m.item())


def test_broadcast_mismatch_message():
    a = fnx.ones(2, 3) if hasattr(fnx, "ones") else fnx.tensor([[1.0] * 3] * 2)
    b = fnx.tensor([[1.0] * 4] * 2)
    msg = (r"The size of tensor a \(3\) must match the size of tensor b \(4\) at "
           r"non-singleton dimension 1")
    with pytest.raises(RuntimeError, match=msg):
        a + b
    with pytest.raises(RuntimeError, match=msg):
        fnx.tensor([[1, 2, 3]]) * fnx.tensor([[1, 2, 3, 4]])
    with pytest.raises(RuntimeError, match=msg):
        fnx.ops.aten.eq.Tensor(a, b)
    c = fnx.tensor([[1.0, 2.0, 3.0]])
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        c.add_(fnx.tensor([[1.0], [2.0]]))
    assert c.tolist() == [[1.0, 2.0, 3.0]]


def test_inplace_and_scalar_shortcuts_match_numpy():
    """The CPU kernels' shortcuts (same-dtype tensors, float tensor with a Python number,
    ufunc ``out=`` for in-place ops) give the same values and dtypes as the checked path."""
    base = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    x = fnx.tensor(base)
    x.add_(fnx.tensor([1.0, 2.0, 3.0]))                   # broadcast row
    x.mul_(2)                                             # Python int into float32
    x.sub_(0.5)
    np.testing.assert_array_equal(x.numpy(), (base + np.float32([1, 2, 3])) * 2 - 0.5)
    assert x.dtype is fnx.float32 and x._version == 3
    v = fnx.tensor([1.0, 2.0, 3.0, 4.0])
    v.add_(fnx.tensor([10.0, 20.0, 30.0, 40.0]), alpha=0.5)
    assert v.tolist() == [6.0, 12.0, 18.0, 24.0]
    i = fnx.tensor([1, 2, 3], dtype=fnx.int32)
    i.mul_(fnx.tensor([2, 2, 2], dtype=fnx.int32))
    i.add_(5)                                             # Python int into int32: checked
    assert i.tolist() == [7, 9, 11] and i.dtype is fnx.int32
    d = fnx.tensor([1.0, 2.0], dtype=fnx.float64)
    r = d * 2.5
    assert r.dtype is fnx.float64 and r.tolist() == [2.5, 5.0]
    assert (d < 1.5).dtype is fnx.bool and (d < 1.5).tolist() == [True, False]
    assert (fnx.tensor([1, 2]) == fnx.tensor([1, 3])).tolist() == [True, False]
    assert (2.0 - fnx.tensor([1.0])).tolist() == [1.0]
    m = fnx.tensor([[1.0, 2.0, 3.0]])
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        m.mul_(fnx.tensor([[1.0], [2.0]]))
    assert m.tolist() == [[1.0, 2.0, 3.0]] and m._version == 0
