"""Derivative formulas of the prims (fnx/ir/prims/).

Every differentiable prim goes through ``gradcheck`` (central finite differences in float64 /
complex128); a selection through a second-derivative check; PyTorch's conventions at ties,
zeros and kinks are checked against hand-derived values, and float32 gradients against
NumPy computations of the same derivatives.
"""
import math

import numpy as np
import pytest
import scipy.special as sp

import fnx
from fnx.autograd import gradcheck
from fnx.autograd.graph import SavedTensor
from fnx.ir import prims as prims_module
from fnx.ir.registry import NONDIFFERENTIABLE

P = fnx.ops.prims
F32, F64, C128 = fnx.float32, fnx.float64, fnx.complex128


def T(a, dtype=None, requires_grad=True):
    """A tensor over a copy of ``a`` (float64 / complex128 unless ``dtype``)."""
    a = np.array(a)
    if dtype is None:
        dtype = C128 if a.dtype.kind == "c" else F64
    t = fnx.from_numpy(a.astype(dtype.numpy))
    return t.requires_grad_() if requires_grad else t


def rand(shape, lo=-2.0, hi=2.0, seed=0, cplx=False):
    rng = np.random.default_rng(seed)
    a = rng.uniform(lo, hi, shape)
    if cplx:
        a = a + 1j * rng.uniform(lo, hi, shape)
    return T(a)


