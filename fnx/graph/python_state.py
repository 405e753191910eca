"""The Python state a traced function can change behind its program's back.

A trace runs the user's Python once; what that code writes into reachable Python objects
(a scheduler's ``last_epoch``, a module's cached mask, an optimizer's lazily made state,
a tensor bound to a global or closure name: ``FunctionScope``) is found by comparing
snapshots taken before and after (``_snapshot``, ``_changes``), put back when the function
runs eagerly instead (``rollback``), turned from traced floats into plain ones
(``settle``) or, for tensors of the trace left on objects, made program outputs
(``_stored_tensors``, put back on every call by ``store``). ``fnx.graph.tracer`` records
the graph; this module only reads and restores containers.
"""
from __future__ import annotations

import pickle
import random
import types
import weakref

import numpy as np

from ..core.dispatch_key import AUTOGRAD_BITS
from ..core.meta_array import MetaArray
from ..core.tensor import Tensor
from . import guards
from .symbolic import SymFloat

__all__ = ["rollback", "settle", "describe_change", "FunctionScope", "function_scope",
           "store", "autograd_state", "restore_autograd", "Appended", "appended_keys"]


_MISSING = object()
_PLAIN = (int, float, bool, str, type(None))


# What autograd keeps on a tensor besides its requires_grad bits: an in-place write of a
# value that requires grad gives a tensor history (``fnx.autograd.history``)
_HISTORY = ("grad_fn", "_output_nr", "_gfv")


def autograd_state(t) -> tuple:
    """Tensor ``t``'s autograd state: its requires_grad bits and history fields."""
    d = t.__dict__
    return (t._ks & AUTOGRAD_BITS,) + tuple(d.get(k, _MISSING) for k in _HISTORY)


def restore_autograd(t, state) -> None:
    """Put back the ``autograd_state`` of ``t`` taken before a trace wrote it."""
    t._ks = (t._ks & ~AUTOGRAD_BITS) | state[0]
    for k, v in zip(_HISTORY, state[1:]):
        if v is _MISSING:
            t.__dict__.pop(k, None)
        else:
            t.__dict__[k] = v


def _walk(roots, limit=50_000):
    """``(container, entries)`` for every dict, list, tuple and object reachable from
    ``roots``; ``entries`` is the dict, list or tuple itself, or the object's ``__dict__``.
    It goes through helper functions (the globals and closure cells their code names) and
    bound methods, not through tensors, Python modules, classes or fnx's own machinery,
    and stops after ``limit`` objects: the Python state the traced code may change behind
    the program's back."""
    seen, stack = set(), list(roots)
    while stack and len(seen) < limit:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        if isinstance(obj, types.FunctionType):
            # (not fnx's own functions: fnx's internal caches are not the user's state)
            seen.add(id(obj))
            if not _internal(getattr(obj, "__module__", None)):
                names = function_scope(obj)
                entries = names.entries()
                yield names, entries
                stack.extend(entries.values())
            continue
        if isinstance(obj, types.MethodType):
            stack.extend((obj.__self__, obj.__func__))
            continue
        if isinstance(obj, Tensor):
            # a leaf's gradient hooks run in a traced backward: what they write (a list
            # of gradients kept for logging) is state too; the tensor itself is not walked
            seen.add(id(obj))
            d = obj.__dict__
            stack.extend(d.get("_hooks") or ())
            stack.extend(d.get("_post_acc_hooks") or ())
            continue
        if isinstance(obj, _OPAQUE) or _internal(type(obj).__module__):
            continue
        seen.add(id(obj))
        if isinstance(obj, (dict, list, tuple)):
            entries = obj
        elif hasattr(obj, "__dict__"):
            entries = vars(obj)
        else:
            continue
        yield obj, entries
        stack.extend(entries.values() if isinstance(entries, dict) else entries)


class FunctionScope:
    """The globals and closure cells a function's code names, as one container of
    ``{name: value}`` entries: what ``global h; h = ...`` and ``nonlocal h`` rebind. One
    per function (``function_scope``), so two walks find the same container."""
    __slots__ = ("func", "__weakref__")

    def __init__(self, func):
        self.func = func

    def entries(self) -> dict:
        return dict(guards.scope(self.func, empty=False))

    def _cell(self, name):
        code = self.func.__code__
        if name in code.co_freevars:
            return self.func.__closure__[code.co_freevars.index(name)]
        return None

    def put(self, name, value) -> None:
        cell = self._cell(name)
        if cell is not None:
            cell.cell_contents = value
        else:
            self.func.__globals__[name] = value

    def remove(self, name) -> None:
        cell = self._cell(name)
        if cell is not None:
            del cell.cell_contents
        else:
            self.func.__globals__.pop(name, None)

    def place(self, name):
        """What the name binds in: two functions naming one global share it."""
        cell = self._cell(name)
        return id(cell) if cell is not None else (id(self.func.__globals__), name)


_scopes = weakref.WeakKeyDictionary()


def function_scope(func) -> FunctionScope:
    scope = _scopes.get(func)
    if scope is None:
        scope = _scopes[func] = FunctionScope(func)
    return scope


class GeneratorState:
    """A Python-level random generator as a container of one entry, its state: Python's
    ``random`` module, NumPy's global generator, or a ``random.Random``,
    ``np.random.Generator`` or ``RandomState`` the function reaches. A draw while tracing
    would be baked into the program (every call the same numbers): ``_changes`` reports
    it, and a rollback puts the state back."""
    __slots__ = ("gen", "name")

    def __init__(self, gen, name):
        self.gen, self.name = gen, name

    def get(self) -> bytes:
        gen = self.gen
        state = gen.bit_generator.state if isinstance(gen, np.random.Generator) else \
            gen.get_state() if isinstance(gen, np.random.RandomState) else gen.getstate()
        return pickle.dumps(state)

    def put(self, state: bytes) -> None:
        gen, state = self.gen, pickle.loads(state)
        if isinstance(gen, np.random.Generator):
            gen.bit_generator.state = state
        elif isinstance(gen, np.random.RandomState):
            gen.set_state(state)
        else:
            gen.setstate(state)


_GENERATORS = (random.Random, np.random.Generator, np.random.RandomState)


def _generators(walked) -> list:
    """``GeneratorState`` of the global generators and of those held in ``walked``'s
    containers."""
    found = {id(random._inst): GeneratorState(random._inst, "Python's random module"),
             id(np.random.mtrand._rand): GeneratorState(np.random.mtrand._rand,
                                                        "NumPy's global random state")}
    for _, entries in walked:
        for v in entries.values() if isinstance(entries, dict) else entries:
            if isinstance(v, _GENERATORS) and id(v) not in found:
                found[id(v)] = GeneratorState(v, f"a {type(v).__name__}")
    return list(found.values())


def _snapshot(roots) -> list:
    """``(container, shallow copy of its entries)`` for every mutable container ``_walk``
    reaches, and ``(GeneratorState, its state)`` for the random generators."""
    walked = list(_walk(roots))
    return [(c, dict(e) if isinstance(e, dict) else list(e))
            for c, e in walked if not isinstance(c, tuple)] + \
        [(g, g.get()) for g in _generators(walked)]


def _internal(module) -> bool:
    """Whether ``module`` holds fnx's machinery rather than state a user's program keeps
    (``fnx.nn``, ``fnx.optim``, ``fnx.utils`` objects are the user's: modules, optimizers,
    schedulers, data loaders); thread-local state is never the program's."""
    if module == "_thread" or module == "threading":
        return True
    return bool(module) and module.startswith("fnx.") and \
        not module.startswith(("fnx.nn", "fnx.optim", "fnx.utils"))


def _changes(snapshot, mode) -> list:
    """``(container, key, old, new, traced)`` for each entry of a snapshotted container
    that the trace changed (``_MISSING`` for an absent key); ``traced``: ``new`` is a
    tensor of this trace (a store the program can replay)."""
    out, bound = [], set()
    for container, before in snapshot:
        if isinstance(container, GeneratorState):
            now = container.get()
            if now != before:
                out.append((container, "state", before, now, False))
            continue
        now = _entries(container)
        if isinstance(before, list):
            keys = range(max(len(before), len(now)))
            get = _list_get
        else:
            keys = list(before) + [k for k in now if k not in before]
            get = _dict_get
        for k in keys:
            old, new = get(before, k), get(now, k)
            if new is old or (type(new) is type(old) and type(new) in _PLAIN and new == old):
                continue
            traced = _is_traced(mode, new)
            if isinstance(container, FunctionScope):
                # Only a tensor of the trace (a store to replay) or a traced float (never
                # to outlive the trace): a plain value a global names is guarded by value
                # (``guards.scope_state``), so a counter or a lazily made cache recompiles.
                if not (traced or isinstance(new, SymFloat)) or container.place(k) in bound:
                    continue
                bound.add(container.place(k))
            out.append((container, k, old, new, traced))
    return out


def _entries(container):
    """What ``_walk`` compares of a container: a dict or list itself, an object's
    ``__dict__`` (written directly: a rollback must not run ``__setattr__`` logic), a
    function's names."""
    if isinstance(container, FunctionScope):
        return container.entries()
    return container if isinstance(container, (dict, list)) else vars(container)


