"""``fnx.compile``: trace once per guard set, run the passes, lower regions, reuse.

The pipeline, per new set of guards (input shapes, dtypes, devices, requires_grad and
whether ``.grad`` is set, the model's training flags, grad mode):
trace on meta tensors (tensors the function reads from outside, e.g. parameters, become
inputs, never constants) -> functionalize + decompose -> DCE -> CSE -> partition into
regions the target lowers and eager calls between them -> compile each region.
Inputs the program writes (buffers updated in place) are written back after each call.
Where the function reads a tensor's value (``item()``, ``if (x > 0).all():``) the graph
breaks: compiled segments run around that point (``graph_breaks``).

Autograd: the trace runs with autograd on, so a training step that calls ``backward()`` and
an optimizer records the backward and the updates in the same program; the ``.grad`` it
leaves on parameters are program outputs assigned after each call. A function whose
outputs require grad (a compiled model in eager training) is compiled as a forward program
and a backward program of fnx's own formulas (a joint trace split in two,
``fnx.graph.joint``), recorded as one autograd node.
"""
from __future__ import annotations

import functools
import logging
import os
import threading
import warnings
import weakref


from ..core import profiling, tls
from ..core.dispatch_key import AUTOGRAD_BITS
from ..core.layout import SparseNotTraceable
from ..core.autocast_mode import autocast_state
from ..core.device import get_default_device
from ..core.dtype import get_default_dtype
from ..core.grad_mode import is_grad_enabled, no_grad
from ..core.tensor import Tensor, grad_value, set_grad, storage_shape
from ..dispatch.modes import current_mode
from ..graph import guards
from ..graph.graph import Graph, _collect, map_nodes
from ..graph.joint import EagerBackward, split_joint
from ..graph.passes.cleanup import eliminate_common_subexpressions, eliminate_dead_code
from ..graph.passes.partition import Partition, Region, partition
from ..graph.python_state import store
from ..graph.input_sources import source_value
from ..graph.results import restore_result
from ..graph.tracer import (DataDependentError, TracingMode, describe_change,
                            rollback, settle, trace)
from ..graph.user_frames import user_stacklevel
from .call_key import (ArgPlace, aliased_input, describe_arg, flatten_call, layout_of,
                       lifted_key, passed_and_captured, repeated_tensors, traced_inputs)
from .compile_report import CompileReport
from .compiled_run import ProgramPlan, feed_modes
from .dynamic_shapes import DynamicShapes
from .fast_call import MISS, FastCall
from .graph_breaks import BreakEntry, BreakTracer, Draws
from .jax_storage import array_of, become, rebind, rebindable
from .settings import DYNAMO, INDUCTOR, stance
from .target import get_target

__all__ = ["CompiledFunction", "CompileReport", "live_compiled_functions"]

live_compiled_functions = weakref.WeakSet()    # every CompiledFunction (fnx.compiler.reset)

# FNX_LOGS=recompiles prints each recompilation with the guard that failed (as PyTorch's
# TORCH_LOGS=recompiles); the records go to the "fnx.compile" logger either way.
_log = logging.getLogger("fnx.compile")
_MISSING = object()      # a key no longer in a guarded dict
_dict_get = dict.get
if "recompiles" in os.environ.get("FNX_LOGS", "").split(","):
    _log.addHandler(logging.StreamHandler())
    _log.setLevel(logging.INFO)


