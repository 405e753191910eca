"""Functionalization: a traced program with in-place ops and views becomes a functional one.

An in-place op (``x.add_(y)``, ``out=`` variants, ``copy_``) turns into its functional
op; the new value replaces the written tensor for every later reader.  Writing through
a view (``x[0].mul_(2)``) also rewrites the view's base with the matching ``*_scatter``
op (or the inverse reshape/permutation), and any other view of that base read later is
recomputed from the new base.  Inputs that were written get their final values as
extra graph outputs, listed in ``graph.mutated_inputs``; ``fnx.compile`` copies those
back into the caller's tensors.

>>> import fnx
>>> from fnx.ir.tracer import trace
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

from ...dispatch.dispatcher import get_op
from ..graph import Graph

__all__ = ["functionalize", "functional_variant", "is_view_op", "written_args",
           "inverse_view", "bind_names"]


def is_view_op(op) -> bool:
    """The op returns an alias of its first argument (schema ``-> Tensor(a)``)."""
    rets = op.schema.returns
    return bool(rets) and not op.schema.is_mutable and any(
        r.type.alias is not None and not r.type.alias.is_write for r in rets)


def written_args(op):
    """Names of the arguments ``op`` writes (schema ``Tensor(a!)``)."""
    return [a.name for a in op.schema.arguments if a.is_write]


_FUNCTIONAL = {}


def _special_variants():
    """In-place ops whose functional form is not an overload of the same name."""
    aten = _aten()

    def uniform(self, from_=0.0, to=1.0, *, generator=None):
        return aten.rand_like.default(self) * (to - from_) + from_

    def normal(self, mean=0.0, std=1.0, *, generator=None):
        return aten.randn_like.default(self) * std + mean

    def exponential(self, lambd=1.0, *, generator=None):
        return aten.log1p.default(-aten.rand_like.default(self)) * (-1.0 / lambd)

    def random_from(self, from_, to=None, *, generator=None):
        return aten.randint_like.low_dtype(self, from_, to)

    def random_to(self, to, *, generator=None):
        return aten.randint_like.low_dtype(self, 0, to)

    return {"zero_": lambda self: aten.zeros_like.default(self),
            "detach_": lambda self: aten.detach.default(self),
            "uniform_": uniform, "normal_": normal, "exponential_": exponential,
            "random_.from": random_from, "random_.to": random_to}


def functional_variant(op):
    """The op computing what in-place/out= ``op`` writes: ``add_.Tensor -> add.Tensor``,
    ``add.out -> add.Tensor`` (the overload whose arguments match, minus ``out``)."""
    if op in _FUNCTIONAL:
        return _FUNCTIONAL[op]
    from ...dispatch.dispatcher import ops
    written = set(written_args(op))
    name = op.name[:-1] if op.name.endswith("_") else op.name
    want = [(a.name, str(a.type).replace("(a!)", "").replace("(b!)", ""))
            for a in op.schema.arguments if a.name not in written or a.name == "self"]
    found = None
    packet = getattr(ops.namespace(op.namespace), name, None)
    for cand in (packet.overloads() if packet is not None else []):
        c = getattr(packet, cand)
        if c is op or c.schema.is_mutable:
            continue
        if [(a.name, str(a.type)) for a in c.schema.arguments] == want:
            found = c
            break
    if found is None:
        special = _special_variants().get(op.qualname.split("::")[1])
        if special is not None:
            found = _Special(special)
    _FUNCTIONAL[op] = found
    return found


class _Special:
    """A Python function standing in for the functional op (called with all arguments)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


