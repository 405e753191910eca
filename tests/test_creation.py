"""Factories: sizes, dtypes, values against NumPy, BackendSelect routing and errors."""
import numpy as np
import pytest

import fnx
from fnx.core.device import privateuse1_name
from fnx.dispatch import DispatchKey
from fnx.ops import aten
from fnx.testing import to_numpy



# ---------------------------------------------------------------------------- sizes

@pytest.mark.parametrize("fn,np_fn", [(fnx.zeros, np.zeros), (fnx.ones, np.ones)])
@pytest.mark.parametrize("args", [(2, 3), ((2, 3),), ([2, 3],), (fnx.Size([2, 3]),)])
def test_zeros_ones_size_forms(fn, np_fn, args):
    t = fn(*args)
    assert t.shape == (2, 3)
    assert t.dtype is fnx.float32
    assert t.device == fnx.device("cpu")
    np.testing.assert_array_equal(to_numpy(t), np_fn((2, 3), np.float32))


def test_size_keyword_and_numpy_ints():
    assert fnx.zeros(size=(4,)).shape == (4,)
    assert fnx.ones(np.int64(2), np.int32(3)).shape == (2, 3)
    assert fnx.empty(fnx.tensor(3)).shape == (3,)


def test_zero_dim_and_empty_sizes():
    t = fnx.zeros(())
    assert t.shape == () and t.dtype is fnx.float32 and t.item() == 0.0
    assert fnx.ones([]).item() == 1.0
    e = fnx.zeros(0, 3)
    assert e.shape == (0, 3) and e.numel() == 0
    assert fnx.empty(0).shape == (0,)


def test_dtypes_written_out():
    assert fnx.zeros(2, dtype=fnx.int32).dtype is fnx.int32
    assert fnx.ones(2, dtype=fnx.bool).dtype is fnx.bool
    assert fnx.ones(2, dtype=fnx.bfloat16).dtype is fnx.bfloat16
    assert fnx.zeros(2, dtype=fnx.complex128).dtype is fnx.complex128
    assert fnx.empty(2, 2, dtype=fnx.uint8).dtype is fnx.uint8
    np.testing.assert_array_equal(to_numpy(fnx.ones(3, dtype=fnx.int16)), np.ones(3, np.int16))


def test_default_dtype_is_followed():
    fnx.set_default_dtype(fnx.float64)
    assert fnx.zeros(2).dtype is fnx.float64
    assert fnx.full((2,), 1.5).dtype is fnx.float64
    assert fnx.arange(0, 1, 0.5).dtype is fnx.float64
    assert fnx.rand(2).dtype is fnx.float64
    assert fnx.full((1,), 1j).dtype is fnx.complex128


def test_negative_dimension_error():
    with pytest.raises(RuntimeError,
                       match=r"Trying to create tensor with negative dimension -1: \[-1, 2\]"):
        fnx.zeros(-1, 2)
    with pytest.raises(RuntimeError, match="negative dimension -3"):
        fnx.empty((2, -3))
    with pytest.raises(RuntimeError, match="negative dimension"):
        fnx.full((-1,), 2)


def test_bad_size_and_dtype_types():
    with pytest.raises(TypeError, match="must be tuple of ints, but found element of type "
                                        "float at pos 1"):
        fnx.zeros(2, 2.5)
    with pytest.raises(TypeError, match="argument 'dtype' must be fnx.dtype, not str"):
        fnx.zeros(2, dtype="float32")
    with pytest.raises(TypeError, match="dtype"):
        fnx.ones(2, dtype=np.float32)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'size'"):
        fnx.zeros()
    with pytest.raises(TypeError, match="unexpected keyword argument 'shape'"):
        fnx.zeros(shape=(2,))


