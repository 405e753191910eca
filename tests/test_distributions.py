"""fnx.distributions against scipy.stats, closed forms, numeric integration, finite
differences and seeded sample moments."""
import math

import numpy as np
import pytest
from scipy import integrate, special, stats

import fnx
from fnx.distributions import (AffineTransform, Bernoulli, Beta, Categorical, ComposeTransform,
                               Dirichlet, Distribution, ExpTransform, Exponential, Gamma,
                               Independent, Laplace, MultivariateNormal, Normal, SigmoidTransform,
                               TransformedDistribution, Uniform, constraints, kl_divergence)

D = fnx.float64


def t(x, dtype=D):
    return fnx.tensor(np.asarray(x, dtype=np.float64), dtype=dtype)


def close(a, b, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(np.asarray(a.detach().numpy() if isinstance(a, fnx.Tensor) else a,
                                          dtype=np.float64), b, rtol=rtol, atol=atol)


# ------------------------------------------------------------ densities against scipy.stats

LOC, SCALE, X = [0.0, 1.5, -2.0], [1.0, 0.5, 3.0], [0.3, 1.0, 2.5]


def _univariate_cases():
    # (distribution, frozen scipy equivalent, points inside the support)
    a, b = np.array([0.5, 2.0, 5.0]), np.array([1.5, 0.7, 3.0])
    return [
        (Normal(t(LOC), t(SCALE)), stats.norm(LOC, SCALE), X),
        (Uniform(t([0.0, -1.0, 2.0]), t([1.0, 3.0, 2.5])),
         stats.uniform([0.0, -1.0, 2.0], [1.0, 4.0, 0.5]), [0.3, 1.0, 2.2]),
        (Exponential(t([0.5, 1.0, 4.0])), stats.expon(scale=1 / np.array([0.5, 1.0, 4.0])), X),
        (Laplace(t(LOC), t(SCALE)), stats.laplace(LOC, SCALE), X),
        (Gamma(t(a), t(b)), stats.gamma(a, scale=1 / b), X),
        (Beta(t(a), t(b)), stats.beta(a, b), [0.3, 0.5, 0.9]),
    ]


@pytest.mark.parametrize("case", range(6), ids=["Normal", "Uniform", "Exponential", "Laplace",
                                                "Gamma", "Beta"])
def test_univariate_matches_scipy(case):
    d, ref, x = _univariate_cases()[case]
    close(d.log_prob(t(x)), ref.logpdf(x), rtol=1e-9)
    close(d.entropy(), ref.entropy(), rtol=1e-9)
    close(d.mean, ref.mean(), rtol=1e-9)
    close(d.variance, ref.var(), rtol=1e-9)
    close(d.stddev, ref.std(), rtol=1e-9)
    if not isinstance(d, Beta):  # Beta has no cdf in PyTorch either
        close(d.cdf(t(x)), ref.cdf(x), rtol=1e-7)
    if not isinstance(d, (Gamma, Beta)):
        q = [0.1, 0.5, 0.95]
        close(d.icdf(t(q)), ref.ppf(q), rtol=1e-7)


def test_modes():
    close(Normal(t(LOC), t(SCALE)).mode, LOC)
    close(Gamma(t([3.0, 0.5]), t([2.0, 1.0])).mode, [1.0, 0.0])  # (a-1)/b, clamped at 0
    close(Beta(t([3.0, 0.5, 3.0]), t([2.0, 2.0, 0.5])).mode, [2.0 / 3.0, 0.0, 1.0])
    close(Dirichlet(t([[3.0, 2.0, 1.0], [0.5, 0.5, 0.5]])).mode, [[2 / 3, 1 / 3, 0], [1, 0, 0]])
    close(Laplace(t(LOC), t(SCALE)).mode, LOC)
    assert bool(fnx.isnan(Uniform(0.0, 1.0).mode))


def test_bernoulli_probs_and_logits():
    p = np.array([0.1, 0.5, 0.8])
    for d in (Bernoulli(probs=t(p)), Bernoulli(logits=t(np.log(p / (1 - p))))):
        for v in (0.0, 1.0):
            close(d.log_prob(t([v] * 3)), stats.bernoulli(p).logpmf(v), rtol=1e-9)
        close(d.entropy(), stats.bernoulli(p).entropy(), rtol=1e-9)
        close(d.mean, p, rtol=1e-9)
        close(d.variance, p * (1 - p), rtol=1e-9)
        close(d.probs, p, rtol=1e-9)
        close(d.logits, np.log(p / (1 - p)), rtol=1e-7)
    close(Bernoulli(probs=t([0.2, 0.9])).mode, [0.0, 1.0])
    close(Bernoulli(probs=t([0.5, 0.1])).enumerate_support(), [[0.0, 0.0], [1.0, 1.0]])


def test_categorical_probs_and_logits():
    w = np.array([[1.0, 2.0, 7.0], [3.0, 3.0, 4.0]])
    p = w / w.sum(-1, keepdims=True)
    for d in (Categorical(probs=t(w)), Categorical(logits=t(np.log(w) + 5.0))):
        assert d.batch_shape == (2,) and d.event_shape == ()
        v = np.array([2, 0])
        close(d.log_prob(fnx.tensor(v)), np.log(p[[0, 1], v]), rtol=1e-9)
        close(d.entropy(), [stats.entropy(r) for r in p], rtol=1e-9)
        close(d.probs, p, rtol=1e-9)
        assert d.mode.tolist() == [2, 2]
    # log_prob broadcasts a batch of values against the batch of distributions
    d = Categorical(probs=t(w))
    close(d.log_prob(fnx.tensor([[0], [1]])), np.log([[p[0, 0], p[1, 0]], [p[0, 1], p[1, 1]]]))
    assert d.enumerate_support().tolist() == [[0, 0], [1, 1], [2, 2]]


def test_dirichlet_matches_scipy():
    c = np.array([0.7, 2.0, 3.5])
    d = Dirichlet(t(c))
    x = np.array([0.2, 0.3, 0.5])
    ref = stats.dirichlet(c)
    close(d.log_prob(t(x)), ref.logpdf(x), rtol=1e-9)
    close(d.entropy(), ref.entropy(), rtol=1e-9)
    close(d.mean, ref.mean(), rtol=1e-9)
    close(d.variance, ref.var(), rtol=1e-9)


def _spd(n, seed):
    a = np.random.default_rng(seed).standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def test_multivariate_normal_three_parameterizations():
    cov = _spd(3, 0)
    loc = np.array([0.5, -1.0, 2.0])
    x = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 3.0]])
    ref = stats.multivariate_normal(loc, cov)
    for kw in ({"covariance_matrix": t(cov)}, {"precision_matrix": t(np.linalg.inv(cov))},
               {"scale_tril": t(np.linalg.cholesky(cov))}):
        d = MultivariateNormal(t(loc), **kw)
        assert d.batch_shape == () and d.event_shape == (3,)
        close(d.log_prob(t(x)), ref.logpdf(x), rtol=1e-9)
        close(d.entropy(), ref.entropy(), rtol=1e-9)
        close(d.covariance_matrix, cov, rtol=1e-9)
        close(d.precision_matrix, np.linalg.inv(cov), rtol=1e-8, atol=1e-12)
        close(d.scale_tril, np.linalg.cholesky(cov), rtol=1e-9)
        close(d.variance, np.diag(cov), rtol=1e-9)
        close(d.mean, loc)


