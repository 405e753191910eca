"""OpInfo entries for ``scaled_dot_product_attention`` (fnx/ir/aten/nn/attention.py),
sampled without dropout so that values are compared."""
from __future__ import annotations

import math

import numpy as np

from ....core import dtype as D
from ....ops import aten
from ...database import ErrorInput, OpInfo, SampleInput, register
from ._common import F, SUMS, _arr, _floatref, _t


def _sdpa_ref(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
              enable_gqa=False):
    if enable_gqa and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        rep = q.shape[-3] // k.shape[-3]
        k, v = np.repeat(k, rep, axis=-3), np.repeat(v, rep, axis=-3)
    s = (q @ np.swapaxes(k, -1, -2)) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if is_causal:
        attn_mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), bool))
    if attn_mask is not None:
        s = np.where(attn_mask, s, -np.inf) if attn_mask.dtype == bool else s + attn_mask
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    p = np.where(np.isneginf(m), 0.0, e / e.sum(-1, keepdims=True))  # masked rows give 0
    return p @ v


def _sdpa_samples(info, device, dtype):
    def t(*shape, **kw):
        return _t(shape, dtype, device, -2, 2, **kw)
    q, k, v = t(2, 2, 3, 4), t(2, 2, 5, 4), t(2, 2, 5, 3)
    yield SampleInput(q, k, v)
    yield SampleInput(q, k, v, scale=0.3)
    mask = np.random.default_rng(9).random((3, 5)) > 0.4
    mask[1] = False                               # a fully masked row
    yield SampleInput(q, k, v, _arr(mask, D.bool, device))
    yield SampleInput(q, k, v, t(2, 1, 3, 5))                                  # additive mask
    yield SampleInput(t(2, 2, 5, 4), k, v, None, 0.0, True)                    # causal
    yield SampleInput(t(1, 4, 3, 4), t(1, 2, 5, 4), t(1, 2, 5, 3), enable_gqa=True)
    yield SampleInput(t(3, 4, noncontiguous=True), t(5, 4), t(5, 2))         # 2-D


def _sdpa_errors(info, device):
    f = D.float32
    q, k, v = _t((1, 3, 4), f, device), _t((1, 5, 4), f, device), _t((1, 5, 2), f, device)
    yield ErrorInput(SampleInput(q, k, v, _arr(np.ones((3, 5)), D.bool, device), 0.0, True),
                     RuntimeError, "Explicit attn_mask should not be set when is_causal=True")
    yield ErrorInput(SampleInput(q, k.double(), v), RuntimeError,
                     "Expected query, key, and value to have the same dtype")
    yield ErrorInput(SampleInput(q, _t((1, 5, 3), f, device), v), RuntimeError,
                     "expected key's last dimension")


register(OpInfo(aten.scaled_dot_product_attention.default, _floatref(_sdpa_ref), F,
                _sdpa_samples, tols=SUMS, error_inputs=_sdpa_errors))
