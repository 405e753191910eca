"""fnx.fake_quantize_per_tensor_affine / fake_quantize_per_channel_affine: values against
NumPy written from the rounding rule (half to even), the straight-through gradient against
a NumPy mask, and the errors (values are also checked by the OpInfo entries)."""
import numpy as np
import pytest

import fnx
from fnx.testing.opinfo.quantization import ref_per_channel, ref_per_tensor


def _x():
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, (4, 6)).astype(np.float32)
    x[0, :5] = [np.nan, np.inf, -np.inf, 1e30, 0.75]
    return x


def test_round_half_to_even_by_hand():
    # scale 1, zero point 0: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0, -1.5 -> -2
    x = fnx.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 7.0, -7.0])
    y = fnx.fake_quantize_per_tensor_affine(x, 1.0, 0, -4, 5)
    assert y.tolist() == [0.0, 2.0, 2.0, 0.0, -2.0, 5.0, -4.0]


def test_python_and_tensor_qparams_agree_with_numpy():
    x = _x()
    a = fnx.fake_quantize_per_tensor_affine(fnx.tensor(x), 0.1, 3, -20, 25)
    b = fnx.fake_quantize_per_tensor_affine(fnx.tensor(x), fnx.tensor(0.1), fnx.tensor(3), -20, 25)
    want = ref_per_tensor(x, 0.1, 3, -20, 25)
    np.testing.assert_array_equal(a.numpy(), want)
    np.testing.assert_array_equal(b.numpy(), want)
    # NaN and -inf land on quant_min, +inf and 1e30 on quant_max (per tensor)
    assert a[0, :4].tolist() == pytest.approx([-2.3, 2.2, -2.3, 2.2])


def test_per_channel_nonfinite_to_quant_min():
    x = _x()
    s = np.array([0.5, 0.25, 0.1, 0.2], np.float32)
    z = np.array([1, -2, 0, 3], np.int32)
    y = fnx.fake_quantize_per_channel_affine(fnx.tensor(x), fnx.tensor(s), fnx.tensor(z), 0,
                                             -4, 5)
    np.testing.assert_array_equal(y.numpy(), ref_per_channel(x, s, z, 0, -4, 5))
    assert y[0, :4].tolist() == [-2.5] * 4          # (quant_min - 1) * 0.5


@pytest.mark.parametrize("per_channel", [False, True])
def test_straight_through_gradient(per_channel):
    x = _x().astype(np.float64)
    s = np.array([0.5, 0.25, 0.1, 0.2], np.float32)
    z = np.array([1, -2, 0, 3], np.int32)
    xt = fnx.tensor(x, requires_grad=True)
    g = np.random.default_rng(1).standard_normal(x.shape)
    if per_channel:
        y = fnx.fake_quantize_per_channel_affine(xt, fnx.tensor(s), fnx.tensor(z), 0, -4, 5)
        v = np.rint(x * (1 / s.astype(np.float64))[:, None]) + z[:, None]
    else:
        y = fnx.fake_quantize_per_tensor_affine(xt, 0.25, 1, -4, 5)
        v = np.rint(x * 4.0) + 1
    y.backward(fnx.tensor(g))
    with np.errstate(invalid="ignore"):
        mask = (v >= -4) & (v <= 5)
    np.testing.assert_array_equal(xt.grad.numpy(), np.where(mask, g, 0.0))
    assert 0 < mask.sum() < mask.size


def test_qparams_that_require_grad_are_refused():
    x = fnx.tensor([0.3, 0.9], requires_grad=True)
    s = fnx.tensor(0.5, requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument "
                                           "'scale'"):
        fnx.fake_quantize_per_tensor_affine(x, s, fnx.tensor(0), 0, 2)
    with pytest.raises(RuntimeError, match="'fake_quantize_per_channel_affine_cachemask' is "
                                           "not differentiable with respect to argument"):
        fnx.fake_quantize_per_channel_affine(x, fnx.tensor([0.5, 0.5], requires_grad=True),
                                             fnx.tensor([0, 0], dtype=fnx.int32), 0, 0, 2)
    with fnx.no_grad():
        fnx.fake_quantize_per_tensor_affine(x, s, fnx.tensor(0), 0, 2)
    # the op itself gives them no gradient
    fnx.ops.aten.fake_quantize_per_tensor_affine.tensor_qparams(
        x, s, fnx.tensor(0), 0, 2).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0] and s.grad is None


def test_compiled_matches_eager_and_refuses_bad_zero_point():
    x = fnx.tensor(_x())
    s = fnx.tensor([0.5, 0.25, 0.1, 0.2])
    f = fnx.compile(lambda a, z: fnx.fake_quantize_per_channel_affine(a, s, z, 0, -4, 5))
    z = fnx.tensor([1, -2, 0, 3], dtype=fnx.int32)
    np.testing.assert_array_equal(f(x, z).numpy(),
                                  ref_per_channel(x.numpy(), s.numpy(), z.numpy(), 0, -4, 5))
    with pytest.raises(RuntimeError, match="`zero_point` must be between"):
        f(x, fnx.tensor([1, -2, 0, 6], dtype=fnx.int32))


def test_errors_leave_input_unchanged():
    x = fnx.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="should be less than or"):
        fnx.fake_quantize_per_tensor_affine(x, 0.5, 0, 3, 2)
    with pytest.raises(RuntimeError, match="`zero_point` must be between"):
        fnx.fake_quantize_per_tensor_affine(x, 0.5, 7, 0, 5)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        fnx.fake_quantize_per_tensor_affine(fnx.tensor([1, 2]), 0.5, 0, 0, 5)
    assert x.tolist() == [1.0, 2.0]
