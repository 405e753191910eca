"""Compiled autograd for the JAX target: the autograd node of a compiled forward.

``compile_joint`` runs a forward program that also returns the residuals of fnx's own
backward (a joint graph split in two, ``fnx.graph.joint``); the recorded node hands them
and the output gradients to the backward program. ``compile_vjp``, for a forward fnx's
formulas cannot differentiate as one program, jits ``jax.vjp`` of the program over its
inputs that require grad: the jitted forward returns the outputs and ``vjp_fn`` (a pytree
holding the residuals on the device), which the node hands to a jitted backward. Either
way nothing of the forward is recomputed, and the residuals are freed when the backward
pass releases the node.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..autograd.graph import FREED, Node, SavedTensor, ag_bit
from ..autograd.history import edge_of
from ..core.errors import out_of_memory
from ..core.tensor import Tensor
from ..graph.graph import _collect
from .jax_compile import tensor_maker
from .host_checks import HostChecks
from .jax_storage import KEEP, feed, program_input

__all__ = ["compile_vjp", "compile_joint", "CompiledBackward"]


def _is_float(dtype) -> bool:
    return dtype.is_floating_point or dtype.is_complex


def _raise_oom(error, what):
    """Re-raise ``error``, as fnx.OutOfMemoryError when it is XLA's RESOURCE_EXHAUSTED."""
    oom = out_of_memory(error, what)
    if oom is None:
        raise error
    raise oom from None


class CompiledBackward(Node):
    """The autograd node of one call of a compiled program.

    A double backward (``create_graph=True``) needs gradients that autograd can
    differentiate again, which a program's arrays are not: with fnx's own backward
    (``double``: the joint graph returning the gradients, and the call's inputs) it runs
    that graph eagerly on the inputs, so autograd records it; with ``jax.vjp``'s it raises.
    """
    __slots__ = ("vjp_fn", "bwd", "out_meta", "in_meta", "num_outputs", "saved", "double")

    def name(self):
        return "CompiledFunctionBackward"

    def release(self):
        self.vjp_fn = None
        self.double = None

    def apply(self, grads, create_graph):
        if self.vjp_fn is None:
            raise RuntimeError(FREED)
        for saved in self.saved or ():     # inputs kept as residuals: eager's version check
            saved.unpack(self)
        if create_graph:
            return self._differentiable(grads)
        try:
            with jax.enable_x64(True):     # (a float64 output's zero cotangent stays float64)
                cts = [program_input(g) if g is not None else jnp.zeros(m.shape, m.dtype.numpy)
                       for g, m in zip(grads, self.out_meta)]
                res = self.bwd(self.vjp_fn, cts)
        except RuntimeError as e:
            _raise_oom(e, "fnx.compile: the compiled backward")
        return [None if r is None else tensor_maker(m)(r) for r, m in zip(res, self.in_meta)]

    def _differentiable(self, grads):
        if self.double is None:
            raise RuntimeError("fnx.compile: double backward (create_graph=True) through a "
                               "compiled function whose backward is JAX's vjp (see the "
                               "fnx.compile log) is not supported; call the function "
                               "uncompiled for higher-order gradients")
        (graph, at), inputs, index = self.double
        cts = iter([g if g is not None else tensor_maker(m)(np.zeros(m.shape, m.dtype.numpy))
                    for g, m in zip(grads, self.out_meta)])
        given = iter(inputs)
        args = []
        for i, p in enumerate(graph.placeholders()):
            t = next(cts) if i in at else next(given)
            if isinstance(t, SavedTensor):
                t = t.unpack(self)
            args.append(t if isinstance(t, Tensor) else    # a float input: 0-dim
                        tensor_maker(p.meta)(np.asarray(t, p.meta.dtype.numpy)))
        res = graph.run(*args)
        return [None if k is None else res[k] for k in index]


def _checked(run, host, inputs, hows):
    """``run``, or its variant without the value checks the host made on these inputs
    before (``HostChecks``, made on the first call: it needs ``hows``)."""
    if not host:
        host.append(HostChecks.of(run, [(i, None, h) for i, h in enumerate(hows)]))
    if host[0] is not None and run.check_values and host[0].hold(inputs):
        return run.without_checks(host[0].skip)    # the rest, if any
    return run


def _record(inputs, env, diff_in, diff_out, out_meta, in_meta):
    """The ``CompiledBackward`` of one call: its edges to ``inputs[diff_in]``, recorded as
    the history of the outputs ``diff_out`` (tensors of ``env``)."""
    node = CompiledBackward([edge_of(inputs[i]) for i in diff_in])
    node.out_meta, node.in_meta = out_meta, in_meta
    node.num_outputs = len(diff_out)
    node.saved = node.double = None
    for k, t in enumerate(diff_out):
        t._ks |= ag_bit(t._ks)
        t.grad_fn = node
        t._output_nr = k
    return node


