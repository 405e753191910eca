"""Shape and view ops: NumPy references, aliasing, strides, version counters, errors."""
import numpy as np
import pytest

import fnx
from fnx.core.meta_array import meta_tensor
from fnx.testing import assert_equal


def arange(*shape, dtype=np.int64):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def T(a):
    return fnx.tensor(np.asarray(a))



def shares(a, b):
    return np.shares_memory(a._data, b._data)


# --------------------------------------------------------------------------- view / reshape

def test_view_matches_numpy_reshape_and_aliases():
    a = arange(2, 3, 4)
    x = T(a)
    v = x.view(4, -1)
    assert_equal(v, a.reshape(4, -1), fnx.int64)
    assert v._base is x and v.stride() == (6, 1)
    v[0, 0] = 100                       # write through the view reaches the base
    assert x[0, 0, 0].item() == 100
    v.add_(1)
    assert x[1, 2, 3].item() == 24
    assert x._version == v._version == 2
    assert_equal(x.view(24), a.reshape(24) + np.eye(1, 24, dtype=np.int64)[0] * 100 + 1)
    assert_equal(x.view((2, 12)), x.numpy().reshape(2, 12))
    assert_equal(x.view(fnx.Size([6, 4])), x.numpy().reshape(6, 4))


def test_view_0dim_and_empty():
    s = T(5.0)
    assert s.view(1).shape == (1,) and s.view([]).shape == () and s.view(1, 1).shape == (1, 1)
    e = T(np.zeros((0, 3), np.float32))
    assert e.view(3, 0).shape == (3, 0) and e.view(-1, 3).shape == (0, 3)


def test_view_of_non_contiguous_uses_pytorch_strides():
    x = T(arange(2, 3, 4)).transpose(0, 1)        # shape (3, 2, 4), strides (4, 12, 1)
    assert x.stride() == (4, 12, 1) and not x.is_contiguous()
    v = x.view(3, 2, 2, 2)                         # splitting a dim is always possible
    assert v.stride() == (4, 12, 2, 1)
    assert_equal(v, x.numpy().reshape(3, 2, 2, 2))
    with pytest.raises(RuntimeError, match=r"view size is not compatible with input tensor's "
                                           r"size and stride .* Use \.reshape\(\.\.\.\) "
                                           r"instead\."):
        x.view(-1)
    with pytest.raises(RuntimeError, match=r"shape '\[5, -1\]' is invalid for input of size 24"):
        T(arange(2, 3, 4)).view(5, -1)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        T(arange(4)).view(-1, -1)


def test_reshape_views_when_possible_else_copies():
    a = arange(3, 4)
    x = T(a)
    r = fnx.reshape(x, (2, 6))
    assert r._base is x and shares(r, x)
    assert_equal(r, a.reshape(2, 6))
    t = x.t()
    c = t.reshape(12)                      # the transpose cannot be flattened in place
    assert_equal(c, a.T.reshape(12))
    assert c._base is None and not shares(c, x) and c.is_contiguous()
    c.add_(1)
    assert x._version == 0 and c._version == 1
    assert_equal(x, a)
    assert_equal(x.reshape(-1, 2), a.reshape(-1, 2))
    assert_equal(t.reshape_as(T(np.zeros((2, 6)))), a.T.reshape(2, 6))
    assert fnx.ravel(x).shape == (12,) and fnx.ravel(x)._base is x


def test_flatten_unflatten():
    a = arange(2, 3, 4, 5)
    x = T(a)
    assert_equal(fnx.flatten(x), a.reshape(-1))
    assert_equal(x.flatten(1), a.reshape(2, -1))
    assert_equal(x.flatten(1, 2), a.reshape(2, 12, 5))
    assert_equal(x.flatten(-2), a.reshape(2, 3, 20))
    assert x.flatten(1, 1) is x
    assert fnx.flatten(T(3)).shape == (1,)
    with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim"):
        x.flatten(2, 1)
    assert_equal(fnx.unflatten(x, 1, (3, 1)), a.reshape(2, 3, 1, 4, 5))
    assert_equal(x.unflatten(-1, (-1, 5)), a.reshape(2, 3, 4, 1, 5))
    with pytest.raises(RuntimeError, match=r"unflatten: Provided sizes \[2, 2\] don't multiply "
                                           r"up to the size of dim 1 \(3\)"):
        x.unflatten(1, (2, 2))
    with pytest.raises(RuntimeError, match="sizes must be non-empty"):
        x.unflatten(1, ())


