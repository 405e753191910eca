"""The prims (fnx.ops.prims): CPU kernels against jax.lax / NumPy references, the strictness
of their meta functions, and meta-vs-eager shapes and dtypes.

jax.lax is the independent reference (prims lower 1:1 to it); 64-bit references run under
``jax.enable_x64(True)``.
"""
import itertools
import math

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
import scipy.special
from jax import lax

import fnx
from fnx.backends.cpu._core import wrap
from fnx.testing.opinfo.polynomials import SCIPY_REFS as POLYNOMIAL_REFS

P = fnx.ops.prims
F16, BF16, F32, F64 = fnx.float16, fnx.bfloat16, fnx.float32, fnx.float64
C64, C128 = fnx.complex64, fnx.complex128
U8, I8, I16, I32, I64, BOOL = fnx.uint8, fnx.int8, fnx.int16, fnx.int32, fnx.int64, fnx.bool
FLOATS = [F16, BF16, F32, F64]
COMPLEXES = [C64, C128]
INTS = [U8, I8, I16, I32, I64]
ALL = [BOOL] + INTS + FLOATS + COMPLEXES
CATS = {0: [BOOL], 1: INTS, 2: FLOATS, 3: COMPLEXES}
SHAPES = [(), (0,), (5,), (2, 3), (2, 0, 3)]


def T(a, dtype=None):
    """A CPU tensor over a copy of ``a`` (any NumPy dtype, incl. bfloat16)."""
    a = np.array(a, dtype=None if dtype is None else dtype.numpy)
    return wrap(a, fnx.core.dtype.from_numpy_dtype(a.dtype))


def M(shape, dtype=F32):
    return fnx.empty(tuple(shape), dtype=dtype, device="meta")


def lax_ref(fn, *args):
    """``fn`` on jax arrays of ``args`` with 64-bit types on, as a NumPy array."""
    with jax.enable_x64(True):
        args = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        r = fn(*args)
        return jax.tree_util.tree_map(np.asarray, r)


def sample(shape, dtype, rng, low=-3.0, high=3.0):
    """Random NumPy data of ``dtype`` (integers cover the type's extremes)."""
    if dtype is BOOL:
        return rng.random(shape) < 0.5
    if dtype in INTS:
        info = np.iinfo(dtype.numpy)
        a = rng.integers(max(info.min, -50), min(info.max, 50), shape, endpoint=True)
        a = a.astype(dtype.numpy)
        if a.size >= 2:
            a.flat[0], a.flat[-1] = info.min, info.max
        return a
    if dtype in COMPLEXES:
        return (rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)) \
            .astype(dtype.numpy)
    return rng.uniform(low, high, shape).astype(dtype.numpy)


def tol(dtype):
    return {F16: 2e-3, BF16: 1.6e-2, F32: 3e-6, F64: 1e-12, C64: 3e-6, C128: 1e-12}.get(dtype, 0)


def assert_close(got, want, dtype, rtol=None, atol=None):
    """``got`` (a tensor) has ``dtype`` exactly and matches ``want`` (NaNs in the same places)."""
    assert got.dtype is dtype
    g = got.numpy()
    want = np.asarray(want)
    assert g.shape == want.shape
    if dtype in (BOOL,) + tuple(INTS):
        np.testing.assert_array_equal(g, want.astype(dtype.numpy))
        return
    rtol = tol(dtype) if rtol is None else rtol
    atol = rtol if atol is None else atol
    wide = np.complex128 if dtype.is_complex else np.float64
    np.testing.assert_allclose(g.astype(wide), want.astype(wide), rtol=rtol, atol=atol,
                               equal_nan=True)


# ============================================================================ elementwise unary

def _round_even(x):
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


UNARY_REF = {
    "abs": lambda x: x if x.dtype == jnp.uint8 else lax.abs(x),   # lax.abs refuses unsigned
    "neg": lax.neg, "sign": lax.sign, "exp": lax.exp, "exp2": jnp.exp2,
    "expm1": lax.expm1, "log": lax.log, "log1p": lax.log1p, "log2": jnp.log2,
    "log10": jnp.log10, "sin": lax.sin, "cos": lax.cos, "tan": lax.tan, "asin": lax.asin,
    "acos": lax.acos, "atan": lax.atan, "sinh": lax.sinh, "cosh": lax.cosh, "tanh": lax.tanh,
    "asinh": lax.asinh, "acosh": lax.acosh, "atanh": lax.atanh, "sqrt": lax.sqrt,
    "rsqrt": lax.rsqrt, "reciprocal": lambda x: 1 / x, "erf": lax.erf, "erfc": lax.erfc,
    "erf_inv": lax.erf_inv, "lgamma": lax.lgamma, "digamma": lax.digamma, "floor": lax.floor,
    "ceil": lax.ceil, "round": _round_even, "trunc": jnp.trunc,
    "bitwise_not": lax.bitwise_not, "conj": lambda x: x if not jnp.iscomplexobj(x)
    else lax.conj(x), "signbit": jnp.signbit, "isfinite": lax.is_finite, "real": lax.real,
    "imag": lax.imag, "bessel_i0e": lax.bessel_i0e, "bessel_i1e": lax.bessel_i1e,
    # no jax.lax counterpart: SciPy's Cephes functions (what PyTorch computes)
    **{name: (lambda f: lambda x: f(np.asarray(x)))(f) for name, f in (
        ("bessel_j0", scipy.special.j0), ("bessel_j1", scipy.special.j1),
        ("bessel_y0", scipy.special.y0), ("bessel_y1", scipy.special.y1),
        ("bessel_k0e", scipy.special.k0e), ("bessel_k1e", scipy.special.k1e),
        ("airy_ai", lambda x: scipy.special.airy(x)[0]))},
}
UNARY = {name: cats for name, cats, _ in fnx.ir.prims.UNARY}
RESULT = {name: rule for name, _, rule in fnx.ir.prims.UNARY}
# Ops whose float references (XLA's own approximations) differ from NumPy/SciPy by a few ulps.
_LOOSE = {"lgamma": 1e-5, "digamma": 1e-5, "erf_inv": 1e-5, "tan": 1e-5, "acosh": 1e-5,
          "asinh": 1e-5, "atanh": 1e-5, "expm1": 1e-5, "log1p": 1e-5, "sinh": 1e-5,
          "cosh": 1e-5, "erfc": 1e-5, "bessel_i0e": 1e-5, "bessel_i1e": 1e-5}


def _result_dtype(name, dtype):
    return {"bool": BOOL, "real": dtype.to_real(), "same": dtype}[RESULT[name]]


def test_every_unary_has_a_reference_and_a_kernel():
    assert set(UNARY) == set(UNARY_REF)
    for name in UNARY:
        op = getattr(P, name).default
        assert op.tags == {"prim", "pointwise"}
        assert fnx.dispatch.DispatchKey.CPU in op.kernels


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_unary_matches_lax(name, dtype, rng):
    if dtype.category not in UNARY[name]:
        with pytest.raises(RuntimeError, match=f"prims.{name}: expected a .* tensor for "
                                               f"'self', got {dtype.name}"):
            getattr(P, name)(T(sample((3,), dtype, rng)))
        return
    low, high = (0.05, 0.95) if name == "erf_inv" else (-3.0, 3.0)
    # One reference call on flat data (elementwise ops commute with reshaping/slicing).
    flat = sample((30,), dtype, rng, low, high)
    if dtype in (F16, BF16):   # XLA computes half types in float32 as well
        want = lax_ref(UNARY_REF[name], flat.astype(np.float32)).astype(
            _result_dtype(name, dtype).numpy)
    else:
        want = lax_ref(UNARY_REF[name], flat)
    rt = max(tol(dtype), _LOOSE.get(name, 0) if dtype in (F32, C64) else 0)
    if dtype is F64 and name in _LOOSE:
        rt = 1e-9
    if dtype.is_complex and name in ("acos", "asin", "acosh", "asinh", "atan", "atanh",
                                     "tan", "tanh"):
        rt = 1e-4 if dtype is C64 else 1e-9
    for shape in SHAPES:
        n = math.prod(shape)
        got = getattr(P, name)(T(flat[:n].reshape(shape)))
        assert_close(got, want[:n].reshape(shape), _result_dtype(name, dtype), rtol=rt)


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.0, 1e-30, 100.0],
                   np.float64)


@pytest.mark.parametrize("name", sorted(n for n, c in UNARY.items() if 2 in c))
@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
def test_unary_special_values_match_lax(name, dtype):
    a = SPECIAL.astype(dtype.numpy)
    want = lax_ref(UNARY_REF[name], a)
    got = getattr(P, name)(T(a))
    if name in ("sign", "neg", "abs", "floor", "ceil", "round", "trunc", "conj"):
        # exact, including the sign of zero
        np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want))
    rt, at = (1e-5, 1e-6) if dtype is F32 else (1e-9, 1e-30)   # XLA: lgamma(1) ~ 5e-7 in f32
    assert_close(got, want, _result_dtype(name, dtype), rtol=rt, atol=at)


def test_unary_dtypes_written_out():
    assert P.abs(T([1 + 1j], C64)).dtype is F32
    assert P.abs(T([-3], I8)).dtype is I8
    assert P.real(T([1 + 2j], C128)).dtype is F64
    assert P.imag(T([1 + 2j], C64)).numpy().tolist() == [2.0]
    assert P.signbit(T([-1.0, 1.0], F16)).dtype is BOOL
    assert P.isfinite(T([np.inf, 1.0, np.nan], BF16)).numpy().tolist() == [False, True, False]
    assert P.exp(T([0.0], BF16)).dtype is BF16
    assert P.bitwise_not(T([True, False])).numpy().tolist() == [False, True]
    assert P.conj(T([1.5], F32)).numpy().tolist() == [1.5]
    assert P.conj(T([1 + 2j], C64)).numpy().tolist() == [1 - 2j]


