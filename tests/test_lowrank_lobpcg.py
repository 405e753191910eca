"""fnx.svd_lowrank / pca_lowrank (randomized SVD) and fnx.lobpcg (iterative eigensolver),
checked against numpy.linalg / scipy.linalg: reconstruction errors of exactly low-rank
matrices, singular values, PCA variances, eigenvalues, eigen-residuals and
B-orthonormality, eigenvalue gradients against their closed form; seeded with
fnx.manual_seed."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import fnx

RNG = np.random.default_rng(5)


def _low_rank(shape, rank, complex_=False):
    *batch, m, n = shape
    a = RNG.standard_normal((*batch, m, rank))
    b = RNG.standard_normal((*batch, rank, n))
    if complex_:
        a = a + 1j * RNG.standard_normal(a.shape)
    return a @ b


def _usv(U, S, V):
    return (U.numpy() * S.numpy()[..., None, :]) @ np.conj(np.swapaxes(V.numpy(), -1, -2))


@pytest.mark.parametrize("shape", [(30, 12), (12, 30), (3, 25, 20)])
@pytest.mark.parametrize("complex_", [False, True])
def test_svd_lowrank_recovers_a_low_rank_matrix(shape, complex_):
    a = _low_rank(shape, 4, complex_)
    fnx.manual_seed(0)
    U, S, V = fnx.svd_lowrank(fnx.tensor(a), q=6)
    *batch, m, n = shape
    assert tuple(U.shape) == (*batch, m, 6) and tuple(S.shape) == (*batch, 6)
    assert tuple(V.shape) == (*batch, n, 6)
    np.testing.assert_allclose(_usv(U, S, V), a, atol=1e-10)
    np.testing.assert_allclose(S.numpy()[..., :4], np.linalg.svd(a, compute_uv=False)[..., :4],
                               rtol=1e-10)
    eye = np.eye(6)
    np.testing.assert_allclose(np.conj(np.swapaxes(U.numpy(), -1, -2)) @ U.numpy(),
                               np.broadcast_to(eye, (*batch, 6, 6)), atol=1e-10)


def test_svd_lowrank_of_a_minus_its_mean_and_defaults():
    a = _low_rank((20, 15), 3)
    mean = RNG.standard_normal((1, 15))
    fnx.manual_seed(1)
    U, S, V = fnx.svd_lowrank(fnx.tensor(a + mean), q=5, M=fnx.tensor(mean))
    np.testing.assert_allclose(_usv(U, S, V), a, atol=1e-10)
    U, S, V = fnx.svd_lowrank(fnx.tensor(a))            # q=6, niter=2
    assert tuple(S.shape) == (6,)
    np.testing.assert_allclose(_usv(U, S, V), a, atol=1e-10)


def test_svd_lowrank_is_repeatable_under_a_seed_and_approximates_full_rank():
    a = RNG.standard_normal((40, 30)) * np.linspace(10, 0.01, 30)   # decaying spectrum
    fnx.manual_seed(3)
    r1 = fnx.svd_lowrank(fnx.tensor(a), q=10, niter=4)
    fnx.manual_seed(3)
    r2 = fnx.svd_lowrank(fnx.tensor(a), q=10, niter=4)
    np.testing.assert_array_equal(r1[1].numpy(), r2[1].numpy())
    s = np.linalg.svd(a, compute_uv=False)
    np.testing.assert_allclose(r1[1].numpy()[:3], s[:3], rtol=1e-3)
    # randomized range finder: error close to the best rank-10 error (s[10])
    err = np.linalg.norm(_usv(*r1) - a, 2)
    assert err < 3 * s[10]


def test_pca_lowrank_variances_and_directions():
    x = RNG.standard_normal((200, 3)) @ np.diag([5.0, 2.0, 0.5]) @ sl.qr(
        RNG.standard_normal((3, 3)))[0] + 7.0
    fnx.manual_seed(0)
    U, S, V = fnx.pca_lowrank(fnx.tensor(x), q=3)
    cov = np.cov(x, rowvar=False)
    w, v = np.linalg.eigh(cov)
    np.testing.assert_allclose(S.numpy() ** 2 / (len(x) - 1), w[::-1], rtol=1e-10)
    np.testing.assert_allclose(np.abs(V.numpy().T @ v[:, ::-1]), np.eye(3), atol=1e-8)
    fnx.manual_seed(0)
    U, S, V = fnx.pca_lowrank(fnx.tensor(x), q=2, center=False)
    s = np.linalg.svd(x, compute_uv=False)
    np.testing.assert_allclose(S.numpy(), s[:2], rtol=1e-6)
    assert tuple(fnx.pca_lowrank(fnx.tensor(x))[1].shape) == (3,)     # min(6, m, n)


def test_pca_lowrank_errors():
    x = fnx.zeros(5, 3)
    with pytest.raises(ValueError, match=r"q\(=4\) must be non-negative integer and not "
                                         r"greater than min\(m, n\)=3"):
        fnx.pca_lowrank(x, q=4)
    with pytest.raises(ValueError, match=r"niter\(=-1\) must be non-negative integer"):
        fnx.pca_lowrank(x, niter=-1)


def _spd(m, spectrum, complex_=False):
    z = RNG.standard_normal((m, m))
    if complex_:
        z = z + 1j * RNG.standard_normal((m, m))
    q = np.linalg.qr(z)[0]
    return (q * spectrum) @ np.conj(q.T)


def _check_pairs(a, E, X, ref, b=None, atol=1e-8):
    e, x = E.numpy(), X.numpy()
    bb = np.eye(len(a)) if b is None else b
    np.testing.assert_allclose(e, ref, rtol=1e-9, atol=atol)
    scale = np.abs(ref).max()
    assert np.abs(a @ x - bb @ x * e).max() < 1e-5 * scale
    np.testing.assert_allclose(np.conj(x.T) @ bb @ x, np.eye(x.shape[1]), atol=1e-10)


@pytest.mark.parametrize("method", ["ortho", "basic"])
@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_extreme_eigenpairs(method, largest):
    spectrum = np.linspace(1, 50, 45)
    a = _spd(45, spectrum)
    fnx.manual_seed(0)
    E, X = fnx.lobpcg(fnx.tensor(a), k=3, method=method, largest=largest)
    w = np.linalg.eigvalsh(a)
    _check_pairs(a, E, X, w[::-1][:3] if largest else w[:3])


@pytest.mark.parametrize("method", ["ortho", "basic"])
def test_lobpcg_generalized_problem(method):
    a = _spd(36, np.linspace(1, 20, 36))
    b = RNG.standard_normal((36, 36))
    b = b @ b.T / 36 + np.eye(36)
    fnx.manual_seed(0)
    E, X = fnx.lobpcg(fnx.tensor(a), k=2, B=fnx.tensor(b), method=method)
    _check_pairs(a, E, X, sl.eigh(a, b, eigvals_only=True)[::-1][:2], b)


def test_lobpcg_complex_batched_initial_block_and_preconditioner():
    a = _spd(30, np.arange(1.0, 31.0), complex_=True)
    fnx.manual_seed(0)
    E, X = fnx.lobpcg(fnx.tensor(a), k=2)
    assert E.dtype is fnx.float64 and X.dtype is fnx.complex128
    _check_pairs(a, E, X, [30.0, 29.0])
    # a batch, each with its own random block of n=4 vectors for k=2
    stack = np.stack([_spd(30, np.arange(1.0, 31.0)), _spd(30, np.arange(2.0, 62.0, 2.0))])
    E, X = fnx.lobpcg(fnx.tensor(stack), k=2, n=4)
    assert tuple(E.shape) == (2, 2) and tuple(X.shape) == (2, 30, 2)
    for i, top in enumerate(([30.0, 29.0], [60.0, 58.0])):
        _check_pairs(stack[i], E[i], X[i], top)
    # a given X (its columns fix n = k = 2) and the Jacobi preconditioner
    x0 = fnx.tensor(RNG.standard_normal((30, 2)))
    E, X = fnx.lobpcg(fnx.tensor(stack[0]), X=x0, iK=fnx.tensor(np.diag(1 / np.diag(stack[0]))),
                      largest=False)
    _check_pairs(stack[0], E, X, [1.0, 2.0])


def test_lobpcg_float32():
    a = _spd(30, np.arange(1.0, 31.0)).astype(np.float32)
    fnx.manual_seed(0)
    E, X = fnx.lobpcg(fnx.tensor(a), k=1)
    assert E.dtype is fnx.float32
    np.testing.assert_allclose(E.numpy(), [30.0], rtol=1e-4)


def test_lobpcg_eigenvalue_gradient():
    a = _spd(30, np.arange(1.0, 31.0))
    t = fnx.tensor(a, requires_grad=True)
    fnx.manual_seed(0)
    # A tight solver tolerance: the default one (sqrt(eps) on the residual) leaves the
    # eigenvectors, hence this gradient, ~1e-7 off, depending on the random start.
    E, X = fnx.lobpcg(t, k=2, tol=1e-10)
    (E * fnx.tensor([1.0, 3.0])).sum().backward()
    _, v = np.linalg.eigh(a)
    want = np.outer(v[:, -1], v[:, -1]) + 3 * np.outer(v[:, -2], v[:, -2])   # dλ = x^T dA x
    np.testing.assert_allclose(t.grad.numpy(), want, atol=1e-7)


def test_lobpcg_errors():
    a = fnx.eye(8, dtype=fnx.float64)
    with pytest.raises(ValueError, match=r"number of A rows \(=8\) is smaller than 3 x the "
                                         r"number of requested eigenpairs \(=3\)"):
        fnx.lobpcg(a, k=3)
    with pytest.raises(AssertionError, match="A must be square"):
        fnx.lobpcg(fnx.zeros(9, 8), k=1)
    with pytest.raises(AssertionError, match="A and B must have same shape"):
        fnx.lobpcg(fnx.eye(9), B=fnx.eye(10))
    with pytest.raises(ValueError, match="method must be 'ortho' or 'basic'"):
        fnx.lobpcg(fnx.eye(9), method="lanczos")


def test_svd_lowrank_compiles():
    a = _low_rank((20, 10), 3)
    U, S, V = fnx.compile(lambda x: fnx.svd_lowrank(x, q=4))(fnx.tensor(a))
    np.testing.assert_allclose(_usv(U, S, V), a, atol=1e-10)
