"""Value checks evaluated on the host before a compiled call, so the call need not wait.

A compiled program with value checks (``prims.check_in_range``: class indices, embedding
ids, gather indices) returns their status beside its outputs, and the call reads it
before returning: Python then waits for every step to finish, where a plain ``jax.jit``
loop prepares the next step while this one runs. Most checked values are a few cheap ops
away from a CPU input (``nll_loss``'s target: ``where(t == ignore_index, 0, t)``), so
they are checked on the host, in NumPy, before the call: ``HostChecks``. When they all
pass, the call runs the program without them (``Program.without_checks``); when one
fails, it runs the program with every check in it, which raises exactly what it always
did (the first failing check in program order, every tensor unchanged).

The same holds for a cuda input: its values are copied to the host (a few integers, at most
``_MAX_NUMEL``; the copy waits for that input alone, not for the programs running) and
kept with the array they came from. A device array never changes, so while a tensor keeps
its array (the same targets fed every step, an embedding table's ids) the copy is reused,
and a call that checks only such inputs does not touch the device at all before it runs.

Exactness matters more than reach: a host check that passed wrongly would let an
out-of-range index through (XLA clamps it). So only prims with an exact NumPy rule here
are evaluated, on integers and booleans only, each result cast to its node's dtype;
anything else keeps its check in the program. The parts of a check that read no input (a broadcast
``ignore_index``) are computed once, by the eager kernels.
"""
from __future__ import annotations

import numpy as np

from ..backends.cpu.prims import BINARY_FNS, UNARY_FNS, broadcast_in_dim, convert
from ..core.grad_mode import no_grad
from ..graph.graph import Node, _load, upstream
from ..ir import prims as P
from .jax_storage import KEEP

__all__ = ["HostChecks"]

# checks whose inputs are at most this many ops away, on at most this many elements
_MAX_OPS, _MAX_NUMEL = 8, 1 << 16
# the devices whose inputs are read on the host (a cuda array by a copy)
_DEVICES = ("cpu", "cuda")


# prim -> fn(*NumPy arrays and the node's other arguments): the value, in any dtype
_RULES = {
    P.reshape: lambda a, shape: a.reshape(tuple(shape)),
    P.broadcast_in_dim: broadcast_in_dim,
    P.where: np.where,
    P.convert_element_type: lambda a, dtype: convert(a, dtype),
    **{op: fn for op, fn in BINARY_FNS.items()
       if op in (P.eq, P.ne, P.lt, P.le, P.gt, P.ge, P.add, P.sub, P.mul, P.maximum,
                 P.minimum, P.bitwise_and, P.bitwise_or, P.bitwise_xor)},
    **{op: fn for op, fn in UNARY_FNS.items() if op in (P.abs, P.neg, P.bitwise_not)},
}


class HostChecks:
    """The range checks of one program that run on the host: ``skip`` (their nodes, left
    out of the program when they pass) and the steps computing what they check."""

    @classmethod
    def of(cls, program, feed):
        """The host checks of ``program`` (a ``jax_compile.Program``; ``feed`` as in
        ``ProgramPlan``: what feeds each placeholder), or None when none qualifies."""
        if program.spmd is not None:    # (values laid out over devices or processes)
            return None
        graph = program._source[1]
        places = graph.placeholders()
        fed = {p: (i, c) for p, (i, c, how) in zip(places, feed)
               if how != KEEP and getattr(p.meta.device, "type", None) in _DEVICES}
        skip, cone = [], set()
        for n in graph.nodes:
            if n.kind == "call" and n.target is P.check_in_range:
                need = upstream([n])
                if _qualifies(need, fed):
                    skip.append(n)
                    cone |= need
        if not skip:
            return None
        return cls(graph, places, fed, frozenset(skip), cone)

    def __init__(self, graph, places, fed, skip, cone):
        self.skip = skip
        self.feeds = [(p, *fed[p]) for p in places if p in cone]
        # per fed device input: (its last array, that array's values on the host)
        self._copies = {p: (None, None) for p, *_ in self.feeds
                        if p.meta.device.type != "cpu"}
        live = {p for p, *_ in self.feeds}
        consts = {}             # node -> NumPy value, for nodes that read no input
        steps = []              # the nodes computed from the inputs, in program order
        with no_grad():
            for n in graph.nodes:
                if n not in cone or n.kind == "placeholder":
                    continue
                if n.kind == "constant":
                    consts[n] = n.target
                elif not any(i in live for i in n.inputs()):
                    v = n.target(*_load(n.args, consts), **_load(n.kwargs, consts)) \
                        if n.kind == "call" else consts[n.args[0]][n.args[1]]
                    consts[n] = v
                else:
                    live.add(n)
                    steps.append(n)
        self.plan = [_step(n) for n in _without_implied(steps)]
        self.consts = {n: np.asarray(v._data) if hasattr(v, "_data") else v
                       for n, v in consts.items()}

    def hold(self, inputs) -> bool:
        """Whether every host check passes on this call's inputs (placeholder order)."""
        env = dict(self.consts)
        copies = self._copies
        for p, i, c in self.feeds:
            data = (inputs[i] if c is None else c)._data
            if type(data) is not np.ndarray:    # a device array: its host copy
                seen, host = copies[p]
                if data is not seen:
                    host = np.asarray(data)
                    copies[p] = (data, host)
                data = host
            env[p] = data
        try:
            for n, fn, args, kwargs in self.plan:
                vals = [env[a] if node else a for node, a in args]
                if fn is None:          # check_in_range
                    a, low, high = vals[0], vals[1], vals[2]
                    if a.size and (_min(a, None) < low or _max(a, None) >= high):
                        return False
                    env[n] = a
                elif fn is _getitem:
                    env[n] = vals[0][vals[1]]
                else:
                    kw = {k: env[a] if node else a for k, (node, a) in kwargs.items()}
                    env[n] = np.asarray(fn(*vals, **kw)).astype(n.meta.dtype.numpy,
                                                                copy=False)
        except Exception:   # (an integer division by zero...): the program decides
            return False
        return True


