"""The distributions added in round 8 against scipy.stats: log_prob, cdf, icdf, entropy,
mean, mode, variance; shapes, expand, enumerate_support and argument validation."""
import math

import numpy as np
import pytest
from scipy import special, stats

import fnx
from fnx.distributions import (Binomial, Categorical, Cauchy, Chi2, Geometric, Gumbel,
                               HalfCauchy, HalfNormal, LogitRelaxedBernoulli, LogNormal,
                               LowRankMultivariateNormal, MixtureSameFamily, Multinomial,
                               MultivariateNormal, NegativeBinomial, Normal, OneHotCategorical,
                               OneHotCategoricalStraightThrough, Poisson, RelaxedBernoulli,
                               RelaxedOneHotCategorical, StudentT, constraints)
from fnx.distributions.relaxed_categorical import ExpRelaxedCategorical

D = fnx.float64


def t(x, dtype=D):
    return fnx.tensor(np.asarray(x, dtype=np.float64), dtype=dtype)


def close(a, b, rtol=1e-9, atol=1e-10):
    a = a.detach().numpy() if isinstance(a, fnx.Tensor) else a
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), b, rtol=rtol, atol=atol)


LOC, SCALE = np.array([0.0, 1.5, -2.0]), np.array([1.0, 0.5, 3.0])
X = np.array([0.3, 1.0, 2.5])
Q = np.array([0.1, 0.5, 0.95])


def _continuous_cases():
    df = np.array([0.8, 3.0, 7.5])
    return {
        "LogNormal": (LogNormal(t(LOC), t(SCALE)), stats.lognorm(SCALE, scale=np.exp(LOC)),
                      X),
        "Cauchy": (Cauchy(t(LOC), t(SCALE)), stats.cauchy(LOC, SCALE), X),
        "Gumbel": (Gumbel(t(LOC), t(SCALE)), stats.gumbel_r(LOC, SCALE), X),
        "HalfNormal": (HalfNormal(t(SCALE)), stats.halfnorm(scale=SCALE), X),
        "HalfCauchy": (HalfCauchy(t(SCALE)), stats.halfcauchy(scale=SCALE), X),
        "StudentT": (StudentT(t(df), t(LOC), t(SCALE)), stats.t(df, LOC, SCALE), X),
        "Chi2": (Chi2(t(df)), stats.chi2(df), X),
    }


CONTINUOUS = list(_continuous_cases())
HAS_ICDF = {"LogNormal", "Cauchy", "Gumbel", "HalfNormal", "HalfCauchy"}
HAS_CDF = HAS_ICDF | {"Chi2"}


@pytest.mark.parametrize("name", CONTINUOUS)
def test_continuous_matches_scipy(name):
    d, ref, x = _continuous_cases()[name]
    close(d.log_prob(t(x)), ref.logpdf(x))
    close(d.entropy(), ref.entropy(), rtol=1e-8)
    mean, var = ref.mean(), ref.var()
    if name == "StudentT":  # scipy gives inf for an undefined mean / variance; PyTorch nan
        mean = np.where(np.array([0.8, 3.0, 7.5]) > 1, mean, np.nan)
        var = np.where(np.array([0.8, 3.0, 7.5]) > 1, var, np.nan)
    close(d.mean, np.broadcast_to(mean, (3,)) if name not in ("Cauchy",) else np.full(3, np.nan))
    close(d.variance, np.broadcast_to(var, (3,)) if name not in ("Cauchy",) else np.full(3, np.inf))
    if name in HAS_CDF:
        close(d.cdf(t(x)), ref.cdf(x), rtol=1e-8)
    if name in HAS_ICDF:
        close(d.icdf(t(Q)), ref.ppf(Q), rtol=1e-8)
    assert d.batch_shape == (3,) and d.event_shape == ()
    assert d.has_rsample is True