# --------------------------------------------------------------------------- permutations

def test_permute_transpose_t_T_mT():
    a = arange(2, 3, 4)
    x = T(a)
    p = x.permute(2, 0, 1)
    assert_equal(p, a.transpose(2, 0, 1))
    assert p.stride() == (1, 12, 4) and not p.is_contiguous() and p._base is x
    assert_equal(fnx.permute(x, (-1, 0, 1)), a.transpose(2, 0, 1))
    assert_equal(fnx.transpose(x, 0, -1), a.swapaxes(0, 2))
    assert_equal(x.swapaxes(1, 2), a.swapaxes(1, 2))
    assert_equal(fnx.swapdims(x, 0, 1), a.swapaxes(0, 1))
    assert_equal(x.T, a.transpose(2, 1, 0))
    assert_equal(x.mT, a.swapaxes(-1, -2))
    m = T(arange(3, 4))
    assert_equal(m.t(), arange(3, 4).T)
    assert_equal(m.T, arange(3, 4).T)
    assert m.t().stride() == (1, 4)
    v = T([1, 2, 3])
    assert v.t().shape == (3,) and v.t()._base is v and T(7).t().shape == ()
    p[0, 0, 0] = -1
    assert x[0, 0, 0].item() == -1
    with pytest.raises(RuntimeError, match=r"number of dimensions in the tensor input does not "
                                           r"match .* input.dim\(\) = 3 is not equal to "
                                           r"len\(dims\) = 2"):
        x.permute(0, 1)
    with pytest.raises(RuntimeError, match="duplicate dims are not allowed"):
        x.permute(0, 0, 1)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                         r"\[-3, 2\], but got 3\)"):
        x.transpose(0, 3)
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions, but "
                                           "self is 3D"):
        x.t()
    with pytest.raises(RuntimeError, match="mT is only supported on matrices"):
        v.mT


def test_movedim():
    a = arange(2, 3, 4, 5)
    x = T(a)
    assert_equal(fnx.movedim(x, 0, -1), np.moveaxis(a, 0, -1))
    assert_equal(x.movedim((0, 1), (3, 0)), np.moveaxis(a, (0, 1), (3, 0)))
    assert_equal(fnx.moveaxis(x, [1], [2]), np.moveaxis(a, 1, 2))
    assert fnx.movedim(x, 0, 1)._base is x
    with pytest.raises(RuntimeError, match="should contain the same number of dims"):
        fnx.movedim(x, (0, 1), (0,))
    with pytest.raises(RuntimeError, match=r"movedim: repeated dim in `source` \(\[0, 0\]\)"):
        fnx.movedim(x, (0, 0), (1, 2))


# --------------------------------------------------------------------------- expand / squeeze

def test_expand_broadcasts_with_zero_strides():
    a = arange(3, 1)
    x = T(a)
    e = x.expand(2, 3, 4)
    assert_equal(e, np.broadcast_to(a, (2, 3, 4)))
    assert e.stride() == (0, 1, 0) and e._base is x
    assert_equal(x.expand(-1, 5), np.broadcast_to(a, (3, 5)))
    assert_equal(x.expand((3, 2)), np.broadcast_to(a, (3, 2)))
    assert_equal(x.expand_as(T(np.zeros((2, 3, 2)))), np.broadcast_to(a, (2, 3, 2)))
    assert_equal(fnx.broadcast_to(T([1, 2]), (3, 2)), np.broadcast_to([1, 2], (3, 2)))
    x[1, 0] = 50
    assert e[1, 1, 3].item() == 50                 # still a view
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(4\) must match "
                                           r"the existing size \(3\) at non-singleton "
                                           r"dimension 0\.  Target sizes: \[4, 1\]\.  Tensor "
                                           r"sizes: \[3, 1\]"):
        x.expand(4, 1)
    with pytest.raises(RuntimeError, match=r"the number of sizes provided \(1\) must be greater "
                                           r"or equal to the number of dimensions in the tensor "
                                           r"\(2\)"):
        x.expand(3)
    with pytest.raises(RuntimeError, match="isn't allowed in a leading, non-existing dimension"):
        x.expand(-1, 3, 1)


