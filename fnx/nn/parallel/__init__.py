"""``fnx.nn.parallel``: ``DataParallel`` and ``DistributedDataParallel``, importable as from
``torch.nn.parallel``.

fnx runs one process on one device, so ``DataParallel`` runs the wrapped module as it is
(as PyTorch's does with one device or none), and ``DistributedDataParallel``, which needs a
process group, refuses to be built: fnx has no ``init_process_group``.

>>> import fnx
>>> from fnx.nn.parallel import DataParallel
>>> m = DataParallel(fnx.nn.Linear(2, 1))
>>> m(fnx.ones(3, 2)).shape
fnx.Size([3, 1])
"""
from __future__ import annotations

from ..modules.module import Module

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]

_NO_PROCESS_GROUP = ("Default process group has not been initialized, please make sure to call "
                     "init_process_group.")


class DataParallel(Module):
    """Wraps ``module``; ``forward`` calls it on the inputs as they are (one device: there
    is nothing to scatter). ``device_ids``, ``output_device`` and ``dim`` are kept."""

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


class DistributedDataParallel(Module):
    """Importable for ``from torch.nn.parallel import DistributedDataParallel``; building
    one raises PyTorch's ``ValueError`` for a missing process group (fnx has none)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        raise ValueError(_NO_PROCESS_GROUP)