def test_continuous_modes():
    close(LogNormal(t(LOC), t(SCALE)).mode, np.exp(LOC - SCALE ** 2))
    close(Cauchy(t(LOC), t(SCALE)).mode, LOC)
    close(Gumbel(t(LOC), t(SCALE)).mode, LOC)
    close(HalfNormal(t(SCALE)).mode, np.zeros(3))
    close(HalfCauchy(t(SCALE)).mode, np.zeros(3))
    close(StudentT(t([2.0]), t([1.5])).mode, [1.5])
    close(Chi2(t([4.0, 1.0])).mode, [2.0, 0.0])
    close(LogNormal(t(LOC), t(SCALE)).median, np.exp(LOC))
    close(Chi2(t([4.0, 1.0])).df, [4.0, 1.0])
    close(StudentT(t([1.5]), scale=t([2.0])).variance, [np.inf])


def test_half_distributions_outside_support():
    d = HalfNormal(t([1.0]), validate_args=False)
    assert float(d.log_prob(t([-1.0]))) == -math.inf
    d = HalfCauchy(t([1.0]), validate_args=False)
    assert float(d.log_prob(t([-1.0]))) == -math.inf
    with pytest.raises(ValueError):
        HalfNormal(t([1.0])).log_prob(t([-1.0]))


# ------------------------------------------------------------ discrete distributions

def test_poisson_matches_scipy():
    rate = np.array([0.5, 3.0, 10.0])
    d = Poisson(t(rate))
    for k in (0.0, 1.0, 4.0, 12.0):
        close(d.log_prob(t([k] * 3)), stats.poisson(rate).logpmf(k))
    close(d.mean, rate)
    close(d.variance, rate)
    close(d.mode, np.floor(rate))
    # rate 0 is the point mass at 0
    close(Poisson(t([0.0])).log_prob(t([0.0])), [0.0])


def test_binomial_matches_scipy():
    n, p = np.array([5.0, 10.0, 10.0]), np.array([0.2, 0.5, 0.9])
    for d in (Binomial(t(n), probs=t(p)), Binomial(t(n), logits=t(special.logit(p)))):
        for k in (0.0, 3.0, 5.0):
            close(d.log_prob(t([k] * 3)), stats.binom(n, p).logpmf(k), rtol=1e-8)
        close(d.mean, n * p)
        close(d.variance, n * p * (1 - p), rtol=1e-8)
        close(d.mode, np.floor((n + 1) * p))
    d = Binomial(10, probs=t([0.3, 0.7]))
    close(d.entropy(), stats.binom(10, [0.3, 0.7]).entropy(), rtol=1e-8)
    support = d.enumerate_support()
    assert tuple(support.shape) == (11, 2)
    close(d.log_prob(support).exp().sum(0), [1.0, 1.0])
    # extreme probabilities stay finite inside the support
    close(Binomial(4, probs=t([0.0, 1.0])).log_prob(t([0.0, 4.0])), [0.0, 0.0], atol=1e-6)
    assert d.support.upper_bound is d.total_count
    with pytest.raises(NotImplementedError):
        Binomial(t([2.0, 3.0]), probs=t([0.5, 0.5])).enumerate_support()


def test_geometric_matches_scipy():
    p = np.array([0.1, 0.5, 0.9])
    for d in (Geometric(probs=t(p)), Geometric(logits=t(special.logit(p)))):
        for k in (0.0, 1.0, 7.0):
            # scipy's geom counts trials (support 1, 2, ...); fnx counts failures
            close(d.log_prob(t([k] * 3)), stats.geom(p).logpmf(k + 1), rtol=1e-8)
        close(d.mean, stats.geom(p).mean() - 1, rtol=1e-8)
        close(d.variance, stats.geom(p).var(), rtol=1e-8)
        close(d.entropy(), stats.geom(p).entropy(), rtol=1e-8)
    close(Geometric(probs=t([1.0])).log_prob(t([0.0])), [0.0])
    with pytest.raises(ValueError):
        Geometric(probs=t([0.0]))