def test_squeeze_unsqueeze():
    a = arange(1, 3, 1, 2)
    x = T(a)
    assert_equal(fnx.squeeze(x), a.squeeze())
    assert_equal(x.squeeze(0), a.squeeze(0))
    assert_equal(x.squeeze(1), a)                         # not size 1: unchanged
    assert_equal(x.squeeze(-2), a.squeeze(2))
    assert_equal(x.squeeze((0, 2)), a.squeeze((0, 2)))
    assert x.squeeze()._base is x
    assert_equal(fnx.unsqueeze(x, 0), a[None])
    assert_equal(x.unsqueeze(-1), a[..., None])
    assert_equal(x.unsqueeze(2), np.expand_dims(a, 2))
    s = T(4.0)
    assert s.squeeze().shape == () and s.squeeze(0).shape == () and s.unsqueeze(0).shape == (1,)
    assert s.unsqueeze(-1).shape == (1,)
    with pytest.raises(IndexError, match=r"expected to be in range of \[-5, 4\], but got 5"):
        x.unsqueeze(5)
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        x.squeeze((0, 0))


def test_unsqueeze_strides_follow_pytorch_on_non_contiguous():
    t = T(arange(3, 4)).t()                        # shape (4, 3), strides (1, 4)
    assert t.unsqueeze(0).stride() == (4, 1, 4)
    assert t.unsqueeze(1).stride() == (1, 12, 4)
    assert t.unsqueeze(2).stride() == (1, 4, 1)
    assert_equal(t.unsqueeze(1), arange(3, 4).T[:, None])


# --------------------------------------------------------------------------- select / slice

def test_select_slice_narrow():
    a = arange(4, 5)
    x = T(a)
    assert_equal(fnx.select(x, 0, -1), a[-1])
    assert_equal(x.select(1, 2), a[:, 2])
    s = fnx.ops.aten.slice.Tensor(x, 1, 1, 100, 2)     # end is clamped
    assert_equal(s, a[:, 1::2])
    assert s.stride() == (5, 2) and s._base is x
    assert_equal(fnx.ops.aten.slice.Tensor(x, 0, -3, -1), a[-3:-1])
    assert_equal(fnx.ops.aten.slice.Tensor(x, 0, 3, 1), a[3:1])         # empty, not an error
    assert_equal(fnx.ops.aten.slice.Tensor(x, -1, None, None), a)
    assert_equal(fnx.narrow(x, 1, 1, 3), a[:, 1:4])
    assert_equal(x.narrow(0, -2, 2), a[-2:])
    assert x.narrow(0, 1, 2)._base is x
    with pytest.raises(RuntimeError, match="slice step must be positive"):
        fnx.ops.aten.slice.Tensor(x, 0, 0, 2, 0)
    with pytest.raises(IndexError, match=r"select\(\): index 4 out of range for tensor of size "
                                         r"\[4, 5\] at dimension 0"):
        x.select(0, 4)
    with pytest.raises(IndexError, match="select\\(\\) cannot be applied to a 0-dim tensor"):
        T(1).select(0, 0)
    with pytest.raises(RuntimeError, match=r"start \(3\) \+ length \(3\) exceeds dimension size "
                                           r"\(5\)"):
        x.narrow(1, 3, 3)
    with pytest.raises(IndexError, match=r"start out of range \(expected to be in range of "
                                         r"\[-4, 4\], but got 5\)"):
        x.narrow(0, 5, 0)


