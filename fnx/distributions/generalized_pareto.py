"""``GeneralizedPareto(loc, scale, concentration)``."""
from __future__ import annotations

from .. import api as fnx
from ..core.tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution (peaks over a threshold ``loc``): ``cdf(x) =
    1 - (1 + c z)^(-1/c)``, ``z = (x - loc) / scale``; ``c = 0`` is the exponential.

    >>> import fnx
    >>> d = fnx.distributions.GeneralizedPareto(0.0, 1.0, 0.0)
    >>> round(d.log_prob(fnx.tensor(1.0)).item(), 4), d.mean.item()
    (-1.0, 1.0)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        c = self.concentration
        upper = fnx.where(c < 0, self.loc - self.scale / c,
                          fnx.full_like(self.loc, float("inf")))
        return constraints.interval(self.loc, upper)

    def _safe_c(self):
        c = self.concentration
        zero = c == 0
        return zero, fnx.where(zero, fnx.ones_like(c), c)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = fnx.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._safe_c()
        log_scale = self.scale.log()
        general = -log_scale - (1 + 1 / c) * fnx.log1p(c * z)
        return fnx.where(zero, -log_scale - z, general)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._safe_c()
        log_survival = fnx.where(zero, -z, -fnx.log1p(c * z) / c)
        return -fnx.expm1(log_survival)

    def icdf(self, value):
        zero, c = self._safe_c()
        log_survival = fnx.log1p(-value)
        z = fnx.where(zero, -log_survival, fnx.expm1(-c * log_survival) / c)
        return self.loc + self.scale * z

    @property
    def mean(self):
        c = self.concentration
        result = self.loc + self.scale / (1 - c)
        return fnx.where(c < 1, result, fnx.full_like(result, float("nan")))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        c = self.concentration
        result = self.scale.pow(2) / ((1 - c).pow(2) * (1 - 2 * c))
        return fnx.where(c < 0.5, result, fnx.full_like(result, float("nan")))

    def entropy(self):
        return self.scale.log() + self.concentration + 1
