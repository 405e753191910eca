"""Compiling a Graph with the JAX target's rules into one ``jax.jit`` program.

Inputs and outputs are not copied: a tensor whose storage is a ``jax.Array`` (a cuda
tensor, a resident CPU tensor) is passed as it is (``jax_storage``), and every output
stays where the program ran, as a tensor holding the ``jax.Array``: a cuda tensor, or a
*resident* CPU tensor (``fnx.core.tensor``: NumPy kernels read it through a zero-copy
view; a write gives it a private copy first).

The program is jitted under ``jax.enable_x64`` (int64/float64 stay exact) and, on its
first call, compiled ahead of time for its inputs (``Program.call_arrays``); the compiled
executable does not read the x64 flag, so a call enters ``enable_x64`` only when an input
of a 64-bit dtype is not yet a ``jax.Array`` (JAX would narrow a NumPy int64 to int32).
"""
from __future__ import annotations

import re

import jax
import numpy as np

from ..backends.cpu import wrap_resident
from ..core.device import canonical
from ..core.errors import out_of_memory
from ..core.tensor import Tensor, resident
from ..graph.graph import _collect, map_nodes
from ..ir import prims as P
from ..ir.prims.assertions import check_failure
from .jax_storage import ARRAY_TYPE, feed

__all__ = ["compile_graph", "graph_program", "register_device_arrays", "Program",
           "tensor_maker", "raise_failed"]

