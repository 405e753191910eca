"""fnx.distributions transforms and biject_to/transform_to: inverse round trips and
log_abs_det_jacobian against finite-difference Jacobians (NumPy determinants)."""
import math

import numpy as np
import pytest

import fnx
from fnx.distributions import (AbsTransform, AffineTransform, CatTransform, ComposeTransform,
                               CumulativeDistributionTransform, ExpTransform,
                               IndependentTransform, LowerCholeskyTransform, Normal,
                               PositiveDefiniteTransform, PowerTransform, ReshapeTransform,
                               SigmoidTransform, SoftmaxTransform, SoftplusTransform,
                               StackTransform, StickBreakingTransform, TanhTransform,
                               TransformedDistribution, biject_to, constraints,
                               identity_transform, transform_to)

D = fnx.float64


def t(x):
    return fnx.tensor(np.asarray(x, dtype=np.float64), dtype=D)


def n(x):
    return np.asarray(x.detach().numpy(), dtype=np.float64)


def numeric_derivative(f, x, h=1e-6):
    """Elementwise dy/dx of an elementwise map by central differences."""
    return (n(f(t(x + h))) - n(f(t(x - h)))) / (2 * h)


def numeric_jacobian(f, x, h=1e-6):
    """Jacobian of a map R^k -> R^m (1-d arrays) by central differences."""
    x = np.asarray(x, dtype=np.float64)
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((n(f(t(x + e))) - n(f(t(x - e)))).ravel() / (2 * h))
    return np.stack(cols, -1)


X = np.array([-2.5, -0.3, 0.0, 0.7, 3.0])
POS = np.array([0.2, 0.9, 1.5, 4.0])

ELEMENTWISE = [
    (TanhTransform(), X),
    (SoftplusTransform(), X),
    (ExpTransform(), X),
    (SigmoidTransform(), X),
    (PowerTransform(t(2.5)), POS),
    (PowerTransform(t(-0.5)), POS),
    (AffineTransform(1.0, -3.0), X),
    (CumulativeDistributionTransform(Normal(t(0.5), t(2.0))), X),
    (ComposeTransform([SoftplusTransform(), PowerTransform(0.5)]), X),
]


@pytest.mark.parametrize("case", range(len(ELEMENTWISE)),
                         ids=[type(c[0]).__name__ for c in ELEMENTWISE])
def test_elementwise_round_trip_and_log_det(case):
    tr, x = ELEMENTWISE[case]
    y = tr(t(x))
    np.testing.assert_allclose(n(tr.inv(y)), x, rtol=1e-9, atol=1e-9)
    expected = np.log(np.abs(numeric_derivative(tr, x)))
    np.testing.assert_allclose(n(tr.log_abs_det_jacobian(t(x), y)), expected, rtol=1e-6,
                               atol=1e-7)
    # the inverse's log-det is the negative at the mapped point
    np.testing.assert_allclose(n(tr.inv.log_abs_det_jacobian(y, t(x))), -expected, rtol=1e-6,
                               atol=1e-7)
    assert bool(tr.codomain.check(y).all())


def test_tanh_values_and_stable_log_det():
    x = np.array([-30.0, -5.0, 0.0, 5.0, 30.0])
    tr = TanhTransform()
    np.testing.assert_allclose(n(tr(t(x))), np.tanh(x))
    # log(1 - tanh(x)^2) = log 4 - 2|x| - 2 log(1 + exp(-2|x|)): finite at |x| = 30, where
    # 1 - tanh(x)^2 rounds to 0
    ref = math.log(4) - 2 * np.abs(x) - 2 * np.log1p(np.exp(-2 * np.abs(x)))
    out = n(tr.log_abs_det_jacobian(t(x), tr(t(x))))
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    # float32 too
    x32 = fnx.tensor([-20.0, 20.0])
    assert bool(fnx.isfinite(tr.log_abs_det_jacobian(x32, tr(x32))).all())
    assert tr.domain is constraints.real and tr.bijective and tr.sign == 1


