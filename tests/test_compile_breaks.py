"""Graph breaks: a compiled function that reads a tensor's value (``item()``, ``bool(t)``,
``int(t)``, ``tolist()``) runs as compiled segments around that point, not eagerly.

Every check compares with the same code run eagerly (twin models from one seed) or with
NumPy; programs and traces are counted to show a new loss value does not recompile.
"""
from __future__ import annotations

import inspect
import logging
import math
import warnings

import numpy as np
import pytest

import fnx
from fnx import nn, optim
from fnx.graph.tracer import DataDependentError
from fnx.lower.graph_breaks import BreakEntry
from fnx.testing import to_numpy


def _programs(f) -> int:
    return sum(getattr(e, "size", 1) for e in f.entries())


def _close(a, b):
    np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=2e-5, atol=1e-6)


def _batches(n, seed=1):
    """Inputs whose loss swings above and below 1.0 (large and small batches)."""
    rng = np.random.default_rng(seed)
    return [fnx.tensor(rng.standard_normal((8, 4)).astype(np.float32) *
                       (3.0 if i % 3 == 0 else 0.1)) for i in range(n)]


def _training(compiled, threshold=1.0, steps=7):
    fnx.manual_seed(0)
    model = nn.Linear(4, 1)
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    y = fnx.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1))
    taken = []

    def step(x, y):
        loss = ((model(x) - y) ** 2).mean()
        if loss.item() > threshold:     # a damped step on a large loss
            (loss * 0.25).backward()
        else:
            loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    f = fnx.compile(step) if compiled else step
    history = []
    for x in _batches(steps):
        loss = f(x, y)
        taken.append(loss.item() > threshold)
        history.append((loss.detach().clone(), [p.detach().clone() for p in model.parameters()]))
    return history, taken, f


def test_branch_on_loss_item_in_a_training_step(traces):
    eager, taken, _ = _training(False)
    assert any(taken) and not all(taken)        # both branches are exercised
    compiled, taken_c, f = _training(True)
    assert taken_c == taken
    for (le, pe), (lc, pc) in zip(eager, compiled):
        _close(lc, le)
        for a, b in zip(pe, pc):
            _close(b, a)
    # one entry: the forward up to the break and one continuation per branch
    (entry,) = f.entries()
    assert isinstance(entry, BreakEntry) and entry.size == 3 and _programs(f) == 3
    # the first step runs once (it makes the momentum buffers), then one trace per branch
    assert len(traces) == 3


def test_item_float_in_python_arithmetic_does_not_recompile(traces):
    w = fnx.tensor([0.5, -1.0, 2.0])

    def step(x, ema):
        loss = (x * w).sum() ** 2
        value = loss.item()
        return loss * 2, 0.9 * ema + 0.1 * value, value

    f = fnx.compile(step)
    ema = ema_ref = 0.0
    for i in range(5):
        x = fnx.tensor([1.0 + i, 0.5 * i, -0.25])
        out, ema, value = f(x, ema)
        ref = float(np.dot(to_numpy(x).astype(np.float64), [0.5, -1.0, 2.0])) ** 2
        ema_ref = 0.9 * ema_ref + 0.1 * ref
        assert type(ema) is float and type(value) is float
        assert math.isclose(value, ref, rel_tol=1e-6)
        assert math.isclose(ema, ema_ref, rel_tol=1e-6)
        np.testing.assert_allclose(to_numpy(out), 2 * ref, rtol=1e-6)
    assert len(traces) == 1


def test_item_float_feeds_tensor_ops_without_recompiling(traces):
    # the break value enters the continuation as a program input, not as a constant
    f = fnx.compile(lambda x: x / x.abs().max().item())
    for data in ([1.0, -4.0, 2.0], [3.0, 0.5, -1.5], [0.25, 0.5, 0.125]):
        x = fnx.tensor(data)
        np.testing.assert_allclose(to_numpy(f(x)), np.array(data) / np.abs(data).max(),
                                   rtol=1e-6)
    assert len(traces) == 1


