"""OpInfo entries for pixel_shuffle, pixel_unshuffle and channel_shuffle
(fnx/ir/aten/nn/shuffle.py); the references index element by element."""
from __future__ import annotations

import numpy as np

from ....core import dtype as D
from ....ops import aten
from ...database import ErrorInput, OpInfo, SampleInput, register
from ._common import FI, _t


def np_pixel_shuffle(x, r):
    *batch, c, h, w = x.shape
    out = np.zeros((*batch, c // (r * r), h * r, w * r), x.dtype)
    for oc, oy, ox in np.ndindex(c // (r * r), h * r, w * r):
        # output (oc, oy, ox) comes from channel oc*r*r + (oy % r)*r + (ox % r)
        out[..., oc, oy, ox] = x[..., oc * r * r + (oy % r) * r + ox % r, oy // r, ox // r]
    return out


def np_pixel_unshuffle(x, r):
    *batch, c, h, w = x.shape
    out = np.zeros((*batch, c * r * r, h // r, w // r), x.dtype)
    for ic, iy, ix in np.ndindex(c, h, w):
        out[..., ic * r * r + (iy % r) * r + ix % r, iy // r, ix // r] = x[..., ic, iy, ix]
    return out


def np_channel_shuffle(x, groups):
    c = x.shape[1]
    per = c // groups
    # output channel k holds input channel (k % groups) * per + k // groups
    return x[:, [(k % groups) * per + k // groups for k in range(c)]]


def _shuffle_samples(info, device, dtype):
    yield SampleInput(_t((2, 8, 3, 2), dtype, device), 2)
    yield SampleInput(_t((9, 2, 2), dtype, device, noncontiguous=True), 3)
    yield SampleInput(_t((2, 1, 4, 1, 2), dtype, device), 1)


def _unshuffle_samples(info, device, dtype):
    yield SampleInput(_t((2, 2, 4, 6), dtype, device), 2)
    yield SampleInput(_t((1, 6, 3), dtype, device, noncontiguous=True), 3)
    yield SampleInput(_t((3, 1, 2, 2), dtype, device), 1)


def _channel_samples(info, device, dtype):
    yield SampleInput(_t((2, 6, 3), dtype, device), 3)
    yield SampleInput(_t((1, 4, 2, 3), dtype, device, noncontiguous=True), 2)
    yield SampleInput(_t((2, 4, 2), dtype, device), 1)
    yield SampleInput(_t((1, 6, 1, 2, 2), dtype, device), 6)


def _shuffle_errors(info, device):
    f = D.float32
    yield ErrorInput(SampleInput(_t((1, 4, 3, 3), f, device), 3), RuntimeError,
                     "divisible by the square of upscale_factor")
    yield ErrorInput(SampleInput(_t((1, 4, 3, 3), f, device), 0), RuntimeError,
                     "expects a positive upscale_factor, but got 0")
    yield ErrorInput(SampleInput(_t((4, 3), f, device), 2), RuntimeError,
                     "expects input to have at least 3 dimensions")


def _unshuffle_errors(info, device):
    f = D.float32
    yield ErrorInput(SampleInput(_t((1, 1, 3, 4), f, device), 2), RuntimeError,
                     r"expects height to be divisible by downscale_factor, but input.size\(-2\)=3")
    yield ErrorInput(SampleInput(_t((1, 1, 4, 3), f, device), 2), RuntimeError,
                     r"expects width to be divisible by downscale_factor, but input.size\(-1\)=3")
    yield ErrorInput(SampleInput(_t((1, 1, 4, 4), f, device), -1), RuntimeError,
                     "expects a positive downscale_factor")


def _channel_errors(info, device):
    f = D.float32
    yield ErrorInput(SampleInput(_t((1, 4, 3), f, device), 3), RuntimeError,
                     "Number of channels must be divisible by groups. Got 4 channels and 3 "
                     "groups.")
    yield ErrorInput(SampleInput(_t((1, 4, 3), f, device), 0), RuntimeError,
                     "Number of groups to divide channels in must be positive. Value of "
                     "groups:0")
    yield ErrorInput(SampleInput(_t((2, 4), f, device), 2), RuntimeError,
                     r"channel_shuffle expects input with > 2 dims, but got input with sizes "
                     r"\[2, 4\]")


register(
    OpInfo(aten.pixel_shuffle.default, np_pixel_shuffle, FI, _shuffle_samples,
           error_inputs=_shuffle_errors),
    OpInfo(aten.pixel_unshuffle.default, np_pixel_unshuffle, FI, _unshuffle_samples,
           error_inputs=_unshuffle_errors),
    OpInfo(aten.channel_shuffle.default, np_channel_shuffle, FI, _channel_samples,
           error_inputs=_channel_errors),
    OpInfo(aten.native_channel_shuffle.default, np_channel_shuffle, FI, _channel_samples,
           error_inputs=_channel_errors),
)
