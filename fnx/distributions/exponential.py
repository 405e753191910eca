"""``Exponential(rate)``."""
from __future__ import annotations

from .. import api as fnx
from ..core.tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Exponential(ExponentialFamily):
    """The exponential distribution with density ``rate * exp(-rate * x)`` on ``x >= 0``.

    >>> import fnx
    >>> d = fnx.distributions.Exponential(2.0)
    >>> d.mean.item(), d.variance.item()
    (0.5, 0.25)
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return fnx.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=Size()):
        # exponential_ draws PyTorch's CPU stream (the inverse cdf of a double uniform)
        shape = self._extended_shape(sample_shape)
        return self.rate.new_empty(shape).exponential_() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - fnx.exp(-self.rate * value)

    def icdf(self, value):
        return -fnx.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - fnx.log(self.rate)

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -fnx.log(-x)
