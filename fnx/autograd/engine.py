"""The backward pass: ``backward`` (accumulate into leaves' ``.grad``) and ``grad`` (return
the gradients of chosen inputs).

Nodes run in dependency order: a node runs once every node that feeds it a gradient has
run, and among the ready ones the most recently created runs first (PyTorch's order).
Gradients arriving at the same input are summed. Formulas run with grad mode on only when
``create_graph=True``, so by default the backward records nothing and its results are
plain tensors.
"""
from __future__ import annotations

import heapq
import warnings

from ..core import anomaly_mode, tls
from ..core.grad_mode import _GradModeGuard, enable_grad, no_grad
from ..core.tensor import Tensor, grad_value, set_grad
from ..ops import aten
from .graph import AccumulateGrad, accumulate_into
from .history import edge_of

__all__ = ["backward", "grad"]


def _mode(create_graph: bool) -> _GradModeGuard:
    return enable_grad() if create_graph else no_grad()


def _check_roots(tensors, grad_tensors, what):
    roots = []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               f"a grad_fn")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t._dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                   f"outputs but got {t._dtype}")
            with no_grad():
                g = aten.ones_like.default(t)
        else:
            if tuple(g.shape) != tuple(t.shape):
                raise RuntimeError(f"{what}: Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{g.shape} and output[{i}] has a shape of {t.shape}.")
            if g._device != t._device:
                raise RuntimeError(f"{what}: grad_output[{i}] is on {g._device} but output[{i}] "
                                   f"is on {t._device}")
        roots.append((edge_of(t), g))
    return roots


def _as_tuple(x):
    if x is None:
        return ()
    return (x,) if isinstance(x, Tensor) else tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaf) into every leaf's ``.grad`` (or only ``inputs``').

    >>> import fnx
    >>> x = fnx.tensor([1., 2.], requires_grad=True)
    >>> fnx.autograd.backward((x * x).sum())
    >>> x.grad
    tensor([2., 4.])
    """
    tensors = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(grads)} grad_tensors for {len(tensors)} tensors")
    if retain_graph is None:
        retain_graph = create_graph
    roots = _check_roots(tensors, grads, "backward")
    only = None
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("backward: 'inputs' argument to backward() cannot be empty.")
        only = {}
        for t in inputs:
            if not t.requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            e = edge_of(t)
            only[(id(e[0]), e[1])] = ("accumulate", t)
    _run(roots, retain_graph, create_graph, only)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs`` (``.grad`` is left alone).

    >>> import fnx
    >>> x = fnx.tensor(3., requires_grad=True)
    >>> (g,) = fnx.autograd.grad(x ** 3, x, create_graph=True)
    >>> g.item(), fnx.autograd.grad(g, x)[0].item()
    (27.0, 18.0)
    """
    if not only_inputs:     # (PyTorch's deprecated argument: gradients reach inputs only)
        warnings.warn("grad(): only_inputs=False is deprecated and has no effect; the "
                      "gradients go to the inputs only (use fnx.autograd.backward to "
                      "accumulate into the graph's leaves)", FutureWarning, stacklevel=2)
    if is_grads_batched:
        raise NotImplementedError("grad(): is_grads_batched=True is not supported by fnx")
    return _grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                 materialize_grads, hooks=True)


def grad_without_hooks(outputs, inputs, grad_outputs, allow_unused=False):
    """``grad`` without running any hook: the backward a joint trace records
    (``fnx.graph.joint``), whose boundary tensors' hooks run once, in the real backward."""
    return _grad(outputs, inputs, grad_outputs, None, False, allow_unused, False, hooks=False)


def _grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
          materialize_grads, hooks):
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(grads)} for "
                           f"{len(outputs)} outputs")
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    roots = _check_roots(outputs, grads, "grad")
    only = {}
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        e = edge_of(t)
        only.setdefault((id(e[0]), e[1]), ("capture", []))[1].append(i)
    captured = _run(roots, retain_graph, create_graph, only, hooks)
    result = []
    for i, t in enumerate(inputs):
        g = captured.get(i)
        if g is None:
            if materialize_grads:
                g = aten.zeros_like.default(t)
            elif not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
        result.append(g)
    return tuple(result)


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b




