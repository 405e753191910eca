"""A joint forward-backward graph, and its split into a forward and a backward program.

A compiled module whose outputs the caller differentiates (``model = fnx.compile(model)``,
then an eager ``loss.backward()``) needs a backward program. It is fnx's own backward: the
trace of the forward goes on to call ``autograd.grad`` on its outputs with one cotangent
placeholder each (``record_backward``), so the backward graph holds fnx's derivative
formulas, decomposed like any op, and a compiled module's gradients are eager's by
construction (relu's at 0, ``detach``, ``no_grad`` blocks, cholesky's convention).

``split_joint`` then cuts the joint graph in two, as AOTAutograd's default partitioner does:
the nodes that depend on a cotangent are the backward; the forward nodes they read are
residuals, extra outputs of the forward program that the autograd node keeps until the
backward runs, except inputs (read as they are) and values cheaper to compute again in the
backward than to keep (``_recomputed``).

>>> import fnx
>>> from fnx.graph.tracer import trace
>>> x = fnx.tensor([-1.0, 0.0, 2.0], requires_grad=True)
>>> g = trace(lambda t: t.relu() * 3, x, joint=True)
>>> fwd, bwd = split_joint(g)
>>> [p.name for p in bwd.graph.placeholders()]      # the input, and the cotangent
['t', 'ct_0']
>>> bwd.residuals                   # t is read as it is: the forward returns no residual
(('in', 0),)
>>> bwd.graph.run(fnx.tensor([-1.0, 0.0, 2.0]), fnx.ones(3))    # relu's mask, recomputed
(tensor([0., 0., 3.]),)
"""
from __future__ import annotations

import contextlib
from typing import NamedTuple

from ..autograd.engine import grad_without_hooks
from ..autograd.function import BackwardCFunction
from ..autograd.history import edge_of
from ..core.autocast_mode import autocast, autocast_state
from ..core.meta_array import meta_tensor
from ..core.tensor import Tensor
from ..ops import prims as _prims
from .graph import Graph, NodeMeta, _collect, map_nodes, upstream

__all__ = ["record_backward", "split_joint", "Joint", "Backward", "EagerBackward"]


class Joint(NamedTuple):
    """Where a joint graph keeps its backward (``graph.joint``), by position, so that it
    survives passes that copy the graph: the output is ``(result, *extra, *grads)`` with
    ``n_extra`` extras, the cotangents are the placeholders at ``cts``, and ``grads[k]`` is
    the gradient of the (non-cotangent) placeholder ``diff_in[k]``; None where no gradient
    reaches it."""
    n_extra: int
    cts: tuple
    diff_out: tuple     # per cotangent: position of its output among the forward's outputs
    diff_in: tuple
    grads: tuple        # per diff_in: its gradient's output index past the extras, or None


class Backward(NamedTuple):
    """The backward of a split joint graph: ``graph`` (placeholders: residuals then
    cotangents; outputs: the gradients that reach an input), and ``program``, the forward
    returning ``(its outputs, extra residuals)``."""
    graph: Graph
    program: Graph
    residuals: tuple    # per residual: ("in", placeholder position) or ("out", output position)
    diff_out: tuple     # per cotangent: the output it is for (position among the outputs)
    diff_in: tuple      # the placeholders that get a gradient
    grads: tuple        # per diff_in: the backward's output position, or None
    n_outputs: int      # the forward's own outputs (``program``'s first ones)
    double: tuple       # (the joint graph returning the gradients, its cotangents'
    #                     placeholder positions): what a double backward runs eagerly


def _differentiable(t) -> bool:
    return isinstance(t, Tensor) and t.requires_grad and \
        (t.dtype.is_floating_point or t.dtype.is_complex)


class EagerBackward(RuntimeError):
    """The function's backward must run eagerly: a hook on a tensor made inside it
    (``register_hook``, ``retain_grad``) must see real gradients, and a custom
    ``autograd.Function`` whose backward cannot be traced has no other derivative that is
    its own (JAX's vjp of its forward would silently be another)."""


def _autograd_nodes(outs, wrt) -> list:
    """The autograd nodes between ``outs`` and ``wrt`` (the trace's own)."""
    stop = {id(edge_of(t)[0]) for t in wrt}
    stack = [t.grad_fn for t in outs if t.grad_fn is not None]
    seen, found = set(), []
    while stack:
        node = stack.pop()
        if id(node) in seen or id(node) in stop:
            continue
        seen.add(id(node))
        found.append(node)
        stack += [e[0] for e in node.next_edges if e is not None]
    return found


