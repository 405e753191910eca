"""OpInfo entries for 2-D nearest/bilinear upsampling, grid sampling (2-D, 3-D), the affine
grid, col2im and im2col (fnx/ir/aten/nn/sampling.py and upsample.py)."""
from __future__ import annotations

import math

import numpy as np

from ....core import dtype as D
from ....ops import aten
from ...database import ErrorInput, OpInfo, SampleInput, register
from ._common import F, TOLS, _arr, _floatref, _per_dim, _t
from .upsample import np_linear_matrix, u8_or

NEAREST_DTYPES = (D.float32, D.float64, D.uint8)    # PyTorch's nearest kernels: no int64


def np_nearest_idx(n_in, n_out, scale=None):
    """PyTorch's nearest source index: floor(dst * scale) in float32, clamped."""
    if n_out == n_in:
        return np.arange(n_out)
    if n_out == 2 * n_in:
        return np.arange(n_out) // 2
    sc = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
    return np.minimum(np.floor(np.arange(n_out, dtype=np.float32) * sc).astype(np.int64),
                      n_in - 1)


def _up_size(x, output_size, scales):
    if output_size is not None:
        return list(output_size), (None, None)
    return [int(n * s) for n, s in zip(x.shape[2:], scales)], tuple(scales)


def _nearest_ref(x, output_size, scale_factors):
    out, scales = _up_size(x, output_size, scale_factors)
    return np.take(np.take(x, np_nearest_idx(x.shape[2], out[0], scales[0]), 2),
                   np_nearest_idx(x.shape[3], out[1], scales[1]), 3)


def np_bilinear(a, out, align_corners, scales=(None, None)):
    def src(n_in, n_out, scale):
        dst = np.arange(n_out, dtype=np.float64)
        if align_corners:
            s = dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
        else:
            s = np.maximum((dst + 0.5) * (1.0 / scale if scale else n_in / n_out) - 0.5, 0)
        i0 = np.floor(s).astype(np.int64)
        return i0, np.minimum(i0 + 1, n_in - 1), s - i0
    h0, h1, lh = src(a.shape[2], out[0], scales[0])
    w0, w1, lw = src(a.shape[3], out[1], scales[1])
    rows = a[:, :, h0] * (1 - lh)[:, None] + a[:, :, h1] * lh[:, None]
    return rows[..., w0] * (1 - lw) + rows[..., w1] * lw


def _bilinear_ref(x, output_size, align_corners, scale_factors):
    out, scales = _up_size(x, output_size, scale_factors)
    return np_bilinear(x, out, align_corners, scales)


UPSAMPLE = [((2, 3, 3, 4), [6, 8], None), ((1, 2, 3, 4), [5, 3], None),
            ((1, 2, 3, 5), None, [1.5, 0.6]), ((0, 2, 3, 4), [2, 7], None)]


def _nearest_samples(vec):
    def samples(info, device, dtype):
        for i, (shape, out, scales) in enumerate(UPSAMPLE):
            x = _t(shape, dtype, device, noncontiguous=(i == 1))
            if vec:
                yield SampleInput(x, out, scales)
            elif out is not None:
                yield SampleInput(x, out)
        if not vec:
            yield SampleInput(_t((1, 2, 3, 5), dtype, device), [4, 3], 1.5, 0.6)
    return samples


def _bilinear_samples(vec):
    def samples(info, device, dtype):
        cases = UPSAMPLE + [((2, 2, 4, 4), [1, 5], None)]
        for i, (shape, out, scales) in enumerate(cases):
            x = _t(shape, dtype, device, noncontiguous=(i == 1))
            align = i % 2 == 1
            if vec:
                yield SampleInput(x, out, align, scales)
            elif out is not None:
                yield SampleInput(x, out, align)
        if not vec:
            yield SampleInput(_t((1, 2, 4, 4), dtype, device), [10, 6], False, 2.5, 1.5)
    return samples


def _scaled_ref(bilinear):
    def ref(x, output_size, *rest):
        if bilinear:
            align, rest = rest[0], rest[1:]
        sh, sw = (list(rest) + [None, None])[:2]
        scales = (sh, sw)
        if bilinear:
            return np_bilinear(x, list(output_size), align, scales)
        return np.take(np.take(x, np_nearest_idx(x.shape[2], output_size[0], sh), 2),
                       np_nearest_idx(x.shape[3], output_size[1], sw), 3)
    return ref


