"""Sampling of the round-8 distributions: sample moments against scipy.stats within
statistical tolerance, rsample gradients against finite differences (same seed), and
samplers that are fixed transforms of fnx.rand / fnx.randn."""
import math

import numpy as np
import pytest
from scipy import stats

import fnx
from fnx.distributions import (Binomial, Categorical, Cauchy, Chi2, Geometric, Gumbel,
                               HalfCauchy, HalfNormal, LogNormal, LowRankMultivariateNormal,
                               MixtureSameFamily, Multinomial, NegativeBinomial, Normal,
                               OneHotCategorical, OneHotCategoricalStraightThrough, Poisson,
                               RelaxedBernoulli, RelaxedOneHotCategorical, StudentT,
                               TanhTransform, TransformedDistribution)

D = fnx.float64
N = 40000


def t(x):
    return fnx.tensor(np.asarray(x, dtype=np.float64), dtype=D)


def n(x):
    return np.asarray(x.detach().numpy(), dtype=np.float64)


def _check_moments(samples, mean, var, what):
    # the sample mean lies within 5 standard errors; the sample variance within 5 of its
    # (normal-approximation) standard errors, using the 4th central moment of the samples
    s = n(samples)
    m = s.mean(0)
    se = np.sqrt(var / s.shape[0])
    assert np.all(np.abs(m - mean) <= 5 * se + 1e-12), (what, m, mean)
    v = s.var(0)
    m4 = ((s - s.mean(0)) ** 4).mean(0)
    se_v = np.sqrt(np.maximum(m4 - v ** 2, 1e-30) / s.shape[0])
    assert np.all(np.abs(v - var) <= 5 * se_v + 1e-12), (what, v, var)


MOMENT_CASES = {
    "LogNormal": lambda: (LogNormal(t([0.0, 0.5]), t([0.5, 0.25])),
                          stats.lognorm([0.5, 0.25], scale=np.exp([0.0, 0.5]))),
    "Gumbel": lambda: (Gumbel(t([0.0, 2.0]), t([1.0, 0.5])), stats.gumbel_r([0.0, 2.0],
                                                                            [1.0, 0.5])),
    "HalfNormal": lambda: (HalfNormal(t([1.0, 3.0])), stats.halfnorm(scale=[1.0, 3.0])),
    "StudentT": lambda: (StudentT(t([6.0, 9.0]), t([1.0, 0.0]), t([2.0, 1.0])),
                         stats.t([6.0, 9.0], [1.0, 0.0], [2.0, 1.0])),
    "Chi2": lambda: (Chi2(t([0.7, 5.0])), stats.chi2([0.7, 5.0])),
    "Poisson": lambda: (Poisson(t([0.3, 4.0, 50.0])), stats.poisson([0.3, 4.0, 50.0])),
    "Binomial": lambda: (Binomial(t([10.0, 40.0]), probs=t([0.3, 0.8])),
                         stats.binom([10, 40], [0.3, 0.8])),
    "Geometric": lambda: (Geometric(probs=t([0.2, 0.7])), stats.geom([0.2, 0.7], loc=-1)),
    "NegativeBinomial": lambda: (NegativeBinomial(t([2.5, 7.0]), probs=t([0.3, 0.6])),
                                 stats.nbinom([2.5, 7.0], [0.7, 0.4])),
}


@pytest.mark.parametrize("name", list(MOMENT_CASES))
def test_sample_moments(name):
    d, ref = MOMENT_CASES[name]()
    _ = fnx.manual_seed(1)
    s = d.sample((N,))
    assert tuple(s.shape) == (N,) + tuple(d.batch_shape)
    assert bool(d.support.check(s).all())
    _check_moments(s, ref.mean(), ref.var(), name)


def test_cauchy_quantiles():
    # no moments: compare empirical quantiles with scipy's
    _ = fnx.manual_seed(2)
    s = n(Cauchy(t(1.0), t(2.0)).sample((N,)))
    levels = np.array([0.1, 0.25, 0.5, 0.75, 0.9])
    ref = stats.cauchy(1.0, 2.0)
    # the standard error of an empirical quantile: sqrt(p (1 - p) / N) / density
    se = np.sqrt(levels * (1 - levels) / N) / ref.pdf(ref.ppf(levels))
    assert np.all(np.abs(np.quantile(s, levels) - ref.ppf(levels)) <= 5 * se)
    s = n(HalfCauchy(t(2.0)).sample((N,)))
    assert s.min() >= 0
    np.testing.assert_allclose(np.median(s), stats.halfcauchy(scale=2.0).median(), atol=0.1)


