"""The Functionalize key: in-place ops and views on functional (immutable-array) backends.

A tensor of a functional backend (CUDA: its ``_data`` is an immutable ``jax.Array``)
carries the Functionalize key.  Its kernels, below ADInplaceOrView (which bumps versions
and does autograd's view bookkeeping) and above the backend:

- an in-place or ``out=`` op validates through the op's meta function, computes its
  functional variant (``add_.Tensor -> add.Tensor``, from ``fnx.ir.variants``)
  on the backend and *writes* the result: the tensor's ``_data`` is rebound.  Ops that
  write other arguments (batch norm's running stats) run their decomposition, whose own
  writes come back here; ops with neither run on the CPU backend and are written back;
- a view op computes the view's data on the backend, remembers its root (the tensor
  it was derived from through views only: ``_froot``) and its chain of view ops from it
  (``_fchain``), registers itself with the root, weakly, and keeps PyTorch's strides;
- writing a view rebuilds the base through the inverse of each view op of the chain
  (``select_scatter``, ``slice_scatter``, the inverse permutation, ...: ``inverse_view``)
  and rebinds the base; then every other live view of that base is recomputed from the
  new base right away, so every reader of ``_data`` (kernels, printing, ``.cpu()``,
  compiled programs) sees current values.  Ops that neither write nor alias fall through.

Versions, ``_base`` and autograd's view bookkeeping are the ADInplaceOrView key's, exactly
as on CPU (``detach`` shares data and versions but has no ``_base``: hence the own
record).  Eager refresh (rather than lazily, on read) keeps every reader correct, also
those that bypass dispatch; its cost is paid only by writes to tensors with live views.
While a tracing mode records a graph (``fnx.compile``), this key steps aside: the
functional tracer does the same job on the graph.
"""
from __future__ import annotations

import weakref

import numpy as np

from ..backends.cpu._core import same_device_error, wrap
from ..core import dtype as D
from ..core.device import CPU
from ..core.dispatch_key import (AUTOCAST_BITS, AUTOGRAD_BITS, BACKEND_KEYS, AliasKey, DispatchKey,
                                 below)
from ..core.tensor import Tensor
from ..core.tls import ExcludeDispatchKeyGuard
from ..dispatch.dispatcher import FALLTHROUGH, all_ops, register_fallback
from ..dispatch.modes import current_mode
from ..ir.strides import VIEW_STRIDES, contiguous_strides
from ..ir.aten.out_variants import OUT_RULE
from ..ir.variants import (Special, bind_names, check_writable, functional_variant,
                           inverse_view, is_view_op, written_args)
from ..ops import aten
from ..core.tensor import register_functional_alias

__all__ = ["register_all", "register_op", "mutate", "write", "views_of", "make_alias"]

_BELOW = below(DispatchKey.Functionalize)
_CPU_BIT = 1 << DispatchKey.CPU
_TRACER_BIT = 1 << DispatchKey.Tracer
_FUNC_BIT = 1 << DispatchKey.Functionalize
_VIEW_BIT = 1 << DispatchKey.ADInplaceOrView
# Work done on the user's behalf (functional variants, scatters, view replays) is neither
# recorded by autograd nor counted as versions: the op that asked for it already was.
_INTERNAL = AUTOGRAD_BITS | AUTOCAST_BITS | _VIEW_BIT
# Replaying views and scattering into bases: straight to the backend kernels.
_BACKEND_ONLY = _INTERNAL | _FUNC_BIT | _TRACER_BIT

_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers "
            "to a single memory location. Please clone() the tensor before performing the "
            "operation.")


def _recording():
    """True while a mode records a graph (the functional tracer handles writes there)."""
    mode = current_mode()
    return mode is not None and mode.records_graph


# ----------------------------------------------------------------------------- kernels

def _composite_only(op) -> bool:
    return AliasKey.CompositeImplicitAutograd in op.kernels and \
        not any(k in op.kernels for k in BACKEND_KEYS)


