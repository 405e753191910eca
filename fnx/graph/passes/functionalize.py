"""Functionalization: a traced program with in-place ops and views becomes a functional one.

An in-place op (``x.add_(y)``, ``out=`` variants, ``copy_``) turns into its functional
op; the new value replaces the written tensor for every later reader.  Writing through
a view (``x[0].mul_(2)``) also rewrites the view's base with the matching ``*_scatter``
op (or the inverse reshape/permutation), and any other view of that base read later is
recomputed from the new base.  Inputs that were written get their final values as
extra graph outputs, listed in ``graph.mutated_inputs``; ``fnx.compile`` copies those
back into the caller's tensors.

>>> import fnx
>>> from fnx.graph.tracer import trace
>>> def f(x):
...     x[0].mul_(2)
...     return x.sum()
>>> g = functionalize(trace(f, fnx.ones(2, 2)))
>>> [n.target.name for n in g.calls()]
['select', 'mul', 'select_scatter', 'sum']
>>> g.mutated_inputs
[(0, 1)]
"""
from __future__ import annotations

from ..graph import Graph
from ..tracer import trace

__all__ = ["functionalize"]


def functionalize(graph: Graph, decompose_to: str = "aten") -> Graph:
    """A functional Graph computing what ``graph`` computes, with written inputs returned.

    ``result.mutated_inputs`` lists ``(input index, output index)`` pairs: the output at
    that index of the new graph's output tuple is the input's final value.  With
    ``decompose_to`` the same re-trace also decomposes (to "core" or "prims").
    """
    return trace(graph.run, *graph.example_inputs(), decompose_to=decompose_to,
                 input_names=[p.name for p in graph.placeholders()], functional=True)