def test_tolist_is_handed_to_python(traces):
    y = fnx.tensor([1.0, 2.0, 3.0])
    f = fnx.compile(lambda x: y * sum(x.tolist()) + 1)
    for data in ([1.0, 2.0], [1.0, 2.0], [0.5, -3.0]):
        np.testing.assert_allclose(to_numpy(f(fnx.tensor(data))),
                                   np.array([1.0, 2.0, 3.0]) * sum(data) + 1)
    assert len(traces) == 2         # a list is guarded exactly: a new list traces again


def test_numpy_values_are_handed_to_python(traces):
    # x.numpy() / np.asarray(x) inside: a break whose value is a read-only copy (it was
    # an array of the trace's placeholders, and NumPy then failed on its dtype)

    def f(x):
        return fnx.tensor(np.cumsum(np.asarray(x))) * 2 + x.numpy().max()
    g = fnx.compile(f)
    for data in ([1.0, 2.0], [1.0, 2.0], [0.5, -3.0]):
        want = np.cumsum(data) * 2 + max(data)
        np.testing.assert_allclose(to_numpy(g(fnx.tensor(data))), want)
    assert len(traces) == 2         # guarded exactly, as a list: a new array traces again
    # a write through the array cannot reach the tensor from a trace (the copy is
    # read-only): the function runs eagerly, where it does
    x = fnx.ones(2)
    with pytest.warns(UserWarning, match=r"raised ValueError \(assignment destination is "
                                         r"read-only\).*running it eagerly"):
        fnx.compile(lambda x: x.numpy().__setitem__(0, 5.0))(x)
    assert x.tolist() == [5.0, 1.0]
    with pytest.raises(DataDependentError, match=r"Tensor.numpy\(\) at .*np.asarray"):
        fnx.compile(f, fullgraph=True)(fnx.ones(2))


def test_bool_and_int_of_tensors_branch_and_are_guarded(traces):

    def f(x):
        if (x > 0).all():
            return x * 2
        return x + int((x > 0).sum())

    cf = fnx.compile(f)
    cases = ([1.0, 2.0], [-3.0, 2.0], [-3.0, -2.0], [4.0, 5.0], [2.0, -1.0])
    for data in cases:
        a = np.array(data)
        want = a * 2 if (a > 0).all() else a + (a > 0).sum()
        np.testing.assert_array_equal(to_numpy(cf(fnx.tensor(data))), want)
    # traces: all positive; one positive; none positive (the repeats reuse them)
    assert len(traces) == 3
    assert _programs(cf) == 5       # the root, all(): True / False, sum(): 1 / 0


def _normalized(compiled):
    fnx.manual_seed(0)
    model = nn.Linear(3, 2)
    opt = optim.SGD(model.parameters(), lr=0.1)

    def step(x):
        loss = (model(x) ** 2).sum()
        scale = loss.item()                 # the break is before backward()
        (loss / scale).backward()
        opt.step()
        opt.zero_grad()
        return loss
    f = fnx.compile(step) if compiled else step
    out = []
    for i in range(4):
        x = fnx.tensor(np.full((2, 3), 0.5 + i, dtype=np.float32))
        out.append((f(x).detach().clone(), [p.detach().clone() for p in model.parameters()]))
    return out, f


def test_break_before_backward(traces):
    eager, _ = _normalized(False)
    compiled, f = _normalized(True)
    for (le, pe), (lc, pc) in zip(eager, compiled):
        _close(lc, le)
        for a, b in zip(pe, pc):
            _close(b, a)
    assert len(traces) == 1 and _programs(f) == 2


def test_two_breaks_in_one_function():
    def f(x):
        y = x * 2 if x.sum().item() > 0 else x * 3
        if y.max().item() > 5:
            y = y - 1
        return y

    def ref(a):
        y = a * 2 if a.sum() > 0 else a * 3
        return y - 1 if y.max() > 5 else y

    cf = fnx.compile(f)
    for data in ([1.0, 2.0], [1.0, 4.0], [-1.0, 0.5], [-3.0, 2.1], [1.0, 2.0], [-1.0, 0.5]):
        np.testing.assert_allclose(to_numpy(cf(fnx.tensor(data))), ref(np.array(data)),
                                   rtol=1e-6)
    (entry,) = cf.entries()
    # root; per sign branch the segment up to max(); per max branch the rest
    assert entry.size == 1 + 2 + 4
    assert len(entry.breaks) == 2


