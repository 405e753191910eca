"""OpInfo entries for the products (fnx/ir/aten/linalg.py): mm, bmm, addmm, dot, mv,
matmul, outer, linear, baddbmm, tensordot, einsum.

The references restate PyTorch's rules: products never promote (both operands have one
dtype; integer products stay integer and wrap around), bool products are refused,
``addmm``/``baddbmm`` compute ``beta * self + alpha * product`` and ignore ``self``
entirely when ``beta == 0`` (its NaN and inf do not propagate), ``matmul`` follows the
1-D and batch-broadcasting rules, and ``outer`` is a broadcast multiply (it promotes).
Floating references accumulate in float64 and round once.

Samples: empty contractions and empty outputs, 0-dim bias, broadcast bias, transposed
and strided operands, every matmul rank combination.
"""
from __future__ import annotations

import numpy as np

import fnx

from ...core import dtype as D
from ...ir.aten import linalg as L
from ..database import FLOATS, INTS, ErrorInput, OpInfo, SampleInput, make_tensor, register
from ..reference_dtypes import category, pointwise

NUMERIC = FLOATS + INTS
# a product of k terms in half precision: the reference rounds a float64 result, the
# kernels a float32 one; int8/uint8 wrap around (the same modulo 256 either way)
TOLS = {D.float16: (2e-3, 2e-3), D.bfloat16: (1.6e-2, 1e-2), D.float32: (1e-5, 1e-4)}


def _wide(a):
    c = category(a.dtype)
    return a.astype(np.float64) if c == 2 else a.astype(np.complex128) if c == 3 else a


def _product(fn):
    """A reference for a product of same-dtype operands: computed wide, rounded once."""
    def ref(*arrays, **kw):
        out = arrays[0].dtype
        with np.errstate(all="ignore"):
            r = fn(*(_wide(a) if isinstance(a, np.ndarray) else a for a in arrays), **kw)
        return np.asarray(r).astype(out)
    return ref


def _scale(s, dtype):
    # PyTorch converts beta/alpha to the element type: integer products truncate them
    return s if category(dtype) >= 2 else int(s)


def _addmm(bias, a, b, *, beta=1, alpha=1):
    beta, alpha = _scale(beta, bias.dtype), _scale(alpha, bias.dtype)
    prod = np.matmul(a, b)
    if beta == 0:               # self is not read: nan/inf in it do not propagate
        return alpha * prod
    return beta * bias + alpha * prod


def _linear(x, w, b=None):
    r = np.matmul(x, w.T)
    return r if b is None else r + b


def _tensordot(a, b, dims_self, dims_other):
    return np.tensordot(a, b, axes=(list(dims_self), list(dims_other)))


def _einsum(equation, tensors):
    with np.errstate(all="ignore"):
        out = tensors[0].dtype
        r = np.einsum(equation, *(_wide(t) for t in tensors))
    return np.asarray(r).astype(out)


# --------------------------------------------------------------------------- samples

def _t(shape, dtype, device, **kw):
    lo, hi = (-3, 4) if category(dtype.numpy) == 1 else (None, None)
    if dtype is D.uint8:
        lo = 0
    return make_tensor(shape, dtype, device, low=lo, high=hi, **kw)


def _full(shape, value, dtype, device):
    return fnx.full(shape, float(value), dtype=dtype, device=device)


def _mm_samples(info, device, dtype):
    def t(*shape, **kw):
        return _t(shape, dtype, device, **kw)
    yield SampleInput(t(3, 4), t(4, 5))
    yield SampleInput(t(1, 1), t(1, 1))
    yield SampleInput(t(0, 3), t(3, 2))
    yield SampleInput(t(2, 0), t(0, 3))
    yield SampleInput(t(3, 2), t(2, 0))
    yield SampleInput(t(4, 3).t(), t(4, 5, noncontiguous=True))


