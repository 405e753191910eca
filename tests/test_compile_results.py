"""A compiled function gives back what eager Python gives back: a float it computed from
float arguments stays a Python float (recomputed from the call's inputs, so a new value
does not recompile), and an ``out=`` tensor it returns is that very tensor."""
from __future__ import annotations

import math

import numpy as np

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
