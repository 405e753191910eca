"""Public neural-network functions at the top level (``fnx.softmax``, ``fnx.conv2d``, ...).

These are the functions PyTorch exposes as ``torch.<name>`` (``fnx.nn.functional`` is
built on them and on ``fnx.ops.aten``); each picks the operator overload and passes the
arguments through.  ``Tensor.softmax`` and ``Tensor.log_softmax`` are attached here.
"""
from __future__ import annotations

from ..core.tensor import tensor_method
from ..ops import aten

__all__ = ["softmax", "log_softmax", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d", "convolution", "layer_norm",
           "native_layer_norm", "group_norm", "native_group_norm", "batch_norm",
           "native_batch_norm", "instance_norm", "rms_norm", "dropout", "feature_dropout",
           "native_dropout", "embedding", "embedding_bag", "max_pool1d", "max_pool2d",
           "max_pool3d", "max_pool1d_with_indices", "avg_pool1d", "adaptive_avg_pool1d",
           "pdist", "cdist", "cosine_similarity", "pairwise_distance", "selu", "celu",
           "prelu", "threshold", "hardshrink", "binary_cross_entropy_with_logits", "kl_div"]


@tensor_method()
def softmax(input, dim, dtype=None):
    """Softmax along ``dim``; with ``dtype`` the input is converted first, as
    ``torch.softmax``.

    >>> import fnx
    >>> fnx.softmax(fnx.tensor([0.0, 0.0]), 0)
    tensor([0.5000, 0.5000])
    """
    return aten.softmax.int(input, dim, dtype)


@tensor_method()
def log_softmax(input, dim, dtype=None):
    """Log of the softmax along ``dim``, computed stably, as ``torch.log_softmax``.

    >>> import fnx
    >>> fnx.log_softmax(fnx.tensor([0.0, 0.0]), 0).exp()
    tensor([0.5000, 0.5000])
    """
    return aten.log_softmax.int(input, dim, dtype)


# ----------------------------------------------------------------------------- convolution