def _kind(op) -> str:
    if _composite_only(op):
        return "plain"          # the ops its decomposition calls come here themselves
    if op.schema.is_mutable:
        return "mutable"
    if is_view_op(op):
        return "view"
    return "plain"


def _mutable_kernel(op):
    def kernel(ks, *args, **kwargs):
        if ks & _TRACER_BIT and _recording():
            return op.redispatch(ks & _BELOW, *args, **kwargs)
        return mutate(op, ks, args, kwargs)
    return kernel


def _view_kernel(op):
    geometry = VIEW_STRIDES.get(op.qualname)

    def kernel(ks, self, *args, **kwargs):
        if ks & _TRACER_BIT and _recording():
            return op.redispatch(ks & _BELOW, self, *args, **kwargs)
        functional = self._ks & _FUNC_BIT
        # the strides the view would have in PyTorch (their errors, e.g. view() of a
        # transposed tensor, come first)
        strides = geometry(self, bind_names(op, (self,) + args, kwargs)) \
            if functional and geometry is not None else None
        out = op.redispatch(ks & _BELOW, self, *args, **kwargs)
        if functional:
            root, chain = _root_chain(self)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            for i, o in enumerate(outs):
                d = o.__dict__
                d["_froot"] = root
                d["_fchain"] = chain + ((op, args, kwargs, i if outs is out else None),)
                _register_view(root, o)
                st = strides[i] if isinstance(strides, list) else strides
                if st is not None and st != contiguous_strides(tuple(o.shape)):
                    d["_strides"] = st
        return out
    return kernel


def _root_chain(t):
    """The tensor whose data ``t``'s data is computed from, and the view ops from it.
    (Functionalization keeps its own record: autograd's ``_base`` skips ``detach``.)"""
    d = t.__dict__
    root = d.get("_froot")
    return (t, ()) if root is None else (root, d["_fchain"])


def _fallback(op, ks, args, kwargs):
    """Ops registered after ``register_all`` (extensions): classified on first use."""
    register_op(op)
    return op.redispatch(ks, *args, **kwargs)


def register_op(op) -> None:
    """Give ``op`` its Functionalize kernel (FALLTHROUGH when it neither writes nor aliases)."""
    if DispatchKey.Functionalize in op.kernels:
        return
    kind = _kind(op)
    if kind == "mutable":
        op.register(DispatchKey.Functionalize, _mutable_kernel(op))
    elif kind == "view":
        op.register(DispatchKey.Functionalize, _view_kernel(op))
    else:
        op.register(DispatchKey.Functionalize, FALLTHROUGH)


def register_all() -> None:
    register_functional_alias(make_alias)
    for op in all_ops():
        register_op(op)
    register_fallback(DispatchKey.Functionalize, _fallback)


# ----------------------------------------------------------------------------- views

def _register_view(root, view) -> None:
    views = root.__dict__.get("_fviews")
    if views is None:
        views = root._fviews = weakref.WeakSet()
    views.add(view)


def views_of(t):
    """The live views of the functional tensor ``t`` (``t`` must be a base)."""
    views = t.__dict__.get("_fviews")
    return list(views) if views else []


def make_alias(src: Tensor, new: Tensor) -> Tensor:
    """Make ``new`` (sharing ``src``'s data) an alias of ``src``: writes through either
    reach the other.  For ``Tensor.data``-style handles on functional backends."""
    if not src._ks & _FUNC_BIT:
        return new
    root, chain = _root_chain(src)
    new.__dict__["_froot"] = root
    new.__dict__["_fchain"] = chain + ((aten.alias.default, (), {}, None),)
    _register_view(root, new)
    return new


def _apply(x, step):
    op, args, kwargs, index = step
    out = op(x, *args, **kwargs)
    return out[index] if index is not None else out


def _replay(root, chain):
    x = root
    for step in chain:
        x = _apply(x, step)
    return x


def _refresh(root, skip=None) -> None:
    """Recompute every live view of ``root`` from its current data."""
    views = root.__dict__.get("_fviews")
    if not views:
        return
    with ExcludeDispatchKeyGuard(_BACKEND_ONLY):
        for v in list(views):
            if v is not skip and v.__dict__.get("_froot") is root:
                v._data = _replay(root, v.__dict__["_fchain"])._data


