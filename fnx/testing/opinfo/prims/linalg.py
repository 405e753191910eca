"""OpInfo entries of the factorization prims (fnx/ir/prims/linalg.py).

The references compute another way than the kernels (which call NumPy's batched LAPACK
drivers, getrf and trsm): SciPy's drivers one matrix at a time (gesvd where NumPy calls
gesdd, evr/evd through ``scipy.linalg.eigh``), Doolittle elimination with partial pivoting
written out, a triangular solve as a general ``np.linalg.solve`` of the masked triangle.
The phases the prims fix (R's diagonal real and >= 0; each eigenvector's / left singular
vector's largest entry real and > 0) are restated here.

Samples are well conditioned (a shifted diagonal, positive-definite or Hermitian
matrices with distinct eigenvalues), batched and not, transposed (non-contiguous), real
and complex; gradients are checked in float64 on every sample.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sl

import fnx

from ....core import dtype as D
from ....ir import prims as P
from ...database import ErrorInput, Known, OpInfo, SampleInput, make_tensor, register

__all__ = ["LINALG_DTYPES", "LINALG_TOLS", "matrix", "square", "spd", "hermitian", "each",
           "doolittle", "from_numpy_as", "householder_qr", "geqrf_ref", "geqrf_samples"]

LINALG_DTYPES = (D.float32, D.float64, D.complex64, D.complex128)
LINALG_TOLS = {D.float32: (1e-4, 1e-4), D.complex64: (1e-4, 1e-4),
               D.float64: (1e-9, 1e-9), D.complex128: (1e-9, 1e-9)}


def matrix(shape, dtype, device="cpu", transposed=False):
    """Random entries in [-1, 1); ``transposed`` gives a non-contiguous view."""
    if transposed:
        s = list(shape)
        s[-1], s[-2] = s[-2], s[-1]
        return make_tensor(s, dtype, device, low=-1, high=1).transpose(-1, -2)
    return make_tensor(shape, dtype, device, low=-1, high=1)


def from_numpy_as(a, dtype, device="cpu"):
    """A tensor of ``dtype`` on ``device`` holding the NumPy array ``a``."""
    t = fnx.from_numpy(np.ascontiguousarray(a).astype(dtype.numpy))
    return t if str(device) == "cpu" else t.to(device)


def square(shape, dtype, device="cpu", transposed=False):
    """A well-conditioned square matrix (random plus 3 on the diagonal)."""
    a = matrix(shape, dtype, "cpu", transposed).numpy()
    a = a + 3 * np.eye(shape[-1], dtype=a.dtype)
    t = from_numpy_as(a, dtype, device)
    return t.transpose(-1, -2).contiguous().transpose(-1, -2) if transposed else t


def spd(shape, dtype, device="cpu"):
    """A Hermitian positive-definite matrix ``B B^H + I``."""
    b = matrix(shape, dtype).numpy().astype(np.complex128 if dtype.is_complex else np.float64)
    a = b @ np.conj(np.swapaxes(b, -1, -2)) + np.eye(shape[-1])
    return from_numpy_as(a, dtype, device)


def hermitian(shape, dtype, device="cpu"):
    b = matrix(shape, dtype).numpy()
    return from_numpy_as(b + np.conj(np.swapaxes(b, -1, -2)), dtype, device)


def each(fn, *arrays, out_ndims):
    """``fn`` applied to the matrices of the batch: ``out_ndims`` the core ndim of each
    output (``fn`` returns a tuple)."""
    batch = arrays[0].shape[:-2]
    flat = [a.reshape((int(np.prod(batch)),) + a.shape[-2:]) for a in arrays]
    results = [fn(*ms) for ms in zip(*flat)] if flat[0].shape[0] else []
    outs = []
    for j, nd in enumerate(out_ndims):
        parts = [np.asarray(r[j]) for r in results]
        stacked = np.stack(parts) if parts else None
        outs.append(stacked.reshape(batch + stacked.shape[1:]) if stacked is not None
                    else stacked)
    return tuple(outs)


def _wide(a):
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def _phases(x):
    ax = np.abs(x)
    return np.where(ax == 0, 1, x / np.where(ax == 0, 1, ax))


def _largest_phase(v):
    """The phase of the first largest-magnitude entry of each column."""
    idx = np.argmax(np.abs(v), axis=0)
    return _phases(v[idx, np.arange(v.shape[1])])


# ----------------------------------------------------------------------------- cholesky

def _cholesky_samples(info, device, dtype):
    yield SampleInput(spd((3, 3), dtype, device), False)
    yield SampleInput(spd((2, 4, 4), dtype, device), True)
    yield SampleInput(spd((2, 1, 3, 3), dtype, device), False)
    yield SampleInput(spd((1, 1), dtype, device), True)


def _cholesky_ref(a, upper):
    def one(m):
        c = sl.cholesky(_wide(m), lower=not upper)
        return c, 0
    c, info = each(one, a, out_ndims=(2, 0))
    return c.astype(a.dtype), info.astype(np.int32)


# ----------------------------------------------------------------------------- lu

def doolittle(m):
    """LU with partial pivoting written out: (packed LU, 1-based pivots, perm, info)."""
    a = _wide(m).copy()
    rows, cols = a.shape
    perm = np.arange(rows)
    piv = []
    info = 0
    for j in range(min(rows, cols)):
        # LAPACK's pivot: the largest |re| + |im| (i?amax), the first of equals
        p = j + int(np.argmax(np.abs(a[j:, j].real) + np.abs(a[j:, j].imag)))
        piv.append(p + 1)
        a[[j, p]] = a[[p, j]]
        perm[[j, p]] = perm[[p, j]]
        if a[j, j] == 0:
            info = info or j + 1
            continue
        a[j + 1:, j] /= a[j, j]
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return a, np.array(piv, np.int32), perm, info


def _lu_samples(info, device, dtype):
    yield SampleInput(square((3, 3), dtype, device))
    yield SampleInput(matrix((2, 4, 4), dtype, device, transposed=True))
    yield SampleInput(matrix((2, 1, 3, 3), dtype, device))
    yield SampleInput(matrix((2, 5, 3), dtype, device))
    yield SampleInput(matrix((3, 5), dtype, device))


def _lu_ref(a):
    lu, piv, perm, info = each(doolittle, a, out_ndims=(2, 1, 1, 0))
    return lu.astype(a.dtype), piv.astype(np.int32), perm.astype(np.int64), \
        info.astype(np.int32)


# ----------------------------------------------------------------------------- triangular_solve

def _tri_samples(info, device, dtype):
    for left, lower, unit in ((True, True, False), (True, False, True), (False, True, True),
                              (False, False, False)):
        a = square((2, 3, 3), dtype, device)
        b = matrix((2, 3, 2) if left else (2, 2, 3), dtype, device)
        yield SampleInput(a, b, left, lower, unit)
    yield SampleInput(square((4, 4), dtype, device, transposed=True),
                      matrix((4, 1), dtype, device), True, False, False)


def _tri_ref(a, b, left, lower, unit_diagonal):
    t = np.tril(_wide(a)) if lower else np.triu(_wide(a))
    if unit_diagonal:
        n = a.shape[-1]
        t = t * (1 - np.eye(n)) + np.eye(n)
    if left:
        return np.linalg.solve(t, _wide(b)).astype(b.dtype)
    # X T = B  <=>  T^T X^T = B^T
    xt = np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(_wide(b), -1, -2))
    return np.swapaxes(xt, -1, -2).astype(b.dtype)


def _tri_errors(info, device):
    a = matrix((3, 3), D.float32, device)
    yield ErrorInput(SampleInput(a, matrix((2, 2), D.float32, device), True, True, False),
                     match="incompatible")
    yield ErrorInput(SampleInput(a, matrix((3, 2), D.float64, device), True, True, False),
                     match="one dtype")


# ----------------------------------------------------------------------------- geqrf
# (the reference of prims.geqrf and aten.geqrf)

def householder_qr(m):
    """LAPACK geqrf's ``(a, tau)`` of one matrix, computed column by column: the reflector
    of column i maps it to ``beta e_1`` with ``beta = -sign(Re alpha) ||x||`` (dlarfg/zlarfg;
    ``tau = 0`` when nothing is left to reflect), applied as ``H^H`` to the columns right of
    it."""
    a = m.astype(np.complex128 if m.dtype.kind == "c" else np.float64)
    rows, cols = a.shape
    k = min(rows, cols)
    tau = np.zeros(k, a.dtype)
    for i in range(k):
        x = a[i:, i]
        alpha, xnorm = x[0], np.linalg.norm(x[1:])
        if xnorm == 0 and np.imag(alpha) == 0:
            continue
        beta = -math.copysign(math.hypot(abs(alpha), xnorm), np.real(alpha))
        tau[i] = (beta - alpha) / beta
        w = np.concatenate([[1], x[1:] / (alpha - beta)]).astype(a.dtype)
        a[i, i], a[i + 1:, i] = beta, w[1:]
        a[i:, i + 1:] -= np.conj(tau[i]) * np.outer(w, np.conj(w) @ a[i:, i + 1:])
    return a, tau


def geqrf_ref(a):
    flat = a.reshape((math.prod(a.shape[:-2]),) + a.shape[-2:])
    k = min(a.shape[-2:])
    pairs = [householder_qr(m) for m in flat]
    qr = np.stack([p[0] for p in pairs]) if pairs else flat
    tau = np.stack([p[1] for p in pairs]) if pairs else np.zeros((0, k))
    return (qr.reshape(a.shape).astype(a.dtype),
            tau.reshape(a.shape[:-2] + (k,)).astype(a.dtype))


def geqrf_samples(info, device, dtype):
    yield SampleInput(matrix((4, 3), dtype, device))
    yield SampleInput(matrix((3, 5), dtype, device))
    yield SampleInput(matrix((2, 3, 3), dtype, device, transposed=True))
    yield SampleInput(matrix((1, 4), dtype, device))
    yield SampleInput(matrix((0, 2), dtype, device))



# ----------------------------------------------------------------------------- qr

def _qr_samples(info, device, dtype):
    yield SampleInput(matrix((4, 3), dtype, device), False)
    yield SampleInput(matrix((2, 3, 3), dtype, device, transposed=True), False)
    yield SampleInput(matrix((2, 3, 5), dtype, device), False)
    yield SampleInput(matrix((3, 5), dtype, device), True)
    yield SampleInput(matrix((3, 3), dtype, device), True)


def _qr_ref(a, full_matrices):
    def one(m):
        q, r = sl.qr(_wide(m), mode="full" if full_matrices else "economic")
        k = min(m.shape)
        ph = _phases(np.diagonal(r))
        r[:k] *= np.conj(ph)[:, None]
        q[:, :k] *= ph[None, :]
        return q, r
    q, r = each(one, a, out_ndims=(2, 2))
    return q.astype(a.dtype), r.astype(a.dtype)


# ----------------------------------------------------------------------------- eigh

def _eigh_samples(info, device, dtype):
    yield SampleInput(hermitian((3, 3), dtype, device), True)
    yield SampleInput(hermitian((2, 4, 4), dtype, device), False)
    # only the named triangle is read: the other one is noise
    yield SampleInput(matrix((2, 3, 3), dtype, device), True)
    yield SampleInput(matrix((3, 3), dtype, device, transposed=True), False)


def _eigh_ref(a, lower):
    def one(m):
        w, v = sl.eigh(_wide(m), lower=lower)
        return w, v * np.conj(_largest_phase(v))[None, :]
    w, v = each(one, a, out_ndims=(1, 2))
    real = np.float32 if a.dtype in (np.float32, np.complex64) else np.float64
    return w.astype(real), v.astype(a.dtype)


# ----------------------------------------------------------------------------- svd

def _svd_samples(info, device, dtype):
    yield SampleInput(matrix((4, 3), dtype, device), False)
    yield SampleInput(matrix((2, 3, 5), dtype, device, transposed=True), False)
    yield SampleInput(matrix((2, 3, 3), dtype, device), False)


def _svd_full_samples(info, device, dtype):
    # one extra column of U / row of Vh: a unit vector fixed up to the phase the prim fixes
    yield SampleInput(matrix((3, 4), dtype, device), True)
    yield SampleInput(matrix((2, 4, 3), dtype, device), True)
    yield SampleInput(matrix((3, 3), dtype, device), True)


def _svd_ref(a, full_matrices):
    def one(m):
        u, s, vh = sl.svd(_wide(m), full_matrices=full_matrices, lapack_driver="gesvd")
        k = len(s)
        ph = _largest_phase(u[:, :k])
        u[:, :k] *= np.conj(ph)[None, :]
        vh[:k] *= ph[:, None]
        u[:, k:] *= np.conj(_largest_phase(u[:, k:]))[None, :]
        vh[k:] *= np.conj(_largest_phase(vh[k:].T))[:, None]
        return u, s, vh
    u, s, vh = each(one, a, out_ndims=(2, 1, 2))
    real = np.float32 if a.dtype in (np.float32, np.complex64) else np.float64
    return u.astype(a.dtype), s.astype(real), vh.astype(a.dtype)


# ----------------------------------------------------------------------------- eig

def _eig_samples(info, device, dtype):
    yield SampleInput(hermitian((3, 3), dtype, device))
    yield SampleInput(square((2, 3, 3), dtype, device))


def _eig_ref(a):
    """LAPACK geev's order (SciPy's driver); eigenvectors of unit norm, largest entry real
    and positive."""
    def one(m):
        w, v = sl.eig(_wide(m))
        v = v / np.linalg.norm(v, axis=0)
        return w, v * np.conj(_largest_phase(v))[None, :]
    w, v = each(one, a, out_ndims=(1, 2))
    c = np.complex64 if a.dtype in (np.float32, np.complex64) else np.complex128
    return w.astype(c), v.astype(c)


# ----------------------------------------------------------------------------- matrix_exp

def _expm_samples(info, device, dtype):
    yield SampleInput(matrix((3, 3), dtype, device))
    yield SampleInput(matrix((2, 4, 4), dtype, device, transposed=True))
    yield SampleInput(make_tensor((2, 2), dtype, device, low=-4, high=4))
    yield SampleInput(matrix((1, 1), dtype, device))


def _expm_ref(a):
    """The eigendecomposition V exp(W) V^-1 (the kernel scales and squares a Pade
    approximant); the samples are diagonalizable."""
    def one(m):
        w, v = np.linalg.eig(_wide(m))
        return (v @ np.diag(np.exp(w)) @ np.linalg.inv(v),)
    (r,) = each(one, a, out_ndims=(2,))
    return (r.real if a.dtype.kind == "f" else r).astype(a.dtype)


def _matrix_errors(name, op, args):
    def errors(info, device):
        yield ErrorInput(SampleInput(make_tensor((3,), D.float32, device), *args),
                         match=f"prims.{name}: 'self' must have at least 2 dims")
        yield ErrorInput(SampleInput(make_tensor((2, 2), D.int64, device), *args),
                         match=f"prims.{name}")
    return errors


def _square_errors(name, args):
    base = _matrix_errors(name, None, args)

    def errors(info, device):
        yield from base(info, device)
        yield ErrorInput(SampleInput(make_tensor((2, 3), D.float32, device), *args),
                         match="square")
    return errors


# Complex eigenvectors and singular vectors are defined up to a unit phase: the prims fix
# it from the data, and finite differences see how that fixed phase moves, which the
# standard formulas (gauge-invariant losses only, as PyTorch's) leave out.  Eigenvalues
# and singular values alone are checked (linalg_eigvalsh, linalg_eigvals, svdvals).
COMPLEX_GAUGE = [Known("grad", (D.complex64, D.complex128),
                       "complex eigen/singular vectors: the phase fixed from the data moves "
                       "under finite differences; the formula assumes a gauge-invariant "
                       "loss (PyTorch's rule)")]
# eig's eigenvectors are complex for real input too, so the same gauge makes finite
# differences disagree there (by how much depends on the random projection): not checked
# (before complex outputs were checked, real eig had no floating output to check either)
EIG_GAUGE = {"grad": "eigenvectors are complex for every input: finite differences see the "
                     "data-fixed phase move (gauge), which the formula leaves out; the "
                     "eigenvalues' gradient is checked through linalg_eigvals"}

register(
    OpInfo(P.cholesky, _cholesky_ref, LINALG_DTYPES, _cholesky_samples, tols=LINALG_TOLS,
           error_inputs=_square_errors("cholesky", (False,))),
    OpInfo(P.lu, _lu_ref, LINALG_DTYPES, _lu_samples, tols=LINALG_TOLS,
           error_inputs=_matrix_errors("lu", None, ())),
    OpInfo(P.triangular_solve, _tri_ref, LINALG_DTYPES, _tri_samples, tols=LINALG_TOLS,
           error_inputs=_tri_errors),
    OpInfo(P.qr, _qr_ref, LINALG_DTYPES, _qr_samples, tols=LINALG_TOLS,
           error_inputs=_matrix_errors("qr", None, (False,))),
    OpInfo(P.eigh, _eigh_ref, LINALG_DTYPES, _eigh_samples, tols=LINALG_TOLS,
           error_inputs=_square_errors("eigh", (True,)), known_failures=COMPLEX_GAUGE),
    OpInfo(P.svd, _svd_ref, LINALG_DTYPES, _svd_samples, tols=LINALG_TOLS,
           error_inputs=_matrix_errors("svd", None, (False,)), known_failures=COMPLEX_GAUGE),
    OpInfo(P.svd, _svd_ref, LINALG_DTYPES, _svd_full_samples, tols=LINALG_TOLS,
           name="prims.svd.full_matrices",
           skips={"grad": "the extra columns of U and rows of Vh (a basis of the null "
                          "spaces) get no gradient, as in PyTorch"}),
    OpInfo(P.matrix_exp, _expm_ref, LINALG_DTYPES, _expm_samples, tols=LINALG_TOLS,
           error_inputs=_square_errors("matrix_exp", ())),
    OpInfo(P.geqrf, geqrf_ref, LINALG_DTYPES, geqrf_samples, tols=LINALG_TOLS,
           error_inputs=_matrix_errors("geqrf", None, ()),
           skips={"grad": "no derivative (PyTorch defines none for geqrf)"}),
    OpInfo(P.eig, _eig_ref, LINALG_DTYPES, _eig_samples, tols=LINALG_TOLS,
           error_inputs=_square_errors("eig", ()), skips=EIG_GAUGE),
)
