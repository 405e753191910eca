"""Pooling layers: max, average, adaptive average/max, LP and fractional max pooling, and
max unpooling."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           "LPPool1d", "LPPool2d", "LPPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d"]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """Max over ``kernel_size`` windows of ``(N, C, H, W)`` or ``(C, H, W)`` input.

    >>> import fnx
    >>> fnx.nn.MaxPool2d(2)
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> fnx.nn.MaxPool2d(2)(fnx.ones(1, 3, 8, 8)).shape
    fnx.Size([1, 3, 4, 4])
    """

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool3d(_MaxPoolNd):
    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """Mean over ``kernel_size`` windows.

    >>> import fnx
    >>> fnx.nn.AvgPool2d(2, stride=1)(fnx.ones(1, 1, 3, 3)).shape
    fnx.Size([1, 1, 2, 2])
    """

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AvgPool3d(_AvgPoolNd):
    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptivePool(Module):
    def __init__(self, output_size, return_indices=None):
        super().__init__()
        self.output_size = output_size
        if return_indices is not None:
            self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptivePool):
    """Average pooling to a fixed ``output_size`` whatever the input size.

    >>> import fnx
    >>> fnx.nn.AdaptiveAvgPool2d((1, 1))(fnx.ones(2, 3, 7, 5)).shape
    fnx.Size([2, 3, 1, 1])
    """

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptivePool):
    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool1d(_AdaptivePool):
    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size, return_indices)

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptivePool):
    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size, return_indices)

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptivePool):
    """Max pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` to ``output_size``.

    >>> import fnx
    >>> fnx.nn.AdaptiveMaxPool3d((1, 2, 2))(fnx.ones(2, 3, 5, 4, 3)).shape
    fnx.Size([2, 3, 1, 2, 2])
    """

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size, return_indices)

    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


def _ntuple(v, n):
    return (v,) * n if isinstance(v, (int, float)) else tuple(v)


class _MaxUnpoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._nd)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._nd)
        self.padding = _ntuple(padding, self._nd)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    _nd = 1

    def forward(self, input, indices, output_size=None):
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """Undo ``MaxPool2d``: each value goes back to its pooled index, zeros elsewhere.

    >>> import fnx
    >>> pool, unpool = fnx.nn.MaxPool2d(2, return_indices=True), fnx.nn.MaxUnpool2d(2)
    >>> v, i = pool(fnx.arange(16.).reshape(1, 1, 4, 4))
    >>> unpool(v, i)[0, 0]
    tensor([[ 0.,  0.,  0.,  0.],
            [ 0.,  5.,  0.,  7.],
            [ 0.,  0.,  0.,  0.],
            [ 0., 13.,  0., 15.]])
    """
    _nd = 2

    def forward(self, input, indices, output_size=None):
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    _nd = 3

    def forward(self, input, indices, output_size=None):
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class _LPPoolNd(Module):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling: ``(sum of x**p over each window) ** (1/p)``.

    >>> import fnx
    >>> fnx.nn.LPPool1d(2, 2)(fnx.tensor([[[3.0, 4.0, 6.0, 8.0]]]))
    tensor([[[ 5., 10.]]])
    """

    def forward(self, input):
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class LPPool2d(_LPPoolNd):
    def forward(self, input):
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class LPPool3d(_LPPoolNd):
    def forward(self, input):
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class _FractionalMaxPoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = _ntuple(kernel_size, self._nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else _ntuple(output_size, self._nd)
        self.output_ratio = None if output_ratio is None else _ntuple(output_ratio, self._nd)
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a "
                             f"pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Max over pseudo-random overlapping windows, to ``output_size`` or
    ``output_ratio`` times the input size (new windows every call unless
    ``_random_samples`` is given).

    >>> import fnx
    >>> fnx.nn.FractionalMaxPool2d(3, output_ratio=0.5)(fnx.randn(1, 2, 10, 8)).shape
    fnx.Size([1, 2, 5, 4])
    """
    _nd = 2

    def forward(self, input):
        return F.fractional_max_pool2d(input, self.kernel_size, self.output_size,
                                       self.output_ratio, self.return_indices,
                                       _random_samples=self._random_samples)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _nd = 3

    def forward(self, input):
        return F.fractional_max_pool3d(input, self.kernel_size, self.output_size,
                                       self.output_ratio, self.return_indices,
                                       _random_samples=self._random_samples)
