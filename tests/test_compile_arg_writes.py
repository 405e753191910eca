"""What a compiled function does to the lists, dicts and objects it is given, and to the
optimizer it is given: a tensor it computes and appends or sets there is a program output
written into each call's own container (``call_key.ArgPlace``); an optimizer is held by
identity, so its parameters are the model's own tensors; a tensor passed in a list that
the model also reads is traced as that one tensor (the entry then fits calls passing it)."""
import copy
import warnings

import numpy as np
import pytest

import fnx
import fnx.nn.functional as F
from fnx import nn


class Batch:
    def __init__(self, x):
        self.x = x


def test_tensors_set_or_appended_in_passed_containers_are_replayed(traces):
    def step(x, outs, metrics, batch):
        y = x * 2
        outs.append(y)
        outs.append(y + 1)
        metrics["loss"] = (y * y).sum()
        batch.out = y + batch.x
        return y.sum()

    g = fnx.compile(step)
    rng = np.random.default_rng(0)
    warnings.simplefilter("error", UserWarning)     # (no "running it eagerly")
    for _ in range(4):
        x = rng.standard_normal(3).astype(np.float32)
        b = rng.standard_normal(3).astype(np.float32)
        outs, metrics, batch = [], {"seen": 1}, Batch(fnx.tensor(b))
        assert g(fnx.tensor(x), outs, metrics, batch).item() == pytest.approx(2 * x.sum(),
                                                                               rel=1e-5)
        assert len(outs) == 2
        np.testing.assert_allclose(outs[0].numpy(), 2 * x, rtol=1e-6)
        np.testing.assert_allclose(outs[1].numpy(), 2 * x + 1, rtol=1e-6)
        assert list(metrics) == ["seen", "loss"]        # (eager's item order)
        assert metrics["loss"].item() == pytest.approx(float((4 * x * x).sum()), rel=1e-5)
        np.testing.assert_allclose(batch.out.numpy(), 2 * x + b, rtol=1e-6)
    assert len(traces) == 1 and len(g.entries()) == 1


def test_an_item_replaced_in_a_passed_list_and_a_keyword_dict():
    g = fnx.compile(lambda x, buf, *, state: (buf.__setitem__(1, x + buf[1]),
                                              state.__setitem__("h", x * state["h"]))[0])
    buf = [fnx.zeros(2), fnx.ones(2)]
    state = {"h": fnx.full((2,), 3.0)}
    warnings.simplefilter("error", UserWarning)
    for k in range(3):
        g(fnx.tensor([1.0, 2.0]), buf, state=state)
        np.testing.assert_allclose(buf[1].numpy(), 1 + (k + 1) * np.array([1.0, 2.0]))
        np.testing.assert_allclose(state["h"].numpy(), 3 * np.array([1.0, 2.0]) ** (k + 1))
    assert buf[0].tolist() == [0.0, 0.0]
    assert len(g.entries()) == 1


def test_an_appended_tensor_keeps_its_gradient():
    fnx.manual_seed(0)
    lin = nn.Linear(3, 2)
    ref = copy.deepcopy(lin)

    def fwd(model, x, outs):
        y = model(x)
        outs.append(y)
        return y.sum()

    x = fnx.tensor(np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32))
    g = fnx.compile(fwd)
    warnings.simplefilter("error", UserWarning)
    for m, f in ((ref, fwd), (lin, g)):
        outs = []
        f(m, x, outs)
        (outs[0] ** 2).sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), ref.weight.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(lin.bias.grad.numpy(), ref.bias.grad.numpy(), rtol=1e-5)
    assert len(g.entries()) == 1


def test_a_list_that_grows_every_call_gets_every_value():
    g = fnx.compile(lambda x, hist: hist.append(x.sum() * 2) or x)
    hist = []
    for k in range(12):         # (each length is a new key: past cache_limit, eager)
        g(fnx.full((2,), float(k)), hist)
    assert [h.item() for h in hist] == [4.0 * k for k in range(12)]


