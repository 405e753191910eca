"""``inplace=True`` activations (F.elu(x, inplace=True), nn.CELU(inplace=True), ...): the
value written into the input and the gradient through it are the out-of-place form's.

The references are NumPy formulas; gradients are checked against central finite
differences of those formulas."""
import numpy as np
import scipy.special
import pytest

import fnx
import fnx.nn as nn
import fnx.nn.functional as F

SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
X = np.array([-2.5, -1.2, -0.3, 0.2, 0.7, 1.5, 4.0, 7.0])


def _sig(x):
    return 1 / (1 + np.exp(-x))


# name, F keyword arguments, NumPy reference
CASES = [
    ("elu", {}, lambda x: np.where(x > 0, x, np.expm1(x))),
    ("elu", {"alpha": 0.5}, lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    ("celu", {"alpha": 2.0}, lambda x: np.where(x > 0, x, 2.0 * np.expm1(x / 2.0))),
    ("selu", {}, lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(x))),
    ("leaky_relu", {"negative_slope": 0.2}, lambda x: np.where(x > 0, x, 0.2 * x)),
    ("hardtanh", {"min_val": -2.0, "max_val": 3.0}, lambda x: np.clip(x, -2.0, 3.0)),
    ("relu", {}, lambda x: np.maximum(x, 0)),
    ("relu6", {}, lambda x: np.clip(x, 0, 6)),
    ("threshold", {"threshold": 0.5, "value": -3.0}, lambda x: np.where(x <= 0.5, -3.0, x)),
    ("silu", {}, lambda x: x * _sig(x)),
    ("mish", {}, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    ("hardsigmoid", {}, lambda x: np.clip(x + 3, 0, 6) / 6),
    ("hardswish", {}, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    ("rrelu", {"lower": 0.1, "upper": 0.3}, lambda x: np.where(x > 0, x, 0.2 * x)),
]
IDS = [f"{n}-{'-'.join(map(str, k.values()))}" for n, k, _ in CASES]


def _fd(ref, x, h=1e-6):
    return (ref(x + h) - ref(x - h)) / (2 * h)


def _check(call, ref, x=X, weights=None):
    """``call(y)`` on a non-leaf ``y`` (so it may be written in place) returns ``y`` holding
    ``ref(x)``; the gradient of ``sum(y * weights)`` reaching the leaf is ``ref``'s."""
    leaf = fnx.tensor(x, requires_grad=True)
    y = leaf * 1.0
    assert call(y) is y
    np.testing.assert_allclose(y.detach().numpy(), ref(x), rtol=1e-12, atol=1e-12)
    w = np.ones_like(x) if weights is None else weights
    (y * fnx.tensor(w)).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), _fd(ref, x) * w, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name,kwargs,ref", CASES, ids=IDS)
def test_inplace_forward_and_backward_match_reference(name, kwargs, ref):
    _check(lambda y: getattr(F, name)(y, **kwargs, inplace=True), ref,
           weights=np.arange(1.0, 9.0))


@pytest.mark.parametrize("name", ["elu_", "leaky_relu_", "hardtanh_", "threshold_", "rrelu_",
                                  "celu_", "selu_", "relu_"])
def test_functional_underscore_forms(name):
    args = {"threshold_": (0.0, 1.0)}.get(name, ())
    ref = {n: r for n, _, r in CASES}
    ref["threshold"] = lambda x: np.where(x <= 0.0, 1.0, x)
    ref["rrelu"] = lambda x: np.where(x > 0, x, x * (1 / 8 + 1 / 3) / 2)
    ref["leaky_relu"] = lambda x: np.where(x > 0, x, 0.01 * x)
    ref["hardtanh"] = lambda x: np.clip(x, -1, 1)
    ref["celu"] = ref["elu"] = lambda x: np.where(x > 0, x, np.expm1(x))
    _check(lambda y: getattr(F, name)(y, *args), ref[name[:-1]])


def test_rrelu_training_inplace_gradient_is_the_drawn_slope():
    leaf = fnx.tensor(X, requires_grad=True)
    y = leaf * 1.0
    F.rrelu(y, 0.1, 0.3, training=True, inplace=True)
    got = y.detach().numpy()
    slope = np.where(X > 0, 1.0, got / X)
    assert np.all((slope[X < 0] >= 0.1) & (slope[X < 0] <= 0.3))
    y.sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), slope, rtol=1e-12)


@pytest.mark.parametrize("module,ref", [
    (nn.ELU(0.5, inplace=True), CASES[1][2]),
    (nn.CELU(2.0, inplace=True), CASES[2][2]),
    (nn.SELU(inplace=True), CASES[3][2]),
    (nn.LeakyReLU(0.2, inplace=True), CASES[4][2]),
    (nn.Hardtanh(-2.0, 3.0, inplace=True), CASES[5][2]),
    (nn.SiLU(inplace=True), CASES[9][2]),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_modules_inplace(module, ref):
    _check(module, ref)


def test_inplace_on_leaf_requiring_grad_is_refused_unchanged():
    leaf = fnx.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        F.elu(leaf, inplace=True)
    np.testing.assert_array_equal(leaf.detach().numpy(), X)


def test_inplace_on_integer_input_is_refused_unchanged():
    t = fnx.tensor([-1, 2])
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        F.elu(t, inplace=True)
    assert t.tolist() == [-1, 2]


def test_inplace_without_grad_writes_once():
    t = fnx.tensor(X)
    v = t._version
    assert F.celu(t, 2.0, inplace=True) is t
    np.testing.assert_allclose(t.numpy(), CASES[2][2](X), rtol=1e-12)
    assert t._version == v + 1


@pytest.mark.parametrize("name,args,ref", [
    ("rrelu_", (0.1, 0.3), lambda x: np.where(x > 0, x, 0.2 * x)),
    ("celu_", (2.0,), CASES[2][2]),
    ("selu_", (), CASES[3][2]),
    ("threshold_", (0.5, -3.0), CASES[8][2]),
])
def test_fnx_level_inplace_forms(name, args, ref):
    _check(lambda y: getattr(fnx, name)(y, *args), ref)


def test_fnx_rrelu_inplace_training_gradient_is_the_drawn_slope():
    leaf = fnx.tensor(X, requires_grad=True)
    y = leaf * 1.0
    fnx.rrelu_(y, 0.1, 0.3, True)
    slope = np.where(X > 0, 1.0, y.detach().numpy() / X)
    y.sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), slope, rtol=1e-12)


@pytest.mark.parametrize("name,call,ref", [
    ("polygamma_", lambda y: y.polygamma_(1), lambda x: scipy.special.polygamma(1, x)),
    ("ldexp_", lambda y: y.ldexp_(fnx.tensor([1.0, 2.0, 0.0])), lambda x: x * [2.0, 4.0, 1.0]),
    ("float_power_", lambda y: y.float_power_(3.0), lambda x: x ** 3),
], ids=lambda v: v if isinstance(v, str) else "")
def test_other_inplace_methods_written_by_copy_differentiate(name, call, ref):
    _check(call, ref, x=np.array([0.3, 0.6, 1.7]))
