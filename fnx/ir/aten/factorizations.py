"""Factorizations and solves (``torch.linalg``): cholesky, lu, det, slogdet, inv, solve,
solve_triangular, qr, eigh, eig, svd, pinv, matrix_rank, lstsq, and their ``torch.*``
spellings (det, logdet, inverse, cholesky_solve, cholesky_inverse, triangular_solve,
pinverse, svd, qr, slogdet, lu_unpack).

None is Core ATen: each decomposes to the factorization prims (``prims.cholesky``,
``prims.lu``, ``prims.triangular_solve``, ``prims.qr``, ``prims.eigh``, ``prims.svd``,
``prims.eig``) and ordinary ops, so autograd differentiates them through the prims'
formulas.  det and inv go through LU, solve through LU and two triangular solves,
pinv / matrix_rank / lstsq / svdvals through the SVD (eigh for ``hermitian=True``).

Errors: shapes and dtypes are checked by the meta functions with PyTorch's messages;
a singular or non-positive-definite input is found from the factorization's ``info``
(LAPACK's convention) and raises ``LinAlgError`` (a ``RuntimeError``) with PyTorch's
message, the batch element included.  The check is the prim ``check_linalg_info``
(``fnx/ir/prims/assertions.py``), so compiled programs and the cuda backend raise the
same error (computed inside the program, raised before anything is written back).  The
``*_ex`` ops return ``info`` instead, unless ``check_errors=True``.
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...ops import aten, prims
from ..dims import broadcast_shapes
from ..grad_utils import conj
from ..prims.assertions import LinAlgError
from ..prims.linalg import diag, tril, triu
from ..registry import TensorMeta, defop

__all__ = ["LinAlgError", "check_linalg", "check_info", "mH", "mT", "batch_matmul", "eye_like",
           "svdvals_of"]

ATEN = ()


# ----------------------------------------------------------------------------- checks

def check_linalg(name, A, square=False, arg="A", floating=True):
    """PyTorch's checks of a matrix argument: at least 2 dims, floating or complex,
    square when asked."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")
    if floating and not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype.scalar_type}")
    if floating and A.dtype in (D.float16, D.bfloat16):
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got "
                           f"{A.dtype.scalar_type}")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: {arg} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    return tuple(A.shape[:-2])


def _same_dtype(name, A, B):
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected A and B to have the same dtype, but found A of "
                           f"type {A.dtype.scalar_type} and B of type {B.dtype.scalar_type} "
                           f"instead")


def _is_concrete(t):
    """True for tensors with data (not meta or traced): value checks run only there."""
    return t.device.type != "meta" and getattr(t, "_data", None) is not None and \
        hasattr(t._data, "__array__")


def check_info(result, info, api_name, message):
    """``result``, checked: raises PyTorch's LinAlgError for the first non-zero ``info``
    (``prims.check_linalg_info``; ``{}`` in ``message`` is that info)."""
    return prims.check_linalg_info(result, info, api_name, message)


_NOT_PD = ("The factorization could not be completed because the input is not "
           "positive-definite (the leading minor of order {} is not positive-definite).")
_SINGULAR_INV = ("The diagonal element {} is zero, the inversion could not be completed "
                 "because the input matrix is singular.")
_SINGULAR_SOLVE = "The solver failed because the input matrix is singular."


# ----------------------------------------------------------------------------- helpers

def mT(x):
    return aten.transpose.int(x, -2, -1)


def mH(x):
    return conj(mT(x))


def batch_matmul(a, b):
    return aten.matmul.default(a, b)


def eye_like(n, ref, batch=()):
    e = aten.eye.default(n, dtype=ref.dtype, device=ref.device)
    return aten.expand.default(e, list(batch) + [n, n]) if batch else e


def _expand_batch(x, batch):
    shape = list(batch) + list(x.shape[-2:])
    return x if tuple(x.shape) == tuple(shape) else aten.expand.default(x, shape)


def _real_dtype(dtype):
    return dtype.to_real() if dtype.is_complex else dtype


def _permute_rows(b, perm):
    """``b[..., perm, :]``: rows of ``[..., m, k]`` reordered by ``perm`` ``[..., m]``."""
    idx = aten.expand.default(aten.unsqueeze.default(perm, -1), list(b.shape))
    return aten.gather.default(b, -2, idx)


def _lu_solve_perm(lu, perm, b):
    """Solve ``A X = B`` from ``A[perm] = L U`` (batch dims already equal)."""
    y = prims.triangular_solve(lu, _permute_rows(b, perm), True, True, True)
    return prims.triangular_solve(lu, y, True, False, False)


# ----------------------------------------------------------------------------- cholesky

def _cholesky_ex_meta(self, *, upper=False, check_errors=False):
    batch = check_linalg("linalg.cholesky", self, square=True)
    return TensorMeta(tuple(self.shape), self.dtype), TensorMeta(batch, D.int32)


def _cholesky_ex(self, *, upper=False, check_errors=False):
    _cholesky_ex_meta(self, upper=upper)
    L, info = prims.cholesky(self, upper)
    if check_errors:
        L = check_info(L, info, "linalg.cholesky_ex", _NOT_PD)
    return L, info


linalg_cholesky_ex = defop("linalg_cholesky_ex(Tensor self, *, bool upper=False, "
                           "bool check_errors=False) -> (Tensor L, Tensor info)", tags=ATEN,
                           meta=_cholesky_ex_meta, decomposition=_cholesky_ex)


def _cholesky(self, *, upper=False):
    _cholesky_ex_meta(self)
    L, info = prims.cholesky(self, upper)
    return check_info(L, info, "linalg.cholesky", _NOT_PD)


