"""Samplers: which indices a ``DataLoader`` reads, and in which batches."""
from __future__ import annotations

from ... import api as fnx

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


class Sampler:
    """Base class: an iterable of dataset indices."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


_CHUNK = 32     # indices drawn per call with replacement (as PyTorch's sampler)


def _fresh_generator(generator):
    """``generator``, or a new one seeded from the global generator (so
    ``fnx.manual_seed`` makes shuffling reproducible, as in PyTorch)."""
    if generator is not None:
        return generator
    seed = int(fnx.empty((), dtype=fnx.int64).random_().item())
    return fnx.Generator().manual_seed(seed)


class RandomSampler(Sampler):
    """A random permutation of the indices each epoch (or ``num_samples`` draws with
    ``replacement``), from ``generator``.

    >>> import fnx
    >>> from fnx.utils.data import RandomSampler
    >>> s = RandomSampler(range(5), generator=fnx.Generator().manual_seed(0))
    >>> sorted(s)
    [0, 1, 2, 3, 4]
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        g = _fresh_generator(self.generator)
        if self.replacement:
            # drawn lazily, a chunk at a time: ``num_samples`` may be far larger than
            # memory (makemore asks for 1e10)
            left = self.num_samples
            while left > 0:
                k = min(left, _CHUNK)
                yield from fnx.randint(0, n, (k,), dtype=fnx.int64, generator=g).tolist()
                left -= k
            return
        for _ in range(self.num_samples // n):
            yield from fnx.randperm(n, generator=g).tolist()
        yield from fnx.randperm(n, generator=g).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = list(indices)
        self.generator = generator

    def __iter__(self):
        g = _fresh_generator(self.generator)
        for i in fnx.randperm(len(self.indices), generator=g).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices into ``weights`` drawn with probabilities proportional to
    them (``fnx.multinomial``), with or without replacement: a balanced stream from an
    imbalanced dataset. Without ``generator`` each pass draws from the global generator.

    >>> import fnx
    >>> from fnx.utils.data import WeightedRandomSampler
    >>> list(WeightedRandomSampler([0.0, 1.0, 0.0], 4))
    [1, 1, 1, 1]
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or \
                num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = fnx.as_tensor(weights, dtype=fnx.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        yield from fnx.multinomial(self.weights, self.num_samples, self.replacement,
                                   generator=self.generator).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler`` (the last one shorter unless
    ``drop_last``).

    >>> from fnx.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), 2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
