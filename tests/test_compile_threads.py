"""fnx.compile and autograd state are per thread: a trace on one thread is not disturbed
by another thread's eager backward or inference_mode, and concurrent first calls compile
once."""
from __future__ import annotations

import threading

import numpy as np

import fnx
from fnx import nn, optim
from fnx.testing import to_numpy


def test_concurrent_first_calls_compile_once():
    f = fnx.compile(lambda x: (x * 2).sum())
    x = fnx.arange(6.0)
    barrier = threading.Barrier(8)
    results, errors = [], []

    def worker():
        try:
            barrier.wait()
            results.append(f(x).item())
        except Exception as e:      # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == [30.0] * 8
    assert len(f.entries()) == 1


def _step_fn():
    fnx.manual_seed(0)
    model = nn.Linear(4, 3)
    opt = optim.SGD(model.parameters(), lr=0.1)
    x, y = fnx.randn(8, 4), fnx.randn(8, 3)

    def step():
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
    return model, step


def test_trace_beside_another_threads_backward():
    eager_model, eager_step = _step_fn()
    for _ in range(3):
        eager_step()
    model, step = _step_fn()
    compiled = fnx.compile(step)
    stop = threading.Event()

    def busy_backward():        # eager backward passes on unrelated tensors, all along
        w = fnx.ones(16, requires_grad=True)
        while not stop.is_set():
            (w * 3).sum().backward()
            with fnx.inference_mode():
                (w * 2).sum()
    other = threading.Thread(target=busy_backward)
    other.start()
    try:
        for _ in range(3):
            compiled()
    finally:
        stop.set()
        other.join()
    for a, b in zip(eager_model.parameters(), model.parameters()):
        np.testing.assert_allclose(to_numpy(b.detach()), to_numpy(a.detach()), rtol=1e-6)


def test_inference_mode_is_per_thread():
    inside, seen = threading.Event(), []
    release = threading.Event()

    def hold():
        with fnx.inference_mode():
            inside.set()
            release.wait()
    t = threading.Thread(target=hold)
    t.start()
    inside.wait()
    try:
        seen.append(fnx.is_inference_mode_enabled())
        seen.append((fnx.ones(2, requires_grad=True) * 2).requires_grad)
    finally:
        release.set()
        t.join()
    assert seen == [False, True]
