"""Datasets: ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``Subset``,
``ConcatDataset`` and ``random_split``, as ``torch.utils.data``."""
from __future__ import annotations

import bisect
import math
import warnings

from ... import api as fnx

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "random_split"]


class Dataset:
    """A map-style dataset: ``__getitem__(index)`` and usually ``__len__``."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is iterated (``__iter__``) rather than indexed."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


class TensorDataset(Dataset):
    """Samples are the ``i``-th rows of each tensor (all share their first dim).

    >>> import fnx
    >>> from fnx.utils.data import TensorDataset
    >>> ds = TensorDataset(fnx.arange(6).reshape(3, 2), fnx.tensor([0, 1, 0]))
    >>> len(ds), ds[1]
    (3, (tensor([2, 3]), tensor(1)))
    """

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        n = tensors[0].shape[0] if tensors[0].ndim else None
        if any(not t.ndim or t.shape[0] != n for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def _get_batch(self, indices):
        """The collated batch at ``indices`` in one gather per tensor (the DataLoader's
        fast path with the default collate: the same result as stacking the samples)."""
        idx = fnx.tensor(indices, dtype=fnx.int64)
        return [t.index_select(0, idx.to(t.device)) for t in self.tensors]

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = list(indices)

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getattr__(self, name):
        # the DataLoader's batch fast path, when the wrapped dataset has one
        if name == "_get_batch" and hasattr(self.__dict__.get("dataset"), "_get_batch"):
            return lambda indices: self.dataset._get_batch([self.indices[i] for i in indices])
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """Datasets one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[d - 1] if d else 0
        return self.datasets[d][idx - start]


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random subsets of the given lengths (or
    fractions summing to 1).

    >>> import fnx
    >>> from fnx.utils.data import random_split
    >>> a, b = random_split(range(10), [0.8, 0.2], generator=fnx.Generator().manual_seed(0))
    >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
    (8, 2, True)
    """
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, s in enumerate(sizes):
            if s == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              f"empty dataset.", stacklevel=2)
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = fnx.randperm(n, generator=generator).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset:offset + length]))
        offset += length
    return out