def test_multivariate_normal_batches_broadcast():
    covs = np.stack([_spd(2, 1), _spd(2, 2)])
    d = MultivariateNormal(t([0.0, 1.0]), t(covs))
    assert d.batch_shape == (2,) and d.event_shape == (2,)
    x = np.array([0.3, 0.4])
    close(d.log_prob(t(x)), [stats.multivariate_normal([0.0, 1.0], c).logpdf(x) for c in covs],
          rtol=1e-9)
    assert d.sample((4,)).shape == (4, 2, 2)


def test_independent_sums_the_reinterpreted_dims():
    base = Normal(t(np.zeros((2, 3))), t(np.ones((2, 3)) * 2.0))
    d = Independent(base, 1)
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    x = np.arange(6.0).reshape(2, 3)
    close(d.log_prob(t(x)), stats.norm(0, 2).logpdf(x).sum(-1), rtol=1e-9)
    close(d.entropy(), [3 * stats.norm(0, 2).entropy()] * 2, rtol=1e-9)
    assert d.rsample((5,)).shape == (5, 2, 3)
    assert isinstance(d.support, type(constraints.independent(constraints.real, 1)))
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        Independent(base, 3)


def test_transformed_distributions():
    lognormal = TransformedDistribution(Normal(t(0.3), t(0.8)), [ExpTransform()])
    x = np.array([0.5, 1.0, 4.0])
    ref = stats.lognorm(0.8, scale=math.exp(0.3))
    close(lognormal.log_prob(t(x)), ref.logpdf(x), rtol=1e-9)
    close(lognormal.cdf(t(x)), ref.cdf(x), rtol=1e-9)
    close(lognormal.icdf(t([0.25])), ref.ppf([0.25]), rtol=1e-9)
    # a logistic-normal on (0, 1) through sigmoid, and an affine map with a negative scale
    logit_normal = TransformedDistribution(Normal(t(0.0), t(1.0)), SigmoidTransform())
    y = np.array([0.2, 0.7])
    z = np.log(y / (1 - y))
    close(logit_normal.log_prob(t(y)), stats.norm.logpdf(z) - np.log(y * (1 - y)), rtol=1e-9)
    flipped = TransformedDistribution(Exponential(t(2.0)), [AffineTransform(1.0, -3.0)])
    ref = stats.expon(scale=0.5)
    close(flipped.log_prob(t([-1.0])), ref.logpdf(2 / 3) - np.log(3), rtol=1e-9)
    close(flipped.cdf(t([-1.0])), 1 - ref.cdf(2 / 3), rtol=1e-9)
    assert flipped.sample((7,)).shape == (7,)


