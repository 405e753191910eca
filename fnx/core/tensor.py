"""``fnx.Tensor``: a handle on a backend's data plus its dispatch keyset.

A tensor holds ``_data`` (a NumPy array on CPU, a ``jax.Array`` on CUDA, a
``MetaArray`` on meta, anything with ``.shape`` for an out-of-tree backend),
its ``_dtype``, ``_device`` and ``_ks`` (the keyset its calls dispatch on).
A CPU tensor a compiled program produced or updated may instead be *resident*: its
storage is a ``jax.Array`` (``_jax``) and ``_data`` is a zero-copy, read-only NumPy view
of it made on first use; writes and aliases first give it a private NumPy copy
(``make_private``; the storage model is in ``ARCHITECTURE.md``).
Views share a version counter with their base; every in-place op bumps it.
This module holds the state and what follows from it alone. The layer that implements
a method binds it (``tensor_method``): autograd binds ``backward`` and the hooks, the
public API the math, conversions, printing and pickling; ``fnx/core/tensor.pyi`` lists the
whole class for IDEs and type checkers (generated: ``python -m fnx.api.stubs``).
"""
from __future__ import annotations

import sys
import types
import warnings
from typing import Any

import numpy as np

from . import dtype as D
from . import tls
from .device import device as _device_cls
from .dispatch_key import (AUTOGRAD_BITS, AUTOGRAD_FOR_BACKEND, AUTOGRAD_FOR_SPARSE, BACKEND_BITS,
                           DispatchKey, DispatchKeySet)
from .layout import COMPRESSED, sparse_coo, strided
from .memory_format import channels_last_rank, format_name, strides_for
from .memory_format import contiguous_strides as _contiguous_strides
import math

_object_new = object.__new__

__all__ = ["Tensor", "Size", "tensor_method", "set_grad", "read_grad", "grad_value", "LazyGrad",
           "GradWriteLog", "resident",
           "make_private", "drop_resident", "set_resident", "shared_data", "storage_shape",
           "exclusive_array", "ResidentView"]


class Size(tuple):
    """``tensor.shape``: a tuple of ints that prints like PyTorch's ``torch.Size``."""

    def numel(self) -> int:
        """The product of the sizes.

        >>> import fnx
        >>> fnx.Size([2, 3]).numel()
        6
        """
        return math.prod(self)

    def __repr__(self):
        return f"fnx.Size([{', '.join(map(str, self))}])"

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r


class ResidentView:
    """``Tensor._data`` when the instance has none: a resident tensor (storage in the
    jax.Array ``_jax``) gives the read-only NumPy view every reader shares, made on first
    use. A non-data descriptor: a tensor's own ``_data`` (every other tensor) is found
    first, at no cost to any attribute lookup."""

    def __get__(self, t, cls=None):
        if t is None:
            return self
        d = t.__dict__
        arr = d.get("_jax")
        if arr is None:
            raise AttributeError(f"{type(t).__name__!r} object has no attribute '_data'")
        view = d["_data"] = d["_jview"] = self.view(d, arr)
        return view

    @staticmethod
    def view(d, arr):
        """The NumPy view of the storage ``arr`` of the tensor whose dict is ``d``."""
        return _asarray(arr)


# float() of a tensor that requires grad warns once per process, as torch's does
_FLOAT_OF_GRAD_WARNED = False


