"""``OptimizedModule``: what ``fnx.compile(module)`` returns, as PyTorch's.

A compiled module is a module: a thin face over the original whose calls run the
original's compiled ``_call_impl`` (its hooks and ``forward``), one ``CompiledFunction``
guarded on the original's training flags. Everything else is the original's: it shares
its parameter, buffer and submodule dicts (the same tensor objects, so an optimizer built
on either sees one set), reads and writes other attributes on it, and hands the methods a
subclass may override (``train``, ``to``, ``state_dict``, ...) to it.
"""
from __future__ import annotations

import copy
import functools

from ...lower.compiled_function import CompiledFunction
from ...lower.frontend import register_compile_wrapper
from .module import Module, _addindent, _CallImpl

__all__ = ["OptimizedModule"]

# The wrapper's own attributes; every other attribute is the original module's.
_OWN = frozenset({"_orig_mod", "_make", "forward", "_compiled_call_impl",
                  "_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                  "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs"})
# Dicts shared with the original: iteration (parameters(), named_modules(), ...) and a
# parent's state_dict see the original's entries under the original's names.
_SHARED = ("_parameters", "_buffers", "_non_persistent_buffers_set", "_modules",
           "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
           "_load_state_dict_post_hooks")
# Methods that act on the original (so a subclass's override runs); one that returns the
# original returns the wrapper instead.
_ON_ORIGINAL = ("train", "eval", "requires_grad_", "zero_grad", "apply", "_apply", "to", "cuda",
                "cpu", "type", "float", "double", "half", "bfloat16", "state_dict",
                "load_state_dict", "_save_to_state_dict", "_load_from_state_dict",
                "register_buffer", "register_parameter", "add_module", "register_module",
                "get_submodule", "get_parameter", "get_buffer")


class OptimizedModule(Module):
    """A compiled module (``fnx.compile(module)``): calls run the original's compiled
    forward; parameters, buffers, submodules and attributes are the original's.

    Unlike PyTorch, whose ``state_dict`` keys gain an ``_orig_mod.`` prefix, the keys are
    the original's: a state dict saved from the compiled module loads into the plain one
    and the other way round. ``_orig_mod`` is the original; ``forward`` its
    ``CompiledFunction`` (``forward.entries()``, ``explain``).

    >>> import fnx
    >>> from fnx import nn
    >>> model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    >>> compiled = fnx.compile(model)
    >>> compiled._orig_mod is model, compiled[0] is model[0]
    (True, True)
    >>> list(compiled.state_dict()) == list(model.state_dict())
    True
    >>> compiled.eval().training, model.training
    (False, False)
    >>> compiled(fnx.ones(4, 3)).shape
    fnx.Size([4, 2])
    """

    def __init__(self, module: Module, make) -> None:
        Module.__init__(self)
        d = self.__dict__
        del d["training"]                   # the original's flag (a property below)
        for name in _SHARED:
            d[name] = module.__dict__[name]
        d["_orig_mod"] = module
        d["_make"] = make
        d["forward"] = make(_CallImpl(module))

    @property
    def training(self) -> bool:
        return self._orig_mod.training

    @training.setter
    def training(self, mode: bool) -> None:
        self._orig_mod.training = mode

    def explain(self, *args, **kwargs):
        """What compiling the original's forward for these arguments does
        (``CompiledFunction.explain``)."""
        return self.forward.explain(*args, **kwargs)

    def __getattr__(self, name):
        orig = self.__dict__.get("_orig_mod")
        if orig is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        return getattr(orig, name)

    def __setattr__(self, name, value):
        if name in _OWN:
            self.__dict__[name] = value
        elif isinstance(getattr(type(self), name, None), property):
            object.__setattr__(self, name, value)
        else:
            setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        if name in _OWN:
            del self.__dict__[name]
        else:
            delattr(self._orig_mod, name)

    # Containers (Sequential, ModuleList, ...) stay containers; PyTorch forwards only len().
    def __len__(self):
        return len(self._orig_mod)

    def __bool__(self):
        return bool(self._orig_mod)

    def __getitem__(self, index):
        return self._orig_mod[index]

    def __iter__(self):
        return iter(self._orig_mod)

    def __dir__(self):
        return sorted(set(dir(self._orig_mod)) | set(Module.__dir__(self)))

    def __repr__(self):
        return f"{type(self).__name__}(\n  (_orig_mod): {_addindent(repr(self._orig_mod), 2)}\n)"

    def __getstate__(self):
        """What ``fnx.save(compiled)`` stores: the original and the compile settings (as
        PyTorch pickles an ``OptimizedModule``); loading compiles afresh."""
        settings = getattr(self._make, "keywords", None)
        if settings is None:
            raise TypeError("fnx.save: this compiled module was not made by fnx.compile (its "
                            "compile settings are unknown)")
        return {"_orig_mod": self._orig_mod, "_compile_settings": dict(settings)}

    def __setstate__(self, state):
        settings = state["_compile_settings"]
        OptimizedModule.__init__(self, state["_orig_mod"],
                                 functools.partial(CompiledFunction, **settings))

    def __deepcopy__(self, memo):
        """A copy of the original, compiled afresh with the same settings."""
        new = OptimizedModule(copy.deepcopy(self._orig_mod, memo), self._make)
        memo[id(self)] = new
        return new


def _on_original(name):
    def method(self, *args, **kwargs):
        out = getattr(self._orig_mod, name)(*args, **kwargs)
        return self if out is self._orig_mod else out
    method.__name__ = method.__qualname__ = name
    method.__doc__ = getattr(Module, name).__doc__
    return method


for _name in _ON_ORIGINAL:
    setattr(OptimizedModule, _name, _on_original(_name))

register_compile_wrapper(Module, OptimizedModule)
