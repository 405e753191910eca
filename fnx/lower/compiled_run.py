"""Running a compiled function that is one program: arrays in, arrays out, planned once.

``ProgramPlan`` holds what an entry of ``fnx.compile`` (``compiled_function._Entry``) needs
per call beyond reading its arguments, decided when the entry is built: which
placeholder (or captured constant) feeds each program input, and what becomes of each
output: a result, a ``.grad``, or the new storage of an input the program overwrote
(``jax_storage.rebind``; that input's buffer is donated to the program when nothing
else holds it). A call is then one pass over the inputs, the program, one pass over the
outputs: no dict of nodes, no dispatch, no work that grows with the graph.
"""
from __future__ import annotations

import sys
from weakref import getweakrefcount

import jax
import numpy as np

from ..core.device import canonical
from ..core.dispatch_key import DispatchKey
from ..core.dtype import float64
from ..core.grad_mode import no_grad
from ..core import tls
from ..core.tensor import Tensor, drop_resident, set_grad
from ..graph.graph import Node, _collect as _collect_nodes, map_nodes
from .host_checks import HostChecks
from .jax_storage import (ARRAY_TYPE, BY_PROGRAM, BY_TRANSFER, KEEP, donatable, feed,
                          rebindable)
from .packed_grads import GradPack, packable

__all__ = ["ProgramPlan", "feed_modes"]

_getrefcount = sys.getrefcount
_FUNC_BIT = 1 << DispatchKey.Functionalize
_CPU_OR_FUNC = _FUNC_BIT | 1 << DispatchKey.CPU


