"""Matrix factorization prims: cholesky, lu, triangular_solve, qr, eigh, svd, eig,
ldl_factor and ldl_solve (LAPACK's compact Bunch-Kaufman form), geqrf (LAPACK's compact
Householder QR); and
the matrix exponential (matrix_exp), whose scaling and squaring needs the values.

Each works on the last two dims of a float32/float64/complex64/complex128 tensor, every
leading dim a batch dim (no broadcasting: callers expand).  What ``jax.lax.linalg`` leaves
free is fixed here, so every backend returns the same numbers:

- ``qr``: the diagonal of R is real and non-negative (the columns of Q and the rows of R
  are rescaled by a unit phase);
- ``eigh``, ``svd``: each eigenvector (each left singular vector) is scaled by a unit
  phase that makes its entry of largest magnitude (the first such) real and positive; the
  matching right singular vector is scaled alike, so ``U diag(S) Vh`` is unchanged; the
  extra columns of U and rows of Vh of ``full_matrices`` are each fixed the same way.
- ``cholesky`` and ``lu`` also return LAPACK's ``info`` (int32, one per matrix: 0, or the
  order of the first leading minor that is not positive-definite / the 1-based index of
  the first zero pivot of U), from which the ATen ops build PyTorch's errors.
- ``cholesky`` and ``eigh`` read one triangle only (``upper``/``lower``), so their
  derivatives are the true derivatives of that reading: the gradient lands on that
  triangle (PyTorch returns its Hermitian gradient; both agree on every symmetric
  parametrization, A = X + X^H, A = X X^H).

The derivative formulas are the standard ones (Murray 2016 for cholesky, Walter/Liao et
al. for qr, Giles 2008 for eigh and eig, Townsend 2016 for svd, PyTorch's lu backward
extended to rectangular matrices).
"""
from __future__ import annotations

from ...core import dtype as D
from ...ops import prims as _p
from ..registry import TensorMeta, derivative
from ._common import cj, like, prim, to_complex
from .checks import FC, check_category, check_tensor, fail

__all__ = ["cholesky", "lu", "triangular_solve", "qr", "eigh", "svd", "eig", "matrix_exp",
           "ldl_factor", "ldl_solve", "geqrf"]


def _matrix(name, x, square=False, arg="self"):
    check_tensor(name, arg, x)
    check_category(name, x, FC, arg)
    if x.ndim < 2:
        raise fail(name, f"'{arg}' must have at least 2 dims, got {x.ndim}")
    if square and x.shape[-1] != x.shape[-2]:
        raise fail(name, f"'{arg}' must be batches of square matrices, got "
                         f"{x.shape[-2]} by {x.shape[-1]} matrices")
    return tuple(x.shape[:-2]), x.shape[-2], x.shape[-1]


# ----------------------------------------------------------------------------- helpers
# (prim level, so the backward of a prim-level graph stays prim level)

def mm(a, b):
    """Batched matrix product of ``[..., m, k]`` and ``[..., k, n]`` (same batch dims)."""
    nb = a.ndim - 2
    batch = list(range(nb))
    return _p.dot_general(a, b, [nb + 1], [nb], batch, batch)


def mT(x):
    perm = list(range(x.ndim))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return _p.transpose(x, perm)


def mH(x):
    return cj(mT(x))


def tri_mask(shape, k, lower, device):
    """Boolean ``[..., m, n]``: True where ``col - row <= k`` (lower) or ``>= k`` (upper)."""
    m, n = shape[-2], shape[-1]
    rows = _p.iota([m, n], 0, dtype=D.int64, device=device)
    cols = _p.iota([m, n], 1, dtype=D.int64, device=device)
    d = _p.sub(cols, rows)
    kk = _p.full([m, n], k, dtype=D.int64, device=device)
    pred = _p.le(d, kk) if lower else _p.ge(d, kk)
    nd = len(shape)
    return _p.broadcast_in_dim(pred, list(shape), [nd - 2, nd - 1])


def tril(x, k=0):
    return _p.where(tri_mask(x.shape, k, True, x.device), x, like(x, 0))


def triu(x, k=0):
    return _p.where(tri_mask(x.shape, k, False, x.device), x, like(x, 0))