def _bilinear_mats(vec):
    """Per-dim matrices of a bilinear sample, for the uint8 reference."""
    def mats(x, output_size, align, *rest):
        if vec:
            out, scales = _up_size(x, output_size, rest[0])
        else:
            out, scales = list(output_size), (list(rest) + [None, None])[:2]
        return [np_linear_matrix(x.shape[2 + i], out[i], align, scales[i]) for i in range(2)]
    return mats


def _upsample_errors(bilinear):
    def errors(info, device):
        x = _t((1, 2, 3, 5), D.float32, device)
        mid = (False,) if bilinear else ()
        yield ErrorInput(SampleInput(x, [2, 2], *mid, [2.0, 2.0]), RuntimeError,
                         "Must specify exactly one of output_size and scale_factors")
        yield ErrorInput(SampleInput(x[0], [2, 2], *mid, None), RuntimeError,
                         "It is expected input_size equals to 4")
        yield ErrorInput(SampleInput(x, [0, 2], *mid, None), RuntimeError,
                         "Input and output sizes should be greater than 0")
        yield ErrorInput(SampleInput(_t((1, 2, 3, 5), D.int64, device), [4, 4], *mid, None),
                         RuntimeError, "not implemented for 'Long'")
    return errors


def np_grid_sample(a, grid, mode, padding_mode, align_corners):
    n, c, h, w = a.shape
    _, ho, wo, _ = grid.shape

    def unnorm(v, size):
        return (v + 1) / 2 * (size - 1) if align_corners else ((v + 1) * size - 1) / 2

    def reflect(v, lo2, hi2):
        if lo2 == hi2:
            return 0.0
        mn, span = lo2 / 2, (hi2 - lo2) / 2
        v = abs(v - mn)
        extra = math.fmod(v, span)
        flips = math.floor(v / span)
        return extra + mn if flips % 2 == 0 else span - extra + mn

    def pad_coord(v, size):
        if padding_mode == 1:
            return min(max(v, 0), size - 1)
        if padding_mode == 2:
            v = reflect(v, 0, 2 * (size - 1)) if align_corners else reflect(v, -1, 2 * size - 1)
            return min(max(v, 0), size - 1)
        return v

    def at(b, y, x):
        if 0 <= y < h and 0 <= x < w:
            return a[b, :, int(y), int(x)]
        return np.zeros(c)

    def cubic(t):
        A = -0.75

        def near(v):
            return ((A + 2) * v - (A + 3)) * v * v + 1

        def far(v):
            return ((A * v - 5 * A) * v + 8 * A) * v - 4 * A
        return [far(t + 1), near(t), near(1 - t), far(2 - t)]

    out = np.zeros((n, c, ho, wo))
    for b, i, j in np.ndindex(n, ho, wo):
        gx, gy = grid[b, i, j]
        if mode == 2:
            # bicubic: the source coordinate is not padded, each of the 16 taps is
            x, y = unnorm(gx, w), unnorm(gy, h)
            x0, y0 = math.floor(x), math.floor(y)
            wx, wy = cubic(x - x0), cubic(y - y0)
            acc = np.zeros(c)
            for jj in range(4):
                for ii in range(4):
                    tx, ty = x0 - 1 + ii, y0 - 1 + jj
                    if padding_mode:
                        tx, ty = pad_coord(tx, w), pad_coord(ty, h)
                    acc += at(b, ty, tx) * wx[ii] * wy[jj]
            out[b, :, i, j] = acc
            continue
        x = pad_coord(unnorm(gx, w), w)
        y = pad_coord(unnorm(gy, h), h)
        if mode == 1:
            out[b, :, i, j] = at(b, np.rint(y), np.rint(x))
        else:
            x0, y0 = math.floor(x), math.floor(y)
            tx, ty = x - x0, y - y0
            out[b, :, i, j] = (at(b, y0, x0) * (1 - tx) * (1 - ty) +
                               at(b, y0, x0 + 1) * tx * (1 - ty) +
                               at(b, y0 + 1, x0) * (1 - tx) * ty +
                               at(b, y0 + 1, x0 + 1) * tx * ty)
    return out


GRID_MODES = [(0, 0, False), (0, 2, True), (1, 1, False), (2, 0, False), (2, 1, True)]