def test_diagonal():
    a = arange(3, 4, 5)
    x = T(a)
    for off in (0, 1, 3, -1, -2, 7):
        assert_equal(x.diagonal(off), np.diagonal(a, off))
        assert_equal(fnx.diagonal(x, off, 1, 2), np.diagonal(a, off, 1, 2))
        assert_equal(x.diagonal(off, -1, 0), np.diagonal(a, off, 2, 0))
    d = x.diagonal(0, 1, 2)
    assert d._base is x and d.stride() == (20, 6)
    d.fill_(-7)
    assert (x.numpy()[:, range(4), range(4)] == -7).all()
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 1, -2"):
        x.diagonal(0, 1, -2)


def test_as_strided_over_storage():
    a = np.arange(10, dtype=np.float32)
    x = T(a)
    s = fnx.as_strided(x, (3, 3), (2, 1), 1)
    assert_equal(s, np.lib.stride_tricks.as_strided(a[1:], (3, 3), (8, 4)))
    assert s.stride() == (2, 1) and s.storage_offset() == 1 and s._base is x
    v = x[4:]                                        # offsets count from the storage start
    assert v.storage_offset() == 4
    assert_equal(v.as_strided((2,), (1,)), a[4:6])
    assert_equal(v.as_strided((2,), (1,), 0), a[0:2])
    s[0, 0] = 99
    assert x[1].item() == 99
    with pytest.raises(RuntimeError, match=r"setStorage: sizes \[4\], strides \[3\], storage "
                                           r"offset 1, and itemsize 4 requiring a storage size "
                                           r"of 44 are out of bounds for storage of size 40"):
        x.as_strided((4,), (3,), 1)
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        x.as_strided((2, 2), (1,))


def test_unfold_and_view_as_real_complex():
    a = np.arange(7.0, dtype=np.float32)
    x = T(a)
    u = x.unfold(0, 3, 2)
    assert_equal(u, np.lib.stride_tricks.sliding_window_view(a, 3)[::2])
    assert u.stride() == (2, 1) and u._base is x
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 0 is 7 but "
                                           "size is 8"):
        x.unfold(0, 8, 1)
    c = T(np.array([1 + 2j, 3 - 4j], np.complex64))
    r = fnx.view_as_real(c)
    assert_equal(r, np.array([[1, 2], [3, -4]], np.float32), fnx.float32)
    r[1, 1] = 5
    assert c[1].item() == 3 + 5j
    back = fnx.view_as_complex(r)
    assert back.dtype is fnx.complex64 and back.tolist() == [1 + 2j, 3 + 5j]
    with pytest.raises(RuntimeError, match="Tensor must have a last dimension with stride 1"):
        fnx.view_as_complex(T(np.zeros((2, 2), np.float32)).t())


# --------------------------------------------------------------------------- split family

def test_split_chunk_unbind_are_views():
    a = arange(5, 2)
    x = T(a)
    parts = fnx.split(x, 2)
    assert isinstance(parts, tuple) and [p.shape[0] for p in parts] == [2, 2, 1]
    for p, r in zip(parts, np.split(a, [2, 4])):
        assert_equal(p, r)
        assert p._base is x
    for p, r in zip(x.split([1, 4]), np.split(a, [1])):
        assert_equal(p, r)
    for p, r in zip(fnx.chunk(x, 3), np.split(a, [2, 4])):
        assert_equal(p, r)
    assert [p.shape for p in fnx.chunk(T(arange(6)), 4)] == [(2,), (2,), (2,)]
    for p, r in zip(fnx.unbind(x, 1), a.T):
        assert_equal(p, r)
    parts[1][0, 0] = -1
    assert x[2, 0].item() == -1
    assert [p.shape for p in fnx.split(T(np.zeros((0, 2))), 0)] == [(0, 2)]
    with pytest.raises(RuntimeError, match=r"split_with_sizes expects split_sizes to sum exactly "
                                           r"to 5 \(input tensor's size at dimension 0\), but "
                                           r"got split_sizes=\[1, 2\]"):
        x.split([1, 2])
    with pytest.raises(RuntimeError, match="split expects split_size be non-negative"):
        x.split(-1)
    with pytest.raises(RuntimeError, match="chunk expects `chunks` to be greater than 0, got: 0"):
        x.chunk(0)
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        fnx.unbind(T(1))


