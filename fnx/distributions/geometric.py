"""``Geometric(probs=None, logits=None)``."""
from __future__ import annotations

from .. import api as fnx
from ..core.grad_mode import no_grad
from ..core.tensor import Size
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits, tiny


class Geometric(Distribution):
    """The number of failures before the first success of Bernoulli(``probs``) trials.

    >>> import fnx
    >>> d = fnx.distributions.Geometric(probs=fnx.tensor([0.25]))
    >>> d.mean, d.log_prob(fnx.tensor([1.0])).exp()
    (tensor([3.]), tensor([0.1875]))
    """

    arg_constraints = {"probs": constraints.interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        param = self.probs if probs is not None else self.logits
        super().__init__(param.shape, validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape "
                             f"{tuple(self.probs.shape)}) of distribution {self!r} to be "
                             f"positive but found invalid values:\n{self.probs}")

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return fnx.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            u = fnx.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
            u = u.clamp(min=tiny(u.dtype))
            return (u.log() / fnx.log1p(-self.probs)).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # 0 * log(0) = 0 when probs == 1 and value == 0
        safe = fnx.where((probs == 1) & (value == 0), fnx.zeros_like(probs), probs)
        return value * fnx.log1p(-safe) + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs
