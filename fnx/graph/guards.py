"""What a compiled program assumed about Python state, checked before it is reused.

Three kinds of guard keep ``fnx.compile`` from running a program that no longer matches:

- ``Guard``: a decision the trace made on a program input's Python value
  (``if lr > 0``; see ``fnx.graph.symbolic``), evaluated on each call's inputs.
- The module state: for every ``nn.Module`` reachable from the compiled function, its
  plain attributes (``training``, ``eps``, a flag read in ``forward``) and tuples of them
  by value, list and dict attributes by identity (rebinding one is seen; an item changed
  in place is not: a rewards list grows on every step), and which parameters, buffers and
  submodules it holds. Modules bump ``state_version`` whenever an
  attribute is set, so the snapshot is retaken only after something changed, not on every
  call.
- The globals and closure cells the function names: plain values by value, the items of
  a small list, tuple or dict they hold likewise (``cfg["scale"]``), objects by identity
  (a rebound ``model`` means other parameters).

>>> import fnx
>>> lin = fnx.nn.Linear(2, 2)
>>> before = state_version[0]
>>> lin.training = False
>>> state_version[0] > before
True
"""
from __future__ import annotations

import operator
import types

from ..core.tensor import Tensor

__all__ = ["Guard", "DecidedComparisons", "state_version", "bump", "register_module_class",
           "module_state", "roots_of", "tensor_places", "read_place", "readable",
           "scope", "scope_state", "ScopeState", "describe_difference",
           "describe_module_change", "Same"]

state_version = [0]         # bumped on every attribute write of a registered module class
_module_classes: list = []
_PLAIN = (int, float, bool, str, type(None))


class Guard:
    """``predicate(inputs) == expected`` must hold for a program to be reused; ``inputs``
    are the program's inputs in placeholder order. ``what`` says it in words. ``deps``: the
    input positions the predicate reads (a guard need not be rechecked while those inputs
    keep the values it last held for), or None when it reads Python state directly."""
    __slots__ = ("predicate", "expected", "what", "deps", "read")

    def __init__(self, predicate, expected, what, deps=None, read=None):
        self.predicate = predicate
        self.expected = expected
        self.what = what
        self.deps = deps
        # (dict, key) when the guard is ``(type, value)`` of ``dict[key]``, which a
        # caller may then check inline (``_Entry.match``: one per optimizer option)
        self.read = read

    def holds(self, inputs) -> bool:
        try:
            return self.predicate(inputs) == self.expected
        except (ArithmeticError, ValueError, TypeError):
            return False

    def __repr__(self):
        return f"Guard({self.what} == {self.expected!r})"


class DecidedComparisons:
    """The six comparisons of a symbolic value (``SymFloat``, ``SymInt``) as Python
    decisions: each is ``self._decide(op, other, symbol)``, which answers for the traced
    value and records the guard that keeps the answer valid."""
    __slots__ = ()

    def __eq__(self, o):
        return self._decide(operator.eq, o, "==")

    def __ne__(self, o):
        return self._decide(operator.ne, o, "!=")

    def __lt__(self, o):
        return self._decide(operator.lt, o, "<")

    def __le__(self, o):
        return self._decide(operator.le, o, "<=")

    def __gt__(self, o):
        return self._decide(operator.gt, o, ">")

    def __ge__(self, o):
        return self._decide(operator.ge, o, ">=")

    __hash__ = None     # (each class says how it hashes)


def bump() -> None:
    """Python state that compiled programs may have read changed (a module attribute)."""
    state_version[0] += 1


def register_module_class(cls) -> None:
    """``cls`` (``nn.Module``) holds state compiled programs read; it calls ``bump``."""
    _module_classes.append(cls)


def _is_module(v) -> bool:
    return any(isinstance(v, c) for c in _module_classes)


