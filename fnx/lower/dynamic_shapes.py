"""Dynamic sizes for ``fnx.compile``: one symbolic trace serves every size of a dimension.

A dimension is *dynamic* when ``fnx.compile(dynamic=True)`` says so (every dim of every
tensor argument not marked static: ``mark_static``), when
``fnx.compiler.mark_dynamic(t, dim)`` marked it, or -- with
``dynamic=None``, the default -- automatically, once calls that differ only in input sizes
have shown a third value of that dim (it changed twice, as PyTorch's automatic dynamic
shapes). ``dynamic=False`` never makes one.

For a dynamic dim the function is traced once with that size a ``SymInt``
(``fnx.graph.symint``): shapes and node arguments (view sizes, slice bounds, arange ends)
stay expressions over the symbol, and every Python decision on it (``if T > 4``, a meta
function's ``size == 1`` check, ``int(T)``) is a guard of the trace's ``ShapeEnv``. The
decomposed graph is cleaned (DCE, CSE) once. A call at a new size then checks the guards
(plain integer arithmetic, no trace); if they hold, the recorded graph with the sizes
substituted is partitioned and lowered, and only XLA compiles (``SymbolicEntry``). If a
guard fails, or the symbolic trace cannot be made (an op whose meta function cannot
handle a symbol, a value read from a size that leaves the program, Python state the trace
changed), fnx traces that shape statically, as it always did: the fallback is never a
different answer, only a slower one. ``FNX_LOGS=recompiles`` logs why.

An int argument (not a bool) that took a third value (or any, with ``dynamic=True``; never
with ``fnx._dynamo.config.specialize_int``; never 0 or 1) is traced the same way: a symbol
read from the argument, as Llama's ``start_pos`` or a step index. Programs are made per
value of the symbols the graph holds, so an int that only guards read shares a program.

Bounds: a symbolic trace counts as one trace against ``cache_limit``; the concrete
programs it lowers, one per size, are kept in a least-recently-used cache of
``MAX_SIZES`` per symbolic trace (the oldest size's program is dropped, and compiled again
if that size comes back), so new sizes never end in eager mode.
"""
from __future__ import annotations

import logging
from collections import OrderedDict

from ..core import tls
from ..core.grad_mode import no_grad
from ..core.tensor import grad_value
from ..graph import guards
from ..graph.passes.cleanup import eliminate_common_subexpressions, eliminate_dead_code
from ..graph.passes.partition import partition
from ..graph.symint import ShapeEnv, is_symbolic, substitute
from ..graph.tracer import DataDependentError, rollback, trace
from .call_key import ArgPlace, flatten_ints, passed_and_captured
from .settings import DYNAMO, INDUCTOR

__all__ = ["DynamicShapes", "SymbolicEntry", "MAX_SIZES", "mark_dynamic", "mark_static"]

MAX_SIZES = 64
"""Concrete programs kept per symbolic trace (least recently used dropped first)."""

MAX_TRIES = 3
"""Symbolic traces tried per call structure and set of dynamic dims before fnx gives up
on them and traces those calls statically."""

_log = logging.getLogger("fnx.compile")


def _dims(t, index, what) -> set:
    dims = [index] if isinstance(index, int) else list(index)
    ndim = t.ndim
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int) or not -ndim <= d < ndim:
            raise IndexError(f"{what}: dim {d!r} out of range for a tensor of rank {ndim}")
    return {d % ndim for d in dims}


def mark_static(t, index=None) -> None:
    """Keep dim ``index`` (an int, a list of ints, or None for every dim) of tensor ``t``
    static: a compiled function never traces that size as a symbol, even when it keeps
    changing or ``dynamic=True`` (``torch._dynamo.mark_static``).

    >>> import fnx
    >>> f = fnx.compile(lambda x: x * 2, dynamic=True)
    >>> x = fnx.ones(3)
    >>> mark_static(x, 0)
    >>> f(x), f.dynamic_traces()
    (tensor([2., 2., 2.]), 0)
    """
    dims = set(range(t.ndim)) if index is None else _dims(t, index, "mark_static")
    t._dynamo_static_indices = set(getattr(t, "_dynamo_static_indices", ())) | dims
    t._dynamo_dynamic_indices = set(getattr(t, "_dynamo_dynamic_indices", ())) - dims


