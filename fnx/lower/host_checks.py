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

import weakref

import numpy as np

from ..backends.cpu.prims import BINARY_FNS, UNARY_FNS, broadcast_in_dim, convert
from ..core.grad_mode import no_grad
from ..core.tensor import resident
from ..graph.graph import Node, _load, upstream
from ..ir import prims as P
from .jax_storage import ARRAY_TYPE, KEEP

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
        try:
            return cls(graph, places, fed, frozenset(skip), cone)
        except KeyError:    # a step reading a value no register holds: the program checks
            return None

    def __init__(self, graph, places, fed, skip, cone):
        self.skip = skip
        feeds = [(p, *fed[p]) for p in places if p in cone]
        live = {p for p, *_ in feeds}
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
        consts = {n: np.asarray(v._data) if hasattr(v, "_data") else v
                  for n, v in consts.items()}
        # The steps run on a list of registers: one per value (inputs, constants, each
        # step's result) and per literal argument, so a call walks no structure and
        # builds no dict: ``regs`` starts as ``_template`` (the constants filled in).
        slot = {}
        template = []

        def register(value, node=None):
            if node is not None and node in slot:
                return slot[node]
            template.append(value)
            if node is not None:
                slot[node] = len(template) - 1
            return len(template) - 1
        for n, v in consts.items():
            register(v, n)
        self._feeds = [(register(None, p), i, c, p.meta.device.type != "cpu")
                       for p, i, c in feeds]
        self._steps = []
        for n in _without_implied(steps):
            fn, args, kwargs = _rule(n)
            slots = tuple(slot[a] if node else register(a) for node, a in args)
            kw = {k: slot[a] if node else register(a) for k, (node, a) in kwargs.items()}
            if fn is None:      # check_in_range: (None, value, low, high) registers
                self._steps.append((None, slots[0], slots[1], slots[2], None))
                slot[n] = slots[0]
            else:
                self._steps.append((fn, slots, kw, register(None, n),
                                    None if fn is _getitem else n.meta.dtype.numpy))
        self._template = template
        # per device input's register: (its last array, that array's values on the host)
        self._copies = {k: (None, None) for k, _, _, device in self._feeds if device}
        # weak references to the immutable arrays (resident CPU storage, device arrays)
        # every check last passed on: the same arrays pass again without a step (the
        # targets fed unchanged every step). Weak: a strong one would count as a holder and
        # stop a donation.
        self._passed = None

    def hold(self, inputs) -> bool:
        """Whether every host check passes on this call's inputs (placeholder order)."""
        passed = self._passed
        if passed is not None:
            for (_, i, c, device), ref in zip(self._feeds, passed):
                a = _immutable(inputs[i] if c is None else c, device)
                if a is None or a is not ref():     # (a dead reference gives None)
                    break
            else:
                return True
        if self._evaluate(inputs):
            arrays = [_immutable(inputs[i] if c is None else c, device)
                      for _, i, c, device in self._feeds]
            self._passed = None if None in arrays else tuple(map(_weakref, arrays))
            return True
        return False

    def _evaluate(self, inputs) -> bool:
        regs = self._template.copy()
        copies = self._copies
        for k, i, c, device in self._feeds:
            t = inputs[i] if c is None else c
            data = t._data
            if device:      # a device array: its host copy, made once per array
                seen, host = copies[k]
                if data is not seen:
                    host = np.asarray(data)
                    copies[k] = (data, host)
                data = host
            regs[k] = data
        try:
            # (fn, argument registers, keyword registers, result register, its dtype)
            for fn, a, b, c, dtype in self._steps:
                if fn is None:          # check_in_range(value, low, high)
                    v = regs[a]
                    if v.size and (_min(v, None) < regs[b] or _max(v, None) >= regs[c]):
                        return False
                    continue
                if len(a) == 1:
                    v = fn(regs[a[0]], **{k: regs[j] for k, j in b.items()}) if b else \
                        fn(regs[a[0]])
                elif len(a) == 2 and not b:
                    v = fn(regs[a[0]], regs[a[1]])
                else:
                    v = fn(*[regs[j] for j in a], **{k: regs[j] for k, j in b.items()})
                if dtype is not None:
                    if type(v) is not _ndarray:
                        v = np.asarray(v)
                    if v.dtype != dtype:
                        v = v.astype(dtype)
                regs[c] = v
        except Exception:   # (an integer division by zero...): the program decides
            return False
        return True


_ndarray = np.ndarray
_weakref = weakref.ref


def _immutable(t, device):
    """The array holding ``t``'s values when nothing can write it in place (a jax.Array:
    a resident CPU storage, a device tensor's), else None (a NumPy storage)."""
    if device:
        data = t.__dict__.get("_data")
        return data if type(data) is ARRAY_TYPE else None
    return resident(t)


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


def _rule(n):
    """``(rule, args, kwargs)`` of the step ``n``, each argument ``(is a node, value)``
    (an argument holding nodes inside a list is not expected of these prims; such a
    node is rejected by ``_qualifies``); the rule of ``check_in_range`` is None."""
    def spec(v):
        return (True, v) if isinstance(v, Node) else (False, v)
    if n.kind == "getitem":
        return _getitem, [spec(a) for a in n.args], {}
    fn = None if n.target is P.check_in_range else _RULES[n.target]
    return fn, [spec(a) for a in n.args], {k: spec(v) for k, v in n.kwargs.items()}


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