class ProgramPlan:
    """How one call of an entry compiled to a single program runs on arrays."""

    @classmethod
    def of(cls, entry):
        """The plan of ``entry``, or None when it is not one program of the JAX target
        (eager calls between regions, another target)."""
        steps = entry.steps
        if len(steps) != 1 or not hasattr(steps[0][1], "call_arrays") or entry.stored:
            return None     # (stores on Python objects are replayed by the general path)
        region, program = steps[0]
        index = {p: i for i, p in enumerate(entry.places)}
        if any(n not in index and n.kind != "constant" for n in region.inputs):
            return None
        return cls(entry, region, program, index)

    def __init__(self, entry, region, program, index):
        self.program = program
        # per program input: (placeholder index, None, how) or (None, captured tensor, how),
        # ``how`` a NumPy storage is made resident (jax_storage.feed)
        hows = feed_modes(entry.sources)
        self.feed = [(index[n], None, hows[index[n]]) if n in index
                     else (None, n.target, BY_TRANSFER) for n in region.inputs]
        # Python floats (a learning rate) enter as 0-dim float64 arrays kept while the
        # value repeats: passed as floats, every call enters enable_x64 and converts them
        # (~15 us of dispatch on a small step). The array is made (a device_put, ~80 us)
        # on a value's second call in a row, so a value that changes every step (a
        # scheduler's) is passed as before. Not for SPMD programs, whose inputs are laid
        # out over devices.
        self.scalar_feeds = [] if program.spmd is not None else \
            [j for j, (i, c, _) in enumerate(self.feed) if c is None and
             tuple(entry.places[i].meta.shape) == () and
             entry.places[i].meta.dtype is float64]
        self._scalars = {}      # feed position -> (float, its array)
        out_index = {n: k for k, n in enumerate(region.outputs)}
        self.makers = program.makers
        self.where = {}         # node -> ("out", k) | ("in", i) | ("const", tensor)
        for n in entry.graph.nodes:
            if n in out_index:
                self.where[n] = ("out", out_index[n])
            elif n in index:
                self.where[n] = ("in", index[n])
            elif n.kind == "constant":
                self.where[n] = ("const", n.target)
        # Overwritten inputs whose new value is a program output of their own shape and
        # dtype are rebound to it (their buffer donated when nothing else holds it);
        # the others are written by copy_.
        self.rebinds, self.copies, donate = [], [], []
        position = {i: j for j, (i, c, _) in enumerate(self.feed) if c is None}
        for i, node in entry.writeback:
            w = self.where[node]
            meta, place = node.meta, entry.places[i].meta
            if w[0] == "out" and meta.dtype is place.dtype and \
                    tuple(meta.shape) == tuple(place.shape):
                self.rebinds.append((i, w[1], _storage_key(place)))
                if i in position:
                    donate.append((position[i], i))
            else:
                self.copies.append((i, w))
        self.rebind_inputs = [i for i, *_ in self.rebinds]
        # a laid-out input's new value and its gradient keep its layout (Program.pins)
        pins = {k: position[i] for i, k, _ in self.rebinds if i in position}
        self.donate_pairs = sorted(donate)
        self.donate = tuple(j for j, _ in self.donate_pairs)
        rebound = {i: (k, key) for i, k, key in self.rebinds}
        # (input position, output index, storage key, input) of each donated buffer: its
        # output holds the old value when a value check fails (Program.call_guarded)
        self.donated_outs = tuple((j, *rebound[i], i) for j, i in self.donate_pairs)
        # .grad values that are program outputs: (input, output, how its tensor is made)
        self.grad_outs, self.grad_other = [], []
        for i, n in entry.grad_writes:
            w = self.where[n] if n is not None else None
            if w is not None and w[0] == "out":
                k = w[1]
                meta = region.outputs[k].meta
                self.grad_outs.append((i, k, _storage_key(meta), meta.dtype,
                                       canonical(meta.device), tuple(meta.shape)))
                if i in position:
                    pins.setdefault(k, position[i])
            else:
                self.grad_other.append((i, w))
        result = entry.result
        self.pack = None        # GradPack: the gradients packed into one output
        # (captured parameters only, not DTensors: a DTensor's gradient keeps its
        # parameter's layout, Program.pins; an argument may be one on another call. Not
        # gradients the next call reads, accumulating: each read would copy them out.)
        read = {id(t) for kind, t in entry.sources if kind == "grad"}
        if program.spmd is None and program._local is None and packable(self.grad_outs) \
                and all(entry.sources[g[0]][0] == "lifted" and
                        not entry.sources[g[0]][1]._keep_resident and
                        id(entry.sources[g[0]][1]) not in read for g in self.grad_outs):
            pins = self._pack(entry, region, result, pins)
        program = self.program
        program.pins = pins
        self.host = HostChecks.of(program, self.feed)
        self.single = self.where[result] if isinstance(result, Node) else None
        self.result = result

    def _pack(self, entry, region, result, pins) -> dict:
        """Return the gradients as one flat output (``packed_grads``) unless one of them
        is also used otherwise (a result, a written input): the program becomes its
        packing variant and every output index here is renumbered; the new ``pins``."""
        ks = [k for _, k, *_ in self.grad_outs]
        used = {k for _, k, _ in self.rebinds}
        used.update(w[1] for _, w in self.copies + self.grad_other
                    if w is not None and w[0] == "out")
        outs = []
        _collect_nodes(result, outs)
        used.update(w[1] for w in map(self.where.get, outs) if w and w[0] == "out")
        if used & set(ks):
            return pins
        self.program = self.program.packing(ks)
        new, j = {}, 0
        for k in range(len(region.outputs)):
            if k not in ks:
                new[k], j = j, j + 1
        self.pack_out = j

        def moved(w):
            return ("out", new[w[1]]) if w is not None and w[0] == "out" else w
        self.where = {n: moved(w) for n, w in self.where.items()
                      if w[0] != "out" or w[1] in new}
        self.rebinds = [(i, new[k], key) for i, k, key in self.rebinds]
        self.copies = [(i, moved(w)) for i, w in self.copies]
        self.grad_other = [(i, moved(w)) for i, w in self.grad_other]
        self.donated_outs = tuple((j, new[k], key, i) for j, k, key, i in self.donated_outs)
        self.makers = self.program.makers
        self.pack = GradPack([g[0] for g in self.grad_outs], self.grad_outs[0][3],
                             [g[5] for g in self.grad_outs])
        self.grad_outs = []
        return {new[k]: p for k, p in pins.items() if k in new}

    def run(self, inputs):
        # The common case is written out (resident storage nobody else holds, no NumPy
        # view of it); anything else goes through jax_storage's functions.
        getrc = _getrefcount
        program = self.program
        host = self.host
        if host is not None and program.check_values and host.hold(inputs):
            program = program.without_checks(host.skip)
        # asked first: the inputs list, then the running program, hold NumPy inputs too
        free = []
        for i in self.rebind_inputs:
            t = inputs[i]
            d = t.__dict__
            # resident CPU storage with no NumPy view; a cuda tensor's with no views or
            # aliases (``rebindable``'s answers for these, written out)
            if "_jax" in d:
                fast = "_data" not in d and t._base is None
            else:
                fast = t._ks & _CPU_OR_FUNC == _FUNC_BIT and t._base is None and \
                    "_froot" not in d and not d.get("_fviews")
            free.append(fast or rebindable(t))
        arrays = []
        append = arrays.append
        for i, c, how in self.feed:
            t = inputs[i] if c is None else c
            d = getattr(t, "__dict__", None)
            if d is not None:
                a = d.get("_jax")
                if a is None:
                    # a cuda tensor's storage is fed as it is (not bound to a name here:
                    # feed counts the references to a NumPy storage)
                    if type(d.get("_data")) is ARRAY_TYPE:
                        append(d["_data"])
                        continue
                elif d.get("_data") is d.get("_jview"):
                    append(a)
                    continue
            append(feed(t, how))
        for j in self.scalar_feeds:
            if type(arrays[j]) is float:
                arrays[j] = self.scalar_feed(j, arrays[j], arrays)
        donate = self.donate
        if donate and not all(free):
            # feeding made a NumPy input resident after it was found not rebindable: its
            # new value is copied in, so its buffer must not be given away
            donate = ()
        if donate:
            for j, i in self.donate_pairs:
                d = inputs[i].__dict__
                a = arrays[j]
                # the tensor's _jax (a cuda tensor's _data, found rebindable above), the
                # inputs list, ``a``, getrefcount's
                fast = getrc(a) == 4 and (a is d.get("_jax") and "_data" not in d or
                                          a is d.get("_data") and "_jax" not in d and
                                          inputs[i]._ks & _CPU_OR_FUNC == _FUNC_BIT)
                del a
                if not fast and not donatable(inputs[i], arrays[j]):
                    donate = ()
                    break
        # The .grad tensors this call replaces, when nothing else can see them: their
        # buffers are given to the program for the new gradients, and the tensors kept
        grad_outs = self.grad_outs
        olds = []
        if grad_outs and tls.state.grad_log is None:    # (else a trace records writes)
            for i, _, key, dtype, dev, shape in grad_outs:
                old = inputs[i]._grad
                if old is None or not _reusable(old, key, dtype, dev, shape):
                    olds = ()
                    del arrays[len(self.feed):]
                    break
                olds.append(old)
                arrays.append(old.__dict__[key])
        else:
            olds = ()
        # packed gradients: the last call's array is the buffer for the new ones
        pack = self.pack
        logged = tls.state.grad_log is not None
        sink = pack.sink(inputs) if pack is not None and not logged else None
        if sink is not None:
            arrays.append(sink)
            del sink
            sinks = 1
        else:
            sinks = len(olds)
        if (donate or sinks) and program.guards_buffers():
            outs = self._call_guarded(program, inputs, arrays, donate, olds, sinks)
        else:
            outs = program.call_arrays(arrays, donate, sinks)
        del arrays
        made = {}               # output index -> the one tensor holding it
        for (i, k, key), ok in zip(self.rebinds, free):
            t = inputs[i]
            if ok:          # rebind: the new array is the storage; a write bumps the version
                d = t.__dict__
                d[key] = outs[k]
                if key == "_jax" and "_data" in d:
                    del d["_data"]
                    d.pop("_jview", None)
                if "_rows" in d:    # a padded DTensor: its new value stays padded
                    t._settle()
                vc = t._vc
                if vc is None:
                    t._vc = [1]
                else:
                    vc[0] += 1
            else:
                write_back(t, self._value(("out", k), outs, made, inputs))
        for i, w in self.copies:
            write_back(inputs[i], self._value(w, outs, made, inputs))
        makers = self.makers
        if olds:
            for old, (i, k, key, *_) in zip(olds, grad_outs):
                old.__dict__[key] = outs[k]
                made[k] = old
        else:
            for i, k, *_ in grad_outs:
                t = inputs[i]
                g = made.get(k)
                if g is None:
                    g = made[k] = makers[k](outs[k])
                set_grad(t, g)
                if "_rows" in t.__dict__:   # its gradient came padded: a DTensor as it is
                    t._settle()
        del olds
        if pack is not None:
            if not logged:
                pack.assign(inputs, outs[self.pack_out])
            else:       # a trace records the writes: tensors of their own
                for i, g in zip(pack.inputs, pack.tensors(outs[self.pack_out])):
                    set_grad(inputs[i], g)
        for i, w in self.grad_other:
            set_grad(inputs[i], self._value(w, outs, made, inputs) if w is not None else None)
        single = self.single
        if single is not None:
            kind, k = single
            if kind == "out":
                t = made.get(k)
                return t if t is not None else makers[k](outs[k])
            return inputs[k] if kind == "in" else k
        where = self.where
        return map_nodes(self.result, lambda n: self._value(where[n], outs, made, inputs))

    def scalar_feed(self, j, v, arrays):
        """What feeds the float ``v`` at position ``j`` (``scalar_feeds``): the float itself,
        or, on the second call in a row with this value, its array (made once, kept)."""
        hit = self._scalars.get(j)
        # (0.0 == -0.0: a zero is never reused, so its sign is never wrong)
        if hit is None or hit[0] != v or not v:
            self._scalars[j] = (v, None)
            return v
        return hit[1] if hit[1] is not None else self._scalar_array(j, v, arrays)

    def _scalar_array(self, j, v, arrays):
        """The float ``v`` fed at position ``j`` as a float64 array (float32 where the
        program takes it so: ``Program.narrow``) on the device of the program's other
        inputs (kept for the next calls); ``v`` itself when they are not all on one
        device."""
        # only where every array input sits on one and the same device: a program over
        # laid-out inputs (a mesh) wants its scalars replicated, which a float gets
        devices = {d for a in arrays if type(a) is ARRAY_TYPE for d in a.sharding.device_set}
        where = next((a.sharding for a in arrays if type(a) is ARRAY_TYPE), None)
        if len(devices) != 1:
            a = v
        elif j in self.program.narrow:      # (an input the program takes as float32)
            a = jax.device_put(np.float32(v), where)
        else:
            with jax.enable_x64(True):
                a = jax.device_put(np.float64(v), where)
        self._scalars[j] = (v, a)
        return a

    def _call_guarded(self, program, inputs, arrays, donate, olds, sinks):
        """The program's outputs for a call that gives up buffers with value checks on. If
        a check failed, the tensors whose buffers were given up get them back (the outputs
        then hold their old values: no version bump, nothing changed) before the error is
        raised; so does a gradient pack (``sinks`` without ``olds``)."""
        n = len(self.feed)
        keep = tuple((j, k) for j, k, _, _ in self.donated_outs) if donate else ()
        keep += tuple((n + s, g[1]) for s, g in enumerate(self.grad_outs[:len(olds)]))
        packed = sinks and not olds
        if packed:
            keep += ((n, self.pack_out),)
        outs, error = program.call_guarded(arrays, donate, sinks, keep)
        if error is None:
            return outs
        if packed:
            self.pack.array = outs[self.pack_out]
        if donate:
            for _, k, key, i in self.donated_outs:
                d = inputs[i].__dict__
                d[key] = outs[k]
                if key == "_jax":
                    d.pop("_data", None)
                    d.pop("_jview", None)
        for old, (_, k, key, *_) in zip(olds, self.grad_outs):
            old.__dict__[key] = outs[k]
        raise error

    def _value(self, w, outs, made, inputs):
        kind, k = w
        if kind == "out":
            t = made.get(k)
            if t is None:
                t = made[k] = self.makers[k](outs[k])
            return t
        return inputs[k] if kind == "in" else k