def diag(x):
    """The main diagonal of ``[..., m, n]`` as ``[..., min(m, n)]``."""
    m, n = x.shape[-2], x.shape[-1]
    k = min(m, n)
    lead = list(x.shape[:-2])
    flat = _p.reshape(x, lead + [m * n])
    nl = len(lead)
    if k == 0:          # an empty slice, still a function of x (autograd sees it)
        return _p.slice(flat, [0] * (nl + 1), lead + [0])
    return _p.slice(flat, [0] * (nl + 1), lead + [(k - 1) * (n + 1) + 1],
                    [1] * nl + [n + 1])


def diag_embed(v):
    """``[..., n]`` as the diagonal of a zero ``[..., n, n]`` matrix."""
    n = v.shape[-1]
    lead = list(v.shape[:-1])
    nl = len(lead)
    eye = _p.eq(_p.iota([n, n], 0, dtype=D.int64, device=v.device),
                _p.iota([n, n], 1, dtype=D.int64, device=v.device))
    eye = _p.broadcast_in_dim(eye, lead + [n, n], [nl, nl + 1])
    vals = _p.broadcast_in_dim(v, lead + [n, n], list(range(nl)) + [nl + 1])
    return _p.where(eye, vals, like(vals, 0))


def _real_as(x, dtype):
    """A real tensor in ``dtype`` (complex dtypes get a zero imaginary part)."""
    if dtype.is_complex:
        x = to_complex(x)
    return _p.convert_element_type(x, dtype) if x.dtype is not dtype else x


def _row(v, shape):
    """``[..., n]`` broadcast along the rows of ``[..., m, n]``."""
    nd = len(shape)
    return _p.broadcast_in_dim(v, list(shape), list(range(nd - 2)) + [nd - 1])


def _col(v, shape):
    """``[..., m]`` broadcast along the columns of ``[..., m, n]``."""
    nd = len(shape)
    return _p.broadcast_in_dim(v, list(shape), list(range(nd - 2)) + [nd - 2])


def _narrow(x, dim, size):
    limit = list(x.shape)
    limit[dim] = size
    return _p.slice(x, [0] * x.ndim, limit)


def _solve_tri(a, b, left, lower, unit=False):
    return _p.triangular_solve(a, b, left, lower, unit)


def _sum(*xs):
    xs = [x for x in xs if x is not None]
    out = xs[0]
    for x in xs[1:]:
        out = _p.add(out, x)
    return out


def _info_meta(batch):
    return TensorMeta(batch, D.int32)


# ----------------------------------------------------------------------------- cholesky

def _cholesky_meta(self, upper):
    batch, n, _ = _matrix("cholesky", self, square=True)
    return TensorMeta(tuple(self.shape), self.dtype), _info_meta(batch)


cholesky = prim("cholesky(Tensor self, bool upper) -> (Tensor L, Tensor info)",
                _cholesky_meta)


def _hermitian_grad(g, lower):
    """The gradient of a function of the Hermitian matrix that one triangle of A spells
    out (the other triangle is its mirror), given the gradient ``g`` for a general A."""
    if lower:
        return _p.add(tril(g), tril(mH(g), -1))
    return _p.add(triu(g), triu(mH(g), 1))


@derivative(cholesky)
def _cholesky_backward(grads, upper, result0):
    gl = grads[0]
    if gl is None:
        return None
    L = mH(result0) if upper else result0
    if upper:
        gl = mH(gl)
    # A = L L^H: gA = L^-H phi(L^H gL) L^-1, phi = tril with the diagonal halved
    p = mm(mH(L), gl)
    p = _p.sub(tril(p), _p.mul(diag_embed(diag(p)), like(p, 0.5)))
    s = _solve_tri(mH(L), p, True, False)
    s = _solve_tri(L, s, False, True)
    return _hermitian_grad(s, not upper)


# ----------------------------------------------------------------------------- lu

def _lu_meta(self):
    batch, m, n = _matrix("lu", self)
    k = min(m, n)
    return (TensorMeta(tuple(self.shape), self.dtype), TensorMeta(batch + (k,), D.int32),
            TensorMeta(batch + (m,), D.int64), _info_meta(batch))


lu = prim("lu(Tensor self) -> (Tensor LU, Tensor pivots, Tensor permutation, Tensor info)",
          _lu_meta)


def unpermute_rows(g, perm):
    """``x`` with ``x[..., perm[i], :] = g[..., i, :]`` (undoes ``g = x[perm]``)."""
    idx = _p.broadcast_in_dim(perm, list(g.shape), list(range(g.ndim - 1)))
    return _p.scatter(like(g, 0), g.ndim - 2, idx, g, "none")


