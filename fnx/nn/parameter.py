"""``nn.Parameter``: a tensor that a ``Module`` registers as one of its parameters."""
from __future__ import annotations

import numpy as np

from .. import api as fnx
from ..core.dispatch_key import AUTOGRAD_BITS
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor, _autograd_bit, shared_data
from ..serialization import _rebuild_tensor, register_parameter_class

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


def _share(cls, data: Tensor, requires_grad: bool) -> Tensor:
    """A ``cls`` instance over ``data``'s storage (a detached alias sharing its version)."""
    ks = data._ks & ~AUTOGRAD_BITS
    if requires_grad:
        if not (data._dtype.is_floating_point or data._dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        ks |= _autograd_bit(ks)
    t = object.__new__(cls)
    t._data, t._dtype, t._device, t._ks = shared_data(data), data._dtype, data._device, ks
    t._vc = data._shared_version_counter()
    return t


class Parameter(Tensor):
    """A tensor that is a module parameter, as ``torch.nn.Parameter``: assigning one to a
    ``Module`` attribute registers it, and it requires grad by default.  It shares the
    data (and version counter) of the tensor it is made from.

    >>> import fnx
    >>> p = fnx.nn.Parameter(fnx.ones(2))
    >>> p
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
    >>> p.requires_grad, p.is_leaf, isinstance(p, fnx.Tensor)
    (True, True, True)
    """

    _is_param = True

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = fnx.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not "
                            f"{type(data).__name__}")
        return _share(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        with no_grad():
            data = np.array(self.cpu()._data, copy=True)
        return (_rebuild_parameter, (data, self._dtype.name, str(self._device),
                                     self.requires_grad))


class Buffer(Tensor):
    """Marks a tensor to register as a buffer when assigned to a ``Module`` attribute, as
    ``torch.nn.Buffer``: ``self.mean = nn.Buffer(fnx.zeros(3), persistent=False)``.
    The module stores a plain tensor sharing the data.

    >>> import fnx
    >>> m = fnx.nn.Module()
    >>> m.stat = fnx.nn.Buffer(fnx.zeros(2))
    >>> list(m.state_dict())
    ['stat']
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = fnx.empty(0)
        t = _share(cls, data, data.requires_grad)
        t.persistent = persistent
        return t

    def __init__(self, data=None, *, persistent=True):
        pass


class _Uninitialized:
    """A tensor with a dtype and device but no shape or values yet (a lazy module's
    parameter until its first call): ``materialize(shape)`` gives it values (uninitialized
    memory, as ``empty``) and makes it a ``cls_to_become``. Until then it holds zero
    elements."""

    cls_to_become = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        if isinstance(shape, int):
            shape = (shape,)
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        with no_grad():
            self.data = fnx.empty(*shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. "
                           "This error usually happens in `load_state_dict` when trying to "
                           "load an uninitialized parameter into an initialized one. Call "
                           "`forward` to initialize the parameters before accessing their "
                           "attributes.")

    def __repr__(self):
        return f"<{type(self).__name__}>"


class UninitializedParameter(_Uninitialized, Parameter):
    """A lazy module's parameter before its first call (``nn.LazyLinear`` and kin).

    >>> import fnx
    >>> p = fnx.nn.parameter.UninitializedParameter()
    >>> p
    <UninitializedParameter>
    >>> p.materialize((2, 3)); type(p).__name__, tuple(p.shape), p.requires_grad
    ('Parameter', (2, 3), True)
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _share(cls, fnx.empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __reduce_ex__(self, proto):
        raise RuntimeError("Can't pickle an uninitialized parameter: call the lazy module "
                           "once to initialize it first")


class UninitializedBuffer(_Uninitialized, Tensor):
    """A lazy module's buffer before its first call (``running_mean`` of
    ``nn.LazyBatchNorm1d``)."""

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        return _share(cls, fnx.empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass


def is_lazy(param) -> bool:
    """Whether ``param`` is an uninitialized parameter or buffer."""
    return isinstance(param, _Uninitialized)


def _rebuild_parameter(array, dtype_name, device_str, requires_grad):
    return Parameter(_rebuild_tensor(array, dtype_name, device_str, False), requires_grad)


register_parameter_class(Parameter)