def write(dst: Tensor, new: Tensor) -> None:
    """Give ``dst`` the value ``new`` (same shape and dtype), through its root if it is a
    view; every other view of the root is recomputed."""
    root, chain = _root_chain(dst)
    if not chain:
        if new._data.shape != dst._data.shape:
            dst.__dict__.pop("_strides", None)      # out= resized: contiguous again
        dst._data = new._data
        _refresh(dst)
        return
    with ExcludeDispatchKeyGuard(_BACKEND_ONLY):
        parents = [root]
        for step in chain[:-1]:
            parents.append(_apply(parents[-1], step))
        value = new
        for (op, args, kwargs, index), parent in zip(reversed(chain), reversed(parents)):
            value = _inverse(op, parent, value, args, kwargs, index)
    root._data = value._data
    dst._data = new._data
    _refresh(root, skip=dst)


def _inverse(op, parent, new, args, kwargs, index):
    """``parent`` with the region view ``op`` covers replaced by ``new``."""
    name = op.name
    if name == "expand":
        if tuple(new.shape) != tuple(parent.shape):
            raise RuntimeError(_OVERLAP)
        return new
    if name == "view_as_real":
        return aten.view_as_complex.default(new)
    if name == "view_as_complex":
        return aten.view_as_real.default(new)
    if name == "view" and op.overload_name == "dtype":
        return aten.view.dtype(new, parent.dtype)
    if name in ("as_strided", "unfold"):
        return _scatter_by_position(op, parent, new, args, kwargs)
    return inverse_view(op, parent, new, args, kwargs, index)


def _scatter_by_position(op, parent, new, args, kwargs):
    """Scatter ``new`` into ``parent`` where view ``op`` of ``parent`` reads: the same view
    of the positions 0..n-1 (on the host) says where each element goes.  A view reading
    one element twice cannot be written (PyTorch refuses it too)."""
    n = parent.numel()
    pos = aten.view.default(aten.arange.start_step(0, n, 1, dtype=D.int64), list(parent.shape))
    idx = op(pos, *args, **kwargs).contiguous().numpy().reshape(-1)
    if np.unique(idx).size != idx.size:
        raise RuntimeError(_OVERLAP)
    index = _transfer(wrap(idx.copy(), D.int64), parent._device)
    flat = aten.scatter.src(aten.reshape.default(parent, [n]), 0, index,
                            aten.reshape.default(new, [-1]))
    return aten.view.default(flat, list(parent.shape))


# ----------------------------------------------------------------------------- writes

def _is_functional(t) -> bool:
    return isinstance(t, Tensor) and bool(t._ks & _FUNC_BIT)


class _Plan:
    """How to functionalize one writing op (computed once per op)."""
    __slots__ = ("written", "functional", "special", "fpos", "fkw", "is_copy", "out")

    def __init__(self, op):
        self.written = written_args(op)
        self.functional = f = functional_variant(op)
        self.special = isinstance(f, Special)
        self.is_copy = op.name == "copy_"
        self.out = [name == "out" for name in self.written]
        if f is not None and not self.special:
            params = f.schema.arguments
            self.fpos = [a.name for a in params if not a.kwarg_only]
            self.fkw = [a.name for a in params if a.kwarg_only]


_plans: dict = {}


