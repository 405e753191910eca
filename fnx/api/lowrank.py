"""Randomized low-rank SVD and PCA (``torch.svd_lowrank``, ``torch.pca_lowrank``), after
Halko, Martinsson and Tropp (2009): a random ``n x q`` test matrix, ``niter`` power
(subspace) iterations re-orthonormalized by QR each half-step (their Algorithm 4.4), then
the exact SVD of the small ``q x n`` projection (Algorithm 5.1).

Written with fnx ops (matmul, ``linalg_qr``, ``linalg_svd``, ``randn``), so they run on
every backend and differentiate like those ops; the random test matrix comes from the
global generator (seed it with ``fnx.manual_seed`` for repeatable results, as PyTorch).
A batch ``(*, m, n)`` shares one test matrix, as PyTorch's.
"""
from __future__ import annotations

from ..core import dtype as D
from ..ops import aten
from .creation import randn

__all__ = ["svd_lowrank", "pca_lowrank"]


def _floating(A):
    return A.dtype if A.dtype.is_floating_point or A.dtype.is_complex else D.float32


def _orthonormal(X):
    return aten.linalg_qr.default(X)[0]


def _minus(P, M, Mp):
    """``P - Mp`` when the mean ``M`` is given (``Mp`` its product)."""
    return P if M is None else P - Mp(M)


def _approximate_basis(A, q, niter, M):
    """Q (``(*, m, q)``, orthonormal columns) with Q Q^H (A - M) close to A - M, never
    forming A - M."""
    R = randn(A.shape[-1], q, dtype=_floating(A), device=A.device)
    Q = _orthonormal(_minus(A @ R, M, lambda m: m @ R))
    for _ in range(niter):
        Q = _orthonormal(_minus(A.mH @ Q, M, lambda m: m.mH @ Q))
        Q = _orthonormal(_minus(A @ Q, M, lambda m: m @ Q))
    return Q


def _svd_lowrank(A, q, niter, M):
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:           # work on the tall A^H: the basis is then the smaller one
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = _minus(Q.mH @ A, M, lambda mm: Q.mH @ mm)
    U, S, Vh = aten.linalg_svd.default(B, False)
    U, V = Q @ U, Vh.mH
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A, q=6, niter=2, M=None):
    """``(U, S, V)`` with ``A - M ≈ U diag(S) V^H`` (``M`` broadcast to A, zero when None) of
    rank ``q``, by a randomized range finder with ``niter`` subspace iterations, as
    ``torch.svd_lowrank``.  ``A`` is ``(*, m, n)``; U is ``(*, m, q)``, S ``(*, q)``, V
    ``(*, n, q)`` (``q`` capped at min(m, n)).

    >>> import fnx
    >>> _ = fnx.manual_seed(0)
    >>> A = fnx.tensor([[3., 0., 0.], [0., 2., 0.], [0., 0., 0.], [0., 0., 0.]])
    >>> U, S, V = fnx.svd_lowrank(A, q=2)
    >>> [round(s, 4) for s in S.tolist()]
    [3.0, 2.0]
    """
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """``(U, S, V)``, the low-rank SVD (``svd_lowrank``) of ``A`` less its column means
    (``center``), as ``torch.pca_lowrank``: V's columns are the principal directions and
    ``S**2 / (m - 1)`` the variances along them; ``q`` defaults to ``min(6, m, n)``.

    >>> import fnx
    >>> _ = fnx.manual_seed(0)
    >>> A = fnx.tensor([[1., 1.], [2., 2.], [3., 3.]])
    >>> U, S, V = fnx.pca_lowrank(A, q=1)
    >>> round(S.item() ** 2 / 2, 4), [round(abs(v), 4) for v in V[:, 0].tolist()]
    (2.0, [0.7071, 0.7071])
    """
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        A = A - A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A, q, niter, None)