linalg_cholesky = defop("linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor",
                        tags=ATEN, meta=lambda self, *, upper=False: _cholesky_ex_meta(self)[0],
                        decomposition=_cholesky)
cholesky = defop("cholesky(Tensor self, bool upper=False) -> Tensor", tags=ATEN,
                 meta=lambda self, upper=False: _cholesky_ex_meta(self)[0],
                 decomposition=lambda self, upper=False: _cholesky(self, upper=upper))


def _cholesky_solve_meta(self, input2, upper=False):
    check_linalg("cholesky_solve", self, arg="B")
    check_linalg("cholesky_solve", input2, square=True)
    if self.dtype is not input2.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{self.dtype.scalar_type} and A of type "
                           f"{input2.dtype.scalar_type} instead.")
    if self.shape[-2] != input2.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{input2.shape[-1]} by {input2.shape[-1]} but each b matrix is "
                           f"{self.shape[-2]} by {self.shape[-1]}")
    batch = broadcast_shapes(tuple(self.shape[:-2]), tuple(input2.shape[:-2]))
    return TensorMeta(batch + tuple(self.shape[-2:]), self.dtype)


def _cholesky_solve(self, input2, upper=False):
    r = _cholesky_solve_meta(self, input2, upper)
    batch = r.shape[:-2]
    b, L = _expand_batch(self, batch), _expand_batch(input2, batch)
    if upper:       # A = U^H U
        y = prims.triangular_solve(mH(L), b, True, True, False)
        return prims.triangular_solve(L, y, True, False, False)
    y = prims.triangular_solve(L, b, True, True, False)
    return prims.triangular_solve(mH(L), y, True, False, False)


cholesky_solve = defop("cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor",
                       tags=ATEN, meta=_cholesky_solve_meta, decomposition=_cholesky_solve)


def _cholesky_inverse_meta(self, upper=False):
    check_linalg("cholesky_inverse", self, square=True)
    return TensorMeta(tuple(self.shape), self.dtype)


def _cholesky_inverse(self, upper=False):
    _cholesky_inverse_meta(self, upper)
    n = self.shape[-1]
    return _cholesky_solve(eye_like(n, self, tuple(self.shape[:-2])), self, upper)


cholesky_inverse = defop("cholesky_inverse(Tensor self, bool upper=False) -> Tensor", tags=ATEN,
                         meta=_cholesky_inverse_meta, decomposition=_cholesky_inverse)


# ----------------------------------------------------------------------------- lu

def _lu_factor_ex_meta(A, *, pivot=True, check_errors=False):
    batch = check_linalg("torch.linalg.lu_factor_ex", A)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                           "CPU")
    k = min(A.shape[-2:])
    return (TensorMeta(tuple(A.shape), A.dtype), TensorMeta(batch + (k,), D.int32),
            TensorMeta(batch, D.int32))


def _lu_factor_ex(A, *, pivot=True, check_errors=False):
    _lu_factor_ex_meta(A, pivot=pivot)
    lu, piv, _, info = prims.lu(A)
    if check_errors:
        lu = check_info(lu, info, "torch.linalg.lu_factor_ex",
                        "U[{},{}] is zero and using it on lu_solve would result in a division "
                        "by zero.")
    return lu, piv, info


linalg_lu_factor_ex = defop("linalg_lu_factor_ex(Tensor A, *, bool pivot=True, "
                            "bool check_errors=False) -> (Tensor LU, Tensor pivots, "
                            "Tensor info)", tags=ATEN, meta=_lu_factor_ex_meta,
                            decomposition=_lu_factor_ex)