class Tensor:
    """A multi-dimensional array on a device, as ``torch.Tensor``.

    >>> import fnx
    >>> x = fnx.tensor([[1., 2.], [3., 4.]])
    >>> x.shape, x.dtype, x.device
    (fnx.Size([2, 2]), fnx.float32, device(type='cpu'))
    >>> (x @ x + 1).sum().item()
    58.0
    """

    # The state every tensor sets (``_make``), declared for the stub and type checkers.
    _data: Any = ResidentView()    # (a resident tensor's is made on first use)
    _dtype: D.dtype
    _device: _device_cls
    _ks: int

    # Rarely-set state lives in the instance dict with class defaults, so creating a tensor
    # sets four attributes and nothing else.
    _jax = None         # a resident CPU tensor's storage (see "storage" below)
    _keep_resident = False  # a subclass whose storage stays a laid-out jax.Array (DTensor)
    _vc = None          # version counter, [int], shared by a base and its views
    _base = None        # the tensor this one is a view of
    _view_chain = ()    # how to rebuild this view from _base: ((op, args, kwargs, index), ...)
    _gfv = 0            # the version this view's grad_fn was made at (fnx.autograd.views)
    _grad = None
    grad_fn = None      # the autograd Node that made this tensor (None for leaves)
    _output_nr = 0      # which output of grad_fn this tensor is
    _grad_acc = None    # weakref to a leaf's AccumulateGrad node
    _hooks = None       # a leaf's gradient hooks
    _post_acc_hooks = None
    _retains_grad = False
    _views = None       # weak set of views of a base that does not require grad (autograd)
    _is_param = False
    _is_wrapped_number = False  # a Python scalar made a 0-dim tensor: promotes like a scalar
    _strides = None     # strides a functional backend reports for data without any
    __array_ufunc__ = None      # NumPy defers to Tensor's reflected operators (np.float32(2) * t)

    # ``Tensor(...)`` itself is PyTorch's legacy constructor (``Tensor(2, 3)``, ``Tensor(data)``):
    # ``__new__``/``__init__`` are set by ``fnx/api/legacy_types.py``, which has the factories

    @classmethod
    def _make(cls, data, dtype, device, ks):
        # (a bare instance; a plain tensor skips the legacy constructor's __new__)
        t = _object_new(cls) if cls is Tensor else cls.__new__(cls)
        t._data = data
        t._dtype = dtype
        t._device = device
        t._ks = ks
        return t

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self) -> Size:
        """The size of every dim, as ``torch.Tensor.shape``.

        >>> import fnx
        >>> fnx.zeros(2, 3).shape
        fnx.Size([2, 3])
        """
        return Size(self._data.shape)

    def size(self, dim=None):
        """The shape, or the size of one ``dim`` (negative counts from the end).

        >>> import fnx
        >>> x = fnx.zeros(2, 3)
        >>> x.size(), x.size(-1)
        (fnx.Size([2, 3]), 3)
        """
        shape = self._data.shape
        if dim is None:
            return Size(shape)
        return shape[_wrap_dim(dim, len(shape), "size")]

    @property
    def dtype(self) -> D.dtype:
        """The element type.

        >>> import fnx
        >>> fnx.tensor([1, 2]).dtype
        fnx.int64
        """
        return self._dtype

    @property
    def device(self) -> _device_cls:
        """The device the data lives on.

        >>> import fnx
        >>> fnx.zeros(1).device
        device(type='cpu')
        """
        return self._device

    @property
    def ndim(self) -> int:
        """The number of dims.

        >>> import fnx
        >>> fnx.zeros(2, 3).ndim
        2
        """
        return len(self._data.shape)

    def dim(self) -> int:
        """The number of dims (``ndimension`` is an alias).

        >>> import fnx
        >>> fnx.tensor(1.0).dim(), fnx.zeros(2, 3).ndimension()
        (0, 2)
        """
        return len(self._data.shape)

    ndimension = dim

    def numel(self) -> int:
        """The number of elements (``nelement`` is an alias).

        >>> import fnx
        >>> fnx.zeros(2, 3).numel()
        6
        """
        return math.prod(self._data.shape)

    nelement = numel

    def element_size(self) -> int:
        """The size of one element in bytes.

        >>> import fnx
        >>> fnx.zeros(1, dtype=fnx.float16).element_size()
        2
        """
        return self._dtype.itemsize

    def stride(self, dim=None):
        """Strides in elements: those the backend keeps for a tensor whose data has none
        (``_strides``, set by a functional backend on views and layout-keeping copies),
        else its data's (NumPy's), else the contiguous ones.

        >>> import fnx
        >>> x = fnx.zeros(2, 3)
        >>> x.stride(), x.t().stride(0)
        ((3, 1), 1)
        """
        strides = self._strides
        if strides is None:
            strides = getattr(self._data, "strides", None)
            if strides is None:
                strides = _contiguous_strides(self._data.shape)
            else:
                isz = self._dtype.itemsize
                strides = tuple(s // isz for s in strides)
        if dim is None:
            return strides
        return strides[_wrap_dim(dim, len(strides), "stride")]

    def is_contiguous(self, memory_format=None) -> bool:
        """True when the elements lie without gaps in the order of ``memory_format``
        (row-major by default; ``fnx.channels_last``: NHWC).

        >>> import fnx
        >>> x = fnx.zeros(2, 3, 4, 5)
        >>> x.is_contiguous(), x.transpose(0, 1).is_contiguous()
        (True, False)
        >>> x.is_contiguous(memory_format=fnx.channels_last)
        False
        """
        shape = self._data.shape
        name = "contiguous_format" if memory_format is None else format_name(memory_format)
        rank = channels_last_rank(name)
        if rank is None:        # (PyTorch answers preserve_format as contiguous_format)
            expected = _contiguous_strides(shape)
        elif len(shape) != rank:
            return False
        else:
            expected = strides_for(shape, name)
        return all(sz <= 1 or st == ex for sz, st, ex in zip(shape, self.stride(), expected))

    @property
    def is_cuda(self) -> bool:
        """True on a CUDA device.

        >>> import fnx
        >>> fnx.zeros(1).is_cuda
        False
        """
        return self._device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        """True on the CPU.

        >>> import fnx
        >>> fnx.zeros(1).is_cpu
        True
        """
        return self._device.type == "cpu"

    @property
    def is_xpu(self) -> bool:
        """True on an Intel XPU device (fnx has none, so always False on its devices).

        >>> import fnx
        >>> fnx.zeros(1).is_xpu
        False
        """
        return self._device.type == "xpu"

    @property
    def is_mps(self) -> bool:
        """True on an Apple MPS device (fnx has none, so always False on its devices).

        >>> import fnx
        >>> fnx.zeros(1).is_mps
        False
        """
        return self._device.type == "mps"

    @property
    def is_meta(self) -> bool:
        """True on the meta device (shapes and dtypes, no data).

        >>> import fnx
        >>> fnx.zeros(1, device="meta").is_meta
        True
        """
        return self._device.type == "meta"

    def is_floating_point(self) -> bool:
        """True for a floating dtype.

        >>> import fnx
        >>> fnx.tensor([1.0]).is_floating_point(), fnx.tensor([1]).is_floating_point()
        (True, False)
        """
        return self._dtype.is_floating_point

    def is_complex(self) -> bool:
        """True for a complex dtype.

        >>> import fnx
        >>> fnx.tensor([1j]).is_complex()
        True
        """
        return self._dtype.is_complex

    @property
    def layout(self):
        """The memory layout: ``fnx.strided``, or a sparse storage's (``fnx.sparse_coo``, ...).

        >>> import fnx
        >>> fnx.zeros(1).layout
        fnx.strided
        """
        return getattr(self._data, "layout", strided)

    @property
    def is_sparse(self) -> bool:
        """True for a sparse COO tensor.

        >>> import fnx
        >>> fnx.zeros(1).is_sparse, fnx.eye(2).to_sparse().is_sparse
        (False, True)
        """
        return getattr(self._data, "layout", None) is sparse_coo

    @property
    def is_sparse_csr(self) -> bool:
        """True for a sparse compressed tensor (csr, csc, bsr or bsc), as PyTorch's.

        >>> import fnx
        >>> fnx.eye(2).to_sparse_csr().is_sparse_csr
        True
        """
        return getattr(self._data, "layout", None) in COMPRESSED

    def get_device(self) -> int:
        """The device index: -1 on the CPU, else the accelerator's ordinal.

        >>> import fnx
        >>> fnx.zeros(1).get_device()
        -1
        """
        return -1 if self._device.type == "cpu" else (self._device.index or 0)

    # ------------------------------------------------------------------ dispatch keys
    @property
    def _keyset(self) -> DispatchKeySet:
        return DispatchKeySet(self._ks)

    @property
    def requires_grad(self) -> bool:
        """Whether autograd records the ops on this tensor; settable on leaves.

        >>> import fnx
        >>> x = fnx.zeros(2)
        >>> x.requires_grad = True; (x * 2).requires_grad
        True
        """
        return bool(self._ks & AUTOGRAD_BITS)

    @requires_grad.setter
    def requires_grad(self, value: bool):
        if value and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can "
                               "require gradients")
        if not value and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If "
                               "you want to use a computed variable in a subgraph that doesn't "
                               "require differentiation use var_no_grad = var.detach().")
        self._ks = (self._ks | _autograd_bit(self._ks)) if value else self._ks & ~AUTOGRAD_BITS

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set ``requires_grad`` in place and return ``self``.

        >>> import fnx
        >>> fnx.zeros(2).requires_grad_()
        tensor([0., 0.], requires_grad=True)
        """
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        """True for a tensor no recorded op made (``grad_fn`` is None).

        >>> import fnx
        >>> x = fnx.ones(1, requires_grad=True)
        >>> x.is_leaf, (x * 2).is_leaf
        (True, False)
        """
        return self.grad_fn is None

    @property
    def grad(self):
        """The gradient accumulated by ``backward()`` (leaves, and tensors that retain it).

        >>> import fnx
        >>> w = fnx.ones(2, requires_grad=True)
        >>> w.grad is None, ((w * 3).sum().backward(), w.grad)[1]
        (True, tensor([3., 3.]))
        """
        return read_grad(self)

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value._dtype is not self._dtype:
                raise RuntimeError(f"assigned grad has data of a different type: expected "
                                   f"{self._dtype}, got {value._dtype}")
            if value._device != self._device:
                raise RuntimeError(f"assigned grad has data located on a different device: "
                                   f"expected {self._device}, got {value._device}")
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError(f"assigned grad has data of a different size: expected "
                                   f"{list(self.shape)}, got {list(value.shape)}")
        set_grad(self, value)

    @grad.deleter
    def grad(self):
        set_grad(self, None)

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf tensor whose ``.grad`` backward keeps (``retain_grad()``).

        >>> import fnx
        >>> y = fnx.ones(1, requires_grad=True) * 2
        >>> y.retains_grad, (y.retain_grad(), y.retains_grad)[1]
        (False, True)
        """
        return self._retains_grad

    @property
    def data(self) -> "Tensor":
        """This tensor's data outside autograd (shares memory, not the version counter).

        >>> import fnx
        >>> w = fnx.zeros(2, requires_grad=True)
        >>> _ = w.data.add_(1); w
        tensor([1., 1.], requires_grad=True)
        """
        t = Tensor._make(shared_data(self), self._dtype, self._device,
                         self._ks & ~AUTOGRAD_BITS)
        if self._strides is not None:
            t._strides = self._strides
        # whose handle it is: a compiled function that writes ``p.data`` reads ``p`` when
        # called (``FunctionalTracingMode._same_memory``), so ``p.data = new`` is seen
        t.__dict__["_handle_of"] = self
        if self._ks & _FUNCTIONAL_BIT:
            _functional_alias(self, t)
        return t

    @data.setter
    def data(self, value: "Tensor"):
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
        # a compiled function's trace records ``p.data = new`` as a write of p (its own
        # storage must not take the trace's meta array)
        assign = getattr(tls.current_mode(), "assign_data", None)
        if assign is not None:
            assign(self, value)
            return
        grad_bit = self._ks & AUTOGRAD_BITS
        data = shared_data(value)
        drop_resident(self)
        self._data, self._dtype, self._device = data, value._dtype, value._device
        self._ks = value._ks & ~AUTOGRAD_BITS
        if grad_bit:
            self._ks |= _autograd_bit(self._ks)

    # ------------------------------------------------------------------ versions and views
    @property
    def _version(self) -> int:
        vc = self._vc
        return 0 if vc is None else vc[0]

    def _bump_version(self) -> None:
        vc = self._vc
        if vc is None:
            self._vc = [1]
        else:
            vc[0] += 1

    def _shared_version_counter(self) -> list:
        vc = self._vc
        if vc is None:
            vc = self._vc = [0]
        return vc

    def _is_view(self) -> bool:
        return self._base is not None

    # ------------------------------------------------------------------ conversion
    def numpy(self, *, force: bool = False):
        """The data as a NumPy array; shares memory on CPU, like PyTorch.

        >>> import fnx
        >>> x = fnx.zeros(2); x.numpy()[0] = 5; x
        tensor([5., 0.])
        """
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self._device.type != "cpu":
            if not force:
                raise TypeError(f"can't convert {self._device.type} device type tensor to "
                                f"numpy. Use Tensor.cpu() to copy the tensor to host memory "
                                f"first.")
            return self.cpu().numpy(force=True)
        lay = getattr(self._data, "layout", strided)
        if lay is not strided:
            raise TypeError(f"can't convert {lay.name} layout tensor to numpy. Use "
                            f"Tensor.to_dense() first.")
        data = shared_data(self)
        if not isinstance(data, np.ndarray):
            # a tensor of a trace: fnx.compile's graph break hands over the values (a
            # read-only copy), else item() says why a trace has none
            return _concrete(self, "concrete_array")
        return data

    def tolist(self):
        """The data as (nested) Python lists of numbers; a 0-dim tensor gives a number.

        >>> import fnx
        >>> fnx.tensor([[1, 2], [3, 4]]).tolist(), fnx.tensor(2.5).tolist()
        ([[1, 2], [3, 4]], 2.5)
        """
        if getattr(self._data, "layout", strided) is not strided:
            raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")
        if not self.ndim:
            return self.item()
        arr = self.cpu()._data
        if not isinstance(arr, np.ndarray):
            # no values here (a meta tensor, a tensor of a trace): the tracing mode hands
            # the values over (fnx.compile's graph break) or item() says why
            return _concrete(self, "concrete_list")
        return (arr.astype("float32") if self._dtype is D.bfloat16 else arr).tolist()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy(force=True)
        return a.astype(dtype) if dtype is not None else a

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous"
                               if self.numel() else "Boolean value of Tensor with no values "
                               "is ambiguous")
        return bool(self.item())

    def __float__(self):
        global _FLOAT_OF_GRAD_WARNED
        if not _FLOAT_OF_GRAD_WARNED and self.requires_grad and \
                tls.state.mask & AUTOGRAD_BITS == AUTOGRAD_BITS:
            # torch warns once per process, for float() only (not item(), int(), bool())
            _FLOAT_OF_GRAD_WARNED = True
            warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead "
                          "to unexpected behavior. Consider using tensor.detach() first.",
                          UserWarning, stacklevel=2)
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self._dtype.is_floating_point or self._dtype.is_complex or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __len__(self):
        if not self._data.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if not self._data.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __hash__(self):
        return id(self)



