"""The IR machinery: interpreter modes, the tracer, Graph, and decomposition levels."""
import numpy as np
import pytest

import fnx
from fnx.dispatch import DispatchKey, local_include_set
from fnx.dispatch.modes import DispatchMode, current_mode
from fnx.graph.decompose import in_target, level, run_decomposed
from fnx.graph.graph import Graph
from fnx.graph.tracer import DataDependentError, trace

aten = fnx.ops.aten


class Recorder(DispatchMode):
    def __init__(self):
        self.seen = []

    def handle(self, op, ks, args, kwargs):
        self.seen.append(str(op))
        return self.run_below(op, ks, args, kwargs)


def test_mode_sees_every_call_once_and_restores_state():
    with Recorder() as m:
        assert current_mode() is m
        assert DispatchKey.Tracer in local_include_set()
        y = fnx.zeros(2, 3) + 1
    assert m.seen == ["aten::zeros", "aten::add.Tensor"]
    assert current_mode() is None and DispatchKey.Tracer not in local_include_set()
    np.testing.assert_array_equal(y.numpy(), np.ones((2, 3), np.float32))


def test_mode_stack_unwinds_on_error():
    with pytest.raises(RuntimeError):
        with Recorder():
            fnx.ones(2) + fnx.ones(3)
    assert current_mode() is None
    assert DispatchKey.Tracer not in local_include_set()


def test_levels():
    assert level(aten.mm.default) == "core"
    assert level(aten.matmul.default) == "aten"
    assert in_target(aten.mm.default, "core") and not in_target(aten.mm.default, "prims")
    assert in_target(aten.matmul.default, "aten")
    with pytest.raises(ValueError, match="`to` must be one of"):
        in_target(aten.mm.default, "hlo")


def test_run_decomposed_to_core_runs_only_core_ops():
    a = fnx.tensor([[1., 2.], [3., 4.]])
    b = fnx.tensor([5., 6.])
    out, ran = run_decomposed(fnx.matmul, a, b, to="core")
    np.testing.assert_allclose(out.numpy(), a.numpy() @ b.numpy())
    assert ran and all(level(op) in ("core", "prims") for op in ran)
    assert aten.matmul.default not in ran


def test_trace_records_ops_with_shapes_and_no_data():
    # 10^6 x 10^6 float32 would be 4 TB: a trace must never allocate it.
    big = fnx.empty(10 ** 6, 10 ** 6, device="meta")
    g = trace(lambda x: (x * 2).sum(0), big)
    assert [str(n.target) for n in g.calls()] == ["aten::mul.Tensor", "aten::sum.dim_IntList"]
    assert g.calls()[-1].meta.shape == (10 ** 6,)
    assert g.calls()[-1].meta.dtype is fnx.float32


def test_trace_keeps_input_device_and_dtype():
    g = trace(lambda x: x.to(fnx.float64) + 1, fnx.ones(2, dtype=fnx.int64))
    (p,) = g.placeholders()
    assert p.meta.device == fnx.device("cpu") and p.meta.dtype is fnx.int64
    assert g.calls()[-1].meta.dtype is fnx.float64
    assert g.calls()[-1].meta.device == fnx.device("cpu")


def test_graph_run_matches_eager():
    def f(a, b):
        return fnx.softmax(a @ b, -1) if hasattr(fnx, "softmax") else (a @ b).exp()
    a = fnx.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 10)
    b = fnx.tensor(np.ones((3, 4), np.float32))
    g = trace(f, a, b)
    np.testing.assert_allclose(g.run(a, b).numpy(), f(a, b).numpy(), rtol=1e-6)


def test_multi_output_ops_get_getitem_nodes():
    x = fnx.tensor([[3., 1.], [1., 2.]])
    g = trace(lambda t: fnx.sort(t, 0).values, x)
    kinds = [n.kind for n in g.nodes]
    assert kinds == ["placeholder", "call", "getitem", "getitem", "output"]
    np.testing.assert_array_equal(g.run(x).numpy(), np.sort(x.numpy(), 0))


def test_captured_tensor_becomes_constant():
    w = fnx.tensor([1., 2., 3.])
    g = trace(lambda x: x * w, fnx.ones(3))
    assert [n.kind for n in g.nodes].count("constant") == 1
    np.testing.assert_array_equal(g.run(fnx.ones(3) * 2).numpy(), [2., 4., 6.])


def test_item_during_trace_is_a_clear_error():
    with pytest.raises(DataDependentError, match="Tensor.item"):
        trace(lambda x: x.sum().item(), fnx.ones(3))


def test_graph_prints_python_with_shapes():
    g = trace(lambda x: x.relu(), fnx.ones(2, 3))
    text = str(g)
    assert 'def forward(x: "f32[2, 3]"):' in text
    assert "relu = fnx.ops.aten.relu.default(x)  # f32[2, 3]" in text
    assert text.rstrip().endswith("return relu")


def test_decompose_graph_to_core():
    g = trace(lambda a, b: fnx.matmul(a, b), fnx.ones(4, 2, 3), fnx.ones(3, 5))
    assert [str(n.target) for n in g.calls()] == ["aten::matmul"]
    d = fnx.decompose(g, to="core")
    assert isinstance(d, Graph)
    assert [p.name for p in d.placeholders()] == ["a", "b"]
    assert all(level(n.target) in ("core", "prims") for n in d.calls())
    a = fnx.tensor(np.random.default_rng(0).standard_normal((4, 2, 3)).astype(np.float32))
    b = fnx.tensor(np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32))
    np.testing.assert_allclose(d.run(a, b).numpy(), a.numpy() @ b.numpy(), rtol=1e-5)


def test_to_python_round_trips():
    w = fnx.tensor([[1., -2.], [0.5, 3.]])

    def f(x):
        y = fnx.softmax(x @ w, -1)
        return y.max(-1).values, y.masked_fill(y < 0.5, float("-inf")).sum(0)

    x = fnx.tensor(np.random.default_rng(3).standard_normal((3, 2)).astype(np.float32))
    for to in ("aten", "core", "prims"):
        g = fnx.decompose(f, x, to=to)
        src = g.to_python()
        assert src.startswith('def forward(x: "f32[3, 2]"):') and "# f32[3]" in src
        compiled = g.compile_python()
        for got, want in zip(compiled(x), f(x)):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
