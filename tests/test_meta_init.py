"""Building on the meta device and giving storage later: ``with fnx.device(...)``,
``Module.to_empty``, factories over meta tensors with ``device=``, ``skip_init``; plus
``clip_grads_with_norm_`` and ``convert_conv2d_weight_memory_format``."""
import math

import numpy as np
import pytest

import fnx
from fnx import nn


def test_device_context_sets_the_default_device_and_restores_it():
    with fnx.device("meta") as d:
        assert d == fnx.device("meta") and fnx.zeros(2).device.type == "meta"
        with fnx.device("cpu"):
            assert fnx.zeros(2).device.type == "cpu"
        m = nn.Linear(4, 3)
    assert m.weight.device.type == "meta" and fnx.zeros(1).device.type == "cpu"
    assert fnx.get_default_device() == fnx.device("cpu")


def test_meta_model_gets_storage_then_initialization():
    with fnx.device("meta"):
        model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
    params = list(model.parameters())
    assert model.to_empty(device="cpu") is model
    assert list(model.parameters())[0] is params[0]          # the same objects
    assert all(t.device.type == "cpu" for t in (*model.parameters(), *model.buffers()))
    assert [tuple(p.shape) for p in model.parameters()] == [(3, 4), (3,), (3,), (3,)]
    fnx.manual_seed(0)
    model[0].reset_parameters()
    model[1].reset_parameters()
    bound = 1 / math.sqrt(4)
    w = model[0].weight.detach().numpy()
    assert 0 < np.abs(w).max() <= bound
    np.testing.assert_array_equal(model[1].running_var.numpy(), np.ones(3))
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    assert model(fnx.tensor(x)).shape == (5, 3)


@pytest.mark.parametrize("make", [
    lambda m: fnx.empty_like(m, device="cpu"), lambda m: fnx.zeros_like(m, device="cpu"),
    lambda m: fnx.full_like(m, 2.0, device="cpu"), lambda m: m.new_zeros(2, 3, device="cpu"),
    lambda m: m.new_full((2, 3), 2.0, device="cpu"), lambda m: fnx.rand_like(m, device="cpu")])
def test_factories_over_a_meta_tensor_honor_device(make):
    out = make(fnx.empty(2, 3, device="meta"))
    assert out.device.type == "cpu" and tuple(out.shape) == (2, 3)
    assert isinstance(out.numpy(), np.ndarray)
    assert fnx.empty_like(fnx.empty(2, device="meta")).device.type == "meta"


def test_skip_init():
    m = nn.utils.skip_init(nn.Linear, 5, 2, bias=False)
    assert type(m) is nn.Linear and tuple(m.weight.shape) == (2, 5)
    assert m.weight.device.type == "cpu" and m.bias is None
    with pytest.raises(RuntimeError, match="Expected a Module"):
        nn.utils.skip_init(int)
    with pytest.raises(RuntimeError, match="must support a 'device' arg"):
        nn.utils.skip_init(nn.ReLU)


def test_clip_grads_with_norm():
    a, b = nn.Parameter(fnx.zeros(2)), nn.Parameter(fnx.zeros(1))
    a.grad, b.grad = fnx.tensor([3.0, 0.0]), fnx.tensor([4.0])
    total = nn.utils.get_total_norm([a.grad, b.grad])
    assert total.item() == pytest.approx(5.0)
    nn.utils.clip_grads_with_norm_([a, b], 2.5, total)
    np.testing.assert_allclose(a.grad.numpy(), [3.0 * 2.5 / (5 + 1e-6), 0.0], rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), [4.0 * 2.5 / (5 + 1e-6)], rtol=1e-6)
    nn.utils.clip_grads_with_norm_([a, b], 100.0, 2.5)      # above the norm: unchanged
    np.testing.assert_allclose(b.grad.numpy(), [4.0 * 2.5 / (5 + 1e-6)], rtol=1e-6)


def test_convert_conv_weight_memory_format():
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Sequential(nn.ConvTranspose2d(4, 2, 2)),
                        nn.Conv3d(2, 2, 1))
    before = [p.detach().numpy().copy() for p in net.parameters()]
    out = nn.utils.convert_conv2d_weight_memory_format(net, fnx.channels_last)
    assert out is net
    assert net[0].weight.stride() == (27, 1, 9, 3)
    assert net[2][0].weight.is_contiguous(memory_format=fnx.channels_last)
    assert net[3].weight.is_contiguous()                    # a 3-d conv: left alone
    nn.utils.convert_conv3d_weight_memory_format(net, fnx.channels_last_3d)
    assert net[3].weight.is_contiguous(memory_format=fnx.channels_last_3d)
    for p, b in zip(net.parameters(), before):
        np.testing.assert_array_equal(p.detach().numpy(), b)
