"""``HalfCauchy(scale)``."""
from __future__ import annotations

import math

from .. import api as fnx
from . import constraints
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform


class HalfCauchy(TransformedDistribution):
    """``|X|`` for ``X ~ Cauchy(0, scale)``.

    >>> import fnx
    >>> d = fnx.distributions.HalfCauchy(1.0)
    >>> round(d.log_prob(fnx.tensor(0.0)).item(), 4), round(d.cdf(fnx.tensor(1.0)).item(), 4)
    (-0.4516, 0.5)
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base = Cauchy(0, scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return fnx.full_like(self.scale, float("inf"))

    @property
    def mode(self):
        return fnx.zeros_like(self.scale)

    @property
    def variance(self):
        return fnx.full_like(self.scale, float("inf"))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return fnx.where(value >= 0, log_prob, fnx.full_like(log_prob, -float("inf")))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