# ----------------------------------------------------------------------------- storage
# A CPU tensor's storage is either a NumPy array in ``_data`` (writable, and shared by views
# and ``.numpy()`` exactly as NumPy shares memory) or, *resident*, a ``jax.Array`` in
# ``_jax`` that only this tensor holds as its storage and nobody writes: compiled programs
# take it as an input without a copy and rebind the tensor to their output. ``_data`` of a
# resident tensor is a read-only NumPy view of that array (``np.asarray``, no copy), made
# on first use and remembered as ``_jview``; while ``_data`` is that view the two agree.
# Anything that would write the storage, or make a second handle share it (a view,
# ``.data``, ``.numpy()``), first calls ``make_private``: a private writable copy in
# ``_data``, and the tensor is an ordinary CPU tensor again.

_asarray = np.asarray
_getrefcount = sys.getrefcount


def resident(t):
    """The ``jax.Array`` holding ``t``'s storage, or None when ``_data`` holds it. Code that
    assigned ``_data`` without knowing of ``_jax`` made the array stale: it is dropped."""
    d = t.__dict__
    arr = d.get("_jax")
    if arr is not None and "_data" in d and d["_data"] is not d.get("_jview"):
        del d["_jax"]
        d.pop("_jview", None)
        return None
    return arr


def make_private(t) -> None:
    """Copy-on-write: a resident ``t`` gets a private, writable NumPy copy of its storage
    (before an in-place write, or before a view, ``.data`` or ``.numpy()`` shares it).
    A tensor class that keeps its storage resident (``_keep_resident``: a DTensor, whose
    array is laid out over several devices) is left as it is: its ops rebind it."""
    arr = resident(t)
    if arr is not None and not t.__class__._keep_resident:
        d = t.__dict__
        data = d["_data"] = np.array(arr)
        del d["_jax"]
        d.pop("_jview", None)
        # the mark of storage fed to a compiled program at this version: written right
        # after, the tensor is not made resident again on its next call (fnx.lower)
        vc = t._vc
        d["_fed"] = (id(data), vc[0] if vc is not None else 0)


