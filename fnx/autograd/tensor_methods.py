"""The Tensor methods autograd implements: ``backward``, ``register_hook``,
``register_post_accumulate_grad_hook`` and ``retain_grad``."""
from __future__ import annotations

import weakref

from ..core.tensor import tensor_method
from .engine import backward as _backward
from .graph import Handle
from .history import edge_of

__all__ = ["backward", "register_hook", "register_post_accumulate_grad_hook", "retain_grad"]


@tensor_method()
def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate this tensor's gradient into the leaves' ``.grad``.

    >>> import fnx
    >>> w = fnx.tensor([1., 2.], requires_grad=True)
    >>> (w * w).sum().backward()
    >>> w.grad
    tensor([2., 4.])
    """
    _backward(self, gradient, retain_graph, create_graph, inputs)


@tensor_method()
def register_hook(self, hook):
    """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a
    replacement. Returns a handle with ``.remove()``.

    >>> import fnx
    >>> x = fnx.tensor([1., 2.], requires_grad=True)
    >>> h = x.register_hook(lambda g: g * 10)
    >>> x.sum().backward(); x.grad
    tensor([10., 10.])
    """
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is None:
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return Handle(self._hooks, hook)
    fn, nr = edge_of(self)
    return fn._add_tensor_hook(nr, hook)


@tensor_method()
def register_post_accumulate_grad_hook(self, hook):
    """Call ``hook(tensor)`` after a leaf's ``.grad`` was accumulated.

    >>> import fnx
    >>> w = fnx.ones(2, requires_grad=True)
    >>> seen = []
    >>> _ = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    >>> (w * 3).sum().backward(); seen
    [[3.0, 3.0]]
    """
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                           "tensors")
    if self._post_acc_hooks is None:
        self._post_acc_hooks = []
    self._post_acc_hooks.append(hook)
    return Handle(self._post_acc_hooks, hook)


@tensor_method()
def retain_grad(self) -> None:
    """Keep this non-leaf tensor's gradient in ``.grad`` after backward.

    >>> import fnx
    >>> x = fnx.ones(2, requires_grad=True)
    >>> y = x * 2; y.retain_grad(); y.sum().backward(); y.grad
    tensor([1., 1.])
    """
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None or self._retains_grad:
        return
    fn, nr = edge_of(self)
    if fn._retains is None:
        fn._retains = {}
    fn._retains[nr] = weakref.ref(self)
    self._retains_grad = True