def _modules_of(fn):
    """The modules ``fn`` reaches: itself, a bound method's object, a callable object's
    attributes, and the globals and closure cells its code names."""
    found = []
    if _is_module(fn):
        found.append(fn)
    owner = getattr(fn, "__self__", None)
    if owner is not None and _is_module(owner):
        found.append(owner)
    if not isinstance(fn, types.FunctionType) and not _is_module(fn):
        # a callable object (what Module.compile compiles): the modules it holds
        found.extend(v for v in getattr(fn, "__dict__", {}).values() if _is_module(v))
    for _, value in scope(fn):
        if _is_module(value):
            found.append(value)
    seen, out = set(), []
    for root in found:
        for m in root.modules():
            if id(m) not in seen:
                seen.add(id(m))
                out.append(m)
    return out


def has_lazy_modules(fn) -> bool:
    """Whether a module ``fn`` reaches still waits for its parameters' shapes (a lazy
    module before its first call: ``nn.modules.lazy``)."""
    return any(getattr(m, "has_uninitialized_params", None) is not None and
               m.has_uninitialized_params() for m in _modules_of(fn))


def roots_of(fn) -> list:
    """The objects through which ``fn`` reaches Python state: itself (a module or other
    callable object), a bound method's object, and the globals and closure cells it names."""
    roots = [fn]        # (a function's own names: ``python_state.FunctionScope``)
    owner = getattr(fn, "__self__", None)
    if owner is not None:
        roots.append(owner)
    return roots + [v for _, v in scope(fn)]


def tensor_places(fn) -> dict:
    """``{id(tensor): places}`` for the tensors a compiled program reads when called rather
    than capturing them as they are: the plain tensor attributes of the modules ``fn``
    reaches (``self.h = ...``; not parameters or buffers, which ``module_state`` guards),
    and the tensors its globals and closure cells hold, directly or as an item of a small
    list, tuple or dict (``_STATE["h"]``) that do not require grad (``readable``: a
    training step reads a weight's ``.grad`` through the tensor it captured). A place is
    ``(container, key, name)``, read by ``read_place``; a tensor held in several places is
    read from all of them, and once they disagree the program no longer fits
    (``fnx.graph.tracer``). A DTensor is left out (its layout is checked on captured
    tensors).

    >>> import fnx
    >>> H = fnx.zeros(2)
    >>> def f(x):
    ...     return x + H
    >>> [name for _, _, name in tensor_places(f)[id(H)]]
    ['H']
    """
    out = {}

    def add(v, place):
        if isinstance(v, Tensor) and not type(v)._keep_resident:
            out.setdefault(id(v), []).append(place)
    for m in _modules_of(fn):
        for name, v in m.__dict__.items():
            add(v, (m.__dict__, name, f"{type(m).__name__}.{name}"))
    code, func = _code_of(fn)
    if code is None:
        return out

    def add_held(v, place):
        name = place[2]
        if readable(v):
            add(v, place)
        elif type(v) in _CONTAINERS and len(v) <= _CONTAINER_ITEMS:
            items = v.items() if type(v) is dict else enumerate(v)
            for k, x in items:
                if readable(x):
                    add(x, (v, k, f"{name}[{k!r}]"))
    g = func.__globals__
    for name in code.co_names:
        if name in g:
            add_held(g[name], (g, name, name))
    for name, cell in zip(code.co_freevars, func.__closure__ or ()):
        try:
            add_held(cell.cell_contents, (cell, CELL, name))
        except ValueError:          # an empty cell
            pass
    return out


def readable(v) -> bool:
    """Whether a tensor a global or closure cell holds is read when a compiled program is
    called (``tensor_places``) rather than captured by identity: so the guard key leaves
    its identity out (``scope_state``)."""
    return isinstance(v, Tensor) and not type(v)._keep_resident and not v.requires_grad


CELL = object()     # the key of a closure cell's place


def read_place(place):
    """What a place of ``tensor_places`` holds now (None when nothing)."""
    container, key, _ = place
    if key is CELL:
        try:
            return container.cell_contents
        except ValueError:
            return None
    if isinstance(container, dict):
        return dict.get(container, key)
    return container[key] if key < len(container) else None


