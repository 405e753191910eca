"""PyTorch's legacy tensor constructors (``fnx.api.legacy_types``): ``fnx.Tensor(...)``,
``fnx.FloatTensor(...)`` and the other typed names, on CPU and cuda, checked against NumPy
and the rules PyTorch documents (sizes, data, alias, the errors)."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import fnx

TYPES = {"FloatTensor": (fnx.float32, np.float32), "DoubleTensor": (fnx.float64, np.float64),
         "HalfTensor": (fnx.float16, np.float16), "ByteTensor": (fnx.uint8, np.uint8),
         "CharTensor": (fnx.int8, np.int8), "ShortTensor": (fnx.int16, np.int16),
         "IntTensor": (fnx.int32, np.int32), "LongTensor": (fnx.int64, np.int64),
         "BoolTensor": (fnx.bool, np.bool_), "BFloat16Tensor": (fnx.bfloat16, None)}


def test_tensor_sizes_make_an_uninitialized_tensor_of_the_default_dtype():
    for args, shape in [((2, 3), (2, 3)), ((fnx.Size([4, 1]),), (4, 1)), ((np.int64(3), 2), (3, 2)),
                        ((0,), (0,)), ((), (0,))]:
        t = fnx.Tensor(*args)
        assert t.shape == shape and t.dtype == fnx.float32 and t.device.type == "cpu"
        assert not t.requires_grad and t.is_contiguous()
    assert fnx.Tensor(size=(2, 5)).shape == (2, 5)
    fnx.set_default_dtype(fnx.float64)
    try:
        assert fnx.Tensor(2).dtype == fnx.float64 and fnx.Tensor([1]).dtype == fnx.float64
    finally:
        fnx.set_default_dtype(fnx.float32)


def test_tensor_data_is_copied_in_the_default_dtype():
    a = np.array([[1, 2], [3, 4]], dtype=np.int64)
    t = fnx.Tensor(a)
    np.testing.assert_array_equal(t.numpy(), a.astype(np.float32))
    a[0, 0] = 9                                 # a copy: the array is not shared
    assert t[0, 0].item() == 1.0
    assert fnx.Tensor((2, 3)).tolist() == [2.0, 3.0]        # a tuple is data, not a size
    assert fnx.Tensor([[]]).shape == (1, 0)
    assert fnx.Tensor([fnx.tensor(1.5), 2]).tolist() == [1.5, 2.0]


def test_tensor_of_a_tensor_is_a_differentiable_alias():
    x = fnx.tensor([1.0, 2.0], requires_grad=True)
    y = fnx.Tensor(x)
    assert y.requires_grad and not y.is_leaf and y.dtype == x.dtype
    (y * fnx.tensor([3.0, 4.0])).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]
    t = fnx.tensor([1, 2])                      # any dtype: fnx.Tensor keeps it
    u = fnx.Tensor(t)
    u[0] = 7
    assert t.tolist() == [7, 2] and u.dtype == fnx.int64 and t._version == u._version == 1


@pytest.mark.parametrize("name", sorted(TYPES))
def test_typed_constructors(name):
    dtype, np_dtype = TYPES[name]
    cls = getattr(fnx, name)
    assert cls.dtype is dtype and not cls.is_cuda and cls.__name__ == name
    t = cls(2, 3)
    assert t.dtype is dtype and t.shape == (2, 3)
    data = [0, 1, 3]
    made = cls(data)
    assert made.dtype is dtype
    if np_dtype is not None:
        np.testing.assert_array_equal(made.numpy(), np.array(data).astype(np_dtype))
        np.testing.assert_array_equal(cls(np.array(data, np.int32)).numpy(),
                                      np.array(data).astype(np_dtype))
    assert isinstance(made, cls) and isinstance(made, fnx.Tensor)
    others = [c for n, c in vars(fnx).items() if n in TYPES and n != name]
    assert not any(isinstance(made, c) for c in others)
    assert cls().shape == (0,) and cls().dtype is dtype
    assert fnx.zeros(2).type(cls).dtype is dtype


def test_integer_types_truncate_floats_toward_zero():
    assert fnx.LongTensor([1.7, -1.7, 2.0]).tolist() == [1, -1, 2]
    assert fnx.IntTensor(np.array([2.9, -0.5])).tolist() == [2, 0]


def test_typed_constructor_of_a_tensor_wants_its_dtype():
    f = fnx.ones(2)
    alias = fnx.FloatTensor(f)
    alias[1] = 5.0
    assert f.tolist() == [1.0, 5.0]
    with pytest.raises(TypeError, match="LongTensor.*int64.*float32"):
        fnx.LongTensor(f)


@pytest.mark.parametrize("args, kwargs, error, match", [
    ((2.5,), {}, TypeError, "data must be a sequence \\(got float\\)"),
    ((True,), {}, TypeError, "data must be a sequence \\(got bool\\)"),
    ((None,), {}, TypeError, "got NoneType"),
    (("abc",), {}, TypeError, "invalid data type 'str'"),
    ((2.0, 3), {}, TypeError, "invalid combination of arguments: got \\(float, int\\)"),
    ((2, 3), {"dtype": fnx.float64}, TypeError, "unexpected keyword argument 'dtype'"),
    ((2, 3), {"requires_grad": True}, TypeError, "unexpected keyword argument 'requires_grad'"),
    ((-1,), {}, RuntimeError, "negative dimension -1: \\[-1\\]"),
    ((2,), {"size": (2,)}, TypeError, "multiple values for argument 'size'"),
])
def test_bad_arguments_raise_pytorchs_errors(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        fnx.Tensor(*args, **kwargs)


def test_cpu_type_refuses_a_cuda_device():
    with pytest.raises(RuntimeError, match="expects device type: cpu but device type: cuda"):
        fnx.FloatTensor(2, device="cuda")


def test_subclasses_and_internal_construction_are_unchanged():
    # a bare instance is still how tensors are made (copy, pickling); subclasses keep
    # their own constructors
    p = fnx.nn.Parameter(fnx.Tensor(2, 3))
    assert isinstance(p, fnx.nn.Parameter) and p.shape == (2, 3) and p.requires_grad
    fnx.nn.init.zeros_(p)
    assert p.sum().item() == 0.0
    c = copy.deepcopy(fnx.tensor([1.0, 2.0]))
    assert type(c) is fnx.Tensor and c.tolist() == [1.0, 2.0]


@pytest.mark.skipif(not fnx.cuda.is_available(),
                    reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")
def test_cuda_types():
    t = fnx.cuda.LongTensor([1.5, 2])
    assert t.device.type == "cuda" and t.dtype == fnx.int64 and t.tolist() == [1, 2]
    assert isinstance(t, fnx.cuda.LongTensor) and not isinstance(t, fnx.LongTensor)
    assert fnx.cuda.FloatTensor.is_cuda and fnx.cuda.FloatTensor(2, 3).shape == (2, 3)
    assert fnx.Tensor(2, device="cuda").device.type == "cuda"
    assert fnx.zeros(2).type(fnx.cuda.FloatTensor).device.type == "cuda"
