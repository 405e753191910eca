"""``fnx.cuda``'s memory and device-property queries, read from JAX's device allocator.

A cuda tensor's memory is a ``jax.Array`` buffer that XLA's allocator hands out (on a GPU,
a BFC pool that JAX preallocates: by default 75% of the device). PyTorch's caching
allocator terms map onto it:

- ``memory_allocated``: bytes in live buffers (``bytes_in_use``);
- ``memory_reserved``: bytes the pool holds from the driver (``pool_bytes``);
- the ``max_*`` forms: their peaks; ``memory_stats()`` gives the same under PyTorch's keys.

Two differences, both from XLA: its allocator cannot reset its peaks, so after
``reset_peak_memory_stats()`` a peak is exact once the device goes past the peak it had at
the reset, and is that old peak (an upper bound) until then; and it never hands its pool
back, so ``empty_cache()`` frees nothing. ``mem_get_info()`` and a device's
``total_memory`` are the pool's limit: what fnx tensors on the device can use.

Under the test switch (``FNX_CUDA_ON_CPU=1``) a cuda device is a JAX CPU device, whose
allocator keeps no statistics: ``memory_allocated`` then sums the live arrays on it, and
the peaks raise.

>>> import fnx
>>> if fnx.cuda.is_available():
...     before = fnx.cuda.memory_allocated()
...     x = fnx.empty(1024, device="cuda")
...     assert fnx.cuda.memory_allocated() - before >= 4096
"""
from __future__ import annotations

import os
import warnings
from collections import OrderedDict

from . import devices

__all__ = ["memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "memory_stats", "empty_cache", "mem_get_info", "get_device_properties",
           "get_device_capability", "is_bf16_supported"]


def _jax(device):
    index = devices.current_device() if device is None else devices._index(device)
    return index, devices.jax_device(index)


def _device_stats(jd):
    """The allocator statistics of JAX device ``jd`` (XLA's names), or None when its
    allocator keeps none (a CPU device)."""
    stats = jd.memory_stats()
    return stats if stats and "bytes_in_use" in stats else None


def _live_bytes(jd) -> int:
    """Bytes of the live arrays with a buffer on ``jd`` (what a CPU device holds); an array
    laid out over devices counts its shards on ``jd``."""
    return sum(devices.arrays_on(jd, lambda a, held: a.nbytes if len(held) == 1 else sum(
        s.data.nbytes for s in a.addressable_shards if s.device == jd)))


# peaks at the last reset, per device index: {"peak_bytes_in_use": n, "peak_pool_bytes": m}
_reset_at: dict = {}
_warned: set = set()


def _peak(index, stats, key, what) -> int:
    mark = _reset_at.get(index, {}).get(key)
    if mark is not None and stats.get(key, 0) <= mark and what not in _warned:
        _warned.add(what)
        warnings.warn(f"fnx.cuda.{what}: XLA's allocator cannot reset its peak; until the "
                      f"device goes past the peak it had at reset_peak_memory_stats() "
                      f"({mark} bytes), that peak is reported (an upper bound)",
                      UserWarning, stacklevel=3)
    return stats.get(key, 0)


def _stats_or_raise(index, jd, what):
    stats = _device_stats(jd)
    if stats is None:
        raise RuntimeError(f"fnx.cuda.{what}: cuda:{index} is a JAX {jd.platform} device "
                           f"(FNX_CUDA_ON_CPU), whose allocator keeps no statistics")
    return stats


def memory_allocated(device=None) -> int:
    """Bytes held by live tensors (buffers) on the device.

    >>> import fnx
    >>> isinstance(fnx.cuda.memory_allocated(), int) if fnx.cuda.is_available() else True
    True
    """
    _, jd = _jax(device)
    stats = _device_stats(jd)
    return int(stats["bytes_in_use"]) if stats is not None else _live_bytes(jd)


def max_memory_allocated(device=None) -> int:
    """The most bytes live tensors held on the device at once (since the last
    ``reset_peak_memory_stats``: see the module's note)."""
    index, jd = _jax(device)
    stats = _stats_or_raise(index, jd, "max_memory_allocated")
    return int(_peak(index, stats, "peak_bytes_in_use", "max_memory_allocated"))


