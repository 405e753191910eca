"""Custom autograd functions: ``fnx.autograd.Function`` with ``forward``/``backward``.

>>> import fnx
>>> class Cube(fnx.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x ** 3
...     @staticmethod
...     def backward(ctx, grad):
...         (x,) = ctx.saved_tensors
...         return grad * 3 * x ** 2
>>> x = fnx.tensor([1., 2.], requires_grad=True)
>>> Cube.apply(x).sum().backward()
>>> x.grad
tensor([ 3., 12.])
"""
from __future__ import annotations

import functools

from ..core.dispatch_key import AUTOGRAD_BITS
from ..core.grad_mode import is_grad_enabled, no_grad
from ..core.tensor import Tensor, shared_data
from ..ops import aten
from .graph import FREED, Node, SavedTensor, ag_bit
from .history import edge_of

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The ``ctx`` of a custom Function: what forward leaves for backward."""

    def __init__(self):
        self._saved = None
        self.needs_input_grad = ()
        self._dirty = ()
        self._non_diff = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        self._saved = [SavedTensor(t) if t is not None else None for t in tensors]

    @property
    def saved_tensors(self):
        if self._saved is None:
            return ()
        if self._saved is FREED:
            raise RuntimeError(FREED)
        return tuple(s.unpack(self._node) if s is not None else None for s in self._saved)

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_diff = tensors

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = bool(value)


class BackwardCFunction(Node):
    """The node of one ``Function.apply`` call."""
    __slots__ = ("cls", "ctx", "out_meta", "n_inputs", "positions")

    def name(self):
        return f"{self.cls.__name__}Backward"

    @property
    def num_outputs(self):
        return len(self.out_meta)

    def release(self):
        if self.ctx._saved is not None:
            self.ctx._saved = FREED

    def apply(self, grads, create_graph):
        ctx = self.ctx
        if ctx.materialize_grads:
            grads = [g if g is not None or m is None else
                     aten.zeros.default(list(m[0]), dtype=m[1], device=m[2])
                     for g, m in zip(grads, self.out_meta)]
        res = self.cls.backward(ctx, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        if len(res) < self.n_inputs:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                               f"gradients (expected {self.n_inputs}, got {len(res)})")
        # one gradient per argument; the edges are the tensor arguments' positions
        return [res[i] for i in self.positions]


class Function:
    """Base class: define ``forward(ctx, *args)`` and ``backward(ctx, *grads)`` as
    staticmethods (or ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``), then
    call ``YourFunction.apply(*args)``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    setup_context = None
    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        tensors = [(i, a) for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        record = is_grad_enabled() and any(a._ks & AUTOGRAD_BITS for _, a in tensors)
        with no_grad():
            if cls.setup_context is not None:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        if not record:
            return out
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        edges = [edge_of(a) for _, a in tensors]
        node = BackwardCFunction(edges)
        node.cls = cls
        node.ctx = ctx
        ctx._node = node
        node.n_inputs = len(args)
        node.positions = [i for i, _ in tensors]
        node.out_meta = []
        non_diff = {id(t) for t in ctx._non_diff}
        dirty = {id(t) for t in ctx._dirty}
        new_outs = []
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor):
                node.out_meta.append(None)
                new_outs.append(o)
                continue
            node.out_meta.append((o.shape, o._dtype, o._device))
            if id(o) in non_diff or not (o._dtype.is_floating_point or o._dtype.is_complex):
                new_outs.append(o)
                continue
            if any(o is a for _, a in tensors) and id(o) not in dirty:
                o = _alias(o)   # an input returned as is: a new tensor, as PyTorch's view
            if id(o) in dirty and o.grad_fn is None and o._ks & AUTOGRAD_BITS:
                raise RuntimeError("a leaf Variable that requires grad is being used in an "
                                   "in-place operation.")
            o._ks |= ag_bit(o._ks)
            o.grad_fn = node
            o._output_nr = i
            new_outs.append(o)
        return new_outs[0] if single else tuple(new_outs)


def _alias(t):
    a = Tensor._make(shared_data(t), t._dtype, t._device, t._ks & ~AUTOGRAD_BITS)
    a._vc = t._shared_version_counter()
    return a


def once_differentiable(fn):
    """Decorator for ``backward``: run it with grad mode off (no double backward)."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    return wrapper