def test_unary_integer_wraparound_and_rounding():
    assert P.abs(T([-128, 5], I8)).numpy().tolist() == [-128, 5]
    assert P.neg(T([-128, 1], I8)).numpy().tolist() == [-128, -1]
    assert P.sign(T([-7, 0, 9], I64)).numpy().tolist() == [-1, 0, 1]
    assert P.round(T([0.5, 1.5, 2.5, -0.5, -2.5], F32)).numpy().tolist() == \
        [0.0, 2.0, 2.0, -0.0, -2.0]
    assert P.trunc(T([-1.7, 1.7], F64)).numpy().tolist() == [-1.0, 1.0]
    np.testing.assert_array_equal(P.sign(T([1 + 1j, 0j], C128)).numpy(),
                                  [(1 + 1j) / math.sqrt(2), 0j])


def test_unary_strictness():
    with pytest.raises(RuntimeError, match="prims.exp: expected a floating/complex tensor"):
        P.exp(T([1, 2]))
    with pytest.raises(RuntimeError, match="prims.neg: .* got bool"):
        P.neg(T([True]))
    with pytest.raises(RuntimeError, match="prims.bitwise_not: .* got float32"):
        P.bitwise_not(T([1.0], F32))
    with pytest.raises(RuntimeError, match="prims.real: expected a complex tensor"):
        P.real(T([1.0], F32))
    with pytest.raises(RuntimeError, match="prims.floor: .* got int64"):
        P.floor(T([1]))
    with pytest.raises(TypeError, match="must be Tensor"):
        P.exp(1.0)


# ============================================================================ elementwise binary

def _bool_or(fn_bool, fn):
    return lambda a, b: fn_bool(a, b) if a.dtype == jnp.bool_ else fn(a, b)


def _int_pow(a, b):
    return jnp.power(a, b) if jnp.issubdtype(a.dtype, jnp.integer) else lax.pow(a, b)


BINARY_REF = {
    "add": _bool_or(jnp.logical_or, lax.add), "sub": lax.sub,
    "mul": _bool_or(jnp.logical_and, lax.mul), "div": lax.div, "rem": lax.rem,
    "pow": _int_pow, "atan2": lax.atan2, "maximum": lax.max, "minimum": lax.min,
    "bitwise_and": lax.bitwise_and, "bitwise_or": lax.bitwise_or,
    "bitwise_xor": lax.bitwise_xor, "shift_left": lax.shift_left,
    "shift_right_arithmetic": lax.shift_right_arithmetic, "nextafter": lax.nextafter,
    "eq": lax.eq, "ne": lax.ne, "lt": lax.lt, "le": lax.le, "gt": lax.gt, "ge": lax.ge,
    "igamma": lax.igamma, "igammac": lax.igammac, "polygamma": lax.polygamma, "zeta": lax.zeta,
    # orthogonal polynomials (x, n): no jax.lax counterpart, SciPy's eval_* (n first)
    **{name: (lambda f: lambda x, n: f(np.trunc(np.asarray(n)).astype(np.int64),
                                       np.asarray(x)))(f)
       for name, f in POLYNOMIAL_REFS.items()},
}
_SPECIAL_BINARY = {"igamma", "igammac", "polygamma", "zeta"}
BINARY = {name: cats for name, cats, _ in fnx.ir.prims.BINARY}
BRESULT = {name: rule for name, _, rule in fnx.ir.prims.BINARY}


def _binary_operands(name, dtype, shape, rng):
    a, b = sample(shape, dtype, rng), sample(shape, dtype, rng)
    if name in ("div", "rem") and dtype in INTS:
        b = np.where(b == 0, 3, b).astype(dtype.numpy)
    if name == "pow":
        if dtype in INTS:
            a = (a % 5).astype(dtype.numpy)
            b = (np.abs(b.astype(np.int64)) % 4).astype(dtype.numpy)
        elif dtype in FLOATS:
            a = np.abs(a)
    if name.startswith("shift"):
        b = rng.integers(-2, dtype.itemsize * 8 + 3, shape).astype(dtype.numpy)
    if name in _SPECIAL_BINARY and dtype in FLOATS:
        # inside the functions' domains: whole orders for polygamma, x > 1 for zeta
        a = np.abs(a) + (1.1 if name == "zeta" else 0.1)
        if name == "polygamma":
            a = np.floor(a) % 4
        a, b = a.astype(dtype.numpy), (np.abs(b) + 0.1).astype(dtype.numpy)
    if name in POLYNOMIAL_REFS and dtype in FLOATS:
        # x on the polynomial's interval, whole orders 0..6 (SciPy continues other orders)
        low = 0.0 if name.startswith("shifted") else -1.0
        a = rng.uniform(low, 1.0, shape).astype(dtype.numpy)
        b = rng.integers(0, 7, shape).astype(dtype.numpy)
    if name in ("eq", "ne", "le", "ge", "maximum", "minimum") and a.size > 1:
        b.flat[0] = a.flat[0]      # some ties
    return a, b


def test_every_binary_has_a_reference():
    assert set(BINARY) == set(BINARY_REF)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_binary_matches_lax(name, dtype, rng):
    if dtype.category not in BINARY[name]:
        with pytest.raises(RuntimeError, match=f"prims.{name}: expected a"):
            a = T(sample((2,), dtype, rng))
            getattr(P, name)(a, a)
        return
    out = BOOL if BRESULT[name] == "bool" else dtype
    a, b = _binary_operands(name, dtype, (30,), rng)
    if dtype in (F16, BF16) and name != "nextafter":
        want = lax_ref(BINARY_REF[name], a.astype(np.float32), b.astype(np.float32))
        want = want.astype(out.numpy)
    else:
        want = lax_ref(BINARY_REF[name], a, b)
    rt = 1e-5 if name in ("pow", "atan2") and dtype in (F32, C64) else None
    if name == "pow" and dtype in (F64, C128):
        rt = 1e-10
    if name in _SPECIAL_BINARY:     # XLA's approximations vs SciPy's
        rt = {F32: 1e-4, F64: 1e-9}.get(dtype, 1e-2)
    if name in POLYNOMIAL_REFS:     # recurrences in the dtype (half: a few % at order 6)
        rt = {F32: 1e-4, F64: 1e-9}.get(dtype, 5e-2)
    for shape in SHAPES:
        n = math.prod(shape)
        got = getattr(P, name)(T(a[:n].reshape(shape)), T(b[:n].reshape(shape)))
        assert_close(got, want[:n].reshape(shape), out, rtol=rt)


def test_binary_semantics_written_out():
    # integer division truncates toward zero, rem has the dividend's sign (C / lax)
    a, b = T([7, -7, 7, -7], I32), T([2, 2, -2, -2], I32)
    assert P.div(a, b).numpy().tolist() == [3, -3, -3, 3]
    assert P.rem(a, b).numpy().tolist() == [1, -1, 1, -1]
    assert P.rem(T([5.5, -5.5], F32), T([2.0, 2.0], F32)).numpy().tolist() == [1.5, -1.5]
    assert P.div(T([1.0], F16), T([0.0], F16)).numpy().tolist() == [np.inf]
    # bool add/mul are or/and
    x, y = T([True, True, False]), T([True, False, False])
    assert P.add(x, y).numpy().tolist() == [True, True, False]
    assert P.mul(x, y).numpy().tolist() == [True, False, False]
    assert P.add(x, y).dtype is BOOL
    # maximum/minimum propagate NaN
    n = T([np.nan, 1.0, -np.inf], F64)
    m = T([0.0, np.nan, 2.0], F64)
    np.testing.assert_array_equal(P.maximum(n, m).numpy(), [np.nan, np.nan, 2.0])
    np.testing.assert_array_equal(P.minimum(n, m).numpy(), [np.nan, np.nan, -np.inf])
    # integer pow wraps in the dtype
    assert P.pow(T([3], I8), T([5], I8)).numpy().tolist() == [-13]    # 243 wraps
    assert P.pow(T([2], I64), T([10], I64)).dtype is I64
    # shifts past the width: all bits out (left) or sign fill (arithmetic right)
    assert P.shift_left(T([1, 1, 1], I8), T([7, 8, -1], I8)).numpy().tolist() == [-128, 0, 0]
    assert P.shift_right_arithmetic(T([-100, 100], I8), T([9, 9], I8)).numpy().tolist() == \
        [-1, 0]
    assert P.shift_right_arithmetic(T([200], U8), T([1], U8)).numpy().tolist() == [228]
    assert P.eq(T([1 + 1j], C64), T([1 + 1j], C64)).dtype is BOOL
    assert P.nextafter(T([0.0, 1.0], BF16), T([1.0, 0.0], BF16)).numpy().astype(
        np.float32).tolist() == [float(np.array(1, np.uint16).view(ml_dtypes.bfloat16)),
                                 float(np.array(0x3F7F, np.uint16).view(ml_dtypes.bfloat16))]


def test_complex_prim():
    r = P.complex(T([1.0, np.inf], F32), T([2.0, 3.0], F32))
    assert r.dtype is C64
    assert r.numpy().tolist() == [1 + 2j, complex(np.inf, 3.0)]
    assert P.complex(T([1.0], F64), T([0.5], F64)).dtype is C128
    with pytest.raises(RuntimeError, match="prims.complex: dtype mismatch"):
        P.complex(T([1.0], F32), T([1.0], F64))
    with pytest.raises(RuntimeError, match="prims.complex: expected float32 or float64"):
        P.complex(T([1.0], F16), T([1.0], F16))


