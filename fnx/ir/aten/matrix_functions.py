"""Matrix norms and products (``torch.linalg``): matrix_norm, norm, cond, matrix_power,
matrix_exp, multi_dot, cross, vecdot, householder_product (and ``torch.geqrf``/``ormqr``, the
compact Householder QR and its product with a matrix), tensorinv, tensorsolve, vander.

Each decomposes to ordinary ops and the factorization prims: the spectral and nuclear
norms and the 2-norm condition number through the singular values, the other condition
numbers through an LU inverse, matrix_exp through ``prims.matrix_exp``.  Checks and
messages are PyTorch's.
"""
from __future__ import annotations

import math

from ...core import dtype as D
from ...ops import aten, prims
from ..dims import broadcast_shapes, wrap_dim
from ..grad_utils import conj
from ..registry import TensorMeta, defop
from .factorizations import _inv_ex, _solve_ex, check_linalg, eye_like, svdvals_of

__all__ = []

ATEN = ()
_INF = math.inf


def _real(dtype):
    return dtype.to_real() if dtype.is_complex else dtype


# ----------------------------------------------------------------------------- matrix_norm

_NUMERIC_ORDS = (_INF, -_INF, 1, -1, 2, -2)


def _matrix_dims(name, A, dim):
    if len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    d0, d1 = (wrap_dim(d, A.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _norm_dtype(name, A, dtype):
    if dtype is None:
        return A.dtype
    if A.dtype.is_complex and not dtype.is_complex:
        raise RuntimeError(f"{name}: dtype should be complex for complex inputs, but got "
                           f"{dtype.scalar_type}")
    if not A.dtype.is_complex and dtype.is_complex:
        raise RuntimeError(f"{name}: dtype should be real for real inputs, but got "
                           f"{dtype.scalar_type}")
    return dtype


def _matrix_norm_meta(self, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    name = "linalg.matrix_norm"
    if self.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {self.dtype.scalar_type}")
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"{name}: Order {ord} not supported.")
    elif ord not in _NUMERIC_ORDS:
        raise RuntimeError(f"{name}: Order {ord} not supported.")
    d0, d1 = _matrix_dims(name, self, list(dim))
    out = _real(_norm_dtype(name, self, dtype))
    shape = [1 if i in (d0, d1) else s for i, s in enumerate(self.shape)] if keepdim else \
        [s for i, s in enumerate(self.shape) if i not in (d0, d1)]
    return TensorMeta(tuple(shape), out)


def _matrix_norm(self, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    _matrix_norm_meta(self, ord, dim, keepdim, dtype=dtype)
    d0, d1 = _matrix_dims("linalg.matrix_norm", self, list(dim))
    A = self if dtype is None or dtype is self.dtype else \
        aten._to_copy.default(self, dtype=dtype)
    if ord == "fro":
        return aten.linalg_vector_norm.default(A, 2, [d0, d1], keepdim)
    if ord in ("nuc", 2, -2):
        rest = [i for i in range(A.ndim) if i not in (d0, d1)]
        s = svdvals_of(aten.permute.default(A, rest + [d0, d1]))
        r = (aten.sum.dim_IntList(s, [-1]) if ord == "nuc" else
             aten.amax.default(s, [-1]) if ord == 2 else aten.amin.default(s, [-1]))
        if keepdim:
            for d in sorted((d0, d1)):
                r = aten.unsqueeze.default(r, d)
        return r
    # 1 / -1: the largest / smallest column sum; inf / -inf: row sums
    over, then = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = aten.linalg_vector_norm.default(A, 1, [over], True)
    r = (aten.amax.default if ord > 0 else aten.amin.default)(sums, [then], True)
    return r if keepdim else aten.squeeze.dims(r, sorted((d0, d1)))


linalg_matrix_norm = defop(
    "linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2,-1], bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor", tags=ATEN, meta=_matrix_norm_meta,
    decomposition=_matrix_norm)
linalg_matrix_norm_str_ord = defop(
    "linalg_matrix_norm.str_ord(Tensor self, str ord='fro', int[] dim=[-2,-1], "
    "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", tags=ATEN,
    meta=_matrix_norm_meta, decomposition=_matrix_norm)


# ----------------------------------------------------------------------------- norm

def _norm_plan(self, ord, dim):
    """('vector' | 'matrix', ord, dims) for linalg.norm's arguments (PyTorch's rules)."""
    name = "linalg.norm"
    if dim is not None:
        dim = [dim] if isinstance(dim, int) else list(dim)
        if len(dim) not in (1, 2):
            raise RuntimeError(f"{name}: If dim is specified, it must be of length 1 or 2. "
                               f"Got {dim}")
    elif ord is not None:
        if self.ndim not in (1, 2):
            raise RuntimeError(f"{name}: If dim is not specified but ord is, the input must "
                               f"be 1D or 2D. Got {self.ndim}D.")
        dim = list(range(self.ndim))
    if isinstance(ord, str):
        if dim is None:
            dim = [-2, -1]
        if len(dim) != 2:
            raise RuntimeError(f"{name}: If dim is specified, it must be of length 1 or 2. "
                               f"Got {dim}")
        return "matrix", ord, dim
    if dim is not None and len(dim) == 2:
        return "matrix", "fro" if ord is None else ord, dim
    return "vector", 2 if ord is None else ord, dim


def _norm_meta(self, ord=None, dim=None, keepdim=False, *, dtype=None):
    kind, o, dims = _norm_plan(self, ord, dim)
    if kind == "matrix":
        return _matrix_norm_meta(self, o, dims, keepdim, dtype=dtype)
    return aten.linalg_vector_norm.default.meta(self, o, dims, keepdim, dtype=dtype)


def _norm(self, ord=None, dim=None, keepdim=False, *, dtype=None):
    kind, o, dims = _norm_plan(self, ord, dim)
    if kind == "matrix":
        return _matrix_norm(self, o, dims, keepdim, dtype=dtype)
    return aten.linalg_vector_norm.default(self, o, dims, keepdim, dtype=dtype)


linalg_norm = defop("linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, "
                    "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", tags=ATEN,
                    meta=_norm_meta, decomposition=_norm)
linalg_norm_ord_str = defop("linalg_norm.ord_str(Tensor self, str ord, int[1]? dim=None, "
                            "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                            tags=ATEN, meta=_norm_meta, decomposition=_norm)


# ----------------------------------------------------------------------------- cond

_COND_ORDS = (None, "fro", "nuc", _INF, -_INF, 1, -1, 2, -2)


def _cond_meta(self, p=None):
    if p not in _COND_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    check_linalg(f"linalg.cond(ord={p})" if p not in (None, 2, -2) else "linalg.cond",
                 self, square=p not in (None, 2, -2))
    return TensorMeta(tuple(self.shape[:-2]), _real(self.dtype))


def _cond(self, p=None):
    _cond_meta(self, p)
    if p in (None, 2, -2):
        s = svdvals_of(self)
        hi, lo = aten.amax.default(s, [-1]), aten.amin.default(s, [-1])
        return aten.div.Tensor(hi, lo) if p != -2 else aten.div.Tensor(lo, hi)
    if self.shape[-1] == 0:
        return aten.zeros.default(list(self.shape[:-2]), dtype=_real(self.dtype),
                                  device=self.device)
    inv, info = _inv_ex(self)
    r = aten.mul.Tensor(_matrix_norm(self, p), _matrix_norm(inv, p))
    # a singular matrix has an infinite condition number (its LU inverse may be nan)
    return aten.where.self(aten.gt.Scalar(info, 0), _INF, r)


linalg_cond = defop("linalg_cond(Tensor self, Scalar? p=None) -> Tensor", tags=ATEN,
                    meta=_cond_meta, decomposition=_cond)
linalg_cond_p_str = defop("linalg_cond.p_str(Tensor self, str p) -> Tensor", tags=ATEN,
                          meta=_cond_meta, decomposition=_cond)


# ----------------------------------------------------------------------------- matrix_power

def _matrix_power_meta(self, n):
    check_linalg("linalg.matrix_power", self, square=True, floating=False)
    if n < 0:
        check_linalg("linalg.inv", self, square=True)
    return TensorMeta(tuple(self.shape), self.dtype)


def _matrix_power(self, n):
    _matrix_power_meta(self, n)
    if n == 0:          # I, still a (constant) function of A for autograd, as PyTorch's
        eye = eye_like(self.shape[-1], self, tuple(self.shape[:-2]))
        return aten.where.self(aten.ones_like.default(eye, dtype=D.bool), eye, self)
    a = self
    if n < 0:
        a, _ = _inv_ex(self, check_errors=True, api="linalg.inv")
        n = -n
    result = None
    while n:            # binary exponentiation
        if n & 1:
            result = a if result is None else aten.matmul.default(result, a)
        n >>= 1
        if n:
            a = aten.matmul.default(a, a)
    return aten.clone.default(result) if result is self else result


matrix_power = defop("matrix_power(Tensor self, int n) -> Tensor", tags=ATEN,
                     meta=_matrix_power_meta, decomposition=_matrix_power)
linalg_matrix_power = defop("linalg_matrix_power(Tensor self, int n) -> Tensor", tags=ATEN,
                            meta=_matrix_power_meta, decomposition=_matrix_power)


# ----------------------------------------------------------------------------- matrix_exp

def _matrix_exp_meta(self):
    check_linalg("linalg.matrix_exp", self, square=True)
    return TensorMeta(tuple(self.shape), self.dtype)


def _matrix_exp(self):
    _matrix_exp_meta(self)
    return prims.matrix_exp(self)


matrix_exp = defop("matrix_exp(Tensor self) -> Tensor", tags=ATEN, meta=_matrix_exp_meta,
                   decomposition=_matrix_exp)
linalg_matrix_exp = defop("linalg_matrix_exp(Tensor self) -> Tensor", tags=ATEN,
                          meta=_matrix_exp_meta, decomposition=_matrix_exp)


# ----------------------------------------------------------------------------- multi_dot

def _multi_dot_meta(tensors):
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                           f"{first.ndim}D")
    if last.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got "
                           f"{last.ndim}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype is not first.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {first.dtype.cpp_type} and tensor {i} "
                               f"{t.dtype.cpp_type}")
    shapes = [tuple(t.shape) for t in tensors]
    mats = [(1,) + shapes[0] if first.ndim == 1 else shapes[0]] + shapes[1:-1] + \
        [shapes[-1] + (1,) if last.ndim == 1 else shapes[-1]]
    for i in range(n - 1):
        if mats[i][1] != mats[i + 1][0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(shapes[i])} and {list(shapes[i + 1])} cannot be "
                               f"multiplied")
    out = ((mats[0][0],) if first.ndim == 2 else ()) + ((mats[-1][1],) if last.ndim == 2 else ())
    return TensorMeta(out, first.dtype), mats


def _chain_order(dims):
    """The cheapest parenthesization of a matrix chain (dynamic programming): split[i][j]."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _multi_dot(tensors):
    r, mats = _multi_dot_meta(tensors)
    ts = list(tensors)
    if ts[0].ndim == 1:
        ts[0] = aten.unsqueeze.default(ts[0], 0)
    if ts[-1].ndim == 1:
        ts[-1] = aten.unsqueeze.default(ts[-1], 1)
    split = _chain_order([m[0] for m in mats] + [mats[-1][1]])

    def chain(i, j):
        if i == j:
            return ts[i]
        k = split[i][j]
        return aten.mm.default(chain(i, k), chain(k + 1, j))
    return aten.reshape.default(chain(0, len(ts) - 1), list(r.shape))


linalg_multi_dot = defop("linalg_multi_dot(Tensor[] tensors) -> Tensor", tags=ATEN,
                         meta=lambda tensors: _multi_dot_meta(tensors)[0],
                         decomposition=_multi_dot)


# ----------------------------------------------------------------------------- cross, vecdot

def _cross_meta(self, other, *, dim=-1):
    if self.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions. "
                           f"Got {self.ndim} and {other.ndim}")
    if self.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {self.dtype.scalar_type} but found "
                           f"{other.dtype.scalar_type}")
    shape = broadcast_shapes(tuple(self.shape), tuple(other.shape))
    d = wrap_dim(dim, len(shape))
    if self.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{self.shape[d]} and {other.shape[d]}")
    return TensorMeta(shape, self.dtype)


def _cross(self, other, *, dim=-1):
    r = _cross_meta(self, other, dim=dim)
    d = wrap_dim(dim, len(r.shape))
    a = aten.expand.default(self, list(r.shape))
    b = aten.expand.default(other, list(r.shape))
    x = [aten.select.int(a, d, i) for i in range(3)]
    y = [aten.select.int(b, d, i) for i in range(3)]

    def comp(i, j):
        return aten.sub.Tensor(aten.mul.Tensor(x[i], y[j]), aten.mul.Tensor(x[j], y[i]))
    return aten.stack.default([comp(1, 2), comp(2, 0), comp(0, 1)], d)


linalg_cross = defop("linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor",
                     tags=ATEN, meta=_cross_meta, decomposition=_cross)


def _vecdot_meta(x, y, *, dim=-1):
    n = "linalg.vecdot"
    if x.dtype is not y.dtype:
        raise RuntimeError(f"{n}: Expected x and y to have the same dtype, but found x of type "
                           f"{x.dtype.scalar_type} and y of type {y.dtype.scalar_type} "
                           f"instead")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"{n}: Expected a floating point or complex tensor as input. Got "
                           f"{x.dtype.scalar_type}")
    shape = broadcast_shapes(tuple(x.shape), tuple(y.shape))
    if not shape:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    d = wrap_dim(dim, len(shape))
    return TensorMeta(tuple(s for i, s in enumerate(shape) if i != d), x.dtype)


def _vecdot(x, y, *, dim=-1):
    r = _vecdot_meta(x, y, dim=dim)
    d = wrap_dim(dim, len(r.shape) + 1)
    return aten.sum.dim_IntList(aten.mul.Tensor(conj(x), y), [d])


linalg_vecdot = defop("linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor", tags=ATEN,
                      meta=_vecdot_meta, decomposition=_vecdot)


# ----------------------------------------------------------------------------- householder

# the checks householder_product and ormqr share, with PyTorch's words
def _check_tau_rank(n, input, tau):
    if input.ndim - tau.ndim != 1:
        raise RuntimeError(f"{n}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.ndim} and input.ndim is equal to "
                           f"{input.ndim}")


def _check_batch(n, arg, lead, input):
    if tuple(lead) != tuple(input.shape[:-2]):
        raise RuntimeError(f"{n}: Expected batch dimensions of {arg} to be equal to "
                           f"input.shape[:-2], but got {list(lead)}")


def _householder_meta(input, tau):
    n = "torch.linalg.householder_product"
    if input.ndim < 2:
        raise RuntimeError(f"{n}: input must have at least 2 dimensions.")
    if input.shape[-2] < input.shape[-1]:
        raise RuntimeError(f"{n}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if input.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{n}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    _check_tau_rank(n, input, tau)
    _check_batch(n, "tau", tau.shape[:-1], input)
    if tau.dtype is not input.dtype:
        raise RuntimeError(f"{n}: tau dtype {tau.dtype.scalar_type} does not match input "
                           f"dtype {input.dtype.scalar_type}")
    check_linalg(n, input)
    return TensorMeta(tuple(input.shape), input.dtype)


def _householder(input, tau):
    """Q = H_1 ... H_k with H_i = I - tau_i v_i v_i^H, v_i the i-th column of ``input``
    below the diagonal with 1 on it; the first n columns."""
    _householder_meta(input, tau)
    m, n = input.shape[-2:]
    batch = tuple(input.shape[:-2])
    q = eye_like(m, input, batch)
    rows = aten.arange.default(m, dtype=D.int64, device=input.device)
    for i in range(tau.shape[-1]):
        col = aten.select.int(input, -1, i)                                  # [..., m]
        v = aten.where.self(aten.lt.Scalar(rows, i), 0.0,
                            aten.where.self(aten.eq.Scalar(rows, i), 1.0, col))
        v = aten._to_copy.default(v, dtype=input.dtype) if v.dtype is not input.dtype else v
        qv = aten.matmul.default(q, aten.unsqueeze.default(v, -1))           # [..., m, 1]
        t = aten.unsqueeze.default(aten.unsqueeze.default(aten.select.int(tau, -1, i), -1), -1)
        q = aten.sub.Tensor(q, aten.mul.Tensor(t, aten.matmul.default(
            qv, aten.unsqueeze.default(conj(v), -2))))
    return aten.slice.Tensor(q, -1, 0, n)


linalg_householder_product = defop("linalg_householder_product(Tensor input, Tensor tau) -> "
                                   "Tensor", tags=ATEN, meta=_householder_meta,
                                   decomposition=_householder)


# ----------------------------------------------------------------------------- geqrf/ormqr

def _no_kernel(name, dtype):
    return NotImplementedError(f"\"{name}_cpu\" not implemented for '{dtype.scalar_type}'")


def _geqrf_meta(self):
    if self.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if not (self.dtype.is_floating_point or self.dtype.is_complex) or \
            self.dtype in (D.float16, D.bfloat16):
        raise _no_kernel("geqrf", self.dtype)
    k = min(self.shape[-2:])
    return (TensorMeta(tuple(self.shape), self.dtype),
            TensorMeta(tuple(self.shape[:-2]) + (k,), self.dtype))


def _geqrf(self):
    _geqrf_meta(self)
    return prims.geqrf(self)


# LAPACK's compact QR (prims.geqrf); PyTorch defines no derivative, neither does the prim
geqrf = defop("geqrf(Tensor self) -> (Tensor a, Tensor tau)", tags=ATEN, meta=_geqrf_meta,
              decomposition=_geqrf)


def _ormqr_meta(self, input2, input3, left=True, transpose=False):
    n = "torch.ormqr"
    tau, other = input2, input3
    if self.ndim < 2:
        raise RuntimeError(f"{n}: input must have at least 2 dimensions.")
    if other.ndim < 2:
        raise RuntimeError(f"{n}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if other.shape[side] != self.shape[-2]:
        raise RuntimeError(f"{n}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.ndim < 1 or tau.shape[-1] != min(other.shape[side], self.shape[-1]):
        raise RuntimeError(f"{n}: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           f"input.shape[-1])")
    _check_tau_rank(n, self, tau)
    if self.ndim != other.ndim:
        raise RuntimeError(f"{n}: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {other.ndim} and input.ndim "
                           f"is equal to {self.ndim}")
    for arg, x, lead in (("tau", tau, tau.shape[:-1]), ("other", other, other.shape[:-2])):
        _check_batch(n, arg, lead, self)
        if x.dtype is not self.dtype:
            raise RuntimeError(f"{n}: Expected input and {arg} to have the same dtype, but "
                               f"input has dtype{self.dtype.scalar_type} and {arg} has dtype "
                               f"{x.dtype.scalar_type}")
    if not (self.dtype.is_floating_point or self.dtype.is_complex) or \
            self.dtype in (D.float16, D.bfloat16):
        raise _no_kernel("ormqr", self.dtype)
    return TensorMeta(tuple(other.shape), other.dtype)


def _reflector(input, i, rows):
    """v_i: column i of ``input`` below the diagonal, 1 on it, 0 above (``[..., m]``)."""
    col = aten.select.int(input, -1, i)
    v = aten.where.self(aten.lt.Scalar(rows, i), 0.0,
                        aten.where.self(aten.eq.Scalar(rows, i), 1.0, col))
    return aten._to_copy.default(v, dtype=input.dtype) if v.dtype is not input.dtype else v


def _ormqr(self, input2, input3, left=True, transpose=False):
    """op(Q) C (``left``) or C op(Q), Q = H_1 ... H_k, op(Q) = Q^H when ``transpose``:
    each reflection applied to C in turn (k rank-one updates, Q never formed)."""
    _ormqr_meta(self, input2, input3, left, transpose)
    tau, c = input2, input3
    rows = aten.arange.default(self.shape[-2], dtype=D.int64, device=self.device)
    k = tau.shape[-1]
    # Q C applies H_k first; Q^H C = H_k^H ... H_1^H C applies H_1^H first; on the right
    # the order flips
    order = range(k) if left == transpose else range(k - 1, -1, -1)
    for i in order:
        v = _reflector(self, i, rows)
        t = aten.select.int(tau, -1, i)
        t = conj(t) if transpose else t
        t = aten.unsqueeze.default(aten.unsqueeze.default(t, -1), -1)
        if left:        # C - t v (v^H C)
            vhc = aten.matmul.default(aten.unsqueeze.default(conj(v), -2), c)
            c = aten.sub.Tensor(c, aten.mul.Tensor(t, aten.matmul.default(
                aten.unsqueeze.default(v, -1), vhc)))
        else:           # C - t (C v) v^H
            cv = aten.matmul.default(c, aten.unsqueeze.default(v, -1))
            c = aten.sub.Tensor(c, aten.mul.Tensor(t, aten.matmul.default(
                cv, aten.unsqueeze.default(conj(v), -2))))
    return c


ormqr = defop("ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, "
              "bool transpose=False) -> Tensor", tags=ATEN, meta=_ormqr_meta,
              decomposition=_ormqr)


# ----------------------------------------------------------------------------- tensorinv/solve

def _tensorinv_meta(self, ind=2):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    a, b = math.prod(self.shape[:ind]), math.prod(self.shape[ind:])
    if a != b:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) "
                           f"== prod(self.shape[:ind]), but got {b} != {a}")
    check_linalg("linalg.inv", _Shape((a, b), self.dtype), square=True)
    return TensorMeta(tuple(self.shape[ind:]) + tuple(self.shape[:ind]), self.dtype)


class _Shape:
    """Just enough of a tensor (ndim, shape, dtype) for ``check_linalg``."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype, self.ndim = shape, dtype, len(shape)


def _tensorinv(self, ind=2):
    r = _tensorinv_meta(self, ind)
    n = math.prod(self.shape[:ind])
    inv, _ = _inv_ex(aten.reshape.default(self, [n, n]), check_errors=True, api="linalg.inv")
    return aten.reshape.default(inv, list(r.shape))


linalg_tensorinv = defop("linalg_tensorinv(Tensor self, int ind=2) -> Tensor", tags=ATEN,
                         meta=_tensorinv_meta, decomposition=_tensorinv)


def _tensorsolve_plan(self, other, dims):
    if dims is not None:
        moved = [wrap_dim(d, self.ndim) for d in dims]
        perm = [i for i in range(self.ndim) if i not in moved] + moved
        shape = tuple(self.shape[i] for i in perm)
    else:
        perm, shape = None, tuple(self.shape)
    out = shape[other.ndim:]
    rows, cols = math.prod(other.shape), math.prod(out)
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement "
                           f"prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), "
                           f"but got {cols} != {math.prod(shape[:other.ndim])}")
    if tuple(shape[:other.ndim]) != tuple(other.shape):
        raise RuntimeError(f"Expected self.shape[:other.ndim] == other.shape, but got "
                           f"{list(shape[:other.ndim])} and {list(other.shape)}")
    check_linalg("linalg.solve", _Shape((rows, cols), self.dtype), square=True)
    if self.dtype is not other.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {self.dtype.scalar_type} and B of type "
                           f"{other.dtype.scalar_type} instead")
    return perm, out, rows


