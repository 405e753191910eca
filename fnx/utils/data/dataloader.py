"""``DataLoader``: batches of samples from a dataset, as ``torch.utils.data.DataLoader``.

With ``num_workers=0`` loading runs in the calling process; with ``num_workers > 0`` in
that many worker processes (``multiprocessing``, the platform's default start method unless
``multiprocessing_context`` says otherwise; see ``_worker``), each batch by one worker in
turn, ``prefetch_factor`` batches per worker requested ahead, and handed out in the
sampler's order, so the batches are those of ``num_workers=0``. ``persistent_workers``
keeps the workers between epochs; ``pin_memory`` is accepted (fnx has no pinned memory).
Shuffling draws from ``generator``, else from a generator seeded by fnx's global one, so
``fnx.manual_seed`` makes epochs reproducible. Each epoch first draws the workers' base
seed from the same source (as PyTorch does, whatever ``num_workers``).
"""
from __future__ import annotations

import collections.abc
import itertools
import multiprocessing
import numbers
import queue
import time
import warnings

import numpy as np

from ... import api as fnx
from ...core.tensor import Tensor
from ._worker import ExceptionWrapper, Fetcher, IterableEnd, worker_loop
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
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self._iterator = None
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
        if self.num_workers == 0:
            return self._single_process()
        if not self.persistent_workers:
            return _MultiProcessIter(self)
        if self._iterator is None:
            self._iterator = _MultiProcessIter(self)
        else:
            self._iterator.next_epoch()
        return self._iterator

    def _single_process(self):
        _base_seed(self.generator)      # the workers' seed: drawn whatever num_workers
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


def _base_seed(generator) -> int:
    """The epoch's base seed for the workers (worker ``i`` is seeded ``base + i``)."""
    return int(fnx.empty((), dtype=fnx.int64).random_(generator=generator).item())


class _MultiProcessIter:
    """An epoch of a ``DataLoader`` with worker processes.

    Tasks (one batch each) go to the workers in turn, ``prefetch_factor`` per worker
    ahead; answers come back on one queue in any order and are handed out in task order.
    An iterable dataset's worker that runs out answers ``IterableEnd`` and gets no more
    tasks; the epoch ends when every task is answered and nothing is left to ask for.
    """

    def __init__(self, loader):
        self.loader = loader
        ctx = loader.multiprocessing_context
        if ctx is None or isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        n = self.n = loader.num_workers
        self.prefetch = loader.prefetch_factor
        self.iterable = loader._iterable
        self.auto_collation = loader.batch_sampler is not None or \
            (self.iterable and loader.batch_size is not None)
        self.persistent = loader.persistent_workers
        self.epoch = 0
        seed = _base_seed(loader.generator)
        fetcher = Fetcher(loader.dataset, self.iterable, self.auto_collation,
                          loader.batch_size, loader.drop_last, loader.collate_fn,
                          loader._default_collate)
        self.result_queue = ctx.Queue()
        self.done = ctx.Event()
        self.index_queues, self.workers = [], []
        for i in range(n):
            q = ctx.Queue()
            q.cancel_join_thread()      # never block exit on tasks a worker did not take
            w = ctx.Process(target=worker_loop, daemon=True,
                            args=(fetcher, q, self.result_queue, self.done, seed + i,
                                  loader.worker_init_fn, i, n))
            with warnings.catch_warnings():
                # JAX warns on every fork once it has threads. A worker runs the dataset on
                # fnx's NumPy CPU backend, which never enters JAX; a dataset that makes
                # cuda tensors or runs compiled code should pass
                # multiprocessing_context="spawn" (or "forkserver")
                warnings.filterwarnings("ignore", message="os.fork\\(\\) was called",
                                        category=RuntimeWarning)
                w.start()
            self.index_queues.append(q)
            self.workers.append(w)
        self.alive = True
        self._start_epoch()

    def __iter__(self):
        return self

    def __len__(self):
        return len(self.loader)

    def _start_epoch(self):
        loader = self.loader
        self.sampler_iter = None if self.iterable else iter(
            loader.batch_sampler if loader.batch_sampler is not None else loader.sampler)
        self.send_idx = self.rcvd_idx = 0
        self.tasks = {}             # task -> [worker] or [worker, answer]
        self.active = [True] * self.n
        self.cycle = itertools.cycle(range(self.n))
        for _ in range(self.prefetch * self.n):
            self._put_task()

    def next_epoch(self):
        """A new epoch on the same workers (``persistent_workers``); answers still coming
        from the last one are dropped by their epoch number."""
        self.epoch += 1
        if self.iterable:
            for q in self.index_queues:
                q.put(("reset", self.epoch))
        self._start_epoch()

    def _put_task(self):
        if self.iterable:
            payload = None
        else:
            try:
                payload = next(self.sampler_iter)
            except StopIteration:
                return
        for _ in range(self.n):
            w = next(self.cycle)
            if self.active[w]:
                break
        else:
            return
        self.index_queues[w].put((self.epoch, self.send_idx, payload))
        self.tasks[self.send_idx] = [w]
        self.send_idx += 1

    def __next__(self):
        while True:
            # tasks of workers that ran out (iterable datasets) have nothing to hand out
            while self.rcvd_idx < self.send_idx:
                task = self.tasks[self.rcvd_idx]
                if len(task) == 2 or self.active[task[0]]:
                    break
                del self.tasks[self.rcvd_idx]
                self.rcvd_idx += 1
            else:
                if not self.persistent:
                    self._shutdown()
                raise StopIteration
            task = self.tasks[self.rcvd_idx]
            if len(task) == 2:
                del self.tasks[self.rcvd_idx]
                self.rcvd_idx += 1
                self._put_task()
                return self._handout(task[1])
            epoch, idx, data = self._get()
            if epoch != self.epoch or idx not in self.tasks:
                continue                    # the last epoch's, or an ended worker's
            if isinstance(data, IterableEnd):
                self.active[data.worker_id] = False     # its tasks are skipped in order
                continue
            self.tasks[idx].append(data)

    def _handout(self, data):
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _get(self):
        """The next answer from any worker, checking every 5 s that the workers live and
        that ``timeout`` (if set) has not passed."""
        timeout = self.loader.timeout
        start = time.monotonic()
        while True:
            wait = 5.0 if timeout <= 0 else min(5.0, max(timeout - (time.monotonic() - start),
                                                         0.0))
            try:
                return self.result_queue.get(timeout=wait)
            except queue.Empty:
                if timeout > 0 and time.monotonic() - start >= timeout:
                    raise RuntimeError(f"DataLoader timed out after {timeout} "
                                       f"seconds") from None
                dead = [str(w.pid) for w in self.workers if not w.is_alive()]
                if dead:
                    self._shutdown()
                    raise RuntimeError(f"DataLoader worker (pid(s) {', '.join(dead)}) "
                                       f"exited unexpectedly") from None

    def _shutdown(self):
        if not getattr(self, "alive", False):
            return
        self.alive = False
        self.done.set()
        for q in self.index_queues:
            q.put(None)
        for w in self.workers:
            w.join(timeout=5.0)
            if w.is_alive():
                w.terminate()
        for q in self.index_queues + [self.result_queue]:
            q.cancel_join_thread()
            q.close()

    def __del__(self):
        try:
            self._shutdown()
        except Exception:       # at interpreter exit the queues may already be gone
            pass
