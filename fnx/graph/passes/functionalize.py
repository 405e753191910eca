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

from ...core.tensor import Tensor
from ...backends.meta import MetaArray
from ..decompose import in_target
from ..graph import Graph
from ..tracer import TracingMode

__all__ = ["functionalize", "FunctionalTracingMode", "functional_variant", "is_view_op",
           "written_args", "inverse_view", "bind_names"]


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
        return aten.randint_like.low_dtype(self, from_, _full_range(self) if to is None else to)

    def random_to(self, to, *, generator=None):
        return aten.randint_like.low_dtype(self, 0, to)

    def random_full(self, *, generator=None):
        return aten.randint_like.low_dtype(self, 0, _full_range(self))

    return {"zero_": lambda self: aten.zeros_like.default(self),
            "detach_": lambda self: aten.detach.default(self),
            "uniform_": uniform, "normal_": normal, "exponential_": exponential,
            "random_.from": random_from, "random_.to": random_to, "random_": random_full}


def _full_range(t) -> int:
    """The exclusive upper bound of ``random_()``: 2**mantissa + 1 for floats, the dtype's
    maximum for integers (PyTorch samples [0, 2**mantissa] and [0, max])."""
    import numpy as np
    d = t.dtype
    if d.is_floating_point:
        import ml_dtypes     # np.finfo does not know bfloat16
        return 2 ** (ml_dtypes.finfo(d.numpy).nmant + 1) + 1
    if d.name == "bool":
        return 2
    return int(np.iinfo(d.numpy).max)


def functional_variant(op):
    """The op computing what in-place/out= ``op`` writes: ``add_.Tensor -> add.Tensor``,
    ``add.out -> add.Tensor`` (the overload whose arguments match, minus ``out``)."""
    if op in _FUNCTIONAL:
        return _FUNCTIONAL[op]
    from ...dispatch.dispatcher import ops
    written = set(written_args(op))
    if not written <= {"self", "out"}:
        # writes other arguments (batch norm's running stats): no functional twin by
        # name; such an op is functionalized through its decomposition
        _FUNCTIONAL[op] = None
        return None
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


class FunctionalTracingMode(TracingMode):
    """A tracer that records a functional program: writes rebind, views are tracked.

    Every tensor object of the trace maps to the node of its current value.  A view
    remembers its root and the chain of view ops from it; a write through a view
    rebuilds the root with ``*_scatter`` ops and bumps the root's version, and a view
    whose root changed since it was computed is recomputed from the root when read.
    Writes inside decompositions are caught too, since every nested call comes here.
    """

    def __init__(self, graph, to="aten", lift_captured=False):
        super().__init__(graph, to, lift_captured)
        self._alias = {}        # id(view) -> (root tensor, chain of (op, args, kwargs, index))
        self._version = {}      # id(root) -> number of writes
        self._seen = {}         # id(view) -> root version its node was computed at
        self.written = []       # roots written, in first-write order

    # -- reading: a stale view is recomputed from its root
    def node_of(self, value):
        if isinstance(value, Tensor):
            alias = self._alias.get(id(value))
            if alias is not None:
                root, chain = alias
                if self._seen[id(value)] != self._version.get(id(root), 0):
                    fresh = self._replay(root, chain)
                    self.bind(value, super().node_of(fresh))
                    self._seen[id(value)] = self._version.get(id(root), 0)
        return super().node_of(value)

    def _replay(self, root, chain):
        v = root
        for op, args, kwargs, index in chain:
            v = op(v, *args, **kwargs)
            v = v[index] if index is not None else v
        return v

    # -- dispatching
    def handle(self, op, ks, args, kwargs):
        if op.schema.is_mutable:
            functional = functional_variant(op)
            if op.decomposition is not None and (functional is None or
                                                 not in_target(op, self.to)):
                return op.decomposition(*args, **kwargs)
            return self._mutate(op, functional, args, kwargs)
        out = super().handle(op, ks, args, kwargs)
        if is_view_op(op) and args and isinstance(args[0], Tensor):
            base = args[0]
            root, chain = self._alias.get(id(base), (base, ()))
            rest = tuple(args[1:])
            outs = out if isinstance(out, (tuple, list)) else (out,)
            for i, o in enumerate(outs):
                index = i if isinstance(out, (tuple, list)) else None
                self._alias[id(o)] = (root, chain + ((op, rest, dict(kwargs), index),))
                self._seen[id(o)] = self._version.get(id(root), 0)
        return out

    def _mutate(self, op, functional, args, kwargs):
        if functional is None:
            raise NotImplementedError(f"functionalize: {op.qualname} writes its arguments and "
                                      f"has neither a functional variant nor a decomposition")
        bound = bind_names(op, args, kwargs)
        written = written_args(op)
        fargs = {k: v for k, v in bound.items() if k not in written or k == "self"}
        if isinstance(functional, _Special):
            self_arg = fargs.pop("self")
            new = functional(self_arg, **{("from_" if k == "from" else k): v
                                          for k, v in fargs.items()})
        else:
            params = functional.schema.arguments
            new = functional(*[fargs[a.name] for a in params if not a.kwarg_only],
                             **{a.name: fargs[a.name] for a in params if a.kwarg_only})
        if "out" in written:
            # out= resizes `out` to the result (PyTorch), then casts into its dtype.
            dst = bound["out"]
            if tuple(new.shape) != tuple(dst.shape) and isinstance(dst._data, MetaArray):
                dst._data = MetaArray(tuple(new.shape), dst._data.dtype)
        else:
            dst = bound[written[0]]
        self._write(dst, _like(new, dst, op))
        return dst

    def _write(self, dst, new):
        root, chain = self._alias.get(id(dst), (dst, ()))
        if chain:
            # Every intermediate view from the root, then scatter back outwards.
            parents = [root]
            for step in chain[:-1]:
                parents.append(self._replay(parents[-1], (step,)))
            value = new
            for (op, args, kwargs, index), parent in zip(reversed(chain), reversed(parents)):
                value = inverse_view(op, parent, value, args, kwargs, index)
            self.bind(root, super().node_of(value))
            self.bind(dst, super().node_of(new))
        else:
            self.bind(root, super().node_of(new))
        self._version[id(root)] = self._version.get(id(root), 0) + 1
        if chain:
            self._seen[id(dst)] = self._version[id(root)]
        if not any(r is root for r in self.written):
            self.written.append(root)


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
    return trace(graph.run, *graph.example_inputs(), decompose_to=decompose_to,
                 input_names=[p.name for p in graph.placeholders()], functional=True)