@pytest.mark.parametrize("transform", [ExpTransform(), SigmoidTransform(),
                                       AffineTransform(0.5, -2.0),
                                       AffineTransform(t([1.0, 2.0, 3.0]), t([0.5, -1.0, 4.0]))],
                         ids=["exp", "sigmoid", "affine", "affine-tensor"])
def test_transform_inverse_and_log_abs_det_jacobian(transform):
    x = np.array([-1.2, 0.1, 0.9])
    y = transform(t(x))
    close(transform.inv(y), x, rtol=1e-9, atol=1e-12)
    h = 1e-6
    dydx = (transform(t(x + h)).numpy() - transform(t(x - h)).numpy()) / (2 * h)
    close(transform.log_abs_det_jacobian(t(x), y), np.log(np.abs(dydx)), rtol=1e-6, atol=1e-8)
    close(transform.inv.log_abs_det_jacobian(y, t(x)), -np.log(np.abs(dydx)), rtol=1e-6,
          atol=1e-8)


def test_transformed_multivariate_events_and_compose():
    base = Independent(Normal(t(np.zeros(3)), t(1.0)), 1)
    loc, scale = np.array([1.0, 2.0, 3.0]), np.array([0.5, 2.0, 4.0])
    d = TransformedDistribution(base, [AffineTransform(t(loc), t(scale), event_dim=1)])
    assert d.batch_shape == () and d.event_shape == (3,)
    y = np.array([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]])
    close(d.log_prob(t(y)), stats.norm(loc, scale).logpdf(y).sum(-1), rtol=1e-9)
    e = d.expand((4,))
    assert e.batch_shape == (4,) and e.sample().shape == (4, 3)
    # exp(2 + 3 x): a log-normal with mu = 2, sigma = 3, via a composed transform
    composed = ComposeTransform([AffineTransform(2.0, 3.0), ExpTransform()])
    ln = TransformedDistribution(Normal(t(0.0), t(1.0)), composed)
    close(ln.log_prob(t([0.5, 7.0])), stats.lognorm(3.0, scale=math.exp(2.0)).logpdf([0.5, 7.0]),
          rtol=1e-9)


# ------------------------------------------------------------ sampling

def _check_moments(samples, mean, var, n_sigma=6.0):
    s = np.asarray(samples.numpy(), dtype=np.float64)
    n = s.shape[0]
    mean, var = np.broadcast_to(mean, s.shape[1:]), np.broadcast_to(var, s.shape[1:])
    # sample mean within n_sigma standard errors of the true mean; sample variance within
    # n_sigma standard errors of the variance (its standard error from the 4th moment)
    np.testing.assert_array_less(np.abs(s.mean(0) - mean), n_sigma * np.sqrt(var / n))
    m4 = ((s - mean) ** 4).mean(0)
    np.testing.assert_array_less(np.abs(s.var(0) - var), n_sigma * np.sqrt((m4 - var ** 2) / n))


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Exponential", "Laplace", "Gamma",
                                  "Beta"])
