"""``ExponentialFamily``: distributions with density ``h(x) exp(<t(x), theta> - F(theta))``."""
from __future__ import annotations

from ..autograd.engine import grad
from ..core.grad_mode import enable_grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution from an exponential family, given by its natural parameters
    ``_natural_params`` (``theta``), log-normalizer ``_log_normalizer(*theta)`` (``F``) and
    ``_mean_carrier_measure`` (``E[log h(x)]``). ``entropy`` then follows from the Bregman
    divergence of ``F`` (``F - <theta, grad F> - E[log h]``), and so does the KL divergence
    between two members of one family.

    >>> import fnx
    >>> from fnx.distributions import ExponentialFamily, Normal
    >>> d = Normal(fnx.tensor([0.0]), fnx.tensor([2.0]))
    >>> isinstance(d, ExponentialFamily)
    True
    >>> bool(fnx.isclose(ExponentialFamily.entropy(d), d.entropy()).all())
    True
    """

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        with enable_grad():
            nparams = [p.detach().requires_grad_() for p in self._natural_params]
            lg_normal = self._log_normalizer(*nparams)
            gradients = grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for nparam, g in zip(nparams, gradients):
            result = result - (nparam * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
