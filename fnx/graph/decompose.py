"""Decomposition: rewriting ops into lower levels (aten -> core -> prims).

Every op belongs to one level: ``prim`` (tag "prim"), ``core`` (tag "core", the Core
ATen opset) or ``aten`` (everything else).  An op's decomposition, registered on its
one definition site, is readable Python written with fnx ops; it may call ops of any
level, and decomposing *to* a level repeats until only ops of that level (or lower)
remain.

``run_decomposed`` does this eagerly on real tensors and reports which ops ran;
``fnx.decompose`` (see ``decompose``) does it on a traced Graph.

>>> import fnx
>>> from fnx.graph.decompose import run_decomposed
>>> x = fnx.tensor([[1., 2.], [3., 4.]])
>>> out, ran = run_decomposed(fnx.ops.aten.mm.default, x, x, to="prims")
>>> out
tensor([[ 7., 10.],
        [15., 22.]])
>>> sorted(str(op) for op in ran)
['prims::dot_general']
"""
from __future__ import annotations

from collections import Counter

from ..dispatch.modes import DispatchMode

__all__ = ["LEVELS", "level", "in_target", "DecomposeInterpreter", "run_decomposed",
           "decompose"]

LEVELS = ("aten", "core", "prims")


def level(op) -> str:
    """``"prims"``, ``"core"`` or ``"aten"``."""
    tags = op.tags
    if "prim" in tags:
        return "prims"
    if "core" in tags:
        return "core"
    return "aten"


def in_target(op, to: str) -> bool:
    """True when ``op`` may stay in a program decomposed to level ``to``."""
    if to not in LEVELS:
        raise ValueError(f"decompose: `to` must be one of {LEVELS}, got {to!r}")
    return LEVELS.index(level(op)) >= LEVELS.index(to)


class DecomposingMode(DispatchMode):
    """Base of modes that replace ops outside the target level by their decompositions.

    ``handle`` calls the decomposition (whose own op calls come back here) when the op
    is outside the target and has one; otherwise ``emit`` runs or records the op.
    """

    def __init__(self, to: str = "prims"):
        in_target(_ANY_OP, to)      # validates ``to``
        self.to = to

    def handle(self, op, ks, args, kwargs):
        if op.decomposition is not None and not in_target(op, self.to):
            return op.decomposition(*args, **kwargs)
        return self.emit(op, ks, args, kwargs)

    def emit(self, op, ks, args, kwargs):
        raise NotImplementedError


class DecomposeInterpreter(DecomposingMode):
    """Runs ops eagerly by their decompositions and counts the ops that actually ran."""

    def __init__(self, to: str = "prims"):
        super().__init__(to)
        self.ran = Counter()

    def emit(self, op, ks, args, kwargs):
        self.ran[op] += 1
        return self.run_below(op, ks, args, kwargs)


def run_decomposed(fn, *args, to: str = "prims", **kwargs):
    """Run ``fn(*args, **kwargs)`` with every op outside level ``to`` decomposed.

    Returns ``(result, ran)``: ``ran`` is a Counter of the ops that executed.  An op
    outside the target with no decomposition runs as it is, so it shows up in ``ran``.
    """
    with DecomposeInterpreter(to) as interp:
        out = fn(*args, **kwargs)
    return out, interp.ran


def decompose(graph_or_fn, *example_args, to: str = "prims", **example_kwargs):
    """``fnx.decompose``: a Graph rewritten so that only ops of level ``to`` remain.

    Given a Graph, re-traces it with decompositions applied.  Given a function, traces
    it on ``example_args`` first.

    >>> import fnx
    >>> g = fnx.decompose(lambda x: fnx.softmax(x, -1), fnx.ones(2, 3), to="core")
    >>> sorted({n.target.name for n in g.calls()})
    ['_softmax']
    """
    from .graph import Graph
    from .tracer import trace
    if isinstance(graph_or_fn, Graph):
        return trace(graph_or_fn.run, *graph_or_fn.example_inputs(), decompose_to=to,
                     input_names=[p.name for p in graph_or_fn.placeholders()])
    return trace(graph_or_fn, *example_args, decompose_to=to, **example_kwargs)


class _Any:
    tags = frozenset()


_ANY_OP = _Any()
