"""Tracing: running a function on meta tensors and recording each op call as a Node.

The tracer is a mode on the Tracer key (fnx.dispatch.modes), so it sees every call,
factories included, and computes each output's shape and dtype by running the op on
the Meta backend: tracing touches no data.  With ``decompose_to`` it records the
decomposition of every op outside that level instead of the op itself.

>>> import fnx
>>> g = trace(lambda a, b: fnx.matmul(a, b).relu(), fnx.ones(2, 3), fnx.ones(3, 4))
>>> [str(n.target) for n in g.calls()]
['aten::matmul', 'aten::relu']
>>> [str(n.target) for n in trace(g.run, *g.example_inputs(), decompose_to="core").calls()]
['aten::mm', 'aten::relu']
"""
from __future__ import annotations

import contextlib
import dataclasses
import inspect

import numpy as np

from ..core import dtype as D
from ..core import tls
from ..core.device import CPU, META, canonical
from ..core.dispatch_key import META_KS, SPARSE_KEYS, DispatchKey
from ..core.layout import SparseNotTraceable, check_strided
from ..core.meta_array import MetaArray, meta_tensor
from ..core.tensor import GradWriteLog, Tensor
from ..ir.strides import VIEW_STRIDES, contiguous_strides
from ..ir.variants import (Special, bind_names, check_writable, functional_variant,
                           inverse_view, is_view_op, written_args)
from ..ops import aten, prims
from .graph import Graph, NodeMeta, _collect, same_mapping, same_sequence
from .levels import DecomposingMode, in_target, run_decomposition
from .eager_samplers import eager_sample, samples
from .guards import Guard, read_place
from .input_sources import READ_WHEN_CALLED, Held, Item, Read
from .joint import record_backward
from .python_state import (_MISSING, _changes, _is_traced, _snapshot, _stored_tensors,
                           appended_keys, autograd_state, describe_change, restore_autograd,
                           rollback, settle)
from .results import grad_flags, is_dataclass_instance, leaves, opaque_result, result_template
from .symbolic import SymFloat
from .user_frames import user_frame

__all__ = ["trace", "TracingMode", "FunctionalTracingMode", "DataDependentError",
           "is_compiling", "suspend_tracing", "read_traced", "rollback", "settle",
           "describe_change"]


class DataDependentError(RuntimeError):
    """An op's result depends on tensor values, which a trace does not have."""


