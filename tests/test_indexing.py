"""Indexing: x[i], x[i] = v, index/index_put, gather/scatter, masks, nonzero."""
import numpy as np
import pytest

import fnx
from fnx.core.meta_array import meta_tensor
from fnx.dispatch import DispatchKey, IncludeDispatchKeyGuard, below
from fnx.testing import assert_equal


def arange(*shape, dtype=np.int64):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def T(a, dtype=None):
    return fnx.tensor(np.asarray(a), dtype=dtype)



A = arange(3, 4, 5)

BASIC = [0, -1, 2, (1, 2), (-1, -2, -3), slice(None), slice(1, None), slice(None, -1),
         slice(None, None, 2), slice(-100, 100), slice(3, 1), (slice(None), 1),
         (Ellipsis, 0), (0, Ellipsis), (None,), (None, 0, None), (Ellipsis, None),
         (1, Ellipsis, None, slice(1, 4, 2)), (), Ellipsis, (slice(1, 2), None, -1, 3)]


@pytest.mark.parametrize("index", BASIC, ids=repr)
def test_basic_indexing_is_a_view_matching_numpy(index):
    x = T(A)
    r = x[index]
    assert_equal(r, A[index], fnx.int64)
    assert r is not x and r._base is x           # x[...] and x[()] are aliases too
    assert np.shares_memory(r._data, x._data) or r.numel() == 0


ADVANCED = [[0, 2], ([0, 2], [1, 3]), (slice(None), [0, 0, 3]), ([[0], [2]], [1, 2]),
            (Ellipsis, [4, 0]), ([0, 1], slice(None), [1, 2]), (slice(1, None), [0, 1], [2, 3]),
            ([-1, 0],), (np.array([2, 1]),), ([True, False, True],),
            (slice(None), [True, False, False, True]), ([0, 2], None, [1, 1]),
            ([[True, False, True, False]] * 3,), (slice(None), [[True] * 5] * 4)]


@pytest.mark.parametrize("index", ADVANCED, ids=repr)
def test_advanced_indexing_matches_numpy(index):
    x = T(A)
    np_index = tuple(np.array(i) if isinstance(i, list) else i for i in
                     (index if isinstance(index, tuple) else (index,)))
    if len(np_index) == 1 and isinstance(index, list):
        np_index = np.array(index)
    r = x[index]
    assert_equal(r, A[np_index], fnx.int64)
    assert r._base is None and not np.shares_memory(r._data, x._data)


def test_index_with_tensors_and_masks():
    x = T(A)
    i = fnx.tensor([2, 0])
    assert_equal(x[i], A[[2, 0]])
    assert_equal(x[:, fnx.tensor([1, 1], dtype=fnx.int32)], A[:, [1, 1]])
    mask = T(A > 30)
    assert_equal(x[mask], A[A > 30])
    m2 = T(A[0] % 2 == 0)
    assert_equal(x[1, m2], A[1][A[0] % 2 == 0])
    assert_equal(x[m2.unsqueeze(0).expand(3, 4, 5)], A[np.broadcast_to(A[0] % 2 == 0, A.shape)])
    # a 0-dim integer tensor acts like an int: a view through select
    v = x[fnx.tensor(1)]
    assert_equal(v, A[1])
    assert v._base is x
    assert_equal(x[True], A[None])
    assert_equal(x[False], A[None][[]])
    assert_equal(x[fnx.tensor(True)], A[None])
    assert_equal(x[0, True], A[0][None])
    assert_equal(x[[]], A[[]])


def test_ints_apply_before_advanced_indices_like_pytorch():
    # NumPy puts the broadcast dims first here ([2, 4]); PyTorch selects dim 0 first.
    x = T(A)
    r = x[0, :, [0, 1]]
    assert r.shape == (4, 2)
    assert_equal(r, A[0][:, [0, 1]])
    assert x[[0, 1], 0, [0, 1]].shape == (2,)


