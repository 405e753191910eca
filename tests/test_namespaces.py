"""The namespaces PyTorch programs import at the top: fnx.accelerator, the torch.backends-style
flags (allow_tf32 changes the precision fnx's programs compute float32 products with),
fnx.nn.modules.<file>.<Class> paths, fnx.nn.parallel and fnx.onnx."""
import importlib

import jax
import numpy as np
import pytest

import fnx
from fnx.lower import precision
from fnx.nn.parallel import DistributedDataParallel as DDP


def test_accelerator_matches_cuda():
    acc = fnx.accelerator.current_accelerator()
    assert fnx.accelerator.is_available() == fnx.cuda.is_available()
    if fnx.cuda.is_available():
        assert acc == fnx.device("cuda") and fnx.accelerator.device_count() >= 1
        assert fnx.accelerator.current_device_index() == fnx.cuda.current_device()
    else:
        assert acc is None and fnx.accelerator.device_count() == 0
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none "
                                               "is available"):
            fnx.accelerator.current_device_index()


@pytest.fixture
def restore_precision():
    saved = {k: precision.get_precision(k) for k in ("matmul", "conv")}
    jax_saved = jax.config.jax_default_matmul_precision
    yield
    for k, v in saved.items():
        precision.set_precision(k, v)       # (empties the caches if it changes)
    jax.config.update("jax_default_matmul_precision", jax_saved)


def test_backend_flags_defaults_and_tf32_mapping(restore_precision):
    assert fnx.backends.cuda.matmul.allow_tf32 is False         # PyTorch's default
    assert fnx.backends.cudnn.allow_tf32 is False                # fnx: full float32 convs
    assert (fnx.backends.cudnn.benchmark, fnx.backends.cudnn.deterministic,
            fnx.backends.cudnn.enabled) == (False, False, True)
    assert fnx.backends.mps.is_available() is False and fnx.backends.mps.is_built() is False
    assert fnx.backends.cudnn.is_available() == fnx.cuda.is_available()
    fnx.backends.cuda.matmul.allow_tf32 = True
    assert fnx.backends.cuda.matmul.allow_tf32 is True
    assert precision.get_precision("matmul") == "high"
    assert jax.config.jax_default_matmul_precision == "tensorfloat32"
    assert precision.lax_precision("matmul") == jax.lax.Precision.HIGH
    fnx.backends.cudnn.allow_tf32 = True
    assert precision.lax_precision("conv") == jax.lax.Precision.HIGH
    fnx.backends.cuda.matmul.allow_tf32 = False
    assert jax.config.jax_default_matmul_precision == "float32"
    fnx.backends.cudnn.benchmark = True         # accepted and kept
    assert fnx.backends.cudnn.benchmark is True
    fnx.backends.cudnn.benchmark = False
    with pytest.raises(RuntimeError, match="Invalid precision 'low'"):
        precision.set_precision("matmul", "low")


def test_a_compiled_matmul_uses_the_flag(restore_precision):
    # on CPU every precision is exact float32 arithmetic; the check is that the program
    # compiled after the change is built with it and still computes the product
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((8, 5)).astype(np.float32), rng.standard_normal((5, 3)).astype(
        np.float32)
    f = fnx.compile(lambda x, y: x @ y)
    f(fnx.tensor(a), fnx.tensor(b))
    assert len(f.entries()) == 1
    fnx.backends.cuda.matmul.allow_tf32 = True
    assert len(f.entries()) == 0        # programs built with the old precision are dropped
    got = f(fnx.tensor(a), fnx.tensor(b))
    np.testing.assert_allclose(got.numpy(), a.astype(np.float64) @ b, rtol=2e-3, atol=2e-3)
    fnx.backends.cuda.matmul.allow_tf32 = True      # no change: nothing dropped
    assert len(f.entries()) == 1


# PyTorch's file -> classes under torch.nn.modules.<file>
MODULE_PATHS = {
    "linear": ["Linear", "Identity", "Bilinear"],
    "loss": ["CrossEntropyLoss", "MSELoss", "NLLLoss", "BCEWithLogitsLoss"],
    "conv": ["Conv1d", "Conv2d", "ConvTranspose2d"],
    "activation": ["ReLU", "GELU", "Softmax", "MultiheadAttention"],
    "container": ["Sequential", "ModuleList", "ModuleDict"],
    "sparse": ["Embedding"],
    "normalization": ["LayerNorm", "GroupNorm"],
    "batchnorm": ["BatchNorm1d", "BatchNorm2d"],
    "instancenorm": ["InstanceNorm2d"],
    "dropout": ["Dropout"],
    "pooling": ["MaxPool2d", "AdaptiveAvgPool2d"],
    "flatten": ["Flatten"],
    "module": ["Module"],
}


@pytest.mark.parametrize("file", sorted(MODULE_PATHS))
def test_nn_modules_paths_are_pytorchs(file):
    mod = importlib.import_module(f"fnx.nn.modules.{file}")
    for name in MODULE_PATHS[file]:
        assert getattr(mod, name) is getattr(fnx.nn, name), (file, name)
    # reachable as an attribute after a plain ``import fnx`` too
    assert getattr(fnx.nn.modules, file) is mod


def test_nn_parallel():
    fnx.manual_seed(0)
    inner = fnx.nn.Linear(3, 2)
    dp = fnx.nn.parallel.DataParallel(inner)
    x = fnx.randn(4, 3)
    np.testing.assert_array_equal(dp(x).detach().numpy(), inner(x).detach().numpy())
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]     # PyTorch's keys
    assert fnx.nn.DataParallel is fnx.nn.parallel.DataParallel    # torch.nn.DataParallel
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DDP(inner)


def test_onnx_import_works_and_export_refuses():
    assert fnx.onnx.is_in_onnx_export() is False
    with pytest.raises(NotImplementedError, match="fnx.onnx.export is not supported"):
        fnx.onnx.export(fnx.nn.Linear(2, 2), (fnx.ones(1, 2),), "m.onnx")


def test_set_float32_matmul_precision_is_the_same_setting(restore_precision):
    assert fnx.get_float32_matmul_precision() == "highest"
    fnx.set_float32_matmul_precision("medium")
    assert fnx.backends.cuda.matmul.allow_tf32 is True
    assert jax.config.jax_default_matmul_precision == "bfloat16"
    fnx.backends.cuda.matmul.allow_tf32 = False
    assert fnx.get_float32_matmul_precision() == "highest"
    with pytest.raises(RuntimeError, match="Invalid precision 'fast'"):
        fnx.set_float32_matmul_precision("fast")
