"""Activation checkpointing (``fnx.utils.checkpoint``): gradients equal those of the plain
function (computed without checkpointing, an independent run), for both of PyTorch's
variants, with dropout drawing the same mask in the recomputation, through
``autograd.grad``, with nested outputs, and inside ``fnx.compile``."""
from __future__ import annotations

import numpy as np
import pytest

import fnx
import fnx.nn as nn
from fnx.utils.checkpoint import checkpoint, checkpoint_sequential


def _block(seed=0, p=0.0):
    fnx.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Dropout(p), nn.Linear(8, 4),
                         nn.LayerNorm(4))


def _grads(model):
    return [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_gradients_equal_the_plain_function(use_reentrant):
    plain, ckpt = _block(), _block()
    x = fnx.randn(3, 4, generator=fnx.Generator().manual_seed(1))
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    (plain(xa) * plain(xa)).sum().backward()
    y = checkpoint(ckpt, xb, use_reentrant=use_reentrant)
    assert y.requires_grad and y.grad_fn is not None
    (y * checkpoint(ckpt, xb, use_reentrant=use_reentrant)).sum().backward()
    for g, h in zip(_grads(plain), _grads(ckpt)):
        np.testing.assert_allclose(h, g, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(xb.grad.numpy(), xa.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_forward_keeps_no_graph_and_backward_recomputes():
    calls = []
    lin = nn.Linear(3, 3)

    def f(x):
        calls.append(fnx.is_grad_enabled())
        return lin(x).tanh()
    y = checkpoint(f, fnx.ones(2, 3, requires_grad=True), use_reentrant=False)
    assert calls == [False]                      # the forward ran without a graph
    y.sum().backward()
    assert calls == [False, True] and lin.weight.grad is not None


def test_dropout_draws_the_same_mask_when_recomputed():
    plain, ckpt = _block(p=0.5), _block(p=0.5)
    x = fnx.randn(6, 4, generator=fnx.Generator().manual_seed(2))
    fnx.manual_seed(7)
    plain(x).sum().backward()
    fnx.manual_seed(7)
    checkpoint(ckpt, x, use_reentrant=False).sum().backward()
    for g, h in zip(_grads(plain), _grads(ckpt)):
        np.testing.assert_allclose(h, g, rtol=1e-6, atol=1e-7)
    after = fnx.rand(1)                          # the recomputation left the stream as it was
    fnx.manual_seed(7)
    plain(x)
    assert fnx.rand(1).item() == after.item()


def test_non_reentrant_reaches_parameters_when_the_input_needs_no_grad():
    # PyTorch's recommended variant: parameters read inside get gradients even though the
    # argument does not require grad; autograd.grad works through it
    lin = nn.Linear(3, 2)
    x = fnx.ones(4, 3)
    y = checkpoint(lin, x, use_reentrant=False)
    (gw,) = fnx.autograd.grad(y.sum(), lin.weight)
    np.testing.assert_allclose(gw.numpy(), np.full((2, 3), 4.0))
    assert lin.weight.grad is None               # grad() left .grad alone


def test_reentrant_needs_a_differentiable_argument_and_refuses_kwargs():
    lin = nn.Linear(3, 2)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = checkpoint(lin, fnx.ones(1, 3), use_reentrant=True)
    assert not y.requires_grad
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda x, scale: x * scale, fnx.ones(1), scale=2.0, use_reentrant=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
        checkpoint(lin, fnx.ones(1, 3, requires_grad=True))


def test_kwargs_and_nested_outputs():
    w = fnx.tensor([1.0, 2.0], requires_grad=True)

    def f(x, *, scale):
        return {"a": x * w * scale, "b": (x.sum(), "tag")}
    out = checkpoint(f, fnx.ones(2), scale=3.0, use_reentrant=False)
    assert out["b"][1] == "tag" and out["a"].tolist() == [3.0, 6.0]
    (out["a"].sum() + out["b"][0]).backward()
    assert w.grad.tolist() == [3.0, 3.0]


def test_checkpoint_sequential_matches_the_plain_run():
    plain, ckpt = _block(3), _block(3)
    x = fnx.randn(2, 4, generator=fnx.Generator().manual_seed(4))
    plain(x).pow(2).sum().backward()
    checkpoint_sequential(ckpt, 2, x, use_reentrant=False).pow(2).sum().backward()
    for g, h in zip(_grads(plain), _grads(ckpt)):
        np.testing.assert_allclose(h, g, rtol=1e-6, atol=1e-7)


def test_inside_compile_the_function_is_called():
    plain, ckpt = _block(5), _block(5)
    x = fnx.randn(3, 4, generator=fnx.Generator().manual_seed(6))
    c = fnx.randn(3, 4, generator=fnx.Generator().manual_seed(8))

    def step(model):
        def run(x):
            y = checkpoint(model, x, use_reentrant=False)
            loss = (y * c).sum()
            loss.backward()
            return loss
        return run
    want = step(plain)(x)
    loss = fnx.compile(step(ckpt))(x)
    np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-5)
    for g, h in zip(_grads(plain), _grads(ckpt)):
        np.testing.assert_allclose(h, g, rtol=1e-5, atol=1e-6)