def _bmm_samples(info, device, dtype):
    def t(*shape, **kw):
        return _t(shape, dtype, device, **kw)
    yield SampleInput(t(2, 3, 4), t(2, 4, 5))
    yield SampleInput(t(0, 3, 4), t(0, 4, 5))
    yield SampleInput(t(2, 3, 0), t(2, 0, 5))
    yield SampleInput(t(2, 4, 3).transpose(1, 2), t(2, 4, 5, noncontiguous=True))


def _addmm_samples(info, device, dtype):
    def t(*shape, **kw):
        return _t(shape, dtype, device, **kw)
    scales = [(1, 1), (2, 3), (0, 1), (1, 0), (-1 if dtype.is_signed else 3, 2)]
    if dtype.is_floating_point:
        scales += [(0.5, 1.5)]
    biases = [(3, 5), (5,), (1, 5), (3, 1), ()]
    for i, (beta, alpha) in enumerate(scales):
        yield SampleInput(t(*biases[i % len(biases)]), t(3, 4), t(4, 5), beta=beta,
                          alpha=alpha)
    if not dtype.is_floating_point:     # float scales truncate to the integer type
        yield SampleInput(t(3, 5), t(3, 4), t(4, 5), beta=2.5, alpha=1.5)
    yield SampleInput(t(0, 2), t(0, 3), t(3, 2))
    yield SampleInput(t(2, 2), t(2, 0), t(0, 2), beta=2)
    yield SampleInput(t(4, 3).t(), t(3, 4, noncontiguous=True), t(4, 4))
    if dtype.is_floating_point:         # beta=0: nan/inf in self must not propagate
        yield SampleInput(_full((3, 5), "nan", dtype, device), t(3, 4), t(4, 5), beta=0)
        yield SampleInput(_full((3, 5), "nan", dtype, device), t(3, 4), t(4, 5), beta=0,
                          alpha=2)
        yield SampleInput(_full((5,), "inf", dtype, device), t(3, 4), t(4, 5), beta=0)


def _baddbmm_samples(info, device, dtype):
    def t(*shape, **kw):
        return _t(shape, dtype, device, **kw)
    scales = [(1, 1), (2, 3), (0, 1), (1, 0)]
    if dtype.is_floating_point:
        scales += [(0.5, 1.5)]
    biases = [(2, 3, 5), (5,), (1, 3, 1), (), (3, 5)]
    for i, (beta, alpha) in enumerate(scales):
        yield SampleInput(t(*biases[i % len(biases)]), t(2, 3, 4), t(2, 4, 5), beta=beta,
                          alpha=alpha)
    yield SampleInput(t(0, 2, 2), t(0, 2, 3), t(0, 3, 2))
    if dtype.is_floating_point:
        yield SampleInput(_full((2, 3, 5), "nan", dtype, device), t(2, 3, 4), t(2, 4, 5),
                          beta=0)


def _dot_samples(info, device, dtype):
    for n in (5, 1, 0):
        yield SampleInput(_t((n,), dtype, device), _t((n,), dtype, device))
    yield SampleInput(_t((4,), dtype, device, noncontiguous=True), _t((4,), dtype, device))


def _mv_samples(info, device, dtype):
    yield SampleInput(_t((3, 4), dtype, device), _t((4,), dtype, device))
    yield SampleInput(_t((0, 4), dtype, device), _t((4,), dtype, device))
    yield SampleInput(_t((3, 0), dtype, device), _t((0,), dtype, device))
    yield SampleInput(_t((4, 3), dtype, device).t(), _t((4,), dtype, device,
                                                          noncontiguous=True))


MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((5, 2, 3), (3,)), ((5, 2, 3), (3, 4)), ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)), ((1, 2, 3), (5, 3, 4)), ((6, 1, 2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (1, 4, 3, 2)), ((0, 2, 3), (3, 4)), ((2, 0), (0, 3)), ((0,), (0,)),
    ((3,), (2, 1, 3, 1)),
]