def _real_outputs(out):
    """Outputs as real tensors (complex ones split into real and imaginary parts), so that
    gradcheck compares the full Jacobian of complex outputs too."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    res = []
    for t in outs:
        if t is None or not (t.dtype.is_floating_point or t.dtype.is_complex):
            continue
        res.extend((P.real(t), P.imag(t)) if t.dtype.is_complex else (t,))
    return tuple(res)


def check(fn, *inputs, fast=False):
    assert gradcheck(lambda *a: _real_outputs(fn(*a)), inputs, fast_mode=fast)


def check_second(fn, *inputs, seed=1):
    """gradcheck of the vector-Jacobian product built with create_graph=True."""
    rng = np.random.default_rng(seed)
    outs = fn(*inputs)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    gos = []
    for o in outs:
        g = rng.standard_normal(tuple(o.shape))
        if o.dtype.is_complex:
            g = g + 1j * rng.standard_normal(tuple(o.shape))
        gos.append(T(g))
    n = len(inputs)

    def vjp(*args):
        with fnx.enable_grad():     # gradcheck evaluates under no_grad
            ys = fn(*args[:n])
            ys = ys if isinstance(ys, (tuple, list)) else (ys,)
            gs = fnx.autograd.grad(list(ys), list(args[:n]), list(args[n:]),
                                   create_graph=True, allow_unused=True)
        return _real_outputs(gs)
    assert gradcheck(vjp, tuple(inputs) + tuple(gos))


def grads(fn, inputs, grad_out):
    """Gradients of ``fn`` at ``inputs`` for the output gradient ``grad_out`` (NumPy)."""
    out = fn(*inputs)
    gs = fnx.autograd.grad([out], list(inputs), [T(grad_out, out.dtype, False)],
                           allow_unused=True)
    return [None if g is None else g.numpy() for g in gs]


# ---------------------------------------------------------------------------- coverage

def test_every_prim_has_a_formula_or_is_nondifferentiable():
    missing = [n for n, op in prims_module.OPS.items() if getattr(op, "derivative", None)
               is None]
    assert missing == []
    assert len(prims_module.OPS) >= 97


NONDIFF = ["bitwise_not", "signbit", "isfinite", "bitwise_and", "bitwise_or", "bitwise_xor",
           "shift_left", "shift_right_arithmetic", "nextafter", "eq", "ne", "lt", "le", "gt",
           "ge", "argmax", "argmin", "iota", "full", "random_bits", "uniform", "normal",
           "split_key", "nonzero", "poisson", "binomial"]


@pytest.mark.parametrize("name", NONDIFF)
def test_nondifferentiable(name):
    assert prims_module.OPS[name].derivative is NONDIFFERENTIABLE


def test_nondifferentiable_outputs_do_not_require_grad():
    x = rand((3,))
    assert not P.lt(x, x).requires_grad
    assert not P.argmax(x, 0).requires_grad
    assert not P.signbit(x).requires_grad
    y = P.nextafter(x, P.add(x, x))
    assert not y.requires_grad and y.grad_fn is None


def test_backward_of_a_prim_graph_stays_prim_level():
    # no tensor used twice: the engine's gradient accumulation is not a formula
    x = rand((2, 3))
    y = P.reduce_sum(P.tanh(P.mul(P.exp(x), rand((2, 3), seed=1))), [0, 1])
    (g,) = fnx.autograd.grad([y], [x], create_graph=True)
    seen, stack = set(), [g.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        spec = getattr(node, "spec", None)
        if spec is not None:
            assert spec.op.namespace == "prims", spec.op.qualname
        stack.extend(fn for fn, _ in node.next_functions)
    assert len(seen) > 3


# ---------------------------------------------------------------------------- unary

def _off_integers(shape, seed=0):
    rng = np.random.default_rng(seed)
    return T(rng.integers(-3, 3, shape) + rng.uniform(0.2, 0.8, shape))


def _nonzero(shape, seed=0):
    rng = np.random.default_rng(seed)
    return T(rng.uniform(0.3, 2.0, shape) * rng.choice([-1.0, 1.0], shape))


# test inputs away from poles, branch points and kinks
_POSITIVE = ("log", "log1p", "log2", "log10", "sqrt", "rsqrt", "lgamma")
_UNIT = ("asin", "acos", "atanh", "erf_inv")
REAL_UNARY = ["abs", "neg", "sign", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10",
              "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
              "acosh", "atanh", "sqrt", "rsqrt", "reciprocal", "erf", "erfc", "erf_inv",
              "lgamma", "floor", "ceil", "round", "trunc", "conj"]
COMPLEX_UNARY = ["abs", "neg", "sign", "exp", "exp2", "expm1", "log", "log1p", "log2",
                 "log10", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
                 "asinh", "acosh", "atanh", "sqrt", "rsqrt", "reciprocal", "conj", "real",
                 "imag"]


def _unary_input(name, shape):
    if name in _POSITIVE:
        return rand(shape, 0.3, 2.0)
    if name in _UNIT:
        return rand(shape, -0.9, 0.9)
    if name == "acosh":
        return rand(shape, 1.2, 3.0)
    if name == "tan":
        return rand(shape, -1.2, 1.2)
    if name in ("abs", "sign", "reciprocal"):
        return _nonzero(shape)
    if name in ("floor", "ceil", "round", "trunc"):
        return _off_integers(shape)
    return rand(shape)


@pytest.mark.parametrize("name", REAL_UNARY)
def test_unary_real(name):
    check(getattr(P, name), _unary_input(name, (2, 3)))


@pytest.mark.parametrize("name", ["exp", "abs", "log", "tanh", "erf", "floor"])
def test_unary_zero_dim_and_empty(name):
    check(getattr(P, name), _unary_input(name, ()))
    x = rand((0, 3))
    (g,) = fnx.autograd.grad([getattr(P, name)(x)], [x], [T(np.zeros((0, 3)), F64, False)])
    assert g.shape == (0, 3) and g.dtype is F64


@pytest.mark.parametrize("name", COMPLEX_UNARY)
def test_unary_complex(name):
    # right half plane, off the real axis: clear of every branch cut
    rng = np.random.default_rng(3)
    z = T(rng.uniform(0.5, 1.5, (2, 2)) + 1j * rng.uniform(0.2, 0.8, (2, 2)))
    check(getattr(P, name), z)


@pytest.mark.parametrize("name", ["exp", "tanh", "rsqrt", "erf_inv", "acosh", "erfc"])
def test_unary_second_derivative(name):
    check_second(getattr(P, name), _unary_input(name, (3,)))


@pytest.mark.parametrize("name", ["exp", "sqrt", "abs", "sign", "tan"])
def test_unary_complex_second_derivative(name):
    check_second(getattr(P, name), T([0.7 + 0.3j, 1.2 + 0.6j]))


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "trunc", "sign"])
def test_piecewise_constant_gradient_is_zero(name):
    x = T([-1.5, -0.3, 0.0, 0.5, 2.0])
    (g,) = grads(getattr(P, name), [x], np.ones(5))
    np.testing.assert_array_equal(g, np.zeros(5))


def test_abs_gradient_at_zero_is_zero():
    (g,) = grads(P.abs, [T([-2.0, 0.0, 3.0])], np.ones(3))
    np.testing.assert_array_equal(g, [-1.0, 0.0, 1.0])
    (g,) = grads(P.abs, [T([3 + 4j, 0j])], np.ones(2))
    np.testing.assert_allclose(g, [0.6 + 0.8j, 0j])


def test_complex_sign_gradient_at_zero_is_zero():
    (g,) = grads(P.sign, [T([0j, 1 + 1j])], np.array([1 + 2j, 1 + 0j]))
    assert g[0] == 0 and np.isfinite(g[1])


def test_digamma_gradient_is_trigamma():
    x = np.array([-2.5, -0.3, 0.1, 0.5, 1.7, 4.0, 30.0])
    (g,) = grads(P.digamma, [T(x, fnx.float64)], np.ones(7))
    np.testing.assert_allclose(g, sp.polygamma(1, x), rtol=1e-10)


def test_lgamma_second_derivative_is_trigamma():
    x = T(np.array([0.5, 1.7, 4.0]), fnx.float64).requires_grad_()
    (g,) = fnx.autograd.grad([P.reduce_sum(P.lgamma(x), [0])], [x], create_graph=True)
    (h,) = fnx.autograd.grad([P.reduce_sum(g, [0])], [x])
    np.testing.assert_allclose(h.numpy(), sp.polygamma(1, x.detach().numpy()), rtol=1e-10)


def test_lgamma_gradient_is_digamma():
    x = np.array([0.5, 1.7, 4.0], np.float32)
    (g,) = grads(P.lgamma, [T(x, F32)], np.ones(3, np.float32))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, sp.psi(x), rtol=1e-5)


# ---------------------------------------------------------------------------- binary

def _binary_inputs(name):
    if name == "pow":
        return rand((2, 3), 0.3, 2.0, seed=1), rand((2, 3), -2.0, 2.0, seed=2)
    if name == "div":
        return rand((2, 3), seed=1), _nonzero((2, 3), seed=2)
    if name == "rem":      # quotients away from integers: trunc is locally constant
        return T([[2.5, -3.7, 5.2], [0.4, -0.9, 7.0]]), T([[1.1, 1.3, -2.0], [1.5, 0.5, 3.3]])
    return rand((2, 3), seed=1), rand((2, 3), seed=2)


BINARY = ["add", "sub", "mul", "div", "rem", "pow", "atan2", "maximum", "minimum"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_real(name):
    check(getattr(P, name), *_binary_inputs(name))


@pytest.mark.parametrize("name", BINARY)
def test_binary_one_input_requires_grad(name):
    a, b = _binary_inputs(name)
    b = b.detach()
    check(lambda x: getattr(P, name)(x, b), a)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow"])
def test_binary_complex(name):
    a = T([0.7 + 0.3j, 1.2 - 0.5j, -0.4 + 0.9j])
    b = T([1.1 + 0.2j, -0.6 + 0.7j, 0.5 - 0.8j])
    check(getattr(P, name), a, b)


@pytest.mark.parametrize("name", ["mul", "div", "pow", "atan2", "maximum"])
def test_binary_second_derivative(name):
    check_second(getattr(P, name), *(x.detach()[0].requires_grad_()
                                     for x in _binary_inputs(name)))


def test_binary_zero_dim():
    check(P.mul, T(1.5), T(-0.5))
    check(P.pow, T(1.5), T(2.5))


def test_maximum_minimum_split_ties_evenly():
    a, b = T([1.0, 2.0, 3.0]), T([1.0, 5.0, 0.0])
    ga, gb = grads(P.maximum, [a, b], np.array([2.0, 2.0, 2.0]))
    np.testing.assert_array_equal(ga, [1.0, 0.0, 2.0])
    np.testing.assert_array_equal(gb, [1.0, 2.0, 0.0])
    ga, gb = grads(P.minimum, [a, b], np.array([2.0, 2.0, 2.0]))
    np.testing.assert_array_equal(ga, [1.0, 2.0, 0.0])
    np.testing.assert_array_equal(gb, [1.0, 0.0, 2.0])


def test_pow_at_zero_base():
    # PyTorch: 0 where the exponent is 0 (for self) and where self = 0, exponent >= 0
    base, exp = T([0.0, 0.0, 0.0, 2.0]), T([0.0, 2.0, 0.5, 0.0])
    gs, ge = grads(P.pow, [base, exp], np.ones(4))
    np.testing.assert_array_equal(gs, [0.0, 0.0, np.inf, 0.0])
    np.testing.assert_allclose(ge, [0.0, 0.0, 0.0, math.log(2.0)])


def test_rem_gradient_is_fmods():
    a, b = np.array([5.5, -5.5, 7.0], np.float32), np.array([2.0, 2.0, -3.0], np.float32)
    ga, gb = grads(P.rem, [T(a, F32), T(b, F32)], np.ones(3, np.float32))
    np.testing.assert_array_equal(ga, np.ones(3))
    np.testing.assert_array_equal(gb, -np.trunc(a / b))


def test_atan2_and_div_float32_against_numpy():
    y, x = np.array([1.0, -2.0, 0.5], np.float32), np.array([0.5, 1.5, -3.0], np.float32)
    g = np.array([1.0, -2.0, 0.5], np.float32)
    gy, gx = grads(P.atan2, [T(y, F32), T(x, F32)], g)
    assert gy.dtype == np.float32
    np.testing.assert_allclose(gy, g * x / (x * x + y * y), rtol=1e-6)
    np.testing.assert_allclose(gx, -g * y / (x * x + y * y), rtol=1e-6)
    gy, gx = grads(P.div, [T(y, F32), T(x, F32)], g)
    np.testing.assert_allclose(gy, g / x, rtol=1e-6)
    np.testing.assert_allclose(gx, -g * y / x ** 2, rtol=1e-6)


def test_tanh_and_erf_float32_against_numpy():
    x = np.array([-1.5, 0.0, 0.3, 2.0], np.float32)
    g = np.array([0.5, 1.0, -2.0, 3.0], np.float32)
    (gx,) = grads(P.tanh, [T(x, F32)], g)
    assert gx.dtype == np.float32
    np.testing.assert_allclose(gx, g * (1 - np.tanh(x) ** 2), rtol=1e-6, atol=1e-7)
    (gx,) = grads(P.erf, [T(x, F32)], g)
    np.testing.assert_allclose(gx, g * 2 / np.sqrt(np.pi) * np.exp(-x * x), rtol=1e-6)


def test_complex_mul_gradient_is_conjugate():
    a, b = np.array([1 + 2j, -0.5j]), np.array([3 - 1j, 2 + 2j])
    g = np.array([1 - 1j, 0.5 + 0.5j])
    ga, gb = grads(P.mul, [T(a), T(b)], g)
    np.testing.assert_allclose(ga, g * np.conj(b))
    np.testing.assert_allclose(gb, g * np.conj(a))


# ---------------------------------------------------------------------------- other pointwise

def test_where():
    pred = T([[True, False, True], [False, False, True]], fnx.bool, False)
    check(lambda a, b: P.where(pred, a, b), rand((2, 3), seed=1), rand((2, 3), seed=2))
    ga, gb = grads(lambda a, b: P.where(pred, a, b), [rand((2, 3)), rand((2, 3))],
                   np.full((2, 3), 3.0))
    np.testing.assert_array_equal(ga, np.where(pred.numpy(), 3.0, 0.0))
    np.testing.assert_array_equal(gb, np.where(pred.numpy(), 0.0, 3.0))


def test_complex_real_imag():
    check(P.complex, rand((3,), seed=1), rand((3,), seed=2))
    z = np.array([1 + 2j, -3 + 0.5j])
    (g,) = grads(P.real, [T(z)], np.array([2.0, -1.0]))
    np.testing.assert_array_equal(g, [2 + 0j, -1 + 0j])
    (g,) = grads(P.imag, [T(z)], np.array([2.0, -1.0]))
    np.testing.assert_array_equal(g, [2j, -1j])
    (g,) = grads(P.conj, [T(z)], np.array([1 + 1j, 2 - 1j]))
    np.testing.assert_array_equal(g, [1 - 1j, 2 + 1j])


@pytest.mark.parametrize("src,dst", [(F32, F64), (F64, F32), (F64, C128), (C128, F64),
                                     (F64, fnx.float16)])
def test_convert_element_type(src, dst):
    x = T(np.array([0.5, -1.25, 2.0]), src)
    y = P.convert_element_type(x, dst)
    g = np.array([1.0, 2.0, -3.0]).astype(dst.numpy)
    (gx,) = fnx.autograd.grad([y], [x], [T(g, dst, False)])
    assert gx.dtype is src
    np.testing.assert_array_equal(gx.numpy(), g.real.astype(src.numpy))
    if dst.itemsize >= 8 and src.itemsize >= 8:      # exact enough for finite differences
        check(lambda a: P.convert_element_type(a, dst), x)


def test_convert_to_integer_is_not_differentiable():
    x = rand((3,))
    y = P.convert_element_type(x, fnx.int64)
    assert not y.requires_grad


def test_device_put():
    x = rand((2, 3))
    check(lambda a: P.device_put(a, fnx.device("cpu")), x)


# ---------------------------------------------------------------------------- layout

def test_broadcast_in_dim():
    check(lambda a: P.broadcast_in_dim(a, [2, 3, 4], [0, 2]), rand((1, 4)))
    check(lambda a: P.broadcast_in_dim(a, [3, 2], []), rand(()))
    check(lambda a: P.broadcast_in_dim(a, [2, 3], [0, 1]), rand((2, 3)))
    (g,) = grads(lambda a: P.broadcast_in_dim(a, [2, 3, 4], [0, 2]), [rand((1, 4))],
                 np.ones((2, 3, 4)))
    np.testing.assert_array_equal(g, np.full((1, 4), 6.0))


def test_reshape_transpose_squeeze_rev():
    check(lambda a: P.reshape(a, [4, 3]), rand((2, 6)))
    check(lambda a: P.reshape(a, []), rand((1, 1)))
    check(lambda a: P.transpose(a, [2, 0, 1]), rand((2, 3, 4)))
    check(lambda a: P.squeeze(a, [0, 2]), rand((1, 3, 1)))
    check(lambda a: P.squeeze(a, [2]), rand((2, 3, 1)))
    check(lambda a: P.rev(a, [0, 1]), rand((2, 3)))
    check(lambda a: P.rev(a, []), rand((2,)))


@pytest.mark.parametrize("start,limit,strides", [
    ([1, 0], [5, 3], [2, 2]), ([0, 1], [6, 3], None), ([2, 0], [2, 3], [1, 1]),
    ([5, 2], [6, 3], [3, 4])])
def test_slice(start, limit, strides):
    check(lambda a: P.slice(a, start, limit, strides), rand((6, 3)))


def test_slice_gradient_by_hand():
    (g,) = grads(lambda a: P.slice(a, [1], [6], [2]), [rand((7,))], np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(g, [0, 1, 0, 2, 0, 3, 0])


@pytest.mark.parametrize("low,high,interior", [
    ([1, 2], [0, 1], [0, 0]), ([-1, 2], [1, -2], [1, 2]), ([0, -3], [0, -1], [0, 1]),
    ([-2, 0], [-1, 0], [0, 0])])
def test_pad(low, high, interior):
    check(lambda a: P.pad(a, 0.5, low, high, interior), rand((3, 4)))


def test_pad_gradient_by_hand():
    # [a, 0, b, 0, c] cropped by one on the left: [0, b, 0, c, 9, 9]
    f = lambda a: P.pad(a, 9.0, [-1], [2], [1])     # noqa: E731
    (g,) = grads(f, [rand((3,))], np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    np.testing.assert_array_equal(g, [0.0, 2.0, 4.0])


def test_concatenate():
    check(lambda a, b, c: P.concatenate([a, b, c], 1), rand((2, 3), seed=1),
          rand((2, 1), seed=2), rand((2, 2), seed=3))
    a, b = rand((2,)), T([1.0, 2.0], requires_grad=False)
    y = P.concatenate([a, b, a], 0)
    (g,) = fnx.autograd.grad([y], [a], [T(np.arange(6.0), F64, False)])
    np.testing.assert_array_equal(g.numpy(), [0.0 + 4.0, 1.0 + 5.0])


# ---------------------------------------------------------------------------- reductions

@pytest.mark.parametrize("dims", [[0], [1, 2], [0, 1, 2], []])
def test_reduce_sum(dims):
    check(lambda a: P.reduce_sum(a, dims), rand((2, 3, 2)))


@pytest.mark.parametrize("dims", [[0], [0, 2], [1], [0, 1, 2], []])
def test_reduce_prod(dims):
    check(lambda a: P.reduce_prod(a, dims), rand((2, 3, 2), 0.5, 1.5))


def test_reduce_prod_with_zeros():
    x = np.array([[2.0, 0.0, 3.0, 4.0], [0.0, 5.0, 0.0, 1.0], [1.0, 2.0, 3.0, 4.0]])
    check(lambda a: P.reduce_prod(a, [1]), T(x))
    (g,) = grads(lambda a: P.reduce_prod(a, [1]), [T(x)], np.array([1.0, 1.0, 2.0]))
    np.testing.assert_array_equal(g, [[0.0, 24.0, 0.0, 0.0], [0.0] * 4,
                                      [48.0, 24.0, 16.0, 12.0]])


def test_reduce_prod_empty_and_complex():
    x = rand((0, 3))
    (g,) = fnx.autograd.grad([P.reduce_prod(x, [0])], [x], [T(np.ones(3), F64, False)])
    assert g.shape == (0, 3)
    check(lambda a: P.reduce_prod(a, [1]), rand((2, 3), 0.5, 1.5, cplx=True))


def test_reduce_prod_second_derivative():
    check_second(lambda a: P.reduce_prod(a, [0]), T([1.5, 0.0, -2.0, 0.5]))


@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
@pytest.mark.parametrize("dims", [[1], [0, 1], []])
def test_reduce_max_min(name, dims):
    check(lambda a: getattr(P, name)(a, dims), rand((3, 4)))


def test_reduce_max_min_distribute_ties_evenly():
    x = T([[1.0, 3.0, 3.0, 3.0], [2.0, -1.0, 2.0, 0.0]])
    (g,) = grads(lambda a: P.reduce_max(a, [1]), [x], np.array([3.0, 1.0]))
    np.testing.assert_allclose(g, [[0.0, 1.0, 1.0, 1.0], [0.5, 0.0, 0.5, 0.0]])
    (g,) = grads(lambda a: P.reduce_min(a, [0, 1]), [x], np.array(4.0))
    np.testing.assert_allclose(g, [[0.0, 0.0, 0.0, 0.0], [0.0, 4.0, 0.0, 0.0]])


def test_cumsum():
    check(lambda a: P.cumsum(a, 1), rand((3, 4)))
    check(lambda a: P.cumsum(a, 0), rand((3, 4), cplx=True))
    (g,) = grads(lambda a: P.cumsum(a, 0), [rand((3,))], np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(g, [6.0, 5.0, 3.0])


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_cumprod(n):
    check(lambda a: P.cumprod(a, 1), rand((2, n), 0.5, 1.5))


def _cumprod_grad_reference(x, g):
    """sum_{j >= k} g[j] * prod_{i <= j, i != k} x[i], by loops (exact with zeros)."""
    out = np.zeros_like(x)
    for k in range(len(x)):
        for j in range(k, len(x)):
            out[k] += g[j] * np.prod(np.delete(x[:j + 1], k))
    return out


@pytest.mark.parametrize("x", [[2.0, 0.0, 3.0, 0.5, 4.0], [0.0, 0.0, 2.0, 1.5, -1.0],
                               [1.5, -2.0, 0.5, 3.0, 0.0]])
def test_cumprod_with_zeros(x):
    x = np.array(x, np.float32)
    g = np.array([1.0, -2.0, 0.5, 3.0, 1.0], np.float32)
    check(lambda a: P.cumprod(a, 0), T(x))
    (gx,) = grads(lambda a: P.cumprod(a, 0), [T(x, F32)], g)
    assert gx.dtype == np.float32
    np.testing.assert_allclose(gx, _cumprod_grad_reference(x.astype(np.float64), g),
                               rtol=1e-6)


def test_cumprod_complex_and_second_derivative():
    check(lambda a: P.cumprod(a, 0), rand((4, 2), 0.5, 1.5, cplx=True))
    check_second(lambda a: P.cumprod(a, 0), T([1.5, 0.0, -2.0, 0.5]))


# ---------------------------------------------------------------------------- contraction

@pytest.mark.parametrize("lshape,rshape,dims", [
    ((3, 4), (4, 5), ([1], [0], [], [])),
    ((3, 4), (5, 4), ([1], [1], [], [])),
    ((2, 3, 4, 2), (3, 4, 5, 2), ([0, 2], [3, 1], [1], [0])),
    ((3, 2, 4), (4, 2), ([2], [0], [1], [1])),
    ((3,), (2,), ([], [], [], [])),
    ((4,), (4,), ([0], [0], [], [])),
])
def test_dot_general(lshape, rshape, dims):
    check(lambda a, b: P.dot_general(a, b, *dims), rand(lshape, seed=1), rand(rshape, seed=2))


def test_dot_general_complex_and_second_derivative():
    dims = ([1], [0], [], [])
    check(lambda a, b: P.dot_general(a, b, *dims), rand((2, 3), cplx=True, seed=1),
          rand((3, 2), cplx=True, seed=2))
    check_second(lambda a, b: P.dot_general(a, b, *dims), rand((2, 3), seed=1),
                 rand((3, 2), seed=2))


def test_dot_general_float32_against_numpy():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)).astype(np.float32), \
        rng.standard_normal((4, 5)).astype(np.float32)
    g = rng.standard_normal((3, 5)).astype(np.float32)
    ga, gb = grads(lambda x, y: P.dot_general(x, y, [1], [0], [], []),
                   [T(a, F32), T(b, F32)], g)
    assert ga.dtype == np.float32 and gb.dtype == np.float32
    np.testing.assert_allclose(ga, g @ b.T, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gb, a.T @ g, rtol=1e-5, atol=1e-6)


CONV_CASES = [
    # lhs shape, rhs shape, strides, padding low, padding high, lhs dil, rhs dil, groups
    ((2, 3, 7), (4, 3, 3), [1], [0], [0], [1], [1], 1),
    ((2, 3, 7), (4, 3, 3), [3], [2], [1], [1], [1], 1),
    ((2, 3, 7), (4, 3, 2), [1], [-1], [2], [1], [1], 1),
    ((2, 3, 5), (4, 3, 3), [2], [0], [0], [2], [1], 1),
    ((2, 3, 8), (4, 3, 3), [2], [1], [0], [1], [2], 1),
    ((2, 4, 6), (6, 2, 3), [2], [1], [2], [2], [2], 2),
    ((1, 4, 5, 4), (4, 1, 2, 3), [2, 1], [1, 0], [0, 1], [1, 1], [1, 1], 4),
    ((1, 2, 4, 5), (3, 2, 2, 2), [1, 2], [0, 1], [1, 0], [2, 1], [1, 2], 1),
    ((1, 2, 3, 3, 4), (2, 2, 2, 2, 2), [1, 2, 1], [0, 0, 0], [0, 0, 0], [1, 1, 1],
     [1, 1, 2], 1),
    ((2, 3, 2), (4, 3, 3), [1], [1], [0], [1], [1], 1),
]


def _conv(strides, plo, phi, ld, rd, groups):
    return lambda a, b: P.conv_general(a, b, strides, plo, phi, ld, rd, groups)


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_general(case):
    lshape, rshape, *args = case
    check(_conv(*args), rand(lshape, seed=1), rand(rshape, seed=2))


def test_conv_general_complex_and_second_derivative():
    f = _conv([2], [1], [0], [1], [1], 1)
    check(f, rand((1, 2, 5), cplx=True, seed=1), rand((2, 2, 2), cplx=True, seed=2))
    check_second(f, rand((1, 2, 5), seed=1), rand((2, 2, 2), seed=2))


def test_conv_general_empty_output():
    x, w = rand((2, 3, 2)), rand((4, 3, 3))
    y = P.conv_general(x, w, [1], [0], [0], [1], [1], 1)
    assert y.shape == (2, 4, 0)
    gx, gw = fnx.autograd.grad([y], [x, w], [T(np.zeros((2, 4, 0)), F64, False)])
    np.testing.assert_array_equal(gx.numpy(), np.zeros((2, 3, 2)))
    np.testing.assert_array_equal(gw.numpy(), np.zeros((4, 3, 3)))


def _conv2d_grads_reference(x, w, g, stride, plo, phi, ld, rd, groups):
    """Gradients of a 2-d conv_general by loops over outputs and taps (NumPy)."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    dil = np.zeros((n, c, (h - 1) * ld[0] + 1, (wd - 1) * ld[1] + 1))
    dil[:, :, ::ld[0], ::ld[1]] = x
    pad = [(max(p, 0), max(q, 0)) for p, q in zip(plo, phi)]
    xp = np.pad(dil, [(0, 0), (0, 0)] + pad)
    crop = tuple(slice(max(-p, 0), xp.shape[2 + i] - max(-q, 0))
                 for i, (p, q) in enumerate(zip(plo, phi)))
    xp = xp[(slice(None), slice(None)) + crop]
    gxp, gw = np.zeros_like(xp), np.zeros_like(w)
    og = o // groups
    for oc in range(o):
        grp = oc // og
        for ci in range(cg):
            cc = grp * cg + ci
            for p in range(g.shape[2]):
                for q in range(g.shape[3]):
                    for i in range(kh):
                        for j in range(kw):
                            r, s = p * stride[0] + i * rd[0], q * stride[1] + j * rd[1]
                            gxp[:, cc, r, s] += g[:, oc, p, q] * w[oc, ci, i, j]
                            gw[oc, ci, i, j] += np.sum(g[:, oc, p, q] * xp[:, cc, r, s])
    full = np.zeros((n, c) + dil.shape[2:])
    full_p = np.pad(full, [(0, 0), (0, 0)] + pad)
    full_p[(slice(None), slice(None)) + crop] = gxp
    gdil = full_p[(slice(None), slice(None)) + tuple(
        slice(p[0], p[0] + dil.shape[2 + i]) for i, p in enumerate(pad))]
    return gdil[:, :, ::ld[0], ::ld[1]], gw


