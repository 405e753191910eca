"""OpInfo entries of the creation prims (fnx/ir/prims/creation.py)."""
from __future__ import annotations

import numpy as np

from ....core import dtype as D
from ....ir import prims as P
from ...database import FLOATS, INTS, ErrorInput, OpInfo, SampleInput, register
from ._common import ALLC, from_py, is_float


def _iota_samples(info, device, dtype):
    yield SampleInput([3, 4], 1, dtype=dtype, device=device)
    yield SampleInput([5], 0, dtype=dtype, device=device)
    yield SampleInput([0, 2], 0, dtype=dtype, device=device)


def _iota_ref(shape, dimension, *, dtype, device=None):
    # every element's index along ``dimension``
    return np.indices(shape, np.int64)[dimension].astype(dtype.numpy)


def _full_samples(info, device, dtype):
    v = True if dtype is D.bool else (3 if not is_float(dtype) else -1.5)
    yield SampleInput([3, 4], v, dtype=dtype, device=device)
    yield SampleInput([], v, dtype=dtype, device=device)
    yield SampleInput([0, 2], v, dtype=dtype, device=device)
    if is_float(dtype):
        yield SampleInput([2], float("nan"), dtype=dtype, device=device)
        yield SampleInput([2], 7, dtype=dtype, device=device)


def _full_ref(shape, value, *, dtype, device=None):
    n = int(np.prod(shape, dtype=np.int64))
    return from_py([value] * n, dtype.numpy, tuple(shape))


def _full_errors(info, device):
    yield ErrorInput(SampleInput([2], 1.5, dtype=D.int64, device=device), RuntimeError,
                     "prims.full: value 1.5 is not representable")
    yield ErrorInput(SampleInput([-1], 1, dtype=D.int64, device=device), RuntimeError,
                     "negative size")


register(
    OpInfo(P.iota, _iota_ref, FLOATS + INTS, _iota_samples),
    OpInfo(P.full, _full_ref, ALLC, _full_samples, error_inputs=_full_errors),
)
