"""``Bernoulli(probs=None, logits=None)``."""
from __future__ import annotations

from .. import api as fnx
from ..core.grad_mode import no_grad
from ..core.tensor import Size
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .exp_family import ExponentialFamily
from .utils import BinaryParams, broadcast_all


class Bernoulli(BinaryParams, ExponentialFamily):
    """A 0/1 variable that is 1 with probability ``probs`` (or ``sigmoid(logits)``).

    >>> import fnx
    >>> d = fnx.distributions.Bernoulli(probs=fnx.tensor([0.25]))
    >>> d.log_prob(fnx.tensor([1.0])).exp()
    tensor([0.2500])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        super().__init__(self._given(probs, logits), validate_args=validate_args)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return fnx.where(self.probs == 0.5, fnx.full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return fnx.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    @property
    def _natural_params(self):
        return (fnx.log(self.probs / (1 - self.probs)),)

    def _log_normalizer(self, x):
        return fnx.log1p(fnx.exp(x))

    def enumerate_support(self, expand=True):
        values = fnx.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