def test_binary_data_dependent_errors():
    with pytest.raises(RuntimeError, match="prims.div: ZeroDivisionError"):
        P.div(T([1, 2], I64), T([1, 0], I64))
    with pytest.raises(RuntimeError, match="prims.rem: ZeroDivisionError"):
        P.rem(T([1], U8), T([0], U8))
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not "):
        P.pow(T([2], I32), T([-1], I32))


def test_binary_strictness():
    a23 = T(np.ones((2, 3), np.float32))
    with pytest.raises(RuntimeError, match=r"prims.add: shape mismatch: 'self' has shape "
                                           r"\[2, 3\] but 'other' has shape \[3\]"):
        P.add(a23, T(np.ones(3, np.float32)))
    with pytest.raises(RuntimeError, match="prims.add: dtype mismatch: 'self' is float32 but "
                                           "'other' is float64"):
        P.add(T([1.0], F32), T([1.0], F64))
    with pytest.raises(RuntimeError, match="prims.mul: expected a Tensor for 'other', got "
                                           "float"):
        P.mul.default(a23, 2.0)
    with pytest.raises(RuntimeError, match="prims.lt: dtype mismatch"):
        P.lt(T([1], I32), T([1], I64))
    with pytest.raises(RuntimeError, match="prims.lt: expected a"):
        P.lt(T([1j]), T([1j]))
    with pytest.raises(RuntimeError, match="prims.sub: .* got bool"):
        P.sub(T([True]), T([True]))
    with pytest.raises(RuntimeError, match="prims.add: shape mismatch"):   # no 0-dim broadcast
        P.add(T(1.0, F32), T([1.0], F32))


def test_elementwise_meta_matches_eager(rng):
    for name in UNARY:
        dtype = {0: BOOL, 1: I32, 2: F32, 3: C64}[min(UNARY[name] - {0} or {0})]
        x = T(sample((2, 3), dtype, rng))
        got, want = getattr(P, name)(M((2, 3), dtype)), getattr(P, name)(x)
        assert (got.shape, got.dtype, got.device.type) == (want.shape, want.dtype, "meta")
    for name in BINARY:
        dtype = I32 if 1 in BINARY[name] else F32
        x = T(np.arange(1, 5).astype(dtype.numpy))
        got, want = getattr(P, name)(M((4,), dtype), M((4,), dtype)), getattr(P, name)(x, x)
        assert (got.shape, got.dtype) == (want.shape, want.dtype)
    with pytest.raises(RuntimeError, match="prims.add: shape mismatch"):
        P.add(M((2, 3)), M((3,)))


def test_results_do_not_alias_inputs():
    a = T([1.0, 2.0], F32)
    for r in (P.conj(a), P.convert_element_type(a, F32), P.reshape(a, [2]), P.rev(a, []),
              P.reduce_sum(a, []), P.transpose(a, [0]), P.squeeze(a, []),
              P.slice(a, [0], [2]), P.pad(a, 0.0, [0], [0], [0]), P.cumsum(a, 0),
              P.broadcast_in_dim(a, [2], [0]), P.fft_c2c(T([1j]), [], True)):
        assert not np.shares_memory(r.numpy(), a.numpy())


# ============================================================================ where / convert

def test_where(rng):
    for dtype in ALL:
        for shape in SHAPES:
            c = rng.random(shape) < 0.5
            a, b = sample(shape, dtype, rng), sample(shape, dtype, rng)
            got = P.where(T(c), T(a), T(b))
            assert_close(got, np.where(c, a, b), dtype, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="prims.where: expected a bool tensor for 'pred'"):
        P.where(T([1]), T([1]), T([2]))
    with pytest.raises(RuntimeError, match="prims.where: shape mismatch"):
        P.where(T([True]), T([1, 2]), T([1, 2]))
    with pytest.raises(RuntimeError, match="prims.where: dtype mismatch"):
        P.where(T([True]), T([1]), T([1.0]))
    with pytest.raises(RuntimeError, match="prims.where: expected a Tensor for 'other'"):
        P.where.default(T([True]), T([1]), 2)
    assert P.where(M((3,), BOOL), M((3,), I8), M((3,), I8)).dtype is I8


CONVERT_SRC = np.array([0.0, -0.0, 1.5, -1.5, 2.7, -2.7, 127.9, 300.0, -300.0, 1e20, -1e20,
                        np.inf, -np.inf, np.nan])


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("src", ALL, ids=str)
def test_convert_element_type_matches_lax(src, rng):
    if src.is_floating_point:
        with np.errstate(over="ignore"):
            a = CONVERT_SRC.astype(src.numpy)
    elif src.is_complex:
        a = np.empty(CONVERT_SRC.shape, src.numpy)
        a.real, a.imag = CONVERT_SRC, CONVERT_SRC[::-1]
    else:
        a = sample((12,), src, rng)
    for dst in ALL:
        got = P.convert_element_type(T(a), dst)
        assert got.dtype is dst
        want = lax_ref(lambda x: lax.convert_element_type(x, dst.numpy), a)
        if src.is_complex and dst is BOOL:
            want = (a != 0)        # lax refuses complex -> bool; the prim means != 0
        if src.category >= 2 and dst in INTS:
            finite = np.isfinite(_real(a).astype(np.float64))
            # saturating and NaN -> 0, as XLA: compare the defined (finite) part exactly
            np.testing.assert_array_equal(got.numpy()[finite], want[finite])
            continue
        assert_close(got, want, dst, rtol=0, atol=0)


def _real(a):
    return a.real if np.iscomplexobj(a) else a


def test_convert_element_type_semantics():
    f = T([2.9, -2.9, np.nan, np.inf, -np.inf, 1e10], F32)
    assert P.convert_element_type(f, I32).numpy().tolist() == \
        [2, -2, 0, 2**31 - 1, -2**31, 2**31 - 1]
    assert P.convert_element_type(f, U8).numpy().tolist() == [2, 0, 0, 255, 0, 255]
    assert P.convert_element_type(f, BOOL).numpy().tolist() == [True] * 6
    assert P.convert_element_type(T([0.0, -0.0], F32), BOOL).numpy().tolist() == [False, False]
    assert P.convert_element_type(T([300, -1], I64), U8).numpy().tolist() == [44, 255]
    assert P.convert_element_type(T([1 + 2j, 3j], C64), F64).numpy().tolist() == [1.0, 0.0]
    assert P.convert_element_type(T([0j, 3j], C64), BOOL).numpy().tolist() == [False, True]
    assert P.convert_element_type(T([1.0, 2.0], F32), F32).dtype is F32
    assert P.convert_element_type(M((2,), F32), BF16).dtype is BF16
    with pytest.raises(RuntimeError, match="prims.convert_element_type: dtype must be"):
        P.convert_element_type.default(T([1.0]), "float32")


def test_device_put():
    a = T([1, 2], I16)
    r = P.device_put(a, "cpu")
    assert r.dtype is I16 and r.numpy().tolist() == [1, 2]
    assert not np.shares_memory(r.numpy(), a.numpy())
    assert P.device_put(a, fnx.device("cpu")).device == fnx.device("cpu")
    with pytest.raises(RuntimeError, match="prims.device_put: the CPU kernel copies to cpu"):
        P.device_put(a, "cuda")


# ============================================================================ layout

def test_broadcast_in_dim(rng):
    cases = [((), [2, 3], []), ((3,), [2, 3], [1]), ((2, 1), [2, 4], [0, 1]),
             ((1, 3), [5, 2, 3], [0, 2]), ((0,), [2, 0], [1]), ((3,), [3], [0])]
    for dtype in (BOOL, I8, BF16, F64, C64):
        for shape, out, bd in cases:
            a = sample(shape, dtype, rng)
            got = P.broadcast_in_dim(T(a), out, bd)
            expanded = [1] * len(out)
            for i, d in enumerate(bd):
                expanded[d] = a.shape[i]
            assert_close(got, np.broadcast_to(a.reshape(expanded), out), dtype, rtol=0, atol=0)
            if dtype is F64:
                want = lax_ref(lambda x: lax.broadcast_in_dim(x, out, bd), a)
                assert_close(got, want, dtype, rtol=0, atol=0)
            m = P.broadcast_in_dim(M(shape, dtype), out, bd)
            assert (m.shape, m.dtype) == (got.shape, dtype)
    x = T(np.ones((2, 3), np.float32))
    with pytest.raises(RuntimeError, match="prims.broadcast_in_dim: operand dim 1 has size 3, "
                                           "which is neither 1 nor the output size 4"):
        P.broadcast_in_dim(x, [2, 4], [0, 1])
    with pytest.raises(RuntimeError, match="must be strictly increasing"):
        P.broadcast_in_dim(x, [3, 2], [1, 0])
    with pytest.raises(RuntimeError, match="one entry per operand dim"):
        P.broadcast_in_dim(x, [2, 3], [0])
    with pytest.raises(RuntimeError, match="has a negative size"):
        P.broadcast_in_dim(x, [-1, 3], [0, 1])
    with pytest.raises(RuntimeError, match="dim 2 in broadcast_dimensions out of range"):
        P.broadcast_in_dim(x, [2, 3], [0, 2])


