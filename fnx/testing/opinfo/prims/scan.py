"""OpInfo entries of the scan prims (fnx/ir/prims/scan.py)."""
from __future__ import annotations

import itertools

import numpy as np

from ....core import dtype as D
from ....ir import prims as P
from ...database import OpInfo, SampleInput, make_tensor, register
from ._common import ALL, from_py
from .reduction import HALF_TOLS


def _scan_samples(info, device, dtype):
    lo, hi = (-2, 3) if dtype is not D.uint8 else (0, 3)
    yield SampleInput(make_tensor((3, 4), dtype, device, low=lo, high=hi), 1)
    yield SampleInput(make_tensor((3, 4), dtype, device, low=lo, high=hi), 0)
    yield SampleInput(make_tensor((0, 3), dtype, device), 1)
    yield SampleInput(make_tensor((4, 3), dtype, device, low=lo, high=hi).t(), 1)


def _scan_ref(kind):
    """Running sums/products along ``dim`` with itertools.accumulate in float64 or Python
    ints (wrapped once at the end, which wrapping at every step equals); bool: or/and."""
    def ref(a, dim):
        moved = np.moveaxis(a, dim, -1)
        rows = moved.reshape(-1, moved.shape[-1]) if moved.size else moved.reshape(0, 0)
        if a.dtype.kind == "b":
            step = (lambda x, y: x or y) if kind == "sum" else (lambda x, y: x and y)
        else:
            step = (lambda x, y: x + y) if kind == "sum" else (lambda x, y: x * y)
            rows = rows.astype(np.float64) if a.dtype.kind not in "iu" else rows
        out = [v for row in rows.tolist() for v in itertools.accumulate(row, step)]
        return np.moveaxis(from_py(out, a.dtype, moved.shape), -1, dim)
    return ref


register(
    OpInfo(P.cumsum, _scan_ref("sum"), ALL, _scan_samples, tols=HALF_TOLS),
    OpInfo(P.cumprod, _scan_ref("prod"), ALL, _scan_samples),
)
