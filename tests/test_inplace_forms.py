"""The in-place forms of issue 14: ``fnx.<op>_`` functions (from the Tensor methods), the
generic in-place methods of ops without an in-place operator (``clamp_min_``,
``deg2rad_``, ``cumsum_``, ``addmm_``, ``celu_``, ...), and the second names
(``divide_``, ...). References are NumPy/SciPy/math; refusals leave the target unchanged;
autograd against analytic derivatives; ``fnx.compile`` against eager; a sample on the cuda
backend (FNX_CUDA_ON_CPU=1).
"""
import inspect
import math

import numpy as np
import pytest
import scipy.special as sp

import fnx
import fnx.nn.functional as F

X = np.array([0.25, 0.5, 0.75], np.float32)      # inside every unary op's domain
BIG = np.array([1.5, 2.0, 3.0], np.float32)       # acosh's domain
INTS = np.array([4, 6, 9], np.int64)


def _selu(a):
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    return scale * np.where(a > 0, a, alpha * np.expm1(a))


# name -> (input, extra arguments, NumPy reference of the new value)
UNARY = {
    "abs_": (-X, (), np.abs), "acos_": (X, (), np.arccos), "acosh_": (BIG, (), np.arccosh),
    "arccos_": (X, (), np.arccos), "arccosh_": (BIG, (), np.arccosh),
    "arcsin_": (X, (), np.arcsin), "arcsinh_": (X, (), np.arcsinh),
    "arctan_": (X, (), np.arctan), "arctanh_": (X, (), np.arctanh),
    "asin_": (X, (), np.arcsin), "asinh_": (X, (), np.arcsinh), "atan_": (X, (), np.arctan),
    "atanh_": (X, (), np.arctanh), "ceil_": (BIG, (), np.ceil), "cos_": (X, (), np.cos),
    "cosh_": (X, (), np.cosh), "deg2rad_": (BIG, (), np.deg2rad), "erf_": (X, (), sp.erf),
    "erfc_": (X, (), sp.erfc), "exp2_": (X, (), np.exp2), "exp_": (X, (), np.exp),
    "expm1_": (X, (), np.expm1), "fix_": (-BIG, (), np.trunc), "floor_": (BIG, (), np.floor),
    "frac_": (-BIG, (), lambda a: a - np.trunc(a)), "i0_": (X, (), sp.i0),
    "log10_": (X, (), np.log10), "log1p_": (X, (), np.log1p), "log2_": (X, (), np.log2),
    "log_": (X, (), np.log), "logit_": (X, (), sp.logit), "neg_": (X, (), np.negative),
    "negative_": (X, (), np.negative), "rad2deg_": (X, (), np.rad2deg),
    "reciprocal_": (X, (), np.reciprocal), "relu_": (X - 0.5, (), lambda a: np.maximum(a, 0)),
    "round_": (BIG, (), np.round), "rsqrt_": (X, (), lambda a: 1 / np.sqrt(a)),
    "sigmoid_": (X, (), sp.expit), "sin_": (X, (), np.sin), "sinc_": (X, (), np.sinc),
    "sinh_": (X, (), np.sinh), "sqrt_": (X, (), np.sqrt), "square_": (X, (), np.square),
    "tan_": (X, (), np.tan), "tanh_": (X, (), np.tanh), "trunc_": (-BIG, (), np.trunc),
    "zero_": (X, (), np.zeros_like), "conj_physical_": (X, (), np.conj),
    "detach_": (X, (), lambda a: a),
    "clamp_": (X, (0.3, 0.6), lambda a: np.clip(a, 0.3, 0.6)),
    "clip_": (X, (0.3, 0.6), lambda a: np.clip(a, 0.3, 0.6)),
    "clamp_min_": (X, (0.6,), lambda a: np.maximum(a, 0.6)),
    "clamp_max_": (X, (0.6,), lambda a: np.minimum(a, 0.6)),
    "fill_": (X, (2.5,), lambda a: np.full_like(a, 2.5)),
    "gcd_": (INTS, (np.array([6, 4, 6]),), lambda a: np.gcd(a, [6, 4, 6])),
    "lcm_": (INTS, (np.array([6, 4, 6]),), lambda a: np.lcm(a, [6, 4, 6])),
    "ldexp_": (X, (np.array([1, 2, 3]),), lambda a: np.ldexp(a, [1, 2, 3])),
    "xlogy_": (X, (np.array([2.0, 3.0, 4.0], np.float32),),
               lambda a: a * np.log([2.0, 3.0, 4.0])),
    "celu_": (X - 0.5, (), lambda a: np.where(a > 0, a, np.expm1(a))),
    "selu_": (X - 0.5, (), _selu),
    "threshold_": (X, (0.5, -1.0), lambda a: np.where(a > 0.5, a, -1.0)),
    "dropout_": (X, (0.0, True), lambda a: a),
    "index_put_": (X, ((np.array([0, 2]),), np.array(9.0, np.float32)),
                   lambda a: np.array([9.0, a[1], 9.0])),
}


