"""The ADInplaceOrView key: version counters and view bookkeeping for every backend.

Registered once per op, from the op's schema: an op that writes an argument
(``Tensor(a!)``) bumps that tensor's version after the backend ran; an op whose
output aliases its input (``-> Tensor(a)``) marks the output as a view of the
input's base, shares its version counter and records the view chain that rebuilds it
from that base (autograd and functionalization replay it).  Every other op falls through this key.

Being the one place every write and every alias passes, it is also where a *resident* CPU
tensor (storage in a ``jax.Array`` a compiled program left, read by kernels through a
read-only NumPy view) gets a private writable copy first (``make_private``): the tensor
written, and the tensor a view is taken of, so that the view and its base share writable
memory as NumPy views do.
"""
from __future__ import annotations

import weakref

from ..core.dispatch_key import AUTOGRAD_BITS, BACKEND_KEYS, AliasKey, DispatchKey, below
from ..core.tensor import make_private
from ..dispatch.dispatcher import all_ops
from ..ir.strides import check_no_internal_overlap
from ..ir.variants import is_view_op

_BELOW = below(DispatchKey.ADInplaceOrView)


def _written_positions(op):
    """(positional indices, keyword names) of the arguments ``op`` writes."""
    pos, kw = [], []
    i = 0
    for a in op.schema.arguments:
        if a.kwarg_only:
            if a.is_write:
                kw.append(a.name)
        else:
            if a.is_write:
                pos.append(i)
            i += 1
    return tuple(pos), tuple(kw)


def mark_view(out, base):
    """Make ``out`` a view of ``base``'s base, sharing its version counter."""
    root = base._base if base._base is not None else base
    out._base = root
    out._vc = root._shared_version_counter()
    if not root._ks & AUTOGRAD_BITS:
        # autograd turns on requires_grad for these views if the root later gets a history
        views = root._views
        if views is None:
            views = root._views = weakref.WeakSet()
        views.add(out)
    return out


def _inplace_kernel(op, pos, kw):
    name = op.name
    if pos == (0,) and not kw:
        # the common case, written out: the op writes ``self`` alone
        def kernel(ks, self, *args, **kwargs):
            if self._jax is not None:
                make_private(self)          # copy-on-write of a resident storage
            if 0 in (self._strides or getattr(self._data, "strides", ())):
                check_no_internal_overlap(name, self)
            out = op.redispatch(ks & _BELOW, self, *args, **kwargs)
            vc = self._vc
            if vc is None:
                self._vc = [1]
            else:
                vc[0] += 1
            return out
        return kernel

    def written(args, kwargs):
        # a written argument may be a list of tensors (``Tensor(a!)[]``, the foreach ops)
        for t in [args[i] for i in pos] + [kwargs.get(k) for k in kw]:
            if isinstance(t, (list, tuple)):
                yield from (x for x in t if x is not None)
            elif t is not None:
                yield t

    def kernel(ks, *args, **kwargs):
        ts = list(written(args, kwargs))
        for t in ts:
            if t._jax is not None:
                make_private(t)             # copy-on-write of a resident storage
            check_no_internal_overlap(name, t)
        out = op.redispatch(ks & _BELOW, *args, **kwargs)
        for t in ts:
            t._bump_version()
        return out
    return kernel


def _view_kernel(op):
    def kernel(ks, self, *args, **kwargs):
        if self._jax is not None:
            make_private(self)      # the view and its base share writable memory
        out = op.redispatch(ks & _BELOW, self, *args, **kwargs)
        if out is self:     # (a no-op view a backend answered with its input itself)
            return out
        chain = self._view_chain if self._base is not None else ()
        if isinstance(out, (tuple, list)):
            for i, o in enumerate(out):
                mark_view(o, self)
                o._view_chain = chain + ((op, args, kwargs, i),)
                o._gfv = o._vc[0]
        else:
            mark_view(out, self)
            out._view_chain = chain + ((op, args, kwargs, None),)
            out._gfv = out._vc[0]
        return out
    return kernel


def register_op(op) -> None:
    """Give ``op`` its ADInplaceOrView kernel, if it writes or aliases.

    An op whose only kernel is its decomposition (CompositeImplicitAutograd) gets none:
    the ops it calls do the bookkeeping, and it may return a copy or ``self`` (reshape,
    contiguous), which must not be marked as a view.  An op with a backend kernel of its
    own gets one even when it also has a decomposition.
    """
    if DispatchKey.ADInplaceOrView in op.kernels:
        return
    if AliasKey.CompositeImplicitAutograd in op.kernels and \
            not any(k in op.kernels for k in BACKEND_KEYS):
        return
    pos, kw = _written_positions(op)
    if pos or kw:
        op.register(DispatchKey.ADInplaceOrView, _inplace_kernel(op, pos, kw))
    elif is_view_op(op):
        op.register(DispatchKey.ADInplaceOrView, _view_kernel(op))


def register_all() -> None:
    for op in all_ops():
        register_op(op)