@pytest.mark.parametrize("stride,plo,phi,ld,rd,groups", [
    ([2, 1], [1, 0], [0, 2], [1, 1], [1, 1], 1),
    ([1, 2], [0, -1], [1, 1], [2, 1], [1, 2], 2),
])
def test_conv_general_float32_against_loops(stride, plo, phi, ld, rd, groups):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 5, 6)).astype(np.float32)
    w = rng.standard_normal((4, 4 // groups, 2, 3)).astype(np.float32)
    f = _conv(stride, plo, phi, ld, rd, groups)
    out_shape = f(T(x, F32, False), T(w, F32, False)).shape
    g = rng.standard_normal(tuple(out_shape)).astype(np.float32)
    gx, gw = grads(f, [T(x, F32), T(w, F32)], g)
    assert gx.dtype == np.float32
    rx, rw = _conv2d_grads_reference(x.astype(np.float64), w.astype(np.float64),
                                     g.astype(np.float64), stride, plo, phi, ld, rd, groups)
    np.testing.assert_allclose(gx, rx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gw, rw, rtol=1e-4, atol=1e-5)


def test_conv_general_backward_on_meta():
    x = fnx.empty(2, 6, 9, 8, device="meta", requires_grad=True)
    w = fnx.empty(4, 3, 3, 2, device="meta", requires_grad=True)
    y = P.conv_general(x, w, [2, 1], [1, 0], [1, -1], [1, 2], [2, 1], 2)
    gx, gw = fnx.autograd.grad([y], [x, w], [fnx.empty(tuple(y.shape), device="meta")])
    assert gx.shape == x.shape and gw.shape == w.shape and gx.device.type == "meta"


# ---------------------------------------------------------------------------- gather/scatter

def test_gather():
    idx = T([[0, 2, 1], [1, 1, 0]], fnx.int64, False)
    check(lambda a: P.gather(a, 1, idx), rand((3, 4)))
    (g,) = grads(lambda a: P.gather(a, 1, idx), [rand((3, 4))], np.ones((2, 3)))
    np.testing.assert_array_equal(g, [[1, 1, 1, 0], [1, 2, 0, 0], [0, 0, 0, 0]])


@pytest.mark.parametrize("reduce", ["none", "add", "mul", "max", "min"])
def test_scatter(reduce):
    # duplicates in index row 0 (slot 0 twice), row 1 distinct
    idx = T([[0, 2, 0], [3, 1, 2]], fnx.int64, False)
    if reduce == "none":
        idx = T([[0, 2, 3], [3, 1, 2]], fnx.int64, False)
    check(lambda a, s: P.scatter(a, 1, idx, s, reduce), rand((3, 4), 0.5, 2.0, seed=1),
          rand((2, 3), 0.5, 2.0, seed=2))


def test_scatter_none_duplicates_follow_pytorch():
    idx = T([[1, 1]], fnx.int64, False)
    gs, gsrc = grads(lambda a, s: P.scatter(a, 1, idx, s), [rand((1, 3)), rand((1, 2))],
                     np.array([[1.0, 2.0, 3.0]]))
    np.testing.assert_array_equal(gs, [[1.0, 0.0, 3.0]])     # overwritten slot: nothing
    np.testing.assert_array_equal(gsrc, [[2.0, 2.0]])        # every writer: the slot's grad


def test_scatter_mul_with_zeros():
    idx = T([[0, 0, 1, 1, 1, 2]], fnx.int64, False)
    self_ = T([[2.0, 3.0, 0.5]])
    src = T([[0.0, 4.0, 0.0, 0.0, 2.0, 5.0]])
    check(lambda a, s: P.scatter(a, 1, idx, s, "mul"), self_, src)
    gs, gsrc = grads(lambda a, s: P.scatter(a, 1, idx, s, "mul"), [self_, src],
                     np.array([[1.0, 1.0, 1.0]]))
    np.testing.assert_array_equal(gs, [[0.0, 0.0, 5.0]])
    # slot 0: one zero -> its gradient is 2 * 4; slot 1: two zeros -> all 0
    np.testing.assert_array_equal(gsrc, [[8.0, 0.0, 0.0, 0.0, 0.0, 0.5]])


def test_scatter_max_ties_split_evenly():
    idx = T([[0, 0, 1]], fnx.int64, False)
    self_, src = T([[3.0, 1.0]]), T([[3.0, 2.0, 5.0]])
    gs, gsrc = grads(lambda a, s: P.scatter(a, 1, idx, s, "max"), [self_, src],
                     np.array([[6.0, 4.0]]))
    np.testing.assert_array_equal(gs, [[3.0, 0.0]])
    np.testing.assert_array_equal(gsrc, [[3.0, 0.0, 4.0]])


def test_scatter_second_derivative():
    idx = T([[0, 2, 0]], fnx.int64, False)
    check_second(lambda a, s: P.scatter(a, 1, idx, s, "mul"), rand((1, 3), 0.5, 2.0),
                 rand((1, 3), 0.5, 2.0, seed=1))


# ---------------------------------------------------------------------------- sorting

@pytest.mark.parametrize("dim,descending", [(1, False), (0, True), (1, True)])
def test_sort(dim, descending):
    check(lambda a: P.sort(a, dim, descending, True)[0], rand((3, 4)))


def test_sort_gradient_by_hand_and_second_derivative():
    (g,) = grads(lambda a: P.sort(a, 0, False, True)[0], [T([3.0, 1.0, 2.0])],
                 np.array([10.0, 20.0, 30.0]))
    np.testing.assert_array_equal(g, [30.0, 10.0, 20.0])
    check_second(lambda a: P.sort(a, 0, True, True)[0], T([0.5, -1.0, 2.0]))


@pytest.mark.parametrize("k,dim,largest", [(2, 1, True), (1, 0, False), (0, 1, True),
                                           (4, 1, False)])
def test_top_k(k, dim, largest):
    check(lambda a: P.top_k(a, k, dim, largest)[0], rand((3, 4)))


# ---------------------------------------------------------------------------- fft

@pytest.mark.parametrize("dim,forward", [([0, 1], True), ([1], False), ([], True)])
def test_fft_c2c(dim, forward):
    check(lambda a: P.fft_c2c(a, dim, forward), rand((3, 4), cplx=True))


@pytest.mark.parametrize("shape,dim,onesided", [
    ((3, 4), [1], True), ((3, 5), [0, 1], True), ((3, 5), [0], False), ((2, 1), [1], True)])
def test_fft_r2c(shape, dim, onesided):
    check(lambda a: P.fft_r2c(a, dim, onesided), rand(shape))


@pytest.mark.parametrize("shape,dim,n", [
    ((3, 4), [1], 6), ((3, 4), [1], 7), ((3, 3), [0, 1], 5), ((3, 1), [1], 1), ((3, 2), [1], 2),
    ((4, 3), [1, 0], 7)])
def test_fft_c2r(shape, dim, n):
    check(lambda a: P.fft_c2r(a, dim, n), rand(shape, cplx=True))


def test_fft_second_derivative():
    check_second(lambda a: P.fft_c2r(a, [0], 5), rand((3,), cplx=True))
    check_second(lambda a: P.fft_r2c(a, [0], True), rand((4,)))


# ---------------------------------------------------------------------------- saved state

def _saved_tensors(node):
    """The names of the saved arguments that are tensors (kept alive by the node)."""
    def holds(v):
        return isinstance(v, SavedTensor) or (
            isinstance(v, list) and any(isinstance(x, SavedTensor) for x in v))
    return {name for name, v in node.saved.items() if holds(v)}


def _saved_outputs(node):
    return [i for i, s in enumerate(node.outs or []) if s is not None]


_IDX = T([[0, 2, 0], [3, 1, 2]], fnx.int64, False)
_DISTINCT = T([[0, 2, 3], [3, 1, 2]], fnx.int64, False)

# name, fn, input shapes, the tensor arguments its node keeps, the outputs it keeps
SAVED = [
    ("reshape", lambda a: P.reshape(a, [6]), [(2, 3)], set(), []),
    ("slice", lambda a: P.slice(a, [0, 1], [2, 4], [1, 2]), [(2, 4)], set(), []),
    ("concatenate", lambda a, b: P.concatenate([a, b], 1), [(2, 3), (2, 1)], set(), []),
    ("reduce_sum", lambda a: P.reduce_sum(a, [1]), [(2, 3)], set(), []),
    ("gather", lambda a: P.gather(a, 1, _IDX), [(2, 4)], {"index"}, []),
    ("convert_element_type", lambda a: P.convert_element_type(a, C128), [(2, 3)], set(), []),
    ("device_put", lambda a: P.device_put(a, "cpu"), [(2, 3)], set(), []),
    ("fft_r2c", lambda a: P.fft_r2c(a, [1], True), [(3, 4)], set(), []),
    ("sort", lambda a: P.sort(a, 1, False, True)[0], [(3, 4)], set(), [1]),
    ("top_k", lambda a: P.top_k(a, 2, 1, True)[0], [(3, 4)], set(), [1]),
    ("scatter none", lambda a, s: P.scatter(a, 1, _DISTINCT, s, "none"), [(2, 4), (2, 3)],
     {"index"}, []),
    ("scatter add", lambda a, s: P.scatter(a, 1, _IDX, s, "add"), [(2, 4), (2, 3)],
     {"index"}, []),
    # the formulas that read values keep them
    ("scatter mul", lambda a, s: P.scatter(a, 1, _IDX, s, "mul"), [(2, 4), (2, 3)],
     {"self", "index", "src"}, [0]),
    ("scatter max", lambda a, s: P.scatter(a, 1, _IDX, s, "max"), [(2, 4), (2, 3)],
     {"self", "index", "src"}, [0]),
    ("reduce_prod", lambda a: P.reduce_prod(a, [1]), [(2, 3)], {"self"}, []),
]


@pytest.mark.parametrize("name,fn,shapes,kept,outs", SAVED, ids=[c[0] for c in SAVED])
def test_formula_saves_only_what_it_reads(name, fn, shapes, kept, outs):
    # formulas that read only a shape/dtype/device take <arg>_shape/<arg>_meta: the node
    # keeps no tensor for that argument, and the gradient still matches finite differences
    inputs = [rand(shape, 0.5, 2.0, seed=i) for i, shape in enumerate(shapes)]
    node = fn(*inputs).grad_fn
    assert _saved_tensors(node) == kept
    assert _saved_outputs(node) == outs
    check(fn, *inputs)


def test_metadata_formulas_give_the_inputs_shape():
    # the shapes the formulas read are their inputs' (reshape back to (2, 3), sum over the
    # reduced dim broadcast back), through a float32 -> float64 conversion
    x = T(np.arange(6.0).reshape(2, 3), F32)
    y = P.reduce_sum(P.convert_element_type(P.reshape(x, [3, 2]), F64), [0])
    (g,) = fnx.autograd.grad([y], [x], [T(np.array([1.0, 2.0]), F64, False)])
    assert g.dtype is F32
    np.testing.assert_array_equal(g.numpy(), [[1.0, 2.0, 1.0], [2.0, 1.0, 2.0]])


# ---------------------------------------------------------------------------- compiled

def test_formulas_trace_under_compile():
    # formulas are written with prims, so fnx.compile records and lowers the backward too
    def f(x, w):
        y = P.conv_general(x, w, [2], [1], [0], [1], [1], 1)
        z = P.reduce_prod(P.cumprod(P.tanh(y), 2), [2])
        z = P.reduce_sum(P.reduce_max(P.exp(z), [1]), [0])
        return fnx.autograd.grad([z], [x, w])
    x, w = rand((2, 3, 7), seed=1), rand((4, 3, 3), seed=2)
    eager = f(x, w)
    compiled = fnx.compile(f)(x, w)
    for e, c in zip(eager, compiled):
        np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-12, atol=1e-12)
