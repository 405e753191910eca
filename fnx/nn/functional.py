"""``fnx.nn.functional``: PyTorch's ``torch.nn.functional`` names over fnx operators.

Each function takes PyTorch's arguments (``reduction='mean'``, ``inplace=False``,
``training=``...) and calls the aten operator that implements it; the few functions with no
operator of their own (``softsign``, ``normalize``, ``bilinear``...) are
short compositions of fnx ops, so they differentiate, trace and compile like the rest.

>>> import fnx
>>> import fnx.nn.functional as F
>>> F.relu(fnx.tensor([-1.0, 2.0]))
tensor([0., 2.])
>>> F.cross_entropy(fnx.tensor([[0.0, 0.0]]), fnx.tensor([1]))
tensor(0.6931)
"""
from __future__ import annotations

import math
import warnings

from .. import api as fnx
from ..api.nn import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d,
                      pdist)
from ..core.grad_mode import no_grad
from ..core import sdp_backends
from ..graph.tracer import read_traced
from ..ir.variants import write_result
from ..ops import aten
from ._functional_pooling import *  # noqa: F403 - adaptive max, unpool, LP, fractional, LRN
from ._functional_pooling import __all__ as _pooling_all
# losses and distances live in their own module; they are part of this namespace
from ._loss import (binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss,
                    cosine_similarity, cross_entropy, gaussian_nll_loss, hinge_embedding_loss,
                    huber_loss, kl_div, l1_loss, margin_ranking_loss, mse_loss, nll_loss,
                    pairwise_distance, poisson_nll_loss, smooth_l1_loss, soft_margin_loss)
# resampling (interpolate, grid_sample, ...) lives in its own module too
from ._functional_vision import (affine_grid, channel_shuffle, grid_sample, interpolate,
                                 native_channel_shuffle, pixel_shuffle, pixel_unshuffle, upsample,
                                 upsample_bilinear, upsample_nearest)

from ._loss import (multi_margin_loss, multilabel_margin_loss,  # noqa: I001 - issue 19's losses
                    multilabel_soft_margin_loss, triplet_margin_loss,
                    triplet_margin_with_distance_loss)
from ._ctc import ctc_loss
from ._functional_random import *  # noqa: F403 - alpha dropout, rrelu, gumbel_softmax
from ._functional_random import __all__ as _random_all
from ._functional_conv_tbc import conv_tbc
from ._functional_linear_cross_entropy import linear_cross_entropy
from ._functional_grouped_mm import grouped_mm
from ..api.inplace_forms import celu_, selu_  # noqa: E402, I001 - issue 14's in-place forms

__all__ = [
    # activations
    "relu", "relu_", "relu6", "elu", "elu_", "selu", "celu", "leaky_relu", "leaky_relu_",
    "selu_", "celu_",
    "prelu", "glu", "gelu", "logsigmoid", "hardshrink", "tanhshrink", "softsign", "softplus",
    "softmin", "softmax", "softshrink", "log_softmax", "tanh", "sigmoid", "hardsigmoid",
    "hardtanh", "hardtanh_", "silu", "mish", "hardswish", "threshold", "threshold_",
    # linear, convolution, pooling
    "linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "unfold", "fold", "max_pool1d", "max_pool2d",
    "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    # normalization, dropout, sparse
    "batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "normalize",
    "dropout", "dropout1d", "dropout2d", "dropout3d", "embedding", "embedding_bag",
    "one_hot",
    # distances, losses
    "pairwise_distance", "cosine_similarity", "pdist", "l1_loss", "mse_loss",
    "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss",
    "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
    "gaussian_nll_loss", "poisson_nll_loss",
    "ctc_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
    "multilabel_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
    # vision, attention
    "pad", "interpolate", "pixel_shuffle", "pixel_unshuffle", "scaled_dot_product_attention",
    "multi_head_attention_forward", "upsample", "upsample_nearest", "upsample_bilinear",
    "grid_sample", "affine_grid", "channel_shuffle", "native_channel_shuffle",
] + _pooling_all + _random_all + ["conv_tbc", "linear_cross_entropy", "grouped_mm"]


