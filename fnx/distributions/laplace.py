"""``Laplace(loc, scale)``."""
from __future__ import annotations

from .. import api as fnx
from ..core.tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, eps


class Laplace(Distribution):
    """The Laplace distribution: density ``exp(-|x - loc| / scale) / (2 * scale)``.

    >>> import fnx
    >>> d = fnx.distributions.Laplace(0.0, 1.0)
    >>> d.cdf(fnx.tensor(0.0)).item(), d.variance.item()
    (0.5, 2.0)
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
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return 2 ** 0.5 * self.scale

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        e = eps(self.loc.dtype)
        # u uniform on (-1, 1): the open lower end keeps log1p(-|u|) finite
        u = fnx.rand(shape, dtype=self.loc.dtype, device=self.loc.device) * (2 - e) + (e - 1)
        return self.loc - self.scale * u.sign() * fnx.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -fnx.log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * fnx.expm1(-z.abs() / self.scale)

    def icdf(self, value):
        t = value - 0.5
        return self.loc - self.scale * t.sign() * fnx.log1p(-2 * t.abs())

    def entropy(self):
        return 1 + fnx.log(2 * self.scale)
