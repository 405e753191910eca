"""Tensors a compiled function reads from its globals and closure cells.

A tensor that does not require grad, held by a global, a closure cell or an item of a small
list or dict they hold, is read when the program is called (like a module's tensor
attribute), so rebinding it, by the user or by the function itself (``global h; h = ...``,
``nonlocal``, ``_STATE["h"] = ...``), neither recompiles nor goes stale. What the traced
code stores there is a real tensor after the call, never a trace's. A tensor held in two
places is read from both, and the program is retraced once they disagree. References are
NumPy recurrences computed by hand.
"""
import logging

import numpy as np
import pytest

import fnx
from fnx import nn


def _decays(n, x):
    """h after each of n steps of h = h * 0.5 + x, from zeros."""
    h, out = np.zeros_like(x), []
    for _ in range(n):
        h = h * 0.5 + x
        out.append(h)
    return out


_H = None
_STATE = {"h": None}
_SLOTS = [None]


def _global_step(x):
    global _H
    _H = _H * 0.5 + x
    return _H.sum()


def _dict_step(x):
    _STATE["h"] = _STATE["h"] * 0.5 + x
    return _STATE["h"].sum()


def _list_step(x):
    _SLOTS[0] = _SLOTS[0] * 0.5 + x
    return _SLOTS[0].sum()


def _closure_step():
    h = fnx.zeros(3)

    def step(x):
        nonlocal h
        h = h * 0.5 + x
        return h.sum()
    return step, lambda: h


@pytest.mark.parametrize("where", ["global", "dict", "list", "closure"])
def test_state_a_function_rebinds_is_read_when_called(where, traces, caplog):
    global _H
    _H, _STATE["h"], _SLOTS[0] = fnx.zeros(3), fnx.zeros(3), fnx.zeros(3)
    step, held = {"global": (_global_step, lambda: _H),
                  "dict": (_dict_step, lambda: _STATE["h"]),
                  "list": (_list_step, lambda: _SLOTS[0]),
                  "closure": _closure_step()}[where]
    f = fnx.compile(step)
    x = np.array([1.0, 2.0, -1.0], np.float32)
    with caplog.at_level(logging.INFO, logger="fnx.compile"):
        for want in _decays(8, x):
            got = f(fnx.tensor(x))
            h = held()
            assert type(h.numpy()) is np.ndarray     # a real tensor, not the trace's
            np.testing.assert_allclose(h.numpy(), want, rtol=1e-6)
            assert got.item() == pytest.approx(want.sum(), rel=1e-6)
    # the first trace stores (a program for that call only), the second is kept
    assert len(traces) == 2
    assert "recompiling" not in caplog.text


_W = None


def test_a_global_tensor_the_user_rebinds_is_read_when_called(traces):
    global _W
    _W = fnx.ones(3)
    f = fnx.compile(lambda x: x * _W + 1.0)
    x = fnx.tensor([1.0, 2.0, 3.0])
    assert f(x).tolist() == [2.0, 3.0, 4.0]
    for k in range(2, 6):
        _W = fnx.full((3,), float(k))
        assert f(x).tolist() == [k * 1.0 + 1, k * 2.0 + 1, k * 3.0 + 1]
    assert len(traces) == 1
    _W = fnx.full((2,), 2.0)        # another shape: its own program, not a wrong answer
    assert f(fnx.tensor([1.0, 2.0])).tolist() == [3.0, 5.0]
    assert len(traces) == 2


class _Twice(nn.Module):
    def __init__(self):
        super().__init__()
        t = fnx.ones(3)
        self.h, self.h2 = t, t

    def forward(self, x):
        return x + self.h


_A = _B = None


def test_a_tensor_held_twice_is_read_from_where_the_code_reads_it():
    # one tensor under two names: which one the code reads cannot be told, so both are read
    # and once they hold different tensors the function is traced again (the program used
    # to keep the tensor it was traced with: a stale answer)
    m = _Twice()
    f = fnx.compile(m)
    x = fnx.zeros(3)
    assert f(x).tolist() == [1.0] * 3
    m.h = fnx.full((3,), 5.0)
    assert f(x).tolist() == [5.0] * 3
    m.h2 = fnx.full((3,), 7.0)
    assert f(x).tolist() == [5.0] * 3
    global _A, _B
    _A = _B = fnx.ones(3)
    g = fnx.compile(lambda x: x * _A + 0 * _B.sum())
    assert g(x + 1).tolist() == [1.0] * 3
    _A = fnx.full((3,), 3.0)
    assert g(x + 1).tolist() == [3.0] * 3
    _B = fnx.full((3,), 9.0)
    assert g(x + 1).tolist() == [3.0] * 3


