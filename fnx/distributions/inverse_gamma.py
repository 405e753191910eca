"""``InverseGamma(concentration, rate)``."""
from __future__ import annotations

from .. import api as fnx
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform


class InverseGamma(TransformedDistribution):
    """``1 / X`` for ``X ~ Gamma(concentration, rate)``.

    >>> import fnx
    >>> d = fnx.distributions.InverseGamma(fnx.tensor([3.0]), fnx.tensor([2.0]))
    >>> d.mean, d.mode
    (tensor([1.]), tensor([0.5000]))
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base.rate.new_ones(())
        super().__init__(base, PowerTransform(neg_one), validate_args=validate_args)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        a = self.concentration
        result = self.rate / (a - 1)
        return fnx.where(a > 1, result, fnx.full_like(result, float("inf")))

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        a = self.concentration
        result = self.rate.pow(2) / ((a - 1).pow(2) * (a - 2))
        return fnx.where(a > 2, result, fnx.full_like(result, float("inf")))

    def entropy(self):
        a = self.concentration
        return a + self.rate.log() + fnx.lgamma(a) - (1 + a) * fnx.digamma(a)
