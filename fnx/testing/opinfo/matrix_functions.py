"""OpInfo entries of the matrix norms and products (fnx/ir/aten/matrix_functions.py).

References: ``np.linalg.norm`` / ``np.linalg.cond`` (their ord conventions are PyTorch's),
``np.linalg.matrix_power``, ``scipy.linalg.expm``, ``np.linalg.multi_dot``, ``np.cross``,
``np.linalg.tensorinv`` / ``tensorsolve``, ``np.vander`` (reversed), LAPACK's own
orgqr/ungqr (through ``scipy.linalg.lapack``) for the Householder product, and for geqrf
and ormqr the Householder QR written out in NumPy (LAPACK's dlarfg/zlarfg convention) and Q
formed explicitly.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sl
from scipy.linalg import lapack

from ...core import dtype as D
from ...ir.aten import matrix_functions as M
from ..database import INTS, ErrorInput, OpInfo, SampleInput, make_tensor, register
from .prims.linalg import (LINALG_DTYPES, LINALG_TOLS, each, from_numpy_as, geqrf_ref,
                           geqrf_samples, matrix, square)

T = LINALG_TOLS
DT = LINALG_DTYPES


def _wide(a):
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def _real(dtype):
    return np.float32 if dtype in (np.float32, np.complex64) else np.float64


# ----------------------------------------------------------------------------- norms

_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)


def _matrix_norm_samples(str_ord):
    def samples(info, device, dtype):
        for o in _ORDS:
            if isinstance(o, str) != str_ord:
                continue
            yield SampleInput(matrix((3, 4), dtype, device), o)
            yield SampleInput(matrix((2, 3, 3), dtype, device, transposed=True), o,
                              keepdim=True)
            yield SampleInput(matrix((3, 2, 4), dtype, device), o, [0, 2])
    return samples


def _np_matrix_norm(a, ord, dim=(-2, -1), keepdim=False):
    r = np.linalg.norm(_wide(a), ord, axis=tuple(dim), keepdims=keepdim)
    return np.asarray(r).astype(_real(a.dtype))


def _matrix_norm_ref(a, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):
    return _np_matrix_norm(a, ord, dim, keepdim)


def _matrix_norm_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((3,), D.float32, device), "fro"),
                     match="linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    yield ErrorInput(SampleInput(make_tensor((2, 2), D.float32, device), 3),
                     match="linalg.matrix_norm: Order 3 not supported.")
    yield ErrorInput(SampleInput(make_tensor((2, 2), D.float32, device), 1, [1, 1]),
                     match=r"linalg.matrix_norm: dims must be different. Got \(1, 1\)")


def _norm_samples(info, device, dtype):
    yield SampleInput(matrix((2, 3, 4), dtype, device))
    yield SampleInput(matrix((4,), dtype, device), 3)
    yield SampleInput(matrix((3, 4), dtype, device), -math.inf)
    yield SampleInput(matrix((2, 3, 4), dtype, device), None, [1, 2])
    yield SampleInput(matrix((2, 3, 4), dtype, device), 0.5, [1], True)
    yield SampleInput(matrix((3, 3), dtype, device), 2)


def _norm_ref(a, ord=None, dim=None, keepdim=False, dtype=None):
    if dim is None and ord is None:
        return np.asarray(np.linalg.norm(_wide(a).reshape(-1))).astype(_real(a.dtype))
    if dim is None:
        dim = list(range(a.ndim))
    r = np.linalg.norm(_wide(a), ord, axis=tuple(dim), keepdims=keepdim)
    return np.asarray(r).astype(_real(a.dtype))


def _norm_str_samples(info, device, dtype):
    yield SampleInput(matrix((3, 4), dtype, device), "fro")
    yield SampleInput(matrix((2, 3, 4), dtype, device), "nuc", [0, 2], True)


def _norm_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2, 2, 2), D.float32, device), 2),
                     match="linalg.norm: If dim is not specified but ord is, the input must be "
                           "1D or 2D. Got 3D.")
    yield ErrorInput(SampleInput(make_tensor((2, 2), D.float32, device), None, [0, 1, 1]),
                     match=r"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                           r"Got \[0, 1, 1\]")


def _cond_samples(str_p):
    def samples(info, device, dtype):
        for p in (None, "fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2):
            if isinstance(p, str) != str_p:
                continue
            yield SampleInput(square((2, 3, 3), dtype, device), p)
        if not str_p:
            yield SampleInput(matrix((3, 5), dtype, device))
    return samples


def _cond_ref(a, p=None):
    return np.asarray(np.linalg.cond(_wide(a), p)).astype(_real(a.dtype))


# ----------------------------------------------------------------------------- products

def _power_samples(info, device, dtype):
    for n in (0, 1, 2, 5):
        yield SampleInput(matrix((2, 3, 3), dtype, device) if dtype.is_floating_point or
                          dtype.is_complex else make_tensor((2, 3, 3), dtype, device, -2, 3), n)
    if dtype.is_floating_point or dtype.is_complex:
        yield SampleInput(square((3, 3), dtype, device), -2)


def _power_ref(a, n):
    if a.dtype.kind in "iu":
        return np.linalg.matrix_power(a, n)
    return np.linalg.matrix_power(_wide(a), n).astype(a.dtype)


def _expm_samples(info, device, dtype):
    yield SampleInput(matrix((3, 3), dtype, device))
    yield SampleInput(matrix((2, 4, 4), dtype, device, transposed=True))


def _expm_ref(a):
    (r,) = each(lambda m: (sl.expm(_wide(m)),), a, out_ndims=(2,))
    return r.astype(a.dtype)


def _multi_dot_samples(info, device, dtype):
    yield SampleInput([matrix((2, 3), dtype, device), matrix((3, 4), dtype, device)])
    yield SampleInput([matrix((3,), dtype, device), matrix((3, 5), dtype, device),
                       matrix((5, 2), dtype, device), matrix((2,), dtype, device)])
    yield SampleInput([matrix((6, 1), dtype, device), matrix((1, 6), dtype, device),
                       matrix((6, 2), dtype, device, transposed=True)])


def _multi_dot_ref(tensors):
    out = tensors[0].dtype
    return np.asarray(np.linalg.multi_dot([_wide(t) for t in tensors])).astype(out)


def _multi_dot_errors(info, device):
    yield ErrorInput(SampleInput([make_tensor((2, 3), D.float32, device)]),
                     match="multi_dot\\(\\): expected at least 2 tensors but got 1")
    yield ErrorInput(SampleInput([make_tensor((2, 3), D.float32, device),
                                  make_tensor((4, 5), D.float32, device)]),
                     match=r"multi_dot\(\): tensors 0 and 1 with shapes \[2, 3\] and \[4, 5\] "
                           r"cannot be multiplied")


def _cross_samples(info, device, dtype):
    yield SampleInput(matrix((4, 3), dtype, device), matrix((4, 3), dtype, device))
    yield SampleInput(matrix((3, 2), dtype, device), matrix((3, 1), dtype, device), dim=0)
    yield SampleInput(matrix((2, 1, 3), dtype, device), matrix((1, 4, 3), dtype, device))


def _cross_ref(a, b, dim=-1):
    return np.cross(a, b, axis=dim).astype(a.dtype)


def _vecdot_samples(info, device, dtype):
    yield SampleInput(matrix((4, 3), dtype, device), matrix((4, 3), dtype, device))
    yield SampleInput(matrix((3, 2), dtype, device), matrix((3, 1), dtype, device), dim=0)


def _vecdot_ref(x, y, dim=-1):
    return (np.conj(_wide(x)) * _wide(y)).sum(dim).astype(x.dtype)


def _householder_samples(info, device, dtype):
    def geqrf(shape):
        a = _wide(matrix(shape, dtype).numpy())
        f = lapack.zgeqrf if a.dtype.kind == "c" else lapack.dgeqrf
        mats, taus = [], []
        for m in a.reshape((-1,) + shape[-2:]):
            qr, tau, _, _ = f(m)
            mats.append(qr)
            taus.append(tau)
        return (from_numpy_as(np.stack(mats).reshape(shape), dtype, device),
                from_numpy_as(np.stack(taus).reshape(shape[:-2] + (min(shape[-2:]),)), dtype,
                              device))
    yield SampleInput(*geqrf((4, 3)))
    yield SampleInput(*geqrf((2, 3, 3)))
    a, tau = geqrf((5, 3))
    yield SampleInput(a, tau[..., :2])


def _householder_ref(a, tau):
    f = lapack.zungqr if a.dtype.kind == "c" else lapack.dorgqr
    flat = _wide(a).reshape((-1,) + a.shape[-2:])
    taus = _wide(tau).reshape((-1, tau.shape[-1]))
    out = []
    for m, t in zip(flat, taus):
        k = t.shape[0]
        n = m.shape[1]
        # orgqr builds from the first k reflections; columns beyond k come from I
        q = f(m[:, :n], np.concatenate([t, np.zeros(n - k, t.dtype)]))[0]
        out.append(q)
    return np.stack(out).reshape(a.shape).astype(a.dtype)


def _geqrf_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((3,), D.float32, device)),
                     match="torch.geqrf: input must have at least 2 dimensions")
    yield ErrorInput(SampleInput(make_tensor((3, 3), D.int64, device)), NotImplementedError,
                     match="not implemented for 'Long'")


def householder_q(a, tau):
    """The full ``m x m`` product ``H_1 ... H_k`` of one ``(a, tau)``."""
    a, tau = _wide(a), _wide(tau)
    m = a.shape[0]
    q = np.eye(m, dtype=a.dtype)
    for i, t in enumerate(tau):
        w = np.concatenate([np.zeros(i), [1], a[i + 1:, i]]).astype(a.dtype)
        q = q @ (np.eye(m) - t * np.outer(w, np.conj(w)))
    return q


def _ormqr_ref(a, tau, c, left=True, transpose=False):
    lead = a.shape[:-2]
    b = math.prod(lead)
    flat = zip(a.reshape((b,) + a.shape[-2:]), tau.reshape((b, tau.shape[-1])),
               c.reshape((b,) + c.shape[-2:]))
    out = []
    for m, t, x in flat:
        q = householder_q(m, t)
        q = np.conj(q.T) if transpose else q
        out.append(q @ _wide(x) if left else _wide(x) @ q)
    r = np.stack(out) if out else np.zeros((0,) + c.shape[-2:])
    return r.reshape(lead + c.shape[-2:]).astype(c.dtype)


def _ormqr_samples(info, device, dtype):
    for left, transpose in ((True, False), (True, True), (False, False), (False, True)):
        yield SampleInput(matrix((4, 3), dtype, device), matrix((3,), dtype, device),
                          matrix((4, 2) if left else (2, 4), dtype, device), left, transpose)
    yield SampleInput(matrix((2, 5, 3), dtype, device), matrix((2, 3), dtype, device),
                      matrix((2, 5, 4), dtype, device, transposed=True), transpose=True)
    yield SampleInput(matrix((3, 5), dtype, device), matrix((3,), dtype, device),
                      matrix((2, 3), dtype, device), left=False)
    yield SampleInput(matrix((3, 2), dtype, device), matrix((2,), dtype, device),
                      matrix((5, 3), dtype, device), left=False, transpose=True)


def _ormqr_errors(info, device):
    f = D.float32

    def t(*shape, dtype=f):
        return make_tensor(shape, dtype, device)
    n = "torch.ormqr: "
    yield ErrorInput(SampleInput(t(3), t(1), t(3, 3)), match=n + "input must have at least 2")
    yield ErrorInput(SampleInput(t(3, 2), t(3), t(3, 3)),
                     match=n + r"tau.shape\[-1\] must be equal to min\(other.shape\[-2\]")
    yield ErrorInput(SampleInput(t(3, 2), t(2), t(4, 3)),
                     match=n + r"other.shape\[-2\] must be equal to input.shape\[-2\]")
    yield ErrorInput(SampleInput(t(3, 2), t(2), t(3, 5), False),
                     match=n + r"other.shape\[-1\] must be equal to input.shape\[-2\]")
    yield ErrorInput(SampleInput(t(2, 3, 2), t(3, 2), t(2, 3, 3)),
                     match=n + r"Expected batch dimensions of tau .* but got \[3\]")
    yield ErrorInput(SampleInput(t(2, 3, 2), t(2, 2), t(1, 3, 3)),
                     match=n + r"Expected batch dimensions of other .* but got \[1\]")
    yield ErrorInput(SampleInput(t(3, 3, 2), t(2), t(3, 5)),
                     match=n + "Expected tau to have one dimension less than input")
    yield ErrorInput(SampleInput(t(3, 2), t(2, dtype=D.float64), t(3, 3)),
                     match=n + "Expected input and tau to have the same dtype, but input has "
                               "dtypeFloat and tau has dtype Double")
    yield ErrorInput(SampleInput(t(3, 2), t(2), t(3, 3, dtype=D.float64)),
                     match=n + "Expected input and other to have the same dtype")


def _tensorinv_samples(info, device, dtype):
    yield SampleInput(from_numpy_as(
        square((6, 6), dtype).numpy().reshape(2, 3, 6), dtype, device), 2)
    yield SampleInput(from_numpy_as(
        square((4, 4), dtype).numpy().reshape(4, 2, 2), dtype, device), 1)


def _tensorinv_ref(a, ind=2):
    return np.linalg.tensorinv(_wide(a), ind).astype(a.dtype)


def _tensorsolve_samples(info, device, dtype):
    a = square((6, 6), dtype).numpy()
    yield SampleInput(from_numpy_as(a.reshape(2, 3, 6), dtype, device),
                      matrix((2, 3), dtype, device))
    yield SampleInput(from_numpy_as(a.reshape(6, 2, 3), dtype, device),
                      matrix((2, 3), dtype, device), [0])


def _tensorsolve_ref(a, b, dims=None):
    return np.linalg.tensorsolve(_wide(a), _wide(b), axes=dims).astype(a.dtype)


def _vander_samples(info, device, dtype):
    if dtype.is_floating_point or dtype.is_complex:
        yield SampleInput(matrix((4,), dtype, device))
        yield SampleInput(matrix((2, 3), dtype, device), N=5)
    else:
        yield SampleInput(make_tensor((4,), dtype, device, -3, 4))
        yield SampleInput(make_tensor((2, 3), dtype, device, -3, 4), N=2)


def _vander_ref(x, N=None):
    n = x.shape[-1] if N is None else N
    flat = x.reshape(-1, x.shape[-1])
    r = np.stack([np.vander(v, n, increasing=True) for v in flat]) if flat.size else \
        np.zeros((0, x.shape[-1], n), x.dtype)
    return r.reshape(x.shape + (n,)).astype(np.int64 if x.dtype.kind in "iu" else x.dtype)


_NO_INT = {"grad": "integer matrices"}
register(
    OpInfo(M.linalg_matrix_norm, _matrix_norm_ref, DT, _matrix_norm_samples(False), tols=T,
           error_inputs=_matrix_norm_errors,
           skips={"grad": "inf/1-norms have ties at random points; the 2-norms are smooth "
                          "only with distinct singular values: checked in the str_ord and "
                          "norm entries"}),
    OpInfo(M.linalg_matrix_norm_str_ord, _matrix_norm_ref, DT, _matrix_norm_samples(True),
           tols=T),
    OpInfo(M.linalg_norm, _norm_ref, DT, _norm_samples, tols=T, error_inputs=_norm_errors),
    OpInfo(M.linalg_norm_ord_str, _norm_ref, DT, _norm_str_samples, tols=T),
    OpInfo(M.linalg_cond, _cond_ref, DT, _cond_samples(False), tols=T),
    OpInfo(M.linalg_cond_p_str, _cond_ref, DT, _cond_samples(True), tols=T),
    OpInfo(M.matrix_power, _power_ref, DT + INTS[:2], _power_samples, tols=T),
    OpInfo(M.linalg_matrix_power, _power_ref, DT, _power_samples, tols=T),
    OpInfo(M.matrix_exp, _expm_ref, DT, _expm_samples, tols=T),
    OpInfo(M.linalg_matrix_exp, _expm_ref, DT, _expm_samples, tols=T),
    OpInfo(M.linalg_multi_dot, _multi_dot_ref, DT, _multi_dot_samples, tols=T,
           error_inputs=_multi_dot_errors),
    OpInfo(M.linalg_cross, _cross_ref, DT, _cross_samples, tols=T),
    OpInfo(M.linalg_vecdot, _vecdot_ref, DT, _vecdot_samples, tols=T),
    OpInfo(M.linalg_householder_product, _householder_ref, DT, _householder_samples, tols=T),
    OpInfo(M.geqrf, geqrf_ref, DT, geqrf_samples, tols=T, error_inputs=_geqrf_errors,
           skips={"grad": "PyTorch defines no derivative (a backward raises NotImplementedError, "
                          "as there: tests/test_geqrf_ormqr.py)"}),
    OpInfo(M.ormqr, _ormqr_ref, DT, _ormqr_samples, tols=T, error_inputs=_ormqr_errors),
    OpInfo(M.linalg_tensorinv, _tensorinv_ref, DT, _tensorinv_samples, tols=T),
    OpInfo(M.linalg_tensorsolve, _tensorsolve_ref, DT, _tensorsolve_samples, tols=T),
    OpInfo(M.linalg_vander, _vander_ref, DT + INTS[:2], _vander_samples, tols=T),
)
