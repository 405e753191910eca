"""The dicts a module keeps its parameters, buffers and submodules in (``Registry``).

They bump ``fnx.graph.guards.state_version`` on every change, so a compiled program
rechecks the module state it read even when code writes a store directly.

>>> from fnx.graph import guards
>>> r, before = Registry(), guards.state_version[0]
>>> r["weight"] = None
>>> guards.state_version[0] > before
True
"""
from __future__ import annotations

from ...graph import guards

__all__ = ["Registry", "STORES"]

STORES = ("_parameters", "_buffers", "_modules")
"""The attribute names of a module's three stores."""


class Registry(dict):
    """A module's ``_parameters``, ``_buffers`` or ``_modules``: a dict that bumps
    ``fnx.graph.guards.state_version`` on every change, so compiled programs recheck what
    they read even when code writes the store directly (``load_state_dict(assign=True)``,
    pruning, weight norm) rather than through ``setattr``."""
    __slots__ = ()

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        guards.bump()

    def __delitem__(self, key):
        super().__delitem__(key)
        guards.bump()

    def pop(self, *args):
        guards.bump()
        return super().pop(*args)

    def popitem(self):
        guards.bump()
        return super().popitem()

    def setdefault(self, key, default=None):
        guards.bump()
        return super().setdefault(key, default)

    def update(self, *args, **kwargs):
        super().update(*args, **kwargs)
        guards.bump()

    def clear(self):
        super().clear()
        guards.bump()

    def __reduce__(self):       # pickled as a plain dict (fnx.save's allowed types)
        return dict, (dict(self),)
