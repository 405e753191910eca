"""``nn.Parameter``: a tensor that a ``Module`` registers as one of its parameters."""
from __future__ import annotations

import numpy as np

from .. import api as fnx
from ..core.dispatch_key import AUTOGRAD_BITS
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor, _autograd_bit, shared_data
from ..serialization import _rebuild_tensor, register_parameter_class

__all__ = ["Parameter", "Buffer"]


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


def _rebuild_parameter(array, dtype_name, device_str, requires_grad):
    return Parameter(_rebuild_tensor(array, dtype_name, device_str, False), requires_grad)


register_parameter_class(Parameter)
