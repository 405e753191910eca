"""Tensors from other libraries' memory: ``asarray``, ``frombuffer``, ``from_dlpack`` and
``to_dlpack`` (NumPy and JAX arrays, zero-copy where the dtype and device allow),
``from_file``, and the deprecated inclusive ``range``.

>>> import fnx, numpy as np
>>> a = np.zeros(2, np.float32)
>>> t = fnx.asarray(a); _ = t.add_(1); a
array([1., 1.], dtype=float32)
"""
from __future__ import annotations

import math
import warnings

import jax
import numpy as np

from ..backends.cpu._core import wrap, wrap_resident
from ..core import dtype as D
from ..core.tensor import Tensor
from ..ir.backend_select import device_arg
from .creation import arange, from_numpy, tensor

__all__ = ["asarray", "frombuffer", "from_dlpack", "to_dlpack", "from_file", "range"]


def _finish(t, requires_grad):
    return t.requires_grad_(True) if requires_grad else t


def _alias_error(have, want):
    return ValueError(f"can't alias tensor with dtype '{have}' into dtype '{want}'.")


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False) -> Tensor:
    """``obj`` as a tensor: a tensor, NumPy array or DLPack-capable array is shared when
    ``dtype`` and ``device`` need no conversion and ``copy`` is not True; ``copy=False``
    refuses to copy.

    >>> import fnx
    >>> x = fnx.ones(2)
    >>> fnx.asarray(x) is x, fnx.asarray([1, 2], dtype=fnx.float64)
    (True, tensor([1., 2.], dtype=fnx.float64))
    """
    if dtype is not None and not isinstance(dtype, D.dtype):
        raise TypeError(f"asarray(): argument 'dtype' must be fnx.dtype, not "
                        f"{type(dtype).__name__}")
    if isinstance(obj, Tensor):
        same = (dtype is None or dtype is obj.dtype) and \
            (device is None or device_arg(device) == obj.device)
        if same and copy is not True:
            return _finish(obj, requires_grad) if requires_grad else obj
        if copy is False:
            raise _alias_error(obj.dtype, dtype) if not same and dtype is not None and \
                dtype is not obj.dtype else ValueError("asarray(): can't alias a tensor onto "
                                                       "another device (copy=False)")
        return _finish(obj.to(dtype=dtype, device=device, copy=True).detach(), requires_grad)
    if isinstance(obj, (np.ndarray, jax.Array)) or hasattr(obj, "__dlpack__"):
        src = from_dlpack(obj) if not isinstance(obj, np.ndarray) else None
        if src is None:
            arr = obj if obj.dtype.isnative else obj.astype(obj.dtype.newbyteorder("="))
            src = from_numpy(arr)
        return asarray(src, dtype=dtype, device=device, copy=copy, requires_grad=requires_grad)
    if copy is False:
        raise ValueError(f"asarray(): can't alias a {type(obj).__name__} (copy=False)")
    return _finish(tensor(obj, dtype=dtype, device=device), requires_grad)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False) -> Tensor:
    """A 1-D tensor over the bytes of a Python buffer (``bytearray``, ``memoryview``,
    ``array.array``, ...), sharing them: writing the tensor writes the buffer.

    >>> import fnx
    >>> b = bytearray(8)
    >>> t = fnx.frombuffer(b, dtype=fnx.int32); _ = t.fill_(1); bytes(b)
    b'\\x01\\x00\\x00\\x00\\x01\\x00\\x00\\x00'
    """
    view = memoryview(buffer).cast("B")
    length, size = view.nbytes, dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    arr = np.frombuffer(view, dtype.numpy, count, offset)
    if view.readonly:
        # fnx tensors are writable: a read-only buffer is copied rather than aliased
        warnings.warn("The given buffer is not writable; frombuffer copies it (fnx does not "
                      "make tensors over read-only memory).", UserWarning, stacklevel=2)
        arr = arr.copy()
    return _finish(wrap(arr, dtype), requires_grad)


