"""Capability partitioning: the calls a target can lower, grouped into regions that can each
run as one compiled program, with the other calls left to run eagerly between them.

A region must not need a value that an eager call computes from the region's own
output (that would be a cycle).  Grouping supported calls by the number of eager
calls on the longest path from the inputs to them rules that out: an edge never goes
from a deeper group to a shallower one, and a path that leaves a group through an
eager call comes back strictly deeper.  Within that rule the regions are maximal.
"""
from __future__ import annotations

from typing import NamedTuple

import networkx as nx

from ..graph import Graph, Node, map_nodes

__all__ = ["Partition", "Region", "partition"]


class Region(NamedTuple):
    nodes: list          # call and getitem nodes, in program order
    inputs: list         # nodes from outside the region read inside it
    outputs: list        # nodes of the region read outside it (or by the output)

    def first(self, nodes) -> "Region":
        """This region with those of ``nodes`` it outputs first among its outputs (the
        new values of overwritten inputs: XLA gives a donated buffer to the first output
        of its shape)."""
        first = [n for n in nodes if n in self.outputs]
        return self._replace(outputs=list(dict.fromkeys(first + self.outputs)))

    def graph(self) -> Graph:
        """The region as a graph of its own: its inputs placeholders, its outputs the
        output."""
        sub = Graph()
        mapping = {}
        for i in self.inputs:
            mapping[i] = sub.placeholder(i.name, i.meta)
        for n in self.nodes:
            mapping[n] = sub._add(n.kind, n.name, n.target,
                                  map_nodes(n.args, mapping.__getitem__),
                                  map_nodes(n.kwargs, mapping.__getitem__), n.meta)
        sub.output(tuple(mapping[o] for o in self.outputs))
        return sub


class Partition(NamedTuple):
    steps: list          # Region | Node (an eager call), in an order that respects data flow
    fallback_ops: list   # the ops of the eager calls, first appearance order

    @property
    def regions(self):
        return [s for s in self.steps if isinstance(s, Region)]


def partition(graph: Graph, supported) -> Partition:
    """Split ``graph``'s calls into lowerable regions and eager calls.

    ``supported(node) -> bool`` says whether a call can be lowered.

    >>> import fnx
    >>> from fnx.graph.tracer import trace
    >>> g = trace(lambda x: (x.exp().cumsum(0) + x.sin()).relu(), fnx.ones(3))
    >>> p = partition(g, lambda n: n.target.name != "cumsum")
    >>> [s if isinstance(s, Node) else [n.name for n in s.nodes] for s in p.steps]
    [['exp', 'sin'], %cumsum, ['add', 'relu']]
    """
    dag = graph.to_networkx()
    depth = {}
    for node in nx.topological_sort(dag):
        depth[node] = max((depth[p] + _is_eager(p, supported)
                           for p in dag.predecessors(node)), default=0)
    groups, steps, fallback_ops = {}, [], []
    for node in graph.nodes:
        if node.kind not in ("call", "getitem"):
            continue
        owner = node.args[0] if node.kind == "getitem" else node
        if _is_eager(owner, supported):
            if node.kind == "call":
                steps.append(node)
                if node.target not in fallback_ops:
                    fallback_ops.append(node.target)
            continue
        group = groups.get(depth[owner])
        if group is None:
            group = groups[depth[owner]] = []
            steps.append(group)
        group.append(node)
    # Order: eager calls and regions by depth, keeping program order within a depth.
    steps.sort(key=lambda s: (depth[s] * 2 + 1) if isinstance(s, Node)
               else depth[_first_owner(s)] * 2)
    return Partition([s if isinstance(s, Node) else _region(s) for s in steps], fallback_ops)


def _is_eager(node: Node, supported) -> bool:
    if node.kind == "getitem":
        node = node.args[0]
    return node.kind == "call" and not supported(node)


def _first_owner(nodes):
    n = nodes[0]
    return n.args[0] if n.kind == "getitem" else n


def _region(nodes) -> Region:
    inside = set(nodes)
    inputs, outputs = [], []
    for n in nodes:
        for i in n.inputs():
            if i not in inside and i not in inputs:
                inputs.append(i)
        if any(u not in inside for u in n.users) and n not in outputs:
            outputs.append(n)
    return Region(nodes, inputs, outputs)
