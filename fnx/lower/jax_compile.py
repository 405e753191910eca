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

import functools
import math
import re
import types

import jax
import numpy as np
from jax.sharding import NamedSharding

from ..backends.cpu import wrap_resident
from ..core.device import canonical
from ..core.errors import out_of_memory
from ..core.tensor import Tensor, resident
from ..graph.graph import _collect, map_nodes
from ..ir import prims as P
from ..ir.prims.assertions import check_failure
from .jax_spmd import Spmd, graph_mesh
from .jax_storage import ARRAY_TYPE, feed
from .narrow_scalars import narrowable, widened

__all__ = ["compile_graph", "graph_program", "register_device_arrays", "Program",
           "tensor_maker", "raise_failed"]

# (see Program._compile) the extra memory, as a share of a program's argument bytes,
# that dropping the donations XLA would copy may cost before they are kept
COPY_MEMORY_SHARE = 1 / 16
# NumPy dtypes JAX narrows to 32 bits outside enable_x64
_WIDE = {np.dtype(t) for t in (np.int64, np.uint64, np.float64, np.complex128)}

# device type -> fn(jax.Array, dtype, device) -> Tensor, for devices whose tensors hold
# jax.Arrays (the cuda backend registers it); other results are copied to the host.
_device_arrays: dict = {}


def register_device_arrays(device_type: str, wrap_array) -> None:
    """Results of a program on a ``device_type`` device stay there: ``wrap_array(array,
    dtype, device)`` makes the tensor holding the ``jax.Array``."""
    _device_arrays[device_type] = wrap_array


def graph_program(target, graph, skip=frozenset(), pack=()):
    """``(program, out_nodes)``: ``program(*arrays)`` evaluates ``graph`` with ``target``'s
    rules on arrays given in placeholder order and returns the arrays of ``out_nodes``.
    Call (and jit) it under ``jax.enable_x64(True)`` so 64-bit dtypes stay exact.

    ``pack`` (positions of outputs of one dtype, e.g. a step's small gradients) returns
    those outputs flattened into one array, last, in place of each (``PackedOutput``
    stands for it in ``out_nodes``): one output buffer instead of several.

    A graph with value checks (``prims.check_in_range``, ``prims.check_linalg_info``)
    returns one more array: their status, ``int64[checks, 3]`` (failed, first bad value,
    its flat index) for ``raise_failed`` with ``program.checks``; the check nodes in
    ``skip`` (checked before the call: ``ProgramPlan``'s host checks) only pass their
    value through."""
    missing = sorted({str(n.target) for n in graph.calls() if not target.has_rule(n.target)})
    if missing:
        raise NotImplementedError(f"the {target.name!r} target has no lowering rule for "
                                  f"{', '.join(missing)}; decompose the graph to prims first")
    rules = target.rules
    places = graph.placeholders()
    out_nodes = []
    _collect(graph.output_node.args[0], out_nodes)
    every = out_nodes
    if pack:
        packed = PackedOutput(pack, out_nodes)
        out_nodes = [n for k, n in enumerate(out_nodes) if k not in packed.skip] + [packed]
    steps = [n for n in graph.nodes if n.kind in ("call", "getitem", "constant")]
    checks = [n for n in steps if n.kind == "call" and n.target in _STATUS and n not in skip]
    swapped = _transposed_products(steps)
    steps = [n for n in steps if n not in swapped.values()]
    paired = _paired_backwards(steps, getattr(target, "vjp_rules", {}))

    def program(*arrays):
        env = dict(zip(places, arrays))
        backwards = {}      # backward node -> the vjp its forward's lowering returned
        for node in steps:
            if node in paired:  # a forward whose backward is in the graph: see _paired_backwards
                _, n_grads, fn = target.vjp_rules[node.target]
                env[node], vjp = fn(*_load(node.args, env))
                backwards[paired[node]] = n_grads, vjp
            elif node in backwards:
                n_grads, vjp = backwards.pop(node)
                env[node] = vjp(*_load(node.args[:n_grads], env))
            elif node in swapped:     # transpose(a @ b) as b' @ a': see _transposed_products
                lhs, rhs, lc, rc, lb, rb = _load(swapped[node].args, env)
                env[node] = rules[P.dot_general](rhs, lhs, rc, lc, rb, lb)
            elif node.kind == "call":
                env[node] = rules[node.target](*_load(node.args, env),
                                               **_load(node.kwargs, env))
            elif node.kind == "getitem":
                env[node] = env[node.args[0]][node.args[1]]
            else:
                env[node] = _host(node.target)
        outs = [env[n] for n in every]
        if pack:
            outs = packed.outputs(outs)
        if checks:
            outs.append(jax.numpy.stack([_STATUS[n.target](n, env) for n in checks]))
        return outs

    program.checks = [_check_entry(n) for n in checks]
    return program, out_nodes


