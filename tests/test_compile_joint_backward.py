"""A compiled module's backward is fnx's own (``fnx.graph.joint``): the trace of its
forward goes on through ``autograd.grad`` against cotangent placeholders and is split into a
forward program that returns residuals and a backward program. So its gradients are
eager's formulas exactly: checked here against finite differences (``gradcheck``) and
hand-computed gradients where ``jax.vjp`` of the decomposition used to differ."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import fnx
import fnx.nn as nn
import fnx.nn.functional as F
from fnx.graph.joint import split_joint
from fnx.graph.tracer import trace


def _spd(a):
    return a @ a.mT + 3 * fnx.eye(a.shape[-1], dtype=a.dtype)


LINALG = {
    # functions of a symmetric positive definite matrix
    "cholesky": lambda a: fnx.linalg.cholesky(a),
    "cholesky_ex": lambda a: fnx.linalg.cholesky_ex(a).L,
    "eigvalsh": lambda a: fnx.linalg.eigvalsh(a),
    "eigh (sign-free)": lambda a: fnx.linalg.eigh(a).eigenvectors ** 2,
    "pinv": lambda a: fnx.linalg.pinv(a),
}


@pytest.mark.parametrize("name", list(LINALG))
def test_compiled_linalg_gradient_is_eagers_convention(name):
    # On the matrix itself (not symmetrized first) the gradient's convention shows: PyTorch's
    # cholesky/eigh formulas are not JAX's, and jax.vjp of the lowering gave JAX's.
    fn = LINALG[name]
    rng = np.random.default_rng(0)
    a = fnx.tensor(_spd(fnx.tensor(rng.standard_normal((4, 4)))).numpy(), requires_grad=True)
    g = fnx.tensor(rng.standard_normal(tuple(fn(a).shape)), dtype=fnx.float64)
    (eager,) = fnx.autograd.grad(fn(a), a, g)
    (got,) = fnx.autograd.grad(fnx.compile(fn, fullgraph=True)(a), a, g)
    np.testing.assert_allclose(got.numpy(), eager.numpy(), rtol=1e-10, atol=1e-12)
    # and through a symmetrizing map, where the convention cancels: finite differences
    b = fnx.tensor(rng.standard_normal((4, 4)), requires_grad=True)
    assert fnx.autograd.gradcheck(fnx.compile(lambda t: fn(_spd(t))), (b,))


@pytest.mark.parametrize("p", [2.0, 1.5, 1.0])
def test_compiled_pdist_gradient_is_the_hand_computed_one(p):
    # d/dx_i of sum_{i<j} c_ij |x_i - x_j|_p is sum_j c_ij sign(d) |d|^(p-1) / |d|_p^(p-1)
    # with d = x_i - x_j; a pair at distance 0 (rows 0 and 1) contributes 0, as PyTorch's
    # (jax.vjp of the decomposition gave NaN there)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3))
    x[1] = x[0]
    c = rng.standard_normal(6)
    want = np.zeros_like(x)
    k = 0
    for i in range(4):
        for j in range(i + 1, 4):
            d = x[i] - x[j]
            norm = np.sum(np.abs(d) ** p) ** (1 / p)
            if norm > 0:
                part = c[k] * np.sign(d) * np.abs(d) ** (p - 1) / norm ** (p - 1)
                want[i] += part
                want[j] -= part
            k += 1
    t = fnx.tensor(x, requires_grad=True)
    (fnx.compile(lambda a: F.pdist(a, p=p))(t) * fnx.tensor(c)).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-10)


def test_a_parameter_no_gradient_reaches_keeps_grad_none():
    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)
            self.scale = nn.Parameter(fnx.tensor(2.0))
            self.unused = nn.Linear(3, 2)

        def forward(self, x):
            return self.lin(x) * self.scale.detach()    # read, but no gradient reaches it

    m = Scaled()
    fnx.compile(m)(fnx.ones(4, 3)).sum().backward()
    # as eager: None, not zeros (a zero .grad would change what weight decay or a
    # "grad is None" check in the user's step does)
    assert m.scale.grad is None
    assert m.unused.weight.grad is None and m.unused.bias.grad is None
    np.testing.assert_allclose(m.lin.weight.grad.numpy(), np.full((2, 3), 8.0))


def test_embedding_scale_grad_by_freq_when_compiled():
    emb = nn.Embedding(6, 2, scale_grad_by_freq=True)
    ids = fnx.tensor([1, 1, 1, 4, 2])
    g = np.arange(10.0).reshape(5, 2)
    (fnx.compile(emb)(ids) * fnx.tensor(g, dtype=fnx.float32)).sum().backward()
    want = np.zeros((6, 2))
    for k, i in enumerate([1, 1, 1, 4, 2]):
        want[i] += g[k] / [1, 1, 1, 4, 2].count(i)
    np.testing.assert_allclose(emb.weight.grad.numpy(), want, rtol=1e-6)


def test_custom_function_backward_is_used_when_compiled():
    class Ste(fnx.autograd.Function):      # a straight-through round
        @staticmethod
        def forward(ctx, x):
            return x.round()

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = fnx.tensor([0.2, 1.7, -0.6], requires_grad=True)
    fnx.compile(lambda t: Ste.apply(t) * 3)(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0, 6.0])


def test_custom_function_whose_backward_reads_a_value_runs_eagerly():
    class Clip(fnx.autograd.Function):      # a backward that decides in Python
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 10 if x.abs().max().item() > 1 else g

    x = fnx.tensor([0.5, 3.0], requires_grad=True)
    with pytest.warns(UserWarning, match="custom autograd.Function"):
        fnx.compile(lambda t: Clip.apply(t).sum())(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [10.0, 10.0])    # not the forward's 1


def test_a_hook_on_a_parameter_runs_once_with_the_real_gradient():
    m = nn.Linear(3, 1)
    seen = []
    m.weight.register_hook(lambda g: (seen.append(g.clone()), g * 2)[1])
    x = fnx.tensor(np.arange(12.0).reshape(4, 3), dtype=fnx.float32)
    fnx.compile(m)(x).sum().backward()
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0].numpy(), [[18.0, 22.0, 26.0]])
    np.testing.assert_allclose(m.weight.grad.numpy(), [[36.0, 44.0, 52.0]])


def test_a_hook_inside_the_function_runs_eagerly_on_real_gradients():
    w = fnx.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    seen = []

    def f(x):
        h = x @ w
        h.register_hook(lambda g: seen.append(g))
        return (h * h).sum()

    x = fnx.tensor([[1.0, 0.0]])
    with pytest.warns(UserWarning, match="gradient hook"):
        fnx.compile(f)(x).backward()
    # h = [1, 2]: dL/dh = 2h, a real tensor (never the trace's)
    assert len(seen) == 1 and isinstance(seen[0].numpy(), np.ndarray)
    np.testing.assert_allclose(seen[0].numpy(), [[2.0, 4.0]])
    np.testing.assert_allclose(w.grad.numpy(), [[2.0, 4.0], [0.0, 0.0]])


def test_the_split_returns_only_what_the_backward_cannot_recompute_cheaply():
    x = fnx.tensor([-1.0, 0.5, 2.0], dtype=fnx.float64, requires_grad=True)
    w = fnx.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=fnx.float64,
                   requires_grad=True)
    joint = trace(lambda t, m: (t @ m).tanh().exp().sum(), x, w, joint=True,
                  decompose_to="prims")
    forward, backward = split_joint(joint)
    # the backward reads t and m (inputs: no output needed) and the product (the one
    # residual the forward returns); tanh, exp(tanh) and 1 - tanh^2 it recomputes from it
    # (pointwise: fused), the transposes are of values it has
    assert [p.name for p in backward.graph.placeholders()] == ["t", "dot_general", "m", "ct_0"]
    assert backward.residuals == (("in", 0), ("out", 1), ("in", 1))
    out = backward.program.output_node.args[0]
    assert [n.name for n in out[1]] == ["dot_general"]
    # and the backward computes the gradient: d/dt = (1 - tanh^2) e^tanh @ m^T
    t, m = np.array([-1.0, 0.5, 2.0]), np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    p = t @ m
    dt, dm = backward.graph.run(fnx.tensor(t), fnx.tensor(p[None]), fnx.tensor(m),
                                fnx.tensor(1.0, dtype=fnx.float64))
    g = (1 - np.tanh(p) ** 2) * np.exp(np.tanh(p))
    np.testing.assert_allclose(dt.numpy(), m @ g, rtol=1e-12)
    np.testing.assert_allclose(dm.numpy(), np.outer(t, g), rtol=1e-12)
    assert len(forward.placeholders()) == 2


def test_compiled_model_gradients_equal_eager_through_training_steps():
    fnx.manual_seed(0)
    eager = nn.Sequential(nn.Linear(5, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3))
    model = nn.Sequential(nn.Linear(5, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3))
    model.load_state_dict(eager.state_dict())
    compiled = fnx.compile(model)
    opts = [fnx.optim.AdamW(m.parameters(), lr=1e-2) for m in (eager, model)]
    rng = np.random.default_rng(2)
    for _ in range(4):
        x = fnx.tensor(rng.standard_normal((6, 5)), dtype=fnx.float32)
        y = fnx.tensor(rng.integers(0, 3, 6))
        for m, opt in zip((eager, compiled), opts):
            opt.zero_grad()
            F.cross_entropy(m(x), y).backward()
            opt.step()
    for a, b in zip(eager.parameters(), model.parameters()):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_no_fallback_to_jax_vjp_for_a_plain_model(caplog):
    m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8, 2))
    with caplog.at_level(logging.INFO, logger="fnx.compile"):
        fnx.compile(m)(fnx.ones(1, 1, 4, 4)).sum().backward()
    assert "vjp" not in caplog.text
    assert all(p.grad is not None for p in m.parameters())


def test_an_input_the_backward_reads_written_in_place_raises_as_eager():
    # the backward keeps w itself (a residual that is an input: its storage, maybe a
    # mutable NumPy array), so a write before backward() must raise, not change the gradient
    w = fnx.tensor([1.0, 2.0, 3.0])
    x = fnx.tensor([1.0, 1.0, 1.0], requires_grad=True)
    out = fnx.compile(lambda a: (a * w).sum())(x)
    w.add_(10.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()
    w.sub_(10.0)
    out = fnx.compile(lambda a: (a * w).sum())(x)
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 2.0, 3.0])


def test_explain_shows_the_backward_program():
    m = nn.Linear(3, 2)
    report = fnx.compile(m).explain(fnx.ones(4, 3))
    text = str(report)
    assert "== backward graph" in text
    # the backward of a Linear: products with the cotangent, no exp/log of the forward
    backward = report.stages["backward"]
    assert [p.name for p in backward.placeholders()][-1] == "ct_0"
    assert any("dot" in n.target.name or "mm" in n.target.name for n in backward.calls())


def test_a_value_read_before_the_function_overwrites_its_input_is_kept():
    # exp(buf) is computed from buf before buf.add_(1): the backward must see the old buf
    # (recomputing exp from the input would read the new one, or fail its version check)
    buf = fnx.tensor([1.0, 2.0, 3.0])

    def f(x):
        y = x * buf.exp()
        buf.add_(1.0)
        return y.sum()

    x = fnx.tensor([1.0, 1.0, 1.0], requires_grad=True)
    fnx.compile(f)(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0, 3.0]), rtol=1e-6)
    np.testing.assert_allclose(buf.numpy(), [2.0, 3.0, 4.0])


def test_a_backward_with_a_data_dependent_shape_falls_back_to_jax_vjp(caplog):
    # masked_scatter's formula selects by a boolean mask (a nonzero): it cannot be traced
    # as one program, so the backward is JAX's vjp of the forward, and still right
    mask = fnx.tensor([True, False, True, True])

    def f(x, src):
        return x.masked_scatter(mask, src) * fnx.tensor([1.0, 2.0, 3.0, 4.0])

    x = fnx.zeros(4, requires_grad=True)
    src = fnx.tensor([5.0, 6.0, 7.0, 8.0], requires_grad=True)
    with caplog.at_level(logging.INFO, logger="fnx.compile"):
        fnx.compile(f)(x, src).sum().backward()
    assert "JAX's vjp" in caplog.text
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 2.0, 0.0, 0.0])
    np.testing.assert_allclose(src.grad.numpy(), [1.0, 3.0, 4.0, 0.0])


def test_double_backward_through_a_compiled_module_passes_gradgradcheck():
    rng = np.random.default_rng(3)
    x = fnx.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    w = fnx.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    compiled = fnx.compile(lambda a, b: (a @ b).tanh().sum(1))
    assert fnx.autograd.gradgradcheck(compiled, (x, w))


def test_gradient_penalty_through_a_compiled_module_equals_eager():
    # WGAN-GP's penalty: the gradient w.r.t. the input, differentiated again
    fnx.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    compiled = fnx.compile(m)
    x = fnx.tensor(np.random.default_rng(4).standard_normal((5, 3)), dtype=fnx.float32,
                   requires_grad=True)
    grads = []
    for f in (m, compiled):
        m.zero_grad()
        (g,) = fnx.autograd.grad(f(x).sum(), x, create_graph=True)
        ((g.norm(dim=1) - 1) ** 2).mean().backward()
        grads.append([p.grad for p in m.parameters()])
    for eager, got in zip(*grads):
        if eager is None:       # the last bias does not change d out / d x: None, as eager
            assert got is None
        else:
            np.testing.assert_allclose(got.numpy(), eager.numpy(), rtol=1e-6, atol=1e-7)


def test_double_backward_on_the_jax_vjp_fallback_raises_clearly():
    mask = fnx.tensor([True, False, True])
    x = fnx.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = fnx.compile(lambda t: t.masked_scatter(mask, t * t))(x)
    with pytest.raises(RuntimeError, match="double backward"):
        fnx.autograd.grad(out.sum(), x, create_graph=True)


def test_double_backward_after_an_input_was_written_in_place_raises_as_eager():
    w = fnx.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = fnx.tensor([[1.0, -1.0]], requires_grad=True)
    out = fnx.compile(lambda a: (a @ w).tanh())(x)
    with fnx.no_grad():
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        fnx.autograd.grad(out.sum(), x, create_graph=True)
