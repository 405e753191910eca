"""Optimizers against NumPy re-implementations of their update rules over several steps;
param groups, state_dict round trips, zero_grad, errors; learning-rate schedules."""
import math

import numpy as np
import pytest

import fnx
import fnx.nn as nn
import fnx.optim as optim
from fnx.optim import lr_scheduler

STEPS = 6


def run(opt_cls, kwargs, rng, dtype=np.float64, shapes=((3, 4), (5,))):
    """Apply ``STEPS`` updates with fixed random gradients; returns (fnx params, NumPy
    params, grads) for the reference to replay."""
    init = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(STEPS)]
    params = [nn.Parameter(fnx.tensor(a)) for a in init]
    opt = opt_cls(params, **kwargs)
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = fnx.tensor(g)
        opt.step()
    return params, [a.copy() for a in init], grads, opt


def np_sgd(p, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
           maximize=False):
    buf = None
    for g in grads:
        g = -g if maximize else g
        if weight_decay:
            g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def np_adam(p, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
            amsgrad=False, maximize=False, decoupled=False):
    m, v, vmax = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if weight_decay:
            if decoupled:
                p = p * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * p
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        vmax = np.maximum(vmax, v)
        mh = m / (1 - betas[0] ** t)
        vh = (vmax if amsgrad else v) / (1 - betas[1] ** t)
        p = p - lr * mh / (np.sqrt(vh) + eps)
    return p


def np_rmsprop(p, grads, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
               centered=False):
    sq, avg, buf = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for g in grads:
        if weight_decay:
            g = g + weight_decay * p
        sq = alpha * sq + (1 - alpha) * g * g
        if centered:
            avg = alpha * avg + (1 - alpha) * g
            denom = np.sqrt(sq - avg * avg) + eps
        else:
            denom = np.sqrt(sq) + eps
        if momentum:
            buf = momentum * buf + g / denom
            p = p - lr * buf
        else:
            p = p - lr * g / denom
    return p


SGD_CASES = [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.05, momentum=0.9,
                                                            dampening=0.3),
             dict(lr=0.1, momentum=0.8, nesterov=True), dict(lr=0.1, weight_decay=0.1),
             dict(lr=0.1, momentum=0.5, weight_decay=0.01, maximize=True)]


@pytest.mark.parametrize("kw", SGD_CASES)
def test_sgd_matches_numpy(rng, kw):
    params, init, grads, _ = run(optim.SGD, kw, rng)
    for i, p in enumerate(params):
        expect = np_sgd(init[i], [g[i] for g in grads], **kw)
        np.testing.assert_allclose(p.numpy(force=True), expect, rtol=1e-12, atol=1e-14)


ADAM_CASES = [dict(lr=0.01), dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6),
              dict(lr=0.01, weight_decay=0.1), dict(lr=0.01, amsgrad=True),
              dict(lr=0.01, maximize=True)]


@pytest.mark.parametrize("kw", ADAM_CASES)
def test_adam_matches_numpy(rng, kw):
    params, init, grads, opt = run(optim.Adam, kw, rng)
    for i, p in enumerate(params):
        expect = np_adam(init[i], [g[i] for g in grads], **kw)
        np.testing.assert_allclose(p.numpy(force=True), expect, rtol=1e-10, atol=1e-12)
    st = opt.state[params[0]]
    assert st["step"].dtype is fnx.float32 and st["step"].item() == STEPS
    assert sorted(st) == (["exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"]
                          if kw.get("amsgrad") else ["exp_avg", "exp_avg_sq", "step"])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("opt,reference", [(optim.Adam, "np_adam"), (optim.SGD, "np_sgd")])
def test_a_zero_dim_parameter_steps(rng, dtype, opt, reference):
    # (a 0-dim parameter, CLIP's logit_scale, once crashed Adam's in-place lerp_)
    kw = dict(lr=0.1, weight_decay=0.1) if opt is optim.Adam else dict(lr=0.1, momentum=0.9)
    params, init, grads, _ = run(opt, kw, rng, dtype, shapes=[()])
    expect = globals()[reference](init[0], [g[0] for g in grads], **kw)
    assert params[0].shape == ()
    np.testing.assert_allclose(params[0].item(), expect, rtol=1e-5 if dtype == np.float32
                               else 1e-12)


