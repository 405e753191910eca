"""Resampling: nearest and bilinear upsampling, ``grid_sampler_2d``, ``col2im`` and
``im2col``."""
from __future__ import annotations

import numpy as np

from ....core import dtype as D
from ....ops import aten
from ...registry import TensorMeta, defop
from ._common import CORE, _arange, _check_float, _full, _to, _up
from .pooling import _pool_ints, _window_offsets


def _upsample_sizes(name, input, output_size, scale_factors):
    if input.ndim != 4:
        raise RuntimeError(f"{name}: It is expected input_size equals to 4, but got size "
                           f"{input.ndim}")
    if (output_size is None) == (scale_factors is None):
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    sp = input.shape[2:]
    if output_size is not None:
        out = tuple(int(o) for o in output_size)
        if len(out) != 2:
            raise RuntimeError(f"{name}: It is expected output_size equals to 2, but got size "
                               f"{len(out)}")
        scales = (None, None)
    else:
        scales = tuple(float(s) for s in scale_factors)
        if len(scales) != 2:
            raise RuntimeError(f"{name}: It is expected scale_factors equals to 2, but got size "
                               f"{len(scales)}")
        out = tuple(int(n * sc) for n, sc in zip(sp, scales))
    if any(n <= 0 for n in sp) or any(o <= 0 for o in out) or input.shape[1] == 0:
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"(H: {sp[0]}, W: {sp[1]}) output (H: {out[0]}, W: {out[1]})")
    return out, scales


def _f32(v):
    return float(np.float32(v))


def _nearest_index(n_in, n_out, scale, device):
    """PyTorch's ``nearest_idx``: floor(dst * scale) in float32, clamped."""
    if n_out == n_in:
        return _arange(n_out, D.int64, device)
    if n_out == 2 * n_in:
        return aten.div.Scalar_mode(_arange(n_out, D.int64, device), 2, rounding_mode="floor")
    sc = _f32(1.0 / scale if scale is not None and scale > 0 else _f32(n_in) / n_out)
    src = aten.floor(_arange(n_out, D.float32, device) * sc)
    return aten.clamp(_to(src, D.int64), None, n_in - 1)


def _upsample_nearest2d_vec(input, output_size, scale_factors):
    out, scales = _upsample_sizes("upsample_nearest2d", input, output_size, scale_factors)
    x = input
    for i in range(2):
        x = aten.index_select(x, 2 + i, _nearest_index(input.shape[2 + i], out[i], scales[i],
                                                       input.device))
    return x


def _upsample_meta(name):
    def meta(input, output_size, *rest):
        scale_factors = rest[-1]
        out, _ = _upsample_sizes(name, input, output_size, scale_factors)
        if name == "upsample_bilinear2d":
            _check_float(input, "upsample_bilinear2d_channels_last")
        return TensorMeta(tuple(input.shape[:2]) + out, input.dtype)
    return meta


upsample_nearest2d_vec = defop(
    "upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) "
    "-> Tensor", tags=CORE, meta=_upsample_meta("upsample_nearest2d"),
    decomposition=_upsample_nearest2d_vec, explicit=True)


def _linear_source(n_in, n_out, align_corners, scale, dtype, device):
    """Source coordinate, lower/upper neighbour and weights of linear interpolation."""
    if align_corners:
        sc = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        sc = 1.0 / scale if scale is not None and scale > 0 else n_in / n_out
    if dtype is D.float32:
        sc = _f32(sc)
    dst = _arange(n_out, dtype, device)
    if align_corners:
        src = dst * sc
    else:
        src = aten.clamp((dst + 0.5) * sc - 0.5, 0, None)
    i0 = _to(aten.trunc(src), D.int64)
    i1 = aten.clamp(i0 + 1, None, n_in - 1)
    l1 = aten.clamp(src - _to(i0, dtype), 0, 1)
    return i0, i1, 1.0 - l1, l1


def _upsample_bilinear2d_vec(input, output_size, align_corners, scale_factors):
    out, scales = _upsample_sizes("upsample_bilinear2d", input, output_size, scale_factors)
    _check_float(input, "upsample_bilinear2d_channels_last")
    x = _up(input)
    for i, view in ((0, [-1, 1]), (1, [-1])):
        dim = 2 + i
        i0, i1, l0, l1 = _linear_source(input.shape[dim], out[i], align_corners, scales[i],
                                        x.dtype, x.device)
        a = aten.index_select(x, dim, i0)
        b = aten.index_select(x, dim, i1)
        x = a * aten.view(l0, view) + b * aten.view(l1, view)
    return _to(x, input.dtype)


