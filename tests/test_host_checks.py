"""Value checks a compiled call evaluates on the host (``fnx.lower.host_checks``).

A range check on a CPU input a few integer ops away (class targets, embedding ids) runs
in NumPy before the call, so the call does not wait for the program's check status; the
program then runs without that check. These tests pin down that the host path is taken
where it should be, that results are unchanged, and that a bad value still raises
eager's error with every tensor unchanged (the program with all its checks decides).
"""
from __future__ import annotations

import numpy as np
import pytest

import fnx
import fnx.nn as nn
from fnx.testing import models
from fnx.lower.host_checks import HostChecks

cuda = pytest.mark.skipif(not fnx.cuda.is_available(),
                          reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")


def _plan(f):
    (entry,) = f.entries()
    return entry._plan


def _np_cross_entropy(logits, target, ignore_index=-100):
    z = logits - logits.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    keep = target != ignore_index
    return -logp[np.arange(len(target))[keep], target[keep]].mean()


_step = models.training_step


def _models(seed=0):
    fnx.manual_seed(seed)
    a = nn.Linear(6, 5)
    b = nn.Linear(6, 5)
    b.load_state_dict(a.state_dict())
    return a, b


def test_training_step_checks_targets_on_host_and_matches_eager():
    rng = np.random.default_rng(0)
    eager_m, comp_m = _models()
    eager = _step(eager_m, fnx.optim.SGD(eager_m.parameters(), lr=0.1))
    comp = fnx.compile(_step(comp_m, fnx.optim.SGD(comp_m.parameters(), lr=0.1)))
    for k in range(4):
        x_np = rng.standard_normal((8, 6)).astype(np.float32)
        y_np = rng.integers(0, 5, 8)
        y_np[k] = -100                     # ignored: passes the check
        x, y = fnx.tensor(x_np), fnx.tensor(y_np)
        w = eager_m.weight.detach().numpy().copy()
        b = eager_m.bias.detach().numpy().copy()
        ref = _np_cross_entropy(x_np @ w.T + b, y_np)
        le, lc = eager(x, y), comp(x, y)
        np.testing.assert_allclose(le.item(), ref, rtol=1e-5)
        np.testing.assert_allclose(lc.item(), le.item(), rtol=1e-6)
    np.testing.assert_allclose(comp_m.weight.detach().numpy(),
                               eager_m.weight.detach().numpy(), rtol=1e-5, atol=1e-7)
    plan = _plan(comp)
    assert plan.host is not None
    # every range check of the step is on the host: the program run has none left
    assert plan.program.without_checks(plan.host.skip).checks == []


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=cuda)])
@pytest.mark.parametrize("bad", [5, -3])
def test_bad_target_raises_eager_error_and_changes_nothing(bad, device):
    eager_m, comp_m = _models()
    comp_m.to(device)
    eager = _step(eager_m, fnx.optim.SGD(eager_m.parameters(), lr=0.1, momentum=0.9))
    comp = fnx.compile(_step(comp_m, fnx.optim.SGD(comp_m.parameters(), lr=0.1,
                                                   momentum=0.9)))
    x = fnx.randn(4, 6)
    good = fnx.tensor([0, 1, 2, 3])
    for _ in range(2):
        eager(x, good)
        comp(x.to(device), good.to(device))
    y = fnx.tensor([0, bad, 2, 3])
    with pytest.raises(Exception) as e_eager:
        eager(x, y)
    before = {k: v.detach().cpu().numpy().copy() for k, v in comp_m.state_dict().items()}
    grads = [p.grad.cpu().numpy().copy() for p in comp_m.parameters()]
    with pytest.raises(type(e_eager.value)) as e_comp:
        comp(x.to(device), y.to(device))
    assert str(e_comp.value) == str(e_eager.value)
    for k, v in comp_m.state_dict().items():
        assert np.array_equal(v.detach().cpu().numpy(), before[k]), k
    for p, g in zip(comp_m.parameters(), grads):
        assert np.array_equal(p.grad.cpu().numpy(), g)
    # and it trains on afterwards, as eager does
    np.testing.assert_allclose(comp(x.to(device), good.to(device)).item(),
                               eager(x, good).item(), rtol=1e-5)


def test_embedding_ids_checked_on_host():
    fnx.manual_seed(0)
    emb = nn.Embedding(7, 3).requires_grad_(False)     # (a differentiable output runs
    f = fnx.compile(lambda i: emb(i) * 2)             # the jax.vjp path instead)
    ids = np.array([[0, 6], [3, 3]])
    f(fnx.tensor(ids))
    out = f(fnx.tensor(ids))
    table = emb.weight.detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), table[ids] * 2, rtol=1e-6)
    assert _plan(f).host is not None
    with pytest.raises(IndexError) as e_eager:
        emb(fnx.tensor([[0, 7], [1, 1]]))
    with pytest.raises(IndexError) as e_comp:
        f(fnx.tensor([[0, 7], [1, 1]]))
    assert str(e_comp.value) == str(e_eager.value)