def test_reshape_transpose_squeeze_rev(rng):
    for dtype in (BOOL, U8, F16, C128):
        a = sample((2, 3, 4), dtype, rng)
        assert_close(P.reshape(T(a), [4, 6]), a.reshape(4, 6), dtype, rtol=0, atol=0)
        assert_close(P.reshape(T(a), [24]), a.reshape(24), dtype, rtol=0, atol=0)
        assert_close(P.transpose(T(a), [2, 0, 1]), np.transpose(a, (2, 0, 1)), dtype, rtol=0,
                     atol=0)
        assert_close(P.rev(T(a), [0, 2]), a[::-1, :, ::-1], dtype, rtol=0, atol=0)
        b = a.reshape(1, 2, 1, 12)
        assert_close(P.squeeze(T(b), [2, 0]), a.reshape(2, 12), dtype, rtol=0, atol=0)
    assert P.reshape(T(5.0, F32), [1, 1]).shape == (1, 1)
    assert P.reshape(T(np.zeros((0, 3))), [3, 0, 5]).shape == (3, 0, 5)
    assert P.squeeze(T(np.zeros((1,))), [0]).shape == ()
    assert P.transpose(T(2.0), []).numpy().tolist() == 2.0
    assert P.rev(T(np.arange(3)), []).numpy().tolist() == [0, 1, 2]
    assert P.transpose(M((2, 3, 4)), [1, 2, 0]).shape == (3, 4, 2)
    assert P.squeeze(M((1, 3, 1)), [0, 2]).shape == (3,)
    x = T(np.ones((2, 3)))
    with pytest.raises(RuntimeError, match=r"prims.reshape: cannot reshape a tensor of shape "
                                           r"\[2, 3\] \(6 elements\) to \[4, 2\]"):
        P.reshape(x, [4, 2])
    with pytest.raises(RuntimeError, match="prims.reshape: .* negative size"):
        P.reshape(x, [-1, 3])
    with pytest.raises(RuntimeError, match="prims.transpose: permutation"):
        P.transpose(x, [0, 0])
    with pytest.raises(RuntimeError, match="prims.squeeze: dim 1 has size 3, not 1"):
        P.squeeze(x, [1])
    with pytest.raises(RuntimeError, match="prims.rev: dim -1 in dims out of range"):
        P.rev(x, [-1])
    with pytest.raises(RuntimeError, match="prims.rev: dims .* has repeated dims"):
        P.rev(x, [0, 0])


def test_slice(rng):
    a = sample((5, 6, 0), F32, rng)
    b = sample((7, 4), I16, rng)
    cases = [(b, [1, 0], [6, 4], None), (b, [0, 1], [7, 4], [2, 3]), (b, [3, 2], [3, 4], [1, 5]),
             (b, [0, 0], [7, 4], [10, 10]), (a, [1, 2, 0], [4, 6, 0], [2, 1, 1])]
    for x, start, limit, strides in cases:
        got = P.slice(T(x), start, limit, strides)
        want = lax_ref(lambda v: lax.slice(v, start, limit, strides), x)
        assert_close(got, want, fnx.core.dtype.from_numpy_dtype(x.dtype), rtol=0, atol=0)
        assert P.slice(M(x.shape), start, limit, strides).shape == got.shape
    assert P.slice(T(3.0), [], []).numpy().tolist() == 3.0
    with pytest.raises(RuntimeError, match=r"prims.slice: dim 0: need 0 <= start \(3\) <= "
                                           r"limit \(2\) <= size \(7\)"):
        P.slice(T(b), [3, 0], [2, 4])
    with pytest.raises(RuntimeError, match="prims.slice: dim 1: need"):
        P.slice(T(b), [0, 0], [7, 5])
    with pytest.raises(RuntimeError, match="prims.slice: dim 0: stride 0 must be >= 1"):
        P.slice(T(b), [0, 0], [7, 4], [0, 1])
    with pytest.raises(RuntimeError, match="prims.slice: start_indices .* one entry per dim"):
        P.slice(T(b), [0], [7, 4])


def _pad_ref(a, value, lo, hi, it):
    """By definition: input index i lands at lo + i * (interior + 1), if inside the output."""
    shape = [l_ + h + n + max(n - 1, 0) * k for l_, h, n, k in zip(lo, hi, a.shape, it)]
    out = np.full(shape, value, a.dtype)
    for idx in np.ndindex(*a.shape):
        pos = tuple(l_ + i * (k + 1) for l_, i, k in zip(lo, idx, it))
        if all(0 <= p < n for p, n in zip(pos, shape)):
            out[pos] = a[idx]
    return out


def test_pad(rng):
    cases = [((5,), [2], [3], [0]), ((5,), [-1], [-2], [1]), ((2, 3), [1, 0], [0, 2], [2, 1]),
             ((4,), [-3], [1], [2]), ((0,), [1], [2], [3]), ((3, 0), [0, 1], [1, 1], [0, 4]),
             ((), [], [], [])]
    for dtype, value in ((F32, -1.5), (I8, 7), (BOOL, True), (BF16, np.inf), (C64, 2j)):
        for shape, lo, hi, it in cases:
            a = sample(shape, dtype, rng)
            got = P.pad(T(a), value, lo, hi, it)
            assert_close(got, _pad_ref(a, value, lo, hi, it), dtype, rtol=0, atol=0)
            if dtype is F32:
                want = lax_ref(lambda x: lax.pad(x, jnp.array(value, x.dtype),
                                                 list(zip(lo, hi, it))), a)
                assert_close(got, want, dtype, rtol=0, atol=0)
            assert P.pad(M(shape, dtype), value, lo, hi, it).shape == got.shape
    x = T(np.arange(3))
    assert P.pad(x, 0, [-3], [0], [0]).shape == (0,)
    assert P.pad(x, fnx.tensor(9), [1], [0], [0]).numpy().tolist() == [9, 0, 1, 2]
    with pytest.raises(RuntimeError, match="prims.pad: dim 0: interior padding -1"):
        P.pad(x, 0, [0], [0], [-1])
    with pytest.raises(RuntimeError, match="prims.pad: dim 0: padding .* negative size -1"):
        P.pad(x, 0, [-4], [0], [0])
    with pytest.raises(RuntimeError, match="prims.pad: value 0.5 is not representable as "
                                           "int64"):
        P.pad(x, 0.5, [1], [1], [0])
    with pytest.raises(RuntimeError, match="prims.pad: value 300 out of range for uint8"):
        P.pad(T([1], U8), 300, [1], [1], [0])


def test_concatenate(rng):
    for dtype in (BOOL, I32, F16, C128):
        a, b, c = (sample(s, dtype, rng) for s in ((2, 3), (2, 0), (2, 4)))
        got = P.concatenate([T(a), T(b), T(c)], 1)
        assert_close(got, np.concatenate([a, b, c], 1), dtype, rtol=0, atol=0)
        assert_close(P.concatenate([T(a)], 0), a, dtype, rtol=0, atol=0)
    assert P.concatenate([M((2, 3)), M((5, 3))], 0).shape == (7, 3)
    x, y = T(np.ones((2, 3), np.float32)), T(np.ones((2, 3), np.float64))
    with pytest.raises(RuntimeError, match="prims.concatenate: dtype mismatch"):
        P.concatenate([x, y], 0)
    with pytest.raises(RuntimeError, match="prims.concatenate: tensors\\[1\\] has size 2 at "
                                           "dim 1"):
        P.concatenate([x, T(np.ones((2, 2), np.float32))], 0)
    with pytest.raises(NotImplementedError, match="no tensor arguments to prims::concatenate"):
        P.concatenate([], 0)          # the dispatcher has no backend to pick
    with pytest.raises(RuntimeError, match="prims.concatenate: expected a non-empty list"):
        fnx.ir.prims.concatenate.meta([], 0)
    with pytest.raises(RuntimeError, match="prims.concatenate: dim 0 in dim out of range"):
        P.concatenate([T(1.0), T(2.0)], 0)
    with pytest.raises(RuntimeError, match="prims.concatenate: tensors\\[1\\] has rank 1"):
        P.concatenate([x, T(np.ones(3, np.float32))], 0)


# ============================================================================ reductions

RED_NAMES = ["reduce_max", "reduce_min", "reduce_prod", "reduce_sum"]
_RED_NP = {"reduce_sum": np.sum, "reduce_prod": np.prod, "reduce_max": np.max,
           "reduce_min": np.min}


def _red_ref(name, a, dims):
    """A NumPy reference with the prim's conventions (same-dtype accumulation, identities)."""
    if a.dtype == np.bool_:
        fn = {"reduce_sum": np.any, "reduce_prod": np.all, "reduce_max": np.any,
              "reduce_min": np.all}[name]
        return fn(a, axis=dims)
    if name in ("reduce_max", "reduce_min"):
        big = np.iinfo(a.dtype).max if a.dtype.kind in "iu" else np.inf
        small = np.iinfo(a.dtype).min if a.dtype.kind in "iu" else -np.inf
        ident = small if name == "reduce_max" else big
        return _RED_NP[name](a.astype(np.float64) if a.dtype.kind == "V" or a.dtype == np.float16
                             else a, axis=dims, initial=ident)
    if a.dtype.kind in "iu":
        return _RED_NP[name](a, axis=dims, dtype=a.dtype)
    if a.dtype.kind == "c":
        return _RED_NP[name](a.astype(np.complex128), axis=dims)
    return _RED_NP[name](a.astype(np.float64), axis=dims)


@pytest.mark.parametrize("name", RED_NAMES)
def test_reductions(name, rng):
    shape_dims = [((2, 3, 4), [1]), ((2, 3, 4), [0, 2]), ((2, 3, 4), []), ((2, 3, 4), [0, 1, 2]),
                  ((), []), ((0, 3), [0]), ((0, 3), [1]), ((4,), [0])]
    for dtype in ALL:
        if dtype.is_complex and name in ("reduce_max", "reduce_min"):
            with pytest.raises(RuntimeError, match=f"prims.{name}: expected a"):
                getattr(P, name)(T(sample((2,), dtype, rng)), [0])
            continue
        for shape, dims in shape_dims:
            a = sample(shape, dtype, rng, -1.5, 1.5)
            if dtype in INTS and name == "reduce_prod":
                a = (a % 3).astype(dtype.numpy)
            got = getattr(P, name)(T(a), dims)
            want = _red_ref(name, a, tuple(dims))
            rt = {F16: 4e-3, BF16: 2e-2, F32: 1e-5, C64: 1e-5}.get(dtype)
            assert_close(got, np.asarray(want).astype(dtype.numpy), dtype, rtol=rt)
            m = getattr(P, name)(M(shape, dtype), dims)
            assert (m.shape, m.dtype) == (got.shape, dtype)


