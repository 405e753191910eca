"""Graph breaks: ``fnx.compile`` of a function that asks for a tensor's Python value.

``loss.item()``, ``bool(t)`` (``if (x > 0).all():``), ``int(t)``, ``t.tolist()`` need data
a trace does not have. Instead of running the whole function eagerly, the trace *breaks*
there (``fullgraph=True`` still raises, naming the line):

- **While tracing** (a real call: the real inputs exist), ``BreakTracer.value`` compiles
  the program recorded so far, cut down to the value asked for, runs it on the call's
  inputs and hands the concrete value to Python; the trace goes on. A float from ``item()``
  is handed as a ``SymFloat`` (``fnx.graph.symbolic``) standing for a new program input,
  so arithmetic on it is recorded, a float returned from the function is recomputed from
  it, and only Python decisions on it (``if loss.item() > 5``) become guards: a changing
  loss does not recompile. Any other value (an int, a bool, a list) is guarded exactly.
  Each break adds a float64 placeholder (source ``("break", k)``) to the trace. An op
  whose output shape depends on data (``nonzero``, a boolean mask's ``x[mask]``: no meta
  shape) breaks the same way (``BreakTracer.op``): it runs eagerly on the real values of
  its arguments, and its result is a placeholder of the continuation, its shape guarded.
- **After the trace**, ``BreakEntry.build`` cuts the one linear graph at the breaks into
  *segments*: segment k computes the value of break k+1 plus every value of it that later
  segments read (its live-outs); the last segment computes the function's outputs, and it
  alone writes inputs back, assigns ``.grad`` and replays stores (an ``_Entry`` of
  ``compiled_function``, with the earlier segments' live-outs as extra inputs). A backward
  or optimizer step after a break lands in the last segment, reading the saved values of
  the forward as live-outs.
- **At run time** the entry is a small tree: each segment's step runs, its value is
  handed to the branch whose checks hold (the guards the trace recorded after the break,
  the tensors read since); no branch fits -> the function is traced again with the values
  this call already computed (the prefix is deterministic), the new continuation is
  grafted as a branch, and the call finishes on it. ``cache_limit`` counts every segment.

Segments are matched across traces by node position in the raw trace graph (identical up
to the first break whose branch differs, checked by a signature); a shared segment that a
new branch needs more values from is rebuilt with the union of live-outs.

Not handled (the function runs eagerly as before): ``.numpy()`` of a trace tensor, a
data-dependent op with several outputs, and functions whose outputs require grad
(compiled as one ``jax.vjp`` program; a vjp per segment chained as autograd nodes is not
built). ``float(t)`` specializes (``SymFloat.__float__`` guards the exact value): hand
``t.item()`` to arithmetic instead.
"""
from __future__ import annotations

import contextlib

import numpy as np

from ..core import tls
from ..core.dispatch_key import DispatchKey
from ..core.grad_mode import no_grad
from ..core.layout import check_strided
from ..core.device import CPU, canonical
from ..core.random import default_generator_for
from ..core.tensor import Tensor
from ..core.meta_array import meta_tensor
from ..graph.graph import Graph, Node, NodeMeta, map_nodes, upstream
from ..graph.guards import Guard
from ..graph.results import leaves, restore_result
from ..graph.input_sources import READ_WHEN_CALLED, source_value
from ..graph.user_frames import user_frame
from .call_key import lifted_key

__all__ = ["BreakTracer", "BreakEntry", "Break", "Draws", "outside_trace", "source_value"]


