"""Upsampling: nearest, nearest-exact, (bi/tri)linear, bicubic and the antialiased
bilinear/bicubic/Lanczos-3 resize, in 1, 2 and 3 spatial dims (``F.interpolate``'s ops).

Every mode is separable: along one spatial dim, each output position reads a few input
positions ("taps") and sums them with weights.  ``_taps_*`` compute the taps of one dim as
index and weight tensors (PyTorch's CPU formulas, in the same dtype: float32 index math
for float inputs, the opmath dtype for weights), and ``_resample`` applies them with
``index_select`` and weighted sums, last dim first as PyTorch's kernels nest them.  So the
ops differentiate, trace and lower through their decomposition; ``upsample_nearest2d.vec``
and ``upsample_bilinear2d.vec`` are the Core ATen ones (with a meta function).

Each op has two overloads, as in ATen: ``.vec`` (``output_size`` or ``scale_factors``,
used by ``F.interpolate``) and the default one (``output_size`` plus optional per-dim
scales that set the source-coordinate ratio).  A given scale ``s`` makes the ratio ``1/s``
(not ``in/out``), which is what makes ``scale_factor=1.5`` differ from the size it gives.
"""
from __future__ import annotations

import math

import numpy as np

from ....core import dtype as D
from ....core.device import CPU
from ....core.dispatch_key import CPU_KS
from ....core.tensor import Tensor
from ....core.tls import current_mode
from ....ops import aten
from ...registry import TensorMeta, defop
from ._common import CORE, _arange, _not_implemented, _to, _up

_AXES = {1: ("W",), 2: ("H", "W"), 3: ("D", "H", "W")}
_SCALES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}
_A = -0.75          # bicubic convolution constant (upsample_bicubic2d)
_A_AA = -0.5        # the antialiased bicubic filter's (as PIL)


# ----------------------------------------------------------------------------- sizes

def _sizes(name, nd, input, output_size, scale_factors):
    """Output size and per-dim scales (None: ratio ``in/out``) of a ``.vec`` call."""
    if input.ndim != nd + 2:
        raise RuntimeError(f"{name}: It is expected input_size equals to {nd + 2}, but got "
                           f"size {input.ndim}")
    if (output_size is None) == (scale_factors is None):
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    sp = tuple(input.shape[2:])
    if output_size is not None:
        out = tuple(int(o) for o in output_size)
        if len(out) != nd:
            raise RuntimeError(f"{name}: It is expected output_size equals to {nd}, but got "
                               f"size {len(out)}")
        scales = (None,) * nd
    else:
        scales = tuple(float(s) for s in scale_factors)
        if len(scales) != nd:
            raise RuntimeError(f"{name}: It is expected scale_factors equals to {nd}, but got "
                               f"size {len(scales)}")
        out = tuple(int(n * s) for n, s in zip(sp, scales))
    _check_sizes(nd, input, sp, out)
    return out, scales


def _check_sizes(nd, input, sp, out):
    if any(n <= 0 for n in sp) or any(o <= 0 for o in out):
        ax = _AXES[nd]
        i = ", ".join(f"{a}: {n}" for a, n in zip(ax, sp))
        o = ", ".join(f"{a}: {n}" for a, n in zip(ax, out))
        sep = " and" if nd == 1 else ""
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({i}){sep} output ({o})")
    if input.shape[1] == 0:
        raise RuntimeError(f"Non-empty {nd + 2}D data tensor expected but got a tensor with "
                           f"sizes {list(input.shape)}")


# ----------------------------------------------------------------------------- taps

def _ratio(n_in, n_out, align_corners, scale, dtype):
    """PyTorch's ``area_pixel_compute_scale`` in ``dtype`` (float32 or float64)."""
    f = np.float32 if dtype is D.float32 else np.float64
    if align_corners:
        return float(f(n_in - 1) / f(n_out - 1)) if n_out > 1 else 0.0
    if scale is not None and scale > 0:
        return float(f(1.0 / scale))
    return float(f(n_in) / f(n_out))


