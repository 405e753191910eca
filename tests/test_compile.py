"""fnx.compile and the passes it runs, each checked against eager execution."""
import warnings

import numpy as np
import pytest

import fnx
from fnx.graph.graph import Node
from fnx.graph.passes import functionalize
from fnx.graph.passes.cleanup import eliminate_common_subexpressions, eliminate_dead_code
from fnx.graph.passes.partition import partition
from fnx.graph.tracer import DataDependentError, trace
from fnx.lower import get_target

rng = np.random.default_rng(0)


def randn(*shape, dtype=np.float32):
    return fnx.tensor(rng.standard_normal(shape).astype(dtype))


# ----------------------------------------------------------------------------- passes

def test_functionalize_writes_through_views_and_returns_mutated_inputs():
    def f(x, y):
        x[0].mul_(2)            # through a select view
        x.view(4).add_(y.view(4))   # through a reshape view
        x[:, 1:].zero_() if hasattr(x, "zero_") else x[:, 1:].fill_(0.)
        return x.t().sum(0)

    x0, y = randn(2, 2), randn(2, 2)
    g = functionalize(trace(f, x0, y))
    assert all(not n.target.schema.is_mutable for n in g.calls())
    assert g.mutated_inputs == [(0, 1)]
    x_eager = x0.clone()
    expected = f(x_eager, y)
    result, x_final = g.run(x0.clone(), y)
    np.testing.assert_allclose(result.numpy(), expected.numpy(), rtol=1e-6)
    np.testing.assert_allclose(x_final.numpy(), x_eager.numpy(), rtol=1e-6)


def test_functionalize_other_views_see_the_write():
    def f(x):
        row = x[1]
        col = x[:, 0]
        row.add_(10)            # col, taken before, must see x[1, 0] change
        return col * 1

    x = fnx.tensor([[1., 2.], [3., 4.]])
    g = functionalize(trace(f, x))
    out, _ = g.run(x.clone())
    np.testing.assert_array_equal(out.numpy(), f(x.clone()).numpy())
    np.testing.assert_array_equal(out.numpy(), [1., 13.])


def test_functionalize_out_variant_and_dtype_of_inplace():
    def f(x, o):
        fnx.add(x, 1, out=o)
        x.mul_(1.5)             # int tensor *= float is an error in eager too
        return o

    x, o = fnx.tensor([1, 2]), fnx.zeros(2, dtype=fnx.int64)
    with pytest.raises(RuntimeError, match="can't be cast"):
        trace(f, x, o)

    def g(x, o):
        fnx.add(x, 1, out=o)
        return o * 2

    graph = functionalize(trace(g, fnx.tensor([1., 2.]), fnx.zeros(2)))
    res, o_final = graph.run(fnx.tensor([1., 2.]), fnx.zeros(2))
    np.testing.assert_array_equal(res.numpy(), [4., 6.])
    np.testing.assert_array_equal(o_final.numpy(), [2., 3.])


def test_dce_removes_unused_and_cse_merges_repeats():
    g = trace(lambda x: (x.sin() * 3, x.exp() + x.exp())[1], fnx.ones(3))
    d = eliminate_dead_code(g)
    assert [n.target.name for n in d.calls()] == ["exp", "exp", "add"]
    c = eliminate_common_subexpressions(d)
    assert [n.target.name for n in c.calls()] == ["exp", "add"]
    x = randn(3)
    np.testing.assert_allclose(c.run(x).numpy(), 2 * np.exp(x.numpy()), rtol=1e-6)


def test_cse_keeps_random_ops_apart():
    g = trace(lambda x: fnx.rand(3) + fnx.rand(3) + x, fnx.ones(3))
    assert [n.target.name for n in eliminate_common_subexpressions(g).calls()].count(
        "rand") == 2