# NumPy dtypes JAX narrows to 32 bits outside enable_x64
_WIDE = {np.dtype(t) for t in (np.int64, np.uint64, np.float64, np.complex128)}

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
    Call (and jit) it under ``jax.enable_x64(True)`` so 64-bit dtypes stay exact.

    A graph with value checks (``prims.check_in_range``, ``prims.check_linalg_info``)
    returns one more array: their status, ``int64[checks, 3]`` (failed, first bad value,
    its flat index) for ``raise_failed`` with ``program.checks``."""
    missing = sorted({str(n.target) for n in graph.calls() if not target.has_rule(n.target)})
    if missing:
        raise NotImplementedError(f"the {target.name!r} target has no lowering rule for "
                                  f"{', '.join(missing)}; decompose the graph to prims first")
    rules = target.rules
    places = graph.placeholders()
    out_nodes = []
    _collect(graph.output_node.args[0], out_nodes)
    steps = [n for n in graph.nodes if n.kind in ("call", "getitem", "constant")]
    checks = [n for n in steps if n.kind == "call" and n.target in _STATUS]

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
        outs = [env[n] for n in out_nodes]
        if checks:
            outs.append(jax.numpy.stack([_STATUS[n.target](n, env) for n in checks]))
        return outs

    program.checks = [_check_entry(n) for n in checks]
    return program, out_nodes


def _check_entry(node):
    """What ``raise_failed`` needs to word a failed check (plain strings: an exported
    program stores them)."""
    if node.target is P.check_in_range:
        return tuple(node.args[3:5])
    return ("LinAlgError", node.args[2], node.args[3], int(len(node.args[1].meta.shape) > 0))


def range_status(x, low, high):
    """``int64[3]``: whether any element of ``x`` is outside ``[low, high)``, the first
    that is (row-major) and its index, computed inside the program."""
    return _first_status(x, lambda flat: (flat < low) | (flat >= high))


def info_status(info):
    """``int64[3]``: whether any matrix's LAPACK ``info`` is not 0, the first such info and
    its batch index, computed inside the program."""
    return _first_status(info, lambda flat: flat != 0)


def _first_status(x, is_bad):
    flat = x.reshape(-1).astype(np.int64)
    if flat.size == 0:
        return jax.numpy.zeros(3, np.int64)
    bad = is_bad(flat)
    i = jax.numpy.argmax(bad)
    return jax.numpy.stack([bad.any().astype(np.int64), flat[i], i.astype(np.int64)])


# check prim -> fn(node, env): its status row
_STATUS = {
    P.check_in_range: lambda n, env: range_status(env[n], *n.args[1:3]),
    P.check_linalg_info: lambda n, env: info_status(env[n.args[1]]),
}


def raise_failed(checks, status) -> None:
    """Raise the error of the first failed check (``status`` from ``graph_program``; reading
    it waits for the program: one host round-trip per call, not per op)."""
    status = np.asarray(status)
    for check, row in zip(checks, status):
        if row[0]:
            raise check_failure(check, int(row[1]), int(row[2]) if len(row) > 2 else 0)


def compile_graph(target, graph):
    """A callable of fnx tensors that runs ``graph`` as one jitted program.

    >>> import fnx
    >>> from fnx.lower import get_target
    >>> g = fnx.decompose(lambda x: (x * 2).exp().sum(), fnx.ones(3), to="prims")
    >>> f = get_target("jax").compile(g)
    >>> round(f(fnx.zeros(3)).item(), 4)
    3.0
    """
    return Program(target, graph)


class Program:
    """``graph`` as one jitted program: call it with tensors (``program(*tensors)``, fnx
    tensors back), or with arrays in placeholder order (``call_arrays``, arrays back in
    ``out_nodes`` order; how ``fnx.compile`` runs it).

    Every output has exactly its node's dtype (and is not weakly typed), so a result fed
    back in matches the compiled signature.
    """

    def __init__(self, target, graph):
        program, out_nodes = graph_program(target, graph)
        dtypes = [n.meta.dtype.numpy for n in out_nodes]

        def exact(*arrays):
            return [_exact(o, dt) for o, dt in zip(program(*arrays), dtypes)]

        def exact_checked(*arrays):     # the outputs, then the checks' status
            outs = program(*arrays)
            return [_exact(o, dt) for o, dt in zip(outs, dtypes)] + [outs[-1]]

        # Value checks: a call that donates no buffer returns their status beside its
        # outputs, raised before the caller writes anything back. A call that donates runs
        # them first, as a program of their own (XLA keeps only what they read), so a
        # donated input is never lost to a call that raises.
        self.checks = program.checks
        self.check_values = True        # fnx.compile(options={"value_checks": False})
        self.checker = jax.jit(lambda *a: program(*a)[-1]) if self.checks else None
        self._checker_call = None
        self._exact_checked = exact_checked

        self.program = exact            # the un-jitted function of arrays (compiled autograd)
        self.out_nodes = out_nodes
        self.places = graph.placeholders()
        self.result_spec = graph.output_node.args[0]
        self._exact = exact
        with jax.enable_x64(True):
            self.jitted = jax.jit(exact)
        self._compiled = {}             # donated positions -> compiled executable's call
        self._wide = [i for i, p in enumerate(self.places) if p.meta.dtype.numpy in _WIDE]
        self._wide_set = frozenset(self._wide)
        self.makers = [tensor_maker(n.meta) for n in out_nodes]

    def call_arrays(self, arrays, donate=(), sinks=0):
        """Run on ``arrays`` (placeholder order); the buffers at positions ``donate`` may be
        reused for the outputs (the caller checked nothing else references them). The last
        ``sinks`` arrays are extra, never read: buffers given up for outputs of their shape
        to be written into (a ``.grad`` the step replaces), so no fresh memory is touched."""
        if self.checker is not None and self.check_values:
            if not donate and not sinks:
                return self._call_checked(arrays)
            if any(type(arrays[i]) is not ARRAY_TYPE for i in self._wide):
                # 64-bit host inputs enter as device arrays once, for both programs (each
                # call under enable_x64 would cost more than the checks)
                with jax.enable_x64(True):
                    arrays = [jax.device_put(a) if i in self._wide_set and
                              type(a) is not ARRAY_TYPE else a for i, a in enumerate(arrays)]
            self.check(arrays[:len(arrays) - sinks])
        key = (donate, sinks) if sinks else donate
        call = self._compiled.get(key)
        try:
            if call is None:
                with jax.enable_x64(True):
                    compiled = self._compile(arrays, donate, sinks)
                    outs = compiled(*arrays)
                # the executable's own call (set by its first call): one Python frame less
                self._compiled[key] = getattr(compiled, "_call", None) or compiled
                return outs
            for i in self._wide:
                if type(arrays[i]) is not ARRAY_TYPE:
                    with jax.enable_x64(True):
                        return call(*arrays)
            return call(*arrays)
        except RuntimeError as e:   # XLA's RESOURCE_EXHAUSTED: fnx.OutOfMemoryError
            oom = out_of_memory(e, "fnx.compile: the compiled program")
            if oom is None:
                raise
            raise oom from None

    def _call_checked(self, arrays):
        """The outputs for ``arrays`` from one program that also computes the value checks;
        raises the first that failed (nothing was donated or written)."""
        call = self._compiled.get("checked")
        if call is None:
            with jax.enable_x64(True):
                compiled = jax.jit(self._exact_checked).lower(*arrays).compile()
                outs = compiled(*arrays)
            self._compiled["checked"] = getattr(compiled, "_call", None) or compiled
        elif any(type(arrays[i]) is not ARRAY_TYPE for i in self._wide):
            with jax.enable_x64(True):
                outs = call(*arrays)
        else:
            outs = call(*arrays)
        raise_failed(self.checks, outs[-1])
        return outs[:-1]

    def check(self, arrays) -> None:
        """Run the value checks on ``arrays`` (placeholder order) and raise the first that
        fails; nothing when there are none or they are off. The check program is compiled
        ahead of time on first use and called like the program itself (``call_arrays``)."""
        if self.checker is None or not self.check_values:
            return
        call = self._checker_call
        if call is None:
            with jax.enable_x64(True):
                compiled = self.checker.lower(*arrays).compile()
                status = compiled(*arrays)
            # the executable's own call (set by its first call): one Python frame less
            self._checker_call = getattr(compiled, "_call", None) or compiled
        elif any(type(arrays[i]) is not ARRAY_TYPE for i in self._wide):
            with jax.enable_x64(True):
                status = call(*arrays)
        else:
            status = call(*arrays)
        raise_failed(self.checks, status)

    def _compile(self, arrays, donate, sinks=0):
        """The executable for ``arrays``, donating what it can of ``donate``: XLA copies a
        donated input whose buffer it cannot overwrite in place (read after its new value
        is written), which costs more than a fresh output buffer; those are not donated."""
        if not donate and not sinks:
            return self.jitted.lower(*arrays).compile()
        fn, n = self._exact, len(arrays) - sinks
        if sinks:
            def fn(*a):
                return self._exact(*a[:n])
        given = donate + tuple(range(n, len(arrays)))
        compiled = jax.jit(fn, donate_argnums=given, keep_unused=True).lower(*arrays).compile()
        copied = _copied_parameters(compiled.as_text())
        keep = tuple(j for j in donate if j not in copied)
        if keep == donate:
            return compiled
        return self._compile(arrays, keep, sinks)

    def __call__(self, *tensors):
        if len(tensors) != len(self.places):
            raise TypeError(f"compiled graph expects {len(self.places)} inputs, got "
                            f"{len(tensors)}")
        outs = self.call_arrays([feed(t) for t in tensors])
        results = {n: make(o) for n, make, o in zip(self.out_nodes, self.makers, outs)}
        return map_nodes(self.result_spec, results.__getitem__)

    def hlo_fusions(self, *tensors):
        """How XLA compiled this program: the kernels its entry computation launches
        (fusions and unfused ops), how many of those are fusions, and the HLO text."""
        with jax.enable_x64(True):
            text = self.jitted.lower(*[feed(t) for t in tensors]).compile().as_text()
        return {**_entry_kernels(text), "hlo": text}


_PARAMETER = re.compile(r"%(\S+) = \S+ parameter\((\d+)\)")
_COPY = re.compile(r"= \S+ copy\(%([^),]+)\)")


def _copied_parameters(hlo: str) -> set:
    """The parameter numbers the ENTRY computation of ``hlo`` copies as they are."""
    entry = hlo[hlo.find("\nENTRY"):]
    params = {name: int(n) for name, n in _PARAMETER.findall(entry)}
    return {params[name] for name in _COPY.findall(entry) if name in params}


def _exact(out, dtype):
    aval = getattr(out, "aval", None)
    if out.dtype != dtype or (aval is not None and aval.weak_type):
        return jax.lax.convert_element_type(out, dtype)
    return out


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


def tensor_maker(meta):
    """``make(array) -> Tensor`` for a program output of node meta ``meta``: the tensor
    holds the ``jax.Array`` where the program ran (no copy)."""
    dev = meta.device
    dtype = meta.dtype
    wrap_array = _device_arrays.get(getattr(dev, "type", None))
    if wrap_array is not None:
        dev = canonical(dev)
        return lambda array: wrap_array(array, dtype, dev)
    return lambda array: wrap_resident(array, dtype)


def _to_tensor(array, meta):
    return tensor_maker(meta)(array)


def _host(t):
    """A captured tensor as a program constant: device arrays are used as they are."""
    arr = resident(t)
    if arr is not None:
        return arr
    data = t._data
    return data if isinstance(data, jax.Array) else np.asarray(data)


def _load(value, env):
    # Captured tensors in a region's arguments enter the program as arrays.
    value = map_nodes(value, env.__getitem__)
    if isinstance(value, (list, tuple)):
        return [_host(v) if isinstance(v, Tensor) else v for v in value]
    return value
