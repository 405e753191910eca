"""``fnx.backends.cudnn``: the flags of ``torch.backends.cudnn``, accepted so PyTorch
programs run unchanged.

fnx does not call cuDNN itself: XLA picks and autotunes the GPU convolution kernels. So

- ``allow_tf32`` is the float32 precision of convolutions in fnx's programs
  (``fnx.lower.precision``): ``True`` allows TF32. It is ``False`` by default (full float32,
  unlike PyTorch's ``True``): it reports what fnx does;
- ``benchmark`` (XLA always autotunes), ``deterministic``, ``enabled`` and
  ``benchmark_limit`` are accepted and kept, with no effect.

>>> import fnx
>>> fnx.backends.cudnn.benchmark = True
>>> fnx.backends.cudnn.benchmark, fnx.backends.cudnn.allow_tf32
(True, False)
>>> fnx.backends.cudnn.benchmark = False
"""
from __future__ import annotations

import sys
import types

from ..lower import precision
from .cuda import devices

# (``allow_tf32`` is a property of the module's class, below)
__all__ = ["is_available", "version", "enabled", "benchmark", "deterministic", "benchmark_limit"]

enabled = True
benchmark = False
deterministic = False
benchmark_limit = 10


def is_available() -> bool:
    """Whether a cuda device is available (XLA's GPU convolutions use cuDNN)."""
    return devices.is_available()


def version():
    """None: fnx does not link cuDNN (XLA does)."""
    return None


class _CudnnModule(types.ModuleType):
    """This module, with ``allow_tf32`` a property (as PyTorch's module class)."""

    @property
    def allow_tf32(self) -> bool:
        return precision.get_precision("conv") != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        precision.set_precision("conv", "high" if value else "highest")


sys.modules[__name__].__class__ = _CudnnModule
