"""``OneHotCategorical`` and ``OneHotCategoricalStraightThrough``."""
from __future__ import annotations

from .. import api as fnx
from ..core.tensor import Size
from ..nn.functional import one_hot
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    """A ``Categorical`` whose samples are one-hot vectors of length ``K``.

    >>> import fnx
    >>> d = fnx.distributions.OneHotCategorical(probs=fnx.tensor([0.25, 0.75]))
    >>> d.log_prob(fnx.tensor([0.0, 1.0])).exp().item(), d.event_shape
    (0.75, fnx.Size([2]))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args=False)
        param = self._categorical.param_shape
        super().__init__(param[:-1], param[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = _instance if _instance is not None else object.__new__(type(self))
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return one_hot(probs.argmax(dim=-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        p = self._categorical.probs
        return p * (1 - p)

    def sample(self, sample_shape=Size()):
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, probs.shape[-1]).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        probs = self._categorical.probs
        values = fnx.eye(n, dtype=probs.dtype, device=probs.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values

    def __repr__(self):
        return type(self).__name__ + repr(self._categorical)[len("Categorical"):]


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """``OneHotCategorical`` whose ``rsample`` passes the gradient of ``probs`` straight
    through the (non-differentiable) one-hot draw (Bengio et al., 2013).

    >>> import fnx
    >>> logits = fnx.zeros(3, requires_grad=True)
    >>> d = fnx.distributions.OneHotCategoricalStraightThrough(logits=logits)
    >>> d.rsample().sum().item(), d.has_rsample
    (1.0, True)
    """

    has_rsample = True

    def rsample(self, sample_shape=Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