def test_partition_has_no_cycles_and_covers_every_call():
    def f(x):
        a = x.exp()
        b = a.cumsum(0)         # eager
        c = a.sin() + b         # depends on both sides of the eager call
        return c.cumsum(0).relu()

    g = trace(f, fnx.ones(4))
    p = partition(g, lambda n: n.target.name != "cumsum")
    seen = []
    for s in p.steps:
        nodes = [s] if isinstance(s, Node) else s.nodes
        for n in nodes:
            assert all(i in seen or i.kind in ("placeholder", "constant") for i in n.inputs())
            seen.append(n)
    assert sorted(n.name for n in seen) == sorted(n.name for n in g.nodes
                                                  if n.kind in ("call", "getitem"))
    assert [str(o) for o in p.fallback_ops] == ["aten::cumsum"]
    assert len(p.regions) == 3


# ----------------------------------------------------------------------------- lowering

@pytest.mark.parametrize("dtype", [fnx.float32, fnx.float64, fnx.int64])
def test_jax_lowering_keeps_64_bit_dtypes(dtype):
    x = fnx.arange(6, dtype=dtype).reshape(2, 3)
    g = fnx.decompose(lambda t: (t * 3 + 1).sum(1), x, to="prims")
    out = get_target("jax").compile(g)(x)
    assert out.dtype is dtype
    np.testing.assert_array_equal(out.numpy(), (x.numpy() * 3 + 1).sum(1))


# ----------------------------------------------------------------------------- compile

def mlp(w1, b1, w2):
    return lambda x: ((x @ w1 + b1).relu() @ w2).sum(-1)


def test_compiled_matches_eager_and_reads_parameters_each_call():
    w1, b1, w2 = randn(8, 16), randn(16), randn(16, 4)
    f = mlp(w1, b1, w2)
    cf = fnx.compile(f)
    x = randn(5, 8)
    np.testing.assert_allclose(cf(x).numpy(), f(x).numpy(), rtol=1e-5, atol=1e-5)
    w2.mul_(-1)                 # an in-place parameter update is seen by the next call
    np.testing.assert_allclose(cf(x).numpy(), f(x).numpy(), rtol=1e-5, atol=1e-5)
    assert len(cf.cache) == 1


def test_new_shape_recompiles_and_old_shape_reuses():
    cf = fnx.compile(lambda x: x.exp().sum(0))
    cf(randn(3, 2))
    cf(randn(3, 2))
    assert len(cf.cache) == 1
    out = cf(randn(5, 4, dtype=np.float64))
    assert len(cf.cache) == 2 and out.dtype is fnx.float64 and out.shape == (4,)


def test_mutated_inputs_are_written_back():
    def step(x, buf):
        buf.mul_(0.9).add_(x.mean(0), alpha=0.1)
        return x - buf

    x = randn(4, 3)
    buf_c, buf_e = fnx.zeros(3), fnx.zeros(3)
    cf = fnx.compile(step)
    for _ in range(3):
        out_c, out_e = cf(x, buf_c), step(x, buf_e)
        np.testing.assert_allclose(out_c.numpy(), out_e.numpy(), rtol=1e-6)
    np.testing.assert_allclose(buf_c.numpy(), buf_e.numpy(), rtol=1e-6)


def test_data_dependent_control_flow():
    def f(x):
        if x.sum() > 0:
            return x * 2
        return x

    with pytest.raises(DataDependentError, match="test_compile.py:.*if x.sum"):
        fnx.compile(f, fullgraph=True)(fnx.ones(2))
    cf = fnx.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # a graph break, not a fallback to eager
        out = cf(fnx.ones(2))
        np.testing.assert_array_equal(out.numpy(), [2., 2.])
        np.testing.assert_array_equal(cf(-fnx.ones(2)).numpy(), [-1., -1.])
    assert [e.size for e in cf.entries()] == [3]    # the sum, then one program per branch


def test_ops_without_lowering_run_eagerly_with_one_warning():
    cf = fnx.compile(lambda x: x.exp().sum(), decompose="core")
    with pytest.warns(UserWarning, match="aten::exp.*eagerly"):
        out = cf(fnx.zeros(3))
    assert out.item() == 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cf(fnx.zeros(3))
    with pytest.raises(RuntimeError, match="fullgraph=True"):
        fnx.compile(lambda x: x.exp(), decompose="core", fullgraph=True)(fnx.zeros(3))


def test_wrong_arity_raises_what_eager_raises():
    cf = fnx.compile(lambda x, y: x + y)
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        cf(fnx.ones(2))


