"""In-place view ops: ``t_``, ``transpose_``, ``swapaxes_``/``swapdims_``, ``squeeze_``,
``unsqueeze_``, ``as_strided_`` change a tensor's geometry in place, and ``resize_`` /
``resize_as_`` (plus the deprecated out-of-place ``resize``/``resize_as``).

A geometry change is the out-of-place view made first (so its checks and its autograd
node are the view op's), then taken over by ``self``: its data, strides and history. A
tensor that was a view stays a view of the same base (through the longer chain); one that
was not stays a base. Under ``fnx.compile`` they refuse (a traced program's tensors keep
their shapes): use the out-of-place view there. CPU tensors only: the cuda backend
rebuilds views from their base on each write, which a base changing shape would break.

>>> import fnx
>>> x = fnx.arange(6).reshape(2, 3)
>>> x.t_() is x, x.shape, x.tolist()
(True, fnx.Size([3, 2]), [[0, 3], [1, 4], [2, 5]])
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np

from ..core.device import CPU
from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Size, Tensor, drop_resident, shared_data, tensor_method
from ..graph.tracer import is_compiling
from . import shape as _shape
from .inplace_forms import _function_form

__all__ = ["as_strided_", "resize_as_"]

# what makes a tensor the view it is; the rest (version counter, hooks, .grad) is self's
_GEOMETRY = ("_data", "_strides", "grad_fn", "_output_nr", "_gfv")


def _check(self, name):
    if is_compiling():
        raise NotImplementedError(f"{name}: changing a tensor's shape in place is not "
                                  f"supported while fnx.compile traces; use the "
                                  f"out-of-place {name[:-1]}")
    if self._device is not CPU:
        # a functional backend rebuilds views from their base's chain on each write; a
        # base whose geometry changed under its views is not handled there
        raise NotImplementedError(f"{name}: fnx changes the geometry of CPU tensors in "
                                  f"place only, not {self.device}'s")
    if self.requires_grad and self.grad_fn is None and is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


def _take_over(self, name, view):
    """``self`` becomes ``view`` (a view of ``self``) in place; returns ``self``."""
    d = self.__dict__
    for k in _GEOMETRY:
        if k in view.__dict__:
            d[k] = view.__dict__[k]
        else:
            d.pop(k, None)
    if view._base is self:          # self was a base: it stays one
        d.pop("_base", None)
        d.pop("_view_chain", None)
    else:                           # self was a view: now through the view's longer chain
        d["_base"], d["_view_chain"] = view._base, view._view_chain
    return self


def _geometry_method(name, view_fn):
    def method_(self, *args, **kwargs):
        _check(self, name)
        shared_data(self)       # a resident (device-kept) storage becomes NumPy first
        return _take_over(self, name, view_fn(self, *args, **kwargs))
    params = list(inspect.signature(view_fn).parameters.values())
    method_.__signature__ = inspect.Signature([params[0].replace(name="self")] + params[1:])
    method_.__name__ = method_.__qualname__ = name
    return method_


_DOC = ("``{view}`` in place: ``self`` takes the view's shape and strides (same data), as "
        "``torch.Tensor.{name}``.\n\n    >>> import fnx\n    >>> x = fnx.zeros({shape}); "
        "x.{name}({args}).shape\n    {result}\n")
for _name, _fn, _shape_, _args, _result in (
        ("t_", _shape.t, "2, 3", "", "fnx.Size([3, 2])"),
        ("transpose_", _shape.transpose, "2, 3", "0, 1", "fnx.Size([3, 2])"),
        ("swapaxes_", _shape.transpose, "2, 3", "0, 1", "fnx.Size([3, 2])"),
        ("swapdims_", _shape.transpose, "2, 3", "0, 1", "fnx.Size([3, 2])"),
        ("squeeze_", _shape.squeeze, "1, 3", "", "fnx.Size([3])"),
        ("unsqueeze_", _shape.unsqueeze, "3", "0", "fnx.Size([1, 3])"),
        ("as_strided_", _shape.as_strided, "6", "(2, 2), (1, 2)", "fnx.Size([2, 2])")):
    _method = _geometry_method(_name, _fn)
    _method.__doc__ = _DOC.format(view=_name[:-1], name=_name, shape=_shape_, args=_args,
                                  result=_result)
    tensor_method(_name)(_method)


def _sizes(size):
    if len(size) == 1 and isinstance(size[0], (list, tuple, Size)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


@tensor_method()
def resize_(self, *size, memory_format=None):
    """Give ``self`` the shape ``size`` in place: its first elements (in memory order, as
    PyTorch's storage) when it has enough, else new memory holding the old elements first
    (the rest uninitialized). CPU tensors.

    >>> import fnx
    >>> fnx.arange(6).resize_(2, 2).tolist()
    [[0, 1], [2, 3]]
    """
    size = _sizes(size)
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(size)}")
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if is_compiling():
        raise NotImplementedError("resize_: not supported while fnx.compile traces")
    if self._device is not CPU:
        raise NotImplementedError(f"resize_: fnx resizes CPU tensors only, not {self.device}")
    if tuple(self.shape) == size:
        return self
    old = shared_data(self)
    drop_resident(self)
    n = int(np.prod(size, dtype=np.int64))
    if old.flags.c_contiguous and n <= old.size:
        new = old.reshape(-1)[:n].reshape(size)          # the same memory
    else:
        new = np.empty(size, old.dtype)
        k = min(n, old.size)
        new.reshape(-1)[:k] = old.reshape(-1)[:k]
    self.__dict__["_data"] = new
    self.__dict__.pop("_strides", None)
    self._bump_version()
    return self


@tensor_method("resize_as_")
def _resize_as_(self, the_template, *, memory_format=None):
    """``resize_`` to ``the_template``'s shape.

    >>> import fnx
    >>> fnx.arange(4).resize_as_(fnx.zeros(2, 2)).tolist()
    [[0, 1], [2, 3]]
    """
    return resize_(self, tuple(the_template.shape))


@tensor_method()
def resize(self, *size):
    """The deprecated out-of-place ``resize``: a view of ``self`` with shape ``size``, whose
    element count must be ``self``'s.

    >>> import fnx, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     fnx.arange(6).resize(2, 3).shape
    fnx.Size([2, 3])
    """
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    size = _sizes(size)
    n = int(np.prod(size, dtype=np.int64))
    if n != self.numel():
        raise RuntimeError(f"requested resize to {'x'.join(map(str, size))} ({n} elements in "
                           f"total), but the given tensor has a size of "
                           f"{'x'.join(map(str, self.shape))} ({self.numel()} elements). "
                           f"autograd's resize can only change the shape of a given tensor, "
                           f"while preserving the number of elements. ")
    return self.contiguous().view(list(size))


@tensor_method()
def resize_as(self, tensor):
    """The deprecated out-of-place ``resize`` to ``tensor``'s shape.

    >>> import fnx, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     fnx.arange(4).resize_as(fnx.zeros(2, 2)).shape
    fnx.Size([2, 2])
    """
    return Tensor.resize(self, tuple(tensor.shape))


as_strided_ = _function_form("as_strided_", example="fnx.zeros(6)", args="(2, 2), (1, 2)")
resize_as_ = _function_form("resize_as_", example="fnx.zeros(6)", args="fnx.ones(2, 3)")
as_strided_.__module__ = resize_as_.__module__ = __name__