# --------------------------------------------------------------------------- joining

def test_cat_values_and_promotion():
    a, b = arange(2, 3), arange(1, 3) + 10
    assert_equal(fnx.cat([T(a), T(b)]), np.concatenate([a, b]), fnx.int64)
    assert_equal(fnx.cat((T(a), T(a)), dim=-1), np.concatenate([a, a], -1))
    assert_equal(fnx.concat([T(a), T(b)], 0), np.concatenate([a, b]))
    assert_equal(fnx.concatenate([T(a), T(a)], axis=1), np.concatenate([a, a], 1))
    i32 = fnx.tensor([1, 2], dtype=fnx.int32)
    f16 = fnx.tensor([0.5], dtype=fnx.float16)
    r = fnx.cat([i32, f16])
    assert_equal(r, np.array([1, 2, 0.5], np.float16), fnx.float16)
    assert fnx.cat([fnx.tensor([1]), fnx.tensor([True])]).dtype is fnx.int64
    assert fnx.cat([fnx.tensor([1], dtype=fnx.uint8),
                    fnx.tensor([-1], dtype=fnx.int8)]).dtype is fnx.int16
    assert fnx.cat([fnx.tensor([1.0]), fnx.tensor([1.0], dtype=fnx.float64)]).dtype \
        is fnx.float64
    assert fnx.cat([fnx.tensor([True]), fnx.tensor([False])]).dtype is fnx.bool
    c = fnx.cat([T(a), T(b)])
    assert c._base is None and not shares(c, T(a))


def test_cat_skips_legacy_empty_and_errors():
    a = arange(2, 3).astype(np.float32)
    empty64 = fnx.tensor(np.zeros(0, np.float64))
    r = fnx.cat([T(a), empty64, T(a)], 1)          # skipped for shapes, kept for the dtype
    assert_equal(r, np.concatenate([a, a], 1).astype(np.float64), fnx.float64)
    assert fnx.cat([empty64, empty64]).shape == (0,)
    with pytest.raises(RuntimeError, match="expected a non-empty list of Tensors"):
        fnx.cat([])
    with pytest.raises(RuntimeError, match=r"zero-dimensional tensor \(at position 1\) cannot be "
                                           r"concatenated"):
        fnx.cat([T([1]), T(2)])
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0. "
                                           "Expected size 3 but got size 2 for tensor number 1"):
        fnx.cat([T(a), T(np.zeros((2, 2)))])
    with pytest.raises(RuntimeError, match="Tensors must have same number of dimensions: got 2 "
                                           "and 1"):
        fnx.cat([T(a), T([1.0, 2.0])])
    with pytest.raises(IndexError, match="Dimension out of range"):
        fnx.cat([T(a), T(a)], 2)


def test_stack_hstack_vstack_dstack():
    a, b = arange(2, 3), arange(2, 3) * 2
    assert_equal(fnx.stack([T(a), T(b)]), np.stack([a, b]))
    assert_equal(fnx.stack([T(a), T(b)], dim=-1), np.stack([a, b], -1))
    assert_equal(fnx.stack([T(1), T(2)]), np.array([1, 2]))
    assert_equal(fnx.hstack([T(a), T(b)]), np.hstack([a, b]))
    assert_equal(fnx.hstack([T([1, 2]), T([3])]), np.hstack([[1, 2], [3]]))
    assert_equal(fnx.vstack([T([1, 2]), T(a[:, :2])]), np.vstack([[1, 2], a[:, :2]]))
    assert_equal(fnx.dstack([T(a), T(b)]), np.dstack([a, b]))
    assert_equal(fnx.row_stack([T([1]), T([2])]), np.vstack([[1], [2]]))
    assert fnx.atleast_1d(T(1)).shape == (1,)
    assert fnx.atleast_2d(T([1, 2])).shape == (1, 2)
    assert [t.shape for t in fnx.atleast_3d(T(1), T(arange(2, 3)))] == [(1, 1, 1), (2, 3, 1)]
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size, but got "
                                           r"\[2, 3\] at entry 0 and \[3\] at entry 1"):
        fnx.stack([T(a), T([1, 2, 3])])
    with pytest.raises(RuntimeError, match="stack expects a non-empty TensorList"):
        fnx.stack([])


