"""Moving between dtypes and devices: ``Tensor.to``, ``.cpu()``, ``.float()``, ``.type()``...

Every conversion is one ``aten._to_copy`` call, so it dispatches (autograd records it,
the tracer sees it, a backend owns its transfers), and returns ``self`` unchanged when
neither the dtype nor the device changes and no copy was asked for.
"""
from __future__ import annotations

from ..core import dtype as D
from ..core.memory_format import format_name
from ..core.device import device as _device
from ..core.tensor import Tensor, tensor_method
from ..ir.aten import factory as F
from ..ir.backend_select import backend_key, device_arg
from ..ops import aten
from .printing import set_printoptions

__all__ = ["is_tensor", "is_floating_point", "numel", "set_printoptions"]

_to_copy = aten._to_copy.default


def _check_backend(dev, what):
    """A clear error when no backend is registered for the target device yet."""
    key = backend_key(dev)
    if not F.empty.has_kernel_for(key):
        raise RuntimeError(f"{what}: cannot move a tensor to '{dev}': no {key.name} backend is "
                           f"registered in fnx (no kernel for the {key.name} dispatch key)")


def _convert(self, dtype=None, device=None, non_blocking=False, copy=False,
             memory_format=None, what="Tensor.to()"):
    if dtype is not None and not isinstance(dtype, D.dtype):
        raise TypeError(f"to() received an invalid combination of arguments - argument "
                        f"'dtype' must be fnx.dtype, not {type(dtype).__name__}")
    dev = self._device if device is None else device_arg(device)
    if dtype is None:
        dtype = self._dtype
    mf = format_name(memory_format)
    # a layout to give the result (channels_last): the tensor is laid out anew unless it
    # already is, as PyTorch does
    relayout = mf != "preserve_format" and not self.is_contiguous(memory_format=mf)
    if dev is self._device and dtype is self._dtype and not copy and not relayout:
        return self
    if dev is not self._device:
        _check_backend(dev, what)
    if dev is self._device and dtype is self._dtype and relayout and not copy:
        return self.contiguous(memory_format=mf)
    out = _to_copy(self, dtype=dtype, device=dev if dev is not self._device else None,
                   non_blocking=non_blocking, memory_format=memory_format)
    if mf != "preserve_format" and not out.is_contiguous(memory_format=mf):
        out = out.contiguous(memory_format=mf)
    return out


def _is_device(x) -> bool:
    return isinstance(x, (str, _device)) or (isinstance(x, int) and not isinstance(x, bool))


@tensor_method()
def to(self, *args, **kwargs):
    """A tensor with the requested dtype and/or device (``self`` if it already has them).

    Forms: ``to(dtype)``, ``to(device, dtype=None)``, ``to(other)``, each with
    ``non_blocking=False, copy=False, memory_format=None``.

    >>> import fnx
    >>> x = fnx.tensor([1.5, -2.7])
    >>> x.to(fnx.int32), x.to("cpu") is x, x.to(fnx.tensor([1])).dtype
    (tensor([ 1, -2], dtype=fnx.int32), True, fnx.int64)
    """
    args = list(args)
    dtype = device = None
    if args:
        a = args[0]
        if isinstance(a, Tensor):
            device, dtype = a._device, a._dtype
            args.pop(0)
        elif isinstance(a, D.dtype):
            dtype = args.pop(0)
        elif a is None or _is_device(a):
            device = args.pop(0)
            if args and (args[0] is None or isinstance(args[0], D.dtype)):
                dtype = args.pop(0)
        elif not isinstance(a, bool):
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"({type(a).__name__}, ...), expected a dtype, a device or a "
                            f"Tensor")
    if len(args) > 2:
        raise TypeError(f"to() takes at most 4 positional arguments ({len(args) + 2} given)")
    opts = dict(zip(("non_blocking", "copy"), args))
    for k, v in kwargs.items():
        if k not in ("dtype", "device", "non_blocking", "copy", "memory_format"):
            raise TypeError(f"to() got an unexpected keyword argument '{k}'")
        if k in opts or (k == "dtype" and dtype is not None) or \
                (k == "device" and device is not None):
            raise TypeError(f"to() got multiple values for argument '{k}'")
        opts[k] = v
    device = opts.pop("device", device)
    dtype = opts.pop("dtype", dtype)
    return _convert(self, dtype, device, **opts)


@tensor_method()
def cpu(self, memory_format=None):
    """A copy in CPU memory (``self`` when already there).

    >>> import fnx
    >>> x = fnx.zeros(1); x.cpu() is x
    True
    """
    return _convert(self, device="cpu", memory_format=memory_format, what="Tensor.cpu()")