def _lu_factor(A, *, pivot=True):
    _lu_factor_ex_meta(A, pivot=pivot)
    lu, piv, _, info = prims.lu(A)
    lu = check_info(lu, info, "torch.linalg.lu_factor",
                    "U[{},{}] is zero and using it on lu_solve would result in a division by "
                    "zero. If you still want to perform the factorization, consider calling "
                    "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return lu, piv


linalg_lu_factor = defop("linalg_lu_factor(Tensor A, *, bool pivot=True) -> (Tensor LU, "
                         "Tensor pivots)", tags=ATEN,
                         meta=lambda A, *, pivot=True: _lu_factor_ex_meta(A, pivot=pivot)[:2],
                         decomposition=_lu_factor)


def pivots_to_perm(pivots, m):
    """The row order ``perm`` (``A[perm] = L U``) of LAPACK's 1-based row swaps
    ``pivots`` ``[..., k]``: the swaps replayed on ``0 .. m - 1``, one per pivot."""
    batch = list(pivots.shape[:-1])
    perm = aten.expand.default(aten.arange.default(m, dtype=D.int64, device=pivots.device),
                               batch + [m])
    pos = aten.arange.default(m, dtype=D.int64, device=pivots.device)
    piv = aten.sub.Scalar(aten._to_copy.default(pivots, dtype=D.int64), 1)
    for i in range(pivots.shape[-1]):
        p = aten.select.int(piv, -1, i)                                      # [...]
        pk = aten.unsqueeze.default(p, -1)
        at_p = aten.gather.default(perm, -1, pk)                             # perm[p]
        at_i = aten.select.int(perm, -1, i)
        is_i = aten.eq.Scalar(pos, i)
        is_p = aten.eq.Tensor(pos, pk)
        perm = aten.where.self(is_i, at_p, aten.where.self(is_p, aten.unsqueeze.default(at_i, -1),
                                                           perm))
    return perm


def _perm_matrix(perm, dtype):
    """P with ``A = P L U``: ``P[r, i] = (perm[i] == r)``."""
    m = perm.shape[-1]
    rows = aten.unsqueeze.default(aten.arange.default(m, dtype=D.int64, device=perm.device), -1)
    return aten._to_copy.default(aten.eq.Tensor(rows, aten.unsqueeze.default(perm, -2)),
                                 dtype=dtype)


def _unpack(lu, dtype):
    m, n = lu.shape[-2:]
    k = min(m, n)
    L = aten.slice.Tensor(lu, -1, 0, k)
    U = aten.slice.Tensor(lu, -2, 0, k)
    L = aten.add.Tensor(tril(L, -1), _expand_batch(aten.eye.m(m, k, dtype=dtype,
                                                               device=lu.device),
                                                   tuple(lu.shape[:-2])))
    return L, triu(U)


def _lu_unpack_meta(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    check_linalg("torch.lu_unpack", LU_data)
    if LU_pivots.dtype is not D.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor "
                           "of torch.int32 dtype.")
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    batch = tuple(LU_data.shape[:-2])
    if tuple(LU_pivots.shape) != batch + (k,):
        raise RuntimeError(f"torch.lu_unpack: Expected LU_pivots.shape == {list(batch + (k,))}"
                           f" but got {list(LU_pivots.shape)}")
    dt = LU_data.dtype
    P = TensorMeta(batch + (m, m) if unpack_pivots else (0,), dt)
    L = TensorMeta(batch + (m, k) if unpack_data else (0,), dt)
    U = TensorMeta(batch + (k, n) if unpack_data else (0,), dt)
    return P, L, U


def _empty(ref, dtype=None):
    return aten.zeros.default([0], dtype=dtype or ref.dtype, device=ref.device)


def _empty_of(x):
    """An empty ``[0]`` tensor computed from ``x`` (so autograd sees it as x's output)."""
    return aten.slice.Tensor(aten.reshape.default(x, [-1]), 0, 0, 0)


def _lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    _lu_unpack_meta(LU_data, LU_pivots, unpack_data, unpack_pivots)
    if unpack_data:
        L, U = _unpack(LU_data, LU_data.dtype)
    else:
        L = U = _empty_of(LU_data)
    P = (_perm_matrix(pivots_to_perm(LU_pivots, LU_data.shape[-2]), LU_data.dtype)
         if unpack_pivots else _empty(LU_data))
    return P, L, U


lu_unpack = defop("lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, "
                  "bool unpack_pivots=True) -> (Tensor P, Tensor L, Tensor U)", tags=ATEN,
                  meta=_lu_unpack_meta, decomposition=_lu_unpack)


def _lu_meta(A, *, pivot=True):
    _lu_factor_ex_meta(A, pivot=pivot)
    m, n = A.shape[-2:]
    k = min(m, n)
    batch = tuple(A.shape[:-2])
    return (TensorMeta(batch + (m, m), A.dtype), TensorMeta(batch + (m, k), A.dtype),
            TensorMeta(batch + (k, n), A.dtype))


def _lu(A, *, pivot=True):
    _lu_meta(A, pivot=pivot)
    lu, _, perm, _ = prims.lu(A)
    L, U = _unpack(lu, A.dtype)
    return _perm_matrix(perm, A.dtype), L, U


linalg_lu = defop("linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)",
                  tags=ATEN, meta=_lu_meta, decomposition=_lu)


def _lu_solve_meta(LU, pivots, B, *, left=True, adjoint=False):
    n = "linalg.lu_solve"
    check_linalg(n, LU, square=True, arg="LU")
    check_linalg(n, B, arg="B")
    _same_dtype(n, LU, B)
    k = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != k:
        side = "left" if left else "right"
        raise RuntimeError(f"{n}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({k}x{k} and "
                           f"{B.shape[-2]}x{B.shape[-1]}) ({side})")
    if pivots.dtype is not D.int32 or tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"{n}: Expected pivots of shape {list(LU.shape[:-1])} and dtype "
                           f"int32, got {list(pivots.shape)} {pivots.dtype.name}")
    batch = broadcast_shapes(tuple(LU.shape[:-2]), tuple(B.shape[:-2]))
    return TensorMeta(batch + tuple(B.shape[-2:]), B.dtype)


def _lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    r = _lu_solve_meta(LU, pivots, B, left=left, adjoint=adjoint)
    batch = r.shape[:-2]
    lu = _expand_batch(LU, batch)
    perm = pivots_to_perm(pivots, LU.shape[-1])
    perm = aten.expand.default(perm, list(batch) + [LU.shape[-1]])
    b = _expand_batch(B, batch)
    return _solve_from_lu(lu, perm, b, left, adjoint)


def _solve_from_lu(lu, perm, b, left, adjoint=False):
    """X with op(A) X = B (left) or X op(A) = B, from A[perm] = L U; op is the conjugate
    transpose when ``adjoint``."""
    if not left:        # X op(A) = B  <=>  op(A)^H X^H = B^H
        return mH(_solve_from_lu(lu, perm, mH(b), True, not adjoint))
    if not adjoint:
        return _lu_solve_perm(lu, perm, b)
    # A^H X = B with A = P L U: U^H L^H P^T X = B
    y = prims.triangular_solve(mH(lu), b, True, True, False)
    y = prims.triangular_solve(mH(lu), y, True, False, True)
    from_rows = aten.expand.default(aten.unsqueeze.default(perm, -1), list(y.shape))
    return aten.scatter.src(aten.zeros_like.default(y), -2, from_rows, y)


linalg_lu_solve = defop("linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, "
                        "bool adjoint=False) -> Tensor", tags=ATEN, meta=_lu_solve_meta,
                        decomposition=_lu_solve)


# ----------------------------------------------------------------------------- det, slogdet