def _put(container, k, value) -> None:
    """Set entry ``k`` of a container ``_walk`` found (``_MISSING``: remove it)."""
    if isinstance(container, GeneratorState):
        container.put(value)
        return
    if isinstance(container, FunctionScope):
        if value is _MISSING:
            container.remove(k)
        else:
            container.put(k, value)
        return
    target = _entries(container)
    if isinstance(target, list):
        if value is _MISSING:
            del target[k:]
        else:
            target[k] = value
    elif value is _MISSING:
        dict.pop(target, k, None)
    else:
        dict.__setitem__(target, k, value)


def _dict_get(d, k):
    return dict.get(d, k, _MISSING)


def _list_get(items, i):
    return items[i] if i < len(items) else _MISSING


def _is_traced(mode, value) -> bool:
    if not isinstance(value, Tensor):
        return False
    data = value.__dict__.get("_data")      # (not a resident tensor's lazy NumPy view)
    return isinstance(data, MetaArray) and (id(value) in mode._node_of or
                                            id(data) in mode._of_data)


class Appended(int):
    """The index of a list item the traced code appended (past the list's length before
    the trace): each call appends its value anew (a log of losses, a backward hook's list
    of gradients), where setting that index would overwrite or miss."""
    __slots__ = ()


def appended_keys(stored, snapshot) -> list:
    """``stored`` (``_stored_tensors``) with the index of each item appended to a list
    that ``snapshot`` (``_snapshot``, before the trace) held made an ``Appended``."""
    lengths = {id(c): len(e) for c, e in snapshot if isinstance(c, list)}
    return [(c, Appended(k), t) if isinstance(c, list) and k >= lengths.get(id(c), k + 1)
            else (c, k, t) for c, k, t in stored]


def store(container, key, value) -> None:
    """Store ``value`` where traced code stored a tensor (``_stored_tensors``): an item, a
    global or closure name, or an attribute through ``__setattr__``, as the code did."""
    if type(key) is Appended:
        container.append(value)
    elif isinstance(container, (dict, list)):
        container[key] = value
    elif isinstance(container, FunctionScope):
        container.put(key, value)
    else:
        setattr(container, key, value)


def rollback(changes) -> None:
    """Put back what a trace changed (``_changes``): the function then runs eagerly as if
    it had never been traced."""
    for container, k, old, _, _ in reversed(changes):
        _put(container, k, old)


def settle(changes) -> None:
    """Floats a trace wrote into Python state (a ``SymFloat``) become plain floats: their
    values are this call's, and they must not outlive the trace as program inputs."""
    for container, k, _, new, _ in changes:
        if isinstance(new, SymFloat):
            _put(container, k, float.__float__(new))


def describe_change(change) -> str:
    """One change of ``_changes`` in words: ``StepLR.last_epoch: 0 -> 1``."""
    container, k, old, new, _ = change
    if isinstance(container, GeneratorState):
        return (f"{container.name} drew random numbers, which a program would repeat on "
                f"every call (fnx.rand, fnx.randint and fnx.randperm draw anew in a program)")
    if isinstance(container, FunctionScope):
        where = f"{container.func.__name__}'s {k!r}"
    elif isinstance(container, (dict, list)):
        where = f"{type(container).__name__}[{k!r}]"
    else:
        where = f"{type(container).__name__}.{k}"
    return f"{where}: {_show(old)} -> {_show(new)}"


def _show(v) -> str:
    if v is _MISSING:
        return "<absent>"
    if isinstance(v, SymFloat):
        return repr(float.__float__(v))
    return repr(v) if type(v) in _PLAIN else f"<{type(v).__name__}>"


def _stored_tensors(mode, roots) -> list:
    """``(container, key, tensor)`` for each tensor of this trace in a container ``_walk``
    reaches from ``roots`` (a dict value, list item or object attribute, ``key`` naming
    it), i.e. left behind by the traced code. In a tuple it is found but cannot be put
    back: ``container`` and ``key`` are None."""
    found, bound = [], set()
    for c, e in _walk(roots):
        items = e.items() if isinstance(e, dict) else enumerate(e)
        for k, v in items:
            if _is_traced(mode, v):
                if isinstance(c, FunctionScope):
                    if c.place(k) in bound:     # (a global two functions name)
                        continue
                    bound.add(c.place(k))
                found.append((None, None, v) if isinstance(c, tuple) else (c, k, v))
    return found


_OPAQUE = (str, bytes, int, float, complex, bool, type(None), type, types.ModuleType,
           types.FunctionType, types.BuiltinFunctionType, types.MethodType)