def _source(n_out, ratio, align_corners, cubic, dtype, device):
    """``area_pixel_compute_source_index`` for every output position."""
    dst = _arange(n_out, dtype, device)
    if align_corners:
        return dst * ratio
    src = (dst + 0.5) * ratio - 0.5
    return src if cubic else aten.clamp(src, 0, None)


def _taps_nearest(n_in, n_out, scale, exact, shortcuts, device):
    # PyTorch's 2-D nearest kernel copies equal sizes and halves indices of doubled ones
    # whatever the scale; its 1-D and 3-D kernels always use the formula
    if shortcuts and n_out == n_in:
        return None
    if shortcuts and n_out == 2 * n_in:
        return [(aten.div.Scalar_mode(_arange(n_out, D.int64, device), 2,
                                      rounding_mode="floor"), None)]
    sc = float(np.float32(1.0 / scale) if scale is not None and scale > 0
               else np.float32(n_in) / np.float32(n_out))
    if exact:
        # (dst + 0.5) * scale is a double product, rounded to float by floorf
        src = _to((_arange(n_out, D.float64, device) + 0.5) * sc, D.float32)
    else:
        src = _arange(n_out, D.float32, device) * sc
    idx = aten.clamp(_to(aten.floor(src), D.int64), None, n_in - 1)
    return [(idx, None)]


def _taps_linear(n_in, n_out, align_corners, scale, dtype, device):
    if n_out == n_in:
        return None
    src = _source(n_out, _ratio(n_in, n_out, align_corners, scale, dtype), align_corners,
                  False, dtype, device)
    i0 = aten.clamp(_to(src, D.int64), None, n_in - 1)
    i1 = aten.clamp(i0 + 1, None, n_in - 1)
    l1 = aten.clamp(src - _to(i0, dtype), 0, 1)
    return [(i0, 1.0 - l1), (i1, l1)]


def _cubic_near(x, a):      # |x| <= 1
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic_far(x, a):       # 1 < |x| < 2
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def _taps_cubic(n_in, n_out, align_corners, scale, dtype, device):
    src = _source(n_out, _ratio(n_in, n_out, align_corners, scale, dtype), align_corners,
                  True, dtype, device)
    f = aten.floor(src)
    i = _to(f, D.int64)
    t = src - f
    u = 1.0 - t
    ws = [_cubic_far(t + 1.0, _A), _cubic_near(t, _A), _cubic_near(u, _A),
          _cubic_far(u + 1.0, _A)]
    return [(aten.clamp(i + (k - 1), 0, n_in - 1), w) for k, w in enumerate(ws)]


def _aa_linear(x):
    x = aten.abs(x)
    return aten.where.self(aten.lt.Scalar(x, 1.0), 1.0 - x, 0.0)


def _aa_cubic(x):
    x = aten.abs(x)
    far = aten.where.self(aten.lt.Scalar(x, 2.0), _cubic_far(x, _A_AA), 0.0)
    return aten.where.self(aten.lt.Scalar(x, 1.0), _cubic_near(x, _A_AA), far)


def _sinc(x):
    px = x * math.pi
    zero = aten.eq.Scalar(x, 0.0)
    return aten.where.self(zero, 1.0, aten.sin(px) / aten.where.self(zero, 1.0, px))


def _aa_lanczos(x):
    """Lanczos-3: sinc(x) * sinc(x / 3) on |x| < 3."""
    return aten.where.self(aten.lt.Scalar(aten.abs(x), 3.0), _sinc(x) * _sinc(x / 3.0), 0.0)


_AA_FILTERS = {"aa_linear": (2, _aa_linear), "aa_cubic": (4, _aa_cubic),
               "aa_lanczos": (6, _aa_lanczos)}


