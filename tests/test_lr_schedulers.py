"""OneCycleLR, ReduceLROnPlateau, PolynomialLR, CosineAnnealingWarmRestarts, CyclicLR,
SequentialLR and ChainedScheduler: each learning-rate (and momentum) sequence against the
schedule's closed-form formula computed here, or against sequences worked out by hand
(ReduceLROnPlateau); their errors and state dicts."""
import math

import numpy as np
import pytest

import fnx
import fnx.nn as nn
import fnx.optim as optim
from fnx.optim import lr_scheduler as L


def _params(n=1):
    return [{"params": [nn.Parameter(fnx.zeros(1))]} for _ in range(n)]


def _sgd(lr=1.0, groups=1, **kw):
    return optim.SGD(_params(groups), lr=lr, **kw)


def _run(sched, steps):
    """(lrs, momentums) of the first param group before each of ``steps`` steps, and after
    the last."""
    opt = sched.optimizer
    lrs, moms = [], []
    for i in range(steps + 1):
        g = opt.param_groups[0]
        lrs.append(sched.get_last_lr()[0])
        moms.append(g["betas"][0] if "betas" in g else g.get("momentum"))
        if i < steps:
            opt.step()
            sched.step()
    return np.array(lrs), np.array(moms, dtype=float)


def _cos(start, end, pct):
    return end + (start - end) * (1 + math.cos(math.pi * pct)) / 2


def _lin(start, end, pct):
    return start + (end - start) * pct


def _piecewise(t, knots, anneal):
    """Value at step ``t`` of a schedule through ``knots`` ``[(step, value), ...]``,
    annealed between consecutive knots (the last piece extends past its end)."""
    for (s0, v0), (s1, v1) in zip(knots, knots[1:]):
        if t <= s1 or (s1, v1) == knots[-1]:
            return anneal(v0, v1, (t - s0) / (s1 - s0))
    raise AssertionError


# ----------------------------------------------------------------------------- OneCycleLR

@pytest.mark.parametrize("anneal", ["cos", "linear"])
def test_one_cycle_two_phases(anneal):
    total, pct, hi, div, final = 20, 0.3, 2.0, 25.0, 1e4
    sched = L.OneCycleLR(_sgd(momentum=0.9), max_lr=hi, total_steps=total, pct_start=pct,
                         anneal_strategy=anneal, div_factor=div, final_div_factor=final)
    lrs, moms = _run(sched, total)
    f = _cos if anneal == "cos" else _lin
    lo = hi / div
    peak = pct * total - 1
    lr_knots = [(0, lo), (peak, hi), (total - 1, lo / final)]
    mom_knots = [(0, 0.95), (peak, 0.85), (total - 1, 0.95)]
    np.testing.assert_allclose(lrs, [_piecewise(t, lr_knots, f) for t in range(total + 1)],
                               rtol=1e-12)
    np.testing.assert_allclose(moms, [_piecewise(t, mom_knots, f) for t in range(total + 1)],
                               rtol=1e-12)
    assert lrs[0] == pytest.approx(hi / div) and lrs[total - 1] == pytest.approx(lo / final)
    with pytest.raises(ValueError, match="Tried to step 21 times. The specified number of "
                                         "total steps is 20"):
        sched.step()


def test_one_cycle_three_phases_per_group_and_adam_betas():
    epochs, per_epoch, pct = 4, 6, 0.25
    total = epochs * per_epoch
    opt = optim.Adam(_params(2), lr=0.1, betas=(0.9, 0.99))
    sched = L.OneCycleLR(opt, max_lr=[1.0, 0.5], epochs=epochs, steps_per_epoch=per_epoch,
                         pct_start=pct, anneal_strategy="linear", three_phase=True,
                         base_momentum=0.8, max_momentum=0.9, div_factor=10.0,
                         final_div_factor=100.0)
    assert sched.total_steps == total
    got = []
    for _ in range(total):
        got.append(list(sched.get_last_lr()) + [g["betas"][0] for g in opt.param_groups])
        assert all(g["betas"][1] == 0.99 for g in opt.param_groups)
        opt.step()
        sched.step()
    peak = pct * total - 1
    expect = []
    for t in range(total):
        row = []
        for hi in (1.0, 0.5):
            lo = hi / 10.0
            knots = [(0, lo), (peak, hi), (2 * peak, lo), (total - 1, lo / 100.0)]
            row.append(_piecewise(t, knots, _lin))
        mom = _piecewise(t, [(0, 0.9), (peak, 0.8), (2 * peak, 0.9), (total - 1, 0.9)], _lin)
        expect.append(row + [mom, mom])
    np.testing.assert_allclose(got, expect, rtol=1e-12)