def _t(v):
    if isinstance(v, tuple):
        return tuple(_t(e) for e in v)
    return fnx.from_numpy(np.array(v)) if isinstance(v, np.ndarray) else v


@pytest.mark.parametrize("name", sorted(UNARY))
def test_function_form_writes_input(name):
    a, args, ref = UNARY[name]
    x = fnx.from_numpy(a.copy())
    r = getattr(fnx, name)(x, *_t(args))
    assert r is x
    np.testing.assert_allclose(x.numpy(), np.asarray(ref(a.astype(np.float64))
                                                     if a.dtype.kind == "f" else ref(a)),
                               rtol=1e-5, atol=1e-6)


def test_function_form_has_method_signature():
    assert list(inspect.signature(fnx.clamp_).parameters) == ["input", "min", "max"]
    assert list(inspect.signature(fnx.threshold_).parameters) == ["input", "threshold", "value"]


def test_addmv_and_feature_dropout_functions():
    y = fnx.ones(2)
    m = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    assert fnx.addmv_(y, fnx.from_numpy(m), fnx.tensor([1.0, 1.0]), beta=2) is y
    np.testing.assert_allclose(y.numpy(), 2 + m.sum(1))
    z = fnx.ones(2, 3, 4)
    assert fnx.feature_dropout_(z, 1.0, True) is z       # p=1 zeroes every channel
    np.testing.assert_array_equal(z.numpy(), np.zeros((2, 3, 4)))


# method -> (input, args, kwargs, reference)
A = np.array([[1.0, -2.0], [3.0, 0.5]], np.float32)
METHODS = {
    "clamp_min_": (A, (0.7,), {}, lambda a: np.maximum(a, 0.7)),
    "clamp_max_": (A, (0.7,), {}, lambda a: np.minimum(a, 0.7)),
    "deg2rad_": (A, (), {}, lambda a: a * math.pi / 180),
    "rad2deg_": (A, (), {}, lambda a: a * 180 / math.pi),
    "conj_physical_": (A, (), {}, np.conj),
    "cumsum_": (A, (1,), {}, lambda a: np.cumsum(a, 1)),
    "cumprod_": (A, (0,), {}, lambda a: np.cumprod(a, 0)),
    "addmm_": (A, (A, A), {"beta": 0.5, "alpha": 2.0}, lambda a: 0.5 * a + 2 * a @ a),
    "divide_": (A, (2.0,), {}, lambda a: a / 2), "true_divide_": (A, (4.0,), {}, lambda a: a / 4),
    "multiply_": (A, (3.0,), {}, lambda a: a * 3), "subtract_": (A, (1.0,), {}, lambda a: a - 1),
}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_method_writes_self(name):
    a, args, kwargs, ref = METHODS[name]
    x = fnx.from_numpy(a.copy())
    r = getattr(x, name)(*_t(tuple(np.array(v) if isinstance(v, np.ndarray) else v
                                   for v in args)), **kwargs)
    assert r is x
    np.testing.assert_allclose(x.numpy(), ref(a.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_baddbmm_():
    b = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
    x = fnx.from_numpy(b.copy())
    assert x.baddbmm_(fnx.from_numpy(b), fnx.from_numpy(b), alpha=0.5) is x
    np.testing.assert_allclose(x.numpy(), b + 0.5 * b @ b)


def test_write_through_a_view():
    base = fnx.zeros(2, 3)
    base[1].clamp_min_(1.5)
    np.testing.assert_array_equal(base.numpy(), [[0, 0, 0], [1.5, 1.5, 1.5]])


def test_cast_refusal_leaves_target_unchanged():
    cast = "result type Float can't be cast to the desired output type Long"
    for call, message in ((lambda t: t.deg2rad_(), cast), (lambda t: fnx.sqrt_(t), cast),
                          (lambda t: t.clamp_min_(0.5), cast),
                          (lambda t: fnx.celu_(t), "\"elu_cpu\" not implemented for 'Long'")):
        x = fnx.tensor([1, 2, 3])
        with pytest.raises(RuntimeError, match=message):
            call(x)
        assert x.tolist() == [1, 2, 3] and x._version == 0


def test_shape_refusal_leaves_target_unchanged():
    x = fnx.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="clamp_min_: output with shape"):
        x.clamp_min_(fnx.ones(3, 2))
    assert x.tolist() == [1.0, 2.0]


def test_leaf_requiring_grad_refuses():
    for call in (lambda t: fnx.exp_(t), lambda t: t.deg2rad_(), lambda t: fnx.celu_(t)):
        w = fnx.tensor([0.5, -0.5], requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being "
                                               "used in an in-place operation"):
            call(w)
        assert w.tolist() == [0.5, -0.5]


def test_autograd_through_generic_in_place():
    a = np.array([-1.0, 0.5, 2.0])
    w = fnx.tensor(a, requires_grad=True)
    y = w * 1
    fnx.celu_(y, 2.0)                   # celu saves its input: computed on a copy
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.where(a > 0, 1.0, np.exp(a / 2.0)))
    w = fnx.tensor(a, requires_grad=True)
    y = w * 1
    y.cumprod_(0)
    y.sum().backward()
    # d/dw_i sum_k prod_{j<=k} w_j, by hand
    expect = [sum(np.prod([a[j] for j in range(k + 1) if j != i]) for k in range(i, 3))
              for i in range(3)]
    np.testing.assert_allclose(w.grad.numpy(), expect)