# --------------------------------------------------------------------------- copies

def test_flip_roll_repeat_tile():
    a = arange(2, 3, 4)
    x = T(a)
    f = fnx.flip(x, [0, 2])
    assert_equal(f, np.flip(a, (0, 2)))
    assert not shares(f, x) and f._base is None
    assert_equal(x.flip(-1), np.flip(a, -1))
    assert_equal(x.flip(0, 1), np.flip(a, (0, 1)))
    assert_equal(fnx.fliplr(x), np.fliplr(a))
    assert_equal(fnx.flipud(x), np.flipud(a))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        x.flip(0, -3)
    assert_equal(fnx.roll(x, 1), np.roll(a, 1))
    assert_equal(fnx.roll(x, -2, 2), np.roll(a, -2, 2))
    assert_equal(x.roll((1, 5), (0, 2)), np.roll(a, (1, 5), (0, 2)))
    assert_equal(x.roll(0, 1), a)
    assert not shares(x.roll(0, 1), x)
    with pytest.raises(RuntimeError, match="shifts and dimensions must align. shifts: 2, dims:1"):
        x.roll((1, 2), 0)
    assert_equal(x.repeat(1, 2, 1), np.tile(a, (1, 2, 1)))
    assert_equal(T([1, 2]).repeat(3, 2), np.tile([1, 2], (3, 2)))
    assert_equal(x.repeat((2, 1, 1, 1)), np.tile(a, (2, 1, 1, 1)))
    assert_equal(fnx.tile(x, (2,)), np.tile(a, 2))
    assert_equal(x.tile(2, 1, 1, 1), np.tile(a, (2, 1, 1, 1)))
    with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims can not be "
                                           "smaller than number of dimensions of tensor"):
        x.repeat(2, 2)


def test_constant_pad_nd():
    a = arange(2, 3).astype(np.float32)
    x = T(a)
    assert_equal(fnx.constant_pad_nd(x, (1, 2)), np.pad(a, ((0, 0), (1, 2))), fnx.float32)
    assert_equal(fnx.constant_pad_nd(x, (1, 0, 2, 1), 9.5),
          np.pad(a, ((2, 1), (1, 0)), constant_values=9.5))
    assert_equal(fnx.constant_pad_nd(x, (-1, 1)), np.pad(a[:, 1:], ((0, 0), (0, 1))))
    assert_equal(fnx.constant_pad_nd(x, (-3, 0)), np.zeros((2, 0), np.float32))
    with pytest.raises(RuntimeError, match="Length of pad must be even but instead it equals 3"):
        fnx.constant_pad_nd(x, (1, 1, 1))
    with pytest.raises(RuntimeError, match="Pad length is 6 while the input has 2 dimensions"):
        fnx.constant_pad_nd(x, (1,) * 6)
    with pytest.raises(RuntimeError, match=r"The input size 3, plus negative padding -2 and -2 "
                                           r"resulted in a negative output size"):
        fnx.constant_pad_nd(x, (-2, -2))
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without "
                                           "overflow"):
        fnx.constant_pad_nd(fnx.tensor([1], dtype=fnx.uint8), (1, 1), 256)


def test_tril_triu():
    a = arange(2, 3, 4)
    x = T(a)
    for k in (0, 1, -1, 5):
        assert_equal(fnx.tril(x, k), np.tril(a, k))
        assert_equal(x.triu(k), np.triu(a, k))
    y = T(a)
    assert y.tril_() is y and y._version == 1
    assert_equal(y, np.tril(a))
    b = T(np.ones((3, 3), bool))
    assert_equal(b.triu(1), np.triu(np.ones((3, 3), bool), 1), fnx.bool)
    with pytest.raises(RuntimeError, match="tril: input tensor must have at least 2 dimensions"):
        fnx.tril(T([1, 2]))