def test_one_cycle_drives_the_optimizer():
    p = nn.Parameter(fnx.zeros(1, dtype=fnx.float64))
    opt = optim.SGD([p], lr=0.1)
    sched = L.OneCycleLR(opt, max_lr=1.0, total_steps=10, cycle_momentum=False)
    assert opt.param_groups[0]["momentum"] == 0
    used = []
    for _ in range(10):
        used.append(sched.get_last_lr()[0])
        p.grad = fnx.ones(1, dtype=fnx.float64)
        opt.step()
        sched.step()
    assert p.item() == pytest.approx(-sum(used), rel=1e-12)   # each step moved by its lr
    assert opt.param_groups[0]["momentum"] == 0                # cycle_momentum=False


class _NoMomentum(optim.Optimizer):
    def __init__(self, params):
        super().__init__(params, {"lr": 0.1})


@pytest.mark.parametrize("kwargs, error, match", [
    ({}, ValueError, r"either total_steps OR \(epochs AND steps_per_epoch\)"),
    ({"epochs": 3}, ValueError, "either total_steps OR"),
    ({"total_steps": 0}, ValueError, "Expected positive integer total_steps, but got 0"),
    ({"total_steps": 5.0}, ValueError, "Expected positive integer total_steps"),
    ({"epochs": 0, "steps_per_epoch": 2}, ValueError, "Expected positive integer epochs"),
    ({"epochs": 2, "steps_per_epoch": -1}, ValueError, "positive integer steps_per_epoch"),
    ({"total_steps": 10, "pct_start": 1}, ValueError, "Expected float between 0 and 1"),
    ({"total_steps": 10, "pct_start": 1.5}, ValueError, "Expected float between 0 and 1"),
    ({"total_steps": 10, "anneal_strategy": "exp"}, ValueError, "'cos' or 'linear'"),
    ({"total_steps": 10, "max_momentum": [0.9, 0.9]}, ValueError,
     "max_momentum must have the same length as optimizer.param_groups"),
    ({"total_steps": 10, "pct_start": 0.1}, ZeroDivisionError, "phase 0 of the schedule"),
])
def test_one_cycle_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        L.OneCycleLR(_sgd(momentum=0.9), 1.0, **kwargs)


def test_one_cycle_needs_a_momentum_to_cycle():
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        L.OneCycleLR(_NoMomentum(_params()), 1.0, total_steps=10)
    L.OneCycleLR(_NoMomentum(_params()), 1.0, total_steps=10, cycle_momentum=False)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        L.OneCycleLR(object(), 1.0, total_steps=10)


def test_one_cycle_state_dict_resumes_the_schedule():
    a = L.OneCycleLR(_sgd(momentum=0.9), 1.0, total_steps=12)
    _run(a, 5)
    opt = _sgd(momentum=0.9)
    b = L.OneCycleLR(opt, 1.0, total_steps=12)
    b.load_state_dict(a.state_dict())
    for g, h in zip(opt.param_groups, a.optimizer.param_groups):
        g.update(lr=h["lr"], momentum=h["momentum"])
    np.testing.assert_allclose(_run(b, 6)[0], _run(a, 6)[0], rtol=1e-15)


# ----------------------------------------------------------------------------- plateau