def test_reductions_semantics_written_out():
    nan = T([1.0, np.nan, 3.0], F32)
    assert np.isnan(P.reduce_max(nan, [0]).numpy())
    assert np.isnan(P.reduce_min(nan, [0]).numpy())
    assert P.reduce_max(T(np.zeros((0,), np.float32)), [0]).numpy().tolist() == -np.inf
    assert P.reduce_min(T(np.zeros((0,), np.int8)), [0]).numpy().tolist() == 127
    assert P.reduce_max(T(np.zeros((0,), np.uint8)), [0]).numpy().tolist() == 0
    assert P.reduce_min(T(np.zeros((0,), np.bool_)), [0]).numpy().tolist() is True
    assert P.reduce_max(T(np.zeros((0,), np.bool_)), [0]).numpy().tolist() is False
    assert P.reduce_prod(T(np.zeros((2, 0), np.int64)), [1]).numpy().tolist() == [1, 1]
    assert P.reduce_sum(T(np.zeros((0,), np.float16)), [0]).dtype is F16
    assert P.reduce_sum(T([100, 100], I8), [0]).numpy().tolist() == -56     # wraps in int8
    assert P.reduce_sum(T([True, True]), [0]).numpy().tolist() is True      # any
    assert P.reduce_sum(T([True, True]), [0]).dtype is BOOL
    assert P.reduce_prod(T([True, False]), [0]).numpy().tolist() is False   # all
    with pytest.raises(RuntimeError, match="prims.reduce_sum: dim 2 in dims out of range"):
        P.reduce_sum(T(np.ones((2, 3))), [2])
    with pytest.raises(RuntimeError, match="prims.reduce_sum: dims .* repeated"):
        P.reduce_sum(T(np.ones((2, 3))), [1, 1])


def test_reductions_match_lax(rng):
    a = sample((3, 4, 5), F64, rng)
    for name, fn in (("reduce_sum", lax.reduce_sum), ("reduce_max", lax.reduce_max),
                     ("reduce_min", lax.reduce_min), ("reduce_prod", lax.reduce_prod)):
        for dims in ([1], [0, 2]):
            want = lax_ref(lambda x: fn(x, tuple(dims)), a)
            assert_close(getattr(P, name)(T(a), dims), want, F64)


def test_argmax_argmin(rng):
    for dtype in (BOOL, U8, I64, F16, BF16, F32, F64):
        for shape, dim in (((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 0, 3), 2), ((2, 3, 4), 1)):
            a = sample(shape, dtype, rng)
            for name, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
                got = getattr(P, name)(T(a), dim)
                assert_close(got, fn(a.astype(np.float64) if dtype in (F16, BF16) else a,
                                     axis=dim), I64)
                if dtype in (I64, F32, F64) and 0 not in shape:
                    want = lax_ref(lambda x: getattr(lax, name)(x, dim, np.int64), a)
                    assert_close(got, want, I64)
                assert getattr(P, name)(M(shape, dtype), dim).shape == got.shape
    # ties -> first index; a NaN is the extreme, the first NaN wins
    assert P.argmax(T([1, 3, 3, 2]), 0).numpy().tolist() == 1
    assert P.argmin(T([2, 1, 1]), 0).numpy().tolist() == 1
    x = T([1.0, np.nan, 5.0, np.nan], F32)
    assert P.argmax(x, 0).numpy().tolist() == 1
    assert P.argmin(x, 0).numpy().tolist() == 1
    assert P.argmax(T([[0.0, np.nan], [np.nan, 0.0]], F64), 1).numpy().tolist() == [1, 0]
    with pytest.raises(RuntimeError, match="prims.argmax: cannot take argmax over dim 1 of "
                                           "size 0"):
        P.argmax(T(np.zeros((2, 0))), 1)
    with pytest.raises(RuntimeError, match="prims.argmin: dim 0 in dim out of range"):
        P.argmin(T(1.0), 0)
    with pytest.raises(RuntimeError, match="prims.argmax: expected a"):
        P.argmax(T([1j]), 0)


def test_cumsum_cumprod(rng):
    for dtype in (BOOL, I8, I64, F16, F32, F64, C64):
        for shape, dim in (((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 0, 3), 1), ((0,), 0)):
            a = sample(shape, dtype, rng, -1.5, 1.5)
            for name, fn in (("cumsum", np.cumsum), ("cumprod", np.cumprod)):
                got = getattr(P, name)(T(a), dim)
                if dtype is BOOL:
                    want = (np.logical_or if name == "cumsum" else np.logical_and) \
                        .accumulate(a, axis=dim)
                elif dtype in INTS:
                    want = fn(a, axis=dim, dtype=a.dtype)
                else:
                    want = fn(a.astype(np.complex128 if dtype.is_complex else np.float64),
                              axis=dim)
                assert_close(got, want.astype(dtype.numpy), dtype,
                             rtol={F16: 4e-3, F32: 1e-5, C64: 1e-5}.get(dtype))
                if dtype in (I64, F64):
                    jfn = lax.cumsum if name == "cumsum" else lax.cumprod
                    assert_close(got, lax_ref(lambda x: jfn(x, dim), a), dtype)
                assert getattr(P, name)(M(shape, dtype), dim).shape == got.shape
    assert P.cumsum(T([100, 100], I8), 0).numpy().tolist() == [100, -56]
    with pytest.raises(RuntimeError, match="prims.cumsum: dim 1 in dim out of range"):
        P.cumsum(T([1]), 1)


# ============================================================================ creation

def test_iota():
    for dtype in (U8, I32, I64, BF16, F32, F64):
        for shape, dim in (([5], 0), ([2, 3], 0), ([2, 3], 1), ([2, 0, 4], 2)):
            got = P.iota(shape, dim, dtype=dtype, device="cpu")
            want = lax_ref(lambda: lax.broadcasted_iota(dtype.numpy, shape, dim))
            assert_close(got, want, dtype, rtol=0, atol=0)
    m = P.iota([3, 4], 1, dtype=F32, device="meta")
    assert (m.shape, m.dtype, m.device.type) == ((3, 4), F32, "meta")
    with pytest.raises(RuntimeError, match="prims.iota: dim 2 in dimension out of range"):
        P.iota([2, 3], 2, dtype=I64, device="cpu")
    with pytest.raises(RuntimeError, match="prims.iota: expected a integer/floating dtype, "
                                           "got bool"):
        P.iota([2], 0, dtype=BOOL, device="cpu")
    with pytest.raises(RuntimeError, match="prims.iota: shape .* negative size"):
        P.iota([-1], 0, dtype=I64, device="cpu")


def test_full():
    cases = [(BOOL, True), (U8, 255), (I64, -7), (F16, 0.5), (BF16, -np.inf), (F32, np.nan),
             (F64, 3), (C64, 1 + 2j), (C128, 2.5)]
    for dtype, value in cases:
        for shape in ([], [0], [2, 3]):
            got = P.full(shape, value, dtype=dtype, device="cpu")
            assert_close(got, np.full(shape, value, dtype.numpy), dtype, rtol=0, atol=0)
    assert P.full([2], fnx.tensor(3), dtype=I32, device="cpu").numpy().tolist() == [3, 3]
    assert P.full([2], 1, dtype=F32, device="meta").shape == (2,)
    with pytest.raises(RuntimeError, match="prims.full: value 1.5 is not representable as "
                                           "int32"):
        P.full([2], 1.5, dtype=I32, device="cpu")
    with pytest.raises(RuntimeError, match="prims.full: value 1j is not representable"):
        P.full([2], 1j, dtype=F32, device="cpu")
    with pytest.raises(RuntimeError, match="prims.full: shape .* negative size"):
        P.full([-1], 0, dtype=F32, device="cpu")


# ============================================================================ dot_general

DOT_CASES = [  # lhs shape, rhs shape, lc, rc, lb, rb
    ((3, 4), (4, 5), [1], [0], [], []),
    ((4, 3), (5, 4), [0], [1], [], []),
    ((2, 3, 4), (2, 4, 5), [2], [1], [0], [0]),
    ((3, 2, 4), (4, 5, 2), [2], [0], [1], [2]),
    ((3,), (3,), [0], [0], [], []),
    ((3,), (4,), [], [], [], []),
    ((2, 3, 4, 5), (5, 4, 2, 6), [2, 3], [1, 0], [0], [2]),
    ((0, 4), (4, 5), [1], [0], [], []),
    ((3, 0), (0, 5), [1], [0], [], []),
    ((), (), [], [], [], []),
]


def _dot_ref(a, b, lc, rc, lb, rb):
    """dot_general as an einsum: batch dims, then lhs free dims, then rhs free dims."""
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    sa, sb = [None] * a.ndim, [None] * b.ndim
    for x, y in list(zip(lb, rb)) + list(zip(lc, rc)):
        sa[x] = sb[y] = next(letters)
    sa = [c or next(letters) for c in sa]
    sb = [c or next(letters) for c in sb]
    out = [sa[d] for d in lb] + [sa[d] for d in range(a.ndim) if d not in lb + lc] + \
        [sb[d] for d in range(b.ndim) if d not in rb + rc]
    return np.einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", a, b)


