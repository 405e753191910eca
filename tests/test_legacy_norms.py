"""fnx.native_norm and fnx.norm_except_dim (PyTorch's legacy norm names) against NumPy:
values, shapes (norm_except_dim keeps every dim, dim=-1 is the whole tensor), dtype,
gradients against the closed form, PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest

import fnx

RNG = np.random.default_rng(3)
X = RNG.standard_normal((2, 3, 4))


@pytest.mark.parametrize("p", [2, 1, 3, np.inf, 0.5])
def test_native_norm_full_and_over_dims(p):
    x = fnx.tensor(X)
    want = np.linalg.norm(X.ravel(), p)
    np.testing.assert_allclose(fnx.native_norm(x, p).item(), want, rtol=1e-12)
    got = fnx.native_norm(x, p, [0, 2], True, None)
    ref = np.linalg.norm(np.moveaxis(X, 1, 0).reshape(3, -1), p, axis=1).reshape(1, 3, 1)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)


def test_native_norm_defaults_dtype_and_errors():
    x = fnx.tensor(X.astype(np.float32))
    np.testing.assert_allclose(fnx.native_norm(x).item(), np.sqrt((X ** 2).sum()), rtol=1e-6)
    r = fnx.native_norm(x, None, [1], False, fnx.float64)        # p None is 2
    assert r.dtype is fnx.float64 and tuple(r.shape) == (2, 4)
    np.testing.assert_allclose(r.numpy(), np.sqrt((X ** 2).sum(1)), rtol=1e-6)
    with pytest.raises(RuntimeError, match="norm\\(\\): input dtype should be either floating "
                                           "point or complex. Got Long instead."):
        fnx.native_norm(fnx.ones(3, dtype=fnx.int64))


@pytest.mark.parametrize("dim", [0, 1, 2, -2, -3])
@pytest.mark.parametrize("pw", [2, 1, 3])
def test_norm_except_dim_keeps_dims(dim, pw):
    got = fnx.norm_except_dim(fnx.tensor(X), pw, dim)
    d = dim % 3
    ref = np.linalg.norm(np.moveaxis(X, d, 0).reshape(X.shape[d], -1), pw, axis=1)
    shape = [1, 1, 1]
    shape[d] = X.shape[d]
    assert tuple(got.shape) == tuple(shape)
    np.testing.assert_allclose(got.numpy(), ref.reshape(shape), rtol=1e-12)


def test_norm_except_dim_whole_tensor_vectors_complex_and_errors():
    whole = fnx.norm_except_dim(fnx.tensor(X), 2, -1)
    assert whole.ndim == 0
    np.testing.assert_allclose(whole.item(), np.linalg.norm(X.ravel()), rtol=1e-12)
    v = np.array([-3.0, 4.0, 0.0])
    np.testing.assert_allclose(fnx.norm_except_dim(fnx.tensor(v)).numpy(), np.abs(v))
    z = RNG.standard_normal((3, 2)) + 1j * RNG.standard_normal((3, 2))
    got = fnx.norm_except_dim(fnx.tensor(z))
    assert got.dtype is fnx.float64
    np.testing.assert_allclose(got.numpy(), np.linalg.norm(z, axis=1, keepdims=True), rtol=1e-12)
    with pytest.raises(IndexError, match="Dimension out of range"):
        fnx.norm_except_dim(fnx.tensor(X), 2, 3)
    with pytest.raises(RuntimeError, match="Got Long instead"):
        fnx.norm_except_dim(fnx.ones(3, dtype=fnx.int64))


def test_norm_except_dim_gradient():
    x = fnx.tensor(X, requires_grad=True)
    fnx.norm_except_dim(x, 2, 1).sum().backward()
    norms = np.sqrt((X ** 2).sum(axis=(0, 2), keepdims=True))
    np.testing.assert_allclose(x.grad.numpy(), X / norms, rtol=1e-12)


def test_compiled():
    f = fnx.compile(lambda t: fnx.norm_except_dim(t, 2, 2) + fnx.native_norm(t))
    want = np.linalg.norm(X.reshape(-1, 4), axis=0).reshape(1, 1, 4) + np.linalg.norm(X.ravel())
    np.testing.assert_allclose(f(fnx.tensor(X)).numpy(), want, rtol=1e-12)
