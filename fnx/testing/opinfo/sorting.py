"""OpInfo entries for sorting (fnx/ir/aten/sorting.py): sort, sort.stable, argsort,
argsort.stable, msort, topk.

The references restate PyTorch's order on their own: NaN is the largest value (last
ascending, first descending), equal elements keep their original order (fnx's sort is
always stable), indices are int64, a 0-dim tensor sorts as one element.  A descending
stable order is computed from dense ranks (``np.unique``), so it holds for bool and
unsigned integers too.  topk returns the k largest (smallest) sorted, ties to the lower
index (the choice fnx's kernels make; PyTorch allows any).  Samples draw from few values,
so ties are everywhere.
"""
from __future__ import annotations

import numpy as np

import fnx

from ...core import dtype as D
from ...ir.aten import sorting as S
from ..database import (ALL_DTYPES, FLOATS, INTS, ErrorInput, OpInfo, SampleInput, make_tensor,
                        register)

NUMERIC = FLOATS + INTS
SPECIAL = [3.0, np.nan, -np.inf, 1.0, np.nan, 3.0, np.inf, 1.0, -0.0, 0.0, -2.5, 3.0]


def _special(dtype, device):
    t = fnx.from_numpy(np.array(SPECIAL, np.float64).reshape(3, 4).astype(dtype.numpy))
    return t if str(device) == "cpu" else t.to(device)


# --------------------------------------------------------------------------- references

def _order(a, axis, descending):
    """Stable int64 sort indices along ``axis``; NaN counts as the largest value."""
    x = a.astype(np.float64) if a.dtype.kind == "f" or a.dtype.kind == "V" else a
    # dense ranks: equal values share one, every NaN ranks above every number
    flat = x.reshape(-1)
    if flat.dtype.kind == "f":
        nan = np.isnan(flat)
        _, inv = np.unique(np.where(nan, 0, flat), return_inverse=True)
        ranks = np.where(nan, inv.max(initial=0) + 1, inv)
    else:
        _, ranks = np.unique(flat, return_inverse=True)
    ranks = ranks.reshape(x.shape).astype(np.int64)
    return np.argsort(-ranks if descending else ranks, axis=axis, kind="stable")


def _sort_ref(a, dim=-1, descending=False):
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = _order(a, dim % a.ndim, descending)
    return np.take_along_axis(a, idx, dim % a.ndim), idx.astype(np.int64)


def _sort_stable_ref(a, *, stable, dim=-1, descending=False):
    return _sort_ref(a, dim, descending)


def _argsort_ref(a, dim=-1, descending=False):
    return _sort_ref(a, dim, descending)[1]


def _argsort_stable_ref(a, *, stable, dim=-1, descending=False):
    return _sort_ref(a, dim, descending)[1]


def _msort_ref(a):
    return _sort_ref(a, 0)[0]


def _topk_ref(a, k, dim=-1, largest=True, sorted=True):
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    d = dim % a.ndim
    idx = np.take(_order(a, d, largest), np.arange(k), axis=d).astype(np.int64)
    return np.take_along_axis(a, idx, d), idx


# --------------------------------------------------------------------------- samples

def _values(dtype, device, shape, **kw):
    """Few distinct values: ties in every row."""
    lo, hi = (0, 3) if dtype is not D.bool else (None, None)
    return make_tensor(shape, dtype, device, low=lo, high=hi, **kw)


def _inputs(dtype, device):
    yield _values(dtype, device, (4, 6)), -1
    yield _values(dtype, device, (4, 6)), 0
    yield _values(dtype, device, (2, 3, 5)), 1
    yield _values(dtype, device, ()), 0
    yield _values(dtype, device, ()), -1
    yield _values(dtype, device, (0, 3)), 0
    yield _values(dtype, device, (3, 0)), 1
    yield _values(dtype, device, (4, 6), noncontiguous=True), 1
    yield _values(dtype, device, (5, 4)).t(), 1
    if dtype.is_floating_point:
        yield _special(dtype, device), 1
        yield _special(dtype, device), 0


def _sort_samples(info, device, dtype):
    for i, (x, d) in enumerate(_inputs(dtype, device)):
        yield SampleInput(x, d, i % 2 == 1)
        if i == 0 or dtype.is_floating_point and x.ndim == 2 and x.shape[0] == 3:
            yield SampleInput(x, d, i % 2 == 0)


def _sort_stable_samples(info, device, dtype):
    for i, (x, d) in enumerate(_inputs(dtype, device)):
        yield SampleInput(x, stable=i % 3 != 0, dim=d, descending=i % 2 == 1)


def _msort_samples(info, device, dtype):
    for x, _ in _inputs(dtype, device):
        yield SampleInput(x)


def _topk_samples(info, device, dtype):
    for i, (x, d) in enumerate(_inputs(dtype, device)):
        size = x.shape[d] if x.ndim else 1
        for k in sorted({0, min(1, size), size // 2, size}):
            yield SampleInput(x, k, d, (i + k) % 2 == 0, (i + k) % 3 != 0)


# --------------------------------------------------------------------------- error inputs

def _sort_errors(info, device):
    x = make_tensor((2, 3), D.float32, device)
    yield ErrorInput(SampleInput(x, 2), IndexError, "Dimension out of range")
    yield ErrorInput(SampleInput(make_tensor((3,), D.complex64, device)), RuntimeError,
                     "not implemented for 'ComplexFloat'")


def _topk_errors(info, device):
    x = make_tensor((2, 3), D.float32, device)
    yield ErrorInput(SampleInput(x, 4), RuntimeError, "selected index k out of range")
    yield ErrorInput(SampleInput(x, -1), RuntimeError, "selected index k out of range")
    yield ErrorInput(SampleInput(x, 1, 2), IndexError, "Dimension out of range")


register(
    OpInfo(S.sort_default, _sort_ref, ALL_DTYPES, _sort_samples, error_inputs=_sort_errors),
    OpInfo(S.sort_stable, _sort_stable_ref, ALL_DTYPES, _sort_stable_samples),
    OpInfo(S.argsort_default, _argsort_ref, ALL_DTYPES, _sort_samples),
    OpInfo(S.argsort_stable, _argsort_stable_ref, ALL_DTYPES, _sort_stable_samples),
    OpInfo(S.msort_default, _msort_ref, ALL_DTYPES, _msort_samples),
    OpInfo(S.topk_default, _topk_ref, NUMERIC, _topk_samples, error_inputs=_topk_errors),
)
