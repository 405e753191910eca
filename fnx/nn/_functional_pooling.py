"""The pooling functions of ``fnx.nn.functional`` beyond max/avg pooling: adaptive max
pooling (with indices), max unpooling, power-average (LP) pooling, fractional max pooling,
and local response normalization (a pool over channels).

Adaptive max, unpooling and fractional pooling call their aten ops
(``fnx/ir/aten/nn/pooling_max.py``); LP pooling and local response normalization are
PyTorch's compositions of ``avg_pool*d``, written the same way here.

>>> import fnx, fnx.nn.functional as F
>>> x = fnx.tensor([[[1.0, 3.0, 2.0, 0.0]]])
>>> v, i = F.max_pool1d(x, 2, return_indices=True)
>>> F.max_unpool1d(v, i, 2)
tensor([[[0., 3., 2., 0.]]])
>>> F.lp_pool1d(x, 2, 2)
tensor([[[3.1623, 2.0000]]])
"""
from __future__ import annotations

import math

from .. import api as fnx
from ..ops import aten

__all__ = ["adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d",
           "lp_pool1d", "lp_pool2d", "lp_pool3d", "fractional_max_pool2d",
           "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d_with_indices", "local_response_norm"]


def _ntuple(v, n):
    return (v,) * n if isinstance(v, (int, float)) else tuple(v)


# ----------------------------------------------------------------------------- adaptive max

def _adaptive_sizes(input, output_size, n):
    """``output_size`` per dim; ``None`` keeps that dim's input size."""
    sizes = _ntuple(output_size, n)
    return [input.shape[input.ndim - len(sizes) + i] if s is None else s
            for i, s in enumerate(sizes)]


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """``(values, indices)`` of ``adaptive_max_pool1d`` (``return_indices`` is ignored)."""
    return aten.adaptive_max_pool1d.default(input, _adaptive_sizes(input, output_size, 1))


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """``(values, indices)`` of ``adaptive_max_pool2d`` (``return_indices`` is ignored)."""
    return aten.adaptive_max_pool2d.default(input, _adaptive_sizes(input, output_size, 2))


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """``(values, indices)`` of ``adaptive_max_pool3d`` (``return_indices`` is ignored)."""
    return aten.adaptive_max_pool3d.default(input, _adaptive_sizes(input, output_size, 3))


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max over PyTorch's adaptive windows [floor(i*L/o), ceil((i+1)*L/o)).

    >>> import fnx, fnx.nn.functional as F
    >>> F.adaptive_max_pool1d(fnx.tensor([[1.0, 4.0, 2.0, 3.0, 0.0]]), 2, return_indices=True)
    (tensor([[4., 3.]]), tensor([[1, 3]]))
    """
    r = adaptive_max_pool1d_with_indices(input, output_size)
    return r if return_indices else r[0]


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to ``output_size`` (``None`` keeps that dim); indices are flat offsets
    in each ``H x W`` plane, as ``max_unpool2d`` takes them.

    >>> import fnx, fnx.nn.functional as F
    >>> F.adaptive_max_pool2d(fnx.arange(9.).reshape(1, 3, 3), 1, return_indices=True)
    (tensor([[[8.]]]), tensor([[[8]]]))
    """
    r = adaptive_max_pool2d_with_indices(input, output_size)
    return r if return_indices else r[0]


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """3-D adaptive max pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.adaptive_max_pool3d(fnx.ones(1, 2, 4, 4, 4), (1, 2, None)).shape
    fnx.Size([1, 2, 1, 2, 4])
    """
    r = adaptive_max_pool3d_with_indices(input, output_size)
    return r if return_indices else r[0]


# ----------------------------------------------------------------------------- max unpool

def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """PyTorch's rule: the size max pooling came from, or ``output_size`` (optionally with
    its batch and channel dims), which must lie within one stride of it."""
    nd = len(kernel_size)
    default = [(input.shape[input.ndim - nd + d] - 1) * stride[d] + kernel_size[d]
               - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        ret = default
    else:
        output_size = list(output_size)
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        if len(output_size) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for d in range(nd):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < output_size[d] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be '
                                 f'between {lo} and {hi})')
        ret = output_size
    for d in range(nd):
        if ret[d] < 0:
            raise ValueError(f"max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={ret[d]}")
    return [int(v) for v in ret]


