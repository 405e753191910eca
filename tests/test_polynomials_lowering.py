"""The orthogonal polynomials compiled (their JAX rules: jax.numpy and a lax.while_loop to
the largest order in the array) against the eager NumPy kernels, which follow PyTorch's
algorithms, on a grid of the special points: the interval ends, NaN, infinities, large |x|,
orders around PyTorch's thresholds, negative, fractional, NaN and infinite orders.

Outside the closed trigonometric forms the arithmetic is the same, and so must be every bit
(NaN where NaN). Inside (-1, 1) past the order threshold the value is, e.g. for T,
cos(n acos x): XLA's acos differs from NumPy's by an ulp or so, and the product with n
carries that difference into the result as an absolute error of about n eps; the test
allows 8 eps (n + 1) / |d|, d the closed form's denominator (1, sin t, cos t/2, sin t/2).
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

import fnx
from fnx.ir import prims as P
from fnx.lower.jax import JAX_TARGET

# the orders past which PyTorch uses the trigonometric forms inside (-1, 1): the shifted
# kinds have their own
TRIG_ORDER = {"chebyshev_polynomial_t": 6, "chebyshev_polynomial_u": 8,
              "chebyshev_polynomial_v": 8, "chebyshev_polynomial_w": 8,
              "shifted_chebyshev_polynomial_t": 6, "shifted_chebyshev_polynomial_u": 6,
              "shifted_chebyshev_polynomial_v": 6, "shifted_chebyshev_polynomial_w": 4}
NAMES = sorted(TRIG_ORDER) + ["hermite_polynomial_h", "hermite_polynomial_he",
                              "laguerre_polynomial_l", "legendre_polynomial_p"]

ORDERS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 100, 127, 128, 129, 511, 512, 513, 600,
          -1, -7, 2.5, 7.9, -0.5, np.nan, np.inf, -np.inf, 1e30]


def grid(name, dtype):
    ends = [0.0, 0.5, 1.0, 1 - 1e-7, 1e-7] if name.startswith("shifted") else [
        -1.0, 0.0, 1.0, 1 - 1e-7, -1 + 1e-7]
    rng = np.random.default_rng(len(name))
    x = np.concatenate([ends, [0.3, -0.3, 0.7, 1.5, -1.5, 30.0, -30.0, 1e10, -1e10,
                               np.nan, np.inf, -np.inf], rng.uniform(-1.2, 1.2, 24)])
    x, n = np.broadcast_arrays(x[:, None], np.array(ORDERS)[None, :])
    return x.astype(dtype), n.astype(dtype)


def trig_bound(name, x, n, dtype):
    """The difference allowed per element: 0 outside the closed trigonometric forms, the
    effect of an ulp or so in acos (and cos, sin) inside them."""
    if name not in TRIG_ORDER:
        return np.zeros(x.shape)
    y = 2 * x.astype(np.float64) - 1 if name.startswith("shifted") else x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        order = np.where(np.isfinite(n), np.trunc(n), -1)
        inside = (order > TRIG_ORDER[name]) & (np.abs(y) < 1)
        t = np.arccos(np.where(inside, y, 0))
    d = {"t": np.ones_like(t), "u": np.sin(t), "v": np.cos(t / 2), "w": np.sin(t / 2)}[name[-1]]
    eps = np.finfo(dtype).eps
    return np.where(inside, 8 * eps * (order + 1) / np.where(inside, np.abs(d), 1), 0.0)


def assert_matches(got, want, bound):
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    exact = bound == 0
    np.testing.assert_array_equal(got[exact], want[exact])
    with np.errstate(invalid="ignore"):
        err = np.abs(got[~exact].astype(np.float64) - want[~exact])
    assert (err <= bound[~exact]).all(), (err / bound[~exact]).max()


def compiled(name):
    return fnx.compile(lambda x, n: getattr(fnx.special, name)(x, n))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", NAMES)
def test_compiled_matches_the_numpy_kernel(name, dtype):
    x, n = grid(name, dtype)
    want = getattr(fnx.special, name)(fnx.tensor(x), fnx.tensor(n)).numpy()
    got = compiled(name)(fnx.tensor(x), fnx.tensor(n)).numpy()
    assert_matches(got, want, trig_bound(name, x, n, dtype))


@pytest.mark.parametrize("name", ["chebyshev_polynomial_u", "hermite_polynomial_h",
                                  "legendre_polynomial_p"])
def test_one_program_serves_every_order(name):
    # the loop's bound is data: a program compiled at small orders is right at large ones
    f = compiled(name)
    x = np.linspace(-1.1, 1.1, 7)
    for top in (1, 3, 60, 400):
        n = np.arange(top + 1)[:, None] * np.ones(7)
        want = getattr(fnx.special, name)(fnx.tensor(x), fnx.tensor(n)).numpy()
        got = f(fnx.tensor(x), fnx.tensor(n)).numpy()
        assert_matches(got, want, trig_bound(name, np.broadcast_to(x, n.shape), n, np.float64))


def test_integer_orders_and_empty():
    x = fnx.tensor([0.25, 1.5, -0.75])
    n = fnx.tensor([[3], [12]])                       # int64: promoted to float32
    for name in NAMES:
        want = getattr(fnx.special, name)(x, n)
        got = compiled(name)(x, n)
        assert got.dtype == want.dtype == fnx.float32
        assert_matches(got.numpy(), want.numpy(),
                       trig_bound(name, np.broadcast_to(x.numpy(), (2, 3)),
                                  np.broadcast_to(n.numpy(), (2, 3)), np.float32))
        assert compiled(name)(fnx.empty(0, 2), fnx.empty(0, 2)).shape == (0, 2)


@pytest.mark.parametrize("name", NAMES)
def test_rule_is_an_xla_program(name):
    rule = JAX_TARGET.rules[getattr(P, name)]
    with jax.enable_x64(True):
        jaxpr = str(jax.make_jaxpr(rule)(np.zeros(3), np.zeros(3)))
    assert "callback" not in jaxpr and "while" in jaxpr


def test_exports():
    def f(x, n):
        return fnx.special.chebyshev_polynomial_t(x, n) + fnx.special.hermite_polynomial_he(x, n)
    x, n = fnx.tensor([0.3, -0.6, 1.2]), fnx.tensor([2.0, 9.0, 4.0])
    ep = fnx.export.export(f, (x, n))
    assert "callback" not in ep.mlir_module()
    assert_matches(ep.module()(x, n).numpy(), f(x, n).numpy(),
                   trig_bound("chebyshev_polynomial_t", x.numpy(), n.numpy(), np.float32))


@pytest.mark.skipif(not fnx.cuda.is_available(),
                    reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cuda_matches_the_numpy_kernel(dtype):
    # eager cuda ops run the JAX rules
    for name in NAMES:
        x, n = grid(name, dtype)
        want = getattr(fnx.special, name)(fnx.tensor(x), fnx.tensor(n)).numpy()
        got = getattr(fnx.special, name)(fnx.tensor(x, device="cuda"),
                                         fnx.tensor(n, device="cuda"))
        assert got.device.type == "cuda"
        assert_matches(got.cpu().numpy(), want, trig_bound(name, x, n, dtype))