class TracingMode(DecomposingMode):
    """Records op calls into ``graph``; tensors map to the nodes that produced them."""

    records_graph = True

    def __init__(self, graph: Graph, to: str = "aten", lift_captured: bool = False):
        super().__init__(to)
        self.graph = graph
        self._node_of = {}      # id(tensor) -> (tensor, node); holding the tensor keeps ids unique
        self._of_data = {}      # id(MetaArray) -> (tensor, node): finds aliases (below)
        self.lift_captured = lift_captured
        self.places = {}        # id(tensor) -> its places: guards.tensor_places
        self.lifted = []        # captured tensors made inputs, in placeholder order
        # id -> (captured tensor, its autograd_state when first read): a write of a value
        # that requires grad gives it trace-made history, undone after the trace
        self.autograd_before = {}
        # What feeds each placeholder, in order: ("arg", i), ("lifted", tensor) or
        # ("rng", (device, generator)) for a random key drawn fresh on every call.
        self.sources = []
        self.inputs = []        # the trace tensor (or captured tensor) of each placeholder
        self.guards = []        # Guards on the inputs' Python values (SymFloat decisions)
        self._guard_keys = set()
        self._scalars = {}      # source key -> SymFloat already made for it
        self.floats_read = {}   # placeholder index -> the float a scalar input held
        self._active = False
        # fnx.compile's handler of data-dependent points (fnx.lower.graph_breaks): hands
        # traced code the value a tensor has in this call; None: they raise
        self.breaks = None
        self.lines = None       # node -> user_frame() of its call, when asked (export errors)
        # Where autograd stops, JAX must stop too (a compiled module differentiated by
        # jax.vjp, fnx.lower.jax_autograd): the nodes whose value depends on an input that
        # requires grad (``_carries``), and a user-level call (``_depth`` 0: not inside a
        # decomposition) that takes a float tensor that does not require grad although
        # its node carries (made under no_grad, ``.data``) takes it through
        # prims.stop_gradient instead (``_cut``; one per node, ``_stopped``). None: not
        # asked (``trace(stop_gradients=...)``).
        self._carries = set()
        self._stopped = {}
        self._depth = 0
        self._inner = set()     # ids of tensors made below an autograd kernel: never cut

    def handle(self, op, ks, args, kwargs):
        if not self._depth and self._carries and not op.schema.is_mutable and \
                not is_view_op(op):
            args = tuple(self._cut(a) for a in args)
            kwargs = {k: self._cut(v) for k, v in kwargs.items()}
        self._depth += 1
        try:
            return super().handle(op, ks, args, kwargs)
        finally:
            self._depth -= 1

    def _cut(self, value):
        if isinstance(value, (list, tuple)):
            return same_sequence(value, (self._cut(v) for v in value))
        if not isinstance(value, Tensor) or value.requires_grad or id(value) in self._inner \
                or not (value.dtype.is_floating_point or value.dtype.is_complex):
            return value
        node = self.node_of(value)
        if node not in self._carries:
            return value
        stopped = self._stopped.get(node)
        if stopped is None:
            self._depth += 1
            try:
                stopped = self._stopped[node] = prims.stop_gradient(value)
            finally:
                self._depth -= 1
        return stopped

    def __enter__(self):
        self._active = True
        return super().__enter__()

    def __exit__(self, *exc):
        self._active = False
        return super().__exit__(*exc)

    def recording(self) -> bool:
        """Whether the trace is still running (a SymFloat kept past it is a plain float)."""
        return self._active

    def concrete_list(self, tensor):
        """``tensor.tolist()`` of a trace tensor: a graph break when ``fnx.compile`` handles
        them, else the data-dependence error of ``item()``."""
        if self.breaks is not None:
            return self.breaks.value(self, tensor, "tolist")
        if tensor.numel():
            raise _data_dependent("tolist")
        return []

    def concrete_array(self, tensor):
        """``tensor.numpy()`` (``np.asarray(tensor)``) of a trace tensor: as
        ``concrete_list``, the values a read-only copy (a write through it, which eagerly
        reaches the tensor, raises, and ``fnx.compile`` then runs the function eagerly)."""
        if self.breaks is not None:
            return self.breaks.value(self, tensor, "numpy")
        if tensor.numel():
            raise _data_dependent("numpy")
        return np.zeros(tuple(tensor.shape), tensor.dtype.numpy)

    def add_guard(self, guard: Guard) -> None:
        # The same decision on one input is often made many times (``alpha == 1`` for
        # every parameter's ``add_(g, alpha=-lr)``): kept once, it is checked once per
        # call. Only for one-input guards, whose wording spells out their whole
        # expression; guards on Python objects (no deps) may share a wording.
        deps = guard.deps
        if deps is not None and len(deps) == 1:
            key = (guard.what, guard.expected, deps)
            if key in self._guard_keys:
                return
            self._guard_keys.add(key)
        self.guards.append(guard)

    def scalar_input(self, value: float, source, what: str, key=None) -> SymFloat:
        """A Python float the traced code reads, as a 0-dim float64 program input fed from
        ``source`` (as in ``sources``) on every call; ``key`` identifies the place it was
        read from, so reading it twice gives one input."""
        if key is not None and key in self._scalars:
            return self._scalars[key]
        index = len(self.sources)
        node = self.graph.placeholder(f"s_{sum(k == 'scalar' for k, _ in self.sources)}"
                                      if source[0] == "scalar" else what,
                                      NodeMeta((), D.float64, CPU))
        self.sources.append(source)
        self.inputs.append(None)
        self.floats_read[index] = value
        sym = SymFloat(value, node, lambda v, i=index: v[i], self, what, frozenset((index,)))
        if key is not None:
            self._scalars[key] = sym
        return sym

    def value_read(self, index):
        """What placeholder ``index``, fed from Python state when called (a source kind in
        ``READ_WHEN_CALLED``), held when the trace read it."""
        return self.floats_read[index] if self.sources[index][0] == "scalar" else \
            self.inputs[index]

    def read_value(self, value, container, key, what):
        """What traced code sees when it reads ``container[key]`` (an optimizer's option):
        floats (and tuples of floats) become program inputs; other plain values are
        guarded, so a change recompiles instead of going stale."""
        if not self.lift_captured:
            return value
        if type(value) is float:
            return self.scalar_input(value, ("scalar", Read(container, key)), what,
                                     (id(container), key))
        if type(value) is tuple and value and all(type(v) is float for v in value):
            read = Read(container, key)
            return tuple(self.scalar_input(v, ("scalar", Item(read, i)), f"{what}[{i}]",
                                           (id(container), key, i))
                         for i, v in enumerate(value))
        if value is None or type(value) in (int, bool, str):
            read = Read(container, key)
            self.add_guard(Guard(lambda v, r=read: _plain(r()), _plain(value), what,
                                 read=(container, key)))
        elif isinstance(value, Tensor) and id(value) not in self._node_of and \
                not isinstance(value._data, MetaArray):
            # a tensor option (a Tensor learning rate): an input read from the option at
            # call time, not the tensor seen now (a scheduler may assign a new one)
            check_strided(value, "tracing")
            self.add_input(value, f"opt_{len(self.sources)}",
                           NodeMeta(tuple(value.shape), value.dtype, value.device),
                           ("item", Read(container, key)))
        return value

    def add_input(self, tensor, name, meta, source):
        node = self.graph.placeholder(name, meta)
        self.bind(tensor, node)
        if self._carries is not None and tensor.requires_grad and \
                (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
            self._carries.add(node)
        self.sources.append(source)
        self.inputs.append(tensor)
        return node

    def rng_key(self, device, generator):
        """A random key as a graph input (only when lifting captured tensors: fnx.compile
        feeds a fresh key per call); None otherwise, so the key is a recorded constant."""
        if not self.lift_captured:
            return None
        dev = CPU if device is None else canonical(device)
        t = meta_tensor((2,), D.int64, dev)
        n = sum(1 for kind, _ in self.sources if kind == "rng")
        self.add_input(t, f"rng_{n}", NodeMeta((2,), D.int64, dev), ("rng", (device, generator)))
        return t

    def bind(self, tensor: Tensor, node) -> None:
        self._node_of[id(tensor)] = (tensor, node)
        if isinstance(tensor._data, MetaArray):
            self._of_data[id(tensor._data)] = (tensor, node)

    def node_of(self, value):
        """The node (or nested structure of nodes) standing for ``value``."""
        if type(value) is SymFloat:
            return value._node
        if isinstance(value, Tensor):
            hit = self._node_of.get(id(value))
            if hit is not None:
                return hit[1]
            if isinstance(value._data, MetaArray):
                # Another handle on a traced value's data (autograd saves outputs as such
                # aliases, ``.data``, ``detach``-like copies of the handle): the same node.
                hit = self._of_data.get(id(value._data))
                if hit is not None:
                    return hit[1]
            # A tensor with data captured from outside the trace (a parameter, a buffer):
            # an input of the graph when lifting, else recorded by value.
            check_strided(value, "tracing")
            meta = NodeMeta(tuple(value.shape), value.dtype, value.device)
            if self.lift_captured:
                self.autograd_before.setdefault(id(value), (value, autograd_state(value)))
                places = self.places.get(id(value))
                if places is not None and all(read_place(p) is value for p in places):
                    # a module's tensor attribute, a global or closure tensor: read when
                    # called (a stateful module rebinds ``self.h`` on every call; the
                    # tensor seen now goes stale)
                    return self.add_input(value, f"attr_{len(self.sources)}", meta,
                                          ("item", Held(places, value)))
                self.lifted.append(value)
                return self.add_input(value, f"l_{len(self.lifted) - 1}", meta,
                                      ("lifted", value))
            node = self.graph.constant(value, meta)
            self.bind(value, node)
            return node
        if isinstance(value, (list, tuple)):
            return same_sequence(value, (self.node_of(v) for v in value))
        if is_dataclass_instance(value):
            # (a result: ``Output(loss, logits)``, also one that is a dict, as Hugging
            # Face's ModelOutput): its fields, rebuilt into a new instance per call by
            # ``restore_result``
            return tuple(self.node_of(getattr(value, f.name))
                         for f in dataclasses.fields(value))
        if isinstance(value, dict):         # (a result: {"loss": ..., "logits": ...})
            return same_mapping(value, ((k, self.node_of(v)) for k, v in value.items()))
        return value

    def _meta_arg(self, value):
        if isinstance(value, Tensor):
            if not isinstance(value._data, MetaArray):
                return meta_tensor(tuple(value.shape), value.dtype, value._device)
            return value
        if isinstance(value, (list, tuple)):
            return same_sequence(value, (self._meta_arg(v) for v in value))
        return value

    def emit(self, op, ks, args, kwargs):
        if op.namespace != "prims" and _has_symbolic((args, kwargs)):
            # Only prims' Scalar arguments reach a lowering as program values; elsewhere
            # (an op kept above prims) the float is specialized under a guard.
            args, kwargs = _specialize(args), _specialize(kwargs)
        node_args = tuple(self.node_of(a) for a in args)
        node_kwargs = {k: self.node_of(v) for k, v in kwargs.items()}
        meta_args = tuple(self._meta_arg(a) for a in args)
        meta_kwargs = {k: self._meta_arg(v) for k, v in kwargs.items()}
        device = meta_kwargs.get("device")
        if "device" in meta_kwargs:
            meta_kwargs["device"] = META
        elif device is None:
            # a device given by position (``prims.device_put(x, device)``) counts too
            at = _device_position(op)
            if at is not None and at < len(args) and args[at] is not None:
                device = args[at]
        if device is None:
            device = _common_device(op, args) or CPU
        if op.name == "_local_scalar_dense":
            if self.breaks is not None:
                return self.breaks.value(self, args[0], "item")
            raise _data_dependent("item")
        try:
            if DispatchKey.Meta not in op.kernels and op.decomposition is not None:
                # No meta function: trace the decomposition into a scratch graph to learn
                # the output shapes (factories inside it must stay data-free too).
                with TracingMode(Graph(), "aten"):
                    out = op.decomposition(*meta_args, **kwargs)
            else:
                out = self.run_below(op, META_KS, meta_args, meta_kwargs)
        except NotImplementedError as e:
            if self.breaks is not None:     # no meta shape: run it, its result an input
                out = self.breaks.op(self, op, args, kwargs)
                if out is not None:
                    return out
            if any(k in op.kernels for k in SPARSE_KEYS):     # it makes a sparse tensor
                raise SparseNotTraceable(f"tracing {op.qualname} at {user_frame()}: sparse "
                                         f"tensors are not supported in a trace; run the "
                                         f"function eagerly") from None
            raise DataDependentError(f"tracing {op.qualname} at {user_frame()}: {e}") from None
        carries = False
        if self._carries and op is not prims.stop_gradient.default:
            read = []
            _collect((node_args, tuple(node_kwargs.values())), read)
            carries = any(n in self._carries for n in read)
        if carries and tls.state.below_autograd:
            # made inside an op autograd differentiates as a whole (a decomposition below
            # its autograd kernel): not requiring grad there is not a stop
            self._inner.update(id(o) for o in (out if isinstance(out, (tuple, list))
                                               else (out,)))
        if isinstance(out, Tensor):
            out._device = device
            node = self.graph.call(op, node_args, node_kwargs, _meta(out, device))
            if self.lines is not None:
                self.lines[node] = user_frame()
            self.bind(out, node)
            if carries:
                self._carries.add(node)
            return out
        if isinstance(out, (tuple, list)) and all(isinstance(o, Tensor) for o in out):
            for o in out:
                o._device = device
            node = self.graph.call(op, node_args, node_kwargs,
                                   tuple(_meta(o, device) for o in out))
            if self.lines is not None:
                self.lines[node] = user_frame()
            for i, o in enumerate(out):
                item = self.graph.getitem(node, i)
                self.bind(o, item)
                if carries:
                    self._carries.add(item)
            return out
        if out is None and not op.schema.returns:
            # an op that only writes its arguments (a custom op's ``-> ()``)
            self.graph.call(op, node_args, node_kwargs, ())
            return None
        raise DataDependentError(
            f"tracing {op.qualname} at {user_frame()}: the result is a Python value that "
            f"depends on tensor data (Tensor.item(), bool(tensor), `if x.sum() > 0:`), which a "
            f"trace cannot know")


class FunctionalTracingMode(TracingMode):
    """A tracer that records a functional program: writes rebind, views are tracked.

    Every tensor object of the trace maps to the node of its current value.  A view
    remembers its root and the chain of view ops from it; a write through a view
    rebuilds the root with ``*_scatter`` ops and bumps the root's version, and a view
    whose root changed since it was computed is recomputed from the root when read.
    Writes inside decompositions are caught too, since every nested call comes here.
    """

    def __init__(self, graph, to="aten", lift_captured=False):
        super().__init__(graph, to, lift_captured)
        self._alias = {}        # id(view) -> (root tensor, chain of (op, args, kwargs, index))
        self._version = {}      # id(root) -> number of writes
        self._seen = {}         # id(view) -> root version its node was computed at
        self.written = []       # roots written, in first-write order
        self._handles = []      # other handles on a lifted tensor's memory (_same_memory)

    # -- reading: a stale view is recomputed from its root
    def node_of(self, value):
        if isinstance(value, Tensor):
            alias = self._alias.get(id(value))
            if alias is None and self.lift_captured and id(value) not in self._node_of:
                alias = self._same_memory(value)
            if alias is not None:
                root, chain = alias
                if self._seen[id(value)] != self._version.get(id(root), 0):
                    fresh = self._replay(root, chain)
                    self.bind(value, super().node_of(fresh))
                    self._seen[id(value)] = self._version.get(id(root), 0)
        return super().node_of(value)

    def _same_memory(self, value):
        """A captured tensor that is another handle on a lifted tensor's memory (``p.data``,
        made anew on each read) is an alias of it with no view ops: one input, and a
        write through either is seen through both, as eagerly. None otherwise."""
        data = value.__dict__.get("_data")
        if data is None or isinstance(data, MetaArray):
            return None
        owner = value.__dict__.get("_handle_of")
        if owner is not None and owner.__dict__.get("_data") is data and \
                id(owner) not in self._alias:
            self.node_of(owner)     # (lifted now if it was not: read when called)
        else:
            owner = None
        for u in [owner] if owner is not None else self.lifted:
            if u.__dict__.get("_data") is data and u._dtype is value._dtype and \
                    u._strides == value._strides:
                self._alias[id(value)] = (u, ())
                self._seen[id(value)] = -1      # (bound to u's current node when read)
                self._handles.append(value)     # (alive while its id is a key here)
                return self._alias[id(value)]
        return None

    def assign_data(self, dst, value):
        """``dst.data = value`` in traced code: a write of ``value`` into ``dst`` (outside
        autograd), after which the two share memory as eagerly. A new shape, dtype or
        device cannot be a program's write: that call runs eagerly."""
        if (tuple(dst.shape), dst.dtype, dst.device) != \
                (tuple(value.shape), value.dtype, value.device):
            raise DataDependentError(
                f"tracing reached Tensor.data = a {value.dtype} {list(value.shape)} tensor "
                f"on a {dst.dtype} {list(dst.shape)} one at {user_frame()}: a compiled "
                f"program cannot change a tensor's shape, dtype or device")
        if not isinstance(value.__dict__.get("_data"), MetaArray):
            # a tensor from outside (``p.data = q.data``): eagerly the two share memory from
            # now on, beyond this call, which no program output can make
            raise DataDependentError(
                f"tracing reached Tensor.data = a tensor it did not compute at "
                f"{user_frame()}: the two would share memory after the call")
        from_node = self.node_of(value)
        self._write(dst, value)
        root = self._alias.get(id(dst), (dst, ()))[0]
        if id(value) not in self._alias:
            # (a later write through either is seen through the other)
            self._alias[id(value)] = (root, ())
            self._seen[id(value)] = self._version.get(id(root), 0)
            self.bind(value, from_node)

    def _replay(self, root, chain):
        v = root
        for op, args, kwargs, index in chain:
            v = op(v, *args, **kwargs)
            v = v[index] if index is not None else v
        return v

    # -- dispatching
    def handle(self, op, ks, args, kwargs):
        if self.breaks is not None and self.breaks.eager_random and samples(op):
            new = eager_sample(self.breaks, self, op, args, kwargs)    # (fallback_random)
            if new is not None:
                if not op.schema.is_mutable:
                    return new
                self._write(args[0], new)
                return args[0]
        if op.schema.is_mutable:
            functional = functional_variant(op)
            if op.decomposition is not None and (functional is None or
                                                 not in_target(op, self.to)):
                return run_decomposition(op, args, kwargs)
            return self._mutate(op, functional, args, kwargs)
        view = is_view_op(op) and args and isinstance(args[0], Tensor)
        if view:
            # the strides the view has in PyTorch: view()'s errors (x.t().view(-1)) as eager
            geometry = VIEW_STRIDES.get(op.qualname)
            strides = geometry(args[0], bind_names(op, args, kwargs)) \
                if geometry is not None else None
        out = super().handle(op, ks, args, kwargs)
        if view:
            base = args[0]
            root, chain = self._alias.get(id(base), (base, ()))
            rest = tuple(args[1:])
            outs = out if isinstance(out, (tuple, list)) else (out,)
            for i, o in enumerate(outs):
                index = i if isinstance(out, (tuple, list)) else None
                self._alias[id(o)] = (root, chain + ((op, rest, dict(kwargs), index),))
                self._seen[id(o)] = self._version.get(id(root), 0)
                st = strides[i] if isinstance(strides, list) else strides
                if st is not None and st != contiguous_strides(tuple(o.shape)):
                    o.__dict__["_strides"] = st
        return out

    def _mutate(self, op, functional, args, kwargs):
        if functional is None:
            raise NotImplementedError(f"functionalize: {op.qualname} writes its arguments and "
                                      f"has neither a functional variant nor a decomposition")
        bound = bind_names(op, args, kwargs)
        written = written_args(op)
        fargs = {k: v for k, v in bound.items() if k not in written or k == "self"}
        if isinstance(functional, Special):
            self_arg = fargs.pop("self")
            new = functional(self_arg, **{("from_" if k == "from" else k): v
                                          for k, v in fargs.items()})
        else:
            params = functional.schema.arguments
            new = functional(*[fargs[a.name] for a in params if not a.kwarg_only],
                             **{a.name: fargs[a.name] for a in params if a.kwarg_only})
        if "out" in written:
            # out= resizes `out` to the result (PyTorch), then casts into its dtype.
            dst = bound["out"]
            if tuple(new.shape) != tuple(dst.shape) and isinstance(dst._data, MetaArray):
                dst._data = MetaArray(tuple(new.shape), dst._data.dtype)
        else:
            dst = bound[written[0]]
        if not isinstance(new, (tuple, list)):
            # what eager's Functionalize refuses, the trace refuses: a dtype that cannot
            # be cast, and a result bigger than ``dst`` (``a.add_(b)`` broadcasting ``a``
            # up); a smaller one is expanded by _like, as the functional variants of fills
            # need
            check_writable(op.name, new, dst, resize="out" in written or
                           _expands(tuple(new.shape), tuple(dst.shape)))
        self._write(dst, _like(new, dst, op))
        return dst

    def _write(self, dst, new):
        alias = self._alias.get(id(dst))
        if alias is None and self.lift_captured and id(dst) not in self._node_of:
            alias = self._same_memory(dst)      # (``p.data.copy_(v)``, never read)
        root, chain = alias or (dst, ())
        if chain:
            # Every intermediate view from the root, then scatter back outwards.
            parents = [root]
            for step in chain[:-1]:
                parents.append(self._replay(parents[-1], (step,)))
            value = new
            for (op, args, kwargs, index), parent in zip(reversed(chain), reversed(parents)):
                value = inverse_view(op, parent, value, args, kwargs, index)
            self.bind(root, super().node_of(value))
            self.bind(dst, super().node_of(new))
        else:
            self.bind(root, super().node_of(new))
        self._version[id(root)] = self._version.get(id(root), 0) + 1
        if chain:
            self._seen[id(dst)] = self._version[id(root)]
        if not any(r is root for r in self.written):
            self.written.append(root)


def contract_error(error: Exception) -> Exception:
    """``error``, marked as breaking a rule the traced form of an API checks (``cond``'s
    branches must match, as PyTorch checks them eagerly too): ``fnx.compile`` raises it
    rather than running the function eagerly, where fnx cannot check the rule."""
    error._fnx_contract = True
    return error


def _data_dependent(method) -> DataDependentError:
    return DataDependentError(
        f"tracing reached Tensor.{method}() at {user_frame()}: the Python value of a "
        f"tensor (item(), bool(tensor), `if x.sum() > 0:`, tolist(), numpy()) depends on "
        f"data, which a trace does not have")


def _plain(value):
    """A guarded value with its type: ``1 == 1.0 == True`` must not match each other."""
    return (type(value), value)


def _add_arg_writes(mode, graph, arg_writes, extra) -> bool:
    """Make the tensors the traced code wrote into the call's containers (``arg_writes``)
    outputs, listed in ``graph.stored``; True where a write is not replayable: a change
    other than an item set or append, a value that is not a tensor the trace computed (an
    argument itself, a Python value, a new container)."""
    if arg_writes is None:
        return False
    writes = arg_writes()
    if writes is None or not all(_is_traced(mode, v) and
                                 mode.node_of(v).kind != "placeholder" for _, _, v in writes):
        return True
    for place, key, t in writes:
        graph.stored.append((place, key, t, len(extra) + 1))
        extra.append(mode.node_of(t))
    return False


def _undo_captured_history(mode) -> list:
    """The captured tensors the trace gave autograd history (an in-place write of a value
    that requires grad into a buffer or global): their state put back, since the history
    was made of the trace's tensors."""
    changed = []
    for t, state in mode.autograd_before.values():
        now = autograd_state(t)
        if now[0] != state[0] or any(a is not b for a, b in zip(now[1:], state[1:])):
            restore_autograd(t, state)
            changed.append(t)
    return changed


def _has_symbolic(value) -> bool:
    if type(value) is SymFloat:
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_symbolic(v) for v in value)
    if isinstance(value, dict):
        return any(_has_symbolic(v) for v in value.values())
    return False


