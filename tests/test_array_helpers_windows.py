"""trace, vander, isin, unravel_index, column_stack and the window functions against
NumPy (windows: NumPy's symmetric windows; a periodic one is the symmetric window one
longer without its last point), with PyTorch's errors, gradients and compile."""
from __future__ import annotations

import numpy as np
import pytest

import fnx

rng = np.random.default_rng(0)

WINDOWS = [(fnx.hann_window, np.hanning), (fnx.hamming_window, np.hamming),
           (fnx.blackman_window, np.blackman), (fnx.bartlett_window, np.bartlett),
           (lambda n, periodic=True, **k: fnx.kaiser_window(n, periodic, 5.0, **k),
            lambda n: np.kaiser(n, 5.0))]


@pytest.mark.parametrize("make,ref", WINDOWS)
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_numpy(make, ref, n, periodic):
    w = make(n, periodic=periodic, dtype=fnx.float64)
    want = np.ones(n) if n <= 1 else (ref(n + 1)[:-1] if periodic else ref(n))
    assert w.dtype is fnx.float64 and tuple(w.shape) == (n,)
    np.testing.assert_allclose(w.numpy(), want, atol=1e-12)
    w32 = make(n, periodic=periodic)
    assert w32.dtype is fnx.float32
    np.testing.assert_allclose(w32.numpy(), want, atol=2e-6)


def test_window_errors_and_options():
    with pytest.raises(RuntimeError, match="requires non-negative window_length"):
        fnx.hann_window(-1)
    with pytest.raises(RuntimeError, match="expects floating point dtypes"):
        fnx.hann_window(3, dtype=fnx.int64)
    np.testing.assert_allclose(fnx.hamming_window(5, True, 0.5, 0.5).numpy(),
                               np.hanning(6)[:-1], atol=1e-6)
    assert fnx.blackman_window(4, requires_grad=True).requires_grad


def test_window_inside_compile_matches_eager():
    f = fnx.compile(lambda x: x * fnx.hann_window(x.shape[0]))
    x = fnx.tensor(rng.standard_normal(6).astype(np.float32))
    np.testing.assert_allclose(f(x).numpy(), x.numpy() * np.hanning(7)[:-1], rtol=1e-6,
                               atol=1e-7)


def test_trace():
    a = rng.standard_normal((3, 4))
    np.testing.assert_allclose(fnx.trace(fnx.tensor(a)).item(), np.trace(a))
    t = fnx.tensor([[1, 2], [3, 4]], dtype=fnx.int32).trace()
    assert t.dtype is fnx.int64 and t.item() == 5
    with pytest.raises(RuntimeError, match="expected a matrix, but got tensor with dim 3"):
        fnx.trace(fnx.ones(2, 2, 2))
    x = fnx.tensor(a, requires_grad=True)
    x.trace().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.eye(3, 4))
    f = fnx.compile(fnx.trace)
    np.testing.assert_allclose(f(fnx.tensor(a)).item(), np.trace(a))


@pytest.mark.parametrize("n", [None, 0, 1, 4])
@pytest.mark.parametrize("increasing", [False, True])
def test_vander_matches_numpy(n, increasing):
    x = rng.standard_normal(3)
    got = fnx.vander(fnx.tensor(x), N=n, increasing=increasing)
    np.testing.assert_allclose(got.numpy(), np.vander(x, n, increasing), rtol=1e-12)
    ints = fnx.vander(fnx.tensor([1, 2, 3], dtype=fnx.int32), N=n, increasing=increasing)
    assert ints.dtype is fnx.int64
    np.testing.assert_array_equal(ints.numpy(), np.vander([1, 2, 3], n, increasing))


def test_vander_errors_gradient_and_compile():
    with pytest.raises(RuntimeError, match="x must be a one-dimensional tensor."):
        fnx.vander(fnx.ones(2, 2))
    with pytest.raises(RuntimeError, match="N must be non-negative."):
        fnx.vander(fnx.ones(2), N=-1)
    x = fnx.tensor([1.5, -2.0], dtype=fnx.float64, requires_grad=True)
    fnx.vander(x, N=4).sum().backward()
    xs = np.array([1.5, -2.0])
    np.testing.assert_allclose(x.grad.numpy(), 3 * xs ** 2 + 2 * xs + 1)    # d(x^3+x^2+x+1)
    f = fnx.compile(lambda v: fnx.vander(v, N=3))
    np.testing.assert_allclose(f(fnx.tensor(xs)).numpy(), np.vander(xs, 3))


