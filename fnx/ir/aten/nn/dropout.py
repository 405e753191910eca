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
    noise = aten.rand(list(input.shape), dtype=_opmath(input.dtype)
                      if input.dtype.is_floating_point else D.float32, device=input.device)
    mask = aten.lt.Scalar(noise, keep)
    scale = 0.0 if keep == 0 else 1.0 / keep
    return _to(input * mask * scale, input.dtype), mask


native_dropout = defop("native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
                       tags=("core", "nondeterministic"), meta=_native_dropout_meta,
                       decomposition=_native_dropout, explicit=True)


@derivative(native_dropout)
def _native_dropout_backward(grad, result, p, train):
    if train is not None and not train:
        return grad
    # the mask is random: it must be the saved output (which pins output 0's version too)
    return grad * result[1] * (0.0 if p == 1 else 1.0 / (1.0 - p))


def _dropout(input, p, train):
    _dropout_p(p)
    if not train or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        return input * aten.zeros_like(input)
    return aten.native_dropout(input, p, train)[0]


def _feature_dropout(input, p, train):
    _dropout_p(p)
    if not train or p == 0 or input.numel() == 0:
        return input
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = list(input.shape[:2]) + [1] * (input.ndim - 2)
    keep = 1.0 - p
    noise = aten.rand(shape, dtype=_opmath(input.dtype), device=input.device)
    mask = aten.lt.Scalar(noise, keep)
    return _to(input * mask * (0.0 if keep == 0 else 1.0 / keep), input.dtype)


dropout = defop("dropout(Tensor input, float p, bool train) -> Tensor", tags=RANDOM,
                decomposition=_dropout)
feature_dropout = defop("feature_dropout(Tensor input, float p, bool train) -> Tensor",
                        tags=RANDOM, decomposition=_feature_dropout)
