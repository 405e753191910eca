"""Utilities: ``rename_privateuse1_backend``."""
from .._device import rename_privateuse1_backend

__all__ = ["rename_privateuse1_backend"]
