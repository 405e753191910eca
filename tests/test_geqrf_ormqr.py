"""fnx.geqrf / fnx.ormqr (and their Tensor methods): the compact QR rebuilds A = Q R with
Q formed in NumPy from the reflectors, R matches np.linalg.qr's up to the signs of its
rows, ormqr equals the explicit products with that Q, eagerly and compiled; geqrf has no
derivative (NotImplementedError at backward, as PyTorch's), ormqr's gradient matches
finite differences; out= and errors as PyTorch's."""
from __future__ import annotations

import numpy as np
import pytest

import fnx

RNG = np.random.default_rng(11)


def _rand(shape, complex_):
    a = RNG.standard_normal(shape)
    return a + 1j * RNG.standard_normal(shape) if complex_ else a


def _q_of(a, tau):
    """Q = H_1 ... H_k (m x m) of one matrix, from the reflectors below the diagonal."""
    m = a.shape[0]
    q = np.eye(m, dtype=a.dtype)
    for i, t in enumerate(tau):
        v = np.zeros(m, a.dtype)
        v[i], v[i + 1:] = 1, a[i + 1:, i]
        q = q @ (np.eye(m) - t * np.outer(v, v.conj()))
    return q


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 2)])
@pytest.mark.parametrize("complex_", [False, True])
def test_geqrf_rebuilds_a(shape, complex_):
    a = _rand(shape, complex_)
    qr, tau = fnx.geqrf(fnx.tensor(a))
    k = min(shape[-2:])
    assert tuple(tau.shape) == shape[:-2] + (k,)
    qr, tau = qr.numpy().reshape((-1,) + shape[-2:]), tau.numpy().reshape(-1, k)
    for m, t, x in zip(qr, tau, a.reshape((-1,) + shape[-2:])):
        q = _q_of(m, t)
        np.testing.assert_allclose(q.conj().T @ q, np.eye(len(q)), atol=1e-12)
        r = np.triu(m)
        np.testing.assert_allclose(q @ r, x, atol=1e-12)
        ref = np.linalg.qr(x, mode="r")
        np.testing.assert_allclose(np.abs(r[:k]), np.abs(ref), atol=1e-12)
        # LAPACK's diagonal is real
        np.testing.assert_allclose(np.diagonal(r).imag, 0, atol=1e-12)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("complex_", [False, True])
def test_ormqr_matches_explicit_q(left, transpose, complex_):
    a = _rand((2, 5, 3), complex_)
    c = _rand((2, 5, 4) if left else (2, 4, 5), complex_)
    qr, tau = fnx.geqrf(fnx.tensor(a))
    got = fnx.ormqr(qr, tau, fnx.tensor(c), left, transpose).numpy()
    comp = fnx.compile(lambda x, t, y: x.ormqr(t, y, left=left, transpose=transpose))
    got_c = comp(qr, tau, fnx.tensor(c)).numpy()
    for i in range(2):
        q = _q_of(qr.numpy()[i], tau.numpy()[i])
        q = q.conj().T if transpose else q
        want = q @ c[i] if left else c[i] @ q
        np.testing.assert_allclose(got[i], want, atol=1e-12)
        np.testing.assert_allclose(got_c[i], want, atol=1e-12)


def test_geqrf_compiled_matches_eager_and_method():
    a = fnx.tensor(_rand((3, 4, 3), False))
    e = a.geqrf()
    c = fnx.compile(fnx.geqrf)(a)
    np.testing.assert_allclose(c[0].numpy(), e.a.numpy(), atol=1e-12)
    np.testing.assert_allclose(c[1].numpy(), e.tau.numpy(), atol=1e-12)


def test_geqrf_has_no_derivative():
    a = fnx.tensor(_rand((4, 3), False), requires_grad=True)
    qr, tau = fnx.geqrf(a)
    with pytest.raises(NotImplementedError, match="the derivative for 'geqrf' is not implemented"):
        (qr.sum() + tau.sum()).backward()


def test_ormqr_gradient_matches_finite_differences():
    a, t, c = (_rand(s, False) for s in ((4, 3), (3,), (4, 2)))
    args = [fnx.tensor(x, requires_grad=True) for x in (a, t, c)]
    w = RNG.standard_normal((4, 2))
    (fnx.ormqr(*args, transpose=True) * fnx.tensor(w)).sum().backward()

    def f(a, t, c):
        return float((_q_of(a, t).T @ c * w).sum())
    eps = 1e-6
    for i, x in enumerate((a, t, c)):
        num = np.zeros_like(x)
        for j in np.ndindex(x.shape):
            xs = [a, t, c]
            hi, lo = x.copy(), x.copy()
            hi[j] += eps
            lo[j] -= eps
            num[j] = (f(*xs[:i], hi, *xs[i + 1:]) - f(*xs[:i], lo, *xs[i + 1:])) / (2 * eps)
        np.testing.assert_allclose(args[i].grad.numpy(), num, atol=1e-6)


def test_ormqr_out_and_errors():
    qr, tau = fnx.geqrf(fnx.tensor(_rand((3, 2), False)).float())
    other = fnx.eye(3)
    out = fnx.empty(0)
    assert fnx.ormqr(qr, tau, other, out=out) is out
    np.testing.assert_allclose(out.numpy(), fnx.ormqr(qr, tau, other).numpy())
    bad = fnx.zeros(3, 3, dtype=fnx.float64)
    with pytest.raises(RuntimeError, match="Expected input and result to have the same dtype"):
        fnx.ormqr(qr, tau, other, out=bad)
    assert np.all(bad.numpy() == 0)
    with pytest.raises(RuntimeError, match=r"other.shape\[-2\] must be equal to input.shape"):
        fnx.ormqr(qr, tau, fnx.eye(4))
    with pytest.raises(NotImplementedError, match="\"geqrf_cpu\" not implemented for 'Long'"):
        fnx.geqrf(fnx.ones(2, 2, dtype=fnx.int64))
    with pytest.raises(RuntimeError, match="torch.geqrf: input must have at least 2 dimensions"):
        fnx.geqrf(fnx.ones(2))
