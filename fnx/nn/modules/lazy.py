"""Lazy modules: parameters whose shapes come from the first input, as
``torch.nn.modules.lazy``.

A lazy module holds ``UninitializedParameter``s (and ``UninitializedBuffer``s) until it is
first called: a forward pre-hook then calls ``initialize_parameters(*args, **kwargs)``,
which materializes them in place (the same objects: an optimizer built before the first
call trains them) and resets them as the eager module would; the module then becomes its
``cls_to_become`` (``LazyLinear`` becomes ``Linear``). ``load_state_dict`` materializes
them from the loaded shapes instead.

>>> import fnx
>>> m = fnx.nn.LazyConv2d(4, 3)
>>> m
LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1))
>>> m(fnx.ones(1, 2, 5, 5)).shape, type(m).__name__, tuple(m.weight.shape)
(fnx.Size([1, 4, 3, 3]), 'Conv2d', (4, 2, 3, 3))
"""
from __future__ import annotations

from ...core.grad_mode import no_grad
from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixed into a module (before the module class) whose parameters wait for their
    first input. Subclasses define ``initialize_parameters(*args, **kwargs)`` and may set
    ``cls_to_become``."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer of this module (not its children) waits for
        its shape."""
        return any(is_lazy(t) for t in (*self._parameters.values(), *self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")

    @staticmethod
    def _infer_parameters(module, args, kwargs=None):
        with no_grad():
            module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {type(module).__name__} has not been fully "
                               f"initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook, module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        # a loaded value gives an uninitialized parameter or buffer its shape
        for store in (self._parameters, self._buffers):
            for name, t in store.items():
                key = prefix + name
                if t is not None and is_lazy(t) and key in state_dict and \
                        not is_lazy(state_dict[key]):
                    t.materialize(tuple(state_dict[key].shape))

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")
