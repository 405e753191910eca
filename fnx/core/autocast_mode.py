"""Autocast state and ``fnx.autocast``, as ``torch.autocast`` (automatic mixed precision).

Autocast for a device type is on when its ``Autocast<device>`` key is in this thread's
include set: every call then reaches that key, whose kernels (``fnx.keys.autocast``) cast
the arguments of the ops in the cast policy (``fnx.ir.autocast_policy``) and let every
other op fall through. The rest of the state (the lower-precision dtype per device type,
the nesting depth, the weight cast cache) is per thread too, in ``fnx.core.tls.State``:
autocast in one thread never changes what another thread computes.
"""
from __future__ import annotations

import functools
import warnings

from . import dtype as D
from . import tls
from .dispatch_key import DispatchKey

__all__ = ["autocast", "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
           "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
           "autocast_increment_nesting", "autocast_decrement_nesting", "clear_autocast_cache",
           "is_autocast_available", "autocast_state", "register_autocast_device"]

# The device types autocast supports: their key and PyTorch's default lower-precision dtype.
_KEY = {"cpu": DispatchKey.AutocastCPU, "cuda": DispatchKey.AutocastCUDA}
_DEFAULT_DTYPE = {"cpu": D.bfloat16, "cuda": D.float16}
_SUPPORTED_DTYPES = (D.bfloat16, D.float16)
_ALL_BITS = sum(1 << k for k in _KEY.values())
# device type -> fn() -> bool: whether it has a device now (filled by the cuda backend, a
# higher layer); autocast on a device type without one warns and stays off, as PyTorch.
_available: dict = {}


def register_autocast_device(device_type: str, is_available) -> None:
    """Tell autocast how to ask whether ``device_type`` has a device (for its warning)."""
    _available[device_type] = is_available


def _device_type(device_type) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in _KEY:
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
    return device_type


def is_autocast_available(device_type: str) -> bool:
    """True for the device types autocast supports (``cpu``, ``cuda``).

    >>> import fnx
    >>> fnx.amp.is_autocast_available("cpu"), fnx.amp.is_autocast_available("meta")
    (True, False)
    """
    return device_type in _KEY


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type`` on this thread.

    >>> import fnx
    >>> with fnx.autocast("cpu"):
    ...     fnx.is_autocast_enabled("cpu"), fnx.is_autocast_enabled("cuda")
    (True, False)
    """
    return bool(tls.state.include >> _KEY[_device_type(device_type)] & 1)


def set_autocast_enabled(device_type: str, enabled: bool | None = None) -> None:
    """Turn autocast on or off for ``device_type`` on this thread (``set_autocast_enabled(
    enabled)`` alone means cuda, as PyTorch's deprecated form). Prefer ``fnx.autocast``.

    >>> import fnx
    >>> fnx.set_autocast_enabled("cpu", True); fnx.is_autocast_enabled("cpu")
    True
    >>> fnx.set_autocast_enabled("cpu", False); fnx.is_autocast_enabled("cpu")
    False
    """
    if enabled is None and isinstance(device_type, bool):
        device_type, enabled = "cuda", device_type
    bit = 1 << _KEY[_device_type(device_type)]
    st = tls.state
    st.include = st.include | bit if enabled else st.include & ~bit


def get_autocast_dtype(device_type: str) -> D.dtype:
    """The lower-precision dtype autocast uses on ``device_type`` (default: float16 on cuda,
    bfloat16 on cpu).

    >>> import fnx
    >>> fnx.get_autocast_dtype("cpu"), fnx.get_autocast_dtype("cuda")
    (fnx.bfloat16, fnx.float16)
    """
    device_type = _device_type(device_type)
    return tls.state.autocast_dtypes.get(device_type, _DEFAULT_DTYPE[device_type])


def set_autocast_dtype(device_type: str, dtype: D.dtype) -> None:
    """Set the lower-precision dtype for ``device_type`` on this thread."""
    tls.state.autocast_dtypes[_device_type(device_type)] = dtype


def is_autocast_cache_enabled() -> bool:
    """Whether casts of weights (leaves that require grad) are cached within a region."""
    return tls.state.autocast_cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    tls.state.autocast_cache_enabled = bool(enabled)


def autocast_increment_nesting() -> int:
    tls.state.autocast_nesting += 1
    return tls.state.autocast_nesting


def autocast_decrement_nesting() -> int:
    tls.state.autocast_nesting -= 1
    return tls.state.autocast_nesting


def clear_autocast_cache() -> None:
    """Drop the cached weight casts of this thread (done when the outermost region exits)."""
    tls.state.autocast_cache.clear()


def autocast_state() -> tuple:
    """What a compiled program's casts depend on: the enabled device types with their dtypes
    (part of ``fnx.compile``'s guards; the cast cache is never used while tracing)."""
    st = tls.state
    if not st.include & _ALL_BITS:
        return ()
    return tuple((d, get_autocast_dtype(d)) for d, k in _KEY.items()
                 if st.include >> k & 1)


class autocast:
    """Run the ops in the region in mixed precision, as ``torch.autocast``.

    Inside, matrix multiplies and convolutions run in ``dtype`` (default: bfloat16 on
    cpu, float16 on cuda), numerically sensitive ops in float32, and ops that combine
    several inputs in the widest of their types; only floating-point tensors on
    ``device_type`` are cast, and every other op runs as it would outside. Autograd
    records the casts, so gradients come back in each leaf's own dtype. Regions nest;
    ``enabled=False`` turns autocast off inside another region. Usable as a decorator.

    >>> import fnx
    >>> a, b = fnx.ones(2, 2), fnx.ones(2, 2)
    >>> with fnx.autocast("cpu"):
    ...     c = a @ b
    ...     s = fnx.cat([c, a])
    >>> c.dtype, s.dtype
    (fnx.bfloat16, fnx.float32)
    """

    def __init__(self, device_type: str, dtype: D.dtype | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None):
        self.device = _device_type(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = (is_autocast_cache_enabled() if cache_enabled is None
                               else bool(cache_enabled))
        available = _available.get(self.device)
        if enabled and available is not None and not available():
            warnings.warn(f"{self.device.upper()} is not available. Disabling autocast.",
                          stacklevel=2)   # PyTorch: "CUDA is not available or ... Disabling"
            enabled = False
        if enabled and self.fast_dtype not in _SUPPORTED_DTYPES:
            name = self.device.upper()
            warnings.warn(
                f"In {name} autocast, but the target dtype is not supported. Disabling "
                f"autocast.\n{name} Autocast only supports dtypes of "
                + ", ".join(map(str, _SUPPORTED_DTYPES)) + " currently.", stacklevel=2)
            enabled = False
        self._enabled = bool(enabled)

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc):
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self.__class__(self.device, self.fast_dtype, self._enabled,
                                self._cache_enabled):
                return func(*args, **kwargs)
        return decorate_autocast
