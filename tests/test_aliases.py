"""PyTorch's second names (NumPy's spellings) and small named compositions, each against
NumPy: absolute, arccos..., fix, greater..., fmax/fmin, positive, isposinf/isneginf,
isreal, inner, vdot, deg2rad/rad2deg, trapz."""
from __future__ import annotations

import numpy as np
import pytest

import fnx

X = np.array([-0.9, -0.3, 0.0, 0.4, 0.8])
Y = np.array([0.5, -0.3, 1.0, 0.4, -2.0])

UNARY = [("absolute", np.absolute, X), ("arccos", np.arccos, X), ("arcsin", np.arcsin, X),
         ("arctan", np.arctan, X), ("arctanh", np.arctanh, X), ("arcsinh", np.arcsinh, X),
         ("arccosh", np.arccosh, X + 2), ("negative", np.negative, X), ("fix", np.fix, X * 3),
         ("deg2rad", np.deg2rad, X * 100), ("rad2deg", np.rad2deg, X), ("positive", np.positive, X)]
BINARY = [("arctan2", np.arctan2), ("greater", np.greater), ("greater_equal", np.greater_equal),
          ("less", np.less), ("less_equal", np.less_equal), ("not_equal", np.not_equal)]


@pytest.mark.parametrize("name,ref,x", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, ref, x):
    np.testing.assert_allclose(getattr(fnx, name)(fnx.tensor(x)).numpy(), ref(x), rtol=1e-12)
    np.testing.assert_allclose(getattr(fnx.tensor(x), name)().numpy(), ref(x), rtol=1e-12)


@pytest.mark.parametrize("name,ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, ref):
    np.testing.assert_allclose(getattr(fnx, name)(fnx.tensor(X), fnx.tensor(Y)).numpy(),
                               ref(X, Y), rtol=1e-12)
    np.testing.assert_allclose(getattr(fnx.tensor(X), name)(fnx.tensor(Y)).numpy(), ref(X, Y),
                               rtol=1e-12)


def test_inplace_alias_writes():
    t = fnx.tensor(X.copy())
    t.absolute_()
    np.testing.assert_array_equal(t.numpy(), np.abs(X))


@pytest.mark.parametrize("name,ref", [("fmax", np.fmax), ("fmin", np.fmin)])
def test_fmax_fmin_ignore_nan(name, ref):
    a = np.array([1.0, np.nan, np.nan, 3.0, -1.0])
    b = np.array([np.nan, 2.0, np.nan, 1.0, 4.0])
    np.testing.assert_array_equal(getattr(fnx, name)(fnx.tensor(a), fnx.tensor(b)).numpy(),
                                  ref(a, b))
    ia, ib = np.array([1, 5]), np.array([3, 2])
    np.testing.assert_array_equal(getattr(fnx, name)(fnx.tensor(ia), fnx.tensor(ib)).numpy(),
                                  ref(ia, ib))


def test_infinity_and_reality_tests():
    v = np.array([np.inf, -np.inf, 1.0, np.nan])
    np.testing.assert_array_equal(fnx.isposinf(fnx.tensor(v)).numpy(), np.isposinf(v))
    np.testing.assert_array_equal(fnx.isneginf(fnx.tensor(v)).numpy(), np.isneginf(v))
    c = np.array([1 + 0j, 1j, -2 + 0j])
    np.testing.assert_array_equal(fnx.isreal(fnx.tensor(c)).numpy(), np.isreal(c))
    np.testing.assert_array_equal(fnx.isreal(fnx.tensor(v)).numpy(), np.isreal(v))


def test_inner_vdot_trapz():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4))
    np.testing.assert_allclose(fnx.inner(fnx.tensor(a), fnx.tensor(b)).numpy(), np.inner(a, b),
                               rtol=1e-12)
    u, v = rng.standard_normal(3) + 1j, rng.standard_normal(3) - 2j
    np.testing.assert_allclose(fnx.vdot(fnx.tensor(u), fnx.tensor(v)).item(), np.vdot(u, v),
                               rtol=1e-12)
    y, x = rng.standard_normal(6), np.sort(rng.standard_normal(6))
    np.testing.assert_allclose(fnx.trapz(fnx.tensor(y), fnx.tensor(x)).item(),
                               np.trapezoid(y, x), rtol=1e-12)
    np.testing.assert_allclose(fnx.trapz(fnx.tensor(y), dx=0.5).item(),
                               np.trapezoid(y, dx=0.5), rtol=1e-12)
    with pytest.raises(RuntimeError, match="inner\\(\\) the last dimension must match"):
        fnx.inner(fnx.ones(2), fnx.ones(3))
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        fnx.vdot(fnx.ones(2, 2), fnx.ones(2))
