"""``Weibull(scale, concentration)``."""
from __future__ import annotations

from .. import api as fnx
from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all

_EULER_GAMMA = 0.57721566490153286060


class Weibull(TransformedDistribution):
    """The two-parameter Weibull distribution: ``scale * E^(1/concentration)`` with
    ``E ~ Exponential(1)``.

    >>> import fnx
    >>> d = fnx.distributions.Weibull(fnx.tensor([2.0]), fnx.tensor([1.0]))
    >>> d.mean, d.variance
    (tensor([2.]), tensor([4.]))
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(fnx.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(self.concentration_reciprocal),
                      AffineTransform(0, self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        new.transforms = [PowerTransform(new.concentration_reciprocal),
                          AffineTransform(0, new.scale)]
        return new

    @property
    def mean(self):
        return self.scale * fnx.exp(fnx.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k).clamp(min=0) ** self.concentration_reciprocal

    @property
    def variance(self):
        k_inv = self.concentration_reciprocal
        return self.scale.pow(2) * (fnx.exp(fnx.lgamma(1 + 2 * k_inv))
                                    - fnx.exp(2 * fnx.lgamma(1 + k_inv)))

    def entropy(self):
        return (_EULER_GAMMA * (1 - self.concentration_reciprocal)
                + fnx.log(self.scale * self.concentration_reciprocal) + 1)
