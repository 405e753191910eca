"""Helpers shared by the distributions: broadcasting parameters, probs/logits conversion."""
from __future__ import annotations

import numbers

from .. import api as fnx
from ..compiler import is_compiling
from ..core.tensor import Tensor
from ..lower.settings import INDUCTOR

# machine epsilon and the smallest normal number per floating dtype (for clamping probs)
_EPS = {fnx.float16: 2.0 ** -10, fnx.bfloat16: 2.0 ** -7, fnx.float32: 2.0 ** -23,
        fnx.float64: 2.0 ** -52}
_TINY = {fnx.float16: 2.0 ** -14, fnx.bfloat16: 2.0 ** -126, fnx.float32: 2.0 ** -126,
         fnx.float64: 2.0 ** -1022}
_MIN = {fnx.float16: -65504.0, fnx.bfloat16: -3.3895e38, fnx.float32: -3.4028234663852886e38,
        fnx.float64: -1.7976931348623157e308}


def stops_early() -> bool:
    """Whether a rejection sampler's loop stops once every draw is accepted, as eager does
    (a ``bool(tensor)``): not in a compiled function, which runs every round in one
    program, unless ``fallback_random`` asks for eager's draws (it then breaks there)."""
    return not is_compiling() or INDUCTOR.fallback_random


def eps(dtype) -> float:
    return _EPS.get(dtype, 2.0 ** -23)


def tiny(dtype) -> float:
    return _TINY.get(dtype, 2.0 ** -126)


def finfo_min(dtype) -> float:
    return _MIN.get(dtype, _MIN[fnx.float32])


def broadcast_shape(*shapes) -> tuple:
    """The shape that ``shapes`` broadcast to (numpy's rules), or ValueError."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        sizes = {s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {[tuple(s) for s in shapes]} cannot be broadcast together")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_all(*values):
    """Numbers and tensors as tensors of one broadcast shape (numbers take the tensors' dtype).

    >>> import fnx
    >>> from fnx.distributions.utils import broadcast_all
    >>> [tuple(v.shape) for v in broadcast_all(fnx.zeros(3), 1.0)]
    [(3,), (3,)]
    """
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or Tensor.")
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = tensors[0].dtype if tensors else fnx.get_default_dtype()
    device = tensors[0].device if tensors else None
    if not dtype.is_floating_point:
        dtype = fnx.get_default_dtype()
    values = [v if isinstance(v, Tensor) else fnx.tensor(float(v), dtype=dtype, device=device)
              for v in values]
    shape = broadcast_shape(*(tuple(v.shape) for v in values))
    return tuple(v if tuple(v.shape) == shape else v.expand(shape) for v in values)


def sum_rightmost(value, dim: int):
    """Sum the rightmost ``dim`` dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    return fnx.sigmoid(logits) if is_binary else fnx.softmax(logits, -1)


def clamp_probs(probs):
    e = eps(probs.dtype)
    return probs.clamp(min=e, max=1 - e)


def probs_to_logits(probs, is_binary=False):
    p = clamp_probs(probs)
    return fnx.log(p) - fnx.log1p(-p) if is_binary else fnx.log(p)


class lazy_property:
    """A property computed on first use and then stored on the instance (``probs``/``logits``
    of Bernoulli and Categorical: only the one given is computed eagerly)."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = self.fn(instance)
        instance.__dict__[self.fn.__name__] = value
        return value


class BinaryParams:
    """Mixed into a distribution over binary outcomes given by ``probs`` or ``logits``
    (the other computed on first use): storing the one given (``_given``), the lazy pair,
    ``param_shape`` (of the one given, ``self._param``) and an ``expand`` that keeps which
    one was given. Listed before the distribution base class."""

    def _given(self, probs, logits, total_count=None):
        """Store whichever of ``probs``/``logits`` is given, broadcast (with
        ``total_count``, which takes its dtype, when there is one); returns its shape,
        the batch shape."""
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        if total_count is None:
            (param,) = broadcast_all(value)
        else:
            total_count, param = broadcast_all(total_count, value)
            self.total_count = total_count.type_as(param)
        setattr(self, name, param)
        self._param = param
        return param.shape

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._param = new.probs if self._param is self.__dict__.get("probs") else new.logits
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.shape