upsample_bilinear2d_vec = defop(
    "upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
    "float[]? scale_factors) -> Tensor", tags=CORE, meta=_upsample_meta("upsample_bilinear2d"),
    decomposition=_upsample_bilinear2d_vec, explicit=True)


def _scales(sh, sw):
    return None if sh is None and sw is None else [sh or 0.0, sw or 0.0]


upsample_nearest2d = defop(
    "upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, "
    "float? scales_w=None) -> Tensor",
    decomposition=lambda self, output_size, scales_h=None, scales_w=None:
        _upsample_nearest2d_scaled(self, output_size, scales_h, scales_w))
upsample_bilinear2d = defop(
    "upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, "
    "float? scales_h=None, float? scales_w=None) -> Tensor",
    decomposition=lambda self, output_size, align_corners, scales_h=None, scales_w=None:
        _upsample_bilinear2d_scaled(self, output_size, align_corners, scales_h, scales_w))


def _upsample_nearest2d_scaled(self, output_size, scales_h, scales_w):
    out, _ = _upsample_sizes("upsample_nearest2d", self, output_size, None)
    x = self
    for i, sc in enumerate((scales_h, scales_w)):
        x = aten.index_select(x, 2 + i, _nearest_index(self.shape[2 + i], out[i], sc,
                                                       self.device))
    return x


def _upsample_bilinear2d_scaled(self, output_size, align_corners, scales_h, scales_w):
    out, _ = _upsample_sizes("upsample_bilinear2d", self, output_size, None)
    _check_float(self, "upsample_bilinear2d_channels_last")
    x = _up(self)
    for i, (view, sc) in enumerate((([-1, 1], scales_h), ([-1], scales_w))):
        dim = 2 + i
        i0, i1, l0, l1 = _linear_source(self.shape[dim], out[i], align_corners, sc, x.dtype,
                                        x.device)
        x = aten.index_select(x, dim, i0) * aten.view(l0, view) + \
            aten.index_select(x, dim, i1) * aten.view(l1, view)
    return _to(x, self.dtype)


def _grid_sampler_meta(input, grid, interpolation_mode, padding_mode, align_corners):
    if input.ndim != 4 or grid.ndim != 4:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of "
                           f"dimensions, but got input with sizes {list(input.shape)} and grid "
                           f"with sizes {list(grid.shape)}")
    if grid.shape[-1] != 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size 2 in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but "
                           f"input has {input.dtype.scalar_type} and grid has "
                           f"{grid.dtype.scalar_type}")
    if interpolation_mode not in (0, 1, 2) or padding_mode not in (0, 1, 2):
        raise RuntimeError(f"grid_sampler(): invalid interpolation_mode {interpolation_mode} or "
                           f"padding_mode {padding_mode}")
    _check_float(input, "grid_sampler_2d_cpu")
    return TensorMeta((input.shape[0], input.shape[1], grid.shape[1], grid.shape[2]),
                      input.dtype)


def _reflect(c, lo2, hi2):
    """Reflect coordinates into [lo2/2, hi2/2] (PyTorch's ``reflect_coordinates``)."""
    if lo2 == hi2:
        return aten.zeros_like(c)
    mn = lo2 / 2
    span = (hi2 - lo2) / 2
    c = aten.abs(c - mn)
    extra = aten.fmod.Scalar(c, span)
    flips = aten.floor(c / span)
    even = aten.eq.Scalar(aten.remainder.Scalar(flips, 2), 0)
    return aten.where.self(even, extra + mn, (span - extra) + mn)


def _grid_coord(c, size, padding_mode, align_corners):
    if align_corners:
        c = (c + 1) / 2 * (size - 1)
    else:
        c = ((c + 1) * size - 1) / 2
    if padding_mode == 1:
        c = aten.clamp(c, 0, size - 1)
    elif padding_mode == 2:
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        c = aten.clamp(c, 0, size - 1)
    return c