def _optimizers_of(fn) -> list:
    """The optimizers ``fn`` reaches: its globals and closure cells, and the attributes of
    its bound object or of a callable object (a trainer holding ``self.opt``)."""
    candidates = [v for _, v in scope(fn)]
    owner = getattr(fn, "__self__", None)
    for holder in (owner, fn if not isinstance(fn, types.FunctionType) else None):
        if holder is not None:
            candidates.append(holder)
            candidates.extend(getattr(holder, "__dict__", {}).values())
    return [v for v in candidates if is_optimizer(v)]


def is_optimizer(v) -> bool:
    """An object shaped as a torch optimizer (its groups and state, ``load_state_dict``)."""
    d = getattr(v, "__dict__", None)
    return d is not None and "param_groups" in d and "state" in d and \
        hasattr(type(v), "load_state_dict")


def optimizer_state(opt) -> tuple:
    """What of an optimizer a compiled step captured: its state and group dicts by
    identity, which ``load_state_dict`` and ``add_param_group`` replace (and bump
    ``_fnx_version`` and ``state_version``), and the state's removals (``clear()``)."""
    d = opt.__dict__
    return (id(opt), d.get("_fnx_version", 0), getattr(d.get("state"), "removals", 0))


def module_state(fn) -> tuple:
    """A snapshot of the state of every module ``fn`` reaches (see the module docstring),
    and of the optimizers it reaches (``optimizer_state``)."""
    out = [optimizer_state(o) for o in _optimizers_of(fn)]
    for m in _modules_of(fn):
        d = m.__dict__
        # Plain values and tuples of them by value; a list or dict by identity only: one
        # such as a policy's saved actions or rewards grows on every step, and which items
        # forward reads cannot be told, but rebinding it (``self.idx = [2, 3]``) is seen.
        plain = tuple((k, type(v), v) for k, v in d.items()
                      if (type(v) in _PLAIN or type(v) is tuple and _plain_tuple(v)) and
                      not k.startswith("_"))
        plain += tuple((k, "same", Same(v)) for k, v in d.items()
                       if type(v) in (list, dict) and not k.startswith("_"))
        # a DTensor attribute is captured as it is (``tensor_places``): guarded by identity
        plain += tuple((k, "id", id(v)) for k, v in d.items()
                       if isinstance(v, Tensor) and type(v)._keep_resident)
        out.append((id(m), plain,
                    tuple((k, id(v)) for k, v in d.get("_parameters", {}).items()),
                    tuple((k, id(v)) for k, v in d.get("_buffers", {}).items()),
                    tuple((k, id(v)) for k, v in d.get("_modules", {}).items()),
                    tuple(tuple(d.get(h, ())) for h in _CALL_HOOKS)))
    return tuple(out)


# The hooks a module's call runs, by id (registering or removing one bumps the version)
_CALL_HOOKS = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks",
               "_backward_hooks")


def _plain_tuple(v, depth=0) -> bool:
    """A tuple of plain values (nested tuples too, a few levels deep)."""
    return depth < 3 and all(type(x) in _PLAIN or type(x) is tuple and _plain_tuple(x, depth + 1)
                             for x in v)


class Same:
    """A mutable attribute value compared by identity in a snapshot (held, so that its id
    is not reused while the snapshot lives)."""
    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return type(other) is Same and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)

    def __repr__(self):
        text = repr(self.obj)
        if len(text) <= 60:
            return text
        n = len(self.obj) if isinstance(self.obj, (list, dict, tuple)) else None
        return f"a {type(self.obj).__name__}" + (f" of {n}" if n is not None else "")


def _watch(containers) -> tuple:
    """What ``_unchanged`` compares: each list or dict with its items as they are now."""
    return tuple((v, tuple(v) if type(v) is dict else None,
                  tuple(v.values()) if type(v) is dict else tuple(v)) for v in containers)


def _unchanged(watched) -> bool:
    """Whether every list or dict ``_watch`` saw still holds the same items (the same
    objects)."""
    for container, keys, values in watched:
        if len(container) != len(values):
            return False
        if keys is None:
            if not all(map(_is, container, values)):
                return False
        elif not (all(map(_is, container, keys)) and
                  all(map(_is, container.values(), values))):
            return False
    return True


