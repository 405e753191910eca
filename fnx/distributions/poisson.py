"""``Poisson(rate)``."""
from __future__ import annotations

from .. import api as fnx
from ..core.grad_mode import no_grad
from ..core.tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Poisson(ExponentialFamily):
    """The number of events of a Poisson process with mean ``rate``.

    >>> import fnx
    >>> d = fnx.distributions.Poisson(fnx.tensor([2.0]))
    >>> d.log_prob(fnx.tensor([0.0])).exp()
    tensor([0.1353])
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return fnx.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return fnx.xlogy(value, rate) - rate - fnx.lgamma(value + 1)

    @property
    def _natural_params(self):
        return (fnx.log(self.rate),)

    def _log_normalizer(self, x):
        return fnx.exp(x)