@tensor_method()
def cuda(self, device=None, non_blocking=False, memory_format=None):
    """A copy on a CUDA device (``device``: an index, "cuda:N" or a ``fnx.device``).

    >>> import fnx
    >>> fnx.zeros(1).cuda("cpu")
    Traceback (most recent call last):
    RuntimeError: Invalid device, must be cuda device, got cpu
    """
    if device is None:
        device = "cuda"
    elif isinstance(device, int) and not isinstance(device, bool):
        device = f"cuda:{device}"
    dev = device_arg(device)
    if dev.type != "cuda":
        raise RuntimeError(f"Invalid device, must be cuda device, got {dev}")
    return _convert(self, device=dev, non_blocking=non_blocking, memory_format=memory_format,
                    what="Tensor.cuda()")


def _cast_method(name, dtype):
    """``Tensor.<name>(self, memory_format=None)``: ``self.to(dtype)``."""
    def method(self, memory_format=None) -> Tensor:
        return _convert(self, dtype, memory_format=memory_format)
    method.__doc__ = (f"``self.to({dtype})``.\n\n    >>> import fnx\n"
                      f"    >>> fnx.tensor([1]).{name}().dtype\n    {dtype}\n")
    tensor_method(name)(method)


for _name, _dt in [("float", D.float32), ("double", D.float64), ("half", D.float16),
                   ("bfloat16", D.bfloat16), ("int", D.int32), ("long", D.int64),
                   ("short", D.int16), ("char", D.int8), ("byte", D.uint8), ("bool", D.bool),
                   ("cfloat", D.complex64), ("cdouble", D.complex128)]:
    _cast_method(_name, _dt)

@tensor_method("type")
def type_(self, dtype=None, non_blocking=False, **kwargs):
    """Without ``dtype``: the type name (``'fnx.FloatTensor'``); with one: a converted tensor.

    >>> import fnx
    >>> x = fnx.tensor([1, 2])
    >>> x.type(), x.type(fnx.float64).type(), x.type("fnx.ShortTensor").dtype
    ('fnx.LongTensor', 'fnx.DoubleTensor', fnx.int16)
    >>> x.type(fnx.FloatTensor)
    tensor([1., 2.])
    """
    if dtype is None:
        return self._dtype.tensor_type(self._device.type)
    device = None
    if isinstance(dtype, str):
        named = D.from_tensor_type(dtype)
        if named is None:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype, device = named
    elif isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), D.dtype):
        # a legacy type (fnx.LongTensor, fnx.cuda.FloatTensor): its dtype and device
        device, dtype = ("cuda" if dtype.is_cuda else "cpu"), dtype.dtype
    elif not isinstance(dtype, D.dtype):
        raise TypeError(f"type(): argument 'dtype' must be fnx.dtype or str, not "
                        f"{type(dtype).__name__}")
    return _convert(self, dtype, device, non_blocking=non_blocking)


@tensor_method()
def copy_(self, src, non_blocking=False):
    """Copy ``src`` into ``self`` (broadcast, cast to ``self``'s dtype), in place.

    >>> import fnx
    >>> x = fnx.zeros(2, 2)
    >>> x.copy_(fnx.tensor([1, 2]))
    tensor([[1., 2.],
            [1., 2.]])
    """
    return aten.copy_.default(self, src, non_blocking)


@tensor_method()
def type_as(self, other):
    """``self`` converted to ``other``'s dtype (and device, as ``Tensor.type`` does).

    >>> import fnx
    >>> fnx.tensor([1.5]).type_as(fnx.tensor([1]))
    tensor([1])
    """
    return _convert(self, other._dtype, other._device)


def is_tensor(obj) -> bool:
    """True when ``obj`` is a ``fnx.Tensor``.

    >>> import fnx
    >>> fnx.is_tensor(fnx.tensor(1)), fnx.is_tensor([1])
    (True, False)
    """
    return isinstance(obj, Tensor)


def _expect_tensor(name, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def is_floating_point(input) -> bool:
    """True for float16, bfloat16, float32 and float64 tensors.

    >>> import fnx
    >>> fnx.is_floating_point(fnx.tensor([1.0])), fnx.is_floating_point(fnx.tensor([1]))
    (True, False)
    """
    _expect_tensor("is_floating_point", input)
    return input._dtype.is_floating_point


def numel(input) -> int:
    """The number of elements of ``input``.

    >>> import fnx
    >>> fnx.numel(fnx.zeros(2, 3))
    6
    """
    _expect_tensor("numel", input)
    return input.numel()



@tensor_method()
def item(self):
    """The value of a one-element tensor as a Python number, as ``torch.Tensor.item``.

    >>> import fnx
    >>> fnx.tensor([2.5]).item()
    2.5
    """
    if self.numel() != 1:
        raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted "
                           f"to Scalar")
    return aten._local_scalar_dense.default(self)