def _grid_samples(info, device, dtype):
    for k, (mode, padding, align) in enumerate(GRID_MODES):
        shape = (2, 3, 4, 5) if k % 2 == 0 else (1, 2, 3, 3)
        yield SampleInput(_t(shape, dtype, device), _t((shape[0], 3, 2, 2), dtype, device, -1.4,
                                                       1.4), mode, padding, align)
    ys, xs = np.meshgrid(np.linspace(-1, 1, 4), np.linspace(-1, 1, 5), indexing="ij")
    identity = np.stack([xs, ys], -1)[None]      # sampling exactly at the pixels
    yield SampleInput(_t((1, 2, 4, 5), dtype, device), _arr(identity, dtype, device), 2, 0,
                      True)


def _grid_errors(info, device):
    f = D.float32
    x = _t((1, 2, 4, 5), f, device)
    yield ErrorInput(SampleInput(x, _t((1, 2, 2, 3), f, device), 0, 0, False), RuntimeError,
                     "expected grid to have size 2 in last dimension")
    yield ErrorInput(SampleInput(x, _t((2, 2, 2, 2), f, device), 0, 0, False), RuntimeError,
                     "expected grid and input to have same batch size")
    yield ErrorInput(SampleInput(x, _t((1, 2, 2, 2), D.float64, device), 0, 0, False),
                     RuntimeError, "expected input and grid to have same dtype")
    yield ErrorInput(SampleInput(_t((1, 4, 5), f, device), _t((1, 2, 1), f, device), 0, 0,
                                 False), RuntimeError, "expected 4D input and grid")
    yield ErrorInput(SampleInput(_t((1, 2, 0, 5), f, device), _t((1, 2, 2, 2), f, device), 0, 0,
                                 False), RuntimeError,
                     "expected input to have non-empty spatial dimensions")


def np_grid_sample_3d(a, grid, mode, padding_mode, align_corners):
    """Trilinear (8 corners) or nearest sampling of (N, C, D, H, W) at (x, y, z) points."""
    n, c, d, h, w = a.shape
    _, do, ho, wo, _ = grid.shape

    def unnorm(v, size):
        return (v + 1) / 2 * (size - 1) if align_corners else ((v + 1) * size - 1) / 2

    def reflect(v, lo2, hi2):
        if lo2 == hi2:
            return 0.0
        mn, span = lo2 / 2, (hi2 - lo2) / 2
        v = abs(v - mn)
        extra, flips = math.fmod(v, span), math.floor(v / span)
        return extra + mn if flips % 2 == 0 else span - extra + mn

    def coord(v, size):
        v = unnorm(v, size)
        if padding_mode == 2:
            v = reflect(v, 0, 2 * (size - 1)) if align_corners else reflect(v, -1, 2 * size - 1)
        if padding_mode:
            v = min(max(v, 0), size - 1)
        return v

    def at(b, z, y, x):
        if 0 <= z < d and 0 <= y < h and 0 <= x < w:
            return a[b, :, int(z), int(y), int(x)]
        return np.zeros(c)

    out = np.zeros((n, c, do, ho, wo))
    for b, k, i, j in np.ndindex(n, do, ho, wo):
        gx, gy, gz = grid[b, k, i, j]
        x, y, z = coord(gx, w), coord(gy, h), coord(gz, d)
        if mode == 1:
            out[b, :, k, i, j] = at(b, np.rint(z), np.rint(y), np.rint(x))
            continue
        x0, y0, z0 = math.floor(x), math.floor(y), math.floor(z)
        acc = np.zeros(c)
        for dz, dy, dx in np.ndindex(2, 2, 2):
            wt = ((x - x0) if dx else (1 - (x - x0))) * ((y - y0) if dy else (1 - (y - y0))) * \
                ((z - z0) if dz else (1 - (z - z0)))
            acc += at(b, z0 + dz, y0 + dy, x0 + dx) * wt
        out[b, :, k, i, j] = acc
    return out


GRID3_MODES = [(0, 0, False), (0, 1, True), (0, 2, False), (1, 0, True), (1, 2, True)]


def _grid3_samples(info, device, dtype):
    for k, (mode, padding, align) in enumerate(GRID3_MODES):
        shape = (2, 2, 3, 4, 3) if k % 2 == 0 else (1, 1, 2, 3, 4)
        grid = _t((shape[0], 2, 2, 3, 3), dtype, device, -1.4, 1.4)
        yield SampleInput(_t(shape, dtype, device), grid, mode, padding, align)


