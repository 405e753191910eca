"""What a traced function returns, as a compiled call gives it back.

A trace records the result as a structure of graph nodes (tuples, lists, dicts; a
dataclass as the tuple of its fields). What a program cannot output is given back as
eager Python gives it (``result_template``, ``restore_result``): a float computed from
float inputs, an input tensor returned itself or a view of one (``x[0]``, ``x.t()``: the
same view of the call's tensor, so a write through it reaches the input, as eagerly), a
new dataclass instance per call. An
object made inside and holding a computed tensor cannot be given back at all
(``opaque_result``). ``fnx.graph.tracer`` uses these at the end of a trace.
"""
from __future__ import annotations

import copy
import dataclasses

from ..autograd.history import replay
from ..core.tensor import Tensor
from .graph import same_mapping, same_sequence
from .python_state import _stored_tensors
from .symbolic import SymFloat

__all__ = ["result_template", "restore_result", "leaves", "grad_flags", "opaque_result",
           "is_dataclass_instance"]


def result_template(out, inputs):
    """What of a traced function's result ``out`` a compiled call gives back as eager
    Python does rather than as a program output: a float computed from float inputs (a
    ``SymFloat``: recomputed from the call's inputs, so it stays a Python float) and an
    input tensor returned itself (an ``out=`` argument: the call returns that very
    tensor) or a view of one (made again on the call's tensor by its view chain, after
    the program wrote the inputs back), and a dataclass instance (its fields are a tuple
    in the graph's result; each call gets a new instance). None when the result has none
    (``restore_result``)."""
    where = {id(t): i for i, t in enumerate(inputs)}

    def walk(v):
        if type(v) is SymFloat:
            return ("float", v._expr, v._deps, float.__float__(v))
        if isinstance(v, Tensor):
            i = where.get(id(v))
            if i is not None:
                return ("input", i)
            base = v._base
            if base is not None and id(base) in where and _replayable(v._view_chain):
                return ("view", where[id(base)], v._view_chain)
            return None
        if isinstance(v, (list, tuple)):
            items = [walk(x) for x in v]
            return ("seq", items) if any(t is not None for t in items) else None
        if is_dataclass_instance(v):    # (before dict: a ModelOutput is both)
            names = [f.name for f in dataclasses.fields(v)]
            return ("object", v, names, [walk(getattr(v, n)) for n in names])
        if isinstance(v, dict):
            items = {k: walk(x) for k, x in v.items()}
            return ("dict", items) if any(t is not None for t in items.values()) else None
        return None
    return walk(out)


def restore_result(result, template, inputs):
    """``result`` (a compiled call's) with ``result_template``'s leaves put back:
    ``inputs`` are the call's inputs in placeholder order."""
    kind = template[0]
    if kind == "float":
        _, expr, deps, value = template
        return expr(inputs) if deps else value
    if kind == "input":
        return inputs[template[1]]
    if kind == "view":
        base = inputs[template[1]]
        # (a tensor laid out over devices, a DTensor, holds an immutable jax.Array: no
        # view shares it, and its op programs give their result laid out by XLA)
        return result if base.__class__._keep_resident else replay(template[2], base)
    if kind == "seq":
        items = [r if t is None else restore_result(r, t, inputs)
                 for r, t in zip(result, template[1])]
        return same_sequence(result, items)
    if kind == "object":
        _, like, names, templates = template
        obj = copy.copy(like)
        values = {name: r if t is None else restore_result(r, t, inputs)
                  for name, r, t in zip(names, result, templates)}
        for name, value in values.items():
            # (object.__setattr__: a frozen dataclass too)
            object.__setattr__(obj, name, value)
        if isinstance(obj, dict):   # a ModelOutput: its items are its non-None fields
            for k in list(obj.keys()):
                if k in values:
                    dict.__setitem__(obj, k, values[k])
        return obj
    return same_mapping(result, ((k, r if template[1].get(k) is None else
                                  restore_result(r, template[1][k], inputs))
                                 for k, r in result.items()))


def _replayable(chain) -> bool:
    """Whether a view chain's arguments are plain values (not a size symbol or a tensor
    of the trace), so it can be applied to a call's own tensor."""
    def plain(v):
        if isinstance(v, (list, tuple)):
            return all(plain(x) for x in v)
        if isinstance(v, dict):
            return all(plain(x) for x in v.values())
        return v is None or type(v) in (int, float, bool, str) or \
            not isinstance(v, (Tensor, SymFloat)) and type(v).__module__.startswith("fnx.core")
    return bool(chain) and all(plain(args) and plain(kwargs) for _, args, kwargs, _ in chain)


def grad_flags(value) -> list:
    """Per tensor or float of a result, in the order ``graph._collect`` lists its nodes:
    whether it requires grad (a compiled program's vjp differentiates those only)."""
    if isinstance(value, Tensor):
        return [value.requires_grad]
    if isinstance(value, SymFloat):
        return [False]
    if isinstance(value, (list, tuple)):
        return [f for v in value for f in grad_flags(v)]
    if is_dataclass_instance(value):
        return [f for x in leaves(value) for f in grad_flags(x)]
    if isinstance(value, dict):
        return [f for v in value.values() for f in grad_flags(v)]
    return []


def leaves(value):
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in leaves(v)]
    if is_dataclass_instance(value):    # (before dict: a ModelOutput is both)
        return [x for f in dataclasses.fields(value) for x in leaves(getattr(value, f.name))]
    if isinstance(value, dict):
        return [x for v in value.values() for x in leaves(v)]
    return [value]


def opaque_result(mode, out, stored):
    """The type name of the first object in the result ``out`` (not a tensor, list,
    tuple, dict or dataclass) that holds a tensor of the trace the program does not
    store (made inside the function: ``Box(t)``), which a program cannot give back;
    else None."""
    kept = {id(t) for _, _, t, _ in stored}
    for leaf in leaves(out):
        if isinstance(leaf, (Tensor, SymFloat)) or type(leaf) in _PLAIN_RESULTS:
            continue
        if any(id(t) not in kept for _, _, t in _stored_tensors(mode, [leaf])):
            return type(leaf).__name__
    return None


_PLAIN_RESULTS = (int, float, bool, str, type(None), complex, bytes)


def is_dataclass_instance(value) -> bool:
    """A dataclass instance (not a module, whose identity a result keeps)."""
    return dataclasses.is_dataclass(value) and not isinstance(value, type) and \
        not hasattr(value, "_parameters")
