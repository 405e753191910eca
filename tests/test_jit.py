"""``fnx.jit``: PyTorch's TorchScript names as PyTorch has them with its JIT off
(``PYTORCH_JIT=0``): code written for TorchScript runs as Python, with the same results
as the undecorated code (checked against NumPy)."""
from __future__ import annotations

import numpy as np
import pytest

import fnx
import fnx.nn as nn


class _TimmStyle(nn.Module):
    """A module with the TorchScript idioms of model zoos."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 2)

    @fnx.jit.ignore
    def helper(self, x):
        return x * 2

    @fnx.jit.unused
    def never(self, x):
        raise AssertionError("not called")

    def forward(self, x):
        if fnx.jit.is_scripting() or fnx.jit.is_tracing():
            return self.proj(x)
        return self.helper(self.proj(x))


def test_script_and_trace_give_back_what_they_get():
    m = _TimmStyle()
    x = fnx.randn(4, 3)
    w, b = m.proj.weight.detach().numpy(), m.proj.bias.detach().numpy()
    want = (x.numpy() @ w.T + b) * 2
    for made in (fnx.jit.script(m), fnx.jit.trace(m, x), fnx.jit.trace_module(m, {"forward": x})):
        assert made is m
        np.testing.assert_allclose(made(x).detach().numpy(), want, rtol=1e-6)

    @fnx.jit.script
    def gelu_tanh(v):
        return 0.5 * v * (1.0 + fnx.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3)))
    v = np.linspace(-3, 3, 7)
    ref = 0.5 * v * (1 + np.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3)))
    np.testing.assert_allclose(gelu_tanh(fnx.tensor(v)).numpy(), ref, rtol=1e-12)


def test_decorators_annotate_fork_and_context():
    @fnx.jit.ignore(drop=True)
    def f(a):
        return a + 1

    @fnx.jit.export
    def g(a):
        return a - 1
    assert f(1) == 2 and g(1) == 0 and fnx.jit.annotate(list, [3]) == [3]
    fut = fnx.jit.fork(lambda a, b: a * b, 6, b=7)
    assert fnx.jit.wait(fut) == 42
    with fnx.jit.optimized_execution(True):
        assert not fnx.jit.is_scripting()


def test_torchscript_archives_are_refused_with_the_way_out():
    with pytest.raises(NotImplementedError, match="fnx.save.*fnx.export.save"):
        fnx.jit.save(nn.Linear(1, 1), "model.pt")
    with pytest.raises(NotImplementedError, match="fnx.export.load"):
        fnx.jit.load("model.pt")
