"""Dead-code elimination and common-subexpression elimination."""
from __future__ import annotations

from ..graph import Graph, Node, map_nodes
from ..symint import is_symbolic

__all__ = ["eliminate_dead_code", "eliminate_common_subexpressions"]


def _has_effects(node: Node) -> bool:
    # A write is observable even when its result is unused (run functionalize first to
    # make such programs removable).
    return node.kind == "call" and node.target.schema.is_mutable


def eliminate_dead_code(graph: Graph) -> Graph:
    """``graph`` without the calls whose results nothing reads.

    >>> import fnx
    >>> from fnx.graph.tracer import trace
    >>> g = trace(lambda x: (x.exp(), x + 1)[1], fnx.ones(2))
    >>> [n.target.name for n in eliminate_dead_code(g).calls()]
    ['add']
    """
    live = set()
    for node in reversed(graph.nodes):
        if node.kind in ("output", "placeholder") or _has_effects(node) or \
                any(u in live for u in node.users):
            live.add(node)
    return graph.copy(keep=lambda n: n in live)


def _key(value):
    if is_symbolic(value):      # by its expression: hashing a SymInt would specialize it
        return ("SymInt", value.text)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__,) + tuple(_key(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _key(v)) for k, v in value.items()))
    if isinstance(value, (Node, int, float, bool, str, type(None))) or \
            type(value).__hash__ is not None and not hasattr(value, "_ks"):
        return (type(value).__name__, value)
    return ("id", id(value))


def eliminate_common_subexpressions(graph: Graph) -> Graph:
    """``graph`` with repeated identical pure calls computed once.

    Random ops (tag ``nondeterministic``) and writes are never merged.

    >>> import fnx
    >>> from fnx.graph.tracer import trace
    >>> g = trace(lambda x: x.exp() + x.exp(), fnx.ones(2))
    >>> [n.target.name for n in eliminate_common_subexpressions(g).calls()]
    ['exp', 'add']
    """
    seen, replace = {}, {}

    def canon(v):
        while v in replace:
            v = replace[v]
        return v

    for node in graph.nodes:
        if node.kind == "call" and not _has_effects(node) and \
                "nondeterministic" not in node.target.tags:
            key = (node.target, _key(map_nodes(node.args, canon)),
                   _key(map_nodes(node.kwargs, canon)))
        elif node.kind == "getitem":
            key = ("getitem", canon(node.args[0]), node.args[1])
        else:
            continue
        if key in seen:
            replace[node] = seen[key]
        else:
            seen[key] = node
    return graph.copy(replace=replace)
