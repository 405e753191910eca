"""CPU kernels of the recurrence prims (fnx/ir/prims/recurrence.py): the recurrence as a
NumPy loop over time steps, and its backward (backpropagation through time) re-running
the forward to keep what each step's derivative needs. Half types compute in float32."""
from __future__ import annotations

import numpy as np

from ...ir import prims as P
from ._core import data, kernel, wrap

_HALF = (np.float16,)


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _arrays(name, *ts):
    out = []
    for t in ts:
        if t is None:
            out.append(None)
            continue
        a = data(t, f"prims.{name}")
        out.append(a.astype(np.float32) if a.dtype in _HALF or a.dtype.kind == "V" or
                   str(a.dtype) == "bfloat16" else a)
    return out


def _active(lengths, t):
    """Which rows run step ``t`` (a (B, 1) bool column), or None when all do."""
    return None if lengths is None else (t < lengths)[:, None]


def _run(mode, gi, h, c, w_hh, b_hh, w_hr, lengths, reverse, keep):
    """The forward loop; with ``keep``, each step's saved values in time order of the run."""
    steps = range(gi.shape[0] - 1, -1, -1) if reverse else range(gi.shape[0])
    out = np.empty(gi.shape[:2] + (h.shape[1],), gi.dtype)
    saved = []
    for t in steps:
        c_prev = c
        gh = h @ w_hh.T
        if b_hh is not None:
            gh = gh + b_hh
        if mode == "LSTM":
            i, f, g, o = np.split(gi[t] + gh, 4, axis=1)
            i, f, g, o = _sig(i), _sig(f), np.tanh(g), _sig(o)
            c_new = f * c + i * g
            tc = np.tanh(c_new)
            m = o * tc
            h_new = m @ w_hr.T if w_hr is not None else m
            if keep:
                saved.append((t, h, c, i, f, g, o, tc, m))
            c = c_new
        elif mode == "GRU":
            i_r, i_z, i_n = np.split(gi[t], 3, axis=1)
            h_r, h_z, h_n = np.split(gh, 3, axis=1)
            r, z = _sig(i_r + h_r), _sig(i_z + h_z)
            n = np.tanh(i_n + r * h_n)
            h_new = n + z * (h - n)
            if keep:
                saved.append((t, h, r, z, n, h_n))
        else:
            a = gi[t] + gh
            h_new = np.tanh(a) if mode == "RNN_TANH" else np.maximum(a, 0)
            if keep:
                saved.append((t, h, h_new))
        act = _active(lengths, t)
        if act is None:
            out[t] = h_new
            h = h_new
        else:                                     # finished or not yet started: hold
            out[t] = np.where(act, h_new, 0)
            h = np.where(act, h_new, h)
            c = None if c is None else np.where(act, c, c_prev)
    return out, h, c, saved


@kernel(P.rnn_scan)
def _rnn_scan(ks, gi, h0, c0, w_hh, b_hh, w_hr, lengths, mode, reverse):
    metas = P.rnn_scan.meta(gi, h0, c0, w_hh, b_hh, w_hr, lengths, mode, reverse)
    arrays = _arrays("rnn_scan", gi, h0, c0, w_hh, b_hh, w_hr)
    lens = None if lengths is None else data(lengths, "prims.rnn_scan")
    with np.errstate(over="ignore"):
        out, h, c, _ = _run(mode, *arrays, lens, reverse, keep=False)
    return tuple(wrap(np.array(a, dtype=m.dtype.numpy), m.dtype)
                 for a, m in zip((out, h, c), metas))


@kernel(P.rnn_scan_backward)
def _rnn_scan_backward(ks, grad_output, grad_h_n, grad_c_n, gi, h0, c0, w_hh, b_hh, w_hr,
                       lengths, mode, reverse):
    metas = P.rnn_scan_backward.meta(grad_output, grad_h_n, grad_c_n, gi, h0, c0, w_hh, b_hh,
                                     w_hr, lengths, mode, reverse)
    g_out, dh, dc, gi, h0, c0, w_hh, b_hh, w_hr = _arrays(
        "rnn_scan_backward", grad_output, grad_h_n, grad_c_n, gi, h0, c0, w_hh, b_hh, w_hr)
    lens = None if lengths is None else data(lengths, "prims.rnn_scan_backward")
    with np.errstate(over="ignore"):
        _, _, _, saved = _run(mode, gi, h0, c0, w_hh, b_hh, w_hr, lens, reverse, keep=True)
    d_gi = np.zeros_like(gi)
    d_whh = np.zeros_like(w_hh)
    d_bhh = np.zeros(w_hh.shape[0], gi.dtype)
    d_whr = np.zeros_like(w_hr) if w_hr is not None else None
    for rec in reversed(saved):
        t, h_prev = rec[0], rec[1]
        act = _active(lens, t)
        if act is None:
            dh = dh + g_out[t]
            hold_h = hold_c = 0
        else:                                     # held rows pass their gradient through
            hold_h, hold_c = np.where(act, 0, dh), np.where(act, 0, dc)
            dh = np.where(act, dh + g_out[t], 0)
            dc = np.where(act, dc, 0)
        if mode == "LSTM":
            _, _, c_prev, i, f, g, o, tc, m = rec
            if w_hr is not None:
                d_whr += dh.T @ m
                dm = dh @ w_hr
            else:
                dm = dh
            dc = dc + dm * o * (1 - tc * tc)
            da = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f),
                                 dc * i * (1 - g * g), dm * tc * o * (1 - o)], axis=1)
            dc = dc * f
            d_gh = da
            dh = 0                                # h_prev reaches the step through gh only
        elif mode == "GRU":
            _, _, r, z, n, h_n = rec
            dan = dh * (1 - z) * (1 - n * n)
            dar = dan * h_n * r * (1 - r)
            daz = dh * (h_prev - n) * z * (1 - z)
            da = np.concatenate([dar, daz, dan], axis=1)
            d_gh = np.concatenate([dar, daz, dan * r], axis=1)
            dh = dh * z
        else:
            h_new = rec[2]
            da = dh * (1 - h_new * h_new) if mode == "RNN_TANH" else dh * (h_new > 0)
            d_gh = da
            dh = 0
        d_gi[t] = da
        d_whh += d_gh.T @ h_prev
        d_bhh += d_gh.sum(0)
        dh = dh + d_gh @ w_hh + hold_h
        if mode == "LSTM":
            dc = dc + hold_c
    # no bias (or projection): its gradient slot holds zeros, as the lowering's
    results = (d_gi, dh, dc, d_whh, None if b_hh is None else d_bhh, d_whr)
    return tuple(wrap(np.zeros(m.shape, m.dtype.numpy) if a is None else
                      np.array(a, dtype=m.dtype.numpy), m.dtype)
                 for a, m in zip(results, metas))
