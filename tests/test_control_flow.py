"""fnx.cond and fnx.while_loop (fnx/func/_control_flow.py): eager Python semantics against
hand-computed values; compiled, ONE fnx_func::call node (jax.lax.cond / while_loop) that
picks the branch / runs the loop at run time (no retrace, no graph break); gradients
through a compiled cond against the analytic derivative; PyTorch's errors."""
import numpy as np
import pytest

import fnx
from fnx.func._program_op import CALL
from fnx.graph.tracer import trace
from fnx.lower.graph_breaks import BreakEntry


def _f(x, y):
    return fnx.cond(x.sum() > 0, lambda a, b: (a * b, a + 1), lambda a, b: (a - b, b * 3),
                    (x, y))


def test_cond_eager_and_compiled_pick_the_branch_at_run_time():
    cf = fnx.compile(_f)
    for xs in ([1.0, 2.0], [-1.0, -5.0], [3.0, -1.0]):
        x, y = np.array(xs), np.array([0.5, 4.0])
        ref = (x * y, x + 1) if x.sum() > 0 else (x - y, y * 3)
        for fn in (_f, cf):
            out = fn(fnx.tensor(x), fnx.tensor(y))
            assert isinstance(out, tuple) and len(out) == 2
            for o, r in zip(out, ref):
                np.testing.assert_allclose(o.numpy(), r, rtol=1e-12)
    assert not any(isinstance(e, BreakEntry) for e in cf.entries())


def test_cond_compiles_to_one_call_node():
    x, y = fnx.ones(2), fnx.ones(2)
    graph = trace(_f, x, y)
    calls = [n for n in graph.calls() if n.target is CALL]
    assert len(calls) == 1
    # the branches' ops live inside that node, not in the outer graph
    assert not any("mul" in str(n.target) for n in graph.calls())


def test_cond_python_pred_captured_tensor_and_random():
    w = fnx.tensor([10.0, 20.0])
    assert fnx.cond(True, lambda a: a + w, lambda a: a, (fnx.ones(2),)).tolist() == [11, 21]
    assert fnx.cond(0, lambda a: a + w, lambda a: a, (fnx.ones(2),)).tolist() == [1, 1]
    g = fnx.compile(lambda x, p: fnx.cond(p, lambda a: a + w, lambda a: a * 0, (x,)))
    np.testing.assert_array_equal(g(fnx.ones(2), fnx.tensor(True)).numpy(), [11, 21])
    np.testing.assert_array_equal(g(fnx.ones(2), fnx.tensor(False)).numpy(), [0, 0])
    fnx.manual_seed(0)
    r = fnx.compile(lambda x: fnx.cond(x > 0, lambda a: fnx.rand(1000) + a,
                                       lambda a: a.expand(1000), (x,)))(fnx.tensor(1.0))
    assert 1.0 <= r.min().item() and r.max().item() < 2.0 and abs(r.mean().item() - 1.5) < 0.05


def test_cond_gradient_compiled():
    def f(x):
        return fnx.cond(x.sum() > 0, lambda a: (a ** 3).sum(), lambda a: (a.sin()).sum(), (x,))
    cf = fnx.compile(f)
    for xs, ref in (([1.0, 2.0], lambda v: 3 * v ** 2), ([-1.0, -2.0], np.cos)):
        x = fnx.tensor(xs, dtype=fnx.float64, requires_grad=True)
        cf(x).backward()
        np.testing.assert_allclose(x.grad.numpy(), ref(np.array(xs)), rtol=1e-10)


def test_cond_errors():
    x = fnx.ones(2)
    with pytest.raises(RuntimeError, match="single item"):
        fnx.cond(fnx.tensor([True, False]), lambda a: a, lambda a: a, (x,))
    with pytest.raises(RuntimeError, match="bool or a tensor"):
        fnx.cond("yes", lambda a: a, lambda a: a, (x,))
    with pytest.raises(RuntimeError, match="operands to be tensors"):
        fnx.cond(True, lambda a: a, lambda a: a, (3,))
    bad = fnx.compile(lambda t: fnx.cond(t.sum() > 0, lambda a: a, lambda a: a.sum(), (t,)))
    with pytest.raises(RuntimeError, match="same structure, shapes and dtypes"):
        bad(x)
    mut = fnx.compile(lambda t: fnx.cond(t.sum() > 0, lambda a: a.add_(1), lambda a: a, (t,)))
    with pytest.raises(RuntimeError, match="in place"):
        mut(fnx.ones(2))


def _loop(n, x):
    return fnx.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * 2 + 1), (fnx.tensor(0), x))


def test_while_loop_eager_and_compiled():
    cl = fnx.compile(_loop)
    for n in (0, 3, 7):
        ref = np.array([1.0, -2.0])
        for _ in range(n):
            ref = ref * 2 + 1
        for fn in (_loop, cl):
            i, s = fn(fnx.tensor(n), fnx.tensor([1.0, -2.0], dtype=fnx.float64))
            assert i.item() == n
            np.testing.assert_allclose(s.numpy(), ref, rtol=1e-12)
    assert not any(isinstance(e, BreakEntry) for e in cl.entries())
    graph = trace(_loop, fnx.tensor(2), fnx.ones(2))
    assert sum(n.target is CALL for n in graph.calls()) == 1


def test_while_loop_errors():
    with pytest.raises(RuntimeError, match="tuple or list"):
        fnx.while_loop(lambda x: x < 1, lambda x: (x + 1,), fnx.tensor(0))
    with pytest.raises(RuntimeError, match="shapes and dtypes of carried_inputs"):
        fnx.while_loop(lambda x: x.sum() < 4, lambda x: (fnx.cat([x, x]),), (fnx.ones(1),))
    with pytest.raises(RuntimeError, match="shapes and dtypes of carried_inputs"):
        fnx.compile(lambda x: fnx.while_loop(lambda v: v.sum() < 4,
                                             lambda v: (v.double(),), (x,)))(fnx.ones(1))
    with pytest.raises(RuntimeError, match="single item"):
        fnx.while_loop(lambda x: x < 4, lambda x: (x + 1,), (fnx.ones(2),))
