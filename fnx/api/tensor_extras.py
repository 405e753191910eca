"""Smaller ``torch.Tensor`` methods and their ``torch.*`` functions: predicates
(``is_nonzero``, ``is_same_size``, ``is_signed``, ``is_neg``), layout
queries (``dim_order``, ``data_ptr``), memory no-ops of a CPU process (``pin_memory``,
``share_memory_``, ``record_stream``), the legacy constructor ``Tensor.new``, Python
callables over elements (``apply_``, ``map_``, ``map2_``: CPU only, as PyTorch), random
fills (``cauchy_``, ``geometric_``, ``log_normal_``: fnx's generator through ``rand``),
and short compositions (``sum_to_size``, ``fill_diagonal_``, ``renorm``,
``nonzero_static``), each written with fnx ops so it differentiates and compiles.

>>> import fnx
>>> fnx.ones(2, 3).sum_to_size(1, 3).tolist(), fnx.tensor([0.0]).is_nonzero()
([[2.0, 2.0, 2.0]], False)
"""
from __future__ import annotations

import math
import sys

import numpy as np

from ..backends.cuda.devices import is_available as _cuda_is_available
from ..core import dtype as D
from ..core.device import CPU
from ..core.grad_mode import no_grad
from ..core.layout import strided
from ..core.shared_storage import array_in, segment_of, share
from ..core.tensor import Size, Tensor, shared_data, tensor_method
from ..ops import aten
from . import creation as _c
from . import math as _m
from . import nn as _nn
from . import shape as _shape
from .inplace_forms import _writing

__all__ = ["is_nonzero", "is_same_size", "is_signed", "is_neg", "resolve_neg", "renorm",
           "nonzero_static"]