def test_sample_moments(name):
    fnx.manual_seed(0)
    d, ref, _ = _univariate_cases()[["Normal", "Uniform", "Exponential", "Laplace", "Gamma",
                                     "Beta"].index(name)]
    s = d.sample((40000,))
    assert s.shape == (40000, 3) and s.dtype == D
    assert bool(d.support.check(s).all())
    _check_moments(s, ref.mean(), ref.var())


def test_gamma_small_concentration_sample_moments():
    fnx.manual_seed(1)
    a = np.array([0.1, 0.5, 0.9])
    s = Gamma(t(a), t(1.0)).sample((40000,))
    assert bool((s > 0).all())
    _check_moments(s, a, a)


def test_discrete_and_multivariate_sample_moments():
    fnx.manual_seed(2)
    p = np.array([0.1, 0.6])
    _check_moments(Bernoulli(probs=t(p)).sample((40000,)), p, p * (1 - p))
    w = np.array([0.2, 0.5, 0.3])
    s = Categorical(probs=t(w)).sample((40000,))
    assert s.dtype == fnx.int64 and s.shape == (40000,)
    freq = np.bincount(s.numpy(), minlength=3) / 40000
    np.testing.assert_array_less(np.abs(freq - w), 6 * np.sqrt(w * (1 - w) / 40000))
    c = np.array([1.0, 2.0, 3.0])
    s = Dirichlet(t(c)).sample((40000,))
    close(s.sum(-1), np.ones(40000), rtol=1e-9)
    _check_moments(s, stats.dirichlet(c).mean(), stats.dirichlet(c).var())
    cov = _spd(3, 3)
    s = MultivariateNormal(t([1.0, 0.0, -1.0]), t(cov)).sample((40000,)).numpy()
    np.testing.assert_allclose(np.cov(s.T), cov, rtol=0.1, atol=0.1 * np.abs(cov).max())
    np.testing.assert_array_less(np.abs(s.mean(0) - [1.0, 0.0, -1.0]),
                                 6 * np.sqrt(np.diag(cov) / 40000))


def test_compiled_sampling():
    # Marsaglia-Tsang's fixed number of rounds traces into one graph; each call draws anew
    f = fnx.compile(lambda c: Gamma(c, 2.0, validate_args=False).sample((20000,)),
                    fullgraph=True)
    c = t([0.4, 3.0])
    s1, s2 = f(c), f(c)
    assert s1.shape == (20000, 2) and not bool((s1 == s2).all())
    _check_moments(s1, np.array([0.4, 3.0]) / 2, np.array([0.4, 3.0]) / 4)


def test_float32_by_default():
    d = Normal(0.0, 1.0)
    assert d.loc.dtype == fnx.float32 and d.sample((2,)).dtype == fnx.float32
    close(d.log_prob(fnx.tensor([0.5])), stats.norm.logpdf([0.5]), rtol=1e-6)
    assert Gamma(fnx.tensor([2.0]), 1.0).sample((3,)).dtype == fnx.float32


def test_manual_seed_reproduces_samples():
    d = Gamma(t([0.5, 2.0]), t(1.0))
    fnx.manual_seed(7)
    a = d.sample((5,)), Normal(0.0, 1.0).sample((3,))
    fnx.manual_seed(7)
    b = d.sample((5,)), Normal(0.0, 1.0).sample((3,))
    assert all(bool((x == y).all()) for x, y in zip(a, b))
    assert not bool((a[0][0] == a[0][1]).all())


def test_sample_has_no_grad_rsample_has():
    loc = t([0.0, 1.0]).requires_grad_()
    d = Normal(loc, 1.0)
    assert not d.sample().requires_grad
    assert d.rsample().requires_grad
    assert Gamma(2.0, 1.0).has_rsample and not Bernoulli(0.5).has_rsample
    with pytest.raises(NotImplementedError):
        Categorical(probs=fnx.tensor([0.5, 0.5])).rsample()