def test_getitem_errors():
    x = T(A)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x[3]
    with pytest.raises(IndexError, match="index -6 is out of bounds for dimension 2 with size 5"):
        x[:, 0, -6]
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 1 with size 4"):
        x[:, [0, 7]]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 3"):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        T(5)[0]
    with pytest.raises(IndexError, match="only integers, slices"):
        x[1.5]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or "
                                         "bool tensors"):
        x[fnx.tensor([0.0])]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(IndexError, match="an index can only have a single ellipsis"):
        x[..., ...]
    with pytest.raises(IndexError, match=r"The shape of the mask \[2\] at index 0 does not match "
                                         r"the shape of the indexed tensor \[3, 4, 5\] at index "
                                         r"0"):
        x[fnx.tensor([True, False])]
    with pytest.raises(IndexError, match=r"shape mismatch: indexing tensors could not be "
                                         r"broadcast together with shapes \[2\], \[3\]"):
        x[[0, 1], [0, 1, 2]]


def test_iteration_uses_select():
    x = T(arange(3, 2))
    rows = list(x)
    assert len(rows) == 3 and all(r._base is x for r in rows)
    assert_equal(rows[2], [4, 5])


def test_getitem_records_aten_ops():
    """A tracer sitting on the Tracer key sees the ops PyTorch's binding would call."""
    calls = []

    def record(op, ks, *args, **kwargs):
        calls.append(str(op))
        return op.redispatch(ks & below(DispatchKey.Tracer), *args, **kwargs)

    lib = fnx.library.Library("aten", "IMPL")
    lib.fallback(record, "Tracer", with_keyset=True)
    x = T(A)
    idx = fnx.tensor([0, 1])
    try:
        with IncludeDispatchKeyGuard(DispatchKey.Tracer):
            x[1, 2:, None, idx]
            first = list(calls)
            calls.clear()
            x[...]
            second = list(calls)
            calls.clear()
            x[0, idx] = fnx.tensor(7)
            third = list(calls)
    finally:
        lib._destroy()
    assert first == ["aten::select.int", "aten::slice.Tensor", "aten::unsqueeze",
                     "aten::index.Tensor"]
    assert second == ["aten::alias"]
    assert third == ["aten::select.int", "aten::index_put_"]


# --------------------------------------------------------------------------- __setitem__

def test_setitem_basic_writes_through_and_bumps_version():
    a = arange(3, 4).astype(np.float32)
    x = T(a)
    x[0] = 5
    x[1, 1:3] = fnx.tensor([7.0, 8.0])
    x[:, -1] = fnx.tensor([[[1.0, 2.0, 3.0]]])      # leading 1-dims of the value are dropped
    x[2] = fnx.tensor(True)                          # cast to float32
    x[..., 0] = fnx.tensor([1, 2, 3])                 # int64 value cast to float32
    ref = a.copy()
    ref[0] = 5
    ref[1, 1:3] = [7, 8]
    ref[:, -1] = [1, 2, 3]
    ref[2] = 1
    ref[..., 0] = [1, 2, 3]
    assert_equal(x, ref, fnx.float32)
    assert x._version == 5
    i = fnx.tensor([1, 2, 3])
    i[1] = 9.7
    assert i.tolist() == [1, 9, 3] and i.dtype is fnx.int64
    y = x[0]
    y[:] = 0
    assert x[0].tolist() == [0, 0, 0, 0] and x._version == 6


def test_setitem_advanced():
    a = arange(3, 4)
    x = T(a)
    x[[0, 2]] = 0
    x[1, [0, 3]] = fnx.tensor([-1, -2])
    x[T(a > 9)] = 100
    ref = a.copy()
    ref[[0, 2]] = 0
    ref[1, [0, 3]] = [-1, -2]
    ref[a > 9] = 100
    assert_equal(x, ref)
    assert x._version == 3
    f = T(np.zeros(4, np.float32))
    f[fnx.tensor([True, False, True, False])] = fnx.tensor(2)   # one value: masked_fill, cast
    assert f.tolist() == [2.0, 0.0, 2.0, 0.0]
    with pytest.raises(RuntimeError, match="Index put requires the source and destination "
                                           "dtypes match, got Float for the destination and "
                                           "Long for the source"):
        f[[0, 1]] = fnx.tensor([1, 2])