def _run(roots, retain_graph, create_graph, only, hooks=True):
    """Run the graph from ``roots`` [(edge, grad)]. ``only`` maps (id(node), nr) to
    ("capture", [input indices]) or ("accumulate", tensor): when given, only those edges
    receive gradients and only the nodes leading to them run. ``hooks``: whether the
    nodes' and tensors' hooks run."""
    tls.state.backward_runs += 1      # fnx.compile asks whether its trace ran one
    # Dependencies: how many edges point at each node from nodes reachable from the roots.
    deps, nodes = {}, {}
    stack = [e[0] for e, _ in roots if e is not None]
    for n in stack:
        nodes[id(n)] = n
    seen = set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        for e in n.next_edges:
            if e is None:
                continue
            c = e[0]
            deps[id(c)] = deps.get(id(c), 0) + 1
            if id(c) not in nodes:
                nodes[id(c)] = c
                stack.append(c)
    needed = skip = None
    if only is not None:
        needed, through = _needed(nodes, only)
        # a node whose input grads are only captured (grad()'s inputs) does not run: the
        # graph behind a non-leaf input stays whole for a later backward, as PyTorch's
        skip = {nid for (nid, _), what in only.items() if what[0] == "capture"} - through
    buffers = {}
    for e, g in roots:
        if e is None:
            continue
        buf = buffers.setdefault(id(e[0]), [None] * e[0].num_outputs)
        buf[e[1]] = _add(buf[e[1]], g)
    ready = []
    for e, _ in roots:
        if e is not None and deps.get(id(e[0]), 0) == 0 and id(e[0]) in buffers:
            heapq.heappush(ready, (-e[0].seq, id(e[0])))
            deps[id(e[0])] = -1     # queued
    captured = {}
    with _mode(create_graph):
        while ready:
            _, nid = heapq.heappop(ready)
            node = nodes[nid]
            grads = buffers.pop(nid)
            if hooks:
                grads = _pre_hooks(node, grads)
            out = None
            if only is not None:
                for nr in range(len(grads)):
                    what = only.get((nid, nr))
                    if what is None:
                        continue
                    if what[0] == "capture":
                        for i in what[1]:
                            captured[i] = grads[nr]
                    elif grads[nr] is not None:
                        accumulate_into(what[1], grads[nr], create_graph, hooks=True)
                        grads[nr] = None
            if needed is None or nid in needed and nid not in skip:
                if not isinstance(node, AccumulateGrad) or only is None:
                    out = node.apply(grads, create_graph)
                    if anomaly_mode._state["enabled"] and anomaly_mode._state["check_nan"]:
                        _check_nan(node, out)
                    if node._hooks and hooks:
                        for h in node._hooks:
                            r = h(tuple(out), tuple(grads))
                            if r is not None:
                                out = list(r)
                if not retain_graph:
                    node.release()
            for e, g in zip(node.next_edges, out or ()):
                if e is None or g is None:
                    continue
                cid = id(e[0])
                if needed is not None and cid not in needed:
                    continue
                buf = buffers.get(cid)
                if buf is None:
                    buf = buffers[cid] = [None] * e[0].num_outputs
                buf[e[1]] = _add(buf[e[1]], g)
            _done(node, deps, buffers, ready)
    return captured


def _done(node, deps, buffers, ready) -> None:
    """``node`` ran (or no gradient reached it): the nodes its edges point at have one
    dependency less. One whose last dependency is gone runs if a gradient reached it;
    one that none reached is done too, so that the nodes below it that other paths do
    reach still run (``h = x * 2`` used by ``h.sum()`` and, through ``k = h * 3``, by a
    function whose backward returns None for ``k``: ``x`` still gets ``h.sum()``'s)."""
    stack = [node]
    while stack:
        for e in stack.pop().next_edges:
            if e is None:
                continue
            cid = id(e[0])
            d = deps[cid] - 1
            deps[cid] = d
            if d == 0:
                if cid in buffers:
                    heapq.heappush(ready, (-e[0].seq, cid))
                else:
                    stack.append(e[0])


def _check_nan(node, out):
    """Anomaly mode: a NaN in a node's gradients is an error naming the node (eager only:
    a trace has no values to look at)."""
    if tls.state.modes:
        return
    for i, g in enumerate(out or ()):
        if isinstance(g, Tensor) and (g.dtype.is_floating_point or g.dtype.is_complex) \
                and bool(aten.isnan(g).any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               f"output.")


def _needed(nodes, only):
    """Ids of the nodes on some path to an edge in ``only`` (the targets included), and of
    those with a path through one of their outputs (they must run)."""
    targets = {nid for nid, _ in only}
    memo = {}
    # Iterative post-order over the reachable graph.
    stack = [(n, False) for n in nodes.values()]
    while stack:
        n, done = stack.pop()
        if id(n) in memo:
            continue
        if done:
            memo[id(n)] = id(n) in targets or any(
                e is not None and memo.get(id(e[0]), False) for e in n.next_edges)
            continue
        stack.append((n, True))
        for e in n.next_edges:
            if e is not None and id(e[0]) not in memo:
                stack.append((e[0], False))
    reach = {nid for nid, v in memo.items() if v}
    through = {id(n) for n in nodes.values()
               if any(e is not None and id(e[0]) in reach for e in n.next_edges)}
    return reach, through


def _pre_hooks(node, grads):
    th = node._tensor_pre_hooks
    if th:
        for nr, hooks in th.items():
            for h in hooks:
                if grads[nr] is None:
                    continue
                r = h(grads[nr])
                if r is not None:
                    grads[nr] = r
    if node._retains:
        for nr, ref in node._retains.items():
            t = ref()
            if t is not None and grads[nr] is not None:
                old = grad_value(t)
                set_grad(t, grads[nr] if old is None else old + grads[nr])
    if node._pre_hooks:
        for h in node._pre_hooks:
            r = h(tuple(grads))
            if r is not None:
                grads = list(r)
    return grads
