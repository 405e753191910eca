"""Decomposition: rewriting ops into lower levels (aten -> core -> prims).

Levels and the decomposing mode are in ``fnx.graph.levels``.

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

from .graph import Graph
from .levels import LEVELS, DecomposingMode, in_target, level
from .tracer import trace

__all__ = ["LEVELS", "level", "in_target", "DecomposeInterpreter", "run_decomposed",
           "decompose"]

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
    if isinstance(graph_or_fn, Graph):
        return trace(graph_or_fn.run, *graph_or_fn.example_inputs(), decompose_to=to,
                     input_names=[p.name for p in graph_or_fn.placeholders()])
    return trace(graph_or_fn, *example_args, decompose_to=to, **example_kwargs)
