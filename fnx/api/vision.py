"""Top-level vision functions PyTorch exposes as ``torch.<name>``: channel rearranging
(``pixel_shuffle``, ``pixel_unshuffle``, ``channel_shuffle``) and the sampling grid ops
(``grid_sampler``, ``affine_grid_generator``).  ``fnx.nn.functional`` re-exports the
first ones and builds ``grid_sample``/``affine_grid`` on the others.
"""
from __future__ import annotations

from ..ops import aten

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle",
           "grid_sampler", "affine_grid_generator"]


def pixel_shuffle(input, upscale_factor):
    """``(*, C * r * r, H, W) -> (*, C, H * r, W * r)``, as ``torch.pixel_shuffle``.

    >>> import fnx
    >>> fnx.pixel_shuffle(fnx.arange(4.0).view(1, 4, 1, 1), 2)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    return aten.pixel_shuffle.default(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    """``(*, C, H * r, W * r) -> (*, C * r * r, H, W)``, the inverse of ``pixel_shuffle``.

    >>> import fnx
    >>> fnx.pixel_unshuffle(fnx.arange(4.0).view(1, 1, 2, 2), 2).flatten()
    tensor([0., 1., 2., 3.])
    """
    return aten.pixel_unshuffle.default(input, downscale_factor)


def channel_shuffle(input, groups):
    """Split the channels (dim 1) into ``groups`` groups and interleave them, as
    ``torch.channel_shuffle`` (ShuffleNet).

    >>> import fnx
    >>> fnx.channel_shuffle(fnx.arange(4.0).view(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    return aten.channel_shuffle.default(input, groups)


def native_channel_shuffle(input, groups):
    """``channel_shuffle`` under its native-kernel name (same result).

    >>> import fnx
    >>> fnx.native_channel_shuffle(fnx.arange(6.0).view(1, 6, 1), 3).flatten()
    tensor([0., 2., 4., 1., 3., 5.])
    """
    return aten.native_channel_shuffle.default(input, groups)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """Sample ``input`` at the normalized ``grid`` positions (modes as integers: 0
    bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection), as
    ``torch.grid_sampler``; ``fnx.nn.functional.grid_sample`` takes the names.

    >>> import fnx
    >>> x = fnx.arange(4.0).view(1, 1, 2, 2)
    >>> fnx.grid_sampler(x, fnx.zeros(1, 1, 1, 2), 0, 0, True)
    tensor([[[[1.5000]]]])
    """
    return aten.grid_sampler.default(input, grid, interpolation_mode, padding_mode,
                                     align_corners)


def affine_grid_generator(theta, size, align_corners):
    """The sampling grid of the affine maps ``theta`` (N, 2, 3) or (N, 3, 4) over an
    output of ``size``, as ``torch.affine_grid_generator``.

    >>> import fnx
    >>> theta = fnx.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> fnx.affine_grid_generator(theta, [1, 1, 1, 2], True)
    tensor([[[[-1.,  0.],
              [ 1.,  0.]]]])
    """
    return aten.affine_grid_generator.default(theta, list(size), align_corners)