# ------------------------------------------------------------ reparameterization gradients

def test_rsample_gradients_are_the_reparameterization():
    fnx.manual_seed(3)
    loc = t([0.5, -1.0]).requires_grad_()
    scale = t([2.0, 0.5]).requires_grad_()
    x = Normal(loc, scale).rsample((1000,))
    x.sum().backward()
    close(loc.grad, [1000.0, 1000.0])                       # dx/dloc = 1
    eps = (x.detach() - loc.detach()) / scale.detach()       # dx/dscale = eps
    close(scale.grad, eps.sum(0).numpy(), rtol=1e-9)

    low, high = t([0.0]).requires_grad_(), t([2.0]).requires_grad_()
    x = Uniform(low, high).rsample((500,))
    x.sum().backward()
    u = (x.detach() - 0.0) / 2.0                              # x = low + u (high - low)
    close(high.grad, u.sum(0).numpy(), rtol=1e-9)
    close(low.grad, (1 - u).sum(0).numpy(), rtol=1e-9)

    rate = t([2.0]).requires_grad_()
    x = Exponential(rate).rsample((500,))
    x.sum().backward()
    close(rate.grad, (-x.detach() / 2.0).sum(0).numpy(), rtol=1e-9)   # x = e / rate

    ls = t([1.5]).requires_grad_()
    x = Laplace(t([0.2]), ls).rsample((500,))
    x.sum().backward()
    close(ls.grad, ((x.detach() - 0.2) / 1.5).sum(0).numpy(), rtol=1e-9)

    mloc = t([0.0, 1.0]).requires_grad_()
    x = MultivariateNormal(mloc, t(_spd(2, 4))).rsample((10,))
    x.sum().backward()
    close(mloc.grad, [10.0, 10.0])


def test_rsample_mean_gradient_with_respect_to_scale_tril():
    # x_i = loc + L eps_i, so d sum(x) / dL[j, k] = sum_i eps_i[k] (every entry: the upper
    # triangle is not masked, as in PyTorch)
    fnx.manual_seed(4)
    L = t(np.linalg.cholesky(_spd(2, 5))).requires_grad_()
    x = MultivariateNormal(t([0.0, 0.0]), scale_tril=L).rsample((50,))
    x.sum().backward()
    eps = np.linalg.solve(L.detach().numpy(), x.detach().numpy().T)    # 2 x 50
    close(L.grad, np.tile(eps.sum(1), (2, 1)), rtol=1e-8, atol=1e-10)


def _mean_and_stderr(grads):
    g = np.asarray(grads.numpy(), dtype=np.float64)
    return g.mean(0), g.std(0) / np.sqrt(g.shape[0])


def test_gamma_rsample_implicit_gradient():
    fnx.manual_seed(5)
    n = 20000
    alphas = np.array([0.3, 1.0, 4.0])
    a = t(np.tile(alphas, (n, 1))).requires_grad_()
    x = Gamma(a, t(1.0)).rsample()
    x.sum().backward()
    # per sample: dx/da = -(dF/da)(x; a) / pdf(x; a), F = scipy's regularized gammainc
    xs, h = x.detach().numpy()[:50], 1e-5
    dF = (special.gammainc(alphas + h, xs) - special.gammainc(alphas - h, xs)) / (2 * h)
    close(a.grad[:50], -dF / stats.gamma(alphas).pdf(xs), rtol=1e-4, atol=1e-8)
    # unbiased: E[dx/da] = dE[x]/da = 1 for rate 1
    m, se = _mean_and_stderr(a.grad)
    np.testing.assert_array_less(np.abs(m - 1.0), 6 * se)


