"""fnx.compile on whole models (fnx.testing.models) agrees with eager execution."""
import jax.numpy as jnp
import numpy as np
import pytest

import fnx
from fnx.testing import models

rng = np.random.default_rng(7)


def tensors(params):
    return {k: fnx.tensor(v) for k, v in params.items()}


def test_mlp():
    p = tensors(models.mlp_params((32, 64, 64, 10)))
    f = models.mlp(p)
    x = fnx.tensor(rng.standard_normal((16, 32)).astype(np.float32))
    np.testing.assert_allclose(fnx.compile(f)(x).numpy(), f(x).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(2, 16, 32), (1, 5, 32)])
def test_gpt_block(shape):
    p = tensors(models.gpt_params(32))
    f = models.gpt_block(p, n_head=4)
    cf = fnx.compile(f)
    x = fnx.tensor(rng.standard_normal(shape).astype(np.float32))
    np.testing.assert_allclose(cf(x).numpy(), f(x).numpy(), rtol=1e-4, atol=1e-5)


def test_gpt_block_matches_hand_written_jax():
    params = models.gpt_params(32)
    x = rng.standard_normal((2, 8, 32)).astype(np.float32)
    want = models.jax_gpt_block(4)({k: jnp.asarray(v) for k, v in params.items()},
                                   jnp.asarray(x))
    got = fnx.compile(models.gpt_block(tensors(params), 4))(fnx.tensor(x))
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-4, atol=1e-5)


def test_cnn_with_batch_norm_updates_running_stats():
    params = models.cnn_params()
    pe, pc = tensors(params), tensors(params)
    x = fnx.tensor(rng.standard_normal((4, 3, 8, 8)).astype(np.float32))
    eager, compiled = models.cnn(pe), fnx.compile(models.cnn(pc))
    for _ in range(2):
        np.testing.assert_allclose(compiled(x).numpy(), eager(x).numpy(), rtol=1e-4,
                                   atol=1e-5)
    for k in ("bn_mean", "bn_var"):
        np.testing.assert_allclose(pc[k].numpy(), pe[k].numpy(), rtol=1e-5, atol=1e-6)
        assert not np.allclose(pc[k].numpy(), params[k])      # they did move


def test_cnn_eval_mode():
    p = tensors(models.cnn_params())
    f = models.cnn(p, training=False)
    x = fnx.tensor(rng.standard_normal((2, 3, 8, 8)).astype(np.float32))
    np.testing.assert_allclose(fnx.compile(f)(x).numpy(), f(x).numpy(), rtol=1e-4, atol=1e-5)


def test_batch_norm_adam_step_matches_eager_but_for_the_bias_batch_norm_cancels():
    # Linear -> BatchNorm1d: the Linear's bias shifts every row alike and BatchNorm removes
    # it, so its gradient is zero in exact arithmetic and rounding leaves ~1e-9 of either
    # sign; Adam scales any gradient to a step of about lr, so that bias (and the running
    # mean, which sees it) wanders differently in any two implementations (PyTorch's CPU
    # and CUDA too). Everything the outputs depend on must agree.
    def run(compiled):
        fnx.manual_seed(0)
        m = fnx.nn.Sequential(fnx.nn.Linear(8, 16), fnx.nn.BatchNorm1d(16), fnx.nn.ReLU(),
                              fnx.nn.Linear(16, 3))
        opt = fnx.optim.Adam(m.parameters(), lr=1e-2)
        loss_fn = fnx.nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            loss = loss_fn(m(x), y)
            loss.backward()
            opt.step()
            return loss.detach()
        f = fnx.compile(step) if compiled else step
        rng = np.random.default_rng(0)
        losses = [float(f(fnx.tensor(rng.standard_normal((32, 8)).astype(np.float32)),
                          fnx.tensor(rng.integers(0, 3, 32)))) for _ in range(12)]
        grad = m[0].bias.grad.numpy()
        return m.state_dict(), losses, grad

    eager, eager_losses, eager_grad = run(False)
    comp, comp_losses, comp_grad = run(True)
    np.testing.assert_allclose(comp_losses, eager_losses, rtol=1e-5)
    for name in eager:
        if name not in ("0.bias", "1.running_mean"):
            np.testing.assert_allclose(comp[name].numpy(), eager[name].numpy(), rtol=1e-5,
                                       atol=1e-6, err_msg=name)
    # the cancelled bias's gradient is rounding noise on both paths
    assert np.abs(eager_grad).max() < 1e-6 and np.abs(comp_grad).max() < 1e-6