def test_failed_setitem_leaves_tensor_unchanged():
    a = arange(3, 4)
    x = T(a)
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(4\) must match "
                                           r"the existing size \(3\)"):
        x[0] = fnx.tensor([1, 2, 3])
    # the dim is counted in the view left by x[0], as PyTorch does
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        x[0, [1, 4]] = 5
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[3\] cannot "
                                           r"be broadcast to indexing result of shape \[2\]"):
        x[[0, 1], 0] = fnx.tensor([1, 2, 3])
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x[3] = 1
    with pytest.raises(TypeError, match="can't assign a list"):
        x[0] = [1, 2, 3, 4]
    u = fnx.tensor([1, 2], dtype=fnx.uint8)
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without "
                                           "overflow"):
        u[0] = 300
    assert_equal(x, a)
    assert x._version == 0 and u.tolist() == [1, 2] and u._version == 0
    x[False] = 99                                    # selects nothing
    assert_equal(x, a)


# --------------------------------------------------------------------------- index / index_put

def test_index_put_and_accumulate():
    a = arange(4, 3).astype(np.float64)
    x = T(a)
    idx = (fnx.tensor([0, 0, 3]),)
    v = fnx.tensor([1.0, 2.0, 3.0], dtype=fnx.float64).unsqueeze(1)
    r = fnx.index_put(x, idx, v, accumulate=True)
    ref = a.copy()
    np.add.at(ref, [0, 0, 3], np.array([[1.0], [2.0], [3.0]]))
    assert_equal(r, ref, fnx.float64)
    assert_equal(x, a)                                     # functional: x untouched
    assert x.index_put_(idx, v, True) is x and x._version == 1
    assert_equal(x, ref)
    y = T(a)
    y.index_put_((fnx.tensor([1, 2]), fnx.tensor([0, 2])), fnx.tensor(-1.0, dtype=fnx.float64))
    ref = a.copy()
    ref[[1, 2], [0, 2]] = -1
    assert_equal(y, ref)
    aten = fnx.ops.aten
    z = T(a)
    with pytest.raises(IndexError, match="index -5 is out of bounds for dimension 0 with size 4"):
        aten.index_put_.default(z, [fnx.tensor([0, -5])], fnx.tensor(1.0))
    with pytest.raises(IndexError, match=r"too many indices for tensor of dimension 2 \(got 3\)"):
        aten.index_put_.default(z, [None, None, fnx.tensor([0])], fnx.tensor(1.0))
    assert_equal(z, a)
    assert z._version == 0
    assert_equal(aten.index.Tensor(z, [None, fnx.tensor([2, 0])]), a[:, [2, 0]])
    assert_equal(aten.index.Tensor(z, [fnx.tensor([[0], [3]]), fnx.tensor([1, 2])]),
          a[[[0], [3]], [1, 2]])


def test_index_select():
    a = arange(3, 4)
    x = T(a)
    assert_equal(fnx.index_select(x, 1, fnx.tensor([3, 0, 3])), np.take(a, [3, 0, 3], 1))
    assert_equal(x.index_select(0, fnx.tensor([2], dtype=fnx.int32)), a[[2]])
    assert_equal(x.index_select(-1, fnx.tensor(1)), a[:, [1]])
    assert fnx.index_select(T(5), 0, fnx.tensor([0])).shape == ()
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_select(0, fnx.tensor([3]))
    with pytest.raises(IndexError, match="Index is supposed to be a vector"):
        x.index_select(0, fnx.tensor([[0]]))
    with pytest.raises(RuntimeError, match="Expected dtype int32 or int64 for index"):
        x.index_select(0, fnx.tensor([0.0]))