def test_sac_tanh_normal_log_prob_matches_change_of_variables():
    # SAC's squashed Gaussian: log p(y) = log N(atanh y) - log(1 - y^2)
    loc, scale = np.array([0.3, -1.0]), np.array([0.5, 2.0])
    d = TransformedDistribution(Normal(t(loc), t(scale)), [TanhTransform()])
    y = np.array([0.5, -0.9])
    x = np.arctanh(y)
    ref = (-0.5 * ((x - loc) / scale) ** 2 - np.log(scale) - 0.5 * math.log(2 * math.pi)
           - np.log(1 - y ** 2))
    np.testing.assert_allclose(n(d.log_prob(t(y))), ref, rtol=1e-9)
    _ = fnx.manual_seed(0)
    s = d.rsample((1000,))
    assert float(s.abs().max()) <= 1.0


def test_abs_transform():
    tr = AbsTransform()
    np.testing.assert_allclose(n(tr(t(X))), np.abs(X))
    np.testing.assert_allclose(n(tr.inv(t(POS))), POS)
    assert not tr.bijective


def test_softmax_transform():
    x = np.array([[0.1, 2.0, -1.0], [5.0, 5.0, 5.0]])
    tr = SoftmaxTransform()
    y = n(tr(t(x)))
    ref = np.exp(x) / np.exp(x).sum(-1, keepdims=True)
    np.testing.assert_allclose(y, ref, rtol=1e-12)
    # the inverse is defined up to an additive constant per row
    back = n(tr(tr.inv(t(y))))
    np.testing.assert_allclose(back, ref, rtol=1e-12)
    assert tr.codomain is constraints.simplex and tr.event_dim == 1


def test_stick_breaking_round_trip_and_log_det():
    tr = StickBreakingTransform()
    x = np.array([0.3, -1.2, 2.0])
    y = tr(t(x))
    assert tuple(y.shape) == (4,) and abs(float(y.sum()) - 1) < 1e-12
    assert bool(constraints.simplex.check(y))
    np.testing.assert_allclose(n(tr.inv(y)), x, rtol=1e-9)
    # the map onto the first K - 1 coordinates (the last is 1 minus their sum)
    jac = numeric_jacobian(lambda v: tr(v)[..., :-1], x)
    expected = np.log(abs(np.linalg.det(jac)))
    np.testing.assert_allclose(float(tr.log_abs_det_jacobian(t(x), y)), expected, rtol=1e-6)
    assert tr.forward_shape((2, 3)) == (2, 4) and tr.inverse_shape((2, 4)) == (2, 3)
    # zero input gives the uniform point of the simplex
    np.testing.assert_allclose(n(tr(fnx.zeros(3, dtype=D))), [0.25] * 4, rtol=1e-12)
    batch = fnx.randn(5, 3, dtype=D)
    assert tr.log_abs_det_jacobian(batch, tr(batch)).shape == (5,)


def test_independent_transform():
    tr = IndependentTransform(ExpTransform(), 1)
    x = np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]])
    y = tr(t(x))
    np.testing.assert_allclose(n(y), np.exp(x))
    np.testing.assert_allclose(n(tr.log_abs_det_jacobian(t(x), y)), x.sum(-1))
    assert tr.event_dim == 1 and tr.domain.event_dim == 1
    np.testing.assert_allclose(n(tr.inv(y)), x, rtol=1e-12)


def test_reshape_transform():
    tr = ReshapeTransform((2, 3), (6,))
    x = np.arange(24.0).reshape(4, 2, 3)
    y = tr(t(x))
    np.testing.assert_array_equal(n(y), x.reshape(4, 6))
    np.testing.assert_array_equal(n(tr.inv(y)), x)
    np.testing.assert_array_equal(n(tr.log_abs_det_jacobian(t(x), y)), np.zeros(4))
    assert tr.forward_shape((4, 2, 3)) == (4, 6) and tr.inverse_shape((4, 6)) == (4, 2, 3)
    with pytest.raises(ValueError):
        ReshapeTransform((2, 3), (5,))


