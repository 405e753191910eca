"""fnx.linalg and the torch.* matrix functions: public behaviour against NumPy/SciPy,
PyTorch's errors and the ``*_ex`` info convention, batching, complex dtypes, compiled
results, and gradients vs finite differences.  (The OpInfo database checks every op's
samples too: tests/test_opinfo.py.)"""
import math

import numpy as np
import pytest
import scipy.linalg as sl

import fnx
from fnx.autograd import gradcheck

LA = fnx.linalg
rng = np.random.default_rng(1234)


def t(a, dtype=None):
    x = fnx.from_numpy(np.ascontiguousarray(a))
    return x if dtype is None else x.to(dtype)


def rand(*shape, complex_=False):
    a = rng.standard_normal(shape)
    if complex_:
        a = a + 1j * rng.standard_normal(shape)
    return a


def spd(n, batch=(), complex_=False):
    b = rand(*batch, n, n, complex_=complex_)
    return b @ np.conj(np.swapaxes(b, -1, -2)) + n * np.eye(n)


SINGULAR = np.array([[1., 2.], [2., 4.]])
NOT_PD = np.array([[1., 2.], [2., 1.]])


# ----------------------------------------------------------------------------- values

@pytest.mark.parametrize("complex_", [False, True])
def test_factorizations_reconstruct(complex_):
    a = rand(3, 4, 4, complex_=complex_)
    A = t(a)
    P, L, U = LA.lu(A)
    np.testing.assert_allclose((P @ L @ U).numpy(), a, atol=1e-12)
    Q, R = LA.qr(A)
    np.testing.assert_allclose((Q @ R).numpy(), a, atol=1e-12)
    d = np.diagonal(R.numpy(), axis1=-2, axis2=-1)
    assert np.all(d.real >= 0) and np.allclose(d.imag, 0)         # R's diagonal is fixed
    U_, S, Vh = LA.svd(A, full_matrices=False)
    np.testing.assert_allclose(U_.numpy() @ (S.numpy()[..., None] * Vh.numpy()), a, atol=1e-12)
    np.testing.assert_allclose(S.numpy(), np.linalg.svd(a, compute_uv=False), atol=1e-12)
    h = a + np.conj(np.swapaxes(a, -1, -2))
    w, V = LA.eigh(t(h))
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(h), atol=1e-12)
    np.testing.assert_allclose((V.numpy() * w.numpy()[..., None, :]) @
                               np.conj(np.swapaxes(V.numpy(), -1, -2)), h, atol=1e-12)
    c = spd(4, (3,), complex_)
    Lc = LA.cholesky(t(c))
    np.testing.assert_allclose(Lc.numpy(), np.linalg.cholesky(c), atol=1e-12)
    Uc = LA.cholesky(t(c), upper=True)
    np.testing.assert_allclose(Uc.numpy(), np.conj(np.swapaxes(np.linalg.cholesky(c), -1, -2)),
                               atol=1e-12)


def test_solvers_and_inverses_match_numpy():
    a = rand(2, 3, 3) + 3 * np.eye(3)
    b = rand(2, 3, 2)
    A, B = t(a), t(b)
    np.testing.assert_allclose(LA.det(A).numpy(), np.linalg.det(a))
    sign, logabs = LA.slogdet(A)
    s0, l0 = np.linalg.slogdet(a)
    np.testing.assert_allclose(sign.numpy(), s0)
    np.testing.assert_allclose(logabs.numpy(), l0)
    np.testing.assert_allclose(LA.inv(A).numpy(), np.linalg.inv(a), atol=1e-12)
    np.testing.assert_allclose(LA.solve(A, B).numpy(), np.linalg.solve(a, b), atol=1e-12)
    # a batch of vectors, broadcast batches, and XA = B
    np.testing.assert_allclose(LA.solve(A, t(b[..., 0])).numpy(),
                               np.linalg.solve(a, b[..., :1])[..., 0], atol=1e-12)
    np.testing.assert_allclose(LA.solve(A, t(rand(5, 1, 3, 2))).shape, (5, 2, 3, 2))
    bt = rand(2, 4, 3)
    np.testing.assert_allclose(LA.solve(A, t(bt), left=False).numpy(),
                               np.linalg.solve(np.swapaxes(a, 1, 2), np.swapaxes(bt, 1, 2))
                               .swapaxes(1, 2), atol=1e-12)
    LU, piv = LA.lu_factor(A)
    np.testing.assert_allclose(LA.lu_solve(LU, piv, B).numpy(), np.linalg.solve(a, b),
                               atol=1e-12)
    lu0, piv0 = sl.lu_factor(a[0])
    np.testing.assert_allclose(LU[0].numpy(), lu0, atol=1e-12)
    assert piv[0].tolist() == (piv0 + 1).tolist() and piv.dtype is fnx.int32
    np.testing.assert_allclose(
        LA.solve_triangular(A, B, upper=True).numpy(),
        np.linalg.solve(np.triu(a), b), atol=1e-12)
    np.testing.assert_allclose(
        LA.solve_triangular(A, B, upper=False, unitriangular=True).numpy(),
        np.linalg.solve(np.tril(a, -1) + np.eye(3), b), atol=1e-12)
    np.testing.assert_allclose(LA.pinv(t(a[0, :, :2])).numpy(), np.linalg.pinv(a[0, :, :2]),
                               atol=1e-12)
    c = spd(3)
    Lc = LA.cholesky(t(c))
    np.testing.assert_allclose(fnx.cholesky_solve(t(b[0]), Lc).numpy(), np.linalg.solve(c, b[0]),
                               atol=1e-12)
    np.testing.assert_allclose(fnx.cholesky_inverse(Lc).numpy(), np.linalg.inv(c), atol=1e-12)


