"""Lazy modules (fnx.nn.modules.lazy): uninitialized parameters take their shapes from the
first input, keep their identity (an optimizer made before trains them), get the eager
module's initialization, and load from a state dict. References: NumPy convolutions and
the eager modules' PyTorch init bounds."""
import math
import pickle

import numpy as np
import pytest

import fnx
from fnx import nn
from fnx.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy


def _conv2d_np(x, w, b):
    """Cross-correlation, stride 1, no padding: (N, C, H, W) x (O, C, kh, kw)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1))
    for i in range(h - kh + 1):
        for j in range(wd - kw + 1):
            out[:, :, i, j] = np.einsum("nckl,ockl->no", x[:, :, i:i + kh, j:j + kw], w)
    return out + b[None, :, None, None]


def test_lazy_conv_materializes_from_the_first_input_and_trains():
    fnx.manual_seed(0)
    m = nn.LazyConv2d(4, 3).double()
    assert repr(m) == "LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1))"
    assert m.has_uninitialized_params() and is_lazy(m.weight)
    w0, b0 = m.weight, m.bias
    opt = fnx.optim.SGD(m.parameters(), lr=0.1)
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5))
    y = m(fnx.tensor(x))
    assert type(m) is nn.Conv2d and m.in_channels == 3
    assert m.weight is w0 and m.bias is b0 and tuple(w0.shape) == (4, 3, 3, 3)
    assert w0.dtype is fnx.float64 and type(w0) is nn.Parameter
    W, b = w0.detach().numpy().copy(), b0.detach().numpy().copy()
    bound = 1 / math.sqrt(3 * 3 * 3)          # PyTorch's bounds for fan_in 27
    assert 0 < np.abs(W).max() <= bound and np.abs(b).max() <= bound
    np.testing.assert_allclose(y.detach().numpy(), _conv2d_np(x, W, b), rtol=1e-10)
    y.sum().backward()
    opt.step()
    assert not np.allclose(m.weight.detach().numpy(), W)


def test_lazy_init_draws_what_the_eager_module_draws():
    fnx.manual_seed(3)
    lazy = nn.LazyConvTranspose1d(4, 2, stride=2, groups=2)
    lazy(fnx.zeros(1, 6, 3))
    fnx.manual_seed(3)
    eager = nn.ConvTranspose1d(6, 4, 2, stride=2, groups=2)
    assert tuple(lazy.weight.shape) == (6, 2, 2) == tuple(eager.weight.shape)
    np.testing.assert_array_equal(lazy.weight.detach().numpy(), eager.weight.detach().numpy())
    np.testing.assert_array_equal(lazy.bias.detach().numpy(), eager.bias.detach().numpy())


@pytest.mark.parametrize("cls, shape, features", [
    (nn.LazyBatchNorm1d, (4, 3), 3), (nn.LazyBatchNorm1d, (4, 3, 2), 3),
    (nn.LazyBatchNorm2d, (2, 5, 3, 3), 5), (nn.LazyInstanceNorm1d, (2, 6, 4), 6),
    (nn.LazyInstanceNorm1d, (6, 4), 6), (nn.LazyInstanceNorm2d, (2, 3, 4, 4), 3)])
def test_lazy_norms(cls, shape, features):
    affine = cls is not nn.LazyInstanceNorm1d or len(shape) == 2
    m = cls(affine=affine, track_running_stats=True)
    assert isinstance(m.running_mean, UninitializedBuffer)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    y = m(fnx.tensor(x))
    assert m.num_features == features and not any(map(is_lazy, (*m.parameters(), *m.buffers())))
    assert m.running_var.shape == (features,) and type(m.running_mean) is fnx.Tensor
    if affine:
        np.testing.assert_array_equal(m.weight.detach().numpy(), np.ones(features))
    if cls is nn.LazyBatchNorm1d and len(shape) == 2:
        ref = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
        np.testing.assert_allclose(y.detach().numpy(), ref, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(m.running_mean.numpy(), 0.1 * x.mean(0), rtol=1e-5)


def test_state_dict_load_materializes():
    fnx.manual_seed(0)
    trained = nn.Sequential(nn.LazyLinear(3), nn.LazyBatchNorm1d())
    trained(fnx.randn(4, 5))
    fresh = nn.Sequential(nn.LazyLinear(3), nn.LazyBatchNorm1d())
    result = fresh.load_state_dict(trained.state_dict())
    assert not result.missing_keys and not result.unexpected_keys
    assert tuple(fresh[0].weight.shape) == (3, 5) and fresh[1].running_mean.shape == (3,)
    for a, b in zip(fresh.state_dict().values(), trained.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    x = fnx.randn(2, 5)
    fresh.eval()
    trained.eval()
    np.testing.assert_array_equal(fresh(x).detach().numpy(), trained(x).detach().numpy())
    assert type(fresh[0]) is nn.Linear          # became its class at the first call


def test_uninitialized_parameters_refuse_shape_and_pickling():
    p = UninitializedParameter(dtype=fnx.float64)
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        p.shape
    with pytest.raises(RuntimeError, match="Can't pickle an uninitialized parameter"):
        pickle.dumps(p)
    p.materialize((2, 2))
    assert type(p) is nn.Parameter and p.dtype is fnx.float64 and p.requires_grad


def test_lazy_errors():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(fnx.ones(1, 3, 4, 4))
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.LazyConv2d(3, 3, groups=2)
    with pytest.raises(RuntimeError, match="Expected 3D .unbatched. or 4D .batched. input"):
        nn.LazyConv2d(4, 3)(fnx.ones(3, 4))


def test_compiled_lazy_module_initializes_eagerly_then_compiles():
    fnx.manual_seed(0)
    model = nn.Sequential(nn.LazyLinear(3), nn.ReLU(), nn.LazyLinear(1))
    compiled = fnx.compile(model)
    x = np.random.default_rng(2).standard_normal((4, 5)).astype(np.float32)
    y = compiled(fnx.tensor(x))                 # the first call runs eagerly: shapes, init
    assert type(model[0]) is nn.Linear and tuple(model[2].weight.shape) == (1, 3)
    w1, b1, w2, b2 = (p.detach().numpy().astype(np.float64) for p in model.parameters())
    ref = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
    np.testing.assert_allclose(y.detach().numpy(), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(compiled(fnx.tensor(x)).detach().numpy(), ref, rtol=1e-5,
                               atol=1e-6)
