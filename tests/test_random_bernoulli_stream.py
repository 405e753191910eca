"""Seeded CPU bernoulli and dropout draw PyTorch's masks.

PyTorch's CPU ``bernoulli_(float p)`` (what ``F.dropout``/``dropout2d`` call with
``1 - p``) draws one 53-bit double uniform per element from ``random64()`` and keeps
``u < p``; a float32 probability tensor compares a 24-bit float32 uniform. The references
re-derive that from NumPy's legacy ``RandomState`` (the same mt19937, seeded the same
way), as tests/test_random_torch_stream.py does for the other samplers.
"""
import numpy as np

import fnx
import fnx.nn.functional as F
from fnx.testing import to_numpy

F32 = np.float32


def _raw32(seed, n):
    rs = np.random.RandomState(seed % 2**32)
    return rs.randint(0, 2**32, size=n, dtype=np.uint32).astype(np.uint64)


def _u53(seed, n):
    r = _raw32(seed, 2 * n)
    r64 = (r[0::2] << np.uint64(32)) | r[1::2]        # first output is the high word
    return (r64 & np.uint64(2**53 - 1)).astype(np.float64) * 2.0**-53


def _u24(seed, n):
    return ((_raw32(seed, n) & np.uint64(2**24 - 1)).astype(np.float64) * 2.0**-24).astype(F32)


def test_bernoulli_float_p_uses_double_uniforms():
    fnx.manual_seed(11)
    got = to_numpy(fnx.empty(50).bernoulli_(0.3))
    np.testing.assert_array_equal(got, (_u53(11, 50) < 0.3).astype(F32))
    fnx.manual_seed(12)
    got = to_numpy(fnx.bernoulli(fnx.zeros(7), 0.6))
    np.testing.assert_array_equal(got, (_u53(12, 7) < 0.6).astype(F32))


def test_bernoulli_float32_probabilities_use_float32_uniforms():
    p = np.linspace(0.05, 0.95, 30).astype(F32)
    fnx.manual_seed(5)
    got = to_numpy(fnx.bernoulli(fnx.tensor(p)))
    np.testing.assert_array_equal(got, (_u24(5, 30) < p).astype(F32))


def test_dropout_mask_and_scale():
    x = np.arange(1.0, 41.0, dtype=F32).reshape(4, 10)
    fnx.manual_seed(3)
    got = to_numpy(F.dropout(fnx.tensor(x), 0.1, training=True))
    keep = (_u53(3, 40) < 0.9).reshape(4, 10).astype(F32)
    np.testing.assert_array_equal(got, x * (keep / F32(0.9)))


def test_dropout2d_drops_whole_channels():
    x = np.ones((2, 3, 2, 2), F32)
    fnx.manual_seed(1)
    got = to_numpy(F.dropout2d(fnx.tensor(x), 0.5, training=True))
    keep = (_u53(1, 6) < 0.5).reshape(2, 3, 1, 1).astype(F32)
    np.testing.assert_array_equal(got, x * keep * 2.0)
