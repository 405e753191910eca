"""OpInfo entries of the factorizations and solves (fnx/ir/aten/factorizations.py).

References are NumPy's and SciPy's drivers (``np.linalg.det``, ``np.linalg.solve``,
``np.linalg.lstsq``, ``scipy.linalg.qr``/``eigh``/``svd`` with the gesvd driver, ...),
batched by hand where they are not, and the phase conventions the prims fix restated
(so eigenvectors and singular vectors compare entry by entry, a stronger check than the
invariants alone).  Samples: batched and broadcast batches, transposed operands, vector
right-hand sides, empty matrices, real and complex; gradients vs finite differences in
float64.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sl

from ...core import dtype as D
from ...ir import prims as P
from ...ir.aten import factorizations as F
from ..database import ErrorInput, OpInfo, SampleInput, make_tensor, register
from .prims.linalg import (COMPLEX_GAUGE, EIG_GAUGE, LINALG_DTYPES, LINALG_TOLS, _eig_ref,
                           _eigh_ref, _qr_ref, _svd_ref, doolittle, each, from_numpy_as, hermitian,
                           matrix, spd, square)

T = LINALG_TOLS
DT = LINALG_DTYPES


def _wide(a):
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def _real(a):
    return np.float32 if a.dtype in (np.float32, np.complex64) else np.float64


def _mH(a):
    return np.conj(np.swapaxes(a, -1, -2))


def _errors(name, *args, square_only=True, **kwargs):
    """The shape and dtype errors every matrix function gives (PyTorch's words)."""
    def errors(info, device):
        yield ErrorInput(SampleInput(make_tensor((3,), D.float32, device), *args, **kwargs),
                         match=f"{name}: The input tensor A must have at least 2 dimensions.")
        yield ErrorInput(SampleInput(make_tensor((2, 2), D.int64, device), *args, **kwargs),
                         match=f"{name}: Expected a floating point or complex tensor as input. "
                               f"Got Long")
        if square_only:
            yield ErrorInput(SampleInput(make_tensor((2, 3), D.float32, device), *args,
                                         **kwargs),
                             match=f"{name}: A must be batches of square matrices, but they "
                                   f"are 2 by 3 matrices")
    return errors


# ----------------------------------------------------------------------------- cholesky

def _spd_samples(*args, **kwargs):
    def samples(info, device, dtype):
        yield SampleInput(spd((3, 3), dtype, device), *args, **kwargs)
        yield SampleInput(spd((2, 4, 4), dtype, device), *args, **kwargs)
        yield SampleInput(spd((0, 2, 2), dtype, device), *args, **kwargs)
    return samples


def _chol(a, upper):
    def one(m):
        return (sl.cholesky(_wide(m), lower=not upper) if m.size else _wide(m),)
    (c,) = each(one, a, out_ndims=(2,))
    return (c if c is not None else np.zeros(a.shape)).astype(a.dtype)


def _chol_samples(info, device, dtype):
    yield from _spd_samples()(info, device, dtype)
    yield SampleInput(spd((2, 3, 3), dtype, device), upper=True)


def _cholesky_ref(a, upper=False):
    return _chol(a, upper)


def _cholesky_ex_ref(a, upper=False, check_errors=False):
    return _chol(a, upper), np.zeros(a.shape[:-2], np.int32)


def _torch_chol_samples(info, device, dtype):
    yield SampleInput(spd((3, 3), dtype, device))
    yield SampleInput(spd((2, 3, 3), dtype, device), True)


def _chol_solve_samples(info, device, dtype):
    for upper in (False, True):
        factor = F.linalg_cholesky(spd((2, 3, 3), dtype, device), upper=upper)
        yield SampleInput(matrix((3, 2), dtype, device), factor, upper)
    yield SampleInput(matrix((2, 1, 3, 1), dtype, device),
                      F.linalg_cholesky(spd((3, 3, 3), dtype, device)))


def _bsolve(a, b):
    """np.linalg.solve of matrices with broadcast batch dims."""
    a, b2 = _wide(a), _wide(b)
    batch = np.broadcast_shapes(a.shape[:-2], b2.shape[:-2])
    return np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]),
                           np.broadcast_to(b2, batch + b2.shape[-2:]))


def _chol_solve_ref(b, factor, upper=False):
    a = _mH(factor) @ factor if upper else factor @ _mH(factor)
    return _bsolve(a, b).astype(b.dtype)


def _chol_inverse_samples(info, device, dtype):
    yield SampleInput(F.linalg_cholesky(spd((3, 3), dtype, device)))
    yield SampleInput(F.linalg_cholesky(spd((2, 3, 3), dtype, device), upper=True),
                      True)


