"""Resampling and rearranging in fnx.nn: ``F.interpolate`` in every mode (and ``Upsample``,
the deprecated ``upsample*`` aliases), ``grid_sample``/``affine_grid``, pixel and channel
shuffles, ``Fold``/``Unfold``.

Each result is checked against a NumPy reference written out here (loops over output
positions with PyTorch's coordinate formulas), gradients against finite differences
(``fnx.autograd.gradcheck``), ``fnx.compile`` against eager, and the cuda backend (under
``FNX_CUDA_ON_CPU=1``) against the CPU one.
"""
import itertools
import math
import warnings

import numpy as np
import pytest

import fnx
import fnx.nn as nn
import fnx.nn.functional as F

F32, F64 = fnx.float32, fnx.float64


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def T(a, dtype=F64, requires_grad=False):
    return fnx.tensor(np.asarray(a), dtype=dtype, requires_grad=requires_grad)


def close(t, expect, rtol=1e-10, atol=1e-10):
    got = t.detach().numpy(force=True)
    assert got.shape == np.shape(expect), (got.shape, np.shape(expect))
    np.testing.assert_allclose(got, expect, rtol=rtol, atol=atol)


# ============================================================== interpolate: NumPy reference

def ratio(n_in, n_out, align_corners, scale):
    """Input pixels per output pixel (``1/scale`` when a scale is given)."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale else n_in / n_out


def taps_nearest(n_in, n_out, scale, exact, shortcuts):
    """PyTorch computes nearest source indices in float32: floor(dst * scale) or
    floor((dst + 0.5) * scale) (nearest-exact); its 2-D kernel copies equal sizes and
    halves doubled ones whatever the scale."""
    f32 = np.float32
    sc = f32(1.0 / scale) if scale else f32(n_in) / f32(n_out)
    taps = []
    for o in range(n_out):
        if shortcuts and n_out == n_in:
            i = o
        elif shortcuts and n_out == 2 * n_in:
            i = o // 2
        elif exact:
            i = math.floor(f32((o + 0.5) * float(sc)))
        else:
            i = math.floor(f32(o) * sc)
        taps.append([(min(i, n_in - 1), 1.0)])
    return taps


def taps_linear(n_in, n_out, align_corners, scale):
    r = ratio(n_in, n_out, align_corners, scale)
    taps = []
    for o in range(n_out):
        if n_in == n_out:
            taps.append([(o, 1.0)])
            continue
        s = r * o if align_corners else max(r * (o + 0.5) - 0.5, 0.0)
        i = min(math.floor(s), n_in - 1)
        t = min(s - i, 1.0)
        taps.append([(i, 1 - t), (min(i + 1, n_in - 1), t)])
    return taps


def keys(x, a):
    """Keys' cubic convolution kernel."""
    x = abs(x)
    if x <= 1:
        return (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1
    if x < 2:
        return a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a
    return 0.0


def taps_cubic(n_in, n_out, align_corners, scale):
    r = ratio(n_in, n_out, align_corners, scale)
    taps = []
    for o in range(n_out):
        s = r * o if align_corners else r * (o + 0.5) - 0.5     # not clamped at 0
        i = math.floor(s)
        taps.append([(min(max(i + k, 0), n_in - 1), keys(s - (i + k), -0.75))
                     for k in (-1, 0, 1, 2)])
    return taps


def lanczos3(x):
    if x == 0:
        return 1.0
    if abs(x) >= 3:
        return 0.0
    return 3 * math.sin(math.pi * x) * math.sin(math.pi * x / 3) / (math.pi * x) ** 2


FILTERS = {"bilinear": (1.0, lambda d: max(0.0, 1 - abs(d))),
           "bicubic": (2.0, lambda d: keys(d, -0.5)), "lanczos": (3.0, lanczos3)}


def taps_antialias(n_in, n_out, align_corners, scale, mode):
    """PIL-style: the filter (triangle, Keys a=-0.5 or Lanczos-3) widened by the ratio when
    shrinking, over the input pixels within its support, normalized to sum 1."""
    if n_in == n_out:
        return [[(o, 1.0)] for o in range(n_out)]
    r = ratio(n_in, n_out, align_corners, scale)
    radius, filt = FILTERS[mode]
    half = radius * max(r, 1.0)
    stretch = max(r, 1.0)
    taps = []
    for o in range(n_out):
        c = r * (o + 0.5)
        lo, hi = max(int(c - half + 0.5), 0), min(int(c + half + 0.5), n_in)
        ws = [filt((i + 0.5 - c) / stretch) for i in range(lo, hi)]
        total = sum(ws)
        taps.append([(i, w / total) for i, w in zip(range(lo, hi), ws)])
    return taps


def apply_taps(x, taps):
    """out[..., o1, o2, ...] = sum over tap combinations of prod(weights) * x[..., i1, ...]."""
    nd = len(taps)
    out = np.zeros(x.shape[:2] + tuple(len(t) for t in taps))
    for pos in np.ndindex(*out.shape[2:]):
        acc = np.zeros(x.shape[:2])
        for combo in itertools.product(*[taps[d][pos[d]] for d in range(nd)]):
            w = math.prod(c[1] for c in combo)
            acc = acc + w * x[(slice(None), slice(None)) + tuple(c[0] for c in combo)]
        out[(slice(None), slice(None)) + pos] = acc
    return out


def area(x, out):
    """Adaptive average pooling: output i averages inputs floor(i*n/o) .. ceil((i+1)*n/o)."""
    nd = len(out)
    res = np.zeros(x.shape[:2] + tuple(out))
    for pos in np.ndindex(*out):
        sl = tuple(slice(math.floor(p * n / o), math.ceil((p + 1) * n / o))
                   for p, n, o in zip(pos, x.shape[2:], out))
        res[(slice(None), slice(None)) + pos] = x[(slice(None), slice(None)) + sl].mean(
            axis=tuple(range(2, 2 + nd)))
    return res


def reference(x, mode, size=None, scale_factor=None, align_corners=None,
              recompute_scale_factor=None, antialias=False):
    nd = x.ndim - 2
    sp = x.shape[2:]
    if size is not None:
        out = list(size) if isinstance(size, (list, tuple)) else [size] * nd
        scales = [None] * nd
    else:
        scales = list(scale_factor) if isinstance(scale_factor, (list, tuple)) \
            else [scale_factor] * nd
        out = [math.floor(n * s) for n, s in zip(sp, scales)]
        if recompute_scale_factor or mode == "area":
            scales = [None] * nd
    if mode == "area":
        return area(x, out)
    ac = bool(align_corners)
    taps = []
    for n, o, s in zip(sp, out, scales):
        if mode in ("nearest", "nearest-exact"):
            taps.append(taps_nearest(n, o, s, mode == "nearest-exact",
                                     mode == "nearest" and nd == 2))
        elif antialias:
            taps.append(taps_antialias(n, o, ac, s, mode))
        elif mode == "bicubic":
            taps.append(taps_cubic(n, o, ac, s))
        else:
            taps.append(taps_linear(n, o, ac, s))
    return apply_taps(x, taps)


SHAPES = {1: (2, 2, 5), 2: (1, 2, 4, 5), 3: (1, 2, 3, 4, 3)}
MODES = [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 1),
         ("nearest-exact", 2), ("nearest-exact", 3), ("linear", 1), ("bilinear", 2),
         ("trilinear", 3), ("bicubic", 2), ("area", 1), ("area", 2), ("area", 3)]