@tensor_method()
def as_subclass(self, cls):
    """``self`` as an instance of the Tensor subclass ``cls``: an alias sharing its data,
    differentiable (gradients flow back to ``self``), as ``torch.Tensor.as_subclass``.

    >>> import fnx
    >>> class Tagged(fnx.Tensor):
    ...     pass
    >>> x = fnx.ones(2, requires_grad=True)
    >>> y = x.as_subclass(Tagged)
    >>> type(y).__name__, y.requires_grad
    ('Tagged', True)
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    out = aten.alias(self)
    out.__class__ = cls
    return out


@tensor_method()
def module_load(self, other, assign=False):
    """How ``other`` (a state-dict value) becomes the new value of the parameter or buffer
    ``self`` when a module's parameters are swapped on loading, as
    ``torch.Tensor.module_load``: ``self.copy_(other).detach()``, or ``other.detach()``
    with ``assign``. Subclasses override it. (fnx's ``load_state_dict`` copies in place and
    does not call it: it has no swap-on-conversion mode.)

    >>> import fnx
    >>> p = fnx.zeros(2)
    >>> p.module_load(fnx.tensor([1.0, 2.0])), p
    (tensor([1., 2.]), tensor([1., 2.]))
    """
    if assign:
        return other.detach()
    return self.copy_(other).detach()

# second bindings of existing functions as methods
tensor_method("broadcast_to")(_shape.broadcast_to)
tensor_method("hardshrink")(_nn.hardshrink)
tensor_method("prelu")(_nn.prelu)


@tensor_method()
def is_nonzero(input) -> bool:
    """Whether a one-element tensor is not zero, as ``torch.is_nonzero``.

    >>> import fnx
    >>> fnx.is_nonzero(fnx.tensor([1.5])), fnx.tensor(0).is_nonzero()
    (True, False)
    """
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


@tensor_method()
def is_same_size(input, other) -> bool:
    """Whether ``input`` and ``other`` have the same shape.

    >>> import fnx
    >>> fnx.ones(2, 3).is_same_size(fnx.zeros(2, 3))
    True
    """
    return tuple(input.shape) == tuple(other.shape)


@tensor_method()
def is_signed(input) -> bool:
    """Whether the dtype is signed (every dtype but ``uint8`` and ``bool``).

    >>> import fnx
    >>> fnx.is_signed(fnx.tensor([1])), fnx.tensor([1], dtype=fnx.uint8).is_signed()
    (True, False)
    """
    return bool(input.dtype.is_signed)


@tensor_method()
def is_neg(input) -> bool:
    """False: fnx materializes negation (PyTorch's lazy negative bit is never set).

    >>> import fnx
    >>> fnx.is_neg(fnx.tensor([1.0]))
    False
    """
    return False


@tensor_method()
def resolve_neg(input):
    """``input``: no negative bit to resolve (see ``is_neg``).

    >>> import fnx
    >>> x = fnx.tensor([1.0]); x.resolve_neg() is x
    True
    """
    return input


@tensor_method()
def dim_order(self):
    """The dims from outermost to innermost in memory (by decreasing stride; ties keep
    their order), as ``torch.Tensor.dim_order``.

    >>> import fnx
    >>> fnx.ones(2, 3).dim_order(), fnx.ones(2, 3).t().dim_order()
    ((0, 1), (1, 0))
    """
    strides = self.stride()
    return tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))


@tensor_method("data_ptr", "const_data_ptr")
def data_ptr(self) -> int:
    """The address of the first element (0 for a tensor without data, as a meta
    tensor's), as ``torch.Tensor.data_ptr``.

    >>> import fnx
    >>> x = fnx.arange(4.0); x[1:].data_ptr() - x.data_ptr() == x.element_size()
    True
    """
    arr = self._data
    if isinstance(arr, np.ndarray):
        return int(arr.__array_interface__["data"][0]) if arr.size else 0
    pointer = getattr(arr, "unsafe_buffer_pointer", None)
    return int(pointer()) if pointer is not None else 0


# What PyTorch keeps as storage flags; fnx's CPU memory is ordinary memory, so only the
# flags are kept, on the tensor itself.
_PINNED, _SHARED = "_fnx_pinned", "_fnx_shared"


@tensor_method()
def is_pinned(self, device=None) -> bool:
    """Whether ``pin_memory`` made this tensor (host memory for fast copies).

    >>> import fnx
    >>> fnx.ones(1).is_pinned()
    False
    """
    return _PINNED in self.__dict__


@tensor_method()
def pin_memory(self, device=None):
    """A copy in page-locked host memory for an accelerator; with no cuda device it raises,
    as PyTorch's.

    >>> import fnx
    >>> fnx.cuda.is_available() or "raises"
    'raises'
    """
    if not _cuda_is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if self._device is not CPU:
        raise RuntimeError(f"cannot pin a tensor on {self.device}: only dense CPU tensors "
                           f"can be pinned")
    if _PINNED in self.__dict__:
        return self
    out = _shape.clone(self)
    out.__dict__[_PINNED] = True
    return out


@tensor_method()
def share_memory_(self):
    """Move a dense CPU tensor's storage into shared memory (a no-op if it is there) and
    return ``self``: processes it is then sent to by ``fnx.multiprocessing`` (a ``Process``
    argument, a ``Queue``) write into the same memory, as do forked children. Other
    tensors and NumPy arrays that aliased the old storage keep the old copy; a view
    cannot be moved (share its base before taking views). cuda and sparse tensors are
    only marked (cuda memory is shared as it is).

    >>> import fnx
    >>> x = fnx.ones(1); x.share_memory_() is x, x.is_shared()
    (True, True)
    """
    if self._device is not CPU or self.layout is not strided:
        self.__dict__[_SHARED] = True
        return self
    if segment_of(self) is not None:
        return self
    if self._base is not None:
        _share_view(self)
        return self
    shared_data(self)       # a resident (compiled) storage becomes NumPy first
    share(self)
    return self


def _share_view(view):
    """Move the base of ``view`` into shared memory and point ``view`` into it, where
    nothing else aliases the base's storage (``x = fnx.randn(6).view(2, 3)``); other
    views would keep the old copy, so then this refuses."""
    root = view._base
    shared_data(root)
    arr, base = view._data, root._data
    # holders of ``base``: root's _data slot, arr.base, the local name, getrefcount's argument
    if not (isinstance(arr, np.ndarray) and arr.base is base and base.flags.c_contiguous and
            sys.getrefcount(base) == 4):
        raise RuntimeError("share_memory_: cannot move the storage of a view into shared "
                           "memory while other tensors or arrays share it; call "
                           "share_memory_() on its base before taking views")
    offset = arr.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    shape, strides = arr.shape, arr.strides
    del arr, base
    share(root)
    view._data = array_in(root._data, shape, root._data.dtype, offset, strides)


@tensor_method()
def is_shared(self) -> bool:
    """Whether the storage is in shared memory (``share_memory_``; always True on cuda,
    as PyTorch's).

    >>> import fnx
    >>> fnx.ones(1).is_shared()
    False
    """
    return self._device.type == "cuda" or _SHARED in self.__dict__ or \
        segment_of(self) is not None


@tensor_method()
def record_stream(self, stream) -> None:
    """Nothing to do: fnx's cuda memory is not recycled across streams.

    >>> import fnx
    >>> fnx.ones(1).record_stream(None)
    """
    return None


@tensor_method()
def new(self, *args, **kwargs):
    """The legacy constructor: ``x.new(2, 3)`` (uninitialized, like ``empty``),
    ``x.new([1, 2])`` (from data), ``x.new()`` (empty), in ``x``'s dtype and device unless
    given.

    >>> import fnx
    >>> x = fnx.tensor([1.5]); x.new([1, 2]).tolist(), x.new(2, 3).shape, x.new().shape
    ([1.0, 2.0], fnx.Size([2, 3]), fnx.Size([0]))
    """
    dtype = kwargs.pop("dtype", self.dtype)
    device = kwargs.pop("device", self.device)
    if kwargs:
        raise TypeError(f"new() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if not args:
        return _c.empty(0, dtype=dtype, device=device)
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other.dtype is not dtype or other.device != device:
            raise TypeError(f"new(): expected a tensor of dtype {dtype} on {device}, got "
                            f"{other.dtype} on {other.device}")
        return aten.alias.default(other)
    if len(args) == 1 and isinstance(args[0], (list, tuple)) and not isinstance(args[0], Size):
        return _c.tensor(args[0], dtype=dtype, device=device)
    sizes = args[0] if len(args) == 1 and isinstance(args[0], Size) else args
    return _c.empty(*sizes, dtype=dtype, device=device)


def _python_map(self, name, fn, *others):
    if self._device is not CPU:
        raise RuntimeError(f"{name}_ is only implemented on CPU tensors")
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}_() on Variable that requires grad. Use "
                           f"var.detach().{name}_() instead.")
    arrays = [np.broadcast_to(o.detach().numpy(), tuple(self.shape)) for o in others]
    mine = self.detach().numpy()
    out = np.empty(mine.shape, mine.dtype)
    for idx in np.ndindex(*mine.shape):
        out[idx] = fn(mine[idx].item(), *(a[idx].item() for a in arrays))
    with no_grad():
        return self.copy_(_c.from_numpy(out))


@tensor_method()
def apply_(self, callable):
    """Replace each element by ``callable(element)`` (a Python function; CPU only, slow).

    >>> import fnx
    >>> fnx.tensor([1, 2]).apply_(lambda v: v * 10).tolist()
    [10, 20]
    """
    return _python_map(self, "apply", callable)


@tensor_method()
def map_(self, tensor, callable):
    """Replace each element by ``callable(element, tensor's element)`` (``tensor``
    broadcast to ``self``; CPU only).

    >>> import fnx
    >>> fnx.tensor([1, 2]).map_(fnx.tensor(5), lambda a, b: a + b).tolist()
    [6, 7]
    """
    return _python_map(self, "map", callable, tensor)


@tensor_method()
def map2_(self, x, y, callable):
    """``map_`` with two tensors: ``callable(element, x's, y's)``.

    >>> import fnx
    >>> fnx.tensor([1, 2]).map2_(fnx.tensor(5), fnx.tensor([1, 0]), max).tolist()
    [5, 5]
    """
    return _python_map(self, "map2", callable, x, y)


def _uniform_like(self, generator):
    """Uniform samples on (0, 1) in ``self``'s shape (float64 for float64, else float32)."""
    d = D.float64 if self.dtype is D.float64 else D.float32
    u = _c.rand(*self.shape, generator=generator, dtype=d, device=self.device)
    tiny = float(np.finfo(d.numpy).tiny)
    return _m.clamp(u, min=tiny)       # rand may give exactly 0


def _check_float(self, name):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{self.dtype.cpp_type}")


@tensor_method()
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with samples of the Cauchy distribution ``median + sigma * tan(pi (u - 1/2))``.

    >>> import fnx
    >>> x = fnx.empty(3); x.cauchy_() is x
    True
    """
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    _check_float(self, "Cauchy")
    u = _uniform_like(self, generator)
    return self.copy_(_m.tan((u - 0.5) * math.pi) * sigma + median)


@tensor_method()
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with ``exp(N(mean, std**2))`` samples.

    >>> import fnx
    >>> bool((fnx.empty(4).log_normal_() > 0).all())
    True
    """
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    _check_float(self, "log_normal")
    d = D.float64 if self.dtype is D.float64 else D.float32
    z = _c.randn(*self.shape, generator=generator, dtype=d, device=self.device)
    return self.copy_(_m.exp(z * std + mean))


@tensor_method()
def geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(``p``) trials up to the first success (1, 2, ...):
    ``ceil(log(u) / log(1 - p))``; integer tensors too, as PyTorch.

    >>> import fnx
    >>> bool((fnx.zeros(5, dtype=fnx.int64).geometric_(0.5) >= 1).all())
    True
    """
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    u = _uniform_like(self, generator)
    k = _m.ceil(_m.log(u) / math.log1p(-p))
    return self.copy_(_m.clamp(k, min=1))


@tensor_method()
def sum_to_size(self, *size):
    """The sum of ``self`` down to ``size`` (which must broadcast to ``self``'s shape), as
    the gradient of a broadcast is summed.

    >>> import fnx
    >>> fnx.ones(2, 3).sum_to_size(3).tolist()
    [2.0, 2.0, 2.0]
    """
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    size = tuple(int(s) for s in size)
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size)
                                if s == 1 and shape[lead + i] != 1]
    if not dims:
        return self
    return aten.sum.dim_IntList(self, dims, True).reshape(list(size))


@tensor_method()
def fill_diagonal_(self, fill_value, wrap=False):
    """Write ``fill_value`` on the main diagonal (all dims of equal length for more than 2
    dims); for a tall matrix ``wrap=True`` restarts the diagonal every ``cols + 1`` rows,
    as ``torch.Tensor.fill_diagonal_``.

    >>> import fnx
    >>> fnx.zeros(2, 3).fill_diagonal_(5).tolist()
    [[5.0, 0.0, 0.0], [0.0, 5.0, 0.0]]
    """
    shape = list(self.shape)
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    dev = self.device
    if len(shape) == 2:
        rows, cols = shape
        n = min(rows, cols)
        if wrap and rows > cols:
            flat = _c.arange(0, rows * cols, cols + 1, dtype=D.int64, device=dev)
            index = (flat // cols, flat % cols)
        else:
            i = _c.arange(n, dtype=D.int64, device=dev)
            index = (i, i)
    else:
        i = _c.arange(shape[0], dtype=D.int64, device=dev)
        index = (i,) * len(shape)
    value = fill_value if isinstance(fill_value, Tensor) else _c.tensor(fill_value,
                                                                        dtype=self.dtype)
    return aten.index_put_.default(self, list(index), value.to(self.dtype, device=dev))


@tensor_method()
def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to norm
    ``maxnorm`` (by ``maxnorm / (norm + 1e-7)``, as PyTorch), the others unchanged.

    >>> import fnx
    >>> fnx.renorm(fnx.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.30000001192092896, 0.4000000059604645]]
    """
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"renorm: Expected a floating point or complex tensor as input. "
                           f"Got {input.dtype.scalar_type}")
    if not p > 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported (p = {p})")
    if not maxnorm >= 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           f"dimensions")
    d = dim % input.ndim
    others = [i for i in range(input.ndim) if i != d]
    norm = aten.linalg_vector_norm.default(input, p, others, True)
    factor = _m.where(norm > maxnorm, maxnorm / (norm + 1e-7), _c.ones_like(norm))
    return input * factor


_renorm_ = _writing("renorm_", renorm)
_renorm_.__doc__ += ("\n\n    >>> import fnx\n    >>> x = fnx.ones(2, 2); x.renorm_(2, 0, 1.0) "
                     "is x\n    True\n")
tensor_method("renorm_")(_renorm_)


@tensor_method()
def nonzero_static(input, *, size, fill_value=-1):
    """The indices of the nonzero elements, as ``nonzero``, in a result of fixed shape
    ``(size, input.ndim)``: truncated to ``size`` rows, or padded with ``fill_value``
    (static shapes, so it compiles).

    >>> import fnx
    >>> fnx.nonzero_static(fnx.tensor([0, 3, 0, 4]), size=3).tolist()
    [[1], [3], [-1]]
    """
    size = int(size)
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got "
                           f"{size}")
    shape = list(input.shape)
    dev = input.device
    flat = input.reshape(-1) != 0
    n = flat.shape[0]
    # each nonzero element's row in the result; the others (and rows past size) go to a
    # spare row that is cut off
    row = aten.cumsum.default(flat.to(D.int64), 0) - 1
    row = _m.where(flat & (row < size), row, _c.full((n,), size, dtype=D.int64, device=dev))
    pos = _c.arange(n, dtype=D.int64, device=dev)
    cols = []
    step = 1
    for s in reversed(shape):
        cols.append((pos // step) % s)
        step *= s
    coords = _shape.stack(cols[::-1], 1) if cols else _c.empty(n, 0, dtype=D.int64,
                                                                 device=dev)
    out = _c.full((size + 1, len(shape)), fill_value, dtype=D.int64, device=dev)
    out = aten.index_put.default(out, [row], coords)
    return out[:size]