@pytest.mark.parametrize("dtype", [BOOL, I8, I32, I64, F16, BF16, F32, F64, C64, C128], ids=str)
def test_dot_general_matches_lax(dtype, rng):
    for ls, rs, lc, rc, lb, rb in DOT_CASES:
        a, b = sample(ls, dtype, rng, -1, 1), sample(rs, dtype, rng, -1, 1)
        if dtype in INTS:
            a, b = (a % 7).astype(dtype.numpy), (b % 7).astype(dtype.numpy)
        got = P.dot_general(T(a), T(b), lc, rc, lb, rb)
        dims = ((lc, rc), (lb, rb))
        if dtype not in (BOOL, I8, F64, C64):
            wide = {I32: np.int32, I64: np.int64, F16: np.float32, BF16: np.float32,
                    F32: np.float64, C128: np.complex128}[dtype]
            want = _dot_ref(a.astype(wide), b.astype(wide), lc, rc, lb, rb)
            assert_close(got, want.reshape(got.shape).astype(dtype.numpy), dtype,
                         rtol={F16: 2e-3, BF16: 1e-2, F32: 1e-5}.get(dtype))
            continue
        if dtype is BOOL:
            want = lax_ref(lambda x, y: lax.dot_general(x, y, dims, preferred_element_type=
                                                        jnp.int32), a.astype(np.int32),
                           b.astype(np.int32)) != 0
        elif dtype in (F16, BF16):
            want = lax_ref(lambda x, y: lax.dot_general(x, y, dims), a.astype(np.float32),
                           b.astype(np.float32)).astype(dtype.numpy)
        else:
            want = lax_ref(lambda x, y: lax.dot_general(x, y, dims), a, b)
        assert_close(got, want, dtype, rtol={F32: 1e-5, C64: 1e-5}.get(dtype))
        m = P.dot_general(M(ls, dtype), M(rs, dtype), lc, rc, lb, rb)
        assert (m.shape, m.dtype) == (got.shape, dtype)


def test_dot_general_semantics_and_errors():
    # ints accumulate in their own dtype (wrap)
    a = T([[100, 100]], I8)
    assert P.dot_general(a, T([[1], [1]], I8), [1], [0], [], []).numpy().tolist() == [[-56]]
    x, y = T(np.ones((2, 3), np.float32)), T(np.ones((3, 4), np.float32))
    with pytest.raises(RuntimeError, match="prims.dot_general: contracting dims have "
                                           "different sizes: lhs dim 0 is 2, rhs dim 0 is 3"):
        P.dot_general(x, y, [0], [0], [], [])
    with pytest.raises(RuntimeError, match="prims.dot_general: dtype mismatch"):
        P.dot_general(x, T(np.ones((3, 4))), [1], [0], [], [])
    with pytest.raises(RuntimeError, match="prims.dot_general: lhs and rhs need as many"):
        P.dot_general(x, y, [1], [], [], [])
    with pytest.raises(RuntimeError, match="both a contracting and a batch dim"):
        P.dot_general(x, T(np.ones((2, 3), np.float32)), [0], [0], [0], [0])
    with pytest.raises(RuntimeError, match="prims.dot_general: batch dims have different"):
        P.dot_general(x, y, [], [], [0], [0])


# ============================================================================ conv_general

