"""Folding an eval-mode batch norm into the convolution or linear layer before it
(``torch.nn.utils.fusion``): ``y = bn(conv(x))`` becomes one conv with scaled weights
and a shifted bias."""
from __future__ import annotations

import copy

from ... import api as fnx
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of ``conv`` that computes ``bn(conv(x))`` (both in eval mode).

    >>> import fnx
    >>> conv, bn = fnx.nn.Conv2d(2, 3, 3).eval(), fnx.nn.BatchNorm2d(3).eval()
    >>> x = fnx.randn(1, 2, 5, 5)
    >>> fused = fnx.nn.utils.fuse_conv_bn_eval(conv, bn)
    >>> bool(fnx.allclose(fused(x), bn(conv(x)), atol=1e-5))
    True
    """
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("batch norm without running statistics cannot be fused")
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
        bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The (weight, bias) parameters of a convolution followed by an eval batch norm;
    ``transpose``: the weight of a transposed convolution (output channels on dim 1)."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = fnx.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = fnx.ones_like(bn_rm)
    if bn_b is None:
        bn_b = fnx.zeros_like(bn_rm)
    inv_std = fnx.rsqrt(bn_rv + bn_eps)
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.ndim - 2)
    fused_w = (conv_w * (bn_w * inv_std).reshape(shape)).to(w_dtype)
    fused_b = ((conv_b - bn_rm) * inv_std * bn_w + bn_b).to(b_dtype)
    return (Parameter(fused_w.detach(), conv_w.requires_grad),
            Parameter(fused_b.detach(), conv_b.requires_grad))


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` that computes ``bn(linear(x))`` (both in eval mode).

    >>> import fnx
    >>> lin, bn = fnx.nn.Linear(4, 3).eval(), fnx.nn.BatchNorm1d(3).eval()
    >>> x = fnx.randn(2, 4)
    >>> bool(fnx.allclose(fnx.nn.utils.fuse_linear_bn_eval(lin, bn)(x), bn(lin(x)),
    ...                   atol=1e-5))
    True
    """
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features or "
                             "bn.num_features must be 1")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("batch norm without running statistics cannot be fused")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
        bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The (weight, bias) parameters of a linear layer followed by an eval batch norm."""
    if linear_b is None:
        linear_b = fnx.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = fnx.ones_like(bn_rm)
    if bn_b is None:
        bn_b = fnx.zeros_like(bn_rm)
    scale = bn_w * fnx.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * scale.unsqueeze(-1)
    fused_b = (linear_b - bn_rm) * scale + bn_b
    return (Parameter(fused_w.detach(), linear_w.requires_grad),
            Parameter(fused_b.detach(), linear_b.requires_grad))