_G = None


def test_a_global_tensor_that_requires_grad_is_captured_and_guarded(caplog):
    # read through it: its .grad, so it is captured as it is and a new one recompiles
    global _G
    _G = fnx.tensor([1.0, 2.0], requires_grad=True)

    def step(x):
        loss = (x * _G).sum()
        loss.backward()
        return loss
    f = fnx.compile(step)
    x = fnx.tensor([3.0, 4.0])
    assert f(x).item() == pytest.approx(11.0)
    np.testing.assert_allclose(_G.grad.numpy(), [3.0, 4.0])
    _G = fnx.tensor([2.0, 2.0], requires_grad=True)
    with caplog.at_level(logging.INFO, logger="fnx.compile"):
        assert f(x).item() == pytest.approx(14.0)
    np.testing.assert_allclose(_G.grad.numpy(), [3.0, 4.0])
    assert "'_G' is bound to another Tensor; a compiled function captures the tensors " \
           "that require grad" in caplog.text
    # a held tensor that starts to require grad changes how it is read: a new key
    _W2 = fnx.tensor([1.0, 1.0])

    def scaled(x):
        return (x * _W2).sum()
    g = fnx.compile(scaled)
    assert g(x).item() == pytest.approx(7.0) and not g(x).requires_grad
    _W2.requires_grad_(True)
    with caplog.at_level(logging.INFO, logger="fnx.compile"):
        out = g(x)
    assert "'_W2' now holds a Tensor that requires grad" in caplog.text
    out.backward()
    np.testing.assert_allclose(_W2.grad.numpy(), [3.0, 4.0])


_COUNT = 0


def test_a_global_counter_is_counted_on_every_call():
    # a plain value the function rebinds is guarded by value: each call sees the new count
    global _COUNT
    _COUNT = 0

    def counting(x):
        global _COUNT
        _COUNT += 1
        return x * 2
    f = fnx.compile(counting)
    with pytest.warns(UserWarning):     # past the recompile limit it runs eagerly
        for i in range(12):
            assert f(fnx.ones(2)).tolist() == [2.0, 2.0]
    assert _COUNT == 12


def _cache_writer(lin, cache):
    def write(x, pos):
        cache[pos] = lin(x)         # a value that requires grad, into a captured buffer
        return cache.sum()
    return write


def test_a_write_that_gives_a_captured_buffer_history_runs_eagerly():
    fnx.manual_seed(0)
    lin = nn.Linear(3, 3)
    cache = fnx.zeros(4, 3)
    x, pos = fnx.ones(1, 3), fnx.tensor([1])
    with pytest.warns(UserWarning, match="autograd history"):
        loss = fnx.compile(_cache_writer(lin, cache))(x, pos)
    loss.backward()
    # as eager: the buffer holds the row and has history reaching the parameters
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    row = np.ones(3, np.float32) @ w.T + b
    np.testing.assert_allclose(cache.detach().numpy()[1], row, rtol=1e-6)
    assert cache.requires_grad and cache.grad_fn is not None
    np.testing.assert_allclose(lin.bias.grad.numpy(), np.ones(3), rtol=1e-6)
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.ones((3, 3)), rtol=1e-6)


def test_fullgraph_refuses_history_on_a_captured_buffer_and_leaves_it_unchanged():
    lin, cache = nn.Linear(3, 3), fnx.zeros(4, 3)
    g = fnx.compile(_cache_writer(lin, cache), fullgraph=True)
    with pytest.raises(RuntimeError, match=r"\(4, 3\) tensor.*autograd history"):
        g(fnx.ones(1, 3), fnx.tensor([1]))
    assert not cache.requires_grad and cache.grad_fn is None
    np.testing.assert_array_equal(cache.numpy(), np.zeros((4, 3), np.float32))
    with fnx.no_grad():        # a cache written under no_grad compiles
        g(fnx.ones(1, 3), fnx.tensor([2]))
    assert g.entries() and not cache.requires_grad
