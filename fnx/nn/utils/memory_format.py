"""Laying out convolution weights in a memory format, as
``torch.nn.utils.convert_conv2d_weight_memory_format`` (and the 3-d form).

>>> import fnx
>>> net = fnx.nn.Sequential(fnx.nn.Conv2d(3, 4, 3))
>>> _ = fnx.nn.utils.convert_conv2d_weight_memory_format(net, fnx.channels_last)
>>> net[0].weight.is_contiguous(memory_format=fnx.channels_last)
True
"""
from __future__ import annotations

from ...core.grad_mode import no_grad
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        with no_grad():
            module.weight.data = module.weight.detach().clone().contiguous(
                memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Lay out the weights of ``module``'s ``Conv2d``/``ConvTranspose2d`` layers (the
    module itself and its descendants) in ``memory_format``; returns ``module``."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """The same for ``Conv3d``/``ConvTranspose3d`` weights (``fnx.channels_last_3d``)."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
