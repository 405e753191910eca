"""A compiled entry's steady-state call, generated as straight-line Python.

``fnx.compile`` answers a call in three general steps: the guard key
(``CompiledFunction._guards``), the entry's own guards (``_Entry.match``) and its plan
(``ProgramPlan.run``), each a loop over tables that handles every kind of storage. In a
training loop one entry serves call after call with the same kinds of tensors, and on a
small step that general work costs as much as the program. ``FastCall`` writes that one
case out, once per entry: each guard is one test against a constant, each tensor and
array a named local, the loops unrolled (as Dynamo compiles its guards into one function).

The fast path covers the common case only: plain tensor and float arguments, parameters
whose storage is a jax.Array nothing else shares (a resident CPU tensor after its first
compiled call, ``fnx.core.tensor``; a cuda tensor), and ``.grad`` tensors it may reuse.
Anything else, and any guard that fails, returns ``MISS`` before anything changed (at
most an argument became resident, which nothing can observe), and the general path
answers that call. Both paths check the same guards; the general one stays the
reference for what a call does, and the tests run every compiled call through one or the
other.

>>> import fnx
>>> f = fnx.compile(lambda x: x * 2)
>>> x = fnx.ones(3)
>>> [f(x).tolist() for _ in range(3)][-1]
[2.0, 2.0, 2.0]
>>> "def fast" in f._fast.source
True
"""
from __future__ import annotations

import sys

from ..core import profiling, tls
from ..core.autocast_mode import _ALL_BITS as _AUTOCAST_BITS
from ..core.dispatch_key import AUTOGRAD_BITS, SPARSE_BITS
from ..core.tensor import Tensor
from ..ir.aten.random import next_key
from .compiled_run import _CPU_OR_FUNC, _FUNC_BIT, _reusable
from .jax_storage import ARRAY_TYPE, KEEP, feed

__all__ = ["FastCall", "MISS"]

MISS = object()     # the fast path's answer when the general path must take the call


class FastCall:
    """The generated fast path of one entry (``build``); call it as ``fast(args, kwargs)``:
    the call's result, or ``MISS``. ``arm`` records the module state (its number,
    ``CompiledFunction._module_state``) and the globals/closure state under which the
    general path last chose this entry."""

    def __init__(self, fn, source: str, entry):
        self._fn = fn
        self.source = source
        self.entry = entry
        self.armed = [None, None]       # [the module-state number, the scope-state tuple]

    def __call__(self, args, kwargs):
        return self._fn(args, kwargs)

    def arm(self, modules, scope) -> None:
        self.armed[0] = modules
        self.armed[1] = scope

    @classmethod
    def build(cls, cf, entry, key, args, kwargs):
        """The fast path of ``entry`` (a ``compiled_function._Entry`` with a single-program
        plan, cached under ``key``) for calls like this one, or None when the entry is
        outside what the fast path covers."""
        if entry.written_args:      # (match checks those for inputs sharing memory)
            return None
        source, env = _Writer(cf, entry, key, args, kwargs).write()
        if source is None:
            return None
        fast = cls(None, source, entry)
        env["ARMED"] = fast.armed
        namespace = {}
        name = getattr(cf, "__name__", type(cf.fn).__name__)
        exec(compile(source, f"<fnx.compile fast path of {name}>", "exec"), env, namespace)
        fast._fn = namespace["fast"]
        return fast


def _shape(d: str) -> str:
    """The storage shape of the tensor whose dict is the local ``d`` (``storage_shape``
    of a tensor with no padded storage), read without binding its array to a local: a
    NumPy storage is made resident only while nothing else references it."""
    return f"({d}['_data'].shape if '_data' in {d} else {d}['_jax'].shape)"


def _constant(result) -> bool:
    """Whether a function's result holds no value of the call: one immutable object the
    fast path may return every time (None for a step that returns nothing)."""
    return result is None or type(result) in (int, float, bool, str)


class _Unsupported(Exception):
    """The entry or call is outside what the fast path covers."""


