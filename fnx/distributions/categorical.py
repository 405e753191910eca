"""``Categorical(probs=None, logits=None)``."""
from __future__ import annotations

from .. import api as fnx
from ..core.grad_mode import no_grad
from ..core.tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_shape, finfo_min, lazy_property, logits_to_probs, probs_to_logits


class Categorical(Distribution):
    """A choice among ``K`` categories ``0 .. K-1`` with weights ``probs`` (normalized along
    the last dim) or unnormalized log-weights ``logits``.

    >>> import fnx
    >>> d = fnx.distributions.Categorical(probs=fnx.tensor([1.0, 3.0]))
    >>> d.probs, d.log_prob(fnx.tensor(1)).exp().item()
    (tensor([0.2500, 0.7500]), 0.75)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True
    _param_event_dims = {"probs": 1, "logits": 1}

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            param = self.probs
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            param = self.logits
        self._param = param
        self._num_events = param.shape[-1]
        super().__init__(param.shape[:-1], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._param = new.probs if self._param is self.__dict__.get("probs") else new.logits
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self):
        return fnx.full(self._extended_shape(), float("nan"), dtype=self._param.dtype,
                        device=self._param.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return self.mean

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        n = sample_shape.numel()
        with no_grad():
            # PyTorch's draw: multinomial with replacement, which races exponentials for one
            # sample and searches the cumulative weights for several (fnx.multinomial
            # draws PyTorch's numbers both ways)
            probs_2d = self.probs.reshape(-1, self._num_events)
            draws = fnx.multinomial(probs_2d, n, True).T
            return draws.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = broadcast_shape(tuple(value.shape), tuple(self.logits.shape))
        value = value.expand(shape[:-1] + (1,))
        logits = self.logits.expand(shape)
        return logits.gather(-1, value).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=finfo_min(self.logits.dtype))
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = fnx.arange(self._num_events, dtype=fnx.int64, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
