"""What feeds a traced program's placeholders when it is called (``graph.input_sources``):
an option read from its dict (``Read``, an item of it: ``Item``), a tensor held at a module
attribute, global or closure cell (``Held``), and ``source_value``, which gives a source's
value for one call (an argument, a captured tensor, the owner's ``.grad``, a fresh random
key). ``fnx.graph.tracer`` makes the sources; ``fnx.lower`` reads them per call.
"""
from __future__ import annotations

from ..core.meta_array import MetaArray
from ..core.tensor import grad_value
from ..ir.aten.random import next_key
from .guards import read_place

__all__ = ["Read", "Held", "Item", "source_value", "READ_WHEN_CALLED"]

# Source kinds read from Python state when the program is called (an option's float or
# tensor, the owner's ``.grad``), which the traced code itself may change afterwards
READ_WHEN_CALLED = ("scalar", "item", "grad")


class Read:
    """Reads ``container[key]`` as it is at call time (no tracing hooks)."""
    __slots__ = ("container", "key")

    def __init__(self, container, key):
        self.container, self.key = container, key

    def __call__(self):
        return dict.__getitem__(self.container, self.key)


class Held:
    """Reads the tensor held at ``places`` (``guards.tensor_places``: a module attribute, a
    global, a closure cell, a small container's item) as it is at call time; None when it
    is gone or the places no longer hold one tensor (the entry's guard then fails, and the
    trace that follows reads each place's own). Right after the trace a place may hold the
    trace's own tensor, stored there by the traced code and made real only after the first
    run (``_Entry.replay_stores``): that run reads the tensor the trace saw."""
    __slots__ = ("places", "first")

    def __init__(self, places, first):
        self.places, self.first = tuple(places), first

    @property
    def key(self) -> str:
        return " = ".join(name for _, _, name in self.places)

    def __call__(self):
        places = self.places
        v = read_place(places[0])
        if len(places) > 1 and any(read_place(p) is not v for p in places[1:]):
            return None
        # (the dict's own _data: reading the attribute would give a resident tensor a
        # NumPy view on every call)
        if type(getattr(v, "__dict__", {}).get("_data")) is MetaArray:
            return self.first
        self.first = None       # (not kept alive once the place holds real values)
        return v


class Item:
    __slots__ = ("read", "index")

    def __init__(self, read, index):
        self.read, self.index = read, index

    def __call__(self):
        return self.read()[self.index]



def source_value(source, flat=()):
    """The value fed to a placeholder whose input source (``graph.input_sources``) is
    ``source``, on a call whose flattened arguments are ``flat``: an argument, a captured
    tensor, the owner's ``.grad`` now, a float or tensor option read now, a fresh random
    key."""
    kind, src = source
    if kind == "arg":
        return flat[src]
    if kind == "lifted":
        return src
    if kind == "grad":
        return grad_value(src)
    if kind in ("scalar", "item"):
        return src()
    if kind == "rng":
        return next_key(*src)
    raise AssertionError(f"no value for input {source}")
