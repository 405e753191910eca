"""``LogisticNormal(loc, scale)``."""
from __future__ import annotations

from . import constraints
from .independent import Independent
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform


class LogisticNormal(TransformedDistribution):
    """A distribution on the ``K``-simplex: the ``StickBreakingTransform`` of a normal
    vector of length ``K - 1`` with independent coordinates ``Normal(loc, scale)``.

    >>> import fnx
    >>> d = fnx.distributions.LogisticNormal(fnx.zeros(2), fnx.ones(2))
    >>> d.event_shape, d.sample().sum().item()
    (fnx.Size([3]), 1.0)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(Independent(base, 1), StickBreakingTransform(),
                         validate_args=validate_args)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
