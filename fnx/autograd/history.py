"""A tensor's place in the backward graph (``edge_of``), and autograd through views written
in place.

A view remembers how to rebuild it from its base (``_view_chain``, recorded by the
ADInplaceOrView key for every view op, with or without grad). When an op writes a view
in place, the *base* gets the new history: a ``CopySlices`` node whose backward takes the
base's gradient, runs the op's formula on the view's region of it, and puts the result
back in that region. The view's own ``grad_fn`` is then rebuilt from the base by replaying
the chain, and any other view of the same base rebuilds its ``grad_fn`` the next time it is
used (its version no longer matches ``_gfv``, the version its ``grad_fn`` was made at).
"""
from __future__ import annotations

import weakref

from ..core.dispatch_key import AUTOGRAD_BITS
from ..core.grad_mode import enable_grad
from .graph import FREED, AccumulateGrad, Node, ag_bit

__all__ = ["edge_of", "rebase_history", "refresh_view_grad_fn", "replay", "CopySlices"]


def edge_of(t):
    """The edge a gradient for ``t`` flows along: (grad_fn, output_nr), or None."""
    if not t._ks & AUTOGRAD_BITS:
        return None
    if t._base is not None and t._gfv != t._vc[0]:
        refresh_view_grad_fn(t)
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    acc = t._grad_acc() if t._grad_acc is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._grad_acc = weakref.ref(acc)
    return (acc, 0)


def replay(chain, base):
    """Apply a view chain [(op, args, kwargs, index)] to ``base``."""
    for op, args, kwargs, idx in chain:
        base = op(base, *args, **kwargs)
        if idx is not None:
            base = base[idx]
    return base


class CopySlices(Node):
    """The base's history after an in-place op on one of its views."""
    __slots__ = ("chain", "inner", "self_index", "base_meta")

    def name(self):
        return "CopySlices"

    def release(self):
        self.inner.release()

    def apply(self, grads, create_graph):
        g = grads[0]
        if g is None:
            return [None] * len(self.next_edges)
        if self.inner.saved is None:
            raise RuntimeError(FREED)
        res = g.clone()
        region = replay(self.chain, res)
        inner = self.inner.apply([region.clone()] + [None] * (self.inner.num_outputs - 1),
                                 create_graph)
        gself = inner[self.self_index]
        if gself is None:
            region.zero_()
        else:
            region.copy_(gself)
        out = list(inner)
        out[self.self_index] = None
        return [res] + out


def rebase_history(self, node) -> None:
    """After in-place op ``node`` wrote ``self``: give ``self`` (or its base) the new history."""
    base = self._base
    if base is None:
        _views_require_grad(self)
        self._ks |= ag_bit(self._ks)
        self.grad_fn = node
        self._output_nr = 0
        return
    # The node's "self" edge was the view's old history; the base's old history replaces it.
    idx = _self_index(node)
    inner_edges = [None if i == idx else e for i, e in enumerate(node.next_edges)]
    cs = CopySlices([edge_of(base)] + inner_edges)
    cs.chain = self._view_chain
    cs.inner = node
    cs.self_index = idx
    cs.base_meta = (base.shape, base._dtype, base._device)
    _views_require_grad(base)
    base._ks |= ag_bit(base._ks)
    base.grad_fn = cs
    base._output_nr = 0
    _regenerate(self, base)


def _views_require_grad(base) -> None:
    """A base that gets a history makes its existing views require grad too (their
    ``grad_fn`` is rebuilt when next used, see ``refresh_view_grad_fn``)."""
    views = base._views
    if views is not None:
        for v in list(views):
            v._ks |= ag_bit(v._ks)
            v._gfv = -1
        base._views = None


def _self_index(node) -> int:
    i = 0
    for name, is_list in node.spec.tensor_args:
        if name == "self":
            return i
        i += node.counts[name] if is_list else 1
    raise AssertionError("in-place op without a self argument")


def _regenerate(view, base) -> None:
    with enable_grad():
        tmp = replay(view._view_chain, base)
    view._ks |= ag_bit(view._ks)
    view.grad_fn = tmp.grad_fn
    view._output_nr = tmp._output_nr
    view._gfv = view._vc[0]


def refresh_view_grad_fn(view) -> None:
    """Rebuild a view's history after its base (or another view of it) was written."""
    base = view._base
    if base._ks & AUTOGRAD_BITS:
        _regenerate(view, base)
    else:
        view._gfv = view._vc[0]