def test_discrete_vector_samplers():
    _ = fnx.manual_seed(3)
    p = np.array([0.2, 0.5, 0.3])
    s = n(Multinomial(8, probs=t(p)).sample((N,)))
    assert s.shape == (N, 3) and np.all(s.sum(-1) == 8)
    _check_moments(fnx.tensor(s), 8 * p, 8 * p * (1 - p), "Multinomial")
    s = n(OneHotCategorical(probs=t(p)).sample((N,)))
    assert np.all(s.sum(-1) == 1) and set(np.unique(s)) <= {0.0, 1.0}
    _check_moments(fnx.tensor(s), p, p * (1 - p), "OneHotCategorical")


def test_mixture_and_lowrank_moments():
    _ = fnx.manual_seed(4)
    w, loc, scale = np.array([0.3, 0.7]), np.array([-2.0, 3.0]), np.array([0.5, 1.0])
    mix = MixtureSameFamily(Categorical(probs=t(w)), Normal(t(loc), t(scale)))
    mean = (w * loc).sum()
    var = (w * (scale ** 2 + loc ** 2)).sum() - mean ** 2
    _check_moments(mix.sample((N,)), mean, var, "MixtureSameFamily")
    wmat, dvec = np.array([[1.0, 0.0], [0.5, 2.0], [0.0, -1.0]]), np.array([0.3, 1.0, 2.0])
    lr = LowRankMultivariateNormal(t([1.0, 0.0, -1.0]), t(wmat), t(dvec))
    s = n(lr.rsample((N,)))
    cov = wmat @ wmat.T + np.diag(dvec)
    _check_moments(fnx.tensor(s), [1.0, 0.0, -1.0], np.diag(cov), "LowRankMVN")
    np.testing.assert_allclose(np.cov(s.T), cov, atol=0.1)


def test_relaxed_samples_lie_in_support_and_approach_discrete():
    _ = fnx.manual_seed(5)
    d = RelaxedBernoulli(t(0.05), probs=t([0.3]))
    s = n(d.sample((N,)))
    assert np.all((s > 0) & (s < 1))
    # at low temperature the relaxed variable rounds to a Bernoulli(p) draw
    assert abs((s > 0.5).mean() - 0.3) < 5 * math.sqrt(0.21 / N)
    d = RelaxedOneHotCategorical(t(0.05), probs=t([0.2, 0.5, 0.3]))
    s = n(d.sample((N,)))
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-9)
    freq = np.bincount(s.argmax(-1), minlength=3) / N
    np.testing.assert_allclose(freq, [0.2, 0.5, 0.3], atol=5 * math.sqrt(0.25 / N))


# ------------------------------------------------------------ rsample gradients

def _fd_grad(make, params, seed, sample_shape=(7,), h=1e-6):
    """d sum(rsample) / d params by central differences with the same random stream."""
    grads = []
    for i, p in enumerate(params):
        flat = p.ravel()
        g = np.zeros_like(flat)
        for j in range(flat.size):
            vals = []
            for sgn in (1, -1):
                q = [x.copy() for x in params]
                q[i].ravel()[j] += sgn * h
                _ = fnx.manual_seed(seed)
                vals.append(float(make(*[t(x) for x in q]).rsample(sample_shape).sum()))
            g[j] = (vals[0] - vals[1]) / (2 * h)
        grads.append(g.reshape(p.shape))
    return grads


RSAMPLE_CASES = {
    "LogNormal": (lambda a, b: LogNormal(a, b), [np.array([0.1, 0.5]), np.array([0.4, 0.9])]),
    "Gumbel": (lambda a, b: Gumbel(a, b), [np.array([0.1, 0.5]), np.array([0.4, 0.9])]),
    "Cauchy": (lambda a, b: Cauchy(a, b), [np.array([0.1, 0.5]), np.array([0.4, 0.9])]),
    "HalfNormal": (lambda b: HalfNormal(b), [np.array([0.4, 0.9])]),
    "HalfCauchy": (lambda b: HalfCauchy(b), [np.array([0.4, 0.9])]),
    "StudentT": (lambda a, b: StudentT(5.0, a, b), [np.array([0.1, 0.5]),
                                                    np.array([0.4, 0.9])]),
    "TanhNormal": (lambda a, b: TransformedDistribution(Normal(a, b), [TanhTransform()]),
                   [np.array([0.1, 0.5]), np.array([0.4, 0.9])]),
    "LowRankMVN": (lambda a, w, dg: LowRankMultivariateNormal(a, w, dg),
                   [np.array([0.1, 0.5]), np.array([[0.3], [-0.2]]), np.array([0.5, 1.5])]),
    "RelaxedBernoulli": (lambda lg: RelaxedBernoulli(t(0.7), logits=lg),
                         [np.array([0.3, -1.0])]),
    "RelaxedOneHot": (lambda lg: RelaxedOneHotCategorical(t(0.7), logits=lg),
                      [np.array([0.3, -1.0, 0.5])]),
}


