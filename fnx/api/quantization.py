"""PyTorch's fake quantization functions (float in, float out; the ops and their corner
cases are described in ``fnx/ir/aten/quantization.py``). fnx has no quantized dtypes.

>>> import fnx
>>> fnx.fake_quantize_per_tensor_affine(fnx.tensor([0.3, 0.75, 9.0]), 0.5, 0, -4, 4)
tensor([0.5000, 1.0000, 2.0000])
"""
from __future__ import annotations

from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor
from ..ops import aten

__all__ = ["fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine"]


def _no_qparam_grad(function, **qparams):
    """PyTorch's refusal of a scale or zero point that requires grad (its kernels have no
    derivative for them)."""
    for name, t in qparams.items():
        if isinstance(t, Tensor) and t.requires_grad and is_grad_enabled():
            raise RuntimeError(f"The function '{function}' is not differentiable with respect "
                               f"to argument '{name}'. This input cannot have requires_grad "
                               f"True.")


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """``input`` quantized to ``quant_min..quant_max`` with one ``scale`` and ``zero_point``
    (Python numbers or one-element tensors) and mapped back to floats, as
    ``torch.fake_quantize_per_tensor_affine``; its gradient passes where no clamping
    happened.

    >>> import fnx
    >>> x = fnx.tensor([-1.0, 0.26, 0.74], requires_grad=True)
    >>> y = fnx.fake_quantize_per_tensor_affine(x, fnx.tensor(0.25), fnx.tensor(2), 0, 5)
    >>> y.tolist()
    [-0.5, 0.25, 0.75]
    >>> y.sum().backward(); x.grad
    tensor([0., 1., 1.])
    """
    if isinstance(scale, Tensor) or isinstance(zero_point, Tensor):
        _no_qparam_grad("_fake_quantize_per_tensor_affine_cachemask_tensor_qparams",
                        scale=scale, zero_point=zero_point)
        return aten.fake_quantize_per_tensor_affine.tensor_qparams(
            input, scale, zero_point, quant_min, quant_max)
    return aten.fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max)


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """``input`` quantized with one ``scale`` and ``zero_point`` per slice along ``axis``
    (1-D tensors: scale float32, zero point int32, float32 or float16) and mapped back, as
    ``torch.fake_quantize_per_channel_affine``.

    >>> import fnx
    >>> x = fnx.tensor([[0.3, 0.9], [0.3, 0.9]])
    >>> fnx.fake_quantize_per_channel_affine(x, fnx.tensor([0.5, 0.25]),
    ...                                      fnx.tensor([0, 0], dtype=fnx.int32), 0, 0, 3)
    tensor([[0.5000, 1.0000],
            [0.2500, 0.7500]])
    """
    _no_qparam_grad("fake_quantize_per_channel_affine_cachemask", scale=scale,
                    zero_point=zero_point)
    return aten.fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min,
                                                 quant_max)
