"""``fnx.nn.modules.instancenorm``: PyTorch's module path of the instance-norm layers,
which fnx defines in ``normalization``.

>>> import fnx
>>> fnx.nn.modules.instancenorm.InstanceNorm1d is fnx.nn.InstanceNorm1d
True
"""
from .normalization import (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LazyInstanceNorm1d,
                            LazyInstanceNorm2d, LazyInstanceNorm3d, _InstanceNorm)

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "_InstanceNorm",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
