"""``Upsample`` and its fixed-mode forms ``UpsamplingNearest2d`` and
``UpsamplingBilinear2d`` (``F.interpolate`` as a module)."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resize ``(N, C, *spatial)`` inputs to ``size`` or by ``scale_factor`` with
    ``F.interpolate``'s modes.

    >>> import fnx
    >>> up = fnx.nn.Upsample(scale_factor=2, mode="nearest")
    >>> up
    Upsample(scale_factor=2.0, mode='nearest')
    >>> up(fnx.tensor([[[1.0, 2.0]]]))
    tensor([[[1., 1., 2., 2.]]])
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(s) for s in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def __setstate__(self, state):
        # modules pickled before the attribute existed recomputed the scale
        state.setdefault("recompute_scale_factor", True)
        super().__setstate__(state)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample(mode='nearest')`` for 4-D inputs.

    >>> import fnx
    >>> fnx.nn.UpsamplingNearest2d(scale_factor=2)(fnx.ones(1, 1, 2, 3)).shape
    fnx.Size([1, 1, 4, 6])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(mode='bilinear', align_corners=True)`` for 4-D inputs.

    >>> import fnx
    >>> fnx.nn.UpsamplingBilinear2d(size=(1, 4))(fnx.tensor([[[[0.0, 3.0]]]]))
    tensor([[[[0., 1., 2., 3.]]]])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
