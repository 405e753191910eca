"""``conv_tbc``: 1-D convolution of time-batch-channel input (``F.conv_tbc`` and
``torch.conv_tbc``), as ``conv1d`` on the input seen as batch-channel-time."""
from __future__ import annotations

from ..api.nn import conv1d

__all__ = ["conv_tbc"]


def conv_tbc(input, weight, bias, pad=0):
    """1-D convolution of ``(time, batch, in)`` input with a ``(kernel, in, out)`` weight
    and ``(out,)`` bias, zero-padded by ``pad`` in time; the result is ``(time', batch, out)``.

    >>> import fnx
    >>> fnx.conv_tbc(fnx.ones(3, 1, 1), fnx.ones(2, 1, 1), fnx.zeros(1)).flatten()
    tensor([2., 2.])
    """
    if input.ndim != 3:
        raise RuntimeError("conv_tbc: Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("conv_tbc: Weight tensor must have 3 dims: kernel_width, "
                           "in_channels, out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("conv_tbc: Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("conv_tbc: Input dim 2 (input channels) is not == dim 1 in the "
                           "weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("conv_tbc: Bias size must equal dim 2 in the weight tensor "
                           "(output channels).")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, 1, pad)
    return out.permute(2, 0, 1)
