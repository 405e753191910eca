"""What a compiled call's key is made of: the call's tensors and floats flattened
(``flatten_call``; its ints, for dynamic ints: ``flatten_ints``), each argument described
for the cache key (``describe_arg``), the guard key of a tensor read from outside
(``lifted_key``, ``layout_of``), and which inputs share memory (``storage_id``,
``aliased_input``: a program treats its inputs as independent buffers).
``compiled_function`` builds keys and entries from these; ``graph_breaks`` checks its
segments' captured tensors with ``lifted_key``.
"""
from __future__ import annotations

import copy
import enum
import hashlib

import numpy as np

from ..core.dispatch_key import AUTOGRAD_BITS, SPARSE_BITS
from ..core.layout import check_strided
from ..core.random import Generator
from ..core.tensor import Tensor, resident, storage_shape
from ..graph.graph import same_sequence
from ..graph import guards
from ..graph.guards import Same
from ..graph.input_sources import source_value

__all__ = ["OBJECT_DEPTH", "plain_object", "flatten_call", "flatten_ints", "describe_arg",
           "repeated_tensors", "ArgPlace", "passed_and_captured", "layout_of", "lifted_key",
           "storage_id", "aliased_input", "traced_inputs"]

# How deep plain objects nest inside one another before deeper ones count as opaque
# values (guarded by identity): bounds the work per call and stops reference cycles.
OBJECT_DEPTH = 3


def plain_object(v) -> bool:
    """An instance of a user class that holds data (a batch with tensor attributes, a
    config): its attributes are part of the call, as a container's items are: its tensors
    are program inputs and the rest is guarded, so a new batch object of the same layout
    reuses the program and a reassigned attribute is read anew.  Callables (modules,
    functions), classes, enums, builtins and objects with a ``state_dict`` (optimizers,
    schedulers, GradScaler: state that the function updates, whose tensors are the model's
    own, held by identity as a closure's are) and random generators (a program draws from
    the caller's own) stay opaque values."""
    return not isinstance(v, (Tensor, type, enum.Enum, Generator)) and not callable(v) and \
        type(v).__module__ != "builtins" and isinstance(getattr(v, "__dict__", None), dict) \
        and not hasattr(type(v), "state_dict")


def _tensor_or_float(v) -> bool:
    return isinstance(v, Tensor) or type(v) is float    # floats are program inputs too


def _int(v) -> bool:
    return type(v) is int       # (not bool, not an IntEnum: those stay guarded values)


def flatten_call(args, kwargs, leaf=_tensor_or_float):
    """Tensors and floats of a call in order (``leaf``: which values to take), and a
    function putting (new) values back in place. ``flatten_ints`` takes the ints."""
    flat = []

    def collect(v, depth=0):
        if leaf(v):
            flat.append(v)
        elif isinstance(v, (list, tuple)):
            for x in v:
                collect(x, depth)
        elif isinstance(v, dict):
            for x in v.values():
                collect(x, depth)
        elif depth < OBJECT_DEPTH and plain_object(v):
            for x in v.__dict__.values():
                collect(x, depth + 1)

    collect(args)
    collect(kwargs)

    # The copies ``rebuild`` made of the call's lists, dicts and plain objects, each with
    # its items as made and its path from the arguments: one the traced code changed
    # (``outs.append(y)``, ``metrics["loss"] = l``, ``batch.out = y``) is a write to the
    # caller's object that the copy kept from it (``rebuild.writes``).
    made = []

    def rebuild(ts):
        it = iter(ts)
        made.clear()        # (the last trace's copies are the ones its program stands for)

        def put(v, path, depth=0):
            if leaf(v):
                return next(it)
            if isinstance(v, (list, tuple)):
                new = same_sequence(v, (put(x, path + (("item", i),), depth)
                                        for i, x in enumerate(v)))
                if isinstance(new, list):
                    made.append((new, _items(new), path))
                return new
            if isinstance(v, dict):
                new = {k: put(x, path + (("item", k),), depth) for k, x in v.items()}
                made.append((new, _items(new), path))
                return new
            if depth < OBJECT_DEPTH and plain_object(v):
                # a shallow copy holding the trace's tensors: the caller's object is left
                # as it is (a write to it is found by ``writes``)
                new = copy.copy(v)
                new.__dict__.update({k: put(x, path + (("attr", k),), depth + 1)
                                     for k, x in v.__dict__.items()})
                made.append((new, _items(new), path))
                return new
            return v
        return (tuple(put(x, (("args", None), ("item", i))) for i, x in enumerate(args)),
                {k: put(x, (("kwargs", None), ("item", k))) for k, x in kwargs.items()})

    def writes():
        """``(ArgPlace, key, value)`` for each item or attribute the traced code set on a
        copy and each item it appended to a list, in the order they stand there; None
        when a change is not one of those (an item removed, a list shortened)."""
        out = []
        for new, items, path in made:
            now = _items(new)
            if isinstance(new, list):
                if len(now) < len(items):
                    return None
                place = ArgPlace(path, False)
                out += [(place, i, x) for i, x in enumerate(now)
                        if i >= len(items) or x is not items[i]]
                continue
            before = dict(items)
            if len(before) > len(now) or any(k not in before for k, _ in now[:len(before)]):
                return None     # (an item or attribute deleted)
            place = ArgPlace(path, not isinstance(new, dict))
            out += [(place, k, x) for k, x in now if before.get(k, _NONE) is not x]
        return out

    def changed() -> bool:
        """Whether the traced code changed a container or object it was given."""
        w = writes()
        return w is None or bool(w)

    rebuild.writes, rebuild.changed = writes, changed
    return flat, rebuild