def _taps_aa(n_in, n_out, align_corners, scale, mode, dtype, device):
    """The antialiased (separable, PIL-style) resize along one dim: a filter stretched by
    the ratio when downsampling, over every input within its support, normalized."""
    if n_out == n_in:
        return None
    ratio = _ratio(n_in, n_out, align_corners, scale, dtype)
    width, filt = _AA_FILTERS[mode]
    support = width * 0.5 * ratio if ratio >= 1.0 else width * 0.5
    n_taps = int(math.ceil(support)) * 2 + 1
    invscale = 1.0 / ratio if ratio >= 1.0 else 1.0
    center = aten.view(ratio * (_arange(n_out, dtype, device) + 0.5), [n_out, 1])
    xmin = aten.clamp(_to(center - support + 0.5, D.int64), 0, None)
    xmax = aten.clamp(_to(center + support + 0.5, D.int64), None, n_in)
    j = aten.view(_arange(n_taps, D.int64, device), [1, n_taps])
    idx = xmin + j
    w = filt((_to(idx, dtype) - center + 0.5) * invscale)
    w = aten.where.self(aten.lt.Tensor(j, xmax - xmin), w, 0.0)
    total = aten.sum.dim_IntList(w, [1], True)
    w = aten.where.self(aten.ne.Scalar(total, 0), w / total, w)
    idx = aten.clamp(idx, None, n_in - 1)
    return [(aten.select.int(idx, 1, k), aten.select.int(w, 1, k)) for k in range(n_taps)]


def _resample(input, taps):
    """Apply each dim's taps (None: that dim is copied), last dim first."""
    x = input
    nd = len(taps)
    for i in reversed(range(nd)):
        if taps[i] is None:
            continue
        dim = 2 + i
        view = [-1] + [1] * (nd - 1 - i)
        acc = None
        for idx, w in taps[i]:
            v = aten.index_select(x, dim, idx)
            if w is not None:
                v = v * aten.view(w, view)
            acc = v if acc is None else acc + v
        x = acc
    return aten.clone(x) if x is input else x


# ----------------------------------------------------------------------------- uint8
# PyTorch resizes uint8 images (bilinear, bicubic, antialiased or not) in fixed point, as
# PIL: per dim, weights over a range of inputs normalized to sum 1 (PIL's ranges; plain
# bicubic keeps the float kernel's clamped taps), scaled to int16 with the most bits that
# fit, then out = clamp((sum(x * w) + 2^(p-1)) >> p, 0, 255): the width first, rounded to
# uint8 before the height.  Taps depend on sizes alone, so they are host constants.

def _u8_filter(mode):
    a = _A_AA if mode == "aa_cubic" else _A

    def cubic(x):
        x = abs(x)
        return _cubic_near(x, a) if x < 1.0 else _cubic_far(x, a) if x < 2.0 else 0.0
    if mode in ("linear", "aa_linear"):
        return 2, lambda x: max(0.0, 1.0 - abs(x))
    return 4, cubic


def _u8_rows(n_in, n_out, align_corners, scale, mode):
    """Each output's ``(first input, float weights)`` along one dim."""
    ratio = _ratio(n_in, n_out, align_corners, scale, D.float64)
    width, filt = _u8_filter(mode)
    rows = []
    if mode == "cubic":         # the float kernel's four clamped taps, merged per input
        for i in range(n_out):
            src = ratio * i if align_corners else ratio * (i + 0.5) - 0.5
            f = math.floor(src)
            t = src - f
            w = np.zeros(n_in)
            for k, wk in enumerate((filt(t + 1.0), filt(t), filt(1.0 - t), filt(2.0 - t))):
                w[min(max(f + k - 1, 0), n_in - 1)] += wk
            lo = min(max(f - 1, 0), n_in - 1)
            rows.append((lo, w[lo:min(max(f + 2, 0), n_in - 1) + 1]))
        return rows
    aa = mode.startswith("aa_")
    support = width * 0.5 * ratio if aa and ratio >= 1.0 else width * 0.5
    most = int(math.ceil(support)) * 2 + 1 if aa else width
    delta = 0.5 if align_corners and not aa else 0.0
    invscale = 1.0 / ratio if aa and ratio >= 1.0 else 1.0
    for i in range(n_out):
        center = ratio * (i + 0.5 - delta)
        lo = max(int(center - support + 0.5 + delta), 0)
        n = min(max(min(int(center + support + 0.5 + delta), n_in) - lo, 0), most)
        w = np.array([filt((j + lo - center + 0.5 - delta) * invscale) for j in range(n)])
        total = w.sum()
        rows.append((lo, w / total if total != 0 else w))
    return rows


