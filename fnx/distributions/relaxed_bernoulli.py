"""``RelaxedBernoulli`` and ``LogitRelaxedBernoulli`` (binary Concrete / Gumbel-softmax)."""
from __future__ import annotations

from .. import api as fnx
from ..core.tensor import Size
from ..nn.functional import softplus
from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import BinaryParams, broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(BinaryParams, Distribution):
    """The logit of a ``RelaxedBernoulli`` variate: ``(logits + L) / temperature`` with
    ``L`` standard logistic (Maddison et al., 2017).

    >>> import fnx
    >>> d = fnx.distributions.LogitRelaxedBernoulli(fnx.tensor(0.5), logits=fnx.tensor(0.0))
    >>> round(d.log_prob(fnx.tensor(0.0)).item(), 4)
    -2.0794
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        super().__init__(self._given(probs, logits), validate_args=validate_args)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(fnx.rand(shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - fnx.log1p(-u) + probs.log() - fnx.log1p(-probs)) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return fnx.log(fnx.as_tensor(self.temperature, dtype=diff.dtype)) + diff \
            - 2 * softplus(diff)


class RelaxedBernoulli(TransformedDistribution):
    """A continuous relaxation of ``Bernoulli`` on ``(0, 1)``: ``sigmoid`` of a
    ``LogitRelaxedBernoulli``; low ``temperature`` pushes samples towards 0 and 1.

    >>> import fnx
    >>> d = fnx.distributions.RelaxedBernoulli(fnx.tensor(0.5), probs=fnx.tensor([0.3]))
    >>> d.rsample((4,)).shape
    fnx.Size([4, 1])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
