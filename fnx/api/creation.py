"""Making tensors: ``fnx.tensor``, ``from_numpy``, ``as_tensor`` (more factories in later modules)."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._device import CPU, canonical
from .._tensor import Tensor
from ..backends.cpu._core import wrap
from ..ops import aten

__all__ = ["tensor", "as_tensor", "from_numpy", "scalar_tensor"]


def _infer_dtype(data):
    """PyTorch's inference from nested Python data: bool < int64 < default float < complex."""
    kinds = set()

    def walk(x):
        if isinstance(x, Tensor):
            kinds.add(x._dtype)
        elif isinstance(x, np.ndarray) or isinstance(x, np.generic):
            kinds.add(D.from_numpy_dtype(x.dtype))
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        else:
            kinds.add(D._scalar_dtype_slow(x))
    walk(data)
    if not kinds:
        return D.get_default_dtype()
    out = None
    for k in kinds:
        out = k if out is None else D.promote_types(out, k)
    return out


def _to_numpy(data, dtype):
    if isinstance(data, Tensor):
        return data.detach().cpu()._data.astype(dtype.numpy)
    if isinstance(data, (list, tuple)):
        data = [_to_numpy(x, dtype) if isinstance(x, (Tensor, list, tuple)) else x
                for x in data]
    try:
        arr = np.array(data)
    except ValueError as e:
        raise ValueError(f"tensor(): expected a sequence of equal-length rows: {e}") from None
    if arr.dtype == object:
        raise TypeError(f"tensor(): could not infer dtype of {type(data).__name__} element")
    return arr.astype(dtype.numpy)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, scalars, arrays, tensors).

    >>> import fnx
    >>> fnx.tensor([[1, 2], [3, 4]]).dtype, fnx.tensor([1, 2.5]).dtype
    (fnx.int64, fnx.float32)
    """
    if dtype is None:
        dtype = _infer_dtype(data)
    elif not isinstance(dtype, D.dtype):
        raise TypeError(f"tensor(): argument 'dtype' must be fnx.dtype, not "
                        f"{type(dtype).__name__}")
    t = wrap(_to_numpy(data, dtype), dtype)
    if device is not None and canonical(device) is not CPU:
        t = aten._to_copy.default(t, device=canonical(device))
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_numpy(ndarray) -> Tensor:
    """A CPU tensor sharing memory with ``ndarray``.

    >>> import fnx, numpy as np
    >>> a = np.zeros(3, np.float32); t = fnx.from_numpy(a); t.add_(1); a
    array([1., 1., 1.], dtype=float32)
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return wrap(ndarray, D.from_numpy_dtype(ndarray.dtype))


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Share memory with ``data`` when dtype and device allow, else copy."""
    if isinstance(data, Tensor):
        if (dtype is None or dtype is data._dtype) and (device is None or
                                                        canonical(device) == data._device):
            return data
        return data.to(dtype=dtype, device=device)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.numpy == data.dtype) and \
            (device is None or canonical(device) is CPU):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A 0-dim tensor holding ``s``."""
    t = aten.scalar_tensor.default(s, dtype=dtype if dtype is not None else
                                   D.get_default_dtype(), device=device)
    return t.requires_grad_(True) if requires_grad else t