def _perm_sign(pivots, dtype):
    """(-1) ** (the number of row swaps LAPACK made)."""
    k = pivots.shape[-1]
    ar = aten.arange.start(1, k + 1, dtype=D.int32, device=pivots.device)
    swaps = aten.sum.dim_IntList(aten.ne.Tensor(pivots, ar), [-1])
    odd = aten.remainder.Scalar(swaps, 2)
    return aten._to_copy.default(aten.rsub.Scalar(aten.mul.Scalar(odd, 2), 1), dtype=dtype)


def _det_meta(A):
    batch = check_linalg("linalg.det", A, square=True)
    return TensorMeta(batch, A.dtype)


def _det(A):
    _det_meta(A)
    lu, piv, _, _ = prims.lu(A)
    d = aten.prod.dim_int(diag(lu), -1)
    return aten.mul.Tensor(d, _perm_sign(piv, A.dtype))


linalg_det = defop("linalg_det(Tensor A) -> Tensor", tags=ATEN, meta=_det_meta,
                   decomposition=_det)
det = defop("det(Tensor self) -> Tensor", tags=ATEN, meta=_det_meta, decomposition=_det)


def _slogdet_meta(A):
    batch = check_linalg("linalg.slogdet", A, square=True)
    return TensorMeta(batch, A.dtype), TensorMeta(batch, _real_dtype(A.dtype))


def _slogdet(A):
    _slogdet_meta(A)
    lu, piv, _, _ = prims.lu(A)
    d = diag(lu)
    a = aten.abs.default(d)
    zero = aten.eq.Scalar(a, 0)
    unit = aten.where.self(zero, aten.zeros_like.default(d),
                           aten.div.Tensor(d, aten.where.self(zero, aten.ones_like.default(a), a)))
    sign = aten.mul.Tensor(aten.prod.dim_int(unit, -1), _perm_sign(piv, A.dtype))
    return sign, aten.sum.dim_IntList(aten.log.default(a), [-1])


linalg_slogdet = defop("linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)", tags=ATEN,
                       meta=_slogdet_meta, decomposition=_slogdet)
slogdet = defop("slogdet(Tensor self) -> (Tensor sign, Tensor logabsdet)", tags=ATEN,
                meta=_slogdet_meta, decomposition=_slogdet)


def _logdet_meta(self):
    batch = check_linalg("linalg.logdet", self, square=True)
    return TensorMeta(batch, self.dtype)


def _logdet(self):
    _logdet_meta(self)
    sign, logabs = _slogdet(self)
    if self.dtype.is_complex:
        return aten.add.Tensor(aten.log.default(sign), logabs)
    # a negative determinant has no real logarithm: nan (a zero one gives -inf)
    return aten.where.self(aten.lt.Scalar(sign, 0), float("nan"), logabs)


logdet = defop("logdet(Tensor self) -> Tensor", tags=ATEN, meta=_logdet_meta,
               decomposition=_logdet)


# ----------------------------------------------------------------------------- inv, solve

def _inv_ex_meta(A, *, check_errors=False):
    batch = check_linalg("linalg.inv", A, square=True)
    return TensorMeta(tuple(A.shape), A.dtype), TensorMeta(batch, D.int32)


def _inv_ex(A, *, check_errors=False, api="linalg.inv_ex"):
    _inv_ex_meta(A)
    lu, _, perm, info = prims.lu(A)
    if check_errors:
        lu = check_info(lu, info, api, _SINGULAR_INV)
    n = A.shape[-1]
    return _lu_solve_perm(lu, perm, eye_like(n, A, tuple(A.shape[:-2]))), info


linalg_inv_ex = defop("linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, "
                      "Tensor info)", tags=ATEN, meta=_inv_ex_meta, decomposition=_inv_ex)
linalg_inv = defop("linalg_inv(Tensor A) -> Tensor", tags=ATEN,
                   meta=lambda A: _inv_ex_meta(A)[0],
                   decomposition=lambda A: _inv_ex(A, check_errors=True, api="linalg.inv")[0])
inverse = defop("inverse(Tensor self) -> Tensor", tags=ATEN,
                meta=lambda self: _inv_ex_meta(self)[0],
                decomposition=lambda self: _inv_ex(self, check_errors=True,
                                                   api="linalg.inv")[0])