def mark_dynamic(t, index) -> None:
    """Mark dim ``index`` (an int or a list of ints) of tensor ``t`` dynamic: a compiled
    function called with ``t`` traces that size as a symbol from the first call
    (``torch._dynamo.mark_dynamic``).

    >>> import fnx
    >>> f = fnx.compile(lambda x: x.sum(1) * 2)
    >>> for T in (3, 5):
    ...     x = fnx.ones(2, T)
    ...     fnx.compiler.mark_dynamic(x, 1)
    ...     print(f(x))
    tensor([6., 6.])
    tensor([10., 10.])
    >>> f.dynamic_traces()
    1
    """
    dims = _dims(t, index, "mark_dynamic")
    t._dynamo_dynamic_indices = set(getattr(t, "_dynamo_dynamic_indices", ())) | dims
    t._dynamo_static_indices = set(getattr(t, "_dynamo_static_indices", ())) - dims


class _SymbolicTraceFailed(DataDependentError):
    """The symbolic trace stopped (an op that cannot take a symbolic size): ``trace`` rolls
    the Python state back as for a data-dependent stop, and the shape is traced statically."""


class DynamicShapes:
    """A ``CompiledFunction``'s dynamic sizes: the sizes seen per call structure, the dims
    made dynamic, and the symbolic traces (``SymbolicEntry``) serving them.

    ``entry_class`` and ``flatten`` are ``compiled_function``'s ``_Entry`` and
    ``_flatten_call`` (handed over: this module sits beside it, not above it)."""

    def __init__(self, cf, entry_class, flatten):
        self.cf = cf
        self.entry_class = entry_class
        self.flatten = flatten
        self.clear()

    def clear(self) -> None:
        self.entries = {}       # shape-free key -> [SymbolicEntry]
        self.sizes = {}         # shape-free key -> {(input position, dim): {sizes seen}}
        # (shape-free key, dims) -> failed symbolic traces: given up at ``MAX_TRIES``, at
        # once when a trace pinned a size (``int(T)``: another would serve no more than a
        # static one) or failed to lower. A trace fails for a while on state made once
        # (an optimizer's first step creates its buffers), so one failure is not final.
        self.failed = {}
        self.traces = 0         # symbolic traces made (what cache_limit counts of them)

    def call(self, key, args, kwargs, room):
        """Run this call through a symbolic trace if one fits (made now if its dims just
        became dynamic and ``room`` for a trace is left under ``cache_limit``); else
        ``(False, None)`` and the call is traced as before."""
        free = _shape_free(key)
        # the call's tensors and floats, then its ints (read once for every entry tried)
        flat, ints = self.flatten(args, kwargs)[0], flatten_ints(args, kwargs)[0]
        for entry in list(self.entries.get(free, ())):
            hit = self._serve(free, entry, flat, ints, args, kwargs)
            if hit is not None:
                return True, self._run(key, entry, *hit, args, kwargs)
        dims = self._dynamic_dims(free, flat) | self._dynamic_ints(free, ints)
        # (a symbolic trace has no graph breaks, where fallback_random's samplers run)
        if not dims or INDUCTOR.fallback_random or not room or \
                self.failed.get((free, dims), 0) >= MAX_TRIES or \
                any(e.full for e in self.entries.get(free, ())):
            return False, None
        # (a size whose guards no symbolic trace meets -- the other branch of
        # ``if T > 4`` -- gets a symbolic trace of its own)
        entry = self._trace(flat, ints, args, kwargs, dims)
        if entry is None:
            self.failed[free, dims] = self.failed.get((free, dims), 0) + 1
            return False, None
        if entry.pinned():
            self.failed[free, dims] = MAX_TRIES
        self.traces += 1
        self.entries.setdefault(free, []).append(entry)
        hit = self._serve(free, entry, flat, ints, args, kwargs)
        if hit is None:
            _log.info("fnx.compile: the symbolic trace of %s does not fit the call that "
                      "made it; tracing it statically", _name(self.cf.fn))
            return False, None
        return True, self._run(key, entry, *hit, args, kwargs)

    def _serve(self, free, entry, flat, ints, args, kwargs):
        """``entry.serve``; a symbolic trace that fails to lower for a size is dropped
        (logged) and that size traced statically, never an error the static path lacks."""
        try:
            return entry.serve(flat, ints, args, kwargs)
        except Exception as e:      # (any: the static trace that follows reports its own)
            _log.info("fnx.compile: the symbolic trace of %s failed to lower (%s: %s); "
                      "dropped, tracing this shape statically", _name(self.cf.fn),
                      type(e).__name__, e)
            self.entries[free].remove(entry)
            self.failed[free, entry.dims] = MAX_TRIES
            return None

    def _run(self, key, entry, program, inputs, args, kwargs):
        # The concrete program also answers its exact key directly (the per-call fast
        # path); as part of its symbolic trace it does not count against cache_limit.
        # The keys it answers are bounded with its trace's programs (``SymbolicEntry.keys``).
        cache = self.cf.cache
        for old_key, old in entry.answer(key, program):
            self.cf._fast = None        # (it may be ``old``'s)
            kept = [e for e in cache.get(old_key, ()) if e is not old]
            if kept:
                cache[old_key] = kept
            else:
                cache.pop(old_key, None)
        if all(e is not program for e in cache.get(key, ())):
            cache.setdefault(key, []).append(program)
        return program(args, kwargs, inputs)

    def _dynamic(self):
        """The compiled function's ``dynamic``, with ``fnx._dynamo.config``'s
        ``assume_static_by_default`` off making None act as True."""
        dynamic = self.cf.dynamic
        if dynamic is None and not DYNAMO.assume_static_by_default:
            return True
        return dynamic

    def _dynamic_dims(self, free, flat) -> frozenset:
        """The (input position, dim) pairs to trace symbolically for this call: a dim
        marked static (``mark_static``) never is; ``fnx._dynamo.config`` switches
        ``assume_static_by_default`` off (as ``dynamic=True``) and
        ``automatic_dynamic_shapes`` off (only marked dims)."""
        dynamic = self._dynamic()
        if dynamic is False:
            return frozenset()
        # A size of 0 or 1 is never made a symbol (as in PyTorch): broadcasting and
        # emptiness checks would pin it at once.
        tensors = [(i, t) for i, t in enumerate(flat) if hasattr(t, "_ks")]
        if dynamic is True:
            return frozenset((i, d) for i, t in tensors for d, s in enumerate(t.shape)
                             if s > 1 and d not in getattr(t, "_dynamo_static_indices", ()))
        automatic = DYNAMO.automatic_dynamic_shapes
        seen = self.sizes.setdefault(free, {})
        dims = set()
        for i, t in tensors:
            marked = getattr(t, "_dynamo_dynamic_indices", ())
            static = getattr(t, "_dynamo_static_indices", ())
            for d, s in enumerate(t.shape):
                values = seen.setdefault((i, d), set())
                values.add(s)
                if ((automatic and len(values) >= 3) or d in marked) and s > 1 and \
                        d not in static:
                    dims.add((i, d))
        return frozenset(dims)

    def _dynamic_ints(self, free, ints) -> frozenset:
        """The int arguments (``ints``: ``flatten_ints``') to trace as symbols, as
        ``("int", position)``: an int that took a third value
        (``automatic_dynamic_shapes``), or any with ``dynamic=True``; never with
        ``fnx._dynamo.config.specialize_int``. As for sizes, 0 and 1 stay constants."""
        dynamic = self._dynamic()
        if dynamic is False or DYNAMO.specialize_int:
            return frozenset()
        seen = self.sizes.setdefault(free, {})
        chosen = set()
        for k, v in enumerate(ints):
            values = seen.setdefault(("int", k), set())
            values.add(v)
            if v > 1 and (dynamic is True or
                          DYNAMO.automatic_dynamic_shapes and len(values) >= 3):
                chosen.add(("int", k))
        return frozenset(chosen)

    def _trace(self, flat, ints, args, kwargs, dims):
        """The ``SymbolicEntry`` of the function with ``dims`` symbolic, or None (logged)
        when a symbolic trace cannot stand for it."""
        cf = self.cf
        _, rebuild = self.flatten(args, kwargs)

        env = ShapeEnv()
        # an int argument's symbol reads the call's value: source (len(flat) + k, None)
        syms = {k: env.create_symbol(ints[k], (len(flat) + k, None), f"int_arg{k}")
                for kind, k in sorted(d for d in dims if d[0] == "int")}
        tensor_dims = frozenset(d for d in dims if d[0] != "int")

        puts = [rebuild]

        def call(*ts):
            a, kw = rebuild(ts)
            if syms:
                _, put = flatten_ints(a, kw)
                puts.append(put)
                a, kw = put([syms.get(k, v) for k, v in enumerate(ints)])
            try:
                return cf.fn(*a, **kw)
            except DataDependentError:
                raise
            except Exception as e:      # (any: the static trace that follows reports it)
                raise _SymbolicTraceFailed(f"{type(e).__name__}: {e}") from e

        names = [f"arg{i}" for i in range(len(flat))]
        roots = guards.roots_of(cf.fn) + [args, kwargs]
        runs, suspended = tls.state.backward_runs, tls.state.suspensions
        try:
            graph = trace(call, *flat, input_names=names, lift_captured=True,
                          functional=True, decompose_to=cf.decompose, capture_grads=True,
                          stored_roots=roots, shape_env=env, dynamic_dims=tensor_dims,
                          places=guards.tensor_places(cf.fn), same_inputs=True,
                          arg_writes=rebuild.writes)
        except Exception as e:      # (DataDependentError: the function's own failure)
            _log.info("fnx.compile: no symbolic trace of %s (%s); tracing this shape "
                      "statically", _name(cf.fn), e)
            return None
        why = None
        # (tensors written into the call's own lists, dicts and objects, a KV cache's
        # ``key_cache[i] = cat(...)``, are replayed there by each size's program)
        # (``rebuild``'s own writes are those: ``arg_write_refused`` says when one is not)
        if graph.python_writes or graph.captured_history or graph.arg_write_refused or \
                any(not isinstance(c, ArgPlace) or t.requires_grad
                    for c, _, t, _ in graph.stored) or \
                any(put.changed() for put in puts[1:]):
            why = "it changes Python state or stores tensors on Python objects"
        elif passed_and_captured(graph, flat):
            why = "it reads a tensor both through an argument and from outside"
        elif tls.state.suspensions != suspended:
            why = "it made state outside the trace"
        elif graph.output_requires_grad and tls.state.backward_runs == runs:
            why = "its outputs require grad"
        elif _holds_symbolic(graph.output_node.args) or \
                _holds_symbolic(getattr(graph, "result_template", None)):
            why = "it returns a size as a Python value"
        if why is None:
            try:
                optimized = eliminate_common_subexpressions(eliminate_dead_code(graph))
            except RuntimeError as e:
                why = str(e)
        env.freeze()
        if why is not None:
            rollback(graph.python_writes)
            _log.info("fnx.compile: no symbolic trace of %s (%s); tracing this shape "
                      "statically", _name(cf.fn), why)
            return None
        _log.info("fnx.compile: traced %s with symbolic sizes %s (%d guards)", _name(cf.fn),
                  ", ".join(env.names[s] for s in env.sources), len(env.guards))
        shapes = [(i, tuple(None if (i, d) in dims else s for d, s in enumerate(t.shape)))
                  for i, t in enumerate(flat) if hasattr(t, "_ks")]
        shapes += [(len(flat) + k, None if k in syms else v) for k, v in enumerate(ints)]
        return SymbolicEntry(self, env, optimized, len(flat), dims, shapes,
                             {"functional": graph, "optimized": optimized})


