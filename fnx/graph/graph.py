"""The IR: a Graph of Nodes in program order.

A Node is a ``placeholder`` (an input), a ``call`` of an OpOverload, a ``getitem``
(one output of a multi-output call), a ``constant`` (a tensor captured by value), or
the single ``output``.  ``node.meta`` holds what every pass needs without data:
``NodeMeta(shape, dtype, device)``, a tuple of them for a multi-output call.
Printing a graph gives Python that calls ``fnx.ops`` with shapes in comments.
"""
from __future__ import annotations

import types
from typing import NamedTuple

import networkx as nx

from .. import ops
from ..core.device import device as _device_cls
from ..core.dtype import all_dtypes
from ..core.dtype import dtype as _dtype_cls
from ..core.meta_array import meta_tensor

__all__ = ["NodeMeta", "Node", "Graph", "map_nodes", "same_sequence", "upstream"]


class NodeMeta(NamedTuple):
    shape: tuple
    dtype: object
    device: object

    def __str__(self):
        return f"{_DTYPE_ABBR.get(self.dtype.name, self.dtype.name)}{list(self.shape)}"


_DTYPE_ABBR = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
               "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
               "bool": "b8", "complex64": "c64", "complex128": "c128"}


class Node:
    __slots__ = ("graph", "name", "kind", "target", "args", "kwargs", "meta", "users")

    def __init__(self, graph, name, kind, target, args, kwargs, meta):
        self.graph = graph
        self.name = name
        self.kind = kind
        self.target = target
        self.args = args
        self.kwargs = kwargs
        self.meta = meta
        self.users = []
        for inp in self.inputs():
            inp.users.append(self)

    def inputs(self):
        """The nodes this node reads, in argument order."""
        out = []
        _collect((self.args, tuple(self.kwargs.values())), out)
        return out

    def __repr__(self):
        return f"%{self.name}"


