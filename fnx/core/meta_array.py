"""``MetaArray``: the data of a meta tensor, a shape and a NumPy dtype with no storage.

Meta functions, the Meta backend and the tracer all work on it, so code that reads
``tensor.shape`` runs unchanged on tensors without data.
"""
from __future__ import annotations

from .device import META
from .dispatch_key import META_KS
from .tensor import Tensor
import math

__all__ = ["MetaArray", "meta_tensor"]


class MetaArray:
    """Shape and dtype of a tensor with no storage."""
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        # a symbolic size (fnx.graph.symint.SymInt, while tracing) stays symbolic
        self.shape = tuple(s if s.__class__ is int or getattr(s, "symbolic_size", False)
                           else int(s) for s in shape)
        self.dtype = dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)


def meta_tensor(shape, dtype, device=META) -> Tensor:
    """A tensor with a shape and dtype and no data: on the meta device, or (a tensor of a
    trace) reporting the real ``device`` it stands for while dispatching to Meta.

    >>> import fnx
    >>> from fnx.core.meta_array import meta_tensor
    >>> t = meta_tensor((2, 3), fnx.float32); t.shape, t.device
    (fnx.Size([2, 3]), device(type='meta'))
    """
    return Tensor._make(MetaArray(shape, dtype.numpy), dtype, device, META_KS)
