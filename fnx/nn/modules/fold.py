"""``Fold`` and ``Unfold``: sliding blocks to columns (im2col) and back (col2im)."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sum ``(N, C * prod(kernel_size), L)`` columns into ``(N, C, *output_size)``
    (overlapping blocks add up), the adjoint of ``Unfold``.

    >>> import fnx
    >>> fold = fnx.nn.Fold(output_size=(3, 3), kernel_size=2)
    >>> fold
    Fold(output_size=(3, 3), kernel_size=2, dilation=1, padding=0, stride=1)
    >>> fold(fnx.ones(1, 4, 4))
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extract sliding ``kernel_size`` blocks of ``(N, C, H, W)`` as columns
    ``(N, C * prod(kernel_size), L)``.

    >>> import fnx
    >>> fnx.nn.Unfold(kernel_size=2)(fnx.ones(1, 3, 4, 5)).shape
    fnx.Size([1, 12, 12])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