def memory_reserved(device=None) -> int:
    """Bytes the device's allocator holds from the driver (its pool)."""
    index, jd = _jax(device)
    stats = _stats_or_raise(index, jd, "memory_reserved")
    return int(stats.get("pool_bytes", stats.get("bytes_reserved", stats["bytes_in_use"])))


def max_memory_reserved(device=None) -> int:
    """The most bytes the device's pool has held (see the module's note on resets)."""
    index, jd = _jax(device)
    stats = _stats_or_raise(index, jd, "max_memory_reserved")
    if "peak_pool_bytes" not in stats:
        return memory_reserved(index)
    return int(_peak(index, stats, "peak_pool_bytes", "max_memory_reserved"))


def reset_peak_memory_stats(device=None) -> None:
    """Start the peaks anew from here (as far as XLA allows: see the module's note)."""
    index, jd = _jax(device)
    stats = _stats_or_raise(index, jd, "reset_peak_memory_stats")
    _reset_at[index] = {k: stats[k] for k in ("peak_bytes_in_use", "peak_pool_bytes")
                        if k in stats}


def reset_max_memory_allocated(device=None) -> None:
    """Deprecated in PyTorch: ``reset_peak_memory_stats``."""
    warnings.warn("fnx.cuda.reset_max_memory_allocated now calls "
                  "fnx.cuda.reset_peak_memory_stats, which resets all peak memory statistics",
                  FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def memory_stats(device=None) -> OrderedDict:
    """The allocator's statistics under PyTorch's keys (``"allocated_bytes.all.current"``,
    ``"reserved_bytes.all.peak"``, ...): those XLA keeps. Empty on a device that keeps
    none, as PyTorch's is before the first allocation."""
    index, jd = _jax(device)
    stats = _device_stats(jd)
    if stats is None:
        return OrderedDict()
    out = {"allocated_bytes.all.current": stats["bytes_in_use"],
           "allocated_bytes.all.peak": max_memory_allocated(index),
           "allocation.all.current": stats.get("num_allocs"),
           "reserved_bytes.all.current": memory_reserved(index),
           "reserved_bytes.all.peak": max_memory_reserved(index),
           "largest_alloc_size": stats.get("largest_alloc_size"),
           "bytes_limit": stats.get("bytes_limit")}
    return OrderedDict(sorted((k, int(v)) for k, v in out.items() if v is not None))


def empty_cache() -> None:
    """Release the allocator's unused cached memory: nothing, under XLA, whose pool is kept
    for the process's life (``XLA_PYTHON_CLIENT_PREALLOCATE=false`` starts it empty)."""


def mem_get_info(device=None) -> tuple:
    """``(free, total)`` bytes of the device for fnx tensors: the allocator's limit less
    what is in use, and that limit."""
    index, jd = _jax(device)
    stats = _stats_or_raise(index, jd, "mem_get_info")
    limit = int(stats.get("bytes_limit", 0))
    return limit - int(stats["bytes_in_use"]), limit


class _CudaDeviceProperties:
    """What ``get_device_properties`` tells about a device (PyTorch's fields)."""

    def __init__(self, jd, stats):
        self.name = getattr(jd, "device_kind", str(jd))
        cc = getattr(jd, "compute_capability", None)
        self.major, self.minor = (int(v) for v in cc.split(".")[:2]) if cc else (0, 0)
        if stats is not None and "bytes_limit" in stats:
            self.total_memory = int(stats["bytes_limit"])
        else:       # a CPU device: the host's memory
            self.total_memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        self.multi_processor_count = int(getattr(jd, "core_count", 0) or
                                         (os.cpu_count() if jd.platform == "cpu" else 0))
        self.is_integrated = False
        self.is_multi_gpu_board = False

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2 ** 20}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None) -> _CudaDeviceProperties:
    """The device's name, compute capability (``major``, ``minor``; 0, 0 for a CPU device
    under the test switch), ``total_memory`` (the allocator's limit) and
    ``multi_processor_count``."""
    _, jd = _jax(device)
    return _CudaDeviceProperties(jd, _device_stats(jd))


def get_device_capability(device=None) -> tuple:
    """``(major, minor)``, the device's CUDA compute capability."""
    p = get_device_properties(device)
    return p.major, p.minor


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether bfloat16 works on the current device: natively from compute capability 8.0,
    and (XLA emulates it) on any other when ``including_emulation``."""
    if not devices.is_available():
        return False
    return including_emulation or get_device_capability()[0] >= 8