INTERP = ("linear", "bilinear", "trilinear", "bicubic")


def _resizes(nd):
    """(size, scale_factor, recompute_scale_factor) cases for nd spatial dims."""
    return [([7, 3, 5][:nd], None, None), (2, None, None), ([2 * s for s in SHAPES[nd][2:]],
                                                             None, None),
            (None, 1.7, None), (None, 1.7, True), (None, [0.6, 2.5, 1.3][:nd], None),
            (None, 2.0, None), (None, 1.0, None)]


@pytest.mark.parametrize("mode,nd", MODES, ids=[f"{m}-{n}d" for m, n in MODES])
@pytest.mark.parametrize("dtype", [F64, F32], ids=["f64", "f32"])
def test_interpolate_matches_reference(rng, mode, nd, dtype):
    x = rng.standard_normal(SHAPES[nd])
    for size, scale, recompute in _resizes(nd):
        for ac in ((False, True) if mode in INTERP else (None,)):
            kw = dict(size=size, scale_factor=scale, mode=mode, align_corners=ac,
                      recompute_scale_factor=recompute)
            out = F.interpolate(T(x, dtype), **kw)
            assert out.dtype is dtype
            expect = reference(x, **kw)
            tol = 1e-10 if dtype is F64 else 2e-6
            if mode.startswith("nearest"):
                tol = 0     # copies of input values, exactly
            close(out, expect.astype(np.float32) if dtype is F32 else expect, rtol=tol,
                  atol=tol)


def test_interpolate_scale_sets_the_ratio(rng):
    # scale 1.7 on 4 pixels gives 6 outputs sampled at 1/1.7, not 4/6 (PyTorch's rule);
    # recompute_scale_factor=True samples at 4/6
    x = rng.standard_normal((1, 1, 4))
    a = F.interpolate(T(x), scale_factor=1.7, mode="linear").numpy()
    b = F.interpolate(T(x), scale_factor=1.7, mode="linear", recompute_scale_factor=True).numpy()
    c = F.interpolate(T(x), size=6, mode="linear").numpy()
    np.testing.assert_allclose(b, c)
    src = max((1 + 0.5) / 1.7 - 0.5, 0)
    np.testing.assert_allclose(a[0, 0, 1], x[0, 0, 0] * (1 - src) + x[0, 0, 1] * src)
    assert not np.allclose(a, c)


def test_interpolate_nearest_formulas():
    # nearest: floor(dst * in/out); nearest-exact: floor((dst + 0.5) * in/out)
    x = T(np.arange(5.0).reshape(1, 1, 5))
    assert F.interpolate(x, size=3).flatten().tolist() == [0, 1, 3]
    assert F.interpolate(x, size=3, mode="nearest-exact").flatten().tolist() == [0, 2, 4]
    assert F.interpolate(x, size=2).flatten().tolist() == [0, 2]
    assert F.interpolate(x, size=2, mode="nearest-exact").flatten().tolist() == [1, 3]


def test_interpolate_integer_and_half(rng):
    x = rng.integers(0, 255, (1, 2, 3, 4)).astype(np.uint8)
    out = F.interpolate(fnx.tensor(x), size=(5, 7), mode="nearest")
    assert out.dtype is fnx.uint8
    np.testing.assert_array_equal(out.numpy(), reference(x, "nearest", size=(5, 7)))
    h = F.interpolate(T(x, fnx.float16), size=(5, 7), mode="bilinear")
    assert h.dtype is fnx.float16
    close(h.float(), reference(x.astype(np.float64), "bilinear", size=(5, 7),
                               align_corners=False), rtol=2e-3, atol=0.2)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        F.interpolate(fnx.tensor(x.astype(np.int64)), size=2, mode="nearest")
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        F.interpolate(fnx.tensor(x.astype(np.int64)), size=2, mode="bilinear")


