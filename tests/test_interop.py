"""asarray, frombuffer, from_dlpack/to_dlpack, from_file and range (fnx/api/interop.py):
memory sharing observed by writing through one side, copies where PyTorch copies, PyTorch's
errors, values against NumPy."""
import array
import warnings

import jax.numpy as jnp
import numpy as np
import pytest

import fnx


def test_asarray_shares_numpy_memory_and_copies_on_request():
    a = np.zeros(3, np.float32)
    t = fnx.asarray(a)
    t.add_(1)
    np.testing.assert_array_equal(a, [1, 1, 1])
    c = fnx.asarray(a, copy=True)
    c.add_(1)
    np.testing.assert_array_equal(a, [1, 1, 1])
    d = fnx.asarray(a, dtype=fnx.float64)
    assert d.dtype is fnx.float64
    d.add_(1)
    np.testing.assert_array_equal(a, [1, 1, 1])
    with pytest.raises(ValueError, match="can't alias"):
        fnx.asarray(a, dtype=fnx.float64, copy=False)
    with pytest.raises(ValueError, match="can't alias"):
        fnx.asarray([1, 2], copy=False)


def test_asarray_tensors_lists_and_grad():
    x = fnx.ones(2)
    assert fnx.asarray(x) is x
    y = fnx.asarray(x, copy=True)
    y.add_(1)
    np.testing.assert_array_equal(x.numpy(), [1, 1])
    z = fnx.asarray([1.5, 2.5], dtype=fnx.float64, requires_grad=True)
    assert z.requires_grad and z.dtype is fnx.float64
    np.testing.assert_array_equal(z.detach().numpy(), [1.5, 2.5])
    assert fnx.asarray([1, 2]).dtype is fnx.int64
    assert fnx.asarray(np.arange(3, dtype=np.int16)).dtype is fnx.int16
    big = np.arange(3, dtype=">i4")                   # non-native byte order is converted
    np.testing.assert_array_equal(fnx.asarray(big).numpy(), [0, 1, 2])
    np.testing.assert_array_equal(fnx.asarray(jnp.arange(3.0)).numpy(), [0.0, 1.0, 2.0])
    with pytest.raises(TypeError, match="dtype"):
        fnx.asarray([1], dtype="float32")


def test_frombuffer_shares_count_offset():
    b = bytearray(np.arange(6, dtype=np.int32).tobytes())
    t = fnx.frombuffer(b, dtype=fnx.int32)
    np.testing.assert_array_equal(t.numpy(), np.arange(6))
    t.mul_(10)
    np.testing.assert_array_equal(np.frombuffer(b, np.int32), np.arange(6) * 10)
    u = fnx.frombuffer(b, dtype=fnx.int32, count=2, offset=8)
    np.testing.assert_array_equal(u.numpy(), [20, 30])
    arr = array.array("d", [1.0, 2.0])
    v = fnx.frombuffer(arr, dtype=fnx.float64)
    v.add_(1)
    assert list(arr) == [2.0, 3.0]
    with pytest.warns(UserWarning, match="not writable"):
        w = fnx.frombuffer(b"\x00\x00\x80\x3f", dtype=fnx.float32)
    np.testing.assert_array_equal(w.numpy(), [1.0])


@pytest.mark.parametrize("kwargs, match", [
    (dict(buffer=b"", count=3), r"both buffer length \(0\) and count \(3\)"),
    (dict(buffer=bytearray(8), count=3), r"requested buffer length \(3 \* 4 bytes\)"),
    (dict(buffer=bytearray(8), offset=9), r"offset \(9 bytes\) must be non-negative"),
    (dict(buffer=bytearray(7)), r"must be a multiple of element size \(4\)"),
])
def test_frombuffer_errors(kwargs, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=match):
            fnx.frombuffer(dtype=fnx.float32, **kwargs)


def test_dlpack_round_trips_share_memory():
    a = np.arange(4.0)
    t = fnx.from_dlpack(a)
    t.add_(1)
    np.testing.assert_array_equal(a, [1, 2, 3, 4])
    x = fnx.ones(3)
    y = fnx.from_dlpack(fnx.to_dlpack(x))
    y.add_(1)
    np.testing.assert_array_equal(x.numpy(), [2, 2, 2])
    j = jnp.arange(3, dtype=jnp.float32)
    tj = fnx.from_dlpack(j)
    assert tj.dtype is fnx.float32
    np.testing.assert_array_equal((tj * 2).numpy(), [0, 2, 4])
    back = np.from_dlpack(type("C", (), {"__dlpack__": lambda s, **k: fnx.to_dlpack(tj),
                                          "__dlpack_device__": lambda s: (1, 0)})())
    np.testing.assert_array_equal(back, [0, 1, 2])
    assert fnx.from_dlpack(x) is not x and np.shares_memory(fnx.from_dlpack(x).numpy(),
                                                            x.numpy())
    with pytest.raises(TypeError, match="__dlpack__"):
        fnx.from_dlpack([1, 2])
    with pytest.raises(RuntimeError, match="cpu"):
        fnx.to_dlpack(fnx.ones(1, device="meta"))


def test_from_file(tmp_path):
    path = tmp_path / "data.bin"
    np.arange(5, dtype=np.float64).tofile(path)
    t = fnx.from_file(str(path), size=4, dtype=fnx.float64)
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2, 3])
    assert fnx.from_file(str(path), size=0).numel() == 0
    with pytest.raises(RuntimeError, match="fewer than size"):
        fnx.from_file(str(path), size=6, dtype=fnx.float64)
    with pytest.raises(NotImplementedError, match="shared"):
        fnx.from_file(str(path), shared=True, size=1)


def test_range_is_inclusive_float_and_deprecated():
    with pytest.warns(UserWarning, match="deprecated"):
        r = fnx.range(1, 4)
    assert r.dtype is fnx.float32
    np.testing.assert_array_equal(r.numpy(), [1, 2, 3, 4])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(fnx.range(0, 1, 0.3).numpy(), [0.0, 0.3, 0.6, 0.9],
                                   rtol=1e-6)
        np.testing.assert_array_equal(fnx.range(5, 1, -2, dtype=fnx.int64).numpy(), [5, 3, 1])
        with pytest.raises(TypeError, match="end"):
            fnx.range(4)
        with pytest.raises(RuntimeError, match="step"):
            fnx.range(0, 1, 0)
        with pytest.raises(RuntimeError, match="inconsistent"):
            fnx.range(0, 1, -1)