def test_beta_and_dirichlet_rsample_gradients_are_unbiased():
    fnx.manual_seed(6)
    n = 20000
    a = t(np.full((n, 2), 0.7)).requires_grad_()
    b = t(np.full((n, 2), 2.5)).requires_grad_()
    Beta(a, b).rsample().sum().backward()
    # E[x] = a / (a + b): d/da = b / (a + b)^2, d/db = -a / (a + b)^2
    for grad, expected in ((a.grad, 2.5 / 3.2 ** 2), (b.grad, -0.7 / 3.2 ** 2)):
        m, se = _mean_and_stderr(grad)
        np.testing.assert_array_less(np.abs(m - expected), 6 * se)
    c = t(np.tile([0.5, 2.0, 3.0], (n, 1))).requires_grad_()
    Dirichlet(c).rsample()[:, 0].sum().backward()
    m, se = _mean_and_stderr(c.grad)          # d(c0 / S)/dc = [(S - c0), -c0, -c0] / S^2
    np.testing.assert_array_less(np.abs(m - np.array([5.0, -0.5, -0.5]) / 5.5 ** 2), 6 * se)


def test_log_prob_gradients_match_finite_differences():
    def fd(f, p, h=1e-6):
        return (f(p + h) - f(p - h)) / (2 * h)

    cases = [
        (lambda v: Normal(t(0.3), v).log_prob(t(1.1)), 0.7),
        (lambda v: Gamma(v, t(2.0)).log_prob(t(0.8)), 1.7),
        (lambda v: Beta(t(2.0), v).log_prob(t(0.4)), 1.3),
        (lambda v: Laplace(v, t(1.0)).log_prob(t(0.2)), 0.9),
        (lambda v: kl_divergence(Gamma(v, t(1.0)), Gamma(t(2.0), t(3.0))), 1.4),
    ]
    for f, p0 in cases:
        v = fnx.tensor(p0, dtype=D, requires_grad=True)
        f(v).backward()
        expected = fd(lambda q: f(fnx.tensor(q, dtype=D)).item(), p0)
        close(v.grad, expected, rtol=1e-6)


# ------------------------------------------------------------ KL divergence

def _kl_numeric(p_ref, q_ref, lo, hi):
    return integrate.quad(lambda x: p_ref.pdf(x) * (p_ref.logpdf(x) - q_ref.logpdf(x)),
                          lo, hi, limit=200)[0]


@pytest.mark.parametrize("pair", ["Normal", "Exponential", "Laplace", "Gamma", "Beta",
                                  "ExponentialGamma"])
def test_kl_continuous_matches_numeric_integration(pair):
    cases = {
        "Normal": (Normal(t(0.3), t(0.8)), Normal(t(-1.0), t(2.0)),
                   stats.norm(0.3, 0.8), stats.norm(-1.0, 2.0), -np.inf, np.inf),
        "Exponential": (Exponential(t(2.0)), Exponential(t(0.5)),
                        stats.expon(scale=0.5), stats.expon(scale=2.0), 0, np.inf),
        "Laplace": (Laplace(t(0.0), t(1.0)), Laplace(t(1.0), t(2.0)),
                    stats.laplace(0.0, 1.0), stats.laplace(1.0, 2.0), -60.0, 60.0),
        "Gamma": (Gamma(t(2.0), t(1.5)), Gamma(t(3.0), t(0.5)),
                  stats.gamma(2.0, scale=1 / 1.5), stats.gamma(3.0, scale=2.0), 0, np.inf),
        "Beta": (Beta(t(2.0), t(3.0)), Beta(t(1.5), t(0.8)),
                 stats.beta(2.0, 3.0), stats.beta(1.5, 0.8), 0, 1),
        "ExponentialGamma": (Exponential(t(1.5)), Gamma(t(2.5), t(2.0)),
                             stats.expon(scale=1 / 1.5), stats.gamma(2.5, scale=0.5), 0,
                             np.inf),
    }
    p, q, pr, qr, lo, hi = cases[pair]
    close(kl_divergence(p, q), _kl_numeric(pr, qr, lo, hi), rtol=1e-6, atol=1e-9)


def test_kl_discrete_and_uniform_closed_forms():
    p, q = np.array([0.1, 0.7]), np.array([0.4, 0.2])
    expected = p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))
    close(kl_divergence(Bernoulli(probs=t(p)), Bernoulli(logits=t(np.log(q / (1 - q))))),
          expected, rtol=1e-9)
    a, b = np.array([0.2, 0.3, 0.5]), np.array([0.1, 0.1, 0.8])
    close(kl_divergence(Categorical(probs=t(a)), Categorical(probs=t(b))),
          np.sum(a * np.log(a / b)), rtol=1e-9)
    # q has a zero where p does not: infinite; p has a zero: that term is 0
    assert kl_divergence(Categorical(probs=t(a)),
                         Categorical(probs=t([0.5, 0.5, 0.0]))).item() == math.inf
    close(kl_divergence(Categorical(probs=t([0.0, 1.0])), Categorical(probs=t([0.5, 0.5]))),
          math.log(2.0), rtol=1e-9)
    close(kl_divergence(Uniform(t([0.0, 0.0]), t([1.0, 1.0])),
                        Uniform(t([-1.0, 0.5]), t([3.0, 2.0]))),
          [math.log(4.0), math.inf])