def _lu_square_grad(L, U, gl, gu):
    """gA of A = L U (square): L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H."""
    phi = _p.add(tril(mm(mH(L), gl), -1), triu(mm(gu, mH(U))))
    x = _solve_tri(mH(L), phi, True, False, True)
    return _solve_tri(mH(U), x, False, True)


def _rows(x, start, stop):
    nd = x.ndim
    limit = list(x.shape)
    limit[nd - 2] = stop
    return _p.slice(x, [0] * (nd - 2) + [start, 0], limit)


def _cols(x, start, stop):
    nd = x.ndim
    limit = list(x.shape)
    limit[nd - 1] = stop
    return _p.slice(x, [0] * (nd - 1) + [start], limit)


def _unit_lower(x):
    return _p.add(tril(x, -1), diag_embed(like(diag(x), 1)))


@derivative(lu)
def _lu_backward(grads, self_shape, result0, result2):
    g = grads[0]
    if g is None:
        return None
    m, n = self_shape[-2], self_shape[-1]
    packed = result0
    nd = len(self_shape)
    # A[perm] = L U.  A tall A is [A1; A2] = [L1; L2] U: L2 = A2 U^-1 adds -L2^H gL2 U^-H to
    # U's gradient and gives A2 gL2 U^-H.  A wide A is L [U1 | U2]: U2 = L^-1 A2 adds
    # -L^-H gU2 U2^H to L's gradient and gives A2 L^-H gU2.
    if m > n:
        top, g1 = _rows(packed, 0, n), _rows(g, 0, n)
        L1, U = _unit_lower(top), triu(top)
        L2, gl2 = _rows(packed, n, m), _rows(g, n, m)
        gl2u = _solve_tri(mH(U), gl2, False, True)                      # gL2 U^-H
        gu = _p.sub(triu(g1), mm(mH(L2), gl2u))
        ga = _p.concatenate([_lu_square_grad(L1, U, tril(g1, -1), gu), gl2u], nd - 2)
    elif m < n:
        left, g1 = _cols(packed, 0, m), _cols(g, 0, m)
        L, U1 = _unit_lower(left), triu(left)
        U2, gu2 = _cols(packed, m, n), _cols(g, m, n)
        lgu2 = _solve_tri(mH(L), gu2, True, False, True)                 # L^-H gU2
        gl = _p.sub(tril(g1, -1), mm(lgu2, mH(U2)))
        ga = _p.concatenate([_lu_square_grad(L, U1, gl, triu(g1)), lgu2], nd - 1)
    else:
        ga = _lu_square_grad(_unit_lower(packed), triu(packed), tril(g, -1), triu(g))
    return unpermute_rows(ga, result2)


# ----------------------------------------------------------------------------- triangular_solve

def _triangular_solve_meta(a, b, left, lower, unit_diagonal):
    n = "triangular_solve"
    batch, k, _ = _matrix(n, a, square=True, arg="a")
    bb, bm, bn = _matrix(n, b, arg="b")
    if a.dtype is not b.dtype:
        raise fail(n, f"'a' and 'b' must have one dtype, got {a.dtype.name} and "
                      f"{b.dtype.name}")
    if bb != batch:
        raise fail(n, f"'a' and 'b' must have the same batch dims, got {list(batch)} and "
                      f"{list(bb)}")
    if (bm if left else bn) != k:
        raise fail(n, f"'b' has shape {list(b.shape)}, incompatible with {k} by {k} "
                      f"matrices on the {'left' if left else 'right'}")
    return TensorMeta(tuple(b.shape), b.dtype)


triangular_solve = prim("triangular_solve(Tensor a, Tensor b, bool left, bool lower, "
                        "bool unit_diagonal) -> Tensor", _triangular_solve_meta)


@derivative(triangular_solve)
def _triangular_solve_backward(grad, a, left, lower, unit_diagonal, result, needs_input_grad):
    # left: X = A^-1 B, gB = A^-H gX, gA = -gB X^H; right: X = B A^-1, gA = -X^H gB
    gb = _solve_tri(mH(a), grad, left, not lower, unit_diagonal)
    ga = None
    if needs_input_grad[0]:
        ga = _p.neg(mm(gb, mH(result)) if left else mm(mH(result), gb))
        k = -1 if unit_diagonal else 0
        ga = tril(ga, k) if lower else triu(ga, -k)
    return ga, (gb if needs_input_grad[1] else None)


# ----------------------------------------------------------------------------- qr

