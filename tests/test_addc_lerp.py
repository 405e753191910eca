"""addcmul_/addcdiv_/lerp_ on the in-place shortcut the optimizers take (same-shape float
tensors, a number value/weight) against NumPy in the tensors' own dtype, aliasing operands,
and the checked path's errors leaving self unchanged. (The ops' full OpInfo coverage is in
fnx/testing/opinfo/elementwise_ternary.py.)"""
import numpy as np
import pytest

import fnx


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weight", [0.1, 0.3, 0.5, 0.9, 1.0, -0.25])
def test_lerp_inplace_matches_numpy_in_its_dtype(rng, dtype, weight):
    s, e = rng.standard_normal((2, 50)).astype(dtype)
    x = fnx.tensor(s)
    assert x.lerp_(fnx.tensor(e), weight) is x
    w = dtype(weight)
    d = e - s
    expect = s + w * d if abs(w) < 0.5 else e - d * (dtype(1) - w)
    np.testing.assert_array_equal(x.numpy(), expect)
    if weight == 1.0:
        np.testing.assert_array_equal(x.numpy(), e)      # exact at the end point


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("value", [1, 0.5, -2.0])
def test_addcmul_addcdiv_inplace_match_numpy_in_their_dtype(rng, dtype, value):
    s, a, b = rng.standard_normal((3, 40)).astype(dtype)
    x = fnx.tensor(s)
    x.addcmul_(fnx.tensor(a), fnx.tensor(b), value=value)
    np.testing.assert_array_equal(x.numpy(), s + (dtype(value) * a) * b)
    y = fnx.tensor(s)
    y.addcdiv_(fnx.tensor(a), fnx.tensor(b), value=value)
    np.testing.assert_array_equal(y.numpy(), s + (dtype(value) * a) / b)


def test_aliasing_operands():
    x = fnx.tensor([1.0, 2.0, 3.0])
    x.addcmul_(x, x, value=2)                # x + 2 x^2, read before written
    assert x.tolist() == [3.0, 10.0, 21.0]
    y = fnx.tensor([1.0, 2.0])
    y.lerp_(y, 0.7)
    assert y.tolist() == [1.0, 2.0]


def test_checked_path_errors_leave_self_unchanged():
    x = fnx.tensor([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match=r"lerp_: output with shape \[3\] doesn't match the "
                                           r"broadcast shape \[2, 3\]"):
        x.lerp_(fnx.ones(2, 3), 0.5)
    with pytest.raises(RuntimeError, match="expected dtype float for `end` but got dtype double"):
        x.lerp_(fnx.ones(3, dtype=fnx.float64), 0.5)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        x.addcdiv_(fnx.tensor([1, 2, 3]), fnx.tensor([1, 1, 1]))
    i = fnx.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        i.addcmul_(x, x)
    assert x.tolist() == [1.0, 2.0, 3.0] and i.tolist() == [1, 2, 3]


def test_lerp_tensor_weight_and_out(rng):
    s, e, w = (rng.standard_normal(6) for _ in range(3))
    out = fnx.empty(0, dtype=fnx.float64)
    r = fnx.lerp(fnx.tensor(s), fnx.tensor(e), fnx.tensor(w), out=out)
    assert r is out
    np.testing.assert_allclose(out.numpy(), np.where(np.abs(w) < 0.5, s + w * (e - s),
                                                     e - (e - s) * (1 - w)), rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_zero_dim_tensors_in_place(dtype):
    # NumPy gives 0-dim results as scalars, which ``out=`` cannot take: these once raised
    # "return arrays must be of ArrayType" (Adam on CLIP's 0-dim logit_scale)
    s, a, b = dtype(1.5), dtype(-0.75), dtype(2.5)
    x = fnx.tensor(s)
    x.lerp_(fnx.tensor(a), 0.1)
    assert x.item() == s + dtype(0.1) * (a - s)
    x = fnx.tensor(s)
    x.addcmul_(fnx.tensor(a), fnx.tensor(b), value=0.5)
    assert x.item() == s + (dtype(0.5) * a) * b
    x = fnx.tensor(s)
    x.addcdiv_(fnx.tensor(a), fnx.tensor(b))
    assert x.item() == s + a / b and x.dim() == 0
