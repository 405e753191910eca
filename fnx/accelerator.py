"""``fnx.accelerator``: the device-agnostic accelerator API, as ``torch.accelerator``.

fnx's one accelerator kind is ``cuda`` (JAX GPU devices; ``fnx.cuda``).

>>> import fnx
>>> acc = fnx.accelerator.current_accelerator()
>>> acc is None or acc.type == "cuda"
True
>>> fnx.accelerator.device_count() == (fnx.cuda.device_count() if acc else 0)
True
"""
from __future__ import annotations

from .backends.cuda import devices as _cuda
from .core.device import device as _device

__all__ = ["current_accelerator", "is_available", "device_count", "current_device_index",
           "set_device_index", "synchronize", "current_device_idx", "set_device_idx"]


def is_available() -> bool:
    """Whether an accelerator device is available."""
    return _cuda.is_available()


def device_count() -> int:
    """The number of accelerator devices (0 without one)."""
    return _cuda.device_count() if _cuda.is_available() else 0


def current_accelerator(check_available: bool = False):
    """``fnx.device('cuda')``, or None without an accelerator (``check_available``: None
    also when the accelerator is present but not usable)."""
    return _device("cuda") if _cuda.is_available() else None


def _require():
    if not _cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def current_device_index() -> int:
    """The index of the current accelerator device."""
    _require()
    return _cuda.current_device()


def set_device_index(device) -> None:
    """Make ``device`` (an index or device) the current accelerator device."""
    _require()
    _cuda.set_device(device)


def synchronize(device=None) -> None:
    """Wait for the work queued on ``device`` (default: the current one)."""
    _require()
    _cuda.synchronize(device)


current_device_idx = current_device_index
set_device_idx = set_device_index
