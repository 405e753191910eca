"""``ContinuousBernoulli(probs=None, logits=None, lims=(0.499, 0.501))``."""
from __future__ import annotations

import math

from .. import api as fnx
from ..core.tensor import Size
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .exp_family import ExponentialFamily
from .utils import BinaryParams, broadcast_all, clamp_probs, lazy_property, logits_to_probs


class ContinuousBernoulli(BinaryParams, ExponentialFamily):
    """The continuous Bernoulli on ``[0, 1]`` (Loaiza-Ganem & Cunningham, 2019): density
    ``C(p) p^x (1 - p)^(1 - x)``. Near ``p = 1/2`` (inside ``lims``) the normalizer, mean
    and variance switch to Taylor expansions, where the closed forms lose precision.

    >>> import fnx
    >>> d = fnx.distributions.ContinuousBernoulli(probs=fnx.tensor([0.5]))
    >>> d.mean, d.log_prob(fnx.tensor([0.2])).exp()
    (tensor([0.5000]), tensor([1.]))
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        self._lims = lims
        super().__init__(self._given(probs, logits), validate_args=validate_args)
        if probs is not None:
            # clamp after validation: 0 and 1 are valid parameters, but log(0) is not
            self.probs = clamp_probs(self.probs)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs >= self._lims[1])

    def _cut_probs(self):
        return fnx.where(self._outside_unstable_region(), self.probs,
                         fnx.full_like(self.probs, self._lims[0]))

    def _cont_bern_log_norm(self):
        # log C(p) = log(|2 atanh(1 - 2p)| / |1 - 2p|); a Taylor series in (p - 1/2)^2 near 1/2
        cut = self._cut_probs()
        below = fnx.where(cut <= 0.5, cut, fnx.zeros_like(cut))
        above = fnx.where(cut >= 0.5, cut, fnx.ones_like(cut))
        log_norm = (fnx.log(fnx.abs(fnx.log1p(-cut) - fnx.log(cut)))
                    - fnx.where(cut <= 0.5, fnx.log1p(-2.0 * below),
                                fnx.log(2.0 * above - 1.0)))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return fnx.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (fnx.log1p(-cut) - fnx.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return fnx.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut = self._cut_probs()
        vars_ = (cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2)
                 + 1.0 / (fnx.log1p(-cut) - fnx.log(cut)).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return fnx.where(self._outside_unstable_region(), vars_, taylor)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = fnx.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = fnx.where(self._outside_unstable_region(), cdfs, value)
        return fnx.where(value <= 0.0, fnx.zeros_like(value),
                         fnx.where(value >= 1.0, fnx.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        return fnx.where(self._outside_unstable_region(),
                         (fnx.log1p(-cut + value * (2.0 * cut - 1.0)) - fnx.log1p(-cut))
                         / (fnx.log(cut) - fnx.log1p(-cut)),
                         value)

    def entropy(self):
        log_probs0 = fnx.log1p(-self.probs)
        log_probs1 = fnx.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        # log((e^x - 1) / x), a Taylor series near x = 0 (p near 1/2)
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = fnx.where(outside, x, fnx.full_like(x, self._lims[0] - 0.5))
        log_norm = fnx.log(fnx.abs(fnx.expm1(cut))) - fnx.log(fnx.abs(cut))
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return fnx.where(outside, log_norm, taylor)
