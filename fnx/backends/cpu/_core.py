"""What every CPU kernel shares: wrapping NumPy arrays as tensors, reading operands,
and registering kernels on the CPU key.

Kernels read a tensor's storage as ``t._data``, a NumPy array: for a *resident* tensor
(storage in a ``jax.Array`` a compiled program left, ``wrap_resident``) that is a
zero-copy read-only view; the ADInplaceOrView key gives a tensor about to be written or
aliased a private writable copy first (``fnx.core.tensor.make_private``), so kernels
never see the difference."""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...core.device import CPU
from ...core.dispatch_key import CPU_KS, DispatchKey
from ...core.tensor import Tensor

__all__ = ["CPU_KS", "wrap", "wrap_resident", "data", "register", "kernel",
           "same_device_error"]

_new = Tensor.__new__
_ndarray = np.ndarray
_asarray = np.asarray


def wrap(arr, dtype):
    """A CPU tensor over ``arr`` (NumPy returns scalars from 0-dim math: re-wrap those)."""
    t = _new(Tensor)
    t._data = arr if arr.__class__ is _ndarray else _asarray(arr)
    t._dtype = dtype
    t._device = CPU
    t._ks = CPU_KS
    return t


def wrap_resident(arr, dtype):
    """A resident CPU tensor whose storage is the CPU ``jax.Array`` ``arr`` (of exactly
    ``dtype``'s NumPy dtype), with no copy."""
    t = _new(Tensor)
    t._jax = arr
    t._dtype = dtype
    t._device = CPU
    t._ks = CPU_KS
    return t


def wrap_np(arr):
    """Wrap an array whose NumPy dtype is exactly the tensor's dtype."""
    arr = _asarray(arr)
    return wrap(arr, D.from_numpy_dtype(arr.dtype))


def same_device_error(op_name, a, b):
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                        f"two devices, {a} and {b}! (when checking argument for {op_name})")


def data(x, op_name="op"):
    """The NumPy array of a CPU tensor argument; Python scalars pass through."""
    if isinstance(x, Tensor):
        if x._device is not CPU:
            raise same_device_error(op_name, x._device, "cpu")
        return x._data
    return x


def register(op, fn):
    """Register ``fn(keyset, *args, **kwargs)`` as ``op``'s CPU kernel."""
    op.register(DispatchKey.CPU, fn)
    return fn


def kernel(*ops):
    """Decorator form of ``register`` for one or more ops sharing a kernel."""
    def deco(fn):
        for op in ops:
            register(op, fn)
        return fn
    return deco