def record_backward(mode, graph, result, result_tensors, stored_tensors, extra) -> list:
    """Inside a trace: differentiate the traced tensors of the result and those stored on
    Python objects that require grad, w.r.t. the inputs that require grad, against one new
    cotangent placeholder each. ``result`` is the result's node structure and ``extra`` the
    forward's extra output nodes; sets ``graph.joint`` and returns the gradients' nodes (the
    outputs to append after ``extra``)."""
    flat = []
    _collect((result, *extra) if extra else result, flat)
    outs, nodes = [], []
    for t in list(result_tensors) + list(stored_tensors):
        node = mode.node_of(t) if _differentiable(t) else None
        if node is not None and node not in nodes:
            outs.append(t)
            nodes.append(node)
    diff_in = [i for i, t in enumerate(mode.inputs) if _differentiable(t)]
    n_places = len(graph.placeholders())
    cts = []
    for k, t in enumerate(outs):
        ct = meta_tensor(tuple(t.shape), t.dtype, t._device)
        mode.bind(ct, graph.placeholder(f"ct_{k}", NodeMeta(tuple(t.shape), t.dtype,
                                                             t._device)))
        cts.append(ct)
    wrt = [mode.inputs[i] for i in diff_in]
    history = _autograd_nodes(outs, wrt)
    for node in history:
        if node._hooks or node._pre_hooks or node._tensor_pre_hooks or node._retains:
            raise EagerBackward(f"a gradient hook on a value it computes ({node.name()})")
    try:
        with contextlib.ExitStack() as outside:
            # as an eager backward after the region: autocast off (the forward called inside
            # one decided its casts), hooks off (those of the inputs' own history run in the
            # real backward, after this one)
            for device, _ in autocast_state():
                outside.enter_context(autocast(device, enabled=False))
            grads = grad_without_hooks(outs, wrt, cts, allow_unused=True)
    except Exception as e:
        custom = [n.name() for n in history if isinstance(n, BackwardCFunction)]
        if custom:
            raise EagerBackward(f"a custom autograd.Function whose backward cannot be traced "
                                f"({custom[0]}: {type(e).__name__}: {e})") from e
        raise
    out_nodes, index = [], []
    for g in grads:
        index.append(None if g is None else len(out_nodes))
        if g is not None:
            out_nodes.append(mode.node_of(g))
    graph.joint = Joint(len(extra), tuple(range(n_places, n_places + len(cts))),
                        tuple(flat.index(n) for n in nodes), tuple(diff_in), tuple(index))
    return out_nodes


def _forward(graph, later, output):
    """``graph``'s nodes outside ``later`` that ``output(mapped)`` reads (``mapped``: old
    node -> new), attributes carried over."""
    new = graph.copy_attributes(Graph())
    new.joint = None
    mapped = {}
    for n in graph.nodes:
        if n not in later and n.kind != "output":
            mapped[n] = new._add(n.kind, n.name, n.target, map_nodes(n.args, mapped.get),
                                 map_nodes(n.kwargs, mapped.get), n.meta)
    new.output(output(mapped))
    live = upstream([new.output_node])     # (the forward's nodes only the backward read)
    new.nodes = [n for n in new.nodes if n in live or n.kind == "placeholder" or
                 n.kind == "call" and n.target.schema.is_mutable]
    return new


_LAYOUT = {_prims.transpose.default, _prims.reshape.default, _prims.broadcast_in_dim.default,
           _prims.squeeze.default}


