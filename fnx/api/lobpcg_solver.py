"""``torch.lobpcg``: the k largest (or smallest) eigenpairs of the symmetric/Hermitian
``A X = B X diag(E)`` (B positive-definite, I when None) by Knyazev's locally optimal
block preconditioned conjugate gradient method.

Each step extends the current block X (n columns, B-orthonormal) by the preconditioned
residuals W = iK (A X - B X E) and the previous direction P, and takes the n extreme Ritz
pairs of A on that subspace (Rayleigh-Ritz).  ``method="ortho"`` makes the subspace
B-orthonormal first (W and P orthogonalized against X, then among themselves by an
eigendecomposition of their Gram matrix that drops directions below ``ortho_tol_drop``,
Stathopoulos and Wu's SVQB; Hetmaniuk and Lehoucq 2006), so each Rayleigh-Ritz step is a
plain ``eigh``; ``method="basic"`` (Knyazev 2001) solves the generalized Rayleigh-Ritz
problem through the Cholesky factor of the subspace's Gram matrix.  Iteration stops when
the first k pairs' backward errors ``||r_j|| / ((||A|| + |E_j| ||B||) ||x_j||)`` are below
``tol`` (``||A||`` estimated as ``||A X0|| / ||X0||``, as PyTorch), or after ``niter`` steps.

The iterations run without autograd; a last Rayleigh-Ritz step on the converged block is
recorded, so E's gradient is the exact one (``x_j^H dA x_j``, with B: ``-E_j x_j^H dB x_j``)
and X's is its component within the block's span.  Written with fnx ops, so it runs on
every backend (the convergence test reads each step's errors on the host).
"""
from __future__ import annotations

from ..core import dtype as D
from ..core.grad_mode import no_grad
from ..ops import aten
from .creation import randn
from .shape import cat

__all__ = ["lobpcg"]

_FEPS = {D.float32: 1.2e-07, D.float64: 2.23e-16}


def _mm_b(B, X):
    return X if B is None else B @ X


def _eigh(G, largest):
    """Eigenpairs of the Hermitian ``G`` (its Hermitian part), extreme first."""
    E, C = aten.linalg_eigh.default((G + G.mH) * 0.5, "L")
    return (E.flip(-1), C.flip(-1)) if largest else (E, C)


def _b_orthonormal(B, Y, drop):
    """A B-orthonormal basis of span(Y): Y D Z Θ^-1/2 from ``eigh(D Y^H B Y D) = Z Θ Z^H``
    (D scales Y's columns to unit B-norm), keeping the directions with ``Θ > drop max Θ``."""
    G = Y.mH @ _mm_b(B, Y)
    d = G.diagonal().real
    keep = (d > 0).nonzero().reshape(-1)
    if keep.shape[0] < d.shape[0]:          # zero columns carry no direction
        Y, G, d = Y[:, keep], G[keep][:, keep], d[keep]
    scale = d.rsqrt().to(Y.dtype)
    theta, Z = aten.linalg_eigh.default(G * scale[:, None] * scale[None, :], "L")
    good = (theta > drop * theta.max()).nonzero().reshape(-1)
    theta, Z = theta[good], Z[:, good]
    return (Y * scale[None, :]) @ (Z * theta.rsqrt().to(Y.dtype)[None, :])


def _orthogonalize(B, X, Y, drop, rounds):
    """Y's directions B-orthogonal to X (B-orthonormal) and B-orthonormal among themselves,
    Gram-Schmidt against X and SVQB repeated ``rounds`` times for accuracy."""
    for _ in range(rounds):
        Y = Y - X @ (_mm_b(B, X).mH @ Y)
        Y = Y - X @ (_mm_b(B, X).mH @ Y)
        if Y.shape[-1] == 0:
            return Y
        Y = _b_orthonormal(B, Y, drop)
    return Y


def _rayleigh_ritz_general(A, B, S, largest):
    """Ritz pairs of A on span(S) with S^H B S = L L^H: eigh of L^-1 S^H A S L^-H."""
    L = aten.linalg_cholesky.default(S.mH @ _mm_b(B, S))
    G = S.mH @ (A @ S)
    Li_G = aten.linalg_solve_triangular.default(L, G, upper=False)
    H = aten.linalg_solve_triangular.default(L, Li_G.mH, upper=False).mH
    E, C = _eigh(H, largest)
    return E, aten.linalg_solve_triangular.default(L.mH, C, upper=True)


