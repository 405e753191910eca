"""Compiling a Graph with the JAX target's rules into one ``jax.jit`` function.

Outputs stay where the program ran: a node whose meta device is ``cuda`` comes back as a
cuda tensor holding the ``jax.Array`` (no host round trip); cpu outputs are copied into
writable NumPy arrays (JAX's buffers are read-only, fnx CPU tensors are mutable).
"""
from __future__ import annotations

import jax
import numpy as np

from ..backends.cpu import wrap
from ..core.device import canonical
from ..core.tensor import Tensor
from ..graph.graph import _collect, map_nodes

__all__ = ["compile_graph", "graph_program", "register_device_arrays"]

# device type -> fn(jax.Array, dtype, device) -> Tensor, for devices whose tensors hold
# jax.Arrays (the cuda backend registers it); other results are copied to the host.
_device_arrays: dict = {}


def register_device_arrays(device_type: str, wrap_array) -> None:
    """Results of a program on a ``device_type`` device stay there: ``wrap_array(array,
    dtype, device)`` makes the tensor holding the ``jax.Array``."""
    _device_arrays[device_type] = wrap_array


def graph_program(target, graph):
    """``(program, out_nodes)``: ``program(*arrays)`` evaluates ``graph`` with ``target``'s
    rules on arrays given in placeholder order and returns the arrays of ``out_nodes``.
    Call (and jit) it under ``jax.enable_x64(True)`` so 64-bit dtypes stay exact."""
    missing = sorted({str(n.target) for n in graph.calls() if not target.has_rule(n.target)})
    if missing:
        raise NotImplementedError(f"the {target.name!r} target has no lowering rule for "
                                  f"{', '.join(missing)}; decompose the graph to prims first")
    rules = target.rules
    places = graph.placeholders()
    out_nodes = []
    _collect(graph.output_node.args[0], out_nodes)
    steps = [n for n in graph.nodes if n.kind in ("call", "getitem", "constant")]

    def program(*arrays):
        env = dict(zip(places, arrays))
        for node in steps:
            if node.kind == "call":
                env[node] = rules[node.target](*_load(node.args, env),
                                               **_load(node.kwargs, env))
            elif node.kind == "getitem":
                env[node] = env[node.args[0]][node.args[1]]
            else:
                env[node] = _host(node.target)
        return [env[n] for n in out_nodes]

    return program, out_nodes


def compile_graph(target, graph):
    """A callable of fnx tensors that runs ``graph`` as one jitted program.

    >>> import fnx
    >>> from fnx.lower import get_target
    >>> g = fnx.decompose(lambda x: (x * 2).exp().sum(), fnx.ones(3), to="prims")
    >>> f = get_target("jax").compile(g)
    >>> round(f(fnx.zeros(3)).item(), 4)
    3.0
    """
    program, out_nodes = graph_program(target, graph)
    places = graph.placeholders()
    with jax.enable_x64(True):
        jitted = jax.jit(program)
    result_spec = graph.output_node.args[0]

    def run(*tensors):
        if len(tensors) != len(places):
            raise TypeError(f"compiled graph expects {len(places)} inputs, got {len(tensors)}")
        with jax.enable_x64(True):
            # floats (fnx.compile's scalar inputs) go in as weak-typed JAX scalars
            outs = jitted(*[t._data if isinstance(t, Tensor) else t for t in tensors])
        results = {n: _to_tensor(o, n.meta) for n, o in zip(out_nodes, outs)}
        return map_nodes(result_spec, results.__getitem__)

    def hlo_fusions(*tensors):
        """How XLA compiled this program: the kernels its entry computation launches
        (fusions and unfused ops), how many of those are fusions, and the HLO text."""
        with jax.enable_x64(True):
            text = jitted.lower(*[t._data for t in tensors]).compile().as_text()
        return {**_entry_kernels(text), "hlo": text}

    run.jitted = jitted
    run.program = program           # the un-jitted function of arrays (compiled autograd)
    run.out_nodes = out_nodes
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
    dev = meta.device
    wrap_array = _device_arrays.get(getattr(dev, "type", None))
    if wrap_array is not None:
        # The program ran on that device (its inputs live there): keep the jax.Array.
        return wrap_array(array, meta.dtype, canonical(dev))
    # a copy: JAX's buffer is read-only and fnx tensors are mutable
    return wrap(np.array(array, dtype=meta.dtype.numpy), meta.dtype)


def _host(t):
    """A captured tensor as a program constant: device arrays are used as they are."""
    data = t._data
    return data if isinstance(data, jax.Array) else np.asarray(data)


def _load(value, env):
    # Captured tensors in a region's arguments enter the program as arrays.
    value = map_nodes(value, env.__getitem__)
    if isinstance(value, (list, tuple)):
        return [_host(v) if isinstance(v, Tensor) else v for v in value]
    return value