@pytest.mark.parametrize("kw", [dict(lr=0.01), dict(lr=0.01, weight_decay=0.5),
                                dict(lr=0.02, amsgrad=True, weight_decay=0.1)])
def test_adamw_matches_numpy(rng, kw):
    params, init, grads, _ = run(optim.AdamW, kw, rng)
    kw = dict(kw, weight_decay=kw.get("weight_decay", 1e-2))
    for i, p in enumerate(params):
        expect = np_adam(init[i], [g[i] for g in grads], decoupled=True, **kw)
        np.testing.assert_allclose(p.numpy(force=True), expect, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kw", [dict(), dict(lr=0.05, alpha=0.9), dict(momentum=0.9),
                                dict(centered=True), dict(weight_decay=0.1, centered=True,
                                                          momentum=0.5)])
def test_rmsprop_matches_numpy(rng, kw):
    params, init, grads, opt = run(optim.RMSprop, kw, rng)
    for i, p in enumerate(params):
        expect = np_rmsprop(init[i], [g[i] for g in grads], **kw)
        np.testing.assert_allclose(p.numpy(force=True), expect, rtol=1e-10, atol=1e-12)
    assert opt.state[params[0]]["step"].item() == STEPS


def test_float32_parameters_stay_float32(rng):
    params, init, grads, opt = run(optim.Adam, dict(lr=0.01), rng, dtype=np.float32)
    assert params[0].dtype is fnx.float32
    assert opt.state[params[0]]["exp_avg"].dtype is fnx.float32
    expect = np_adam(init[0].astype(np.float64), [g[0].astype(np.float64) for g in grads],
                     lr=0.01)
    np.testing.assert_allclose(params[0].numpy(force=True), expect, rtol=1e-4, atol=1e-6)


def test_param_groups_and_skipped_params():
    a, b, c = (nn.Parameter(fnx.ones(2)) for _ in range(3))
    opt = optim.SGD([{"params": [a]}, {"params": [b, c], "lr": 0.5}], lr=0.1, momentum=0.0)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.0
    a.grad = fnx.ones(2)
    b.grad = fnx.ones(2)
    opt.step()                                      # c has no grad: untouched
    np.testing.assert_allclose(a.numpy(force=True), [0.9, 0.9], rtol=1e-7)
    assert b.tolist() == [0.5, 0.5] and c.tolist() == [1.0, 1.0]
    d = nn.Parameter(fnx.ones(1))
    opt.add_param_group({"params": d, "lr": 1.0})
    assert opt.param_groups[2]["params"] == [d] and opt.param_groups[2]["momentum"] == 0.0
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                         "group"):
        opt.add_param_group({"params": [a]})


def test_optimizer_errors():
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([fnx.ones(2, requires_grad=True) * 2], lr=0.1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.Adam([])
    with pytest.raises(TypeError, match="params argument given to the optimizer should be an "
                                        "iterable of Tensors or dicts"):
        optim.SGD(nn.Parameter(fnx.ones(1)), lr=0.1)
    p = [nn.Parameter(fnx.ones(1))]
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD(p, lr=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero "
                                         "dampening"):
        optim.SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.Adam(p, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Invalid epsilon value: -1"):
        optim.AdamW(p, eps=-1)
    with pytest.raises(ValueError, match="Invalid alpha value: -0.5"):
        optim.RMSprop(p, alpha=-0.5)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors"):
        optim.SGD([1.0], lr=0.1)


def test_zero_grad():
    p = nn.Parameter(fnx.ones(2))
    opt = optim.SGD([p], lr=0.1)
    p.grad = fnx.ones(2)
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_state_dict_round_trip(rng):
    def make():
        fnx.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
        opt = optim.Adam([{"params": model[0].parameters()},
                          {"params": model[1].parameters(), "lr": 0.05}], lr=0.01)
        return model, opt

    def train(model, opt, n, seed):
        g = fnx.Generator().manual_seed(seed)
        for _ in range(n):
            opt.zero_grad()
            model(fnx.randn(5, 3, generator=g)).pow(2).sum().backward()
            opt.step()

    m1, o1 = make()
    train(m1, o1, 3, 0)
    sd = o1.state_dict()
    assert sorted(sd) == ["param_groups", "state"]
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2, 3]]
    assert sd["param_groups"][1]["lr"] == 0.05 and sorted(sd["state"]) == [0, 1, 2, 3]
    assert sd["state"][0]["step"].item() == 3
    m2, o2 = make()
    m2.load_state_dict(m1.state_dict())
    o2.load_state_dict(sd)
    assert o2.state[next(m2.parameters())]["exp_avg"] is not sd["state"][0]["exp_avg"]
    train(m1, o1, 2, 1)
    train(m2, o2, 2, 1)
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_array_equal(p1.numpy(force=True), p2.numpy(force=True))
    with pytest.raises(ValueError, match="loaded state dict has a different number of "
                                         "parameter groups"):
        optim.Adam(m2.parameters()).load_state_dict(sd)
    bad = optim.Adam([{"params": [next(m2.parameters())]}, {"params": list(m2[1].parameters())}])
    with pytest.raises(ValueError, match="loaded state dict contains a parameter group that "
                                         "doesn't match the size of optimizer's group"):
        bad.load_state_dict(sd)


