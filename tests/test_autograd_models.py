"""Gradients of whole models (MLP, GPT-style block, CNN with batch norm): eager autograd vs
finite differences (float64), compiled backward vs eager backward, and a compiled training
step vs the same step run eagerly."""
import numpy as np
import pytest

import fnx
from fnx import nn, optim
from fnx.autograd import gradcheck
from fnx.testing import models


def params64(p, rg=True):
    return {k: fnx.tensor(v.astype(np.float64), requires_grad=rg and not k.startswith("bn_m")
                          and not k.startswith("bn_v"))
            for k, v in p.items()}


def _check_model(fn, params, x):
    names = [k for k, v in params.items() if v.requires_grad]

    def f(xx, *ws):
        p = dict(params)
        p.update(zip(names, ws))
        return fn(p)(xx)
    return gradcheck(f, (x, *[params[k] for k in names]), fast_mode=True, atol=1e-6,
                     rtol=1e-4)


def test_mlp_gradients_match_finite_differences():
    p = params64(models.mlp_params((6, 5, 4, 3)))
    x = fnx.tensor(np.random.default_rng(1).standard_normal((2, 6)), requires_grad=True)
    assert _check_model(models.mlp, p, x)


def test_gpt_block_gradients_match_finite_differences():
    p = params64(models.gpt_params(8))
    x = fnx.tensor(np.random.default_rng(2).standard_normal((2, 3, 8)), requires_grad=True)
    assert _check_model(lambda q: models.gpt_block(q, n_head=2), p, x)


def test_cnn_with_batch_norm_gradients_match_finite_differences():
    p = params64(models.cnn_params(in_ch=2, ch=3, classes=4, hw=4))
    x = fnx.tensor(np.random.default_rng(3).standard_normal((2, 2, 4, 4)), requires_grad=True)
    # training-mode batch norm updates its running stats on every call: give each call
    # fresh copies so the finite differences see the same function
    def fn(q):
        q = dict(q)
        q["bn_mean"], q["bn_var"] = q["bn_mean"].clone(), q["bn_var"].clone()
        return models.cnn(q, training=True)
    assert _check_model(fn, p, x)


def _grads(params):
    return {k: v.grad.numpy().copy() for k, v in params.items() if v.grad is not None}


@pytest.mark.parametrize("which", ["mlp", "gpt"])
def test_compiled_model_backward_matches_eager(which):
    rng = np.random.default_rng(4)
    if which == "mlp":
        raw, make = models.mlp_params((8, 16, 4)), models.mlp
        x = rng.standard_normal((5, 8)).astype(np.float32)
    else:
        raw, make = models.gpt_params(16), (lambda q: models.gpt_block(q, n_head=2))
        x = rng.standard_normal((2, 4, 16)).astype(np.float32)
    pe = {k: fnx.tensor(v, requires_grad=True) for k, v in raw.items()}
    pc = {k: fnx.tensor(v, requires_grad=True) for k, v in raw.items()}
    xe, xc = fnx.tensor(x, requires_grad=True), fnx.tensor(x, requires_grad=True)
    (make(pe)(xe) ** 2).sum().backward()
    compiled = fnx.compile(make(pc))
    out = compiled(xc)
    assert out.grad_fn is not None and out.grad_fn.name() == "CompiledFunctionBackward"
    (out ** 2).sum().backward()
    ge, gc = _grads(pe), _grads(pc)
    assert ge.keys() == gc.keys() and ge
    for k in ge:
        np.testing.assert_allclose(gc[k], ge[k], rtol=2e-4, atol=2e-5, err_msg=k)
    np.testing.assert_allclose(xc.grad.numpy(), xe.grad.numpy(), rtol=2e-4, atol=2e-5)


def test_compiled_training_step_matches_eager_steps():
    rng = np.random.default_rng(5)
    raw = models.mlp_params((6, 8, 3))
    x = fnx.tensor(rng.standard_normal((4, 6)).astype(np.float32))
    y = fnx.tensor(rng.integers(0, 3, 4))

    def make_step(p):
        fwd = models.mlp(p)

        def step(x, y):
            loss = fnx.ops.aten.cross_entropy_loss.default(fwd(x), y)
            loss.backward()
            with fnx.no_grad():
                for w in p.values():
                    w.sub_(w.grad * 0.1)
                    w.grad = None
            return loss.detach()
        return step

    pe = {k: fnx.tensor(v, requires_grad=True) for k, v in raw.items()}
    pc = {k: fnx.tensor(v, requires_grad=True) for k, v in raw.items()}
    eager, compiled = make_step(pe), fnx.compile(make_step(pc))
    le = [eager(x, y).item() for _ in range(3)]
    lc = [compiled(x, y).item() for _ in range(3)]
    np.testing.assert_allclose(lc, le, rtol=1e-5)
    for k in raw:
        np.testing.assert_allclose(pc[k].detach().numpy(), pe[k].detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
        assert pc[k].grad is None
    assert len(compiled.entries()) == 1
    # one program: the backward and the updates were traced with the forward
    (entry,) = compiled.entries()
    assert len(entry.graph.calls()) > 20 and not entry.parts.fallback_ops


def test_compiled_step_leaves_grads_like_eager():
    w = fnx.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = fnx.tensor([[1.0, -1.0]])

    def step(x):
        (x @ w).pow(2).sum().backward()

    f = fnx.compile(step)
    f(x)
    g1 = w.grad.numpy().copy()
    f(x)                                # .grad set: a new guard, accumulation is traced
    np.testing.assert_allclose(w.grad.numpy(), 2 * g1)
    expected = 2 * (x.numpy().T @ (x.numpy() @ w.detach().numpy()))
    np.testing.assert_allclose(g1, expected)
    assert len(f.entries()) == 2


@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_compiled_step_with_optimizer_state_matches_eager(opt):

    def run(compile_it):
        fnx.manual_seed(0)
        m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        o = optim.SGD(m.parameters(), lr=0.1, momentum=0.9) if opt == "SGD" else \
            optim.Adam(m.parameters(), lr=0.01)
        loss_fn = nn.CrossEntropyLoss()
        x, y = fnx.randn(5, 4), fnx.tensor([0, 1, 2, 1, 0])

        def step(x, y):
            o.zero_grad()
            loss = loss_fn(m(x), y)
            loss.backward()
            o.step()
            return loss.detach()
        f = fnx.compile(step) if compile_it else step
        return [f(x, y).item() for _ in range(4)], f

    eager, _ = run(False)
    compiled, f = run(True)
    np.testing.assert_allclose(compiled, eager, rtol=1e-5)
    # the first step made the optimizer's state outside the trace and ran once; the
    # steady-state program is the one cached
    assert len(f.entries()) == 1
