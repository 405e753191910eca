"""``tensor()`` reads any sequence as a nested level (deque, range, ...), as PyTorch does
(e.g. the REINFORCE example builds its returns in a ``collections.deque``), and rejects
data without a dtype with PyTorch's error types."""
from collections import deque

import numpy as np
import pytest

import fnx


def test_deque_and_range_are_sequences():
    t = fnx.tensor(deque([1.5, 2.0, 3.0]))
    assert t.dtype is fnx.float32
    np.testing.assert_array_equal(t.numpy(), np.array([1.5, 2.0, 3.0], np.float32))
    t = fnx.tensor(range(4))
    assert t.dtype is fnx.int64 and t.tolist() == [0, 1, 2, 3]
    t = fnx.tensor([range(2), deque([3, 4]), (5, 6)])
    assert t.tolist() == [[0, 1], [3, 4], [5, 6]]
    t = fnx.tensor(deque([deque([1, 2]), [3.5, 4]]))
    assert t.dtype is fnx.float32 and t.tolist() == [[1.0, 2.0], [3.5, 4.0]]


def test_data_without_a_dtype():
    with pytest.raises(TypeError, match="str"):
        fnx.tensor("ab")
    with pytest.raises(TypeError, match="str"):
        fnx.tensor([1, "a"])
    for bad, name in (({1, 2}, "set"), ({1: 2}, "dict"), ([None], "NoneType")):
        with pytest.raises(RuntimeError, match=f"Could not infer dtype of {name}"):
            fnx.tensor(bad)