def test_negative_binomial_matches_scipy():
    r, p = np.array([1.0, 2.5, 10.0]), np.array([0.2, 0.5, 0.7])
    # fnx's probs is the success probability, counting successes before r failures:
    # scipy's nbinom(r, 1 - p)
    ref = stats.nbinom(r, 1 - p)
    for d in (NegativeBinomial(t(r), probs=t(p)),
              NegativeBinomial(t(r), logits=t(special.logit(p)))):
        for k in (0.0, 2.0, 9.0):
            close(d.log_prob(t([k] * 3)), ref.logpmf(k), rtol=1e-8)
        close(d.mean, ref.mean(), rtol=1e-8)
        close(d.variance, ref.var(), rtol=1e-8)
        close(d.mode, np.floor(np.maximum((r - 1) * p / (1 - p), 0)))
    close(NegativeBinomial(t([0.0]), probs=t([0.5])).log_prob(t([0.0])), [0.0])


def test_multinomial_matches_scipy():
    p = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    d = Multinomial(6, probs=t(p))
    x = np.array([[1.0, 2.0, 3.0], [6.0, 0.0, 0.0]])
    close(d.log_prob(t(x)), [stats.multinomial(6, p[i]).logpmf(x[i]) for i in range(2)])
    close(d.mean, 6 * p)
    close(d.variance, 6 * p * (1 - p))
    close(d.entropy(), [stats.multinomial(6, p[i]).entropy() for i in range(2)], rtol=1e-8)
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    # a zero-probability category counted zero times
    d0 = Multinomial(2, probs=t([0.0, 0.5, 0.5]))
    close(d0.log_prob(t([0.0, 1.0, 1.0])), math.log(0.5))
    with pytest.raises(ValueError):
        d.log_prob(t([[7.0, 0.0, 0.0], [1.0, 1.0, 1.0]]))


def test_one_hot_categorical():
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    d = OneHotCategorical(probs=t(p))
    x = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    close(d.log_prob(t(x)), np.log([0.7, 0.25]))
    close(d.entropy(), [stats.multinomial(1, q).entropy() for q in p], rtol=1e-8)
    close(d.mean, p)
    close(d.variance, p * (1 - p))
    close(d.mode, [[0, 0, 1], [1, 0, 0]])
    support = d.enumerate_support()
    assert tuple(support.shape) == (3, 2, 3)
    close(d.log_prob(support).exp().sum(0), [1.0, 1.0])
    assert tuple(d.enumerate_support(expand=False).shape) == (3, 1, 3)
    with pytest.raises(ValueError):
        d.log_prob(t([[1.0, 1.0, 0.0], [0.0, 1.0, 0.0]]))
    st = OneHotCategoricalStraightThrough(logits=t(np.log(p)))
    close(st.log_prob(t(x)), np.log([0.7, 0.25]))


def test_relaxed_bernoulli_density():
    # density of sigmoid((logit + L) / T): T a^(...) closed form of Maddison et al. (2017)
    temp, p = 0.7, np.array([0.2, 0.6])
    a = p / (1 - p)
    y = np.array([0.3, 0.9])
    ref = (np.log(temp) + np.log(a) + (-temp - 1) * np.log(y) + (-temp - 1) * np.log(1 - y)
           - 2 * np.log(a * y ** -temp + (1 - y) ** -temp))
    d = RelaxedBernoulli(t(temp), probs=t(p))
    close(d.log_prob(t(y)), ref, rtol=1e-8)
    d = LogitRelaxedBernoulli(t(temp), probs=t(p))
    x = special.logit(y)
    close(d.log_prob(t(x)), ref + np.log(y * (1 - y)), rtol=1e-8)


def test_relaxed_one_hot_categorical_density():
    # Concrete density (Maddison et al., 2017): (n-1)! T^(n-1) prod(a_k y_k^(-T-1)) /
    # (sum a_k y_k^-T)^n
    temp, p = 0.5, np.array([0.2, 0.3, 0.5])
    y = np.array([0.1, 0.6, 0.3])
    k = 3
    ref = (math.lgamma(k) + (k - 1) * np.log(temp) + np.sum(np.log(p) - (temp + 1) * np.log(y))
           - k * np.log(np.sum(p * y ** -temp)))
    d = RelaxedOneHotCategorical(t(temp), probs=t(p))
    close(d.log_prob(t(y)), ref, rtol=1e-8)
    close(ExpRelaxedCategorical(t(temp), probs=t(p)).log_prob(t(np.log(y))),
          ref + np.log(y).sum(), rtol=1e-8)


