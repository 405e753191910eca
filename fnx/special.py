"""``fnx.special``: special functions, as ``torch.special``."""
from __future__ import annotations

__all__ = []
