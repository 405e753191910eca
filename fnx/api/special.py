"""Special functions at the top level, as ``torch.*``: ``fnx.lgamma``, ``fnx.digamma``,
``fnx.polygamma``, ``fnx.mvlgamma``, ``fnx.erfc``, ``fnx.i0``, ``fnx.sinc``, ``fnx.logit``,
``fnx.xlogy``, ``fnx.igamma``, ``fnx.igammac``, with their ``Tensor`` methods and in-place
forms. (``fnx.special`` gathers these with the ``special_*`` ops.)
"""
from __future__ import annotations

from ..core.tensor import Tensor, tensor_method
from ..ir.variants import write_result
from ..ops import aten
from .math import _binary, _doc, _named, _unary, _wrapped

__all__ = ["lgamma", "digamma", "erfc", "i0", "sinc", "xlogy", "igamma", "igammac",
           "polygamma", "mvlgamma", "logit"]

lgamma = _unary("lgamma")
digamma = _unary("digamma")
erfc = _unary("erfc")
i0 = _unary("i0")
sinc = _unary("sinc")
igamma = _binary("igamma", "default")
igammac = _binary("igammac", "default")
_xlogy = _binary("xlogy")
for _f in (lgamma, digamma, erfc, i0, sinc, igamma, igammac):
    _f.__module__ = __name__        # made by math's builders, bound here


def xlogy(input, other, *, out: Tensor | None = None) -> Tensor:
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN), as
    ``torch.xlogy``; either argument may be a Python number.

    >>> import fnx
    >>> fnx.xlogy(fnx.tensor([0.0, 2.0]), fnx.tensor([0.0, 1.0]))
    tensor([0., 0.])
    """
    if not isinstance(input, Tensor):
        input = _wrapped(input)
    return _xlogy(input, other, out=out)


def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The ``n``-th derivative of the digamma function, as ``torch.polygamma``.

    >>> import fnx
    >>> fnx.polygamma(1, fnx.tensor([1.0]))      # pi^2 / 6
    tensor([1.6449])
    """
    if out is None:
        return aten.polygamma.default(n, input)
    return aten.polygamma.out(n, input, out=out)


def mvlgamma(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``, as ``torch.mvlgamma``.

    >>> import fnx
    >>> fnx.mvlgamma(fnx.tensor([2.5]), 1)        # lgamma(2.5)
    tensor([0.2847])
    """
    if out is None:
        return aten.mvlgamma.default(input, p)
    return aten.mvlgamma.out(input, p, out=out)


def logit(input: Tensor, eps: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """``log(x / (1 - x))``, ``x`` first clamped to ``[eps, 1 - eps]`` when ``eps`` is given,
    as ``torch.logit``.

    >>> import fnx
    >>> fnx.logit(fnx.tensor([0.5, 0.0]), eps=0.25)
    tensor([ 0.0000, -1.0986])
    """
    if out is None:
        return aten.logit.default(input, eps)
    return aten.logit.out(input, eps, out=out)


def _method(name, fn, doc_call):
    fn.__doc__ = _doc(f"The method form of ``fnx.{name.rstrip('_')}``, as "
                      f"``torch.Tensor.{name}``.", doc_call, "fnx.Size([1])")
    tensor_method(name)(_named(fn, name, fn.__doc__))


def _polygamma_(self, n: int) -> Tensor:
    # the functional result written into self, refused (self unchanged) when self's dtype
    # cannot hold it, as PyTorch's polygamma_
    return write_result("polygamma_", lambda x: aten.polygamma.default(n, x), self)


_method("polygamma", lambda self, n: aten.polygamma.default(n, self),
        "fnx.tensor([0.5]).polygamma(1).shape")
_method("polygamma_", _polygamma_, "fnx.tensor([0.5]).polygamma_(1).shape")
_method("mvlgamma", lambda self, p: aten.mvlgamma.default(self, p),
        "fnx.tensor([2.5]).mvlgamma(2).shape")
_method("mvlgamma_", lambda self, p: aten.mvlgamma_.default(self, p),
        "fnx.tensor([2.5]).mvlgamma_(2).shape")
_method("logit", lambda self, eps=None: aten.logit.default(self, eps),
        "fnx.tensor([0.5]).logit().shape")
_method("logit_", lambda self, eps=None: aten.logit_.default(self, eps),
        "fnx.tensor([0.5]).logit_().shape")