class _Run:
    """One matrix's iteration (the state PyTorch's tracker would see)."""

    def __init__(self, A, B, X, iK, k, niter, tol, largest, method, ortho):
        self.A, self.B, self.iK = A, B, iK
        self.k, self.niter, self.tol, self.largest = k, niter, tol, largest
        self.method, self.ortho = method, ortho
        x_norm = X.norm().item()
        self.A_norm = (A @ X).norm().item() / x_norm
        self.B_norm = _mm_b(B, X).norm().item() / x_norm
        self.X = X
        self.P = None
        self.iterations = 0

    def converged(self):
        R = self.A @ self.X - _mm_b(self.B, self.X) * self.E
        rerr = R.norm(dim=0) / (self.X.norm(dim=0) * (self.A_norm + self.E.abs() *
                                                        self.B_norm))
        return R, bool((rerr[:self.k] < self.tol).all().item())

    def run(self):
        n = self.X.shape[-1]
        drop = self.ortho["ortho_tol_drop"]
        X = _orthogonalize(self.B, self.X[:, :0], self.X, drop, 1) \
            if self.method == "ortho" else self.X
        self.E, C = self._ritz(X)
        self.X = X @ C[:, :n]
        self.E = self.E[:n]
        while self.iterations < self.niter:
            R, done = self.converged()
            if done:
                break
            W = R if self.iK is None else self.iK @ R
            parts = [W] if self.P is None else [W, self.P]
            self.iterations += 1
            if self.method == "ortho":
                Y = _orthogonalize(self.B, self.X, cat(parts, 1), drop,
                                   self.ortho["ortho_i_max"])
                E, C = self._ritz(cat([self.X, Y], 1))
                self.P = Y @ C[n:, :n]
            else:
                Y = cat(parts, 1)
                Y = Y / _col_b_norms(self.B, Y)[None, :]
                E, C = _rayleigh_ritz_general(self.A, self.B, cat([self.X, Y], 1),
                                              self.largest)
                self.P = Y @ C[n:, :n]
            self.X = self.X @ C[:n, :n] + self.P
            self.E = E[:n]

    def _ritz(self, S):
        if self.method == "ortho":
            E, C = _eigh(S.mH @ (self.A @ S), self.largest)
            return E, C
        return _rayleigh_ritz_general(self.A, self.B, S, self.largest)


def _col_b_norms(B, Y):
    return (Y.conj() * _mm_b(B, Y)).sum(0).real.clamp_min(0).sqrt().to(Y.dtype)


def _final(A, B, X, k, largest):
    """E and X from one differentiable Rayleigh-Ritz step on the converged block."""
    X = X.detach()
    if B is None:
        E, C = _eigh(X.mH @ (A @ X), largest)
    else:
        E, C = _rayleigh_ritz_general(A, B, X, largest)
    return E[:k], X @ C[:, :k]


def _one(A, B, X, iK, k, niter, tol, largest, method, ortho):
    with no_grad():
        run = _Run(A.detach(), None if B is None else B.detach(), X.detach(), iK, k, niter,
                   tol, largest, method, ortho)
        run.run()
    return _final(A, B, run.X, k, largest)


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """``(E, X)``: the ``k`` largest (``largest=False``: smallest) eigenvalues of the
    symmetric/Hermitian ``A`` (of ``A x = λ B x`` with ``B`` positive-definite) and their
    B-orthonormal eigenvectors, by LOBPCG on a block of ``n`` vectors (``X``, or random;
    ``n >= k`` speeds convergence), preconditioned by ``iK``, until the backward errors
    are below ``tol`` (default sqrt(machine eps)) or ``niter`` (default 1000) steps, as
    ``torch.lobpcg``.  A batch ``(*, m, m)`` is solved one matrix at a time; ``m`` must be
    at least ``3 n``.  ``tracker`` is not supported.

    >>> import fnx
    >>> _ = fnx.manual_seed(0)
    >>> A = fnx.diag(fnx.arange(1., 11., dtype=fnx.float64))
    >>> E, X = fnx.lobpcg(A, k=2)
    >>> [round(e, 6) for e in E.tolist()]
    [10.0, 9.0]
    """
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {tuple(A.shape)}")
    if B is not None and tuple(B.shape) != tuple(A.shape):
        raise AssertionError(f"A and B must have same shape, got {tuple(A.shape)} vs "
                             f"{tuple(B.shape)}")
    if tracker is not None:
        raise NotImplementedError("lobpcg: tracker is not supported in fnx")
    dtype = A.dtype if A.dtype.is_floating_point or A.dtype.is_complex else D.float32
    if tol is None:
        tol = _FEPS[dtype.to_real() if dtype.is_complex else dtype] ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m})"
                         f" is smaller than 3 x the number of requested eigenpairs (={n})")
    method = "ortho" if method is None else method
    if method not in ("ortho", "basic"):
        raise ValueError(f"lobpcg: method must be 'ortho' or 'basic', got {method!r}")
    niter = 1000 if niter is None else niter
    largest = True if largest is None else largest
    ortho = {"ortho_i_max": 3, "ortho_tol_drop": tol}
    ortho.update(ortho_iparams or {})
    ortho.update(ortho_fparams or {})
    ortho.update(ortho_bparams or {})
    batch = tuple(A.shape[:-2])
    if not batch:
        X0 = randn(m, n, dtype=dtype, device=A.device) if X is None else X
        if tuple(X0.shape) != (m, n):
            raise AssertionError(f"X shape mismatch: got {tuple(X0.shape)}, expected {(m, n)}")
        return _one(A, B, X0, iK, k, niter, tol, largest, method, ortho)
    N = 1
    for s in batch:
        N *= s
    bA = A.reshape((N, m, m))
    bB = None if B is None else B.reshape((N, m, m))
    bX = None if X is None else X.reshape((N,) + tuple(X.shape[-2:]))
    Es, Xs = [], []
    for i in range(N):
        X0 = randn(m, n, dtype=dtype, device=A.device) if bX is None else bX[i]
        if tuple(X0.shape) != (m, n):
            raise AssertionError(f"X_ shape mismatch: got {tuple(X0.shape)}, expected "
                                 f"{(m, n)}")
        E, V = _one(bA[i], None if bB is None else bB[i], X0, iK, k, niter, tol, largest,
                    method, ortho)
        Es.append(E[None])
        Xs.append(V[None])
    return cat(Es).reshape(batch + (k,)), cat(Xs).reshape(batch + (m, k))
