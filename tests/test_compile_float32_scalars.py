"""Python floats a compiled program takes as float32 (``fnx.lower.narrow_scalars``): only
where every use rounds them to float32 through exact steps, so the results are the ones
the float64 input gave; fed on every path (fast, general, under enable_x64 beside a
64-bit host input, the cached array of a repeated value)."""
import numpy as np
import pytest

import fnx
from fnx import nn, optim
from fnx.lower import jax_compile
from fnx.testing import models


def _program(step):
    return step.entries()[-1]._plan.program


def _narrowed_options(step) -> set:
    """The optimizer options (param group keys) the step's program takes as float32."""
    entry = step.entries()[-1]
    plan = entry._plan
    return {getattr(entry.sources[plan.feed[j][0]][1], "key", None)
            for j in plan.program.narrow}


cuda = pytest.mark.skipif(not fnx.cuda.is_available(),
                          reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")
DEVICES = ["cpu", pytest.param("cuda", marks=cuda)]


def _setup(opt_cls, device="cpu", **kw):
    fnx.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)).to(device)
    opt = opt_cls(model.parameters(), **kw)
    return model, opt, models.training_step(model, opt, nn.CrossEntropyLoss())


def _batch(i, host_targets=None, device="cpu"):
    rng = np.random.default_rng(i)
    x = fnx.tensor(rng.standard_normal((5, 6)).astype(np.float32), device=device)
    labels = rng.integers(0, 3, 5)
    if host_targets is None:
        return x, fnx.tensor(labels, device=device)
    host_targets.copy_(fnx.tensor(labels))     # refilled each step: never made resident
    return x, host_targets


@pytest.mark.parametrize("opt_cls, kw, narrowed", [
    (optim.SGD, {"lr": 0.1}, True),                     # lr: neg, then float32
    (optim.SGD, {"lr": 0.1, "momentum": 0.9}, True),
    (optim.Adam, {"lr": 0.01}, False),                  # lr / bias_correction in float64
])
@pytest.mark.parametrize("host", [False, True])
@pytest.mark.parametrize("device", DEVICES)
def test_scheduled_learning_rate_enters_as_float32_only_where_exact(opt_cls, kw, narrowed,
                                                                    host, device):
    if host and device != "cpu":
        pytest.skip("a host (NumPy) target buffer is a CPU tensor's")
    eager_model, eager_opt, eager_step = _setup(opt_cls, device, **kw)
    model, opt, step = _setup(opt_cls, device, **kw)
    step = fnx.compile(step)
    targets = fnx.zeros(5, dtype=fnx.int64) if host else None
    eager_targets = fnx.zeros(5, dtype=fnx.int64) if host else None
    # values float32 cannot hold, repeated values (the cached array), and new ones
    lrs = [0.1, 0.1 + 1e-9, 0.1 + 1e-9, 0.1 + 1e-9, 1 / 3, 0.07, 0.07, 2e-3]
    for i, lr in enumerate(lrs):
        for o in (opt, eager_opt):
            o.param_groups[0]["lr"] = lr
        got = step(*_batch(i % 3, targets, device))
        want = eager_step(*_batch(i % 3, eager_targets, device))
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-6)
        for p, q in zip(model.parameters(), eager_model.parameters()):
            np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().cpu().numpy(),
                                       rtol=1e-5, atol=1e-7)
    assert len(step.entries()) == 1
    assert ("lr" in _narrowed_options(step)) is narrowed
    program = _program(step)
    assert not set(program.narrow) & set(program._wide)


def test_a_narrowed_input_gives_the_float64_programs_values_bit_for_bit(monkeypatch):
    # the same step compiled with narrowing turned off: every weight equal, bit for bit
    def run(narrow):
        if not narrow:
            monkeypatch.setattr(jax_compile, "narrowable", lambda graph: frozenset())
        model, opt, step = _setup(optim.SGD, lr=0.1, momentum=0.9)
        step = fnx.compile(step)
        for i, lr in enumerate([0.1, 1 / 3, 1 / 7, 1e-40, 3.4e38, 0.3]):
            opt.param_groups[0]["lr"] = lr
            step(*_batch(i % 2))
        monkeypatch.undo()
        return _program(step).narrow, [p.detach().numpy() for p in model.parameters()]
    narrowed, with_narrowing = run(True)
    plain, without = run(False)
    assert narrowed and not plain
    for a, b in zip(with_narrowing, without):
        np.testing.assert_array_equal(a, b)


def test_a_float_used_in_float64_arithmetic_is_not_narrowed():
    f = fnx.compile(lambda x, s: x * (s * s))      # s * s rounds differently in float32
    x = fnx.ones(2)
    s = 1 + 2 ** -20                                # s * s: 1 + 2**-19 + 2**-40
    assert f(x, s).tolist() == (x * (s * s)).tolist()
    assert not _program(f).narrow
    g = fnx.compile(lambda x, s: x - abs(-s))      # neg and abs: exact, narrowed
    assert g(x, s).tolist() == (x - s).tolist()
    assert _program(g).narrow
