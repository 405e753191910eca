"""``DataParallel`` and ``data_parallel``: one process drives one device here, so the
wrapped module runs on the inputs as they are (as PyTorch's does with one device or
none). Multi-process data parallelism is ``DistributedDataParallel``."""
from __future__ import annotations

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Wraps ``module``; ``forward`` calls it on the inputs as they are (one device: there
    is nothing to scatter). ``device_ids``, ``output_device`` and ``dim`` are kept.

    >>> import fnx
    >>> from fnx.nn.parallel import DataParallel
    >>> m = DataParallel(fnx.nn.Linear(2, 1))
    >>> m(fnx.ones(3, 2)).shape
    fnx.Size([3, 1])
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """``module(*inputs, **module_kwargs)`` (one device; see ``DataParallel``)."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return module(*inputs, **(module_kwargs or {}))
