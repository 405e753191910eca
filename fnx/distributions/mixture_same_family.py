"""``MixtureSameFamily(mixture_distribution, component_distribution)``."""
from __future__ import annotations

from .. import api as fnx
from ..core.grad_mode import no_grad
from ..core.tensor import Size
from ..nn.functional import log_softmax
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """A mixture of ``K`` components of one family: ``component_distribution``'s rightmost
    batch dim (of size ``K``) indexes the components, weighted by the ``Categorical``
    ``mixture_distribution`` (a mixture density network's output head).

    >>> import fnx
    >>> from fnx.distributions import Categorical, MixtureSameFamily, Normal
    >>> mix = Categorical(probs=fnx.tensor([0.5, 0.5]))
    >>> gmm = MixtureSameFamily(mix, Normal(fnx.tensor([-1.0, 1.0]), fnx.tensor([1.0, 1.0])))
    >>> gmm.batch_shape, gmm.mean.item()
    (fnx.Size([]), 0.0)
    """

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError("The Mixture distribution needs to be an instance of "
                             "torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of "
                             "torch.distributions.Distribution")
        mdbs = tuple(mixture_distribution.batch_shape)
        cdbs = tuple(component_distribution.batch_shape)[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not "
                                 f"compatible with `component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(cdbs, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = _instance if _instance is not None else object.__new__(type(self))
        new._component_distribution = self._component_distribution.expand(
            tuple(batch_shape) + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _pad(self, x):
        # a value of batch_shape + event_shape, broadcast against the K components
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dims(self, x):
        # mixture weights of batch_shape + (K,), with 1s for the event dims
        return x.reshape(tuple(x.shape) + (1,) * self._event_ndims)

    @property
    def mean(self):
        probs = self._pad_mixture_dims(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        # law of total variance: E[Var(X|k)] + Var(E[X|k])
        probs = self._pad_mixture_dims(self.mixture_distribution.probs)
        dim = -1 - self._event_ndims
        mean_cond_var = (probs * self.component_distribution.variance).sum(dim)
        var_cond_mean = (probs * (self.component_distribution.mean
                                  - self._pad(self.mean)).pow(2)).sum(dim)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        x = self._pad(x)
        cdf_x = self.component_distribution.cdf(x)
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        x = self._pad(x)
        log_prob_x = self.component_distribution.log_prob(x)
        log_mix_prob = log_softmax(self.mixture_distribution.logits, -1)
        return fnx.logsumexp(log_prob_x + log_mix_prob, dim=-1)

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        with no_grad():
            n = len(sample_shape)
            batch_len = len(self.batch_shape)
            mix_sample = self.mixture_distribution.sample(sample_shape)
            comp_samples = self.component_distribution.sample(sample_shape)
            # pick, per sample and batch element, the chosen component's draw
            index = mix_sample.reshape(tuple(mix_sample.shape) + (1,) * (self._event_ndims + 1))
            index = index.expand(tuple(mix_sample.shape) + (1,) + tuple(self.event_shape))
            index = index.expand(tuple(comp_samples.shape[:n + batch_len]) + (1,)
                                 + tuple(self.event_shape))
            return comp_samples.gather(n + batch_len, index).squeeze(n + batch_len)
