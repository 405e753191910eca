"""CPU kernels for sort and topk: NumPy's stable argsort (``kind="stable"``).

NumPy already puts NaN last in an ascending sort, as PyTorch does.  A descending sort
is the ascending stable sort of the reversed axis, read backwards: that puts NaN first
and keeps equal elements in their original order, for every dtype (bool and unsigned
integers included, which negation would not handle).  float16/bfloat16 are compared
in float32 (an exact widening).
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...ir.aten import sorting as S
from ...ir.dims import wrap_dim
from ._core import data, kernel, wrap

_F32 = np.dtype(np.float32)


def _comparable(a):
    return a.astype(_F32) if a.dtype == np.float16 or a.dtype.name == "bfloat16" else a


def _argsort(a, axis, descending):
    """Stable int64 indices that sort ``a`` along ``axis`` (``a.ndim >= 1``)."""
    c = _comparable(a)
    if not descending:
        return np.argsort(c, axis=axis, kind="stable").astype(np.int64, copy=False)
    n = c.shape[axis]
    rev = np.flip(c, axis)
    idx = np.flip(np.argsort(rev, axis=axis, kind="stable"), axis)
    return (n - 1) - idx.astype(np.int64, copy=False)


def _sorted(a, axis, descending):
    idx = _argsort(a, axis, descending)
    return np.take_along_axis(a, idx, axis=axis), idx


@kernel(S.sort_default)
def _sort(ks, self, dim=-1, descending=False):
    S.sort_default.meta(self, dim, descending)
    a = data(self, "sort")
    if a.ndim == 0:
        return wrap(a.copy(), self._dtype), wrap(np.zeros((), np.int64), D.int64)
    vals, idx = _sorted(a, wrap_dim(dim, a.ndim), descending)
    return wrap(vals, self._dtype), wrap(idx, D.int64)


@kernel(S.topk_default)
def _topk(ks, self, k, dim=-1, largest=True, sorted=True):
    S.topk_default.meta(self, k, dim, largest, sorted)
    a = data(self, "topk")
    k = int(k)
    if a.ndim == 0:
        # k is 0 or 1 here (checked by meta); a 0-dim result either way, as PyTorch
        return wrap(a.copy(), self._dtype), wrap(np.zeros((), np.int64), D.int64)
    d = wrap_dim(dim, a.ndim)
    # ``sorted=False`` may return any order: the sorted one is a valid choice
    idx = np.take(_argsort(a, d, largest), np.arange(k), axis=d)
    return wrap(np.take_along_axis(a, idx, axis=d), self._dtype), wrap(idx, D.int64)