_NONE = object()


class ArgPlace:
    """A list, dict or plain object of a call's arguments that traced code wrote to (the
    trace wrote ``rebuild``'s copy): its path from the arguments, found anew in each call's
    own arguments when the write is replayed (``write``).

    >>> p = ArgPlace((("args", None), ("item", 0), ("item", "loss")), False)
    >>> stats = {"loss": []}
    >>> p.write((stats,), {}, 0, 1.5)
    >>> stats
    {'loss': [1.5]}
    """

    __slots__ = ("path", "attr")

    def __init__(self, path, attr):
        self.path = path
        self.attr = attr        # an object: its attributes are set with setattr

    def write(self, args, kwargs, key, value) -> None:
        """Set item or attribute ``key`` of this place in the call ``(args, kwargs)``; a
        list's item one past its end is appended."""
        c = args if self.path[0][0] == "args" else kwargs
        for how, k in self.path[1:]:
            c = c[k] if how == "item" else c.__dict__[k]
        if self.attr:
            setattr(c, key, value)
        elif isinstance(c, list) and key == len(c):
            c.append(value)
        else:
            c[key] = value


def _items(c) -> list:
    """A list's items, a dict's or a plain object's (key, value) pairs, as they are now."""
    if isinstance(c, list):
        return list(c)
    return list((c if isinstance(c, dict) else c.__dict__).items())


def flatten_ints(args, kwargs):
    """The ints of a call, in the order ``describe_arg`` keys them, and the function
    putting other values (a dynamic int's ``SymInt``) in their place."""
    return flatten_call(args, kwargs, _int)


def repeated_tensors(args, kwargs) -> tuple:
    """``(position, first position)`` in ``flatten_call`` order of each tensor given again
    (``f(x, x)``): part of the cache key, since a trace sees one object there
    (``trace(same_inputs=True)``) and code may ask ``a is b``."""
    if not kwargs and all(a.__class__ is Tensor for a in args):     # (the common call)
        if len(args) < 2 or len(set(map(id, args))) == len(args):
            return ()
        flat = args
    else:
        flat = flatten_call(args, kwargs)[0]
    first, out = {}, []
    for j, t in enumerate(flat):
        if isinstance(t, Tensor):
            i = first.setdefault(id(t), j)
            if i != j:
                out.append((j, i))
    return tuple(out)


def layout_of(t):
    """How a tensor that keeps its storage laid out over devices (a DTensor) is laid out:
    programs are compiled for their inputs' shardings. None for other tensors."""
    if not t.__class__._keep_resident:
        return None
    arr = resident(t)
    return arr.sharding if arr is not None else None


