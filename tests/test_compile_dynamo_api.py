"""``torch._dynamo`` / ``torch._inductor`` / ``torch.compiler`` calls that PyTorch scripts
make around ``torch.compile``, on fnx: the config switches fnx honors change what it does,
the others are accepted, a misspelt one is an error; the compiler's stances; marking dims
static; ``explain``.

Whether a call ran compiled is told by ``fnx.compiler.is_compiling()`` inside it (x + 1
compiled, x - 1 eager).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fnx
from fnx.lower.compiled_function import CompiledFunction


def _probe():
    return fnx.compile(lambda x: x + 1 if fnx.compiler.is_compiling() else x - 1)


def _ran(out) -> str:
    return "compiled" if out.tolist()[0] == 1.0 else "eager"


def test_dynamo_config_names_are_checked_and_patch_restores():
    config = fnx._dynamo.config
    assert config.cache_size_limit == config.recompile_limit == 8
    with config.patch(cache_size_limit=3):
        assert config.recompile_limit == 3
    assert config.recompile_limit == 8
    config.capture_scalar_outputs = True        # accepted (fnx's item() breaks anyway)
    config.capture_scalar_outputs = False
    with pytest.raises(AttributeError, match="cache_size_limt does not exist"):
        config.cache_size_limt = 2
    with pytest.raises(TypeError, match="recompile_limit must be a int"):
        config.recompile_limit = True
    inductor = fnx._inductor.config
    with inductor.patch({"triton.cudagraphs": True, "coordinate_descent_tuning": True}):
        assert inductor.triton.cudagraphs and inductor.coordinate_descent_tuning
    assert not inductor.triton.cudagraphs
    with pytest.raises(AttributeError, match="triton.cudagraph does not exist"):
        inductor.triton.cudagraph = True


def test_recompile_limit_from_the_config():
    f = fnx.compile(lambda x, k: x * k)
    with fnx._dynamo.config.patch(recompile_limit=2):
        with pytest.warns(UserWarning, match="2 recompilations"):
            for k in range(4):
                assert f(fnx.ones(2), k).tolist() == [float(k)] * 2
        assert len(f.entries()) == 2
    g = fnx.compile(lambda x, k: x * k, cache_limit=5)     # given: the config is not read
    with fnx._dynamo.config.patch(recompile_limit=1):
        for k in range(4):
            g(fnx.ones(2), k)
    assert len(g.entries()) == 4


def test_dynamic_shape_switches_and_mark_static():
    sizes = (3, 4, 5, 6)
    with fnx._dynamo.config.patch(automatic_dynamic_shapes=False):
        f = fnx.compile(lambda x: x.cumsum(0))
        for n in sizes:
            np.testing.assert_array_equal(f(fnx.ones(n)).numpy(), np.arange(1.0, n + 1))
        assert f.dynamic_traces() == 0
        for n in (7, 8, 9):         # a marked dim is still dynamic
            x = fnx.ones(n)
            fnx._dynamo.mark_dynamic(x, 0)
            f(x)
        assert f.dynamic_traces() == 1
    with fnx._dynamo.config.patch(assume_static_by_default=False):
        g = fnx.compile(lambda x: x.cumsum(0))
        g(fnx.ones(3))
        assert g.dynamic_traces() == 1          # symbolic from the first call
    h = fnx.compile(lambda x: x.cumsum(0), dynamic=True)
    for n in sizes:
        x = fnx.ones(n)
        fnx._dynamo.mark_static(x, 0)
        np.testing.assert_array_equal(h(x).numpy(), np.arange(1.0, n + 1))
    assert h.dynamic_traces() == 0 and len(h.entries()) == 4
    with pytest.raises(IndexError, match="mark_static: dim 2 out of range"):
        fnx._dynamo.mark_static(fnx.ones(3), 2)


def test_suppress_errors_runs_eagerly(monkeypatch):
    def broken(self, *a, **k):
        raise RuntimeError("lowering failed")
    monkeypatch.setattr(CompiledFunction, "_compile", broken)
    f = fnx.compile(lambda x: x * 3)
    with pytest.raises(RuntimeError, match="lowering failed"):
        f(fnx.ones(2))
    with fnx._dynamo.config.patch(suppress_errors=True):
        g = fnx.compile(lambda x: x * 3)
        with pytest.warns(UserWarning, match="suppress_errors is set, so it runs eagerly"):
            assert g(fnx.ones(2)).tolist() == [3.0, 3.0]


def test_stances():
    f = _probe()
    assert _ran(f(fnx.zeros(1))) == "compiled"
    for _ in range(3):                          # (the fast path is armed now)
        f(fnx.zeros(1))
    with fnx.compiler.set_stance("force_eager"):
        assert _ran(f(fnx.zeros(1))) == "eager"
    assert _ran(f(fnx.zeros(1))) == "compiled"
    with fnx.compiler.set_stance("eager_on_recompile"):
        assert _ran(f(fnx.zeros(1))) == "compiled"      # a program fits: it serves
        assert _ran(f(fnx.zeros(2))) == "eager"         # a new shape: no new trace
    with fnx.compiler.set_stance("fail_on_recompile"):
        assert _ran(f(fnx.zeros(1))) == "compiled"
        with pytest.raises(RuntimeError, match=r"must be recompiled \(argument 0: .*fail"):
            f(fnx.zeros(3))
    with fnx._dynamo.config.patch(error_on_recompile=True):
        with pytest.raises(RuntimeError, match="must be recompiled"):
            f(fnx.zeros(4))
    g = _probe()
    with fnx.compiler.set_stance("eager_then_compile"):
        assert [_ran(g(fnx.zeros(1))) for _ in range(3)] == ["eager", "compiled", "compiled"]
    fnx.compiler.set_stance("force_eager")      # as a plain call: from now on
    try:
        assert _ran(_probe()(fnx.zeros(1))) == "eager"
    finally:
        fnx.compiler.set_stance("default")
    assert _ran(_probe()(fnx.zeros(1))) == "compiled"


def test_set_stance_as_a_decorator_holds_during_calls_only():
    f = _probe()

    @fnx.compiler.set_stance("force_eager")
    def evaluate(x):
        return f(x)
    assert _ran(f(fnx.zeros(1))) == "compiled"      # decorating changed nothing
    assert _ran(evaluate(fnx.zeros(1))) == "eager"
    assert _ran(f(fnx.zeros(1))) == "compiled"
    with pytest.raises(ValueError, match="unknown stance 'eager'"):
        fnx.compiler.set_stance("eager")

    def inside(x):
        fnx.compiler.set_stance("force_eager")
        return x
    with pytest.raises(RuntimeError, match="inside a compiled function"):
        fnx.compile(inside, fullgraph=True)(fnx.ones(1))


def test_explain_counts_graphs_and_breaks():
    def f(x):
        y = x * 2
        if y.sum().item() > 0:
            return y + 1
        return y - 1
    out = fnx._dynamo.explain(f)(fnx.ones(3))
    assert (out.graph_count, out.graph_break_count) == (2, 1)
    assert "item()" in out.break_reasons[0] and "y.sum().item()" in out.break_reasons[0]
    assert "Graph Break Count: 1" in str(out)
    plain = fnx._dynamo.explain(lambda x: x.exp() * 2)(fnx.ones(2))
    assert (plain.graph_count, plain.graph_break_count, plain.op_count) == (1, 0, 2)


def test_the_other_compiler_calls():
    double = fnx.compiler.allow_in_graph(lambda x: x * 2)
    assert fnx.compiler.assume_constant_result(double) is double
    fnx.compiler.cudagraph_mark_step_begin()
    assert fnx.compiler.is_dynamo_compiling() is False
    f = fnx._dynamo.optimize("inductor")(lambda x: double(x) + 1)
    assert f(fnx.ones(2)).tolist() == [3.0, 3.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = fnx.ones(2, 3)
        fnx._dynamo.maybe_mark_dynamic(x, 1)
        assert fnx.compile(lambda x: x.sum(1))(x).tolist() == [3.0, 3.0]
