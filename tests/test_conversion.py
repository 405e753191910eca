"""Tensor.to and the dtype/device conversion methods (all through aten._to_copy)."""
import numpy as np
import pytest

import fnx
from fnx.dispatch import DispatchKey
from fnx.ops import aten
from fnx.testing import to_numpy



DATA = np.array([[1.5, -2.7, 0.0], [3.99, -0.5, 100.25]], np.float32)


def make():
    return fnx.from_numpy(DATA.copy())


@pytest.mark.parametrize("method,dtype", [
    ("float", fnx.float32), ("double", fnx.float64), ("half", fnx.float16),
    ("bfloat16", fnx.bfloat16), ("int", fnx.int32), ("long", fnx.int64), ("short", fnx.int16),
    ("char", fnx.int8), ("byte", fnx.uint8), ("bool", fnx.bool), ("cfloat", fnx.complex64),
    ("cdouble", fnx.complex128)])
def test_cast_methods(method, dtype):
    src = np.abs(DATA) if dtype is fnx.uint8 else DATA    # negative -> uint8 is undefined
    y = getattr(fnx.from_numpy(src.copy()), method)()
    assert y.dtype is dtype and y.shape == (2, 3)
    wide = np.complex128 if dtype.is_complex else np.float64
    np.testing.assert_array_equal(to_numpy(y).astype(wide), src.astype(dtype.numpy).astype(wide))


def test_float_to_int_truncates_toward_zero():
    y = make().to(fnx.int64)
    assert y.dtype is fnx.int64
    np.testing.assert_array_equal(to_numpy(y), [[1, -2, 0], [3, 0, 100]])
    np.testing.assert_array_equal(to_numpy(make().bool()),
                                  [[True, True, False], [True, True, True]])


def test_to_returns_self_when_nothing_changes():
    x = make()
    assert x.to(fnx.float32) is x
    assert x.to("cpu") is x
    assert x.to(fnx.device("cpu"), fnx.float32) is x
    assert x.to(x) is x
    assert x.float() is x and x.cpu() is x and x.type(fnx.float32) is x
    y = x.to(fnx.float32, copy=True)
    assert y is not x and y.dtype is fnx.float32
    y.add_(1)
    np.testing.assert_array_equal(to_numpy(x), DATA)          # a real copy


def test_to_forms():
    x = make()
    assert x.to(fnx.float64).dtype is fnx.float64
    assert x.to("cpu", fnx.int32).dtype is fnx.int32
    assert x.to(device="cpu", dtype=fnx.float16).dtype is fnx.float16
    assert x.to(dtype=fnx.int8).dtype is fnx.int8
    assert x.to(fnx.tensor([1], dtype=fnx.int16)).dtype is fnx.int16
    assert x.to(fnx.float64, False, True).dtype is fnx.float64      # non_blocking, copy
    assert x.to(None, fnx.int64).dtype is fnx.int64
    assert x.to(fnx.int64, non_blocking=True).dtype is fnx.int64
    z = fnx.tensor(2.5).to(fnx.int64)
    assert z.shape == () and z.item() == 2


def test_to_does_not_alias():
    x = make()
    y = x.to(fnx.float64)
    y.add_(1)
    np.testing.assert_array_equal(to_numpy(x), DATA)
    assert y._base is None


def test_to_argument_errors():
    x = make()
    with pytest.raises(TypeError, match="dtype"):
        x.to(dtype="float64")
    with pytest.raises(TypeError, match="invalid combination"):
        x.to(3.5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'dev'"):
        x.to(dev="cpu")
    with pytest.raises(TypeError, match="multiple values for argument 'dtype'"):
        x.to(fnx.float64, dtype=fnx.int32)
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, meta"):
        x.to("gpu")


def test_to_meta_dispatches_through_to_copy():
    x = make()
    m = x.to("meta")
    assert m.is_meta and m.shape == (2, 3) and m.dtype is fnx.float32
    mi = m.to(fnx.int32)                          # the Meta kernel of _to_copy
    assert mi.is_meta and mi.dtype is fnx.int32
    assert m.to(fnx.float32) is m


def test_to_goes_through_to_copy(monkeypatch):
    calls = []
    op = aten._to_copy.default
    cpu_kernel = op.kernels[DispatchKey.CPU]

    def spy(ks, self, **kw):
        calls.append(kw)
        return cpu_kernel(ks, self, **kw)
    op.register(DispatchKey.CPU, spy)
    try:
        make().double()
        make().to("cpu", fnx.int8)
    finally:
        op.register(DispatchKey.CPU, cpu_kernel)
    assert [c["dtype"] for c in calls] == [fnx.float64, fnx.int8]


@pytest.mark.skipif(fnx.cuda.is_available(), reason="a GPU (or FNX_CUDA_ON_CPU=1) is present")
def test_cuda_without_a_gpu_names_the_extra():
    x = make()
    with pytest.raises(RuntimeError, match=r"no JAX GPU backend.*pip install 'fnx\[cuda12\]'"):
        x.cuda()
    with pytest.raises(RuntimeError, match="no JAX GPU backend"):
        x.to("cuda:0", fnx.float64)
    with pytest.raises(RuntimeError, match="no JAX GPU backend"):
        x.cuda(0)
    with pytest.raises(RuntimeError, match="must be cuda device"):
        x.cuda("cpu")


def test_type_strings():
    assert make().type() == "fnx.FloatTensor"
    assert fnx.tensor([1]).type() == "fnx.LongTensor"
    assert fnx.tensor([True]).type() == "fnx.BoolTensor"
    assert fnx.tensor([1], dtype=fnx.uint8).type() == "fnx.ByteTensor"
    assert fnx.tensor([1j]).type() == "fnx.ComplexFloatTensor"
    assert make().type(fnx.float64).type() == "fnx.DoubleTensor"
    y = make().type("fnx.IntTensor")
    assert y.dtype is fnx.int32
    np.testing.assert_array_equal(to_numpy(y), DATA.astype(np.int32))
    assert make().type("torch.HalfTensor").dtype is fnx.float16
    with pytest.raises(ValueError, match="invalid type"):
        make().type("fnx.NopeTensor")
    with pytest.raises(TypeError, match="dtype"):
        make().type(3)


def test_type_as():
    y = make().type_as(fnx.tensor([1], dtype=fnx.int16))
    assert y.dtype is fnx.int16


def test_is_tensor_is_floating_point_numel():
    assert fnx.is_tensor(fnx.zeros(1)) and not fnx.is_tensor(np.zeros(1))
    assert not fnx.is_tensor(1.0)
    assert fnx.is_floating_point(fnx.zeros(1, dtype=fnx.bfloat16))
    assert not fnx.is_floating_point(fnx.zeros(1, dtype=fnx.int32))
    assert not fnx.is_floating_point(fnx.zeros(1, dtype=fnx.complex64))
    assert fnx.numel(fnx.zeros(2, 3, 4)) == 24 and fnx.numel(fnx.tensor(1.0)) == 1
    assert fnx.numel(fnx.zeros(0, 5)) == 0
    with pytest.raises(TypeError, match="must be Tensor"):
        fnx.numel([1, 2])
    with pytest.raises(TypeError, match="must be Tensor"):
        fnx.is_floating_point(1.0)


def test_empty_and_zero_dim_conversions():
    e = fnx.zeros(0, 2).to(fnx.int32)
    assert e.shape == (0, 2) and e.dtype is fnx.int32
    s = fnx.tensor(True).float()
    assert s.shape == () and s.item() == 1.0