def drop_resident(t) -> None:
    """Forget ``t``'s resident storage (its ``_data`` is about to be assigned)."""
    d = t.__dict__
    if "_jax" in d:
        del d["_jax"]
        d.pop("_jview", None)
        d.pop("_data", None)


def set_resident(t, arr) -> None:
    """Rebind ``t``'s storage to the ``jax.Array`` ``arr`` (a compiled program's result;
    the caller bumps the version: a rebind is a write)."""
    d = t.__dict__
    d["_jax"] = arr
    d.pop("_data", None)
    d.pop("_jview", None)


def _concrete(t, how):
    """``tolist()`` (``how="concrete_list"``) or ``numpy()`` (``"concrete_array"``) of a
    tensor with no values here: the innermost mode that can hand them over does (a graph
    break of fnx.compile); else ``item()`` raises the data-dependence error (an empty
    tensor needs no values)."""
    for mode in reversed(tls.state.modes):
        concrete = getattr(mode, how, None)
        if concrete is not None:
            return concrete(t)
    if t.numel():
        return t.reshape(-1)[0].item()
    return [] if how == "concrete_list" else np.zeros(tuple(t.shape), t._dtype.numpy)


def shared_data(t):
    """``t._data`` for a second handle that shares it (``.data``, ``.numpy()``, a
    Parameter or buffer over it): a resident storage becomes private NumPy first, so writes
    through either handle reach the other."""
    if "_jax" in t.__dict__:
        make_private(t)
    return t._data


