"""Resampling: ``grid_sampler_2d``/``3d``, ``affine_grid_generator``, ``col2im`` and
``im2col`` (upsampling is in ``upsample.py``)."""
from __future__ import annotations

import math

from ....core import dtype as D
from ....ops import aten
from ...registry import TensorMeta, defop
from ._common import CORE, _arange, _check_float, _full, _to, _up
from .pooling import _pool_ints, _window_offsets


def _grid_common_checks(input, grid):
    """PyTorch's ``check_grid_sampler_common``, in its order."""
    if input.ndim < 1 or grid.ndim < 1 or input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last "
                           f"dimension, but got grid with sizes {list(grid.shape)}")
    for i in range(2, input.ndim):
        if input.shape[i] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {i} being empty")


def _grid_checks(nd, input, grid, interpolation_mode, padding_mode):
    _grid_common_checks(input, grid)
    if input.ndim != nd + 2 or grid.ndim != nd + 2:
        raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(input.shape)} and "
                           f"grid with sizes {list(grid.shape)}")
    if nd == 3 and interpolation_mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but "
                           f"input has {input.dtype.scalar_type} and grid has "
                           f"{grid.dtype.scalar_type}")
    if interpolation_mode not in (0, 1, 2) or padding_mode not in (0, 1, 2):
        raise RuntimeError(f"grid_sampler(): invalid interpolation_mode {interpolation_mode} or "
                           f"padding_mode {padding_mode}")
    _check_float(input, f"grid_sampler_{nd}d_cpu")
    return TensorMeta(tuple(input.shape[:2]) + tuple(grid.shape[1:nd + 1]), input.dtype)


def _grid_sampler_meta(input, grid, interpolation_mode, padding_mode, align_corners):
    return _grid_checks(2, input, grid, interpolation_mode, padding_mode)


def _grid_sampler_3d_meta(input, grid, interpolation_mode, padding_mode, align_corners):
    return _grid_checks(3, input, grid, interpolation_mode, padding_mode)


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
        out = out + aten.unsqueeze(_zero_grad_of(ix) + _zero_grad_of(iy), 1)
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


def _zero_grad_of(v):
    """-0.0 everywhere (adding it changes nothing, not even a -0.0, a NaN or an inf) whose
    gradient reaches ``v`` as zeros: a nearest sample's grid gets a zero gradient, not
    none, as in PyTorch."""
    return aten.where.self(aten.lt.Scalar(v, -math.inf), v, -0.0)


def _grid_pad_index(c, size, padding_mode, align_corners):
    if padding_mode == 1:
        return aten.clamp(c, 0, size - 1)
    c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
    return aten.clamp(c, 0, size - 1)


grid_sampler_2d = defop(
    "grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
    "bool align_corners) -> Tensor", tags=CORE, meta=_grid_sampler_meta,
    decomposition=_grid_sampler_2d, explicit=True)


def _grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    meta = _grid_sampler_3d_meta(input, grid, interpolation_mode, padding_mode, align_corners)
    n, c, d, h, w = input.shape
    do, ho, wo = grid.shape[1:4]
    x = _up(input)
    g = _up(grid)
    ix = _grid_coord(aten.select.int(g, 4, 0), w, padding_mode, align_corners)
    iy = _grid_coord(aten.select.int(g, 4, 1), h, padding_mode, align_corners)
    iz = _grid_coord(aten.select.int(g, 4, 2), d, padding_mode, align_corners)
    flat = aten.reshape(x, [n, c, d * h * w])
    m = do * ho * wo

    def tap(zz, yy, xx):
        """Input values at integer coordinates (N, Do, Ho, Wo), zero outside."""
        inb = None
        for v, size in ((xx, w), (yy, h), (zz, d)):
            ok = aten.logical_and(aten.ge.Scalar(v, 0), aten.lt.Scalar(v, size))
            inb = ok if inb is None else aten.logical_and(inb, ok)
        k = (aten.clamp(zz, 0, d - 1) * h + aten.clamp(yy, 0, h - 1)) * w + \
            aten.clamp(xx, 0, w - 1)
        k = aten.expand(aten.reshape(k, [n, 1, m]), [n, c, m])
        v = aten.reshape(aten.gather(flat, 2, k), [n, c, do, ho, wo])
        return aten.where.self(aten.unsqueeze(inb, 1), v, 0)

    if interpolation_mode == 1:
        out = tap(*(_to(aten.round(v), D.int64) for v in (iz, iy, ix)))
        out = out + aten.unsqueeze(_zero_grad_of(ix) + _zero_grad_of(iy) + _zero_grad_of(iz), 1)
    else:
        fl = [aten.floor(v) for v in (iz, iy, ix)]
        lo = [_to(f, D.int64) for f in fl]
        frac = [v - f for v, f in zip((iz, iy, ix), fl)]
        out = None
        for dz in (0, 1):
            for dy in (0, 1):
                for dx in (0, 1):
                    wt = None
                    for t, dd in zip(frac, (dz, dy, dx)):
                        f = t if dd else 1 - t
                        wt = f if wt is None else wt * f
                    term = tap(lo[0] + dz, lo[1] + dy, lo[2] + dx) * aten.unsqueeze(wt, 1)
                    out = term if out is None else out + term
    assert tuple(out.shape) == meta.shape
    return _to(out, input.dtype)