def test_a_write_that_is_not_a_computed_tensor_runs_eagerly():
    # the argument itself appended: eager keeps that very object
    g = fnx.compile(lambda x, outs: outs.append(x) or x * 2)
    x, outs = fnx.ones(2), []
    with pytest.warns(UserWarning, match="changes a list, dict or object passed"):
        g(x, outs)
    assert outs[0] is x
    with pytest.raises(RuntimeError, match="only setting or appending a tensor"):
        fnx.compile(lambda x, d: d.pop("a") * x, fullgraph=True)(x, {"a": fnx.ones(2)})


def _train_step(model, opt, x, y, loss_fn=F.cross_entropy):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    return loss


@pytest.mark.parametrize("make", [lambda p: fnx.optim.SGD(p, 0.1, momentum=0.9),
                                  lambda p: fnx.optim.AdamW(p, 1e-2)],
                         ids=["sgd_momentum", "adamw"])
def test_an_optimizer_passed_as_an_argument_steps_the_models_parameters(make, traces):
    # An optimizer is not plain data: copied like a batch object, its parameter list held
    # the trace's placeholders while the model read its own parameters, so the compiled
    # step never moved the weights (the same losses for SGD and AdamW)
    fnx.manual_seed(0)
    ref = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    model = copy.deepcopy(ref)
    o_ref, o = make(ref.parameters()), make(model.parameters())
    step = fnx.compile(_train_step)
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = fnx.tensor(rng.standard_normal((5, 8)).astype(np.float32))
        y = fnx.tensor(rng.integers(0, 3, 5))
        want = _train_step(ref, o_ref, x, y).item()
        assert step(model, o, x, y).item() == pytest.approx(want, rel=1e-5)
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    assert len(traces) <= 3     # (the first step makes the optimizer's state)


class _HandSGD:
    """A hand-written optimizer (plain data: no state_dict) holding the parameters."""

    def __init__(self, params, lr):
        self.params, self.lr = list(params), lr

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        with fnx.no_grad():
            for p in self.params:
                if p.grad is not None:
                    p -= self.lr * p.grad


def test_parameters_passed_in_a_list_and_read_by_the_model_are_one_tensor():
    # ``step(model, opt, params)`` with a hand-written optimizer or ``clip_grad_norm_``
    # over a passed list: the model reads its parameters, the list holds the same
    # tensors. Traced as a placeholder and a captured tensor, the update went to the one
    # and the gradient to the other (the weights never moved, silently)
    fnx.manual_seed(0)
    ref = nn.Linear(4, 2)
    model = copy.deepcopy(ref)
    o_ref, o = _HandSGD(ref.parameters(), 0.1), _HandSGD(model.parameters(), 0.1)
    step = fnx.compile(_mse_step)
    rng = np.random.default_rng(0)
    warnings.simplefilter("error", UserWarning)
    for _ in range(4):
        x = fnx.tensor(rng.standard_normal((5, 4)).astype(np.float32))
        y = fnx.tensor(rng.standard_normal((5, 2)).astype(np.float32))
        want = _mse_step(ref, o_ref, x, y).item()
        assert step(model, o, x, y).item() == pytest.approx(want, rel=1e-5)
    np.testing.assert_allclose(model.weight.detach().numpy(), ref.weight.detach().numpy(),
                               rtol=1e-5)
    assert 1 <= len(step.entries()) <= 2
    # another list of other tensors does not reuse that program
    other = copy.deepcopy(ref)
    o2 = _HandSGD(other.parameters(), 0.1)
    before = other.weight.detach().clone()
    step(model, o2, x, y)       # (o2's tensors are not model's: nothing of model moves)
    np.testing.assert_array_equal(other.weight.detach().numpy(), before.numpy())
    np.testing.assert_allclose(model.weight.detach().numpy(), ref.weight.detach().numpy(),
                               rtol=1e-5)


def _mse_step(model, opt, x, y):
    return _train_step(model, opt, x, y, F.mse_loss)