def _grid3_errors(info, device):
    f = D.float32
    x = _t((1, 2, 3, 3, 3), f, device)
    yield ErrorInput(SampleInput(x, _t((1, 2, 2, 2, 2), f, device), 0, 0, False), RuntimeError,
                     "expected grid to have size 3 in last dimension")
    yield ErrorInput(SampleInput(x, _t((1, 2, 2, 2, 3), f, device), 2, 0, False), RuntimeError,
                     "bicubic interpolation only supports 4D input")
    yield ErrorInput(SampleInput(_t((1, 2, 0, 3, 3), f, device), _t((1, 2, 2, 2, 3), f, device),
                                 0, 0, False), RuntimeError,
                     "expected input to have non-empty spatial dimensions")


def _grid_sampler_ref(a, grid, mode, padding_mode, align_corners):
    fn = np_grid_sample if a.ndim == 4 else np_grid_sample_3d
    return fn(a, grid, mode, padding_mode, align_corners)


def _grid_dispatch_samples(info, device, dtype):
    yield from list(_grid_samples(info, device, dtype))[:2]
    yield from list(_grid3_samples(info, device, dtype))[:2]


def np_affine_grid(theta, size, align_corners):
    n, sp = size[0], size[2:]

    def axis(steps):
        if steps <= 1:
            return np.zeros(1)
        r = np.linspace(-1, 1, steps)
        return r if align_corners else r * (steps - 1) / steps
    axes = [axis(s) for s in sp]                     # (D,) H, W
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack(list(mesh[::-1]) + [np.ones(tuple(sp))], -1)     # x, y, (z), 1
    return np.einsum("...k,njk->n...j", base, theta) if n else \
        np.zeros((0, *sp, len(sp)))


def _affine_samples(info, device, dtype):
    yield SampleInput(_t((2, 2, 3), dtype, device), [2, 3, 4, 5], False)
    yield SampleInput(_t((1, 2, 3), dtype, device), [1, 1, 1, 3], True)
    yield SampleInput(_t((2, 3, 4), dtype, device), [2, 1, 2, 3, 4], True)
    yield SampleInput(_t((1, 3, 4), dtype, device), [1, 1, 3, 2, 2], False)


def _affine_errors(info, device):
    yield ErrorInput(SampleInput(_t((1, 2, 3), D.float32, device), [1, 1, 3], False),
                     RuntimeError, "AffineGridGenerator needs 4d")


def np_col2im(cols, out, k, d, p, s):
    n, ckk, L = cols.shape
    c = ckk // (k[0] * k[1])
    hp, wp = out[0] + 2 * p[0], out[1] + 2 * p[1]
    bh = (hp - d[0] * (k[0] - 1) - 1) // s[0] + 1
    bw = (wp - d[1] * (k[1] - 1) - 1) // s[1] + 1
    res = np.zeros((n, c, hp, wp))
    cols = cols.reshape(n, c, k[0], k[1], bh, bw)
    for ki, kj, bi, bj in np.ndindex(k[0], k[1], bh, bw):
        res[:, :, bi * s[0] + ki * d[0], bj * s[1] + kj * d[1]] += cols[:, :, ki, kj, bi, bj]
    return res[:, :, p[0]:p[0] + out[0], p[1]:p[1] + out[1]]


def _col2im_ref(x, output_size, kernel_size, dilation, padding, stride):
    args = [_per_dim(v, 2) for v in (output_size, kernel_size, dilation, padding, stride)]
    if x.ndim == 2:
        return np_col2im(x[None], *args)[0]
    return np_col2im(x, *args)


def _blocks(out, k, d, p, s):
    return [(o + 2 * pp - dd * (kk - 1) - 1) // ss + 1 for o, kk, dd, pp, ss in
            zip(out, k, d, p, s)]


COL2IM = [((5, 6), (2, 3), (1, 2), (1, 0), (2, 1), 2, 3), ((4, 4), (2, 2), (1, 1), (0, 0),
                                                           (1, 1), 1, 2),
          ((3, 3), (3, 3), (1, 1), (1, 1), (1, 1), 0, 1)]


def _col2im_samples(info, device, dtype):
    for i, (out, k, d, p, s, n, c) in enumerate(COL2IM):
        bh, bw = _blocks(out, k, d, p, s)
        shape = (c * k[0] * k[1], bh * bw)
        x = _t(shape if i == 1 else (n,) + shape, dtype, device)       # sample 1: unbatched
        yield SampleInput(x, list(out), list(k), list(d), list(p), list(s))


