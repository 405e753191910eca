"""``fnx.nn.modules.batchnorm``: PyTorch's module path of the batch-norm layers, which fnx
defines in ``normalization`` (one family a file).

>>> import fnx
>>> fnx.nn.modules.batchnorm.BatchNorm2d is fnx.nn.BatchNorm2d
True
"""
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, LazyBatchNorm1d,
                            LazyBatchNorm2d, LazyBatchNorm3d, SyncBatchNorm, _BatchNorm,
                            _LazyNormBase, _NormBase)

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "_BatchNorm",
           "_NormBase", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "_LazyNormBase"]
