"""Invertible maps for ``TransformedDistribution``, as ``torch.distributions.transforms``.

>>> import fnx
>>> from fnx.distributions.transforms import ExpTransform
>>> t = ExpTransform()
>>> t(fnx.tensor(0.0)).item(), t.inv(fnx.tensor(1.0)).item()
(1.0, 0.0)
"""
from __future__ import annotations

import math
import numbers

from .. import api as fnx
from ..nn.functional import softplus
from . import constraints
from .utils import broadcast_shape, eps, sum_rightmost

__all__ = ["AffineTransform", "ComposeTransform", "ExpTransform", "SigmoidTransform",
           "Transform"]


class Transform:
    """An invertible map ``y = T(x)`` with ``log_abs_det_jacobian(x, y) = log|dy/dx|``."""

    bijective = False
    domain = constraints.real
    codomain = constraints.real
    sign = 1

    def __init__(self, cache_size=0):
        self._inv = None

    @property
    def event_dim(self):
        return max(self.domain.event_dim, self.codomain.event_dim)

    @property
    def inv(self):
        """The inverse transform."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    def __call__(self, x):
        return self._call(x)

    def _inv_call(self, y):
        return self._inverse(y)

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __repr__(self):
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    def __init__(self, transform):
        super().__init__()
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)


class ComposeTransform(Transform):
    """Apply ``parts`` in order."""

    def __init__(self, parts):
        super().__init__()
        self.parts = list(parts)

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def domain(self):
        return self.parts[0].domain if self.parts else constraints.real

    @property
    def codomain(self):
        return self.parts[-1].codomain if self.parts else constraints.real

    @property
    def sign(self):
        s = 1
        for p in self.parts:
            s = s * p.sign
        return s

    @property
    def event_dim(self):
        return max((p.event_dim for p in self.parts), default=0)

    def _call(self, x):
        for p in self.parts:
            x = p(x)
        return x

    def _inverse(self, y):
        for p in reversed(self.parts):
            y = p.inv(y)
        return y

    def log_abs_det_jacobian(self, x, y):
        total = 0.0
        event_dim = self.event_dim
        for p in self.parts:
            y_p = p(x)
            total = total + sum_rightmost(p.log_abs_det_jacobian(x, y_p),
                                          event_dim - p.event_dim)
            x = y_p
        return total


class ExpTransform(Transform):
    """``y = exp(x)``."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class SigmoidTransform(Transform):
    """``y = 1 / (1 + exp(-x))``."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = 1

    def _call(self, x):
        e = eps(x.dtype)
        return fnx.sigmoid(x).clamp(min=e, max=1 - e)

    def _inverse(self, y):
        e = eps(y.dtype)
        y = y.clamp(min=e, max=1 - e)
        return y.log() - fnx.log1p(-y)

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class AffineTransform(Transform):
    """``y = loc + scale * x``; ``event_dim`` dims on the right form one event."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale = loc, scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else \
            constraints.independent(constraints.real, self._event_dim)

    codomain = domain

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        if isinstance(self.scale, numbers.Real):
            result = fnx.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
            result = result.expand(broadcast_shape(tuple(result.shape), tuple(x.shape)))
        return sum_rightmost(result, self._event_dim)

    def __repr__(self):
        return f"AffineTransform(loc={self.loc}, scale={self.scale})"
