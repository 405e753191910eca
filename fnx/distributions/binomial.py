"""``Binomial(total_count=1, probs=None, logits=None)``."""
from __future__ import annotations

from .. import api as fnx
from ..core.grad_mode import no_grad
from ..core.tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import BinaryParams


def clamp_by_zero(x):
    # max(x, 0) whose gradient at 0 is 1/2, as for |x|
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(BinaryParams, Distribution):
    """The number of successes in ``total_count`` Bernoulli(``probs``) trials.

    >>> import fnx
    >>> d = fnx.distributions.Binomial(4, probs=fnx.tensor([0.5]))
    >>> d.log_prob(fnx.tensor([2.0])).exp(), d.mean
    (tensor([0.3750]), tensor([2.]))
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        super().__init__(self._given(probs, logits, total_count),
                         validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return fnx.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_factorial_n = fnx.lgamma(n + 1)
        log_factorial_k = fnx.lgamma(value + 1)
        log_factorial_nmk = fnx.lgamma(n - value + 1)
        # n log(1 + e^logits), kept finite for large |logits|
        normalize = n * clamp_by_zero(logits) + n * fnx.log1p(fnx.exp(-logits.abs()))
        return (value * logits - normalize + log_factorial_n - log_factorial_k
                - log_factorial_nmk)

    def entropy(self):
        n = int(self.total_count.max())
        if not bool((self.total_count == n).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(fnx.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        n = int(self.total_count.max())
        if not bool((self.total_count == n).all()):
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`.")
        values = fnx.arange(1 + n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