def _unpool_args(kernel_size, stride, padding, nd):
    k = _ntuple(kernel_size, nd)
    s = k if stride is None else _ntuple(stride, nd)
    return k, s, _ntuple(padding, nd)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Place each value at its index from ``max_pool1d(return_indices=True)``; zeros
    elsewhere."""
    k, s, p = _unpool_args(kernel_size, stride, padding, 1)
    out = _unpool_output_size(input, k, s, p, output_size)
    r = aten.max_unpool2d.default(aten.unsqueeze(input, -1), aten.unsqueeze(indices, -1),
                                  out + [1])
    return aten.squeeze.dim(r, -1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d``: each value goes back to its index.

    >>> import fnx, fnx.nn.functional as F
    >>> x = fnx.tensor([[[[1.0, 2.0], [4.0, 3.0]]]])
    >>> v, i = F.max_pool2d(x, 2, return_indices=True)
    >>> F.max_unpool2d(v, i, 2)
    tensor([[[[0., 0.],
              [4., 0.]]]])
    """
    k, s, p = _unpool_args(kernel_size, stride, padding, 2)
    out = _unpool_output_size(input, k, s, p, output_size)
    return aten.max_unpool2d.default(input, indices, out)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool3d`` (zeros where no index points)."""
    k, s, p = _unpool_args(kernel_size, stride, padding, 3)
    out = _unpool_output_size(input, k, s, p, output_size)
    return aten.max_unpool3d.default(input, indices, out, list(s), list(p))


# ----------------------------------------------------------------------------- LP pooling

def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd):
    k = _ntuple(kernel_size, nd)
    st = [] if stride is None else list(_ntuple(stride, nd))
    if norm_type == math.inf:
        return _max_pool(aten.abs(input), k, st, ceil_mode, nd)
    if norm_type == -math.inf:
        return -_max_pool(-aten.abs(input), k, st, ceil_mode, nd)
    x = fnx.pow(input, norm_type)
    if nd == 1:
        out = aten.avg_pool1d.default(x, list(k), st, [0], ceil_mode)
    elif nd == 2:
        out = aten.avg_pool2d.default(x, list(k), st, [0, 0], ceil_mode)
    else:
        out = aten.avg_pool3d.default(x, list(k), st, [0, 0, 0], ceil_mode)
    # the mean times the window size is the window's sum of x**p; a negative sum (odd p)
    # becomes 0 before the root, as PyTorch computes it
    out = fnx.sign(out) * fnx.relu(fnx.abs(out))
    return fnx.pow(out * math.prod(k), 1.0 / norm_type)


def _max_pool(x, k, st, ceil_mode, nd):
    op = {1: aten.max_pool1d, 2: aten.max_pool2d, 3: aten.max_pool3d}[nd]
    return op.default(x, list(k), st, [0] * nd, [1] * nd, ceil_mode)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling: ``(sum over the window of x**p) ** (1/p)``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.lp_pool1d(fnx.tensor([[3.0, 4.0]]), 2, 2)
    tensor([[5.]])
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-D power-average pooling (``norm_type=inf``: max of ``|x|``)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-D power-average pooling (``norm_type=inf``: max of ``|x|``)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


# ----------------------------------------------------------------------------- fractional

def _fractional(input, kernel_size, output_size, output_ratio, _random_samples, nd):
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         f"output_ratio")
    if output_size is None:
        ratio = _ntuple(output_ratio, nd)
        if len(ratio) != nd:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or "
                             f"tuple of Ints.")
        output_size = [int(input.shape[input.ndim - nd + d] * ratio[d]) for d in range(nd)]
    if _random_samples is None:
        n_batch = 1 if input.ndim == nd + 1 else input.shape[0]
        _random_samples = fnx.rand(n_batch, input.shape[input.ndim - nd - 1], nd,
                                   dtype=input.dtype, device=input.device)
    op = aten.fractional_max_pool2d if nd == 2 else aten.fractional_max_pool3d
    return op.default(input, list(_ntuple(kernel_size, nd)), list(_ntuple(output_size, nd)),
                      _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """``(values, indices)`` of ``fractional_max_pool2d``."""
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """``(values, indices)`` of ``fractional_max_pool3d``."""
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Max over pseudo-random windows (Graham's fractional max pooling); one sample in
    [0, 1) per plane and dim (``_random_samples``, shape ``(N, C, 2)``) places them.

    >>> import fnx, fnx.nn.functional as F
    >>> F.fractional_max_pool2d(fnx.randn(1, 3, 9, 9), 2, output_size=4).shape
    fnx.Size([1, 3, 4, 4])
    """
    r = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return r if return_indices else r[0]


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-D fractional max pooling (``_random_samples``: shape ``(N, C, 3)``, for T, H, W)."""
    r = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return r if return_indices else r[0]


# ----------------------------------------------------------------------------- LRN

def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``x / (k + alpha * mean of x**2 over size neighbouring channels) ** beta``; the
    channel window is zero-padded by ``size // 2`` before and ``(size - 1) // 2`` after.

    >>> import fnx, fnx.nn.functional as F
    >>> F.local_response_norm(fnx.ones(1, 3, 1), 2, alpha=1.0, beta=1.0, k=0.0)
    tensor([[[2.],
             [1.],
             [1.]]])
    """
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input * input
    if dim == 3:
        div = aten.constant_pad_nd(aten.unsqueeze(div, 1), [0, 0, size // 2, (size - 1) // 2])
        div = aten.squeeze.dim(aten.avg_pool2d.default(div, [size, 1], [1, 1]), 1)
    else:
        sizes = list(input.shape)
        div = aten.reshape(div, [sizes[0], 1, sizes[1], sizes[2], -1])
        div = aten.constant_pad_nd(div, [0, 0, 0, 0, size // 2, (size - 1) // 2])
        div = aten.squeeze.dim(aten.avg_pool3d.default(div, [size, 1, 1], [1, 1, 1]), 1)
        div = aten.reshape(div, sizes)
    return input / fnx.pow(div * alpha + k, beta)