def _qr_meta(self, full_matrices):
    batch, m, n = _matrix("qr", self)
    k = min(m, n)
    mq = m if full_matrices else k
    return (TensorMeta(batch + (m, mq), self.dtype), TensorMeta(batch + (mq, n), self.dtype))


qr = prim("qr(Tensor self, bool full_matrices) -> (Tensor Q, Tensor R)", _qr_meta)


def _copyltu(x):
    """The Hermitian matrix whose lower triangle is ``x``'s (real diagonal)."""
    d = diag(x)
    if x.dtype.is_complex:
        d = to_complex(_p.real(d))
    return _sum(tril(x, -1), mH(tril(x, -1)), diag_embed(d))


def _qr_square_grad(q, r, gq, gr):
    """gA of A = QR with Q m by n, R n by n (m >= n): (gQ + Q copyltu(M)) R^-H, with
    M = R gR^H - gQ^H Q."""
    parts = []
    if gr is not None:
        parts.append(mm(r, mH(gr)))
    if gq is not None:
        parts.append(_p.neg(mm(mH(gq), q)))
    b = mm(q, _copyltu(_sum(*parts)))
    if gq is not None:
        b = _p.add(b, gq)
    return _solve_tri(mH(r), b, False, True)


@derivative(qr)
def _qr_backward(grads, self_shape, full_matrices, result0, result1):
    gq, gr = grads
    m, n = self_shape[-2], self_shape[-1]
    q, r = result0, result1
    if full_matrices and m > n:
        raise NotImplementedError("prims.qr: the derivative is not defined for "
                                  "full_matrices=True (mode='complete') when rows > columns")
    if m >= n:
        return _qr_square_grad(q, r, gq, gr)
    # m < n: A = [X | Y], R = [U | V] with X = QU square
    nd = len(self_shape)
    u = _narrow(r, nd - 1, m)
    v = _p.slice(r, [0] * (nd - 1) + [m], list(r.shape))
    y = mm(q, v)
    gu = gv = None
    if gr is not None:
        gu = _narrow(gr, nd - 1, m)
        gv = _p.slice(gr, [0] * (nd - 1) + [m], list(gr.shape))
    gq2 = gq
    if gv is not None:
        t = mm(y, mH(gv))
        gq2 = t if gq2 is None else _p.add(gq2, t)
    gx = _qr_square_grad(q, u, gq2, gu)
    gy = mm(q, gv) if gv is not None else _p.full(list(y.shape), 0, dtype=y.dtype,
                                                   device=y.device)
    return _p.concatenate([gx, gy], nd - 1)


# ----------------------------------------------------------------------------- eigh

def _eigh_meta(self, lower):
    batch, n, _ = _matrix("eigh", self, square=True)
    return (TensorMeta(batch + (n,), self.dtype.to_real()),
            TensorMeta(tuple(self.shape), self.dtype))


eigh = prim("eigh(Tensor self, bool lower) -> (Tensor eigenvalues, Tensor eigenvectors)",
            _eigh_meta)


def _inverse_gaps(s, square=False):
    """``F[i, j] = 1 / (s[j] - s[i])`` (of the squares with ``square``), 0 on the
    diagonal."""
    if square:
        s = _p.mul(s, s)
    n = s.shape[-1]
    shape = list(s.shape) + [n]
    gaps = _p.sub(_row(s, shape), _col(s, shape))
    eye = diag_embed(like(s, 1))
    ones = like(gaps, 1)
    inv = _p.div(ones, _p.add(gaps, eye))          # the diagonal divides by 1
    return _p.where(_p.eq(eye, ones), like(gaps, 0), inv)


@derivative(eigh)
def _eigh_backward(grads, lower, result0, result1):
    gw, gv = grads
    w, v = result0, result1
    shape = list(v.shape)
    inner = None
    if gv is not None:
        f = _real_as(_inverse_gaps(w), v.dtype)
        inner = _p.mul(f, mm(mH(v), gv))
    if gw is not None:
        d = diag_embed(_real_as(gw, v.dtype))
        inner = d if inner is None else _p.add(inner, d)
    if inner is None:
        return _p.full(shape, 0, dtype=v.dtype, device=v.device)
    return _hermitian_grad(mm(mm(v, inner), mH(v)), lower)


# ----------------------------------------------------------------------------- svd