def _specialize(value):
    if type(value) is SymFloat:
        return float(value)                 # SymFloat.__float__ records the guard
    if isinstance(value, (list, tuple)):
        return same_sequence(value, (_specialize(v) for v in value))
    if isinstance(value, dict):
        return {k: _specialize(v) for k, v in value.items()}
    return value


def _expands(shape, to) -> bool:
    """Whether a tensor of ``shape`` broadcasts to ``to`` without growing it."""
    return len(shape) <= len(to) and all(a in (1, b) for a, b in zip(shape[::-1], to[::-1]))


def _like(new, old, op):
    """The written value as the destination holds it: same dtype and shape."""
    if isinstance(new, (tuple, list)):
        raise NotImplementedError(f"functionalize: {op.qualname} writes several outputs")
    if new.dtype is not old.dtype:
        new = aten._to_copy.default(new, dtype=old.dtype)
    if tuple(new.shape) != tuple(old.shape):
        new = aten.expand.default(new, list(old.shape))
    return new


def _meta(t: Tensor, device) -> NodeMeta:
    return NodeMeta(tuple(t.shape), t.dtype, device)


_DEVICE_AT: dict = {}


def _device_position(op):
    """The position of ``op``'s positional ``device`` argument, or None."""
    at = _DEVICE_AT.get(op, _MISSING)
    if at is _MISSING:
        positional = [a.name for a in op.schema.arguments if not a.kwarg_only]
        at = _DEVICE_AT[op] = positional.index("device") if "device" in positional else None
    return at