def _inplace(input, result):
    """``input`` overwritten with ``result`` (the ``inplace=True`` form)."""
    return input.copy_(result)


def _act(name, op, input, inplace, *args):
    """``op(input, *args)``; with ``inplace``, written into ``input`` as ``name``
    (computed from a copy when autograd records, so the gradient is the out-of-place one)."""
    return write_result(name, op, input, *args) if inplace else op(input, *args)


# ----------------------------------------------------------------------------- activations

def relu(input, inplace=False):
    """``max(input, 0)``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.relu(fnx.tensor([-1.0, 1.0]))
    tensor([0., 1.])
    """
    return aten.relu_.default(input) if inplace else aten.relu.default(input)


def relu_(input):
    """In-place ``relu``."""
    return aten.relu_.default(input)


def relu6(input, inplace=False):
    """``min(max(input, 0), 6)``."""
    return _act("relu6_", aten.relu6.default, input, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``input`` clamped to ``[min_val, max_val]``."""
    return _act("hardtanh_", aten.hardtanh.default, input, inplace, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def elu(input, alpha=1.0, inplace=False):
    """``x`` for positive ``x``, else ``alpha * (exp(x) - 1)``."""
    return _act("elu_", aten.elu.default, input, inplace, alpha)


def elu_(input, alpha=1.0):
    return elu(input, alpha, True)


def selu(input, inplace=False):
    return _act("selu_", aten.selu.default, input, inplace)


def celu(input, alpha=1.0, inplace=False):
    return _act("celu_", aten.celu.default, input, inplace, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` for positive ``x``, else ``negative_slope * x``."""
    return _act("leaky_relu_", aten.leaky_relu.default, input, inplace, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


def prelu(input, weight):
    return aten.prelu.default(input, weight)


def glu(input, dim=-1):
    """``a * sigmoid(b)`` for the two halves ``a, b`` of ``input`` along ``dim``."""
    return aten.glu.default(input, dim)


def gelu(input, approximate="none"):
    """Gaussian error linear unit; ``approximate='tanh'`` for the tanh approximation.

    >>> import fnx, fnx.nn.functional as F
    >>> F.gelu(fnx.tensor([1.0])), F.gelu(fnx.tensor([1.0]), approximate="tanh")
    (tensor([0.8413]), tensor([0.8412]))
    """
    return aten.gelu.default(input, approximate=approximate)


def logsigmoid(input):
    return aten.log_sigmoid.default(input)


def hardshrink(input, lambd=0.5):
    return aten.hardshrink.default(input, lambd)


def softshrink(input, lambd=0.5):
    return aten.softshrink.default(input, lambd)


def tanhshrink(input):
    return aten.tanhshrink.default(input)


def softsign(input):
    """``input / (1 + |input|)``."""
    return input / (aten.abs.default(input) + 1)


def softplus(input, beta=1.0, threshold=20.0):
    return aten.softplus.default(input, beta, threshold)


def _softmax_dim(name, ndim):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  f"to include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.softmax(fnx.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim)
    return aten.softmax.int(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input)``."""
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim)
    return aten.softmax.int(-input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim)
    return aten.log_softmax.int(input, dim, dtype)


def tanh(input):
    return aten.tanh.default(input)


def sigmoid(input):
    return aten.sigmoid.default(input)


def hardsigmoid(input, inplace=False):
    return _act("hardsigmoid_", aten.hardsigmoid.default, input, inplace)


def silu(input, inplace=False):
    """``x * sigmoid(x)``."""
    return _act("silu_", aten.silu.default, input, inplace)


def mish(input, inplace=False):
    return _act("mish_", aten.mish.default, input, inplace)


def hardswish(input, inplace=False):
    return _act("hardswish_", aten.hardswish.default, input, inplace)


def threshold(input, threshold, value, inplace=False):
    """``value`` where ``input <= threshold``, else ``input``."""
    return _act("threshold_", aten.threshold.default, input, inplace, threshold, value)


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, True)


# ----------------------------------------------------------------------------- linear

def linear(input, weight, bias=None):
    """``input @ weight.T + bias``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.linear(fnx.ones(2, 3), fnx.ones(4, 3), fnx.zeros(4)).shape
    fnx.Size([2, 4])
    """
    return aten.linear.default(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij x1[..., i] * weight[o, i, j] * x2[..., j] + bias[o]``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.bilinear(fnx.ones(2, 3), fnx.ones(2, 4), fnx.ones(5, 3, 4)).shape
    fnx.Size([2, 5])
    """
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} "
                           f"and {input2.ndim}")
    for d, (a, b) in enumerate(zip(input1.shape[:-1], input2.shape[:-1])):
        if a != b:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: "
                               f"got {a} and {b}")
    if weight.ndim != 3 or input1.shape[-1] != weight.shape[1] or \
            input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input sizes {list(input1.shape)} and "
                           f"{list(input2.shape)} do not match the weight of size "
                           f"{list(weight.shape)} (expected [out, {input1.shape[-1]}, "
                           f"{input2.shape[-1]}])")
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1] if bias.ndim else 0} but expected "
                           f"{weight.shape[0]}")
    out = fnx.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


