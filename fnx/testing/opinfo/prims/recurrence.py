"""OpInfo entries of the recurrence prims (fnx/ir/prims/recurrence.py). The reference runs
each sequence of the batch on its own, one vector step at a time in float64 with
``math``-style formulas (the kernel works on the whole batch with matrix products);
``rnn_scan_backward``'s reference is the central finite-difference derivative of that
recurrence, contracted with the given output gradients."""
from __future__ import annotations

import numpy as np

import fnx

from ....core import dtype as D
from ....ir import prims as P
from ...database import ErrorInput, OpInfo, SampleInput, make_tensor, register

_DTYPES = (D.float32, D.float64)
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
_TOLS = {D.float32: (2e-5, 2e-5), D.float64: (1e-7, 1e-8)}


def _sig(v):
    return 1.0 / (1.0 + np.exp(-v))


def _vector_step(mode, g_in, h, c, w_hh, b_hh, w_hr):
    gh = np.array([np.dot(row, h) for row in w_hh]) + (0.0 if b_hh is None else b_hh)
    n = len(gh) // _GATES[mode]

    def part(v, k):
        return v[k * n:(k + 1) * n]
    if mode == "LSTM":
        a = g_in + gh
        i, f, g, o = _sig(part(a, 0)), _sig(part(a, 1)), np.tanh(part(a, 2)), _sig(part(a, 3))
        c = f * c + i * g
        m = o * np.tanh(c)
        return (m if w_hr is None else np.array([np.dot(row, m) for row in w_hr])), c
    if mode == "GRU":
        r = _sig(part(g_in, 0) + part(gh, 0))
        z = _sig(part(g_in, 1) + part(gh, 1))
        cand = np.tanh(part(g_in, 2) + r * part(gh, 2))
        return (1.0 - z) * cand + z * h, c
    a = g_in + gh
    return (np.tanh(a) if mode == "RNN_TANH" else np.where(a > 0, a, 0.0)), c


def _forward64(gi, h0, c0, w_hh, b_hh, w_hr, lengths, mode, reverse):
    steps, batch = gi.shape[:2]
    out = np.zeros((steps, batch, h0.shape[1]))
    h_n, c_n = np.zeros(h0.shape), np.zeros(c0.shape)
    for b in range(batch):
        h, c = h0[b], c0[b]
        n = steps if lengths is None else int(lengths[b])
        for t in (range(n - 1, -1, -1) if reverse else range(n)):
            h, c = _vector_step(mode, gi[t, b], h, c, w_hh, b_hh, w_hr)
            out[t, b] = h
        h_n[b], c_n[b] = h, c
    return out, h_n, c_n


def _f64(*arrays):
    return [None if a is None else np.asarray(a, np.float64) for a in arrays]


def _rnn_scan_ref(gi, h0, c0, w_hh, b_hh, w_hr, lengths, mode, reverse):
    dtype = gi.dtype
    res = _forward64(*_f64(gi, h0, c0, w_hh, b_hh, w_hr), lengths, mode, reverse)
    return tuple(r.astype(dtype) for r in res)


def _rnn_scan_backward_ref(g_out, g_h, g_c, gi, h0, c0, w_hh, b_hh, w_hr, lengths, mode,
                           reverse, eps=1e-6):
    dtype = gi.dtype
    g_out, g_h, g_c, *ops = _f64(g_out, g_h, g_c, gi, h0, c0, w_hh, b_hh, w_hr)

    def objective():
        out, h, c = _forward64(*ops, lengths, mode, reverse)
        return float((out * g_out).sum() + (h * g_h).sum() + (c * g_c).sum())

    grads = []
    for k, a in enumerate(ops[:6]):
        if a is None:
            hidden = gi.shape[2] // _GATES[mode]
            grads.append(np.zeros((w_hh.shape[0],) if k == 4 else (0, hidden)))
            continue
        g = np.zeros(a.shape)
        for idx in np.ndindex(a.shape):
            old = a[idx]
            a[idx] = old + eps
            plus = objective()
            a[idx] = old - eps
            minus = objective()
            a[idx] = old
            g[idx] = (plus - minus) / (2 * eps)
        grads.append(g)
    return tuple(g.astype(dtype) for g in grads)


