"""SymInt and its guards (fnx.graph.symint) and the fnx.sym_* helpers.

References are plain Python/math arithmetic on the same sizes.
"""
import math
import numbers
import operator
import pickle
import types

import numpy as np
import pytest

import fnx
from fnx.graph.symint import ShapeEnv, SymInt, guard_int, substitute
from fnx.graph.tracer import trace
from fnx.lower.dynamic_shapes import concrete_graph


def _inputs(*shapes):
    return [types.SimpleNamespace(shape=s) for s in shapes]


def _env(value=5):
    env = ShapeEnv()
    return env, env.create_symbol(value, (0, 1), "x.size(1)")


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.floordiv,
                                operator.mod])
@pytest.mark.parametrize("other", [3, -2, 7])
def test_arithmetic_stays_symbolic_and_evaluates(op, other):
    env, t = _env(5)
    for r in (op(t, other), op(other, t), op(t, t + other)):
        assert isinstance(r, SymInt)
    r = op(t * 2, other)
    assert r._value == op(10, other)
    for v in (1, 4, 9, 40):
        assert env.evaluate(r, {"s0": v}) == op(2 * v, other)
    # no decision was made: nothing is guarded
    assert [g for g in env.guards if "!= 0" not in g.what] == []


def test_no_guard_for_arithmetic_and_sym_max():
    env, t = _env(6)
    n = fnx.sym_max(t - 10, 0) + fnx.sym_min(t, 4) + fnx.sym_sum([t, 1, t])
    assert isinstance(n, SymInt) and env.guards == []
    for v in (0, 3, 6, 15):
        assert env.evaluate(n, {"s0": v}) == max(v - 10, 0) + min(v, 4) + 2 * v + 1


@pytest.mark.parametrize("op,name", [(operator.lt, "<"), (operator.le, "<="), (operator.gt, ">"),
                                     (operator.ge, ">="), (operator.eq, "=="),
                                     (operator.ne, "!=")])
def test_comparison_records_a_guard_that_checks_new_sizes(op, name):
    env, t = _env(5)
    result = op(t + 1, 6)
    assert result is op(6, 6)
    assert len(env.guards) == 1 and name in env.guards[0].what
    for v in range(0, 12):
        assert env.guards_hold(_inputs((2, v))) == (op(v + 1, 6) == result)


def test_bool_int_index_hash_specialize():
    env, t = _env(3)
    assert bool(t) is True and len(env.guards) == 1
    assert env.guards_hold(_inputs((1, 9))) and not env.guards_hold(_inputs((1, 0)))
    for use in (int, operator.index, hash, lambda s: list(range(s)), lambda s: [0] * 10 == [0] * s,
                lambda s: np.zeros((s, 2)).shape, float, lambda s: s / 2, lambda s: "ab"[0:s - 2]):
        env, t = _env(3)
        use(t)
        assert env.guards, use
        # a specialization only holds at the traced size
        assert env.guards_hold(_inputs((1, 3)))
        assert not env.guards_hold(_inputs((1, 4)))


def test_int_result_and_true_division_values():
    env, t = _env(6)
    assert int(t) == 6 and type(int(t)) is int
    assert t / 4 == 1.5 and 12 / t == 2.0
    assert np.arange(t).tolist() == list(range(6))


def test_division_by_a_symbol_guards_nonzero():
    env, t = _env(4)
    r = 12 // t
    assert env.evaluate(r, {"s0": 3}) == 4
    assert env.guards_hold(_inputs((1, 3))) and not env.guards_hold(_inputs((1, 0)))
    env0, z = _env(0)
    with pytest.raises(ZeroDivisionError):
        12 // z


def test_guard_deps_and_failing_list():
    env = ShapeEnv()
    a = env.create_symbol(4, (0, 0), "a")
    b = env.create_symbol(7, (1, 1), "b")
    assert (a < b) is True
    assert env.guards[0].deps == frozenset({0, 1})
    inputs = _inputs((9, 1), (1, 7))
    assert env.failing(inputs) == env.guards


def test_substitute_nested():
    env, t = _env(5)
    args = ([t, t * 3, -1], {"size": (t + 1, 2)}, "x")
    out = substitute(args, {"s0": 8})
    assert out == ([8, 24, -1], {"size": (9, 2)}, "x")


def test_integral_and_pickle():
    env, t = _env(5)
    assert isinstance(t, numbers.Integral)
    assert pickle.loads(pickle.dumps(t)) == 5
    assert guard_int(7) == 7 and guard_int(t) == 5