def storage_shape(t) -> tuple:
    """``t``'s shape without materializing a resident tensor's NumPy view."""
    d = t.__dict__
    data = d.get("_data")
    if data is not None:
        return data.shape
    shape = d["_jax"].shape
    rows = d.get("_rows")      # a storage padded on dim 0 (an uneven Shard(0) DTensor)
    return shape if rows is None else (rows, *shape[1:])


def exclusive_array(arr, holders: int) -> bool:
    """Whether nothing but the caller's ``holders`` references (the tensor's ``_data``
    slot, the caller's own variables) reach the C-contiguous NumPy array ``arr`` or its
    memory: no other tensor, view or ``.numpy()`` result shares it, so the tensor may give
    it up without anyone noticing."""
    if _getrefcount(arr) != holders + 2 or not arr.flags.c_contiguous:
        return False
    base = arr.base
    if base is None:
        return True
    # a view of a buffer nothing else holds (a kernel's reshape of its own temporary)
    return type(base) is np.ndarray and base.base is None and _getrefcount(base) == 3


_FUNCTIONAL_BIT = 1 << DispatchKey.Functionalize


def _no_functional_backend(src, new):
    raise RuntimeError("Tensor.data of a tensor with the Functionalize key before the "
                       "Functionalize kernels are registered")


