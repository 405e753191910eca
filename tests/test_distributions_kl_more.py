"""KL divergences registered for the round-8 distributions against numerical integration
(scipy.integrate.quad) or summation of scipy.stats densities."""
import numpy as np
import pytest
from scipy import integrate, stats

import fnx
from fnx.distributions import (AffineTransform, Binomial, Cauchy, Chi2, Exponential, Gamma,
                               Geometric, Gumbel,
                               HalfNormal, LogNormal, LowRankMultivariateNormal,
                               MultivariateNormal, Normal, OneHotCategorical, Poisson,
                               Uniform, kl_divergence)
from fnx.distributions import (Bernoulli, Beta, ContinuousBernoulli, Dirichlet,
                               ExponentialFamily)
from fnx.distributions import Laplace, Pareto
from fnx.distributions.kl import _kl_expfamily_expfamily
from fnx.distributions.transforms import ExpTransform, TanhTransform
from fnx.distributions.transformed_distribution import TransformedDistribution

D = fnx.float64


def t(x):
    return fnx.tensor(np.asarray(x, dtype=np.float64), dtype=D)


def quad_kl(p, q, lo, hi):
    def f(x):
        lp, lq = p.logpdf(x), q.logpdf(x)
        w = np.exp(lp) if np.isfinite(lp) else 0.0
        return 0.0 if w == 0.0 else w * (lp - lq)
    return integrate.quad(f, lo, hi, limit=400, epsabs=1e-12, epsrel=1e-10)[0]


def sum_kl(p, q, ks):
    lp, lq = p.logpmf(ks), q.logpmf(ks)
    m = np.isfinite(lp)
    return float(np.sum(np.exp(lp[m]) * (lp[m] - lq[m])))


CONTINUOUS = {
    "Gumbel-Gumbel": (Gumbel(t(0.5), t(2.0)), Gumbel(t(-1.0), t(1.5)),
                      stats.gumbel_r(0.5, 2.0), stats.gumbel_r(-1.0, 1.5), -np.inf, np.inf),
    "HalfNormal-HalfNormal": (HalfNormal(t(1.0)), HalfNormal(t(2.5)),
                              stats.halfnorm(scale=1.0), stats.halfnorm(scale=2.5), 0, np.inf),
    "LogNormal-LogNormal": (LogNormal(t(0.2), t(0.5)), LogNormal(t(-0.3), t(1.2)),
                            stats.lognorm(0.5, scale=np.exp(0.2)),
                            stats.lognorm(1.2, scale=np.exp(-0.3)), 0, np.inf),
    "Cauchy-Cauchy": (Cauchy(t(0.5), t(2.0)), Cauchy(t(-1.0), t(0.7)),
                      stats.cauchy(0.5, 2.0), stats.cauchy(-1.0, 0.7), -np.inf, np.inf),
    "Normal-Gumbel": (Normal(t(0.5), t(1.3)), Gumbel(t(-0.2), t(1.5)),
                      stats.norm(0.5, 1.3), stats.gumbel_r(-0.2, 1.5), -np.inf, np.inf),
    "Uniform-Normal": (Uniform(t(-1.0), t(2.0)), Normal(t(0.3), t(1.5)),
                       stats.uniform(-1.0, 3.0), stats.norm(0.3, 1.5), -1.0, 2.0),
    "Uniform-Gumbel": (Uniform(t(-1.0), t(2.0)), Gumbel(t(0.3), t(1.5)),
                       stats.uniform(-1.0, 3.0), stats.gumbel_r(0.3, 1.5), -1.0, 2.0),
    "Exponential-Normal": (Exponential(t(1.5)), Normal(t(0.3), t(1.5)),
                           stats.expon(scale=1 / 1.5), stats.norm(0.3, 1.5), 0, np.inf),
    "Chi2-Chi2": (Chi2(t(3.0)), Chi2(t(5.5)), stats.chi2(3.0), stats.chi2(5.5), 0, np.inf),
    "Chi2-Gamma": (Chi2(t(3.0)), Gamma(t(2.0), t(0.7)), stats.chi2(3.0),
                   stats.gamma(2.0, scale=1 / 0.7), 0, np.inf),
}