def _matmul_samples(info, device, dtype):
    for s1, s2 in MATMUL_SHAPES:
        yield SampleInput(_t(s1, dtype, device), _t(s2, dtype, device))
    yield SampleInput(_t((4, 3), dtype, device).t(), _t((4, 5), dtype, device,
                                                          noncontiguous=True))


def _outer_samples(info, device, dtype):
    yield SampleInput(_t((3,), dtype, device), _t((4,), dtype, device))
    yield SampleInput(_t((0,), dtype, device), _t((2,), dtype, device))
    yield SampleInput(_t((3,), dtype, device, noncontiguous=True), _t((1,), dtype, device))
    other = D.float32 if dtype is not D.float32 else D.int64
    yield SampleInput(_t((3,), dtype, device), _t((2,), other, device))     # promotes


def _linear_samples(info, device, dtype):
    def t(*shape, **kw):
        return _t(shape, dtype, device, **kw)
    yield SampleInput(t(3, 4), t(5, 4), t(5))
    yield SampleInput(t(3, 4), t(5, 4))
    yield SampleInput(t(2, 3, 4), t(5, 4), t(5))
    yield SampleInput(t(4), t(5, 4), t(5))
    yield SampleInput(t(3, 4), t(4), t())
    yield SampleInput(t(0, 4), t(5, 4), t(5))
    yield SampleInput(t(4, 3).t(), t(5, 4, noncontiguous=True), t(1))


def _tensordot_samples(info, device, dtype):
    def t(*shape):
        return _t(shape, dtype, device)
    yield SampleInput(t(3, 4, 5), t(4, 3, 2), [0, 1], [1, 0])
    yield SampleInput(t(3, 4), t(4, 5), [1], [0])
    yield SampleInput(t(3, 4), t(5, 2), [], [])
    yield SampleInput(t(2, 3, 4), t(4, 3), [-1, -2], [0, 1])
    yield SampleInput(t(0, 3), t(3, 2), [1], [0])


EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(2,), (3,)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("ij->ji", [(2, 3)]),
    ("ijk->kji", [(2, 3, 4)]), ("iij->j", [(3, 3, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("...ij,...jk", [(5, 2, 3), (3, 4)]),
    ("...ij,...jk->...ik", [(1, 2, 3), (4, 3, 2)]), ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("ab,bc,ca->", [(2, 3), (3, 4), (4, 2)]), ("ij,k->", [(2, 3), (4,)]),
    ("ij,jk->ik", [(0, 3), (3, 2)]), ("ij,jk->ik", [(2, 0), (0, 3)]), ("i,->i", [(3,), ()]),
]


def _einsum_samples(info, device, dtype):
    for eq, shapes in EINSUM:
        yield SampleInput(eq, [_t(s, dtype, device) for s in shapes])


# --------------------------------------------------------------------------- error inputs

def _f(shape, device, dtype=D.float32):
    return make_tensor(shape, dtype, device)


def _mm_errors(info, device):
    yield ErrorInput(SampleInput(_f((2, 3), device), _f((4, 2), device)), RuntimeError,
                     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x2\)")
    yield ErrorInput(SampleInput(_f((2, 3), device), _f((3, 2), device, D.float64)),
                     RuntimeError, "expected m1 and m2 to have the same dtype")
    yield ErrorInput(SampleInput(_f((2,), device), _f((2, 2), device)), RuntimeError,
                     "self must be a matrix")
    yield ErrorInput(SampleInput(_f((2, 2), device, D.bool), _f((2, 2), device, D.bool)),
                     RuntimeError, "not implemented for 'Bool'", meta=False)


def _bmm_errors(info, device):
    yield ErrorInput(SampleInput(_f((2, 2, 3), device), _f((2, 4, 2), device)), RuntimeError,
                     "Expected size for first two dimensions of batch2 tensor")
    yield ErrorInput(SampleInput(_f((2, 3), device), _f((3, 2), device)), RuntimeError,
                     "batch1 must be a 3D tensor")


def _addmm_errors(info, device):
    yield ErrorInput(SampleInput(_f((4,), device), _f((2, 3), device), _f((3, 5), device)),
                     RuntimeError, "the expanded size of self")
    yield ErrorInput(SampleInput(_f((2, 5), device), _f((2, 3), device),
                                 _f((4, 5), device)), RuntimeError, "cannot be multiplied")


def _dot_errors(info, device):
    yield ErrorInput(SampleInput(_f((3,), device), _f((4,), device)), RuntimeError,
                     "inconsistent tensor size")
    yield ErrorInput(SampleInput(_f((3,), device), _f((3,), device, D.float64)),
                     RuntimeError, "dot : expected both vectors to have same dtype")
    yield ErrorInput(SampleInput(_f((2, 3), device), _f((3,), device)), RuntimeError,
                     "1D tensors expected")
    yield ErrorInput(SampleInput(_f((3,), device, D.bool), _f((3,), device, D.bool)),
                     RuntimeError, "not implemented for 'Bool'", meta=False)


def _mv_errors(info, device):
    yield ErrorInput(SampleInput(_f((2, 3), device), _f((4,), device)), RuntimeError,
                     "size mismatch")


def _matmul_errors(info, device):
    yield ErrorInput(SampleInput(_f((), device), _f((3,), device)), RuntimeError,
                     "both arguments to matmul need to be at least 1D")
    yield ErrorInput(SampleInput(_f((2, 3), device), _f((4, 2), device)), RuntimeError,
                     "cannot be multiplied")
    yield ErrorInput(SampleInput(_f((2, 2, 3), device), _f((3, 3, 4), device)), RuntimeError,
                     "must match the size")


def _einsum_errors(info, device):
    yield ErrorInput(SampleInput("ij,jk", [_f((2, 3), device), _f((4, 5), device)]),
                     RuntimeError, "operands do not broadcast")
    yield ErrorInput(SampleInput("ij,jk", [_f((2, 3), device)]), RuntimeError,
                     "fewer operands were provided")
    yield ErrorInput(SampleInput("ij->k", [_f((2, 3), device)]), RuntimeError,
                     "output subscript k does not appear")


register(
    OpInfo(L.mm, _product(np.matmul), NUMERIC, _mm_samples, tols=TOLS,
           error_inputs=_mm_errors),
    OpInfo(L.bmm, _product(np.matmul), NUMERIC, _bmm_samples, tols=TOLS,
           error_inputs=_bmm_errors),
    OpInfo(L.addmm, _product(_addmm), NUMERIC, _addmm_samples, tols=TOLS,
           error_inputs=_addmm_errors),
    OpInfo(L.baddbmm, _product(_addmm), NUMERIC, _baddbmm_samples, tols=TOLS),
    OpInfo(L.dot, _product(np.dot), NUMERIC, _dot_samples, tols=TOLS,
           error_inputs=_dot_errors),
    OpInfo(L.mv, _product(np.matmul), NUMERIC, _mv_samples, tols=TOLS,
           error_inputs=_mv_errors),
    OpInfo(L.matmul, _product(np.matmul), NUMERIC, _matmul_samples, tols=TOLS,
           error_inputs=_matmul_errors),
    OpInfo(L.outer, pointwise(np.multiply.outer), NUMERIC + (D.bool,), _outer_samples,
           tols=TOLS),
    OpInfo(L.linear, _product(_linear), NUMERIC, _linear_samples, tols=TOLS),
    OpInfo(L.tensordot, _product(_tensordot), NUMERIC, _tensordot_samples, tols=TOLS),
    OpInfo(L.einsum, _einsum, NUMERIC, _einsum_samples, tols=TOLS,
           error_inputs=_einsum_errors),
)
