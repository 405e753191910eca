"""``TransformedDistribution(base_distribution, transforms)``."""
from __future__ import annotations

from ..core.grad_mode import no_grad
from ..core.tensor import Size
from . import constraints
from .distribution import Distribution
from .transforms import Transform
from .utils import sum_rightmost

__all__ = ["TransformedDistribution"]


class TransformedDistribution(Distribution):
    """The distribution of ``transforms(x)`` for ``x`` drawn from ``base_distribution``;
    ``log_prob`` applies the change-of-variables formula.

    >>> import fnx
    >>> from fnx.distributions import Normal, TransformedDistribution
    >>> from fnx.distributions.transforms import ExpTransform
    >>> lognormal = TransformedDistribution(Normal(0.0, 1.0), [ExpTransform()])
    >>> round(lognormal.log_prob(fnx.tensor(1.0)).item(), 4)
    -0.9189
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            transforms = [transforms]
        elif not (isinstance(transforms, list) and all(isinstance(t, Transform)
                                                       for t in transforms)):
            raise ValueError(f"transforms must be a Transform or a list of Transforms, "
                             f"but was {transforms}")
        self.transforms = transforms
        self.base_dist = base_distribution
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        for t in transforms:  # shape-changing transforms (StickBreakingTransform) included
            shape = tuple(t.forward_shape(shape))
        event_dim = max([len(base_distribution.event_shape)]
                        + [t.event_dim for t in transforms])
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = _instance if _instance is not None else object.__new__(type(self))
        shape = tuple(batch_shape) + tuple(self.event_shape)
        for t in reversed(self.transforms):
            shape = tuple(t.inverse_shape(shape))
        base_batch = shape[:len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch)
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        return self.transforms[-1].codomain

    def sample(self, sample_shape=Size()):
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape=Size()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - sum_rightmost(t.log_abs_det_jacobian(x, y),
                                                event_dim - t.domain.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y),
                                        event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for t in self.transforms[::-1]:
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self._monotonize_cdf(value)
        value = self.base_dist.icdf(value)
        for t in self.transforms:
            value = t(value)
        return value