def _code_of(fn):
    fn = getattr(fn, "__func__", fn)
    if not isinstance(fn, types.FunctionType):
        return None, None
    return fn.__code__, fn


def scope(fn, empty=True):
    """``(name, value)`` of each global and closure cell ``fn``'s code names (an empty
    cell's value None, or left out with ``empty=False``)."""
    code, func = _code_of(fn)
    if code is None:
        return []
    out = []
    g = func.__globals__
    for name in code.co_names:
        if name in g:
            out.append((name, g[name]))
    for name, cell in zip(code.co_freevars, func.__closure__ or ()):
        try:
            out.append((name, cell.cell_contents))
        except ValueError:          # an empty cell
            if empty:
                out.append((name, None))
    return out


# A list, tuple or dict the code names with at most this many items is guarded item by
# item (``scale = cfg["scale"]`` reads a plain value a program bakes in); a bigger one by
# identity and length only, so a vocabulary list does not cost a scan per call (a list
# that grows, ``history[-1]`` read inside, recompiles rather than going stale).
_CONTAINER_ITEMS = 64
_CONTAINERS = (list, tuple, dict)


def _entry(name, v) -> tuple:
    t = type(v)
    if t in _PLAIN:
        return (name, t, v)
    if readable(v):                 # read when called: its meta is checked then
        return (name, "tensor")
    if t in _CONTAINERS and len(v) <= _CONTAINER_ITEMS:
        items = v.items() if t is dict else enumerate(v)
        return (name, t, id(v), tuple((k, type(x), x) if type(x) in _PLAIN else
                                      (k, "tensor") if readable(x) else
                                      (k, "id", id(x), type(x).__name__) for k, x in items))
    if t in (list, dict):
        return (name, "id", id(v), t.__name__, len(v))
    return (name, "id", id(v), t.__name__)


def scope_state(fn) -> tuple:
    """The globals and closure cells ``fn`` names: plain values by value, the items of a
    small list, tuple or dict one level down likewise, a tensor that does not require grad
    by its place only (a program reads it when called: ``tensor_places``), other objects by
    id (``scope``'s pairs, read in one pass: this is part of every compiled call's key).

    >>> cfg = {"scale": 2.0}
    >>> def f(x):
    ...     return x * cfg["scale"]
    >>> before = scope_state(f)
    >>> cfg["scale"] = 3.0
    >>> scope_state(f) == before
    False
    """
    code, func = _code_of(fn)
    if code is None:
        return ()
    out = []
    g = func.__globals__
    for name in code.co_names:
        if name in g:
            out.append(_entry(name, g[name]))
    for name, cell in zip(code.co_freevars, func.__closure__ or ()):
        try:
            v = cell.cell_contents
        except ValueError:          # an empty cell
            v = None
        out.append(_entry(name, v))
    return tuple(out)


class ScopeState:
    """``scope_state(fn)`` for every call of a compiled ``fn``, cheaply: the values its
    globals and closure cells hold are fetched in one pass and compared by identity with
    those of the last call; the state is rebuilt only when one of them changed.

    >>> def f(x):
    ...     return x * k
    >>> k = 2
    >>> state = ScopeState(f)
    >>> state() == scope_state(f), state() is state()
    (True, True)
    """

    def __init__(self, fn):
        code, func = _code_of(fn)
        self._fn = fn
        self._globals = func.__globals__ if func is not None else None
        self._names = code.co_names if code is not None else ()
        self._cells = func.__closure__ or () if func is not None else ()
        self._last = None           # the values read at the last call (kept alive: no
        self._state = None          # id of a freed object can come back as another's)
        self._watched = ()          # (list or dict, its keys or None, its values) guarded
        #                             item by item, as they were at the last call
        self._tensors = ()          # (tensor held, its requires_grad at the last call)
        self._sized = ()            # (big list or dict, its length at the last call)

    def __call__(self) -> tuple:
        get = self._globals.get if self._globals is not None else None
        try:
            now = [get(n, _MISSING) for n in self._names] if get is not None else []
            now += [c.cell_contents for c in self._cells]
        except ValueError:          # an empty cell: read the slow way
            return scope_state(self._fn)
        last = self._last
        if last is None or len(now) != len(last) or not all(map(_is, now, last)) or \
                (self._watched and not _unchanged(self._watched)) or \
                (self._tensors and not _flags_unchanged(self._tensors)) or \
                (self._sized and not all(len(c) == n for c, n in self._sized)):
            self._state = scope_state(self._fn)
            self._last = now
            self._watched = _watch(v for v in now if type(v) in (list, dict) and
                                  len(v) <= _CONTAINER_ITEMS)
            self._tensors = _requires_grad_flags(now)
            self._sized = tuple((v, len(v)) for v in now if type(v) in (list, dict) and
                                len(v) > _CONTAINER_ITEMS)
        return self._state


