"""The out-of-tree backend example (examples/custom_backend.py): a PrivateUse1 device
registered from outside fnx, checked against NumPy."""
import importlib.util
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import fnx
from fnx.core import device as _device
from fnx.dispatch import DispatchKey

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "custom_backend.py"


def _load():
    spec = importlib.util.spec_from_file_location("fnx_example_custom_backend", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


mydev = _load()
PU1 = DispatchKey.PrivateUse1


@pytest.fixture
def backend():
    """The example's kernels, registered for one test and removed afterwards."""
    old_name = _device.privateuse1_name()
    lib = mydev.register()
    yield lib
    lib._destroy()
    fnx.utils.rename_privateuse1_backend(old_name)


def host(t):
    assert t.device.type == "mydev"
    return t.to("cpu").numpy()


def test_round_trip_through_to(backend):
    a = np.array([[1.5, -2.0], [3.25, 4.0]], np.float32)
    x = fnx.tensor(a)
    d = x.to("mydev")
    assert d.device == fnx.device("mydev:0") and d.device.index == 0
    assert d.dtype is fnx.float32 and d.shape == (2, 2)
    assert isinstance(d._data, mydev.MyDevArray)
    assert PU1 in d._keyset
    assert d.to("mydev") is d                          # already there: no copy
    back = d.to("cpu")
    assert back.device == fnx.device("cpu") and back.dtype is fnx.float32
    np.testing.assert_array_equal(back.numpy(), a)
    assert back.numpy() is not a
    # dtype change on the way, and a device -> device copy with a new dtype
    i = x.to("mydev", fnx.int32)
    assert i.dtype is fnx.int32
    np.testing.assert_array_equal(host(i), a.astype(np.int32))
    h = d.to(fnx.float64)
    assert h.device.type == "mydev" and h.dtype is fnx.float64
    np.testing.assert_array_equal(host(h), a.astype(np.float64))


def test_factory_with_device(backend):
    t = fnx.tensor([1, 2, 3], device="mydev")
    assert t.device.type == "mydev" and t.dtype is fnx.int64
    np.testing.assert_array_equal(host(t), np.array([1, 2, 3]))
    e = fnx.ops.aten.empty.memory_format([2, 3], dtype=fnx.float16, device="mydev")
    assert e.device.type == "mydev" and e.shape == (2, 3) and e.dtype is fnx.float16


def test_add_mul_against_numpy(backend):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    da, db = fnx.tensor(a).to("mydev"), fnx.tensor(b).to("mydev")
    s = da + db
    assert s.device.type == "mydev" and s.dtype is fnx.float32
    np.testing.assert_allclose(host(s), a + b, rtol=1e-6)
    np.testing.assert_allclose(host(da * db), a * b, rtol=1e-6)
    np.testing.assert_allclose(host(fnx.ops.aten.add.Tensor(da, db, alpha=3)), a + 3 * b,
                               rtol=1e-6)
    np.testing.assert_allclose(host(da * 2.0), a * 2, rtol=1e-6)
    # broadcasting and a 0-dim CPU tensor beside a device tensor (allowed, as in PyTorch)
    row = fnx.tensor(b[0]).to("mydev")
    np.testing.assert_allclose(host(da + row), a + b[0], rtol=1e-6)
    np.testing.assert_allclose(host(da * fnx.tensor(0.5)), a * 0.5, rtol=1e-6)


def test_promotion_on_the_device(backend):
    i = fnx.tensor([1, 2, 3], device="mydev")
    f = i + 0.5
    assert f.dtype is fnx.float32
    np.testing.assert_array_equal(host(f), np.array([1.5, 2.5, 3.5], np.float32))
    assert (i * 2).dtype is fnx.int64
    np.testing.assert_array_equal(host(i * 2), np.array([2, 4, 6]))


def test_sum_against_numpy(backend):
    if not hasattr(fnx.ops.aten, "sum"):
        pytest.skip("aten::sum is not defined")
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    d = fnx.tensor(a).to("mydev")
    total = d.sum()
    assert total.device.type == "mydev" and total.shape == () and total.dtype is fnx.float32
    np.testing.assert_allclose(total.item(), a.sum(), rtol=1e-6)
    np.testing.assert_allclose(host(d.sum(0)), a.sum(0), rtol=1e-6)
    np.testing.assert_allclose(host(d.sum(1, keepdim=True)), a.sum(1, keepdims=True),
                               rtol=1e-6)
    b = fnx.tensor([True, False, True], device="mydev").sum()
    assert b.dtype is fnx.int64 and b.item() == 2


def test_copy_both_ways(backend):
    d = fnx.tensor([0.0, 0.0, 0.0], device="mydev")
    v = d._version
    copy_ = fnx.ops.aten.copy_.default
    assert copy_(d, fnx.tensor([1.0, 2.0, 3.0])) is d   # host -> device
    assert d._version == v + 1                         # ADInplaceOrView bumped it
    np.testing.assert_array_equal(host(d), np.array([1, 2, 3], np.float32))
    c = fnx.tensor([9.0, 9.0, 9.0])
    copy_(c, d)                                        # device -> host, dispatched to mydev
    assert c.tolist() == [1.0, 2.0, 3.0]


def test_unregistered_op_raises_a_clear_error(backend):
    d = fnx.tensor([1.0, 2.0], device="mydev")
    with pytest.raises(NotImplementedError) as ei:
        fnx.exp(d)
    msg = str(ei.value)
    assert "aten::exp" in msg and "'PrivateUse1'" in msg and "CPU" in msg


def test_mixed_devices_raise(backend):
    d = fnx.tensor([1.0, 2.0], device="mydev")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        d + fnx.tensor([1.0, 2.0])


def test_printing_goes_through_to_cpu(backend):
    d = fnx.tensor([1.0, 2.5], device="mydev")
    text = repr(d)
    assert "device='mydev:0'" in text and "2.5" in text
    with pytest.raises(TypeError, match="not host-visible"):
        np.asarray(d._data)


def test_destroy_unregisters_the_kernels():
    old_name = _device.privateuse1_name()
    lib = mydev.register()
    try:
        assert fnx.ops.aten.add.Tensor.has_kernel_for(PU1)
    finally:
        lib._destroy()
        fnx.utils.rename_privateuse1_backend(old_name)
    assert not fnx.ops.aten.add.Tensor.has_kernel_for(PU1)
    assert not fnx.ops.aten._to_copy.default.has_kernel_for(PU1)


def test_main_runs_and_prints(capsys):
    old_name = _device.privateuse1_name()
    try:
        res = mydev.main()
    finally:
        fnx.utils.rename_privateuse1_backend(old_name)
    out = capsys.readouterr().out
    assert "device='mydev:0'" in out and "NotImplementedError" in out
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    np.testing.assert_array_equal(res["back"].numpy(), x + x * 10)
    assert res["back"].device == fnx.device("cpu")
    if res["total"] is not None:
        assert res["total"].dtype is fnx.float32
    assert "aten::exp" in str(res["missing"])
    assert not fnx.ops.aten.mul.Tensor.has_kernel_for(PU1)   # main() cleaned up


def test_example_runs_as_a_script():
    r = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "back on the cpu" in r.stdout and "[33., 44.]]" in r.stdout