def test_kl_dirichlet():
    # a two-component Dirichlet is a Beta on its first coordinate
    pr, qr = stats.beta(2.0, 3.0), stats.beta(1.5, 0.8)
    close(kl_divergence(Dirichlet(t([2.0, 3.0])), Dirichlet(t([1.5, 0.8]))),
          _kl_numeric(pr, qr, 0, 1), rtol=1e-6)
    # three components: a Monte Carlo estimate with scipy's densities and draws
    a, b = np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 0.7])
    x = stats.dirichlet(a).rvs(50000, random_state=np.random.default_rng(0))
    x = np.clip(x, 1e-300, None)
    x = (x / x.sum(-1, keepdims=True)).T          # scipy takes the components first
    terms = stats.dirichlet(a).logpdf(x) - stats.dirichlet(b).logpdf(x)
    close(kl_divergence(Dirichlet(t(a)), Dirichlet(t(b))), terms.mean(),
          rtol=0, atol=6 * terms.std() / np.sqrt(terms.size))


def test_kl_multivariate_normal_and_independent():
    c1, c2 = _spd(3, 6), _spd(3, 7)
    m1, m2 = np.array([0.0, 1.0, 2.0]), np.array([1.0, -1.0, 0.5])
    i2 = np.linalg.inv(c2)
    expected = 0.5 * (np.trace(i2 @ c1) + (m2 - m1) @ i2 @ (m2 - m1) - 3
                      + np.log(np.linalg.det(c2) / np.linalg.det(c1)))
    close(kl_divergence(MultivariateNormal(t(m1), t(c1)),
                        MultivariateNormal(t(m2), precision_matrix=t(i2))), expected, rtol=1e-8)
    p = Independent(Normal(t(m1), t([1.0, 2.0, 0.5])), 1)
    q = Independent(Normal(t(m2), t([0.5, 1.0, 1.0])), 1)
    per_dim = [_kl_numeric(stats.norm(a, s), stats.norm(b, r), -np.inf, np.inf)
               for a, s, b, r in zip(m1, [1.0, 2.0, 0.5], m2, [0.5, 1.0, 1.0])]
    close(kl_divergence(p, q), sum(per_dim), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="No KL"):
        kl_divergence(Normal(0.0, 1.0), Categorical(probs=t([0.5, 0.5])))


# ------------------------------------------------------------ validation

def test_bad_parameters_raise_value_error():
    with pytest.raises(ValueError, match=r"Expected parameter scale .* to satisfy the "
                                         r"constraint GreaterThan\(lower_bound=0.0\)"):
        Normal(fnx.tensor([0.0]), fnx.tensor([-1.0]))
    with pytest.raises(ValueError, match="Expected parameter probs"):
        Bernoulli(probs=fnx.tensor([1.5]))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        Bernoulli(probs=fnx.tensor([0.5]), logits=fnx.tensor([0.0]))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        Categorical()
    with pytest.raises(ValueError, match="Expected parameter probs"):
        Categorical(probs=fnx.tensor([-0.5, 1.5]))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix"):
        MultivariateNormal(fnx.zeros(2), fnx.eye(2), scale_tril=fnx.eye(2))
    with pytest.raises(ValueError, match="Expected parameter covariance_matrix"):
        MultivariateNormal(fnx.zeros(2), fnx.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="Expected parameter concentration"):
        Gamma(fnx.tensor([0.0]), fnx.tensor([1.0]))
    with pytest.raises(ValueError, match="Expected parameter concentration"):
        Dirichlet(fnx.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match=r"Expected parameter low .* LessThan"):
        Uniform(fnx.tensor([1.0]), fnx.tensor([0.0]))
    # validate_args=False skips the checks
    Normal(fnx.tensor([0.0]), fnx.tensor([-1.0]), validate_args=False)