class SymbolicEntry:
    """One symbolic trace: its guards, its cleaned graph, and the concrete program per
    size (at most ``MAX_SIZES``, least recently used dropped)."""

    def __init__(self, owner, env, graph, n_explicit, dims, shapes, stages):
        self.owner = owner
        self.env = env
        self.graph = graph
        self.n_explicit = n_explicit
        self.dims = dims
        self.stages = stages
        # per tensor argument: (position, the traced shape with None for a symbolic dim);
        # per int argument: (n_explicit + its position in ``flatten_ints``, the traced
        # value, or None for a symbol)
        self.shapes = shapes
        self.symbols = list(env.sources.items())
        # The symbols the graph holds (in shapes and node arguments), by which its concrete
        # programs are told apart: an int argument read only by guards (``if (step + 1) %
        # accum == 0``) needs no program per value.
        held, shaped = set(), set()
        for n in graph.nodes:
            _symbols_in((n.args, n.kwargs), held)
            _symbols_in(n.meta, shaped)
        held |= shaped
        self.held = [s for s, _ in self.symbols if s in held]
        # An int the graph reads as a value only (``x * step``, ``x[:, i]``), in no shape:
        # each new value is a new program, so as many as ``cache_limit`` are made, as
        # static traces would be (values met again keep theirs), never one per call.
        self.by_value = any(s not in shaped for s in self.held)
        self.full = False       # it declined a new value for that reason
        self.env_values = env.values
        self.programs = OrderedDict()       # sizes -> concrete _Entry
        self.keys = OrderedDict()           # exact call key -> the program answering it

    def pinned(self) -> bool:
        """Whether the guards fix some symbol to its traced value (neither one more nor one
        less passes): the trace specialized that size (``int(T)``, ``T == 7``)."""
        traced = self.env_values
        for s, v in traced.items():
            if not any(self.env.holds_for({**traced, s: w}) for w in (v - 1, v + 1)):
                return True
        return False

    def serve(self, flat, ints, args, kwargs):
        """``(program, inputs)`` for this call: the concrete program of its sizes (lowered
        now if new) and the program's inputs; None when the call's static sizes or ints,
        its ``.grad`` state or the guards differ from the trace's (``answer`` records the
        call key and bounds the programs kept)."""
        if len(flat) != self.n_explicit:
            return None
        flat = flat + ints          # (the call's ints after its tensors)
        if len(flat) != self.n_explicit + sum(p >= self.n_explicit for p, _ in self.shapes):
            return None
        for i, shape in self.shapes:
            t = flat[i]
            if i >= self.n_explicit:        # an int: its traced value, or any (a symbol)
                if shape is not None and t != shape:
                    return None
            elif not hasattr(t, "_ks") or len(t.shape) != len(shape) or \
                    any(s is not None and s != v for s, v in zip(shape, t.shape)):
                return None
        bindings = {s: int(flat[p]) if d is None else int(flat[p].shape[d])
                    for s, (p, d) in self.symbols}
        sizes = tuple([bindings[s] for s in self.held])
        program = self.programs.get(sizes)
        # (a program made for all the symbols' values met the guards when it was made; one
        # shared by values of a symbol the graph does not hold must meet them each time)
        if program is None or len(self.held) < len(self.symbols):
            if program is None and not self._grads_fit():
                return None
            if not self.env.holds_for(bindings):
                if _log.isEnabledFor(logging.INFO):
                    failed = [g for g in self.env.guards if not g.holds(flat)]
                    _log.info("fnx.compile: sizes %s: the symbolic trace's guard %s "
                              "fails", tuple(bindings.values()),
                              failed[0] if failed else "?")
                return None
        if program is None:
            limit = self.owner.cf.cache_limit
            if self.by_value and len(self.programs) >= limit:
                _log.info("fnx.compile: %s reads int argument(s) as values, not sizes, "
                          "and %d values have programs (cache_limit): value %s is not "
                          "compiled", _name(self.owner.cf.fn), limit, sizes)
                self.full = True
                return None
            program = self.programs[sizes] = self._lower(bindings)
        else:
            self.programs.move_to_end(sizes)
        inputs = program.match(args, kwargs)
        if inputs is None:          # a float input's guard or a captured tensor changed
            return None
        return program, inputs

    def answer(self, key, program) -> list:
        """Record that ``program`` answers the exact call key ``key``; the (key, program)
        pairs let go to keep ``MAX_SIZES`` programs and ``MAX_SIZES`` keys per program
        (least recently used first), which the caller drops from its cache."""
        self.keys[key] = program
        self.keys.move_to_end(key)
        dropped = []
        while len(self.programs) > MAX_SIZES:
            _, old = self.programs.popitem(last=False)
            dropped += [(k, p) for k, p in self.keys.items() if p is old]
        while len(self.keys) > MAX_SIZES * max(len(self.programs), 1):
            dropped.append(self.keys.popitem(last=False))
        for k, p in dropped:
            if self.keys.get(k) is p:
                del self.keys[k]
        return dropped

    def _grads_fit(self) -> bool:
        """Whether the ``.grad`` state the trace read holds now (a program is lowered for
        it; the concrete program's ``match`` checks the rest): a step that zeroed the
        grads with ``set_to_none`` is not served by a trace that read them."""
        if any((t._grad is None) is not none
               for t, none in getattr(self.graph, "grad_reads", ())):
            return False
        return all(grad_value(t) is not None
                   for kind, t in self.graph.input_sources if kind == "grad")

    def _lower(self, bindings):
        """The concrete program for ``bindings``: the recorded graph with its sizes
        substituted, partitioned and compiled (no trace, no graph passes)."""
        cf = self.owner.cf
        graph = concrete_graph(self.graph, bindings)
        parts = partition(graph, cf._supports())
        with no_grad():
            entry = self.owner.entry_class(cf.target, graph, parts, graph.lifted,
                                           self.n_explicit, self.stages)
        entry.one_shot = False
        entry.size = 0          # counted as its symbolic trace (cache_limit)
        if not cf.value_checks:
            for program in entry.programs():
                program.check_values = False
        return entry


