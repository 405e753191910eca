"""``Normal(loc, scale)``."""
from __future__ import annotations

import math

from .. import api as fnx
from ..core.tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Normal(ExponentialFamily):
    """The normal (Gaussian) distribution with mean ``loc`` and standard deviation ``scale``.

    >>> import fnx
    >>> d = fnx.distributions.Normal(0.0, 1.0)
    >>> round(d.log_prob(fnx.tensor(0.0)).item(), 4)
    -0.9189
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = fnx.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log()
                - math.log(math.sqrt(2 * math.pi)))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + fnx.erf((value - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value):
        return self.loc + self.scale * fnx.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * fnx.log(-math.pi / y)
