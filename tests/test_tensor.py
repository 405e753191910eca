"""Tensor basics: metadata, conversion to Python/NumPy, versions, in-place and out= ops."""
import copy
import pickle

import numpy as np
import pytest

import fnx
from fnx.dispatch import DispatchKey


def test_metadata_matches_numpy():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = fnx.from_numpy(a)
    assert t.shape == (2, 3, 4) and t.size() == (2, 3, 4) and t.size(-1) == 4
    assert t.ndim == 3 and t.dim() == 3 and t.numel() == 24 and len(t) == 2
    assert t.stride() == (12, 4, 1) and t.stride(0) == 12   # elements, not bytes
    assert t.dtype is fnx.float32 and t.element_size() == 4
    assert t.device == fnx.device("cpu") and t.is_cpu and not t.is_cuda
    # dcgan's forward tests `input.is_cuda or input.is_xpu`; mps is the other common check
    assert not t.is_xpu and not t.is_mps and not fnx.zeros(1, device="meta").is_xpu
    assert t.is_contiguous()
    assert repr(t.shape) == "fnx.Size([2, 3, 4])"
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.size(3)


def test_from_numpy_shares_memory_and_numpy_round_trips():
    a = np.zeros(3, np.int32)
    t = fnx.from_numpy(a)
    t.add_(5)
    np.testing.assert_array_equal(a, [5, 5, 5])
    assert t.numpy() is a


def test_item_tolist_python_conversions():
    t = fnx.tensor([[1, 2], [3, 4]])
    assert t.tolist() == [[1, 2], [3, 4]]
    s = fnx.tensor(2.5)
    assert s.item() == 2.5 and isinstance(s.item(), float)
    assert float(s) == 2.5 and int(fnx.tensor(7)) == 7 and bool(fnx.tensor(True))
    assert isinstance(fnx.tensor(3).item(), int)
    assert fnx.tensor(3.0).tolist() == 3.0
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        t.item()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(t)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(s)


def test_tensor_dtype_inference():
    assert fnx.tensor([1, 2]).dtype is fnx.int64
    assert fnx.tensor([1.0, 2]).dtype is fnx.float32
    assert fnx.tensor([True, False]).dtype is fnx.bool
    assert fnx.tensor([1, 2.0j]).dtype is fnx.complex64
    assert fnx.tensor(np.float64(1.0)).dtype is fnx.float64
    assert fnx.tensor([1, 2], dtype=fnx.float16).dtype is fnx.float16
    fnx.set_default_dtype(fnx.float64)
    assert fnx.tensor([1.5]).dtype is fnx.float64
    with pytest.raises(ValueError):
        fnx.tensor([[1, 2], [3]])


def test_inplace_bumps_version_and_returns_self():
    t = fnx.tensor([1.0, 2.0])
    assert t._version == 0
    r = t.mul_(3)
    assert r is t and t._version == 1
    t += 1
    assert t._version == 2
    np.testing.assert_allclose(t.numpy(), [4.0, 7.0])


def test_failed_inplace_leaves_tensor_unchanged():
    t = fnx.tensor([1, 2, 3])
    before = t.numpy().copy()
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        t.add_(1.5)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        t.add_(fnx.tensor([[1], [2]]))
    np.testing.assert_array_equal(t.numpy(), before)
    assert t._version == 0


def test_out_variant_writes_and_resizes():
    out = fnx.tensor([0.0, 0.0])
    r = fnx.add(fnx.tensor([1.0, 2.0]), fnx.tensor([3.0, 4.0]), out=out)
    assert r is out and out.tolist() == [4.0, 6.0] and out._version == 1
    empty = fnx.tensor([], dtype=fnx.float32)
    fnx.mul(fnx.tensor([[1.0, 2.0]]), 2, out=empty)      # an empty out is resized silently
    assert empty.shape == (1, 2) and empty.tolist() == [[2.0, 4.0]]
    with pytest.raises(RuntimeError, match="can't be cast"):
        fnx.add(fnx.tensor([1.5]), 1, out=fnx.tensor([0]))


def test_requires_grad_is_a_keyset_bit():
    t = fnx.tensor([1.0])
    assert not t.requires_grad and DispatchKey.AutogradCPU not in t._keyset
    t.requires_grad_()
    assert t.requires_grad and DispatchKey.AutogradCPU in t._keyset
    with pytest.raises(RuntimeError, match="floating point"):
        fnx.tensor([1]).requires_grad_()
    with pytest.raises(RuntimeError, match="requires grad"):
        t.numpy()


def test_python_operators_and_reflected_forms():
    a = fnx.tensor([1.0, 2.0, 4.0])
    np.testing.assert_allclose((2 - a).numpy(), [1.0, 0.0, -2.0])
    np.testing.assert_allclose((2 / a).numpy(), [2.0, 1.0, 0.5])
    np.testing.assert_allclose((2 ** a).numpy(), [2.0, 4.0, 16.0])
    np.testing.assert_allclose((7 // a).numpy(), [7.0, 3.0, 1.0])
    np.testing.assert_allclose((7 % a).numpy(), [0.0, 1.0, 3.0])
    np.testing.assert_allclose((-a).numpy(), [-1.0, -2.0, -4.0])
    assert (a == 2.0).tolist() == [False, True, False]
    b = fnx.tensor([True, False])
    assert (~b).tolist() == [False, True] and (b & True).tolist() == [True, False]
    # A reflected Python scalar still promotes as a scalar, not as a 0-dim int64 tensor.
    assert (2 - fnx.tensor(3, dtype=fnx.int8)).dtype is fnx.int8
    assert (2 / fnx.tensor([2], dtype=fnx.int32)).dtype is fnx.float32


def test_numpy_scalar_on_the_left_defers_to_tensor():
    r = np.float32(2.0) * fnx.tensor([1.0, 2.0])
    assert isinstance(r, fnx.Tensor) and r.tolist() == [2.0, 4.0]


def test_device_objects():
    assert fnx.device("cuda:1").index == 1 and fnx.device("cuda", 1) == "cuda:1"
    assert fnx.device("cpu") is fnx.device("cpu")
    # equal devices are one object however spelled, so hashing by identity is consistent
    a = fnx.device("cuda:1")
    assert a is fnx.device("cuda", 1) is pickle.loads(pickle.dumps(a)) is copy.deepcopy(a)
    assert {fnx.device("cuda", 1): "x"}[fnx.device("cuda:1")] == "x"
    assert fnx.device("cuda:0") != fnx.device("cuda:1") and fnx.device("cuda") != a
    assert repr(fnx.device("cuda", 0)) == "device(type='cuda', index=0)"
    with pytest.raises(RuntimeError, match="Expected one of"):
        fnx.device("tpu")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        fnx.device("cuda:x")
