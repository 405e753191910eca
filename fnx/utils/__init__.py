"""Utilities: ``rename_privateuse1_backend``, ``fnx.utils.data`` (datasets and the
``DataLoader``) and ``fnx.utils.checkpoint`` (activation checkpointing)."""
from ..core.device import rename_privateuse1_backend
from . import checkpoint, data  # noqa: E402

__all__ = ["rename_privateuse1_backend", "data", "checkpoint"]
