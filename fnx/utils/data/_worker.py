"""What a ``DataLoader`` worker process runs, and what it can ask about itself
(``get_worker_info``), as ``torch.utils.data``'s workers.

A worker seeds fnx's, Python's and NumPy's generators from ``base_seed + worker_id``,
calls ``worker_init_fn(worker_id)``, then answers tasks from its index queue until it is
told to stop: for a map-style dataset a task is one batch's indices (or one index without
automatic batching), for an iterable dataset "the next batch" of its own copy of the
dataset. Each answer goes to the result queue tagged with the task's number; an exception
is sent back, wrapped, for the main process to raise.
"""
from __future__ import annotations

import queue
import random
import sys
import traceback

import numpy as np

from ... import api as fnx

__all__ = ["WorkerInfo", "get_worker_info"]

_info = None        # this process's WorkerInfo (None in the main process)


class WorkerInfo:
    """``id``, ``num_workers``, ``seed`` and ``dataset`` (this worker's copy) of a worker.

    >>> from fnx.utils.data import get_worker_info
    >>> get_worker_info() is None       # in the main process
    True
    """

    def __init__(self, id, num_workers, seed, dataset):
        self.id = id
        self.num_workers = num_workers
        self.seed = seed
        self.dataset = dataset

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed})"


def get_worker_info():
    """This worker's ``WorkerInfo``, or None in the main process."""
    return _info


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its traceback."""

    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0]
        self.msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.msg}"
        if self.exc_type is KeyError:       # KeyError quotes its message: keep it readable
            raise KeyError(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exc


class IterableEnd:
    """A worker's answer once its copy of an iterable dataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class Fetcher:
    """Turns a task into a batch: indices into samples, collated (map-style); or the next
    ``batch_size`` samples of this worker's iterator (iterable)."""

    def __init__(self, dataset, iterable, auto_collation, batch_size, drop_last, collate_fn,
                 default_collate):
        self.dataset, self.iterable = dataset, iterable
        self.auto_collation, self.batch_size = auto_collation, batch_size
        self.drop_last, self.collate_fn = drop_last, collate_fn
        # the dataset's own batch read, where the main process would use it too
        self.fast = getattr(dataset, "_get_batch", None) if default_collate else None
        self.it, self.ended = None, False      # the worker starts the iterator (reset)

    def reset(self):
        """Start (again) on the dataset: an iterable dataset's ``__iter__`` runs here, in
        the worker, where ``get_worker_info`` tells it which worker it is."""
        self.it = iter(self.dataset) if self.iterable else None
        self.ended = False

    def fetch(self, task):
        if not self.iterable:
            if self.auto_collation:
                if self.fast is not None:
                    return self.fast(task)
                return self.collate_fn([self.dataset[i] for i in task])
            return self.collate_fn(self.dataset[task])
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            try:
                return self.collate_fn(next(self.it))
            except StopIteration:
                self.ended = True
                raise
        batch = []
        for sample in self.it:
            batch.append(sample)
            if len(batch) == self.batch_size:
                return self.collate_fn(batch)
        self.ended = True
        if not batch or self.drop_last:
            raise StopIteration
        return self.collate_fn(batch)


def seed_worker(seed, worker_id):
    """fnx's CPU generator and Python's from ``seed``; NumPy's legacy global one from a
    state derived from it (as PyTorch's workers, not the same state). Not the cuda
    generators: they live in JAX, which a forked worker must not enter."""
    fnx.default_generator.manual_seed(seed)
    random.seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, seed % 2 ** 64]).generate_state(4))


def worker_loop(fetcher, index_queue, result_queue, done_event, seed, init_fn, worker_id,
                num_workers):
    """The body of a worker process (see the module docstring). Tasks are
    ``(epoch, index, payload)``; ``("reset", epoch)`` restarts an iterable dataset's
    iterator for a new epoch; ``None`` stops the worker."""
    global _info
    try:
        seed_worker(seed, worker_id)
        _info = WorkerInfo(worker_id, num_workers, seed, fetcher.dataset)
        init_error = None
        if init_fn is not None:
            init_fn(worker_id)
        fetcher.reset()
    except Exception:
        init_error = ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process "
                                                      f"{worker_id}")
    while True:
        try:
            task = index_queue.get(timeout=5.0)
        except queue.Empty:
            if done_event.is_set():
                break
            continue
        if task is None:
            break
        if task[0] == "reset":
            fetcher.reset()
            continue
        epoch, idx, payload = task
        if init_error is not None:
            data = init_error
        else:
            try:
                data = fetcher.fetch(payload)
            except StopIteration:
                data = IterableEnd(worker_id)
            except Exception:
                data = ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process "
                                                        f"{worker_id}")
        result_queue.put((epoch, idx, data))
    result_queue.cancel_join_thread()