def _grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    meta = _grid_sampler_meta(input, grid, interpolation_mode, padding_mode, align_corners)
    n, c, h, w = input.shape
    ho, wo = grid.shape[1:3]
    x = _up(input)
    g = _up(grid)
    # bicubic unnormalizes only and pads each of its 16 taps (as PyTorch); the others pad
    # the source coordinate itself
    pm = 0 if interpolation_mode == 2 else padding_mode
    ix = _grid_coord(aten.select.int(g, 3, 0), w, pm, align_corners)
    iy = _grid_coord(aten.select.int(g, 3, 1), h, pm, align_corners)
    flat = aten.reshape(x, [n, c, h * w])

    def tap(yy, xx):
        """Input values at integer coordinates (N, Ho, Wo), zero outside."""
        inb = aten.logical_and(aten.logical_and(aten.ge.Scalar(xx, 0), aten.lt.Scalar(xx, w)),
                               aten.logical_and(aten.ge.Scalar(yy, 0), aten.lt.Scalar(yy, h)))
        k = aten.clamp(yy, 0, h - 1) * w + aten.clamp(xx, 0, w - 1)
        k = aten.expand(aten.reshape(k, [n, 1, ho * wo]), [n, c, ho * wo])
        v = aten.reshape(aten.gather(flat, 2, k), [n, c, ho, wo])
        return aten.where.self(aten.unsqueeze(inb, 1), v, 0)

    if interpolation_mode == 1:
        out = tap(_to(aten.round(iy), D.int64), _to(aten.round(ix), D.int64))
    elif interpolation_mode == 0:
        x0f, y0f = aten.floor(ix), aten.floor(iy)
        x0, y0 = _to(x0f, D.int64), _to(y0f, D.int64)
        tx, ty = ix - x0f, iy - y0f
        out = None
        for dy, wy in ((0, 1 - ty), (1, ty)):
            for dx, wx in ((0, 1 - tx), (1, tx)):
                term = tap(y0 + dy, x0 + dx) * aten.unsqueeze(wy * wx, 1)
                out = term if out is None else out + term
    else:
        out = _bicubic(tap, ix, iy, w, h, padding_mode, align_corners)
    assert tuple(out.shape) == meta.shape
    return _to(out, input.dtype)


def _cubic_weights(t, a=-0.75):
    def near(v):   # |v| <= 1
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v):    # 1 < |v| < 2
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _bicubic(tap, ix, iy, w, h, padding_mode, align_corners):
    # bicubic taps re-apply the padding rule to each of the 4x4 neighbours
    x0f, y0f = aten.floor(ix), aten.floor(iy)
    wx = _cubic_weights(ix - x0f)
    wy = _cubic_weights(iy - y0f)
    out = None
    for j in range(4):
        yy = y0f + (j - 1)
        for i in range(4):
            xx = x0f + (i - 1)
            if padding_mode:
                xc = _to(_grid_pad_index(xx, w, padding_mode, align_corners), D.int64)
                yc = _to(_grid_pad_index(yy, h, padding_mode, align_corners), D.int64)
            else:
                xc, yc = _to(xx, D.int64), _to(yy, D.int64)
            term = tap(yc, xc) * aten.unsqueeze(wy[j] * wx[i], 1)
            out = term if out is None else out + term
    return out


def _grid_pad_index(c, size, padding_mode, align_corners):
    if padding_mode == 1:
        return aten.clamp(c, 0, size - 1)
    c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
    return aten.clamp(c, 0, size - 1)


grid_sampler_2d = defop(
    "grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
    "bool align_corners) -> Tensor", tags=CORE, meta=_grid_sampler_meta,
    decomposition=_grid_sampler_2d, explicit=True)


def _col2im_check(self, output_size, kernel_size, dilation, padding, stride):
    out = _pool_ints("col2im", "output_size", output_size, 2)
    k = _pool_ints("col2im", "kernel_size", kernel_size, 2)
    d = _pool_ints("col2im", "dilation", dilation, 2)
    p = _pool_ints("col2im", "padding", padding, 2)
    s = _pool_ints("col2im", "stride", stride, 2)
    if any(v <= 0 for v in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{k[0]} kernel_width: {k[1]}")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} "
                           f"stride_width: {s[1]}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{d[0]} dilation_width: {d[1]}")
    if self.ndim not in (2, 3) or any(n == 0 for n in self.shape[self.ndim - 2:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(self.shape)}")
    kk = k[0] * k[1]
    cols = self.shape[-2]
    if cols % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={cols} and "
                           f"kernel_size=({k[0]}, {k[1]})")
    blocks = [(o + 2 * pp - dd * (kq - 1) - 1) // ss + 1 for o, pp, dd, kq, ss in
              zip(out, p, d, k, s)]
    if blocks[0] * blocks[1] != self.shape[-1] or min(blocks) < 1:
        raise RuntimeError(f"Given output_size=({out[0]}, {out[1]}), kernel_size=({k[0]}, "
                           f"{k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), "
                           f"stride=({s[0]}, {s[1]}), expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {blocks[0]} * "
                           f"{blocks[1]} = {blocks[0] * blocks[1]}, but got input.size(2)="
                           f"{self.shape[-1]}.")
    return out, k, d, p, s, blocks, cols // kk