def _common_device(op, args):
    """The device of the op's tensor arguments; mixing devices is the error eager raises
    (a 0-dim CPU tensor may join any device, as in PyTorch)."""
    found = None
    for a in args:
        if isinstance(a, (list, tuple)):
            d = _common_device(op, a)
            tensors = [d] if d is not None else []
        elif isinstance(a, Tensor):
            if a.ndim == 0 and a._device is CPU:
                continue
            tensors = [a._device]
        else:
            continue
        for d in tensors:
            if found is None:
                found = d
            elif d != found:
                raise RuntimeError(f"Expected all tensors to be on the same device, but found "
                                   f"at least two devices, {found} and {d}! (when checking "
                                   f"argument for {op.name})")
    if found is None:
        for a in args:
            if isinstance(a, Tensor):
                return a._device
    return found


def trace(fn, *args, decompose_to: str = "aten", input_names=None, lift_captured=False,
          functional=False, capture_grads=False, stored_roots=(), mode_class=None,
          breaks=None, record_lines=False, shape_env=None, dynamic_dims=(),
          stop_gradients=False, joint=False, places=None, same_inputs=False,
          arg_writes=None, **kwargs) -> Graph:
    """Trace ``fn(*args, **kwargs)`` into a Graph; tensor arguments become placeholders.

    ``decompose_to="core"`` or ``"prims"`` records decompositions down to that level.
    Placeholders are named after ``fn``'s parameters unless ``input_names`` is given.
    Tensors ``fn`` reads from outside are constants, or with ``lift_captured`` extra
    placeholders after the arguments (``graph.lifted`` holds those tensors).
    With ``functional`` the recorded program has no writes or aliasing (see
    ``FunctionalTracingMode``); inputs it wrote are extra outputs listed in
    ``graph.mutated_inputs`` as (input index, output index).
    Arguments that require grad become trace tensors that require grad, so autograd (above
    the Tracer key) records and a ``backward()`` inside ``fn`` is traced too. With
    ``capture_grads`` every ``.grad`` that ``fn`` writes on an input is restored afterwards
    and listed in ``graph.grad_writes`` as (input index, output index or None for None).
    Tensors of the trace that ``fn`` left on Python objects reachable from
    ``stored_roots`` (a cached mask on a module, an optimizer's lazily made state) are
    outputs too, listed in ``graph.stored`` as (container, key, tensor, output index).
    ``arg_writes`` (a call's ``rebuild.writes``, ``fnx.lower.call_key``): called after
    ``fn``, the writes to copies of the call's containers, whose tensors are stored
    outputs too (their container an ``ArgPlace``); ``graph.arg_write_refused`` is true
    where one cannot be replayed (not a tensor the trace computed).
    ``mode_class``: a subclass of the mode to record with (``fnx.func`` records ``detach``
    as a stop-gradient).
    With ``stop_gradients`` (a forward that JAX will differentiate, traced in grad mode)
    a value autograd does not differentiate (made under ``no_grad``, ``.data``) enters
    the ops that read it through ``prims.stop_gradient`` (``TracingMode._cut``).
    With ``joint`` fnx's autograd differentiates the result too, against cotangent
    placeholders: the graph is a joint forward-backward graph (``fnx.graph.joint``).
    ``breaks`` (``fnx.lower.graph_breaks.BreakTracer``) hands data-dependent values
    (``item()``, ``tolist()``) to the traced code instead of raising.
    With ``record_lines`` ``graph.lines`` maps each call node to the user's line that made
    it (slow: for error messages).
    ``dynamic_dims``: ``(input position, dim)`` pairs of tensor arguments whose size is a
    symbol of ``shape_env`` (a ``fnx.graph.symint.ShapeEnv``) instead of a number: shapes
    and node arguments computed from it stay ``SymInt`` expressions, and every Python
    decision on it is a guard in ``shape_env.guards``.
    ``places`` (``guards.tensor_places``): captured tensors held by a module attribute,
    a global or a closure cell become inputs read from there when called
    (``("item", read)``).
    With ``same_inputs`` a tensor given twice (``f(x, x)``) is one trace tensor, as it is
    one object eagerly (``a is b``); its second placeholder is left unread.
    """
    graph = Graph()
    if mode_class is not None:
        mode = mode_class(graph, decompose_to, lift_captured)
    elif functional:
        mode = FunctionalTracingMode(graph, decompose_to, lift_captured)
    else:
        mode = TracingMode(graph, decompose_to, lift_captured)
    mode.breaks = breaks
    if places:
        mode.places = places
    if not stop_gradients:
        mode._carries = None
    if record_lines:
        mode.lines = {}
    count = [0]
    given = {}      # id(tensor argument) -> its trace tensor (same_inputs)
    names = list(input_names) if input_names is not None else _param_names(fn, len(args))

    def placeholder(value, name):
        if isinstance(value, Tensor):
            check_strided(value, "tracing")
            shape = tuple(value.shape)
            if dynamic_dims:
                shape = tuple(shape_env.create_symbol(s, (count[0], d), f"{name}.size({d})")
                              if (count[0], d) in dynamic_dims else s
                              for d, s in enumerate(shape))
            t = meta_tensor(shape, value.dtype, value._device)
            if value.requires_grad:
                t.requires_grad_(True)
            mode.add_input(t, name, NodeMeta(tuple(t.shape), t.dtype, value._device),
                           ("arg", count[0]))
            count[0] += 1
            return given.setdefault(id(value), t) if same_inputs else t
        if type(value) is float and lift_captured:
            # fnx.compile: a float argument is a program input, not a constant
            sym = mode.scalar_input(value, ("arg", count[0]), name)
            count[0] += 1
            return sym
        if isinstance(value, (list, tuple)):
            return same_sequence(value, (placeholder(v, f"{name}_{i}")
                                         for i, v in enumerate(value)))
        return value

    targs = [placeholder(a, n) for a, n in zip(args, names)]
    tkwargs = {k: placeholder(v, k) for k, v in kwargs.items()}
    log = GradWriteLog() if capture_grads else None
    before = _snapshot(stored_roots)
    with mode:
        try:
            if log is not None:
                with log:
                    out = fn(*targs, **tkwargs)
            else:
                out = fn(*targs, **tkwargs)
        except Exception as e:
            # The caller may run the function eagerly next, or the error (bad input a meta
            # function refused) reaches the user: either way, undo what the trace did to
            # .grad and to the Python state reachable from ``stored_roots``, which would
            # otherwise keep the trace's meta tensors
            if log is not None:
                for t, old in log.writes.values():
                    t._grad = old
            _undo_captured_history(mode)
            rollback(_changes(before, mode))
            if not isinstance(e, DataDependentError) and \
                    not getattr(e, "_fnx_contract", False):
                with contextlib.suppress(AttributeError, TypeError):   # (a slotted one)
                    e._fnx_raised_in_trace = True   # (CompiledFunction reruns eagerly)
            raise
        graph.python_writes = _changes(before, mode)
        result = mode.node_of(out)
        graph.result_template = result_template(out, mode.inputs)
        graph.output_requires_grad = any(
            isinstance(t, Tensor) and t.requires_grad for t in leaves(out))
        graph.result_grad = grad_flags(out)
        extra = []
        graph.mutated_inputs = []
        if functional:
            if lift_captured:
                _lift_written_captures(mode)
            finals = [(i, mode.node_of(t)) for i, t in enumerate(mode.inputs)
                      if any(w is t for w in mode.written)]
            graph.mutated_inputs = [(i, len(extra) + k + 1) for k, (i, _) in enumerate(finals)]
            extra += [n for _, n in finals]
        graph.grad_writes = []
        graph.grad_reads = []
        if log is not None:
            extra += _grad_outputs(mode, log, graph, len(extra) + 1)
            # whether a real tensor's .grad was None when the trace first read it
            graph.grad_reads = [(t, none) for t, none in log.reads.values()
                                if not isinstance(t._data, MetaArray)]
        graph.stored = []
        for container, key, t in appended_keys(_stored_tensors(mode, stored_roots), before):
            graph.stored.append((container, key, t, len(extra) + 1))
            extra.append(mode.node_of(t))
        graph.arg_write_refused = _add_arg_writes(mode, graph, arg_writes, extra)
        graph.opaque_result = opaque_result(mode, out, graph.stored)
        if joint:
            try:
                extra += record_backward(mode, graph, result, leaves(out),
                                         [t for _, _, t, _ in graph.stored], list(extra))
            except Exception:
                _undo_captured_history(mode)
                rollback(graph.python_writes)
                raise
        if extra:
            result = (result, *extra)
    graph.output(result)
    graph.captured_history = _undo_captured_history(mode)
    if log is not None:
        _inputs_read_from_grads(mode, log)
    graph.lifted = mode.lifted
    graph.input_sources = mode.sources
    graph.guards = mode.guards
    # What the inputs read from Python state at call time held when traced: a program run
    # once for the call it was traced on (fnx.compile's one-shot entries) is fed these, as
    # the trace may have changed that state since (a scheduler's step() after the
    # optimizer's read its learning rate)
    graph.values_read = {i: mode.value_read(i) for i, (kind, _) in enumerate(mode.sources)
                         if kind in READ_WHEN_CALLED}
    graph.lines = mode.lines or {}
    return graph