class Break:
    """One data-dependent point of a trace: ``cut`` (the graph's node count when it was
    reached; the break's placeholder is at that position), ``nodes`` (the traced values it
    reads), ``finish`` (their real values -> the value handed over), ``index`` (the
    placeholder's input position), ``kind`` (``"item"``, ``"tolist"`` or the op's name),
    ``where`` (``file:line: code``), ``guards`` (how many guards were recorded before it),
    ``value`` (this trace's concrete value), ``sampler`` (a ``fallback_random`` sampler)."""
    __slots__ = ("cut", "nodes", "finish", "index", "kind", "where", "guards", "value",
                 "sampler")

    def __init__(self, cut, nodes, finish, index, kind, where, guards, value):
        self.cut, self.nodes, self.finish, self.index = cut, nodes, finish, index
        self.kind, self.where, self.guards, self.value = kind, where, guards, value
        self.sampler = False    # a fallback_random sampler (BreakTracer.sampler)

    def __str__(self):
        return f"{self.kind}() at {self.where}"


class BreakTracer:
    """The tracing mode's handler of data-dependent points (``trace(..., breaks=)``).

    ``make_entry(graph)`` compiles a graph to a runnable ``_Entry``; ``flat`` holds the
    call's flat arguments; ``known`` (``(inputs, values)``) the input values and break
    values a call already computed before it traced again. With ``draws`` (a ``Draws``,
    ``fnx._inductor.config.fallback_random``) every sampler is a break that runs the eager
    kernel (``fnx.graph.eager_samplers``), so compiled draws are eager's."""

    def __init__(self, make_entry, flat, known=None, draws=None):
        self.make_entry = make_entry
        self.flat = flat
        self.ins = dict(known[0]) if known else {}      # input position -> real value
        self.forced = list(known[1]) if known else []   # break values already known
        self.records = []
        self.draws = draws
        self.eager_random = draws is not None

    def value(self, mode, tensor, kind):
        """The Python value of ``tensor`` (``kind``: ``"item"``, ``"tolist"`` or
        ``"numpy"``) for the traced code."""
        where = user_frame()
        k = len(self.records)
        x = mode.node_of(tensor)
        cut = len(mode.graph.nodes)
        finish = _FINISH[kind]
        if k < len(self.forced):
            concrete = self.forced[k]
        else:
            concrete = self._probe(mode, [x], finish)
        index = len(mode.sources)
        what = f"{kind}() at {where}"
        sym = mode.scalar_input(float(concrete) if type(concrete) is float else 0.0,
                                ("break", k), f"break_{k}")
        sym._what = what
        self.ins[index] = concrete
        self.records.append(Break(cut, [x], finish, index, kind, where, len(mode.guards),
                                  concrete))
        if kind == "item" and type(concrete) is float:
            return sym
        mode.add_guard(Guard(lambda v, i=index: _exact(v[i]), _exact(concrete),
                             f"{what} == {concrete!r}", frozenset((index,))))
        return concrete

    def op(self, mode, op, args, kwargs):
        """The result of ``op``, whose output shape depends on data (``nonzero``), for the
        traced code: computed on this call's values, a new input of the rest of the program
        (its shape guarded)."""
        where = user_frame()
        tensors = [a for a in leaves((args, kwargs)) if isinstance(a, Tensor)]
        nodes = [mode.node_of(t) for t in tensors]
        cut = len(mode.graph.nodes)
        k = len(self.records)

        def finish(values):
            it = iter(values)
            real_args, real_kwargs = _replace((args, kwargs), lambda t: next(it))
            with outside_trace(), no_grad():
                return op(*real_args, **real_kwargs)
        if k < len(self.forced):
            concrete = self.forced[k]
        elif not nodes:     # (a factory: nothing to compute first)
            concrete = finish([])
        else:
            concrete = self._probe(mode, nodes, finish)
        if not isinstance(concrete, Tensor):
            return None             # (several outputs: not handled, the trace stops)
        check_strided(concrete, f"fnx.compile ({op.qualname})")
        index = len(mode.sources)
        shape = tuple(concrete.shape)
        t = meta_tensor(shape, concrete.dtype, concrete._device)
        mode.add_input(t, f"break_{k}", NodeMeta(shape, concrete.dtype, concrete._device),
                       ("break", k))
        self.ins[index] = concrete
        what = f"{op.qualname} at {where}"
        self.records.append(Break(cut, nodes, finish, index, op.qualname, where,
                                  len(mode.guards), concrete))
        mode.add_guard(Guard(lambda v, i=index: tuple(v[i].shape), shape,
                             f"the shape of {what}", frozenset((index,))))
        return t

    def sampler(self, mode, op, args, kwargs):
        """``op`` (a sampler, under ``fallback_random``) as a break: ``op``'s result, its
        generator's state noted first (``draws``)."""
        gen = kwargs.get("generator")
        if gen is None:
            device = kwargs.get("device")
            if device is None:
                device = next((a._device for a in leaves((args, kwargs))
                               if isinstance(a, Tensor)), CPU)
            gen = default_generator_for(canonical(device))
        self.draws.note(gen)
        out = self.op(mode, op, args, kwargs)
        if out is not None:
            self.records[-1].sampler = True
        return out

    def _probe(self, mode, xs, finish):
        """Compile the graph recorded so far, cut to the values ``xs``, run it on the
        call's inputs and ``finish`` their real values."""
        graph = mode.graph
        need = upstream(xs)
        places = [n for n in graph.nodes if n.kind == "placeholder"]
        used = [i for i, p in enumerate(places) if p in need]
        sub = _segment(graph.nodes, need, [places[i] for i in used], [], tuple(xs))
        sub.input_sources = [mode.sources[i] for i in used]
        entry = self.make_entry(sub)
        with outside_trace(), no_grad():
            inputs = [self.input(mode, i) for i in used]   # (a random key is real)
            outs = entry(None, None, [_fed(v) for v in inputs])
            return finish(outs)

    def input(self, mode, i):
        """The real value of input ``i`` in this call (a random key is drawn once; a value
        read from Python state is what the trace read, before the code changed it)."""
        if i not in self.ins:
            self.ins[i] = mode.value_read(i) if mode.sources[i][0] in READ_WHEN_CALLED \
                else source_value(mode.sources[i], self.flat)
        return self.ins[i]