def _col2im_errors(info, device):
    yield ErrorInput(SampleInput(_t((1, 12, 8), D.float32, device), [4, 4], [2, 2], [1, 1],
                                 [0, 0], [1, 1]), RuntimeError,
                     "expected size of input's dimension 2 to match the calculated number of "
                     "sliding blocks")
    yield ErrorInput(SampleInput(_t((1, 5, 4), D.float32, device), [3, 3], [2, 2], [1, 1],
                                 [0, 0], [1, 1]), RuntimeError,
                     "to be divisible by the product of kernel_size")


def _im2col_ref(x, kernel_size, dilation, padding, stride):
    k, d, p, s = (_per_dim(v, 2) for v in (kernel_size, dilation, padding, stride))
    xb = x if x.ndim == 4 else x[None]
    n, c, h, w = xb.shape
    bh, bw = _blocks((h, w), k, d, p, s)
    xp = np.pad(xb, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    out = np.zeros((n, c, k[0], k[1], bh, bw), x.dtype)
    for ki, kj, bi, bj in np.ndindex(k[0], k[1], bh, bw):
        out[:, :, ki, kj, bi, bj] = xp[:, :, bi * s[0] + ki * d[0], bj * s[1] + kj * d[1]]
    out = out.reshape(n, c * k[0] * k[1], bh * bw)
    return out if x.ndim == 4 else out[0]


def _im2col_samples(info, device, dtype):
    yield SampleInput(_t((2, 3, 5, 6), dtype, device), [2, 3], [1, 2], [1, 0], [2, 1])
    yield SampleInput(_t((3, 4, 4), dtype, device), [2, 2], [1, 1], [0, 0], [1, 1])
    yield SampleInput(_t((0, 2, 3, 3), dtype, device), [3, 3], [1, 1], [1, 1], [1, 1])


def _im2col_errors(info, device):
    yield ErrorInput(SampleInput(_t((1, 1, 2, 2), D.float32, device), [3, 3], [1, 1], [0, 0],
                                 [1, 1]), RuntimeError, "must be at least one")
    yield ErrorInput(SampleInput(_t((2, 2, 2, 2, 2), D.float32, device), [1, 1], [1, 1],
                                 [0, 0], [1, 1]), RuntimeError, "Expected 3D or 4D")
    # a 2-D input fails reading its size(2) first (PyTorch's order)
    yield ErrorInput(SampleInput(_t((2, 2), D.float32, device), [1, 1], [1, 1], [0, 0],
                                 [1, 1]), IndexError, "Dimension out of range")
    yield ErrorInput(SampleInput(_t((1, 1, 2, 2), D.float32, device), [1, 1], [1, 1], [-1, 0],
                                 [1, 1]), RuntimeError, "padding should be non-negative")


register(
    OpInfo(aten.upsample_nearest2d.vec, _nearest_ref, NEAREST_DTYPES, _nearest_samples(True),
           error_inputs=_upsample_errors(False)),
    OpInfo(aten.upsample_nearest2d.default, _scaled_ref(False), NEAREST_DTYPES,
           _nearest_samples(False)),
    OpInfo(aten.upsample_bilinear2d.vec, u8_or(_floatref(_bilinear_ref), _bilinear_mats(True)),
           NEAREST_DTYPES, _bilinear_samples(True), tols=TOLS,
           error_inputs=_upsample_errors(True)),
    OpInfo(aten.upsample_bilinear2d.default,
           u8_or(_floatref(_scaled_ref(True)), _bilinear_mats(False)), NEAREST_DTYPES,
           _bilinear_samples(False), tols=TOLS),
    OpInfo(aten.grid_sampler_2d.default, _floatref(np_grid_sample), F, _grid_samples,
           tols=TOLS, error_inputs=_grid_errors),
    OpInfo(aten.grid_sampler_3d.default, _floatref(np_grid_sample_3d), F, _grid3_samples,
           tols=TOLS, error_inputs=_grid3_errors),
    OpInfo(aten.grid_sampler.default, _floatref(_grid_sampler_ref), F, _grid_dispatch_samples,
           tols=TOLS),
    OpInfo(aten.affine_grid_generator.default, _floatref(np_affine_grid), F, _affine_samples,
           tols=TOLS, error_inputs=_affine_errors),
    OpInfo(aten.col2im.default, _floatref(_col2im_ref), F, _col2im_samples, tols=TOLS,
           error_inputs=_col2im_errors),
    OpInfo(aten.im2col.default, _im2col_ref, F, _im2col_samples, error_inputs=_im2col_errors),
)