def compile_joint(run, backward_run, plan, out_nodes):
    """A callable ``(input tensors, hows=None) -> (env of output node -> tensor, node)``
    running ``run`` (the forward of ``plan``, a ``fnx.graph.joint.Backward``, compiled: its
    outputs, then residuals) and recording a ``CompiledBackward`` that runs
    ``backward_run`` (the backward compiled) on the residuals and output gradients.
    ``out_nodes``: the nodes standing for ``run``'s outputs in the caller's graph (the
    forward's, after passes that copied it), the keys of ``env``."""
    makers = [tensor_maker(n.meta) for n in out_nodes]
    places = run.places
    diff_nodes = [out_nodes[j] for j in plan.diff_out]
    out_meta = [n.meta for n in diff_nodes]
    in_meta = [places[i].meta for i in plan.diff_in]
    grads = plan.grads
    kept_inputs = sorted({j for kind, j in plan.residuals if kind == "in"})
    host = []

    def backward(saved, cts):
        res = backward_run.call_arrays(list(saved) + cts)
        return [None if k is None else res[k] for k in grads]

    def call(inputs, hows=None):
        hows = hows or [KEEP] * len(inputs)
        program = _checked(run, host, inputs, hows)
        with jax.enable_x64(True):
            arrays = [feed(t, h) for t, h in zip(inputs, hows)]
        outs = program.call_arrays(arrays)
        env = {}
        for n, a, make in zip(out_nodes, outs, makers):
            if n not in env:
                env[n] = make(a)
        node = _record(inputs, env, plan.diff_in, [env[n] for n in diff_nodes], out_meta,
                       in_meta)
        node.vjp_fn = [arrays[j] if kind == "in" else outs[j] for kind, j in plan.residuals]
        node.bwd = backward
        # each input as a saved tensor, version-checked as eager's: its storage may be a
        # mutable NumPy array. The backward reads those it keeps as residuals; a double
        # backward reads them all.
        saved = [SavedTensor(t) if isinstance(t, Tensor) else t for t in inputs]
        node.saved = [saved[j] for j in kept_inputs]
        node.double = (plan.double, saved, grads)
        return env, node
    return call


def compile_vjp(run, graph):
    """A callable ``(input tensors, hows=None) -> (env of output node -> tensor, node)``
    for ``graph`` compiled as ``run`` (from ``compile_graph``), recording a
    ``CompiledBackward``; ``hows`` says per input how ``jax_storage.feed`` may make it
    resident (default: never)."""
    program = run.program
    out_nodes = run.out_nodes
    places = graph.placeholders()
    result_nodes = []
    mutated = getattr(graph, "mutated_inputs", [])
    out = graph.output_node.args[0]
    _collect(out[0] if mutated or getattr(graph, "stored", None) else out, result_nodes)
    n_result = len(result_nodes)
    # the results that require grad, then the stored tensors that do (each extra output
    # is one node)
    flags = getattr(graph, "result_grad", None)
    if flags is None or len(flags) != n_result:
        flags = [True] * n_result
    diff_out = [j for j, n in enumerate(out_nodes[:n_result])
                if flags[j] and _is_float(n.meta.dtype)]
    diff_out += [n_result + k - 1 for k in getattr(graph, "stored_grad", ())]
    other_out = [j for j in range(len(out_nodes)) if j not in diff_out]
    makers = [tensor_maker(n.meta) for n in out_nodes]
    cache = {}
    host = []           # [HostChecks or None], made on the first call (it needs ``hows``)

    def build(diff_in):
        rest_in = [i for i in range(len(places)) if i not in diff_in]

        def fwd(diff, rest):
            def f(*d):
                arrays = [None] * len(places)
                for i, a in zip(diff_in, d):
                    arrays[i] = a
                for i, a in zip(rest_in, rest):
                    arrays[i] = a
                outs = program(*arrays)
                return [outs[j] for j in diff_out], [outs[j] for j in other_out]
            primal, vjp_fn, aux = jax.vjp(f, *diff, has_aux=True)
            return primal, aux, vjp_fn

        with jax.enable_x64(True):
            return rest_in, jax.jit(fwd), jax.jit(lambda vjp_fn, cts: vjp_fn(cts))

    def call(inputs, hows=None):
        hows = hows or [KEEP] * len(inputs)
        diff_in = tuple(i for i, t in enumerate(inputs) if isinstance(t, Tensor) and
                        t.requires_grad and _is_float(t._dtype))     # floats: scalar inputs
        built = cache.get(diff_in)
        if built is None:
            built = cache[diff_in] = build(diff_in)
        rest_in, fwd, bwd = built
        checks = _checked(run, host, inputs, hows)
        try:
            with jax.enable_x64(True):
                arrays = [feed(t, h) for t, h in zip(inputs, hows)]
                rows = run.padded_rows(arrays)
                if rows:    # a DTensor's padded storage: differentiated on its rows
                    arrays = [a[:rows[j]] if j in rows else a for j, a in enumerate(arrays)]
                checks.check(arrays)    # value checks first, as Program.call_arrays does
                primal, aux, vjp_fn = fwd([arrays[i] for i in diff_in],
                                          [arrays[i] for i in rest_in])
        except RuntimeError as e:
            _raise_oom(e, "fnx.compile: the compiled program")
        env = {}
        for j, a in zip(diff_out, primal):
            env[out_nodes[j]] = makers[j](a)
        for j, a in zip(other_out, aux):
            env[out_nodes[j]] = makers[j](a)
        node = None
        if diff_in:
            node = _record(inputs, env, diff_in, [env[out_nodes[j]] for j in diff_out],
                           [out_nodes[j].meta for j in diff_out],
                           [places[i].meta for i in diff_in])
            node.vjp_fn = vjp_fn
            node.bwd = bwd
        return env, node
    return call
