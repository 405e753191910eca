"""``fnx.backends.mps``: Apple's Metal backend, which fnx does not have.

>>> import fnx
>>> fnx.backends.mps.is_available(), fnx.backends.mps.is_built()
(False, False)
"""
from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """False: fnx has no MPS backend."""
    return False


def is_built() -> bool:
    """False: fnx has no MPS backend."""
    return False
