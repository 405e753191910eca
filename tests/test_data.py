"""fnx.utils.data: datasets, samplers, DataLoader batching/shuffling/drop_last, collate."""
from collections import namedtuple

import numpy as np
import pytest

import fnx
from fnx.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset,
                            RandomSampler, SequentialSampler, Subset, TensorDataset,
                            WeightedRandomSampler, default_collate, random_split)


def _dataset(n=10):
    return TensorDataset(fnx.arange(n * 2, dtype=fnx.float32).reshape(n, 2), fnx.arange(n))


def test_tensor_dataset():
    ds = _dataset(5)
    assert len(ds) == 5
    x, y = ds[3]
    assert x.tolist() == [6.0, 7.0] and y.item() == 3 and y.dtype is fnx.int64
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(fnx.zeros(3, 2), fnx.zeros(4))


def test_sequential_batches_and_drop_last():
    ds = _dataset(10)
    batches = list(DataLoader(ds, batch_size=4))
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    x, y = batches[0]
    assert x.shape == (4, 2) and x.dtype is fnx.float32 and y.dtype is fnx.int64
    assert np.array_equal(x.numpy(), np.arange(8, dtype=np.float32).reshape(4, 2))
    loader = DataLoader(ds, batch_size=4, drop_last=True)
    assert len(loader) == 2 and [b[1].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(DataLoader(ds, batch_size=4)) == 3


def test_shuffle_is_a_permutation_and_reproducible():
    ds = _dataset(20)

    def epoch(loader):
        return [i for _, y in loader for i in y.tolist()]
    g = fnx.Generator().manual_seed(3)
    loader = DataLoader(ds, batch_size=6, shuffle=True, generator=g)
    e1, e2 = epoch(loader), epoch(loader)
    assert sorted(e1) == list(range(20)) and sorted(e2) == list(range(20))
    assert e1 != list(range(20)) and e1 != e2            # a new order each epoch
    g2 = fnx.Generator().manual_seed(3)
    again = DataLoader(ds, batch_size=6, shuffle=True, generator=g2)
    assert epoch(again) == e1 and epoch(again) == e2      # same generator seed, same orders
    # without a generator the order comes from the global seed
    fnx.manual_seed(11)
    a = epoch(DataLoader(ds, batch_size=5, shuffle=True))
    fnx.manual_seed(11)
    assert epoch(DataLoader(ds, batch_size=5, shuffle=True)) == a
    # the per-sample path (custom collate) sees the same order as the batched fast path
    g3 = fnx.Generator().manual_seed(3)
    slow = DataLoader(ds, batch_size=6, shuffle=True, generator=g3,
                      collate_fn=lambda b: default_collate(b))
    assert epoch(slow) == e1


def test_shuffled_batches_hold_matching_samples():
    ds = _dataset(12)
    for x, y in DataLoader(ds, batch_size=5, shuffle=True,
                           generator=fnx.Generator().manual_seed(0)):
        assert np.array_equal(x.numpy()[:, 0], 2 * y.numpy().astype(np.float32))


def test_batch_size_none_sampler_and_batch_sampler():
    ds = _dataset(4)
    items = list(DataLoader(ds, batch_size=None))
    assert len(items) == 4 and items[2][1].item() == 2 and items[2][0].shape == (2,)
    bs = BatchSampler(SequentialSampler(range(4)), 3, drop_last=False)
    assert [y.tolist() for _, y in DataLoader(ds, batch_sampler=bs)] == [[0, 1, 2], [3]]
    loader = DataLoader(ds, sampler=[3, 1], batch_size=2)
    assert [y.tolist() for _, y in loader] == [[3, 1]]
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(ds, sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_sampler=bs, batch_size=2)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(SequentialSampler(range(4)), 0, False)


def test_random_sampler_replacement():
    s = RandomSampler(range(5), replacement=True, num_samples=50,
                      generator=fnx.Generator().manual_seed(0))
    draws = list(s)
    assert len(draws) == 50 == len(s) and set(draws) <= set(range(5)) and len(set(draws)) > 1
    s = RandomSampler(range(4), num_samples=10, generator=fnx.Generator().manual_seed(0))
    d = list(s)
    assert len(d) == 10 and sorted(d[:4]) == [0, 1, 2, 3] and sorted(d[4:8]) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(range(4), num_samples=0)


def test_default_collate_structures():
    Point = namedtuple("Point", "x y")
    batch = [{"a": fnx.tensor([1.0]), "b": 1, "c": 0.5, "s": "u", "p": Point(1, 2),
              "n": np.array([1, 2], dtype=np.int32)},
             {"a": fnx.tensor([2.0]), "b": 2, "c": 1.5, "s": "v", "p": Point(3, 4),
              "n": np.array([3, 4], dtype=np.int32)}]
    out = default_collate(batch)
    assert out["a"].tolist() == [[1.0], [2.0]]
    assert out["b"].dtype is fnx.int64 and out["b"].tolist() == [1, 2]
    assert out["c"].dtype is fnx.float64 and out["c"].tolist() == [0.5, 1.5]
    assert out["s"] == ["u", "v"]
    assert isinstance(out["p"], Point) and out["p"].x.tolist() == [1, 3]
    assert out["n"].dtype is fnx.int32 and out["n"].tolist() == [[1, 2], [3, 4]]
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal "
                                           "size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
        default_collate([object(), object()])


def test_custom_dataset_subset_concat_random_split():
    class Squares(Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            return fnx.tensor(float(i * i)), i

    ds = Squares()
    xs = [x.tolist() for x, _ in DataLoader(ds, batch_size=4)]
    assert xs == [[0.0, 1.0, 4.0, 9.0], [16.0, 25.0]]
    sub = Subset(_dataset(10), [9, 0, 4])
    assert [y.tolist() for _, y in DataLoader(sub, batch_size=2)] == [[9, 0], [4]]
    cat = ConcatDataset([ds, ds])
    assert len(cat) == 12 and cat[7][1] == 1 and cat[-1][1] == 5
    a, b = random_split(_dataset(10), [7, 3], generator=fnx.Generator().manual_seed(0))
    ids = sorted([y.item() for _, y in a] + [y.item() for _, y in b])
    assert len(a) == 7 and len(b) == 3 and ids == list(range(10))
    a, b, c = random_split(range(10), [0.5, 0.3, 0.2], generator=fnx.Generator().manual_seed(0))
    assert (len(a), len(b), len(c)) == (5, 3, 2)
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length"):
        random_split(range(10), [3, 3])


def test_iterable_dataset():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))

    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3)] == [[0, 1, 2], [3, 4, 5],
                                                                        [6]]
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3, drop_last=True)] == \
        [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Stream(), shuffle=True)


