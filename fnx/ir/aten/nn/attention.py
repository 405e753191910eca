"""``scaled_dot_product_attention``, decomposed to matmuls and a softmax."""
from __future__ import annotations

import math

from ....core import dtype as D
from ....ops import aten
from ...registry import defop
from ._common import RANDOM, _arange, _to, _up


def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
          enable_gqa=False):
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must be at "
                           "least 2-dimensional")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if query.dtype is not key.dtype or query.dtype is not value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {query.dtype.scalar_type} key.dtype: "
                           f"{key.dtype.scalar_type} and value.dtype: "
                           f"{value.dtype.scalar_type} instead.")
    e = query.shape[-1]
    if key.shape[-1] != e:
        raise RuntimeError(f"scaled_dot_product_attention: expected key's last dimension "
                           f"({key.shape[-1]}) to match query's ({e})")
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = aten.repeat_interleave.self_int(key, rep, key.ndim - 3) \
            if hasattr(aten, "repeat_interleave") else _repeat_heads(key, rep)
        value = aten.repeat_interleave.self_int(value, rep, value.ndim - 3) \
            if hasattr(aten, "repeat_interleave") else _repeat_heads(value, rep)
    sc = 1.0 / math.sqrt(e) if scale is None else scale
    q = _up(query)
    k, v = _up(key), _up(value)
    scores = aten.matmul(q, aten.transpose.int(k, -2, -1)) * sc
    L, S = q.shape[-2], k.shape[-2]
    if is_causal:
        i = aten.unsqueeze(_arange(L, D.int64, q.device), 1)
        j = aten.unsqueeze(_arange(S, D.int64, q.device), 0)
        attn_mask = aten.ge.Tensor(i, j)
    if attn_mask is not None:
        if attn_mask.dtype is D.bool:
            scores = aten.where.self(attn_mask, scores, -math.inf)
        else:
            scores = scores + attn_mask
    # rows with every position masked give zeros, not NaN (PyTorch's _safe_softmax)
    probs = aten._softmax(scores, -1, False)
    dead = aten.eq.Scalar(aten.amax(scores, [-1], True), -math.inf) if S else None
    if dead is not None:
        probs = aten.where.self(dead, 0.0, probs)
    if dropout_p > 0:
        probs = aten.dropout(probs, dropout_p, True)
    return _to(aten.matmul(probs, v), query.dtype)


def _repeat_heads(x, rep):
    shape = list(x.shape)
    h = shape[-3]
    y = aten.unsqueeze(x, x.ndim - 2)
    y = aten.expand(y, shape[:-3] + [h, rep] + shape[-2:])
    return aten.reshape(y, shape[:-3] + [h * rep] + shape[-2:])


scaled_dot_product_attention = defop(
    "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None,"
    " float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) "
    "-> Tensor", tags=RANDOM, decomposition=_sdpa)
