"""fnx.compile with an int argument that keeps changing (a position, a step index).

As in PyTorch's automatic dynamic shapes, an int argument that took a third value is
traced once as a symbol (``fnx/lower/dynamic_shapes.py``): decisions on it are guards,
sizes made from it stay expressions, and new values lower the recorded graph without
tracing again, so a decoding loop or a gradient-accumulation step never ends in eager
mode. References are NumPy, or the same function run eagerly.
"""
import copy
import warnings

import numpy as np

import fnx
from fnx import nn
from fnx.testing import to_numpy


def _kv_step(cache, x, pos):
    """One decoding step with a KV cache written at ``pos`` (as Llama's reference code)."""
    cache[:, pos:pos + x.shape[1]] = x
    keys = cache[:, :pos + x.shape[1]]
    return (x @ keys.transpose(1, 2)).softmax(-1) @ keys


def _kv_reference(cache, x, pos):
    cache[:, pos:pos + x.shape[1]] = x
    keys = cache[:, :pos + x.shape[1]]
    s = x @ keys.transpose(0, 2, 1)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ keys


def test_a_growing_position_is_traced_once_and_never_ends_eager():
    rng = np.random.default_rng(0)
    cache, ref_cache = fnx.zeros(2, 20, 4), np.zeros((2, 20, 4), np.float32)
    g = fnx.compile(_kv_step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # no "runs eagerly from now on"
        for pos in range(0, 16):
            x = rng.standard_normal((2, 1, 4)).astype(np.float32)
            got = g(cache, fnx.tensor(x), pos)
            want = _kv_reference(ref_cache, x, pos)
            np.testing.assert_allclose(to_numpy(got), want, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(to_numpy(cache), ref_cache, rtol=1e-6)
    # positions 0 and 1 are constants (as PyTorch, 0 and 1 are never symbols); from the
    # third value on one symbolic trace serves every position
    assert g.dynamic_traces() == 1
    assert sum(getattr(e, "size", 1) for e in g.entries()) == 2


def test_an_int_read_only_by_a_guard_shares_one_program_per_branch():
    g = fnx.compile(lambda x, i: x * 2 if (i + 1) % 4 == 0 else x - 1)
    a = np.arange(3, dtype=np.float32)
    for i in range(40):
        want = a * 2 if (i + 1) % 4 == 0 else a - 1
        np.testing.assert_array_equal(to_numpy(g(fnx.tensor(a), i)), want)
    # two static traces (0, 1), then one symbolic trace per branch, one program each
    assert g.dynamic_traces() == 2 and len(g.entries()) == 4


def test_an_int_read_as_a_value_compiles_at_most_cache_limit_programs():
    g = fnx.compile(lambda x, i: x * i + i // 3)
    a = np.arange(3, dtype=np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in list(range(30)) + list(range(30)):
            np.testing.assert_array_equal(to_numpy(g(fnx.tensor(a), i)), a * i + i // 3)
    # a program per value, bounded: the symbolic trace makes cache_limit of them, then
    # static traces fill cache_limit, then new values run eagerly (with the warning)
    assert len(g.entries()) <= 2 * g.cache_limit
    assert any("cache_limit" in str(w.message) for w in caught)


def test_specialize_int_keeps_ints_constants():
    g = fnx.compile(lambda x, n: x[:n].sum())
    a = np.arange(12, dtype=np.float32)
    with fnx._dynamo.config.patch(specialize_int=True):
        for n in range(2, 7):
            assert g(fnx.tensor(a), n).item() == a[:n].sum()
    assert g.dynamic_traces() == 0


def test_a_keyword_int_is_dynamic_and_keeps_its_name():
    g = fnx.compile(lambda x, *, start, stop: x[start:stop].sum(0))
    a = np.arange(24, dtype=np.float32).reshape(12, 2)
    for start in range(0, 6):
        for kw in ({"start": start, "stop": start + 5}, {"stop": start + 5, "start": start}):
            np.testing.assert_array_equal(to_numpy(g(fnx.tensor(a), **kw)),
                                          a[start:start + 5].sum(0))
    assert g.dynamic_traces() >= 1


def test_gradient_accumulation_step_index_matches_eager():
    fnx.manual_seed(0)
    model = nn.Linear(4, 1)
    twin = copy.deepcopy(model)

    def make(m):
        opt = fnx.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)

        def step(x, i):
            loss = m(x).pow(2).mean() / 4
            loss.backward()
            if (i + 1) % 4 == 0:
                opt.step()
                opt.zero_grad()
            return loss.detach()
        return step

    eager, compiled = make(model), fnx.compile(make(twin))
    x = fnx.randn(8, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(24):
            np.testing.assert_allclose(compiled(x, i).item(), eager(x, i).item(), rtol=1e-6)
    np.testing.assert_allclose(to_numpy(twin.weight), to_numpy(model.weight), rtol=1e-5,
                               atol=1e-7)
    assert compiled._eager_reason is None


def test_arange_and_narrow_from_an_int_position_stay_symbolic():
    g = fnx.compile(lambda x, pos: fnx.narrow(x, 0, pos, 2) *
                    fnx.arange(pos, pos + 2).float()[:, None])
    a = np.arange(20, dtype=np.float32).reshape(10, 2)
    for pos in range(8):
        want = a[pos:pos + 2] * np.arange(pos, pos + 2, dtype=np.float32)[:, None]
        np.testing.assert_array_equal(to_numpy(g(fnx.tensor(a), pos)), want)
    assert g.dynamic_traces() == 1
    assert sum(getattr(e, "size", 1) for e in g.entries()) == 2


def test_an_int_turned_into_text_is_its_value():
    g = fnx.compile(lambda x, i: x * len(str(i)) + len(f"{i:03d}"))
    a = np.ones(2, np.float32)
    for i in (2, 3, 4, 5, 10, 100, 1000, 7):
        want = a * len(str(i)) + len(f"{i:03d}")
        np.testing.assert_array_equal(to_numpy(g(fnx.tensor(a), i)), want)
