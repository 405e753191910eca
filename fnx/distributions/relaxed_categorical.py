"""``RelaxedOneHotCategorical`` and ``ExpRelaxedCategorical`` (Concrete / Gumbel-softmax)."""
from __future__ import annotations

import math

from .. import api as fnx
from ..core.tensor import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a ``RelaxedOneHotCategorical`` variate: ``log_softmax((logits + G) /
    temperature)`` with ``G`` standard Gumbel noise (Maddison et al., 2017).

    >>> import fnx
    >>> d = fnx.distributions.ExpRelaxedCategorical(fnx.tensor(1.0), logits=fnx.zeros(3))
    >>> round(d.rsample().exp().sum().item(), 5)      # a point of the simplex, in logs
    1.0
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args=False)
        self.temperature = temperature
        param = self._categorical.param_shape
        super().__init__(param[:-1], param[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = _instance if _instance is not None else object.__new__(type(self))
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        logits = self.logits
        u = clamp_probs(fnx.rand(shape, dtype=logits.dtype, device=logits.device))
        gumbels = -((-(u.log())).log())
        scores = (logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self._categorical._num_events
        temperature = fnx.as_tensor(self.temperature, dtype=value.dtype)
        log_scale = math.lgamma(k) + (k - 1) * temperature.log()
        score = self.logits - value * temperature
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """A continuous relaxation of ``OneHotCategorical`` on the simplex: ``exp`` of an
    ``ExpRelaxedCategorical`` variate.

    >>> import fnx
    >>> d = fnx.distributions.RelaxedOneHotCategorical(fnx.tensor(0.5), probs=fnx.ones(3) / 3)
    >>> d.rsample((2,)).shape
    fnx.Size([2, 3])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
