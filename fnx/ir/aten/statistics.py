"""Statistics built on the reductions: NaN-ignoring sums and means, covariance and
correlation, and ``isclose``.

Each is a decomposition onto ops of ``reduction``/``elementwise`` (CompositeImplicit, so
autograd, tracing and every backend come from those), with PyTorch's dtype rules and
errors: ``nanmean`` needs a floating or complex input; ``nansum`` of integers is ``sum``;
``cov`` of an integer input is computed in the default float dtype; ``isclose`` needs
both operands of one dtype.
"""
from __future__ import annotations

import warnings

from ...core import dtype as D
from ...ops import aten, prims
from ..registry import defop

__all__ = ["nansum", "nanmean", "cov", "corrcoef", "isclose"]


def _composite(schema, fn):
    return defop(schema, decomposition=fn)


def _is_float(d) -> bool:
    return d.is_floating_point or d.is_complex


def _without_nan(self):
    return aten.where.self(aten.isnan(self), 0, self) if _is_float(self.dtype) else self


def _nansum(self, dim=None, keepdim=False, *, dtype=None):
    return aten.sum.dim_IntList(_without_nan(self), dim, keepdim, dtype=dtype)


def _nanmean(self, dim=None, keepdim=False, *, dtype=None):
    if not _is_float(self.dtype):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex "
                           f"dtype but got {self.dtype.scalar_type}")
    count = aten.sum.dim_IntList(aten.logical_not(aten.isnan(self)), dim, keepdim)
    return aten.div.Tensor(_nansum(self, dim, keepdim, dtype=dtype), count)


nansum = _composite("nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, "
                    "ScalarType? dtype=None) -> Tensor", _nansum)
nanmean = _composite("nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, "
                     "ScalarType? dtype=None) -> Tensor", _nanmean)


def _check_weights(name, w, n, integral):
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.ndim} dimensions")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if integral and _is_float(w.dtype):
        raise RuntimeError("cov(): expected fweights to have integral dtype")
    if not integral and not w.dtype.is_floating_point:
        raise RuntimeError("cov(): expected aweights to have floating point dtype")


def _cov(self, *, correction=1, fweights=None, aweights=None):
    if self.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got "
                           f"an input with {self.ndim} dimensions")
    x = self if self.ndim == 2 else aten.reshape(self, [1, -1])
    if not _is_float(x.dtype):
        x = aten._to_copy.default(x, dtype=D.get_default_dtype())
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, False)
        w = aweights if w is None else aten.mul.Tensor(w, aweights)
    if w is None:
        w_sum = n
        avg = aten.mean.dim(x, [1])
    else:
        w_sum = aten.sum.default(w)
        avg = aten.div.Tensor(aten.sum.dim_IntList(aten.mul.Tensor(x, w), [1]), w_sum)
    if w is None or aweights is None:
        norm = aten.sub.Tensor(w_sum, correction) if w is not None else w_sum - correction
    else:
        extra = aten.div.Tensor(aten.sum.default(aten.mul.Tensor(w, aweights)), w_sum)
        norm = aten.sub.Tensor(w_sum, aten.mul.Scalar(extra, correction))
    if not hasattr(norm, "_ks"):
        if norm <= 0:
            warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly "
                          "less than the number of observations.", UserWarning, stacklevel=3)
            norm = 0
    else:
        norm = aten.clamp(norm, 0)
    xm = aten.sub.Tensor(x, aten.unsqueeze(avg, 1))
    xw = xm if w is None else aten.mul.Tensor(xm, w)
    xt = aten.t(xm)
    if xt.dtype.is_complex:
        xt = prims.conj(xt)
    c = aten.div.Tensor(aten.mm(xw, xt), norm)
    return aten.squeeze.default(c) if self.ndim < 2 else c


cov = _composite("cov(Tensor self, *, int correction=1, Tensor? fweights=None, "
                 "Tensor? aweights=None) -> Tensor", _cov)


def _corrcoef(self):
    if self.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but "
                           f"got an input with {self.ndim} dimensions")
    c = _cov(self)
    if c.ndim == 0:
        return aten.div.Tensor(c, c)
    std = aten.sqrt(aten.diagonal(c))
    c = aten.div.Tensor(aten.div.Tensor(c, aten.unsqueeze(std, 1)), aten.unsqueeze(std, 0))
    return c if c.dtype.is_complex else aten.clamp(c, -1, 1)


corrcoef = _composite("corrcoef(Tensor self) -> Tensor", _corrcoef)


def _isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if self.dtype is not other.dtype:
        raise RuntimeError(f"{self.dtype.scalar_type} did not match {other.dtype.scalar_type}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = aten.eq.Tensor(self, other)
    if equal_nan and _is_float(self.dtype):
        close = aten.logical_or(close, aten.logical_and(aten.isnan(self), aten.isnan(other)))
    if rtol == 0 and atol == 0:
        return close
    a, b = self, other
    if not _is_float(a.dtype):         # integers compare in the default float dtype
        a = aten._to_copy.default(a, dtype=D.get_default_dtype())
        b = aten._to_copy.default(b, dtype=D.get_default_dtype())
    allowed = aten.add.Scalar(aten.mul.Scalar(aten.abs(b), rtol), atol)
    actual = aten.abs(aten.sub.Tensor(a, b))
    within = aten.logical_and(aten.isfinite(actual), aten.le.Tensor(actual, allowed))
    return aten.logical_or(close, within)


isclose = _composite("isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, "
                     "bool equal_nan=False) -> Tensor", _isclose)