def _conv_naive(x, w, strides, plo, phi, ld, rd, groups):
    """Direct loops over output positions: the definition of conv_general."""
    ns = x.ndim - 2
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    ksz = w.shape[2:]
    # dilate and pad the input explicitly (negative padding crops)
    dil = [(s - 1) * d + 1 if s else 0 for s, d in zip(x.shape[2:], ld)]
    xd = np.zeros((n, c, *dil), np.result_type(x, w))
    xd[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in ld)] = x
    for i in range(ns):
        ax = 2 + i
        lo, hi = plo[i], phi[i]
        if lo > 0:
            xd = np.concatenate([np.zeros(xd.shape[:ax] + (lo,) + xd.shape[ax + 1:], xd.dtype),
                                 xd], ax)
        elif lo < 0:
            xd = np.take(xd, range(-lo, xd.shape[ax]), axis=ax)
        if hi > 0:
            xd = np.concatenate([xd, np.zeros(xd.shape[:ax] + (hi,) + xd.shape[ax + 1:],
                                              xd.dtype)], ax)
        elif hi < 0:
            xd = np.take(xd, range(0, xd.shape[ax] + hi), axis=ax)
    kd = [(k - 1) * r + 1 for k, r in zip(ksz, rd)]
    out_sp = [max(0, (p - k) // s + 1) if p >= k else 0
              for p, k, s in zip(xd.shape[2:], kd, strides)]
    out = np.zeros((n, o, *out_sp), xd.dtype)
    og = o // groups
    for pos in itertools.product(*(range(s) for s in out_sp)):
        for oc in range(o):
            g = oc // og
            acc = np.zeros(n, xd.dtype)
            for kpos in itertools.product(*(range(k) for k in ksz)):
                idx = tuple(p * s + kk * r for p, s, kk, r in zip(pos, strides, kpos, rd))
                acc = acc + (xd[(slice(None), slice(g * cg, (g + 1) * cg)) + idx] *
                             w[(oc, slice(None)) + kpos]).sum(axis=1)
            out[(slice(None), oc) + pos] = acc
    return out


CONV_CASES = [  # lhs, rhs, strides, plo, phi, ld, rd, groups
    ((2, 3, 7), (4, 3, 3), [1], [0], [0], [1], [1], 1),
    ((1, 2, 9), (2, 2, 2), [2], [1], [2], [1], [2], 1),
    ((1, 4, 6), (6, 2, 3), [1], [-1], [1], [1], [1], 2),
    ((2, 2, 5, 6), (3, 2, 3, 2), [1, 2], [1, 0], [1, 1], [1, 1], [1, 1], 1),
    ((1, 4, 5, 5), (4, 1, 3, 3), [2, 1], [0, 2], [1, -1], [1, 1], [2, 1], 4),
    ((1, 2, 3, 4), (2, 2, 2, 2), [1, 1], [1, 1], [1, 1], [2, 3], [1, 1], 1),  # transposed
    ((1, 1, 3, 3, 4), (2, 1, 2, 2, 3), [1, 2, 1], [0, 1, 1], [0, 0, 2], [1, 1, 2], [1, 2, 1], 1),
    ((0, 2, 5), (3, 2, 2), [1], [0], [0], [1], [1], 1),
    ((1, 2, 2), (3, 2, 4), [1], [0], [0], [1], [1], 1),     # output size 0
    ((1, 0, 4), (3, 0, 2), [1], [0], [0], [1], [1], 1),     # no input channels
]


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv_general_matches_naive_and_lax(case, rng):
    ls, rs, st, plo, phi, ld, rd, g = CONV_CASES[case]
    x, w = sample(ls, F64, rng), sample(rs, F64, rng)
    got = P.conv_general(T(x), T(w), st, plo, phi, ld, rd, g)
    assert_close(got, _conv_naive(x, w, st, plo, phi, ld, rd, g), F64)
    if 0 not in ls[:2] and ls[1]:
        want = lax_ref(lambda a, b: lax.conv_general_dilated(
            a, b, st, list(zip(plo, phi)), ld, rd, feature_group_count=g,
            precision=lax.Precision.HIGHEST), x, w)
        assert_close(got, want, F64)
    m = P.conv_general(M(ls, F64), M(rs, F64), st, plo, phi, ld, rd, g)
    assert (m.shape, m.dtype) == (got.shape, F64)


@pytest.mark.parametrize("dtype", [I32, F16, BF16, F32, C64], ids=str)
def test_conv_general_dtypes(dtype, rng):
    ls, rs, st, plo, phi, ld, rd, g = CONV_CASES[4]
    x, w = sample(ls, dtype, rng, -1, 1), sample(rs, dtype, rng, -1, 1)
    if dtype is I32:
        x, w = x % 5, w % 5
    got = P.conv_general(T(x), T(w), st, plo, phi, ld, rd, g)
    wide = np.complex128 if dtype.is_complex else np.float64
    want = _conv_naive(x.astype(wide), w.astype(wide), st, plo, phi, ld, rd, g)
    assert_close(got, want.astype(dtype.numpy), dtype,
                 rtol={F16: 4e-3, BF16: 3e-2, F32: 1e-5, C64: 1e-5}.get(dtype))


def test_conv_general_errors():
    x = T(np.ones((1, 4, 5), np.float32))
    w = T(np.ones((2, 4, 3), np.float32))
    args = ([1], [0], [0], [1], [1])
    with pytest.raises(RuntimeError, match="prims.conv_general: dtype mismatch"):
        P.conv_general(x, T(np.ones((2, 4, 3))), *args, 1)
    with pytest.raises(RuntimeError, match="prims.conv_general: feature_group_count 3"):
        P.conv_general(x, w, *args, 3)
    with pytest.raises(RuntimeError, match="prims.conv_general: rhs has 4 input channels per "
                                           "group, expected 4 / 2 = 2"):
        P.conv_general(x, w, *args, 2)
    with pytest.raises(RuntimeError, match="same rank 3, 4 or 5"):
        P.conv_general(T(np.ones((4, 5), np.float32)), T(np.ones((2, 3), np.float32)), *args, 1)
    with pytest.raises(RuntimeError, match="window_strides \\[0\\] must be >= 1"):
        P.conv_general(x, w, [0], [0], [0], [1], [1], 1)
    with pytest.raises(RuntimeError, match="expected a integer/floating/complex tensor"):
        P.conv_general(T(np.ones((1, 1, 2), bool)), T(np.ones((1, 1, 1), bool)), *args, 1)


# ============================================================================ gather / scatter

def test_gather(rng):
    for dtype in (BOOL, I16, BF16, F64, C64):
        a = sample((3, 4, 5), dtype, rng)
        for dim, ishape in ((0, (2, 4, 5)), (1, (3, 6, 2)), (2, (1, 2, 7)), (1, (3, 0, 5))):
            idx = rng.integers(0, a.shape[dim], ishape)
            got = P.gather(T(a), dim, T(idx))
            want = np.empty(ishape, a.dtype)
            for pos in itertools.product(*(range(s) for s in ishape)):
                src = list(pos)
                src[dim] = idx[pos]
                want[pos] = a[tuple(src)]
            assert_close(got, want, dtype, rtol=0, atol=0)
            assert P.gather(M(a.shape, dtype), dim, M(ishape, I64)).shape == ishape
    x = T(np.arange(6).reshape(2, 3))
    assert P.gather(x, 1, T([[2, 0], [1, 1]])).numpy().tolist() == [[2, 0], [4, 4]]
    with pytest.raises(RuntimeError, match="prims.gather: index out of bounds: index 3 for a "
                                           "dim of size 3"):
        P.gather(x, 1, T([[3]]))
    with pytest.raises(RuntimeError, match="prims.gather: index out of bounds: index -1"):
        P.gather(x, 1, T([[-1]]))
    with pytest.raises(RuntimeError, match="prims.gather: expected an int64 index, got int32"):
        P.gather(x, 1, T([[0]], I32))
    with pytest.raises(RuntimeError, match="prims.gather: index size 3 at dim 0 exceeds"):
        P.gather(x, 1, T([[0], [0], [0]]))
    with pytest.raises(RuntimeError, match="prims.gather: index has rank 1, self has rank 2"):
        P.gather(x, 1, T([0]))


def _scatter_ref(a, dim, idx, src, reduce):
    out = a.copy()
    ops = {"none": lambda o, s: s, "add": lambda o, s: o + s, "mul": lambda o, s: o * s,
           "max": lambda o, s: o if np.isnan(o) else (s if np.isnan(s) else max(o, s)),
           "min": lambda o, s: o if np.isnan(o) else (s if np.isnan(s) else min(o, s))}
    for pos in itertools.product(*(range(s) for s in idx.shape)):
        dst = list(pos)
        dst[dim] = idx[pos]
        dst = tuple(dst)
        out[dst] = ops[reduce](out[dst], src[pos])
    return out


@pytest.mark.parametrize("reduce", ["none", "add", "mul", "max", "min"])
def test_scatter(reduce, rng):
    for dtype in (I32, F16, F64):
        a = sample((3, 4, 5), dtype, rng, -2, 2)
        for dim, ishape in ((0, (5, 4, 5)), (1, (3, 7, 2)), (2, (1, 2, 9)), (1, (3, 0, 5))):
            idx = rng.integers(0, a.shape[dim], ishape)
            src = sample(ishape, dtype, rng, -2, 2)
            if dtype is F64 and src.size:
                src.flat[0] = np.nan
            got = P.scatter(T(a), dim, T(idx), T(src), reduce)
            wide = np.float64 if dtype.is_floating_point else a.dtype    # ints wrap in place
            with np.errstate(over="ignore"):
                want = _scatter_ref(a.astype(wide), dim, idx, src.astype(wide), reduce)
            assert_close(got, want.astype(dtype.numpy), dtype,
                         rtol=4e-3 if dtype is F16 else None)
            m = P.scatter(M(a.shape, dtype), dim, M(ishape, I64), M(ishape, dtype), reduce)
            assert (m.shape, m.dtype) == (got.shape, dtype)


def test_scatter_semantics_and_errors():
    x = T(np.zeros(4, np.float32))
    src = T([1.0, 2.0, 3.0], F32)
    idx = T([1, 1, 1])
    assert P.scatter(x, 0, idx, src).numpy().tolist() == [0, 3, 0, 0]    # last write wins
    assert P.scatter(x, 0, idx, src, "add").numpy().tolist() == [0, 6, 0, 0]
    assert x.numpy().tolist() == [0, 0, 0, 0]                              # functional
    b = P.scatter(T([False, True]), 0, T([0, 1]), T([True, True]), "add")
    assert b.dtype is BOOL and b.numpy().tolist() == [True, True]
    assert P.scatter(T([1, 1], I8), 0, T([0, 0]), T([100, 100], I8), "add").numpy().tolist() \
        == [-55, 1]
    assert P.scatter(T([2.0], BF16), 0, T([0]), T([3.0], BF16), "mul").dtype is BF16
    with pytest.raises(RuntimeError, match="prims.scatter: index out of bounds: index 4"):
        P.scatter(x, 0, T([4]), T([1.0], F32))
    with pytest.raises(RuntimeError, match="prims.scatter: shape mismatch: 'index' has shape "
                                           r"\[3\] but 'src' has shape \[2\]"):
        P.scatter(x, 0, idx, T([1.0, 2.0], F32))
    with pytest.raises(RuntimeError, match="prims.scatter: dtype mismatch"):
        P.scatter(x, 0, idx, T([1.0, 2.0, 3.0], F64))
    with pytest.raises(RuntimeError, match="prims.scatter: reduce must be one of"):
        P.scatter(x, 0, idx, src, "sum")
    with pytest.raises(RuntimeError, match="prims.scatter: expected a .* got complex128"):
        P.scatter(T([1j]), 0, T([0]), T([1j]), "max")
    # validation happens before anything is written: self is untouched after a failure
    y = T([5.0, 6.0], F32)
    with pytest.raises(RuntimeError):
        P.scatter(y, 0, T([0, 2]), T([1.0, 1.0], F32))
    assert y.numpy().tolist() == [5.0, 6.0]


# ============================================================================ sort / top_k

@pytest.mark.parametrize("dtype", [BOOL, U8, I64, F16, BF16, F32, F64], ids=str)
def test_sort(dtype, rng):
    for shape, dim in (((9,), 0), ((3, 6), 1), ((4, 3), 0), ((2, 0), 1), ((0,), 0)):
        a = sample(shape, dtype, rng)
        if dtype.is_floating_point and a.size > 3:
            a.flat[1] = np.nan
            a.flat[2] = a.flat[0]          # ties
            a.flat[-1] = -0.0 if dtype is F32 else a.flat[-1]
        if dtype in INTS:
            a = (a % 3).astype(dtype.numpy)   # many ties
        for descending in (False, True):
            vals, idx = P.sort(T(a), dim, descending, True)
            assert vals.dtype is dtype and idx.dtype is I64
            key = a.astype(np.float64) if dtype in (F16, BF16) else a
            if descending:
                want_idx = np.apply_along_axis(_stable_desc, dim, key) if a.size else \
                    np.zeros(shape, np.int64)
            else:
                want_idx = np.argsort(key, axis=dim, kind="stable")
            np.testing.assert_array_equal(idx.numpy(), want_idx)
            np.testing.assert_array_equal(vals.numpy().astype(np.float64),
                                          np.take_along_axis(a, want_idx, dim).astype(np.float64))
        if dtype in (I64, F32, F64) and a.size:
            want = lax_ref(lambda x: lax.sort((x, lax.broadcasted_iota(np.int64, x.shape, dim)),
                                              dimension=dim, is_stable=True, num_keys=1), a)
            vals, idx = P.sort(T(a), dim, False, True)
            np.testing.assert_array_equal(vals.numpy(), want[0])
            np.testing.assert_array_equal(idx.numpy(), want[1])
        mv, mi = P.sort(M(shape, dtype), dim, False, False)
        assert (mv.shape, mv.dtype, mi.dtype) == (shape, dtype, I64)


def _stable_desc(row):
    """Indices sorting ``row`` descending, NaN first, equal values in their original order."""
    order = sorted(range(len(row)), key=lambda i: (0 if np.isnan(row[i]) else 1,
                                                   -float(row[i]) if not np.isnan(row[i])
                                                   else 0, i))
    return np.array(order, np.int64)


def test_sort_semantics_written_out():
    x = T([2.0, np.nan, -1.0, 2.0, np.inf], F32)
    v, i = P.sort(x, 0, False, True)
    np.testing.assert_array_equal(v.numpy(), [-1.0, 2.0, 2.0, np.inf, np.nan])
    assert i.numpy().tolist() == [2, 0, 3, 4, 1]
    v, i = P.sort(x, 0, True, True)
    np.testing.assert_array_equal(v.numpy(), [np.nan, np.inf, 2.0, 2.0, -1.0])
    assert i.numpy().tolist() == [1, 4, 0, 3, 2]
    with pytest.raises(RuntimeError, match="prims.sort: expected a"):
        P.sort(T([1j]), 0, False, False)
    with pytest.raises(RuntimeError, match="prims.sort: dim 1 in dim out of range"):
        P.sort(T([1.0]), 1, False, False)


def test_top_k(rng):
    for dtype in (I32, F16, F32, F64):
        a = sample((3, 8), dtype, rng)
        if dtype in INTS:
            a = (a % 4).astype(dtype.numpy)
        for k in (0, 1, 3, 8):
            for dim in (0, 1):
                if k > a.shape[dim]:
                    continue
                for largest in (True, False):
                    v, i = P.top_k(T(a), k, dim, largest)
                    sv, si = P.sort(T(a), dim, largest, True)
                    take = [slice(None)] * 2
                    take[dim] = slice(0, k)
                    np.testing.assert_array_equal(v.numpy(), sv.numpy()[tuple(take)])
                    np.testing.assert_array_equal(i.numpy(), si.numpy()[tuple(take)])
                    assert v.dtype is dtype and i.dtype is I64
        if dtype in (I32, F32):
            want = lax_ref(lambda x: lax.top_k(x, 3), a)
            v, i = P.top_k(T(a), 3, 1, True)
            np.testing.assert_array_equal(v.numpy(), want[0])
            np.testing.assert_array_equal(i.numpy(), want[1])
    v, i = P.top_k(T([1.0, np.nan, 3.0, 3.0], F32), 3, 0, True)
    np.testing.assert_array_equal(v.numpy(), [np.nan, 3.0, 3.0])
    assert i.numpy().tolist() == [1, 2, 3]
    mv, mi = P.top_k(M((4, 5)), 2, 1, False)
    assert mv.shape == (4, 2) and mi.dtype is I64
    with pytest.raises(RuntimeError, match=r"prims.top_k: k \(6\) must be in \[0, 5\]"):
        P.top_k(T(np.ones(5)), 6, 0, True)


# ============================================================================ nonzero

def test_nonzero(rng):
    for dtype in (BOOL, I8, BF16, F32, C64):
        for shape in ((), (0,), (7,), (3, 4), (2, 0, 3), (2, 3, 2)):
            a = sample(shape, dtype, rng)
            if dtype is not BOOL:
                a = np.where(rng.random(shape) < 0.5, a, 0).astype(dtype.numpy)
            got = P.nonzero(T(a))
            assert got.dtype is I64
            want = np.argwhere(a.astype(np.complex128) != 0 if dtype is not BOOL else a)
            np.testing.assert_array_equal(got.numpy(), want)
            assert got.shape == (len(want), len(shape))
    assert P.nonzero(T(5.0)).shape == (1, 0)
    with pytest.raises(NotImplementedError, match="prims.nonzero: output shape depends on data"):
        P.nonzero(M((3,)))


# ============================================================================ fft

def test_fft_c2c(rng):
    for dtype in COMPLEXES:
        a = sample((3, 4, 5), dtype, rng)
        for dims in ([2], [0, 2], [0, 1, 2], []):
            fwd = P.fft_c2c(T(a), dims, True)
            inv = P.fft_c2c(T(a), dims, False)
            assert fwd.dtype is dtype and inv.dtype is dtype
            n = math.prod(a.shape[d] for d in dims)
            want = np.fft.fftn(a, axes=dims) if dims else a
            assert_close(fwd, want, dtype, rtol=1e-5 if dtype is C64 else 1e-10)
            assert_close(inv, (np.fft.ifftn(a, axes=dims) * n) if dims else a, dtype,
                         rtol=1e-5 if dtype is C64 else 1e-10)
            if dims and dims == list(range(3 - len(dims), 3)):   # lax.fft: trailing dims
                lens = tuple(a.shape[d] for d in dims)
                want = lax_ref(lambda x: lax.fft(x, "FFT", lens), a)
                assert_close(fwd, want, dtype, rtol=1e-5 if dtype is C64 else 1e-10)
                want = lax_ref(lambda x: lax.fft(x, "IFFT", lens), a) * n
                assert_close(inv, want, dtype, rtol=1e-5 if dtype is C64 else 1e-10)
    with pytest.raises(RuntimeError, match="prims.fft_c2c: expected a complex tensor"):
        P.fft_c2c(T([1.0]), [0], True)
    with pytest.raises(RuntimeError, match="prims.fft_c2c: invalid number of data points"):
        P.fft_c2c(T(np.zeros((0,), np.complex64)), [0], True)


def test_fft_r2c_c2r(rng):
    for dtype in (F32, F64):
        a = sample((3, 4, 6), dtype, rng)
        rt = 1e-5 if dtype is F32 else 1e-10
        for dims in ([2], [1, 2], [0, 2]):
            full = P.fft_r2c(T(a), dims, False)
            half = P.fft_r2c(T(a), dims, True)
            assert full.dtype is dtype.to_complex() and half.dtype is dtype.to_complex()
            assert_close(full, np.fft.fftn(a, axes=dims), full.dtype, rtol=rt)
            assert_close(half, np.fft.rfftn(a, axes=dims), half.dtype, rtol=rt)
            n = math.prod(a.shape[d] for d in dims)
            back = P.fft_c2r(half, dims, a.shape[dims[-1]])
            assert back.dtype is dtype
            assert_close(back, a * n, dtype, rtol=rt, atol=rt * n * 10)   # unnormalized
        want = lax_ref(lambda x: lax.fft(x, "RFFT", (4, 6)), a)
        assert_close(P.fft_r2c(T(a), [1, 2], True), want, dtype.to_complex(), rtol=rt)
        spec = np.fft.rfftn(a, axes=[2])
        want = lax_ref(lambda x: lax.fft(x, "IRFFT", (6,)), spec.astype(dtype.to_complex().numpy))
        assert_close(P.fft_c2r(T(spec.astype(dtype.to_complex().numpy)), [2], 6), want * 6,
                     dtype, rtol=rt)
        # odd last size
        spec5 = np.fft.rfft(a[..., :5], axis=2).astype(dtype.to_complex().numpy)
        assert_close(P.fft_c2r(T(spec5), [2], 5), a[..., :5] * 5, dtype, rtol=rt, atol=rt * 50)
    assert P.fft_r2c(M((4, 6)), [1], True).shape == (4, 4)
    assert P.fft_c2r(M((4, 4), C64), [1], 7).shape == (4, 7)
    with pytest.raises(RuntimeError, match="prims.fft_r2c: expected a float32 or float64"):
        P.fft_r2c(T([1.0], F16), [0], True)
    with pytest.raises(RuntimeError, match=r"prims.fft_c2r: dim 1 has size 4, expected "
                                           r"last_dim_size // 2 \+ 1 = 5"):
        P.fft_c2r(T(np.zeros((2, 4), np.complex64)), [1], 8)
    with pytest.raises(RuntimeError, match="prims.fft_c2r: expected a complex tensor"):
        P.fft_c2r(T([1.0]), [0], 1)


# ============================================================================ random

def _jkey(words):
    return jax.random.wrap_key_data(np.array(words, np.uint32), impl="threefry2x32")


KEY = [12345, 2**32 - 1]


def test_random_bits():
    got = P.random_bits(T(KEY), [3, 4])
    assert got.dtype is I64 and got.shape == (3, 4)
    want = np.asarray(jax.random.bits(_jkey(KEY), (3, 4), np.uint32)).astype(np.int64)
    np.testing.assert_array_equal(got.numpy(), want)
    assert got.numpy().min() >= 0 and got.numpy().max() < 2**32
    assert P.random_bits(T(KEY), [0]).shape == (0,)
    assert P.random_bits(M((2,), I64), [5]).shape == (5,)
    with pytest.raises(RuntimeError, match="prims.random_bits: expected an int64 key of shape "
                                           r"\[2\], got int32 of shape \[2\]"):
        P.random_bits(T([1, 2], I32), [2])
    with pytest.raises(RuntimeError, match=r"prims.random_bits: key words must be in \[0, "):
        P.random_bits(T([-1, 0]), [2])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_uniform_normal_bit_identical_to_jax(dtype):
    with jax.enable_x64(dtype is F64):
        want_u = np.asarray(jax.random.uniform(_jkey(KEY), (50,), dtype.numpy, -2.0, 3.0))
        want_n = np.asarray(jax.random.normal(_jkey(KEY), (50,), dtype.numpy) * 2.0 + 1.0)
    u = P.uniform(T(KEY), [50], -2.0, 3.0, dtype=dtype)
    n = P.normal(T(KEY), [50], 1.0, 2.0, dtype=dtype)
    assert u.dtype is dtype and n.dtype is dtype
    np.testing.assert_array_equal(u.numpy(), want_u)
    np.testing.assert_array_equal(n.numpy(), want_n)
    assert (u.numpy().astype(np.float64) >= -2).all() and (u.numpy().astype(np.float64) < 3).all()
    assert P.uniform(T(KEY), [2, 0], 0, 1, dtype=dtype).shape == (2, 0)
    assert P.normal(M((2,), I64), [3], 0, 1, dtype=dtype).dtype is dtype


def test_rng_statistics_and_errors():
    u = P.uniform(T([0, 1]), [20000], 0.0, 1.0, dtype=F64).numpy()
    assert abs(u.mean() - 0.5) < 0.01 and u.min() >= 0 and u.max() < 1
    n = P.normal(T([0, 1]), [20000], 3.0, 0.5, dtype=F32).numpy()
    assert abs(n.mean() - 3.0) < 0.02 and abs(n.std() - 0.5) < 0.02
    with pytest.raises(RuntimeError, match="prims.uniform: expected a floating dtype, got int64"):
        P.uniform(T(KEY), [2], 0, 1, dtype=I64)
    with pytest.raises(RuntimeError, match="prims.normal: value 1j is not representable"):
        P.normal(T(KEY), [2], 1j, 1, dtype=F32)


def test_split_key():
    got = P.split_key(T(KEY), 3)
    assert got.dtype is I64 and got.shape == (3, 2)
    want = np.asarray(jax.random.key_data(jax.random.split(_jkey(KEY), 3))).astype(np.int64)
    np.testing.assert_array_equal(got.numpy(), want)
    sub = P.random_bits(got[1], [4])   # a split key is itself a key
    np.testing.assert_array_equal(
        sub.numpy(), np.asarray(jax.random.bits(_jkey(want[1]), (4,), np.uint32)))
    assert P.split_key(M((2,), I64), 4).shape == (4, 2)
    with pytest.raises(RuntimeError, match="prims.split_key: num -1 must be >= 0"):
        P.split_key(T(KEY), -1)


# ============================================================================ the op set

def test_every_prim_has_meta_cpu_kernel_and_tags():
    prims = [op for op in fnx.dispatch.all_ops() if op.namespace == "prims"]
    assert len(prims) >= 90
    for op in prims:
        assert op.meta is not None, op
        assert fnx.dispatch.DispatchKey.CPU in op.kernels, op
        assert "prim" in op.tags, op
        assert fnx.dispatch.DispatchKey.Meta in op.kernels, op
    rng_ops = {op.name for op in prims if "nondeterministic" in op.tags}
    assert rng_ops == {"random_bits", "uniform", "normal", "split_key", "poisson", "binomial"}