def test_random_values_are_the_same_on_both_sides_of_a_break():
    def f(shift):
        d = fnx.rand(5) + shift
        big = d.sum().item() > 3.0
        return d, big, d * 2 if big else d

    cf = fnx.compile(f)
    fnx.manual_seed(3)
    seen = set()
    for shift in (0.0, 0.5, 0.0, 0.2, -0.3, 0.4, 0.1):
        d, big, out = cf(fnx.tensor(shift))
        d = to_numpy(d)
        assert big == (float(d.astype(np.float64).sum()) > 3.0)
        np.testing.assert_allclose(to_numpy(out), d * 2 if big else d, rtol=1e-6)
        seen.add(big)
    assert seen == {True, False}


def test_data_dependent_shapes_break_and_guard_the_shape(traces):
    # a boolean mask and nonzero: computed on the call's values, the result an input of
    # the rest of the program; a new number of selected elements traces again

    def f(x, y):
        picked = x[x > 0]
        return (picked * 2).sum() + y, fnx.nonzero(x < 0)

    cf = fnx.compile(f)
    cases = ([1.0, -2.0, 3.0], [1.0, 2.0, 3.0], [-1.0, 5.0, -1.0], [4.0, -2.0, 3.0])
    for data in cases:
        a = np.array(data, dtype=np.float32)
        total, where = cf(fnx.tensor(data), fnx.tensor(0.5))
        np.testing.assert_allclose(to_numpy(total), 2 * a[a > 0].sum() + 0.5, rtol=1e-6)
        np.testing.assert_array_equal(to_numpy(where), np.argwhere(a < 0))
    assert len(traces) == 3         # 2, 3 and 1 positive elements (the last case reuses)


def test_a_break_that_reads_one_output_of_a_multi_output_op():
    # the break needs topk's indices only, the values are used after it: the segments
    # hand on the values tensor, not topk's tuple (a mixture-of-experts router)

    def f(x):
        w, i = fnx.topk(x, 2)
        n = int((i == 0).sum())
        return w * n

    data = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], dtype=np.float32)
    order = np.argsort(-data, axis=1)[:, :2]
    expected = np.take_along_axis(data, order, 1) * (order == 0).sum()
    np.testing.assert_array_equal(to_numpy(fnx.compile(f)(fnx.tensor(data))), expected)


def test_a_new_branch_says_which_break_value_changed(caplog):
    # FNX_LOGS=recompiles and the cache_limit warning name the break and its values
    cf = fnx.compile(lambda x: x[x > 0].sum() * 2, cache_limit=3)
    cf(fnx.tensor([1.0, -2.0, 3.0]))
    with caplog.at_level(logging.INFO, logger="fnx.compile"):
        cf(fnx.tensor([1.0, 2.0, 3.0]))
    assert "a graph break's value took a new branch: the shape of" in caplog.text
    assert "(2, 1) -> (3, 1)" in caplog.text      # (nonzero: 2 rows, then 3)
    with pytest.warns(UserWarning, match=r"cache_limit.*The last guard that failed: the "
                                         r"shape of .*\(2, 1\) -> \(1, 1\)"):
        out = cf(fnx.tensor([1.0, -2.0, -3.0]))
    assert out.item() == 2.0


def test_explain_lists_each_break_with_its_line():
    def f(x):
        a = x.sum().item()
        if (x > a).any():
            return x - a
        return x

    report = fnx.compile(f).explain(fnx.tensor([1.0, 2.0]))
    lines = inspect.getsourcelines(f)[1]
    assert len(report.breaks) == 2
    assert f"test_compile_breaks.py:{lines + 1}:" in report.breaks[0]
    assert "item()" in report.breaks[0]
    assert f"test_compile_breaks.py:{lines + 2}:" in report.breaks[1]
    assert "graph break" in str(report)


def test_fullgraph_still_raises_naming_the_line():
    def f(x):
        if x.sum().item() > 0:
            return x * 2
        return x
    with pytest.raises(DataDependentError, match=r"test_compile_breaks.py:\d+: .*x.sum"):
        fnx.compile(f, fullgraph=True)(fnx.ones(2))


