"""``torch.nn.functional``'s resampling functions: ``interpolate`` in every mode and its
deprecated aliases (``upsample``, ``upsample_nearest``, ``upsample_bilinear``),
``grid_sample``, ``affine_grid``, and the channel rearrangements.

``interpolate`` does PyTorch's argument handling in Python (one of ``size`` and
``scale_factor``, per-dim or scalar; ``recompute_scale_factor``; ``area`` as adaptive
average pooling) and picks the upsampling op of the mode and rank; the ops (in
``fnx/ir/aten/nn/upsample.py``) hold the index and weight formulas.
"""
from __future__ import annotations

import math
import numbers
import warnings

from .. import api as fnx
from ..api.vision import channel_shuffle, native_channel_shuffle, pixel_shuffle, pixel_unshuffle
from ..ops import aten

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "grid_sample",
           "affine_grid", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
           "native_channel_shuffle"]

_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
# (mode, rank) -> (upsample op, takes align_corners)
_OPS = {("nearest", 3): ("upsample_nearest1d", False),
        ("nearest", 4): ("upsample_nearest2d", False),
        ("nearest", 5): ("upsample_nearest3d", False),
        ("nearest-exact", 3): ("_upsample_nearest_exact1d", False),
        ("nearest-exact", 4): ("_upsample_nearest_exact2d", False),
        ("nearest-exact", 5): ("_upsample_nearest_exact3d", False),
        ("linear", 3): ("upsample_linear1d", True),
        ("bilinear", 4): ("upsample_bilinear2d", True),
        ("trilinear", 5): ("upsample_trilinear3d", True),
        ("bicubic", 4): ("upsample_bicubic2d", True)}
_NEEDS = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _is_int(x):
    return isinstance(x, numbers.Integral) or (isinstance(x, fnx.Tensor) and x.ndim == 0
                                               and not x.is_floating_point())


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize ``(N, C, *spatial)`` to ``size`` or by ``scale_factor``, as
    ``torch.nn.functional.interpolate``.

    Modes: ``'nearest'``, ``'nearest-exact'`` (3-D to 5-D input), ``'linear'`` (3-D),
    ``'bilinear'`` and ``'bicubic'`` (4-D; ``antialias=True`` for the PIL-style filter
    when downsampling), ``'lanczos'`` (4-D, Lanczos-3, with ``antialias=True`` only),
    ``'trilinear'`` (5-D) and ``'area'`` (adaptive average pooling).
    A given ``scale_factor`` also sets the sampling ratio (``1 / scale_factor``) unless
    ``recompute_scale_factor=True``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.interpolate(fnx.tensor([[[1.0, 2.0]]]), scale_factor=2, mode="linear")
    tensor([[[1.0000, 1.2500, 1.7500, 2.0000]]])
    >>> F.interpolate(fnx.tensor([[[1.0, 2.0]]]), size=3, mode="nearest")
    tensor([[[1., 1., 2.]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"Input and output must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{spatial} and output size of {size}. Please provide input "
                                 f"tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 f"(o1, o2, ...,oK) format.")
            if not all(_is_int(s) for s in size):
                raise TypeError(f"expected size to be one of int or Tuple[int] or Tuple[int, "
                                f"int] or Tuple[int, int, int], but got size with types "
                                f"{[type(s) for s in size]}")
            output_size = [int(s) for s in size]
        else:
            output_size = [int(size)] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(f"Input and scale_factor must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{spatial} and scale_factor of shape {scale_factor}. Please "
                                 f"provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 f"scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True        # area always works from a size
    if recompute_scale_factor:
        output_size = [math.floor(n * s) for n, s in zip(spatial, scale_factors)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode == "lanczos" and input.ndim == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
        return aten._upsample_lanczos2d_aa.vec(input, output_size, False, scale_factors)
    if mode == "area" and input.ndim in (3, 4, 5):
        pool = getattr(aten, f"adaptive_avg_pool{dim}d")
        return pool.default(input, output_size)
    found = _OPS.get((mode, input.ndim))
    if found is not None:
        name, interp = found
        if antialias:
            name = f"_{name}_aa"
        packet = getattr(aten, name)
        if interp:
            return packet.vec(input, output_size, bool(align_corners), scale_factors)
        return packet.vec(input, output_size, scale_factors)
    if mode in _NEEDS and input.ndim in (3, 4, 5):
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_NEEDS[mode]}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                              f"{input.ndim}D) for the modes: {_MODES} (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of ``interpolate`` (warns, as PyTorch).

    >>> import fnx, fnx.nn.functional as F, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample(fnx.ones(1, 1, 2), scale_factor=2).shape
    fnx.Size([1, 1, 4])
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')`` (warns, as PyTorch).

    >>> import fnx, fnx.nn.functional as F, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_nearest(fnx.tensor([[[1.0, 2.0]]]), 4)
    tensor([[[1., 1., 2., 2.]]])
    """
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)`` (warns).

    >>> import fnx, fnx.nn.functional as F, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_bilinear(fnx.tensor([[[[0.0, 3.0]]]]), size=(1, 4))
    tensor([[[[0., 1., 2., 3.]]]])
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDING = {"zeros": 0, "border": 1, "reflection": 2}
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the old "
                  "behavior is desired. See the documentation of grid_sample for details.")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` (N, C, H, W) or (N, C, D, H, W) at the positions of ``grid``
    ((N, Ho, Wo, 2) or (N, Do, Ho, Wo, 3), normalized to [-1, 1], x first), as
    ``torch.nn.functional.grid_sample``.

    >>> import fnx, fnx.nn.functional as F
    >>> x = fnx.arange(4.0).view(1, 1, 2, 2)
    >>> F.grid_sample(x, fnx.tensor([[[[1.0, -1.0]]]]), align_corners=True)
    tensor([[[[1.]]]])
    """
    if mode not in _GRID_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _GRID_PADDING:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    return aten.grid_sampler.default(input, grid, _GRID_MODES[mode], _GRID_PADDING[padding_mode],
                                     align_corners)


def affine_grid(theta, size, align_corners=None):
    """The ``grid_sample`` grid of the affine maps ``theta`` ((N, 2, 3) for a 4-D ``size``,
    (N, 3, 4) for 5-D), as ``torch.nn.functional.affine_grid``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.affine_grid(fnx.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]), [1, 1, 1, 2],
    ...               align_corners=False)
    tensor([[[[-0.5000,  0.0000],
              [ 0.5000,  0.0000]]]])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.ndim != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.ndim != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return aten.affine_grid_generator.default(theta, list(size), align_corners)
