"""Storages: ``Tensor.untyped_storage()`` / ``Tensor.storage()`` describe the memory a tensor
and its views share, and ``Tensor.set_`` / ``is_set_to`` point a tensor at (part of) it.

A CPU tensor's memory is a NumPy array; its views are NumPy views of the array that owns
the memory (``storage_root``), which is what these storages describe: ``nbytes``,
``data_ptr``, the bytes or elements (``tolist``). A device-kept (resident) storage becomes
NumPy first, as for any write. Tensors of other devices keep their data in a ``jax.Array``
with no shared memory between tensors: their storage describes that array alone, and
``set_`` refuses them.

>>> import fnx
>>> x = fnx.arange(4.0)
>>> s = x[1:].untyped_storage()
>>> s.nbytes(), s.data_ptr() == x.data_ptr()
(16, True)
>>> y = fnx.empty(0).set_(x, 1, (2,), (2,))
>>> y.tolist(), y.is_set_to(x)
([1.0, 3.0], False)
"""
from __future__ import annotations

import numpy as np

from ..backends.cpu.shape import storage_root, strided_view
from ..core.device import CPU
from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor, drop_resident, shared_data, tensor_method
from ..graph.tracer import is_compiling

__all__ = ["UntypedStorage", "TypedStorage"]


def _memory(t):
    """The array owning ``t``'s memory (NumPy for CPU tensors)."""
    if t._device is CPU:
        return storage_root(shared_data(t))
    return t._data


def _address(arr) -> int:
    if isinstance(arr, np.ndarray):
        return int(arr.__array_interface__["data"][0]) if arr.size else 0
    pointer = getattr(arr, "unsafe_buffer_pointer", None)
    return int(pointer()) if pointer is not None and arr.size else 0


class UntypedStorage:
    """The bytes behind a tensor and its views, as ``torch.UntypedStorage`` (made by
    ``Tensor.untyped_storage()``; its length is in bytes).

    >>> import fnx
    >>> s = fnx.tensor([1], dtype=fnx.int16).untyped_storage()
    >>> len(s), s.tolist(), s.device
    (2, [1, 0], device(type='cpu'))
    """

    def __init__(self, memory, device):
        self._memory = memory
        self.device = device

    def nbytes(self) -> int:
        return int(self._memory.size) * self._memory.dtype.itemsize

    def size(self) -> int:
        return self.nbytes()

    def __len__(self):
        return self.nbytes()

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        return _address(self._memory)

    def _bytes(self):
        return np.ascontiguousarray(np.asarray(self._memory)).reshape(-1).view(np.uint8)

    def tolist(self) -> list:
        return self._bytes().tolist()

    def is_alias_of(self, other) -> bool:
        return isinstance(other, (UntypedStorage, TypedStorage)) and \
            _same_memory(self._memory, other._memory)

    def __repr__(self):
        return f"fnx.UntypedStorage(nbytes={self.nbytes()}, device={self.device})"


class TypedStorage(UntypedStorage):
    """The same memory read as elements of ``dtype``, as ``torch.TypedStorage`` (made by
    ``Tensor.storage()``; its length is in elements).

    >>> import fnx
    >>> s = fnx.tensor([[1.0, 2.0], [3.0, 4.0]])[1].storage()
    >>> s.dtype, s.size(), s.tolist()
    (fnx.float32, 4, [1.0, 2.0, 3.0, 4.0])
    """

    def __init__(self, memory, device, dtype):
        super().__init__(memory, device)
        self.dtype = dtype

    def size(self) -> int:
        return self.nbytes() // self.dtype.itemsize

    def __len__(self):
        return self.size()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def tolist(self) -> list:
        return self._bytes().view(self.dtype.numpy).tolist()

    def untyped(self) -> UntypedStorage:
        return UntypedStorage(self._memory, self.device)

    def __repr__(self):
        return (f"fnx.TypedStorage(dtype={self.dtype}, size={self.size()}, "
                f"device={self.device})")


def _same_memory(a, b) -> bool:
    return a is b or (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and
                      a.size > 0 and _address(a) == _address(b) and a.nbytes == b.nbytes)


@tensor_method()
def untyped_storage(self) -> UntypedStorage:
    """The memory ``self`` and its views share, in bytes (see ``fnx.api.storage``).

    >>> import fnx
    >>> fnx.zeros(3).untyped_storage().nbytes()
    12
    """
    return UntypedStorage(_memory(self), self.device)


