"""Seeded CPU bernoulli and dropout draw PyTorch's numbers, and dropout1d/2d/3d read input
shapes as PyTorch does.

PyTorch's serial CPU bernoulli compares one uniform per element with p: a 53-bit double
uniform (two mt19937 outputs) for a float p or a float64 tensor p, a 24-bit float32 one
(one output) for other float tensors.  Its CPU dropout is ``input * (noise / (1 - p))``
with ``noise = bernoulli_(1 - p)`` of input's dtype (shape ``(N, C, 1, ...)`` for the
feature forms).  The references below rebuild those draws from NumPy's legacy
``RandomState`` (the same mt19937, seeded the same way).
"""
import warnings

import numpy as np
import pytest

import fnx
import fnx.nn.functional as F

F32 = np.float32


def raw32(seed, n):
    rs = np.random.RandomState(seed % 2**32)
    return rs.randint(0, 2**32, size=n, dtype=np.uint32).astype(np.uint64)


def u53(seed, n, skip=0):
    r = raw32(seed, 2 * (n + skip))[2 * skip:]
    r64 = (r[0::2] << np.uint64(32)) | r[1::2]
    return (r64 & np.uint64(2**53 - 1)).astype(np.float64) * 2.0**-53


def u24(seed, n):
    return (raw32(seed, n) & np.uint64(2**24 - 1)).astype(np.float64) * 2.0**-24


@pytest.mark.parametrize("p", [0.5, 0.3, 0.9])
def test_bernoulli_float_p_compares_double_uniforms(p):
    fnx.manual_seed(5)
    got = fnx.empty(4, 6).bernoulli_(p).numpy()
    np.testing.assert_array_equal(got, (u53(5, 24) < p).reshape(4, 6).astype(F32))
    fnx.manual_seed(7)
    got = fnx.bernoulli(fnx.zeros(10, dtype=fnx.float64), p).numpy()
    np.testing.assert_array_equal(got, (u53(7, 10) < p).astype(np.float64))


def test_bernoulli_float_p_fills_strided_self_in_memory_order():
    fnx.manual_seed(3)
    got = fnx.zeros(4, 3).t().bernoulli_(0.4).numpy()        # shape (3, 4), stride (1, 3)
    np.testing.assert_array_equal(got, (u53(3, 12) < 0.4).reshape(4, 3).T.astype(F32))


def test_bernoulli_tensor_p_uses_the_uniform_of_its_dtype():
    p = np.linspace(0.05, 0.95, 12).reshape(3, 4)
    fnx.manual_seed(11)
    got = fnx.bernoulli(fnx.tensor(p, dtype=fnx.float32)).numpy()
    np.testing.assert_array_equal(got, (u24(11, 12).reshape(3, 4) < p.astype(F32)))
    fnx.manual_seed(11)
    got = fnx.bernoulli(fnx.tensor(p, dtype=fnx.float64)).numpy()
    np.testing.assert_array_equal(got, (u53(11, 12).reshape(3, 4) < p))
    # in place with a broadcast p: row-major over self, p repeated per row
    row = np.array([0.1, 0.5, 0.7, 0.95], dtype=F32)
    fnx.manual_seed(2)
    got = fnx.zeros(3, 4).bernoulli_(fnx.tensor(row)).numpy()
    np.testing.assert_array_equal(got, (u24(2, 12).reshape(3, 4) < row).astype(F32))


@pytest.mark.parametrize("p", [0.5, 0.1, 0.3])
def test_dropout_is_bernoulli_noise_divided_by_keep(p):
    x = np.random.default_rng(0).standard_normal((7, 9)).astype(F32)
    fnx.manual_seed(5)
    got = F.dropout(fnx.tensor(x), p).numpy()
    keep = 1.0 - p
    noise = (u53(5, 63) < keep).astype(F32).reshape(7, 9) / F32(keep)
    np.testing.assert_array_equal(got, x * noise)
    fnx.manual_seed(5)
    out, mask = fnx.ops.aten.native_dropout.default(fnx.tensor(x), p, True)
    np.testing.assert_array_equal(mask.numpy(), (u53(5, 63) < keep).reshape(7, 9))


def test_dropout_module_matches_functional_stream():
    fnx.manual_seed(1)
    got = fnx.nn.Dropout(0.4)(fnx.ones(5, 4)).numpy()
    np.testing.assert_array_equal(got, (u53(1, 20) < 0.6).reshape(5, 4) / F32(0.6))


def test_dropout2d_of_2d_input_is_elementwise_with_a_warning():
    # PyTorch feeds dropout2d's input to feature dropout as is: a 2-D (N, C) input gets
    # one draw per element (its "channels"), not one per row
    fnx.manual_seed(5)
    with pytest.warns(UserWarning, match="dropout2d"):
        got = F.dropout2d(fnx.ones(4, 6), 0.5).numpy()
    np.testing.assert_array_equal(got, (u53(5, 24) < 0.5).reshape(4, 6) * F32(2))


def test_dropout2d_of_3d_input_is_channelwise_over_dim_1():
    fnx.manual_seed(5)
    with pytest.warns(UserWarning, match="3D input to dropout2d"):
        got = F.dropout2d(fnx.ones(2, 4, 6), 0.5).numpy()
    noise = (u53(5, 8) < 0.5).reshape(2, 4, 1) * F32(2)
    np.testing.assert_array_equal(got, np.broadcast_to(noise, (2, 4, 6)))


def test_dropout2d_of_4d_input_and_unbatched_dropout3d_dropout1d():
    fnx.manual_seed(4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = F.dropout2d(fnx.ones(2, 3, 2, 2), 0.25).numpy()
    keep = F32(0.75)
    noise = (u53(4, 6) < 0.75).reshape(2, 3, 1, 1) / keep
    np.testing.assert_array_equal(got, np.broadcast_to(noise, (2, 3, 2, 2)))
    fnx.manual_seed(4)          # (C, D, H, W): one draw per channel
    got = F.dropout3d(fnx.ones(3, 2, 2, 2), 0.25).numpy()
    np.testing.assert_array_equal(got, np.broadcast_to(noise[0].reshape(3, 1, 1, 1),
                                                       (3, 2, 2, 2)))
    fnx.manual_seed(4)          # (C, L)
    got = F.dropout1d(fnx.ones(3, 5), 0.25).numpy()
    np.testing.assert_array_equal(got, np.broadcast_to(noise[0].reshape(3, 1), (3, 5)))


def test_dropout1d_rejects_other_ranks_and_p_one_zeroes():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(fnx.ones(2, 3, 4, 5))
    got = F.dropout2d(fnx.ones(2, 3, 2, 2), 1.0).numpy()
    np.testing.assert_array_equal(got, np.zeros((2, 3, 2, 2), F32))


def test_alpha_dropout_mask_draws_double_uniforms():
    x = np.random.default_rng(1).standard_normal((5, 6))
    p = 0.2
    fnx.manual_seed(9)
    got = F.alpha_dropout(fnx.tensor(x), p, True).numpy()
    keep = (u53(9, 30) < 1 - p).reshape(5, 6)
    sat = 1.7580993408473766
    a = 1.0 / np.sqrt((sat * sat * p + 1.0) * (1.0 - p))
    want = np.where(keep, a * x + sat * a * p, -sat * a + sat * a * p)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