class PackedOutput:
    """Stands in ``out_nodes`` for the outputs at positions ``pack`` of ``out_nodes``,
    packed into one flat array (see ``graph_program``); ``meta`` describes that array."""

    def __init__(self, pack, out_nodes):
        first = out_nodes[pack[0]].meta
        self.pack, self.skip = pack, set(pack)
        size = sum(math.prod(out_nodes[k].meta.shape) for k in pack)
        self.meta = types.SimpleNamespace(shape=(size,), dtype=first.dtype,
                                          device=first.device)

    def outputs(self, outs):
        dtype = self.meta.dtype.numpy
        flat = jax.numpy.concatenate([_exact(outs[k], dtype).reshape(-1) for k in self.pack])
        return [o for k, o in enumerate(outs) if k not in self.skip] + [flat]


def _paired_backwards(steps, vjp_rules) -> dict:
    """``{forward node: backward node}`` for each forward prim with a ``vjp_rules`` entry
    (``{forward prim: (backward prim, number of gradient operands, fn)}``) whose backward
    node, ``backward(*grads, *forward operands)``, is in the same graph with the very same
    operands. Such a forward is lowered as ``fn(*operands) -> (outputs, vjp)`` and its
    backward as ``vjp(*grads)``, reusing the forward's residuals, instead of lowering the
    backward prim on its own, which would run the forward (for ``rnn_scan``, a whole
    recurrence) a second time."""
    forwards = {}
    for n in steps:
        if n.kind == "call" and n.target in vjp_rules and not n.kwargs:
            forwards.setdefault((n.target, _key(n.args)), n)
    backward_of = {bwd: (fwd, k) for fwd, (bwd, k, _) in vjp_rules.items()}
    out = {}
    for n in steps:
        if n.kind != "call" or n.target not in backward_of or n.kwargs:
            continue
        fwd_target, k = backward_of[n.target]
        fwd = forwards.get((fwd_target, _key(n.args[k:])))
        if fwd is not None and fwd not in out:
            out[fwd] = n
    return out


def _key(args):
    # nodes by identity, constants (mode strings, flags, None) by value
    return tuple(("node", id(a)) if hasattr(a, "kind") else ("value", repr(a)) for a in args)


def _transposed_products(steps) -> dict:
    """``{transpose node: dot_general node}`` for each transpose of a matrix product whose
    only use it is: the product is computed with its operands swapped instead, which gives
    the transposed matrix in row-major order. A weight's gradient through ``x @ w.t()``
    (``linear``) is such a transpose; without this XLA's CPU backend computes it
    column-major and copies it (and reads it strided in the optimizer update)."""
    out = {}
    for n in steps:
        if n.kind != "call" or n.target is not P.transpose or tuple(n.args[1]) != (1, 0):
            continue
        d = n.args[0]
        if getattr(d, "kind", None) != "call" or d.target is not P.dot_general or \
                len(d.args) != 6 or d.kwargs or len(d.users) != 1 or d.args[4] or \
                d.args[5] or len(d.meta.shape) != 2 or \
                any(len(getattr(a, "meta", None).shape) != 2 for a in d.args[:2]
                    if getattr(a, "meta", None) is not None):
            continue
        out[n] = d
    return out


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
    # (x may be a host constant, a NumPy array that a traced index cannot subscript)
    flat = jax.numpy.asarray(x).reshape(-1).astype(np.int64)
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
    error = failed_check(checks, status)
    if error is not None:
        raise error


