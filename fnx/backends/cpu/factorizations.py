"""CPU kernels of the factorization prims (fnx/ir/prims/linalg.py): NumPy's batched
LAPACK drivers where they exist (qr, eigh, svd, eig, cholesky), SciPy's LAPACK/BLAS
wrappers one matrix at a time where NumPy has none (getrf for lu, trsm for
triangular_solve, potrf for a failed cholesky's ``info``).

Each kernel calls its prim's meta first, and fixes the phases ``jax.lax.linalg`` leaves
free the way the prim's documentation says, so eager and compiled results agree.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sl
from scipy.linalg import blas, lapack

from ...ir import prims as P
from ._core import data, kernel, wrap

__all__ = ["unit_phase", "column_phases", "lu_permutation", "ldl_factor_arrays", "ldl_solve_arrays"]


def _np(x, name):
    return data(x, f"prims.{name}")


def _out(r, dtype):
    return wrap(np.array(r, dtype=dtype.numpy, order="C"), dtype)


def _matrices(a):
    """``a`` as a ``[batch, m, n]`` array (a copy, so LAPACK may overwrite it)."""
    return np.array(a.reshape((int(np.prod(a.shape[:-2])),) + a.shape[-2:]), copy=True)


def unit_phase(x):
    """``x / |x|`` (1 where ``x`` is 0)."""
    ax = np.abs(x)
    safe = np.where(ax == 0, 1, ax)
    return np.where(ax == 0, 1, x / safe).astype(x.dtype)


def column_phases(v):
    """The phase of the largest-magnitude entry of each column of ``[..., m, k]``."""
    if v.shape[-2] == 0:
        return np.ones(v.shape[:-2] + v.shape[-1:], v.dtype)
    idx = np.argmax(np.abs(v), axis=-2)[..., None, :]
    return unit_phase(np.take_along_axis(v, idx, axis=-2)[..., 0, :])


def _mH(x):
    return np.conj(np.swapaxes(x, -1, -2))


@kernel(P.cholesky)
def _cholesky(ks, self, upper):
    m, mi = P.cholesky.meta(self, upper)
    a = _np(self, "cholesky")
    if upper:       # the upper triangle of A is the lower triangle of A^H
        a = _mH(a)
    batch = a.shape[:-2]
    try:
        low = np.linalg.cholesky(a)
        info = np.zeros(batch, np.int32)
    except np.linalg.LinAlgError:
        mats = _matrices(a)
        low = np.zeros_like(mats)
        info = np.zeros(len(mats), np.int32)
        potrf, = lapack.get_lapack_funcs(("potrf",), (mats,))
        for i, x in enumerate(mats):
            c, inf = potrf(x, lower=True, clean=True)
            low[i], info[i] = np.tril(c), max(inf, 0)
        low, info = low.reshape(a.shape), info.reshape(batch)
    return _out(_mH(low) if upper else low, m.dtype), _out(info, mi.dtype)


def lu_permutation(piv, m):
    """The row order ``perm`` with ``A[perm] = L U`` from LAPACK's 0-based row swaps."""
    perm = np.arange(m)
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return perm


