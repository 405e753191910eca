"""Parametrizations, as ``torch.nn.utils.parametrize``: a module's tensor ``weight``
becomes a function of other tensors, computed on each access.

``register_parametrization(m, "weight", p)`` moves the tensor to
``m.parametrizations.weight`` (a ``ParametrizationList``) as ``original`` (or as
``original0``, ``original1``, ... when ``p.right_inverse`` returns several tensors), and
gives ``m`` a subclass ``Parametrized<Class>`` whose ``weight`` property returns
``p(original)`` and whose setter stores ``right_inverse(value)``. ``state_dict`` keys follow:
``parametrizations.weight.original``.
"""
from __future__ import annotations

import contextlib
import copy
import threading

from ...core.grad_mode import no_grad
from ...core.tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]


class _Cache(threading.local):
    enabled = 0
    values: dict = {}


_cache = _Cache()


@contextlib.contextmanager
def cached():
    """Within the block, each parametrized tensor is computed once, on its first access
    (useful when a weight is read many times in one forward, as in a recurrent loop).

    >>> import fnx
    >>> from fnx.nn.utils import parametrize
    >>> m = fnx.nn.Linear(2, 2)
    >>> _ = parametrize.register_parametrization(m, "weight", fnx.nn.Identity())
    >>> with parametrize.cached():
    ...     m.weight is m.weight
    True
    """
    _cache.enabled += 1
    if _cache.enabled == 1:
        _cache.values = {}
    try:
        yield
    finally:
        _cache.enabled -= 1
        if not _cache.enabled:
            _cache.values = {}


def _register_tensor(module, name, tensor):
    if isinstance(tensor, Parameter):
        module.register_parameter(name, tensor)
    else:
        module.register_buffer(name, tensor)


def _assign(original, value):
    """Put ``value`` into ``original`` in place (its identity, so optimizers keep it)."""
    if tuple(original.shape) != tuple(value.shape) or original.dtype != value.dtype:
        raise ValueError(f"The parametrization's right_inverse returned a tensor of shape "
                         f"{tuple(value.shape)} and dtype {value.dtype}, but the original has "
                         f"shape {tuple(original.shape)} and dtype {original.dtype}")
    with no_grad():
        original.copy_(value)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and its original tensor(s)
    (``original``, or ``original0``, ``original1``, ...)."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = tuple(original.shape), original.dtype
        new = original
        with no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, Tensor) and not isinstance(new, (list, tuple)):
            raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change "
                                 f"the dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            if new is not original:
                if tuple(new.shape) == shape:
                    _assign(original, new)
                else:       # a right_inverse that changes the shape: a fresh tensor
                    original = type(original)(new.detach(), original.requires_grad) \
                        if isinstance(original, Parameter) else new.detach().clone()
            _register_tensor(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the "
                                     f"sequence with type {type(part).__name__}.")
                if isinstance(original, Parameter):
                    part = Parameter(part.detach().clone(), original.requires_grad)
                _register_tensor(self, f"original{i}", part)
        if not unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(z).__name__}.")
            if z.dtype != dtype:
                raise ValueError(f"Registering a parametrization may not change the dtype of "
                                 f"the tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized dtype: {dtype}\n"
                                 f"parametrized dtype: {z.dtype}")
            if tuple(z.shape) != shape:
                raise ValueError(f"Registering a parametrization may not change the shape of "
                                 f"the tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized shape: {shape}\n"
                                 f"parametrized shape: {tuple(z.shape)}")

    def right_inverse(self, value):
        """Set the original tensor(s) so that the parametrized tensor is ``value``."""
        with no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       f"implement right_inverse.")
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                _assign(self.original, value)
            else:
                if not isinstance(value, (list, tuple)) or len(value) != self.ntensors:
                    raise ValueError(f"'right_inverse' must return a sequence of tensors of "
                                     f"length {self.ntensors}. Got {type(value).__name__}")
                for i, part in enumerate(value):
                    _assign(getattr(self, f"original{i}"), part)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _parametrized_property(tensor_name):
    def get(self):
        plist = self.parametrizations[tensor_name]
        if _cache.enabled:
            key = (id(self), tensor_name)
            value = _cache.values.get(key)
            if value is None:
                value = _cache.values[key] = plist()
            return value
        return plist()

    def set_(self, value):
        self.parametrizations[tensor_name].right_inverse(value)
    return property(get, set_)


def _refuse_pickle(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through "
                       "state_dict().")


def _plain_deepcopy(self, memo):
    replica = self.__new__(type(self))
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    return replica