class CompiledFunction:
    """What ``fnx.compile`` returns: call it like the original function or module."""

    def __init__(self, fn, *, backend="jax", decompose="prims", dynamic=None,
                 fullgraph=False, cache_limit=None, value_checks=True):
        self.fn = fn
        self.value_checks = value_checks
        self.target = get_target(backend)
        self.decompose = decompose
        self.dynamic = dynamic
        self.fullgraph = fullgraph
        self._cache_limit = cache_limit         # None: the config's (see cache_limit)
        self.cache = {}
        self._eager_reason = None
        self._warned = set()
        self._state_version = None      # see _module_state
        self._state_ids = {}
        self._scope = guards.ScopeState(fn)     # its globals and closure, read per call
        self._fast = None               # the fast path tried first (_arm)
        self._state_id = None
        self._stored_once = False
        self._traced = False            # a trace was made (the next is a recompile)
        self._ran_eagerly = False       # the first call ran eagerly (eager_then_compile)
        self._lock = threading.RLock()
        self._dynamic_shapes = DynamicShapes(self, _Entry, flatten_call)
        functools.update_wrapper(self, fn, updated=())
        live_compiled_functions.add(self)

    def __deepcopy__(self, memo):
        """Itself, as a function is copied; but a compiled method of an object being
        copied (``model.forward = fnx.compile(model.forward)``, then
        ``copy.deepcopy(model)``) becomes the copy's method, compiled anew."""
        owner = getattr(self.fn, "__self__", None)
        if owner is None or id(owner) not in memo:
            return self
        return CompiledFunction(self.fn.__func__.__get__(memo[id(owner)]),
                                backend=self.target.name, decompose=self.decompose,
                                dynamic=self.dynamic, fullgraph=self.fullgraph,
                                cache_limit=self._cache_limit, value_checks=self.value_checks)

    @property
    def cache_limit(self) -> int:
        """How many specializations before calls none of them fits run eagerly: the
        ``cache_limit`` compiled with, else ``fnx._dynamo.config.recompile_limit``."""
        return DYNAMO.recompile_limit if self._cache_limit is None else self._cache_limit

    @cache_limit.setter
    def cache_limit(self, value) -> None:
        self._cache_limit = value

    # -- guards
    def _guards(self, args, kwargs):
        key = [describe_arg(a) for a in args]
        # keywords in the order given (as ``flatten_call`` feeds them; ``describe_arg``)
        key += [(k, describe_arg(v)) for k, v in kwargs.items()]
        key.append(("repeated", repeated_tensors(args, kwargs)))
        key.append(("modules", self._module_state()))
        key.append(("scope", self._scope()))
        key.append(("grad", is_grad_enabled()))
        key.append(("autocast", autocast_state()))
        return tuple(key)

    def _module_state(self) -> int:
        """The modules' state, with the switches factories and samplers read (the default
        dtype and device, ``fallback_random``), as a small number: the snapshot is retaken
        only after some module attribute was set (``guards.state_version``) or a default
        changed."""
        version = (guards.state_version[0], get_default_dtype(), get_default_device())
        if version != self._state_version:
            snapshot = (guards.module_state(self.fn), INDUCTOR.fallback_random) + version[1:]
            self._state_id = self._state_ids.setdefault(snapshot, len(self._state_ids))
            self._state_version = version
        return self._state_id

    def __call__(self, *args, **kwargs):
        fast = self._fast
        if fast is not None:        # the last entry's generated fast path (fast_call)
            result = fast(args, kwargs)
            if result is not MISS:
                return result
        if profiling.active():      # a profiler records the call as one named range
            opened = profiling.open_range(f"fnx.compile: {_name(self.fn)}")
            try:
                return self._call(*args, **kwargs)
            finally:
                profiling.close_range(opened)
        return self._call(*args, **kwargs)

    def _call(self, *args, **kwargs):
        if self._eager_reason is not None or _tracing() or stance() == "force_eager":
            # Inside another compiled function's trace this one is simply inlined.
            return self.fn(*args, **kwargs)
        try:
            key = self._guards(args, kwargs)
        except SparseNotTraceable as e:     # a sparse argument: this call runs eagerly
            return self._eagerly(e, args, kwargs, for_good=False)
        entry, inputs = self._lookup(key, args, kwargs)
        if entry is None:
            # One thread traces at a time: a trace reads and restores shared Python state
            # (.grad, module attributes), and the cache must not get duplicate entries.
            with self._lock:
                entry, inputs = self._lookup(key, args, kwargs)
                if entry is None:
                    return self._compile_and_run(key, args, kwargs)
        result = entry(args, kwargs, inputs)
        self._arm(entry, key, args, kwargs)
        return result

    def _arm(self, entry, key, args, kwargs) -> None:
        """Make ``entry``'s fast path (``fast_call``, built once per entry) the one the next
        call tries first, valid while the module state and globals stay as they were for
        this call's key."""
        fast = getattr(entry, "fast", False)   # (other kinds of entry have none)
        if fast is None and entry.__class__ is _Entry:
            fast = entry.fast = FastCall.build(self, entry, key, args, kwargs) or False
        if fast and stance() != "force_eager":
            fast.arm(key[-4][1], key[-3][1])       # (the key's module and scope state)
            self._fast = fast

    def _lookup(self, key, args, kwargs):
        """The cached entry for this call and its inputs, or (None, None). Entries under one
        key differ by what they lifted (a parameter's shape, requires_grad), the .grad state
        they read and the guards on their float inputs: the first that matches."""
        for e in self.cache.get(key, ()):
            inputs = e.match(args, kwargs)
            if inputs is not None:
                return e, inputs
        return None, None

    def _compile_and_run(self, key, args, kwargs):
        """Trace and compile a program for this call (under the lock), cache it and run it;
        or run the function eagerly when it cannot be compiled."""
        if guards.has_lazy_modules(self.fn):
            # as torch.compile: lazy modules take their shapes in an eager call first
            return self.fn(*args, **kwargs)
        # the stance (fnx.compiler.set_stance) may forbid tracing again: a compiled program
        # that fits (below, a symbolic trace's) still serves the call
        first = not self._traced
        held = (not first and stance() in ("eager_on_recompile", "fail_on_recompile")) or \
            (not first and DYNAMO.error_on_recompile) or \
            (first and stance() == "eager_then_compile" and not self._ran_eagerly)
        full = self._programs() >= self.cache_limit or held
        if self.dynamic is not False:   # a symbolic trace for sizes that keep changing
            done, result = self._dynamic_shapes.call(key, args, kwargs, not full)
            if done:
                return result
            full = self._programs() >= self.cache_limit or held
        if held:
            return self._held(key, args, kwargs)
        self._traced = True
        reason = None
        if self.cache and (_log.isEnabledFor(logging.INFO) or
                           (full and "cache" not in self._warned)):
            reason = self._recompile_reason(key, args, kwargs)
            _log.info("fnx.compile: recompiling %s: guard failed: %s", _name(self.fn),
                      reason)
        if full:
            # The programs compiled so far keep serving their calls (a shape already
            # compiled stays compiled); a call none of them fits runs eagerly, so memory
            # stays bounded by cache_limit programs.
            self._warn_once("cache", f"fnx.compile: {self.cache_limit} recompilations of "
                                     f"{_name(self.fn)} (cache_limit); calls that no "
                                     f"compiled program fits run eagerly from now on. The "
                                     f"guard that kept failing: {reason}")
            return self.fn(*args, **kwargs)
        failed = None
        try:
            entry = self._compile(args, kwargs)
        except DataDependentError as e:
            if self.fullgraph:
                raise
            self._warn_once("data", f"fnx.compile: {e}; running {_name(self.fn)} eagerly")
            self._eager_reason = str(e)
            return self.fn(*args, **kwargs)
        except SparseNotTraceable as e:     # a sparse tensor read or made inside
            return self._eagerly(e, args, kwargs, for_good=True)
        except Exception as e:
            if getattr(e, "_fnx_raised_in_trace", False) and not self.fullgraph:
                failed = e      # (handled outside this block: eager's own error unchained)
            elif not DYNAMO.suppress_errors or self.fullgraph:
                raise
            else:
                # (fnx._dynamo.config.suppress_errors: run as written, as torch.compile
                # does)
                message = (f"fnx.compile: compiling {_name(self.fn)} failed "
                           f"({type(e).__name__}: {e}); fnx._dynamo.config.suppress_errors "
                           f"is set, so it runs eagerly")
                self._warn_once("suppressed", message)
                self._eager_reason = message
                return self.fn(*args, **kwargs)
        if failed is not None:
            return self._rerun_eagerly(failed, args, kwargs)
        if entry is None:
            return self.fn(*args, **kwargs)
        if not entry.one_shot:
            self.cache.setdefault(key, []).append(entry)
            return entry(args, kwargs, None)
        return entry(args, kwargs, entry.inputs_as_traced(args, kwargs))

    def _rerun_eagerly(self, error, args, kwargs):
        """The trace raised ``error`` (its changes undone): run the function eagerly, so a
        call with bad input raises what eager raises and leaves what eager leaves (the
        ``.grad`` a backward before the bad line set, say). If eager runs through, the
        trace met something only tracing cannot do, and later calls run eagerly too."""
        result = self.fn(*args, **kwargs)
        message = (f"fnx.compile: tracing {_name(self.fn)} raised {type(error).__name__} "
                   f"({error}), which running it eagerly does not; running it eagerly")
        self._warn_once("trace", message)
        self._eager_reason = message
        return result

    def _held(self, key, args, kwargs):
        """A call that would trace while the stance forbids it: ``eager_then_compile``'s
        first call and ``eager_on_recompile`` run eagerly, ``fail_on_recompile`` (or
        ``fnx._dynamo.config.error_on_recompile``) raises, naming the guard that failed."""
        if stance() == "eager_then_compile":
            self._ran_eagerly = True
            return self.fn(*args, **kwargs)
        if stance() == "eager_on_recompile":
            return self.fn(*args, **kwargs)
        raise RuntimeError(f"fnx.compile: {_name(self.fn)} must be recompiled "
                           f"({self._recompile_reason(key, args, kwargs)}), and the compiler "
                           f"is set to fail on recompiles (fnx.compiler.set_stance"
                           f"('fail_on_recompile') or fnx._dynamo.config.error_on_recompile)")

    def _programs(self) -> int:
        """How many programs the cache holds (an entry with graph breaks: one per
        segment), what ``cache_limit`` bounds."""
        return sum(getattr(e, "size", 1) for v in self.cache.values() for e in v) + \
            self._dynamic_shapes.traces

    def dynamic_traces(self) -> int:
        """How many symbolic traces (``fnx.lower.dynamic_shapes``) serve this function's
        dynamic sizes; each new size of one lowers its graph without tracing again."""
        return self._dynamic_shapes.traces

    def _continue(self, args, kwargs, known, why):
        """A new trace for a call of a ``BreakEntry`` that no branch fits (``why``), given
        the input and break values the call computed (``known``); None: run it eagerly."""
        with self._lock:
            if self._programs() >= self.cache_limit:
                self._warn_once("cache", f"fnx.compile: {self.cache_limit} programs of "
                                         f"{_name(self.fn)} (cache_limit); calls that no "
                                         f"compiled program fits run eagerly from now on. "
                                         f"The last guard that failed: {why}")
                return None
            _log.info("fnx.compile: tracing %s again: a graph break's value took a new "
                      "branch: %s", _name(self.fn), why)
            return self._compile(args, kwargs, known=known)

    def _add_entry(self, old, new):
        """Cache ``new`` beside ``old`` (a trace whose prefix differs from ``old``'s)."""
        with self._lock:
            for entries in self.cache.values():
                if any(e is old for e in entries):
                    entries.append(new)
                    return

    def _segment_entry(self, graph) -> "_Entry":
        """A segment of a trace cut at graph breaks (``graph_breaks``), optimized,
        partitioned and compiled."""
        optimized = eliminate_common_subexpressions(eliminate_dead_code(graph))
        parts = partition(optimized, lambda n: self.target.has_rule(n.target))
        if parts.fallback_ops:
            names = ", ".join(str(op) for op in parts.fallback_ops)
            self._warn_once(("fallback", names),
                            f"fnx.compile: {names} has no {self.target.name!r} lowering; it "
                            f"runs eagerly between compiled regions")
        entry = _Entry(self.target, optimized, parts, optimized.lifted, 0,
                       {"functional": graph, "optimized": optimized})
        if not self.value_checks:
            for program in entry.programs():
                program.check_values = False
        return entry

    def _recompile_reason(self, key, args, kwargs) -> str:
        """Why no cached program fits this call, in words (for logs and warnings)."""
        same = self.cache.get(key)
        if same:
            why = []
            same[-1].match(args, kwargs, why)
            return why[0] if why else "unknown"
        if not self.cache:      # (the traces so far made programs for one call each)
            return "no program of an earlier trace is kept"
        old = list(self.cache)[-1]
        names = [f"argument {i}" for i in range(len(args))] + \
                [f"argument {k!r}" for k in kwargs] + ["tensors given twice"] + \
                ["module state", "globals and closure", "grad mode", "autocast state"]
        for name, a, b in zip(names, old, key):
            if a != b:
                if name == "module state":      # (a _module_state snapshot)
                    was, now = (next(k for k, v in self._state_ids.items() if v == x[1])
                                for x in (a, b))
                    return next((f"{what}: {x} -> {y}" for what, x, y in zip(
                        ("fnx._inductor.config.fallback_random", "the default dtype",
                         "the default device"), was[1:], now[1:]) if x != y),
                        None) or guards.describe_module_change(was[0], now[0])
                if name == "globals and closure":
                    return f"{name}: {guards.describe_scope_change(a[1], b[1])}"
                return guards.describe_difference(a, b, name)
        return f"call structure: {guards.describe_difference(old, key)}"

    def entries(self) -> list:
        """Every compiled specialization so far (one per guard set; a symbolic trace's
        program answers several call keys, listed once)."""
        return list({id(e): e for v in self.cache.values() for e in v}.values())

    def _eagerly(self, error, args, kwargs, for_good):
        """Run a call that met a sparse tensor eagerly, as ``torch.compile`` does (compiled
        programs hold dense arrays only); ``for_good``: every later call too (the function
        itself reads or makes one), else only calls with sparse arguments. With
        ``fullgraph=True`` the error is raised instead."""
        if self.fullgraph:
            raise error
        what = str(error) if str(error).startswith("fnx.compile") else f"fnx.compile: {error}"
        self._warn_once("sparse", f"{what}; running {_name(self.fn)} eagerly "
                                  f"{'from now on' if for_good else 'for such calls'}")
        if for_good:
            self._eager_reason = str(error)
        return self.fn(*args, **kwargs)

    def _warn_once(self, what, message):
        if what not in self._warned:
            self._warned.add(what)
            warnings.warn(message, stacklevel=user_stacklevel())

    # -- compiling
    def _compile(self, args, kwargs, explain=False, known=None, pinned=()) -> "_Entry":
        # what fallback_random's samplers drew while tracing is drawn again by a function
        # that runs eagerly instead, or by explain()'s caller: undone then
        draws = Draws()
        try:
            entry = self._trace_entry(args, kwargs, explain, known, pinned, draws)
        except BaseException:
            draws.undo()
            raise
        if entry is None or explain:
            draws.undo()
        return entry

    def _trace_entry(self, args, kwargs, explain, known, pinned, draws) -> "_Entry":
        stages = {}
        flat, rebuild = flatten_call(args, kwargs)
        def call(*ts):
            if pinned:      # (passed tensors the function also reads from outside)
                ts = [flat[k] if k in pinned else t for k, t in enumerate(ts)]
            a, kw = rebuild(ts)
            return self.fn(*a, **kw)
        names = [f"arg{i}" for i in range(len(flat))]
        roots = guards.roots_of(self.fn) + [args, kwargs]
        if explain:     # the user's own ops, before functionalization and decomposition
            try:
                with no_grad():
                    stages["traced"] = trace(call, *flat, input_names=names,
                                             lift_captured=True)
            except DataDependentError:
                if self.fullgraph:
                    raise
                # traced again below with the values the graph breaks hand over
            except RuntimeError:    # a training step: its backward() needs grad mode
                try:
                    traced = trace(call, *flat, input_names=names, lift_captured=True,
                                   capture_grads=True, stored_roots=roots)
                    rollback(traced.python_writes)
                    stages["traced"] = traced
                except DataDependentError:
                    if self.fullgraph:
                        raise
        # Data-dependent points (item(), bool(t), tolist()) break the graph there
        # (graph_breaks); with fullgraph=True they raise.
        breaks = None if self.fullgraph else BreakTracer(
            self._segment_entry, flat, known, draws if INDUCTOR.fallback_random else None)
        if breaks is None and INDUCTOR.fallback_random:
            self._warn_once("fallback_random", "fnx.compile(fullgraph=True): "
                            "fnx._inductor.config.fallback_random needs graph breaks (a "
                            "sampler runs eager's kernel there); this program draws its "
                            "random numbers in the program, not eager's")
        # Autograd (above the Tracer key) runs during the trace, so a backward() inside the
        # function is recorded too, and the .grad it writes become outputs.
        runs, suspended = tls.state.backward_runs, tls.state.suspensions
        graph = trace(call, *flat, input_names=names, lift_captured=True, functional=True,
                      decompose_to=self.decompose, capture_grads=True, stored_roots=roots,
                      breaks=breaks, places=guards.tensor_places(self.fn), same_inputs=True,
                      arg_writes=rebuild.writes)
        broken = breaks is not None and bool(breaks.records)
        # Tensors the code stored that carry a gradient (a loss module's ``self.loss``,
        # summed and differentiated after the call) are differentiable outputs too.
        grad_stores = {(_place(c), key) for c, key, t, _ in graph.stored if t.requires_grad}
        differentiable = (graph.output_requires_grad or bool(grad_stores)) and \
            tls.state.backward_runs == runs
        # State made outside the trace (an optimizer's first step): Python took a branch
        # the guards cannot see, so this program is for this call only.
        one_shot = tls.state.suspensions != suspended
        # ``outs.append(y)``, ``metrics["loss"] = l``: the trace wrote a copy of the
        # caller's container (its tensors were the trace's); a tensor the program computes
        # is replayed there as a stored output (``ArgPlace``), anything else is not
        arg_stores = any(isinstance(c, ArgPlace) for c, *_ in graph.stored)
        if graph.arg_write_refused or (broken and arg_stores):
            return self._give_up(graph, "argument", "changes a list, dict or object passed "
                                 "to it in a way a compiled program cannot replay on the "
                                 "caller's object (only setting or appending a tensor it "
                                 "computed is replayed" +
                                 (", and not across a graph break)" if broken else ")"))
        pins = {("arg", k) for k in pinned}
        both = [k for k in passed_and_captured(graph, flat) if k not in pinned]
        if both and not (pinned or broken):
            # ``step(model, params)`` with ``clip_grad_norm_(params)``: the trace saw a
            # placeholder and the model's own parameter, two tensors for one. Trace again
            # with the caller's tensor itself at those places (captured once); the entry
            # then fits only calls that pass these very tensors (``_Entry.pinned``).
            rollback(graph.python_writes)
            return self._compile(args, kwargs, explain, known, frozenset(both))
        if both or (pinned and broken):     # (a BreakEntry has no identity guard)
            t = flat[(both or sorted(pinned))[0]]
            return self._give_up(graph, "passed and read", f"reads a {tuple(t.shape)} "
                                 f"tensor both through an argument and from outside (a "
                                 f"module's parameter, a global), which a program would "
                                 f"see as two tensors")
        if graph.captured_history:
            # ``cache[pos] = k`` with k requiring grad: eager gives the buffer autograd
            # history (a grad_fn reaching the parameters), which no program output carries
            t = graph.captured_history[0]
            return self._give_up(graph, "history", f"writes a value that requires grad into "
                                 f"a {tuple(t.shape)} tensor it reads from outside (a "
                                 f"buffer, a global), which gives that tensor autograd "
                                 f"history; a compiled program does not (use "
                                 f"torch.no_grad() for a cache)")
        if not self._stored_once and any(not isinstance(c, ArgPlace)
                                         for c, *_ in graph.stored):
            # The traced code stored tensors on Python objects (a cache, lazily made state):
            # the next call's Python sees them and may branch differently, so this program
            # is for this call only. A second trace that stores again is kept, and its
            # stores are replayed on every call.
            self._stored_once = one_shot = True
        if differentiable and broken:
            # (a vjp program per segment, chained as autograd nodes, is not built)
            rollback(graph.python_writes)
            where = breaks.records[0]
            self._warn_once("data", f"fnx.compile: {_name(self.fn)}'s outputs require grad "
                                    f"and it reads a tensor's value ({where}), where a graph "
                                    f"break is not supported; running {_name(self.fn)} "
                                    f"eagerly")
            self._eager_reason = f"differentiable with a graph break at {where}"
            return None
        if differentiable:
            # Outputs that carry a gradient and no backward inside: the caller differentiates
            # the result. Trace the forward again (from the same Python state) with its
            # backward (see _forward_for_backward).
            result_grad = graph.result_grad
            rollback(graph.python_writes)
            graph = self._forward_for_backward(call, flat, names, roots, rebuild.writes)
            if graph is None:
                return None
            graph.stored_grad = [k for c, key, _, k in graph.stored
                                 if (_place(c), key) in grad_stores]
            graph.result_grad = result_grad
        if getattr(graph, "opaque_result", None) is not None:
            return self._give_up(graph, "result", f"returns an instance of "
                                 f"{graph.opaque_result} holding a tensor it computed, which "
                                 f"a compiled program cannot give back; return tensors in "
                                 f"tuples, lists, dicts or dataclasses")
        # (a pinned argument's placeholder is unread: its tensor is the captured one)
        shared = aliased_input([None if source in pins else v for v, source in
                                zip(traced_inputs(graph, flat), graph.input_sources)],
                               [i for i, _ in getattr(graph, "mutated_inputs", [])])
        if shared is not None:
            # a base and its view as two inputs: the program would treat them as
            # independent, and a write through one would not be seen through the other
            return self._give_up(graph, "aliased", "writes a tensor that shares memory with "
                                 "another of its inputs (a view and its base)", for_good=False)
        if not self._python_writes_ok(graph, one_shot):
            return None     # (given up)
        if broken:
            stages["functional"] = graph
            if explain and "traced" not in stages:
                if all(r.kind in ("item", "tolist", "numpy") for r in breaks.records):
                    replay = BreakTracer(None, flat, ({}, [r.value for r in breaks.records]))
                    with no_grad():
                        traced = trace(call, *flat, input_names=names, lift_captured=True,
                                       breaks=replay)
                else:   # (an op's break is a prim's; the user's ops differ: not replayed)
                    traced = graph
                stages = {"traced": traced, **stages}
            entry = BreakEntry.build(self, flatten_call, graph, breaks, self._segment_entry,
                                     stages)
            entry.one_shot = one_shot
            return entry
        lifted = graph.lifted
        stages["functional"] = graph
        graph = eliminate_common_subexpressions(eliminate_dead_code(graph))
        stages["optimized"] = graph
        if getattr(graph, "backward", None) is not None:    # fnx's backward (graph.joint)
            stages["backward"] = graph.backward.graph
        parts = partition(graph, self._supports())
        if parts.fallback_ops:
            names = ", ".join(str(op) for op in parts.fallback_ops)
            if self.fullgraph:
                raise RuntimeError(f"fnx.compile(fullgraph=True): {names} cannot be lowered "
                                   f"to the {self.target.name!r} target")
            self._warn_once(("fallback", names),
                            f"fnx.compile: {names} has no {self.target.name!r} lowering; it "
                            f"runs eagerly between compiled regions")
        if differentiable:
            if parts.fallback_ops or len(parts.regions) != 1 or \
                    not hasattr(self.target, "vjp"):
                rollback(graph.python_writes)       # the eager run makes them once
                self._warn_once("grad", f"fnx.compile: {_name(self.fn)}'s outputs require grad "
                                        f"but it does not compile to one {self.target.name!r} "
                                        f"program; it runs eagerly so autograd can record it")
                self._eager_reason = "differentiable with eager parts"
                return None
            entry = _GradEntry(self.target, graph, parts, lifted, len(flat), stages)
        else:
            entry = _Entry(self.target, graph, parts, lifted, len(flat), stages)
        entry.one_shot = one_shot
        entry.pinned = [(entry.sources.index(("arg", k)), flat[k]) for k in sorted(pinned)]
        if not self.value_checks:       # options={"value_checks": False}
            for program in entry.programs():
                program.check_values = False
        return entry

    def _supports(self):
        """Whether the target lowers a call node (its own test, else: has a rule)."""
        return getattr(self.target, "supports", None) or \
            (lambda n: self.target.has_rule(n.target))

    def _forward_for_backward(self, call, flat, names, roots, arg_writes) -> Graph:
        """The trace of a forward whose outputs the caller differentiates, with its backward.

        First choice: a joint trace split in two (``fnx.graph.joint``), whose backward is
        fnx's own derivative formulas, as eager's. Where that cannot be compiled as one
        program (a formula fnx lacks, one that does not lower, a value laid out over
        devices) the forward alone, whose backward is then JAX's vjp of it
        (``jax_autograd.compile_vjp``): traced in grad mode, so that where autograd stops
        (detach, no_grad blocks, .data) the trace stops JAX too (TracingMode._cut).
        None where the function must run eagerly (``fnx.graph.joint.EagerBackward``)."""
        options = dict(input_names=names, lift_captured=True, functional=True,
                       decompose_to=self.decompose, stored_roots=roots,
                       places=guards.tensor_places(self.fn), same_inputs=True,
                       arg_writes=arg_writes)
        if hasattr(self.target, "joint") and \
                not any(isinstance(t, Tensor) and layout_of(t) is not None for t in flat):
            try:
                graph = trace(call, *flat, joint=True, **options)
            except EagerBackward as e:    # (the trace undid what it changed)
                self._warn_once("eager backward", f"fnx.compile: {_name(self.fn)} has {e}; "
                                                  f"it runs eagerly so that its backward is "
                                                  f"its own")
                self._eager_reason = str(e)
                return None
            except Exception as e:
                why = f"{type(e).__name__}: {e}"
            else:
                why = self._split(graph)
                if not isinstance(why, str):
                    return why
                rollback(graph.python_writes)
            _log.info("fnx.compile: %s's backward is JAX's vjp of its forward, not fnx's "
                      "formulas: %s", _name(self.fn), why)
        return trace(call, *flat, stop_gradients=True, **options)

    def _split(self, graph):
        """The forward of joint ``graph`` holding its backward (``graph.backward``), or why
        it cannot be one program (a string)."""
        supports = self._supports()
        missing = {str(n.target) for n in graph.calls() if not supports(n)}
        if missing:
            return f"no {self.target.name!r} lowering for {', '.join(sorted(missing))}"
        if any(layout_of(t) is not None for t in graph.lifted):
            return "a tensor it reads is laid out over devices"
        split = split_joint(eliminate_common_subexpressions(eliminate_dead_code(graph)))
        if split is None:
            return "a value its backward reads has several outputs"
        forward, forward.backward = split
        return forward

    def _python_writes_ok(self, graph, one_shot) -> bool:
        """Whether the program may stand for the Python state the trace changed. A program
        that runs once (``one_shot``) may: the trace made the changes one eager run would
        (floats it wrote are made plain). A program for every call may not, except tensors
        it stored (outputs, replayed): a scheduler's ``step()`` or a counter in the function
        would happen only when traced. Then the changes are undone and the function runs
        eagerly from now on (``fullgraph=True``: an error)."""
        writes = [c for c in graph.python_writes if not c[4]]
        if not writes or one_shot:
            settle(graph.python_writes)
            return True
        where = describe_change(writes[0]) + (f" and {len(writes) - 1} more"
                                              if len(writes) > 1 else "")
        self._give_up(graph, "python", f"changes Python state that a compiled program "
                      f"cannot replay ({where}); keep such updates (a scheduler's step(), a "
                      f"Python counter) outside the compiled function")
        return False

    def _give_up(self, graph, what, problem, for_good=True):
        """Refuse a trace that no program can stand for (``problem``, in words, after the
        function's name): its Python changes undone, the call (``for_good``: every call
        from now on) run eagerly with one warning per ``what``; with ``fullgraph=True`` a
        RuntimeError. None (no entry) for ``_compile`` to return."""
        rollback(graph.python_writes)
        message = f"fnx.compile: {_name(self.fn)} {problem}"
        if self.fullgraph:
            raise RuntimeError(message)
        self._warn_once(what, f"{message}; running "
                              f"{'it' if for_good else 'such calls'} eagerly")
        if for_good:
            self._eager_reason = message
        return None

    def explain(self, *args, **kwargs) -> "CompileReport":
        """What compiling for these arguments does: the graph at each stage, the regions,
        the ops left to eager execution and how XLA fused each region."""
        entry = self._compile(args, kwargs, explain=True)
        return CompileReport(entry, entry.flat_inputs(args, kwargs))