class Draws:
    """The generators that samplers drew from while tracing (``fallback_random``), with
    their states before the first draw: ``undo`` puts them back."""

    def __init__(self):
        self.saved = {}

    def note(self, gen) -> None:
        if id(gen) not in self.saved:
            self.saved[id(gen)] = (gen, gen.get_state())

    def undo(self) -> None:
        for gen, state in self.saved.values():
            gen.set_state(state)
        self.saved.clear()


def _item(values):
    return values[0].item()


def _tolist(values):
    return values[0].tolist()


def _numpy(values):
    out = np.array(values[0].cpu().numpy(force=True))
    out.setflags(write=False)
    return out


_FINISH = {"item": _item, "tolist": _tolist, "numpy": _numpy}


def _replace(value, fn):
    """``value`` with each tensor ``t`` in it replaced by ``fn(t)``."""
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_replace(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: _replace(v, fn) for k, v in value.items()}
    return value


@contextlib.contextmanager
def outside_trace():
    """Run real ops in the middle of a trace (a break's program) without it counting as
    state made outside the trace (``suspend_tracing``)."""
    state = tls.state
    modes, include = state.modes, state.include
    state.modes = []
    state.include = include & ~(1 << DispatchKey.Tracer)
    try:
        yield
    finally:
        state.modes = modes
        state.include = include


# ----------------------------------------------------------------------------- segments

def _exact(v):
    """A guarded value with its type (``1 == 1.0 == True`` must not match each other)."""
    if isinstance(v, list):
        return ("list", tuple(_exact(x) for x in v))
    if isinstance(v, np.ndarray):
        return ("ndarray", v.dtype.str, v.shape, v.tobytes())
    return (type(v), v)


def _fed(v):
    """What a program input gets for a value: a break placeholder is fed a float."""
    if isinstance(v, Tensor) or type(v) is float:
        return v
    return float(v) if isinstance(v, (int, bool)) else 0.0


