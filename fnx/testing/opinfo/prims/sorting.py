"""OpInfo entries of the sorting prims (fnx/ir/prims/sorting.py): the reference sorts
stably by an explicit key (NaN the largest) with NumPy's stable argsort."""
from __future__ import annotations

import numpy as np

import fnx

from ....core import dtype as D
from ....ir import prims as P
from ...database import (FLOATS, INTS, ErrorInput, OpInfo, SampleInput, _gen, make_tensor,
                         register)
from ._common import ALL, is_float, tensor, wide


def _distinct(shape, dtype, device):
    """Values without ties (non-stable sorts may order ties either way)."""
    n = int(np.prod(shape)) if shape else 1
    vals = _gen().permutation(n).reshape(shape)
    if dtype is D.bool:
        vals = vals % 2
    elif dtype.is_signed or is_float(dtype):
        vals = vals - n // 2
    t = fnx.from_numpy(np.asarray(vals).astype(dtype.numpy))
    return t if str(device) == "cpu" else t.to(device)


def _sort_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 5), dtype, device), 1, False, True)
    yield SampleInput(make_tensor((3, 5), dtype, device), 0, True, True)
    yield SampleInput(make_tensor((5, 3), dtype, device).t(), 1, True, True)
    yield SampleInput(make_tensor((0, 3), dtype, device), 1, False, True)
    if dtype is not D.bool:
        yield SampleInput(_distinct((4, 3), dtype, device), 0, False, False)
    if is_float(dtype):
        yield SampleInput(tensor([3.0, np.nan, -1.0, np.inf, np.nan, -np.inf, 0.0], dtype,
                                  device), 0, True, True)
        yield SampleInput(tensor([3.0, np.nan, -1.0, np.inf, np.nan, -np.inf, 0.0], dtype,
                                  device), 0, False, True)


def _sort_ref(a, dim, descending, stable):
    w = wide(a).astype(np.float64) if a.dtype != np.bool_ else a.astype(np.float64)
    nan = np.isnan(w)
    if descending:
        # stable, NaN (the largest) first: sort by (not NaN, -value), stably
        key = np.where(nan, 0.0, -w)
        order = np.argsort(key, axis=dim, kind="stable")
        nan_sorted = np.take_along_axis(nan, order, axis=dim)
        order2 = np.argsort(~nan_sorted, axis=dim, kind="stable")
        order = np.take_along_axis(order, order2, axis=dim)
    else:
        order = np.argsort(np.where(nan, np.inf, w), axis=dim, kind="stable")
        nan_sorted = np.take_along_axis(nan, order, axis=dim)
        order2 = np.argsort(nan_sorted, axis=dim, kind="stable")
        order = np.take_along_axis(order, order2, axis=dim)
    return np.take_along_axis(a, order, axis=dim), order.astype(np.int64)


def _top_k_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 5), dtype, device), 2, 1, True)
    yield SampleInput(make_tensor((3, 5), dtype, device), 3, 1, False)
    yield SampleInput(make_tensor((4, 3), dtype, device, low=0, high=2), 4, 0, True)  # ties
    yield SampleInput(make_tensor((3, 5), dtype, device), 0, 1, True)
    yield SampleInput(make_tensor((5, 3), dtype, device).t(), 5, 1, False)


def _top_k_ref(a, k, dim, largest):
    vals, idx = _sort_ref(a, dim, largest, True)
    take = np.arange(k)
    return np.take(vals, take, axis=dim), np.take(idx, take, axis=dim)


def _top_k_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((3, 5), D.float32, device), 6, 1, True),
                     RuntimeError, r"prims.top_k: k \(6\) must be in \[0, 5\]")


register(
    OpInfo(P.sort, _sort_ref, ALL, _sort_samples),
    OpInfo(P.top_k, _top_k_ref, FLOATS + INTS, _top_k_samples, error_inputs=_top_k_errors),
)
