"""PyTorch's legacy tensor constructors: ``fnx.Tensor(2, 3)``, ``fnx.FloatTensor(data)``,
``fnx.LongTensor(...)`` and the other typed names, ``fnx.cuda.FloatTensor`` and its kin.

Old PyTorch code still makes its parameters this way (``nn.Parameter(torch.Tensor(n, m))``
then an ``init`` call; ``torch.FloatTensor(array)``; ``torch.LongTensor(labels)``), so a
port by changing the import needs them. Their rules, as PyTorch's:

- no argument: an empty tensor of size (0,);
- ints, or one ``Size`` (or ``size=``): an uninitialized tensor of that size;
- one sequence or NumPy array: a copy of the data in the type's dtype (a float truncated
  toward zero in an integer type); a tuple is data, not a size;
- one tensor: an alias of it (a differentiable view; the typed names want its dtype);
- only ``device`` as a keyword; ``fnx.Tensor`` takes the default dtype.

A typed name is not a subclass of ``Tensor``: ``isinstance(t, fnx.FloatTensor)`` asks
whether ``t`` is a float32 tensor on a CPU, and ``t.type(fnx.LongTensor)`` converts.

>>> import fnx, numpy as np
>>> fnx.Tensor(2, 3).shape, fnx.Tensor([1, 2]).tolist()
(fnx.Size([2, 3]), [1.0, 2.0])
>>> fnx.LongTensor(np.array([1.7, 2.0])).tolist(), isinstance(fnx.zeros(2), fnx.FloatTensor)
([1, 2], True)
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import cuda as _cuda
from ..core import dtype as D
from ..core.device import device as _device
from ..core.tensor import Size, Tensor
from ..ops import aten
from .creation import empty, tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
           "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]

def legacy_new(dtype, device_type, args, kwargs) -> Tensor:
    """A tensor made by a legacy constructor: ``dtype`` None for the default dtype,
    ``device_type`` None for any device (``fnx.Tensor``), else the type's."""
    name = "new()" if dtype is None else f"{_type_name(dtype, device_type)}()"
    size = kwargs.pop("size", None)
    dev = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"{name} got an unexpected keyword argument '{next(iter(kwargs))}' "
                        f"(a legacy constructor takes only size= and device=)")
    dev = None if dev is None else _device(dev)
    if device_type is not None:
        if dev is not None and dev.type != device_type:
            raise RuntimeError(f"legacy constructor expects device type: {device_type} but "
                               f"device type: {dev.type} was passed")
        dev = dev if dev is not None else _device(device_type)
    want = dtype if dtype is not None else D.get_default_dtype()
    if size is not None:
        if args:
            raise TypeError(f"{name} got multiple values for argument 'size'")
        args = (Size(size),)
    if not args:
        return empty(0, dtype=want, device=dev)
    if len(args) == 1 and isinstance(args[0], Tensor):
        return _alias(args[0], dtype, name)
    if all(_is_int(a) for a in args) or len(args) == 1 and isinstance(args[0], Size):
        sizes = [int(s) for s in (args[0] if isinstance(args[0], Size) else args)]
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{min(sizes)}: {sizes}")
        return empty(sizes, dtype=want, device=dev)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, str):
            raise TypeError(f"{name}: invalid data type 'str'")
        if not isinstance(data, (list, tuple, np.ndarray)):
            raise TypeError(f"{name}: data must be a sequence (got {type(data).__name__})")
        return tensor(data, dtype=want, device=dev)
    raise TypeError(f"{name} received an invalid combination of arguments: got "
                    f"({', '.join(type(a).__name__ for a in args)}); expected sizes (ints or "
                    f"one Size), one sequence of data or one tensor")


def _type_name(dtype, device_type) -> str:
    """``FloatTensor``, ``cuda.LongTensor``: the constructor's name in messages."""
    return dtype.tensor_type(device_type or "cpu").split(".", 1)[1]


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _alias(t, dtype, name):
    if dtype is not None and t._dtype is not dtype:
        raise TypeError(f"{name}: expected a {dtype} tensor (got {t._dtype})")
    return aten.alias.default(t)


class tensortype(type):
    """The class of the typed legacy constructors: calling one makes a tensor of its dtype
    and device type; ``isinstance`` asks for that dtype and device type."""

    def __call__(cls, *args, **kwargs):
        return legacy_new(cls.dtype, cls._device_type, args, kwargs)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and \
            obj.device.type == cls._device_type

    def __subclasscheck__(cls, sub):
        return sub is cls


def _make_type(scalar, dtype, device_type):
    module = "fnx" if device_type == "cpu" else "fnx.cuda"
    doc = (f"The legacy constructor of {dtype} tensors on {device_type} devices "
           f"(``fnx.{'cuda.' if device_type == 'cuda' else ''}{scalar}Tensor(2, 3)``, "
           f"``(data)``, ``(tensor)``); see ``fnx.api.legacy_types``.")
    return tensortype(f"{scalar}Tensor", (), {
        "dtype": dtype, "_device_type": device_type, "is_cuda": device_type == "cuda",
        "is_sparse": False, "__module__": module, "__doc__": doc})


FloatTensor = _make_type("Float", D.float32, "cpu")
DoubleTensor = _make_type("Double", D.float64, "cpu")
HalfTensor = _make_type("Half", D.float16, "cpu")
BFloat16Tensor = _make_type("BFloat16", D.bfloat16, "cpu")
ByteTensor = _make_type("Byte", D.uint8, "cpu")
CharTensor = _make_type("Char", D.int8, "cpu")
ShortTensor = _make_type("Short", D.int16, "cpu")
IntTensor = _make_type("Int", D.int32, "cpu")
LongTensor = _make_type("Long", D.int64, "cpu")
BoolTensor = _make_type("Bool", D.bool, "cpu")

# fnx.cuda sits below the API layer (it cannot import the factories): its legacy names
# are made here
for _name in __all__:
    _cpu = globals()[_name]
    setattr(_cuda, _name, _make_type(_name[:-len("Tensor")], _cpu.dtype, "cuda"))


def _tensor_new(cls, *args, **kwargs):
    # ``fnx.Tensor(...)`` with arguments is the legacy constructor; without, and for every
    # subclass, a bare instance (``Tensor.__new__(cls)`` is how tensors are made)
    if cls is Tensor and (args or kwargs):
        return legacy_new(None, None, args, kwargs)
    return object.__new__(cls)


def _tensor_init(self, *args, **kwargs):
    if type(self) is not Tensor:
        raise TypeError("use fnx.tensor(...), fnx.empty(...) or another factory to make a "
                        "Tensor")
    if "_dtype" not in self.__dict__:       # ``fnx.Tensor()``: an empty tensor
        self.__dict__.update(empty(0).__dict__)


Tensor.__new__ = _tensor_new
Tensor.__init__ = _tensor_init
