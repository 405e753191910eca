"""What every CUDA kernel shares: the keyset of a cuda tensor, wrapping ``jax.Array``s,
finding the JAX device of an fnx device, and moving arrays between devices."""
from __future__ import annotations

import jax
import numpy as np

from ...core.device import CPU
from ...core.device import device as _device
from ...core.dispatch_key import DispatchKey
from ...core.tensor import Tensor
from . import devices as _cuda

__all__ = ["CUDA_KS", "wrap_array", "jax_device", "to_device", "x64", "is_functional"]

# A functional backend: in-place ops and views go through the Functionalize key.
CUDA_KS = (1 << DispatchKey.CUDA) | (1 << DispatchKey.Functionalize) | \
    (1 << DispatchKey.ADInplaceOrView)
FUNCTIONALIZE_BIT = 1 << DispatchKey.Functionalize
_new = Tensor.__new__
_jax_devices = {}       # fnx.device -> jax device
x64 = jax.enable_x64    # every JAX call runs with 64-bit types on (int64 stays int64)


def jax_device(dev):
    """The JAX device standing for cuda device ``dev`` (RuntimeError when there is none)."""
    jd = _jax_devices.get(dev)
    if jd is None:
        jd = _jax_devices[dev] = _cuda.jax_device(dev.index or 0)
    return jd


def wrap_array(arr, dtype, dev) -> Tensor:
    """A cuda tensor on ``dev`` holding the ``jax.Array`` ``arr`` (already on that device)."""
    t = _new(Tensor)
    t._data = arr
    t._dtype = dtype
    t._device = dev
    t._ks = CUDA_KS
    return t


def to_device(x, dev):
    """A host array or a jax.Array of another device, committed to cuda device ``dev``."""
    jd = jax_device(dev)
    if isinstance(x, np.ndarray) and jd.platform == "cpu":
        x = x.copy()    # JAX's CPU client may alias host memory: fnx CPU tensors mutate
    with x64(True):     # or int64/float64 host data would be narrowed to 32 bits
        return jax.device_put(x, jd)


def to_host(arr, dtype) -> np.ndarray:
    """A writable NumPy copy of a jax.Array (with the exact NumPy dtype of ``dtype``)."""
    out = np.array(arr)
    return out if out.dtype == dtype.numpy else out.astype(dtype.numpy)


def preserved_strides(shape, strides):
    """PyTorch's ``preserve_format`` on a copy: a dense, non-overlapping tensor keeps its
    strides.  None when they are the contiguous ones or the tensor is not dense."""
    shape, strides = tuple(shape), tuple(strides)
    acc, contiguous = 1, []
    for sz in reversed(shape):
        contiguous.append(acc)
        acc *= max(sz, 1)
    if strides == tuple(reversed(contiguous)) or acc == 0:
        return None
    expected = 1
    for st, sz in sorted((st, sz) for sz, st in zip(shape, strides) if sz != 1):
        if st != expected:
            return None
        expected *= sz
    return strides


def host_strides(arr):
    """The element strides of a NumPy array that a copy of it keeps (or None)."""
    if arr.flags.c_contiguous or not arr.ndim:
        return None
    isz = arr.itemsize
    return preserved_strides(arr.shape, tuple(s // isz for s in arr.strides))


def with_strides(arr, strides):
    """A NumPy copy of ``arr`` laid out with ``strides`` (a dense permutation)."""
    perm = sorted(range(arr.ndim), key=lambda d: -strides[d])
    inv = [0] * arr.ndim
    for i, p in enumerate(perm):
        inv[p] = i
    return np.ascontiguousarray(arr.transpose(perm)).transpose(inv)


def is_functional(t) -> bool:
    return bool(t._ks & FUNCTIONALIZE_BIT)


def canonical_cuda(dev):
    """A cuda ``fnx.device`` with its index filled in."""
    d = _device(dev)
    return _device("cuda", d.index if d.index is not None else _cuda.current_device())


__all__ += ["to_host", "canonical_cuda", "CPU", "FUNCTIONALIZE_BIT", "preserved_strides",
            "host_strides", "with_strides"]