def _svd_meta(self, full_matrices):
    batch, m, n = _matrix("svd", self)
    k = min(m, n)
    mu, nv = (m, n) if full_matrices else (k, k)
    return (TensorMeta(batch + (m, mu), self.dtype), TensorMeta(batch + (k,),
                                                                 self.dtype.to_real()),
            TensorMeta(batch + (nv, n), self.dtype))


svd = prim("svd(Tensor self, bool full_matrices) -> (Tensor U, Tensor S, Tensor Vh)",
           _svd_meta)


def _skew(x):
    return _p.sub(x, mH(x))


@derivative(svd)
def _svd_backward(grads, self_shape, full_matrices, result0, result1, result2):
    gu, gs, gvh = grads
    m, n = self_shape[-2], self_shape[-1]
    k = min(m, n)
    nd = len(self_shape)
    u, s, vh = result0, result1, result2
    if full_matrices:           # the extra columns of U / rows of Vh carry no gradient
        u, vh = _narrow(u, nd - 1, k), _narrow(vh, nd - 2, k)
        gu = None if gu is None else _narrow(gu, nd - 1, k)
        gvh = None if gvh is None else _narrow(gvh, nd - 2, k)
    dt = u.dtype
    sc = _real_as(s, dt)
    kk = list(u.shape[:-2]) + [k, k]
    if gu is None and gvh is None:
        inner = diag_embed(_real_as(gs, dt))
        return mm(mm(u, inner), vh)
    f = _real_as(_inverse_gaps(s, square=True), dt)
    v = mH(vh)
    gv = None if gvh is None else mH(gvh)
    inner = None
    if gu is not None:
        uhgu = mm(mH(u), gu)
        inner = _p.mul(_p.mul(f, _skew(uhgu)), _row(sc, kk))
        if dt.is_complex:   # the phase of each singular pair: Im diag(U^H gU) / s
            im = to_complex(_p.imag(diag(uhgu)))
            im = _p.mul(im, _p.complex(like(s, 0), like(s, 1)))
            inner = _p.add(inner, diag_embed(_p.div(im, sc)))
    if gv is not None:
        t = _p.mul(_col(sc, kk), _p.mul(f, _skew(mm(mH(v), gv))))
        inner = t if inner is None else _p.add(inner, t)
    if gs is not None:
        inner = _p.add(inner, diag_embed(_real_as(gs, dt)))
    ga = mm(mm(u, inner), vh)
    if m > k and gu is not None:
        # (I - U U^H) gU S^-1 V^H
        proj = _p.sub(gu, mm(u, mm(mH(u), gu)))
        ga = _p.add(ga, mm(_p.div(proj, _row(sc, list(proj.shape))), vh))
    if n > k and gv is not None:
        # U S^-1 gV^H (I - V V^H)
        proj = _p.sub(mH(gv), mm(mm(mH(gv), v), vh))
        ga = _p.add(ga, mm(u, _p.div(proj, _col(sc, list(proj.shape)))))
    return ga


# ----------------------------------------------------------------------------- eig

def _eig_meta(self):
    batch, n, _ = _matrix("eig", self, square=True)
    c = self.dtype.to_complex()
    return TensorMeta(batch + (n,), c), TensorMeta(tuple(self.shape), c)


eig = prim("eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)", _eig_meta)


def solve(a, b):
    """``a^-1 b`` for square ``a`` (same batch dims), through prims.lu."""
    lu_, _, perm, _ = _p.lu(a)
    idx = _p.broadcast_in_dim(perm, list(b.shape), list(range(b.ndim - 1)))
    y = _p.gather(b, b.ndim - 2, idx)
    y = _solve_tri(lu_, y, True, True, True)
    return _solve_tri(lu_, y, True, False)


@derivative(eig)
def _eig_backward(grads, self_meta, result0, result1):
    # PyTorch's formula for unit-norm eigenvectors and losses invariant to their phases:
    # gA = V^-H (diag(gL) + (V^H gV - V^H V Re diag(V^H gV)) / conj(E)) V^H,
    # E[i, j] = L[j] - L[i]; real for a real A
    gl, gv = grads
    w, v = result0, result1
    inner = None
    if gv is not None:
        vhgv = mm(mH(v), gv)
        re = to_complex(_p.real(diag(vhgv)))
        inner = _p.sub(vhgv, mm(mH(v), _p.mul(v, _row(re, list(v.shape)))))
        shape = list(v.shape)
        gaps = _p.sub(_row(cj(w), shape), _col(cj(w), shape))
        eye = diag_embed(like(w, 1))
        inner = _p.div(inner, _p.add(gaps, eye))
        inner = _p.where(_p.eq(eye, like(eye, 1)), like(inner, 0), inner)
    if gl is not None:
        d = diag_embed(gl)
        inner = d if inner is None else _p.add(inner, d)
    ga = solve(mH(v), mm(inner, mH(v)))
    return ga if self_meta[1].is_complex else _p.real(ga)


