"""Seeded CPU ``exponential_`` and ``multinomial`` draw PyTorch's numbers.

PyTorch's serial CPU exponential is ``-1/lambda * log1p(-u)`` in double per 53-bit
uniform ``u`` (two mt19937 outputs).  Its multinomial draws one sample, or several
without replacement, by the exponential race: ``argmax``/``topk`` of ``p / q`` with ``q``
exponential(1) of p's dtype; several with replacement by inverse transform over the
running sum of p (in p's dtype, divided by the total), one double uniform per sample.
The references rebuild the mt19937 stream from NumPy's legacy ``RandomState`` and use
``math.log1p`` (libm) for the logarithm.
"""
import math

import numpy as np
import pytest

import fnx
from fnx.distributions import Categorical, Exponential


def u53(seed, n):
    rs = np.random.RandomState(seed % 2**32)
    r = rs.randint(0, 2**32, size=2 * n, dtype=np.uint32).astype(np.uint64)
    r64 = (r[0::2] << np.uint64(32)) | r[1::2]
    return (r64 & np.uint64(2**53 - 1)).astype(np.float64) * 2.0**-53


def expo(seed, n, lambd=1.0):
    return np.array([(-1.0 / lambd) * math.log1p(-u) for u in u53(seed, n)])


@pytest.mark.parametrize("dtype", [fnx.float32, fnx.float64])
def test_exponential_is_inverse_cdf_of_double_uniforms(dtype):
    fnx.manual_seed(3)
    got = fnx.empty(40, dtype=dtype).exponential_(0.5).numpy()
    np.testing.assert_array_equal(got, expo(3, 40, 0.5).astype(got.dtype))
    # strided self: filled in memory order
    fnx.manual_seed(3)
    got = fnx.empty(4, 3, dtype=dtype).t().exponential_().numpy()
    np.testing.assert_array_equal(got, expo(3, 12).reshape(4, 3).T.astype(got.dtype))


def test_exponential_distribution_samples_the_stream():
    rate = np.array([2.0, 3.0], np.float32)
    fnx.manual_seed(7)
    got = Exponential(fnx.tensor(rate)).sample((3,)).numpy()
    want = expo(7, 6).astype(np.float32).reshape(3, 2) / rate
    np.testing.assert_array_equal(got, want)


P = np.array([[0.2, 0.3, 0.5], [0.5, 0.1, 0.4]], np.float32)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_multinomial_without_replacement_is_the_exponential_race(k):
    fnx.manual_seed(5)
    got = fnx.multinomial(fnx.tensor(P), k).numpy()
    race = P / expo(5, 6).astype(np.float32).reshape(2, 3)
    np.testing.assert_array_equal(got, np.argsort(-race, axis=1, kind="stable")[:, :k])
    fnx.manual_seed(5)       # one sample with replacement takes the same path
    got = fnx.multinomial(fnx.tensor(P), 1, True).numpy()
    np.testing.assert_array_equal(got, np.argmax(race, axis=1)[:, None])


def test_multinomial_with_replacement_is_inverse_transform():
    fnx.manual_seed(5)
    got = fnx.multinomial(fnx.tensor(P), 4, True).numpy()
    u = u53(5, 8).reshape(2, 4)
    want = []
    for row, us in zip(P, u):
        cum = np.cumsum(row, dtype=np.float32)
        cum = cum / cum[-1]
        cum[-1] = 1
        want.append([int(np.argmax(cum.astype(np.float64) >= x)) for x in us])
    np.testing.assert_array_equal(got, want)


def test_multinomial_zero_probabilities_come_last_without_replacement():
    # the race gives zero-probability categories q = 0: they follow the positive ones
    got = fnx.multinomial(fnx.tensor([0.0, 1.0, 0.0]), 2).tolist()
    assert got[0] == 1 and got[1] in (0, 2)
    with pytest.raises(RuntimeError, match="sum of probabilities"):
        fnx.multinomial(fnx.zeros(3), 1)


def test_categorical_sample_draws_the_race():
    fnx.manual_seed(7)
    c = Categorical(probs=fnx.tensor([0.3, 0.7]))
    got = [c.sample().item() for _ in range(6)]
    q = expo(7, 12).astype(np.float32).reshape(6, 2)
    want = np.argmax(np.array([0.3, 0.7], np.float32) / q, axis=1).tolist()
    assert got == want