def _inputs_read_from_grads(mode, log):
    """A lifted tensor the trace got from ``.grad`` is fed as ``("grad", owner)``: the
    owner's ``.grad`` when the program is called. The tensor itself is that call's value
    only: a step replaces ``.grad`` with new tensors (``set_to_none``, accumulation), so
    the next call must read the new one."""
    owners = {id(g): t for g, t in log.values.values()}
    if not owners:
        return
    mode.sources = [("grad", owners[id(src)]) if kind == "lifted" and id(src) in owners
                    else (kind, src) for kind, src in mode.sources]
    mode.lifted = [t for t in mode.lifted if id(t) not in owners]


def _lift_written_captures(mode):
    """A captured tensor the function overwrote without reading it (``buf.copy_(x)``) was
    never lifted: give it a placeholder too, so its final value is written back to it."""
    for w in mode.written:
        if isinstance(w._data, MetaArray) or any(w is t for t in mode.inputs):
            continue
        mode.lifted.append(w)
        mode.graph.placeholder(f"l_{len(mode.lifted) - 1}",
                               NodeMeta(tuple(w.shape), w.dtype, w.device))
        mode.sources.append(("lifted", w))
        mode.inputs.append(w)


def _grad_outputs(mode, log, graph, first):
    """Turn the ``.grad`` writes made during a trace into outputs (and undo them)."""
    nodes = []
    for t, before in log.writes.values():
        final = t._grad
        t._grad = before
        index = next((i for i, x in enumerate(mode.inputs) if x is t), None)
        if index is None:
            continue        # an intermediate's retained grad: not visible after the call
        if final is None:
            graph.grad_writes.append((index, None))
        else:
            graph.grad_writes.append((index, first + len(nodes)))
            nodes.append(mode.node_of(final))
    return nodes