# ----------------------------------------------------------------------------- matrix_exp

def _matrix_exp_meta(self):
    _matrix("matrix_exp", self, square=True)
    return TensorMeta(tuple(self.shape), self.dtype)


matrix_exp = prim("matrix_exp(Tensor self) -> Tensor", _matrix_exp_meta)


@derivative(matrix_exp)
def _matrix_exp_backward(grad, self):
    # the Frechet derivative of exp at A^H applied to G is the upper-right block of
    # exp([[A^H, G], [0, A^H]]) (Najfeld and Havel 1995)
    n = self.shape[-1]
    nd = self.ndim
    ah = mH(self)
    top = _p.concatenate([ah, grad], nd - 1)
    bottom = _p.concatenate([_p.full(list(ah.shape), 0, dtype=ah.dtype, device=ah.device), ah],
                            nd - 1)
    big = _p.matrix_exp(_p.concatenate([top, bottom], nd - 2))
    return _p.slice(big, [0] * (nd - 2) + [0, n], list(self.shape[:-2]) + [n, 2 * n])


# ----------------------------------------------------------------------------- ldl

def _ldl_factor_meta(self, hermitian):
    batch, n, _ = _matrix("ldl_factor", self, square=True)
    return (TensorMeta(tuple(self.shape), self.dtype), TensorMeta(batch + (n,), D.int32),
            _info_meta(batch))


# LAPACK's sytrf (hetrf for hermitian complex input), reading the lower triangle: the
# Bunch-Kaufman factorization A = P L D L^T P^T in LAPACK's compact form, LD with the
# strict upper triangle zeroed, 1-based pivots (a negative pair marks a 2x2 block of D)
# and info, as PyTorch's linalg.ldl_factor_ex; ldl_solve is sytrs/hetrs on that form.
# No derivatives (PyTorch has none): a backward through them raises.
ldl_factor = prim("ldl_factor(Tensor self, bool hermitian) -> (Tensor LD, Tensor pivots, "
                  "Tensor info)", _ldl_factor_meta)


def _ldl_solve_meta(LD, pivots, B, hermitian):
    batch, n, _ = _matrix("ldl_solve", LD, square=True, arg="LD")
    bb, m, _ = _matrix("ldl_solve", B, arg="B")
    if pivots.dtype is not D.int32 or tuple(pivots.shape) != batch + (n,):
        raise fail("ldl_solve", f"'pivots' must be int32 of shape {list(batch + (n,))}, got "
                                f"{pivots.dtype.name}{list(pivots.shape)}")
    if B.dtype is not LD.dtype or bb != batch or m != n:
        raise fail("ldl_solve", "'B' must have LD's dtype, batch dims and rows")
    return TensorMeta(tuple(B.shape), B.dtype)


ldl_solve = prim("ldl_solve(Tensor LD, Tensor pivots, Tensor B, bool hermitian) -> Tensor",
                 _ldl_solve_meta)



def _no_derivative(name):
    def formula(grads):
        raise RuntimeError(f"the derivative for 'linalg_{name}' is not implemented (PyTorch "
                           f"defines none)")
    return formula


derivative(ldl_factor)(_no_derivative("ldl_factor"))
derivative(ldl_solve)(_no_derivative("ldl_solve"))


# ----------------------------------------------------------------------------- geqrf

def _geqrf_meta(self):
    batch, m, n = _matrix("geqrf", self)
    return TensorMeta(tuple(self.shape), self.dtype), TensorMeta(batch + (min(m, n),), self.dtype)


# LAPACK's geqrf: R on and above the diagonal, the Householder vectors (unit first entry
# implied) below it, and tau, with Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^H (dlarfg's
# convention: R's diagonal real, of the sign opposite to the pivot's real part).  jax's
# geqrf calls the same routine (cuSOLVER's on a GPU, same convention).
geqrf = prim("geqrf(Tensor self) -> (Tensor a, Tensor tau)", _geqrf_meta)


@derivative(geqrf)
def _geqrf_backward(grads):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")
