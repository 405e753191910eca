"""OpInfo entries of the FFT prims (fnx/ir/prims/fft.py): the references multiply by the
DFT matrix ``exp(-+2 pi i j k / n)`` one dim at a time in complex128 (the kernels call
``np.fft``), unnormalized both ways."""
from __future__ import annotations

import numpy as np

from ....core import dtype as D
from ....ir import prims as P
from ...database import OpInfo, SampleInput, make_tensor, register
from ._common import COMPLEX, wide


def _dft(a, dims, forward=True):
    """The unnormalized transform of ``a`` over ``dims``, one dim at a time."""
    a = a.astype(np.complex128)
    for d in dims:
        n = a.shape[d]
        k = np.arange(n)
        m = np.exp((-2j if forward else 2j) * np.pi * np.outer(k, k) / n)
        a = np.moveaxis(np.tensordot(m, np.moveaxis(a, d, 0), axes=(1, 0)), 0, d)
    return a


def _c2c_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device), [1], True)
    yield SampleInput(make_tensor((3, 4), dtype, device), [0, 1], False)
    yield SampleInput(make_tensor((2, 3, 4), dtype, device, noncontiguous=True), [0, 2], True)


def _c2c_ref(a, dim, forward):
    return _dft(wide(a), dim, forward).astype(a.dtype)


def _r2c_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device), [1], True)
    yield SampleInput(make_tensor((3, 5), dtype, device), [0, 1], False)
    yield SampleInput(make_tensor((2, 3, 4), dtype, device).transpose(0, 2), [2, 1], True)


def _r2c_ref(a, dim, onesided):
    r = _dft(wide(a), dim)
    if onesided and dim:
        # the one-sided half: entries 0 .. n // 2 of the last dim (the rest mirror them)
        last = dim[-1]
        r = np.take(r, np.arange(a.shape[last] // 2 + 1), axis=last)
    return r.astype(np.complex64 if a.dtype == np.float32 else np.complex128)


def _c2r_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 3), dtype, device), [1], 4)
    yield SampleInput(make_tensor((4, 3), dtype, device), [0, 1], 5)
    yield SampleInput(make_tensor((2, 3), dtype, device), [1], 5)


def _c2r_ref(a, dim, last_dim_size):
    """The inverse transform over all but the last dim, then the last dim's spectrum
    completed by Hermitian symmetry (X[n - k] = conj(X[k])), inverse transformed, real
    part (the imaginary parts of X[0] and X[n / 2] drop out there)."""
    x = _dft(wide(a), dim[:-1], forward=False)
    last, n = dim[-1], last_dim_size
    m = a.shape[last]
    mirror = np.conj(np.take(x, [n - k for k in range(m, n)], axis=last))
    full = np.concatenate([x, mirror], axis=last)
    out = np.float32 if a.dtype == np.complex64 else np.float64
    return _dft(full, [last], forward=False).real.astype(out)


register(
    OpInfo(P.fft_c2c, _c2c_ref, COMPLEX, _c2c_samples, tols={D.complex64: (1e-5, 1e-4)}),
    OpInfo(P.fft_r2c, _r2c_ref, (D.float32, D.float64), _r2c_samples,
           tols={D.float32: (1e-5, 1e-4), D.complex64: (1e-5, 1e-4)}),
    OpInfo(P.fft_c2r, _c2r_ref, COMPLEX, _c2r_samples,
           tols={D.complex64: (1e-5, 1e-4), D.float32: (1e-5, 1e-4)}),
)