# ----------------------------------------------------------------------------- convolution

# the top-level functions, imported from their module (so that importing fnx.nn early in
# fnx/__init__ works too)


def _pair(x, n=2):
    return list(x) if isinstance(x, (list, tuple)) else [x] * n


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding ``kernel_size`` blocks of a ``(N, C, H, W)`` input as columns (im2col)."""
    return aten.im2col.default(input, _pair(kernel_size), _pair(dilation), _pair(padding),
                               _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum columns back into an image (col2im), the adjoint of ``unfold``."""
    return aten.col2im.default(input, _pair(output_size), _pair(kernel_size), _pair(dilation),
                               _pair(padding), _pair(stride))


# ----------------------------------------------------------------------------- pooling

def _stride(stride):
    return [] if stride is None else stride


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:
        return aten.max_pool1d_with_indices.default(input, _pair(kernel_size, 1),
                                                    _stride(stride), padding, dilation,
                                                    ceil_mode)
    return aten.max_pool1d.default(input, kernel_size, _stride(stride), padding, dilation,
                                   ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-D max pooling over ``(N, C, H, W)`` or ``(C, H, W)``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.max_pool2d(fnx.arange(16.).reshape(1, 1, 4, 4), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    if return_indices:
        return aten.max_pool2d_with_indices.default(input, _pair(kernel_size),
                                                    _stride(stride), _pair(padding),
                                                    _pair(dilation), ceil_mode)
    return aten.max_pool2d.default(input, _pair(kernel_size), _stride(stride),
                                   _pair(padding), _pair(dilation), ceil_mode)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:
        return aten.max_pool3d_with_indices.default(input, _pair(kernel_size, 3),
                                                    _stride(stride), _pair(padding, 3),
                                                    _pair(dilation, 3), ceil_mode)
    return aten.max_pool3d.default(input, _pair(kernel_size, 3), _stride(stride),
                                   _pair(padding, 3), _pair(dilation, 3), ceil_mode)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    return aten.avg_pool1d.default(input, _pair(kernel_size, 1), _stride(stride),
                                   _pair(padding, 1), ceil_mode, count_include_pad)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-D average pooling.

    >>> import fnx, fnx.nn.functional as F
    >>> F.avg_pool2d(fnx.arange(16.).reshape(1, 1, 4, 4), 2)
    tensor([[[[ 2.5000,  4.5000],
              [10.5000, 12.5000]]]])
    """
    return aten.avg_pool2d.default(input, _pair(kernel_size), _stride(stride), _pair(padding),
                                   ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return aten.avg_pool3d.default(input, _pair(kernel_size, 3), _stride(stride),
                                   _pair(padding, 3), ceil_mode, count_include_pad,
                                   divisor_override)


def _out_size(input, output_size, n):
    sizes = _pair(output_size, n)
    return [input.shape[input.ndim - n + i] if s is None else s for i, s in enumerate(sizes)]


def adaptive_avg_pool1d(input, output_size):
    return aten.adaptive_avg_pool1d.default(input, _pair(output_size, 1))


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to ``output_size`` (``None`` keeps that dim).

    >>> import fnx, fnx.nn.functional as F
    >>> F.adaptive_avg_pool2d(fnx.ones(1, 3, 5, 7), 1).shape
    fnx.Size([1, 3, 1, 1])
    """
    return aten.adaptive_avg_pool2d.default(input, _out_size(input, output_size, 2))


def adaptive_avg_pool3d(input, output_size):
    return aten.adaptive_avg_pool3d.default(input, _out_size(input, output_size, 3))


# ----------------------------------------------------------------------------- normalization

def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    """Normalize over every dim but 1; in training the running statistics are updated
    in place (``momentum``, unbiased variance), in eval they are used.

    >>> import fnx, fnx.nn.functional as F
    >>> F.batch_norm(fnx.tensor([[1.0], [3.0]]), None, None, training=True, eps=0.0)
    tensor([[-1.],
            [ 1.]])
    """
    if training:
        size = list(input.shape)
        if math.prod(s for i, s in enumerate(size) if i != 1) == 1:     # values per channel
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {fnx.Size(size)}")
    return aten.batch_norm.default(input, weight, bias, running_mean, running_var, training,
                                   momentum, eps, False)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-05):
    return aten.instance_norm.default(input, weight, bias, running_mean, running_var,
                                      use_input_stats, momentum, eps, False)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalize over the trailing ``normalized_shape`` dims.

    >>> import fnx, fnx.nn.functional as F
    >>> F.layer_norm(fnx.tensor([[1.0, 3.0]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    return fnx.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    return aten.group_norm.default(input, num_groups, weight, bias, eps, False)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return fnx.rms_norm(input, normalized_shape, weight, eps)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.normalize(fnx.tensor([[3.0, 4.0]]))
    tensor([[0.6000, 0.8000]])
    """
    norm = aten.linalg_vector_norm.default(input, p, [dim], True)
    return input / aten.clamp.default(norm, eps).expand_as(input)


# ----------------------------------------------------------------------------- dropout

def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the others by ``1/(1-p)``
    (when ``training``).

    >>> import fnx, fnx.nn.functional as F
    >>> F.dropout(fnx.ones(3), 0.5, training=False)
    tensor([1., 1., 1.])
    """
    _check_p(p)
    out = aten.dropout.default(input, p, training)
    return _inplace(input, out) if inplace and out is not input else out


def _feature_dropout(input, p, training, inplace, n, name, batch_dim=True):
    _check_p(p)
    if input.ndim not in (n + 1, n + 2):
        warnings.warn(f"{name}: Received a {input.ndim}-D input to {name}, which is deprecated; "
                      f"{name} zeroes whole channels of {n + 1}-D or {n + 2}-D input (a channel "
                      f"dim, {n} spatial dims, an optional batch dim); use dropout for "
                      "element-wise dropout", stacklevel=3)
    # dropout2d never adds the batch dim (torch keeps its historical behaviour): a 3-D input
    # is read as (N, C, L) and a 2-D one as (N, C), whose "channels" are single elements
    batched = input.ndim == n + 2 or not batch_dim
    x = input if batched else input.unsqueeze(0)
    out = aten.feature_dropout.default(x, p, training)
    out = out if batched else out.squeeze(0)
    return _inplace(input, out) if inplace and out is not input else out


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a ``(C, L)`` or ``(N, C, L)`` input with probability ``p``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.dropout1d(fnx.ones(2, 3), 0.5, training=False)
    tensor([[1., 1., 1.],
            [1., 1., 1.]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                           "input (a channel dim, 1 spatial dim and an optional batch dim)")
    return _feature_dropout(input, p, training, inplace, 1, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels (2-D feature maps) of an ``(N, C, H, W)`` input with probability
    ``p``. As in torch, a 3-D input is read as ``(N, C, L)`` (with a warning), not as an
    unbatched ``(C, H, W)``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.dropout2d(fnx.ones(1, 2, 1, 2), 0.5, training=False)
    tensor([[[[1., 1.]],
    <BLANKLINE>
             [[1., 1.]]]])
    """
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d; it is read as (N, C, L) and "
                      "gets channel-wise 1D dropout (use dropout1d for that)", stacklevel=2)
    return _feature_dropout(input, p, training, inplace, 2, "dropout2d", batch_dim=False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels (3-D feature maps) of a ``(C, D, H, W)`` or ``(N, C, D, H, W)``
    input with probability ``p``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.dropout3d(fnx.ones(1, 1, 1, 2), 0.5, training=False)
    tensor([[[[1., 1.]]]])
    """
    return _feature_dropout(input, p, training, inplace, 3, "dropout3d")


# ----------------------------------------------------------------------------- sparse

def _padding_idx(padding_idx, num):
    if padding_idx is None:
        return -1
    if padding_idx > 0 and padding_idx >= num:
        raise AssertionError("Padding_idx must be within num_embeddings")
    if padding_idx < 0:
        if padding_idx < -num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx += num
    return padding_idx


def _embedding_renorm_(weight, input, max_norm, norm_type):
    """Rescale, in place, the rows ``input`` picks whose norm exceeds ``max_norm``."""
    with no_grad():
        idx = input.reshape(-1)
        rows = weight.index_select(0, idx)
        norms = aten.linalg_vector_norm.default(rows, norm_type, [1], True)
        scale = fnx.where(norms > max_norm, max_norm / (norms + 1e-7), fnx.ones_like(norms))
        weight.index_put_((idx,), rows * scale)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by the integer ``input``; the ``padding_idx`` row gets no
    gradient; ``max_norm`` renormalizes the picked rows of ``weight`` in place first.

    >>> import fnx, fnx.nn.functional as F
    >>> F.embedding(fnx.tensor([1, 0]), fnx.tensor([[0., 1.], [2., 3.]]))
    tensor([[2., 3.],
            [0., 1.]])
    """
    pad = _padding_idx(padding_idx, weight.shape[0])
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    return aten.embedding.default(weight, input, pad, scale_grad_by_freq, sparse)


_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sum, mean or max of bags of embeddings (2-D ``input``: one bag a row)."""
    if mode not in _BAG_MODES:
        raise ValueError(f"mode has to be one of sum, mean or max, but got {mode}")
    if input.ndim == 2 and offsets is not None:
        raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is "
                         f"a mini-batch of fixed length sequences. However, found offsets of "
                         f"type {type(offsets)}")
    if input.ndim == 1 and offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if input.ndim not in (1, 2):
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    pad = None if padding_idx is None else _padding_idx(padding_idx, weight.shape[0])
    if input.ndim == 2:
        return fnx.embedding_bag(weight, input, None, scale_grad_by_freq, _BAG_MODES[mode],
                                 sparse, per_sample_weights, include_last_offset, pad)[0]
    return fnx.embedding_bag(weight, input, offsets, scale_grad_by_freq, _BAG_MODES[mode],
                             sparse, per_sample_weights, include_last_offset, pad)[0]


def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding with a trailing dim of ``num_classes``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.one_hot(fnx.tensor([0, 2]), 3)
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    return aten.one_hot.default(tensor, num_classes)


# ----------------------------------------------------------------------------- vision

def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad) // 2`` dims (``pad`` lists the last dim first).

    >>> import fnx, fnx.nn.functional as F
    >>> F.pad(fnx.ones(1, 2), (1, 0), value=0.0)
    tensor([[0., 1., 1.]])
    """
    return aten.pad.default(input, list(pad), mode, value)


# ----------------------------------------------------------------------------- attention

def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(q @ k.T * scale + mask) @ v`` (``is_causal``: lower-triangular mask).

    >>> import fnx, fnx.nn.functional as F
    >>> F.scaled_dot_product_attention(fnx.ones(1, 2, 4), fnx.ones(1, 3, 4),
    ...                                fnx.ones(1, 3, 5)).shape
    fnx.Size([1, 2, 5])
    """
    # (under fnx.compile the flag is guarded, so a compiled call raises as eager does)
    sdp_backends.check_available(read_traced(sdp_backends.state["available"],
                                             sdp_backends.state, "available",
                                             "an attention backend is enabled"))
    return aten.scaled_dot_product_attention.default(query, key, value, attn_mask, dropout_p,
                                                     is_causal, scale=scale,
                                                     enable_gqa=enable_gqa)


def _canonical_mask(mask, name, target_dtype):
    """Boolean masks (True = masked out) become additive float masks, as PyTorch."""
    if mask is None:
        return None
    if mask.dtype is fnx.bool:
        return fnx.zeros(mask.shape, dtype=target_dtype, device=mask.device).masked_fill(
            mask, float("-inf"))
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention over ``(L, N, E)`` (or unbatched ``(L, E)``) inputs, as
    ``torch.nn.functional.multi_head_attention_forward``; returns ``(output, weights)``."""
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k/static_v are not "
                                  "supported")
    if key_padding_mask is not None and attn_mask is not None and \
            key_padding_mask.dtype != attn_mask.dtype:
        warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. "
                      "Use same type for both instead.", stacklevel=2)
    batched = query.ndim == 3
    if query.ndim not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.ndim}-D query tensor")
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use "
                           "the Transformer module method `generate_square_subsequent_mask` "
                           "to create this mask.")
    # with no padding mask and no weights asked for, the causal hint replaces the mask
    causal_only = is_causal and key_padding_mask is None and not need_weights
    if causal_only:
        attn_mask = None
    # projections
    if not use_separate_proj_weight:
        if query is key and key is value:
            q, k, v = linear(query, in_proj_weight, in_proj_bias).chunk(3, dim=-1)
        else:
            w_q, w_k, w_v = in_proj_weight.chunk(3)
            b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else \
                in_proj_bias.chunk(3)
            q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)
    else:
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q = linear(query, q_proj_weight, b_q)
        k = linear(key, k_proj_weight, b_k)
        v = linear(value, v_proj_weight, b_v)
    attn_mask = _canonical_mask(attn_mask, "attn_mask", q.dtype)
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
    if bias_k is not None and bias_v is not None:
        k = fnx.cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = fnx.cat([v, bias_v.expand(1, bsz, embed_dim)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    # (L, N, E) -> (N * H, L, D)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        k = fnx.cat([k, fnx.zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype,
                                  device=k.device)], 1)
        v = fnx.cat([v, fnx.zeros(bsz * num_heads, 1, head_dim, dtype=v.dtype,
                                  device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    s = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, s):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, s)}, but got "
                                 f"{key_padding_mask.shape}")
        kpm = _canonical_mask(key_padding_mask, "key_padding_mask", q.dtype)
        kpm = kpm.reshape(bsz, 1, 1, s).expand(bsz, num_heads, 1, s)
        kpm = kpm.reshape(bsz * num_heads, 1, s)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        scores = fnx.matmul(q * (1.0 / math.sqrt(head_dim)), k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = softmax(scores, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = fnx.matmul(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
        weights = weights.reshape(bsz, num_heads, tgt_len, s)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None and attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
        attn_mask = attn_mask.unsqueeze(0)
    elif attn_mask is not None:
        attn_mask = attn_mask.reshape(bsz, num_heads, -1, s)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, s, head_dim)
    v = v.reshape(bsz, num_heads, s, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, causal_only)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if not batched:
        out = out.squeeze(1)
    return out, None
