"""The generated fast path of a compiled entry (``fnx.lower.fast_call``).

After the general path has answered a call, the next calls try the entry's generated fast
path first. These tests pin down that a steady training step takes it, that every change
a guard watches sends the call back to the general path (results equal eager's), and
that what the fast path skips (a ``.grad`` or a view someone holds, a bad target) is
handled as before.
"""
from __future__ import annotations

import numpy as np
import pytest

import fnx
import fnx.nn as nn
import fnx.nn.functional as F
from fnx.testing import models
from fnx.lower import fast_call

SCALE = 2.0     # a global the compiled functions read


def _counting(cf):
    """Wrap ``cf``'s armed fast path so that its answers are counted: [calls, misses]."""
    seen = [0, 0]
    fast = cf._fast
    assert fast is not None, "the fast path was armed"
    inner = fast._fn

    def fn(args, kwargs):
        r = inner(args, kwargs)
        seen[0] += 1
        seen[1] += r is fast_call.MISS
        return r
    fast._fn = fn
    return seen


def _mlp(seed=0):
    fnx.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))


_step = models.training_step


def _data(n=4):
    rng = np.random.default_rng(1)
    return (fnx.tensor(rng.standard_normal((n, 5)).astype(np.float32)),
            fnx.tensor(rng.integers(0, 3, n)))