def _tensorsolve_meta(self, other, dims=None):
    _, out, _ = _tensorsolve_plan(self, other, dims)
    return TensorMeta(out, self.dtype)


def _tensorsolve(self, other, dims=None):
    perm, out, n = _tensorsolve_plan(self, other, dims)
    a = self if perm is None else aten.permute.default(self, perm)
    x, _ = _solve_ex(aten.reshape.default(a, [n, n]), aten.reshape.default(other, [n]),
                     check_errors=True, api="torch.linalg.solve")
    return aten.reshape.default(x, list(out))


linalg_tensorsolve = defop("linalg_tensorsolve(Tensor self, Tensor other, int[]? dims=None) -> "
                           "Tensor", tags=ATEN, meta=_tensorsolve_meta,
                           decomposition=_tensorsolve)


# ----------------------------------------------------------------------------- vander

def _vander_meta(x, *, N=None):
    if x.ndim < 1:
        raise RuntimeError("N must be greater than 1.")
    if x.dtype is D.bool:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           "tensors, but got Bool")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    # integers widen to int64, as the cumulative product does
    out = x.dtype if x.dtype.is_floating_point or x.dtype.is_complex else D.int64
    return TensorMeta(tuple(x.shape) + (n,), out)


def _vander(x, *, N=None):
    """Columns x^0, x^1, ..., x^(N-1): a cumulative product of copies of x after ones."""
    r = _vander_meta(x, N=N)
    n = r.shape[-1]
    ones = aten.ones.default(list(x.shape) + [1], dtype=r.dtype, device=x.device)
    powers = aten.cumprod.default(aten.expand.default(aten.unsqueeze.default(x, -1),
                                                      list(x.shape) + [n - 1]), -1)
    return aten.cat.default([ones, powers], -1)


linalg_vander = defop("linalg_vander(Tensor x, *, SymInt? N=None) -> Tensor", tags=ATEN,
                      meta=_vander_meta, decomposition=_vander)