AA_CASES = [("bilinear", False), ("bilinear", True), ("bicubic", False), ("bicubic", True),
            ("lanczos", False)]


@pytest.mark.parametrize("mode,align_corners", AA_CASES)
@pytest.mark.parametrize("dtype", [F64, F32], ids=["f64", "f32"])
def test_interpolate_antialias(rng, mode, align_corners, dtype):
    x = rng.standard_normal((1, 2, 9, 13))
    for size, scale in [((3, 4), None), ((9, 5), None), ((17, 6), None), ((1, 1), None),
                        (None, 0.3), (None, (0.45, 2.1))]:
        kw = dict(size=size, scale_factor=scale, mode=mode, align_corners=align_corners,
                  antialias=True)
        tol = 1e-10 if dtype is F64 else 3e-6
        close(F.interpolate(T(x, dtype), **kw), reference(x, **kw), rtol=tol, atol=tol)
    # upsampling with antialias is plain bilinear interpolation (pixel centres aligned)
    if mode == "bilinear" and not align_corners:
        kw = dict(size=(12, 20), mode=mode, align_corners=align_corners)
        close(F.interpolate(T(x), antialias=True, **kw), F.interpolate(T(x), **kw).numpy())


ERRORS = [
    (dict(size=2, scale_factor=2), ValueError, "only one of size or scale_factor should be "
                                               "defined"),
    (dict(), ValueError, "either size or scale_factor should be defined"),
    (dict(size=2, align_corners=True), ValueError, "align_corners option can only be set with "
                                                   "the interpolating modes"),
    (dict(size=2, mode="area", align_corners=False), ValueError, "align_corners option"),
    (dict(size=2, mode="linear"), NotImplementedError, "Got 4D input, but linear mode needs 3D "
                                                       "input"),
    (dict(size=2, mode="trilinear"), NotImplementedError, "Got 4D input, but trilinear mode "
                                                          "needs 5D input"),
    (dict(size=2, mode="foo"), NotImplementedError, r"Input Error: Only 3D, 4D and 5D input "
                                                    r"Tensors supported \(got 4D\)"),
    (dict(size=[2, 2, 2]), ValueError, "Input and output must have the same number of spatial "
                                       "dimensions"),
    (dict(scale_factor=[2, 2, 2]), ValueError, "Input and scale_factor must have the same "
                                               "number of spatial dimensions"),
    (dict(size=[2.0, 2]), TypeError, "expected size to be one of int"),
    (dict(size=2, recompute_scale_factor=True), ValueError, "recompute_scale_factor is not "
                                                            "meaningful with an explicit size"),
    (dict(size=2, mode="nearest", antialias=True), ValueError, "Anti-alias option is "
                                                               "restricted to bilinear"),
    (dict(size=2, mode="lanczos"), ValueError, "Lanczos mode requires antialias=True"),
    (dict(size=2, mode="lanczos", antialias=True, align_corners=True), ValueError,
     "Lanczos mode does not support align_corners=True"),
    (dict(size=0), RuntimeError, r"Input and output sizes should be greater than 0, but got "
                                 r"input \(H: 3, W: 3\) output \(H: 0, W: 0\)"),
    (dict(scale_factor=0.2, mode="bilinear"), RuntimeError, "Input and output sizes should be "
                                                            "greater than 0"),
]


