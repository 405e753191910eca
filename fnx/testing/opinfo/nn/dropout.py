"""OpInfo entries for the dropout ops (fnx/ir/aten/nn/dropout.py): random, so only shapes
and dtypes are compared."""
from __future__ import annotations

import numpy as np

from ....core import dtype as D
from ....ops import aten
from ...database import ErrorInput, OpInfo, SampleInput, register
from ._common import F, _t


def _native_dropout_ref(input, p, train):
    return np.zeros(input.shape, input.dtype), np.zeros(input.shape, np.bool_)


def _dropout_ref(input, p, train):
    return np.zeros(input.shape, input.dtype)


def _native_dropout_samples(info, device, dtype):
    for p, train in ((0.3, True), (0.3, None), (0.3, False), (0.0, True), (1.0, True)):
        yield SampleInput(_t((4, 5), dtype, device), p, train)
    yield SampleInput(_t((0, 3), dtype, device), 0.5, True)


def _dropout_samples(info, device, dtype):
    for p, train in ((0.5, True), (0.5, False), (0.0, True), (1.0, True)):
        yield SampleInput(_t((4, 3, 2), dtype, device), p, train)
    yield SampleInput(_t((0, 3), dtype, device), 0.5, True)


def _dropout_errors(info, device):
    for p in (1.5, -0.1):
        yield ErrorInput(SampleInput(_t((2, 3), D.float32, device), p, True), RuntimeError,
                         f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_dropout_errors(info, device):
    yield from _dropout_errors(info, device)
    yield ErrorInput(SampleInput(_t((3,), D.float32, device), 0.5, True), RuntimeError,
                     "Feature dropout requires at least 2 dimensions in the input")


register(
    OpInfo(aten.native_dropout.default, _native_dropout_ref, F, _native_dropout_samples,
           nondeterministic=True),
    OpInfo(aten.dropout.default, _dropout_ref, F, _dropout_samples, nondeterministic=True,
           error_inputs=_dropout_errors),
    OpInfo(aten.feature_dropout.default, _dropout_ref, F, _dropout_samples,
           nondeterministic=True, error_inputs=_feature_dropout_errors),
)


def _rrelu_ref(input, lower=0.125, upper=1.0 / 3.0, training=False):
    return np.zeros(input.shape, input.dtype)


def _rrelu_samples(info, device, dtype):
    for training in (False, True):
        yield SampleInput(_t((4, 5), dtype, device), 0.1, 0.3, training)
    yield SampleInput(_t((3,), dtype, device), 0.2, 0.2, True)
    yield SampleInput(_t((0, 2), dtype, device), 0.1, 0.3, True)


def _rrelu_errors(info, device):
    yield ErrorInput(SampleInput(_t((2,), D.float32, device), 0.5, 0.1, True), RuntimeError,
                     "lower bound")


register(
    OpInfo(aten.alpha_dropout.default, _dropout_ref, F, _dropout_samples, nondeterministic=True,
           error_inputs=_dropout_errors),
    OpInfo(aten.feature_alpha_dropout.default, _dropout_ref, F, _dropout_samples,
           nondeterministic=True, error_inputs=_feature_dropout_errors),
    OpInfo(aten.rrelu.default, _rrelu_ref, F, _rrelu_samples, nondeterministic=True,
           error_inputs=_rrelu_errors),
)
