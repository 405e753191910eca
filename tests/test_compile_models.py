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