def concrete_graph(graph, bindings):
    """A copy of ``graph`` (recorded with symbolic sizes) with every size expression in its
    node arguments and shapes replaced by its value for ``bindings``. A symbolic size left
    anywhere else (inside an object ``substitute`` does not open) is an error, never a
    value fixed at the traced size."""
    new = graph.copy()
    for n in new.nodes:
        n.args = substitute(n.args, bindings)
        n.kwargs = substitute(n.kwargs, bindings)
        n.meta = substitute(n.meta, bindings)
        if _holds_symbolic((n.args, n.kwargs, n.meta)) or is_symbolic(n.target):
            raise RuntimeError(f"fnx.compile: node {n.name} keeps a symbolic size after "
                               f"substitution")
    return new


def _symbolic_values(value):
    """The ``SymInt``s in ``value`` (nested node arguments: tuples, lists, dicts, slices)."""
    if is_symbolic(value):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _symbolic_values(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _symbolic_values(v)
    elif isinstance(value, slice):
        yield from _symbolic_values((value.start, value.stop, value.step))


def _symbols_in(value, out: set) -> None:
    """Add the symbols that ``value`` (nested node arguments) reads to ``out``."""
    for v in _symbolic_values(value):
        out.update(v.symbols())


def _holds_symbolic(value) -> bool:
    return next(_symbolic_values(value), None) is not None


def _shape_free(key):
    """A call's cache key with each tensor argument's shape replaced by its rank and each
    int argument's value by ``int`` (the key's last four items are the call's state)."""
    return tuple(_free(k) for k in key[:-4]) + key[-4:]


def _free(key):
    if isinstance(key, tuple):
        kind = key[0] if key and type(key[0]) is str else None   # (a dict's key: any value)
        if len(key) > 1 and kind == "T" and isinstance(key[1], tuple):
            return ("T", len(key[1])) + key[2:]
        if len(key) == 2 and kind == "V" and type(key[1]) is int:
            return ("V", int)
        return tuple(_free(k) for k in key)
    return key


def _name(fn):
    return getattr(fn, "__qualname__", None) or type(fn).__name__