def test_python_state_written_from_a_break_value_runs_eagerly():
    # a Python list that grows on every call cannot be replayed by a program (as without
    # a break): the function runs eagerly, once per call, with real values
    seen = []

    def f(x):
        seen.append(x.sum().item())
        return x * 2

    cf = fnx.compile(f)
    with pytest.warns(UserWarning, match="changes Python state"):
        out = cf(fnx.tensor([1.0, 2.0]))
    np.testing.assert_array_equal(to_numpy(out), [2.0, 4.0])
    cf(fnx.tensor([3.0, 4.0]))
    assert seen == [3.0, 7.0]


def test_cache_limit_counts_every_segment():
    cf = fnx.compile(lambda x: x * 2 if x.sum().item() > 0 else x * 3, cache_limit=2)
    np.testing.assert_array_equal(to_numpy(cf(fnx.ones(2))), [2.0, 2.0])
    assert _programs(cf) == 2           # the prefix and one continuation
    with pytest.warns(UserWarning, match="cache_limit"):
        out = cf(-fnx.ones(2))          # a new branch would be a third program: eager
    np.testing.assert_array_equal(to_numpy(out), [-3.0, -3.0])
    assert _programs(cf) == 2
    np.testing.assert_array_equal(to_numpy(cf(fnx.ones(2) * 2)), [4.0, 4.0])


def test_outputs_that_require_grad_with_a_break_run_eagerly():
    w = fnx.tensor([1.0, -2.0], requires_grad=True)

    def f(x):
        y = x * w
        return y * 2 if y.sum().item() > 0 else y

    cf = fnx.compile(f)
    with pytest.warns(UserWarning, match="require grad"):
        out = cf(fnx.tensor([3.0, 1.0]))
    out.sum().backward()
    np.testing.assert_array_equal(to_numpy(w.grad), [6.0, 2.0])


def test_mutated_input_before_a_break_is_written_back_once():
    def f(buf, x):
        buf.add_(x)                         # before the break
        if buf.sum().item() > 4:
            buf.mul_(0.5)                   # after it
        return buf * 1

    def ref(b, x):
        b = b + x
        return b * 0.5 if b.sum() > 4 else b

    cf = fnx.compile(f)
    buf = fnx.zeros(2)
    want = np.zeros(2)
    for _ in range(5):
        x = fnx.tensor([1.0, 0.5])
        out = cf(buf, x)
        want = ref(want, np.array([1.0, 0.5]))
        np.testing.assert_allclose(to_numpy(buf), want, rtol=1e-6)
        np.testing.assert_allclose(to_numpy(out), want, rtol=1e-6)


def test_returning_the_loss_value_gives_a_python_float():
    fnx.manual_seed(0)
    lin = nn.Linear(2, 1)
    opt = optim.SGD(lin.parameters(), lr=0.1)

    def step(x):
        loss = lin(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss.item()

    cf = fnx.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # no eager fallback
        values = [cf(fnx.tensor([[1.0, 2.0]])) for _ in range(3)]
    assert all(type(v) is float for v in values)
    assert values[0] > values[1] > values[2]


def test_a_break_reads_grad_and_tensor_options_when_called():
    # a .grad and a Tensor option (a learning rate) read by a function with a break are
    # read when called, guarded on their meta: new tensors of the same meta are used, one
    # of another shape selects another program
    w = nn.Parameter(fnx.ones(3))
    opt = optim.SGD([w], lr=fnx.tensor(0.5))

    def f(x):
        s = (x * w.grad).sum()
        if s.item() > 0:
            return s * opt.param_groups[0]["lr"]
        return -s
    g = fnx.compile(f)
    x = fnx.ones(3)
    for grad, lr in [(fnx.full((3,), 2.0), fnx.tensor(0.5)), (fnx.full((3,), 3.0), None),
                     (None, fnx.tensor(0.25)), (-fnx.ones(3), fnx.tensor(1.0)),
                     (None, fnx.tensor([2.0, 4.0]))]:
        if grad is not None:
            w.grad = grad
        if lr is not None:
            opt.param_groups[0]["lr"] = lr
        np.testing.assert_allclose(to_numpy(g(x)), to_numpy(f(x)), rtol=1e-6)
    assert any(isinstance(e, BreakEntry) for e in g.entries())