def _collect(value, out):
    """The nodes in ``value`` (lists, tuples and dicts holding nodes), in ``map_nodes``'s
    order."""
    if isinstance(value, Node):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _collect(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _collect(v, out)


class Graph:
    """A straight-line program.

    >>> import fnx
    >>> from fnx.graph.graph import upstream
    >>> from fnx.graph.tracer import trace
    >>> g = trace(lambda x: (x * 2).sum(), fnx.ones(3))
    >>> print(g)
    def forward(x: "f32[3]"):
        mul = fnx.ops.aten.mul.Tensor(x, 2)  # f32[3]
        sum_1 = fnx.ops.aten.sum.default(mul)  # f32[]
        return sum_1
    >>> g.run(fnx.tensor([1., 2., 3.]))
    tensor(12.)
    """

    def __init__(self):
        self.nodes = []
        self._names = {}

    # -- building
    def _add(self, kind, name, target=None, args=(), kwargs=None, meta=None) -> Node:
        node = Node(self, self._unique(name), kind, target, tuple(args), dict(kwargs or {}),
                    meta)
        self.nodes.append(node)
        return node

    def placeholder(self, name: str, meta: NodeMeta) -> Node:
        return self._add("placeholder", name, meta=meta)

    def constant(self, value, meta: NodeMeta) -> Node:
        return self._add("constant", "const", target=value, meta=meta)

    def call(self, op, args, kwargs, meta) -> Node:
        return self._add("call", op.name, op, args, kwargs, meta)

    def getitem(self, node: Node, index: int) -> Node:
        return self._add("getitem", f"{node.name}_{index}", None, (node, index),
                         meta=node.meta[index])

    def output(self, value) -> Node:
        return self._add("output", "output", args=(value,))

    def _unique(self, name: str) -> str:
        base = name.replace(".", "_")
        n = self._names.get(base, 0)
        self._names[base] = n + 1
        if n == 0 and base not in _RESERVED:
            return base
        return f"{base}_{n + 1 if base in _RESERVED else n}"

    # -- reading
    def placeholders(self):
        return [n for n in self.nodes if n.kind == "placeholder"]

    def calls(self):
        return [n for n in self.nodes if n.kind == "call"]

    @property
    def output_node(self) -> Node:
        return self.nodes[-1]

    def example_inputs(self):
        """Meta tensors shaped like the placeholders (what re-tracing the graph needs)."""
        return [meta_tensor(p.meta.shape, p.meta.dtype, p.meta.device)
                for p in self.placeholders()]

    def to_networkx(self):
        """A ``networkx.DiGraph`` over the nodes, with an edge from each input to its user."""
        g = nx.DiGraph()
        g.add_nodes_from(self.nodes)
        for n in self.nodes:
            for i in n.inputs():
                g.add_edge(i, n)
        return g

    def copy(self, keep=None, replace=None) -> "Graph":
        """A new graph of the nodes ``keep(node)`` accepts (all by default); uses of a node in
        ``replace`` read its replacement instead.  Node names and metas carry over."""
        replace = replace or {}
        new = self.copy_attributes(Graph())
        mapped = {}

        def resolve(v):
            while v in replace:
                v = replace[v]
            return mapped[v]

        def remap(v):
            return map_nodes(v, resolve)

        for n in self.nodes:
            if n in replace or (keep is not None and n.kind in ("call", "getitem", "constant")
                                and not keep(n)):
                continue
            m = new._add(n.kind, n.name, n.target, remap(n.args), remap(n.kwargs), n.meta)
            mapped[n] = m
        return new

    def copy_attributes(self, new: "Graph") -> "Graph":
        """``new``, given what a trace recorded beside the nodes (inputs' sources, guards,
        written inputs, stored tensors, a joint graph's backward: ``fnx.graph.joint``)."""
        for attr in ("mutated_inputs", "grad_writes", "output_requires_grad", "lifted",
                     "input_sources", "guards", "grad_reads", "stored", "python_writes",
                     "result_template", "stored_grad", "result_grad", "joint", "backward",
                     "values_read"):
            if hasattr(self, attr):
                v = getattr(self, attr)
                setattr(new, attr, list(v) if isinstance(v, list) else v)
        return new

    # -- running
    def run(self, *inputs):
        """Evaluate the graph by calling each op (the reference interpreter)."""
        places = self.placeholders()
        if len(inputs) != len(places):
            raise TypeError(f"graph expects {len(places)} inputs, got {len(inputs)}")
        env = dict(zip(places, inputs))
        result = None
        for node in self.nodes:
            if node.kind == "call":
                env[node] = node.target(*_load(node.args, env), **_load(node.kwargs, env))
            elif node.kind == "getitem":
                env[node] = env[node.args[0]][node.args[1]]
            elif node.kind == "constant":
                env[node] = node.target
            elif node.kind == "output":
                result = _load(node.args[0], env)
        return result

    # -- printing
    def to_python(self) -> str:
        """The graph as Python source: ``def forward(...)`` calling ``fnx.ops``, with each
        result's dtype and shape in a comment.  Captured constants are named ``_c0``,
        ``_c1``...; ``python_globals()`` supplies them (``compile_python`` does both).
        """
        places = ", ".join(f'{p.name}: "{p.meta}"' for p in self.placeholders())
        lines = [f"def forward({places}):"]
        constants = self._constants()
        for node in self.nodes:
            if node.kind == "call":
                args = [_fmt(a) for a in node.args]
                defaults = {a.name: a.default for a in node.target.schema.arguments
                            if a.kwarg_only and a.has_default}
                args += [f"{k}={_fmt(v)}" for k, v in node.kwargs.items()
                         if k not in defaults or defaults[k] != v]
                meta = node.meta
                shown = ", ".join(map(str, meta)) if isinstance(meta, tuple) and \
                    not isinstance(meta, NodeMeta) else str(meta)
                lines.append(f"    {node.name} = fnx.ops.{node.target.namespace}."
                             f"{node.target.name}.{node.target.overload_name}"
                             f"({', '.join(args)})  # {shown}")
            elif node.kind == "getitem":
                lines.append(f"    {node.name} = {node.args[0].name}[{node.args[1]}]")
            elif node.kind == "constant":
                lines.append(f"    {node.name} = _c{constants.index(node)}  # {node.meta}")
            elif node.kind == "output":
                lines.append(f"    return {_fmt(node.args[0])}")
        return "\n".join(lines)

    def _constants(self):
        return [n for n in self.nodes if n.kind == "constant"]

    def python_globals(self) -> dict:
        """The names ``to_python()``'s source needs: ``fnx`` (its ``ops``, dtypes and
        ``device``) and the constants."""
        env = {"fnx": _PROGRAM_NAMESPACE}
        env.update({f"_c{i}": n.target for i, n in enumerate(self._constants())})
        return env

    def compile_python(self):
        """``to_python()`` executed: a function computing what ``run`` computes.

        >>> import fnx
        >>> from fnx.graph.tracer import trace
        >>> w = fnx.tensor([1., 2.])
        >>> f = trace(lambda x: (x * w).sum(), fnx.ones(2)).compile_python()
        >>> f(fnx.tensor([3., 4.]))
        tensor(11.)
        """
        env = self.python_globals()
        exec(compile(self.to_python(), "<fnx graph>", "exec"), env)
        return env["forward"]

    __str__ = to_python

    def __repr__(self):
        return f"<Graph: {len(self.placeholders())} inputs, {len(self.calls())} calls>"


_RESERVED = {"sum", "max", "min", "abs", "pow", "round", "slice", "all", "any", "input",
             "type", "range", "iter", "fnx", "id", "hash", "print", "list"}


# What printed programs call: fnx.ops.<ns>.<op>.<overload>, fnx.<dtype>, fnx.device(...).
_PROGRAM_NAMESPACE = types.SimpleNamespace(ops=ops, device=_device_cls,
                                           **{d.name: d for d in all_dtypes()})


def upstream(roots) -> set:
    """The nodes ``roots`` are computed from, ``roots`` included (non-nodes ignored).

    >>> from fnx.ops import aten
    >>> g = Graph()
    >>> x, y = g.placeholder("x", None), g.placeholder("y", None)
    >>> e = g.call(aten.exp.default, (x,), {}, None)
    >>> s = g.call(aten.sin.default, (y,), {}, None)
    >>> sorted(n.name for n in upstream([e]))
    ['exp', 'x']
    """
    need, stack = set(), list(roots)
    while stack:
        n = stack.pop()
        if n in need or not isinstance(n, Node):
            continue
        need.add(n)
        stack.extend(n.inputs())
    return need


def same_sequence(like, items):
    """A list or tuple of ``like``'s type holding ``items``: a named tuple (a
    ``PackedSequence``) through its ``_make``; lists, tuples and tuple subclasses built from
    one sequence (``fnx.return_types``, as PyTorch's structseq) from the items.

    >>> import collections, fnx
    >>> P = collections.namedtuple("P", "x y")
    >>> same_sequence(P(1, 2), (v * 10 for v in (1, 2)))
    P(x=10, y=20)
    >>> r = fnx.tensor([3, 1]).max(dim=0)
    >>> type(same_sequence(r, iter(r))) is type(r)
    True
    """
    make = getattr(type(like), "_make", None)
    return make(items) if make is not None else type(like)(items)


def map_nodes(value, fn):
    """``value`` (a node, or lists/tuples/dicts holding nodes) with each node replaced by
    ``fn(node)``; everything else is kept as it is."""
    if isinstance(value, Node):
        return fn(value)
    if isinstance(value, list):
        return [map_nodes(v, fn) for v in value]
    if isinstance(value, tuple):
        items = [map_nodes(v, fn) for v in value]
        if type(value) is tuple:
            return tuple(items)
        try:            # a named tuple or structseq (``max(dim=)``'s values/indices) stays one
            return same_sequence(value, items)
        except TypeError:
            return tuple(items)
    if isinstance(value, dict):
        return same_mapping(value, ((k, map_nodes(v, fn)) for k, v in value.items()))
    return value


def same_mapping(like, items):
    """A dict of ``like``'s type (an ``OrderedDict``) holding the ``(key, value)`` pairs
    ``items``; a plain dict when that type is not built from pairs."""
    if type(like) is dict:
        return dict(items)
    items = list(items)
    try:
        return type(like)(items)
    except TypeError:
        return dict(items)


def _load(value, env):
    return map_nodes(value, env.__getitem__)


def _fmt(value) -> str:
    if isinstance(value, Node):
        return value.name
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_fmt(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_fmt(v)}" for k, v in value.items()) + "}"
    if isinstance(value, _dtype_cls):
        return f"fnx.{value.name}"
    if isinstance(value, _device_cls):
        return f"fnx.device({str(value)!r})"
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return f"float({str(value)!r})"
    return repr(value)