def test_reduce_on_plateau_min_rel_with_patience_cooldown_and_min_lr():
    opt = _sgd(1.0)
    sched = L.ReduceLROnPlateau(opt, factor=0.5, patience=2, threshold=0.1, cooldown=1,
                                min_lr=0.2)
    metrics = [10, 9.5, 9.2, 9.1, 8.0] + [8.0] * 11
    got = []
    for m in metrics:
        opt.step()
        sched.step(fnx.tensor(m))           # a 0-dim tensor metric is read with float()
        got.append(sched.get_last_lr()[0])
    # 10 is the best; 9.5, 9.2, 9.1 miss best * 0.9 = 9: 3 bad epochs > patience -> 0.5.
    # 8.0 improves (in cooldown, which ends); then three misses -> 0.25, one epoch of
    # cooldown, three more misses -> max(0.125, min_lr) = 0.2, and 0.2 stays.
    assert got == [1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25, 0.2, 0.2, 0.2, 0.2,
                   0.2]
    assert sched.best == 8.0 and sched.last_epoch == len(metrics)


def test_reduce_on_plateau_max_abs_per_group_min_lrs():
    opt = optim.SGD([{"params": [nn.Parameter(fnx.zeros(1))]},
                     {"params": [nn.Parameter(fnx.zeros(1))], "lr": 0.5}], lr=1.0)
    sched = L.ReduceLROnPlateau(opt, mode="max", threshold_mode="abs", threshold=0.05,
                                patience=0, factor=0.1, min_lr=[0.05, 0.0])
    got = []
    for m in [0.5, 0.6, 0.62, 0.7, 0.7, 0.74, 0.8]:
        sched.step(m)
        got.append(sched.get_last_lr())
    # improvements need > best + 0.05: 0.62 (best 0.6), the second 0.7 and 0.74 (best 0.7)
    # miss, each reducing both groups at once (group 0 stops at its min_lr 0.05)
    np.testing.assert_allclose(got, [[1, 0.5], [1, 0.5], [0.1, 0.05], [0.1, 0.05],
                                     [0.05, 0.005], [0.05, 0.0005], [0.05, 0.0005]],
                               rtol=1e-12)


def test_reduce_on_plateau_max_rel_and_eps():
    sched = L.ReduceLROnPlateau(_sgd(1.0), mode="max", threshold=0.1, patience=0, eps=0.3,
                                factor=0.5)
    got = []
    for m in [1.0, 1.05, 1.2, 1.2, 1.2]:
        sched.step(m)
        got.append(sched.get_last_lr()[0])
    # 1.05 misses 1.0 * 1.1 -> 0.5; 1.2 improves; then 0.5 -> 0.25 is a change of 0.25,
    # under eps, so it is skipped (twice)
    assert got == [1.0, 0.5, 0.5, 0.5, 0.5]


def test_reduce_on_plateau_state_dict_errors_and_epoch_warning():
    a = L.ReduceLROnPlateau(_sgd(1.0), patience=1, factor=0.5)
    for m in [3.0, 3.0]:
        a.step(m)
    b = L.ReduceLROnPlateau(_sgd(1.0), mode="max")
    b.load_state_dict(a.state_dict())
    assert "optimizer" not in a.state_dict()
    assert (b.mode, b.best, b.num_bad_epochs, b.mode_worse) == ("min", 3.0, 1, math.inf)
    b.step(3.0)
    assert b.get_last_lr() == [0.5]          # the loaded bad epoch counted
    with pytest.warns(UserWarning, match="epoch parameter"):
        b.step(1.0, epoch=10)
    assert b.last_epoch == 10
    for kwargs, match in [({"factor": 1.0}, "Factor should be < 1.0"),
                          ({"mode": "avg"}, "mode avg is unknown"),
                          ({"threshold_mode": "pct"}, "threshold mode pct is unknown"),
                          ({"min_lr": [0.1, 0.1]}, "expected 1 min_lrs, got 2")]:
        with pytest.raises(ValueError, match=match):
            L.ReduceLROnPlateau(_sgd(), **kwargs)
    opt = _sgd()
    sched = L.ReduceLROnPlateau(opt, min_lr=[0.0], patience=0)
    opt.add_param_group({"params": [nn.Parameter(fnx.zeros(1))]})
    sched.step(1.0)
    with pytest.raises(RuntimeError, match="number of param groups"):
        sched.step(2.0)


