"""The backward graph: ``Node`` (a tensor's ``grad_fn``), edges, saved tensors.

Each differentiable op call on tensors that require grad makes one Node. A node's
``next_functions`` are its edges: one ``(node, output_nr)`` per tensor input (``None`` when
that input needs no gradient). A leaf that requires grad is reached through its
``AccumulateGrad`` node. Nodes hold what their formula needs (``SavedTensor``s, which
remember the version they were saved at) and free it after a backward pass unless
``retain_graph=True``.
"""
from __future__ import annotations

import itertools

from ..core.dispatch_key import BACKEND_BITS
from ..core.grad_mode import enable_grad, no_grad
from ..core.tensor import _autograd_bit, read_grad, set_grad

__all__ = ["Node", "AccumulateGrad", "SavedTensor", "Handle", "ag_bit", "accumulate_into"]

_seq = itertools.count()

FREED = ("Trying to backward through the graph a second time (or directly access saved "
         "tensors after they have already been freed). Saved intermediate values of the graph "
         "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
         "you need to backward through the graph a second time or if you need to access saved "
         "tensors after calling backward.")


def ag_bit(ks: int) -> int:
    """The Autograd key bit that goes with the backend key in ``ks``."""
    bit = _AG_FOR_BACKEND.get(ks & BACKEND_BITS)
    if bit is None:
        bit = _AG_FOR_BACKEND[ks & BACKEND_BITS] = _autograd_bit(ks)
    return bit


_AG_FOR_BACKEND: dict = {}      # backend bits -> their Autograd key's bit


class Node:
    """A step of the backward graph: ``apply(grads_of_outputs) -> grads_of_inputs``.

    >>> import fnx
    >>> x = fnx.ones(2, requires_grad=True)
    >>> y = (x * 3).sum()
    >>> y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()
    ('SumBackward0', 'MulBackward0')
    """
    __slots__ = ("next_edges", "seq", "_pre_hooks", "_hooks", "_tensor_pre_hooks",
                 "_retains", "metadata", "__weakref__")

    def __init__(self, edges=()):
        self.next_edges = tuple(edges)
        self.seq = next(_seq)
        self._pre_hooks = None
        self._hooks = None
        self._tensor_pre_hooks = None   # {output_nr: [fn(grad) -> grad|None]}
        self._retains = None            # {output_nr: weakref to the tensor that retains grad}
        self.metadata = {}

    # -- the PyTorch-visible surface
    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self):
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self.next_edges)

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after this node ran; may return new grad_inputs."""
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(fn)
        return Handle(self._hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before this node runs; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        return Handle(self._pre_hooks, fn)

    def _add_tensor_hook(self, output_nr, fn):
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        hooks = self._tensor_pre_hooks.setdefault(output_nr, [])
        hooks.append(fn)
        return Handle(hooks, fn)

    def __call__(self, *grads):
        return self.apply(list(grads), False)

    # -- subclasses
    num_outputs = 1

    def apply(self, grads, create_graph):
        raise NotImplementedError

    def release(self):
        """Free saved values (after a backward pass without retain_graph)."""

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"


class Handle:
    __slots__ = ("_list", "_fn")

    def __init__(self, lst, fn):
        self._list, self._fn = lst, fn

    def remove(self):
        try:
            self._list.remove(self._fn)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class AccumulateGrad(Node):
    """The node of a leaf: adds the incoming gradient into ``variable.grad``."""
    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__(())
        self.variable = variable

    def apply(self, grads, create_graph):
        accumulate_into(self.variable, grads[0], create_graph)
        return ()


class SavedTensor:
    """A tensor a formula needs, with the version it had when saved."""
    __slots__ = ("tensor", "version", "node", "output_nr")

    def __init__(self, tensor, node=None, output_nr=0):
        self.tensor = tensor
        self.version = tensor._version
        self.node = node            # set for an op's own output (saved without its grad_fn)
        self.output_nr = output_nr

    def unpack(self, owner):
        t = self.tensor
        if t._version != self.version:
            desc = f"[{t._dtype.tensor_type(t._device.type)} [{', '.join(map(str, t.shape))}]]"
            src = self.node or t.grad_fn
            which = f", which is output {self.output_nr if self.node else t._output_nr} of " \
                    f"{src.name()}," if src is not None else ""
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: {desc}{which} is at version {t._version}; expected version "
                f"{self.version} instead. Hint: the backward of {owner.name()} needs it; "
                f"clone it before modifying it in place, or compute the gradient first.")
        if self.node is not None:
            # An output is saved as a history-free alias (no reference cycle through its own
            # node); double backward needs its history back.
            out = type(t)._make(t._data, t._dtype, t._device, t._ks | ag_bit(t._ks))
            out._vc = t._vc
            out.grad_fn = self.node
            out._output_nr = self.output_nr
            return out
        return t


def accumulate_into(t, g, create_graph, hooks=True):
    """``t.grad += g`` for a leaf (after its tensor hooks), as AccumulateGrad does."""
    if g is None:
        return
    if hooks and t._hooks:
        for h in t._hooks:
            r = h(g)
            if r is not None:
                g = r
    if not create_graph:
        g = g.detach()
    old = read_grad(t)
    if old is None and (g._base is not None or not g.is_contiguous()):
        # an expanded or strided view (sum's gradient): .grad owns contiguous memory
        g = g.contiguous() if not g.is_contiguous() else g.clone()
    if old is None:
        set_grad(t, g)
    else:
        with (enable_grad() if create_graph else no_grad()):
            set_grad(t, old + g)
    if t._post_acc_hooks:
        for h in t._post_acc_hooks:
            h(t)

