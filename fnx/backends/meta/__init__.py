"""The Meta backend: shapes and dtypes, no data.  Its kernels are the ops' meta functions.

A meta tensor's ``_data`` is a ``MetaArray``: just a shape and a NumPy dtype, so
code that reads ``tensor.shape`` works the same on every backend.
"""
from __future__ import annotations

from ...core.device import META
from ...core.tensor import Tensor
from ...dispatch.dispatcher import all_ops
from ...core.dispatch_key import DispatchKey
from ...ir.registry import TensorMeta

__all__ = ["MetaArray", "META_KS", "empty_meta", "register_all"]

META_KS = (1 << DispatchKey.Meta) | (1 << DispatchKey.ADInplaceOrView)


class MetaArray:
    """Shape and dtype of a tensor with no storage."""
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n


def empty_meta(shape, dtype) -> Tensor:
    return Tensor._make(MetaArray(shape, dtype.numpy), dtype, META, META_KS)


def to_meta(result):
    """Turn what a meta function returned into meta tensors (tensors pass through)."""
    if isinstance(result, TensorMeta):
        return empty_meta(result.shape, result.dtype)
    if isinstance(result, (tuple, list)):
        return type(result)(to_meta(r) for r in result) if not isinstance(result, TensorMeta) \
            else empty_meta(result.shape, result.dtype)
    return result


def _meta_kernel(op):
    def kernel(ks, *args, **kwargs):
        for a in args:
            # Trace tensors keep their real device with MetaArray data: check the data.
            if isinstance(a, Tensor) and not isinstance(a._data, MetaArray) and a.ndim:
                raise RuntimeError(f"Expected all tensors to be on the same device, but found "
                                   f"at least two devices, meta and {a._device}! (when "
                                   f"checking argument for {op.qualname})")
        return to_meta(op.meta(*args, **kwargs))
    return kernel


def register_all() -> None:
    """A Meta kernel for every op that has a meta function and no Meta kernel yet."""
    for op in all_ops():
        if op.meta is not None and DispatchKey.Meta not in op.kernels:
            op.register(DispatchKey.Meta, _meta_kernel(op))
