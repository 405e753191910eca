"""The runtime switches at fnx's top level (fnx/api/runtime.py, the default device in
fnx/core/device.py): each set/get round trip, PyTorch's errors, factories honouring the
default device, the generator state reproducing the same numbers."""
import os
import warnings

import numpy as np
import pytest

import fnx


@pytest.fixture
def restore():
    state = dict(fnx.api.runtime._state)
    dtype = fnx.get_default_dtype()
    anomaly = (fnx.is_anomaly_enabled(), fnx.is_anomaly_check_nan_enabled())
    yield
    fnx.api.runtime._state.update(state)
    fnx.set_anomaly_enabled(*anomaly)
    fnx.set_default_dtype(dtype)
    fnx.set_default_device(None)


def test_threads(restore):
    assert fnx.get_num_threads() == (os.cpu_count() or 1)
    fnx.set_num_threads(3)
    assert fnx.get_num_threads() == 3
    for bad in (0, -1, 1.5):
        with pytest.raises(RuntimeError, match="positive integer"):
            fnx.set_num_threads(bad)
    assert fnx.get_num_threads() == 3
    fnx.api.runtime._state["interop_set"] = False
    fnx.set_num_interop_threads(2)
    assert fnx.get_num_interop_threads() == 2
    with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
        fnx.set_num_interop_threads(4)
    assert fnx.init_num_threads() is None


def test_deterministic_modes(restore):
    assert not fnx.are_deterministic_algorithms_enabled()
    fnx.use_deterministic_algorithms(True, warn_only=True)
    assert fnx.are_deterministic_algorithms_enabled()
    assert fnx.is_deterministic_algorithms_warn_only_enabled()
    assert fnx.get_deterministic_debug_mode() == 1
    fnx.set_deterministic_debug_mode("error")
    assert fnx.get_deterministic_debug_mode() == 2
    assert not fnx.is_deterministic_algorithms_warn_only_enabled()
    fnx.set_deterministic_debug_mode(0)
    assert not fnx.are_deterministic_algorithms_enabled()
    with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
        fnx.set_deterministic_debug_mode(3)
    with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
        fnx.set_deterministic_debug_mode("loud")
    with pytest.raises(TypeError):
        fnx.use_deterministic_algorithms(1)


def test_default_device_reaches_factories(restore):
    assert fnx.get_default_device() == fnx.device("cpu")
    fnx.set_default_device("meta")
    assert fnx.get_default_device() == fnx.device("meta")
    for t in (fnx.zeros(2), fnx.ones(2, 3), fnx.empty(1), fnx.full((2,), 1.0),
              fnx.arange(3), fnx.randn(2), fnx.tensor([1.0, 2.0]), fnx.eye(2)):
        assert t.device.type == "meta", t
    assert fnx.zeros(2, device="cpu").device.type == "cpu"
    x = fnx.zeros(2, device="cpu")
    assert fnx.zeros_like(x).device.type == "cpu"          # *_like follow their input
    fnx.set_default_device(None)
    assert fnx.zeros(1).device.type == "cpu"


def test_set_default_tensor_type(restore):
    with pytest.warns(UserWarning, match="deprecated"):
        fnx.set_default_tensor_type("torch.DoubleTensor")
    assert fnx.get_default_dtype() is fnx.float64 and fnx.ones(1).dtype is fnx.float64
    with pytest.warns(UserWarning):
        fnx.set_default_tensor_type(fnx.float32)
    assert fnx.ones(1).dtype is fnx.float32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError, match="invalid type"):
            fnx.set_default_tensor_type("torch.NopeTensor")
        with pytest.raises(TypeError, match="floating-point"):
            fnx.set_default_tensor_type("torch.LongTensor")
        with pytest.raises(TypeError, match="invalid type"):
            fnx.set_default_tensor_type("torch.cuda.gpu.FloatTensor")
        fnx.set_default_tensor_type(fnx.DoubleTensor)       # a legacy type class
        assert fnx.get_default_dtype() is fnx.float64
        fnx.set_default_tensor_type(fnx.FloatTensor)
    assert fnx.get_default_dtype() is fnx.float32 and fnx.zeros(1).device.type == "cpu"


def test_rng_state_round_trip():
    fnx.manual_seed(123)
    state = fnx.get_rng_state()
    assert state.dtype is fnx.uint8 and state.ndim == 1
    a = fnx.rand(5).numpy().copy()
    b = fnx.randn(3).numpy().copy()
    fnx.set_rng_state(state)
    np.testing.assert_array_equal(fnx.rand(5).numpy(), a)
    np.testing.assert_array_equal(fnx.randn(3).numpy(), b)
    with pytest.raises(TypeError, match="uint8"):
        fnx.set_rng_state(state.float())


