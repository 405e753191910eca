"""``DataLoader``: batches of samples from a dataset, as ``torch.utils.data.DataLoader``.

Loading runs in the calling process (``num_workers`` is accepted for compatibility and
ignored); shuffling draws from ``generator``, else from a generator seeded by fnx's global
one, so ``fnx.manual_seed`` makes epochs reproducible.
"""
from __future__ import annotations

import collections.abc
import numbers

import numpy as np

from ... import api as fnx
from ...core.tensor import Tensor
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert"]


def default_convert(data):
    """NumPy arrays and scalars in ``data`` become tensors (other values are kept)."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OUS":
        return fnx.as_tensor(data)
    if isinstance(data, np.generic):
        return fnx.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()}) \
            if not isinstance(data, dict) or type(data) is dict else \
            {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Stack a list of samples into a batch: tensors are stacked along a new dim 0,
    numbers become a tensor, and dicts/tuples/lists are collated field by field.

    >>> import fnx
    >>> from fnx.utils.data import default_collate
    >>> default_collate([(fnx.tensor([1., 2.]), 0), (fnx.tensor([3., 4.]), 1)])
    [tensor([[1., 2.],
            [3., 4.]]), tensor([0, 1])]
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return fnx.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OUS":
            raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, "
                            f"numbers, dicts or lists; found {elem.dtype}")
        return default_collate([fnx.as_tensor(b) for b in batch])
    if isinstance(elem, np.generic):
        return fnx.as_tensor(np.stack(batch))
    if isinstance(elem, bool):
        return fnx.tensor(batch, dtype=fnx.bool)
    if isinstance(elem, float):
        return fnx.tensor(batch, dtype=fnx.float64)
    if isinstance(elem, numbers.Integral):
        return fnx.tensor(batch, dtype=fnx.int64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            return type(elem)([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(elem)}")


class DataLoader:
    """Iterate over ``dataset`` in batches.

    ``batch_size`` samples per batch (``None``: single samples, not collated), ``shuffle``
    a new random order each epoch (from ``generator``), ``drop_last`` drops the last short
    batch, ``sampler``/``batch_sampler`` choose indices yourself, ``collate_fn`` merges a
    list of samples (``default_collate``).

    >>> import fnx
    >>> from fnx.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(fnx.arange(10.).reshape(5, 2), fnx.arange(5))
    >>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
    [[0, 1], [2, 3], [4]]
    >>> g = fnx.Generator().manual_seed(0)
    >>> len(DataLoader(ds, batch_size=2, shuffle=True, drop_last=True, generator=g))
    2
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device=""):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else \
                SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self._default_collate = collate_fn is None
        if collate_fn is None:
            collate_fn = default_collate if batch_size is not None or batch_sampler is not None \
                else default_convert
        self.collate_fn = collate_fn

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)

    def __iter__(self):
        if self._iterable:
            yield from self._iter_iterable()
            return
        if self.batch_sampler is None:
            for idx in self.sampler:
                yield self.collate_fn(self.dataset[idx])
            return
        fast = getattr(self.dataset, "_get_batch", None) if self._default_collate else None
        for indices in self.batch_sampler:
            if fast is not None:
                yield fast(indices)
            else:
                yield self.collate_fn([self.dataset[i] for i in indices])

    def _iter_iterable(self):
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)