# A functional backend's arrays are immutable: its tensors share data by bookkeeping, not
# memory. The Functionalize key (fnx.keys.functionalize) registers how a handle made by
# ``.data`` becomes an alias that writes reach.
_functional_alias = _no_functional_backend


def register_functional_alias(fn) -> None:
    """``fn(src, new)``: make ``new`` (sharing ``src``'s data) an alias of ``src``."""
    global _functional_alias
    _functional_alias = fn


def tensor_method(*names):
    """Decorator: make ``fn`` the Tensor method(s) ``names`` (default: its name) and
    return ``fn`` unchanged.

    The method is named ``Tensor.<first name>``. A function whose first parameter is not
    ``self`` (``def sum(input, dim=None)``, also the public ``fnx.sum``) is bound as a twin
    sharing its code with that parameter renamed ``self``: ``help``, ``inspect.signature``
    and keyword calls see a method, and a call costs no extra frame.

    >>> import inspect
    >>> from fnx.core.tensor import Tensor, tensor_method
    >>> @tensor_method("doc_example_twice")
    ... def twice(input):
    ...     return input * 2
    >>> m = Tensor.doc_example_twice
    >>> inspect.signature(m), m.__qualname__, inspect.signature(twice)
    (<Signature (self)>, 'Tensor.doc_example_twice', <Signature (input)>)
    >>> del Tensor.doc_example_twice
    """
    def deco(fn):
        bound = names or (fn.__name__,)
        method = _as_method(fn, bound[0])
        for n in bound:
            setattr(Tensor, n, method)
        return fn
    return deco