@pytest.mark.parametrize("name", list(CONTINUOUS))
def test_continuous_kl_against_quadrature(name):
    p, q, sp, sq, lo, hi = CONTINUOUS[name]
    np.testing.assert_allclose(float(kl_divergence(p, q)), quad_kl(sp, sq, lo, hi),
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(float(kl_divergence(p, p)) if type(p) is type(q) else 0.0, 0.0,
                               atol=1e-9)


def test_discrete_kl_against_sums():
    ks = np.arange(0, 400)
    np.testing.assert_allclose(float(kl_divergence(Poisson(t(3.0)), Poisson(t(5.5)))),
                               sum_kl(stats.poisson(3.0), stats.poisson(5.5), ks), rtol=1e-9)
    np.testing.assert_allclose(
        float(kl_divergence(Geometric(probs=t(0.3)), Geometric(probs=t(0.6)))),
        sum_kl(stats.geom(0.3), stats.geom(0.6), ks + 1), rtol=1e-9)
    np.testing.assert_allclose(
        float(kl_divergence(Binomial(12, probs=t(0.3)), Binomial(12, probs=t(0.6)))),
        sum_kl(stats.binom(12, 0.3), stats.binom(12, 0.6), ks), rtol=1e-9)
    # q's support is smaller than p's: infinite; p's smaller than q's: not implemented
    assert float(kl_divergence(Binomial(12, probs=t(0.3)), Binomial(10, probs=t(0.3)))) \
        == np.inf
    with pytest.raises(NotImplementedError):
        kl_divergence(Binomial(10, probs=t(0.3)), Binomial(12, probs=t(0.3)))
    p, q = np.array([0.2, 0.3, 0.5]), np.array([0.6, 0.2, 0.2])
    np.testing.assert_allclose(
        float(kl_divergence(OneHotCategorical(probs=t(p)), OneHotCategorical(probs=t(q)))),
        np.sum(p * np.log(p / q)), rtol=1e-12)


def _gaussian_kl(m0, s0, m1, s1):
    k = len(m0)
    s1inv = np.linalg.inv(s1)
    d = m1 - m0
    return 0.5 * (np.trace(s1inv @ s0) + d @ s1inv @ d - k
                  + np.log(np.linalg.det(s1) / np.linalg.det(s0)))


def test_lowrank_kls_against_closed_form():
    rng = np.random.default_rng(1)
    w0, d0, m0 = rng.normal(size=(3, 2)), rng.uniform(0.5, 2, 3), rng.normal(size=3)
    w1, d1, m1 = rng.normal(size=(3, 1)), rng.uniform(0.5, 2, 3), rng.normal(size=3)
    c0, c1 = w0 @ w0.T + np.diag(d0), w1 @ w1.T + np.diag(d1)
    p = LowRankMultivariateNormal(t(m0), t(w0), t(d0))
    q = LowRankMultivariateNormal(t(m1), t(w1), t(d1))
    ref = _gaussian_kl(m0, c0, m1, c1)
    np.testing.assert_allclose(float(kl_divergence(p, q)), ref, rtol=1e-9)
    np.testing.assert_allclose(float(kl_divergence(p, MultivariateNormal(t(m1), t(c1)))), ref,
                               rtol=1e-9)
    np.testing.assert_allclose(float(kl_divergence(MultivariateNormal(t(m0), t(c0)), q)), ref,
                               rtol=1e-9)


def test_kl_batched_shapes():
    p = Poisson(t([[1.0, 2.0, 3.0]]))
    q = Poisson(t([[2.0], [4.0]]))
    assert tuple(kl_divergence(p, q).shape) == (2, 3)
    p = Gumbel(t([0.0, 1.0]), t([1.0, 2.0]))
    assert tuple(kl_divergence(p, p).shape) == (2,)


def test_transformed_kl_and_transform_equality():
    assert TanhTransform() == TanhTransform() and TanhTransform() != ExpTransform()
    assert AffineTransform(1.0, t(2.0)) == AffineTransform(1.0, t(2.0))
    assert AffineTransform(1.0, 2.0) != AffineTransform(1.0, 3.0)
    assert ExpTransform().inv == ExpTransform().inv
    p = TransformedDistribution(Normal(t(0.3), t(1.2)), [TanhTransform()])
    q = TransformedDistribution(Normal(t(-0.5), t(0.7)), [TanhTransform()])
    # the squashed densities on (-1, 1), integrated in NumPy
    sp, sq = stats.norm(0.3, 1.2), stats.norm(-0.5, 0.7)

    def integrand(y):
        x = np.arctanh(y)
        jac = 1 - y * y
        lp, lq = sp.logpdf(x) - np.log(jac), sq.logpdf(x) - np.log(jac)
        return np.exp(lp) * (lp - lq)

    ref = integrate.quad(integrand, -1, 1, limit=400)[0]
    np.testing.assert_allclose(float(kl_divergence(p, q)), ref, rtol=1e-7)
    r = TransformedDistribution(Normal(t(-0.5), t(0.7)), [ExpTransform()])
    with pytest.raises(NotImplementedError):
        kl_divergence(p, r)


def test_exponential_family_entropy_and_bregman_kl():
    pairs = [
        (Normal(t([0.3, -1.0]), t([1.2, 0.5])), Normal(t([0.0, 1.0]), t([0.7, 2.0])),
         stats.norm([0.3, -1.0], [1.2, 0.5]).entropy()),
        (Exponential(t([0.5, 2.0])), Exponential(t([1.5, 0.3])),
         stats.expon(scale=[2.0, 0.5]).entropy()),
        (Gamma(t([2.0, 0.7]), t([1.0, 3.0])), Gamma(t([1.2, 3.0]), t([0.5, 1.0])),
         stats.gamma([2.0, 0.7], scale=[1.0, 1 / 3.0]).entropy()),
        (Bernoulli(probs=t([0.2, 0.7])), Bernoulli(probs=t([0.5, 0.1])),
         stats.bernoulli([0.2, 0.7]).entropy()),
        (ContinuousBernoulli(probs=t([0.2, 0.7])), ContinuousBernoulli(probs=t([0.4, 0.9])),
         None),
        (Beta(t([2.0, 0.5]), t([3.0, 1.5])), Beta(t([1.0, 2.0]), t([1.0, 0.5])), None),
        (Dirichlet(t([[2.0, 0.5, 1.0]])), Dirichlet(t([[1.0, 1.0, 3.0]])), None),
        (Poisson(t([2.0, 0.5])), Poisson(t([1.0, 3.0])), None),
    ]
    for p, q, h in pairs:
        assert isinstance(p, ExponentialFamily)
        if h is not None:
            # the Bregman-divergence entropy equals scipy's
            np.testing.assert_allclose(ExponentialFamily.entropy(p).detach().numpy(), h,
                                       rtol=1e-6)
        # the Bregman KL equals the closed form registered for the pair
        np.testing.assert_allclose(_kl_expfamily_expfamily(p, q).detach().numpy(),
                                   kl_divergence(p, q).detach().numpy(), rtol=1e-6, atol=1e-9)
    with pytest.raises(NotImplementedError):
        _kl_expfamily_expfamily(Normal(0.0, 1.0), Exponential(1.0))


# ------------------------------------------------------------ cross-family KLs

class _CB:
    """The continuous Bernoulli density in NumPy (scipy has none)."""

    def __init__(self, lam):
        self.lam = lam
        self.logc = np.log(2 * np.arctanh(1 - 2 * lam) / (1 - 2 * lam))

    def logpdf(self, x):
        x = np.asarray(x, dtype=np.float64)
        inside = (x >= 0) & (x <= 1)
        with np.errstate(divide="ignore"):
            val = self.logc + x * np.log(self.lam) + (1 - x) * np.log1p(-self.lam)
        return np.where(inside, val, -np.inf)


def _cross_cases():
    B, Bs = Beta(t(2.0), t(3.0)), stats.beta(2.0, 3.0)
    CB, CBs = ContinuousBernoulli(probs=t(0.3)), _CB(0.3)
    G, Gs = Gamma(t(2.5), t(1.5)), stats.gamma(2.5, scale=1 / 1.5)
    Gu, Gus = Gumbel(t(0.5), t(1.5)), stats.gumbel_r(0.5, 1.5)
    La, Las = Laplace(t(0.3), t(0.8)), stats.laplace(0.3, 0.8)
    Pa, Pas = Pareto(t(1.5), t(3.5)), stats.pareto(3.5, scale=1.5)
    N, Ns = Normal(t(0.4), t(1.3)), stats.norm(0.4, 1.3)
    E, Es = Exponential(t(0.7)), stats.expon(scale=1 / 0.7)
    U01, U01s = Uniform(t(0.2), t(0.9)), stats.uniform(0.2, 0.7)
    U, Us = Uniform(t(-1.0), t(2.0)), stats.uniform(-1.0, 3.0)
    U2, U2s = Uniform(t(2.0), t(4.0)), stats.uniform(2.0, 2.0)
    inf = np.inf
    return {
        "Beta-Normal": (B, N, Bs, Ns, 0, 1),
        "CB-Normal": (CB, N, CBs, Ns, 0, 1),
        "Gamma-Normal": (G, N, Gs, Ns, 0, inf),
        "Gumbel-Normal": (Gu, N, Gus, Ns, -inf, inf),
        "Laplace-Normal": (La, N, Las, Ns, -inf, inf),
        "Pareto-Normal": (Pa, N, Pas, Ns, 1.5, inf),
        "Beta-Exponential": (B, E, Bs, Es, 0, 1),
        "CB-Exponential": (CB, E, CBs, Es, 0, 1),
        "Gamma-Exponential": (G, E, Gs, Es, 0, inf),
        "Pareto-Exponential": (Pa, E, Pas, Es, 1.5, inf),
        "Uniform-Exponential": (U2, E, U2s, Es, 2, 4),
        "Beta-Gamma": (B, G, Bs, Gs, 0, 1),
        "Pareto-Gamma": (Pa, G, Pas, Gs, 1.5, inf),
        "Uniform-Gamma": (U01, G, U01s, Gs, 0.2, 0.9),
        "Exponential-Gumbel": (E, Gu, Es, Gus, 0, inf),
        "Gamma-Gumbel": (G, Gu, Gs, Gus, 0, inf),
        "Normal-Laplace": (N, La, Ns, Las, -inf, inf),
        "Beta-CB": (B, CB, Bs, CBs, 0, 1),
        "Uniform-CB": (U01, CB, U01s, CBs, 0.2, 0.9),
        "Beta-Uniform": (B, U, Bs, Us, 0, 1),
        "CB-Uniform": (CB, U, CBs, Us, 0, 1),
        "Uniform-Beta": (U01, B, U01s, Bs, 0.2, 0.9),
        "Uniform-Pareto": (U2, Pa, U2s, Pas, 2, 4),
    }


@pytest.mark.parametrize("name", list(_cross_cases()))
def test_cross_family_kl_against_quadrature(name):
    p, q, sp, sq, lo, hi = _cross_cases()[name]
    np.testing.assert_allclose(float(kl_divergence(p, q)), quad_kl(sp, sq, lo, hi), rtol=1e-6,
                               atol=1e-9)


def test_cross_family_kl_infinite_where_supports_differ():
    N, B = Normal(t([0.0, 1.0]), t([1.0, 2.0])), Beta(t(2.0), t(3.0))
    for p, q in [(N, B), (N, Exponential(t(1.0))), (N, Uniform(t(0.0), t(1.0))),
                 (Gumbel(t(0.0), t(1.0)), Gamma(t(2.0), t(1.0))),
                 (Laplace(t(0.0), t(1.0)), Pareto(t(1.0), t(2.0))),
                 (Exponential(t(1.0)), ContinuousBernoulli(probs=t(0.3))),
                 (Pareto(t(1.0), t(2.0)), Uniform(t(0.0), t(5.0))),
                 (Poisson(t(2.0)), Binomial(5, probs=t(0.3))),
                 (Bernoulli(probs=t(0.3)), Poisson(t(1.0))),
                 (Uniform(t(-0.5), t(0.5)), Beta(t(2.0), t(2.0))),
                 (Uniform(t(-0.5), t(0.5)), Gamma(t(2.0), t(2.0))),
                 (Uniform(t(1.0), t(2.0)), Pareto(t(1.5), t(2.0))),
                 (Beta(t(2.0), t(2.0)), Uniform(t(0.5), t(2.0)))]:
        assert np.all(np.isinf(kl_divergence(p, q).numpy())), (type(p), type(q))
    assert tuple(kl_divergence(N, B).shape) == (2,)
