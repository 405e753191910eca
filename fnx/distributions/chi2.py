"""``Chi2(df)``."""
from __future__ import annotations

from ..core.tensor import Size
from . import constraints
from .gamma import Gamma


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom: ``Gamma(df / 2, 1 / 2)``.

    >>> import fnx
    >>> d = fnx.distributions.Chi2(fnx.tensor([4.0]))
    >>> d.mean, d.variance
    (tensor([4.]), tensor([8.]))
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    @property
    def df(self):
        return self.concentration * 2

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = _instance if _instance is not None else object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        new._batch_shape = batch_shape
        return new