def failed_check(checks, status):
    """The exception of the first failed check in ``status``, or None."""
    status = np.asarray(status)
    for check, row in zip(checks, status):
        if row[0]:
            return check_failure(check, int(row[1]), int(row[2]) if len(row) > 2 else 0)
    return None


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

    A graph with collectives (``jax_spmd``) is one SPMD program over their mesh: its body
    runs under ``shard_map``, every process on its own values (``spmd``).
    """

    def __init__(self, target, graph, skip=frozenset(), pack=()):
        self._source = (target, graph)
        self._variants = {}
        self._skip, self.pack = skip, pack
        program, out_nodes = graph_program(target, graph, skip, pack)
        dtypes = [n.meta.dtype.numpy for n in out_nodes]
        mesh = graph_mesh(graph)
        self.spmd = spmd = Spmd(mesh) if mesh is not None else None
        # float inputs that enter as float32 (narrow_scalars): fed as Python floats,
        # they need no enable_x64 around the call (_for_x64 where one is entered anyway)
        self.narrow = narrowable(graph) if spmd is None else frozenset()
        program = widened(program, self.narrow)

        def exact(*arrays):
            return [_exact(o, dt) for o, dt in zip(program(*arrays), dtypes)]

        def exact_checked(*arrays):     # the outputs, then the checks' status
            outs = program(*arrays)
            return [_exact(o, dt) for o, dt in zip(outs, dtypes)] + [outs[-1]]

        def status(*arrays):
            return program(*arrays)[-1]
        if spmd is not None:
            exact, exact_checked, status = (spmd.wrap(f) for f in (exact, exact_checked,
                                                                   status))
        self._local = spmd.to_local if spmd is not None and spmd.multi_process else None

        # Value checks: a call that donates no buffer returns their status beside its
        # outputs, raised before the caller writes anything back. A call that donates runs
        # them first, as a program of their own (XLA keeps only what they read), so a
        # donated input is never lost to a call that raises.
        self.checks = program.checks
        self._derived = []              # variants (without_checks, packing): same setting
        self.check_values = True        # fnx.compile(options={"value_checks": False})
        self.checker = jax.jit(status) if self.checks else None
        self._checker_call = None
        self._exact_checked = exact_checked

        def guarded(keep, n, *arrays):
            # The checks' status first, then the step under a cond: when a check failed,
            # each output that replaces a buffer given up (``keep``: (input position,
            # output index)) is that input's own value, the others zeros. A select after
            # the step would read the given-up buffer and keep a temporary per output.
            status = program(*arrays[:n])[-1]
            ok = jax.numpy.logical_not(jax.numpy.any(status[:, 0] != 0))
            kept = {k: j for j, k in keep}

            def run(a):
                return [_exact(o, dt) for o, dt in zip(program(*a[:n])[:-1], dtypes)]

            def failed(a):
                return [a[kept[k]] if k in kept else jax.numpy.zeros(node.meta.shape, dt)
                        for k, (node, dt) in enumerate(zip(out_nodes, dtypes))]
            return jax.lax.cond(ok, run, failed, list(arrays)) + [status]
        self._guarded = guarded

        self.program = exact            # the un-jitted function of arrays (compiled autograd)
        self.out_nodes = out_nodes
        self.places = graph.placeholders()
        self.result_spec = graph.output_node.args[0]
        self._exact = exact
        with jax.enable_x64(True):
            self.jitted = jax.jit(exact)
        self._compiled = {}             # donated positions -> compiled executable's call
        self._kept = {}                 # donations asked -> those made (_compile's choice)
        self._wide = [i for i, p in enumerate(self.places)
                      if p.meta.dtype.numpy in _WIDE and i not in self.narrow]
        self._wide_set = frozenset(self._wide)
        self.makers = [tensor_maker(n.meta) for n in out_nodes]
        # {output: input position}: outputs laid out as that input when it is laid out over
        # several devices (a DTensor's new value, its gradient), so GSPMD keeps a sharded
        # parameter sharded (set by the caller that knows, compiled_run.ProgramPlan)
        self.pins = {}

    def without_checks(self, skip):
        """This program without the value checks ``skip`` (check nodes), which the caller
        evaluated itself before the call (made once, then cached)."""
        variant = self._variants.get(skip)
        if variant is None:
            variant = self._variants[skip] = self._derive(skip, self.pack)
        variant.pins = self.pins
        return variant

    def packing(self, pack):
        """This program with the outputs at positions ``pack`` returned as one flat array,
        last (``graph_program``); the other outputs keep their order."""
        return self._derive(self._skip, tuple(pack))

    def _derive(self, skip, pack):
        variant = Program(*self._source, skip, pack)
        variant.check_values = self.check_values
        self._derived.append(variant)
        return variant

    @property
    def check_values(self) -> bool:
        """Whether value checks run (``fnx.compile(options={"value_checks": False})``
        turns them off, for this program and its variants)."""
        return self._check_values

    @check_values.setter
    def check_values(self, on: bool) -> None:
        self._check_values = on
        for variant in self._derived:
            variant.check_values = on

    def padded_rows(self, arrays) -> dict:
        """{position: rows} of the inputs given as a storage padded on dim 0 (an uneven
        ``Shard(0)`` DTensor's, ``fnx.distributed.dtensor``): laid out over devices, with
        more rows than the placeholder's."""
        rows = {}
        for j, (place, a) in enumerate(zip(self.places, arrays)):
            shape = getattr(getattr(place, "meta", None), "shape", None)
            if shape and _laid_out(a) and a.shape[0] != shape[0]:
                rows[j] = shape[0]
        return rows

    def _pinned(self, fn, arrays):
        """``fn`` with each pinned output constrained to its input's sharding; a padded
        input is cut to its rows inside the program and an output pinned to it padded
        again (XLA partitions the uneven rows, so the compute stays sharded)."""
        if self.spmd is not None:
            return fn
        rows = self.padded_rows(arrays)
        shardings = {k: arrays[j].sharding for k, j in self.pins.items()
                     if j < len(arrays) and _laid_out(arrays[j])}
        if not shardings and not rows:
            return fn
        pads = {k: arrays[j].shape[0] - rows[j] for k, j in self.pins.items() if j in rows}

        def pinned(*a):
            outs = fn(*[x[:rows[j]] if j in rows else x for j, x in enumerate(a)])
            return [jax.lax.with_sharding_constraint(
                        _pad_rows(o, pads.get(k, 0)), shardings[k]) if k in shardings
                    else o for k, o in enumerate(outs)]
        return pinned

    def call_arrays(self, arrays, donate=(), sinks=0):
        """Run on ``arrays`` (placeholder order); the buffers at positions ``donate`` may be
        reused for the outputs (the caller checked nothing else references them). The last
        ``sinks`` arrays are extra, never read: buffers given up for outputs of their shape
        to be written into (a ``.grad`` the step replaces), so no fresh memory is touched."""
        if self._local is not None:     # one program across processes: global arrays
            return self._local(self._call_arrays(self.spmd.to_global(arrays), donate, sinks))
        return self._call_arrays(arrays, donate, sinks)

    def _call_arrays(self, arrays, donate=(), sinks=0):
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
                arrays = self._for_x64(arrays)
                with jax.enable_x64(True):
                    compiled = self._compile(arrays, donate, sinks)
                    outs = compiled(*arrays)
                # the executable's own call (set by its first call): one Python frame less
                self._compiled[key] = getattr(compiled, "_call", None) or compiled
                return outs
            return self._run(call, arrays)
        except RuntimeError as e:   # XLA's RESOURCE_EXHAUSTED: fnx.OutOfMemoryError
            oom = out_of_memory(e, "fnx.compile: the compiled program")
            if oom is None:
                raise
            raise oom from None

    def _run(self, call, arrays):
        """``call(*arrays)``, under enable_x64 while a 64-bit input is a host value (JAX
        would narrow it outside; a device array keeps its dtype)."""
        for i in self._wide:
            if type(arrays[i]) is not ARRAY_TYPE:
                arrays = self._for_x64(arrays)
                with jax.enable_x64(True):
                    return call(*arrays)
        return call(*arrays)

    def _for_x64(self, arrays):
        """``arrays`` for a call or compile under enable_x64, where a Python float is
        float64: the float32 inputs (``narrow``) as np.float32."""
        narrow = self.narrow
        if not narrow:
            return arrays
        return [np.float32(a) if type(a) is float and j in narrow else a
                for j, a in enumerate(arrays)]

    def _call_checked(self, arrays):
        """The outputs for ``arrays`` from one program that also computes the value checks;
        raises the first that failed (nothing was donated or written)."""
        call = self._compiled.get("checked")
        if call is None:
            arrays = self._for_x64(arrays)
            with jax.enable_x64(True):
                compiled = jax.jit(self._pinned(self._exact_checked, arrays)) \
                    .lower(*arrays).compile()
                outs = compiled(*arrays)
            self._compiled["checked"] = getattr(compiled, "_call", None) or compiled
        else:
            outs = self._run(call, arrays)
        raise_failed(self.checks, self._status(outs[-1]))
        return outs[:-1]

    def guards_buffers(self) -> bool:
        """Whether a call that gives up buffers must go through ``call_guarded``."""
        # (an SPMD program over processes keeps the separate check program: call_arrays)
        return self.checker is not None and self.check_values and self.spmd is None

    def call_guarded(self, arrays, donate, sinks, keep):
        """``call_arrays`` for a call that gives up buffers (inputs at ``donate``, the last
        ``sinks`` arrays) while value checks are on, as one program: it computes the
        outputs and the checks' status, and each output that replaces a given-up buffer
        (``keep``: (input position, output index)) holds that input's own value when a
        check failed. Returns ``(outputs, error)``: when ``error`` is not None the caller
        rebinds the given-up tensors to their (unchanged) outputs, then raises it. One
        program and one host read per call, where a separate check program cost a second
        launch and a wait before the first."""
        key = ("guarded", donate, sinks, keep)
        call = self._compiled.get(key)
        try:
            if call is None:
                n = len(arrays) - sinks
                fn = self._pinned(functools.partial(self._guarded, keep, n), arrays[:n])
                given = donate + tuple(range(n, len(arrays)))
                arrays = self._for_x64(arrays)
                with jax.enable_x64(True):
                    compiled = jax.jit(fn, donate_argnums=given, keep_unused=True) \
                        .lower(*arrays).compile()
                    outs = compiled(*arrays)
                self._compiled[key] = getattr(compiled, "_call", None) or compiled
            else:
                outs = self._run(call, arrays)
        except RuntimeError as e:   # XLA's RESOURCE_EXHAUSTED: fnx.OutOfMemoryError
            oom = out_of_memory(e, "fnx.compile: the compiled program")
            if oom is None:
                raise
            raise oom from None
        return outs[:-1], failed_check(self.checks, outs[-1])

    def _status(self, status):
        return status if self._local is None else self._local([status])[0]

    def check(self, arrays) -> None:
        """Run the value checks on ``arrays`` (placeholder order) and raise the first that
        fails; nothing when there are none or they are off. The check program is compiled
        ahead of time on first use and called like the program itself (``call_arrays``)."""
        if self.checker is None or not self.check_values:
            return
        call = self._checker_call
        if call is None:
            checker, rows = self.checker, self.padded_rows(arrays)
            if rows:        # padded inputs are checked on their rows
                def checker(*a, whole=checker):
                    return whole(*[x[:rows[j]] if j in rows else x for j, x in enumerate(a)])
                checker = jax.jit(checker)
            arrays = self._for_x64(arrays)
            with jax.enable_x64(True):
                compiled = checker.lower(*arrays).compile()
                status = compiled(*arrays)
            # the executable's own call (set by its first call): one Python frame less
            self._checker_call = getattr(compiled, "_call", None) or compiled
        else:
            status = self._run(call, arrays)
        raise_failed(self.checks, self._status(status))

    def _compile(self, arrays, donate, sinks=0):
        """The executable for ``arrays``, donating what it can of ``donate``. XLA copies a
        donated input whose buffer it cannot overwrite in place (read after its new value
        is written); such an input is better not donated, its new value given a fresh
        buffer, which saves the copy's time for the same memory when there is one. With
        several, XLA reuses one temporary buffer for their copies in turn while the fresh
        outputs all live at once, so they stay donated where not donating them would need
        more than ``COPY_MEMORY_SHARE`` of the arguments' bytes in extra memory. A compile
        that finds copies compiles again without them; a later call with more sinks (a
        step's second call, its old gradients given back) makes the donations the first
        one chose."""
        n = len(arrays) - sinks
        exact = self._pinned(self._exact, arrays[:n])
        if not donate and not sinks:
            jitted = self.jitted if exact is self._exact else jax.jit(exact)
            return jitted.lower(*arrays).compile()
        fn = exact
        if sinks:
            def fn(*a):
                return exact(*a[:n])

        def build(donate):
            given = donate + tuple(range(n, len(arrays)))
            return jax.jit(fn, donate_argnums=given, keep_unused=True) \
                .lower(*arrays).compile()
        asked = donate
        if asked in self._kept:                     # chosen by an earlier compile
            return build(self._kept[asked])
        compiled = first = build(donate)
        while True:
            copied = _copied_parameters(compiled.as_text())
            keep = tuple(j for j in donate if j not in copied)
            if keep == donate:
                break
            donate = keep
            compiled = build(donate)
        if compiled is not first and _copies_save_memory(first, compiled):
            compiled, donate = first, asked
        self._kept[asked] = donate
        return compiled

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
        arrays = [feed(t) for t in tensors]
        if self._local is not None:
            arrays = self.spmd.to_global(arrays)
        exact = self._pinned(self._exact, arrays)
        arrays = self._for_x64(arrays)
        with jax.enable_x64(True):
            jitted = self.jitted if exact is self._exact else jax.jit(exact)
            text = jitted.lower(*arrays).compile().as_text()
        return {**_entry_kernels(text), "hlo": text}


def _pad_rows(a, pad):
    return jax.numpy.pad(a, ((0, pad),) + ((0, 0),) * (a.ndim - 1)) if pad else a


def _laid_out(a) -> bool:
    """Whether ``a`` is a jax.Array laid out over several devices by a mesh."""
    return isinstance(a, jax.Array) and isinstance(a.sharding, NamedSharding) and \
        len(a.sharding.device_set) > 1


_PARAMETER = re.compile(r"%(\S+) = \S+ parameter\((\d+)\)")
_COPY = re.compile(r"= \S+ copy\(%([^),]+)\)")


def _copies_save_memory(copying, fresh) -> bool:
    """Whether the executable ``copying`` (XLA copies some donated inputs) needs more than
    ``COPY_MEMORY_SHARE`` of its argument bytes less memory per call than ``fresh`` (those
    inputs not donated): the temporaries, plus the outputs given no donated buffer."""
    a, b = copying.memory_analysis(), fresh.memory_analysis()
    if a is None or b is None:      # a backend that does not say
        return False
    def extra(m):
        return m.temp_size_in_bytes + m.output_size_in_bytes - m.alias_size_in_bytes
    return extra(b) - extra(a) > COPY_MEMORY_SHARE * a.argument_size_in_bytes


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
        return arr if "_rows" not in t.__dict__ else t._unpadded()
    data = t._data
    return data if isinstance(data, jax.Array) else np.asarray(data)


def _load(value, env):
    # Captured tensors in a region's arguments enter the program as arrays.
    value = map_nodes(value, env.__getitem__)
    if isinstance(value, (list, tuple)):
        return [_host(v) if isinstance(v, Tensor) else v for v in value]
    return value