def _requires_grad_flags(values) -> tuple:
    """``(tensor, requires_grad)`` for each tensor among ``values`` or one level down in a
    small container: whether ``scope_state`` reads it by place or identity (``readable``)
    turns on the flag, which may change while the tensor stays bound."""
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append((v, v.requires_grad))
        elif type(v) in _CONTAINERS and len(v) <= _CONTAINER_ITEMS:
            out.extend((x, x.requires_grad) for x in (v.values() if type(v) is dict else v)
                       if isinstance(x, Tensor))
    return tuple(out)


def _flags_unchanged(flags) -> bool:
    return all(t.requires_grad is f for t, f in flags)


_MISSING = object()
_is = operator.is_


def describe_module_change(old: tuple, new: tuple) -> str:
    """Which module attribute differs between two ``module_state`` snapshots, in words."""
    for a, b in zip(old, new):
        if a == b:
            continue
        for kind, x, y in zip(("attribute", "parameter", "buffer", "submodule"), a[1:], b[1:]):
            if x != y:
                dx = {k: v[-1] for k, *v in x}
                dy = {k: v[-1] for k, *v in y}
                gone = "<not a plain value>"
                name = next(k for k in list(dx) + list(dy)
                            if dx.get(k, gone) != dy.get(k, gone))
                if kind == "attribute":
                    return (f"module attribute {name!r}: {dx.get(name, gone)!r} -> "
                            f"{dy.get(name, gone)!r}")
                return f"module {kind} {name!r} was reassigned"
        if len(a) > 5 and a[5] != b[5]:
            return "a module's forward or backward hooks were registered or removed"
    return "the modules reached changed"


def describe_scope_change(old: tuple, new: tuple) -> str:
    """Which global or closure value differs between two ``scope_state`` snapshots, in
    words (the first one)."""
    for a, b in zip(old, new):
        if a == b:
            continue
        name = a[0]
        if "tensor" in (a[1], b[1]) and a[0] == b[0]:
            return _tensor_change(repr(name), a, b)
        if a[0] != b[0] or len(a) != len(b) or a[1] != b[1]:
            return f"{name!r} holds another kind of value: {_short(a)} -> {_short(b)}"
        if a[1] == "id" and a[2] == b[2] and a[4:] != b[4:]:
            return f"{name!r} held {a[4]} items, now {b[4]}"
        if a[1] == "id":
            return f"{name!r} is bound to another {b[3]}" + _REBOUND_TENSOR * (b[3] == "Tensor")
        if a[1] in _PLAIN:
            return f"{name!r} was {a[2]!r}, now {b[2]!r}"
        if a[2] != b[2]:
            return f"{name!r} is bound to another {a[1].__name__}"
        items = dict((x[0], x) for x in a[3])
        for item in b[3]:
            was = items.pop(item[0], None)
            where = f"{name}[{item[0]!r}]"
            if was is None:
                return f"{where} is new"
            if was == item:
                continue
            if "tensor" in (was[1], item[1]):
                return _tensor_change(where, was, item)
            if item[1] == "id" and was[1] == "id":
                return f"{where} holds another {item[3]}" + \
                    _REBOUND_TENSOR * (item[3] == "Tensor")
            return f"{where} was {_short(was[-1])}, now {_short(item[-1])}"
        return f"{name}[{next(iter(items))!r}] was removed" if items else \
            f"{name!r}: {_short(a)} -> {_short(b)}"
    return describe_difference(old, new)