def test_cat_transform():
    tr = CatTransform([ExpTransform(), identity_transform, AffineTransform(0.0, 2.0)], dim=0,
                      lengths=[2, 1, 2])
    x = np.array([0.5, -1.0, 3.0, 1.0, -2.0])
    y = tr(t(x))
    np.testing.assert_allclose(n(y), [np.exp(0.5), np.exp(-1.0), 3.0, 2.0, -4.0])
    np.testing.assert_allclose(n(tr.inv(y)), x, rtol=1e-12)
    # dim 0 is a batch dim of these event_dim-0 pieces: per-element log-dets
    np.testing.assert_allclose(n(tr.log_abs_det_jacobian(t(x), y)),
                               np.log(np.abs(numeric_derivative(tr, x))), rtol=1e-6,
                               atol=1e-8)
    assert bool(tr.codomain.check(y).all())
    with pytest.raises(ValueError):
        tr(t(np.zeros(4)))


def test_stack_transform():
    tr = StackTransform([ExpTransform(), SoftplusTransform()], dim=1)
    x = np.array([[0.5, -1.0], [2.0, 0.3], [-0.2, 4.0]])
    y = tr(t(x))
    ref = np.stack([np.exp(x[:, 0]), np.log1p(np.exp(x[:, 1]))], 1)
    np.testing.assert_allclose(n(y), ref, rtol=1e-12)
    np.testing.assert_allclose(n(tr.inv(y)), x, rtol=1e-9)
    ladj = np.stack([x[:, 0], -np.log1p(np.exp(-x[:, 1]))], 1)
    np.testing.assert_allclose(n(tr.log_abs_det_jacobian(t(x), y)), ladj, rtol=1e-12)
    assert bool(tr.codomain.check(y).all())


def test_lower_cholesky_and_positive_definite_transforms():
    x = np.array([[0.3, 9.0], [-1.2, -0.5]])
    y = LowerCholeskyTransform()(t(x))
    np.testing.assert_allclose(n(y), [[np.exp(0.3), 0.0], [-1.2, np.exp(-0.5)]])
    assert bool(constraints.lower_cholesky.check(y))
    back = LowerCholeskyTransform().inv(y)
    np.testing.assert_allclose(n(back), np.tril(x), rtol=1e-12)
    pd = PositiveDefiniteTransform()(t(x))
    L = n(y)
    np.testing.assert_allclose(n(pd), L @ L.T, rtol=1e-12)
    assert bool(constraints.positive_definite.check(pd))
    np.testing.assert_allclose(n(PositiveDefiniteTransform().inv(pd)), np.tril(x), rtol=1e-9)


def test_identity_transform():
    x = t(X)
    assert identity_transform(x) is x
    np.testing.assert_array_equal(n(identity_transform.log_abs_det_jacobian(x, x)),
                                  np.zeros(5))


def test_inverse_shapes_and_signs():
    assert PowerTransform(t(-2.0)).sign == -1
    assert TanhTransform().inv.inv.__class__ is TanhTransform
    assert StickBreakingTransform().inv.forward_shape((4,)) == (3,)


BIJECT_CASES = [
    (constraints.real, X),
    (constraints.positive, X),
    (constraints.nonnegative, X),
    (constraints.greater_than(2.0), X),
    (constraints.greater_than_eq(-1.0), X),
    (constraints.less_than(3.0), X),
    (constraints.unit_interval, X),
    (constraints.interval(-2.0, 5.0), X),
    (constraints.half_open_interval(1.0, 2.0), X),
    (constraints.open_interval(0.0, 3.0), X),
]


@pytest.mark.parametrize("case", range(len(BIJECT_CASES)), ids=[repr(c[0])
                                                                 for c in BIJECT_CASES])
def test_biject_to_elementwise(case):
    constraint, x = BIJECT_CASES[case]
    for registry in (biject_to, transform_to):
        tr = registry(constraint)
        y = tr(t(x))
        assert bool(constraint.check(y).all()), (constraint, n(y))
        np.testing.assert_allclose(n(tr.inv(y)), x, rtol=1e-8, atol=1e-8)
        expected = np.log(np.abs(numeric_derivative(tr, x)))
        np.testing.assert_allclose(n(tr.log_abs_det_jacobian(t(x), y)), expected, rtol=1e-6,
                                   atol=1e-7)


