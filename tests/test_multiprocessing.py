"""fnx.multiprocessing: tensors shared by memory across processes (torch.multiprocessing).

Child processes run code given as data (``exec`` with the tensors in its globals, or an
``operator`` function), so nothing of this file has to be importable in a spawned child.
Expected values are computed with NumPy.
"""
from __future__ import annotations

import functools
import gc
import operator
import os
import pickle
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest

import fnx
import fnx.multiprocessing as mp
from fnx import nn
from fnx.testing import to_numpy

_ADD_ONE = "import fnx\nwith fnx.no_grad():\n    for p in m.parameters():\n        p.add_(1.0)\n"


def _segments():
    return set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()


def test_share_memory_keeps_values_and_aliases():
    x = fnx.arange(6.0).reshape(2, 3)       # a view of a temporary: its base moves with it
    assert not x.is_shared()
    assert x.share_memory_() is x and x.is_shared()
    p = nn.Parameter(x)
    assert p.is_shared()
    x.add_(1.0)
    np.testing.assert_array_equal(to_numpy(p), np.arange(1.0, 7.0).reshape(2, 3))
    assert x[1].is_shared()
    x.data = fnx.ones(2, 3)     # new storage: no longer shared
    assert not x.is_shared()


def test_share_memory_of_a_view_moves_its_base():
    base = fnx.arange(4.0)
    view = base[1:]
    view.share_memory_()
    assert base.is_shared()
    view.add_(1.0)
    np.testing.assert_array_equal(to_numpy(base), [0.0, 2.0, 3.0, 4.0])


def test_share_memory_refuses_a_view_whose_base_has_other_views():
    base = fnx.arange(4.0)
    view, other = base[1:], base[:2]
    with pytest.raises(RuntimeError, match="share_memory_: cannot move the storage of a view"):
        view.share_memory_()
    view.add_(1.0)              # all three still alias one storage
    np.testing.assert_array_equal(to_numpy(base), [0.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(to_numpy(other), [0.0, 2.0])
    assert not base.is_shared()


def test_segment_is_unlinked_when_its_last_tensor_dies():
    before = _segments()
    x = fnx.ones(1000).share_memory_()
    assert len(_segments() - before) == 1
    del x
    gc.collect()
    assert _segments() - before == set()


def test_queue_hands_over_the_same_memory():
    q = mp.Queue()
    x = fnx.zeros(3)
    q.put(x)
    y = q.get()
    assert x.is_shared() and y.is_shared()
    y.add_(2.0)
    np.testing.assert_array_equal(to_numpy(x), [2.0, 2.0, 2.0])


def test_parameter_round_trip_keeps_class_and_requires_grad():
    p = nn.Parameter(fnx.ones(2))
    q = pickle.loads(ForkingPickler.dumps(p))
    assert type(q) is nn.Parameter and q.requires_grad and q.is_shared()
    with fnx.no_grad():
        q.mul_(3.0)
    np.testing.assert_array_equal(to_numpy(p), [3.0, 3.0])


def test_non_leaf_requiring_grad_is_refused():
    y = fnx.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        ForkingPickler.dumps(y)


def test_sharing_strategies():
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    with pytest.raises(AssertionError):
        mp.set_sharing_strategy("bogus")
    assert mp.get_sharing_strategy() == "file_descriptor"


def test_forked_child_writes_shared_module():
    m = nn.Linear(3, 2).share_memory()
    want = [to_numpy(p) + 1.0 for p in m.parameters()]
    ctx = mp.get_context("fork")
    p = ctx.Process(target=exec, args=(_ADD_ONE, {"m": m}))
    p.start()
    p.join()
    assert p.exitcode == 0
    for got, w in zip(m.parameters(), want):
        np.testing.assert_allclose(to_numpy(got), w)


@pytest.mark.multiprocess
def test_spawned_child_writes_shared_module():
    # hogwild: the model is pickled to a spawned child, which updates the parent's weights
    m = nn.Linear(3, 2)
    m.share_memory()
    want = [to_numpy(p) + 1.0 for p in m.parameters()]
    ctx = mp.get_context("spawn")
    p = ctx.Process(target=exec, args=(_ADD_ONE, {"m": m}))
    p.start()
    p.join()
    assert p.exitcode == 0
    for got, w in zip(m.parameters(), want):
        np.testing.assert_allclose(to_numpy(got), w)


@pytest.mark.multiprocess
def test_spawn_runs_fn_with_the_index_and_reports_errors():
    t = fnx.zeros(2)
    assert mp.spawn(functools.partial(operator.setitem, t), args=(5.0,), nprocs=2) is None
    np.testing.assert_array_equal(to_numpy(t), [5.0, 5.0])      # t[i] = 5.0 in process i
    with pytest.raises(mp.ProcessRaisedException, match="ZeroDivisionError") as info:
        mp.spawn(functools.partial(operator.truediv, 1.0), nprocs=1)
    assert info.value.error_index == 0


def test_zero_dim_tensors_keep_their_shape_when_shared():
    t = fnx.tensor(3.0)
    assert t.share_memory_() is t and t.is_shared() and t.shape == () and t.item() == 3.0
    back = pickle.loads(ForkingPickler.dumps(fnx.tensor(2.5)))
    assert back.shape == () and back.item() == 2.5


def test_a_view_that_cannot_move_is_sent_as_a_shared_copy():
    # pickled in a Queue's feeder thread, an error would drop the item and the receiver
    # would wait for ever (a DataLoader worker's batch of views, once this module is
    # imported): the view's values go in a shared copy instead
    base = fnx.arange(6.0).reshape(2, 3)
    view, other = base[1], base[0]
    back = pickle.loads(ForkingPickler.dumps(view))
    np.testing.assert_array_equal(to_numpy(back), [3.0, 4.0, 5.0])
    assert not view.is_shared() and other.tolist() == [0.0, 1.0, 2.0]
    loader = fnx.utils.data.DataLoader(fnx.utils.data.TensorDataset(base), batch_size=None,
                                       num_workers=2, timeout=60)
    assert [row[0].tolist() for row in loader] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
