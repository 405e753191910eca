"""``Dirichlet(concentration)``."""
from __future__ import annotations

from .. import api as fnx
from ..core.grad_mode import no_grad
from ..core.tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import standard_gamma, standard_gamma_rsample
from .utils import tiny


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution on the probability simplex, with ``concentration`` along
    the last dim. ``rsample`` normalizes gamma variates drawn with implicit
    reparameterization gradients.

    >>> import fnx
    >>> d = fnx.distributions.Dirichlet(fnx.tensor([1.0, 3.0]))
    >>> d.event_shape, d.mean
    (fnx.Size([2]), tensor([0.2500, 0.7500]))
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True
    _param_event_dims = {"concentration": 1}

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        c = (self.concentration - 1).clamp(min=0.0)
        mode = c / c.sum(-1, keepdim=True)
        # every concentration below 1: the density peaks at the corners; PyTorch reports the
        # first corner
        corner = fnx.zeros_like(mode)
        corner[..., 0] = 1.0
        return fnx.where((self.concentration < 1).all(-1, keepdim=True), corner, mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            g = standard_gamma(self.concentration.expand(shape).contiguous())
            return (g / g.sum(-1, keepdim=True)).clamp(min=tiny(g.dtype))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        g = standard_gamma_rsample(self.concentration.expand(shape).contiguous())
        return (g / g.sum(-1, keepdim=True)).clamp(min=tiny(g.dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (fnx.xlogy(c - 1.0, value).sum(-1) + fnx.lgamma(c.sum(-1))
                - fnx.lgamma(c).sum(-1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        total = c.sum(-1)
        return (fnx.lgamma(c).sum(-1) - fnx.lgamma(total) - (k - total) * fnx.digamma(total)
                - ((c - 1.0) * fnx.digamma(c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return fnx.lgamma(x).sum(-1) - fnx.lgamma(x.sum(-1))
