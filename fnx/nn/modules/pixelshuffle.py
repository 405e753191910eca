"""``PixelShuffle`` and ``PixelUnshuffle``: channels to space and back."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """``(*, C * r * r, H, W) -> (*, C, H * r, W * r)`` (sub-pixel convolution's output).

    >>> import fnx
    >>> fnx.nn.PixelShuffle(2)(fnx.ones(1, 8, 3, 3)).shape
    fnx.Size([1, 2, 6, 6])
    """

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H * r, W * r) -> (*, C * r * r, H, W)``, the inverse of ``PixelShuffle``.

    >>> import fnx
    >>> fnx.nn.PixelUnshuffle(2)(fnx.ones(1, 2, 6, 6)).shape
    fnx.Size([1, 8, 3, 3])
    """

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
