"""CPU kernels for conversions: dtype casts, copies, Python scalars."""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...core.device import CPU, canonical
from ...core.meta_array import meta_tensor
from ...ir.aten import conversion as C
from ...ops import aten
from ._core import kernel, wrap

# device type -> fn(ndarray, dtype, device) making a tensor there from host data (a
# backend's direct upload; without one, the target backend's empty + copy_ do it)
_transfers: dict = {}


def register_transfer(device_type: str, fn) -> None:
    """Let ``_to_copy`` to ``device_type`` upload with ``fn(ndarray, dtype, device)``."""
    _transfers[device_type] = fn


@kernel(C._to_copy)
def _to_copy(ks, self, *, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=False, memory_format=None):
    dtype = self._dtype if dtype is None else dtype
    dev = canonical(device) if device is not None else self._device
    if self._device is not CPU:
        raise RuntimeError(f"_to_copy: expected a cpu tensor, got {self._device}")
    if dev.type == "meta":
        return meta_tensor(self._data.shape, dtype)
    if dev is not CPU and dev.type in _transfers:
        return _transfers[dev.type](self._data.astype(dtype.numpy, copy=False), dtype, dev)
    out = wrap(self._data.astype(dtype.numpy, copy=True), dtype)
    if dev is not CPU:
        # Another device's backend owns the transfer: an empty tensor there, then copy_,
        # which dispatches to that backend's key (higher than CPU).
        dst = aten.empty.memory_format(list(self._data.shape), dtype=dtype, device=dev)
        return aten.copy_.default(dst, out, non_blocking)
    return out


@kernel(C._local_scalar_dense)
def _local_scalar_dense(ks, self):
    v = self._data.reshape(()).item() if self._data.size == 1 else None
    if v is None:
        raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to "
                           f"Scalar")
    if self._dtype is D.bfloat16:
        v = float(v)
    return v


@kernel(C.copy_)
def _copy_(ks, self, src, non_blocking=False):
    C.copy_.meta(self, src)
    if src._device is not CPU:
        src = src.to("cpu")
    np.copyto(self._data, src._data, casting="unsafe")
    return self


@kernel(C.copy)
def _copy(ks, self, src, non_blocking=False):
    """The functional copy: ``copy_`` into a fresh tensor of ``self``'s shape and dtype."""
    return _copy_(ks, wrap(np.empty_like(self._data), self._dtype), src, non_blocking)


@kernel(C.scalar_tensor)
def _scalar_tensor(ks, s, *, dtype=None, layout=None, device=None, pin_memory=None):
    d = dtype if dtype is not None else D.scalar_dtype(s)
    return wrap(np.asarray(s).astype(d.numpy), d)