def _chol_inverse_ref(factor, upper=False):
    a = _mH(factor) @ factor if upper else factor @ _mH(factor)
    return np.linalg.inv(_wide(a)).astype(factor.dtype)


# ----------------------------------------------------------------------------- lu

def _lu_samples(*args, **kwargs):
    def samples(info, device, dtype):
        yield SampleInput(square((3, 3), dtype, device), *args, **kwargs)
        yield SampleInput(matrix((2, 4, 4), dtype, device, transposed=True), *args, **kwargs)
        yield SampleInput(matrix((0, 2, 2), dtype, device), *args, **kwargs)
    return samples


def _rect_lu_samples(info, device, dtype):
    yield from _lu_samples()(info, device, dtype)
    yield SampleInput(matrix((2, 4, 3), dtype, device))
    yield SampleInput(matrix((3, 5), dtype, device))


def _lu_parts(a):
    lu, piv, perm, info = each(doolittle, a, out_ndims=(2, 1, 1, 0))
    if lu is None:      # an empty batch
        k = min(a.shape[-2:])
        return (np.zeros(a.shape, a.dtype), np.zeros(a.shape[:-2] + (k,), np.int32),
                np.zeros(a.shape[:-1], np.int64), np.zeros(a.shape[:-2], np.int32))
    return lu.astype(a.dtype), piv.astype(np.int32), perm, info.astype(np.int32)


def _lu_factor_ref(a, pivot=True):
    lu, piv, _, _ = _lu_parts(a)
    return lu, piv


def _lu_factor_ex_ref(a, pivot=True, check_errors=False):
    lu, piv, _, info = _lu_parts(a)
    return lu, piv, info


def _p_l_u(lu, perm):
    m, n = lu.shape[-2:]
    k = min(m, n)
    L = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=lu.dtype)
    U = np.triu(lu[..., :k, :])
    P = (np.arange(m)[:, None] == perm[..., None, :]).astype(lu.dtype)
    return P, L, U


def _lu_ref(a, pivot=True):
    lu, _, perm, _ = _lu_parts(a)
    return _p_l_u(lu, perm)


def _swaps_to_perm(piv, m):
    perm = np.arange(m)
    for i, p in enumerate(piv):
        perm[[i, p - 1]] = perm[[p - 1, i]]
    return perm


def _factored(dtype, device, shape):
    a = square(shape, dtype)
    lu, piv = F.linalg_lu_factor(a)
    return lu.to(device) if str(device) != "cpu" else lu, \
        piv.to(device) if str(device) != "cpu" else piv


def _lu_unpack_samples(info, device, dtype):
    lu, piv = _factored(dtype, device, (3, 3))
    yield SampleInput(lu, piv)
    lu, piv = _factored(dtype, device, (2, 4, 4))
    yield SampleInput(lu, piv, True, True)
    yield SampleInput(lu, piv, False, True)
    yield SampleInput(lu, piv, True, False)


def _lu_unpack_ref(lu, piv, unpack_data=True, unpack_pivots=True):
    m = lu.shape[-2]
    perm = np.stack([_swaps_to_perm(p, m) for p in piv.reshape(-1, piv.shape[-1])]) \
        .reshape(piv.shape[:-1] + (m,))
    P, L, U = _p_l_u(lu, perm)
    empty = np.zeros((0,), lu.dtype)
    return (P if unpack_pivots else empty, L if unpack_data else empty,
            U if unpack_data else empty)


def _lu_solve_samples(info, device, dtype):
    lu, piv = _factored(dtype, device, (2, 3, 3))
    yield SampleInput(lu, piv, matrix((2, 3, 2), dtype, device))
    yield SampleInput(lu, piv, matrix((2, 3, 2), dtype, device), adjoint=True)
    yield SampleInput(lu, piv, matrix((2, 2, 3), dtype, device), left=False)
    yield SampleInput(lu, piv, matrix((2, 2, 3), dtype, device), left=False, adjoint=True)
    yield SampleInput(lu, piv, matrix((3, 1), dtype, device))


def _lu_solve_ref(lu, piv, b, left=True, adjoint=False):
    P, L, U = _lu_unpack_ref(lu, piv)
    a = _wide(P @ L @ U)
    if adjoint:
        a = _mH(a)
    b2 = _wide(b)
    batch = np.broadcast_shapes(a.shape[:-2], b2.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b2 = np.broadcast_to(b2, batch + b2.shape[-2:])
    if left:
        return np.linalg.solve(a, b2).astype(b.dtype)
    return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b2, -1, -2)),
                       -1, -2).astype(b.dtype)


