"""``DistributedSampler``: each rank reads its own share of a dataset, as PyTorch's."""
from __future__ import annotations

import math

from ... import api as fnx
from ... import distributed as dist
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Rank ``rank`` of ``num_replicas`` reads indices ``rank, rank + num_replicas, ...`` of
    the (optionally shuffled, seeded by ``seed + epoch``) index list, padded by wrapping
    around so every rank gets the same count (or cut, with ``drop_last=True``). Call
    ``set_epoch(e)`` before each epoch so shuffling differs between epochs.

    >>> from fnx.utils.data.distributed import DistributedSampler
    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
    [1, 3, 0]
    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False,
    ...                         drop_last=True))
    [1, 3]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None:
            num_replicas = dist.get_world_size()
        if rank is None:
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = fnx.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = fnx.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch that seeds the shuffle (the same on every rank)."""
        self.epoch = epoch
