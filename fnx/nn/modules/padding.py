"""Padding layers: constant (and zero), reflection, replication and circular padding of the
last 1-3 dims, each a thin layer over ``F.pad``.

``padding`` is an int (the same on every side) or a tuple listing the last dim's
(left, right) first, then the dim before it, as ``F.pad`` takes it.

>>> import fnx
>>> fnx.nn.ReflectionPad1d(2)(fnx.arange(4.).reshape(1, 1, 4))
tensor([[[2., 1., 0., 1., 2., 3., 2., 1.]]])
>>> fnx.nn.ZeroPad2d((1, 0, 0, 1))(fnx.ones(1, 2, 2))
tensor([[[0., 1., 1.],
         [0., 1., 1.],
         [0., 0., 0.]]])
"""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]


def _ntuple(padding, n):
    """An int repeated ``n`` times; a sequence kept as given (``F.pad`` checks its length)."""
    return (padding,) * n if isinstance(padding, int) else tuple(padding)


class _PadNd(Module):
    _nd = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2 * self._nd)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``.

    >>> import fnx
    >>> fnx.nn.ConstantPad1d((1, 2), 3.5)(fnx.zeros(1, 2))
    tensor([[3.5000, 0.0000, 0.0000, 3.5000, 3.5000]])
    """
    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    _nd = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd, ConstantPad1d):
    pass


class ZeroPad2d(_ZeroPadNd, ConstantPad2d):
    pass


class ZeroPad3d(_ZeroPadNd, ConstantPad3d):
    pass


class ReflectionPad1d(_PadNd):
    _nd, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    _nd, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    _nd, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    _nd, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    _nd, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    _nd, _mode = 3, "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        if input.ndim not in (self._nd + 1, self._nd + 2):
            raise ValueError(f"expected {self._nd + 1}D or {self._nd + 2}D input (got "
                             f"{input.ndim}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping around.

    >>> import fnx
    >>> fnx.nn.CircularPad1d((2, 1))(fnx.arange(3.).reshape(1, 3))
    tensor([[1., 2., 0., 1., 2., 0.]])
    """
    _nd = 1


class CircularPad2d(_CircularPadNd):
    _nd = 2


class CircularPad3d(_CircularPadNd):
    _nd = 3