def test_set_default_validate_args():
    Distribution.set_default_validate_args(False)
    try:
        d = Normal(fnx.tensor([0.0]), fnx.tensor([-1.0]))       # not checked
        assert bool(fnx.isnan(d.log_prob(fnx.tensor([0.0]))).all())
        with pytest.raises(ValueError, match="Expected parameter scale"):
            Normal(fnx.tensor([0.0]), fnx.tensor([-1.0]), validate_args=True)
    finally:
        Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        Normal(fnx.tensor([0.0]), fnx.tensor([-1.0]))


def test_values_outside_support_raise_value_error():
    with pytest.raises(ValueError, match=r"Expected value argument .* to be within the "
                                         r"support \(GreaterThanEq"):
        Exponential(fnx.tensor([1.0])).log_prob(fnx.tensor([-1.0]))
    with pytest.raises(ValueError, match="within the support"):
        Bernoulli(probs=fnx.tensor([0.5])).log_prob(fnx.tensor([0.5]))
    with pytest.raises(ValueError, match="within the support"):
        Categorical(probs=fnx.tensor([0.5, 0.5])).log_prob(fnx.tensor(2))
    with pytest.raises(ValueError, match="within the support"):
        Uniform(0.0, 1.0).log_prob(fnx.tensor(1.5))
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        Normal(0.0, 1.0).log_prob(0.5)
    with pytest.raises(ValueError, match="must match event_shape"):
        MultivariateNormal(fnx.zeros(2), fnx.eye(2)).log_prob(fnx.zeros(3))
    with pytest.raises(ValueError, match="not broadcastable"):
        Normal(fnx.zeros(3), 1.0).log_prob(fnx.zeros(2))
    d = Uniform(0.0, 1.0, validate_args=False)
    assert d.log_prob(fnx.tensor(1.5)).item() == -math.inf


# ------------------------------------------------------------ shapes, expand, compile

def test_expand():
    d = Normal(t([0.0, 1.0]), t(1.0)).expand((3, 2))
    assert d.batch_shape == (3, 2) and d.sample().shape == (3, 2)
    close(d.log_prob(t([0.0, 0.0])), np.tile(stats.norm([0, 1], 1).logpdf([0, 0]), (3, 1)))
    c = Categorical(logits=t([0.0, 1.0, 2.0])).expand((4,))
    assert c.batch_shape == (4,) and c.sample((2,)).shape == (2, 4)
    m = MultivariateNormal(t([0.0, 0.0]), t(np.eye(2))).expand((5,))
    assert m.batch_shape == (5,) and m.log_prob(t([0.0, 0.0])).shape == (5,)
    i = Independent(Normal(t(np.zeros((2, 3))), 1.0), 1).expand((4, 2))
    assert i.batch_shape == (4, 2) and i.event_shape == (3,)


@pytest.mark.parametrize("validate", [False, True])
def test_compiled_log_prob_equals_eager(validate):
    # without validation the whole computation is one graph (fullgraph); with it, the
    # data-dependent checks split the graph, as under torch.compile
    def f(loc, scale, x, w, c):
        v = validate
        return (Normal(loc, scale, validate_args=v).log_prob(x).sum()
                + Categorical(logits=w, validate_args=v).log_prob(fnx.tensor([0, 2])).sum()
                + Gamma(c, scale, validate_args=v).log_prob(x.abs() + 0.1).sum()
                + MultivariateNormal(loc, scale_tril=scale.unsqueeze(-1) * fnx.eye(2, dtype=D),
                                     validate_args=v).log_prob(x)
                + Beta(c, scale, validate_args=v).log_prob(x.sigmoid()).sum()
                + kl_divergence(Normal(loc, scale, validate_args=v),
                                Normal(x, scale, validate_args=v)).sum())

    args = (t([0.1, -0.3]), t([1.2, 0.4]), t([0.5, 0.7]), t([[0.2, 0.1, -1.0]] * 2),
            t([2.0, 0.6]))
    eager = f(*args)
    compiled = fnx.compile(f, fullgraph=not validate)(*args)
    close(compiled, eager.item(), rtol=1e-10)
