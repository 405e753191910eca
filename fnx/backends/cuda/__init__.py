"""The CUDA backend: tensors on ``cuda:N`` hold ``jax.Array``s committed to that device.

JAX arrays are immutable, so this is a *functional* backend: its tensors carry the
Functionalize key (``fnx.keys.functionalize``), which turns in-place ops and views into
functional ops plus rebinding.  What reaches the CUDA key is functional:

- the boxed fallback (``_generic.generic_kernel``): every op, traced once per argument
  signature to prims, lowered with the JAX target and ``jax.jit``-ed for the device;
- direct kernels where a cheaper or more exact path exists: ``_to_copy`` (transfers and
  casts), ``_local_scalar_dense`` (``item()``), ``empty``/``empty_strided``.

``FNX_CUDA_ON_CPU=1`` maps cuda devices onto JAX's CPU devices (see ``fnx.cuda``).

>>> import fnx
>>> from fnx.backends import cuda as backend
>>> backend.register()
>>> if fnx.cuda.is_available():
...     x = fnx.ones(2, device="cuda")
...     print((x + 1).cpu())
... else:
...     print(fnx.tensor([2., 2.]))
tensor([2., 2.])
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ...core.device import CPU, canonical
from ...core.dispatch_key import AliasKey, DispatchKey
from ...core.meta_array import meta_tensor
from ...dispatch.dispatcher import all_ops, register_fallback
from ...ir.aten import conversion as C
from ...ir.aten import factory as F
from ...ir.aten import shape as S
from ...ir.strides import (channels_last_rank, channels_last_strides, contiguous_strides,
                           memory_format_name)
from ...lower.jax_compile import register_device_arrays
from ..cpu import conversion as cpu_conversion
from ..cpu._core import wrap as cpu_wrap
from .flags import (allow_fp16_bf16_reduction_math_sdp, cudnn_sdp_enabled, enable_cudnn_sdp,
                    enable_flash_sdp, enable_math_sdp, enable_mem_efficient_sdp,
                    flash_sdp_enabled, fp16_bf16_reduction_math_sdp_allowed, math_sdp_enabled,
                    matmul, mem_efficient_sdp_enabled, sdp_kernel)
from .jit_kernel import cache_info, clear_cache, generic_kernel, run_on_cpu
from .storage import (CUDA_KS, canonical_cuda, host_strides, jax_device, preserved_strides,
                      to_device, to_host, with_strides, wrap_array, x64)

__all__ = ["CUDA_KS", "wrap_array", "jax_device", "from_host", "cache_info", "clear_cache",
           "run_on_cpu", "register", "matmul", "enable_flash_sdp", "flash_sdp_enabled",
           "enable_mem_efficient_sdp", "mem_efficient_sdp_enabled", "enable_math_sdp",
           "math_sdp_enabled", "enable_cudnn_sdp", "cudnn_sdp_enabled", "sdp_kernel",
           "allow_fp16_bf16_reduction_math_sdp", "fp16_bf16_reduction_math_sdp_allowed"]

_CUDA = DispatchKey.CUDA
_CUDA_BIT = 1 << _CUDA


_direct = []     # (op, kernel): registered by ``register()``


def kernel(*ops):
    def deco(fn):
        _direct.extend((op, fn) for op in ops)
        return fn
    return deco


def from_host(arr, dtype, dev):
    """A cuda tensor on ``dev`` with the values of the NumPy array ``arr`` (and its strides,
    when dense: PyTorch's ``preserve_format``)."""
    t = wrap_array(to_device(arr, dev), dtype, dev)
    st = host_strides(arr)
    if st is not None:
        t._strides = st
    return t


def _kept_strides(t, memory_format):
    if memory_format_name(memory_format) != "preserve_format":
        return None
    st = t.__dict__.get("_strides")
    return None if st is None else preserved_strides(t.shape, st)


@kernel(C._to_copy)
def _to_copy(ks, self, *, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=False, memory_format=None):
    dev = canonical(device) if device is not None else self._device
    dtype = self._dtype if dtype is None else dtype
    strides = _kept_strides(self, memory_format)
    if dev.type == "cpu":
        # Cast on the host with the CPU kernel: exactly the CPU's conversion rules.
        arr = to_host(self._data, self._dtype)
        host = cpu_wrap(arr if strides is None else with_strides(arr, strides), self._dtype)
        return host if dtype is self._dtype else \
            C._to_copy.redispatch(1 << DispatchKey.CPU, host, dtype=dtype)
    if dev.type == "meta":
        return meta_tensor(tuple(self.shape), dtype)
    if dev.type != "cuda":
        host = _to_copy(ks, self, dtype=dtype, device=CPU)
        return C._to_copy.redispatch(1 << DispatchKey.CPU, host, device=dev)
    data = self._data
    if dtype is not self._dtype:
        data = generic_kernel(C._to_copy, ks, (self,), {"dtype": dtype})._data
    if dev is not self._device:
        data = to_device(data, dev)
    # JAX arrays are immutable: the "copy" may share the array
    out = wrap_array(data, dtype, dev)
    if strides is not None:
        out._strides = strides
    return out


@kernel(C._local_scalar_dense)
def _local_scalar_dense(ks, self):
    host = cpu_wrap(to_host(self._data, self._dtype), self._dtype)
    return cpu_conversion._local_scalar_dense(ks, host)


@kernel(S.clone)
def _clone(ks, self, *, memory_format=None):
    # JAX arrays are immutable: the clone shares the array; only the layout it reports
    # follows the memory format (as PyTorch's strides would)
    S.clone.meta(self, memory_format=memory_format)
    out = wrap_array(self._data, self._dtype, self._device)
    mf = memory_format_name(memory_format)
    if channels_last_rank(mf) is not None:
        st = channels_last_strides(tuple(self.shape), mf)
        if st != contiguous_strides(tuple(self.shape)):
            out._strides = st
    elif mf == "preserve_format":
        st = _kept_strides(self, None)
        if st is not None:
            out._strides = st
    return out


def _zeros(shape, dtype, dev):
    with x64(True):
        arr = jax.device_put(jnp.zeros(shape, dtype.numpy), jax_device(dev))
    return wrap_array(arr, dtype, dev)


@kernel(F.empty)
def _empty(ks, size, *, dtype=None, layout=None, device=None, pin_memory=None,
           memory_format=None):
    m = F.empty.meta(size, dtype=dtype)
    return _zeros(m.shape, m.dtype, canonical_cuda(device or "cuda"))


@kernel(F.empty_strided)
def _empty_strided(ks, size, stride, *, dtype=None, layout=None, device=None,
                   pin_memory=None):
    m = F.empty_strided.meta(size, stride, dtype=dtype)
    return _zeros(m.shape, m.dtype, canonical_cuda(device or "cuda"))


_registered = False


def register() -> None:
    """Install the backend: the CUDA key's kernels, the Functionalize key's, the host
    upload used by CPU ``_to_copy``.  Idempotent; ``fnx`` calls it at import."""
    global _registered
    if _registered:
        return
    _registered = True
    for op, fn in _direct:
        op.register(_CUDA, fn)
    register_fallback(_CUDA, generic_kernel)
    for op in all_ops():
        # Core ops whose CPU kernel is their decomposition: one jitted program each here
        # (not one per op the decomposition calls).
        if AliasKey.CompositeExplicitAutograd in op.kernels and _CUDA not in op.kernels \
                and not op.schema.is_mutable:
            op.register(_CUDA, lambda ks, *a, _op=op, **k: generic_kernel(_op, ks, a, k))
    cpu_conversion.register_transfer("cuda", lambda arr, dtype, dev: from_host(arr, dtype, dev))
    register_device_arrays("cuda", wrap_array)
