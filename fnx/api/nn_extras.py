"""More of PyTorch's top-level neural-network functions: the alpha dropouts and ``rrelu``
(with their in-place forms), ``adaptive_max_pool1d`` and the ``grid_sampler_2d``/``3d``
ops with integer modes.  Each passes its arguments to the aten op.

>>> import fnx
>>> fnx.adaptive_max_pool1d(fnx.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
(tensor([[[3., 2.]]]), tensor([[[1, 2]]]))
"""
from __future__ import annotations

from ..ops import aten
from ..ir.variants import write_result

__all__ = ["alpha_dropout", "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
           "rrelu", "rrelu_", "adaptive_max_pool1d", "grid_sampler_2d", "grid_sampler_3d"]


def alpha_dropout(input, p, train):
    """SELU-preserving dropout, as ``torch.alpha_dropout``.

    >>> import fnx
    >>> fnx.alpha_dropout(fnx.ones(2), 0.5, False)
    tensor([1., 1.])
    """
    return aten.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    """In-place ``alpha_dropout``.

    >>> import fnx
    >>> x = fnx.ones(2)
    >>> fnx.alpha_dropout_(x, 1.0, True)
    tensor([0., 0.])
    """
    return input.copy_(aten.alpha_dropout(input, p, train))


def feature_alpha_dropout(input, p, train):
    """Alpha dropout of whole channels (dim 1), as ``torch.feature_alpha_dropout``.

    >>> import fnx
    >>> fnx.feature_alpha_dropout(fnx.ones(1, 2), 0.5, False)
    tensor([[1., 1.]])
    """
    return aten.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    """In-place ``feature_alpha_dropout``.

    >>> import fnx
    >>> x = fnx.ones(1, 2)
    >>> fnx.feature_alpha_dropout_(x, 0.5, False)
    tensor([[1., 1.]])
    """
    return input.copy_(aten.feature_alpha_dropout(input, p, train))


def rrelu(input, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    """Randomized leaky ReLU, as ``torch.rrelu`` (``generator`` is not supported: fnx's
    default generator draws the slopes).

    >>> import fnx
    >>> fnx.rrelu(fnx.tensor([-1.0, 1.0]), 0.2, 0.4)
    tensor([-0.3000,  1.0000])
    """
    if generator is not None:
        raise NotImplementedError("rrelu: an explicit generator is not supported")
    return aten.rrelu(input, lower, upper, training)


def rrelu_(input, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    """In-place ``rrelu``.

    >>> import fnx
    >>> fnx.rrelu_(fnx.tensor([-1.0, 1.0]), 0.5, 0.5)
    tensor([-0.5000,  1.0000])
    """
    return write_result("rrelu_", rrelu, input, lower, upper, training, generator)


def adaptive_max_pool1d(input, output_size):
    """``(values, indices)`` of adaptive max pooling over the last dim, as
    ``torch.adaptive_max_pool1d``.

    >>> import fnx
    >>> fnx.adaptive_max_pool1d(fnx.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
    (tensor([[[3., 2.]]]), tensor([[[1, 2]]]))
    """
    size = list(output_size) if isinstance(output_size, (list, tuple)) else [output_size]
    return aten.adaptive_max_pool1d(input, size)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """``grid_sample`` with integer modes (interpolation 0 bilinear, 1 nearest, 2 bicubic;
    padding 0 zeros, 1 border, 2 reflection), as ``torch.grid_sampler_2d``.

    >>> import fnx
    >>> img = fnx.arange(4.0).reshape(1, 1, 2, 2)
    >>> grid = fnx.tensor([[[[-1.0, -1.0], [1.0, 1.0]]]])
    >>> fnx.grid_sampler_2d(img, grid, 0, 0, True)
    tensor([[[[0., 3.]]]])
    """
    return aten.grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """The 5-D form of ``grid_sampler_2d``, as ``torch.grid_sampler_3d``.

    >>> import fnx
    >>> vol = fnx.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> grid = fnx.tensor([[[[[1.0, 1.0, 1.0]]]]])
    >>> fnx.grid_sampler_3d(vol, grid, 0, 0, True).flatten()
    tensor([7.])
    """
    return aten.grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners)