def test_isin():
    e, t = rng.integers(0, 6, (3, 4)), rng.integers(0, 6, 5)
    got = fnx.isin(fnx.tensor(e), fnx.tensor(t))
    np.testing.assert_array_equal(got.numpy(), np.isin(e, t))
    np.testing.assert_array_equal(fnx.isin(fnx.tensor(e), fnx.tensor(t), invert=True).numpy(),
                                  np.isin(e, t, invert=True))
    assert fnx.isin(fnx.tensor([1, 2]), 2).tolist() == [False, True]
    r = fnx.isin(2, fnx.tensor([1, 2]))
    assert r.ndim == 0 and r.item() is True
    assert fnx.isin(fnx.tensor([1., 2.]), fnx.tensor([2])).tolist() == [False, True]
    f = fnx.compile(lambda a, b: fnx.isin(a, b))
    np.testing.assert_array_equal(f(fnx.tensor(e), fnx.tensor(t)).numpy(), np.isin(e, t))


def test_unravel_index():
    shape = (3, 4, 5)
    flat = rng.integers(0, 60, 7)
    got = fnx.unravel_index(fnx.tensor(flat), shape)
    for g, w in zip(got, np.unravel_index(flat, shape)):
        assert g.dtype is fnx.int64
        np.testing.assert_array_equal(g.numpy(), w)
    # PyTorch wraps indices outside the shape around (NumPy raises): -1 is the last
    assert [t.tolist() for t in fnx.unravel_index(fnx.tensor([-1, 8]), (2, 4))] == \
        [[1, 0], [3, 0]]
    assert [t.item() for t in fnx.unravel_index(fnx.tensor(3), 4)] == [3]
    with pytest.raises(TypeError, match="expected 'indices' to be integer dtype"):
        fnx.unravel_index(fnx.tensor([1.0]), (2,))
    with pytest.raises(ValueError, match="'shape' cannot have negative values"):
        fnx.unravel_index(fnx.tensor([1]), (-1, 2))


def test_column_stack():
    a, b = rng.standard_normal(3), rng.standard_normal((3, 2))
    got = fnx.column_stack((fnx.tensor(a), fnx.tensor(b)))
    np.testing.assert_array_equal(got.numpy(), np.column_stack((a, b)))
    assert fnx.column_stack((fnx.tensor(1), fnx.tensor(2))).tolist() == [[1, 2]]


def test_legacy_norms_match_numpy():
    a = rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(fnx.frobenius_norm(fnx.tensor(a), (1, 2)).numpy(),
                               np.sqrt((a ** 2).sum((1, 2))), rtol=1e-12)
    np.testing.assert_allclose(fnx.frobenius_norm(fnx.tensor(a), 2, True).numpy(),
                               np.sqrt((a ** 2).sum(2, keepdims=True)), rtol=1e-12)
    nuc = np.linalg.svd(a, compute_uv=False).sum(-1)
    np.testing.assert_allclose(fnx.nuclear_norm(fnx.tensor(a)).numpy(), nuc, rtol=1e-10)
    np.testing.assert_allclose(fnx.nuclear_norm(fnx.tensor(a[0]), True).numpy(),
                               nuc[:1].reshape(1, 1), rtol=1e-10)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        fnx.nuclear_norm(fnx.ones(3))


@pytest.mark.parametrize("name,replacement", [
    ("solve", "fnx.linalg.solve"), ("eig", "fnx.linalg.eig"), ("lstsq", "fnx.linalg.lstsq"),
    ("symeig", "fnx.linalg.eigh"), ("matrix_rank", "fnx.linalg.matrix_rank")])
def test_removed_functions_name_their_replacement(name, replacement):
    a = fnx.eye(2)
    args = (a, a) if name in ("solve", "lstsq") else (a,)
    with pytest.raises(RuntimeError, match="deprecated since version 1.9 and is now removed"
                       ) as e:
        getattr(fnx, name)(*args)
    assert replacement in str(e.value)
    if name != "matrix_rank":       # (as in PyTorch, not a Tensor method)
        with pytest.raises(RuntimeError, match="is now removed"):
            getattr(a, name)(*args[1:])
    assert fnx.resolve_neg(a) is a
