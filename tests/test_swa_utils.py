"""fnx.optim.swa_utils: averaged models (SWA, EMA), SWALR and update_bn, against NumPy
recurrences and the closed-form annealing schedule."""
import math

import numpy as np
import pytest

import fnx
from fnx import nn
from fnx.optim.swa_utils import (SWALR, AveragedModel, get_ema_avg_fn, get_ema_multi_avg_fn,
                                 get_swa_multi_avg_fn, update_bn)


def _weights(seed=0, steps=5):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(steps)]


def _set(model, w):
    with fnx.no_grad():
        model.weight.copy_(fnx.tensor(w))


@pytest.mark.parametrize("kind", ["swa", "ema_multi", "ema_one"])
def test_averages_follow_their_recurrence(kind):
    model = nn.Linear(3, 2, bias=False)
    avg = {"swa": lambda: AveragedModel(model),
           "ema_multi": lambda: AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.75)),
           "ema_one": lambda: AveragedModel(model, avg_fn=get_ema_avg_fn(0.75))}[kind]()
    ws = _weights()
    expected = None
    for n, w in enumerate(ws):
        _set(model, w)
        avg.update_parameters(model)
        w64 = w.astype(np.float64)
        if expected is None:
            expected = w64
        elif kind == "swa":
            expected = expected + (w64 - expected) / (n + 1)
        else:
            expected = 0.75 * expected + 0.25 * w64
    if kind == "swa":
        np.testing.assert_allclose(expected, np.mean(ws, axis=0, dtype=np.float64), rtol=1e-12)
    np.testing.assert_allclose(avg.module.weight.detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    assert avg.n_averaged.item() == len(ws) and avg.n_averaged.dtype is fnx.int64
    assert avg.module is not model and avg.module.weight is not model.weight
    x = fnx.ones(1, 3)
    np.testing.assert_allclose(avg(x).detach().numpy(), np.ones((1, 3)) @ expected.T, rtol=1e-5)


def test_buffers_are_copied_or_averaged():
    model = nn.BatchNorm1d(2)
    copied, averaged = AveragedModel(model), AveragedModel(model, use_buffers=True)
    means = []
    rng = np.random.default_rng(1)
    for _ in range(3):
        model(fnx.tensor(rng.standard_normal((4, 2)).astype(np.float32)))
        means.append(model.running_mean.numpy().astype(np.float64))
        copied.update_parameters(model)
        averaged.update_parameters(model)
    np.testing.assert_allclose(copied.module.running_mean.numpy(), means[-1], rtol=1e-6)
    np.testing.assert_allclose(averaged.module.running_mean.numpy(), np.mean(means, axis=0),
                               rtol=1e-5, atol=1e-7)
    # an integer buffer takes the truncated equal-weighted average: 1, 1 + 1/2, 1 + 2/3
    assert copied.module.num_batches_tracked.item() == 3
    assert averaged.module.num_batches_tracked.item() == 1
    assert list(averaged.state_dict())[:2] == ["n_averaged", "module.weight"]


def test_multi_avg_fn_is_called_per_dtype_group():
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1).double())
    calls = []
    swa = get_swa_multi_avg_fn()

    def recorded(avg, cur, n):
        calls.append((avg[0].dtype, len(avg), n.item()))
        swa(avg, cur, n)
    averaged = AveragedModel(model, multi_avg_fn=recorded)
    averaged.update_parameters(model)
    assert calls == []                      # the first update copies
    averaged.update_parameters(model)
    assert calls == [(fnx.float32, 2, 1), (fnx.float64, 2, 1)]


def test_bad_arguments():
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        AveragedModel(nn.Linear(1, 1), avg_fn=get_ema_avg_fn(), multi_avg_fn=get_swa_multi_avg_fn())
    with pytest.raises(ValueError, match=r"Invalid decay value 1.5 .*\[0,1\]"):
        get_ema_multi_avg_fn(1.5)
    opt = fnx.optim.SGD(nn.Linear(1, 1).parameters(), lr=1.0)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        SWALR(opt, swa_lr=0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        SWALR(opt, swa_lr=0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr must have the same length"):
        SWALR(opt, swa_lr=[0.1, 0.2])


@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_swalr_anneals_to_swa_lr(strategy):
    opt = fnx.optim.SGD([{"params": [nn.Parameter(fnx.zeros(1))]},
                         {"params": [nn.Parameter(fnx.zeros(1))], "lr": 2.0}], lr=1.0)
    sched = SWALR(opt, swa_lr=[0.1, 0.5], anneal_epochs=4, anneal_strategy=strategy)
    anneal = (lambda t: (1 - math.cos(math.pi * t)) / 2) if strategy == "cos" else (lambda t: t)
    for k in range(1, 8):
        opt.step()
        sched.step()
        alpha = anneal(min(1.0, k / 4))
        for lr, start, swa_lr in zip(sched.get_last_lr(), (1.0, 2.0), (0.1, 0.5)):
            assert lr == pytest.approx(swa_lr * alpha + start * (1 - alpha), rel=1e-12)
    state = sched.state_dict()
    assert "optimizer" not in state and "anneal_func" not in state
    other = SWALR(opt, swa_lr=0.3, anneal_strategy="linear" if strategy == "cos" else "cos")
    other.load_state_dict(state)
    assert other.anneal_func(0.5) == anneal(0.5)


def test_swalr_without_annealing_jumps_to_swa_lr():
    opt = fnx.optim.SGD([nn.Parameter(fnx.zeros(1))], lr=1.0)
    assert SWALR(opt, swa_lr=0.25, anneal_epochs=0).get_last_lr() == [0.25]


def test_update_bn_recomputes_cumulative_statistics():
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    model.eval()
    rng = np.random.default_rng(2)
    batches = [rng.standard_normal((5, 2)).astype(np.float32) for _ in range(3)]
    loader = [(fnx.tensor(b), fnx.zeros(5)) for b in batches]   # (input, target) pairs
    with fnx.no_grad():
        feats = [model[0](fnx.tensor(b)).numpy().astype(np.float64) for b in batches]
    update_bn(loader, model)
    # momentum None: the running statistics are the plain average over batches
    np.testing.assert_allclose(model[1].running_mean.numpy(),
                               np.mean([f.mean(0) for f in feats], axis=0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model[1].running_var.numpy(),
                               np.mean([f.var(0, ddof=1) for f in feats], axis=0), rtol=1e-5)
    assert model[1].momentum == 0.1 and not model.training
    assert model[1].num_batches_tracked.item() == 3
    plain = nn.Linear(2, 2)
    update_bn(loader, plain)                 # no BatchNorm: nothing to do
