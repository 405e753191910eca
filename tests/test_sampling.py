"""fnx.poisson / fnx.binomial (aten poisson/binomial on prims.poisson/binomial): moments
against the distributions' formulas with a fixed seed, structure (integer counts within
range), the eager CPU kernel and the JAX lowering drawing the same counts from one key,
reproducibility under manual_seed, no gradient, errors."""
import numpy as np
import pytest

import fnx
from fnx.ir import prims as P


def test_poisson_moments_and_structure():
    fnx.manual_seed(0)
    rate = np.array([0.0, 0.5, 3.0, 40.0])
    x = fnx.poisson(fnx.tensor(np.repeat(rate[None], 50_000, 0), dtype=fnx.float64))
    xn = x.numpy()
    assert x.dtype is fnx.float64 and np.all(xn == np.round(xn)) and np.all(xn >= 0)
    np.testing.assert_array_equal(xn[:, 0], 0)
    # Poisson: mean = var = rate (standard errors ~ sqrt(rate / n))
    np.testing.assert_allclose(xn.mean(0), rate, atol=0.1)
    np.testing.assert_allclose(xn.var(0)[1:], rate[1:], rtol=0.05)


def test_binomial_moments_structure_broadcast():
    fnx.manual_seed(1)
    n = np.array([0.0, 1.0, 10.0, 50.0])
    p = np.array([0.3, 0.5, 0.2, 0.9])
    b = fnx.binomial(fnx.tensor(np.repeat(n[None], 40_000, 0), dtype=fnx.float32),
                     fnx.tensor(p, dtype=fnx.float32))
    bn = b.numpy()
    assert b.shape == (40_000, 4) and b.dtype is fnx.float32
    assert np.all(bn == np.round(bn)) and np.all(bn >= 0) and np.all(bn <= n)
    assert np.all(np.abs(bn.mean(0) - n * p) <= 0.02 + 0.01 * n), bn.mean(0)
    np.testing.assert_allclose(bn.var(0)[1:], (n * p * (1 - p))[1:], rtol=0.05)
    edge = fnx.binomial(fnx.tensor([5.0, 7.0]), fnx.tensor([1.0, 0.0]))
    np.testing.assert_array_equal(edge.numpy(), [5.0, 0.0])


def test_reproducible_eager_equals_compiled_and_no_grad():
    rate = fnx.full((1000,), 2.5)
    fnx.manual_seed(3)
    a = fnx.poisson(rate)
    fnx.manual_seed(3)
    b = fnx.poisson(rate)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    key = fnx.tensor([0, 11])
    r64 = fnx.tensor(np.linspace(0.1, 20, 64))
    eager = P.poisson(key, r64)
    compiled = fnx.compile(lambda k, r: P.poisson(k, r))(key, r64)
    np.testing.assert_array_equal(eager.numpy(), compiled.numpy())
    n, p = fnx.full((64,), 12.0), fnx.tensor(np.linspace(0, 1, 64), dtype=fnx.float32)
    np.testing.assert_array_equal(
        P.binomial(key, n, p).numpy(),
        fnx.compile(lambda k, c, q: P.binomial(k, c, q))(key, n, p).numpy())
    x = fnx.full((3,), 2.0, requires_grad=True)
    assert not fnx.poisson(x).requires_grad
    assert not fnx.binomial(x, fnx.full((3,), 0.5)).requires_grad
    c = fnx.compile(lambda r: fnx.poisson(r))(fnx.full((20_000,), 6.0))
    assert abs(c.mean().item() - 6.0) < 0.1


def test_errors():
    with pytest.raises(RuntimeError, match="poisson_cpu"):
        fnx.poisson(fnx.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="binomial_cpu"):
        fnx.binomial(fnx.tensor([1, 2]), fnx.tensor([0.5, 0.5]))
    with pytest.raises(RuntimeError, match="same dtype"):
        fnx.binomial(fnx.tensor([1.0]), fnx.tensor([0.5], dtype=fnx.float64))
    with pytest.raises(RuntimeError, match="int64 key"):
        P.poisson(fnx.tensor([1, 2, 3]), fnx.ones(2))
    with pytest.raises(RuntimeError, match="one shape and dtype"):
        P.binomial(fnx.tensor([0, 1]), fnx.ones(2), fnx.ones(3))
