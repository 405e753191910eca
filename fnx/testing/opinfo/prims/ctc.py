"""OpInfo entries of the CTC prims (fnx/ir/prims/ctc.py). The reference runs each batch
row on its own, state by state, with ``np.logaddexp`` in float64; ``ctc_alpha_backward``'s
reference is the central finite-difference derivative of that recurrence, contracted with
the given output gradient."""
from __future__ import annotations

import numpy as np

import fnx

from ....core import dtype as D
from ....ir import prims as P
from ...database import ErrorInput, OpInfo, SampleInput, make_tensor, register

_DTYPES = (D.float32, D.float64)
_TOLS = {D.float32: (2e-5, 2e-5), D.float64: (1e-9, 1e-10)}


def _forward64(alpha0, emit, skip, active):
    alpha = np.array(alpha0, np.float64)
    emit = np.asarray(emit, np.float64)
    steps, n, w = emit.shape
    for t in range(steps):
        for b in range(n):
            if not active[t, b]:
                continue
            row = alpha[b].copy()
            for s in range(w):
                v = row[s]
                if s >= 1:
                    v = np.logaddexp(v, row[s - 1])
                if s >= 2 and skip[b, s]:
                    v = np.logaddexp(v, row[s - 2])
                alpha[b, s] = v + emit[t, b, s]
    return alpha


def _ctc_alpha_ref(alpha0, emit, skip, active):
    return _forward64(alpha0, emit, skip, active).astype(alpha0.dtype)


def _ctc_alpha_backward_ref(grad, alpha0, emit, skip, active, eps=1e-6):
    ops = [np.array(alpha0, np.float64), np.array(emit, np.float64)]
    g = np.asarray(grad, np.float64)

    def objective():
        return float((_forward64(ops[0], ops[1], skip, active) * g).sum())
    out = []
    for a in ops:
        d = np.zeros(a.shape)
        for idx in np.ndindex(a.shape):
            old = a[idx]
            a[idx] = old + eps
            plus = objective()
            a[idx] = old - eps
            minus = objective()
            a[idx] = old
            d[idx] = (plus - minus) / (2 * eps)
        out.append(d.astype(alpha0.dtype))
    return tuple(out)


def _operands(dtype, device, steps=3, n=2, w=5, lengths=None, seed=0):
    rng = np.random.default_rng(seed)
    skip = rng.random((n, w)) > 0.4
    skip[:, :2] = False
    lengths = [steps] * n if lengths is None else lengths
    active = np.arange(steps)[:, None] < np.asarray(lengths)[None, :]
    return (make_tensor((n, w), dtype, device, low=-3, high=0),
            make_tensor((steps, n, w), dtype, device, low=-3, high=0),
            fnx.tensor(skip, device=device), fnx.tensor(active, device=device))


_CASES = ({}, {"steps": 4, "n": 3, "w": 7, "lengths": [4, 1, 0]}, {"steps": 1, "n": 1, "w": 1},
          {"steps": 0})


def _ctc_alpha_samples(info, device, dtype):
    for i, kw in enumerate(_CASES):
        yield SampleInput(*_operands(dtype, device, seed=i, **kw))


def _ctc_alpha_backward_samples(info, device, dtype):
    for i, kw in enumerate(_CASES[:-1]):
        ops = _operands(dtype, device, seed=i, **kw)
        yield SampleInput(make_tensor(tuple(ops[0].shape), dtype, device), *ops)


def _ctc_alpha_errors(info, device):
    a0, emit, skip, active = _operands(D.float32, device)
    yield ErrorInput(SampleInput(a0[:1], emit, skip, active), RuntimeError,
                     r"prims.ctc_alpha: alpha0 must be \[2, 5\], got \[1, 5\]")
    yield ErrorInput(SampleInput(a0, emit.double(), skip, active), RuntimeError,
                     "prims.ctc_alpha: emit has dtype")
    yield ErrorInput(SampleInput(a0, emit, skip.int(), active), RuntimeError,
                     "prims.ctc_alpha: skip and active must be bool tensors")


register(
    OpInfo(P.ctc_alpha, _ctc_alpha_ref, _DTYPES, _ctc_alpha_samples, tols=_TOLS,
           error_inputs=_ctc_alpha_errors),
    OpInfo(P.ctc_alpha_backward, _ctc_alpha_backward_ref, _DTYPES,
           _ctc_alpha_backward_samples,
           tols={D.float32: (1e-4, 1e-4), D.float64: (1e-6, 1e-7)},
           skips={"grad": "second-order gradients through ctc_loss are not provided (the "
                          "derivative raises)"}),
)