# ----------------------------------------------------------------------------- det

def _det_samples(info, device, dtype):
    yield SampleInput(square((3, 3), dtype, device))
    yield SampleInput(matrix((2, 4, 4), dtype, device, transposed=True))
    yield SampleInput(matrix((1, 1), dtype, device))
    yield SampleInput(matrix((2, 0, 0), dtype, device))


def _det_ref(a):
    return np.linalg.det(_wide(a)).astype(a.dtype) if a.size else \
        np.ones(a.shape[:-2], a.dtype)


def _slogdet_ref(a):
    if not a.size:
        return np.ones(a.shape[:-2], a.dtype), np.zeros(a.shape[:-2], _real(a))
    s, logabs = np.linalg.slogdet(_wide(a))
    return s.astype(a.dtype), logabs.astype(_real(a))


def _logdet_samples(info, device, dtype):
    yield SampleInput(spd((3, 3), dtype, device))
    yield SampleInput(square((2, 3, 3), dtype, device))


def _logdet_ref(a):
    s, logabs = _slogdet_ref(a)
    if a.dtype.kind == "c":
        return (np.log(s.astype(np.complex128)) + logabs).astype(a.dtype)
    return np.where(s < 0, np.nan, logabs).astype(a.dtype)


# ----------------------------------------------------------------------------- inv, solve

def _inv_ref(a):
    return np.linalg.inv(_wide(a)).astype(a.dtype) if a.size else a.copy()


def _inv_ex_ref(a, check_errors=False):
    return _inv_ref(a), np.zeros(a.shape[:-2], np.int32)


def _inv_samples(info, device, dtype):
    yield SampleInput(square((3, 3), dtype, device))
    yield SampleInput(square((2, 4, 4), dtype, device, transposed=True))
    yield SampleInput(matrix((0, 0), dtype, device))


def _solve_samples(info, device, dtype):
    a = square((2, 3, 3), dtype, device)
    yield SampleInput(a, matrix((2, 3, 2), dtype, device))
    yield SampleInput(a, matrix((2, 3), dtype, device))                  # a batch of vectors
    yield SampleInput(a, matrix((3,), dtype, device))                    # one vector
    yield SampleInput(a, matrix((4, 1, 3, 2), dtype, device))            # broadcast batches
    yield SampleInput(a, matrix((2, 2, 3), dtype, device), left=False)
    yield SampleInput(square((3, 3), dtype, device, transposed=True),
                      matrix((2, 3, 1), dtype, device))


def _solve_ref(a, b, left=True):
    aw, bw = _wide(a), _wide(b)
    if b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]):
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-1])
        x = np.linalg.solve(np.broadcast_to(aw, batch + a.shape[-2:]),
                            np.broadcast_to(bw, batch + b.shape[-1:])[..., None])[..., 0]
        return x.astype(a.dtype)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    aw = np.broadcast_to(aw, batch + a.shape[-2:])
    bw = np.broadcast_to(bw, batch + b.shape[-2:])
    if left:
        return np.linalg.solve(aw, bw).astype(a.dtype)
    return np.swapaxes(np.linalg.solve(np.swapaxes(aw, -1, -2), np.swapaxes(bw, -1, -2)),
                       -1, -2).astype(a.dtype)


def _solve_ex_ref(a, b, left=True, check_errors=False):
    return _solve_ref(a, b, left), np.zeros(a.shape[:-2], np.int32)


def _solve_errors(info, device):
    a = make_tensor((2, 2), D.float32, device)
    yield ErrorInput(SampleInput(a, make_tensor((3,), D.float32, device)),
                     match=r"linalg.solve: Incompatible shapes of A and B for the equation "
                           r"AX = B \(2x2 and 3x1\)")
    yield ErrorInput(SampleInput(a, make_tensor((2,), D.float64, device)),
                     match="linalg.solve: Expected A and B to have the same dtype, but found "
                           "A of type Float and B of type Double instead")
    yield ErrorInput(SampleInput(make_tensor((2, 3), D.float32, device),
                                 make_tensor((2,), D.float32, device)),
                     match="linalg.solve: A must be batches of square matrices")


def _tri_mask(a, upper, unit):
    t = np.triu(_wide(a)) if upper else np.tril(_wide(a))
    if unit:
        n = a.shape[-1]
        t = t * (1 - np.eye(n)) + np.eye(n)
    return t