def test_mixture_same_family_gaussian_mixture():
    w = np.array([[0.2, 0.8], [0.5, 0.5]])
    loc, scale = np.array([[-1.0, 2.0], [0.0, 3.0]]), np.array([[0.5, 1.0], [2.0, 0.3]])
    mix = MixtureSameFamily(Categorical(probs=t(w)), Normal(t(loc), t(scale)))
    x = np.array([0.3, -1.0])
    ref = np.log((w * stats.norm(loc, scale).pdf(x[:, None])).sum(-1))
    close(mix.log_prob(t(x)), ref)
    close(mix.cdf(t(x)), (w * stats.norm(loc, scale).cdf(x[:, None])).sum(-1))
    mean = (w * loc).sum(-1)
    close(mix.mean, mean)
    close(mix.variance, (w * (scale ** 2 + loc ** 2)).sum(-1) - mean ** 2)
    assert mix.batch_shape == (2,) and mix.event_shape == () and not mix.has_rsample
    e = mix.expand((4, 2))
    assert e.batch_shape == (4, 2)
    close(e.log_prob(t(x)), np.broadcast_to(ref, (4, 2)))


def test_mixture_same_family_multivariate_components():
    w = np.array([0.3, 0.7])
    locs = np.array([[0.0, 1.0], [2.0, -1.0]])
    comp = fnx.distributions.Independent(Normal(t(locs), t(np.ones((2, 2)))), 1)
    mix = MixtureSameFamily(Categorical(probs=t(w)), comp)
    assert mix.batch_shape == () and mix.event_shape == (2,)
    x = np.array([0.5, 0.5])
    ref = np.log(sum(w[i] * stats.multivariate_normal(locs[i]).pdf(x) for i in range(2)))
    close(mix.log_prob(t(x)), ref)
    close(mix.mean, (w[:, None] * locs).sum(0))
    _ = fnx.manual_seed(0)
    assert tuple(mix.sample((5,)).shape) == (5, 2)


def test_mixture_same_family_bad_arguments():
    with pytest.raises(ValueError, match="Categorical"):
        MixtureSameFamily(Normal(0.0, 1.0), Normal(t([0.0, 1.0]), 1.0))
    with pytest.raises(ValueError, match="does not equal"):
        MixtureSameFamily(Categorical(probs=t([0.5, 0.5])), Normal(t([0.0, 1.0, 2.0]), 1.0))


def test_lowrank_multivariate_normal_matches_scipy():
    rng = np.random.default_rng(0)
    w, dvec = rng.normal(size=(2, 4, 2)), rng.uniform(0.5, 2.0, size=(2, 4))
    loc = rng.normal(size=(2, 4))
    d = LowRankMultivariateNormal(t(loc), t(w), t(dvec))
    covs = [w[i] @ w[i].T + np.diag(dvec[i]) for i in range(2)]
    x = rng.normal(size=(3, 2, 4))
    ref = np.stack([stats.multivariate_normal(loc[i], covs[i]).logpdf(x[:, i])
                    for i in range(2)], -1)
    close(d.log_prob(t(x)), ref)
    close(d.entropy(), [stats.multivariate_normal(loc[i], covs[i]).entropy() for i in range(2)])
    close(d.covariance_matrix, np.stack(covs))
    close(d.precision_matrix, np.linalg.inv(np.stack(covs)), rtol=1e-8)
    close(d.scale_tril, np.linalg.cholesky(np.stack(covs)), rtol=1e-8)
    close(d.variance, np.stack([np.diag(c) for c in covs]))
    close(d.mean, loc)
    assert d.batch_shape == (2,) and d.event_shape == (4,)
    with pytest.raises(ValueError):
        LowRankMultivariateNormal(t(loc), t(w), t(-dvec))
    with pytest.raises(ValueError):
        LowRankMultivariateNormal(t(loc), t(w[:, :3]), t(dvec))


