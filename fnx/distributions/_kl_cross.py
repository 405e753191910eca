"""KL divergences between different families, as PyTorch registers them.

Most are a cross-entropy: ``KL(p || q) = -H(p) - E_p[log q(X)]``, where ``E_p[log q]``
needs only a few moments of ``p`` (mean, variance, ``E[log X]``, a moment generating
function value). Pairs where ``p`` puts mass outside ``q``'s support are infinite.
"""
from __future__ import annotations

import math

from .. import api as fnx
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .continuous_bernoulli import ContinuousBernoulli
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .laplace import Laplace
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .uniform import Uniform

__all__ = ["register_cross_kls"]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _inf(t):
    return fnx.full_like(t, float("inf"))


def _mean_log(p):
    """``E_p[log X]`` for the positive families used below."""
    if isinstance(p, Beta):
        return fnx.digamma(p.concentration1) - fnx.digamma(p.concentration1
                                                           + p.concentration0)
    if isinstance(p, Pareto):
        return p.scale.log() + p.alpha.reciprocal()
    if isinstance(p, Uniform):  # on [low, high] with low >= 0
        return (fnx.xlogy(p.high, p.high) - fnx.xlogy(p.low, p.low)) / (p.high - p.low) - 1
    raise NotImplementedError(type(p).__name__)


def _cross_normal(p, q):
    # -E_p[log N(x; mu, sigma)] = log sigma + log(2 pi)/2 + (Var_p + (E_p - mu)^2) / 2 sigma^2
    return (-p.entropy() + q.scale.log() + _HALF_LOG_2PI
            + (p.variance + (p.mean - q.loc).pow(2)) / (2 * q.scale.pow(2)))


def _cross_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


def _cross_gamma(p, q):
    a, b = q.concentration, q.rate
    return (-p.entropy() - a * b.log() + fnx.lgamma(a) - (a - 1) * _mean_log(p)
            + b * p.mean)


def _cross_gumbel(p, q, mgf_at):
    # -E_p[log q] = log s + (E_p - loc) / s + exp(loc / s) E_p[exp(-X / s)]
    s = q.scale
    return (-p.entropy() + s.log() + (p.mean - q.loc) / s
            + fnx.exp(q.loc / s) * mgf_at(-1 / s))


def _cross_continuous_bernoulli(p, q):
    # log q(x) = x logit(lam) + log(1 - lam) + log C(lam)
    return (-p.entropy() - p.mean * q.logits - fnx.log1p(-q.probs)
            - q._cont_bern_log_norm())


def _outside(p_low, p_high, q_low, q_high):
    return (p_low < q_low) | (p_high > q_high)