def _solve_tri_samples(info, device, dtype):
    a = square((2, 3, 3), dtype, device)
    yield SampleInput(a, matrix((2, 3, 2), dtype, device), upper=True)
    yield SampleInput(a, matrix((2, 3, 2), dtype, device), upper=False, unitriangular=True)
    yield SampleInput(a, matrix((2, 2, 3), dtype, device), upper=True, left=False)
    yield SampleInput(square((3, 3), dtype, device, transposed=True),
                      matrix((4, 1, 3, 2), dtype, device), upper=False)


def _solve_tri_ref(a, b, upper, left=True, unitriangular=False):
    return _solve_ref(_tri_mask(a, upper, unitriangular).astype(a.dtype), b, left) \
        if b.ndim >= 2 else None


def _torch_tri_samples(info, device, dtype):
    a = square((2, 3, 3), dtype, device)
    yield SampleInput(matrix((2, 3, 2), dtype, device), a)
    yield SampleInput(matrix((2, 3, 2), dtype, device), a, False, True)
    yield SampleInput(matrix((3, 1), dtype, device), a, True, False, True)


def _torch_tri_ref(b, a, upper=True, transpose=False, unitriangular=False):
    t = _tri_mask(a, upper, unitriangular)
    if transpose:
        t = np.swapaxes(t, -1, -2)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    x = np.linalg.solve(np.broadcast_to(t, batch + a.shape[-2:]),
                        np.broadcast_to(_wide(b), batch + b.shape[-2:]))
    return x.astype(b.dtype), np.broadcast_to(a, batch + a.shape[-2:]).copy()


# ----------------------------------------------------------------------------- qr, eig, svd

def _qr_samples(info, device, dtype):
    yield SampleInput(matrix((4, 3), dtype, device))
    yield SampleInput(matrix((2, 3, 5), dtype, device, transposed=True), "reduced")
    yield SampleInput(matrix((2, 3, 3), dtype, device), "complete")
    yield SampleInput(matrix((3, 5), dtype, device), "complete")
    yield SampleInput(matrix((4, 3), dtype, device), "r")


def _linalg_qr_ref(a, mode="reduced"):
    q, r = _qr_ref(a, mode == "complete")
    return (np.zeros((0,), a.dtype), r) if mode == "r" else (q, r)


def _torch_qr_samples(info, device, dtype):
    yield SampleInput(matrix((4, 3), dtype, device))
    yield SampleInput(matrix((2, 3, 4), dtype, device), False)


def _torch_qr_ref(a, some=True):
    return _qr_ref(a, not some)


def _qr_errors(info, device):
    yield from _errors("linalg.qr", square_only=False)(info, device)
    yield ErrorInput(SampleInput(make_tensor((2, 2), D.float32, device), "x"),
                     match="qr received unrecognized mode 'x' but expected one of 'reduced' "
                           r"\(default\), 'r', or 'complete'")


def _eigh_samples(info, device, dtype):
    yield SampleInput(hermitian((3, 3), dtype, device))
    yield SampleInput(hermitian((2, 4, 4), dtype, device), "U")
    yield SampleInput(matrix((2, 3, 3), dtype, device), "L")


def _linalg_eigh_ref(a, UPLO="L"):
    return _eigh_ref(a, UPLO == "L")


def _eigvalsh_ref(a, UPLO="L"):
    return np.linalg.eigvalsh(_wide(a), UPLO=UPLO).astype(_real(a))


def _eigh_errors(info, device):
    yield from _errors("linalg.eigh")(info, device)
    yield ErrorInput(SampleInput(make_tensor((2, 2), D.float32, device), "X"),
                     match="Expected UPLO argument to be 'L' or 'U', but got X")


def _eig_samples(info, device, dtype):
    yield SampleInput(square((3, 3), dtype, device))
    yield SampleInput(hermitian((2, 3, 3), dtype, device))


def _eigvals_ref(a):
    return _eig_ref(a)[0]


def _svd_samples(info, device, dtype):
    yield SampleInput(matrix((4, 3), dtype, device), False)
    yield SampleInput(matrix((2, 3, 5), dtype, device, transposed=True), False)
    yield SampleInput(matrix((3, 4), dtype, device))            # full_matrices=True


def _linalg_svd_ref(a, full_matrices=True, driver=None):
    return _svd_ref(a, full_matrices)


def _svdvals_samples(info, device, dtype):
    yield SampleInput(matrix((4, 3), dtype, device))
    yield SampleInput(matrix((2, 3, 5), dtype, device, transposed=True))