def _as_method(fn, name):
    code = fn.__code__
    first = code.co_varnames[0] if code.co_argcount else "self"
    if first == "self":
        method = fn
    else:
        renamed = tuple("self" if v == first else v for v in code.co_cellvars)
        code = code.replace(co_varnames=("self",) + code.co_varnames[1:], co_cellvars=renamed)
        method = types.FunctionType(code, fn.__globals__, name, fn.__defaults__, fn.__closure__)
        method.__kwdefaults__ = fn.__kwdefaults__
        method.__module__, method.__doc__ = fn.__module__, fn.__doc__
        method.__annotations__ = {"self" if k == first else k: v
                                  for k, v in fn.__annotations__.items()}
        method.__dict__.update(fn.__dict__)
    method.__name__, method.__qualname__ = name, f"Tensor.{name}"
    return method


class GradWriteLog:
    """Records every ``.grad`` written while active, with the value it had before: a
    compiled training step's trace turns those writes into program outputs. Per thread:
    another thread's backward writes into its own ``.grad``s, not this log."""
    writes: dict
    _outer: GradWriteLog | None

    def __init__(self):
        self.writes = {}        # id(tensor) -> (tensor, grad before the first write)
        # id(tensor) -> (tensor, whether .grad was None) for each .grad read before any
        # write: the traced program depends on that, so fnx.compile guards it
        self.reads = {}
        # id(grad) -> (grad, its owner) for each value those reads returned: a program
        # input standing for "the owner's .grad when called", not for that tensor
        self.values = {}

    def __enter__(self):
        self._outer = tls.state.grad_log
        tls.state.grad_log = self
        return self

    def __exit__(self, *exc):
        tls.state.grad_log = self._outer


class LazyGrad:
    """A ``.grad`` not made into a tensor yet: ``_grad`` may hold one (never None, so a
    test ``t._grad is None`` stays true to ``t.grad is None``), and every read of the value
    (``read_grad``, ``grad_value``) makes the tensor first (``tensor()``) and keeps it. A
    compiled step leaves its small gradients so, packed in one array
    (``fnx.lower.packed_grads``): one program output instead of one per parameter."""
    __slots__ = ()

    def tensor(self) -> "Tensor":
        raise NotImplementedError


def grad_value(t):
    """``t._grad`` as a tensor (or None): a ``LazyGrad`` is made one now."""
    g = t._grad
    if g is not None and g.__class__ is not Tensor and isinstance(g, LazyGrad):
        g = t._grad = g.tensor()
    return g


def read_grad(t):
    """``t.grad`` (the property's and the engine's one read path; see GradWriteLog)."""
    log = tls.state.grad_log
    if log is not None and id(t) not in log.writes:
        if id(t) not in log.reads:
            log.reads[id(t)] = (t, t._grad is None)
        g = grad_value(t)
        if g is not None:
            log.values[id(g)] = (g, t)
        return g
    return grad_value(t)


def set_grad(t, value) -> None:
    """``t.grad = value`` without checks (the engine's and the setter's one write path)."""
    log = tls.state.grad_log
    if log is not None and id(t) not in log.writes:
        log.writes[id(t)] = (t, t._grad)
    t._grad = value


def _autograd_bit(ks: int) -> int:
    backend = (ks & BACKEND_BITS).bit_length() - 1
    key = None if backend < 0 else AUTOGRAD_FOR_BACKEND.get(DispatchKey(backend)) or \
        AUTOGRAD_FOR_SPARSE.get(DispatchKey(backend))
    return 1 << (key if key is not None else DispatchKey.AutogradOther)


def _wrap_dim(dim, ndim, what="dim"):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