def _recomputed(graph, ins, later, grad_nodes, written) -> set:
    """Forward nodes the backward computes again rather than the forward returning them:
    values that read no input (a zero filled to a shape), layout ops (a transposed weight
    or activation: the backward reads the value under it, which XLA transposes inside the
    product), and pointwise ops of at most one value the backward does not have yet (a
    ReLU's mask from its output; tanh's 1 - y^2 and exp(y) both from y). Each move returns
    fewer or as many arrays from the forward, and the backward fuses what it recomputes
    (a greedy form of AOTAutograd's min-cut partition). Inputs in ``written`` (overwritten
    by the program) are not had: their old value is a residual output. ``ins``: each
    node's inputs."""
    reads_input = set()
    for n in graph.nodes:
        if n.kind == "placeholder" or any(i in reads_input for i in ins[n]):
            reads_input.add(n)

    def free(r):                        # made from no input: the backward makes it too
        return r.kind == "constant" or r.kind == "call" and r not in reads_input and \
            "nondeterministic" not in r.target.tags

    def kept(r):                        # what the backward has without a residual output
        return r.kind == "placeholder" and r not in written or free(r) or r in again or \
            r in later

    again = set()
    wanted = {i for n in graph.nodes if n in later for i in ins[n]} | set(grad_nodes)
    changed = True
    while changed:      # (consumers first: a chain of cheap ops moves in one pass)
        changed = False
        for r in reversed(graph.nodes):
            if r not in wanted or kept(r) or r.kind != "call" or \
                    "nondeterministic" in r.target.tags:
                continue
            inputs = ins[r]
            new = [i for i in inputs if not kept(i) and i not in wanted]
            if r.target in _LAYOUT or "view" in r.target.tags or \
                    "pointwise" in r.target.tags and len(set(new)) <= 1:
                again.add(r)
                wanted |= set(inputs)
                changed = True
    # and the values made from no input that those read
    stack = [i for n in graph.nodes if n in later or n in again for i in ins[n]]
    stack += grad_nodes
    while stack:
        i = stack.pop()
        if i.kind == "call" and free(i) and i not in again and i not in later:
            again.add(i)
            stack += ins[i]
    return again


def split_joint(graph: Graph):
    """``(forward, backward)`` of a joint graph, or None where a residual is not one array
    (a node of several outputs). ``forward`` is ``graph`` without its backward: the outputs
    and attributes of a plain forward trace. ``backward`` is a ``Backward``: its ``program``
    is the forward again, returning the residuals after the forward's own outputs."""
    joint = graph.joint
    places = graph.placeholders()
    cts = [places[i] for i in joint.cts]
    out = graph.output_node.args[0]
    if joint.n_extra or any(g is not None for g in joint.grads):
        fo_out = (out[0], *out[1:1 + joint.n_extra]) if joint.n_extra else out[0]
        grad_nodes = list(out[1 + joint.n_extra:])
    else:
        fo_out, grad_nodes = out, []
    ins = {n: n.inputs() for n in graph.nodes}
    later = set(cts)                    # the nodes a cotangent reaches: the backward
    for n in graph.nodes:
        if n.kind in ("call", "getitem") and any(i in later for i in ins[n]):
            later.add(n)
    # an input the program overwrites is not what the backward may read later: its value
    # before the write is a residual output like any other
    written = {places[i] for i, _ in getattr(graph, "mutated_inputs", ())}
    again = _recomputed(graph, ins, later, grad_nodes, written)
    steps = [n for n in graph.nodes if (n in later or n in again) and n.kind != "placeholder"]
    residuals = [i for n in steps for i in ins[n]] + grad_nodes
    residuals = list(dict.fromkeys(r for r in residuals if r not in later and
                                   r not in again and r.kind != "constant"))
    if any(not isinstance(r.meta, NodeMeta) for r in residuals):
        return None
    flat = []
    _collect(fo_out, flat)
    fwd_places = [p for p in places if p not in later]
    extra = [r for r in residuals if (r.kind != "placeholder" or r in written) and
             r not in flat]
    sources = tuple(("in", fwd_places.index(r)) if r.kind == "placeholder" and
                    r not in written else
                    ("out", flat.index(r)) if r in flat else
                    ("out", len(flat) + extra.index(r)) for r in residuals)
    forward = _forward(graph, later, lambda m: map_nodes(fo_out, m.__getitem__))
    program = _forward(graph, later, lambda m: (map_nodes(fo_out, m.__getitem__),
                                                tuple(m[r] for r in extra)))

    backward = Graph()
    env = {r: backward.placeholder(r.name, r.meta) for r in residuals}
    for c in cts:
        env[c] = backward.placeholder(c.name, c.meta)

    def load(n):
        if n not in env:                # a constant the backward reads: its own copy
            env[n] = backward.constant(n.target, n.meta)
        return env[n]

    for n in steps:
        env[n] = backward._add(n.kind, n.name, n.target, map_nodes(n.args, load),
                               map_nodes(n.kwargs, load), n.meta)
    backward.output(tuple(load(g) for g in grad_nodes))
    double = _forward(graph, set(), lambda m: tuple(m[g] for g in grad_nodes))
    return forward, Backward(backward, program, sources, joint.diff_out, joint.diff_in,
                             joint.grads, len(flat), (double, joint.cts))