def register_cross_kls(register_kl):
    """Register every pair below with ``register_kl``."""

    @register_kl(Beta, Normal)
    @register_kl(ContinuousBernoulli, Normal)
    @register_kl(Gamma, Normal)
    @register_kl(Gumbel, Normal)
    @register_kl(Laplace, Normal)
    @register_kl(Pareto, Normal)
    def _kl_to_normal(p, q):
        return _cross_normal(p, q)

    @register_kl(Beta, Exponential)
    @register_kl(ContinuousBernoulli, Exponential)
    @register_kl(Gamma, Exponential)
    @register_kl(Pareto, Exponential)
    def _kl_to_exponential(p, q):
        return _cross_exponential(p, q)

    @register_kl(Uniform, Exponential)
    def _kl_uniform_exponential(p, q):
        result = _cross_exponential(p, q)
        return fnx.where(p.low < 0, _inf(result), result)

    @register_kl(Beta, Gamma)
    @register_kl(Pareto, Gamma)
    def _kl_to_gamma(p, q):
        return _cross_gamma(p, q)

    @register_kl(Uniform, Gamma)
    def _kl_uniform_gamma(p, q):
        low = p.low.clamp(min=0)  # only used where low >= 0
        safe = Uniform(low, fnx.maximum(p.high, low + 1e-30), validate_args=False)
        result = _cross_gamma(safe, q)
        return fnx.where(p.low < 0, _inf(result), result)

    @register_kl(Exponential, Gumbel)
    def _kl_exponential_gumbel(p, q):
        return _cross_gumbel(p, q, lambda t: p.rate / (p.rate - t))

    @register_kl(Gamma, Gumbel)
    def _kl_gamma_gumbel(p, q):
        return _cross_gumbel(p, q, lambda t: (p.rate / (p.rate - t)).pow(p.concentration))

    @register_kl(Normal, Laplace)
    def _kl_normal_laplace(p, q):
        # E|X - loc| for X ~ N(m, s): s sqrt(2/pi) exp(-d^2 / 2 s^2) + d erf(d / (s sqrt 2))
        d = p.loc - q.loc
        s = p.scale
        mean_abs = (s * math.sqrt(2 / math.pi) * fnx.exp(-d.pow(2) / (2 * s.pow(2)))
                    + d * fnx.erf(d / (s * math.sqrt(2))))
        return -p.entropy() + (2 * q.scale).log() + mean_abs / q.scale

    @register_kl(Beta, ContinuousBernoulli)
    def _kl_beta_continuous_bernoulli(p, q):
        return _cross_continuous_bernoulli(p, q)

    @register_kl(Uniform, ContinuousBernoulli)
    def _kl_uniform_continuous_bernoulli(p, q):
        result = _cross_continuous_bernoulli(p, q)
        return fnx.where(_outside(p.low, p.high, 0, 1), _inf(result), result)

    @register_kl(Beta, Uniform)
    @register_kl(ContinuousBernoulli, Uniform)
    def _kl_unit_interval_uniform(p, q):
        result = -p.entropy() + (q.high - q.low).log()
        return fnx.where(_outside(0, 1, q.low, q.high), _inf(result), result)

    @register_kl(Uniform, Beta)
    def _kl_uniform_beta(p, q):
        a, b = q.concentration1, q.concentration0
        low, high = p.low.clamp(min=0, max=1), p.high.clamp(min=0, max=1)
        width = (high - low).clamp(min=1e-30)
        mean_log_x = (fnx.xlogy(high, high) - fnx.xlogy(low, low)) / width - 1
        mean_log_1mx = (fnx.xlogy(1 - low, 1 - low) - fnx.xlogy(1 - high, 1 - high)) / width - 1
        lbeta = fnx.lgamma(a) + fnx.lgamma(b) - fnx.lgamma(a + b)
        result = (-p.entropy() - (a - 1) * mean_log_x - (b - 1) * mean_log_1mx + lbeta)
        return fnx.where(_outside(p.low, p.high, 0, 1), _inf(result), result)

    @register_kl(Uniform, Pareto)
    def _kl_uniform_pareto(p, q):
        low = fnx.maximum(p.low, q.scale)  # only used where p.low >= q.scale
        safe = Uniform(low, fnx.maximum(p.high, low + 1e-30), validate_args=False)
        result = (-p.entropy() - q.alpha.log() - q.alpha * q.scale.log()
                  + (q.alpha + 1) * _mean_log(safe))
        return fnx.where(p.low < q.scale, _inf(result), result)

    # p has mass where q has none
    @register_kl(Bernoulli, Poisson)
    def _kl_bernoulli_poisson(p, q):
        return _inf(p.probs + q.rate)

    @register_kl(Poisson, Bernoulli)
    @register_kl(Poisson, Binomial)
    def _kl_poisson_bounded(p, q):
        return _inf(p.rate + q.probs)

    bounded_qs = (Beta, ContinuousBernoulli, Pareto, Uniform)
    for p_type in (Exponential, Gamma, Gumbel, Laplace, Normal):
        for q_type in bounded_qs:
            register_kl(p_type, q_type)(_kl_infinite)
    for p_type in (Gumbel, Laplace, Normal):
        for q_type in (Exponential, Gamma):
            register_kl(p_type, q_type)(_kl_infinite)
    for p_type, q_type in ((Beta, Pareto), (ContinuousBernoulli, Pareto), (Pareto, Beta),
                           (Pareto, ContinuousBernoulli), (Pareto, Uniform)):
        register_kl(p_type, q_type)(_kl_infinite)


def _first_param(d):
    for name in d.arg_constraints:
        value = getattr(d, name, None)
        if isinstance(value, fnx.Tensor):
            return value
    return fnx.zeros(d.batch_shape)


def _kl_infinite(p, q):
    shape = fnx.broadcast_shapes(tuple(p.batch_shape), tuple(q.batch_shape))
    ref = _first_param(p)
    return fnx.full(shape, float("inf"), dtype=ref.dtype, device=ref.device)