class _Capsule:
    """A DLPack capsule seen as an array-API object, for NumPy's ``from_dlpack``."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)     # kDLCPU


def from_dlpack(ext_tensor) -> Tensor:
    """A CPU tensor sharing the memory of a DLPack-capable object (a NumPy or JAX array,
    another fnx tensor) or of a DLPack capsule.

    >>> import fnx, jax.numpy as jnp
    >>> fnx.from_dlpack(jnp.arange(3))
    tensor([0, 1, 2], dtype=fnx.int32)
    """
    if isinstance(ext_tensor, Tensor):
        return ext_tensor.detach()
    if isinstance(ext_tensor, jax.Array):
        platforms = {d.platform for d in ext_tensor.devices()}
        if platforms == {"cpu"}:
            # a jax CPU array becomes the storage of a resident tensor: no copy
            return wrap_resident(ext_tensor, D.from_numpy_dtype(ext_tensor.dtype))
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack(): expected an object with __dlpack__ or a DLPack "
                        f"capsule, but got {type(ext_tensor).__name__}")
    arr = np.from_dlpack(ext_tensor)
    if not arr.flags.writeable:
        # a producer that marks its memory read-only (or a legacy unversioned capsule):
        # fnx tensors are writable, so this one gets a private copy
        arr = arr.copy()
    return wrap(arr, D.from_numpy_dtype(arr.dtype))


def to_dlpack(tensor) -> object:
    """A DLPack capsule over ``tensor``'s memory (a CPU tensor; no copy).

    >>> import fnx
    >>> fnx.from_dlpack(fnx.to_dlpack(fnx.ones(2)))
    tensor([1., 1.])
    """
    if tensor.device.type != "cpu":
        raise RuntimeError(f"to_dlpack: only cpu tensors can be exported, got {tensor.device}")
    if tensor._jax is not None:
        return tensor._jax.__dlpack__()
    # a versioned capsule, which carries the writable flag (legacy ones import read-only)
    return np.asarray(tensor.numpy(force=True)).__dlpack__(max_version=(1, 0))


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False) -> Tensor:
    """A 1-D tensor of the first ``size`` elements stored in ``filename`` (raw bytes in
    the machine's order).  Only ``shared=False`` (a private copy) is supported.

    >>> import fnx, tempfile, numpy as np
    >>> with tempfile.NamedTemporaryFile() as f:
    ...     np.arange(3, dtype=np.float32).tofile(f.name)
    ...     fnx.from_file(f.name, size=3)
    tensor([0., 1., 2.])
    """
    if shared:
        raise NotImplementedError("from_file: shared=True (a memory map written back to the "
                                  "file) is not supported")
    dtype = D.get_default_dtype() if dtype is None else dtype
    arr = np.fromfile(filename, dtype.numpy, count=size) if size else \
        np.empty(0, dtype.numpy)
    if arr.size < size:
        raise RuntimeError(f"from_file: {filename} holds {arr.size} elements of {dtype}, "
                           f"fewer than size={size}")
    t = wrap(arr, dtype)
    if device is not None and device_arg(device).type != "cpu":
        t = t.to(device)
    return _finish(t, requires_grad)


def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,
          requires_grad=False, out=None) -> Tensor:
    """Deprecated: ``start, start + step, ...`` up to and including ``end``, in the
    default float dtype unless ``dtype`` is given (use ``arange``).

    >>> import fnx, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     fnx.range(1, 4)
    tensor([1., 2., 3., 4.])
    """
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    warnings.warn("fnx.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "fnx.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if step == 0:
        raise RuntimeError("range: step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = math.floor((end - start) / step) + 1
    dtype = D.get_default_dtype() if dtype is None else dtype
    # start + i * step in float64, then converted, as PyTorch computes in accumulate type
    t = arange(n, dtype=D.float64, device=device) * step + start
    return _finish(t.to(dtype), requires_grad)