@kernel(P.lu)
def _lu(ks, self):
    mlu, mp, mperm, mi = P.lu.meta(self)
    a = _np(self, "lu")
    mats = _matrices(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    out = np.empty_like(mats)
    pivots = np.empty((len(mats), k), np.int32)
    perms = np.empty((len(mats), m), np.int64)
    info = np.zeros(len(mats), np.int32)
    if mats.size:
        getrf, = lapack.get_lapack_funcs(("getrf",), (mats,))
        for i, x in enumerate(mats):
            lu, piv, inf = getrf(x)
            out[i], pivots[i], perms[i] = lu, piv[:k] + 1, lu_permutation(piv[:k], m)
            info[i] = max(inf, 0)
    elif m:
        pivots[:] = np.arange(1, k + 1)
        perms[:] = np.arange(m)
    batch = a.shape[:-2]
    return (_out(out.reshape(a.shape), mlu.dtype), _out(pivots.reshape(batch + (k,)), mp.dtype),
            _out(perms.reshape(batch + (m,)), mperm.dtype), _out(info.reshape(batch), mi.dtype))


@kernel(P.triangular_solve)
def _triangular_solve(ks, a, b, left, lower, unit_diagonal):
    mo = P.triangular_solve.meta(a, b, left, lower, unit_diagonal)
    A = _matrices(_np(a, "triangular_solve"))
    B = _matrices(_np(b, "triangular_solve"))
    out = np.empty_like(B)
    if B.size:
        # BLAS trsm: no singularity check, so a zero pivot gives inf/nan as PyTorch's
        trsm, = blas.get_blas_funcs(("trsm",), (A, B))
        for i in range(len(B)):
            out[i] = trsm(1.0, A[i], B[i], side=0 if left else 1, lower=int(lower),
                          diag=int(unit_diagonal))
    return _out(out.reshape(mo.shape), mo.dtype)


@kernel(P.qr)
def _qr(ks, self, full_matrices):
    mq, mr = P.qr.meta(self, full_matrices)
    a = _np(self, "qr")
    m, n = a.shape[-2:]
    k = min(m, n)
    if a.size == 0:
        q = np.broadcast_to(np.eye(m, mq.shape[-1], dtype=a.dtype), mq.shape)
        return _out(q, mq.dtype), _out(np.zeros(mr.shape, a.dtype), mr.dtype)
    q, r = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    ph = unit_phase(np.diagonal(r, axis1=-2, axis2=-1))        # [..., k]
    r = r.copy()
    q = q.copy()
    r[..., :k, :] *= np.conj(ph)[..., :, None]
    q[..., :, :k] *= ph[..., None, :]
    return _out(q, mq.dtype), _out(r, mr.dtype)


@kernel(P.eigh)
def _eigh(ks, self, lower):
    mw, mv = P.eigh.meta(self, lower)
    a = _np(self, "eigh")
    if a.size == 0:
        return _out(np.zeros(mw.shape), mw.dtype), _out(np.zeros(mv.shape), mv.dtype)
    w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    v = v * np.conj(column_phases(v))[..., None, :]
    return _out(w, mw.dtype), _out(v, mv.dtype)


@kernel(P.svd)
def _svd(ks, self, full_matrices):
    mu, ms, mvh = P.svd.meta(self, full_matrices)
    a = _np(self, "svd")
    m, n = a.shape[-2:]
    k = min(m, n)
    if a.size == 0:
        u = np.broadcast_to(np.eye(*mu.shape[-2:], dtype=a.dtype), mu.shape)
        vh = np.broadcast_to(np.eye(*mvh.shape[-2:], dtype=a.dtype), mvh.shape)
        return _out(u, mu.dtype), _out(np.zeros(ms.shape), ms.dtype), _out(vh, mvh.dtype)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    ph = column_phases(u[..., :, :k])
    u, vh = u.copy(), vh.copy()
    u[..., :, :k] *= np.conj(ph)[..., None, :]
    vh[..., :k, :] *= ph[..., :, None]
    if full_matrices:
        u[..., :, k:] *= np.conj(column_phases(u[..., :, k:]))[..., None, :]
        vh[..., k:, :] *= np.conj(column_phases(np.swapaxes(vh[..., k:, :], -1, -2)))[..., :, None]
    return _out(u, mu.dtype), _out(s, ms.dtype), _out(vh, mvh.dtype)


@kernel(P.eig)
def _eig(ks, self):
    mw, mv = P.eig.meta(self)
    a = _np(self, "eig")
    if a.size == 0:
        return _out(np.zeros(mw.shape), mw.dtype), _out(np.zeros(mv.shape), mv.dtype)
    w, v = np.linalg.eig(a)
    v = v.astype(mv.dtype.numpy)
    v = v * np.conj(column_phases(v))[..., None, :]
    return _out(w, mw.dtype), _out(v, mv.dtype)



@kernel(P.matrix_exp)
def _matrix_exp(ks, self):
    m = P.matrix_exp.meta(self)
    a = _np(self, "matrix_exp")
    if a.size == 0:
        return _out(a, m.dtype)
    return _out(sl.expm(a), m.dtype)


# ----------------------------------------------------------------------------- ldl
# (host functions on arrays: the CPU kernels, and the JAX rules' callbacks)

def _ldl_routine(kind, a, hermitian):
    prefix = "he" if hermitian and np.iscomplexobj(a) else "sy"
    fn, = lapack.get_lapack_funcs((prefix + kind,), (a,))
    return fn


def ldl_factor_arrays(a, hermitian):
    """``(LD, pivots, info)`` of ``[..., n, n]`` by LAPACK's sytrf/hetrf (lower triangle)."""
    mats = _matrices(a)
    n = a.shape[-1]
    ld = np.zeros_like(mats)
    piv = np.tile(np.arange(1, n + 1, dtype=np.int32), (len(mats), 1))
    info = np.zeros(len(mats), np.int32)
    if mats.size:
        trf = _ldl_routine("trf", mats, hermitian)
        for i, x in enumerate(mats):
            f, p, inf = trf(x, lower=1)
            ld[i], piv[i], info[i] = np.tril(f), p, max(inf, 0)
    batch = a.shape[:-2]
    return ld.reshape(a.shape), piv.reshape(batch + (n,)), info.reshape(batch)


def ldl_solve_arrays(ld, pivots, b, hermitian):
    """X with A X = B from ``ldl_factor_arrays``'s ``LD`` and ``pivots`` (sytrs/hetrs)."""
    lds, bs = _matrices(ld), _matrices(b)
    pivs = np.asarray(pivots, np.int32).reshape(len(lds), -1)
    out = np.empty_like(bs)
    if bs.size:
        trs = _ldl_routine("trs", lds, hermitian)
        for i in range(len(bs)):
            out[i] = trs(lds[i], pivs[i], bs[i], lower=1)[0]
    else:
        out = bs
    return out.reshape(b.shape)


@kernel(P.ldl_factor)
def _ldl_factor(ks, self, hermitian):
    mld, mp, mi = P.ldl_factor.meta(self, hermitian)
    ld, piv, info = ldl_factor_arrays(_np(self, "ldl_factor"), hermitian)
    return _out(ld, mld.dtype), _out(piv, mp.dtype), _out(info, mi.dtype)


@kernel(P.ldl_solve)
def _ldl_solve(ks, LD, pivots, B, hermitian):
    m = P.ldl_solve.meta(LD, pivots, B, hermitian)
    x = ldl_solve_arrays(_np(LD, "ldl_solve"), _np(pivots, "ldl_solve"), _np(B, "ldl_solve"),
                         hermitian)
    return _out(x, m.dtype)


@kernel(P.geqrf)
def _geqrf(ks, self):
    ma, mt = P.geqrf.meta(self)
    a = _np(self, "geqrf")
    mats = _matrices(a)
    taus = np.zeros((len(mats), mt.shape[-1]), mats.dtype)
    if mats.size:
        geqrf, = lapack.get_lapack_funcs(("geqrf",), (mats,))
        for i, x in enumerate(mats):
            mats[i], taus[i] = geqrf(x)[:2]
    return _out(mats.reshape(a.shape), ma.dtype), _out(taus.reshape(mt.shape), mt.dtype)