@pytest.mark.parametrize("kw,exc,match", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_interpolate_errors(kw, exc, match):
    x = fnx.ones(1, 2, 3, 3)
    with pytest.raises(exc, match=match):
        F.interpolate(x, **kw)


def test_interpolate_errors_other_ranks():
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D"):
        F.interpolate(fnx.ones(1, 2, 3), size=2, mode="bilinear")
    with pytest.raises(NotImplementedError, match=r"Only 3D, 4D and 5D input Tensors supported "
                                                  r"\(got 5D\).*\(got bicubic\)"):
        F.interpolate(fnx.ones(1, 1, 2, 2, 2), size=2, mode="bicubic")
    with pytest.raises(NotImplementedError, match=r"\(got 2D\)"):
        F.interpolate(fnx.ones(2, 3), size=2)
    with pytest.raises(RuntimeError, match=r"input \(W: 3\) and output \(W: 0\)"):
        F.interpolate(fnx.ones(1, 2, 3), size=0)
    with pytest.raises(RuntimeError, match="Non-empty 4D data tensor expected"):
        F.interpolate(fnx.ones(1, 0, 3, 3), size=2, mode="bicubic")


GRAD_MODES = [("nearest", 1, {}), ("nearest-exact", 3, {}), ("linear", 1, {}),
              ("bilinear", 2, {"align_corners": True}), ("trilinear", 3, {}),
              ("bicubic", 2, {}), ("bicubic", 2, {"antialias": True}),
              ("bilinear", 2, {"antialias": True}), ("area", 2, {}),
              ("lanczos", 2, {"antialias": True})]


@pytest.mark.parametrize("mode,nd,extra", GRAD_MODES,
                         ids=[f"{m}-{n}d-{'-'.join(e)}" for m, n, e in GRAD_MODES])
def test_interpolate_gradcheck(rng, mode, nd, extra):
    x = T(rng.standard_normal(SHAPES[nd]), requires_grad=True)
    size = [3, 4, 2][:nd] if extra.get("antialias") or mode == "area" else [4, 7, 5][:nd]
    assert fnx.autograd.gradcheck(lambda t: F.interpolate(t, size=size, mode=mode, **extra),
                                  (x,))


@pytest.mark.parametrize("mode,nd,extra", GRAD_MODES[1:7],
                         ids=[f"{m}-{n}d-{'-'.join(e)}" for m, n, e in GRAD_MODES[1:7]])
def test_interpolate_compiled_equals_eager(rng, mode, nd, extra):
    x = rng.standard_normal(SHAPES[nd]).astype(np.float32)
    w = fnx.tensor(rng.standard_normal(SHAPES[nd][:2] + tuple([3, 4, 2][:nd]))
                   .astype(np.float32))

    def step(t):
        y = F.interpolate(t, size=[3, 4, 2][:nd], mode=mode, **extra)
        (y * w).sum().backward()
        return y

    a, b = fnx.tensor(x, requires_grad=True), fnx.tensor(x, requires_grad=True)
    eager = step(a)
    compiled = fnx.compile(step)(b)
    close(compiled, eager.detach().numpy(), rtol=1e-5, atol=1e-6)
    close(b.grad, a.grad.numpy(), rtol=1e-5, atol=1e-6)


# ================================================================ Upsample and the aliases

def test_upsample_modules(rng):
    x = rng.standard_normal((1, 2, 3, 4))
    up = nn.Upsample(scale_factor=2)
    assert repr(up) == "Upsample(scale_factor=2.0, mode='nearest')"
    close(up(T(x)), reference(x, "nearest", scale_factor=2.0))
    up = nn.Upsample(size=(5, 6), mode="bicubic", align_corners=True)
    assert repr(up) == "Upsample(size=(5, 6), mode='bicubic')"
    close(up(T(x)), reference(x, "bicubic", size=(5, 6), align_corners=True))
    up = nn.Upsample(scale_factor=(1.5, 2), mode="bilinear", recompute_scale_factor=True)
    assert up.scale_factor == (1.5, 2.0)
    close(up(T(x)), reference(x, "bilinear", scale_factor=(1.5, 2.0), align_corners=False,
                              recompute_scale_factor=True))
    bil = nn.UpsamplingBilinear2d(scale_factor=2)
    assert repr(bil) == "UpsamplingBilinear2d(scale_factor=2.0, mode='bilinear')"
    assert bil.align_corners is True
    close(bil(T(x)), reference(x, "bilinear", scale_factor=2.0, align_corners=True))
    near = nn.UpsamplingNearest2d(size=3)
    assert repr(near) == "UpsamplingNearest2d(size=3, mode='nearest')"
    close(near(T(x)), reference(x, "nearest", size=3))
    assert nn.modules.upsampling.Upsample is nn.Upsample
    assert isinstance(bil, nn.Upsample) and isinstance(near, nn.Upsample)


def test_deprecated_upsample_functions_warn(rng):
    x = T(rng.standard_normal((1, 1, 2, 3)))
    with pytest.warns(UserWarning, match="nn.functional.upsample` is deprecated"):
        close(F.upsample(x, scale_factor=2, mode="bilinear"),
              F.interpolate(x, scale_factor=2, mode="bilinear").numpy())
    with pytest.warns(UserWarning, match="upsample_nearest` is deprecated"):
        close(F.upsample_nearest(x, size=(3, 5)), F.interpolate(x, size=(3, 5)).numpy())
    with pytest.warns(UserWarning, match="upsample_bilinear` is deprecated"):
        close(F.upsample_bilinear(x, scale_factor=2),
              reference(x.numpy(), "bilinear", scale_factor=2.0, align_corners=True))


# ======================================================================== pixel shuffle

def np_pixel_shuffle(x, r):
    *b, c, h, w = x.shape
    out = np.empty((*b, c // r // r, h * r, w * r), x.dtype)
    for k, i, j in np.ndindex(*out.shape[-3:]):
        out[..., k, i, j] = x[..., k * r * r + (i % r) * r + j % r, i // r, j // r]
    return out


@pytest.mark.parametrize("shape,r", [((1, 8, 2, 3), 2), ((9, 2, 2), 3), ((2, 3, 4, 1, 2), 2),
                                     ((1, 2, 3, 3), 1)])
def test_pixel_shuffle_and_unshuffle(rng, shape, r):
    x = rng.standard_normal(shape)
    out = F.pixel_shuffle(T(x), r)
    np.testing.assert_array_equal(out.numpy(), np_pixel_shuffle(x, r))
    back = F.pixel_unshuffle(out, r)
    np.testing.assert_array_equal(back.numpy(), x)
    np.testing.assert_array_equal(nn.PixelShuffle(r)(T(x)).numpy(), np_pixel_shuffle(x, r))
    np.testing.assert_array_equal(nn.PixelUnshuffle(r)(out).numpy(), x)
    np.testing.assert_array_equal(fnx.pixel_shuffle(T(x), r).numpy(), np_pixel_shuffle(x, r))
    # a fresh tensor even when the factor is 1
    xt = T(x)
    y = F.pixel_shuffle(xt, r)
    y.mul_(0)
    np.testing.assert_array_equal(xt.numpy(), x)


def test_pixel_shuffle_modules_errors_and_grad(rng):
    assert repr(nn.PixelShuffle(2)) == "PixelShuffle(upscale_factor=2)"
    assert repr(nn.PixelUnshuffle(3)) == "PixelUnshuffle(downscale_factor=3)"
    x = fnx.ones(1, 4, 3, 3)
    with pytest.raises(RuntimeError, match=r"input.size\(-3\)=4 is not divisible by 9"):
        F.pixel_shuffle(x, 3)
    with pytest.raises(RuntimeError, match="pixel_shuffle expects a positive upscale_factor, "
                                           "but got -2"):
        F.pixel_shuffle(x, -2)
    with pytest.raises(RuntimeError, match=r"at least 3 dimensions, but got input with 2 "
                                           r"dimension\(s\)"):
        F.pixel_shuffle(x[0, 0], 1)
    with pytest.raises(RuntimeError, match=r"expects height to be divisible by "
                                           r"downscale_factor, but input.size\(-2\)=3"):
        F.pixel_unshuffle(x, 2)
    with pytest.raises(RuntimeError, match="pixel_unshuffle expects a positive "
                                           "downscale_factor, but got 0"):
        F.pixel_unshuffle(x, 0)
    t = T(rng.standard_normal((1, 8, 2, 2)), requires_grad=True)
    assert fnx.autograd.gradcheck(lambda a: F.pixel_shuffle(a, 2) ** 2, (t,))


# ====================================================================== channel shuffle

@pytest.mark.parametrize("shape,g", [((2, 6, 3), 3), ((1, 4, 2, 2), 2), ((1, 6, 1, 2, 1), 6),
                                     ((2, 4, 2), 1)])
def test_channel_shuffle(rng, shape, g):
    x = rng.standard_normal(shape)
    c = shape[1]
    # channel k of the output is channel (k % g) * (c / g) + k // g of the input
    expect = np.stack([x[:, (k % g) * (c // g) + k // g] for k in range(c)], 1)
    for fn in (F.channel_shuffle, fnx.channel_shuffle, fnx.native_channel_shuffle,
               F.native_channel_shuffle, lambda t, g: nn.ChannelShuffle(g)(t)):
        np.testing.assert_array_equal(fn(T(x), g).numpy(), expect)
    xt = T(x)
    F.channel_shuffle(xt, g).mul_(0)             # a fresh tensor, also for one group
    np.testing.assert_array_equal(xt.numpy(), x)


def test_channel_shuffle_errors_and_grad(rng):
    assert repr(nn.ChannelShuffle(2)) == "ChannelShuffle(groups=2)"
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups. Got "
                                           "4 channels and 3 groups."):
        F.channel_shuffle(fnx.ones(1, 4, 3), 3)
    with pytest.raises(RuntimeError, match="must be positive. Value of groups:0"):
        F.channel_shuffle(fnx.ones(1, 4, 3), 0)
    with pytest.raises(RuntimeError, match=r"expects input with > 2 dims, but got input with "
                                           r"sizes \[2, 4\]"):
        fnx.native_channel_shuffle(fnx.ones(2, 4), 2)
    t = T(rng.standard_normal((2, 6, 2)), requires_grad=True)
    assert fnx.autograd.gradcheck(lambda a: F.channel_shuffle(a, 3) ** 2, (t,))


# ========================================================================= fold / unfold

def np_unfold(x, k, d, p, s):
    n, c, h, w = x.shape
    xp = np.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    bh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    bw = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.zeros((n, c * k[0] * k[1], bh * bw))
    for ch, ki, kj, bi, bj in np.ndindex(c, k[0], k[1], bh, bw):
        cols[:, (ch * k[0] + ki) * k[1] + kj, bi * bw + bj] = \
            xp[:, ch, bi * s[0] + ki * d[0], bj * s[1] + kj * d[1]]
    return cols


def np_fold(cols, out, k, d, p, s):
    n, ckk, _ = cols.shape
    c = ckk // (k[0] * k[1])
    bh = (out[0] + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    bw = (out[1] + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    img = np.zeros((n, c, out[0] + 2 * p[0], out[1] + 2 * p[1]))
    for ch, ki, kj, bi, bj in np.ndindex(c, k[0], k[1], bh, bw):
        img[:, ch, bi * s[0] + ki * d[0], bj * s[1] + kj * d[1]] += \
            cols[:, (ch * k[0] + ki) * k[1] + kj, bi * bw + bj]
    return img[:, :, p[0]:p[0] + out[0], p[1]:p[1] + out[1]]


FOLD_CASES = [((2, 3, 5, 6), (2, 3), (1, 2), (1, 0), (2, 1)),
              ((1, 2, 4, 4), (2, 2), (1, 1), (0, 0), (1, 1)),
              ((1, 1, 5, 5), (3, 3), (2, 2), (2, 2), (3, 1))]


@pytest.mark.parametrize("shape,k,d,p,s", FOLD_CASES)
def test_unfold_and_fold(rng, shape, k, d, p, s):
    x = rng.standard_normal(shape)
    kw = dict(kernel_size=k, dilation=d, padding=p, stride=s)
    cols = F.unfold(T(x), **kw)
    close(cols, np_unfold(x, k, d, p, s))
    close(nn.Unfold(**kw)(T(x)), np_unfold(x, k, d, p, s))
    close(F.unfold(T(x[0]), **kw), np_unfold(x[:1], k, d, p, s)[0])       # unbatched
    y = rng.standard_normal(tuple(cols.shape))
    out = shape[2:]
    close(F.fold(T(y), out, **kw), np_fold(y, out, k, d, p, s))
    close(nn.Fold(out, **kw)(T(y)), np_fold(y, out, k, d, p, s))
    close(F.fold(T(y[0]), out, **kw), np_fold(y[:1], out, k, d, p, s)[0])
    # fold is unfold's adjoint: <unfold(x), y> = <x, fold(y)>
    np.testing.assert_allclose((np_unfold(x, k, d, p, s) * y).sum(),
                               (x * F.fold(T(y), out, **kw).numpy()).sum())
    xt = T(x, requires_grad=True)
    assert fnx.autograd.gradcheck(lambda t: F.unfold(t, **kw) ** 2, (xt,))
    yt = T(y, requires_grad=True)
    assert fnx.autograd.gradcheck(lambda t: F.fold(t, out, **kw) ** 2, (yt,))


def test_fold_unfold_modules_and_errors():
    assert repr(nn.Fold(output_size=(4, 5), kernel_size=2)) == \
        "Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)"
    assert repr(nn.Unfold(kernel_size=(2, 3), padding=1, stride=2)) == \
        "Unfold(kernel_size=(2, 3), dilation=1, padding=1, stride=2)"
    with pytest.raises(RuntimeError, match="Expected 3D or 4D"):
        F.unfold(fnx.ones(1, 2, 3, 4, 4), 2)
    with pytest.raises(RuntimeError, match="must be at least one"):
        F.unfold(fnx.ones(1, 1, 2, 2), 3)
    # PyTorch reads input.size(1) and size(2) before checking the rank
    with pytest.raises(IndexError, match=r"range of \[-2, 1\], but got 2"):
        F.unfold(fnx.ones(3, 4), 2)
    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 1"):
        nn.Unfold(2)(fnx.ones(5))
    with pytest.raises(IndexError, match="Dimension specified as 1 but tensor has no dim"):
        F.unfold(fnx.ones(()), 2)
    for kw, msg in ((dict(kernel_size=(0, 1)), "kernel size should be greater than zero"),
                    (dict(kernel_size=1, dilation=(1, 0)), "dilation should be greater"),
                    (dict(kernel_size=1, padding=(0, -1)), "padding should be non-negative"),
                    (dict(kernel_size=1, stride=(0, 1)), "stride should be greater than zero")):
        with pytest.raises(RuntimeError, match=msg):     # checked before the rank (PyTorch)
            F.unfold(fnx.ones(3, 4), **kw)
    with pytest.raises(RuntimeError, match="Expected 2D or 3D"):
        F.fold(fnx.ones(2, 3, 4, 4), (3, 3), 2)
    with pytest.raises(RuntimeError, match="divisible by the product of kernel_size"):
        F.fold(fnx.ones(1, 5, 4), (3, 3), 2)
    with pytest.raises(RuntimeError, match="match the calculated number of sliding blocks"):
        F.fold(fnx.ones(1, 4, 5), (3, 3), 2)


# ======================================================================= grid / affine grid

def unnormalize(v, size, align_corners):
    return (v + 1) / 2 * (size - 1) if align_corners else ((v + 1) * size - 1) / 2


def reflect(v, lo, hi):
    """Reflect v into [lo, hi] (mirror at both ends, repeatedly)."""
    if hi == lo:
        return 0.0
    span = hi - lo
    v = abs(v - lo)
    k, r = divmod(v, span)
    return lo + r if int(k) % 2 == 0 else hi - r


def pad_coord(v, size, padding_mode, align_corners):
    if padding_mode == "border":
        return min(max(v, 0), size - 1)
    if padding_mode == "reflection":
        v = reflect(v, 0, size - 1) if align_corners else reflect(v, -0.5, size - 0.5)
        return min(max(v, 0), size - 1)
    return v


def np_grid_sample(x, grid, mode, padding_mode, align_corners):
    """Loops over output points; (x, y[, z]) in the grid index W, H[, D]."""
    nd = x.ndim - 2
    sizes = x.shape[2:][::-1]                   # W, H(, D): the grid's coordinate order
    out = np.zeros(x.shape[:2] + grid.shape[1:-1])

    def at(b, idx):                             # idx in grid order (x, y, z)
        if all(0 <= i < s for i, s in zip(idx, sizes)):
            return x[(b, slice(None)) + tuple(int(i) for i in idx[::-1])]
        return np.zeros(x.shape[1])

    for pos in np.ndindex(*out.shape[:1], *out.shape[2:]):
        b, p = pos[0], pos[1:]
        g = grid[(b,) + p]
        c = [unnormalize(g[i], sizes[i], align_corners) for i in range(nd)]
        if mode == "bicubic":
            # taps padded one by one; the coordinate itself is not
            f = [math.floor(v) for v in c]
            acc = np.zeros(x.shape[1])
            for ks in itertools.product(range(-1, 3), repeat=nd):
                idx = [pad_coord(f[i] + ks[i], sizes[i], padding_mode, align_corners)
                       for i in range(nd)]
                w = math.prod(keys(c[i] - (f[i] + ks[i]), -0.75) for i in range(nd))
                acc = acc + w * at(b, idx)
        else:
            c = [pad_coord(v, s, padding_mode, align_corners) for v, s in zip(c, sizes)]
            if mode == "nearest":
                acc = at(b, [np.rint(v) for v in c])      # round half to even
            else:
                f = [math.floor(v) for v in c]
                acc = np.zeros(x.shape[1])
                for ks in itertools.product((0, 1), repeat=nd):
                    w = math.prod((c[i] - f[i]) if ks[i] else 1 - (c[i] - f[i])
                                  for i in range(nd))
                    acc = acc + w * at(b, [f[i] + ks[i] for i in range(nd)])
        out[(b, slice(None)) + p] = acc
    return out


GRID_CASES = [(nd, m, pm, ac) for nd, modes in ((2, ("bilinear", "nearest", "bicubic")),
                                                (3, ("bilinear", "nearest")))
              for m in modes for pm in ("zeros", "border", "reflection") for ac in (False, True)]


@pytest.mark.parametrize("nd,mode,padding_mode,align_corners", GRID_CASES)
def test_grid_sample(rng, nd, mode, padding_mode, align_corners):
    x = rng.standard_normal((2, 2, 4, 5) if nd == 2 else (2, 2, 3, 4, 3))
    grid = rng.uniform(-1.5, 1.5, (2, 3, 2, 2) if nd == 2 else (2, 2, 3, 2, 3))
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    expect = np_grid_sample(x, grid, **kw)
    close(F.grid_sample(T(x), T(grid), **kw), expect)
    close(F.grid_sample(T(x, F32), T(grid, F32), **kw), expect, rtol=1e-4, atol=1e-5)
    # gradients (input and grid) on a smaller problem: the Jacobian is checked column by column
    xs, gs = (x[:1, :1, :3, :4], grid[:1, :2, :2]) if nd == 2 else \
        (x[:1, :1, :2, :3, :3], grid[:1, :1, :2, :2])
    xt, gt = T(xs, requires_grad=True), T(gs, requires_grad=mode != "nearest")
    assert fnx.autograd.gradcheck(lambda a, g: F.grid_sample(a, g, **kw), (xt, gt))


@pytest.mark.parametrize("nd", [2, 3])
def test_grid_sample_nearest_grid_gradient_is_zeros(rng, nd):
    # the sample is piecewise constant in the grid: PyTorch gives zeros, not None; values
    # (a -0.0, a NaN, an inf included) are unchanged by the zero-gradient term
    x = rng.standard_normal((1, 2, 3, 4) if nd == 2 else (1, 2, 3, 4, 2))
    x.flat[:3] = (-0.0, np.nan, np.inf)
    grid = rng.uniform(-1, 1, (1, 2, 3, 2) if nd == 2 else (1, 2, 3, 2, 3))
    xt, gt = T(x, requires_grad=True), T(grid, requires_grad=True)
    out = F.grid_sample(xt, gt, mode="nearest", align_corners=True)
    expect = np_grid_sample(x, grid, mode="nearest", padding_mode="zeros", align_corners=True)
    got = out.detach().numpy()
    np.testing.assert_array_equal(got, expect)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expect))
    out.sum().backward()
    assert gt.grad is not None
    np.testing.assert_array_equal(gt.grad.numpy(), np.zeros_like(grid))


def test_grid_sample_errors_and_warning():
    x, g = fnx.ones(1, 2, 3, 3), fnx.zeros(1, 2, 2, 2)
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        F.grid_sample(x, g)
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or "
                                         "'bicubic', but got: 'foo'"):
        F.grid_sample(x, g, mode="foo", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros', 'border', or "
                                         "'reflection', but got: 'foo'"):
        F.grid_sample(x, g, padding_mode="foo", align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(fnx.ones(1, 1, 2, 2, 2), fnx.zeros(1, 1, 1, 1, 3), mode="bicubic",
                      align_corners=False)
    with pytest.raises(RuntimeError, match="expected grid to have size 3 in last dimension"):
        F.grid_sample(fnx.ones(1, 1, 2, 2, 2), fnx.zeros(1, 1, 1, 1, 2), align_corners=False)
    with pytest.raises(RuntimeError, match="expected grid and input to have same batch size"):
        F.grid_sample(x, fnx.zeros(2, 2, 2, 2), align_corners=False)
    with pytest.raises(RuntimeError, match="with dimension 2 being empty"):
        F.grid_sample(fnx.ones(1, 2, 0, 3), g, align_corners=False)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        F.grid_sample(x.long(), g.long(), align_corners=False)


def np_affine_grid(theta, size, align_corners):
    n, sp = size[0], size[2:]
    nd = len(sp)

    def centres(steps):
        if steps == 1:
            return np.zeros(1)
        v = -1 + 2 * np.arange(steps) / (steps - 1)
        return v if align_corners else v * (steps - 1) / steps
    out = np.zeros((n, *sp, nd))
    ax = [centres(s) for s in sp]
    for b in range(n):
        for p in np.ndindex(*sp):
            point = [ax[i][p[i]] for i in range(nd)][::-1] + [1.0]     # x, y(, z), 1
            out[(b,) + p] = theta[b] @ np.array(point)
    return out


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 1, 1, 3), (2, 1, 2, 3, 4), (1, 2, 3, 1, 2)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(rng, size, align_corners):
    nd = len(size) - 2
    theta = rng.standard_normal((size[0], nd, nd + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # unit-size grids with align_corners warn
        close(F.affine_grid(T(theta), size, align_corners=align_corners),
              np_affine_grid(theta, size, align_corners))
        close(F.affine_grid(T(theta, F32), size, align_corners=align_corners),
              np_affine_grid(theta, size, align_corners), rtol=1e-5, atol=1e-6)
        tt = T(theta, requires_grad=True)
        assert fnx.autograd.gradcheck(
            lambda t: F.affine_grid(t, size, align_corners=align_corners), (tt,))


def test_affine_grid_errors_and_warnings():
    theta = fnx.zeros(1, 2, 3)
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        F.affine_grid(theta, (1, 1, 2, 2))
    with pytest.warns(UserWarning, match="for unit-size grids when align_corners=True"):
        F.affine_grid(theta, (1, 1, 1, 2), align_corners=True)
    with pytest.raises(ValueError, match="Expected theta to have floating point type"):
        F.affine_grid(theta.long(), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(ValueError, match="Expected a batch of 2D affine matrices of shape "
                                         "Nx2x3"):
        F.affine_grid(fnx.zeros(1, 3, 3), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(ValueError, match="Expected a batch of 3D affine matrices of shape "
                                         "Nx3x4"):
        F.affine_grid(theta, (1, 1, 2, 2, 2), align_corners=False)
    with pytest.raises(NotImplementedError, match="affine_grid only supports 4D and 5D sizes"):
        F.affine_grid(theta, (1, 1, 2), align_corners=False)
    with pytest.raises(ValueError, match="Expected non-zero, positive output size"):
        F.affine_grid(theta, (1, 1, 0, 2), align_corners=False)


def test_spatial_transformer_compiled_equals_eager(rng):
    """affine_grid + grid_sample (a spatial transformer), forward and backward compiled."""
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    th = (np.eye(2, 3)[None] + 0.1 * rng.standard_normal((2, 2, 3))).astype(np.float32)

    def step(img, theta):
        grid = F.affine_grid(theta, list(img.shape), align_corners=False)
        out = F.grid_sample(img, grid, mode="bilinear", padding_mode="border",
                            align_corners=False)
        (out ** 2).sum().backward()
        return out

    args_e = [fnx.tensor(x, requires_grad=True), fnx.tensor(th, requires_grad=True)]
    args_c = [fnx.tensor(x, requires_grad=True), fnx.tensor(th, requires_grad=True)]
    eager = step(*args_e)
    compiled = fnx.compile(step)(*args_c)
    close(compiled, eager.detach().numpy(), rtol=1e-5, atol=1e-5)
    for a, b in zip(args_e, args_c):
        close(b.grad, a.grad.numpy(), rtol=1e-4, atol=1e-4)


# ============================================================================ cuda backend

@pytest.mark.skipif(not fnx.cuda.is_available(),
                    reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")
def test_cuda_backend_matches_cpu(rng):
    x4 = rng.standard_normal((1, 2, 4, 5)).astype(np.float32)
    x3 = rng.standard_normal((1, 2, 5)).astype(np.float32)
    x5 = rng.standard_normal((1, 1, 2, 3, 4)).astype(np.float32)
    grid5 = rng.uniform(-1.2, 1.2, (1, 2, 2, 3, 3)).astype(np.float32)
    calls = [
        (lambda t: F.interpolate(t, size=(7, 3), mode="bicubic", align_corners=True), x4),
        (lambda t: F.interpolate(t, size=(2, 3), mode="bilinear", antialias=True), x4),
        (lambda t: F.interpolate(t, scale_factor=1.7, mode="nearest-exact"), x4),
        (lambda t: F.interpolate(t, scale_factor=2.5, mode="linear"), x3),
        (lambda t: F.interpolate(t, size=3, mode="area"), x3),
        (lambda t: F.interpolate(t, size=(3, 5, 2), mode="trilinear"), x5),
        (lambda t: F.interpolate(t, size=(3, 5, 2), mode="nearest"), x5),
        (lambda t: F.pixel_shuffle(t.reshape(1, 4, 5, 2), 2), x4),
        (lambda t: F.channel_shuffle(t, 2), x4),
        (lambda t: F.unfold(t, 2, padding=1, stride=2), x4),
        (lambda t: F.grid_sample(t, F.affine_grid(fnx.tensor(
            [[[0.9, 0.2, 0.1], [-0.1, 1.1, 0.0]]], device=t.device), [1, 2, 3, 4],
            align_corners=False), mode="bicubic", padding_mode="reflection",
            align_corners=False), x4),
        (lambda t: F.grid_sample(t, fnx.tensor(grid5, device=t.device), align_corners=True),
         x5),
    ]
    for fn, x in calls:
        cpu_in = fnx.tensor(x, requires_grad=True)
        cuda_in = fnx.tensor(x, device="cuda", requires_grad=True)
        a, b = fn(cpu_in), fn(cuda_in)
        assert b.device.type == "cuda"
        close(b.cpu(), a.detach().numpy(), rtol=1e-5, atol=1e-5)
        a.sum().backward()
        b.sum().backward()
        close(cuda_in.grad.cpu(), cpu_in.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_upsampling_model_compiled_equals_eager(rng):
    """A small decoder (conv, PixelShuffle, Upsample, ChannelShuffle) compiled as a module."""
    fnx.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(2, 8, 3, padding=1), nn.PixelShuffle(2),
                          nn.Upsample(scale_factor=1.5, mode="bilinear"), nn.ChannelShuffle(2),
                          nn.Unfold(2, stride=2), nn.Fold((8, 12), 2, stride=2))
    x = fnx.tensor(rng.standard_normal((2, 2, 3, 4)).astype(np.float32))
    eager = model(x)
    assert tuple(eager.shape) == (2, 2, 8, 12)
    compiled = fnx.compile(model)
    close(compiled(x), eager.detach().numpy(), rtol=1e-5, atol=1e-5)
    eager.sum().backward()
    g = model[0].weight.grad.numpy().copy()
    model.zero_grad()
    compiled(x).sum().backward()
    close(model[0].weight.grad, g, rtol=1e-4, atol=1e-5)
