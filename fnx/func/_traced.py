"""A Python function of fnx tensors as a pure JAX function of arrays.

``Traced(func, args, kwargs, name)`` traces ``func`` on meta tensors shaped like the
tensors in ``args``/``kwargs`` (pytrees: tuples, lists, dicts; other leaves are constants
of the trace), functionally and decomposed to prims, and lowers the graph with the JAX
target's rules (``graph_program``). ``traced.fn(*arrays)`` then computes the output leaves
from the arrays of the tensor leaves followed by the *extra* inputs: tensors ``func`` read
from outside (parameters, closure tensors, an outer trace's tensors), random keys, floats
read through ``read_traced``. The transforms wrap ``traced.fn`` in ``jax.vmap``,
``jax.grad``, ...; nothing re-implements a batching or differentiation rule.

Value checks of the graph (``prims.check_in_range``: an index out of range) come out as
*witnesses*, one int64 scalar per check: the first bad value if the check failed, else a
value in range; ``run_checks`` checks them, so the error is raised eagerly or recorded by
an outer trace.
"""
from __future__ import annotations

import functools
import types

import jax
import jax.numpy as jnp
import numpy as np

from ..backends.cpu import wrap
from ..core import dtype as D
from ..core.autocast_mode import autocast_state
from ..core.meta_array import MetaArray, meta_tensor
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor
from ..graph import guards
from ..graph.input_sources import source_value
from ..graph.tracer import DataDependentError, FunctionalTracingMode, is_compiling, trace
from ..ir import prims as P
from ..lower.jax import JAX_TARGET
from ..lower.jax_compile import graph_program
from ..ops import aten
from ._program_op import STOP_GRADIENT, JaxFunction, call
from ..core.pytree import flatten, unflatten

__all__ = ["Traced", "aval", "run", "run_checks", "fn_name", "state_key", "describe"]


def aval(t) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(tuple(t.shape), t.dtype.numpy)


def fn_name(func) -> str:
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or \
        type(func).__name__


class _TransformTracing(FunctionalTracingMode):
    """The functional tracer, recording ``detach()`` as a stop-gradient: a detached value
    is a constant for the transform's differentiation, as in ``torch.func``."""

    def handle(self, op, ks, args, kwargs):
        if op is aten.detach.default:
            return super().handle(STOP_GRADIENT, ks, args, kwargs)
        return super().handle(op, ks, args, kwargs)


class Traced:
    """``func`` traced for one call signature (see the module docstring).

    The tensor leaves of ``args``/``kwargs`` give the traced shapes, dtypes and devices
    (vmap passes meta tensors of the per-example shapes); their other leaves are constants
    of the trace. ``check_output(out)`` may refuse the function's output (grad's scalar
    check). Attributes: ``n_args`` tensor leaves (the first inputs of ``fn``),
    ``extras`` (the sources of the extra inputs), ``out_tree`` (the output's structure, of
    ``n_user`` leaves), ``out_metas`` (each output leaf's (shape, dtype), then those of the
    new values of the inputs at ``written``), ``checks``.
    """

    def __init__(self, func, args, kwargs, name, check_output=None):
        leaves, self.in_tree = flatten((tuple(args), dict(kwargs)))
        self.leaves = leaves
        self.tensor_at = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
        self.n_args = len(self.tensor_at)
        self.name = name
        holder = {}

        def flat(*tensors):
            values = list(leaves)
            for i, t in zip(self.tensor_at, tensors):
                values[i] = t
            a, kw = unflatten(self.in_tree, values)
            out = func(*a, **kw)
            if check_output is not None:
                check_output(out)
            outs, holder["tree"] = flatten(out)
            holder["n"] = len(outs)
            for o in outs:
                if not isinstance(o, Tensor):
                    raise ValueError(f"{name}: `{fn_name(func)}` must only return Tensors "
                                     f"(in tuples, lists or dicts), got {type(o).__name__}")
            return tuple(outs)

        examples = [meta_tensor(tuple(leaves[i].shape), leaves[i].dtype, leaves[i].device)
                    for i in self.tensor_at]
        try:
            with no_grad():
                graph = trace(flat, *examples, input_names=[f"x{i}" for i in
                                                             range(self.n_args)],
                              decompose_to="prims", lift_captured=True, functional=True,
                              mode_class=_TransformTracing)
        except DataDependentError as e:
            raise RuntimeError(
                f"{name}: `{fn_name(func)}` depends on the values of tensors in Python "
                f"(Tensor.item(), bool(tensor), data-dependent control flow such as `if "
                f"x.sum() > 0:`), which {name} does not support: it traces the function "
                f"once for all values. Rewrite it with tensor ops (fnx.where). ({e})") from None
        # Inputs the function writes in place (a buffer's running stats, ``x.add_(1)``):
        # their new values are outputs after the function's own, written back by
        # ``write_back`` after each call.
        self.written = [i for i, _ in graph.mutated_inputs]
        self.out_tree = holder["tree"]
        self.n_user = holder["n"]       # the function's outputs (then the written inputs')
        # keep the constants only: a cached trace must not hold the first call's tensors
        self.leaves = [None if isinstance(x, Tensor) else x for x in leaves]
        self.extras = [src for src in graph.input_sources if src[0] != "arg"]
        self.has_random = any(kind == "rng" for kind, _ in self.extras)
        # captured tensors of an enclosing trace: this trace is valid for that one only
        self.captures_trace = any(kind == "lifted" and isinstance(t._data, MetaArray)
                                  for kind, t in self.extras)
        program, out_nodes = graph_program(JAX_TARGET, graph)
        self.out_metas = [(tuple(n.meta.shape), n.meta.dtype) for n in out_nodes]
        checks = [n for n in graph.calls() if n.target is P.check_in_range]
        self.checks = [tuple(n.args[1:5]) for n in checks]      # low, high, error, message
        lows = [c[0] for c in self.checks]
        dtypes = [m[1].numpy for m in self.out_metas]

        def fn(*arrays):
            """(output leaves, witnesses) of the program on the arrays."""
            outs = program(*arrays)
            status = outs.pop() if lows else None
            outs = [o if o.dtype == dt else o.astype(dt) for o, dt in zip(outs, dtypes)]
            wit = [jnp.where(status[i, 0] != 0, status[i, 1], low).astype(jnp.int64)
                   for i, low in enumerate(lows)]
            return outs, wit
        self.fn = fn

    def extra_inputs(self) -> list:
        """The tensors of the extra inputs for one call (random keys drawn fresh)."""
        # (a float read through read_traced enters as a 0-dim float64 tensor)
        return [wrap(np.asarray(src(), np.float64), D.float64) if kind == "scalar" else
                source_value((kind, src)) for kind, src in self.extras]

    def write_back(self, inputs, values) -> None:
        """Copy the new values of the inputs the function wrote into them."""
        with no_grad():
            for i, v in zip(self.written, values):
                inputs[i].copy_(v)

    def arg_tensors(self, args, kwargs) -> list:
        leaves, _ = flatten((tuple(args), dict(kwargs)))
        return [leaves[i] for i in self.tensor_at]


