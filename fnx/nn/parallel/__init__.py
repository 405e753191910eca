"""``fnx.nn.parallel``: ``DistributedDataParallel``, as ``torch.nn.parallel``."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
