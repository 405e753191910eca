"""Rearranging channels: ``pixel_shuffle``/``pixel_unshuffle`` (channels to and from
space) and ``channel_shuffle`` (ShuffleNet's interleaving of channel groups).

Each is a reshape, a permute and a reshape; the result is always a fresh tensor, as
PyTorch's kernels write a new one (a permute that happens to be viewable, ``r == 1`` or a
single group, is cloned).
"""
from __future__ import annotations

from ....ops import aten
from ...registry import defop


def _fresh(x, viewable):
    return aten.clone(x) if viewable else x


def _pixel_checks(name, input, r, factor):
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{name} expects a positive {factor}, but got {r}")


def _pixel_shuffle(self, upscale_factor):
    r = int(upscale_factor)
    _pixel_checks("pixel_shuffle", self, r, "upscale_factor")
    *batch, c, h, w = self.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    n = len(batch)
    x = aten.reshape(self, [*batch, c // (r * r), r, r, h, w])
    x = aten.permute(x, [*range(n), n, n + 3, n + 1, n + 4, n + 2])
    return _fresh(aten.reshape(x, [*batch, c // (r * r), h * r, w * r]), r == 1)


def _pixel_unshuffle(self, downscale_factor):
    r = int(downscale_factor)
    _pixel_checks("pixel_unshuffle", self, r, "downscale_factor")
    *batch, c, h, w = self.shape
    for what, size, d in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by "
                               f"downscale_factor, but input.size({d})={size} is not divisible "
                               f"by {r}")
    n = len(batch)
    x = aten.reshape(self, [*batch, c, h // r, r, w // r, r])
    x = aten.permute(x, [*range(n), n, n + 2, n + 4, n + 1, n + 3])
    return _fresh(aten.reshape(x, [*batch, c * r * r, h // r, w // r]), r == 1)


pixel_shuffle = defop("pixel_shuffle(Tensor self, int upscale_factor) -> Tensor",
                      decomposition=_pixel_shuffle)
pixel_unshuffle = defop("pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor",
                        decomposition=_pixel_unshuffle)


def _channel_shuffle(self, groups):
    g = int(groups)
    if self.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(self.shape)}")
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{g}")
    n, c, *rest = self.shape
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {g} groups.")
    x = aten.reshape(self, [n, g, c // g, *rest])
    x = aten.transpose.int(x, 1, 2)
    return _fresh(aten.reshape(x, [n, c, *rest]), g == 1 or g == c)


channel_shuffle = defop("channel_shuffle(Tensor self, SymInt groups) -> Tensor",
                        decomposition=_channel_shuffle)
native_channel_shuffle = defop("native_channel_shuffle(Tensor self, SymInt groups) -> Tensor",
                               decomposition=_channel_shuffle)
