"""fnx.compile of code that stores a differentiable tensor on a Python object.

The neural style transfer tutorial's loss modules return their input and keep
``self.loss = F.mse_loss(input, self.target)``; the caller sums the stored losses and
differentiates them after the call. Compiled, each stored loss must carry the compiled
program's gradient. References are hand-derived NumPy gradients.
"""
from __future__ import annotations

import numpy as np

import fnx
from fnx import nn
from fnx.nn import functional as F
from fnx.testing import to_numpy


class _ContentLoss(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        # stored without a gradient (the trace decomposes detach to prims: those calls
        # must not record autograd nodes of their own)
        self.seen = input.detach().sum()
        return input


def _reference(x, w, t):
    """loss = mean((x @ w.T - t)**2) and its gradient in x."""
    y = x @ w.T
    return np.mean((y - t) ** 2), 2.0 * (y - t) @ w / y.size


def test_stored_loss_is_differentiated_through_the_compiled_program():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    t = rng.standard_normal((5, 3)).astype(np.float32)
    lin = nn.Linear(4, 3, bias=False)
    with fnx.no_grad():
        lin.weight.copy_(fnx.tensor(w))
    loss_mod = _ContentLoss(fnx.tensor(t))
    model = nn.Sequential(lin, loss_mod).eval()
    model.requires_grad_(False)
    f = fnx.compile(model)
    for step in range(3):      # a one-shot program, then the kept one, then its replay
        xv = rng.random((5, 4)).astype(np.float32)
        x = fnx.tensor(xv).requires_grad_(True)
        f(x)
        loss = loss_mod.loss * 2.0
        assert loss_mod.loss.requires_grad, step
        assert not loss_mod.seen.requires_grad, step
        loss.backward()
        want_loss, want_grad = _reference(xv.astype(np.float64), w, t)
        np.testing.assert_allclose(float(loss_mod.loss), want_loss, rtol=1e-5)
        np.testing.assert_allclose(to_numpy(x.grad), 2.0 * want_grad, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(float(loss_mod.seen), (xv.astype(np.float64) @ w.T).sum(),
                                   rtol=1e-5)


def test_float64_output_left_out_of_the_loss_gets_a_float64_zero_cotangent():
    def f(x):
        return (x * x).sum(), x.sin()       # the second output is not differentiated

    xv = np.linspace(-1.0, 1.0, 7)
    x = fnx.tensor(xv, dtype=fnx.float64).requires_grad_(True)
    total, _ = fnx.compile(f)(x)
    total.backward()
    assert x.grad.dtype == fnx.float64
    np.testing.assert_allclose(to_numpy(x.grad), 2.0 * xv, rtol=1e-12)



def test_output_that_does_not_require_grad_has_no_history_when_compiled():
    def f(x):
        return x.detach() * 3.0, x * 2.0, (x * 0.5).detach()

    xv = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    for _ in range(2):
        x = fnx.tensor(xv).requires_grad_(True)
        frozen, live, cut = fnx.compile(f)(x)
        assert not frozen.requires_grad and frozen.grad_fn is None
        assert not cut.requires_grad and cut.grad_fn is None
        assert live.requires_grad
        np.testing.assert_allclose(to_numpy(frozen), 3.0 * xv)
        np.testing.assert_allclose(to_numpy(cut), 0.5 * xv)
        live.sum().backward()
        np.testing.assert_allclose(to_numpy(x.grad), np.full(3, 2.0, np.float32))