class _Writer:
    """The source of one fast path and the constants it reads (``write``)."""

    def __init__(self, cf, entry, key, args, kwargs):
        self.cf, self.entry, self.key, self.args, self.kwargs = cf, entry, key, args, kwargs
        self.lines = []
        self.env = {"MISS": MISS, "Tensor": Tensor, "CF": cf, "STATE": tls.state,
                    "SCOPE": cf._scope,
                    "OBSERVED": profiling.active, "feed": feed, "next_key": next_key,
                    "reusable": _reusable, "getrc": sys.getrefcount, "dget": dict.get,
                    "ARRAY": ARRAY_TYPE,
                    "ENTRY": entry, "PLAN": entry._plan}

    def const(self, value, stem="C") -> str:
        """A name for ``value`` in the generated code's globals (one per object)."""
        for name, v in self.env.items():
            if v is value and name[:len(stem)] == stem:
                return name
        name = f"{stem}{len(self.env)}"
        self.env[name] = value
        return name

    def emit(self, line: str, depth: int = 1) -> None:
        self.lines.append("    " * depth + line)

    def miss_unless(self, condition: str) -> None:
        self.emit(f"if not ({condition}):")
        self.emit("return MISS", 2)

    def write(self):
        try:
            self._write()
        except _Unsupported:
            return None, None
        return "\n".join(self.lines) + "\n", self.env

    def _write(self):
        entry, plan = self.entry, self.entry._plan
        program = plan.program if plan is not None else None
        if plan is None or program.spmd is not None or program._local is not None or \
                entry.template is not None or entry.stored or entry.pinned or \
                plan.copies or \
                plan.grad_other or plan.single is None and not _constant(plan.result) or \
                self.kwargs or \
                self.key[-1] != ("autocast", ()):
            raise _Unsupported
        self.emit("def fast(args, kwargs):", 0)
        self._call_state()
        arguments = self._arguments()
        # the inputs the program overwrites: {placeholder: where their storage array is,
        # ``_jax`` (a resident CPU tensor) or ``_data`` (a cuda tensor)}
        rebound = {i: key for i, _, key in plan.rebinds}
        lifted = self._lifted(rebound)
        packed = plan.pack.inputs if plan.pack is not None else []
        # a .grad the program reads and replaces: held by this call, it is never reusable
        # (``_reusable``), so the fast path would miss on every call
        owners = {id(t) for t, _ in entry.grad_inputs}
        if any(id(entry.sources[g[0]][1]) in owners for g in plan.grad_outs
               if entry.sources[g[0]][0] == "lifted"):
            raise _Unsupported
        if any(i not in lifted for i in rebound) or \
                any(g[0] not in lifted for g in plan.grad_outs) or \
                any(i not in lifted for i in packed):
            raise _Unsupported      # (an argument the program overwrites)
        inputs = self._inputs(arguments, lifted)
        self._entry_guards(inputs)
        self._run(inputs, rebound)

    def _call_state(self):
        """The key's parts that are not arguments: nothing traced, profiled, logged or
        autocast on this thread; the grad mode; module state and globals as armed (the
        general path's own readers of both, each a version or identity check)."""
        grad = dict(self.key[-4:])["grad"]
        ag = self.const(AUTOGRAD_BITS, "AG")
        self.miss_unless("not kwargs and len(args) == %d and CF._eager_reason is None"
                         % len(self.args))
        self.emit("st = STATE")
        self.miss_unless(f"not st.modes and st.grad_log is None and not st.include & "
                         f"{self.const(_AUTOCAST_BITS, 'AC')} and "
                         f"(st.mask & {ag} == {ag}) is {grad}")
        self.miss_unless("CF._module_state() == ARMED[0] and SCOPE() is ARMED[1] and "
                         "not OBSERVED()")

    def _arguments(self) -> dict:
        """Tests of the arguments against the key's descriptions: {position: local name}
        (a float's name is kept in ``self.floats``)."""
        names, self.floats = {}, set()
        for pos, (a, desc) in enumerate(zip(self.args, self.key)):
            name = f"a{pos}"
            self.emit(f"{name} = args[{pos}]")
            if type(a) is float:
                self.miss_unless(f"type({name}) is float")
                self.floats.add(name)
            elif a.__class__ is Tensor and desc[0] == "T":
                _, shape, dtype, device, grad, grad_none = desc
                d = f"d{pos}"
                self.miss_unless(f"{name}.__class__ is Tensor")
                self.emit(f"k = {name}._ks")
                self.emit(f"{d} = {name}.__dict__")
                self.miss_unless(
                    f"not k & {self.const(SPARSE_BITS, 'SP')} and "
                    f"(k & {self.const(AUTOGRAD_BITS, 'AG')} != 0) is {grad} and "
                    f"{_shape(d)} == {self.const(tuple(shape), 'S')} and "
                    f"{d}['_dtype'] is {self.const(dtype, 'T')} and "
                    f"{d}['_device'] is {self.const(device, 'V')} and "
                    f"({name}._grad is None) is {grad_none}")
            else:
                raise _Unsupported
            names[pos] = name
        # the key says which tensors were given twice (``repeated_tensors``): a program
        # traced for one object there is not one for two, and the reverse
        if dict(self.key[-5:-4])["repeated"]:
            raise _Unsupported
        tensors = [names[p] for p, a in enumerate(self.args) if a.__class__ is Tensor]
        if len(tensors) > 1:
            self.miss_unless(f"len({{{', '.join(f'id({n})' for n in tensors)}}}) == "
                             f"{len(tensors)}")
        return names

    def _lifted(self, rebound) -> dict:
        """Tests of the tensors read from outside (``match``'s), written per tensor; a
        parameter the program rebinds must hold a resident array nothing else shares
        (``ProgramPlan.run``'s fast case). {placeholder index: local name}."""
        entry = self.entry
        index = {id(t): i for i, (kind, t) in enumerate(entry.sources) if kind == "lifted"}
        # (placeholder index, how the tensor is read, its class, its guard key): captured
        # tensors, then .grad values read when called (sources ("grad", owner))
        reads = [(index.get(id(t)), self.const(t, "L"), t.__class__, meta)
                 for t, meta in zip(entry.lifted, entry.lifted_meta)]
        grads = {id(t): i for i, (kind, t) in enumerate(entry.sources) if kind == "grad"}
        reads += [(grads[id(t)], f"{self.const(t, 'L')}._grad", Tensor, key)
                  for t, key in entry.grad_inputs]
        items = {id(r): i for i, (kind, r) in enumerate(entry.sources) if kind == "item"}
        reads += [(items[id(r)], f"{self.const(r, 'RD')}()", Tensor, key)
                  for r, key in entry.item_inputs]
        names = {}
        self.lifted_index = {}
        for n, (i, read, cls, meta) in enumerate(reads):
            shape, dtype, device, grad, layout = meta
            if layout is not None or cls._keep_resident or i is None:
                raise _Unsupported
            name, d = f"t{n}", f"e{n}"
            self.emit(f"{name} = {read}")
            if cls is Tensor:   # (a .grad may be None or packed: LazyGrad; an option any)
                self.miss_unless(f"{name}.__class__ is Tensor")
            self.emit(f"{d} = {name}.__dict__")
            common = (f"{name}.__class__ is {self.const(cls, 'K')} and "
                      f"{d}['_dtype'] is {self.const(dtype, 'T')} and "
                      f"{d}['_device'] is {self.const(device, 'V')} and "
                      f"({name}._ks & {self.const(AUTOGRAD_BITS, 'AG')} != 0) is {grad}")
            shape = self.const(tuple(shape), "S")
            if i in rebound:
                # its storage array, fed and then donated: bound to one local only (the
                # donation test counts its references); ``ProgramPlan.run``'s fast cases
                j = f"j{n}"
                self.emit(f"{j} = {d}.get({rebound[i]!r})")
                if rebound[i] == "_jax":    # resident CPU storage with no NumPy view
                    storage = f"{j} is not None and '_data' not in {d}"
                else:       # a cuda tensor's array, with no views or aliases
                    storage = (f"type({j}) is ARRAY and '_jax' not in {d} and "
                               f"{name}._ks & {self.const(_CPU_OR_FUNC, 'CF')} == "
                               f"{self.const(_FUNC_BIT, 'FB')} and '_froot' not in {d} "
                               f"and not {d}.get('_fviews')")
                self.miss_unless(f"{storage} and {name}._base is None and "
                                 f"{j}.shape == {shape} and {common}")
            else:
                self.miss_unless(f"{_shape(d)} == {shape} and {common}")
            names[i] = name
            self.lifted_index[i] = n
        for t, none in entry.grad_reads:
            self.miss_unless(f"({self.const(t, 'L')}._grad is None) is {none}")
        return names

    def _inputs(self, arguments, lifted) -> list:
        """The program's inputs in placeholder order (``_Entry.flat_inputs``), as the list
        ``inputs`` (each item's local name returned); random keys are drawn last
        (``_run``), after every test."""
        items, self.keys = [], []
        for i, (kind, src) in enumerate(self.entry.sources):
            if kind == "arg":
                items.append(arguments[src])
            elif kind in ("lifted", "grad", "item"):
                items.append(lifted[i])
            elif kind == "scalar":
                self.emit(f"s{i} = {self.const(src, 'R')}()")
                self.miss_unless(f"type(s{i}) is float")
                items.append(f"s{i}")
            else:
                items.append("None")
                self.keys.append((i, self.const(src, "G")))
        self.emit(f"inputs = [{', '.join(items)}]")
        return items

    def _entry_guards(self, inputs):
        """``match``'s value guards: options read from dicts, the rest as ``holds``."""
        entry = self.entry
        for container, key, kind, value, g in entry.read_guards:
            # (dict.get itself, as match reads them: a param group's own get records reads)
            self.emit(f"v = dget({self.const(container, 'D')}, {key!r}, MISS)")
            self.miss_unless(f"type(v) is {self.const(kind, 'K')} and "
                             f"v == {self.const(value, 'W')}")
        for g in entry.always_guards:
            self.miss_unless(f"{self.const(g, 'H')}.holds(inputs)")
        if entry.guard_inputs:
            values = ", ".join(inputs[i] for i in entry.guard_inputs)
            self.emit(f"if ({values},) != ENTRY._held_for and "
                      f"not ENTRY.input_guards_hold(inputs):")
            self.emit("return MISS", 2)

    def _run(self, inputs, rebound):
        """``ProgramPlan.run`` for its fast case, written out."""
        plan = self.entry._plan
        program = plan.program
        prog = self.const(program, "P")
        if plan.host is not None:
            variant = self.const(program.without_checks(plan.host.skip), "P")
            self.emit(f"if {prog}.check_values:")
            self.emit(f"if not {self.const(plan.host, 'HC')}.hold(inputs):", 2)
            self.emit("return MISS", 3)
            self.emit(f"prog = {variant}", 2)
            self.emit("else:")
            self.emit(f"prog = {prog}", 2)
        else:
            self.emit(f"prog = {prog}")
        items = []
        for j, (i, c, how) in enumerate(plan.feed):
            if c is not None:
                items.append(f"feed({self.const(c, 'L')}, {how})")
            elif i in rebound:
                items.append(f"j{self.lifted_index[i]}")
            elif inputs[i].startswith("s") or inputs[i] in self.floats or how == KEEP:
                items.append(inputs[i])     # a float (below) or a key (filled in last)
            else:
                d = f"d{inputs[i][1:]}" if inputs[i].startswith("a") else \
                    f"e{inputs[i][1:]}"
                self.emit(f"f{j} = {d}.get('_jax')")
                self.emit(f"if f{j} is None or {d}.get('_data') is not {d}.get('_jview'):")
                self.emit(f"f{j} = feed({inputs[i]}, {how})", 2)
                items.append(f"f{j}")
        self.emit(f"arrays = [{', '.join(items)}]")
        for j in plan.scalar_feeds:
            self.emit(f"if type(arrays[{j}]) is float:")
            self.emit(f"arrays[{j}] = PLAN.scalar_feed({j}, arrays[{j}], arrays)", 2)
        # a donated buffer is referenced by its tensor's dict, its local, the arrays list
        # and getrefcount's argument, nothing else (``ProgramPlan.run``'s count)
        for j, i in plan.donate_pairs:
            if i not in rebound:
                raise _Unsupported
            self.miss_unless(f"getrc(j{self.lifted_index[i]}) == 4")
        olds = []
        for s, (i, k, key, dtype, dev, shape) in enumerate(plan.grad_outs):
            if i not in self.lifted_index:
                raise _Unsupported
            t = f"t{self.lifted_index[i]}"
            self.emit(f"g{s} = {t}._grad")
            self.miss_unless(f"g{s} is not None and reusable(g{s}, {key!r}, "
                             f"{self.const(dtype, 'T')}, {self.const(dev, 'V')}, "
                             f"{self.const(shape, 'S')})")
            olds.append(f"g{s}")
        for s, g in enumerate(plan.grad_outs):
            self.emit(f"arrays.append(g{s}.__dict__[{g[2]!r}])")
        for i, src in self.keys:        # (nothing below returns MISS)
            self.emit(f"inputs[{i}] = next_key(*{src})")
            for j in [j for j, (p, c, _) in enumerate(plan.feed) if p == i and c is None]:
                self.emit(f"arrays[{j}] = feed(inputs[{i}], {KEEP})")
        sinks = str(len(olds))
        if plan.pack is not None:
            # GradPack.sink written out: references are PACK.array, pk, getrefcount's
            self.env["PACK"] = plan.pack
            self.emit("pk = PACK.array")
            self.emit("if pk is not None and not PACK.viewed and getrc(pk) == 3:")
            self.emit("arrays.append(pk)", 2)
            self.emit("sinks = 1", 2)
            self.emit("else:")
            self.emit("sinks = 0", 2)
            self.emit("del pk")
            sinks = "sinks"
        donate = self.const(plan.donate, "DN")
        olds_list = f"[{', '.join(olds)}]"
        if plan.donate or olds or plan.pack is not None:
            self.emit("if prog.guards_buffers():")
            self.emit(f"outs = PLAN._call_guarded(prog, inputs, arrays, {donate}, "
                      f"{olds_list}, {sinks})", 2)
            self.emit("else:")
            self.emit(f"outs = prog.call_arrays(arrays, {donate}, {sinks})", 2)
        else:
            self.emit("outs = prog.call_arrays(arrays, (), 0)")
        self.emit("del arrays")
        for i, k, key in plan.rebinds:
            n = self.lifted_index[i]
            self.emit(f"e{n}[{key!r}] = outs[{k}]")
            self.emit(f"vc = t{n}._vc")
            self.emit("if vc is None:")
            self.emit(f"t{n}._vc = [1]", 2)
            self.emit("else:")
            self.emit("vc[0] += 1", 2)
        made = {}
        for s, (i, k, key, *_) in enumerate(plan.grad_outs):
            self.emit(f"g{s}.__dict__[{key!r}] = outs[{k}]")
            made.setdefault(k, f"g{s}")
        if plan.pack is not None:       # GradPack.assign written out
            self.emit(f"PACK.array = outs[{plan.pack_out}]")
            self.emit("PACK.viewed = False")
            for i, marker in zip(plan.pack.inputs, plan.pack.markers):
                t, m = f"t{self.lifted_index[i]}", self.const(marker, "PG")
                self.emit(f"if {t}._grad is not {m}:")
                self.emit(f"{t}._grad = {m}", 2)
        if plan.single is None:         # (a step that returns nothing: None)
            self.emit(f"return {self.const(plan.result, 'C')}")
            return
        kind, k = plan.single
        if kind == "out":
            self.emit(f"return {made[k]}" if k in made else
                      f"return {self.const(plan.makers[k], 'M')}(outs[{k}])")
        elif kind == "in":
            self.emit(f"return inputs[{k}]")
        else:
            self.emit(f"return {self.const(k, 'C')}")
