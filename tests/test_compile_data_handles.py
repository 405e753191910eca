"""``p.data`` inside a compiled function: a new handle on a parameter's memory on every
read. The trace takes it as an alias of the parameter (``FunctionalTracingMode.
_same_memory``), so a write through it is the parameter's write, as eagerly: a DQN target
network's soft update and WGAN's weight clipping compile to one program instead of running
eagerly as "a tensor that shares memory with another input"."""
import copy
import warnings

import numpy as np
import pytest

import fnx
import fnx.nn.functional as F
from fnx import nn


def _net():
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))


def _dqn_update(net, target, opt, s, a, r, s2, done, gamma=0.99, tau=0.05):
    q = net(s).gather(1, a.unsqueeze(1)).squeeze(1)
    with fnx.no_grad():
        y = r + gamma * target(s2).max(1)[0] * (1 - done)
    loss = F.smooth_l1_loss(q, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    for tp, p in zip(target.parameters(), net.parameters()):
        tp.data.copy_(tau * p.data + (1 - tau) * tp.data)     # (tp itself never read)
    for p in net.parameters():
        p.data.clamp_(-0.3, 0.3)
    return loss.detach()


def test_soft_update_and_clipping_through_data_compile_and_match_eager():
    fnx.manual_seed(0)
    net = _net()
    nets = [(net, copy.deepcopy(net)), (copy.deepcopy(net), copy.deepcopy(net))]
    opts = [fnx.optim.Adam(n.parameters(), 1e-2) for n, _ in nets]
    step = fnx.compile(_dqn_update)
    rng = np.random.default_rng(0)
    warnings.simplefilter("error", UserWarning)     # (no "running it eagerly")
    for _ in range(5):
        batch = [fnx.tensor(rng.standard_normal((8, 4)).astype(np.float32)),
                 fnx.tensor(rng.integers(0, 2, 8)),
                 fnx.tensor(rng.standard_normal(8).astype(np.float32)),
                 fnx.tensor(rng.standard_normal((8, 4)).astype(np.float32)),
                 fnx.tensor((rng.random(8) < 0.2).astype(np.float32))]
        want = _dqn_update(*nets[0], opts[0], *batch).item()
        assert step(*nets[1], opts[1], *batch).item() == pytest.approx(want, rel=1e-5)
    (a, b), (c, d) = nets          # (eager's net and target, the compiled step's)
    for p, q in zip([*a.parameters(), *b.parameters()], [*c.parameters(), *d.parameters()]):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5,
                                   atol=1e-7)
    assert max(p.detach().abs().max().item() for p in nets[1][0].parameters()) <= np.float32(0.3)
    assert len(step.entries()) >= 1


def test_a_data_handle_written_and_read_back_within_the_function():
    # the write through one handle is seen through the parameter and through a later
    # handle, in the same trace
    w = nn.Parameter(fnx.tensor([1.0, -2.0, 3.0]))

    def f(x):
        w.data.mul_(2)
        return (x * w).sum() + w.data.sum()

    g = fnx.compile(f)
    warnings.simplefilter("error", UserWarning)
    for k in range(1, 4):
        got = g(fnx.ones(3)).item()
        assert got == pytest.approx(2 * 2 * 2.0 ** k)     # sum(w) = 2 * 2**k, twice
        np.testing.assert_array_equal(w.detach().numpy(), np.array([1.0, -2.0, 3.0]) * 2 ** k)


def test_a_parameter_given_new_data_after_compiling_is_written():
    # ``tp`` itself is never read, only ``tp.data``: the program read and wrote the array
    # the first handle held, so after ``tp.data = ...`` the updates went nowhere
    tp, p = nn.Parameter(fnx.zeros(3)), nn.Parameter(fnx.ones(3))

    def update():
        tp.data.copy_(0.5 * p.data + 0.5 * tp.data)

    f = fnx.compile(update)
    f()
    f()
    np.testing.assert_allclose(tp.detach().numpy(), [0.75] * 3)
    tp.data = fnx.zeros(3)
    f()
    np.testing.assert_allclose(tp.detach().numpy(), [0.5] * 3)


def test_assigning_data_is_a_write_of_the_tensor():
    # ``p.data = p.data - lr * p.grad.data`` (pre-optimizer SGD) and ``x.data = 2 * x``
    # on an argument: once ignored compiled (the argument) or left a meta array in the
    # parameter, which the eager rerun then failed on
    def run(compiled):
        fnx.manual_seed(0)
        lin = nn.Linear(3, 2)

        def step(inp):
            loss = (lin(inp) ** 2).sum()
            lin.zero_grad()
            loss.backward()
            for p in lin.parameters():
                p.data = p.data - 0.1 * p.grad.data
            return loss.detach()
        f = fnx.compile(step) if compiled else step
        with warnings.catch_warnings():
            warnings.simplefilter("error")      # compiled, not eager
            losses = [f(fnx.ones(2, 3) * k).item() for k in range(1, 4)]
        return losses, [p.detach().numpy() for p in lin.parameters()], f
    (l1, w1, _), (l2, w2, f) = run(False), run(True)
    np.testing.assert_allclose(l2, l1, rtol=1e-6)
    for a, b in zip(w1, w2):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
    assert f._eager_reason is None

    def double(x):
        x.data = x.data * 2
        return x + 1
    x, y = fnx.ones(3), fnx.ones(3)
    assert fnx.compile(double)(x).tolist() == double(y).tolist() == [3.0] * 3
    assert x.tolist() == y.tolist() == [2.0] * 3


def test_assigning_data_that_a_program_cannot_express_runs_eagerly():
    # a new shape, or another tensor's memory shared beyond the call: eager semantics
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)

    def tie():
        b.weight.data = a.weight.data
        return b.weight.sum()
    with pytest.warns(UserWarning, match="share memory after the call"):
        fnx.compile(tie)()
    assert np.shares_memory(a.weight.detach().numpy(), b.weight.detach().numpy())

    def flat(x):
        x.data = x.data.reshape(4)
        return x
    x = fnx.ones(2, 2)
    with pytest.warns(UserWarning, match="cannot change a tensor's shape"):
        assert fnx.compile(flat)(x).shape == (4,) and x.shape == (4,)
