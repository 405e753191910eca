"""The real FFTs ``_fft_r2c`` and ``_fft_c2r``: core ops with a NumPy kernel on CPU."""
from __future__ import annotations

import math

from ....core import dtype as D
from ....ops import aten, prims
from ...registry import TensorMeta, defop
from ...dims import wrap_dim
from ._common import CORE


def _fft_norm_scale(shape, dims, normalization):
    n = math.prod(shape[d] for d in dims)
    if normalization == 0:
        return None
    if normalization == 1:
        return 1.0 / math.sqrt(n)
    if normalization == 2:
        return 1.0 / n
    raise RuntimeError(f"Invalid normalization mode: {normalization}")


def _fft_dims(name, self, dim):
    dims = [wrap_dim(d, self.ndim) for d in dim]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{name}: dims must be unique")
    return dims


def _fft_r2c_meta(self, dim, normalization, onesided):
    if self.dtype not in (D.float32, D.float64, D.float16):
        raise RuntimeError(f"_fft_r2c: expected a real floating input, got "
                           f"{self.dtype.scalar_type}")
    dims = _fft_dims("_fft_r2c", self, dim)
    shape = list(self.shape)
    if onesided and dims:
        shape[dims[-1]] = shape[dims[-1]] // 2 + 1
    return TensorMeta(tuple(shape), self.dtype.to_complex())


def _fft_r2c(self, dim, normalization, onesided):
    _fft_r2c_meta(self, dim, normalization, onesided)
    dims = _fft_dims("_fft_r2c", self, dim)
    out = prims.fft_r2c(self, dims, onesided)
    sc = _fft_norm_scale(self.shape, dims, normalization)
    return out if sc is None else out * sc


def _fft_c2r_meta(self, dim, normalization, last_dim_size):
    if not self.dtype.is_complex:
        raise RuntimeError(f"_fft_c2r: expected a complex input, got {self.dtype.scalar_type}")
    dims = _fft_dims("_fft_c2r", self, dim)
    if not dims:
        raise RuntimeError("_fft_c2r: expected at least one dim")
    if last_dim_size < 1:
        raise RuntimeError(f"Invalid number of data points ({last_dim_size}) specified")
    shape = list(self.shape)
    shape[dims[-1]] = last_dim_size
    return TensorMeta(tuple(shape), self.dtype.to_real())


def _fft_c2r(self, dim, normalization, last_dim_size):
    meta = _fft_c2r_meta(self, dim, normalization, last_dim_size)
    dims = _fft_dims("_fft_c2r", self, dim)
    x = self
    want = last_dim_size // 2 + 1
    have = x.shape[dims[-1]]
    if have > want:
        x = aten.slice.Tensor(x, dims[-1], 0, want)
    elif have < want:
        pad = [0, 0] * (x.ndim - 1 - dims[-1]) + [0, want - have]
        x = aten.constant_pad_nd(x, pad, 0)
    out = prims.fft_c2r(x, dims, last_dim_size)
    sc = _fft_norm_scale(meta.shape, dims, normalization)
    return out if sc is None else out * sc


_fft_r2c_op = defop("_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor",
                    tags=CORE, meta=_fft_r2c_meta, decomposition=_fft_r2c, explicit=True)
_fft_c2r_op = defop("_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) "
                    "-> Tensor", tags=CORE, meta=_fft_c2r_meta, decomposition=_fft_c2r,
                    explicit=True)
