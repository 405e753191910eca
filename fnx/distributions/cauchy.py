"""``Cauchy(loc, scale)``."""
from __future__ import annotations

import math

from .. import api as fnx
from ..core.tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution with median ``loc`` and half width ``scale``.

    >>> import fnx
    >>> d = fnx.distributions.Cauchy(0.0, 1.0)
    >>> d.cdf(fnx.tensor(1.0)).item(), d.variance.item()
    (0.75, inf)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @property
    def mean(self):
        return fnx.full(self._extended_shape(), float("nan"), dtype=self.loc.dtype,
                        device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return fnx.full(self._extended_shape(), float("inf"), dtype=self.loc.dtype,
                        device=self.loc.device)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        # drawn in float64 and rounded, as PyTorch's CPU sampler does for every dtype, so
        # fnx.manual_seed reproduces its numbers for float32 too
        eps = fnx.empty(shape, dtype=fnx.float64, device=self.loc.device).cauchy_()
        eps = eps.to(self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - fnx.log1p(((value - self.loc) / self.scale) ** 2))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return fnx.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return fnx.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