# ----------------------------------------------------------------------------- closed forms

def test_polynomial_lr():
    base, n, power = 0.5, 6, 1.5
    lrs, _ = _run(L.PolynomialLR(_sgd(base), total_iters=n, power=power), 9)
    np.testing.assert_allclose(lrs, [base * (1 - min(t, n) / n) ** power for t in range(10)],
                               rtol=1e-12, atol=1e-15)
    sched = L.PolynomialLR(_sgd(base), total_iters=n, power=power)
    with pytest.warns(UserWarning, match="epoch parameter"):
        sched.step(3)                         # the closed form at an epoch
    assert sched.get_last_lr()[0] == pytest.approx(base * 0.5 ** power)


def _restart_position(t, t0, mult):
    """(T_cur, T_i) at epoch t: subtract whole periods T_0, T_0 * mult, ..."""
    period = t0
    while t >= period:
        t -= period
        period *= mult
    return t, period


@pytest.mark.parametrize("t0, mult", [(3, 1), (2, 3)])
def test_cosine_annealing_warm_restarts(t0, mult):
    base, lo = 0.5, 0.01
    sched = L.CosineAnnealingWarmRestarts(_sgd(base), T_0=t0, T_mult=mult, eta_min=lo)
    lrs, _ = _run(sched, 14)
    expect = [lo + (base - lo) * (1 + math.cos(math.pi * c / p)) / 2
              for c, p in (_restart_position(t, t0, mult) for t in range(15))]
    np.testing.assert_allclose(lrs, expect, rtol=1e-12)
    for epoch in [0.5, 2.25, 7.3, 20.0, 1]:     # fractional epochs, in any order
        sched.step(epoch)
        c, p = _restart_position(epoch, t0, mult)
        assert sched.get_last_lr()[0] == pytest.approx(
            lo + (base - lo) * (1 + math.cos(math.pi * c / p)) / 2, rel=1e-12)
    with pytest.raises(ValueError, match="Expected non-negative epoch"):
        sched.step(-1)
    for kwargs, match in [({"T_0": 0}, "positive integer T_0"),
                          ({"T_0": 2, "T_mult": 0}, "integer T_mult >= 1"),
                          ({"T_0": 2, "eta_min": "0"}, "float or int eta_min")]:
        with pytest.raises(ValueError, match=match):
            L.CosineAnnealingWarmRestarts(_sgd(), **kwargs)


def _triangle(t, up, down):
    """The rise (0 at the cycle's start, 1 at its peak) at iteration t, and the cycle."""
    p = t % (up + down)
    return (p / up if p <= up else 1 - (p - up) / down), t // (up + down) + 1


@pytest.mark.parametrize("mode, scale", [
    ("triangular", lambda cycle, t: 1.0),
    ("triangular2", lambda cycle, t: 0.5 ** (cycle - 1)),
    ("exp_range", lambda cycle, t: 0.9 ** t),
])
def test_cyclic_lr_modes_and_momentum(mode, scale):
    up, down, lo, hi = 3, 2, 0.01, 0.1
    sched = L.CyclicLR(_sgd(0.5, momentum=0.5), lo, hi, step_size_up=up, step_size_down=down,
                       mode=mode, gamma=0.9, base_momentum=0.8, max_momentum=0.95)
    lrs, moms = _run(sched, 16)
    rises = [(r * scale(c, t)) for t, (r, c) in ((t, _triangle(t, up, down))
                                                  for t in range(17))]
    np.testing.assert_allclose(lrs, [lo + (hi - lo) * r for r in rises], rtol=1e-12)
    np.testing.assert_allclose(moms, [0.95 - 0.15 * r for r in rises], rtol=1e-12)