def run_checks(traced_checks, witnesses) -> None:
    """Check each witness (eagerly: raises now; under a trace: records the check)."""
    for w, (low, high, error, message) in zip(witnesses, traced_checks):
        P.check_in_range(w, low, high, error, message)


def run(jf: JaxFunction, inputs, n_out: int, checks) -> list:
    """Call ``jf`` (outputs: ``n_out`` results, then one witness per check) on ``inputs``;
    the results, after the checks ran. Under a trace the results are passed through one
    more call that also reads the checks, so they are not dead code."""
    outs = call(jf, inputs)
    results, wit = outs[:n_out], outs[n_out:]
    if not wit:
        return results
    if not is_compiling():
        run_checks(checks, wit)
        return results
    checked = [P.check_in_range(w, *c) for w, c in zip(wit, checks)]
    return call(_passthrough(results, checked), results + checked)


_PASS: dict = {}


def _passthrough(results, checked) -> JaxFunction:
    avals = [aval(t) for t in results] + [aval(t) for t in checked]
    key = tuple((a.shape, str(a.dtype)) for a in avals) + (len(results),)
    got = _PASS.get(key)
    if got is None:
        n = len(results)
        got = _PASS[key] = JaxFunction(lambda *a: list(a[:n]), avals, "checked")
    return got


def state_key(func):
    """Which function ``func`` is and what its trace assumed about Python state (see
    ``fnx.graph.guards``): part of a transform's cache key. A function is its code and
    defaults, with the globals and closure cells it names (plain values by value, objects
    by id); another callable, its id; the state of the modules it reaches is included."""
    inner = getattr(func, "_fnx_func_inner", None)
    if inner is not None:
        return ("transform", inner[0], state_key(inner[1]))
    if isinstance(func, types.MethodType):
        return ("method", id(func.__self__), state_key(func.__func__),
                guards.module_state(func))
    if isinstance(func, functools.partial):
        # (its bound tensors are captured by identity, so they key by identity)
        return ("partial", state_key(func.func), tuple(map(id, func.args)),
                tuple((k, id(v)) for k, v in func.keywords.items()))
    if isinstance(func, types.FunctionType):
        who = (func.__code__, describe(func.__defaults__ or ()))
    else:
        who = ("id", id(func))
    # tensors it names, or holds one level down in containers it names (a dict of
    # parameters), by id: a traced program reads the tensors it captured, so a replaced one
    # must retrace (``scope_state`` keys some by place only: fnx.compile reads those when
    # called)
    held = tuple((name, id(v)) if isinstance(v, Tensor) else
                 (name, tuple(id(x) for x in (v.values() if isinstance(v, dict) else v)
                              if isinstance(x, Tensor)))
                 for name, v in guards.scope(func) if isinstance(v, (Tensor, dict, list, tuple)))
    return (who, guards.module_state(func), guards.scope_state(func), held,
            autocast_state())


def describe(value):
    """A hashable description of an argument pytree (tensor shapes, dtypes, devices;
    other leaves by value, or by id when unhashable)."""
    leaves, tree = flatten(value)
    out = [tree]
    for x in leaves:
        if isinstance(x, Tensor):
            out.append(("T", tuple(x.shape), x.dtype, x.device))
        else:
            try:
                hash(x)
                out.append(("V", type(x), x))
            except TypeError:
                out.append(("id", id(x)))
    return tuple(out)
