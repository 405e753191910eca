"""``fnx.cpu``: the CPU device, as ``torch.cpu`` (its ``amp`` submodule holds autocast and
GradScaler with the device fixed to cpu).

>>> import fnx
>>> fnx.cpu.is_available(), fnx.cpu.device_count()
(True, 1)
"""
from . import amp

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize"]


def is_available() -> bool:
    """Always True: fnx always has a CPU."""
    return True


def device_count() -> int:
    """1: fnx's CPU is one device."""
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device=None) -> None:
    """Nothing to wait for: CPU kernels run synchronously."""