def _operands(dtype, device, mode, steps=3, batch=2, hidden=3, proj=0, bias=True,
              lengths=None):
    gates = _GATES[mode]
    width = proj or hidden

    def mk(*shape):
        return make_tensor(shape, dtype, device, low=-1, high=1)
    return (mk(steps, batch, gates * hidden), mk(batch, width),
            mk(batch, hidden if mode == "LSTM" else 0), mk(gates * hidden, width),
            mk(gates * hidden) if bias else None, mk(proj, hidden) if proj else None,
            None if lengths is None else fnx.tensor(lengths, device=device))


_CASES = (("LSTM", False, {}), ("LSTM", True, {"proj": 2}), ("LSTM", True, {"bias": False}),
          ("GRU", False, {}), ("GRU", True, {"batch": 1}), ("RNN_TANH", True, {}),
          ("RNN_RELU", False, {}), ("LSTM", True, {"proj": 2, "lengths": [3, 1]}),
          ("GRU", False, {"batch": 3, "lengths": [2, 3, 0]}), ("LSTM", False, {"steps": 0}))


def _rnn_scan_samples(info, device, dtype):
    for mode, reverse, kw in _CASES:
        gi, *rest = _operands(dtype, device, mode, **kw)
        yield SampleInput(gi, *rest, mode, reverse)


def _rnn_scan_backward_samples(info, device, dtype):
    for mode, reverse, kw in _CASES[:-1]:
        ops = _operands(dtype, device, mode, **kw)
        gi, h0, c0 = ops[:3]
        grads = (make_tensor((gi.shape[0], gi.shape[1], h0.shape[1]), dtype, device),
                 make_tensor(tuple(h0.shape), dtype, device),
                 make_tensor(tuple(c0.shape), dtype, device))
        yield SampleInput(grads[0], *grads[1:], *ops, mode, reverse)


def _rnn_scan_errors(info, device):
    gi, h0, c0, w_hh, b_hh, w_hr, _ = _operands(D.float32, device, "LSTM")
    yield ErrorInput(SampleInput(gi, h0, c0, w_hh, b_hh, w_hr, None, "LSTX", False),
                     RuntimeError, r"prims.rnn_scan: mode must be one of")
    yield ErrorInput(SampleInput(gi, h0[:1], c0, w_hh, b_hh, w_hr, None, "LSTM", False),
                     RuntimeError, r"prims.rnn_scan: h0 must be \[2, 3\], got \[1, 3\]")
    yield ErrorInput(SampleInput(gi, h0, c0, w_hh, b_hh, w_hr, fnx.tensor([1, 2, 3]), "LSTM",
                                 False),
                     RuntimeError, r"prims.rnn_scan: lengths must be \[2\], got \[3\]")
    yield ErrorInput(SampleInput(gi[..., :10], h0, c0, w_hh, b_hh, w_hr, None, "LSTM", False),
                     RuntimeError, r"prims.rnn_scan: gi's last dim 10 is not a multiple of the "
                                   r"4 gates of LSTM")


register(
    OpInfo(P.rnn_scan, _rnn_scan_ref, _DTYPES, _rnn_scan_samples, tols=_TOLS,
           error_inputs=_rnn_scan_errors),
    OpInfo(P.rnn_scan_backward, _rnn_scan_backward_ref, _DTYPES, _rnn_scan_backward_samples,
           tols={D.float32: (1e-4, 1e-4), D.float64: (1e-6, 1e-7)},
           skips={"grad": "second-order gradients through the recurrence are not provided "
                          "(the derivative raises)"}),
)
