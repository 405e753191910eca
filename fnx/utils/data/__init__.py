"""``fnx.utils.data``: datasets, samplers and the ``DataLoader``, as ``torch.utils.data``."""
from . import distributed
from ._worker import WorkerInfo, get_worker_info
from .dataloader import DataLoader, default_collate, default_convert
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["DataLoader", "default_collate", "default_convert", "Dataset", "IterableDataset",
           "TensorDataset", "Subset", "ConcatDataset", "random_split", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler",
           "get_worker_info", "WorkerInfo", "distributed"]