# ------------------------------------------------------------ validation, expand, compile

BAD_ARGS = [
    lambda: LogNormal(t([0.0]), t([-1.0])),
    lambda: Cauchy(t([0.0]), t([0.0])),
    lambda: Gumbel(t([0.0]), t([-1.0])),
    lambda: HalfNormal(t([-1.0])),
    lambda: HalfCauchy(t([0.0])),
    lambda: StudentT(t([-1.0])),
    lambda: Chi2(t([0.0])),
    lambda: Poisson(t([-0.5])),
    lambda: Binomial(t([2.5]), probs=t([0.5])),
    lambda: Binomial(t([2.0]), probs=t([1.5])),
    lambda: Geometric(probs=t([1.5])),
    lambda: NegativeBinomial(t([-1.0]), probs=t([0.5])),
    lambda: NegativeBinomial(t([1.0]), probs=t([1.0])),
    lambda: OneHotCategorical(probs=t([-0.5, 1.5])),
    lambda: RelaxedBernoulli(t(0.5), probs=t([1.5])),
]


@pytest.mark.parametrize("case", range(len(BAD_ARGS)))
def test_bad_parameters_raise_value_error(case):
    with pytest.raises(ValueError, match="to satisfy the constraint|positive"):
        BAD_ARGS[case]()


def test_values_outside_the_support_raise_value_error():
    for d, bad in [(Poisson(t([1.0])), [-1.0]), (Poisson(t([1.0])), [0.5]),
                   (Binomial(3, probs=t([0.5])), [4.0]), (Geometric(probs=t([0.5])), [1.5]),
                   (LogNormal(t([0.0]), t([1.0])), [-1.0]),
                   (NegativeBinomial(t([2.0]), probs=t([0.5])), [-2.0])]:
        with pytest.raises(ValueError, match="support"):
            d.log_prob(t(bad))
    # validate_args=False: no check
    assert float(Poisson(t([1.0]), validate_args=False).log_prob(t([0.5]))) < 0


@pytest.mark.parametrize("make", [
    lambda: LogNormal(t([0.0]), t([1.0])), lambda: Cauchy(t([0.0]), t([2.0])),
    lambda: Gumbel(t([0.5]), t([2.0])), lambda: HalfNormal(t([1.5])),
    lambda: StudentT(t([3.0]), t([1.0]), t([2.0])), lambda: Chi2(t([3.0])),
    lambda: Poisson(t([2.0])), lambda: Binomial(5, probs=t([0.3])),
    lambda: Geometric(probs=t([0.3])), lambda: NegativeBinomial(t([2.0]), logits=t([0.3])),
    lambda: HalfCauchy(t([1.0])),
], ids=["LogNormal", "Cauchy", "Gumbel", "HalfNormal", "StudentT", "Chi2", "Poisson",
        "Binomial", "Geometric", "NegativeBinomial", "HalfCauchy"])
def test_expand(make):
    d = make()
    e = d.expand((4, 1))
    assert e.batch_shape == (4, 1)
    x = t([[1.0]] * 4)
    close(e.log_prob(x), np.broadcast_to(n_(d.log_prob(t([1.0]))), (4, 1)))
    _ = fnx.manual_seed(0)
    assert tuple(e.sample((2,)).shape) == (2, 4, 1)


def n_(x):
    return x.detach().numpy()


def test_expand_multivariate():
    d = OneHotCategorical(probs=t([0.2, 0.8])).expand((3,))
    assert d.batch_shape == (3,) and d.event_shape == (2,)
    d = Multinomial(3, probs=t([0.2, 0.8])).expand((3,))
    close(d.log_prob(t([1.0, 2.0])), [stats.multinomial(3, [0.2, 0.8]).logpmf([1, 2])] * 3)
    d = LowRankMultivariateNormal(t([0.0, 0.0]), t([[1.0], [0.5]]), t([1.0, 1.0])).expand((2,))
    assert d.batch_shape == (2,) and tuple(d.covariance_matrix.shape) == (2, 2, 2)
    d = RelaxedOneHotCategorical(t(0.5), probs=t([0.2, 0.8])).expand((3,))
    assert d.batch_shape == (3,)