def test_requires_grad():
    t = fnx.zeros(2, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    assert not fnx.ones(2).requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        fnx.zeros(2, dtype=fnx.int64, requires_grad=True)


# ---------------------------------------------------------------------------- full

def test_full_infers_dtype_from_value():
    assert fnx.full((2,), 7).dtype is fnx.int64
    assert fnx.full((2,), True).dtype is fnx.bool
    assert fnx.full((2,), 0.5).dtype is fnx.float32
    assert fnx.full((2,), 1 + 2j).dtype is fnx.complex64
    assert fnx.full((2,), np.float64(0.5)).dtype is fnx.float32   # a Scalar, not an array
    assert fnx.full((2,), fnx.tensor(3)).dtype is fnx.int64
    np.testing.assert_array_equal(to_numpy(fnx.full((2, 2), 7)), np.full((2, 2), 7, np.int64))
    assert fnx.full(3, 1.0).shape == (3,)


# What PyTorch 2.13 gives for torch.full((1,), value, dtype=dtype), value by value.
@pytest.mark.parametrize("value,dtype,expected", [
    (2.7, fnx.int32, 2), (-2.7, fnx.int32, -2), (-1, fnx.uint8, 255), (True, fnx.uint8, 1),
    (2, fnx.bool, True), (0.5, fnx.bool, True), (1j, fnx.bool, True), (1.5 + 0j, fnx.int32, 1),
    (float("inf"), fnx.float16, np.inf), (1e10, fnx.float16, np.inf),     # no check: rounds
    (70000.0, fnx.bfloat16, 70144.0), (3e38, fnx.float32, float(np.float32(3e38))),
    (float("-inf"), fnx.float32, -np.inf), (2 ** 63 - 1, fnx.int64, 2 ** 63 - 1)])
def test_full_casts_like_pytorch(value, dtype, expected):
    t = fnx.full((1,), value, dtype=dtype)
    assert t.dtype is dtype and to_numpy(t).tolist() == [expected]


@pytest.mark.parametrize("value,dtype,cname", [
    (300, fnx.uint8, "uint8_t"), (128, fnx.int8, "int8_t"), (-300, fnx.uint8, "uint8_t"),
    (float("nan"), fnx.int64, "int64_t"), (1j, fnx.float32, "float"), (-0.5, fnx.uint8,
    "uint8_t"), (255.9, fnx.uint8, "uint8_t"), (3.5e38, fnx.float32, "float"),
    (2 ** 63, fnx.int64, "int64_t"), (1e40, fnx.complex64, "c10::complex<float>")])
def test_full_overflow(value, dtype, cname):
    with pytest.raises(RuntimeError, match=f"value cannot be converted to type {cname} "
                                           f"without overflow"):
        fnx.full((2,), value, dtype=dtype)


def test_full_int_beyond_a_scalar():
    with pytest.raises(OverflowError, match="int too big to convert"):
        fnx.full((1,), 2 ** 64, dtype=fnx.float32)
    with pytest.raises(OverflowError, match="can't convert negative int to unsigned"):
        fnx.full((1,), -2 ** 63 - 1, dtype=fnx.float32)


def test_full_like_and_friends():
    x = fnx.tensor([[1, 2, 3]], dtype=fnx.int16)
    for fn, expect in [(fnx.zeros_like, 0), (fnx.ones_like, 1)]:
        y = fn(x)
        assert y.dtype is fnx.int16 and y.shape == (1, 3)
        np.testing.assert_array_equal(to_numpy(y), np.full((1, 3), expect, np.int16))
    y = fnx.full_like(x, 2.9)
    assert y.dtype is fnx.int16
    np.testing.assert_array_equal(to_numpy(y), [[2, 2, 2]])
    y = fnx.full_like(x, 2.5, dtype=fnx.float64)
    assert y.dtype is fnx.float64 and to_numpy(y)[0, 0] == 2.5
    e = fnx.empty_like(x, dtype=fnx.float32)
    assert e.shape == (1, 3) and e.dtype is fnx.float32
    assert fnx.zeros_like(fnx.tensor(5.0)).shape == ()
    assert fnx.ones_like(x, requires_grad=False, dtype=fnx.float32).dtype is fnx.float32
    with pytest.raises(RuntimeError, match="without overflow"):
        fnx.full_like(fnx.zeros(2, dtype=fnx.int8), 1000)


def test_like_of_a_view_is_contiguous_and_independent():
    base = fnx.from_numpy(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    view = fnx.from_numpy(base.numpy()[:, ::2])
    z = fnx.zeros_like(view)
    assert z.shape == (2, 2) and z.is_contiguous()
    np.testing.assert_array_equal(to_numpy(base), np.arange(6.0).reshape(2, 3))


def test_empty_strided():
    t = fnx.empty_strided((2, 3), (1, 2))
    assert t.shape == (2, 3) and t.stride() == (1, 2) and t.dtype is fnx.float32
    assert fnx.empty_strided((0, 3), (3, 1)).shape == (0, 3)
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        fnx.empty_strided((2, 3), (1,))


# ---------------------------------------------------------------------------- ranges

@pytest.mark.parametrize("args", [(5,), (2, 9), (2, 9, 3), (10, 0, -3), (-4, 4, 2), (0,)])
def test_arange_ints(args):
    t = fnx.arange(*args)
    assert t.dtype is fnx.int64
    np.testing.assert_array_equal(to_numpy(t), np.arange(*args, dtype=np.int64))


@pytest.mark.parametrize("args", [(2.5,), (0, 1, 0.1), (1, 2, 0.25), (5.0, 1.0, -0.5),
                                  (0, 1.0), (-1, 1, 0.3)])
def test_arange_floats(args):
    t = fnx.arange(*args)
    assert t.dtype is fnx.float32
    np.testing.assert_allclose(to_numpy(t), np.arange(*args, dtype=np.float64).astype(np.float32),
                               rtol=0, atol=1e-6)


def test_arange_dtype_and_overloads():
    t = fnx.arange(5, dtype=fnx.float64)
    assert t.dtype is fnx.float64
    np.testing.assert_array_equal(to_numpy(t), np.arange(5.0))
    assert fnx.arange(0, 10, 3, dtype=fnx.int32).dtype is fnx.int32
    assert aten.arange.default(4).dtype is fnx.int64
    np.testing.assert_array_equal(to_numpy(aten.arange.start(2, 5)), [2, 3, 4])
    np.testing.assert_array_equal(to_numpy(aten.arange.start_step(0, 1, 0.5)), [0.0, 0.5])
    assert fnx.arange(fnx.tensor(3)).dtype is fnx.int64


def test_arange_errors():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        fnx.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="upper bound and larger bound inconsistent with "
                                           "step sign"):
        fnx.arange(0, 5, -1)
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        fnx.arange(5, 0, 0.5)
    with pytest.raises(RuntimeError, match="unsupported range"):
        fnx.arange(0, float("inf"))
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        fnx.arange(0, 5, 0.5, dtype=fnx.int64)        # the step truncates to 0
    with pytest.raises(RuntimeError, match="\"arange_cpu\" not implemented for 'Bool'"):
        fnx.arange(3, dtype=fnx.bool)
    with pytest.raises(RuntimeError, match="does not fit in fnx.int8"):
        fnx.arange(0, 300, dtype=fnx.int8)


def test_arange_integer_dtype_truncates_float_arguments():
    t = fnx.arange(0.5, 3.5, 1, dtype=fnx.int64)
    assert t.dtype is fnx.int64
    np.testing.assert_array_equal(to_numpy(t), [0, 1, 2])
    t = fnx.arange(0, 2.5, 1, dtype=fnx.int32)
    assert t.dtype is fnx.int32
    np.testing.assert_array_equal(to_numpy(t), [0, 1, 2])


@pytest.mark.parametrize("start,end,steps", [(0, 1, 5), (-2, 3, 7), (1, 0, 4), (3, 3, 3),
                                             (0, 10, 1), (0, 1, 0), (0.5, 7.25, 100)])
def test_linspace(start, end, steps):
    t = fnx.linspace(start, end, steps)
    assert t.dtype is fnx.float32 and t.shape == (steps,)
    np.testing.assert_allclose(to_numpy(t), np.linspace(start, end, steps), rtol=1e-6, atol=1e-6)
    if steps > 1:
        assert to_numpy(t)[-1] == np.float32(end)       # symmetric fill: the end is exact


def test_linspace_dtypes_and_errors():
    t = fnx.linspace(0, 10, 4, dtype=fnx.int64)
    assert t.dtype is fnx.int64
    np.testing.assert_array_equal(to_numpy(t), [0, 3, 6, 10])
    assert fnx.linspace(0, 1, 3, dtype=fnx.float64).dtype is fnx.float64
    assert fnx.linspace(0, 1j, 3).dtype is fnx.complex64
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        fnx.linspace(0, 1, -1)


def test_logspace():
    np.testing.assert_allclose(to_numpy(fnx.logspace(0, 3, 4)), np.logspace(0, 3, 4), rtol=1e-6)
    t = fnx.logspace(0, 4, 5, base=2.0, dtype=fnx.int64)
    assert t.dtype is fnx.int64
    np.testing.assert_array_equal(to_numpy(t), [1, 2, 4, 8, 16])


def test_eye():
    t = fnx.eye(3)
    assert t.dtype is fnx.float32
    np.testing.assert_array_equal(to_numpy(t), np.eye(3, dtype=np.float32))
    t = fnx.eye(2, 4, dtype=fnx.bool)
    assert t.dtype is fnx.bool and t.shape == (2, 4)
    np.testing.assert_array_equal(to_numpy(t), np.eye(2, 4, dtype=bool))
    assert fnx.eye(0).shape == (0, 0)
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        fnx.eye(-1)
    with pytest.raises(RuntimeError, match="m must be greater or equal to 0, got -2"):
        fnx.eye(2, -2)


# ---------------------------------------------------------------------------- BackendSelect

FACTORIES = ["empty.memory_format", "empty_strided", "zeros", "ones", "full",
             "arange.start_step", "arange", "linspace", "eye", "eye.m", "scalar_tensor",
             "rand", "randn", "randint.low", "randperm", "normal.float_float"]


@pytest.mark.parametrize("name", FACTORIES)
def test_factories_have_backend_select_kernels(name):
    op = fnx.dispatch.get_op("aten::" + name)
    assert DispatchKey.BackendSelect in op.kernels
    assert "factory" in op.tags


def test_like_ops_dispatch_on_self():
    assert DispatchKey.BackendSelect not in aten.zeros_like.default.kernels
    assert [a.name for a in aten.full_like.default.schema.tensor_arguments] == ["self"]


@pytest.mark.parametrize("dev", ["meta", fnx.device("meta"), "meta:0"])
def test_meta_device(dev):
    t = fnx.zeros(2, 3, device=dev)
    assert t.device.type == "meta" and t.shape == (2, 3) and t.dtype is fnx.float32
    assert fnx.full((4,), 1, device=dev).dtype is fnx.int64
    assert fnx.arange(0, 10, 2, device=dev).shape == (5,)
    assert fnx.eye(2, 5, device=dev).shape == (2, 5)
    assert fnx.linspace(0, 1, 7, device=dev).shape == (7,)
    assert fnx.empty_strided((2, 2), (1, 2), device=dev).is_meta


def test_meta_device_runs_the_same_checks():
    with pytest.raises(RuntimeError, match="negative dimension"):
        fnx.zeros(-1, device="meta")
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        fnx.arange(0, 1, 0, device="meta")


def test_cpu_device_forms():
    for dev in (None, "cpu", fnx.device("cpu"), "cpu:0"):
        t = fnx.ones(2, device=dev)
        assert t.device is fnx.device("cpu")


def test_like_ops_follow_self_or_device_argument():
    m = fnx.zeros(3, 2, device="meta", dtype=fnx.int32)
    z = fnx.zeros_like(m)
    assert z.is_meta and z.shape == (3, 2) and z.dtype is fnx.int32
    c = fnx.ones(2)
    assert fnx.full_like(c, 2.0, device="meta").is_meta
    assert fnx.zeros_like(c, device="meta").is_meta
    assert fnx.empty_like(c, device=fnx.device("meta")).is_meta
    assert c.new_zeros(3, device="meta").is_meta


@pytest.mark.skipif(fnx.cuda.is_available(), reason="a GPU (or FNX_CUDA_ON_CPU=1) is present")
def test_cuda_without_a_gpu_is_a_clear_error():
    with pytest.raises(RuntimeError, match=r"no JAX GPU backend.*fnx\[cuda12\]"):
        fnx.zeros(2, device="cuda")
    with pytest.raises(RuntimeError, match="no JAX GPU backend"):
        fnx.arange(3, device=fnx.device("cuda", 0))


def test_bad_device_strings():
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, meta"):
        fnx.zeros(2, device="tpu")
    with pytest.raises(TypeError):
        fnx.zeros(2, device=2.5)


def test_privateuse1_factories_reach_their_backend():
    seen = {}

    def kernel(ks, size, *, dtype=None, layout=None, device=None, pin_memory=None):
        seen["device"], seen["ks"] = device, ks
        return "from PrivateUse1"
    op = aten.zeros.default
    op.register(DispatchKey.PrivateUse1, kernel)
    try:
        out = fnx.ops.aten.zeros.default([2], device=f"{privateuse1_name()}:0")
    finally:
        op.unregister(DispatchKey.PrivateUse1)
    assert out == "from PrivateUse1"
    assert seen["device"] == fnx.device(privateuse1_name(), 0)
    assert seen["ks"] & (1 << DispatchKey.PrivateUse1)
    assert not seen["ks"] & (1 << DispatchKey.BackendSelect)


def test_scalar_tensor_is_a_factory():
    assert aten.scalar_tensor.default(3).dtype is fnx.int64
    assert fnx.scalar_tensor(3).dtype is fnx.float32
    assert aten.scalar_tensor.default(2.5, device="meta").is_meta


# ---------------------------------------------------------------------------- new_*

def test_new_methods_inherit_dtype_and_device():
    x = fnx.tensor([1, 2], dtype=fnx.int8)
    z = x.new_zeros(2, 3)
    assert z.dtype is fnx.int8 and z.shape == (2, 3)
    np.testing.assert_array_equal(to_numpy(z), np.zeros((2, 3), np.int8))
    o = x.new_ones((2,), dtype=fnx.float64)
    assert o.dtype is fnx.float64
    np.testing.assert_array_equal(to_numpy(o), [1.0, 1.0])
    f = x.new_full((3,), 7)
    assert f.dtype is fnx.int8
    np.testing.assert_array_equal(to_numpy(f), [7, 7, 7])
    assert x.new_empty([4]).dtype is fnx.int8
    assert x.new_empty_strided((2, 2), (1, 2)).stride() == (1, 2)
    t = fnx.zeros(1).new_tensor([1, 2])
    assert t.dtype is fnx.float32
    np.testing.assert_array_equal(to_numpy(t), [1.0, 2.0])
    assert x.new_tensor([1.5], dtype=fnx.float64).dtype is fnx.float64
    g = fnx.zeros(1).new_zeros(2, requires_grad=True)
    assert g.requires_grad


def test_new_ops_are_aten_ops():
    x = fnx.tensor([1.0])
    np.testing.assert_array_equal(to_numpy(aten.new_full.default(x, [2], 3)), [3.0, 3.0])
    assert aten.new_zeros.default(x, [2], dtype=fnx.int32).dtype is fnx.int32


# ---------------------------------------------------------------------------- decompositions

@pytest.mark.parametrize("op,args,kw", [
    (aten.linspace.default, (0, 1, 5), {}), (aten.linspace.default, (-2, 3, 7), {}),
    (aten.linspace.default, (1, 0, 4), {}), (aten.linspace.default, (3, 3, 1), {}),
    (aten.linspace.default, (0, 1, 0), {}), (aten.linspace.default, (0.5, 7.25, 100), {}),
    (aten.linspace.default, (0, 10, 4), {"dtype": fnx.int64}),
    (aten.linspace.default, (0, 1, 6), {"dtype": fnx.float64}),
    (aten.logspace.default, (0, 3, 4), {}), (aten.logspace.default, (0, 4, 5, 2.0),
                                             {"dtype": fnx.int64}),
    (aten.eye.default, (3,), {}), (aten.eye.m, (2, 4), {"dtype": fnx.bool}),
    (aten.eye.m, (3, 1), {"dtype": fnx.int32}), (aten.eye.default, (0,), {}),
    (aten.zeros.default, ([2, 3],), {"dtype": fnx.int8}), (aten.ones.default, ([2],), {}),
    (aten.arange.default, (5,), {}), (aten.arange.start, (1, 4), {"dtype": fnx.float64}),
])
def test_decompositions_match_cpu_kernels(op, args, kw):
    expected = op(*args, **kw)
    got = op.decomposition(*args, **kw)
    assert got.dtype is expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(to_numpy(got).astype(np.float64),
                               to_numpy(expected).astype(np.float64),
                               rtol=1e-6, atol=1e-6)


def test_like_and_new_decompositions():
    x = fnx.tensor([[1, 2, 3]], dtype=fnx.int16)
    for op, fill in [(aten.zeros_like.default, 0), (aten.ones_like.default, 1)]:
        y = op.decomposition(x)
        assert y.dtype is fnx.int16
        np.testing.assert_array_equal(to_numpy(y), np.full((1, 3), fill))
    assert aten.empty_like.default.decomposition(x, dtype=fnx.float64).dtype is fnx.float64
    y = aten.new_full.default.decomposition(x, [2], 4)
    assert y.dtype is fnx.int16
    np.testing.assert_array_equal(to_numpy(y), [4, 4])


def test_decompositions_trace_on_meta():
    meta = fnx.device("meta")
    assert aten.linspace.default.decomposition(0, 1, 9, device=meta).shape == (9,)
    e = aten.eye.m.decomposition(2, 5, device=meta, dtype=fnx.int32)
    assert e.is_meta and e.shape == (2, 5) and e.dtype is fnx.int32


def test_tensor_from_range():
    # PyTorch reads any sequence as data, range included
    t = fnx.tensor(range(2, 5))
    assert t.dtype is fnx.int64 and t.tolist() == [2, 3, 4]
    assert fnx.tensor([range(2), range(2, 4)]).tolist() == [[0, 1], [2, 3]]
    assert fnx.tensor(range(3), dtype=fnx.float64).tolist() == [0.0, 1.0, 2.0]
    assert fnx.tensor(range(0)).dtype is fnx.get_default_dtype()
