"""OpInfo entries of the data-dependent prims (fnx/ir/prims/data_dependent.py)."""
from __future__ import annotations

import numpy as np

from ....ir import prims as P
from ...database import OpInfo, SampleInput, make_tensor, register
from ._common import ALL


def _nonzero_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device, low=0, high=2))
    yield SampleInput(make_tensor((), dtype, device, low=0, high=2))
    yield SampleInput(make_tensor((0, 3), dtype, device))
    yield SampleInput(make_tensor((4, 3), dtype, device, low=0, high=2).t())


def _nonzero_ref(a):
    # the positions of the nonzero elements, in row-major order
    hits = [p for p in np.ndindex(*a.shape) if a[p] != 0]
    return np.array(hits, np.int64).reshape(len(hits), a.ndim)


register(
    OpInfo(P.nonzero, _nonzero_ref, ALL, _nonzero_samples,
           skips={"meta": "the output shape depends on the data (the meta function raises "
                          "NotImplementedError by design)",
                  "lowering": "data-dependent output shape: runs eagerly, never traced"}),
)