def _u8_taps(n_in, n_out, align_corners, scale, mode):
    """``(index [n_out, k], int weights [n_out, k], precision)`` as NumPy arrays."""
    rows = _u8_rows(n_in, n_out, align_corners, scale, mode)
    w_max = max((float(w.max()) for _, w in rows if len(w)), default=0.0)
    bits = 0
    while bits < 22 and int(0.5 + w_max * (1 << (bits + 1))) < (1 << 15):
        bits += 1
    k = max(len(w) for _, w in rows)
    idx = np.zeros((n_out, k), np.int64)
    wts = np.zeros((n_out, k), np.int64)
    for i, (lo, w) in enumerate(rows):
        v = w * (1 << bits)
        idx[i] = np.minimum(lo + np.arange(k), n_in - 1)
        wts[i, :len(w)] = np.trunc(np.where(v < 0, v - 0.5, v + 0.5))
    return idx, wts, bits


def _host(arr, device):
    """``arr`` as an int64 tensor on ``device``; while tracing (on meta tensors) it stays
    a CPU constant, which the trace records by value."""
    t = Tensor._make(arr, D.int64, CPU, CPU_KS)
    if device is not CPU and (device.type != "meta" or current_mode() is None):
        t = aten._to_copy(t, device=device)
    return t


def _upsample_u8(mode, input, out, scales, align_corners):
    x = input
    for i in reversed(range(len(out))):
        dim, n_in = 2 + i, x.shape[2 + i]
        if n_in == out[i]:
            continue
        idx, wts, bits = _u8_taps(n_in, out[i], align_corners, scales[i], mode)
        view = [-1] + [1] * (len(out) - 1 - i)
        x64, acc = _to(x, D.int64), None
        for k in range(idx.shape[1]):
            v = aten.index_select(x64, dim, _host(np.ascontiguousarray(idx[:, k]), x.device))
            v = v * aten.view(_host(np.ascontiguousarray(wts[:, k]), x.device), view)
            acc = v if acc is None else acc + v
        acc = aten.div.Scalar_mode(acc + (1 << (bits - 1)), 1 << bits, rounding_mode="floor")
        x = _to(aten.clamp(acc, 0, 255), D.uint8)
    return aten.clone(x) if x is input else x


# ----------------------------------------------------------------------------- the ops

# the CPU kernels whose dtype error PyTorch reports, per (mode, dims)
_KERNELS = {("nearest", 2): "upsample_nearest2d_channels_last",
            ("nearest", 1): "compute_indices_weights_nearest",
            ("nearest", 3): "compute_indices_weights_nearest",
            ("linear", 2): "upsample_bilinear2d_channels_last",
            ("linear", 1): "compute_indices_weights_linear",
            ("linear", 3): "compute_indices_weights_linear",
            ("cubic", 2): "compute_indices_weights_cubic",
            ("aa_linear", 2): "compute_index_ranges_weights",
            ("aa_cubic", 2): "compute_index_ranges_weights",
            ("aa_lanczos", 2): "compute_index_ranges_weights"}


_U8_MODES = ("nearest", "nearest_exact", "linear", "cubic", "aa_linear", "aa_cubic")


def _check_dtype(mode, nd, input):
    dt = input.dtype
    if dt.is_floating_point or (dt is D.uint8 and mode in _U8_MODES and
                                (nd == 2 or mode.startswith("nearest"))):
        return
    key = ("nearest" if mode == "nearest_exact" else mode, nd)
    raise _not_implemented(_KERNELS[key], dt)


def _upsample(mode, nd, input, out, scales, align_corners):
    _check_dtype(mode, nd, input)
    sp = input.shape[2:]
    dev = input.device
    if mode in ("nearest", "nearest_exact"):
        exact = mode == "nearest_exact"
        taps = [_taps_nearest(sp[i], out[i], scales[i], exact, nd == 2 and not exact, dev)
                for i in range(nd)]
        return _resample(input, taps)
    if input.dtype is D.uint8:
        return _upsample_u8(mode, input, out, scales, align_corners)
    x = _up(input)
    dt = x.dtype
    if mode == "linear":
        taps = [_taps_linear(sp[i], out[i], align_corners, scales[i], dt, dev)
                for i in range(nd)]
    elif mode == "cubic":
        taps = [_taps_cubic(sp[i], out[i], align_corners, scales[i], dt, dev)
                for i in range(nd)]
    else:
        taps = [_taps_aa(sp[i], out[i], align_corners, scales[i], mode, dt, dev)
                for i in range(nd)]
    return _to(_resample(x, taps), input.dtype)