def _tensor_change(where, was, now) -> str:
    """A global or closure tensor's entry changed between read when called and captured."""
    if was[1] == "tensor" and now[1] == "id":
        return f"{where} now holds a {now[3]} that requires grad" + \
            _REBOUND_TENSOR * (now[3] == "Tensor")
    if now[1] == "tensor":
        return f"{where} now holds a Tensor that does not require grad"
    return f"{where}: {_short(was)} -> {_short(now)}"


# a tensor that requires grad read from a global or closure is captured by identity (its
# .grad is read through it): one rebound on every call recompiles on every call
_REBOUND_TENSOR = ("; a compiled function captures the tensors that require grad it reads "
                   "from globals and closures as they are, so a new one recompiles it: pass "
                   "the tensor as an argument or keep it on a module attribute, which are "
                   "read when called")


def describe_difference(old, new, where="") -> str:
    """The first place two guard keys differ, in words: an argument's description
    (``call_key.describe_arg``) as the item, attribute or tensor property that changed.

    >>> describe_difference(("dict", ("loss", ("list", ("T", (), "f32")))),
    ...                     ("dict", ("loss", ("list", ("T", (), "f32"), ("T", (), "f32")))))
    "['loss']: a list of 1 item -> 2 items"
    >>> describe_difference(("T", (2, 3), "f32", "cpu", False, True),
    ...                     ("T", (2, 4), "f32", "cpu", False, True))
    'shape (2, 3) -> (2, 4)'
    """
    at = f"{where}: " if where else ""
    if _described(old) and _described(new) and old[0] == new[0]:
        kind = old[0]
        if kind == "V":
            return f"{at}{_short(old[1])} -> {_short(new[1])}"
        if kind == "T":
            for name, a, b in zip(_TENSOR_FIELDS, old[1:], new[1:]):
                if a != b:
                    return f"{at}{name} {_short(a)} -> {_short(b)}"
        elif kind in ("dict", "O"):
            head = 2 if kind == "O" else 1         # ("O", type, (name, description)...)
            if old[:head] == new[:head]:
                a, b = dict(old[head:]), dict(new[head:])
                if list(a) != list(b):
                    what = "attributes" if kind == "O" else "keys"
                    was, now = _short(list(a)), _short(list(b))
                    return f"{at}{what} {was} -> {now}" if was != now else \
                        f"{at}{what} are other objects (compared by identity)"
                for k in a:
                    if a[k] != b[k]:
                        step = f".{k}" if kind == "O" else f"[{k!r}]"
                        return describe_difference(a[k], b[k], where + step)
        elif kind not in ("F", "id") and all(map(_described, old[1:] + new[1:])):
            if len(old) != len(new):    # (a list or tuple: its kind is the type's name)
                n = len(old) - 1
                return f"{at}a {kind} of {n} item{'s' * (n != 1)} -> {len(new) - 1} items"
            for i, (a, b) in enumerate(zip(old[1:], new[1:])):
                if a != b:
                    return describe_difference(a, b, f"{where}[{i}]")
    if isinstance(old, tuple) and isinstance(new, tuple) and len(old) == len(new) and \
            not (_described(old) and old[0] == "id"):
        for a, b in zip(old, new):
            if a != b:
                return describe_difference(a, b, where)
    return f"{at}{_short(old)} -> {_short(new)}"


_TENSOR_FIELDS = ("shape", "dtype", "device", "requires_grad", ".grad is None", "layout")


def _described(v) -> bool:
    """Whether ``v`` is a ``describe_arg`` description (a tuple led by its kind)."""
    return isinstance(v, tuple) and bool(v) and isinstance(v[0], str)


def _short(v) -> str:
    text = repr(v)
    return text if len(text) < 160 else text[:157] + "..."
