"""``StudentT(df, loc=0.0, scale=1.0)``."""
from __future__ import annotations

import math

from .. import api as fnx
from ..core.tensor import Size
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_all


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, shifted by ``loc`` and
    scaled by ``scale``.

    >>> import fnx
    >>> d = fnx.distributions.StudentT(fnx.tensor([3.0]))
    >>> d.variance, round(d.log_prob(fnx.tensor([0.0])).item(), 4)
    (tensor([3.]), -1.0009)
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df, validate_args=False)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        return fnx.where(self.df > 1, self.loc, fnx.full_like(self.loc, float("nan")))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        var = self.scale.pow(2) * df / (df - 2).clamp(min=1e-300 if df.dtype == fnx.float64
                                                      else 1e-30)
        var = fnx.where(df <= 2, fnx.full_like(var, float("inf")), var)
        return fnx.where(df <= 1, fnx.full_like(var, float("nan")), var)

    def rsample(self, sample_shape=Size()):
        # Z / sqrt(V / df) with Z standard normal and V ~ Chi2(df)
        shape = self._extended_shape(sample_shape)
        z = fnx.randn(shape, dtype=self.df.dtype, device=self.df.device)
        v = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * z * fnx.rsqrt(v / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi)
                    + fnx.lgamma(0.5 * df) - fnx.lgamma(0.5 * (df + 1.0)))
        return -0.5 * (df + 1.0) * fnx.log1p(y.pow(2) / df) - log_norm

    def entropy(self):
        df = self.df
        lbeta = fnx.lgamma(0.5 * df) + math.lgamma(0.5) - fnx.lgamma(0.5 * (df + 1))
        return (self.scale.log()
                + 0.5 * (df + 1) * (fnx.digamma(0.5 * (df + 1)) - fnx.digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)
