"""The BackendSelect key's kernels: a factory (no tensor argument) picks its backend key
from ``device=``.

>>> import fnx
>>> fnx.ones(2, device="meta").device
device(type='meta')
"""
from __future__ import annotations

from ..core.device import canonical, get_default_device, privateuse1_name
from ..core.dispatch_key import DispatchKey, below
from ..core.layout import COMPRESSED, sparse_coo

__all__ = ["device_arg", "backend_key", "backend_select"]

_BACKEND_KEYS = {"cpu": DispatchKey.CPU, "cuda": DispatchKey.CUDA, "meta": DispatchKey.Meta}


def device_arg(dev):
    """``device=`` as an interned ``fnx.device`` (None means the default device, cpu unless
    ``fnx.set_default_device`` changed it)."""
    if dev is None:
        return get_default_device()
    return canonical(dev)


def backend_key(dev) -> DispatchKey:
    key = _BACKEND_KEYS.get(dev.type)
    if key is None:
        if dev.type == privateuse1_name():
            return DispatchKey.PrivateUse1
        raise RuntimeError(f"no backend handles device type '{dev.type}'")
    return key


_BELOW_BACKEND_SELECT = below(DispatchKey.BackendSelect)


def backend_select(op):
    """Give a factory its BackendSelect kernel: ``device=`` picks the backend key."""
    def kernel(ks, *args, **kwargs):
        dev = device_arg(kwargs.get("device"))
        kwargs["device"] = dev
        key = backend_key(dev)
        lay = kwargs.get("layout")
        if lay is not None and (lay is sparse_coo or lay in COMPRESSED) and \
                key is DispatchKey.CPU:
            # a sparse layout picks the sparse key: its kernel (zeros) or its error
            key = DispatchKey.SparseCPU if lay is sparse_coo else DispatchKey.SparseCsrCPU
        return op.redispatch((ks & _BELOW_BACKEND_SELECT) | (1 << key), *args, **kwargs)
    op.register(DispatchKey.BackendSelect, kernel)
    return op
