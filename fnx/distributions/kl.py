"""``kl_divergence(p, q)`` and ``register_kl``, as ``torch.distributions.kl``."""
from __future__ import annotations

import math

from .. import api as fnx
from .. import linalg
from ..autograd.engine import grad
from ..core.grad_mode import enable_grad
from ..nn.functional import softplus
from ._kl_cross import register_cross_kls
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .log_normal import LogNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .multivariate_normal import MultivariateNormal, batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import broadcast_shape, sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as the KL divergence of ``type_p`` from ``type_q``.

    >>> import fnx
    >>> from fnx.distributions import Normal, kl_divergence, register_kl
    >>> class MyNormal(Normal):
    ...     pass
    >>> @register_kl(MyNormal, MyNormal)
    ... def _kl_mine(p, q):
    ...     return fnx.zeros(p.batch_shape)
    >>> kl_divergence(MyNormal(0.0, 1.0), MyNormal(1.0, 1.0)).item()
    0.0
    """
    if not (isinstance(type_p, type) and isinstance(type_q, type)):
        raise TypeError(f"Expected type_p and type_q to be Distribution subclasses but got "
                        f"{type_p} and {type_q}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        return fn
    return decorator


def _dispatch_kl(type_p, type_q):
    # the most specific registered pair: smallest (mro distance of p, of q)
    best, best_key = None, None
    for (sp, sq), fn in _KL_REGISTRY.items():
        if issubclass(type_p, sp) and issubclass(type_q, sq):
            key = (type_p.__mro__.index(sp), type_q.__mro__.index(sq))
            if best_key is None or key < best_key:
                best, best_key = fn, key
    return best


def kl_divergence(p, q):
    """``KL(p || q) = E_p[log p(x) - log q(x)]``, batched, from the registered closed forms.

    >>> import fnx
    >>> from fnx.distributions import Normal, kl_divergence
    >>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0)).item()
    0.5
    """
    fn = _dispatch_kl(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{type(p).__name__} and q type {type(q).__name__}")
    return fn(p, q)


def _infinite_like(t):
    return fnx.full_like(t, float("inf"))


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    # log p = -softplus(-logit), log(1 - p) = -softplus(logit)
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = fnx.where((q.probs == 0).expand_as(t), _infinite_like(t), t)
    t = fnx.where((p.probs == 0).expand_as(t), fnx.zeros_like(t), t)
    return t.sum(-1)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low > p.low) | (q.high < p.high)
    return fnx.where(outside, _infinite_like(result), result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return (-scale_ratio.log() + loc_abs_diff / q.scale
            + scale_ratio * fnx.exp(-loc_abs_diff / p.scale) - 1)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = fnx.lgamma(q.concentration) - fnx.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * fnx.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    a1, b1, a2, b2 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    s1, s2 = a1 + b1, a2 + b2
    t1 = fnx.lgamma(a2) + fnx.lgamma(b2) + fnx.lgamma(s1)
    t2 = fnx.lgamma(a1) + fnx.lgamma(b1) + fnx.lgamma(s2)
    t3 = (a1 - a2) * fnx.digamma(a1)
    t4 = (b1 - b2) * fnx.digamma(b1)
    t5 = (s2 - s1) * fnx.digamma(s1)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    cp, cq = p.concentration, q.concentration
    sp, sq = cp.sum(-1), cq.sum(-1)
    t1 = fnx.lgamma(sp) - fnx.lgamma(sq)
    t2 = (fnx.lgamma(cp) - fnx.lgamma(cq)).sum(-1)
    t3 = (cp - cq) * (fnx.digamma(cp) - fnx.digamma(sp).unsqueeze(-1))
    return t1 - t2 + t3.sum(-1)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * fnx.log(ratio)
    return (t1 + ratio + fnx.lgamma(q.concentration) + q.concentration * 0.5772156649015329
            - (1 + 0.5772156649015329))


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different "
                         "event shapes cannot be computed")
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = q._half_log_det() - p._half_log_det()
    n = p.event_shape[0]
    shape = broadcast_shape(tuple(Lp.shape[:-2]), tuple(Lq.shape[:-2]))
    # tr(Σq^-1 Σp) = ||Lq^-1 Lp||_F^2
    term2 = linalg.solve_triangular(Lq.expand(shape + (n, n)), Lp.expand(shape + (n, n)),
                                    upper=False).pow(2).flatten(-2).sum(-1)
    term3 = batch_mahalanobis(Lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


_EULER_GAMMA = 0.57721566490153286060


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    # with different total counts the supports differ: not implemented, as in PyTorch
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > "
                                  "p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + fnx.log1p(-p.probs)
                          - fnx.log1p(-q.probs))
    return fnx.where(p.total_count > q.total_count, _infinite_like(kl), kl)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - fnx.log1p(-q.probs) / p.probs - q.logits


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * _EULER_GAMMA
    t3 = fnx.exp(ct2 + fnx.lgamma(1 + ct1) - ct3)
    return t1 + t2 + t3 - (1 + _EULER_GAMMA)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p, q):
    # KL is invariant under the shared bijection exp
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    # Chyzak & Nielsen (2019)
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = fnx.exp(-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio)
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common_term = q.scale / (p.high - p.low)
    high_loc_diff = (p.high - q.loc) / q.scale
    low_loc_diff = (p.low - q.loc) / q.scale
    t1 = common_term.log() + 0.5 * (high_loc_diff + low_loc_diff)
    t2 = common_term * (fnx.exp(-high_loc_diff) - fnx.exp(-low_loc_diff))
    return t1 - t2


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * fnx.log(rate_sqr * var_normal * 2 * math.pi)
    t2 = rate_sqr.reciprocal()
    t3 = q.loc / p.rate
    t4 = q.loc.pow(2) * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    # p puts mass below q's support
    return fnx.where(p.scale < q.scale, _infinite_like(result), result)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + fnx.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - fnx.log1p(-q.probs)
    return t1 + t2 + t3


def _as_mvn(d):
    # a dense MultivariateNormal with the same law (for KLs with a low-rank side)
    if isinstance(d, LowRankMultivariateNormal):
        w = d._unbroadcasted_cov_factor
        cov = w @ w.mT + fnx.diag_embed(d._unbroadcasted_cov_diag)
        return MultivariateNormal(d.loc, scale_tril=linalg.cholesky(cov), validate_args=False)
    return d


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
@register_kl(LowRankMultivariateNormal, MultivariateNormal)
@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two (Low Rank) Multivariate Normals with "
                         "different event shapes cannot be computed")
    return _kl_mvn_mvn(_as_mvn(p), _as_mvn(q))


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    # KL is invariant under a shared bijection
    if p.transforms != q.transforms:
        raise NotImplementedError("KL between TransformedDistributions with different "
                                  "transforms is not implemented")
    if p.event_shape != q.event_shape:
        raise NotImplementedError("KL between TransformedDistributions with different "
                                  "event shapes is not implemented")
    extra_event_dim = len(p.event_shape) - len(p.base_dist.event_shape)
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra_event_dim)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    # the Bregman divergence of the log-normalizer between the natural parameters
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    with enable_grad():
        p_nparams = [nparam.detach().requires_grad_() for nparam in p._natural_params]
        lg_normal = p._log_normalizer(*p_nparams)
        gradients = grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q._natural_params) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q._natural_params, gradients):
        result = result - sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different "
                                  "reinterpreted_batch_ndims is not implemented")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


register_cross_kls(register_kl)
