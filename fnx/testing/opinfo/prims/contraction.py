"""OpInfo entries of the contraction prims (fnx/ir/prims/contraction.py): dot_general
against ``np.einsum`` in float64 (the kernel is one batched matmul), conv_general against
a loop over output positions of windows of the dilated, padded input (the kernel takes
strided sliding windows)."""
from __future__ import annotations

import itertools

import numpy as np

from ....core import dtype as D
from ....ir import prims as P
from ...database import FLOATS, ErrorInput, OpInfo, SampleInput, make_tensor, register
from ._common import ALL, is_float, wide
from .layout import pad_ref

_TOLS = {D.float16: (2e-3, 1e-2), D.bfloat16: (1.6e-2, 1e-1), D.float32: (1e-5, 1e-5)}


def _dot_samples(info, device, dtype):
    lo, hi = (-3, 4) if not is_float(dtype) else (None, None)

    def t(shape, **kw):
        return make_tensor(shape, dtype, device, low=lo, high=hi, **kw)
    yield SampleInput(t((3, 4)), t((4, 5)), [1], [0], [], [])               # matmul
    yield SampleInput(t((2, 3, 4)), t((2, 4, 5)), [2], [1], [0], [0])       # batched
    yield SampleInput(t((3,)), t((2,)), [], [], [], [])                     # outer
    yield SampleInput(t((4, 3)).t(), t((2, 4), noncontiguous=True), [1], [1], [], [])
    yield SampleInput(t((2, 0)), t((0, 3)), [1], [0], [], [])               # empty sum
    yield SampleInput(t((4, 2, 3)), t((3, 2, 5)), [2, 1], [0, 1], [], [])   # two dims


def _dot_ref(lhs, rhs, lc, rc, lb, rb):
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    ls = [next(letters) for _ in range(lhs.ndim)]
    rs = [next(letters) for _ in range(rhs.ndim)]
    for a, b in itertools.chain(zip(lc, rc), zip(lb, rb)):
        rs[b] = ls[a]
    out = [ls[d] for d in lb]
    out += [ls[d] for d in range(lhs.ndim) if d not in lc and d not in lb]
    out += [rs[d] for d in range(rhs.ndim) if d not in rc and d not in rb]
    spec = f"{''.join(ls)},{''.join(rs)}->{''.join(out)}"
    if lhs.dtype == np.bool_:
        r = np.einsum(spec, lhs.astype(np.int64), rhs.astype(np.int64)) != 0
        return r
    return np.einsum(spec, wide(lhs), wide(rhs)).astype(lhs.dtype)


def _dot_errors(info, device):
    a = make_tensor((3, 4), D.float32, device)
    yield ErrorInput(SampleInput(a, make_tensor((5, 2), D.float32, device), [1], [0], [], []),
                     RuntimeError, "prims.dot_general: contracting dims have different sizes")
    yield ErrorInput(SampleInput(a, make_tensor((4, 2), D.float64, device), [1], [0], [], []),
                     RuntimeError, "prims.dot_general: dtype mismatch")


def _conv_samples(info, device, dtype):
    def t(shape, **kw):
        return make_tensor(shape, dtype, device, low=-2, high=3, **kw)
    # lhs, rhs, strides, pad low, pad high, lhs dilation, rhs dilation, groups
    yield SampleInput(t((2, 3, 7)), t((4, 3, 3)), [1], [0], [0], [1], [1], 1)
    yield SampleInput(t((1, 4, 6, 5)), t((6, 2, 3, 2)), [2, 1], [1, 0], [1, 2], [1, 1],
                      [1, 2], 2)
    yield SampleInput(t((1, 2, 4)), t((3, 2, 2)), [1], [1], [1], [2], [1], 1)     # transposed
    yield SampleInput(t((1, 1, 3, 3, 3)), t((2, 1, 2, 2, 2)), [1, 1, 2], [0, 0, 0],
                      [0, 0, 0], [1, 1, 1], [1, 1, 1], 1)
    yield SampleInput(t((2, 3, 5)), t((2, 3, 2)), [1], [-1], [0], [1], [1], 1)   # crop
    yield SampleInput(t((0, 3, 5)), t((2, 3, 2)), [1], [0], [0], [1], [1], 1)


def _conv_ref(lhs, rhs, strides, low, high, lhs_dil, rhs_dil, groups):
    x, w = wide(lhs), wide(rhs)
    nsp = x.ndim - 2
    # input dilation (transposed convolution), then padding (negative crops)
    x = pad_ref(x, 0, [0, 0] + list(low), [0, 0] + list(high),
                 [0, 0] + [d - 1 for d in lhs_dil])
    # kernel dilation: zeros between taps
    w = pad_ref(w, 0, [0] * w.ndim, [0] * w.ndim, [0, 0] + [d - 1 for d in rhs_dil])
    ksp = w.shape[2:]
    n, c = x.shape[:2]
    o = w.shape[0]
    out_sp = [(x.shape[2 + i] - ksp[i]) // strides[i] + 1 for i in range(nsp)]
    out = np.zeros((n, o, *out_sp), np.result_type(x, w))
    cg, og = c // groups, o // groups
    for pos in itertools.product(*(range(s) for s in out_sp)):
        idx = tuple(slice(p * s, p * s + k) for p, s, k in zip(pos, strides, ksp))
        win = x[(slice(None), slice(None)) + idx]           # (N, C, *k)
        for g in range(groups):
            xs = win[:, g * cg:(g + 1) * cg]
            ws = w[g * og:(g + 1) * og]
            out[(slice(None), slice(g * og, (g + 1) * og)) + pos] = np.tensordot(
                xs, ws, axes=(list(range(1, xs.ndim)), list(range(1, ws.ndim))))
    return out.astype(lhs.dtype)


def _conv_errors(info, device):
    x = make_tensor((1, 4, 5), D.float32, device)
    yield ErrorInput(SampleInput(x, make_tensor((2, 3, 2), D.float32, device), [1], [0], [0],
                                 [1], [1], 1), RuntimeError, "prims.conv_general: rhs has 3")
    yield ErrorInput(SampleInput(x, make_tensor((2, 4, 2), D.float32, device), [0], [0], [0],
                                 [1], [1], 1), RuntimeError, "prims.conv_general: .* >= 1")


register(
    OpInfo(P.dot_general, _dot_ref, ALL, _dot_samples, error_inputs=_dot_errors, tols=_TOLS),
    OpInfo(P.conv_general, _conv_ref, FLOATS + (D.int64, D.int32), _conv_samples,
           error_inputs=_conv_errors, tols=_TOLS),
)