def test_cyclic_lr_custom_scale_betas_and_state_dict():
    opt = optim.Adam(_params(2), lr=0.5)
    sched = L.CyclicLR(opt, [0.01, 0.02], 0.1, step_size_up=2,
                       scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations")
    got = []
    for t in range(9):
        got.append(sched.get_last_lr())
        r = _triangle(t, 2, 2)[0] / (1 + t)
        assert opt.param_groups[1]["betas"][0] == pytest.approx(0.9 - 0.1 * r, rel=1e-12)
        opt.step()
        sched.step()
    expect = [[lo + (0.1 - lo) * _triangle(t, 2, 2)[0] / (1 + t) for lo in (0.01, 0.02)]
              for t in range(9)]
    np.testing.assert_allclose(got, expect, rtol=1e-12)
    state = sched.state_dict()
    assert state["_scale_fn_custom"] is None and "optimizer" not in state   # code is not state
    twin = L.CyclicLR(optim.Adam(_params(2), lr=0.5), [0.01, 0.02], 0.1, step_size_up=2,
                      scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations")
    twin.load_state_dict(state)
    assert twin.last_epoch == 9 and twin._scale_fn_custom is not None
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        L.CyclicLR(_sgd(momentum=0.9), 0.1, 1.0, mode="sine")
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        L.CyclicLR(_NoMomentum(_params()), 0.1, 1.0)


# ----------------------------------------------------------------------------- composites

def test_sequential_lr_switches_at_milestones():
    opt = _sgd(1.0)
    warm = L.LinearLR(opt, start_factor=0.1, total_iters=3)
    cos = L.CosineAnnealingLR(opt, T_max=4)
    step = L.StepLR(opt, 2, 0.5)
    sched = L.SequentialLR(opt, [warm, cos, step], milestones=[3, 7])
    lrs, _ = _run(sched, 13)

    def expect(t):
        if t < 3:
            return 0.1 + 0.9 * t / 3
        if t < 7:
            return (1 + math.cos(math.pi * (t - 3) / 4)) / 2
        return 0.5 ** ((t - 7) // 2)
    np.testing.assert_allclose(lrs, [expect(t) for t in range(14)], rtol=1e-12, atol=1e-15)
    state = sched.state_dict()
    assert len(state["_schedulers"]) == 3 and "optimizer" not in state
    twin_opt = _sgd(1.0)
    twin = L.SequentialLR(twin_opt, [L.LinearLR(twin_opt, start_factor=0.1, total_iters=3),
                                     L.CosineAnnealingLR(twin_opt, T_max=4),
                                     L.StepLR(twin_opt, 2, 0.5)], milestones=[3, 7])
    twin.load_state_dict(state)
    assert twin.last_epoch == 13 and twin._schedulers[2].last_epoch == step.last_epoch


def test_sequential_lr_errors():
    opt = _sgd()
    with pytest.raises(ValueError, match="expects at least one scheduler"):
        L.SequentialLR(opt, [], [])
    with pytest.raises(ValueError, match="one more than the number of milestone points"):
        L.SequentialLR(opt, [L.StepLR(opt, 2), L.StepLR(opt, 2)], [])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        L.SequentialLR(opt, [L.StepLR(opt, 2), L.ReduceLROnPlateau(opt)], [2])
    with pytest.raises(ValueError, match="belong to the same optimizer"):
        L.SequentialLR(opt, [L.StepLR(_sgd(), 2)], [])
    with pytest.raises(TypeError, match="at index 1 should have `optimizer`"):
        L.SequentialLR(opt, [L.StepLR(opt, 2), object()], [2])


def test_chained_scheduler_composes():
    opt = _sgd(1.0)
    sched = L.ChainedScheduler([L.ExponentialLR(opt, 0.9),
                                L.PolynomialLR(opt, total_iters=4, power=2.0),
                                L.StepLR(opt, 3, 0.5)])
    lrs, _ = _run(sched, 8)
    np.testing.assert_allclose(
        lrs, [0.9 ** t * (1 - min(t, 4) / 4) ** 2 * 0.5 ** (t // 3) for t in range(9)],
        rtol=1e-12, atol=1e-15)
    assert len(sched.state_dict()["_schedulers"]) == 3
    with pytest.raises(ValueError, match="at least one scheduler to be chained"):
        L.ChainedScheduler([])
    with pytest.raises(ValueError, match="belong to the same optimizer"):
        L.ChainedScheduler([L.StepLR(opt, 2), L.StepLR(_sgd(), 2)])