def _col2im_meta(self, output_size, kernel_size, dilation, padding, stride):
    out, *_, c = _col2im_check(self, output_size, kernel_size, dilation, padding, stride)
    lead = (self.shape[0],) if self.ndim == 3 else ()
    return TensorMeta(lead + (c,) + out, self.dtype)


def _col2im(self, output_size, kernel_size, dilation, padding, stride):
    out, k, d, p, s, blocks, c = _col2im_check(self, output_size, kernel_size, dilation,
                                               padding, stride)
    x = self if self.ndim == 3 else aten.unsqueeze(self, 0)
    n = x.shape[0]
    L = blocks[0] * blocks[1]
    K = k[0] * k[1]
    hp, wp = out[0] + 2 * p[0], out[1] + 2 * p[1]
    dev = self.device
    # padded-plane position of column (kernel offset ki, kj; block bi, bj)
    ki = aten.view(_arange(k[0], D.int64, dev) * d[0], [k[0], 1, 1, 1])
    kj = aten.view(_arange(k[1], D.int64, dev) * d[1], [1, k[1], 1, 1])
    bi = aten.view(_arange(blocks[0], D.int64, dev) * s[0], [1, 1, blocks[0], 1])
    bj = aten.view(_arange(blocks[1], D.int64, dev) * s[1], [1, 1, 1, blocks[1]])
    pos = aten.reshape((ki + bi) * wp + (kj + bj), [K * L])
    vals = aten.reshape(x, [n, c, K * L])
    acc = _full([n, c, hp * wp], 0, self.dtype, dev)
    acc = aten.scatter_add(acc, 2, aten.expand(pos, [n, c, K * L]), vals)
    acc = aten.view(acc, [n, c, hp, wp])
    acc = aten.slice.Tensor(aten.slice.Tensor(acc, 2, p[0], p[0] + out[0]), 3, p[1],
                            p[1] + out[1])
    acc = aten.clone(acc)
    return acc if self.ndim == 3 else aten.squeeze.dim(acc, 0)


col2im = defop("col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, "
               "int[2] padding, int[2] stride) -> Tensor", tags=CORE, meta=_col2im_meta,
               decomposition=_col2im, explicit=True)


def _im2col(self, kernel_size, dilation, padding, stride):
    k = _pool_ints("im2col", "kernel_size", kernel_size, 2)
    d = _pool_ints("im2col", "dilation", dilation, 2)
    p = _pool_ints("im2col", "padding", padding, 2)
    s = _pool_ints("im2col", "stride", stride, 2)
    if self.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(self.shape)}")
    x = self if self.ndim == 4 else aten.unsqueeze(self, 0)
    n, c, h, w = x.shape
    blocks = [(sz + 2 * pp - dd * (kq - 1) - 1) // ss + 1 for sz, pp, dd, kq, ss in
              zip((h, w), p, d, k, s)]
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size=({k[0]}, "
                           f"{k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), "
                           f"calculated shape of the array of sliding blocks as ({blocks[0]}, "
                           f"{blocks[1]}), but its components must be at least one.")
    if any(p):
        x = aten.constant_pad_nd(x, [p[1], p[1], p[0], p[0]], 0)
    cols = [v for _, v in _window_offsets(x, 2, k, s, d, blocks, 2)]
    out = aten.reshape(aten.stack(cols, 2), [n, c * k[0] * k[1], blocks[0] * blocks[1]])
    return out if self.ndim == 4 else aten.squeeze.dim(out, 0)


im2col = defop("im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, "
               "int[2] stride) -> Tensor", decomposition=_im2col)