def _params(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


cuda = pytest.mark.skipif(not fnx.cuda.is_available(),
                          reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")
DEVICES = ["cpu", pytest.param("cuda", marks=cuda)]


@pytest.mark.parametrize("device", DEVICES)
def test_a_training_step_takes_the_fast_path_and_matches_eager(device):
    eager_model, comp_model = _mlp(), _mlp().to(device)
    eager_opt = fnx.optim.SGD(eager_model.parameters(), lr=0.1, momentum=0.9)
    eager = _step(eager_model, eager_opt)
    opt = fnx.optim.SGD(comp_model.parameters(), lr=0.1, momentum=0.9)
    step = fnx.compile(_step(comp_model, opt))
    x, y = _data()
    xd, yd = x.to(device), y.to(device)
    # (the first call creates the momentum buffers, the second compiles for them)
    for _ in range(3):
        np.testing.assert_allclose(step(xd, yd).item(), eager(x, y).item(), rtol=1e-6)
    seen = _counting(step)
    assert f"'{'_jax' if device == 'cpu' else '_data'}'" in step._fast.source
    for k in range(5):
        opt.param_groups[0]["lr"] = eager_opt.param_groups[0]["lr"] = 0.1 / (k + 1)
        np.testing.assert_allclose(step(xd, yd).item(), eager(x, y).item(), rtol=1e-6)
    assert seen == [5, 0]
    for a, b in zip(comp_model.parameters(), eager_model.parameters()):
        assert a.device.type == device and a.grad.device.type == device
        np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(a.grad.cpu().numpy(), b.grad.numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_every_watched_change_goes_back_to_the_general_path():
    fnx.manual_seed(0)          # (weights independent of the tests run before)
    lin = nn.Linear(3, 2).requires_grad_(False)   # (an output with grad: jax.vjp's path)
    lin.k = 1.5
    lin.flip = False
    bias = [1.0]

    def f(x):
        out = lin(x) * SCALE * lin.k + bias[0]
        return -out if lin.flip else out
    cf = fnx.compile(f)
    x = fnx.ones(4, 3)

    def check(x=x):     # (three calls: the general path, then the fast path it armed)
        # (atol: + bias cancels digits; XLA's dot may round the product's sum differently)
        for _ in range(3):
            np.testing.assert_allclose(cf(x).detach().numpy(), f(x).detach().numpy(),
                                       rtol=1e-6, atol=1e-7)
    check()
    seen = _counting(cf)
    check()
    assert seen == [3, 0]
    lin.flip = True                  # a module attribute: the module-state guard
    check()
    global SCALE
    SCALE = 3.0                      # a global: the globals/closure guard
    try:
        check()
    finally:
        SCALE = 2.0
    check(fnx.ones(2, 3))            # another shape
    with fnx.no_grad():              # another grad mode
        check()
    with fnx.no_grad():              # an eager in-place write of a parameter
        lin.weight.mul_(2)
    check()
    lin.weight.requires_grad_(True)  # (now the general path's jax.vjp entry)
    check()
    # the first entry's fast path answered its three calls and missed on the change after
    assert seen[0] >= 4 and seen[1] >= 1, seen


@pytest.mark.parametrize("device", DEVICES)
def test_a_grad_or_a_view_held_elsewhere_keeps_its_values(device):
    model = _mlp().to(device)
    opt = fnx.optim.SGD(model.parameters(), lr=0.5)
    step = fnx.compile(_step(model, opt))
    x, y = (t.to(device) for t in _data())
    for _ in range(3):
        step(x, y)
    w = model[0].weight
    held_grad = w.grad                     # a .grad someone keeps: not reused in place
    held_values = held_grad.cpu().numpy().copy()
    row = w[0]                             # a view of a parameter the step updates
    before = w.detach().cpu().numpy().copy()
    step(x, y)
    np.testing.assert_array_equal(held_grad.cpu().numpy(), held_values)
    assert w.grad is not held_grad
    np.testing.assert_allclose(w.detach().cpu().numpy(), before - 0.5 * w.grad.cpu().numpy(),
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(row.detach().cpu().numpy(), w.detach().cpu().numpy()[0])


def test_a_bad_target_raises_as_eager_and_leaves_the_model_unchanged():
    model = _mlp()
    step = fnx.compile(_step(model, fnx.optim.SGD(model.parameters(), lr=0.1)))
    x, y = _data()
    for _ in range(3):
        step(x, y)
    before = _params(model)
    bad = fnx.tensor([0, 1, 3, 2])
    with pytest.raises(IndexError) as compiled_error:
        step(x, bad)
    with pytest.raises(IndexError) as eager_error:
        F.cross_entropy(model(x), bad)
    assert str(compiled_error.value) == str(eager_error.value)
    for a, b in zip(_params(model), before):
        np.testing.assert_array_equal(a, b)


def test_random_ops_draw_the_same_stream_on_both_paths(monkeypatch):
    def run():
        fnx.manual_seed(3)
        drop = nn.Dropout(0.5)
        f = fnx.compile(lambda x: drop(x) * 2)
        return [f(fnx.ones(8)).numpy().copy() for _ in range(4)], f
    fast, f = run()
    assert f._fast is not None
    monkeypatch.setattr(fast_call.FastCall, "build", classmethod(lambda *a: None))
    general, g = run()
    assert g._fast is None
    for a, b in zip(fast, general):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(fast[0], other) for other in fast[1:])


def test_reset_and_an_option_change_disarm_it():
    model = _mlp()
    opt = fnx.optim.SGD(model.parameters(), lr=0.1)
    step = fnx.compile(_step(model, opt))
    x, y = _data()
    step(x, y)
    step(x, y)
    assert step._fast is not None
    opt.param_groups[0]["momentum"] = 0.5       # an optimizer option: guarded by value
    seen = _counting(step)
    step(x, y)
    assert seen == [1, 1]
    fnx.compiler.reset()
    assert step._fast is None


def test_a_step_that_returns_nothing_takes_the_fast_path():
    def make():
        model = _mlp()
        opt = fnx.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        inner = _step(model, opt)

        def step(x, y):
            inner(x, y)         # (its loss is dropped: the step returns None)
        return model, step
    eager_model, eager_step = make()
    model, step = make()
    step = fnx.compile(step)
    x, y = _data()
    for _ in range(3):
        assert step(x, y) is None
        eager_step(x, y)
    seen = _counting(step)
    for _ in range(3):
        assert step(x, y) is None
        eager_step(x, y)
    assert seen == [3, 0]
    for p, q in zip(_params(model), _params(eager_model)):
        np.testing.assert_allclose(p, q, rtol=1e-5, atol=1e-6)
