"""Compiling a Graph with the JAX target's rules into one ``jax.jit`` function."""
from __future__ import annotations

import jax
import numpy as np

from .._tensor import Tensor
from ..ir.graph import _collect, map_nodes

__all__ = ["compile_graph"]


def compile_graph(target, graph):
    """A callable of fnx tensors that runs ``graph`` as one jitted program.

    >>> import fnx
    >>> from fnx.lower import get_target
    >>> g = fnx.decompose(lambda x: (x * 2).exp().sum(), fnx.ones(3), to="prims")
    >>> f = get_target("jax").compile(g)
    >>> round(f(fnx.zeros(3)).item(), 4)
    3.0
    """
    missing = sorted({str(n.target) for n in graph.calls() if not target.has_rule(n.target)})
    if missing:
        raise NotImplementedError(f"the {target.name!r} target has no lowering rule for "
                                  f"{', '.join(missing)}; decompose the graph to prims first")
    rules = target.rules
    places = graph.placeholders()
    out_nodes = []
    _collect(graph.output_node.args[0], out_nodes)

    def program(*arrays):
        env = dict(zip(places, arrays))
        for node in graph.nodes:
            if node.kind == "call":
                env[node] = rules[node.target](*_load(node.args, env),
                                               **_load(node.kwargs, env))
            elif node.kind == "getitem":
                env[node] = env[node.args[0]][node.args[1]]
            elif node.kind == "constant":
                env[node] = np.asarray(node.target._data)
        return [env[n] for n in out_nodes]

    with jax.enable_x64(True):
        jitted = jax.jit(program)
    result_spec = graph.output_node.args[0]

    def run(*tensors):
        if len(tensors) != len(places):
            raise TypeError(f"compiled graph expects {len(places)} inputs, got {len(tensors)}")
        with jax.enable_x64(True):
            outs = jitted(*[t._data for t in tensors])
        results = {n: _to_tensor(o, n.meta) for n, o in zip(out_nodes, outs)}
        return map_nodes(result_spec, results.__getitem__)

    def hlo_fusions(*tensors):
        """How XLA compiled this program: the kernels its entry computation launches
        (fusions and unfused ops), how many of those are fusions, and the HLO text."""
        with jax.enable_x64(True):
            text = jitted.lower(*[t._data for t in tensors]).compile().as_text()
        return {**_entry_kernels(text), "hlo": text}

    run.jitted = jitted
    run.hlo_fusions = hlo_fusions
    return run


_NOT_KERNELS = ("parameter", "constant", "tuple", "get-tuple-element", "bitcast")


def _entry_kernels(hlo: str) -> dict:
    """Count the instructions of the ENTRY computation that do work."""
    lines, inside = [], False
    for line in hlo.splitlines():
        if line.startswith("ENTRY"):
            inside = True
        elif inside and line.startswith("}"):
            break
        elif inside and " = " in line:
            lines.append(line)
    kernels = [ln for ln in lines
               if not any(f" {op}(" in ln.split(" = ", 1)[1][:80] for op in _NOT_KERNELS)]
    return {"kernels": len(kernels), "fusions": sum(" fusion(" in ln for ln in kernels)}


def _to_tensor(array, meta):
    from ..backends.cpu import wrap
    # a copy: JAX's buffer is read-only and fnx tensors are mutable
    return wrap(np.array(array, dtype=meta.dtype.numpy), meta.dtype)


def _load(value, env):
    # Captured tensors in a region's arguments enter the program as arrays.
    value = map_nodes(value, env.__getitem__)
    if isinstance(value, (list, tuple)):
        return [np.asarray(v._data) if isinstance(v, Tensor) else v for v in value]
    return value
