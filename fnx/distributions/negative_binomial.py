"""``NegativeBinomial(total_count, probs=None, logits=None)``."""
from __future__ import annotations

from .. import api as fnx
from ..core.grad_mode import no_grad
from ..core.tensor import Size
from ..nn.functional import logsigmoid
from . import constraints
from .distribution import Distribution
from .gamma import standard_gamma
from .utils import BinaryParams


class NegativeBinomial(BinaryParams, Distribution):
    """The number of successes before ``total_count`` failures of Bernoulli(``probs``)
    trials (``probs`` is the success probability; ``total_count`` may be real).

    >>> import fnx
    >>> d = fnx.distributions.NegativeBinomial(2.0, probs=fnx.tensor([0.5]))
    >>> d.mean, d.log_prob(fnx.tensor([0.0])).exp()
    (tensor([2.]), tensor([0.2500]))
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        super().__init__(self._given(probs, logits, total_count),
                         validate_args=validate_args)

    @property
    def mean(self):
        return self.total_count * fnx.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / fnx.sigmoid(-self.logits)

    def sample(self, sample_shape=Size()):
        # a Poisson whose rate is Gamma(total_count, rate=exp(-logits)) distributed
        shape = self._extended_shape(sample_shape)
        with no_grad():
            rate = standard_gamma(self.total_count.expand(shape).contiguous()) \
                * fnx.exp(self.logits).expand(shape)
            return fnx.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_unnormalized = n * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = -fnx.lgamma(n + value) + fnx.lgamma(1.0 + value) + fnx.lgamma(n)
        # total_count = value = 0 is the point mass at 0: its normalization is 1
        log_normalization = fnx.where(n + value == 0, fnx.zeros_like(log_normalization),
                                      log_normalization)
        return log_unnormalized - log_normalization