def test_create_symbol_rejects_bad_sizes():
    env = ShapeEnv()
    with pytest.raises(TypeError, match="create_symbol"):
        env.create_symbol(2.0, (0, 0))
    with pytest.raises(ValueError, match="create_symbol"):
        env.create_symbol(-1, (0, 0))


# -- fnx.sym_* on plain numbers: what Python/math give

@pytest.mark.parametrize("a", [2.7, -2.7, 3, 0.0, True])
def test_sym_int_float(a):
    assert fnx.sym_int(a) == math.trunc(a) and type(fnx.sym_int(a)) is int
    assert fnx.sym_float(a) == float(a) and type(fnx.sym_float(a)) is float


@pytest.mark.parametrize("a,b", [(2, 3), (2, 3.0), (2.5, 1), (-1, -1), (4, 3)])
def test_sym_max_min(a, b):
    for f, ref in ((fnx.sym_max, max), (fnx.sym_min, min)):
        r = f(a, b)
        assert r == ref(a, b)
        assert type(r) is (float if float in (type(a), type(b)) else int)


def test_sym_not_ite_sqrt_sum():
    assert fnx.sym_not(0) is True and fnx.sym_not(3) is False
    assert fnx.sym_ite(True, 1, 2) == 1 and fnx.sym_ite(False, 1.0, 2.0) == 2.0
    assert fnx.sym_sqrt(2) == math.sqrt(2)
    assert fnx.sym_sum([1, 2, 3]) == 6 and fnx.sym_sum([1.5, 2]) == 3.5 and fnx.sym_sum([]) == 0


def test_sym_errors():
    with pytest.raises(AssertionError, match="sym_ite"):
        fnx.sym_ite(1, 1, 2)
    with pytest.raises(AssertionError, match="sym_ite"):
        fnx.sym_ite(True, 1, 2.0)
    with pytest.raises(AssertionError, match="sym_max"):
        fnx.sym_max("a", 1)


def test_sym_helpers_on_symint():
    env, t = _env(9)
    assert fnx.sym_int(t) is t
    assert fnx.sym_not(t) is False and len(env.guards) == 1
    assert fnx.sym_sqrt(t) == 3.0 and fnx.sym_float(t) == 9.0
    assert not env.guards_hold(_inputs((1, 16)))


def test_guards_are_recorded_once_and_checked_on_bindings():
    env, t = _env(5)
    for _ in range(3):
        assert t > 2 and (t * 2 != 4)
    assert [g.what for g in env.guards] == ["x.size(1) > 2", "x.size(1)*2 != 4"]
    assert env.holds_for({"s0": 9}) is True
    assert env.holds_for({"s0": 2}) is False           # 2 > 2 is False
    assert env.values == {"s0": 5}


def test_a_frozen_env_refuses_decisions_and_a_copy_is_guarded():
    env, t = _env(5)
    n = t + 1
    assert pickle.loads(pickle.dumps(n)) == 6          # a copy is a plain int, guarded
    assert [g.what for g in env.guards] == ["x.size(1)+1 == 6"]
    env.freeze()
    assert (n * 2).text == "(x.size(1)+1)*2"           # arithmetic still fine
    with pytest.raises(RuntimeError, match="after its trace"):
        bool(n > 3)


def test_trace_with_a_dynamic_dim_records_size_expressions():
    env = ShapeEnv()
    g = trace(lambda x: x.reshape(-1)[: x.shape[1] + 1] * 2, fnx.ones(2, 3),
              shape_env=env, dynamic_dims={(0, 1)}, decompose_to="prims")
    out = g.output_node.args[0]
    assert isinstance(out.meta.shape[0], SymInt)       # 2*s0 clamped to s0+1: symbolic
    assert env.evaluate(out.meta.shape[0], {"s0": 7}) == 8
    c = concrete_graph(g, {"s0": 7})
    assert c.output_node.args[0].meta.shape == (8,)
    a = np.arange(14, dtype=np.float32).reshape(2, 7)
    np.testing.assert_array_equal(c.run(fnx.tensor(a)).numpy(), a.reshape(-1)[:8] * 2)


def test_printing_a_size_is_a_decision_on_its_value():
    # str(T) or f"{T:03d}" in traced code reads the value (a cache key, a length): it was
    # the expression's text, so len(str(T)) was baked in for every size
    env, t = _env(5)
    assert str(t + 1) == "6" and f"{t:03d}" == "005"
    assert [g.what for g in env.guards] == ["x.size(1)+1 == 6", "x.size(1) == 5"]