def test_clone_contiguous_preserve_strides():
    a = arange(3, 4).astype(np.float32)
    x = T(a)
    c = fnx.clone(x)
    assert_equal(c, a)
    assert not shares(c, x) and c._base is None
    t = x.t()
    assert t.clone().stride() == (1, 4)                # dense: strides preserved
    assert t.clone(memory_format="contiguous_format").stride() == (3, 1)
    assert x[:, ::2].clone().stride() == (2, 1)        # not dense: contiguous
    assert x.contiguous() is x
    tc = t.contiguous()
    assert tc.is_contiguous() and tc.stride() == (3, 1) and not shares(tc, x)
    assert_equal(tc, a.T)
    n = T(arange(2, 3, 4, 5).astype(np.float32))
    cl = n.clone(memory_format="channels_last")
    assert cl.stride() == (60, 1, 15, 3)
    assert_equal(cl, arange(2, 3, 4, 5))


def test_detach_shares_data_and_version():
    x = fnx.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and x.requires_grad and d._base is None and shares(d, x)
    d.add_(1)
    assert x._version == 1 and x.tolist() == [2.0, 3.0]
    y = fnx.tensor([1.0], requires_grad=True)
    assert y.detach_() is y and not y.requires_grad and y._version == 0


# --------------------------------------------------------------------------- fill / masked_fill

def test_fill_zero():
    x = fnx.tensor([[1, 2], [3, 4]])
    assert x.fill_(7) is x and x.tolist() == [[7, 7], [7, 7]] and x._version == 1
    x.fill_(2.9)                                     # truncates, like PyTorch
    assert x.tolist() == [[2, 2], [2, 2]]
    x.fill_(np.float32(3.5))                         # NumPy scalars are numbers too
    assert x.tolist() == [[3, 3], [3, 3]]
    x.fill_(fnx.tensor(5.0))
    assert x.tolist() == [[5, 5], [5, 5]] and x.dtype is fnx.int64
    x[0].zero_()
    assert x.tolist() == [[0, 0], [5, 5]] and x._version == 5
    f = fnx.ops.aten.fill.Scalar(x, 3)
    assert f.tolist() == [[3, 3], [3, 3]] and x.tolist() == [[0, 0], [5, 5]]
    u = fnx.tensor([1, 2], dtype=fnx.uint8)
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without "
                                           "overflow"):
        u.fill_(256)
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor but got "
                                           "tensor with 1 dimensions"):
        u.fill_(fnx.tensor([1]))
    assert u.tolist() == [1, 2] and u._version == 0
    h = fnx.tensor([1.0], dtype=fnx.float16)
    with pytest.raises(RuntimeError, match="value cannot be converted to type c10::Half"):
        h.fill_(1e6)


def test_masked_fill():
    a = arange(2, 3).astype(np.float32)
    m = np.array([True, False, True])
    x = T(a)
    r = fnx.masked_fill(x, T(m), -1)
    assert_equal(r, np.where(m, -1, a), fnx.float32)
    assert x.tolist() == a.tolist()
    m3 = np.array([True, False, True]).reshape(3, 1, 1)
    assert_equal(x.masked_fill(T(m3), 0.5), np.where(m3, 0.5, a).astype(np.float32))  # [3, 2, 3]
    assert_equal(x.masked_fill(T(m), fnx.tensor(2)), np.where(m, 2, a))
    assert x.masked_fill_(T(m), 9) is x and x._version == 1
    assert_equal(x, np.where(m, 9, a))
    i = fnx.tensor([1, 2, 3])
    assert_equal(i.masked_fill(T(m), 2.7), [2, 2, 2], fnx.int64)
    with pytest.raises(RuntimeError, match="masked_fill_ only supports boolean masks, but got "
                                           "mask with dtype Long"):
        x.masked_fill(T([1, 0, 1]), 0)
    with pytest.raises(RuntimeError, match="only supports a 0-dimensional value tensor"):
        x.masked_fill(T(m), T([1.0]))
    before = x.numpy().copy()
    with pytest.raises(RuntimeError, match="must match the existing size"):
        T(a[:, :1]).masked_fill_(T(m), 0)           # mask would broadcast self: not in place
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t"):
        fnx.tensor([1, 2, 3], dtype=fnx.int8).masked_fill_(T(m), 1000)
    np.testing.assert_array_equal(x.numpy(), before)


