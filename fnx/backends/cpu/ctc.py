"""CPU kernels of the CTC prims (fnx/ir/prims/ctc.py): the forward recursion as a NumPy
loop over time frames, and its reverse mode (each step's log-sum-exp weights, recomputed
from the kept alphas). Half types compute in float32."""
from __future__ import annotations

import numpy as np

from ...ir import prims as P
from ._core import data, kernel, wrap


def _float(t, name):
    a = data(t, f"prims.{name}")
    return a.astype(np.float32) if a.dtype.itemsize < 4 else a


def _terms(alpha, skip):
    """The three candidates of every state: stay, advance by one, skip a blank."""
    neg = np.full(alpha.shape[:-1] + (1,), -np.inf, alpha.dtype)
    one = np.concatenate([neg, alpha[:, :-1]], 1)
    two = np.concatenate([neg, neg, alpha[:, :-2]], 1)[:, :alpha.shape[1]]
    return alpha, one, np.where(skip, two, -np.inf)


def _lse(terms):
    m = np.maximum(np.maximum(terms[0], terms[1]), terms[2])
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(sum(np.exp(x - safe) for x in terms)) + safe


def _forward(alpha, emit, skip, active, keep):
    kept = []
    for t in range(emit.shape[0]):
        if keep:
            kept.append(alpha)
        new = _lse(_terms(alpha, skip)) + emit[t]
        alpha = np.where(active[t][:, None], new, alpha)
    return alpha, kept


@kernel(P.ctc_alpha)
def _ctc_alpha(ks, alpha0, emit, skip, active):
    meta = P.ctc_alpha.meta(alpha0, emit, skip, active)
    a0, em = _float(alpha0, "ctc_alpha"), _float(emit, "ctc_alpha")
    out, _ = _forward(a0, em, data(skip, "prims.ctc_alpha"), data(active, "prims.ctc_alpha"),
                      keep=False)
    return wrap(np.array(out, dtype=meta.dtype.numpy), meta.dtype)


@kernel(P.ctc_alpha_backward)
def _ctc_alpha_backward(ks, grad, alpha0, emit, skip, active):
    metas = P.ctc_alpha_backward.meta(grad, alpha0, emit, skip, active)
    name = "ctc_alpha_backward"
    g, a0, em = _float(grad, name), _float(alpha0, name), _float(emit, name)
    sk, act = data(skip, f"prims.{name}"), data(active, f"prims.{name}")
    _, kept = _forward(a0, em, sk, act, keep=True)
    g_emit = np.zeros_like(em)
    for t in range(em.shape[0] - 1, -1, -1):
        alpha = kept[t]
        on = act[t][:, None]
        g_new = np.where(on, g, 0.0)                       # held rows pass g through
        g_emit[t] = g_new
        terms = _terms(alpha, sk)
        lse = _lse(terms)
        with np.errstate(invalid="ignore"):
            w = [np.where(np.isfinite(x), np.exp(x - lse), 0.0) for x in terms]
        g_stay, g_one, g_two = (g_new * wi for wi in w)
        g_prev = np.where(on, 0.0, g) + g_stay
        g_prev[:, :-1] += g_one[:, 1:]                     # alpha[s-1] fed state s
        g_prev[:, :-2] += g_two[:, 2:]                     # alpha[s-2] fed state s
        g = g_prev
    return (wrap(np.array(g, dtype=metas[0].dtype.numpy), metas[0].dtype),
            wrap(np.array(g_emit, dtype=metas[1].dtype.numpy), metas[1].dtype))