def test_gather_and_take_along_dim():
    a = arange(3, 4)
    idx = np.array([[0, 3], [1, 1], [2, 0]])
    x = T(a)
    assert_equal(fnx.gather(x, 1, T(idx)), np.take_along_axis(a, idx, 1))
    small = np.array([[2, 0]])
    assert_equal(x.gather(0, T(small)), np.take_along_axis(a[:, :2], small, 0))
    assert fnx.gather(T(5), 0, fnx.tensor(0)).tolist() == 5
    assert x.gather(1, T(np.zeros((3, 0), np.int64))).shape == (3, 0)
    with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 1 with size 4"):
        x.gather(1, T([[4]]))
    with pytest.raises(RuntimeError, match="gather\\(\\): Expected dtype int32/int64 for index"):
        x.gather(1, T([[0.0]]))
    # int32 indices are accepted, as in PyTorch
    assert_equal(fnx.gather(x, 1, T(idx, dtype=fnx.int32)), np.take_along_axis(a, idx, 1))
    with pytest.raises(RuntimeError, match="Index tensor must have the same number of dimensions "
                                           "as input tensor"):
        x.gather(1, T([0]))
    with pytest.raises(RuntimeError, match=r"Size does not match at dimension 0 expected index "
                                           r"\[4, 1\] to be smaller than self \[3, 4\] apart "
                                           r"from dimension 1"):
        x.gather(1, T(np.zeros((4, 1), np.int64)))
    assert_equal(fnx.take_along_dim(x, T(idx), 1), np.take_along_axis(a, idx, 1))
    assert_equal(x.take_along_dim(T([[1], [0], [2]]), dim=1),
          np.take_along_axis(a, np.array([[1], [0], [2]]), 1))
    assert_equal(fnx.take_along_dim(x, T([11, 0])), a.reshape(-1)[[11, 0]])
    b = T([[0, 1]])                                   # broadcasts against x's other dims
    assert_equal(fnx.take_along_dim(x, b, 1), np.take_along_axis(a, np.array([[0, 1]] * 3), 1))


def _scatter_ref(a, dim, idx, src, fn):
    out = a.copy()
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[dim] = idx[pos]
        out[tuple(tgt)] = fn(out[tuple(tgt)], src[pos])
    return out


def test_scatter_family():
    a = arange(3, 4)
    idx = np.array([[0, 2, 1], [2, 2, 0]])
    src = arange(2, 4) * 10 + 1
    x = T(a)
    assert_equal(fnx.scatter(x, 0, T(idx), T(src)), _scatter_ref(a, 0, idx, src, lambda o, s: s))
    assert_equal(x.scatter(1, T(idx[:, :2]), 7), _scatter_ref(a, 1, idx[:, :2], np.full((2, 2), 7),
                                                       lambda o, s: s))
    add = _scatter_ref(a, 0, idx, src, lambda o, s: o + s)
    assert_equal(fnx.scatter_add(x, 0, T(idx), T(src)), add)
    assert_equal(x, a)
    y = T(a)
    assert y.scatter_add_(0, T(idx), T(src)) is y and y._version == 1
    assert_equal(y, add)
    assert_equal(T(a).scatter_(0, T(idx), T(src), reduce="add"), add)
    assert_equal(T(a).scatter_(0, T(idx), 2, reduce="multiply"),
          _scatter_ref(a, 0, idx, np.full(idx.shape, 2), lambda o, s: o * s))
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 0 with size 3"):
        y.scatter_(0, T([[3]]), T([[1]]))
    with pytest.raises(RuntimeError, match="scatter\\(\\): Expected self.dtype to be equal to "
                                           "src.dtype"):
        y.scatter_(0, T([[0]]), T([[1.0]]))
    with pytest.raises(RuntimeError, match=r"Expected index \[1, 5\] to be smaller than self "
                                           r"\[3, 4\] apart from dimension 0 and to be smaller "
                                           r"size than src \[1, 5\]"):
        y.scatter_(0, T([[0] * 5]), T([[1] * 5]))
    assert_equal(y, add)
    assert y._version == 1


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    a = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    idx = np.array([0, 0, 2, 0, 2])
    src = np.array([5.0, -1.0, 2.0, 3.0, 8.0], np.float32)
    r = fnx.scatter_reduce(T(a), 0, T(idx), T(src), reduce, include_self=include_self)
    ref = a.copy()
    for t in set(idx.tolist()):
        vals = list(src[idx == t]) + ([a[t]] if include_self else [])
        ref[t] = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max,
                  "amin": np.min}[reduce](vals)
    assert_equal(r, ref, fnx.float32)
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, amax "
                                           "or amin, got max"):
        fnx.scatter_reduce(T(a), 0, T(idx), T(src), "max")


