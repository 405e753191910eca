"""Which scaled-dot-product-attention backends are enabled (``torch.nn.attention``'s
``SDPBackend`` and ``torch.backends.cuda``'s ``enable_*_sdp`` flags share this state).

fnx has one attention kernel, the decomposition XLA compiles (and fuses), and it stands
for every backend: attention runs while any backend is enabled, and with none enabled
``scaled_dot_product_attention`` raises PyTorch's "No available kernel" error.

>>> from fnx.core.sdp_backends import SDPBackend, enabled
>>> SDPBackend.FLASH_ATTENTION in enabled()
True
"""
from __future__ import annotations

import enum

__all__ = ["SDPBackend", "enabled", "set_enabled", "check_available", "state"]


class SDPBackend(enum.IntEnum):
    """PyTorch's attention backends, with its values."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_KERNELS = (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
            SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE)
_enabled = set(_KERNELS)
# whether any backend is enabled: read by attention under fnx.compile through
# ``read_traced``, so a compiled program is guarded on it as eager checks it
state = {"available": True}


def enabled() -> frozenset:
    """The enabled backends."""
    return frozenset(_enabled)


def set_enabled(backend: SDPBackend, on: bool) -> None:
    if backend not in _KERNELS:
        raise ValueError(f"{backend!r} is not an attention backend")
    (_enabled.add if on else _enabled.discard)(backend)
    state["available"] = bool(_enabled)


def check_available(available: bool, op: str = "scaled_dot_product_attention") -> None:
    """Raise PyTorch's error when every backend is disabled (``available``: as read from
    ``state``)."""
    if not available:
        raise RuntimeError(f"{op}: No available kernel. Aborting execution. (every "
                           f"attention backend is disabled: sdpa_kernel or "
                           f"fnx.backends.cuda.enable_*_sdp)")