def test_embedding_ids_checked_on_host_when_differentiable():
    # a differentiable output runs the jax.vjp path, whose checks run before the forward
    fnx.manual_seed(0)
    emb = nn.Embedding(7, 3)
    f = fnx.compile(lambda i: emb(i).sum())
    ids = fnx.tensor([[0, 6], [3, 3]])
    for _ in range(2):
        emb.weight.grad = None
        f(ids).backward()
    counts = np.zeros(7)
    np.add.at(counts, ids.numpy().ravel(), 1.0)
    np.testing.assert_allclose(emb.weight.grad.numpy(), np.repeat(counts[:, None], 3, 1))
    with pytest.raises(IndexError) as e_eager:
        emb(fnx.tensor([[0, 7], [1, 1]]))
    with pytest.raises(IndexError) as e_comp:
        f(fnx.tensor([[0, 7], [1, 1]]))
    assert str(e_comp.value) == str(e_eager.value)


def test_index_computed_from_floats_stays_in_the_program():
    # the checked index comes from float math: not evaluated on the host (rounding would
    # have to agree bit for bit), so the program keeps its check and still raises
    src = fnx.arange(10.0)

    def pick(x):
        return src[(x * 3).long()]
    f = fnx.compile(pick)
    f(fnx.tensor([0.0, 1.0, 2.0]))
    np.testing.assert_array_equal(f(fnx.tensor([0.0, 1.0, 2.9])).numpy(),
                                  np.arange(10.0)[[0, 3, 8]])
    plan = _plan(f)
    program = plan.program if plan.host is None else \
        plan.program.without_checks(plan.host.skip)
    assert program.checks, "the float-derived index check must stay in the program"
    with pytest.raises(IndexError):
        f(fnx.tensor([0.0, 4.0, 1.0]))


def test_no_host_checks_without_range_checks():
    f = fnx.compile(lambda a: (a * 2).sum())
    f(fnx.ones(3))
    assert _plan(f).host is None
    assert HostChecks.of(_plan(f).program, _plan(f).feed) is None


@cuda
def test_cuda_targets_checked_on_host_with_one_copy_per_array():
    # a cuda step's targets are copied to the host once per array: the same targets fed
    # again cost no copy and the program runs without checks (no wait for its status)
    rng = np.random.default_rng(1)
    eager_m, comp_m = _models()
    comp_m.to("cuda")
    eager = _step(eager_m, fnx.optim.SGD(eager_m.parameters(), lr=0.1))
    comp = fnx.compile(_step(comp_m, fnx.optim.SGD(comp_m.parameters(), lr=0.1)))
    x_np = rng.standard_normal((8, 6)).astype(np.float32)
    y_np = rng.integers(0, 5, 8)
    x, y = fnx.tensor(x_np, device="cuda"), fnx.tensor(y_np, device="cuda")
    for _ in range(3):
        le, lc = eager(fnx.tensor(x_np), fnx.tensor(y_np)), comp(x, y)
        np.testing.assert_allclose(lc.item(), le.item(), rtol=1e-5)
    plan = _plan(comp)
    assert plan.host is not None
    assert plan.program.without_checks(plan.host.skip).checks == []
    ((seen, host),) = plan.host._copies.values()
    assert seen is y._data and np.array_equal(host, y_np)
    comp(x, y)
    assert plan.host._copies[next(iter(plan.host._copies))][1] is host    # reused
    y2 = fnx.tensor(rng.integers(0, 5, 8), device="cuda")
    comp(x, y2)
    assert np.array_equal(next(iter(plan.host._copies.values()))[1], y2.cpu().numpy())


def test_checks_that_passed_are_redone_when_the_values_change():
    # The host checks remember the immutable arrays they last passed on; a tensor written
    # in place, or a new tensor, is checked again (never waved through by that memory).
    fnx.manual_seed(0)
    emb = nn.Embedding(7, 3).requires_grad_(False)
    f = fnx.compile(lambda i: emb(i) * 2)
    ids = fnx.tensor([[0, 6], [3, 3]])
    table = emb.weight.numpy().copy()
    for _ in range(3):
        np.testing.assert_allclose(f(ids).numpy(), table[[[0, 6], [3, 3]]] * 2)
    host = _plan(f).host
    assert host is not None and host._passed is not None, "the same ids were remembered"
    ids[0, 1] = 7                           # in place: out of range now
    with pytest.raises(IndexError):
        f(ids)
    ids[0, 1] = 5
    for _ in range(2):
        np.testing.assert_allclose(f(ids).numpy(), table[[[0, 5], [3, 3]]] * 2)
    with pytest.raises(IndexError):
        f(fnx.tensor([[0, -8], [1, 1]]))    # a new tensor of the same shape
    np.testing.assert_array_equal(ids.numpy(), [[0, 5], [3, 3]])
