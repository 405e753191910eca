"""Random numbers in compiled functions.

A generator passed in is the one drawn from. Without ``fallback_random`` a compiled
program draws from keys it takes from the generator (reproducible under ``manual_seed``,
but not eager's numbers, as with Inductor). With ``fnx._inductor.config.fallback_random``
every sampler is a graph break that runs eager's kernel, so a compiled function and its
eager run give the same values and leave the generators in the same state; the
references below are the eager runs of the same code.
"""
from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

import fnx
import fnx.nn.functional as F
from fnx import nn
from fnx.testing import to_numpy


@pytest.fixture
def fallback_random():
    with fnx._inductor.config.patch(fallback_random=True):
        yield


def _samples(x, g):
    return (fnx.rand(3) + x,
            fnx.randn_like(x),
            x.clone().uniform_(-1, 1),
            x.clone().normal_(2.0, 0.5),
            F.dropout(x, 0.5),
            fnx.bernoulli(x.sigmoid()),
            fnx.multinomial(x.abs() + 0.1, 2),
            fnx.randint(0, 10, (4,)),
            fnx.randperm(5),
            fnx.rand(2, generator=g))


def test_compiled_samplers_draw_what_eager_draws(fallback_random):
    # ten samplers: ten breaks, which cache_limit (8) does not count
    compiled = fnx.compile(_samples)
    x = fnx.tensor([0.5, -1.0, 2.0])
    eager_g, compiled_g = fnx.Generator(), fnx.Generator()
    for seed in range(3):
        eager_g.manual_seed(7 + seed)
        compiled_g.manual_seed(7 + seed)
        fnx.manual_seed(seed)
        expected, after = _samples(x, eager_g), fnx.rand(2)
        fnx.manual_seed(seed)
        got, later = compiled(x, compiled_g), fnx.rand(2)
        for e, g in zip(expected, got):
            np.testing.assert_array_equal(to_numpy(g), to_numpy(e))
        # the default generator and the one passed in are where eager leaves them
        np.testing.assert_array_equal(to_numpy(later), to_numpy(after))
        np.testing.assert_array_equal(to_numpy(compiled_g.get_state()),
                                      to_numpy(eager_g.get_state()))
    assert len(compiled.entries()) == 1        # one trace served the three calls


def _train(compiled, compile_module=False, steps=4):
    fnx.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 4))
    opt = fnx.optim.Adam(model.parameters(), lr=1e-2)
    forward = fnx.compile(model) if compile_module else model

    def step(x, y):
        loss = F.cross_entropy(forward(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    step = fnx.compile(step) if compiled else step
    fnx.manual_seed(1)
    losses = [step(fnx.randn(16, 8), fnx.randint(0, 4, (16,))).item() for _ in range(steps)]
    return losses, [to_numpy(p.detach()) for p in model.parameters()]


def test_a_training_step_with_dropout_matches_eager(fallback_random):
    expected, weights = _train(False)
    got, compiled_weights = _train(True)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    for w, e in zip(compiled_weights, weights):
        np.testing.assert_allclose(w, e, rtol=1e-5, atol=1e-6)


def test_a_function_that_runs_eagerly_draws_once(fallback_random):
    # a compiled module's outputs require grad: a break there is not supported, so it
    # runs eagerly; what its trace drew is put back first, or every call would draw twice
    expected, weights = _train(False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, compiled_weights = _train(False, compile_module=True)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    for w, e in zip(compiled_weights, weights):
        np.testing.assert_allclose(w, e, rtol=1e-6)


def test_explain_does_not_draw(fallback_random):
    compiled = fnx.compile(lambda x: x + fnx.rand(3))
    fnx.manual_seed(0)
    expected = fnx.rand(3)
    fnx.manual_seed(0)
    report = compiled.explain(fnx.zeros(3))
    assert "aten::rand() at" in str(report)
    np.testing.assert_array_equal(to_numpy(fnx.rand(3)), to_numpy(expected))


def test_changing_the_switch_recompiles_and_says_why(caplog):
    compiled = fnx.compile(lambda x: x + fnx.rand(3))
    x = fnx.zeros(3)
    compiled(x)
    with fnx._inductor.config.patch(fallback_random=True), \
            caplog.at_level(logging.INFO, logger="fnx.compile"):
        fnx.manual_seed(3)
        got = compiled(x)
    assert "fallback_random: False -> True" in caplog.text
    fnx.manual_seed(3)
    np.testing.assert_array_equal(to_numpy(got), to_numpy(fnx.rand(3)))


def test_fullgraph_warns_that_it_draws_in_the_program(fallback_random):
    compiled = fnx.compile(lambda x: x + fnx.rand(3), fullgraph=True)
    with pytest.warns(UserWarning, match="fallback_random needs graph breaks"):
        out = compiled(fnx.zeros(3))
    assert out.shape == (3,) and bool(((out >= 0) & (out < 1)).all())


def test_a_generator_passed_in_is_the_one_drawn_from():
    # not a copy made when traced: reseeding it repeats the draws, and each call
    # advances it as eager does (the reference: the same generator's draws, eagerly)
    compiled = fnx.compile(lambda x, g: x + fnx.rand(3, generator=g))
    x, g = fnx.zeros(3), fnx.Generator()
    g.manual_seed(1)
    first, second = compiled(x, g), compiled(x, g)
    g.manual_seed(1)
    again = compiled(x, g)
    np.testing.assert_array_equal(to_numpy(again), to_numpy(first))
    assert not np.array_equal(to_numpy(second), to_numpy(first))
    assert len(compiled.entries()) == 1     # reseeding is not a new call structure
    other = fnx.Generator().manual_seed(1)
    np.testing.assert_array_equal(to_numpy(compiled(x, other)), to_numpy(first))


@pytest.mark.parametrize("make", [
    lambda x: fnx.distributions.Gamma(x, x).sample(),
    lambda x: fnx.distributions.Dirichlet(x).sample(),
    lambda x: fnx.distributions.VonMises(x, x).sample()], ids=["gamma", "dirichlet", "von_mises"])
def test_rejection_samplers_stop_when_eager_does(fallback_random, make):
    # eagerly the rejection loop stops once every draw is accepted (bool(done.all()));
    # under fallback_random the compiled function breaks there too, so it makes the
    # same draws (XLA's arithmetic on them may differ in the last bits)
    x = fnx.tensor([0.5, 1.0, 2.0])
    fnx.manual_seed(3)
    expected, after = make(x), fnx.rand(2)
    fnx.manual_seed(3)
    got, later = fnx.compile(make)(x), fnx.rand(2)
    np.testing.assert_allclose(to_numpy(got), to_numpy(expected), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(to_numpy(later), to_numpy(after))
