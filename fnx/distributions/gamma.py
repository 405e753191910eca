"""``Gamma(concentration, rate)`` and the standard gamma variate Beta and Dirichlet share."""
from __future__ import annotations

from .. import api as fnx
from ..autograd.function import Function
from ..core.grad_mode import no_grad
from ..core.tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, stops_early, tiny

# Marsaglia-Tsang accepts a proposal with probability > 0.95 for every alpha >= 1, so after
# this many vectorized rounds an element is still unaccepted with probability < 1e-20.
# Under fnx.compile all rounds run (a data-dependent exit would split the graph); eagerly
# the loop stops once every element is accepted (~5 rounds for a million draws).
_ROUNDS = 16


def standard_gamma(alpha):
    """Gamma(alpha, 1) variates of ``alpha``'s shape from fnx's generator (no gradient).

    Marsaglia & Tsang (2000): for ``a >= 1`` propose ``d (1 + c z)^3`` with ``z`` normal,
    ``d = a - 1/3``, ``c = 1 / sqrt(9 d)``; for ``a < 1`` draw with ``a + 1`` and scale by
    ``U^(1/a)``.
    """
    with no_grad():
        small = alpha < 1
        a = fnx.where(small, alpha + 1, alpha)
        d = a - 1.0 / 3.0
        c = (9 * d).rsqrt()
        out = d.clone()  # only kept if all rounds reject (probability < 1e-20)
        done = fnx.zeros_like(alpha, dtype=fnx.bool)
        for _ in range(_ROUNDS):
            z = fnx.randn(alpha.shape, dtype=alpha.dtype, device=alpha.device)
            u = fnx.rand(alpha.shape, dtype=alpha.dtype, device=alpha.device)
            v = (1 + c * z) ** 3
            positive = v > 0
            safe_v = fnx.where(positive, v, fnx.ones_like(v))
            accept = positive & (fnx.log(u) < 0.5 * z * z + d - d * safe_v + d * fnx.log(safe_v))
            take = accept & ~done
            out = fnx.where(take, d * safe_v, out)
            done = done | accept
            if stops_early() and bool(done.all()):
                break
        u = fnx.rand(alpha.shape, dtype=alpha.dtype, device=alpha.device)
        boost = fnx.where(small, u.pow(1.0 / alpha), fnx.ones_like(u))
        return (out * boost).clamp(min=tiny(alpha.dtype))


def _standard_gamma_grad(alpha, x):
    """``dx/dalpha`` of a Gamma(alpha, 1) variate ``x`` held at its quantile (implicit
    reparameterization): ``-(dF/dalpha)(x; alpha) / f(x; alpha)``, with ``F`` the regularized
    lower incomplete gamma function. ``dF/dalpha`` is a central difference of ``igamma`` in
    float64 (step 1e-4 * alpha: truncation error ~1e-8 relative)."""
    a, xd = alpha.double(), x.double()
    h = 1e-4 * a
    dF = (fnx.igamma(a + h, xd) - fnx.igamma(a - h, xd)) / (2 * h)
    log_pdf = fnx.xlogy(a - 1, xd) - xd - fnx.lgamma(a)
    pdf = fnx.exp(log_pdf)
    grad = fnx.where(pdf > 0, -dF / pdf.clamp(min=1e-300), fnx.zeros_like(pdf))
    return grad.to(alpha.dtype)


class _StandardGammaRsample(Function):
    """A Gamma(alpha, 1) draw whose gradient wrt ``alpha`` is the implicit one."""

    @staticmethod
    def forward(ctx, alpha):
        x = standard_gamma(alpha)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        return grad * _standard_gamma_grad(alpha, x)


def standard_gamma_rsample(alpha):
    """``standard_gamma`` with the implicit reparameterization gradient wrt ``alpha``
    (Figurnov et al., 2018)."""
    return _StandardGammaRsample.apply(alpha)


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and inverse scale ``rate``.

    ``rsample``'s gradient wrt ``concentration`` is the implicit reparameterization one.

    >>> import fnx
    >>> d = fnx.distributions.Gamma(2.0, 4.0)
    >>> d.mean.item(), d.variance.item()
    (0.5, 0.125)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            g = standard_gamma(self.concentration.expand(shape).contiguous())
            return (g / self.rate.expand(shape)).clamp(min=tiny(self.rate.dtype))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        g = standard_gamma_rsample(self.concentration.expand(shape).contiguous())
        return (g / self.rate.expand(shape)).clamp(min=tiny(self.rate.dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, rate = self.concentration, self.rate
        return (fnx.xlogy(a, rate) + fnx.xlogy(a - 1, value) - rate * value - fnx.lgamma(a))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return fnx.igamma(self.concentration, self.rate * value)

    def entropy(self):
        a = self.concentration
        return a - fnx.log(self.rate) + fnx.lgamma(a) + (1.0 - a) * fnx.digamma(a)

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return fnx.lgamma(x + 1) + (x + 1) * fnx.log(-y.reciprocal())