def _inject_new_class(module):
    cls = type(module)
    attrs = {"__getstate__": _refuse_pickle, "_fnx_unparametrized_class": cls}
    if not hasattr(cls, "__deepcopy__"):
        attrs["__deepcopy__"] = _plain_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), attrs)


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make ``module.<tensor_name>`` return ``parametrization(original)``; a second call on
    the same tensor chains another parametrization after the first. Returns ``module``.

    >>> import fnx
    >>> from fnx.nn.utils import parametrize
    >>> class Symmetric(fnx.nn.Module):
    ...     def forward(self, x):
    ...         return x.triu() + x.triu(1).mT
    >>> m = parametrize.register_parametrization(fnx.nn.Linear(3, 3), "weight", Symmetric())
    >>> bool((m.weight == m.weight.T).all()), list(m.state_dict())
    (True, ['bias', 'parametrizations.weight.original'])
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(x).__name__}.")
            if x.dtype != y.dtype:
                raise ValueError(f"Registering a parametrization may not change the dtype of "
                                 f"the tensor, unless the `unsafe` flag is enabled.\n"
                                 f"module.{tensor_name}.dtype: {y.dtype}\n"
                                 f"parametrization(module.{tensor_name}).dtype: {x.dtype}")
            if tuple(x.shape) != tuple(y.shape):
                raise ValueError(f"Registering a parametrization may not change the shape of "
                                 f"the tensor, unless the `unsafe` flag is enabled.\n"
                                 f"module.{tensor_name}.shape: {tuple(y.shape)}\n"
                                 f"parametrization(module.{tensor_name}).shape: "
                                 f"{tuple(x.shape)}")
        plist.append(parametrization)
        plist.unsafe |= unsafe
        return module
    if tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        if original is None:
            raise ValueError(f"Module '{module}' parameter or buffer with name "
                             f"'{tensor_name}' is None")
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        module.parametrizations[tensor_name] = plist
        setattr(type(module), tensor_name, _parametrized_property(tensor_name))
        return module
    raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                     f"parametrized element with name '{tensor_name}'")


def is_parametrized(module, tensor_name=None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, if given).

    >>> import fnx
    >>> from fnx.nn.utils import parametrize
    >>> parametrize.is_parametrized(fnx.nn.Linear(2, 2))
    False
    """
    plists = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(plists, ModuleDict) or \
            "_fnx_unparametrized_class" not in type(module).__dict__:
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def type_before_parametrizations(module) -> type:
    """The class ``module`` had before it was parametrized."""
    return type(module).__dict__.get("_fnx_unparametrized_class", type(module)) \
        if is_parametrized(module) else type(module)


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo the parametrizations of ``tensor_name``: it becomes a plain parameter (or
    buffer) again, holding the parametrized value (``leave_parametrized=True``, the original
    tensor object) or the original tensor. Returns ``module``.

    >>> import fnx
    >>> from fnx.nn.utils import parametrize
    >>> m = parametrize.register_parametrization(fnx.nn.Linear(2, 2), "weight",
    ...                                          fnx.nn.Identity())
    >>> m = parametrize.remove_parametrizations(m, "weight")
    >>> type(m).__name__, list(m.state_dict())
    ('Linear', ['bias', 'weight'])
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            if tuple(value.shape) == tuple(original.shape) and value.dtype == original.dtype:
                _assign(original, value)
            else:
                original = Parameter(value.detach(), original.requires_grad) \
                    if isinstance(original, Parameter) else value.detach()
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a "
                             "tensor that is parametrized in terms of a sequence of tensors.")
        with no_grad():
            value = getattr(module, tensor_name)
        if isinstance(plist.original0, Parameter):
            original = Parameter(value.detach().clone(), plist.original0.requires_grad)
        else:
            original = value.detach().clone()
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register_tensor(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__dict__["_fnx_unparametrized_class"]
    return module


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Copy the parametrizations (and their original tensors) of ``from_module`` onto
    ``to_module``; every one of them, or those of ``tensor_name``. Returns ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations)
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach().clone()))
        for p in from_module.parametrizations[name]:
            if not is_parametrized(to_module, name) or \
                    p not in list(to_module.parametrizations[name]):
                register_parametrization(to_module, name, p, unsafe=True)
        src, dst = from_module.parametrizations[name], to_module.parametrizations[name]
        names_in = ["original"] if src.is_tensor else [f"original{i}"
                                                       for i in range(src.ntensors)]
        for orig_name in names_in:
            orig = getattr(src, orig_name)
            copy_ = Parameter(orig.detach().clone(), orig.requires_grad) \
                if isinstance(orig, Parameter) else orig.detach().clone()
            if hasattr(dst, orig_name):
                delattr(dst, orig_name)
            _register_tensor(dst, orig_name, copy_)
        dst.is_tensor, dst.ntensors = src.is_tensor, src.ntensors
    return to_module