def _svdvals_ref(a, driver=None):
    return np.linalg.svd(_wide(a), compute_uv=False).astype(_real(a))


def _torch_svd_samples(info, device, dtype):
    yield SampleInput(matrix((4, 3), dtype, device))
    yield SampleInput(matrix((2, 3, 4), dtype, device), True)
    yield SampleInput(matrix((3, 3), dtype, device), False)
    yield SampleInput(matrix((2, 3), dtype, device), True, False)


def _torch_svd_ref(a, some=True, compute_uv=True):
    m, n = a.shape[-2:]
    if not compute_uv:
        return (np.zeros(a.shape[:-2] + (m, m), a.dtype), _svdvals_ref(a),
                np.zeros(a.shape[:-2] + (n, n), a.dtype))
    u, s, vh = _svd_ref(a, not some)
    return u, s, _mH(vh)


# ----------------------------------------------------------------------------- pinv, rank

def _pinv_samples(info, device, dtype):
    yield SampleInput(matrix((4, 3), dtype, device))
    yield SampleInput(matrix((2, 3, 5), dtype, device, transposed=True))
    yield SampleInput(hermitian((2, 3, 3), dtype, device), hermitian=True)
    yield SampleInput(matrix((3, 3), dtype, device), atol=0.5)
    yield SampleInput(matrix((3, 4), dtype, device), rtol=0.3)


def _np_tol(a, s, atol, rtol):
    m, n = a.shape[-2:]
    eps = np.finfo(_real(a)).eps
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else eps * max(m, n)
    tol = rtol * s.max(-1, initial=0)
    return np.maximum(tol, atol) if atol is not None else tol


def _pinv_ref(a, atol=None, rtol=None, hermitian=False):
    """Each matrix's singular values written out: V diag(1/s above the cutoff) U^H."""
    def one(m):
        u, s, vh = np.linalg.svd(_wide(m), full_matrices=False)
        tol = _np_tol(m, s, atol, rtol)
        inv = np.where(s > tol, 1 / np.where(s > tol, s, 1), 0)
        return (_mH(vh) @ (inv[:, None] * _mH(u)),)
    (r,) = each(one, a, out_ndims=(2,))
    return r.astype(a.dtype)


def _pinverse_samples(info, device, dtype):
    yield SampleInput(matrix((4, 3), dtype, device))
    yield SampleInput(matrix((2, 3, 3), dtype, device), 0.3)


def _pinverse_ref(a, rcond=1e-15):
    return _pinv_ref(a, rtol=rcond)


def _rank_samples(info, device, dtype):
    low = matrix((4, 2), dtype).numpy() @ matrix((2, 4), dtype).numpy()     # rank 2
    yield SampleInput(matrix((4, 3), dtype, device))
    yield SampleInput(from_numpy_as(low, dtype, device))
    yield SampleInput(hermitian((2, 3, 3), dtype, device), hermitian=True)
    yield SampleInput(matrix((2, 3, 3), dtype, device), atol=0.5)


def _rank_ref(a, atol=None, rtol=None, hermitian=False):
    s = np.abs(np.linalg.eigvalsh(_wide(a))) if hermitian else \
        np.linalg.svd(_wide(a), compute_uv=False)
    tol = _np_tol(a, s, atol, rtol)
    return (s > np.asarray(tol)[..., None]).sum(-1).astype(np.int64)


# ----------------------------------------------------------------------------- lstsq

def _lstsq_samples(info, device, dtype):
    yield SampleInput(matrix((5, 3), dtype, device), matrix((5, 2), dtype, device))
    yield SampleInput(matrix((2, 5, 3), dtype, device), matrix((2, 5, 2), dtype, device),
                      driver="gelsd")
    yield SampleInput(matrix((3, 3), dtype, device), matrix((3, 1), dtype, device),
                      driver="gels")
    yield SampleInput(matrix((2, 3, 4), dtype, device), matrix((2, 3, 2), dtype, device),
                      driver="gelss")
    yield SampleInput(matrix((2, 5, 3), dtype, device), matrix((2, 5), dtype, device))
    yield SampleInput(matrix((2, 5, 3), dtype, device), matrix((2, 5), dtype, device),
                      driver="gelss")