def describe_arg(v, depth=0):
    if v.__class__ is Tensor:   # (its fields, not its properties: this runs on every call)
        if v._ks & SPARSE_BITS:
            check_strided(v, "fnx.compile")
        return ("T", storage_shape(v), v._dtype, v._device, bool(v._ks & AUTOGRAD_BITS),
                v._grad is None)
    if isinstance(v, Tensor):
        if v.__class__._keep_resident:
            return ("T", tuple(v.shape), v.dtype, v.device, v.requires_grad, v._grad is None,
                    layout_of(v))
        return ("T", tuple(v.shape), v.dtype, v.device, v.requires_grad, v._grad is None)
    if type(v) is float:
        return ("F",)       # a program input: its value is not part of the key
    if isinstance(v, (list, tuple)):
        return (type(v).__name__,) + tuple(describe_arg(x, depth) for x in v)
    if isinstance(v, dict):
        # in insertion order, as ``flatten_call`` feeds the values: a key that sorted them
        # would let ``{"a": t1, "b": t2}`` reuse the program of ``{"b": t2, "a": t1}``
        # with its inputs swapped; a tensor key (an optimizer's state) is compared by
        # identity, not elementwise
        return ("dict",) + tuple((Same(k) if isinstance(k, Tensor) else k,
                                  describe_arg(x, depth)) for k, x in v.items())
    if depth < OBJECT_DEPTH and plain_object(v):
        return ("O", type(v)) + tuple((k, describe_arg(x, depth + 1))
                                      for k, x in v.__dict__.items())
    if isinstance(v, np.ndarray):
        return ("np", v.shape, v.dtype.str, _digest(v))
    if guards.is_optimizer(v):      # (passed in: its loaded state is a new key)
        return ("optimizer", Same(v), guards.optimizer_state(v))
    try:
        hash(v)
        return ("V", v)
    except TypeError:
        # (held: a bare id is reused by the next object once this one is freed)
        return ("id", Same(v))


def _digest(a) -> bytes:
    """A NumPy argument's contents for the key: the code may make a tensor of it (its
    values are the program's constants), so a new array or one changed in place must not
    reuse the program. Small arrays are their bytes; a bigger one a 128-bit digest (one
    pass over it per call)."""
    data = np.ascontiguousarray(a).view(np.uint8).reshape(-1) if a.dtype != object \
        else np.frombuffer(repr(a.tolist()).encode(), np.uint8)
    if data.size <= 256:
        return data.tobytes()
    return hashlib.blake2b(data, digest_size=16).digest()


def storage_id(t) -> int:
    """An id of the memory tensor ``t`` reads: its view base's storage, a NumPy view's
    owning array (two handles on one array, ``.data`` or ``from_numpy`` twice, agree)."""
    while t._base is not None:
        t = t._base
    d = t.__dict__
    data = d.get("_data", d.get("_jax"))
    while isinstance(getattr(data, "base", None), np.ndarray):
        data = data.base
    return id(data)


def aliased_input(inputs, written):
    """The position of a written input that shares memory with another tensor input, or
    None (``inputs`` by placeholder position; None for one not read here)."""
    if not written:
        return None
    seen = {}
    for i, v in enumerate(inputs):
        if isinstance(v, Tensor):
            seen.setdefault(storage_id(v), set()).add(i)
    for i in written:
        if isinstance(inputs[i], Tensor) and len(seen[storage_id(inputs[i])]) > 1:
            return i
    return None


def traced_inputs(graph, flat) -> list:
    """The values a trace's placeholders stood for (None for a random key, which is not
    drawn here, a break's value, and a ``.grad``, which reading would unpack)."""
    return [None if kind in ("rng", "break", "grad") else source_value((kind, src), flat)
            for kind, src in getattr(graph, "input_sources", [])]


def passed_and_captured(graph, flat) -> list:
    """The positions in ``flat`` of tensors the call passes that the trace also read from
    outside (a model's parameters passed in a list too: ``step(model, params)``). The trace
    saw two tensors for each, a placeholder and a captured one, so a write or gradient
    through one would miss the other."""
    captured = set()
    for kind, src in getattr(graph, "input_sources", []):
        if kind == "item":      # (a place's tensor as the trace saw it; an option's now)
            captured.add(id(src.first if hasattr(src, "first") else src()))
        elif kind == "lifted":
            captured.add(id(src))
    return [k for k, t in enumerate(flat) if isinstance(t, Tensor) and id(t) in captured]


def lifted_key(t):
    """What a captured tensor's guard compares (``describe_arg``'s tensor fields but the
    .grad state, see ``grad_reads``), read without materializing a resident tensor's NumPy
    view."""
    if t._ks & SPARSE_BITS:
        check_strided(t, "fnx.compile")
    return (storage_shape(t), t._dtype, t._device, bool(t._ks & AUTOGRAD_BITS), layout_of(t))