def test_log_prob_traces_under_compile():
    # without validation (whose checks read values) each is one graph: fullgraph=True
    v = False
    dists = [
        lambda p: LogNormal(p, 1.0, validate_args=v).log_prob(t([0.5, 2.0])),
        lambda p: StudentT(3.0, p, 2.0, validate_args=v).log_prob(t([0.5, 2.0])),
        lambda p: Binomial(5, logits=p, validate_args=v).log_prob(t([1.0, 4.0])),
        lambda p: MixtureSameFamily(Categorical(logits=p, validate_args=v),
                                    Normal(t([0.0, 1.0]), 1.0, validate_args=v),
                                    validate_args=v).log_prob(t([0.5, 2.0]).unsqueeze(-1)),
        lambda p: fnx.distributions.TransformedDistribution(
            Normal(p, 1.0, validate_args=v), [fnx.distributions.TanhTransform()],
            validate_args=v).log_prob(t([0.5, -0.2])),
        lambda p: LowRankMultivariateNormal(p, t([[1.0], [0.5]]), t([1.0, 2.0]),
                                            validate_args=v).log_prob(t([0.5, -0.2])),
        lambda p: NegativeBinomial(3.0, logits=p, validate_args=v).log_prob(t([1.0, 4.0])),
        lambda p: Gumbel(p, 2.0, validate_args=v).log_prob(t([0.5, -0.2])),
        lambda p: OneHotCategorical(logits=p, validate_args=v).log_prob(t([0.0, 1.0])),
        lambda p: Multinomial(3, logits=p, validate_args=v).log_prob(t([1.0, 2.0])),
        lambda p: RelaxedOneHotCategorical(t(0.5), logits=p, validate_args=v).log_prob(
            t([0.3, 0.7])),
    ]
    p = t([0.3, -0.4])
    for fn in dists:
        compiled = fnx.compile(fn, fullgraph=True)
        close(compiled(p), n_(fn(p)), rtol=1e-12)


def test_sac_actor_compiles_in_one_graph():
    # rsample and log_prob of a tanh-squashed Gaussian, gradients through both
    def actor(mu, log_std):
        d = fnx.distributions.TransformedDistribution(
            Normal(mu, log_std.exp(), validate_args=False),
            [fnx.distributions.TanhTransform(cache_size=1)], validate_args=False)
        a = d.rsample()
        return a, d.log_prob(a).sum(-1)

    f = fnx.compile(actor, fullgraph=True)
    mu, log_std = t(np.zeros((4, 2))).requires_grad_(), t(np.zeros((4, 2))).requires_grad_()
    a, lp = f(mu, log_std)
    (lp.sum() + a.sum()).backward()
    assert tuple(a.shape) == (4, 2) and tuple(lp.shape) == (4,)
    assert bool((a.abs() < 1).all()) and bool(fnx.isfinite(mu.grad).all())
    # log_prob = sum(log N(x) - log(1 - a^2)) with x = atanh(a), standard normal here
    x = np.arctanh(n_(a))
    ref = (stats.norm.logpdf(x) - np.log(1 - n_(a) ** 2)).sum(-1)
    close(lp, ref, rtol=1e-9)


def test_support_constraints():
    assert Binomial(5, probs=t([0.3])).support.check(t([5.0])).all()
    assert isinstance(Poisson(t([1.0])).support, type(constraints.nonnegative_integer))
    assert OneHotCategorical(probs=t([0.5, 0.5])).support is constraints.one_hot
    assert Multinomial(4, probs=t([0.5, 0.5])).support.check(t([1.0, 3.0]))
    support = MixtureSameFamily(Categorical(probs=t([0.5, 0.5])),
                                Normal(t([0.0, 1.0]), 1.0)).support
    assert support.base_constraint is constraints.real and support.event_dim == 0
    assert support.check(t([0.5, np.nan])).tolist() == [True, False]
    gamma_mix = MixtureSameFamily(Categorical(probs=t([0.5, 0.5])),
                                  fnx.distributions.Gamma(t([1.0, 2.0]), 1.0))
    assert gamma_mix.support.check(t([0.5, -1.0])).tolist() == [True, False]
    with pytest.raises(ValueError, match="support"):
        gamma_mix.log_prob(t(-1.0))


