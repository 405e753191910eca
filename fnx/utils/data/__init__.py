"""``fnx.utils.data``: datasets, samplers and the ``DataLoader``, as ``torch.utils.data``."""
from .dataloader import DataLoader, default_collate, default_convert  # noqa: F401
from .dataset import (ConcatDataset, Dataset, IterableDataset, Subset,  # noqa: F401
                      TensorDataset, random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,  # noqa: F401
                      SubsetRandomSampler)

__all__ = ["DataLoader", "default_collate", "default_convert", "Dataset", "IterableDataset",
           "TensorDataset", "Subset", "ConcatDataset", "random_split", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler"]
