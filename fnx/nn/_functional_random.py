"""The random activations and dropouts of ``fnx.nn.functional`` added for PyTorch parity:
alpha dropout (SELU-preserving), randomized leaky ReLU, Gumbel-softmax, plus the
``*_with_indices`` pooling names.

The dropouts and ``rrelu`` call their aten ops (``fnx/ir/aten/nn/dropout.py``);
``gumbel_softmax`` is PyTorch's composition of fnx ops.

>>> import fnx, fnx.nn.functional as F
>>> F.alpha_dropout(fnx.ones(3), 0.5, training=False)
tensor([1., 1., 1.])
>>> F.rrelu(fnx.tensor([-1.0, 2.0]), 0.1, 0.3)
tensor([-0.2000,  2.0000])
"""
from __future__ import annotations

import warnings

from .. import api as fnx
from ..ir.variants import write_result
from ..ops import aten

__all__ = ["alpha_dropout", "feature_alpha_dropout", "rrelu", "rrelu_", "gumbel_softmax",
           "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices"]


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _maybe_inplace(input, out, inplace):
    return input.copy_(out) if inplace and out is not input else out


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's zero mean and unit variance: dropped elements take SELU's
    saturation value, then an affine map restores the moments (when ``training``).

    >>> import fnx, fnx.nn.functional as F
    >>> F.alpha_dropout(fnx.ones(2), 0.2)
    tensor([1., 1.])
    """
    _check_p(p)
    return _maybe_inplace(input, aten.alpha_dropout.default(input, p, training), inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (dim 1 of ``(N, C, ...)``).

    >>> import fnx, fnx.nn.functional as F
    >>> F.feature_alpha_dropout(fnx.ones(1, 2, 2), 0.0, training=True)
    tensor([[[1., 1.],
             [1., 1.]]])
    """
    _check_p(p)
    return _maybe_inplace(input, aten.feature_alpha_dropout.default(input, p, training),
                          inplace)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: negative elements are scaled by a slope drawn uniformly from
    ``[lower, upper]`` per element when ``training``, else by ``(lower + upper) / 2``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.rrelu(fnx.tensor([-2.0, 1.0]), 0.25, 0.25, training=True)
    tensor([-0.5000,  1.0000])
    """
    if inplace:
        return write_result("rrelu_", aten.rrelu.default, input, lower, upper, training)
    return aten.rrelu.default(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place ``rrelu``."""
    return rrelu(input, lower, upper, training, True)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """A sample of the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with
    ``g`` standard Gumbel noise; with ``hard`` the one-hot of its argmax, whose gradient is
    the soft sample's (straight-through).

    >>> import fnx, fnx.nn.functional as F
    >>> _ = fnx.manual_seed(0)
    >>> y = F.gumbel_softmax(fnx.zeros(2, 3), hard=True)
    >>> y.sum(-1)
    tensor([1., 1.])
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    # -log(Exp(1)) is standard Gumbel noise
    gumbels = -fnx.empty_like(logits).exponential_().log()
    y = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y
    index = y.argmax(dim, keepdim=True)
    y_hard = fnx.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y.detach() + y


def _n(x, n):
    return list(x) if isinstance(x, (list, tuple)) else [x] * n


def _stride(stride, n):
    return [] if stride is None else _n(stride, n)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """``max_pool1d`` returning ``(values, indices)``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.max_pool1d_with_indices(fnx.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
    (tensor([[[3., 2.]]]), tensor([[[1, 2]]]))
    """
    return aten.max_pool1d_with_indices.default(input, _n(kernel_size, 1), _stride(stride, 1),
                                                _n(padding, 1), _n(dilation, 1), ceil_mode)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """``max_pool2d`` returning ``(values, indices)``."""
    return aten.max_pool2d_with_indices.default(input, _n(kernel_size, 2), _stride(stride, 2),
                                                _n(padding, 2), _n(dilation, 2), ceil_mode)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """``max_pool3d`` returning ``(values, indices)``."""
    return aten.max_pool3d_with_indices.default(input, _n(kernel_size, 3), _stride(stride, 3),
                                                _n(padding, 3), _n(dilation, 3), ceil_mode)
