"""Dropout: ``native_dropout`` (core, a random mask) and the ``dropout`` and
``feature_dropout`` ops users call."""
from __future__ import annotations

from ....core import dtype as D
from ....ops import aten
from ...registry import TensorMeta, defop, derivative
from ._common import RANDOM, _opmath, _same, _to


def _dropout_p(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _native_dropout_meta(input, p, train):
    return _same(input), TensorMeta(tuple(input.shape), D.bool)


def _native_dropout(input, p, train):
    if train is not None and not train:
        return aten.clone(input), aten.full_like(input, True, dtype=D.bool)
    keep = 1.0 - p
    # PyTorch's CPU kernel: a mask of input's dtype filled by bernoulli_(1 - p), whose
    # draws (double uniforms < 1 - p) bernoulli.p reproduces
    mask = aten.bernoulli.p(input, keep)
    scale = 0.0 if keep == 0 else 1.0 / keep
    return _to(input * mask * scale, input.dtype), aten.ne.Scalar(mask, 0)


native_dropout = defop("native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
                       tags=("core", "nondeterministic"), meta=_native_dropout_meta,
                       decomposition=_native_dropout, explicit=True)


@derivative(native_dropout)
def _native_dropout_backward(grad, result1, p, train):
    if train is not None and not train:
        return grad
    # the mask is random: it must be the saved output; only it is saved (as PyTorch does),
    # so the dropped values may be changed in place after
    return grad * result1 * (0.0 if p == 1 else 1.0 / (1.0 - p))


def _dropout(input, p, train):
    _dropout_p(p)
    if not train or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        return input * aten.zeros_like(input)
    # PyTorch's CPU dropout: noise = bernoulli_(1 - p) in input's dtype, divided by 1 - p
    keep = 1.0 - p
    return input * (aten.bernoulli.p(input, keep) / keep)


def _feature_dropout(input, p, train):
    _dropout_p(p)
    if not train or p == 0 or input.numel() == 0:
        return input
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = list(input.shape[:2]) + [1] * (input.ndim - 2)
    keep = 1.0 - p
    if keep == 0:
        return input * aten.zeros(shape, dtype=input.dtype, device=input.device)
    noise = aten.bernoulli.p(aten.zeros(shape, dtype=input.dtype, device=input.device), keep)
    return input * (noise / keep)


dropout = defop("dropout(Tensor input, float p, bool train) -> Tensor", tags=RANDOM,
                decomposition=_dropout)
feature_dropout = defop("feature_dropout(Tensor input, float p, bool train) -> Tensor",
                        tags=RANDOM, decomposition=_feature_dropout)


# SELU's negative saturation value, -scale * alpha: alpha dropout sets dropped units to it
# and then applies the affine map that restores zero mean and unit variance.
_SELU_SAT = 1.7580993408473766


def _alpha_dropout_impl(input, p, train, feature):
    _dropout_p(p)
    if not train or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        return input * aten.zeros_like(input)
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = (list(input.shape[:2]) + [1] * (input.ndim - 2)) if feature else list(input.shape)
    keep = aten.bernoulli.p(aten.zeros(shape, dtype=input.dtype, device=input.device), 1.0 - p)
    a = 1.0 / ((_SELU_SAT * _SELU_SAT * p + 1.0) * (1.0 - p)) ** 0.5
    # kept: a * x + a * alpha * p; dropped: a * alpha * (p - 1) (the saturation, made affine)
    mask = _to(keep, _opmath(input.dtype))
    out = input * (mask * a) + (mask - 1.0) * (_SELU_SAT * a) + _SELU_SAT * a * p
    return _to(out, input.dtype)


alpha_dropout = defop("alpha_dropout(Tensor input, float p, bool train) -> Tensor", tags=RANDOM,
                      decomposition=lambda input, p, train:
                      _alpha_dropout_impl(input, p, train, False))
feature_alpha_dropout = defop("feature_alpha_dropout(Tensor input, float p, bool train) -> Tensor",
                              tags=RANDOM, decomposition=lambda input, p, train:
                              _alpha_dropout_impl(input, p, train, True))


def _rrelu(self, lower=0.125, upper=1.0 / 3.0, training=False):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"\"rrelu\" not implemented for '{self.dtype}'")
    if lower > upper:
        raise RuntimeError(f"rrelu: lower bound ({lower}) must be less than or equal to upper "
                           f"bound ({upper})")
    if not training:
        return aten.leaky_relu(self, (lower + upper) / 2.0)
    # a slope drawn per element from U(lower, upper); autograd through the product gives
    # the gradient with the sampled slope
    u = aten.rand(list(self.shape), dtype=_opmath(self.dtype), device=self.device)
    slope = _to(u * (upper - lower) + lower, self.dtype)
    return aten.where.self(aten.le.Scalar(self, 0), self * slope, self)


rrelu = defop("rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, "
              "bool training=False) -> Tensor", tags=RANDOM, decomposition=_rrelu)
