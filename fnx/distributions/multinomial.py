"""``Multinomial(total_count=1, probs=None, logits=None)``."""
from __future__ import annotations

from .. import api as fnx
from ..core.grad_mode import no_grad
from ..core.tensor import Size
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts of each of ``K`` categories over ``total_count`` draws from
    ``Categorical(probs)``. ``total_count`` is one int shared by the batch (needed only
    for ``sample`` and ``mean``; ``log_prob`` reads the count off the value).

    >>> import fnx
    >>> d = fnx.distributions.Multinomial(2, probs=fnx.tensor([0.5, 0.5]))
    >>> d.log_prob(fnx.tensor([1.0, 1.0])).exp().item(), d.mean
    (0.5, tensor([1., 1.]))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        # validated as this distribution's own probs/logits (so no check runs when off)
        self._categorical = Categorical(probs=probs, logits=logits, validate_args=False)
        self._binomial = Binomial(total_count=total_count, probs=self.probs, validate_args=False)
        param = self._categorical.param_shape
        super().__init__(param[:-1], param[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = _instance if _instance is not None else object.__new__(type(self))
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(self.total_count, probs=new._categorical.probs,
                                 validate_args=False)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

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
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        with no_grad():
            # total_count category draws per element, counted per category
            draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
            k = self._categorical._num_events
            counts = (draws.unsqueeze(-1) == fnx.arange(k, device=draws.device))
            return counts.to(self.probs.dtype).sum(0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = fnx.lgamma(value.sum(-1) + 1)
        log_factorial_xs = fnx.lgamma(value + 1).sum(-1)
        # a category of probability 0 counted 0 times contributes 0, not 0 * -inf
        logits = fnx.where((value == 0) & (logits == -float("inf")), fnx.zeros_like(logits),
                           logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    def entropy(self):
        n = fnx.tensor(float(self.total_count), dtype=self.probs.dtype)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - fnx.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = fnx.exp(self._binomial.log_prob(support))
        weights = fnx.lgamma(support + 1)
        term2 = (binomial_probs * weights).sum([0, -1])
        return term1 + term2
