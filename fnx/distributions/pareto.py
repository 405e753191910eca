"""``Pareto(scale, alpha)``."""
from __future__ import annotations

from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .utils import broadcast_all


class Pareto(TransformedDistribution):
    """The Pareto (type I) distribution: ``scale * exp(E)`` with ``E ~ Exponential(alpha)``.

    >>> import fnx
    >>> d = fnx.distributions.Pareto(fnx.tensor([1.0]), fnx.tensor([3.0]))
    >>> d.mean, d.cdf(fnx.tensor([2.0]))
    (tensor([1.5000]), tensor([0.8750]))
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        super().__init__(base, [ExpTransform(), AffineTransform(0, self.scale)],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        new.transforms = [ExpTransform(), AffineTransform(0, new.scale)]
        return new

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)  # infinite for alpha <= 1
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)  # infinite for alpha <= 2
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
