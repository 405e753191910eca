"""A compiled function gives back what eager Python gives back: a float it computed from
float arguments stays a Python float (recomputed from the call's inputs, so a new value
does not recompile), an ``out=`` tensor it returns is that very tensor, a view of an
input it returns is that view of the caller's tensor (a write through it reaches the
input), and dicts and dataclasses hold the values computed (a new instance per call)."""
from __future__ import annotations

import collections
import dataclasses
import math

import numpy as np
import pytest

import fnx


def test_float_result_from_float_argument_stays_a_float():
    f = fnx.compile(lambda x, s: (x * s, s * 2 + 1, [s / 4, x]))
    x = fnx.ones(2)
    for s in (1.5, 2.5, -3.0):
        t, v, (q, same) = f(x, s)
        assert type(v) is float and v == s * 2 + 1
        assert type(q) is float and q == s / 4
        assert same is x
        np.testing.assert_array_equal(t.numpy(), np.full(2, s, np.float32))
    assert len(f.entries()) == 1       # the float stays an input: no recompilation


def test_float_from_optimizer_option_returned():
    p = fnx.nn.Parameter(fnx.ones(3))
    opt = fnx.optim.SGD([p], lr=0.1)

    def step():
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
        return opt.param_groups[0]["lr"] * 10
    f = fnx.compile(step)
    for lr in (0.1, 0.05):
        opt.param_groups[0]["lr"] = lr
        out = f()
        assert type(out) is float and math.isclose(out, lr * 10)


def test_out_argument_is_returned_itself():
    g = fnx.compile(lambda x, o: fnx.exp(x, out=o))
    o = fnx.empty(3)
    for v in (0.0, 1.0):
        r = g(fnx.full((3,), v), o)
        assert r is o
        np.testing.assert_allclose(o.numpy(), np.exp(np.full(3, v, np.float32)), rtol=1e-6)


def test_in_place_method_returns_its_tensor():
    f = fnx.compile(lambda a: a.mul_(2))
    a = fnx.arange(3.0)
    assert f(a) is a
    assert f(a) is a
    np.testing.assert_array_equal(a.numpy(), np.arange(3.0) * 4)


def test_float_arguments_fed_as_kept_arrays_are_exact():
    # A float argument enters the program as a float64 array kept while its value
    # repeats; a new value, and a zero of the other sign, must be seen.
    f = fnx.compile(lambda x, s: x / s + s)
    x = fnx.tensor([1.0, -2.0], dtype=fnx.float64)
    for s in (2.0, 2.0, 0.5, 0.0, -0.0, -0.0, 0.0, 3.0, 3.0):
        with np.errstate(divide="ignore"):
            want = np.array([1.0, -2.0]) / s + s
        np.testing.assert_array_equal(f(x, s).numpy(), want)


class _DictModel(fnx.nn.Module):
    """Returns its outputs by name, as Hugging Face-style models do."""

    def __init__(self):
        super().__init__()
        fnx.manual_seed(0)
        self.lin = fnx.nn.Linear(3, 2)

    def forward(self, x, y):
        logits = self.lin(x)
        loss = fnx.nn.functional.cross_entropy(logits, y)
        return collections.OrderedDict(loss=loss, logits=logits)


