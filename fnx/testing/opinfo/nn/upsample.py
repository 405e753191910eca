"""OpInfo entries for the upsampling ops of fnx/ir/aten/nn/upsample.py in 1, 2 and 3
spatial dims (``upsample_nearest2d`` and ``upsample_bilinear2d`` are in sampling.py).

The references build, per spatial dim, the dense ``(out, in)`` interpolation matrix from
PyTorch's coordinate formulas and apply it with ``np.tensordot`` (last dim first); nearest
indices are computed in float32 as PyTorch does, so they are exact.
"""
from __future__ import annotations

import math

import numpy as np

from ....core import dtype as D
from ....ops import aten
from ...database import ErrorInput, OpInfo, SampleInput, register
from ._common import F, TOLS, _floatref, _t

NEAREST_DTYPES = (D.float32, D.float64, D.uint8)


def np_ratio(n_in, n_out, align_corners, scale):
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def np_nearest_matrix(n_in, n_out, scale, exact, shortcuts):
    f32 = np.float32
    sc = f32(1.0 / scale) if scale is not None and scale > 0 else f32(n_in) / f32(n_out)
    dst = np.arange(n_out)
    if shortcuts and n_out == n_in:
        src = dst
    elif shortcuts and n_out == 2 * n_in:
        src = dst // 2
    elif exact:
        src = np.floor(((dst + 0.5) * np.float64(sc)).astype(f32)).astype(np.int64)
    else:
        src = np.floor(dst.astype(f32) * sc).astype(np.int64)
    m = np.zeros((n_out, n_in))
    m[dst, np.minimum(src, n_in - 1)] = 1
    return m


def np_linear_matrix(n_in, n_out, align_corners, scale):
    m = np.zeros((n_out, n_in))
    if n_in == n_out:
        return np.eye(n_in)
    r = np_ratio(n_in, n_out, align_corners, scale)
    for o in range(n_out):
        s = r * o if align_corners else max(r * (o + 0.5) - 0.5, 0.0)
        i0 = min(int(math.floor(s)), n_in - 1)
        lam = min(max(s - i0, 0.0), 1.0)
        m[o, i0] += 1 - lam
        m[o, min(i0 + 1, n_in - 1)] += lam
    return m


def np_cubic_weight(x, a):
    """Keys' cubic convolution kernel at distance ``x``."""
    x = abs(x)
    if x <= 1:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return 0.0


def np_cubic_matrix(n_in, n_out, align_corners, scale):
    m = np.zeros((n_out, n_in))
    r = np_ratio(n_in, n_out, align_corners, scale)
    for o in range(n_out):
        s = r * o if align_corners else r * (o + 0.5) - 0.5
        i = math.floor(s)
        t = s - i
        for k in range(4):       # taps i-1 .. i+2, clamped at the borders
            m[o, min(max(i - 1 + k, 0), n_in - 1)] += np_cubic_weight(t - (k - 1), -0.75)
    return m


def np_lanczos3(x):
    return float(np.sinc(x) * np.sinc(x / 3)) if abs(x) < 3 else 0.0


def np_aa_matrix(n_in, n_out, align_corners, scale, mode):
    """The antialiased (PIL-style) resize: a triangle (bilinear), Keys a=-0.5 (bicubic) or
    Lanczos-3 filter stretched by the ratio when downsampling, normalized over the inputs
    it covers."""
    if n_in == n_out:
        return np.eye(n_in)
    r = np_ratio(n_in, n_out, align_corners, scale)
    width = {"aa_linear": 2, "aa_cubic": 4, "aa_lanczos": 6}[mode]
    support = width / 2 * r if r >= 1 else width / 2
    inv = 1 / r if r >= 1 else 1.0
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        center = r * (o + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n_in)
        for i in range(lo, hi):
            d = (i - center + 0.5) * inv
            m[o, i] = (np_cubic_weight(d, -0.5) if mode == "aa_cubic" else np_lanczos3(d)
                       if mode == "aa_lanczos" else max(1 - abs(d), 0.0))
        total = m[o].sum()
        if total != 0:
            m[o] /= total
    return m