def test_scatter_reduce_mean_floors_integers():
    r = fnx.scatter_reduce(fnx.tensor([0, 0]), 0, fnx.tensor([0, 0]), fnx.tensor([3, 4]),
                           "mean", include_self=False)
    assert r.tolist() == [3, 0] and r.dtype is fnx.int64


def test_masked_select_masked_scatter():
    a = arange(2, 3)
    m = np.array([True, False, True])
    assert_equal(fnx.masked_select(T(a), T(m)), a[np.broadcast_to(m, a.shape)], fnx.int64)
    src = np.array([10, 20, 30, 40, 50])
    ref = a.copy()
    ref[np.broadcast_to(m, a.shape)] = src[:4]
    assert_equal(fnx.masked_scatter(T(a), T(m), T(src)), ref)
    y = T(a)
    assert y.masked_scatter_(T(m), T(src)) is y and y._version == 1
    assert_equal(y, ref)
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones in "
                                           "mask"):
        y.masked_scatter_(T(m), T([1]))
    with pytest.raises(RuntimeError, match="masked_select: expected BoolTensor for mask"):
        fnx.masked_select(T(a), T([1, 0, 1]))
    assert_equal(y, ref)


def test_nonzero_argwhere():
    a = np.array([[0, 1, 0], [2, 0, 3]])
    r = fnx.nonzero(T(a))
    assert_equal(r, np.argwhere(a), fnx.int64)
    t = fnx.nonzero(T(a), as_tuple=True)
    assert isinstance(t, tuple) and len(t) == 2
    for got, ref in zip(t, np.nonzero(a)):
        assert_equal(got, ref, fnx.int64)
    assert_equal(T(a).argwhere(), np.argwhere(a))
    assert fnx.nonzero(T(5)).shape == (1, 0) and fnx.nonzero(T(0)).shape == (0, 0)
    assert [x.tolist() for x in fnx.nonzero(T(5), as_tuple=True)] == [[0]]
    assert fnx.nonzero(T(np.zeros((2, 2)))).shape == (0, 2)
    assert_equal(fnx.nonzero(T([0.0, 0.5, -1.0], dtype=fnx.bfloat16)), [[1], [2]])


def test_meta_indexing():
    m = meta_tensor((3, 4, 5), fnx.float32)
    i = meta_tensor((2, 6), fnx.int64)
    assert m[i].shape == (2, 6, 4, 5)
    assert m[:, i].shape == (3, 2, 6, 5)
    assert m[i, :, i].shape == (2, 6, 4)
    assert fnx.index_select(m, 1, meta_tensor((7,), fnx.int64)).shape == (3, 7, 5)
    assert fnx.gather(m, 2, meta_tensor((3, 4, 2), fnx.int64)).shape == (3, 4, 2)
    with pytest.raises(NotImplementedError, match="output shape depends on the tensor data"):
        fnx.nonzero(m)
    with pytest.raises(NotImplementedError, match="output shape depends on the tensor data"):
        m[meta_tensor((3,), fnx.bool)]


def test_range_is_an_index_sequence():
    # mnist_forward_forward writes x_[range(x.shape[0]), y] = x.max()
    a = np.arange(12.0).reshape(3, 4)
    x = fnx.tensor(a)
    np.testing.assert_array_equal(x[range(3), [0, 1, 2]].numpy(), a[range(3), [0, 1, 2]])
    np.testing.assert_array_equal(x[range(1, 3)].numpy(), a[1:3])
    np.testing.assert_array_equal(x[:, range(1, 3)].numpy(), a[:, 1:3])
    assert x[range(0)].shape == (0, 4)
    x[range(3), fnx.tensor([1, 2, 3])] = 100.0
    b = a.copy()
    b[[0, 1, 2], [1, 2, 3]] = 100.0
    np.testing.assert_array_equal(x.numpy(), b)