def test_dict_results_hold_the_values_computed():
    # a dict result came back holding the trace's meta tensors
    f = fnx.compile(lambda x: {"sum": x.sum(), "parts": (x * 2, {"neg": -x})})
    for k in range(3):
        x = np.arange(4.0, dtype=np.float32) + k
        out = f(fnx.tensor(x))
        assert list(out) == ["sum", "parts"] and list(out["parts"][1]) == ["neg"]
        assert out["sum"].item() == x.sum()
        np.testing.assert_array_equal(out["parts"][0].numpy(), x * 2)
        np.testing.assert_array_equal(out["parts"][1]["neg"].numpy(), -x)
    eager, compiled = _DictModel(), _DictModel()
    g = fnx.compile(compiled)
    x, y = fnx.randn(5, 3), fnx.tensor([0, 1, 1, 0, 1])
    want, got = eager(x, y), g(x, y)
    assert type(got) is collections.OrderedDict and list(got) == ["loss", "logits"]
    want["loss"].backward()
    got["loss"].backward()
    np.testing.assert_allclose(got["logits"].detach().numpy(),
                               want["logits"].detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(compiled.lin.weight.grad.numpy(),
                               eager.lin.weight.grad.numpy(), rtol=1e-5)
    # past a graph break too
    h = fnx.compile(lambda x: {"big": x * 2 if x.sum().item() > 0 else x, "n": x.numel()})
    for sign in (1.0, -1.0):
        x = np.full(3, sign, np.float32)
        out = h(fnx.tensor(x))
        np.testing.assert_array_equal(out["big"].numpy(), x * 2 if sign > 0 else x)
        assert out["n"] == 3


@dataclasses.dataclass(frozen=True)
class _Output:
    loss: object
    logits: object
    steps: int = 0


class _Box:
    def __init__(self, value):
        self.value = value


def test_dataclass_results_are_new_instances_holding_the_values_computed():
    f = fnx.compile(lambda x, s: _Output((x * s).sum(), [x * 2, s * 3], steps=3))
    got = []
    for s in (1.5, -2.0):
        x = np.arange(3.0, dtype=np.float32)
        out = f(fnx.tensor(x), s)
        assert type(out) is _Output and out.steps == 3
        assert out.loss.item() == pytest.approx((x * s).sum())
        np.testing.assert_array_equal(out.logits[0].numpy(), x * 2)
        assert type(out.logits[1]) is float and out.logits[1] == s * 3
        got.append(out)
    assert got[0] is not got[1] and got[0].loss.item() == pytest.approx(4.5)


class _ModelOutput(collections.OrderedDict):
    """Hugging Face's ModelOutput in brief: a dataclass whose non-None fields are also
    its dict items, indexable by name or position."""

    def __post_init__(self):
        for f in dataclasses.fields(self):
            if getattr(self, f.name) is not None:
                self[f.name] = getattr(self, f.name)

    def __getitem__(self, k):
        return dict(self.items())[k] if isinstance(k, str) else tuple(self.values())[k]


@dataclasses.dataclass
class _LMOutput(_ModelOutput):
    loss: object = None
    logits: object = None
    hidden: object = None


def test_a_dataclass_that_is_a_dict_keeps_fields_and_items_in_step():
    lin = fnx.nn.Linear(3, 2)
    f = fnx.compile(lambda x: _LMOutput(loss=lin(x).pow(2).sum(), logits=lin(x) * 2))
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    out = f(fnx.tensor(x))
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    y = x @ w.T + b
    assert type(out) is _LMOutput and list(out.keys()) == ["loss", "logits"]
    assert out.hidden is None
    assert out.loss is out["loss"] is out[0]
    np.testing.assert_allclose(out["logits"].detach().numpy(), y * 2, rtol=1e-6)
    np.testing.assert_allclose(out.loss.item(), (y ** 2).sum(), rtol=1e-5)
    out.loss.backward()
    np.testing.assert_allclose(lin.bias.grad.numpy(), (2 * y).sum(0), rtol=1e-5)


def test_a_result_object_a_program_cannot_give_back_runs_eagerly():
    # an arbitrary object made inside holding a computed tensor: eager, with a warning
    # (it came back holding the trace's meta tensor)
    f = fnx.compile(lambda x: _Box(x + 1))
    with pytest.warns(UserWarning, match="returns an instance of _Box holding a tensor"):
        out = f(fnx.ones(2))
    assert out.value.tolist() == [2.0, 2.0]
    assert f(fnx.zeros(2)).value.tolist() == [1.0, 1.0]
    g = fnx.compile(lambda x: _Box(x + 1), fullgraph=True)
    with pytest.raises(RuntimeError, match="returns an instance of _Box"):
        g(fnx.ones(2))


def _views(x):
    return x[0], x.t(), x.view(-1), x * 2


def test_a_returned_view_of_an_input_is_a_view_of_the_callers_tensor():
    # A program output is new memory: ``a.add_(100)`` on a returned ``x[0]`` reached x
    # eagerly but not compiled, silently
    base = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    got = {}
    for name, f in (("eager", _views), ("compiled", fnx.compile(_views))):
        x = fnx.tensor(base)
        for _ in range(2):          # (the second call: the cached program's path)
            a, b, c, d = f(x)
        a.add_(100)
        b[0, 1] += 1000
        c[-1] = -5
        d.add_(7)                   # (not a view: x keeps its values)
        got[name] = x.numpy().copy()
    want = base.copy()
    want[0] += 100
    want[1, 0] += 1000
    want[1, 2] = -5
    np.testing.assert_array_equal(got["eager"], want)
    np.testing.assert_array_equal(got["compiled"], want)


def test_a_returned_view_of_a_written_input_sees_the_write():
    def scale_first_column(x):
        y = x[:, 0]
        y.mul_(10)
        return y

    g = fnx.compile(scale_first_column)
    base = fnx.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    out = g(base[:, 1:])            # (the argument is itself a view of base)
    out.add_(1)
    np.testing.assert_array_equal(base.numpy(), [[0, 11, 2], [3, 41, 5]])
    np.testing.assert_array_equal(out.numpy(), [11, 41])


def test_a_returned_view_of_an_input_carries_its_gradient():
    w = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    f = fnx.compile(lambda x: (x.t(), (x * x).sum()))
    x = fnx.tensor(w, requires_grad=True)
    t, s = f(x)
    (t[1].sum() * 3 + s).backward()
    want = 2 * w
    want[:, 1] += 3
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)