def _conv(nd):
    name = f"conv{nd}d"
    packet = getattr(aten, name)

    def fn(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        if isinstance(padding, str):
            return packet.padding(input, weight, bias, stride, padding, dilation, groups)
        return packet.default(input, weight, bias, stride, padding, dilation, groups)
    fn.__name__ = fn.__qualname__ = name
    shape = ", ".join(["1", "1"] + ["5"] * nd)
    kshape = ", ".join(["2", "1"] + ["3"] * nd)
    oshape = ", ".join(["1", "2"] + ["3"] * nd)
    fn.__doc__ = (f"{nd}-D convolution (cross-correlation) over a batch of ``(N, C, ...)`` "
                  f"inputs, as ``torch.{name}``; ``padding`` may be ``'same'`` or "
                  f"``'valid'``.\n\n    >>> import fnx\n"
                  f"    >>> fnx.{name}(fnx.ones({shape}), fnx.ones({kshape})).shape\n"
                  f"    fnx.Size([{oshape}])\n")
    return fn


conv1d, conv2d, conv3d = _conv(1), _conv(2), _conv(3)


def _conv_transpose(nd):
    name = f"conv_transpose{nd}d"
    packet = getattr(aten, name)
    op = packet.default if nd == 1 else packet.input

    def fn(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
           dilation=1):
        return op(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn.__name__ = fn.__qualname__ = name
    shape = ", ".join(["1", "1"] + ["3"] * nd)
    kshape = ", ".join(["1", "2"] + ["2"] * nd)
    oshape = ", ".join(["1", "2"] + ["4"] * nd)
    fn.__doc__ = (f"{nd}-D transposed convolution, as ``torch.{name}``.\n\n"
                  f"    >>> import fnx\n"
                  f"    >>> fnx.{name}(fnx.ones({shape}), fnx.ones({kshape})).shape\n"
                  f"    fnx.Size([{oshape}])\n")
    return fn


conv_transpose1d, conv_transpose2d, conv_transpose3d = (_conv_transpose(1), _conv_transpose(2),
                                                        _conv_transpose(3))


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """The general convolution every conv function lowers to, as ``torch.convolution``.

    >>> import fnx
    >>> fnx.convolution(fnx.ones(1, 1, 4), fnx.ones(1, 1, 2), None, [1], [0], [1], False,
    ...                 [0], 1)
    tensor([[[2., 2., 2.]]])
    """
    return aten.convolution(input, weight, bias, stride, padding, dilation, transposed,
                            output_padding, groups)


# ----------------------------------------------------------------------------- normalization

def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """Normalize over the trailing ``normalized_shape`` dims, as ``torch.layer_norm``.

    >>> import fnx
    >>> fnx.layer_norm(fnx.tensor([[1.0, 3.0]]), [2])
    tensor([[-1.0000,  1.0000]])
    """
    return aten.layer_norm(input, _shape(normalized_shape), weight, bias, eps, cudnn_enable)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``(output, mean, rstd)`` of layer norm, as ``torch.native_layer_norm``.

    >>> import fnx
    >>> out, mean, rstd = fnx.native_layer_norm(fnx.ones(3, 4), [4], None, None, 1e-5)
    >>> mean.shape
    fnx.Size([3, 1])
    """
    return aten.native_layer_norm(input, _shape(normalized_shape), weight, bias, eps)


def _shape(s):
    return [s] if isinstance(s, int) else list(s)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """Normalize over groups of channels, as ``torch.group_norm``.

    >>> import fnx
    >>> fnx.group_norm(fnx.tensor([[1.0, 3.0]]), 1)
    tensor([[-1.0000,  1.0000]])
    """
    return aten.group_norm(input, num_groups, weight, bias, eps, cudnn_enabled)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """``(output, mean, rstd)`` of group norm, as ``torch.native_group_norm``.

    >>> import fnx
    >>> fnx.native_group_norm(fnx.ones(2, 4, 3), None, None, 2, 4, 3, 2, 1e-5)[1].shape
    fnx.Size([2, 2])
    """
    return aten.native_group_norm(input, weight, bias, N, C, HxW, group, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """Batch normalization over dim 1, as ``torch.batch_norm``; in training the running
    statistics are updated in place (momentum, unbiased variance).

    >>> import fnx
    >>> fnx.batch_norm(fnx.tensor([[1.0], [3.0]]), None, None, None, None, True, 0.1, 0.0,
    ...                False)
    tensor([[-1.],
            [ 1.]])
    """
    return aten.batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                           eps, cudnn_enabled)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``(output, save_mean, save_invstd)``, as ``torch.native_batch_norm``.

    >>> import fnx
    >>> fnx.native_batch_norm(fnx.ones(4, 3), None, None, None, None, True, 0.1, 1e-5)[1]
    tensor([1., 1., 1.])
    """
    return aten.native_batch_norm(input, weight, bias, running_mean, running_var, training,
                                  momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    """Normalize each (sample, channel) plane, as ``torch.instance_norm``.

    >>> import fnx
    >>> fnx.instance_norm(fnx.tensor([[[1.0, 3.0]]]), None, None, None, None, True, 0.1, 0.0,
    ...                   False)
    tensor([[[-1.,  1.]]])
    """
    return aten.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                              momentum, eps, cudnn_enabled)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalization over the trailing dims, as ``torch.rms_norm``.

    >>> import fnx
    >>> fnx.rms_norm(fnx.tensor([[3.0, 4.0]]), [2], eps=0.0)
    tensor([[0.8485, 1.1314]])
    """
    return aten.rms_norm(input, _shape(normalized_shape), weight, eps)


# ----------------------------------------------------------------------------- dropout

def dropout(input, p, train):
    """Zero elements with probability ``p`` and scale the rest by ``1/(1-p)`` when
    ``train``, as ``torch.dropout``.

    >>> import fnx
    >>> x = fnx.ones(3)
    >>> fnx.dropout(x, 0.5, False) is x
    True
    """
    return aten.dropout(input, p, train)


def feature_dropout(input, p, train):
    """Dropout of whole channels (dim 1), as ``torch.feature_dropout``.

    >>> import fnx
    >>> fnx.feature_dropout(fnx.ones(2, 3, 4), 0.0, True).shape
    fnx.Size([2, 3, 4])
    """
    return aten.feature_dropout(input, p, train)


def native_dropout(input, p, train):
    """``(output, mask)`` of dropout, as ``torch.native_dropout``.

    >>> import fnx
    >>> out, mask = fnx.native_dropout(fnx.ones(3), 0.0, True)
    >>> out, mask
    (tensor([1., 1., 1.]), tensor([True, True, True]))
    """
    return aten.native_dropout(input, p, train)


# ----------------------------------------------------------------------------- embedding

def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by ``indices``, as ``torch.embedding`` (weight first).

    >>> import fnx
    >>> fnx.embedding(fnx.tensor([[0., 1.], [2., 3.]]), fnx.tensor([1, 1]))
    tensor([[2., 3.],
            [2., 3.]])
    """
    return aten.embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embeddings: ``(output, offset2bag, bag_size,
    max_indices)``, as ``torch.embedding_bag``.  ``indices`` may be 2-D (one bag a row).

    >>> import fnx
    >>> w = fnx.tensor([[1., 1.], [2., 2.], [3., 3.]])
    >>> fnx.embedding_bag(w, fnx.tensor([0, 1, 2]), fnx.tensor([0, 2]))[0]
    tensor([[3., 3.],
            [3., 3.]])
    """
    if indices.ndim == 2:
        b, n = indices.shape
        offsets = aten.arange.start_step(0, b * n, max(n, 1), device=indices.device,
                                         dtype=indices.dtype)
        indices = aten.reshape(indices, [b * n])
    return aten._embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                               per_sample_weights, include_last_offset,
                               -1 if padding_idx is None else padding_idx)


# ----------------------------------------------------------------------------- pooling

def _max_pool(nd, with_indices=False):
    name = f"max_pool{nd}d" + ("_with_indices" if with_indices else "")
    op = getattr(aten, name).default

    def fn(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        return op(input, kernel_size, () if stride is None else stride, padding, dilation,
                  ceil_mode)
    fn.__name__ = fn.__qualname__ = name
    shape = ", ".join(["1"] + ["4"] * nd)
    oshape = ", ".join(["1"] + ["2"] * nd)
    res = "[0].shape" if with_indices else ".shape"
    fn.__doc__ = (f"{nd}-D max pooling, as ``torch.{name}``.\n\n    >>> import fnx\n"
                  f"    >>> fnx.{name}(fnx.ones({shape}), 2){res}\n"
                  f"    fnx.Size([{oshape}])\n")
    return fn


max_pool1d, max_pool2d, max_pool3d = _max_pool(1), _max_pool(2), _max_pool(3)
max_pool1d_with_indices = _max_pool(1, True)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-D average pooling, as ``torch.avg_pool1d``.

    >>> import fnx
    >>> fnx.avg_pool1d(fnx.tensor([[1., 2., 3., 4.]]), 2)
    tensor([[1.5000, 3.5000]])
    """
    return aten.avg_pool1d(input, kernel_size, () if stride is None else stride, padding,
                           ceil_mode, count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling to a given output length, as ``torch.adaptive_avg_pool1d``.

    >>> import fnx
    >>> fnx.adaptive_avg_pool1d(fnx.tensor([[1., 2., 3.]]), 2)
    tensor([[1.5000, 2.5000]])
    """
    return aten.adaptive_avg_pool1d(input, output_size)


# ----------------------------------------------------------------------------- distances

def pdist(input, p=2):
    """Distances between all pairs of rows (upper triangle, row-major), as ``torch.pdist``.

    >>> import fnx
    >>> fnx.pdist(fnx.tensor([[0., 0.], [3., 4.], [0., 1.]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    return aten._pdist_forward(input, p)


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Batched p-norm distances between the rows of ``x1`` and ``x2``, as ``torch.cdist``.

    >>> import fnx
    >>> fnx.cdist(fnx.tensor([[0., 0.]]), fnx.tensor([[3., 4.], [0., 1.]]))
    tensor([[5., 1.]])
    """
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return aten.cdist(x1, x2, p, _CDIST_MODES[compute_mode])


def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``, as
    ``torch.cosine_similarity``.

    >>> import fnx
    >>> fnx.cosine_similarity(fnx.tensor([[1., 0.]]), fnx.tensor([[1., 1.]]))
    tensor([0.7071])
    """
    return aten.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    """p-norm of ``x1 - x2 + eps`` along the last dim, as ``torch.pairwise_distance``.

    >>> import fnx
    >>> fnx.pairwise_distance(fnx.tensor([[3., 4.]]), fnx.tensor([[0., 0.]]), eps=0.0)
    tensor([5.])
    """
    return aten.pairwise_distance(x1, x2, p, eps, keepdim)


# ----------------------------------------------------------------------------- activations

def selu(input):
    """Scaled ELU, as ``torch.selu``.

    >>> import fnx
    >>> fnx.selu(fnx.tensor([0.0, 1.0]))
    tensor([0.0000, 1.0507])
    """
    return aten.selu(input)


def celu(input, alpha=1.0):
    """Continuously differentiable ELU, as ``torch.celu``.

    >>> import fnx
    >>> fnx.celu(fnx.tensor([0.0, 1.0]))
    tensor([0., 1.])
    """
    return aten.celu(input, alpha)


def prelu(input, weight):
    """Leaky ReLU with a learned slope per channel, as ``torch.prelu``.

    >>> import fnx
    >>> fnx.prelu(fnx.tensor([-2.0, 2.0]), fnx.tensor([0.5]))
    tensor([-1.,  2.])
    """
    return aten.prelu(input, weight)


def threshold(input, threshold, value):
    """``value`` where ``input <= threshold``, else ``input``, as ``torch.threshold``.

    >>> import fnx
    >>> fnx.threshold(fnx.tensor([1.0, 3.0]), 2.0, 0.0)
    tensor([0., 3.])
    """
    return aten.threshold(input, threshold, value)


def hardshrink(input, lambd=0.5):
    """Zero where ``|input| <= lambd``, as ``torch.hardshrink``.

    >>> import fnx
    >>> fnx.hardshrink(fnx.tensor([0.2, -1.0]))
    tensor([ 0., -1.])
    """
    return aten.hardshrink(input, lambd)


# ----------------------------------------------------------------------------- losses

def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    """Sigmoid + binary cross entropy, computed stably, as
    ``torch.binary_cross_entropy_with_logits`` (``reduction``: 0 none, 1 mean, 2 sum).

    >>> import fnx
    >>> fnx.binary_cross_entropy_with_logits(fnx.tensor([0.0]), fnx.tensor([1.0]))
    tensor(0.6931)
    """
    return aten.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


def kl_div(input, target, reduction=1, log_target=False):
    """Kullback-Leibler divergence of log-probabilities ``input`` from ``target``, as
    ``torch.kl_div``.

    >>> import fnx
    >>> fnx.kl_div(fnx.tensor([0.0]), fnx.tensor([1.0]))
    tensor(0.)
    """
    return aten.kl_div(input, target, reduction, log_target=log_target)