@pytest.mark.parametrize("name", list(RSAMPLE_CASES))
def test_rsample_gradient_matches_finite_differences(name):
    make, params = RSAMPLE_CASES[name]
    # weight the output so a gradient that ignores a parameter cannot cancel to the same sum
    leaves = [t(p).requires_grad_() for p in params]
    _ = fnx.manual_seed(11)
    d = make(*leaves)
    assert d.has_rsample
    s = d.rsample((7,))
    s.sum().backward()
    expected = _fd_grad(make, params, 11)
    for leaf, g in zip(leaves, expected):
        np.testing.assert_allclose(n(leaf.grad), g, rtol=1e-5, atol=1e-6)


def test_straight_through_gradient_is_that_of_probs():
    logits = t([0.2, -0.5, 1.0]).requires_grad_()
    d = OneHotCategoricalStraightThrough(logits=logits)
    _ = fnx.manual_seed(0)
    s = d.rsample()
    assert sorted(n(s).tolist()) == [0.0, 0.0, 1.0]
    weights = t([1.0, 2.0, 3.0])
    (s * weights).sum().backward()
    p = np.exp([0.2, -0.5, 1.0]) / np.exp([0.2, -0.5, 1.0]).sum()
    # d/dlogits of sum(w * softmax(logits)) = p * (w - p.w)
    w = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(n(logits.grad), p * (w - (p * w).sum()), rtol=1e-9)


# ------------------------------------------------------------ samplers as fixed transforms

def test_gumbel_sample_is_transform_of_rand():
    loc, scale = np.array([0.5, -1.0]), np.array([2.0, 0.5])
    _ = fnx.manual_seed(7)
    s = n(Gumbel(t(loc), t(scale)).sample((5,)))
    _ = fnx.manual_seed(7)
    u = n(fnx.rand(5, 2, dtype=D))
    tiny, eps = 2.0 ** -1022, 2.0 ** -52
    u = tiny + u * (1 - eps - tiny)
    np.testing.assert_allclose(s, loc - scale * np.log(-np.log(u)), rtol=1e-12)


def test_lognormal_and_halfnormal_samples_are_transforms_of_randn():
    _ = fnx.manual_seed(8)
    s = n(LogNormal(t([0.5]), t([2.0])).sample((6,)))
    _ = fnx.manual_seed(8)
    z = n(fnx.randn(6, 1, dtype=D))
    np.testing.assert_allclose(s, np.exp(0.5 + 2.0 * z), rtol=1e-12)
    _ = fnx.manual_seed(8)
    s = n(HalfNormal(t([2.0])).sample((6,)))
    np.testing.assert_allclose(s, np.abs(2.0 * z), rtol=1e-12)


def test_geometric_sample_is_transform_of_rand():
    _ = fnx.manual_seed(9)
    s = n(Geometric(probs=t([0.3])).sample((50,)))
    _ = fnx.manual_seed(9)
    u = n(fnx.rand(50, 1, dtype=D))
    np.testing.assert_array_equal(s, np.floor(np.log(u) / np.log1p(-0.3)))


def test_seeded_sampling_is_reproducible():
    for d in (Poisson(t([3.0])), Binomial(5, probs=t([0.4])), Cauchy(t([0.0]), t([1.0])),
              NegativeBinomial(t([2.0]), probs=t([0.4])), Chi2(t([3.0]))):
        _ = fnx.manual_seed(3)
        a = n(d.sample((10,)))
        _ = fnx.manual_seed(3)
        np.testing.assert_array_equal(a, n(d.sample((10,))))


def test_categorical_sample_is_inverse_cdf_of_float64_rand():
    # per distribution (row), n float64 uniforms located in the normalized cumulative
    # weights (the order PyTorch's CPU sampler uses)
    p = np.array([[0.1, 0.6, 0.3], [2.0, 1.0, 1.0]])
    _ = fnx.manual_seed(12)
    s = n(Categorical(probs=t(p)).sample((400,)))
    _ = fnx.manual_seed(12)
    u = n(fnx.rand(2, 400, dtype=D))
    cum = np.cumsum(p / p.sum(-1, keepdims=True), -1)
    cum[:, -1] = 1
    ref = np.stack([np.searchsorted(cum[i], u[i], side="left") for i in range(2)], -1)
    np.testing.assert_array_equal(s, ref)
    # OneHotCategorical and Multinomial draw through it
    _ = fnx.manual_seed(12)
    oh = n(OneHotCategorical(probs=t(p)).sample((400,)))
    np.testing.assert_array_equal(oh.argmax(-1), ref)
    _ = fnx.manual_seed(12)
    m = n(Multinomial(400, probs=t(p)).sample())
    np.testing.assert_array_equal(m, [np.bincount(ref[:, i], minlength=3) for i in range(2)])
