"""``Beta(concentration1, concentration0)``."""
from __future__ import annotations

from .. import api as fnx
from ..core.grad_mode import no_grad
from ..core.tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import standard_gamma, standard_gamma_rsample
from .utils import broadcast_all, eps


class Beta(ExponentialFamily):
    """The beta distribution on ``[0, 1]``: density ``x^(a-1) (1-x)^(b-1) / B(a, b)`` with
    ``a = concentration1``, ``b = concentration0``. ``rsample`` is ``X / (X + Y)`` of two
    gamma variates with implicit reparameterization gradients.

    >>> import fnx
    >>> d = fnx.distributions.Beta(2.0, 2.0)
    >>> d.mean.item(), round(d.log_prob(fnx.tensor(0.5)).exp().item(), 4)
    (0.5, 1.5)
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        super().__init__(self.concentration1.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        m1, m0 = (a - 1).clamp(min=0.0), (b - 1).clamp(min=0.0)
        # both below 1: the density peaks at 0 and at 1; PyTorch reports 1
        return fnx.where((a < 1) & (b < 1), fnx.ones_like(m1), m1 / (m1 + m0))

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            x = standard_gamma(self.concentration1.expand(shape).contiguous())
            y = standard_gamma(self.concentration0.expand(shape).contiguous())
            e = eps(x.dtype)
            return (x / (x + y)).clamp(min=e, max=1 - e)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        x = standard_gamma_rsample(self.concentration1.expand(shape).contiguous())
        y = standard_gamma_rsample(self.concentration0.expand(shape).contiguous())
        e = eps(x.dtype)
        return (x / (x + y)).clamp(min=e, max=1 - e)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return (fnx.xlogy(a - 1, value) + fnx.xlogy(b - 1, 1 - value)
                - (fnx.lgamma(a) + fnx.lgamma(b) - fnx.lgamma(a + b)))

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return (fnx.lgamma(a) + fnx.lgamma(b) - fnx.lgamma(total)
                - (a - 1) * fnx.digamma(a) - (b - 1) * fnx.digamma(b)
                + (total - 2) * fnx.digamma(total))

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return fnx.lgamma(x) + fnx.lgamma(y) - fnx.lgamma(x + y)