def _segment(nodes, keep, places, live, outputs) -> Graph:
    """A graph of the nodes of ``nodes`` in ``keep`` (calls, getitems, constants), reading
    ``places`` and then ``live`` (values of earlier segments) as placeholders, returning the
    tuple ``outputs`` (or, as it is, a structure of nodes)."""
    sub = Graph()
    mapping = {}
    for p in list(places) + list(live):
        mapping[p] = sub.placeholder(p.name, p.meta)

    def get(n):
        m = mapping.get(n)
        if m is None:
            if n.kind != "constant":
                raise AssertionError(f"graph break: {n} read before it is computed")
            m = mapping[n] = sub.constant(n.target, n.meta)
        return m

    for n in nodes:
        if n in keep and n.kind in ("call", "getitem", "constant") and n not in mapping:
            mapping[n] = sub._add(n.kind, n.name, n.target, map_nodes(n.args, get),
                                  map_nodes(n.kwargs, get), n.meta)
    sub.output(map_nodes(outputs, get))
    for attr in ("mutated_inputs", "grad_writes", "stored", "grad_reads", "guards"):
        setattr(sub, attr, [])
    sub.lifted = []
    sub.output_requires_grad = False
    sub.python_writes = []
    return sub


def _sig(value, pos):
    if isinstance(value, Node):
        return ("n", pos[value])
    if isinstance(value, Tensor):
        return ("t", id(value))
    if isinstance(value, (list, tuple)):
        return tuple(_sig(v, pos) for v in value)
    if isinstance(value, dict):
        return tuple((k, _sig(v, pos)) for k, v in value.items())
    if isinstance(value, float) and value != value:
        return ("nan",)
    return value


class _Check:
    """A condition on the Python state or the inputs of a branch (``holds(ins)``)."""
    __slots__ = ("fn", "what")

    def __init__(self, fn, what):
        self.fn, self.what = fn, what

    def holds(self, ins) -> bool:
        return self.fn(ins)


def _why_new(step, ins) -> str:
    """Why the first branch after ``step``'s break does not fit values ``ins``, in words
    (for ``FNX_LOGS=recompiles``): its first failing check, with the value it expected
    and the one it got where it is a guard."""
    for checks, _, _ in step.branches[:1]:
        for c in checks:
            try:
                if c.holds(ins):
                    continue
                if isinstance(c, Guard):
                    return f"{c.what}: {c.expected!r} -> {c.predicate(ins)!r}"
            except (KeyError, IndexError):      # (it reads an input of that branch only)
                continue
            return c.what
    return f"the value of {step.record}"


def _read_key(source):
    """``lifted_key`` of the tensor an input source reads when called (None when it
    reads no tensor now: a .grad set to None, an option replaced by a float)."""
    v = source_value(source)
    return lifted_key(v) if isinstance(v, Tensor) else None


class _Step:
    """One segment: its compiled entry, where its inputs come from (``("p", i)``: input
    position i; ``("n", pos)``: the value of node ``pos`` of the trace), where its outputs
    go, and (for all but the last) the break it ends at and its branches."""

    def __init__(self, entry, in_keys, out_keys, record, signature, rebuild):
        self.entry = entry
        self.in_keys = in_keys
        self.out_keys = out_keys
        self.record = record            # the Break it ends at; None: the last segment
        self.signature = signature
        self.rebuild = rebuild          # live-out keys -> new (entry, in_keys, out_keys)
        self.branches = []              # [(checks, new input sources, child step)]

    def steps(self):
        yield self
        for _, _, child in self.branches:
            yield from child.steps()


