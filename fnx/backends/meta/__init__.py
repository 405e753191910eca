"""The Meta backend: shapes and dtypes, no data.  Its kernels are the ops' meta functions.

A meta tensor's ``_data`` is a ``MetaArray``: just a shape and a NumPy dtype, so
code that reads ``tensor.shape`` works the same on every backend.
"""
from __future__ import annotations

from ...core.device import canonical
from ...core.dispatch_key import DispatchKey
from ...core.meta_array import MetaArray, meta_tensor
from ...core.tensor import Tensor
from ...dispatch.dispatcher import all_ops
from ...ir.registry import TensorMeta

__all__ = ["to_meta", "register_all"]


def to_meta(result):
    """Turn what a meta function returned into meta tensors (tensors pass through)."""
    if isinstance(result, TensorMeta):
        return meta_tensor(result.shape, result.dtype)
    if isinstance(result, (tuple, list)):
        return type(result)(to_meta(r) for r in result) if not isinstance(result, TensorMeta) \
            else meta_tensor(result.shape, result.dtype)
    return result


def _meta_kernel(op):
    def kernel(ks, *args, **kwargs):
        for a in args:
            # Trace tensors keep their real device with MetaArray data: check the data.
            if isinstance(a, Tensor) and not isinstance(a._data, MetaArray) and a.ndim:
                raise RuntimeError(f"Expected all tensors to be on the same device, but found "
                                   f"at least two devices, meta and {a._device}! (when "
                                   f"checking argument for {op.qualname})")
        dev = kwargs.get("device")
        if dev is not None and op.decomposition is not None and \
                canonical(dev).type != "meta" and _all_meta(args):
            # a factory over a meta tensor asked for another device (empty_like(m,
            # device="cpu"), new_zeros): its decomposition makes the result there
            return op.decomposition(*args, **kwargs)
        return to_meta(op.meta(*args, **kwargs))
    return kernel


def _all_meta(args) -> bool:
    """Whether the tensor arguments are meta tensors themselves (not a trace's stand-ins,
    which keep their real device)."""
    return all(a._device.type == "meta" for a in args if isinstance(a, Tensor))


def register_all() -> None:
    """A Meta kernel for every op that has a meta function and no Meta kernel yet."""
    for op in all_ops():
        if op.meta is not None and DispatchKey.Meta not in op.kernels:
            op.register(DispatchKey.Meta, _meta_kernel(op))