def _lstsq_ref(a, b, rcond=None, driver=None):
    driver = driver or "gelsy"
    vec = b.ndim == a.ndim - 1
    bb = b[..., None] if vec else b
    m, n = a.shape[-2:]

    def one(am, bm):
        x, _, rank, s = np.linalg.lstsq(_wide(am), _wide(bm), rcond=None)
        res = (np.abs(_wide(am) @ x - _wide(bm)) ** 2).sum(0)
        return x, res, rank, s
    x, res, rank, s = each(one, a, bb, out_ndims=(2, 1, 0, 1))
    # PyTorch: residuals for tall A from gels, and from gelsd/gelss at full rank
    full = m > n and (driver == "gels" or (driver != "gelsy" and bool((rank == n).all())))
    real = _real(a)
    if vec:
        x = x[..., 0]
    return (x.astype(a.dtype), res.astype(real) if full else np.zeros((0,), real),
            rank.astype(np.int64) if driver != "gels" else np.zeros((0,), np.int64),
            s.astype(real) if driver in ("gelsd", "gelss") else np.zeros((0,), real))


def _lstsq_errors(info, device):
    a = make_tensor((3, 2), D.float32, device)
    yield ErrorInput(SampleInput(a, make_tensor((2, 1), D.float32, device)),
                     match="torch.linalg.lstsq: input.size\\(-2\\) should match "
                           "other.size\\(-2\\)")
    yield ErrorInput(SampleInput(a, make_tensor((3, 1), D.float32, device), driver="x"),
                     match="parameter `driver` should be one of")


register(
    OpInfo(F.linalg_cholesky, _cholesky_ref, DT, _chol_samples, tols=T,
           error_inputs=_errors("linalg.cholesky")),
    OpInfo(F.linalg_cholesky_ex, _cholesky_ex_ref, DT, _chol_samples, tols=T),
    OpInfo(F.cholesky, _cholesky_ref, DT, _torch_chol_samples, tols=T),
    OpInfo(F.cholesky_solve, _chol_solve_ref, DT, _chol_solve_samples, tols=T),
    OpInfo(F.cholesky_inverse, _chol_inverse_ref, DT, _chol_inverse_samples, tols=T),
    OpInfo(F.linalg_lu_factor, _lu_factor_ref, DT, _lu_samples(), tols=T),
    OpInfo(F.linalg_lu_factor_ex, _lu_factor_ex_ref, DT, _lu_samples(), tols=T),
    OpInfo(F.linalg_lu, _lu_ref, DT, _lu_samples(), tols=T),
    OpInfo(F.linalg_lu, _lu_ref, DT, _rect_lu_samples, tols=T, name="linalg_lu.rectangular"),
    OpInfo(F.lu_unpack, _lu_unpack_ref, DT, _lu_unpack_samples, tols=T),
    OpInfo(F.linalg_lu_solve, _lu_solve_ref, DT, _lu_solve_samples, tols=T),
    OpInfo(F.linalg_det, _det_ref, DT, _det_samples, tols=T,
           error_inputs=_errors("linalg.det")),
    OpInfo(F.det, _det_ref, DT, _det_samples, tols=T),
    OpInfo(F.linalg_slogdet, _slogdet_ref, DT, _det_samples, tols=T),
    OpInfo(F.slogdet, _slogdet_ref, DT, _det_samples, tols=T),
    OpInfo(F.logdet, _logdet_ref, DT, _logdet_samples, tols=T),
    OpInfo(F.linalg_inv, _inv_ref, DT, _inv_samples, tols=T,
           error_inputs=_errors("linalg.inv")),
    OpInfo(F.linalg_inv_ex, _inv_ex_ref, DT, _inv_samples, tols=T),
    OpInfo(F.inverse, _inv_ref, DT, _inv_samples, tols=T),
    OpInfo(F.linalg_solve, _solve_ref, DT, _solve_samples, tols=T,
           error_inputs=_solve_errors),
    OpInfo(F.linalg_solve_ex, _solve_ex_ref, DT, _solve_samples, tols=T),
    OpInfo(F.linalg_solve_triangular, _solve_tri_ref, DT, _solve_tri_samples, tols=T),
    OpInfo(F.triangular_solve, _torch_tri_ref, DT, _torch_tri_samples, tols=T),
    OpInfo(F.linalg_qr, _linalg_qr_ref, DT, _qr_samples, tols=T,
           error_inputs=_qr_errors,
           skips={"grad": "mode='complete' with more rows than columns has no derivative "
                          "(PyTorch's rule); the reduced modes are checked on prims.qr"}),
    OpInfo(F.qr, _torch_qr_ref, DT, _torch_qr_samples, tols=T),
    OpInfo(F.linalg_eigh, _linalg_eigh_ref, DT, _eigh_samples, tols=T,
           error_inputs=_eigh_errors, known_failures=COMPLEX_GAUGE),
    OpInfo(F.linalg_eigvalsh, _eigvalsh_ref, DT, _eigh_samples, tols=T),
    OpInfo(F.linalg_eig, _eig_ref, DT, _eig_samples, tols=T,
           error_inputs=_errors("linalg.eig"), skips=EIG_GAUGE),
    OpInfo(F.linalg_eigvals, _eigvals_ref, DT, _eig_samples, tols=T),
    OpInfo(F.linalg_svd, _linalg_svd_ref, DT, _svd_samples, tols=T,
           error_inputs=_errors("linalg.svd", square_only=False),
           skips={"grad": "full_matrices=True's extra columns get no gradient (PyTorch's "
                          "rule); the reduced SVD's gradient is checked on prims.svd"}),
    OpInfo(F.linalg_svdvals, _svdvals_ref, DT, _svdvals_samples, tols=T),
    OpInfo(F.svd, _torch_svd_ref, DT, _torch_svd_samples, tols=T,
           skips={"grad": "some=False's extra columns get no gradient (PyTorch's rule)"}),
    OpInfo(F.linalg_pinv, _pinv_ref, DT, _pinv_samples, tols=T,
           error_inputs=_errors("linalg.pinv", square_only=False)),
    OpInfo(F.pinverse, _pinverse_ref, DT, _pinverse_samples, tols=T),
    OpInfo(F.linalg_matrix_rank, _rank_ref, DT, _rank_samples, tols=T),
    OpInfo(F.linalg_lstsq, _lstsq_ref, DT, _lstsq_samples, tols=T,
           error_inputs=_lstsq_errors),
)


