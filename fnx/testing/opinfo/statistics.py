"""OpInfo entries of fnx/ir/aten/statistics.py: NumPy's nansum, nanmean, cov, corrcoef
and isclose are the references (NumPy's ``cov`` takes the same correction, frequency and
observation weights as PyTorch's)."""
from __future__ import annotations

import re

import numpy as np

import fnx

from ...core import dtype as D
from ...ir.aten import statistics as St
from ..database import (ALL_DTYPES, FLOATS, ErrorInput, OpInfo, SampleInput, make_tensor,
                        register)

COMPLEX = (D.complex64, D.complex128)
TOLS = {D.float16: (1e-2, 1e-2), D.bfloat16: (5e-2, 5e-2), D.float32: (1e-5, 1e-4)}
F64 = (D.float32, D.float64)


def _with_nans(shape, dtype, device):
    x = make_tensor(shape, dtype, device)
    if dtype.is_floating_point and x.numel():
        a = x.cpu().numpy().copy()
        a.reshape(-1)[::3] = np.nan
        x = fnx.tensor(a, dtype=dtype, device=device)
    return x


def _floating(a) -> bool:
    return a.dtype.kind in "fc" or a.dtype.name == "bfloat16"     # bfloat16's kind is "V"


def _axes(dim, ndim):
    if dim is None or dim == []:
        return None
    return tuple(d % max(ndim, 1) for d in dim) if ndim else None


def _nan_samples(info, device, dtype):
    yield SampleInput(_with_nans((3, 4), dtype, device))
    yield SampleInput(_with_nans((3, 4), dtype, device), [1], True)
    yield SampleInput(_with_nans((2, 3, 4), dtype, device), [0, -1])
    yield SampleInput(_with_nans((), dtype, device))
    yield SampleInput(make_tensor((0, 3), dtype, device), [0])
    yield SampleInput(make_tensor((3, 4), dtype, device, noncontiguous=True), [1])


def _nansum_ref(a, dim=None, keepdim=False, *, dtype=None):
    out = dtype.numpy if dtype is not None else (a.dtype if _floating(a) else np.int64)
    r = np.nansum(a.astype(np.float64) if _floating(a) and a.dtype.kind != "c" else a,
                  axis=_axes(dim, a.ndim), keepdims=keepdim)
    return np.asarray(r).astype(out)


def _nanmean_ref(a, dim=None, keepdim=False, *, dtype=None):
    with np.errstate(all="ignore"):
        r = np.nanmean(a.astype(np.float64), axis=_axes(dim, a.ndim), keepdims=keepdim)
    return np.asarray(r).astype(a.dtype)


def _nanmean_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((3,), D.int64, device)), RuntimeError,
                     re.escape("nanmean(): expected input to have floating point or complex "
                               "dtype but got Long"))


def _cov_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 5), dtype, device))
    yield SampleInput(make_tensor((5,), dtype, device))
    yield SampleInput(make_tensor((2, 6), dtype, device), correction=0)
    yield SampleInput(make_tensor((2, 6), dtype, device), correction=2,
                      fweights=fnx.tensor([1, 2, 1, 3, 1, 2], device=device))
    yield SampleInput(make_tensor((2, 4), dtype, device),
                      aweights=fnx.tensor([0.5, 1.0, 2.0, 0.25], device=device))
    yield SampleInput(make_tensor((3, 4), dtype, device, noncontiguous=True), correction=0,
                      fweights=fnx.tensor([2, 1, 1, 3], device=device),
                      aweights=fnx.tensor([0.5, 1.0, 2.0, 0.25], device=device))


def _cov_ref(a, *, correction=1, fweights=None, aweights=None):
    out = a.dtype if _floating(a) else np.float32
    r = np.cov(a.astype(np.float64), ddof=correction, fweights=fweights, aweights=aweights)
    return np.asarray(r).astype(out)


def _cov_errors(info, device):
    x = make_tensor((2, 3), D.float32, device)
    yield ErrorInput(SampleInput(make_tensor((2, 2, 2), D.float32, device)), RuntimeError,
                     re.escape("cov(): expected input to have two or fewer dimensions"))
    yield ErrorInput(SampleInput(x, fweights=fnx.tensor([1, 2], device=device)), RuntimeError,
                     re.escape("cov(): expected fweights to have the same numel"))
    yield ErrorInput(SampleInput(x, fweights=fnx.tensor([1., 2., 3.], device=device)),
                     RuntimeError, re.escape("cov(): expected fweights to have integral dtype"))
    yield ErrorInput(SampleInput(x, aweights=fnx.tensor([1, 2, 3], device=device)),
                     RuntimeError,
                     re.escape("cov(): expected aweights to have floating point dtype"))


def _corrcoef_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 5), dtype, device))
    yield SampleInput(make_tensor((2, 4), dtype, device, noncontiguous=True))


def _corrcoef_ref(a):
    return np.clip(np.corrcoef(a.astype(np.float64)), -1, 1).astype(a.dtype)


def _isclose_samples(info, device, dtype):
    a = make_tensor((3, 4), dtype, device)
    yield SampleInput(a, a.clone())
    b = make_tensor((3, 4), dtype, device)
    yield SampleInput(a, b, 0.5, 0.5)
    if dtype.is_floating_point:
        x = fnx.tensor([1., float("inf"), float("nan"), -float("inf"), 2.], dtype=dtype,
                       device=device)
        y = fnx.tensor([1.000001, float("inf"), float("nan"), float("inf"), 2.2],
                       dtype=dtype, device=device)
        yield SampleInput(x, y)
        yield SampleInput(x, y, 1e-3, 0.0, True)
        yield SampleInput(x, y, 0.0, 0.0)
    yield SampleInput(make_tensor((0, 2), dtype, device), make_tensor((0, 2), dtype, device))
    yield SampleInput(make_tensor((3, 1), dtype, device), make_tensor((4,), dtype, device),
                      0.1, 1.0)


def _isclose_ref(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    if a.dtype.kind in "biu":
        a, b = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(all="ignore"):
        return np.isclose(a.astype(np.float64), b.astype(np.float64), rtol, atol, equal_nan)


def _isclose_errors(info, device):
    x = make_tensor((2,), D.float32, device)
    yield ErrorInput(SampleInput(make_tensor((2,), D.int64, device), x), RuntimeError,
                     "Long did not match Float")
    yield ErrorInput(SampleInput(x, x, -1.0), RuntimeError,
                     "rtol must be greater than or equal to zero, but got -1.0")


register(
    OpInfo(St.nansum, _nansum_ref, ALL_DTYPES, _nan_samples, tols=TOLS),
    OpInfo(St.nanmean, _nanmean_ref, FLOATS, _nan_samples, tols=TOLS,
           error_inputs=_nanmean_errors),
    OpInfo(St.cov, _cov_ref, F64 + (D.int64,), _cov_samples, tols=TOLS,
           error_inputs=_cov_errors),
    OpInfo(St.corrcoef, _corrcoef_ref, F64, _corrcoef_samples, tols=TOLS),
    OpInfo(St.isclose, _isclose_ref, ALL_DTYPES, _isclose_samples, error_inputs=_isclose_errors),
)