@tensor_method()
def storage(self) -> TypedStorage:
    """The memory ``self`` and its views share, as elements of its dtype.

    >>> import fnx
    >>> fnx.arange(6).reshape(2, 3).t().storage().tolist()
    [0, 1, 2, 3, 4, 5]
    """
    return TypedStorage(_memory(self), self.device, self._dtype)


def _contiguous(size):
    stride, step = [], 1
    for s in reversed(size):
        stride.append(step)
        step *= max(s, 1)
    return stride[::-1]


@tensor_method()
def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Point ``self`` at ``source``'s memory (a tensor's storage, or a storage) with the
    given offset, size and stride, as ``torch.Tensor.set_``; writes through either are
    seen by both. ``set_(tensor)`` takes the tensor's own geometry; ``set_()`` leaves an
    empty tensor. CPU tensors; a geometry past the end of the memory is refused (PyTorch
    would grow the storage).

    >>> import fnx
    >>> b = fnx.arange(6.0)
    >>> a = fnx.zeros(1).set_(b, 1, (2, 2), (2, 1))
    >>> a.tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    >>> a[0, 0] = 9.0; b.tolist()
    [0.0, 9.0, 2.0, 3.0, 4.0, 5.0]
    """
    if is_compiling():
        raise NotImplementedError("set_: not supported while fnx.compile traces")
    if self._device is not CPU:
        raise NotImplementedError(f"set_: fnx sets CPU tensors only, not {self.device}")
    if self.requires_grad and is_grad_enabled():
        if self.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        raise NotImplementedError("set_: fnx does not record set_ for autograd")
    dt = self._dtype
    if source is None:
        memory, size, stride, storage_offset = np.empty(0, dt.numpy), (0,), None, 0
    elif isinstance(source, Tensor):
        if source._dtype is not dt:
            raise RuntimeError(f"Could not set tensor of type {source._dtype.cpp_type} to a "
                               f"tensor of type {dt.cpp_type}")
        if source._device is not CPU:
            raise RuntimeError(f"set_: expected a cpu tensor as source, got {source.device}")
        memory = _memory(source)
        if size is None:
            size, stride = tuple(source.shape), tuple(source.stride())
            storage_offset = source.storage_offset()
    elif isinstance(source, UntypedStorage):
        if isinstance(source, TypedStorage) and source.dtype is not dt:
            raise RuntimeError(f"Expected a Storage of type {dt.scalar_type} but got type "
                               f"{source.dtype.scalar_type} for argument #1 'source'")
        if source.device != self.device:
            raise RuntimeError(f"set_: expected a cpu storage, got {source.device}")
        memory = source._memory
        if size is None:
            size = (source.nbytes() // dt.itemsize - storage_offset,)
    else:
        raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not "
                        f"{type(source).__name__}")
    size = tuple(int(s) for s in size)
    stride = _contiguous(size) if stride is None else [int(s) for s in stride]
    if len(stride) != len(size):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} vs "
                           f"{len(size)}")
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    capacity = memory.nbytes // dt.itemsize
    needed = 0 if 0 in size else storage_offset + 1 + sum((n - 1) * s for n, s in
                                                            zip(size, stride))
    if needed > capacity:
        raise RuntimeError(f"set_: sizes {list(size)}, strides {list(stride)} and storage "
                           f"offset {storage_offset} need a storage of {needed} elements; "
                           f"it has {capacity} (fnx does not grow storages)")
    view = strided_view(memory, size, stride, storage_offset, dt.numpy)
    drop_resident(self)
    d = self.__dict__
    d["_data"] = view
    for k in ("_strides", "_base", "_view_chain"):
        d.pop(k, None)
    self._bump_version()
    return self


@tensor_method()
def is_set_to(self, tensor) -> bool:
    """Whether ``self`` and ``tensor`` are the same view of the same memory (storage,
    offset, size and stride), as ``torch.Tensor.is_set_to``.

    >>> import fnx
    >>> b = fnx.arange(4.0)
    >>> b.is_set_to(b), b[1:].is_set_to(b), fnx.empty(0).set_(b).is_set_to(b)
    (True, False, True)
    """
    if self is tensor:
        return True
    if self._device is not CPU or tensor._device is not CPU:
        return False
    return (_same_memory(_memory(self), _memory(tensor)) and
            self.storage_offset() == tensor.storage_offset() and
            tuple(self.shape) == tuple(tensor.shape) and self.stride() == tensor.stride())
