"""How ``fnx.multiprocessing`` pickles tensors for other processes: by shared memory.

Registered with ``multiprocessing.reduction.ForkingPickler`` (what ``Process`` arguments
under spawn/forkserver and ``Queue`` items are pickled with): a dense CPU tensor is moved
into shared memory first, as PyTorch does (``share_memory_``: the sender's tensor is then
shared too), and sent as the segment's name, its offset, shape, strides and dtype; the
receiver maps the same memory. Other tensors (cuda, sparse, meta) are sent as ordinary
pickles, by value.
"""
from __future__ import annotations

from multiprocessing.reduction import ForkingPickler

from ..backends.cpu._core import wrap
from ..core import dtype as D
from ..core.device import CPU
from ..core.layout import strided
from ..core.shared_storage import array_in, attach, mark_sent, segment_of
from ..core.tensor import Tensor
from ..nn.parameter import Parameter

__all__ = ["reduce_tensor", "rebuild_shared_tensor", "init_reductions"]


def reduce_tensor(t):
    """``(rebuild, args)`` for ``t`` in a ``ForkingPickler``."""
    if t.requires_grad and t.grad_fn is not None:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                           "since autograd does not support crossing process boundaries.  If "
                           "you just want to transfer the data, call detach() on the tensor "
                           "before serializing (e.g., putting it on the queue).")
    if t._device is not CPU or t.layout is not strided:
        return t.__reduce_ex__(2)
    cls, requires_grad = type(t), t.requires_grad
    if segment_of(t) is None:
        try:
            t.share_memory_()
        except RuntimeError:
            # a view whose storage other tensors share cannot move (share_memory_ says
            # so): a shared copy goes instead, so the receiver gets the values without
            # aliasing the sender's tensor. (An error here would be lost: a Queue pickles
            # in its feeder thread, and the item would never arrive.)
            t = t.detach().clone()
            t.share_memory_()
    name, raw, offset = segment_of(t)
    mark_sent(name)
    data = t._data
    return (rebuild_shared_tensor, (cls, name, raw.nbytes, tuple(data.shape),
                                    t._dtype.name, offset, data.strides, requires_grad))


def rebuild_shared_tensor(cls, name, nbytes, shape, dtype_name, offset, strides,
                          requires_grad):
    """The receiving side of ``reduce_tensor``: a tensor over the named segment."""
    dtype = D._NAMES[dtype_name]
    raw = attach(name, nbytes)
    t = wrap(array_in(raw, shape, raw.dtype if dtype is None else dtype.numpy, offset,
                      strides), dtype)
    if issubclass(cls, Parameter):
        return cls(t, requires_grad=requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    if cls is not Tensor:
        t = t.as_subclass(cls)
    return t


def _classes(cls):
    yield cls
    for sub in cls.__subclasses__():
        yield from _classes(sub)


def init_reductions() -> None:
    """Register ``reduce_tensor`` for ``Tensor`` and its subclasses defined so far (the
    pickler's table is keyed by exact type)."""
    for cls in set(_classes(Tensor)):
        if "__fnx_dispatch__" not in vars(cls):     # (DTensor-like classes pickle their way)
            ForkingPickler.register(cls, reduce_tensor)