def test_flags(restore):
    assert not fnx.is_warn_always_enabled()
    fnx.set_warn_always(True)
    assert fnx.is_warn_always_enabled()
    assert fnx.set_flush_denormal(True) is False
    assert not fnx.is_anomaly_enabled() and fnx.is_anomaly_check_nan_enabled()
    fnx.set_anomaly_enabled(True, check_nan=False)
    assert fnx.is_anomaly_enabled() and not fnx.is_anomaly_check_nan_enabled()
    fnx.set_anomaly_enabled(False)


def test_autocast_device_getters_follow_fnx_autocast():
    assert fnx.get_autocast_cpu_dtype() is fnx.get_autocast_dtype("cpu")
    assert fnx.get_autocast_gpu_dtype() is fnx.get_autocast_dtype("cuda")
    assert not fnx.is_autocast_cpu_enabled()
    with fnx.autocast("cpu", dtype=fnx.float16):
        assert fnx.is_autocast_cpu_enabled()
        assert fnx.get_autocast_cpu_dtype() is fnx.float16
    assert not fnx.is_autocast_cpu_enabled()
    old = fnx.get_autocast_cpu_dtype()
    fnx.set_autocast_cpu_enabled(True)
    fnx.set_autocast_cpu_dtype(fnx.float16)
    try:
        assert fnx.is_autocast_enabled("cpu") and fnx.get_autocast_dtype("cpu") is fnx.float16
    finally:
        fnx.set_autocast_cpu_enabled(False)
        fnx.set_autocast_cpu_dtype(old)
    old_gpu = fnx.get_autocast_gpu_dtype()
    fnx.set_autocast_gpu_dtype(fnx.bfloat16)
    assert fnx.get_autocast_dtype("cuda") is fnx.bfloat16
    fnx.set_autocast_gpu_dtype(old_gpu)
    # no ipu/xla: disabled, with PyTorch's defaults
    assert fnx.get_autocast_ipu_dtype() is fnx.float16
    assert fnx.get_autocast_xla_dtype() is fnx.bfloat16
    assert not fnx.is_autocast_ipu_enabled() and not fnx.is_autocast_xla_enabled()


def test_queries():
    assert fnx.typename(fnx.ones(1)) == "fnx.FloatTensor"
    assert fnx.typename(fnx.tensor([1])) == "fnx.LongTensor"
    assert fnx.typename(3) == "int" and fnx.typename(np.zeros(1)) == "numpy.ndarray"
    assert fnx.typename(fnx.nn.Linear) == "fnx.nn.modules.linear.Linear"
    assert fnx.get_device(fnx.ones(1)) == -1
    assert fnx.get_device_module("cpu") is fnx.cpu and fnx.get_device_module() is fnx.cpu
    assert fnx.get_device_module(fnx.device("cuda", 0)) is fnx.cuda
    with pytest.raises(RuntimeError, match="does not have a corresponding module"):
        fnx.get_device_module("nodevice")
    assert not fnx.is_storage(fnx.ones(1)) and not fnx.is_storage(b"")
    with fnx.inference_mode():
        t = fnx.ones(1)
    assert fnx.is_inference(t) is False          # fnx has no separate inference tensors
    with pytest.raises(TypeError):
        fnx.is_inference(3)
    assert fnx.is_distributed(fnx.ones(1)) is False
    assert t.is_inference() is False and t.is_distributed() is False


def test_anomaly_mode_reports_the_node_that_made_a_nan(restore):
    x = fnx.tensor([0.0, 4.0], requires_grad=True)
    (x.sqrt() * 0).sum().backward()                  # off: the NaN just lands in .grad
    assert np.isnan(x.grad.numpy()[0])
    x.grad = None
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        guard = fnx.autograd.detect_anomaly()
    with guard:
        assert fnx.is_anomaly_enabled()
        with pytest.raises(RuntimeError,
                           match="Function 'SqrtBackward0' returned nan values in its 0th output"):
            (x.sqrt() * 0).sum().backward()
    assert not fnx.is_anomaly_enabled()
    with fnx.autograd.set_detect_anomaly(True, check_nan=False):
        (x.sqrt() * 0).sum().backward()             # the NaN check is off
    fnx.set_anomaly_enabled(True)
    y = fnx.tensor([1.0, 4.0], requires_grad=True)
    y.sqrt().sum().backward()                        # no NaN: runs as usual
    np.testing.assert_allclose(y.grad.numpy(), [0.5, 0.25])

    @fnx.autograd.detect_anomaly()
    def step():
        z = fnx.tensor([-1.0], requires_grad=True)
        z.log().sum().backward()
        return z.grad
    fnx.set_anomaly_enabled(False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(step().numpy(), [-1.0])   # log'(-1) = -1, not NaN
    assert not fnx.is_anomaly_enabled()