def _vector_case(A, B):
    """PyTorch's rule: B is a batch of vectors when it is 1-D or has A's batch shape."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def _solve_meta(A, B, *, left=True, check_errors=False):
    n = "linalg.solve"
    batch_a = check_linalg(n, A, square=True)
    if B.ndim < 1:
        raise RuntimeError(f"{n}: The input tensor B must have at least 1 dimensions.")
    _same_dtype(n, A, B)
    vec = _vector_case(A, B)
    k = A.shape[-1]
    if vec:
        if not left:
            raise RuntimeError(f"{n}: Vector broadcasting of the left hand side is not "
                               f"supported for left=False. In this case linalg.solve is "
                               f"equivalent to B / A.squeeze(-1)")
        if B.shape[-1] != k:
            raise RuntimeError(f"{n}: Incompatible shapes of A and B for the equation AX = B "
                               f"({k}x{k} and {B.shape[-1]}x1)")
        batch = broadcast_shapes(batch_a, tuple(B.shape[:-1]))
        return TensorMeta(batch + (k,), A.dtype), TensorMeta(batch_a, D.int32), True
    rows, cols = B.shape[-2:]
    if (rows if left else cols) != k:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{n}: Incompatible shapes of A and B for the equation {eq} "
                           f"({k}x{k} and {rows}x{cols})")
    batch = broadcast_shapes(batch_a, tuple(B.shape[:-2]))
    return TensorMeta(batch + (rows, cols), A.dtype), TensorMeta(batch_a, D.int32), False


def _solve_ex(A, B, *, left=True, check_errors=False, api="torch.linalg.solve_ex"):
    r, _, vec = _solve_meta(A, B, left=left)
    lu, _, perm, info = prims.lu(A)
    if check_errors:
        lu = check_info(lu, info, api, _SINGULAR_SOLVE)
    b = aten.unsqueeze.default(B, -1) if vec else B
    batch = broadcast_shapes(tuple(A.shape[:-2]), tuple(b.shape[:-2]))
    lu, b = _expand_batch(lu, batch), _expand_batch(b, batch)
    perm = aten.expand.default(perm, list(batch) + [A.shape[-1]])
    x = _solve_from_lu(lu, perm, b, left)
    return (aten.squeeze.dim(x, -1) if vec else x), info


linalg_solve_ex = defop("linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, "
                        "bool check_errors=False) -> (Tensor result, Tensor info)", tags=ATEN,
                        meta=lambda A, B, *, left=True, check_errors=False:
                        _solve_meta(A, B, left=left)[:2], decomposition=_solve_ex)
linalg_solve = defop("linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor", tags=ATEN,
                     meta=lambda A, B, *, left=True: _solve_meta(A, B, left=left)[0],
                     decomposition=lambda A, B, *, left=True:
                     _solve_ex(A, B, left=left, check_errors=True, api="torch.linalg.solve")[0])


def _solve_triangular_meta(self, B, *, upper, left=True, unitriangular=False):
    n = "linalg.solve_triangular"
    check_linalg(n, self, square=True)
    check_linalg(n, B, arg="B")
    _same_dtype(n, self, B)
    k = self.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != k:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{n}: Incompatible shapes of A and B for the equation {eq} "
                           f"({k}x{k} and {B.shape[-2]}x{B.shape[-1]})")
    batch = broadcast_shapes(tuple(self.shape[:-2]), tuple(B.shape[:-2]))
    return TensorMeta(batch + tuple(B.shape[-2:]), B.dtype)


def _solve_triangular(self, B, *, upper, left=True, unitriangular=False):
    r = _solve_triangular_meta(self, B, upper=upper, left=left, unitriangular=unitriangular)
    batch = r.shape[:-2]
    return prims.triangular_solve(_expand_batch(self, batch), _expand_batch(B, batch), left,
                                  not upper, unitriangular)


linalg_solve_triangular = defop(
    "linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, "
    "bool unitriangular=False) -> Tensor", tags=ATEN, meta=_solve_triangular_meta,
    decomposition=_solve_triangular)


def _triangular_solve_meta(self, A, upper=True, transpose=False, unitriangular=False):
    n = "torch.triangular_solve"
    check_linalg(n, A, square=True)
    check_linalg(n, self, arg="B")
    if self.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{self.dtype.scalar_type} and A of type {A.dtype.scalar_type} "
                           f"instead.")
    if self.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is "
                           f"{A.shape[-1]} by {A.shape[-1]} but each b matrix is "
                           f"{self.shape[-2]} by {self.shape[-1]}")
    batch = broadcast_shapes(tuple(self.shape[:-2]), tuple(A.shape[:-2]))
    return (TensorMeta(batch + tuple(self.shape[-2:]), self.dtype),
            TensorMeta(batch + tuple(A.shape[-2:]), A.dtype))


def _triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
    r, c = _triangular_solve_meta(self, A, upper, transpose, unitriangular)
    batch = r.shape[:-2]
    a = _expand_batch(A, batch)
    coef = aten.clone.default(a)
    if transpose:
        a, upper = mT(a), not upper
    x = prims.triangular_solve(a, _expand_batch(self, batch), True, not upper, unitriangular)
    return x, coef


triangular_solve = defop("triangular_solve(Tensor self, Tensor A, bool upper=True, "
                         "bool transpose=False, bool unitriangular=False) -> (Tensor solution, "
                         "Tensor cloned_coefficient)", tags=ATEN, meta=_triangular_solve_meta,
                         decomposition=_triangular_solve)


# ----------------------------------------------------------------------------- qr

_QR_MODES = ("reduced", "complete", "r")


def _qr_meta(A, mode="reduced"):
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    batch = check_linalg("linalg.qr", A)
    m, n = A.shape[-2:]
    k = min(m, n)
    if mode == "r":
        return TensorMeta((0,), A.dtype), TensorMeta(batch + (k, n), A.dtype)
    mq = m if mode == "complete" else k
    return TensorMeta(batch + (m, mq), A.dtype), TensorMeta(batch + (mq, n), A.dtype)


def _qr(A, mode="reduced"):
    _qr_meta(A, mode)
    q, r = prims.qr(A, mode == "complete")
    if mode == "r":
        return _empty(A), r
    return q, r


linalg_qr = defop("linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)", tags=ATEN,
                  meta=_qr_meta, decomposition=_qr)
qr = defop("qr(Tensor self, bool some=True) -> (Tensor Q, Tensor R)", tags=ATEN,
           meta=lambda self, some=True: _qr_meta(self, "reduced" if some else "complete"),
           decomposition=lambda self, some=True: _qr(self, "reduced" if some else "complete"))


# ----------------------------------------------------------------------------- eigh, eig

def _uplo(UPLO):
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper() == "L"


def _eigh_meta(self, UPLO="L"):
    check_linalg("linalg.eigh", self, square=True)
    _uplo(UPLO)
    return (TensorMeta(tuple(self.shape[:-1]), _real_dtype(self.dtype)),
            TensorMeta(tuple(self.shape), self.dtype))


def _eigh(self, UPLO="L"):
    _eigh_meta(self, UPLO)
    return prims.eigh(self, _uplo(UPLO))


linalg_eigh = defop("linalg_eigh(Tensor self, str UPLO=\"L\") -> (Tensor eigenvalues, "
                    "Tensor eigenvectors)", tags=ATEN, meta=_eigh_meta, decomposition=_eigh)
linalg_eigvalsh = defop("linalg_eigvalsh(Tensor self, str UPLO=\"L\") -> Tensor", tags=ATEN,
                        meta=lambda self, UPLO="L": _eigh_meta(self, UPLO)[0],
                        decomposition=lambda self, UPLO="L": _eigh(self, UPLO)[0])


def _eig_meta(self):
    check_linalg("linalg.eig", self, square=True)
    c = self.dtype.to_complex() if not self.dtype.is_complex else self.dtype
    return TensorMeta(tuple(self.shape[:-1]), c), TensorMeta(tuple(self.shape), c)


def _eig(self):
    _eig_meta(self)
    return prims.eig(self)


linalg_eig = defop("linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)",
                   tags=ATEN, meta=_eig_meta, decomposition=_eig)
linalg_eigvals = defop("linalg_eigvals(Tensor self) -> Tensor", tags=ATEN,
                       meta=lambda self: _eig_meta(self)[0],
                       decomposition=lambda self: _eig(self)[0])


# ----------------------------------------------------------------------------- svd

def _check_driver(name, A, driver):
    if driver is not None and A.device.type != "cuda":
        raise RuntimeError(f"{name}: keyword argument `driver=` is only supported on CUDA "
                           f"inputs with cuSOLVER backend.")


def _svd_meta(A, full_matrices=True, *, driver=None):
    batch = check_linalg("linalg.svd", A)
    _check_driver("torch.linalg.svd", A, driver)
    m, n = A.shape[-2:]
    k = min(m, n)
    mu, nv = (m, n) if full_matrices else (k, k)
    return (TensorMeta(batch + (m, mu), A.dtype), TensorMeta(batch + (k,), _real_dtype(A.dtype)),
            TensorMeta(batch + (nv, n), A.dtype))


def _svd(A, full_matrices=True, *, driver=None):
    _svd_meta(A, full_matrices, driver=driver)
    return prims.svd(A, full_matrices)


linalg_svd = defop("linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> "
                   "(Tensor U, Tensor S, Tensor Vh)", tags=ATEN, meta=_svd_meta,
                   decomposition=_svd)


def svdvals_of(A):
    return prims.svd(A, False)[1]


def _svdvals_meta(A, *, driver=None):
    batch = check_linalg("linalg.svdvals", A)
    _check_driver("torch.linalg.svdvals", A, driver)
    return TensorMeta(batch + (min(A.shape[-2:]),), _real_dtype(A.dtype))


linalg_svdvals = defop("linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor", tags=ATEN,
                       meta=_svdvals_meta,
                       decomposition=lambda A, *, driver=None:
                       (_svdvals_meta(A, driver=driver), svdvals_of(A))[1])


def _torch_svd_meta(self, some=True, compute_uv=True):
    batch = check_linalg("svd", self)
    m, n = self.shape[-2:]
    k = min(m, n)
    ku = k if (some and compute_uv) else m
    kv = k if (some and compute_uv) else n
    return (TensorMeta(batch + (m, ku), self.dtype),
            TensorMeta(batch + (k,), _real_dtype(self.dtype)),
            TensorMeta(batch + (n, kv), self.dtype))


def _torch_svd(self, some=True, compute_uv=True):
    mu, _, mv = _torch_svd_meta(self, some, compute_uv)
    if not compute_uv:      # zero-filled U and V (PyTorch's convention)
        s = svdvals_of(self)
        return (aten.zeros.default(list(mu.shape), dtype=self.dtype, device=self.device), s,
                aten.zeros.default(list(mv.shape), dtype=self.dtype, device=self.device))
    u, s, vh = prims.svd(self, not some)
    return u, s, mH(vh)


svd = defop("svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, "
            "Tensor V)", tags=ATEN, meta=_torch_svd_meta, decomposition=_torch_svd)


# ----------------------------------------------------------------------------- pinv, rank

def _tolerance(A, s_max, atol, rtol):
    """PyTorch's rule: rtol defaults to eps * max(m, n) unless only a positive atol is
    given (then 0); the tolerance is max(atol, rtol * the largest singular value)."""
    m, n = A.shape[-2:]
    if rtol is None:
        rtol = 0.0 if (atol is not None and atol > 0) else \
            _eps(A.dtype) * max(m, n)
    tol = aten.mul.Scalar(s_max, rtol)
    if atol is not None:
        tol = aten.clamp.default(tol, atol, None)
    return tol


def _eps(dtype):
    return {D.float32: 1.1920928955078125e-07, D.complex64: 1.1920928955078125e-07}.get(
        dtype, 2.220446049250313e-16)


def _pinv_meta(self, *, atol=None, rtol=None, hermitian=False):
    check_linalg("linalg.pinv", self)
    if hermitian:
        check_linalg("linalg.pinv(hermitian=True)", self, square=True)
    batch = tuple(self.shape[:-2])
    return TensorMeta(batch + (self.shape[-1], self.shape[-2]), self.dtype)


def _pinv(self, *, atol=None, rtol=None, hermitian=False):
    _pinv_meta(self, atol=atol, rtol=rtol, hermitian=hermitian)
    m, n = self.shape[-2:]
    if min(m, n) == 0:
        return aten.zeros.default(list(self.shape[:-2]) + [n, m], dtype=self.dtype,
                                  device=self.device)
    if hermitian:
        w, v = prims.eigh(self, True)
        a = aten.abs.default(w)
        s_max = aten.amax.default(a, [-1], True)
        keep = aten.gt.Tensor(a, _tolerance(self, s_max, atol, rtol))
        inv = aten.where.self(keep, aten.reciprocal.default(w), 0.0)
        inv = aten._to_copy.default(inv, dtype=self.dtype)
        return batch_matmul(aten.mul.Tensor(v, aten.unsqueeze.default(inv, -2)), mH(v))
    u, s, vh = prims.svd(self, False)
    s_max = aten.amax.default(s, [-1], True)
    keep = aten.gt.Tensor(s, _tolerance(self, s_max, atol, rtol))
    inv = aten._to_copy.default(aten.where.self(keep, aten.reciprocal.default(s), 0.0),
                                dtype=self.dtype)
    return batch_matmul(aten.mul.Tensor(mH(vh), aten.unsqueeze.default(inv, -2)), mH(u))


linalg_pinv = defop("linalg_pinv.atol_rtol_float(Tensor self, *, float? atol=None, "
                    "float? rtol=None, bool hermitian=False) -> Tensor", tags=ATEN,
                    meta=_pinv_meta, decomposition=_pinv)
pinverse = defop("pinverse(Tensor self, float rcond=1e-15) -> Tensor", tags=ATEN,
                 meta=lambda self, rcond=1e-15: _pinv_meta(self),
                 decomposition=lambda self, rcond=1e-15: _pinv(self, rtol=rcond))


def _rank_meta(self, *, atol=None, rtol=None, hermitian=False):
    check_linalg("torch.linalg.matrix_rank", self)
    return TensorMeta(tuple(self.shape[:-2]), D.int64)


def _rank(self, *, atol=None, rtol=None, hermitian=False):
    _rank_meta(self, atol=atol, rtol=rtol, hermitian=hermitian)
    if min(self.shape[-2:]) == 0:
        return aten.zeros.default(list(self.shape[:-2]), dtype=D.int64, device=self.device)
    s = aten.abs.default(prims.eigh(self, True)[0]) if hermitian else svdvals_of(self)
    s_max = aten.amax.default(s, [-1], True)
    keep = aten.gt.Tensor(s, _tolerance(self, s_max, atol, rtol))
    return aten.sum.dim_IntList(keep, [-1], dtype=D.int64)


linalg_matrix_rank = defop("linalg_matrix_rank.atol_rtol_float(Tensor self, *, float? atol=None, "
                           "float? rtol=None, bool hermitian=False) -> Tensor", tags=ATEN,
                           meta=_rank_meta, decomposition=_rank)


# ----------------------------------------------------------------------------- lstsq

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_meta(self, b, rcond=None, *, driver=None):
    n = "torch.linalg.lstsq"
    check_linalg(n, self)
    if b.ndim < 1:
        raise RuntimeError(f"{n}: input.dim() must be greater or equal to other.dim() and "
                           f"(input.dim() - other.dim()) <= 1")
    vec = b.ndim == self.ndim - 1
    if not (b.ndim == self.ndim or vec):
        raise RuntimeError(f"{n}: input.dim() must be greater or equal to other.dim() and "
                           f"(input.dim() - other.dim()) <= 1")
    if self.dtype is not b.dtype:
        raise RuntimeError(f"{n}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {self.dtype.scalar_type} and other's dtype "
                           f"{b.dtype.scalar_type}")
    m, ncol = self.shape[-2:]
    if (b.shape[-1] if vec else b.shape[-2]) != m:
        raise RuntimeError(f"{n}: input.size(-2) should match other.size(-"
                           f"{1 if vec else 2})")
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError(f"{n}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           f"gelss)")
    driver = driver or "gelsy"
    batch = broadcast_shapes(tuple(self.shape[:-2]), tuple(b.shape[:-1 if vec else -2]))
    k = () if vec else (b.shape[-1],)
    real = _real_dtype(self.dtype)
    sol = TensorMeta(batch + (ncol,) + k, self.dtype)
    # residuals: for tall A, not from gelsy (and, from gelsd/gelss, only at full rank:
    # decided on the values); a vector b keeps its column
    res = TensorMeta(batch + (k or (1,)) if m > ncol and driver != "gelsy" else (0,), real)
    rank = TensorMeta(batch if driver != "gels" else (0,), D.int64)
    sv = TensorMeta(batch + (min(m, ncol),) if driver in ("gelsd", "gelss") else (0,), real)
    return sol, res, rank, sv


def _lstsq(self, b, rcond=None, *, driver=None):
    """The minimum-norm least-squares solution through the SVD (singular values at or
    below rcond * the largest are dropped; rcond defaults to eps * max(m, n)). For a
    full-rank A this is every driver's solution; for a rank-deficient A it is gelsd's and
    gelss's (gelsy's basic solution may differ)."""
    sol_m, res_m, rank_m, sv_m = _lstsq_meta(self, b, rcond, driver=driver)
    vec = b.ndim == self.ndim - 1
    B = aten.unsqueeze.default(b, -1) if vec else b
    batch = sol_m.shape[:len(sol_m.shape) - (1 if vec else 2)]
    A = _expand_batch(self, batch)
    B = _expand_batch(B, batch)
    m, n = A.shape[-2:]
    if min(m, n) == 0:
        x = aten.zeros.default(list(batch) + [n, B.shape[-1]], dtype=A.dtype, device=A.device)
        s = aten.zeros.default(list(batch) + [0], dtype=_real_dtype(A.dtype), device=A.device)
        rank = aten.zeros.default(list(batch), dtype=D.int64, device=A.device)
    else:
        u, s, vh = prims.svd(A, False)
        s_max = aten.amax.default(s, [-1], True)
        r = _eps(A.dtype) * max(m, n) if rcond is None or rcond < 0 else rcond
        keep = aten.gt.Tensor(s, aten.mul.Scalar(s_max, r))
        inv = aten._to_copy.default(aten.where.self(keep, aten.reciprocal.default(s), 0.0),
                                    dtype=A.dtype)
        uhb = batch_matmul(mH(u), B)
        x = batch_matmul(mH(vh), aten.mul.Tensor(aten.unsqueeze.default(inv, -1), uhb))
        rank = aten.sum.dim_IntList(keep, [-1], dtype=D.int64)
    real = _real_dtype(A.dtype)
    if res_m.shape == (0,):
        res = _empty(A, real)
    else:
        diff = aten.sub.Tensor(batch_matmul(A, x), B)
        res = aten.sum.dim_IntList(aten.square.default(aten.abs.default(diff)), [-2])
        # a rank-deficient matrix has no residuals (PyTorch: computed only when every
        # matrix has full rank); only eager calls can see the rank
        if driver != "gels" and _is_concrete(rank) and \
                not (np.asarray(rank._data) == n).all():
            res = _empty(A, real)
    rank_out = rank if rank_m.shape != (0,) else _empty(A, D.int64)
    sv_out = s if sv_m.shape != (0,) else _empty(A, real)
    if vec:
        x = aten.squeeze.dim(x, -1)
    return x, res, rank_out, sv_out


linalg_lstsq = defop("linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None)"
                     " -> (Tensor solution, Tensor residuals, Tensor rank, "
                     "Tensor singular_values)", tags=ATEN, meta=_lstsq_meta,
                     decomposition=_lstsq)



# ----------------------------------------------------------------------------- ldl
# The Bunch-Kaufman LDL^T (LDL^H) factorization in LAPACK's compact form, as PyTorch
# returns it (prims.ldl_factor / prims.ldl_solve: sytrf/hetrf, sytrs/hetrs).

def _ldl_factor_ex_meta(self, *, hermitian=False, check_errors=False):
    batch = check_linalg("torch.linalg.ldl_factor_ex", self, square=True)
    return (TensorMeta(tuple(self.shape), self.dtype),
            TensorMeta(batch + (self.shape[-1],), D.int32), TensorMeta(batch, D.int32))


_SINGULAR_LDL = ("The factorization could not be completed because the input matrix is "
                 "singular: D[{},{}] is exactly zero.")


def _ldl_factor_ex(self, *, hermitian=False, check_errors=False):
    _ldl_factor_ex_meta(self)
    ld, piv, info = prims.ldl_factor(self, hermitian)
    if check_errors:
        ld = check_info(ld, info, "torch.linalg.ldl_factor_ex", _SINGULAR_LDL)
    return ld, piv, info


linalg_ldl_factor_ex = defop("linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, "
                             "bool check_errors=False) -> (Tensor LD, Tensor pivots, "
                             "Tensor info)", tags=ATEN, meta=_ldl_factor_ex_meta,
                             decomposition=_ldl_factor_ex)


def _ldl_factor(self, *, hermitian=False):
    _ldl_factor_ex_meta(self)
    ld, piv, info = prims.ldl_factor(self, hermitian)
    return check_info(ld, info, "torch.linalg.ldl_factor", _SINGULAR_LDL), piv


linalg_ldl_factor = defop("linalg_ldl_factor(Tensor self, *, bool hermitian=False) -> "
                          "(Tensor LD, Tensor pivots)", tags=ATEN,
                          meta=lambda self, *, hermitian=False: _ldl_factor_ex_meta(self)[:2],
                          decomposition=_ldl_factor)


def _ldl_solve_meta(LD, pivots, B, *, hermitian=False):
    n = "torch.linalg.ldl_solve"
    check_linalg(n, LD, square=True, arg="LD")
    check_linalg(n, B, arg="B")
    if pivots.dtype.is_floating_point or pivots.dtype.is_complex or pivots.dtype is D.bool:
        raise RuntimeError(f"{n}: Expected pivots to be integers. Got "
                           f"{pivots.dtype.scalar_type}")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{n}: Expected LD.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots.shape)} instead")
    if B.dtype is not LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{B.dtype.scalar_type} and A of type {LD.dtype.scalar_type} "
                           f"instead.")
    k = LD.shape[-1]
    if B.shape[-2] != k:
        raise RuntimeError(f"Incompatible matrix sizes for {n}: each A matrix is {k} by {k} "
                           f"but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    batch = broadcast_shapes(tuple(LD.shape[:-2]), tuple(B.shape[:-2]))
    return TensorMeta(batch + tuple(B.shape[-2:]), B.dtype)


def _ldl_solve(LD, pivots, B, *, hermitian=False):
    r = _ldl_solve_meta(LD, pivots, B, hermitian=hermitian)
    batch = r.shape[:-2]
    if pivots.dtype is not D.int32:
        pivots = aten._to_copy.default(pivots, dtype=D.int32)
    piv = pivots if tuple(pivots.shape[:-1]) == tuple(batch) else \
        aten.expand.default(pivots, list(batch) + [LD.shape[-1]])
    return prims.ldl_solve(_expand_batch(LD, batch), piv, _expand_batch(B, batch), hermitian)


linalg_ldl_solve = defop("linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, "
                         "bool hermitian=False) -> Tensor", tags=ATEN, meta=_ldl_solve_meta,
                         decomposition=_ldl_solve)