def test_biject_to_structured_constraints():
    x = np.array([[0.3, -1.0, 2.0], [0.0, 0.0, 0.0]])
    y = biject_to(constraints.simplex)(t(x))
    assert tuple(y.shape) == (2, 4) and bool(constraints.simplex.check(y).all())
    y = transform_to(constraints.simplex)(t(x))
    assert tuple(y.shape) == (2, 3) and bool(constraints.simplex.check(y).all())
    tr = biject_to(constraints.independent(constraints.positive, 1))
    assert isinstance(tr, IndependentTransform) and tr.event_dim == 1
    np.testing.assert_allclose(n(tr.log_abs_det_jacobian(t(x), tr(t(x)))), x.sum(-1))
    m = t([[0.1, 0.0], [2.0, -0.4]])
    assert bool(constraints.lower_cholesky.check(transform_to(constraints.lower_cholesky)(m)))
    assert bool(constraints.positive_definite.check(
        transform_to(constraints.positive_definite)(m)))
    cat = constraints.cat([constraints.positive, constraints.unit_interval], 0, [1, 2])
    y = biject_to(cat)(t([-3.0, 0.5, 9.0]))
    assert bool(cat.check(y).all())
    stack = constraints.stack([constraints.positive, constraints.real], 0)
    y = transform_to(stack)(t([-3.0, -3.0]))
    np.testing.assert_allclose(n(y), [np.exp(-3.0), -3.0])
    with pytest.raises(NotImplementedError):
        biject_to(constraints.lower_cholesky)
    with pytest.raises(NotImplementedError):
        biject_to(constraints.boolean)


def test_register_custom_constraint():
    class Mine(constraints.Constraint):
        def check(self, value):
            return value > 10

    registry = type(biject_to)()
    registry.register(Mine, lambda c: ComposeTransform([ExpTransform(),
                                                       AffineTransform(10.0, 1.0)]))
    assert float(registry(Mine())(t(0.0))) == 11.0
    with pytest.raises(TypeError):
        registry.register(3, lambda c: None)


def test_cache_size_one_keeps_the_pair():
    tr = TanhTransform(cache_size=1)
    x = fnx.tensor([25.0, -25.0, 0.5])  # float32: tanh rounds to +-1 at |x| = 25
    y = tr(x)
    assert tr.inv(y) is x
    # without the cache, atanh(1) = inf
    assert math.isinf(float(TanhTransform().inv(y)[0]))
    # SAC: log_prob of the sampled action stays finite
    d = TransformedDistribution(Normal(fnx.tensor([0.0]), fnx.tensor([10.0])),
                                [TanhTransform(cache_size=1)])
    _ = fnx.manual_seed(0)
    a = d.rsample((200,))
    assert bool(fnx.isfinite(d.log_prob(a)).all())
    other = tr(fnx.tensor([0.1]))
    np.testing.assert_allclose(float(tr.inv(other)), 0.1, rtol=1e-6)
    with pytest.raises(ValueError):
        TanhTransform(cache_size=2)
    composed = ComposeTransform([ExpTransform(), AffineTransform(1.0, 2.0)], cache_size=1)
    assert all(p._cache_size == 1 for p in composed.parts)
    assert TanhTransform().with_cache(1)._cache_size == 1


def test_matrix_constraints():
    a = np.array([[2.0, 1.0], [1.0, 2.0]])
    psd_singular = np.array([[1.0, 1.0], [1.0, 1.0]])
    not_sym = np.array([[1.0, 2.0], [0.0, 1.0]])
    batch = t(np.stack([a, psd_singular, not_sym]))
    np.testing.assert_array_equal(n(constraints.symmetric.check(batch)), [True, True, False])
    np.testing.assert_array_equal(n(constraints.positive_semidefinite.check(batch)),
                                  [True, True, False])
    np.testing.assert_array_equal(n(constraints.positive_definite.check(batch)),
                                  [True, False, False])
    np.testing.assert_array_equal(n(constraints.lower_triangular.check(batch)),
                                  [False, False, False])
    assert bool(constraints.lower_triangular.check(t(np.tril(a))))
    assert bool(constraints.square.check(batch).all())
    assert not bool(constraints.square.check(fnx.zeros(2, 3)))
    assert constraints.positive_integer.check(t([0.0, 1.0, 2.5])).tolist() == [False, True,
                                                                               False]
    assert constraints.one_hot.check(t([[0.0, 1.0], [1.0, 1.0]])).tolist() == [True, False]
