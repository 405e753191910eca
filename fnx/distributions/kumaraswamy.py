"""``Kumaraswamy(concentration1, concentration0)``."""
from __future__ import annotations

from .. import api as fnx
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all

_EULER_GAMMA = 0.57721566490153286060


def _moments(a, b, n):
    # E[X^n] = b B(1 + n/a, b)
    arg1 = 1 + n / a
    return fnx.exp(b.log() + fnx.lgamma(arg1) + fnx.lgamma(b) - fnx.lgamma(arg1 + b))


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on ``(0, 1)``, density ``a b x^(a-1) (1 - x^a)^(b-1)``
    (``a = concentration1``, ``b = concentration0``): ``(1 - U^(1/b))^(1/a)``.

    >>> import fnx
    >>> d = fnx.distributions.Kumaraswamy(fnx.tensor([1.0]), fnx.tensor([1.0]))
    >>> d.mean, d.log_prob(fnx.tensor([0.3]))
    (tensor([0.5000]), tensor([0.]))
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(fnx.zeros_like(self.concentration0),
                       fnx.ones_like(self.concentration0), validate_args=validate_args)
        super().__init__(base, self._transforms(), validate_args=validate_args)

    def _transforms(self):
        return [PowerTransform(self.concentration0.reciprocal()), AffineTransform(1.0, -1.0),
                PowerTransform(self.concentration1.reciprocal())]

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        new.transforms = new._transforms()
        return new

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # ((a - 1) / (a b - 1))^(1/a), defined for a >= 1, b >= 1 (not both 1)
        a, b = self.concentration1, self.concentration0
        mode = ((a - 1) / (a * b - 1)).clamp(min=0) ** a.reciprocal()
        return fnx.where((a < 1) | (b < 1), fnx.full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        return _moments(a, b, 2) - _moments(a, b, 1).pow(2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic_b = fnx.digamma(b + 1) + _EULER_GAMMA
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic_b - a.log() - b.log()
