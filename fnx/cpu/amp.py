"""``fnx.cpu.amp``: autocast and GradScaler with the device fixed to cpu, as
``torch.cpu.amp``.

>>> import fnx
>>> with fnx.cpu.amp.autocast():
...     (fnx.ones(2, 2) @ fnx.ones(2, 2)).dtype
fnx.bfloat16
"""
from __future__ import annotations

from .. import api as fnx
from ..amp import GradScaler as _GradScaler
from ..amp import autocast as _autocast

__all__ = ["autocast", "GradScaler"]


class autocast(_autocast):
    """``fnx.autocast("cpu", ...)`` (bfloat16 by default)."""

    def __init__(self, enabled: bool = True, dtype=fnx.bfloat16, cache_enabled: bool = True):
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``fnx.amp.GradScaler("cpu", ...)``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)