def test_explain_reports_stages_regions_and_fusion():
    w = randn(16, 16)
    report = fnx.compile(lambda x: (x @ w).relu().exp().sum()).explain(randn(4, 16))
    text = str(report)
    for part in ("== traced graph", "== functional graph", "== optimized graph",
                 "1 compiled region(s)", "fusion(s)"):
        assert part in text
    assert report.fusions[0]["fusions"] >= 1
    assert report.fusions[0]["kernels"] < report.prim_calls


def test_mixed_devices_raise_what_eager_raises():
    def f(a, b):
        return a + b
    args = (fnx.ones(2, device="meta"), fnx.ones(2))
    with pytest.raises(RuntimeError) as eager:
        f(*args)
    with pytest.raises(RuntimeError) as compiled:
        fnx.compile(f)(*args)
    assert str(compiled.value) == str(eager.value)
    assert "at least two devices, meta and cpu" in str(eager.value)


@pytest.mark.parametrize("dtype", [fnx.float32, fnx.float64])
def test_random_prims_lower_bit_identically(dtype):
    P = fnx.ops.prims
    key = fnx.tensor([12345, 678], dtype=fnx.int64)

    def f(k):
        return (P.uniform(k, [5], -1.0, 2.0, dtype=dtype),
                P.normal(k, [5], 0.5, 3.0, dtype=dtype), P.random_bits(k, [3]),
                P.split_key(k, 2))

    lowered = get_target("jax").compile(trace(f, key))(key)
    for i, (got, want) in enumerate(zip(lowered, f(key))):
        assert got.dtype is want.dtype
        if i == 1:      # normal: XLA may fuse `z * std + mean` into one rounding (FMA)
            np.testing.assert_array_max_ulp(got.numpy(), want.numpy(), maxulp=2)
        else:
            np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_compiled_dropout_is_random_per_call_and_seeded():
    f = fnx.compile(lambda x: fnx.dropout(x, 0.5, True))
    x = fnx.ones(256)
    fnx.manual_seed(0)
    a, b = f(x), f(x)
    fnx.manual_seed(0)
    c = f(x)
    assert len(f.cache) == 1
    assert not np.array_equal(a.numpy(), b.numpy())         # a fresh key per call
    np.testing.assert_array_equal(a.numpy(), c.numpy())     # reproducible under the seed
    assert set(np.unique(a.numpy())) <= {0.0, 2.0}          # kept values scaled by 1/(1-p)
    assert 0.35 < (a.numpy() == 0).mean() < 0.65


def test_compiled_results_keep_named_tuple_types_as_eager():
    """``max(dim=)``'s (values, indices) and ``cholesky_ex``'s (L, info) come back as the
    same named types eager returns, so ``.indices``/``.info`` work on compiled results."""
    x = fnx.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    for fn in (lambda t: fnx.max(t, 0), fnx.linalg.cholesky_ex, lambda t: t.sort(dim=1)):
        eager, compiled = fn(x), fnx.compile(fn)(x)
        assert type(compiled) is type(eager)
        for a, b in zip(compiled, eager):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    pair = fnx.compile(lambda t: fnx.max(t, 1))(x)
    np.testing.assert_array_equal(pair.indices.numpy(), np.argmax(x.numpy(), 1))


def test_a_bool_mask_times_inf_or_nan_is_nan_as_eager():
    # XLA rewrites convert(pred) * y as select(pred, y, 0) and convert(pred) / broadcast(b)
    # through it: compiled, False * inf and 0 / 0 from booleans were 0 where eager is NaN
    inf, nan = float("inf"), float("nan")
    m = fnx.tensor([False, True, False, True])
    x = fnx.tensor([inf, inf, nan, 2.0])
    z = fnx.zeros(3, 4, dtype=fnx.bool)
    for f, args in [(lambda m, x: m.float() * x, (m, x)), (lambda m, x: x * m, (m, x)),
                    (lambda z, m: z / m, (z, m))]:
        want = f(*args).numpy()
        np.testing.assert_array_equal(fnx.compile(f)(*args).numpy(), want)
    assert np.isnan(want[0]).tolist() == [True, False, True, False]     # 0/0 and 0/1