# ----------------------------------------------------------------------------- ldl
# ldl_factor's layout is LAPACK's sytrf/hetrf (PyTorch's); its reference calls SciPy's
# wrapper of that routine, and ldl_solve's reference rebuilds A from the compact form by
# LAPACK's documented rule (``ldl_reconstruct``) and solves with np.linalg.solve.

def _symmetric(shape, dtype, device, herm):
    b = matrix(shape, dtype).numpy()
    bt = np.swapaxes(b, -1, -2)
    return from_numpy_as(b + (np.conj(bt) if herm else bt), dtype, device)


def _ldl_samples(info, device, dtype):
    for herm in (False, True):
        yield SampleInput(_symmetric((4, 4), dtype, device, herm), hermitian=herm)
        yield SampleInput(_symmetric((2, 3, 3), dtype, device, herm), hermitian=herm)
    yield SampleInput(from_numpy_as(np.array([[0.0, 1.0], [1.0, 0.0]]), dtype, device))
    yield SampleInput(_symmetric((0, 2, 2), dtype, device, False))


def _sytrf(a, hermitian):
    a = _wide(a)
    fn = sl.lapack.zhetrf if hermitian and a.dtype.kind == "c" else \
        sl.lapack.get_lapack_funcs(("sytrf",), (a,))[0]
    mats = a.reshape(-1, *a.shape[-2:])
    n = a.shape[-1]
    ld, piv, info = np.zeros_like(mats), np.zeros((len(mats), n), np.int32), \
        np.zeros(len(mats), np.int32)
    for i, m in enumerate(mats):
        f, p, inf = fn(m, lower=1)
        ld[i], piv[i], info[i] = np.tril(f), p, max(inf, 0)
    return (ld.reshape(a.shape), piv.reshape(a.shape[:-1]), info.reshape(a.shape[:-2]))


def _ldl_factor_ex_ref(a, hermitian=False, check_errors=False):
    ld, piv, info = _sytrf(a, hermitian)
    return ld.astype(a.dtype), piv, info


def _ldl_factor_ref(a, hermitian=False):
    return _ldl_factor_ex_ref(a, hermitian)[:2]


def ldl_reconstruct(ld, piv, hermitian):
    """A = L D L^T (L^H) from one matrix's compact form, L = P(1) L(1) P(2) L(2) ...
    (LAPACK's sytrf documentation, lower case)."""
    n = ld.shape[-1]
    M, Dm = np.eye(n, dtype=ld.dtype), np.zeros((n, n), ld.dtype)
    k = 0
    while k < n:
        s = 1 if piv[k] > 0 else 2
        p = (piv[k] if s == 1 else -piv[k]) - 1
        P = np.eye(n, dtype=ld.dtype)
        P[[k + s - 1, p]] = P[[p, k + s - 1]]
        Lk = np.eye(n, dtype=ld.dtype)
        Lk[k + s:, k:k + s] = ld[k + s:, k:k + s]
        Dm[k, k] = ld[k, k]
        if s == 2:
            Dm[k + 1, k + 1] = ld[k + 1, k + 1]
            Dm[k + 1, k] = ld[k + 1, k]
            Dm[k, k + 1] = np.conj(ld[k + 1, k]) if hermitian else ld[k + 1, k]
        M = M @ P @ Lk
        k += s
    Mt = np.conj(M.T) if hermitian else M.T
    return M @ Dm @ Mt


