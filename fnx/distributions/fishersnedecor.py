"""``FisherSnedecor(df1, df2)``."""
from __future__ import annotations

from .. import api as fnx
from ..core.tensor import Size
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, tiny


class FisherSnedecor(Distribution):
    """The F distribution: ``(X1 / df1) / (X2 / df2)`` for independent chi-squared
    ``X1``, ``X2`` with ``df1``, ``df2`` degrees of freedom.

    >>> import fnx
    >>> d = fnx.distributions.FisherSnedecor(fnx.tensor([5.0]), fnx.tensor([5.0]))
    >>> d.mean
    tensor([1.6667])
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1, validate_args=False)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2, validate_args=False)
        super().__init__(self.df1.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        df2 = self.df2
        result = df2 / (df2 - 2)
        return fnx.where(df2 > 2, result, fnx.full_like(result, float("nan")))

    @property
    def mode(self):
        df1, df2 = self.df1, self.df2
        result = (df1 - 2) / df1 * df2 / (df2 + 2)
        return fnx.where(df1 > 2, result, fnx.full_like(result, float("nan")))

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        result = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return fnx.where(df2 > 4, result, fnx.full_like(result, float("nan")))

    def rsample(self, sample_shape=Size()):
        # Gamma(df/2, rate=df) is Chi2(df) / (2 df) scaled alike in both: the ratio is F
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape)
        t = tiny(x2.dtype)
        return (x1.clamp(min=t) / x2.clamp(min=t)).clamp(min=t)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = fnx.lgamma(ct1 + ct2) - fnx.lgamma(ct1) - fnx.lgamma(ct2)
        t2 = ct1 * ct3.log() + (ct1 - 1) * fnx.log(value)
        t3 = (ct1 + ct2) * fnx.log1p(ct3 * value)
        return t1 + t2 - t3
