"""``fnx.cuda.amp``: autocast and GradScaler with the device fixed to cuda, as
``torch.cuda.amp`` (``fnx`` installs this module as ``fnx.cuda.amp``).

>>> import fnx
>>> fnx.cuda.amp.autocast().device, fnx.cuda.amp.autocast().fast_dtype
('cuda', fnx.float16)
"""
from __future__ import annotations

from .. import api as fnx
from ..core.autocast_mode import autocast as _autocast
from .grad_scaler import GradScaler as _GradScaler

__all__ = ["autocast", "GradScaler"]


class autocast(_autocast):
    """``fnx.autocast("cuda", ...)`` (float16 by default)."""

    def __init__(self, enabled: bool = True, dtype=fnx.float16, cache_enabled: bool = True):
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``fnx.amp.GradScaler("cuda", ...)``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)
