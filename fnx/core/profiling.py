"""Named host-time ranges for a profiler (``fnx.profiler``) to record from layers below it:
``fnx.compile``'s program calls and ``record_function`` report here, and a recording
profiler registers itself as an observer (per thread, like the dispatch mode that records
its ops).

>>> from fnx.core import profiling
>>> profiling.active()
False
"""
from __future__ import annotations

import threading

__all__ = ["observe", "unobserve", "active", "open_range", "close_range"]

_local = threading.local()


def _observers() -> list:
    obs = getattr(_local, "observers", None)
    if obs is None:
        obs = _local.observers = []
    return obs


def observe(observer) -> None:
    """Start sending ranges to ``observer`` (``observer.open(name) -> token``,
    ``observer.close(token)``) on this thread."""
    _observers().append(observer)


def unobserve(observer) -> None:
    _observers().remove(observer)


def active() -> bool:
    """Whether an observer listens on this thread (checked before opening a range)."""
    return bool(getattr(_local, "observers", None))


def open_range(name: str) -> list:
    """Open a range named ``name`` with every observer; returns what ``close_range``
    needs."""
    return [(o, o.open(name)) for o in _observers()]


def close_range(opened: list) -> None:
    for o, token in opened:
        o.close(token)