def test_f_celu_selu_inplace():
    x = fnx.tensor([-1.0, 1.0])
    assert F.celu_(x) is x and F.selu_(fnx.tensor([0.0])).tolist() == [0.0]
    np.testing.assert_allclose(x.numpy(), [math.expm1(-1.0), 1.0], rtol=1e-6)


def test_fill_is_functional():
    x = fnx.tensor([1.0, 2.0])
    y = fnx.fill(x, 3)
    assert y.tolist() == [3.0, 3.0] and x.tolist() == [1.0, 2.0]
    assert fnx.fill(fnx.tensor([1, 2]), fnx.tensor(7)).tolist() == [7, 7]


def test_compiled_matches_eager():
    def f(x, y):
        fnx.sinc_(x)
        y.clamp_max_(0.5).deg2rad_()
        z = x * 1
        fnx.celu_(z)
        return z.cumsum_(0)

    a = np.array([-1.5, 0.25, 3.0], np.float32)
    xe, ye = fnx.from_numpy(a.copy()), fnx.from_numpy(a.copy())
    xc, yc = fnx.from_numpy(a.copy()), fnx.from_numpy(a.copy())
    re = f(xe, ye)
    rc = fnx.compile(f)(xc, yc)
    np.testing.assert_allclose(rc.numpy(), re.numpy(), rtol=1e-6)
    np.testing.assert_allclose(xc.numpy(), np.sinc(a), rtol=1e-6)
    np.testing.assert_allclose(yc.numpy(), np.deg2rad(np.minimum(a, 0.5)), rtol=1e-6)


@pytest.mark.skipif(not fnx.cuda.is_available(),
                    reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")
def test_cuda_backend_sample():
    a = np.array([[0.5, -2.0], [1.0, 3.0]], np.float32)
    x = fnx.from_numpy(a.copy()).cuda()
    assert fnx.exp_(x) is x and x.clamp_min_(2.0) is x and x.cumsum_(1) is x
    np.testing.assert_allclose(x.cpu().numpy(), np.cumsum(np.maximum(np.exp(a), 2.0), 1),
                               rtol=1e-6)
    i = fnx.tensor([1, 2]).cuda()
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.deg2rad_()
    assert i.cpu().tolist() == [1, 2]