_min, _max = np.minimum.reduce, np.maximum.reduce   # (a.min() wraps these in Python)
# ops that move or copy values without changing them
_SAME_VALUES = (P.reshape, P.broadcast_in_dim)


def _without_implied(steps) -> list:
    """``steps`` without the range checks that an earlier check already implies (the same
    values, only reshaped or broadcast, checked against bounds at least as wide: the
    index of ``nll_loss``'s gather after its target check) and without the steps only
    they needed."""
    implied = set()
    for n in steps:
        if n.kind != "call" or n.target is not P.check_in_range:
            continue
        src = n.args[0]
        while isinstance(src, Node) and src.kind == "call" and src.target in _SAME_VALUES:
            src = src.args[0]
        if isinstance(src, Node) and src.kind == "call" and src.target is P.check_in_range \
                and src.args[1] >= n.args[1] and src.args[2] <= n.args[2]:
            implied.add(n)
    keep = set()
    for n in steps:
        if n.kind == "call" and n.target is P.check_in_range and n not in implied:
            keep |= upstream([n])
    return [n for n in steps if n in keep]


def _getitem(a, i):
    return a[i]


def _step(n):
    """``(node, rule, args, kwargs)`` with each argument ``(is a node, value)``, so a call
    does no structure walking (an argument holding nodes inside a list is not expected
    of these prims; such a node is rejected by ``_qualifies``)."""
    def spec(v):
        return (True, v) if isinstance(v, Node) else (False, v)
    if n.kind == "getitem":
        return n, _getitem, [spec(a) for a in n.args], {}
    fn = None if n.target is P.check_in_range else _RULES[n.target]
    return n, fn, [spec(a) for a in n.args], {k: spec(v) for k, v in n.kwargs.items()}


def _qualifies(need, fed) -> bool:
    """Whether the check whose cone is ``need`` runs on the host: it reads only CPU inputs
    fed from tensors, through at most ``_MAX_OPS`` ops that have a rule here, each giving
    at most ``_MAX_NUMEL`` integers or booleans (no float rounding to agree on)."""
    if any(m.kind == "placeholder" and m not in fed for m in need):
        return False
    live = [m for m in need if m.kind in ("call", "getitem") and _reads_input(m)]
    if len(live) > _MAX_OPS:
        return False
    for m in live:
        if m.kind == "call" and m.target is not P.check_in_range and m.target not in _RULES:
            return False
        if any(not isinstance(a, Node) and _holds_node(a) for a in
               list(m.args) + list(m.kwargs.values())):
            return False
        meta = m.meta
        if not hasattr(meta, "shape") or meta.dtype.numpy.kind not in "biu" or \
                int(np.prod(meta.shape, dtype=np.int64)) > _MAX_NUMEL:
            return False
    return True


def _holds_node(v) -> bool:
    return isinstance(v, (list, tuple)) and any(isinstance(x, Node) or _holds_node(x)
                                                for x in v)


def _reads_input(node) -> bool:
    """Whether ``node`` is computed from a placeholder (else it is folded once)."""
    return any(m.kind == "placeholder" for m in upstream([node]))
