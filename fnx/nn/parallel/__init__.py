"""``fnx.nn.parallel``: ``DistributedDataParallel`` (on ``fnx.distributed``'s process
groups) and ``DataParallel``, as ``torch.nn.parallel``."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