def _param_names(fn, n):
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if len(params) < n:
        params = params + [f"arg{i}" for i in range(len(params), n)]
    return [p if p not in ("self",) else "self_" for p in params[:n]]


def read_traced(value, container, key, what=None):
    """``container[key]`` as traced code should see it: under an ``fnx.compile`` trace a
    float becomes a program input and other plain values a guard (``TracingMode.read_value``);
    otherwise ``value`` itself. Containers whose options feed compiled programs (an
    optimizer's ``param_groups``) read through this."""
    for mode in reversed(tls.state.modes):
        if isinstance(mode, TracingMode):
            return mode.read_value(value, container, key, what or f"[{key!r}]")
    return value


# ----------------------------------------------------------------------------- fnx.compiler



def is_compiling() -> bool:
    """True while ``fnx.compile`` (or ``trace``) is tracing this thread."""
    return any(isinstance(m, TracingMode) for m in tls.state.modes)


@contextlib.contextmanager
def suspend_tracing():
    """Run a block on real tensors in the middle of a trace, e.g. to create state that
    outlives the trace (an optimizer's momentum buffers on its first step). Tensors made
    here are real; the traced program reads them as inputs and writes them back.

    >>> import fnx
    >>> state = {}
    >>> def step(x):
    ...     if "buf" not in state:
    ...         with fnx.compiler.suspend_tracing():
    ...             state["buf"] = fnx.zeros(2)
    ...     state["buf"].add_(x)
    ...     return state["buf"] * 1
    >>> f = fnx.compile(step)
    >>> f(fnx.ones(2)), f(fnx.ones(2))
    (tensor([1., 1.]), tensor([2., 2.]))
    """
    state = tls.state
    modes, include = state.modes, state.include
    if modes:
        state.suspensions += 1     # fnx.compile asks whether its trace made outside state
    state.modes = []
    state.include = include & ~(1 << DispatchKey.Tracer)
    try:
        yield
    finally:
        state.modes = modes
        state.include = include
