"""F.interpolate / nn.Upsample on uint8 images (bilinear and bicubic, antialias off and on):
PyTorch's fixed-point result, exactly.

The reference (``np_u8_resample``) is NumPy: each dim's float interpolation matrix (built
from PyTorch's coordinate formulas) turned into int16 fixed point as PyTorch does, applied
width first with PyTorch's rounding (half up) and clamping to [0, 255] after each pass."""
import numpy as np
import pytest

import fnx
import fnx.nn as nn
import fnx.nn.functional as F
from fnx.testing.opinfo.nn.upsample import (np_aa_matrix, np_cubic_matrix, np_linear_matrix,
                                            np_u8_resample)

_MATS = {("bilinear", False): lambda n, m, ac, s: np_linear_matrix(n, m, ac, s),
         ("bicubic", False): lambda n, m, ac, s: np_cubic_matrix(n, m, ac, s),
         ("bilinear", True): lambda n, m, ac, s: np_aa_matrix(n, m, ac, s, "aa_linear"),
         ("bicubic", True): lambda n, m, ac, s: np_aa_matrix(n, m, ac, s, "aa_cubic")}


def _ref(x, size, mode, antialias, align_corners, scales=(None, None)):
    mk = _MATS[mode, antialias]
    return np_u8_resample(x, [mk(x.shape[2 + i], size[i], align_corners, scales[i])
                              for i in range(2)])


def _float_ref(x, size, mode, antialias, align_corners):
    """The float resize rounded once: within 1 of the fixed-point bilinear result (a sanity
    check of the reference itself)."""
    mk = _MATS[mode, antialias]
    out = x.astype(np.float64)
    for i in (1, 0):
        m = mk(x.shape[2 + i], size[i], align_corners, None)
        out = np.moveaxis(np.tensordot(m, out, axes=([1], [2 + i])), 0, 2 + i)
    return np.clip(np.floor(out + 0.5), 0, 255)


CASES = [((1, 3, 5, 7), (3, 4)), ((2, 1, 4, 4), (9, 11)), ((1, 4, 9, 6), (4, 13)),
         ((1, 2, 1, 8), (3, 2)), ((1, 3, 16, 12), (5, 3)), ((1, 1, 6, 5), (6, 10))]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("shape,size", CASES)
def test_uint8_resize_matches_fixed_point_reference(shape, size, mode, antialias,
                                                    align_corners):
    rng = np.random.default_rng(hash((shape, size)) % 2**32)
    x = rng.integers(0, 256, shape).astype(np.uint8)
    got = F.interpolate(fnx.tensor(x), size=size, mode=mode, antialias=antialias,
                        align_corners=align_corners)
    assert got.dtype == fnx.uint8
    want = _ref(x, size, mode, antialias, align_corners)
    np.testing.assert_array_equal(got.numpy(), want)
    if mode == "bilinear":      # (bicubic overshoots, and the first pass is clamped)
        diff = want.astype(int) - _float_ref(x, size, mode, antialias, align_corners)
        assert np.abs(diff).max() <= 1


def test_extremes_are_clamped_not_wrapped():
    # bicubic overshoots next to a 0/255 edge: the result saturates at 0 and 255
    x = np.zeros((1, 1, 4, 8), np.uint8)
    x[..., 4:] = 255
    got = F.interpolate(fnx.tensor(x), size=(4, 21), mode="bicubic").numpy()
    np.testing.assert_array_equal(got, _ref(x, (4, 21), "bicubic", False, False))
    assert got.min() == 0 and got.max() == 255


def test_scale_factor_and_noncontiguous_input():
    rng = np.random.default_rng(3)
    base = rng.integers(0, 256, (1, 2, 7, 10)).astype(np.uint8)
    x = fnx.tensor(base).transpose(2, 3)                # (1, 2, 10, 7), non-contiguous
    xs = np.ascontiguousarray(base.transpose(0, 1, 3, 2))
    got = F.interpolate(x, scale_factor=(0.7, 1.6), mode="bilinear", antialias=True)
    want = _ref(xs, (7, 11), "bilinear", True, False, scales=(0.7, 1.6))
    np.testing.assert_array_equal(got.numpy(), want)


def test_upsample_module_and_compile():
    rng = np.random.default_rng(4)
    x = rng.integers(0, 256, (1, 3, 5, 6)).astype(np.uint8)
    want = _ref(x, (10, 12), "bicubic", False, False)
    up = nn.Upsample(scale_factor=2, mode="bicubic")
    np.testing.assert_array_equal(up(fnx.tensor(x)).numpy(), want)
    f = fnx.compile(lambda t: F.interpolate(t, size=(10, 12), mode="bicubic"))
    np.testing.assert_array_equal(f(fnx.tensor(x)).numpy(), want)


@pytest.mark.parametrize("mode,size,kernel", [
    ("linear", (4,), "compute_indices_weights_linear"),
    ("trilinear", (2, 3, 4), "compute_indices_weights_linear")])
def test_uint8_linear_1d_3d_still_refused(mode, size, kernel):
    x = fnx.zeros((1, 1) + (3,) * len(size), dtype=fnx.uint8)
    with pytest.raises(RuntimeError, match=f'"{kernel}" not implemented for \'Byte\''):
        F.interpolate(x, size=size, mode=mode)


def test_other_integer_dtypes_still_refused():
    with pytest.raises(RuntimeError, match="not implemented for 'Int'"):
        F.interpolate(fnx.zeros((1, 1, 3, 3), dtype=fnx.int32), size=(4, 4), mode="bilinear")