grid_sampler_3d = defop(
    "grid_sampler_3d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
    "bool align_corners) -> Tensor", meta=_grid_sampler_3d_meta, decomposition=_grid_sampler_3d)


def _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    _grid_common_checks(input, grid)
    op = aten.grid_sampler_2d if input.ndim == 4 else aten.grid_sampler_3d
    return op(input, grid, interpolation_mode, padding_mode, align_corners)


grid_sampler = defop("grid_sampler(Tensor input, Tensor grid, int interpolation_mode, "
                     "int padding_mode, bool align_corners) -> Tensor",
                     decomposition=_grid_sampler)


def _linspace_from_neg_one(steps, align_corners, dtype, device):
    """Pixel centres (or corners) of ``steps`` positions in [-1, 1], as PyTorch's
    ``linspace_from_neg_one`` (a single position sits at 0)."""
    if steps <= 1:
        return _full([1], 0, dtype, device)
    r = aten.linspace(-1, 1, steps, dtype=dtype, device=device)
    if align_corners:
        return r
    r = r * (steps - 1)
    if dtype is not D.float32:
        return r / steps
    # XLA turns a float32 division by a constant into a product with its reciprocal, which
    # can move a value one float32 step off the pixel centre eager computes, where
    # grid_sample's gradient jumps. The float64 quotient rounded once is the float32
    # quotient eager and PyTorch compute (53 >= 2*24 + 2 bits), compiled as well.
    return aten._to_copy(aten._to_copy(r, dtype=D.float64) / steps, dtype=dtype)


def _affine_grid_generator(theta, size, align_corners):
    size = [int(s) for s in size]
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    n, sp = size[0], size[2:]
    dt, dev = theta.dtype, theta.device
    axes = [_linspace_from_neg_one(s, align_corners, dt, dev) for s in sp]
    nd = len(sp)
    # base grid (N, *sp, nd + 1): x varies along the last spatial dim, then y (then z), then 1
    cols = []
    for k in range(nd):
        ax = axes[nd - 1 - k]                  # x is the last spatial dim
        shape = [1] * nd
        shape[nd - 1 - k] = -1
        cols.append(aten.expand(aten.view(ax, shape), sp))
    cols.append(_full(sp, 1, dt, dev))
    base = aten.expand(aten.unsqueeze(aten.stack(cols, -1), 0), [n, *sp, nd + 1])
    flat = aten.reshape(base, [n, math.prod(sp), nd + 1])
    grid = aten.bmm(flat, aten.transpose.int(theta, 1, 2))
    return aten.view(grid, [n, *sp, nd])


affine_grid_generator = defop(
    "affine_grid_generator(Tensor theta, SymInt[] size, bool align_corners) -> Tensor",
    decomposition=_affine_grid_generator)


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
    for bad, what in ((min(k) <= 0, "kernel size should be greater than zero, but got "
                       f"kernel_height: {k[0]} kernel_width: {k[1]}"),
                      (min(d) <= 0, "dilation should be greater than zero, but got "
                       f"dilation_height: {d[0]} dilation_width: {d[1]}"),
                      (min(p) < 0, "padding should be non-negative, but got "
                       f"pad_height: {p[0]} pad_width: {p[1]}"),
                      (min(s) <= 0, "stride should be greater than zero, but got "
                       f"stride_height: {s[0]} stride_width: {s[1]}")):
        if bad:
            raise RuntimeError(what)
    if self.ndim < 3:
        # PyTorch's shape check reads sizes 1 and 2 before it checks the rank
        if self.ndim == 0:
            raise IndexError("Dimension specified as 1 but tensor has no dimensions")
        n = self.ndim
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {n})")
    if self.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
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