def mutate(op, ks, args, kwargs):
    """Run the writing op ``op`` functionally and write its results into its arguments."""
    plan = _plans.get(op)
    if plan is None:
        plan = _plans[op] = _Plan(op)
    bound = bind_names(op, args, kwargs)
    written = plan.written
    dsts = [bound[n] for n in written]
    # a written list (``Tensor(a!)[]``, the foreach ops) is checked tensor by tensor
    for d in [x for v in dsts for x in (v if isinstance(v, (list, tuple)) else (v,))]:
        if not _is_functional(d):
            if plan.is_copy:
                # copy_ into a non-functional tensor (cuda -> cpu): copy the source there
                src = _transfer(bound["src"], d._device)
                return op.redispatch(d._ks & _BELOW & ~_FUNC_BIT, d, src,
                                     bound.get("non_blocking", False))
            dev = next(x._device for x in _tensors(args, kwargs) if _is_functional(x))
            raise same_device_error(op.name, dev, d._device)
    if plan.is_copy:
        src = bound["src"]
        if src._device != dsts[0]._device and (src.ndim or src._device.type != "cpu"):
            bound["src"] = src = _transfer(src, dsts[0]._device)
            if "src" in kwargs:
                kwargs = {**kwargs, "src": src}
            else:
                args = (args[0], src) + tuple(args[2:])
    functional = plan.functional
    with ExcludeDispatchKeyGuard(_INTERNAL):
        if functional is None:
            if op.meta is not None:
                op.meta(*args, **kwargs)        # PyTorch's checks, before any write
            if op.decomposition is not None:
                # writes other arguments: its decomposition's writes come back here
                return op.decomposition(*args, **kwargs)
            return _mutate_on_cpu(op, args, kwargs, dsts)
        if plan.special:
            if op.meta is not None:
                op.meta(*args, **kwargs)        # a Python stand-in checks nothing itself
            fargs = {k: v for k, v in bound.items() if k not in written}
            new = functional(bound["self"], **{("from_" if k == "from" else k): v
                                               for k, v in fargs.items()})
        else:
            if op in OUT_RULE:      # an out= op with its own dtype rule (linalg, fft, ...)
                op.meta(*args, **kwargs)
            # the functional op checks its own arguments; the write's refusals follow
            new = functional.redispatch(ks & _BELOW, *[bound[n] for n in plan.fpos],
                                        **{n: bound[n] for n in plan.fkw if n in bound})
        news = new if isinstance(new, (tuple, list)) else (new,)
        if len(news) != len(dsts):
            raise NotImplementedError(f"functionalize: {op.qualname} writes {len(dsts)} "
                                      f"tensors but its functional variant returns "
                                      f"{len(news)}")
        values = []
        for v, d, resize in zip(news, dsts, plan.out):
            check_writable(op.name, v, d, resize)
            values.append(_like(v, d, resize))
    for d, v in zip(dsts, values):
        write(d, v)
    return dsts[0] if len(op.schema.returns) == 1 else _returns(op, dsts)


def _returns(op, dsts):
    n = len(op.schema.returns)
    if n == 0:
        return None
    return dsts[0] if n == 1 else tuple(dsts)


def _like(new, dst, resize):
    """The written value as ``dst`` holds it: ``dst``'s dtype, and its shape unless ``out=``
    (which is resized to the result, as PyTorch does)."""
    if new._dtype is not dst._dtype:
        new = aten._to_copy.default(new, dtype=dst._dtype)
    if tuple(new.shape) != tuple(dst.shape) and not resize:
        new = aten.expand.default(new, list(dst.shape))
    return new


def _tensors(args, kwargs):
    for v in list(args) + list(kwargs.values()):
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (x for x in v if isinstance(x, Tensor))


def _transfer(t, dev):
    """``t`` copied to device ``dev`` by its own backend's ``_to_copy``."""
    with ExcludeDispatchKeyGuard(_INTERNAL):
        return aten._to_copy.default(t, device=dev)


def _mutate_on_cpu(op, args, kwargs, dsts):
    """No functional form: run the op on the CPU backend with host copies of the functional
    tensors, then write the copies of the written ones back."""
    copies = {}     # id(original) -> host copy

    def down(v):
        if _is_functional(v):
            c = copies[id(v)] = _transfer(v, CPU)
            c._is_wrapped_number = v._is_wrapped_number
            return c
        if isinstance(v, (list, tuple)):
            return type(v)(down(x) for x in v)
        return v

    op.redispatch(_CPU_BIT, *[down(a) for a in args], **{k: down(v) for k, v in kwargs.items()})
    for d in dsts:
        write(d, _transfer(copies[id(d)], d._device))
    return _returns(op, dsts)
