"""``skip_init``: build a module without running its parameter initialization, as
``torch.nn.utils.skip_init`` (built on the ``meta`` device, then given uninitialized memory
with ``Module.to_empty``).

>>> import fnx
>>> m = fnx.nn.utils.skip_init(fnx.nn.Linear, 3, 2)
>>> m.weight.shape, m.weight.device
(fnx.Size([2, 3]), device(type='cpu'))
"""
from __future__ import annotations

import inspect

from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """A ``module_cls(*args, **kwargs)`` whose parameters and buffers hold uninitialized
    memory on ``device`` (cpu when not given); the class must take ``device=``."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=device)
