"""``Gumbel(loc, scale)``."""
from __future__ import annotations

import math

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, eps, tiny

_EULER_GAMMA = 0.57721566490153286060


class Gumbel(TransformedDistribution):
    """The Gumbel (type-I extreme value) distribution: ``loc - scale log(-log U)`` for
    ``U`` uniform on ``(0, 1)``.

    >>> import fnx
    >>> d = fnx.distributions.Gumbel(0.0, 1.0)
    >>> round(d.log_prob(fnx.tensor(0.0)).item(), 4), round(d.mean.item(), 4)
    (-1.0, 0.5772)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        dtype = self.loc.dtype
        base = Uniform(self.loc.new_full(self.loc.shape, tiny(dtype)),
                       self.loc.new_full(self.loc.shape, 1 - eps(dtype)), validate_args=False)
        transforms = [ExpTransform().inv, AffineTransform(0, -1), ExpTransform().inv,
                      AffineTransform(self.loc, -self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.transforms = self.transforms[:-1] + [AffineTransform(new.loc, -new.scale)]
        return new

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * _EULER_GAMMA

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + _EULER_GAMMA)