def np_resample(x, mats):
    out = x.astype(np.float64)
    for i in reversed(range(len(mats))):
        out = np.moveaxis(np.tensordot(mats[i], out, axes=([1], [2 + i])), 0, 2 + i)
    return out


def np_u8_resample(x, mats):
    """PyTorch's uint8 resize (bilinear and bicubic, plain or antialiased): each dim's
    matrix in int16 fixed point (the most fraction bits that keep its largest weight
    under 2^15, weights rounded half away from zero), applied last dim first, each pass
    rounded half up and clamped to [0, 255]; a dim whose size is kept is not resampled."""
    out = x
    for i in reversed(range(len(mats))):
        m = mats[i]
        if m.shape[0] == m.shape[1]:
            continue
        bits = 0
        while bits < 22 and math.floor(0.5 + m.max() * 2.0 ** (bits + 1)) < 2 ** 15:
            bits += 1
        w = np.fix(m * 2.0 ** bits + np.copysign(0.5, m)).astype(np.int64)
        acc = np.moveaxis(np.tensordot(w, out.astype(np.int64), axes=([1], [2 + i])), 0, 2 + i)
        out = np.clip((acc + 2 ** (bits - 1)) // 2 ** bits, 0, 255).astype(np.uint8)
    return out


def u8_or(float_ref, mats_of):
    """``float_ref``, or on uint8 input ``np_u8_resample`` by the matrices
    ``mats_of(x, *args)`` gives."""
    def ref(x, *args):
        if x.dtype == np.uint8:
            return np_u8_resample(x, mats_of(x, *args))
        return float_ref(x, *args)
    return ref


def _out_size(x, output_size, scale_factors):
    if output_size is not None:
        return list(output_size), [None] * len(output_size)
    return [int(n * s) for n, s in zip(x.shape[2:], scale_factors)], list(scale_factors)


def _matrices(mode, x, out, scales, align_corners):
    nd = len(out)
    sp = x.shape[2:]
    if mode in ("nearest", "nearest_exact"):
        return [np_nearest_matrix(sp[i], out[i], scales[i], mode == "nearest_exact",
                                  nd == 2 and mode == "nearest") for i in range(nd)]
    if mode == "linear":
        return [np_linear_matrix(sp[i], out[i], align_corners, scales[i]) for i in range(nd)]
    if mode == "cubic":
        return [np_cubic_matrix(sp[i], out[i], align_corners, scales[i]) for i in range(nd)]
    return [np_aa_matrix(sp[i], out[i], align_corners, scales[i], mode) for i in range(nd)]


def _vec_mats(mode, interp):
    def mats(x, output_size, *rest):
        out, scales = _out_size(x, output_size, rest[-1])
        return _matrices(mode, x, out, scales, rest[0] if interp else None)
    return mats


def _default_mats(mode, interp):
    def mats(x, output_size, *rest):
        scales = list(rest[1:] if interp else rest)
        scales += [None] * (len(output_size) - len(scales))
        return _matrices(mode, x, list(output_size), scales, rest[0] if interp else None)
    return mats


def _vec_ref(mode, interp):
    def ref(x, *args):
        return np_resample(x, _vec_mats(mode, interp)(x, *args)).astype(x.dtype)
    return ref


def _default_ref(mode, interp):
    def ref(x, *args):
        return np_resample(x, _default_mats(mode, interp)(x, *args)).astype(x.dtype)
    return ref


# per dims: (input shape, output_size, scale_factors) of the .vec samples
CASES = {
    1: [((2, 3, 5), [9], None), ((1, 2, 7), [3], None), ((1, 2, 4), None, [1.7]),
        ((0, 2, 4), [6], None)],
    2: [((1, 2, 4, 5), [7, 3], None), ((1, 1, 6, 5), None, [0.6, 1.5]),
        ((2, 1, 3, 3), [3, 6], None)],
    3: [((1, 2, 2, 3, 4), [3, 5, 2], None), ((1, 1, 3, 2, 3), None, [1.5, 2.0, 0.7])],
}
# per dims: (input shape, output_size, scales) of the default-overload samples
SCALED = {1: ((1, 2, 4), [6], [1.3]), 2: ((1, 2, 3, 5), [4, 3], [1.5, 0.6]),
          3: ((1, 1, 2, 3, 4), [3, 4, 3], [1.6, None, 0.8])}


def _samples(nd, interp, vec, aa=False):
    def samples(info, device, dtype):
        if vec:
            cases = CASES[nd]
            if aa:      # antialiasing matters when downsampling
                cases = cases + [((1, 2, 9, 7), [4, 3], None), ((1, 1, 8, 6), None, [0.3, 0.45])]
            for i, (shape, out, scales) in enumerate(cases):
                x = _t(shape, dtype, device, noncontiguous=(i == 1))
                mid = (i % 2 == 1,) if interp else ()
                yield SampleInput(x, out, *mid, scales)
        else:
            shape, out, scales = SCALED[nd]
            if aa:
                shape, out, scales = (1, 1, 8, 5), [3, 4], [0.4, None]
            mid = (False,) if interp else ()
            yield SampleInput(_t(shape, dtype, device), out, *mid, *scales)
    return samples


def _errors(nd, interp):
    def errors(info, device):
        shape = (1, 2) + (3,) * nd
        x = _t(shape, D.float32, device)
        mid = (False,) if interp else ()
        yield ErrorInput(SampleInput(x, [2] * nd, *mid, [2.0] * nd), RuntimeError,
                         "Must specify exactly one of output_size and scale_factors")
        yield ErrorInput(SampleInput(_t((2,) + (3,) * nd, D.float32, device), [2] * nd, *mid,
                                     None), RuntimeError,
                         f"It is expected input_size equals to {nd + 2}")
        yield ErrorInput(SampleInput(x, [2] * (nd + 1), *mid, None), RuntimeError,
                         f"It is expected output_size equals to {nd}")
        yield ErrorInput(SampleInput(x, [0] * nd, *mid, None), RuntimeError,
                         "Input and output sizes should be greater than 0")
        yield ErrorInput(SampleInput(_t((1, 0) + (3,) * nd, D.float32, device), [2] * nd, *mid,
                                     None), RuntimeError,
                         f"Non-empty {nd + 2}D data tensor expected")
        yield ErrorInput(SampleInput(_t(shape, D.int64, device), [4] * nd, *mid, None),
                         RuntimeError, "not implemented for 'Long'")
    return errors


# (op name, dims, mode, takes align_corners)
OPS = [("upsample_nearest1d", 1, "nearest", False), ("upsample_nearest3d", 3, "nearest", False),
       ("_upsample_nearest_exact1d", 1, "nearest_exact", False),
       ("_upsample_nearest_exact2d", 2, "nearest_exact", False),
       ("_upsample_nearest_exact3d", 3, "nearest_exact", False),
       ("upsample_linear1d", 1, "linear", True), ("upsample_trilinear3d", 3, "linear", True),
       ("upsample_bicubic2d", 2, "cubic", True), ("_upsample_bilinear2d_aa", 2, "aa_linear", True),
       ("_upsample_bicubic2d_aa", 2, "aa_cubic", True),
       ("_upsample_lanczos2d_aa", 2, "aa_lanczos", True)]

for _name, _nd, _mode, _interp in OPS:
    _packet = getattr(aten, _name)
    _nearest = _mode.startswith("nearest")
    _u8 = _nd == 2 and _mode != "aa_lanczos"      # PyTorch's uint8 image resizes
    _dtypes = NEAREST_DTYPES if _nearest or _u8 else F
    _aa = _mode.startswith("aa")
    _vref = _vec_ref(_mode, _interp)
    _dref = _default_ref(_mode, _interp)
    if not _nearest:
        _vref, _dref = _floatref(_vref), _floatref(_dref)
    if _u8:
        _vref = u8_or(_vref, _vec_mats(_mode, _interp))
        _dref = u8_or(_dref, _default_mats(_mode, _interp))
    register(
        OpInfo(_packet.vec, _vref, _dtypes, _samples(_nd, _interp, True, _aa), tols=TOLS,
               error_inputs=_errors(_nd, _interp)),
        OpInfo(_packet.default, _dref, _dtypes, _samples(_nd, _interp, False, _aa),
               tols=TOLS),
    )
