"""DataLoader with worker processes returns num_workers=0's batches (shuffled, map-style
and iterable, persistent or not), runs worker_init_fn and get_worker_info in the workers,
seeds them base_seed + id, carries a worker's exception back; RandomSampler with
replacement draws lazily (a 10**10-sample sampler starts at once)."""
import os
import time

import numpy as np
import pytest

import fnx
from fnx.utils.data import (DataLoader, Dataset, IterableDataset, RandomSampler, TensorDataset,
                            get_worker_info)


def _dataset(n=23):
    return TensorDataset(fnx.arange(n * 2, dtype=fnx.float32).reshape(n, 2), fnx.arange(n))


def _epoch(loader):
    return [[t.tolist() for t in batch] for batch in loader]


# ----------------------------------------------------------------------------- sampler

def test_random_sampler_with_replacement_is_lazy():
    n = 10 ** 10
    s = RandomSampler(range(7), replacement=True, num_samples=n,
                      generator=fnx.Generator().manual_seed(0))
    assert len(s) == n
    start = time.perf_counter()
    it = iter(s)
    first = [next(it) for _ in range(1000)]
    assert time.perf_counter() - start < 5.0        # 10**10 int64s would be 74.5 GiB
    assert all(isinstance(i, int) and 0 <= i < 7 for i in first)
    assert len(set(first)) == 7                     # draws, not one repeated value


def test_random_sampler_with_replacement_counts_and_reproduces():
    def draws(seed, k):
        return list(RandomSampler(range(5), replacement=True, num_samples=k,
                                  generator=fnx.Generator().manual_seed(seed)))
    for k in (1, 31, 32, 33, 100):                  # around the chunk size
        d = draws(3, k)
        assert len(d) == k and all(0 <= i < 5 for i in d)
    assert draws(3, 100) == draws(3, 100) and draws(3, 100) != draws(4, 100)
    counts = np.bincount(draws(0, 5000), minlength=5)
    assert counts.min() > 850 and counts.max() < 1150   # uniform: 1000 each, +-5 sigma


# ----------------------------------------------------------------------------- workers

@pytest.mark.parametrize("kw", [dict(batch_size=4), dict(batch_size=5, drop_last=True),
                                dict(batch_size=3, shuffle=True), dict(batch_size=None),
                                dict(batch_size=4, shuffle=True, prefetch_factor=1)])
def test_workers_return_the_batches_of_num_workers_0(kw):
    ds = _dataset()
    base = {k: v for k, v in kw.items() if k != "prefetch_factor"}
    fnx.manual_seed(7)
    want = _epoch(DataLoader(ds, **base))
    for workers in (1, 3):
        fnx.manual_seed(7)
        assert _epoch(DataLoader(ds, num_workers=workers, **kw)) == want


def test_two_epochs_with_persistent_workers_and_a_generator():
    ds = _dataset()

    def epochs(**kw):
        loader = DataLoader(ds, batch_size=4, shuffle=True,
                            generator=fnx.Generator().manual_seed(1), **kw)
        return [_epoch(loader) for _ in range(3)]
    want = epochs()
    assert want[0] != want[1]                       # a new order each epoch
    assert epochs(num_workers=2) == want
    # persistent workers keep their seeds: as in PyTorch, only the first epoch draws a base
    # seed from the generator; then each epoch's RandomSampler draws a permutation (and, as
    # PyTorch's, a second one for the num_samples % n = 0 tail)
    g = fnx.Generator().manual_seed(1)
    fnx.empty((), dtype=fnx.int64).random_(generator=g)
    perms = []
    for _ in range(3):
        perms.append(fnx.randperm(23, generator=g).tolist())
        fnx.randperm(23, generator=g)
    got = epochs(num_workers=2, persistent_workers=True)
    assert got[0] == want[0]
    assert [[i for b in e for i in b[1]] for e in got] == perms


def test_persistent_workers_survive_a_broken_epoch():
    loader = DataLoader(_dataset(), batch_size=2, num_workers=2, persistent_workers=True)
    it = iter(loader)
    next(it)
    assert iter(loader) is it                        # the same workers, a new epoch
    assert [b[1].tolist()[0] for b in loader] == list(range(0, 23, 2))


class _Pid(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return np.array([i, os.getpid(), info.id, info.seed, _INIT.get("id", -1)])


_INIT = {}


def _init(worker_id):
    _INIT["id"] = worker_id


def test_worker_processes_info_seeds_and_init_fn():
    g = fnx.Generator().manual_seed(4)
    batches = list(DataLoader(_Pid(), batch_size=2, num_workers=2, worker_init_fn=_init,
                              generator=g))
    rows = np.concatenate([b.numpy() for b in batches])
    assert rows[:, 0].tolist() == list(range(8))
    assert os.getpid() not in rows[:, 1]                 # loaded in other processes
    assert rows[:, 2].tolist() == [0, 0, 1, 1, 0, 0, 1, 1]   # batches to workers in turn
    assert (rows[:, 4] == rows[:, 2]).all()              # worker_init_fn ran in each
    base = int(fnx.empty((), dtype=fnx.int64).random_(
        generator=fnx.Generator().manual_seed(4)).item())
    assert (rows[:, 3] == base + rows[:, 2]).all()       # seed = base_seed + worker id
    assert get_worker_info() is None and "id" not in _INIT   # none of it in this process


class _Shards(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


def test_iterable_dataset_batches_come_from_each_worker_in_turn():
    assert [b.tolist() for b in DataLoader(_Shards(11), batch_size=2)] == \
        [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10]]
    # worker 0 has 0, 2, 4, ...; worker 1 has 1, 3, 5, ...: their batches alternate, as
    # PyTorch's, until one runs out
    got = [b.tolist() for b in DataLoader(_Shards(11), batch_size=2, num_workers=2)]
    assert got == [[0, 2], [1, 3], [4, 6], [5, 7], [8, 10], [9]]
    loader = DataLoader(_Shards(7), batch_size=3, num_workers=2, persistent_workers=True)
    assert [_epoch(loader) for _ in range(2)] == [[[0, 2, 4], [1, 3, 5], [6]]] * 2


class _Broken(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            raise ValueError("bad sample 3")
        return i


def test_worker_exception_is_raised_in_the_main_process():
    loader = DataLoader(_Broken(), batch_size=2, num_workers=2)
    it = iter(loader)
    assert next(it).tolist() == [0, 1]
    with pytest.raises(ValueError, match=r"(?s)Caught ValueError in DataLoader worker "
                                         r"process 1.*bad sample 3"):
        next(it)


def test_spawned_workers():
    ds = _dataset(9)
    want = _epoch(DataLoader(ds, batch_size=4))
    got = _epoch(DataLoader(ds, batch_size=4, num_workers=2, multiprocessing_context="spawn",
                            pin_memory=True))
    assert got == want


def test_option_errors():
    ds = _dataset()
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified in "
                                         "multiprocessing"):
        DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="prefetch_factor option should be non-negative"):
        DataLoader(ds, num_workers=1, prefetch_factor=-1)
    assert DataLoader(ds, num_workers=2).prefetch_factor == 2
