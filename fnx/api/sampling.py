"""``fnx.poisson`` and ``fnx.binomial``: elementwise counts drawn from fnx's generator.

>>> import fnx
>>> fnx.poisson(fnx.zeros(3))
tensor([0., 0., 0.])
"""
from __future__ import annotations

from ..ops import aten

__all__ = ["poisson", "binomial"]


def poisson(input, generator=None):
    """A Poisson count per element, with rate ``input`` (floating), as ``torch.poisson``.

    >>> import fnx
    >>> _ = fnx.manual_seed(0)
    >>> fnx.poisson(fnx.full((1000,), 4.0)).mean().round()
    tensor(4.)
    """
    return aten.poisson(input, generator=generator)


def binomial(count, prob, generator=None):
    """A Binomial(``count``, ``prob``) count per element (floating tensors that broadcast),
    as ``torch.binomial``.

    >>> import fnx
    >>> fnx.binomial(fnx.tensor([5.0, 3.0]), fnx.tensor([1.0, 0.0]))
    tensor([5., 0.])
    """
    return aten.binomial(count, prob, generator=generator)