def write_back(t, value) -> None:
    """Give the input ``t`` the value the program computed for it. A new shape is an
    ``out=`` argument the program resized (as eager's ``out=`` does): ``t`` takes the
    value's size and data (a view cannot be resized, as in eager)."""
    with no_grad():
        if tuple(t.shape) == tuple(value.shape):
            t.copy_(value)
            return
        if t._base is not None:
            raise RuntimeError(f"fnx.compile: cannot resize the out= view of shape "
                               f"{list(t.shape)} to {list(value.shape)}")
        data = value.to(dtype=t.dtype)._data
        if isinstance(data, np.ndarray):
            data = np.array(data)           # the tensor's own writable storage
        drop_resident(t)
        t._data = data
        t.__dict__.pop("_strides", None)
        vc = t._vc
        if vc is None:
            t._vc = [1]
        else:
            vc[0] += 1


def feed_modes(sources) -> list:
    """How each input of a compiled function is made resident when it is NumPy: arguments
    through a jitted identity (cheap per call), captured tensors (parameters, buffers,
    read on every call) by one transfer, random keys (new every call) never."""
    return [BY_PROGRAM if kind == "arg" else BY_TRANSFER if kind in ("lifted", "grad", "item")
            else KEEP for kind, _ in sources]


def _storage_key(meta) -> str:
    """Where a tensor of ``meta``'s device keeps its jax.Array: ``_jax`` (a resident CPU
    tensor), ``_data`` (a cuda tensor)."""
    return "_jax" if getattr(meta.device, "type", None) == "cpu" else "_data"


def _reusable(old, key, dtype, dev, shape) -> bool:
    """Whether the ``.grad`` tensor ``old``, about to be replaced by a new tensor, may
    keep its identity and give its buffer for the new values: nothing could tell the
    difference. ``old`` is a plain tensor holding nothing but its storage array (no views,
    no history, no hooks or attributes, no NumPy view of it alive), of the new gradient's
    dtype, device and shape, and nothing references it but its owner's ``.grad`` (and the
    caller's variable), not even weakly; nothing but ``old`` holds its array. (The caller
    asks only when no trace is recording ``.grad`` writes: ``tls.state.grad_log``.)"""
    # references: the owner's ``_grad``, the caller's ``old``, ours, getrefcount's; the
    # array's: ``old``'s dict, ``cur``, getrefcount's (the cheapest tests first)
    if old.__class__ is not Tensor or _getrefcount(old) != 4 or getweakrefcount(old):
        return False
    d = old.__dict__
    cur = d.get(key)
    return len(d) == 4 and type(cur) is ARRAY_TYPE and _getrefcount(cur) == 3 and \
        d.get("_dtype") is dtype and ((dv := d.get("_device")) is dev or dv == dev) and \
        cur.shape == shape