def _ldl_solve_samples(info, device, dtype):
    for herm in (False, True):
        for shape, bshape in [((4, 4), (4, 2)), ((2, 3, 3), (2, 3, 1)), ((3, 3), (2, 3, 2)),
                              ((2, 1, 3, 3), (3, 3, 2))]:
            a = _symmetric(shape, dtype, "cpu", herm).numpy()
            ld, piv, _ = _sytrf(a, herm)
            yield SampleInput(from_numpy_as(ld, dtype, device), from_numpy_as(piv, D.int32,
                                                                              device),
                              matrix(bshape, dtype, device), hermitian=herm)


def _ldl_solve_ref(ld, piv, b, hermitian=False):
    batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    ld = np.broadcast_to(_wide(ld), batch + ld.shape[-2:])
    piv = np.broadcast_to(piv, batch + piv.shape[-1:])
    bb = np.broadcast_to(_wide(b), batch + b.shape[-2:])
    a = np.array([ldl_reconstruct(m, p, hermitian) for m, p in
                  zip(ld.reshape(-1, *ld.shape[-2:]), piv.reshape(-1, piv.shape[-1]))])
    x = np.linalg.solve(a.reshape(batch + ld.shape[-2:]), bb) if a.size else bb
    return x.astype(b.dtype)


def _ldl_solve_errors(info, device):
    ld, piv = make_tensor((3, 3), D.float64, device), make_tensor((3,), D.int32, device)
    yield ErrorInput(SampleInput(ld, piv, make_tensor((3, 1), D.float32, device)),
                     match="Expected b and A to have the same dtype, but found b of type "
                           "Float and A of type Double instead.")
    yield ErrorInput(SampleInput(ld, piv, make_tensor((2, 2), D.float64, device)),
                     match="Incompatible matrix sizes for torch.linalg.ldl_solve: each A "
                           "matrix is 3 by 3 but each b matrix is 2 by 2")
    yield ErrorInput(SampleInput(ld, piv[:2], make_tensor((3, 1), D.float64, device)),
                     match=r"torch.linalg.ldl_solve: Expected LD.shape\[:-1\] and "
                           r"pivots.shape to be the same, but got pivots with shape \[2\]")
    yield ErrorInput(SampleInput(ld, make_tensor((3,), D.float32, device),
                                 make_tensor((3, 1), D.float64, device)),
                     match="torch.linalg.ldl_solve: Expected pivots to be integers")


def _prim_ldl_samples(info, device, dtype):
    for s in _ldl_samples(info, device, dtype):
        yield SampleInput(s.input, s.kwargs.get("hermitian", False))


def _prim_ldl_solve_samples(info, device, dtype):
    for s in _ldl_solve_samples(info, device, dtype):
        ld, (piv, b) = s.input, s.args
        if tuple(ld.shape[:-2]) == tuple(b.shape[:-2]):     # the prim does not broadcast
            yield SampleInput(ld, piv, b, s.kwargs["hermitian"])


_NO_GRAD = {"grad": "PyTorch defines no derivative (a backward raises, as there; "
                    "tests/test_ldl.py)"}
register(
    OpInfo(F.linalg_ldl_factor_ex, _ldl_factor_ex_ref, DT, _ldl_samples, tols=T,
           error_inputs=_errors("torch.linalg.ldl_factor_ex"), skips=_NO_GRAD),
    OpInfo(F.linalg_ldl_factor, _ldl_factor_ref, DT, _ldl_samples, tols=T, skips=_NO_GRAD),
    OpInfo(F.linalg_ldl_solve, _ldl_solve_ref, DT, _ldl_solve_samples, tols=T,
           error_inputs=_ldl_solve_errors, skips=_NO_GRAD),
    # the prims beside the ATen ops, which share their references
    OpInfo(P.ldl_factor, lambda a, herm: _ldl_factor_ex_ref(a, herm), DT, _prim_ldl_samples,
           tols=T, skips=_NO_GRAD),
    OpInfo(P.ldl_solve, lambda ld, piv, b, herm: _ldl_solve_ref(ld, piv, b, herm), DT,
           _prim_ldl_solve_samples, tols=T, skips=_NO_GRAD),
)