def _define(name, nd, mode, interp, core=False):
    """The ``.vec`` and default overloads of one upsampling op."""
    ac = "bool align_corners, " if interp else ""
    scale_names = _SCALES[nd]

    def vec(input, output_size, *args, **kwargs):
        names = (("align_corners",) if interp else ()) + ("scale_factors",)
        v = dict(zip(names, args), **kwargs)
        out, scales = _sizes(name, nd, input, output_size, v["scale_factors"])
        return _upsample(mode, nd, input, out, scales, v.get("align_corners"))

    def default(self, output_size, *args, **kwargs):
        names = (("align_corners",) if interp else ()) + scale_names
        v = dict(zip(names, args), **kwargs)
        out, _ = _sizes(name, nd, self, output_size, None)
        scales = tuple(v.get(s) for s in scale_names)
        return _upsample(mode, nd, self, out, scales, v.get("align_corners"))

    def meta(input, output_size, *args, **kwargs):
        scale_factors = kwargs.get("scale_factors", args[-1] if args else None)
        out, _ = _sizes(name, nd, input, output_size, scale_factors)
        _check_dtype(mode, nd, input)
        return TensorMeta(tuple(input.shape[:2]) + out, input.dtype)

    vec_op = defop(f"{name}.vec(Tensor input, SymInt[]? output_size, {ac}float[]? "
                   f"scale_factors) -> Tensor", tags=CORE if core else (),
                   meta=meta if core else None, decomposition=vec, explicit=core)
    scales = ", ".join(f"float? {s}=None" for s in scale_names)
    default_op = defop(f"{name}(Tensor self, SymInt[{nd}] output_size, {ac}{scales}) -> Tensor",
                       decomposition=default)
    return vec_op, default_op


upsample_nearest1d_vec, upsample_nearest1d = _define("upsample_nearest1d", 1, "nearest", False)
upsample_nearest2d_vec, upsample_nearest2d = _define("upsample_nearest2d", 2, "nearest", False,
                                                     core=True)
upsample_nearest3d_vec, upsample_nearest3d = _define("upsample_nearest3d", 3, "nearest", False)
upsample_nearest_exact1d_vec, upsample_nearest_exact1d = _define(
    "_upsample_nearest_exact1d", 1, "nearest_exact", False)
upsample_nearest_exact2d_vec, upsample_nearest_exact2d = _define(
    "_upsample_nearest_exact2d", 2, "nearest_exact", False)
upsample_nearest_exact3d_vec, upsample_nearest_exact3d = _define(
    "_upsample_nearest_exact3d", 3, "nearest_exact", False)
upsample_linear1d_vec, upsample_linear1d = _define("upsample_linear1d", 1, "linear", True)
upsample_bilinear2d_vec, upsample_bilinear2d = _define("upsample_bilinear2d", 2, "linear", True,
                                                       core=True)
upsample_trilinear3d_vec, upsample_trilinear3d = _define("upsample_trilinear3d", 3, "linear",
                                                         True)
upsample_bicubic2d_vec, upsample_bicubic2d = _define("upsample_bicubic2d", 2, "cubic", True)
upsample_bilinear2d_aa_vec, upsample_bilinear2d_aa = _define("_upsample_bilinear2d_aa", 2,
                                                             "aa_linear", True)
upsample_bicubic2d_aa_vec, upsample_bicubic2d_aa = _define("_upsample_bicubic2d_aa", 2,
                                                           "aa_cubic", True)
upsample_lanczos2d_aa_vec, upsample_lanczos2d_aa = _define("_upsample_lanczos2d_aa", 2,
                                                           "aa_lanczos", True)
