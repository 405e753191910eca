"""OpInfo entries for the real FFTs (fnx/ir/aten/nn/fft.py), against ``np.fft``."""
from __future__ import annotations

import numpy as np

from ....core import dtype as D
from ....ops import aten
from ...database import ErrorInput, OpInfo, SampleInput, register
from ._common import C, F, SUMS, _arr, _np, _t


_NORM_R2C = {0: "backward", 1: "ortho", 2: "forward"}     # normalization: none, 1/sqrt(n), 1/n
_NORM_C2R = {0: "forward", 1: "ortho", 2: "backward"}


def _complex_of(x, *args):
    return np.dtype(np.complex64) if x.dtype == np.float32 else np.dtype(np.complex128)


def _fft_r2c_ref(x, dim, normalization, onesided):
    out = (np.fft.rfftn if onesided else np.fft.fftn)(x.astype(np.float64), axes=list(dim),
                                                       norm=_NORM_R2C[normalization])
    return out.astype(_complex_of(x))


def _fft_r2c_samples(info, device, dtype):
    yield SampleInput(_t((3, 6, 5), dtype, device), [1, 2], 0, True)
    yield SampleInput(_t((4, 6), dtype, device, noncontiguous=True), [-1], 1, False)
    yield SampleInput(_t((5,), dtype, device), [0], 2, True)
    yield SampleInput(_t((2, 3, 4), dtype, device), [0, 2], 2, False)


def _fft_r2c_errors(info, device):
    yield ErrorInput(SampleInput(_t((4,), D.int64, device), [0], 0, True), RuntimeError,
                     "expected a real floating input")
    yield ErrorInput(SampleInput(_t((4, 4), D.float32, device), [0, -2], 0, True),
                     RuntimeError, "dims must be unique")


def _fft_c2r_ref(x, dim, normalization, last_dim_size):
    dims = list(dim)
    s = [x.shape[d] for d in dims[:-1]] + [last_dim_size]
    out = np.fft.irfftn(x.astype(np.complex128), s=s, axes=dims, norm=_NORM_C2R[normalization])
    return out.astype(np.float32 if x.dtype == np.complex64 else np.float64)


def _fft_c2r_samples(info, device, dtype):
    real = D.float32 if dtype is D.complex64 else D.float64
    for shape, dims, norm in (((3, 6, 5), [1, 2], 0), ((4, 6), [1], 1), ((5, 4), [0], 2)):
        a = _np(_t(shape, real, device))
        half = np.fft.rfftn(a, axes=dims)                 # a Hermitian half-spectrum
        yield SampleInput(_arr(half, dtype, device), dims, norm, shape[dims[-1]])


def _fft_c2r_errors(info, device):
    yield ErrorInput(SampleInput(_t((4,), D.float32, device), [0], 0, 6), RuntimeError,
                     "expected a complex input")
    yield ErrorInput(SampleInput(_t((4,), D.complex64, device), [0], 0, 0), RuntimeError,
                     r"Invalid number of data points \(0\) specified")


register(
    OpInfo(aten._fft_r2c.default, _fft_r2c_ref, F, _fft_r2c_samples, tols=SUMS,
           error_inputs=_fft_r2c_errors),
    OpInfo(aten._fft_c2r.default, _fft_c2r_ref, C, _fft_c2r_samples, tols=SUMS,
           error_inputs=_fft_c2r_errors),
)