class BreakEntry:
    """A cache entry of ``fnx.compile`` whose trace broke: a tree of segments (see the
    module docstring). ``owner`` is the ``CompiledFunction`` (it traces again when no
    branch fits), ``flatten`` its argument flattener."""

    one_shot = False

    def __init__(self, owner, flatten, root, root_sources, root_checks, template, pending,
                 breaks, report):
        self.owner = owner
        self.flatten = flatten
        self.root = root
        self.root_sources = root_sources      # [(input position, source)] of segment 0
        self.root_checks = root_checks
        self.template = template              # result_template of the trace (or None)
        self.pending = pending                # (inputs, values, branches): the first call
        self.breaks = breaks                  # the Breaks of the first trace, in order
        self.report = report                  # what explain() shows of the last segment

    # -- building
    @classmethod
    def build(cls, owner, flatten, graph, tracer, make_entry, stages):
        """The entry of trace ``graph`` (raw: functional, before DCE), broken where
        ``tracer.records`` say."""
        records = tracer.records
        nodes = graph.nodes
        pos = {n: i for i, n in enumerate(nodes)}
        places = [n for n in nodes if n.kind == "placeholder"]
        index_of = {p: i for i, p in enumerate(places)}
        sources = graph.input_sources
        bounds = [0] + [r.cut for r in records] + [len(nodes)]
        last = len(records)
        raw = {}
        for k in range(last + 1):
            for n in nodes[bounds[k]:bounds[k + 1]]:
                raw[n] = k
        # A value runs in the first segment whose break needs it: what the breaks do not
        # need (a backward, an optimizer step) waits for the segment after them
        cones = [upstream(r.nodes) for r in records]
        seg_of = {n: raw[n] if n.kind == "placeholder" else
                  next((j for j in range(raw[n], last) if n in cones[j]), last)
                  for n in nodes}
        # an element of a multi-output call goes with the call: a segment hands on
        # tensors, never the tuple itself
        for n in nodes:
            if n.kind == "getitem":
                seg_of[n] = seg_of[n.args[0]]
        members = [[] for _ in range(last + 1)]
        for n in nodes:
            members[seg_of[n]].append(n)
        # the last segment that reads each node (its break value counts as read by it)
        alive = upstream([graph.output_node] + [n for r in records for n in r.nodes])
        reader = {}
        for n in nodes:
            if n in alive:
                for i in n.inputs():
                    reader[i] = max(reader.get(i, -1), seg_of[n])
        for k, r in enumerate(records):
            for n in r.nodes:
                reader[n] = max(reader.get(n, -1), k)

        def is_value(n):
            return n.kind in ("call", "getitem")

        def live_out(k):
            return [n for n in members[k] if is_value(n) and reader.get(n, -1) > k]

        def make(k, outs_extra=()):
            """Segment k's entry, its input keys and output keys."""
            seg = members[k]
            if k < last:
                outputs = list(records[k].nodes) + list(dict.fromkeys(
                    live_out(k) + [nodes[p] for p in outs_extra]))
                roots = outputs
            else:
                outputs = graph.output_node.args[0]
                roots = [graph.output_node]
            need = upstream(roots)
            keep = {n for n in need if seg_of.get(n) == k}
            reads = set()
            for n in keep:
                reads.update(n.inputs())
            reads.update(o for o in (outputs if k < last else [graph.output_node])
                         if isinstance(o, Node))
            if k == last:
                reads.update(graph.output_node.inputs())
                used = list(places)
            else:
                used = [p for p in places if p in reads]
            live = sorted((n for n in reads if is_value(n) and seg_of[n] < k), key=pos.get)
            sub = _segment(seg, keep, used, live, tuple(outputs) if k < last else outputs)
            sub.input_sources = [sources[index_of[p]] for p in used] + \
                [("live", pos[n]) for n in live]
            if k == last:
                for attr in ("mutated_inputs", "grad_writes", "stored"):
                    setattr(sub, attr, list(getattr(graph, attr, [])))
                sub.lifted = graph.lifted
            entry = make_entry(sub)
            in_keys = [("p", index_of[p]) for p in used] + [("n", pos[n]) for n in live]
            out_keys = [("n", pos[n]) for n in outputs[len(records[k].nodes):]] \
                if k < last else []
            return entry, in_keys, out_keys

        guard_bounds = [0] + [r.guards for r in records] + [len(graph.guards)]
        steps, branch_parts = [], []
        for k in range(last + 1):
            entry, in_keys, out_keys = make(k)
            seg = nodes[bounds[k]:bounds[k + 1]]
            signature = tuple((n.kind, str(n.target) if n.kind == "call" else None,
                               n.meta, _sig(n.args, pos), _sig(n.kwargs, pos))
                              for n in seg if n.kind != "constant")

            def rebuild(extra, k=k):
                return make(k, [key[1] for key in extra])
            steps.append(_Step(entry, in_keys, out_keys, records[k] if k < last else None,
                               signature, rebuild))
            # what selects this segment: the guards recorded in it, the inputs it made
            new = [(index_of[p], sources[index_of[p]]) for p in seg
                   if p.kind == "placeholder" and sources[index_of[p]][0] != "break"]
            checks = list(graph.guards[guard_bounds[k]:guard_bounds[k + 1]])
            for i, (kind, src) in new:
                if kind == "lifted":
                    key = lifted_key(src)
                    checks.append(_Check(lambda ins, t=src, key=key: lifted_key(t) == key,
                                         f"a tensor the function reads changed: {key}"))
                elif kind in ("grad", "item"):      # a tensor read when called
                    key = _read_key((kind, src))
                    what = "the .grad the function reads" if kind == "grad" else \
                        f"the tensor read from {src.key!r}"
                    checks.append(_Check(lambda ins, s=(kind, src), key=key:
                                         _read_key(s) == key, f"{what} changed: {key}"))
                elif kind == "scalar":
                    checks.append(_Check(lambda ins, i=i: type(ins[i]) is float,
                                         f"input {i} is no longer a float"))
            if k == last:
                for t, none in getattr(graph, "grad_reads", []):
                    checks.append(_Check(lambda ins, t=t, none=none: (t._grad is None) is none,
                                         f".grad of a {tuple(t.shape)} tensor was "
                                         f"{'None' if none else 'set'} when traced"))
            branch_parts.append((checks, new))
        for k in range(last):
            checks, new = branch_parts[k + 1]
            steps[k].branches.append((checks, new, steps[k + 1]))
        root_checks, root_sources = branch_parts[0]
        ins = dict(tracer.ins)
        read = getattr(graph, "values_read", {})     # (as the trace read them)
        for i in range(len(sources)):
            if i not in ins:
                ins[i] = read[i] if i in read else source_value(sources[i], tracer.flat)
        pending = (ins, [r.value for r in records], [0] * last)
        return cls(owner, flatten, steps[0], root_sources, root_checks,
                   getattr(graph, "result_template", None), pending, list(records),
                   (steps[-1].entry, stages))

    # -- what it holds
    def segments(self) -> list:
        """Every segment compiled so far (each a compiled ``_Entry``)."""
        return [s for s in self.root.steps()]

    @property
    def size(self) -> int:
        """What ``cache_limit`` counts of this entry: its segments, but for those that
        end at a ``fallback_random`` sampler (every trace of the function makes those,
        however many they are: they are not recompilations)."""
        return sum(1 for s in self.segments() if s.record is None or not s.record.sampler)

    def programs(self) -> list:
        return [p for s in self.segments() for p in s.entry.programs()]

    def flat_inputs(self, args, kwargs):
        return self.flatten(args, kwargs)[0]

    def inputs_as_traced(self, args, kwargs):
        """None: the first call runs on the values its trace read (``pending``)."""
        return None

    # -- running
    def match(self, args, kwargs, why=None):
        """The inputs of segment 0 for this call if its guards hold, else None (the
        failed guard, in words, appended to ``why`` when it is a list)."""
        flat = self.flatten(args, kwargs)[0]
        ins = {}
        for i, source in self.root_sources:
            ins[i] = source_value(source, flat)
        for c in self.root_checks:
            if not c.holds(ins):
                if why is not None:
                    why.append(c.what if isinstance(c, _Check) else
                               f"{c.what} was {c.expected!r}")
                return None
        return ins

    def __call__(self, args, kwargs, inputs=None):
        if inputs is None and self.pending is not None:
            ins, values, branches = self.pending
            self.pending = None
            return self._run(args, kwargs, ins, (values, branches))
        if inputs is None:
            inputs = self.match(args, kwargs)
            if inputs is None:
                return self.owner.fn(*args, **kwargs)
        return self._run(args, kwargs, inputs)

    def _run(self, args, kwargs, ins, forced=None):
        """Run the segments for this call: ``ins`` holds the inputs of segment 0; with
        ``forced`` = (break values, branch indices) the path is given (a call whose values
        the trace already computed)."""
        env = {}
        step = self.root
        flat = None
        path, values = [], []
        while True:
            feed = [_fed(ins[i]) if kind == "p" else env[(kind, i)]
                    for kind, i in step.in_keys]
            record = step.record
            if record is None:
                result = step.entry(args, kwargs, feed)
                # floats and input tensors returned as eager does (``ins`` holds every
                # input of the trace, by placeholder position, breaks included)
                return result if self.template is None else \
                    restore_result(result, self.template, ins)
            with no_grad():
                outs = step.entry(None, None, feed)
            n = len(record.nodes)
            env.update(zip(step.out_keys, outs[n:]))
            if forced is not None:
                k = len(path)
                ins[record.index] = forced[0][k]
                path.append(forced[1][k])
                _, new, step = step.branches[forced[1][k]]
                for i, source in new:
                    if i not in ins:
                        if flat is None:
                            flat = self.flatten(args, kwargs)[0]
                        ins[i] = source_value(source, flat)
                continue
            value = record.finish(outs[:n])
            ins[record.index] = value
            values.append(value)
            for j, (checks, new, child) in enumerate(step.branches):
                trial = ins
                if new:     # the inputs this branch reads first (a parameter, a key)
                    if flat is None:
                        flat = self.flatten(args, kwargs)[0]
                    trial = dict(ins)
                    for i, source in new:
                        trial[i] = source_value(source, flat)
                if all(c.holds(trial) for c in checks):
                    ins = trial
                    step = child
                    path.append(j)
                    break
            else:
                return self._extend(args, kwargs, ins, path, values, _why_new(step, ins))

    def _extend(self, args, kwargs, ins, path, values, why):
        """No branch of the step reached by ``path`` fits this call's value (the last of
        ``values``; ``why``, in words): trace again with the values computed so far, graft
        the new continuation and finish the call on it."""
        owner = self.owner
        with owner._lock:
            new = owner._continue(args, kwargs, (ins, values), why)
            if new is None:
                return owner.fn(*args, **kwargs)
            if not isinstance(new, BreakEntry) or new.one_shot:
                return new(args, kwargs, new.inputs_as_traced(args, kwargs)
                           if new.one_shot else None)
            mine, theirs = self.root, new.root
            shared = [(mine, theirs)]
            for j in path:
                mine = mine.branches[j][2]
                theirs = theirs.branches[0][2] if theirs.branches else None
                if theirs is None:
                    break
                shared.append((mine, theirs))
            if theirs is None or theirs.record is None or \
                    any(a.signature != b.signature for a, b in shared):
                owner._add_entry(self, new)         # another prefix: an entry of its own
                return new(args, kwargs, None)
            for a, b in shared:
                missing = [key for key in b.out_keys if key not in a.out_keys]
                if missing:
                    a.entry, a.in_keys, a.out_keys = a.rebuild(a.out_keys + missing)
            mine.branches.append(theirs.branches[0])
            ins2, values2, _ = new.pending
            new.pending = None
            branches = path + [len(mine.branches) - 1] + [0] * (len(values2) - len(path) - 1)
        return self._run(args, kwargs, ins2, (values2, branches))