def test_float32_and_complex64_dtypes():
    a = (rand(3, 3) + 3 * np.eye(3)).astype(np.float32)
    assert LA.inv(t(a)).dtype is fnx.float32
    s = LA.svdvals(t(a.astype(np.complex64)))
    assert s.dtype is fnx.float32
    w, v = LA.eig(t(a))
    assert w.dtype is fnx.complex64 and v.dtype is fnx.complex64
    np.testing.assert_allclose(np.sort_complex(w.numpy()), np.sort_complex(np.linalg.eigvals(a)),
                               rtol=1e-4)
    assert LA.eigvalsh(t(a.astype(np.complex64))).dtype is fnx.float32


def test_norms_match_numpy():
    a = rand(2, 3, 4)
    A = t(a)
    for o in ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2):
        np.testing.assert_allclose(LA.matrix_norm(A, o).numpy(),
                                   np.linalg.norm(a, o, axis=(-2, -1)), atol=1e-12)
        np.testing.assert_allclose(LA.norm(A, o, dim=(0, 2)).numpy(),
                                   np.linalg.norm(a, o, axis=(0, 2)), atol=1e-12)
    np.testing.assert_allclose(LA.norm(A).item(), np.linalg.norm(a.ravel()))
    np.testing.assert_allclose(LA.norm(A[0, 0], 3).item(), np.linalg.norm(a[0, 0], 3))
    np.testing.assert_allclose(LA.vector_norm(A, 1, dim=(1, 2)).numpy(), np.abs(a).sum((1, 2)))
    assert LA.matrix_norm(A, keepdim=True).shape == (2, 1, 1)
    np.testing.assert_allclose(fnx.norm(A, "nuc").numpy(), np.linalg.norm(a, "nuc", axis=(1, 2)))
    sq = rand(2, 3, 3)
    for p in (None, "fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2):
        np.testing.assert_allclose(LA.cond(t(sq), p).numpy(), np.linalg.cond(sq, p), rtol=1e-10)
    assert LA.cond(t(SINGULAR), 1).item() == math.inf
    assert LA.matrix_rank(t(np.ones((3, 3)))).item() == 1
    assert LA.matrix_rank(t(np.diag([1., 0.1, 0.01])), atol=0.05).item() == 2
    assert LA.matrix_rank(t(np.diag([1., 0.1, 0.01])), rtol=0.05).item() == 2


def test_products_match_numpy():
    a = rand(2, 3, 3)
    np.testing.assert_allclose(LA.matrix_power(t(a), 3).numpy(),
                               np.linalg.matrix_power(a, 3), atol=1e-12)
    np.testing.assert_allclose(LA.matrix_power(t(a + 3 * np.eye(3)), -2).numpy(),
                               np.linalg.matrix_power(a + 3 * np.eye(3), -2), atol=1e-12)
    np.testing.assert_allclose(LA.matrix_power(t(a), 0).numpy(), np.broadcast_to(np.eye(3),
                                                                                  a.shape))
    np.testing.assert_allclose(LA.matrix_exp(t(a)).numpy(), np.stack([sl.expm(m) for m in a]),
                               atol=1e-12)
    ms = [rand(3), rand(3, 5), rand(5, 2), rand(2, 4)]
    np.testing.assert_allclose(LA.multi_dot([t(m) for m in ms]).numpy(),
                               np.linalg.multi_dot(ms), atol=1e-12)
    x, y = rand(4, 3), rand(1, 3)
    np.testing.assert_allclose(LA.cross(t(x), t(y)).numpy(), np.cross(x, y), atol=1e-12)
    xc, yc = rand(4, 3, complex_=True), rand(4, 3, complex_=True)
    np.testing.assert_allclose(LA.vecdot(t(xc), t(yc)).numpy(), np.sum(np.conj(xc) * yc, -1))
    tt = rand(4, 6, 8, 3)
    np.testing.assert_allclose(LA.tensorinv(t(tt), 2).numpy(), np.linalg.tensorinv(tt, 2),
                               atol=1e-10)
    ts, bs = rand(2, 3, 6), rand(2, 3)
    np.testing.assert_allclose(LA.tensorsolve(t(ts), t(bs)).numpy(),
                               np.linalg.tensorsolve(ts, bs), atol=1e-10)
    assert LA.vander(fnx.tensor([1, 2, 3])).tolist() == \
        np.vander([1, 2, 3], increasing=True).tolist()
    d = fnx.arange(24.).reshape(2, 3, 4)
    v = LA.diagonal(d)
    assert v.tolist() == np.diagonal(d.numpy(), axis1=-2, axis2=-1).tolist()
    d[0, 1, 1] = 100.              # a view, as PyTorch's
    assert v[0, 1].item() == 100.


def test_householder_product_is_lapacks_orgqr():
    a = rand(5, 3)
    qr, tau, _, _ = sl.lapack.dgeqrf(a)
    np.testing.assert_allclose(LA.householder_product(t(qr), t(tau)).numpy(),
                               sl.lapack.dorgqr(qr, tau)[0], atol=1e-12)
    np.testing.assert_allclose(LA.householder_product(t(qr), t(tau)).numpy(),
                               np.linalg.qr(a)[0] * np.sign(np.diag(qr))[None, :] *
                               np.sign(np.diag(np.linalg.qr(a)[1]))[None, :], atol=1e-12)


def test_lstsq_follows_the_driver_rules():
    a, b = rand(5, 3), rand(5, 2)
    x0, r0, k0, s0 = np.linalg.lstsq(a, b, rcond=None)
    r = LA.lstsq(t(a), t(b))              # gelsy: rank; no residuals, no singular values
    np.testing.assert_allclose(r.solution.numpy(), x0, atol=1e-12)
    assert r.residuals.shape == (0,)
    assert r.rank.item() == 3 and r.singular_values.shape == (0,)
    r = LA.lstsq(t(a), t(b), driver="gelsd")
    np.testing.assert_allclose(r.residuals.numpy(), r0, atol=1e-12)
    np.testing.assert_allclose(r.singular_values.numpy(), s0, atol=1e-12)
    r = LA.lstsq(t(a), t(b), driver="gels")
    assert r.rank.shape == (0,) and r.residuals.shape == (2,)
    # rank-deficient: the minimum-norm solution, no residuals
    low = rand(5, 2) @ rand(2, 3)
    r = LA.lstsq(t(low), t(b), driver="gelsd")
    np.testing.assert_allclose(r.solution.numpy(), np.linalg.lstsq(low, b, rcond=None)[0],
                               atol=1e-10)
    assert r.rank.item() == 2 and r.residuals.shape == (0,)
    # a vector right-hand side keeps a residual column; wide systems have no residuals
    r = LA.lstsq(t(a), t(b[:, 0]), driver="gelss")
    assert r.solution.shape == (3,) and r.residuals.shape == (1,)
    assert LA.lstsq(t(rand(2, 4)), t(rand(2, 1))).residuals.shape == (0,)


def test_torch_spellings_and_methods():
    a = rand(2, 4, 3)
    U, S, V = fnx.svd(t(a))                   # V, not Vh; reduced by default
    assert U.shape == (2, 4, 3) and V.shape == (2, 3, 3)
    np.testing.assert_allclose(U.numpy() @ (S.numpy()[..., None] * np.swapaxes(V.numpy(), 1, 2)),
                               a, atol=1e-12)
    U, S, V = fnx.svd(t(a), some=False)
    assert U.shape == (2, 4, 4) and V.shape == (2, 3, 3)
    U, S, V = fnx.svd(t(a), compute_uv=False)
    assert not U.numpy().any() and U.shape == (2, 4, 4) and V.shape == (2, 3, 3)
    Q, R = fnx.qr(t(a), some=False)
    assert Q.shape == (2, 4, 4) and R.shape == (2, 4, 3)
    sq = t(rand(3, 3) + 3 * np.eye(3))
    assert sq.det().item() == pytest.approx(np.linalg.det(sq.numpy()))
    np.testing.assert_allclose(sq.inverse().numpy(), np.linalg.inv(sq.numpy()), atol=1e-12)
    assert math.isnan(fnx.logdet(t(np.diag([-1., 1.]))).item())
    assert fnx.logdet(t(np.zeros((2, 2)))).item() == -math.inf
    sol, coef = fnx.triangular_solve(t(rand(3, 2)), sq)
    np.testing.assert_allclose(coef.numpy(), sq.numpy())
    np.testing.assert_allclose(sq.matrix_power(2).numpy(), sq.numpy() @ sq.numpy(), atol=1e-12)
    np.testing.assert_allclose(fnx.pinverse(t(a[0])).numpy(), np.linalg.pinv(a[0]), atol=1e-12)
    LU, piv = fnx.lu(sq)
    P, L, Uu = fnx.lu_unpack(LU, piv)
    np.testing.assert_allclose((P @ L @ Uu).numpy(), sq.numpy(), atol=1e-12)
    np.testing.assert_allclose(fnx.lu_solve(t(np.ones((3, 1))), LU, piv).numpy(),
                               np.linalg.solve(sq.numpy(), np.ones((3, 1))), atol=1e-12)
    assert type(LA.slogdet(sq)).__name__ == "linalg_slogdet"
    assert type(fnx.slogdet(sq)).__name__ == "slogdet"


def test_logdet_of_a_positive_definite_matrix():
    c = spd(3)
    np.testing.assert_allclose(fnx.logdet(t(c)).item(), np.log(np.linalg.det(c)))


# ----------------------------------------------------------------------------- errors

def test_singular_and_not_positive_definite_errors():
    assert issubclass(LA.LinAlgError, RuntimeError)
    with pytest.raises(LA.LinAlgError, match=r"^linalg.inv: The diagonal element 2 is zero, the "
                       r"inversion could not be completed because the input matrix is "
                       r"singular.$"):
        LA.inv(t(SINGULAR))
    batch = t(np.stack([np.eye(2), SINGULAR]))
    with pytest.raises(LA.LinAlgError, match=r"^linalg.inv: \(Batch element 1\): The diagonal "
                       r"element 2 is zero"):
        LA.inv(batch)
    with pytest.raises(LA.LinAlgError, match=r"^linalg.cholesky: The factorization could not "
                       r"be completed because the input is not positive-definite \(the leading "
                       r"minor of order 2 is not positive-definite\).$"):
        LA.cholesky(t(NOT_PD))
    with pytest.raises(LA.LinAlgError, match="^torch.linalg.solve: The solver failed because "
                       "the input matrix is singular.$"):
        LA.solve(t(SINGULAR), t(np.ones(2)))
    with pytest.raises(RuntimeError, match=r"torch.linalg.lu_factor: U\[2,2\] is zero"):
        LA.lu_factor(t(SINGULAR))
    with pytest.raises(LA.LinAlgError, match="^linalg.inv: "):
        fnx.inverse(t(SINGULAR))
    with pytest.raises(LA.LinAlgError, match="^linalg.cholesky: "):
        fnx.cholesky(t(NOT_PD))


def test_ex_functions_return_info():
    mats = t(np.stack([spd(2), NOT_PD, -np.eye(2)]))
    L, info = LA.cholesky_ex(mats)
    assert info.dtype is fnx.int32 and info.tolist() == [0, 2, 1]
    np.testing.assert_allclose(L[0].numpy(), np.linalg.cholesky(mats[0].numpy()))
    with pytest.raises(LA.LinAlgError, match=r"^linalg.cholesky_ex: \(Batch element 1\): "
                       r"The factorization could not be completed"):
        LA.cholesky_ex(mats, check_errors=True)
    inv, info = LA.inv_ex(t(SINGULAR))
    assert info.item() == 2 and not np.isfinite(inv.numpy()).all()
    with pytest.raises(LA.LinAlgError, match="^linalg.inv_ex: The diagonal element 2"):
        LA.inv_ex(t(SINGULAR), check_errors=True)
    assert LA.solve_ex(t(SINGULAR), t(np.ones(2))).info.item() == 2
    assert LA.solve_ex(t(np.eye(2)), t(np.ones(2))).info.item() == 0
    with pytest.raises(LA.LinAlgError, match="solve_ex: The solver failed"):
        LA.solve_ex(t(SINGULAR), t(np.ones(2)), check_errors=True)
    r = LA.lu_factor_ex(t(np.stack([np.eye(2), SINGULAR])))
    assert r.info.tolist() == [0, 2]
    sign, logabs = LA.slogdet(t(SINGULAR))
    assert sign.item() == 0 and logabs.item() == -math.inf


def test_shape_and_dtype_errors():
    with pytest.raises(RuntimeError, match="^linalg.det: A must be batches of square matrices, "
                       "but they are 2 by 3 matrices$"):
        LA.det(fnx.ones(2, 3))
    with pytest.raises(RuntimeError, match="linalg.det: The input tensor A must have at least 2 "
                       "dimensions."):
        LA.det(fnx.ones(3))
    with pytest.raises(RuntimeError, match="linalg.inv: Expected a floating point or complex "
                       "tensor as input. Got Long"):
        LA.inv(fnx.ones(2, 2, dtype=fnx.int64))
    with pytest.raises(RuntimeError, match="Expected A and B to have the same dtype"):
        LA.solve(fnx.eye(2), fnx.ones(2, dtype=fnx.float64))
    with pytest.raises(RuntimeError, match=r"Incompatible shapes of A and B for the equation "
                       r"AX = B \(2x2 and 3x1\)"):
        LA.solve(fnx.eye(2), fnx.ones(3))
    with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U', but got X"):
        LA.eigh(fnx.eye(2), "X")
    with pytest.raises(RuntimeError, match="qr received unrecognized mode 'x'"):
        LA.qr(fnx.eye(2), "x")
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: Order 3 not supported."):
        LA.matrix_norm(fnx.eye(2), 3)
    with pytest.raises(RuntimeError, match="linalg.cond got an invalid norm type: 3"):
        LA.cond(fnx.eye(2), 3)
    with pytest.raises(RuntimeError, match="driver=` is only supported on CUDA"):
        LA.svd(fnx.eye(2), driver="gesvd")
    with pytest.raises(TypeError):
        LA.solve_triangular(fnx.eye(2), fnx.ones(2, 1))        # upper is required
    with pytest.raises(RuntimeError, match="multi_dot\\(\\): tensor 1 must be 2D but got 3D"):
        LA.multi_dot([fnx.ones(3, 3), fnx.ones(3, 3, 3), fnx.ones(3, 3)])


def test_a_failed_call_changes_nothing():
    A = t(SINGULAR.copy())
    B = t(np.ones((2, 1)))
    for fn in (lambda: LA.inv(A), lambda: LA.solve(A, B), lambda: LA.cholesky(A)):
        with pytest.raises(RuntimeError):
            fn()
        assert A.numpy().tolist() == SINGULAR.tolist() and B.numpy().tolist() == [[1.], [1.]]
        assert A._version == 0 and B._version == 0


# ----------------------------------------------------------------------------- compile

@pytest.mark.parametrize("complex_", [False, True])
def test_compiled_matches_eager(complex_):
    a = rand(2, 4, 4, complex_=complex_) + 4 * np.eye(4)
    b = rand(2, 4, 2, complex_=complex_)

    def f(A, B):
        w, V = LA.eigh(A, "U")
        Q, R = LA.qr(A)
        U, S, Vh = LA.svd(A)
        return (LA.solve(A, B), LA.det(A), LA.inv(A), w, V, Q, R, U, S, Vh,
                LA.cholesky(A @ A.mT if not complex_ else A + 8 * fnx.eye(4, dtype=A.dtype)),
                LA.matrix_norm(A, "nuc"), LA.pinv(A), LA.matrix_exp(A * 0.1),
                LA.lstsq(A, B).solution, LA.slogdet(A).logabsdet, LA.eigvals(A),
                LA.lu_factor(A).LU)
    eager = f(t(a), t(b))
    compiled = fnx.compile(f, fullgraph=True)(t(a), t(b))
    for e, c in zip(eager, compiled):
        np.testing.assert_allclose(c.numpy(), e.numpy(), atol=1e-10)


def test_compiled_ex_functions_report_failure_without_raising():
    f = fnx.compile(lambda A: LA.cholesky_ex(A), fullgraph=True)
    L, info = f(t(np.stack([spd(2), NOT_PD])))
    assert info[0].item() == 0 and info[1].item() != 0      # XLA reports 1, not the order
    g = fnx.compile(lambda A: LA.inv_ex(A), fullgraph=True)
    assert g(t(SINGULAR))[1].item() == 2


# ----------------------------------------------------------------------------- gradients

def _leaf(a):
    return t(a).requires_grad_()


def test_gradients_match_finite_differences():
    a = _leaf(rand(2, 3, 3) + 3 * np.eye(3))
    b = _leaf(rand(2, 3, 2))
    assert gradcheck(lambda A: LA.det(A), (a,))
    assert gradcheck(lambda A: LA.slogdet(A).logabsdet, (a,))
    assert gradcheck(lambda A: LA.inv(A), (a,))
    assert gradcheck(lambda A, B: LA.solve(A, B), (a, b))
    assert gradcheck(lambda A, B: LA.solve(A, B, left=False), (a, _leaf(rand(2, 2, 3))))
    assert gradcheck(lambda A, B: LA.solve_triangular(A, B, upper=True), (a, b))
    assert gradcheck(lambda A: LA.matrix_exp(A), (a,))
    assert gradcheck(lambda A: LA.pinv(A), (_leaf(rand(4, 3)),))
    assert gradcheck(lambda A: LA.matrix_norm(A, "nuc"), (_leaf(rand(4, 3)),))
    assert gradcheck(lambda A: LA.cond(A), (_leaf(rand(3, 3)),))
    assert gradcheck(lambda A, B: LA.lstsq(A, B).solution, (_leaf(rand(5, 3)), _leaf(rand(5, 2))))
    # symmetric parametrizations: the eigen- and Cholesky factors of X + X^T, X X^T + I
    x = _leaf(rand(3, 3))
    assert gradcheck(lambda X: LA.eigh(X + X.mT).eigenvalues, (x,))
    assert gradcheck(lambda X: LA.eigh(X + X.mT).eigenvectors, (x,))
    assert gradcheck(lambda X: LA.cholesky(X @ X.mT + fnx.eye(3, dtype=fnx.float64)), (x,))
    assert gradcheck(lambda X: LA.qr(X).Q, (x,))
    assert gradcheck(lambda X: LA.svd(X, full_matrices=False).U, (x,))


def test_eig_gradients_for_phase_invariant_losses():
    P = fnx.ops.prims
    a = fnx.tensor([[0., -2., 0.3], [1., 0.1, 0.], [0.2, 0.5, 1.]], dtype=fnx.float64)
    assert abs(LA.eigvals(a).numpy().imag).max() > 0.5        # a complex pair
    x = a.clone().requires_grad_()
    assert gradcheck(lambda A: P.real(LA.eigvals(A)), (x,))
    assert gradcheck(lambda A: P.imag(LA.eigvals(A)), (x,))
    assert gradcheck(lambda A: P.abs(LA.eig(A).eigenvectors), (x,))


def test_symmetric_gradient_agrees_with_pytorchs_convention():
    """PyTorch's eigh/cholesky backward returns the Hermitian gradient G; fnx returns the
    gradient of what the kernel reads (one triangle).  Through any symmetric
    parametrization (here A = X + X^T) both give the same gradient for X: 2 sym(G)."""
    x = rand(3, 3)
    X = _leaf(x)
    w = LA.eigvalsh(X + X.mT)
    w.sum().backward()
    # d sum(eigenvalues) / dA = I for symmetric A, so d/dX = 2 I
    np.testing.assert_allclose(X.grad.numpy(), 2 * np.eye(3), atol=1e-12)


# ----------------------------------------------------------------------------- cuda

@pytest.mark.skipif(not fnx.cuda.is_available(), reason="no cuda device (FNX_CUDA_ON_CPU=1)")
def test_cuda_matches_cpu():
    a = rand(2, 3, 3) + 3 * np.eye(3)
    A = t(a).to("cuda")
    np.testing.assert_allclose(LA.inv(A).cpu().numpy(), np.linalg.inv(a), atol=1e-12)
    np.testing.assert_allclose(LA.svdvals(A).cpu().numpy(), np.linalg.svd(a, compute_uv=False),
                               atol=1e-12)
    with pytest.raises(LA.LinAlgError, match="linalg.inv: The diagonal element 2 is zero"):
        LA.inv(t(SINGULAR).to("cuda"))
