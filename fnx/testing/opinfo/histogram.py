"""OpInfo entries of fnx/ir/aten/histogram.py against ``np.histogram`` (equal bins over a
range or the data's, explicit edges, weights, density)."""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...ir.aten import histogram as H
from ..database import ErrorInput, OpInfo, SampleInput, register
from ..database import make_tensor as mk

DT = (D.float32, D.float64)


def _np_hist(a, bins, range_, weight, density):
    a = a.astype(np.float64).reshape(-1)
    w = None if weight is None else weight.astype(np.float64).reshape(-1)
    if range_ is None and not isinstance(bins, np.ndarray) and a.size:
        lo, hi = a.min(), a.max()
        range_ = (lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)
    elif range_ is not None and range_[0] == range_[1]:
        range_ = (range_[0] - 0.5, range_[1] + 0.5)
    h, e = np.histogram(a, bins, range=range_, weights=w, density=density)
    return h, e


def _bin_ct_ref(a, bins=100, range=None, weight=None, density=False):
    h, e = _np_hist(a, bins, range, weight, density)
    return h.astype(a.dtype), e.astype(a.dtype)


def _bins_tensor_ref(a, bins, weight=None, density=False):
    h, _ = _np_hist(a, bins.astype(np.float64), None, weight, density)
    return h.astype(a.dtype), bins.copy()


def _bin_ct_samples(info, device, dtype):
    x = mk((4, 5), dtype, device, low=-3, high=3)
    yield SampleInput(x, 7)
    yield SampleInput(x, 4, range=[-1.0, 2.0])
    yield SampleInput(x, 5, weight=mk((4, 5), dtype, device, low=0, high=2), density=True)
    yield SampleInput(mk((6,), dtype, device).fill_(1.5), 3)
    yield SampleInput(mk((3,), dtype, device), 2, range=[1.0, 1.0])


def _bins_tensor_samples(info, device, dtype):
    x = mk((20,), dtype, device, low=-3, high=3)
    edges = mk((5,), dtype, device, low=-3, high=3).sort().values
    yield SampleInput(x, edges)
    yield SampleInput(x, edges, weight=mk((20,), dtype, device, low=0, high=2), density=True)
    yield SampleInput(mk((2, 3), dtype, device, low=0, high=2),
                      mk((3,), dtype, device, low=0, high=2).sort().values)


def _errors(info, device):
    yield ErrorInput(SampleInput(mk((3,), D.int64, device), 2),
                     NotImplementedError, '"histogramdd" not implemented for \'Long\'')
    yield ErrorInput(SampleInput(mk((3,), D.float32, device), 2, range=[2.0, 1.0]),
                     match="torch.histogramdd: min should not exceed max, but got min 2.0 "
                           "max 1.0 for dimension 0")
    yield ErrorInput(SampleInput(mk((3,), D.float32, device), 0),
                     match="bins must be > 0")


register(OpInfo(H.histogram_bin_ct, _bin_ct_ref, DT, _bin_ct_samples, error_inputs=_errors),
         OpInfo(H.histogram_bins_tensor, _bins_tensor_ref, DT, _bins_tensor_samples))