def test_weighted_random_sampler_draws_by_weight():
    w = [1.0, 3.0, 0.0, 6.0]
    s = WeightedRandomSampler(w, 20000, generator=fnx.Generator().manual_seed(0))
    counts = np.bincount(list(s), minlength=4) / 20000
    # binomial standard error <= 0.0036: 5 of them
    np.testing.assert_allclose(counts, np.array(w) / 10, atol=0.018)
    assert len(s) == 20000 and s.weights.dtype == fnx.float64
    once = list(WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False,
                                      generator=fnx.Generator().manual_seed(1)))
    assert sorted(once) == [0, 1, 2]
    loader = DataLoader(TensorDataset(fnx.arange(4.0)), batch_size=2,
                        sampler=WeightedRandomSampler([0, 0, 1, 0], 4))
    assert [b[0].tolist() for b in loader] == [[2.0, 2.0], [2.0, 2.0]]


@pytest.mark.parametrize("args, match", [
    (([0.5, 0.5], 0), "num_samples should be a positive integer value, but got num_samples=0"),
    (([0.5, 0.5], True), "num_samples=True"),
    (([0.5, 0.5], 2, 1), "replacement should be a boolean value, but got replacement=1"),
    (([[0.5, 0.5]], 2), r"weights should be a 1d sequence but given weights have shape "
                        r"\(1, 2\)")])
def test_weighted_random_sampler_checks_its_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        WeightedRandomSampler(*args)