def test_mvn_lowrank_agree():
    w, dvec = np.array([[1.0], [0.5], [-0.2]]), np.array([0.5, 1.0, 2.0])
    cov = w @ w.T + np.diag(dvec)
    lr = LowRankMultivariateNormal(t(np.zeros(3)), t(w), t(dvec))
    mvn = MultivariateNormal(t(np.zeros(3)), t(cov))
    x = t([[0.1, -0.2, 0.3], [1.0, 2.0, -1.0]])
    close(lr.log_prob(x), n_(mvn.log_prob(x)))


LOG_PROB_GRAD_CASES = {
    "StudentT": (lambda df, loc, sc: StudentT(df, loc, sc).log_prob(t([0.3, -1.0])),
                 [[3.0, 6.5], [0.1, -0.5], [1.2, 0.7]]),
    "MixtureSameFamily": (lambda lg, loc, sc: MixtureSameFamily(
        Categorical(logits=lg), Normal(loc, sc)).log_prob(t([0.3, -1.0]).unsqueeze(-1)),
        [[0.2, -0.4, 1.0], [0.0, 1.0, -2.0], [1.0, 0.5, 2.0]]),
    "Binomial": (lambda lg: Binomial(7, logits=lg).log_prob(t([2.0, 5.0])), [[0.3, -1.2]]),
    "NegativeBinomial": (lambda n, lg: NegativeBinomial(n, logits=lg).log_prob(t([2.0, 5.0])),
                         [[2.5, 4.0], [0.3, -1.2]]),
    "Geometric": (lambda p: Geometric(probs=p).log_prob(t([2.0, 5.0])), [[0.3, 0.6]]),
    "Poisson": (lambda r: Poisson(r).log_prob(t([2.0, 5.0])), [[0.3, 6.0]]),
    "LogNormal": (lambda a, b: LogNormal(a, b).log_prob(t([0.3, 2.0])),
                  [[0.1, -0.4], [0.6, 1.5]]),
    "Gumbel": (lambda a, b: Gumbel(a, b).log_prob(t([0.3, 2.0])), [[0.1, -0.4], [0.6, 1.5]]),
    "LowRankMVN": (lambda loc, w, d: LowRankMultivariateNormal(loc, w, d).log_prob(
        t([0.3, -0.2, 1.0])), [[0.1, 0.0, -0.3], [[0.5], [-0.2], [1.0]], [0.5, 1.0, 2.0]]),
    "RelaxedOneHot": (lambda lg: RelaxedOneHotCategorical(t(0.6), logits=lg).log_prob(
        t([0.2, 0.5, 0.3])), [[0.3, -1.0, 0.2]]),
}


@pytest.mark.parametrize("name", list(LOG_PROB_GRAD_CASES))
def test_log_prob_gradients_against_finite_differences(name):
    fn, params = LOG_PROB_GRAD_CASES[name]
    leaves = [t(p).requires_grad_() for p in params]
    fn(*leaves).sum().backward()
    h = 1e-6
    for i, p in enumerate(params):
        p = np.asarray(p, dtype=np.float64)
        fd = np.zeros_like(p)
        for j in np.ndindex(p.shape):
            vals = []
            for sgn in (1, -1):
                q = [np.asarray(x, dtype=np.float64).copy() for x in params]
                q[i][j] += sgn * h
                vals.append(float(fn(*[t(x) for x in q]).sum()))
            fd[j] = (vals[0] - vals[1]) / (2 * h)
        close(leaves[i].grad, fd, rtol=1e-5, atol=1e-7)