# ----------------------------------------------------------------------------- running

class _Entry:
    """One compiled specialization: the program steps and how to feed them.

    Everything a call needs beyond reading its arguments is planned here, once: which
    placeholder feeds each program input, which outputs become results, ``.grad`` values
    or the new storage of the inputs the program overwrote, and which of those inputs'
    buffers may be donated. A function compiled to one program (no eager op between
    regions) runs on arrays straight (``ProgramPlan``); otherwise every step runs on
    tensors (``_run``).
    """

    def __init__(self, target, graph: Graph, parts: Partition, lifted, n_explicit, stages):
        self.target = target
        self.graph = graph
        self.parts = parts
        self.lifted = lifted            # tensors read from outside (parameters, buffers)
        self.sources = graph.input_sources
        self.lifted_meta = [lifted_key(t) for t in lifted]
        # .grad None-ness the trace decided on (read before written): the only .grad state
        # that selects a program, so a step that sets .grad is not traced a second time
        self.grad_reads = getattr(graph, "grad_reads", [])
        # .grad values the program reads (input sources ("grad", owner)): what they were
        self.grad_inputs = [(t, lifted_key(grad_value(t))) for kind, t in self.sources
                            if kind == "grad"]
        # tensors read from an option at call time (sources ("item", read)): what they were
        self.item_inputs = [(read, lifted_key(read())) for kind, read in self.sources
                            if kind == "item"]
        self.guards = getattr(graph, "guards", [])
        self.scalar_inputs = [i for i, (kind, _) in enumerate(self.sources) if kind == "scalar"]
        # Guards on float inputs are rechecked only for inputs whose value changed since
        # the last call they held for (a scheduler changes lr, not momentum)
        self.guard_inputs = sorted({i for g in self.guards if g.deps for i in g.deps})
        self.input_guards = [g for g in self.guards if g.deps]   # (read when values change)
        always = [g for g in self.guards if g.deps is None]
        # plain values read from dicts (optimizer options), compared inline
        self.read_guards = [(*g.read, *g.expected, g) for g in always
                            if g.read is not None and isinstance(g.read[0], dict)]
        self.always_guards = [g for g in always if g.read is None or
                              not isinstance(g.read[0], dict)]
        self._held_for = None       # the guard inputs' values at the last match
        self.n_explicit = n_explicit
        self.stages = stages
        self.places = graph.placeholders()
        out = graph.output_node.args[0]
        mutated = getattr(graph, "mutated_inputs", [])
        grads = getattr(graph, "grad_writes", [])
        self.writeback = [(i, out[k]) for i, k in mutated]
        # inputs written, checked per call for sharing memory with another input when an
        # argument is among them (captured tensors' sharing was checked when traced)
        self.written_inputs = [i for i, _ in mutated]
        self.written_args = [i for i in self.written_inputs if self.sources[i][0] == "arg"]
        # New values of overwritten inputs first among a region's outputs (Region.first),
        # so each input is updated in place
        written = [n for _, n in self.writeback]
        self.steps = [(r, target.compile(r.graph())) if isinstance(r, Region) else (r, None)
                      for r in (s.first(written) if isinstance(s, Region) else s
                                for s in parts.steps)]
        self.grad_writes = [(i, out[k] if k is not None else None) for i, k in grads]
        self.stored = [(c, key, t, out[k]) for c, key, t, k in getattr(graph, "stored", [])]
        self.result = out[0] if mutated or self.stored or \
            any(k is not None for _, k in grads) else out
        # floats and input tensors the function returned, given back as eager does
        self.template = getattr(graph, "result_template", None)
        self.calls = 0
        self.constants = {n: n.target for n in graph.nodes if n.kind == "constant"}
        self._flat_args = None          # whether the arguments are tensors only (set lazily)
        self._plan = ProgramPlan.of(self)
        self.fast = None                # its FastCall once built; False: none covers it
        # (placeholder index, tensor) where the trace read the caller's tensor itself, as
        # the one the function also reads from outside (``_compile``'s ``pinned``; the
        # placeholder itself is unread)
        self.pinned = []

    def programs(self) -> list:
        """The compiled programs this entry runs (one per region)."""
        return [p for _, p in self.steps if p is not None]

    def match(self, args, kwargs, why=None):
        """The program's inputs for this call if this entry's guards hold, else None; then
        the failed guard, in words, is appended to ``why`` when it is a list (worded only
        on failure: this runs on every call)."""
        for t, (shape, dtype, device, grad, layout) in zip(self.lifted, self.lifted_meta):
            if storage_shape(t) != shape or \
                    t._dtype is not dtype or bool(t._ks & AUTOGRAD_BITS) is not grad or \
                    (t._device is not device and t._device != device) or \
                    (layout is not None or t.__class__._keep_resident) and \
                    layout_of(t) != layout:
                return _failed(why, lambda: f"a tensor the function reads changed: "
                                            f"{(shape, dtype, device, grad)} -> "
                                            f"{lifted_key(t)}")
        for t, none in self.grad_reads:
            if (t._grad is None) is not none:
                return _failed(why, lambda: f".grad of a {tuple(t.shape)} tensor was "
                                            f"{'None' if none else 'set'} when traced, now "
                                            f"it is not")
        for t, key in self.grad_inputs:
            if lifted_key(grad_value(t)) != key:
                return _failed(why, lambda: f"the .grad the function reads changed: {key} "
                                            f"-> {lifted_key(grad_value(t))}")
        for read, key in self.item_inputs:
            v = read()
            if not isinstance(v, Tensor) or lifted_key(v) != key:
                return _failed(why, lambda: f"the tensor read from {read.key!r} changed: "
                                            f"{key} -> {v!r}")
        inputs = self.flat_inputs(args, kwargs)
        for i, t in self.pinned:
            if inputs[i] is not t:
                return _failed(why, lambda: f"input {self.places[i].name} is not the tensor "
                                            f"the function also reads from outside")
        if self.written_args and aliased_input(inputs, self.written_inputs) is not None:
            return _failed(why, lambda: "a tensor the function writes shares memory with "
                                        "another of its inputs")
        for i in self.scalar_inputs:
            if type(inputs[i]) is not float:
                return _failed(why, lambda: f"input {self.places[i].name} is no longer a "
                                            f"float: {inputs[i]!r}")
        for container, key, kind, value, g in self.read_guards:
            now = _dict_get(container, key, _MISSING)   # (as input_sources.Read: no hooks)
            if type(now) is not kind or now != value:
                return _failed(why, lambda: f"{g.what} was {g.expected!r}")
        for g in self.always_guards:
            if not g.holds(inputs):
                return _failed(why, lambda: f"{g.what} was {g.expected!r}")
        if self.guard_inputs and not self.input_guards_hold(inputs, why):
            return None
        return inputs

    def input_guards_hold(self, inputs, why=None) -> bool:
        """Whether the guards on float inputs hold; only those reading a value that changed
        since the last call they held for are evaluated."""
        values = tuple([inputs[i] for i in self.guard_inputs])
        held = self._held_for
        if values != held:
            changed = set(self.guard_inputs) if held is None else \
                {i for i, a, b in zip(self.guard_inputs, values, held) if a != b}
            for g in self.input_guards:
                if not g.deps.isdisjoint(changed) and not g.holds(inputs):
                    _failed(why, lambda: f"{g.what} was {g.expected!r}")
                    return False
            self._held_for = values
        return True

    def flat_inputs(self, args, kwargs):
        """The graph's inputs in placeholder order: call arguments, captured tensors read
        now (so in-place updates are seen), and a fresh random key per random op."""
        flat = self._flat_args
        if flat is None:
            flat = self._flat_args = not kwargs and all(isinstance(a, Tensor) for a in args)
        flat = args if flat else flatten_call(args, kwargs)[0]
        out = []
        for source in self.sources:
            kind, src = source
            if kind == "arg":
                out.append(flat[src])
            elif kind == "lifted":
                out.append(src)
            else:
                out.append(source_value(source))
        return out

    def inputs_as_traced(self, args, kwargs):
        """The inputs of the call this entry was traced on, for a program run for that call
        only (``one_shot``): values read from Python state are what the trace read, not what
        the traced code left there (a scheduler's ``step()`` after ``opt.step()``)."""
        inputs = self.flat_inputs(args, kwargs)
        for i, v in getattr(self.graph, "values_read", {}).items():
            inputs[i] = v
        return inputs

    def __call__(self, args, kwargs, inputs=None):
        if inputs is None:
            inputs = self.flat_inputs(args, kwargs)
        if self._plan is not None:
            result = self._plan.run(inputs)
        else:
            with no_grad():     # the program's own backward, if any, is in the graph
                result = self._run(inputs, (args, kwargs))
        return result if self.template is None else \
            restore_result(result, self.template, inputs)

    def _run(self, inputs, call=None):
        ok = self.rebindable(inputs)
        env = dict(zip(self.places, inputs))
        env.update(self.constants)
        for step, fn in self.steps:
            if fn is not None:
                outs = fn(*[env[i] for i in step.inputs])
                env.update(zip(step.outputs, outs))
            else:
                env[step] = step.target(*map_nodes(step.args, env.__getitem__),
                                       **map_nodes(step.kwargs, env.__getitem__))
                if isinstance(env[step], (tuple, list)):
                    for u in step.users:
                        if u.kind == "getitem":
                            env[u] = env[step][u.args[1]]
        self.write_back(inputs, env, ok, call)
        return map_nodes(self.result, env.__getitem__)

    def replay_stores(self, env, call=None):
        """Put each tensor the traced code stored on a Python object there: the trace's
        own tensor becomes real on the first call; later calls store a new tensor, as the
        Python code would have. A write into the call's own containers (an ``ArgPlace``;
        the trace wrote a copy) is made in each call's (``call``: its args and kwargs)."""
        first = self.calls == 0
        self.calls += 1
        for container, key, t, node in self.stored:
            value = env[node]
            if not value.requires_grad:     # (a _GradEntry's stores keep their history)
                value = value.detach()
            if isinstance(container, ArgPlace):
                container.write(*call, key, value)
            elif first or container is None:
                become(t, value)
            else:
                store(container, key, value)
        if self.stored:
            guards.bump()

    def rebindable(self, inputs) -> list:
        """Per overwritten input, whether its storage may be rebound (asked before running:
        a running program holds its NumPy inputs)."""
        return [rebindable(inputs[i]) for i, _ in self.writeback]

    def write_back(self, inputs, env, ok, call=None):
        """Give the inputs the program overwrote their new values: the result's array
        becomes the input's storage where nothing else shares it (``ok``, from
        ``rebindable``), else it is copied in; then assign the ``.grad`` the program left."""
        for (i, node), free in zip(self.writeback, ok):
            t, value = inputs[i], env[node]
            arr = array_of(value) if free else None
            if arr is not None and value._dtype is t._dtype and \
                    storage_shape(value) == storage_shape(t):
                rebind(t, arr)
            else:
                with no_grad():
                    t.copy_(value)
        for i, node in self.grad_writes:
            g = env[node] if node is not None else None
            set_grad(inputs[i], g)
        self.replay_stores(env, call)