def test_scatter_views():
    a = arange(3, 4)
    x = T(a)
    src = T([-1, -2, -3, -4])
    r = fnx.select_scatter(x, src, 0, 1)
    ref = a.copy()
    ref[1] = [-1, -2, -3, -4]
    assert_equal(r, ref)
    assert_equal(x, a)
    ref = a.copy()
    ref[:, 1::2] = [[0, 0]] * 3
    assert_equal(fnx.slice_scatter(x, T(np.zeros((3, 2), np.int64)), 1, 1, None, 2), ref)
    ref = a.copy()
    ref[range(3), range(1, 4)] = [7, 8, 9]
    assert_equal(fnx.diagonal_scatter(x, T([7, 8, 9]), 1), ref)
    with pytest.raises(RuntimeError, match=r"expected src to have a size equal to the slice of "
                                           r"self. src size = \[3\], slice size = \[4\]"):
        fnx.select_scatter(x, T([1, 2, 3]), 0, 0)


# --------------------------------------------------------------------------- bookkeeping

def test_views_of_views_share_the_root_and_its_version():
    x = T(arange(4, 4).astype(np.float32))
    v = x[1:].t()[0]
    assert v._base is x
    v.mul_(0)
    assert x._version == v._version == 1
    np.testing.assert_array_equal(x.numpy()[1:, 0], [0, 0, 0])
    x.add_(1)                                       # writes to the base show in the view
    assert v._version == 2 and v.tolist() == [1.0, 1.0, 1.0]


def test_ops_have_pytorch_schemas_and_tags():
    aten = fnx.ops.aten
    assert str(aten.view.default.schema) == "view(Tensor(a) self, SymInt[] size) -> Tensor(a)"
    assert str(aten.cat.default.schema) == "cat(Tensor[] tensors, int dim=0) -> Tensor"
    assert str(aten.slice.Tensor.schema) == ("slice.Tensor(Tensor(a) self, int dim=0, "
                                             "SymInt? start=None, SymInt? end=None, "
                                             "SymInt step=1) -> Tensor(a)")
    for op in (aten.view.default, aten.permute.default, aten.expand.default,
               aten.select.int, aten.slice.Tensor, aten.diagonal.default,
               aten.as_strided.default, aten.alias.default, aten.split_with_sizes.default,
               aten.squeeze.dims, aten.unsqueeze.default):
        assert {"core", "view"} <= op.tags
    for op in (aten.cat.default, aten.clone.default, aten.flip.default, aten.repeat.default,
               aten.constant_pad_nd.default, aten.fill.Scalar):
        assert "core" in op.tags and "view" not in op.tags
    assert "inplace" in aten.fill_.Scalar.tags


def test_meta_shapes():
    m = meta_tensor((2, 3, 4), fnx.float32)
    assert m.view(6, 4).shape == (6, 4) and m.view(6, 4).device.type == "meta"
    assert m.permute(2, 0, 1).shape == (4, 2, 3)
    assert m.expand(5, 2, 3, 4).shape == (5, 2, 3, 4)
    assert m[0, 1:].shape == (2, 4) and m[None, ..., 0].shape == (1, 2, 3)
    assert fnx.cat([m, m], 1).shape == (2, 6, 4)
    assert fnx.stack([m, m]).shape == (2, 2, 3, 4)
    assert m.reshape(-1).shape == (24,) and m.diagonal().shape == (4, 2)
    assert fnx.roll(m, 1, 0).shape == (2, 3, 4) and m.repeat(2, 1, 1).shape == (4, 3, 4)
    assert fnx.cat([m, meta_tensor((2, 3, 4), fnx.float64)]).dtype is fnx.float64
    with pytest.raises(RuntimeError, match="must match the existing size"):
        m.expand(3, 3, 4)
