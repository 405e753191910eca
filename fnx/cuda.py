"""``fnx.cuda``: CUDA devices, as ``torch.cuda``.

fnx's CUDA devices are JAX GPU devices (``fnx.backends.cuda.devices`` holds how they are
found, the current device and each device's random generator; ``memory`` the allocator's
statistics and device properties; ``streams`` streams, events and NVTX ranges). Without JAX's CUDA
plugin ``is_available()`` is False; ``FNX_CUDA_ON_CPU=1`` maps cuda devices onto JAX's CPU
devices, so the backend runs and is tested anywhere.

>>> import fnx
>>> isinstance(fnx.cuda.is_available(), bool), fnx.cuda.current_device()
(True, 0)
"""
from .backends.cuda import devices as _devices
from .backends.cuda.devices import (current_device, device, device_count, get_device_name,
                                    get_rng_state, init, initial_seed, is_available, is_initialized,
                                    manual_seed, manual_seed_all, on_cpu, seed, seed_all,
                                    set_device, set_rng_state, synchronize)
from .backends.cuda.memory import (empty_cache, get_device_capability, get_device_properties,
                                   is_bf16_supported, max_memory_allocated, max_memory_reserved,
                                   mem_get_info, memory_allocated, memory_reserved,
                                   memory_stats, reset_max_memory_allocated,
                                   reset_peak_memory_stats)
from .backends.cuda.streams import (Event, Stream, current_stream, default_stream, nvtx,
                                    set_stream, stream)
from .core.errors import OutOfMemoryError   # torch.cuda.OutOfMemoryError is torch's too

__all__ = ["is_available", "device_count", "current_device", "set_device", "device",
           "synchronize", "manual_seed", "manual_seed_all", "seed", "seed_all",
           "initial_seed", "get_rng_state", "set_rng_state", "get_device_name",
           "is_initialized", "init", "on_cpu", "OutOfMemoryError",
           "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "memory_stats", "empty_cache", "mem_get_info", "get_device_properties",
           "get_device_capability", "is_bf16_supported",
           "Stream", "Event", "current_stream", "default_stream", "set_stream", "stream",
           "nvtx"]


def __getattr__(name):
    if name == "default_generators":        # as torch.cuda.default_generators
        return _devices.default_generators()
    raise AttributeError(f"module 'fnx.cuda' has no attribute '{name}'")