class _GradEntry(_Entry):
    """A compiled forward whose outputs require grad: the forward program returns the
    outputs and the residuals; the autograd node it records runs the backward program on
    them (the forward is not recomputed). The backward is fnx's formulas (``graph.backward``
    from a split joint graph), else a jitted ``jax.vjp`` of the forward."""

    def __init__(self, target, graph, parts, lifted, n_explicit, stages):
        super().__init__(target, graph, parts, lifted, n_explicit, stages)
        backward = getattr(graph, "backward", None)
        if backward is not None:        # fnx's own backward (fnx.graph.joint)
            self.whole = target.compile(backward.program)
            self.backward = target.compile(backward.graph)
            outs = []
            _collect(graph.output_node.args[0], outs)
            self.vjp = target.joint(self.whole, self.backward, backward, outs)
        else:
            self.whole = target.compile(graph)
            self.backward = None
            self.vjp = target.vjp(self.whole, graph)
        self.hows = feed_modes(self.sources)

    def programs(self) -> list:
        return [self.whole] + ([self.backward] if self.backward is not None else [])

    def __call__(self, args, kwargs, inputs=None):
        if inputs is None:
            inputs = self.flat_inputs(args, kwargs)
        ok = self.rebindable(inputs)
        env, node = self.vjp(inputs, self.hows)
        self.write_back(inputs, env, ok, (args, kwargs))
        result = map_nodes(self.result, env.__getitem__)
        return result if self.template is None else \
            restore_result(result, self.template, inputs)


def _tracing() -> bool:
    mode = current_mode()
    return mode is not None and isinstance(mode, TracingMode)


# ----------------------------------------------------------------------------- tracing

def _place(container):
    """What names a store's container across two traces of one call: an argument's path
    (each trace writes its own copy), else the object."""
    return container.path if isinstance(container, ArgPlace) else id(container)


def _failed(why, reason):
    """``match``'s answer for a failed guard: None, with the reason worded into ``why``."""
    if why is not None:
        why.append(reason())
    return None


def _name(fn):
    return getattr(fn, "__qualname__", None) or type(fn).__name__
