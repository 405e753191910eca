"""Utilities: ``rename_privateuse1_backend``, and ``fnx.utils.data`` (datasets and the
``DataLoader``)."""
from ..core.device import rename_privateuse1_backend
from . import data  # noqa: E402

__all__ = ["rename_privateuse1_backend", "data"]
