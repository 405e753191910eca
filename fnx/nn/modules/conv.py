"""Convolutions: ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d``."""
from __future__ import annotations

import math

from ... import api as fnx
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]

_PAD_MODES = {"zeros", "reflect", "replicate", "circular"}


def _ntuple(x, n):
    if isinstance(x, (list, tuple)):
        if len(x) != n:
            raise ValueError(f"expected {n} values, got {len(x)}: {x}")
        return tuple(x)
    return (x,) * n


class _ConvNd(Module):
    _nd = 0
    transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        n = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PAD_MODES:
            raise ValueError(f"padding_mode must be one of {sorted(_PAD_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        if self.transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(fnx.empty(*shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(fnx.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _padded(self, input):
        """``input`` padded by ``padding_mode`` (non-zero modes pad before the conv)."""
        if self.padding_mode == "zeros":
            return input, self.padding
        if isinstance(self.padding, str):
            raise ValueError(f"padding_mode='{self.padding_mode}' needs numeric padding")
        pads = []
        for p in reversed(self.padding):
            pads += [p, p]
        return F.pad(input, pads, mode=self.padding_mode), 0

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _Conv(_ConvNd):
    """Conv1d/2d/3d: PyTorch's constructor signature; ``forward`` calls ``F.conv<N>d``."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         0, groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        x, pad = self._padded(input)
        fn = getattr(F, f"conv{self._nd}d")
        return fn(x, self.weight, self.bias, self.stride, pad, self.dilation, self.groups)


class Conv1d(_Conv):
    """1-D convolution over ``(N, C_in, L)`` (or unbatched ``(C_in, L)``).

    >>> import fnx
    >>> fnx.nn.Conv1d(2, 4, 3)(fnx.ones(1, 2, 10)).shape
    fnx.Size([1, 4, 8])
    """
    _nd = 1


class Conv2d(_Conv):
    """2-D convolution over ``(N, C_in, H, W)`` (or unbatched ``(C_in, H, W)``).

    >>> import fnx
    >>> m = fnx.nn.Conv2d(3, 8, 3, padding=1)
    >>> m
    Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
    >>> m(fnx.ones(2, 3, 5, 5)).shape
    fnx.Size([2, 8, 5, 5])
    """
    _nd = 2


class Conv3d(_Conv):
    """3-D convolution over ``(N, C_in, D, H, W)``."""
    _nd = 3


class _ConvTransposeNd(_ConvNd):
    transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{type(self).__name__}')
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__} does not support string padding")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size):
        """The output_padding that gives ``output_size`` (PyTorch's rule and errors)."""
        if output_size is None:
            return list(self.output_padding)
        n = self._nd
        output_size = list(output_size)
        if len(output_size) == n + 2 or len(output_size) == n + 1 and input.ndim == n + 1:
            output_size = output_size[-n:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must "
                             f"have {n} or {n + 2} elements (got {len(output_size)})")
        res = []
        for d in range(n):
            size = input.shape[input.ndim - n + d]
            lo = ((size - 1) * self.stride[d] - 2 * self.padding[d] +
                  self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            hi = lo + self.stride[d] - 1
            if not lo <= output_size[d] <= hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {lo} to {hi} (for an input of "
                                 f"{list(input.shape[-n:])})")
            res.append(output_size[d] - lo)
        return res

    def forward(self, input, output_size=None):
        fn = getattr(F, f"conv_transpose{self._nd}d")
        return fn(input, self.weight, self.bias, self.stride, self.padding,
                  self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution (the gradient of ``Conv1d`` with respect to its input)."""
    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution; ``forward(input, output_size=None)``.

    >>> import fnx
    >>> fnx.nn.ConvTranspose2d(4, 2, 3, stride=2)(fnx.ones(1, 4, 5, 5)).shape
    fnx.Size([1, 2, 11, 11])
    """
    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution."""
    _nd = 3


class _LazyConvMixin(LazyModuleMixin):
    """The lazy form of a convolution: ``in_channels`` from the first input's channel dim
    (dim 1, or dim 0 of an unbatched input)."""

    def _lazy_init(self, out_channels, bias, device, dtype):
        # called after the eager __init__ ran with 0 channels
        self.out_channels = out_channels
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if not self.has_uninitialized_params():
            return
        n = self._nd
        if input.ndim not in (n + 1, n + 2):
            raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input "
                               f"to {type(self).__name__}, but got input of size: "
                               f"{list(input.shape)}")
        self.in_channels = input.shape[1 if input.ndim == n + 2 else 0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups) + self.kernel_size
        else:
            shape = (self.out_channels, self.in_channels // self.groups) + self.kernel_size
        self.weight.materialize(shape)
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()



class _LazyConv(_LazyConvMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        if groups > 0 and out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        if groups > 0 and out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A ``Conv1d`` whose ``in_channels`` comes from its first input (``nn.modules.lazy``)."""
    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A ``Conv2d`` whose ``in_channels`` comes from its first input.

    >>> import fnx
    >>> m = fnx.nn.LazyConv2d(8, 3, padding=1)
    >>> m(fnx.ones(1, 3, 4, 4)).shape, m.in_channels
    (fnx.Size([1, 8, 4, 4]), 3)
    """
    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """A ``Conv3d`` whose ``in_channels`` comes from its first input."""
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ``ConvTranspose1d`` whose ``in_channels`` comes from its first input."""
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ``ConvTranspose2d`` whose ``in_channels`` comes from its first input.

    >>> import fnx
    >>> fnx.nn.LazyConvTranspose2d(2, 3, stride=2)(fnx.ones(1, 5, 4, 4)).shape
    fnx.Size([1, 2, 9, 9])
    """
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ``ConvTranspose3d`` whose ``in_channels`` comes from its first input."""
    cls_to_become = ConvTranspose3d