def inverse_view(op, parent, new, args, kwargs, index=None):
    """``parent`` with the region that view ``op(parent, *args)`` covers replaced by ``new``."""
    aten = _aten()
    name = op.name
    a = bind_names(op, (parent,) + tuple(args), kwargs)
    if name in ("alias", "detach", "contiguous"):
        return new
    if name in ("view", "_unsafe_view", "reshape", "reshape_as", "view_as", "flatten",
                "unflatten", "squeeze", "unsqueeze"):
        return aten.reshape.default(new, list(parent.shape))
    if name == "permute":
        perm = [d % parent.ndim for d in a["dims"]]
        return aten.permute.default(new, sorted(range(len(perm)), key=perm.__getitem__))
    if name in ("transpose", "swapaxes", "swapdims"):
        d0, d1 = [v for k, v in a.items() if k != "self"][:2]
        return aten.transpose.int(new, d0, d1)
    if name == "t":
        return aten.t.default(new)
    if name == "movedim":
        return aten.movedim.intlist(new, _as_list(a["destination"]), _as_list(a["source"]))
    if name == "select":
        return aten.select_scatter.default(parent, new, a["dim"], a["index"])
    if name == "slice":
        return aten.slice_scatter.default(parent, new, a["dim"], a["start"], a["end"],
                                          a["step"])
    if name == "narrow":
        start = a["start"] if a["start"] >= 0 else a["start"] + parent.shape[a["dim"]]
        return aten.slice_scatter.default(parent, new, a["dim"], start, start + a["length"])
    if name == "diagonal":
        return aten.diagonal_scatter.default(parent, new, a["offset"], a["dim1"], a["dim2"])
    if name in ("split", "split_with_sizes", "chunk", "unbind"):
        return _inverse_split(op, parent, new, a, index)
    raise NotImplementedError(
        f"functionalize: writing through a view made by {op.qualname} is not supported "
        f"(PyTorch forbids it for expand; as_strided/unfold/view_as_* are not handled)")