def test_closure_and_training_reduces_loss():
    fnx.manual_seed(0)
    x, y = fnx.randn(32, 4), fnx.randn(32, 1)
    model = nn.Linear(4, 1)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def closure():
        opt.zero_grad()
        loss = nn.MSELoss()(model(x), y)
        loss.backward()
        return loss
    first = opt.step(closure).item()
    for _ in range(30):
        last = opt.step(closure).item()
    assert last < 0.8 * first


def test_tensor_learning_rate():
    p = nn.Parameter(fnx.tensor([1.0]))
    lr = fnx.tensor(0.5)
    opt = optim.SGD([p], lr=lr)
    p.grad = fnx.tensor([1.0])
    opt.step()
    assert p.tolist() == [0.5]
    lr.fill_(0.25)                                  # the group reads the same tensor
    opt.step()
    assert p.tolist() == [0.25]


# ----------------------------------------------------------------------------- schedulers

def _lrs(sched, n):
    out = []
    for _ in range(n):
        out.append(sched.get_last_lr()[0])
        sched.optimizer.step()
        sched.step()
    return out


def _opt(lr=1.0):
    return optim.SGD([nn.Parameter(fnx.zeros(1))], lr=lr)


def test_step_lr():
    np.testing.assert_allclose(_lrs(lr_scheduler.StepLR(_opt(), 3, gamma=0.5), 8),
                               [1, 1, 1, 0.5, 0.5, 0.5, 0.25, 0.25])


def test_cosine_annealing_lr():
    T, lo = 5, 0.1
    got = _lrs(lr_scheduler.CosineAnnealingLR(_opt(), T_max=T, eta_min=lo), 12)
    expect = [lo + (1 - lo) * (1 + math.cos(math.pi * e / T)) / 2 for e in range(12)]
    np.testing.assert_allclose(got, expect, rtol=1e-10, atol=1e-12)


def test_lambda_multistep_exponential_linear():
    opt = _opt(2.0)
    got = _lrs(lr_scheduler.LambdaLR(opt, lambda e: 1 / (e + 1)), 4)
    np.testing.assert_allclose(got, [2.0, 1.0, 2 / 3, 0.5])
    assert opt.param_groups[0]["initial_lr"] == 2.0
    np.testing.assert_allclose(_lrs(lr_scheduler.MultiStepLR(_opt(), [2, 4], 0.1), 6),
                               [1, 1, 0.1, 0.1, 0.01, 0.01])
    np.testing.assert_allclose(_lrs(lr_scheduler.ExponentialLR(_opt(), 0.5), 4),
                               [1, 0.5, 0.25, 0.125])
    np.testing.assert_allclose(_lrs(lr_scheduler.LinearLR(_opt(), 0.5, 1.0, 4), 6),
                               [0.5, 0.625, 0.75, 0.875, 1.0, 1.0])


def test_scheduler_state_dict_and_errors():
    s = lr_scheduler.StepLR(_opt(), 2, gamma=0.1)
    _lrs(s, 3)
    sd = s.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 3
    s2 = lr_scheduler.StepLR(_opt(), 2, gamma=0.1)
    s2.load_state_dict(sd)
    assert s2.last_epoch == 3 and s2.get_last_lr() == s.get_last_lr()
    with pytest.raises(TypeError, match="is not an Optimizer"):
        lr_scheduler.StepLR(object(), 2)
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified"):
        lr_scheduler.StepLR(_opt(), 2, last_epoch=5)