def _inverse_split(op, parent, new, a, index):
    aten = _aten()
    dim = a["dim"] % max(parent.ndim, 1)
    if op.name == "unbind":
        return aten.select_scatter.default(parent, new, dim, index)
    size = parent.shape[dim]
    if op.name == "split_with_sizes":
        sizes = list(a["split_sizes"])
    else:
        step = a["split_size"] if op.name == "split" else -(-size // a["chunks"])
        sizes = [min(step, size - s) for s in range(0, size, step)] if step else [0]
    start = sum(sizes[:index])
    return aten.slice_scatter.default(parent, new, dim, start, start + sizes[index])


def bind_names(op, args, kwargs) -> dict:
    """``{argument name: value}`` for a call of ``op``, defaults filled in (no type checks,
    so graph nodes may stand in for tensors)."""
    params = op.schema.arguments
    positional = [a for a in params if not a.kwarg_only]
    out = {a.name: v for a, v in zip(positional, args)}
    out.update(kwargs)
    for a in params:
        if a.name not in out and a.has_default:
            out[a.name] = a.default
    return out


def _as_list(v):
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _aten():
    from ... import ops
    return ops.aten


class _Alias:
    """A tensor of the program: a root, or a view of a root through a chain of view ops."""
    __slots__ = ("root", "chain", "value", "seen")

    def __init__(self, value, root=None, chain=()):
        self.root = root if root is not None else self   # root._Alias
        self.chain = chain      # ((op, args, kwargs, index), ...) from the root
        self.value = value      # the traced tensor of its current value
        self.seen = 0           # the root's version this value was computed at


class _Functionalizer:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.alias = {}         # old node -> _Alias
        self.version = {}       # root _Alias -> write count

    def read(self, al: _Alias):
        root = al.root
        if al is not root and al.seen != self.version.get(root, 0):
            v = self.read(root)
            for op, args, kwargs, index in al.chain:
                v = op(v, *args, **kwargs)
                v = v[index] if index is not None else v
            al.value = v
            al.seen = self.version.get(root, 0)
        return al.value

    def write(self, al: _Alias, new):
        root = al.root
        if al is not root:
            # Replay the chain to get every intermediate, then scatter back outwards.
            parents = [self.read(root)]
            for op, args, kwargs, index in al.chain[:-1]:
                v = op(parents[-1], *args, **kwargs)
                parents.append(v[index] if index is not None else v)
            for (op, args, kwargs, index), parent in zip(reversed(al.chain), reversed(parents)):
                new = inverse_view(op, parent, new, args, kwargs, index)
        root.value = new
        self.version[root] = self.version.get(root, 0) + 1
        if al is not root:
            al.seen = -1        # recomputed from the new root on the next read

    def load(self, value):
        from ..graph import Node
        if isinstance(value, Node):
            return self.read(self.alias[value])
        if isinstance(value, (list, tuple)):
            return type(value)(self.load(v) for v in value)
        if isinstance(value, dict):
            return {k: self.load(v) for k, v in value.items()}
        return value

    def run(self, *inputs):
        roots = []
        for node, x in zip(self.graph.placeholders(), inputs):
            al = _Alias(x)
            self.alias[node] = al
            roots.append(al)
        result = None
        for node in self.graph.nodes:
            if node.kind == "call":
                self.call(node)
            elif node.kind == "getitem":
                src = self.alias[node.args[0]]
                if isinstance(src, tuple):
                    self.alias[node] = src[node.args[1]]
                else:
                    self.alias[node] = _Alias(self.read(src)[node.args[1]])
            elif node.kind == "constant":
                self.alias[node] = _Alias(node.target)
            elif node.kind == "output":
                result = self.load(node.args[0])
        written = [i for i, r in enumerate(roots) if self.version.get(r, 0)]
        return result, [self.read(roots[i]) for i in written], written

    def call(self, node):
        op, args, kwargs = node.target, node.args, node.kwargs
        if op.schema.is_mutable:
            self.alias[node] = self.mutate(node)
        elif is_view_op(op):
            base = self.alias[args[0]]
            rest, kw = self.load(args[1:]), self.load(kwargs)
            out = op(self.read(base), *rest, **kw)
            chain = base.chain if base is not base.root else ()
            if isinstance(out, (tuple, list)):
                self.alias[node] = tuple(
                    self._view(base, chain + ((op, rest, kw, i),), o) for i, o in enumerate(out))
            else:
                self.alias[node] = self._view(base, chain + ((op, rest, kw, None),), out)
        else:
            out = op(*self.load(args), **self.load(kwargs))
            self.alias[node] = tuple(_Alias(o) for o in out) \
                if isinstance(out, (tuple, list)) else _Alias(out)

    def _view(self, base, chain, value):
        al = _Alias(value, base.root, chain)
        al.seen = self.version.get(base.root, 0)
        return al

    def mutate(self, node):
        op = node.target
        bound = bind_names(op, node.args, node.kwargs)
        written = written_args(op)
        functional = functional_variant(op)
        if functional is None:
            raise NotImplementedError(f"functionalize: {op.qualname} writes its arguments and "
                                      f"has no functional variant")
        fargs = {k: self.load(v) for k, v in bound.items()
                 if k not in written or k == "self"}
        if isinstance(functional, _Special):
            self_arg = fargs.pop("self")
            fargs = {("from_" if k == "from" else k): v for k, v in fargs.items()}
            new = functional(self_arg, **fargs)
        else:
            params = functional.schema.arguments
            new = functional(*[fargs[a.name] for a in params if not a.kwarg_only],
                             **{a.name: fargs[a.name] for a in params if a.kwarg_only})
        target = "out" if "out" in written else written[0]
        dst = self.alias[bound[target]]
        old = self.read(dst)
        new = _like(new, old, op)
        self.write(dst, new)
        return dst


def _like(new, old, op):
    """The written value as the destination holds it: same dtype and shape."""
    aten = _aten()
    if isinstance(new, (tuple, list)):
        raise NotImplementedError(f"functionalize: {op.qualname} writes several outputs")
    if new.dtype is not old.dtype:
        new = aten._to_copy.default(new, dtype=old.dtype)
    if tuple(new.shape) != tuple(old.shape):
        new = aten.expand.default(new, list(old.shape))
    return new


def functionalize(graph: Graph, decompose_to: str = "aten") -> Graph:
    """A functional Graph computing what ``graph`` computes, with written inputs returned.

    ``result.mutated_inputs`` lists ``(input index, output index)`` pairs: the output at
    that index of the new graph's output tuple is the input's final value.  With
    ``decompose_to`` the same re-trace also decomposes (to "core" or "prims").
    """
    from ..tracer import trace

    holder = {}

    def program(*inputs):
        f = _Functionalizer(graph)
        result, finals, written = f.run(*inputs)
        holder["written"] = written
        if not written:
            return result
        return (result, *finals)

    out = trace(program, *graph.example_inputs(), decompose_to=decompose_to,
                input_names=[p.name for p in graph.placeholders()])
    written = holder["written"]
    out.mutated_inputs = [(i, k + 1) for k, i in enumerate(written)]
    out.returns_mutations = bool(written)
    return out
