"""fnx.compile and autograd state are per thread: a trace on one thread is not disturbed
by another thread's eager backward or inference_mode, and concurrent first calls compile
once."""
from __future__ import annotations

import os
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


def _numpy_sgd(w, b, x, y, lr, steps):
    """SGD on mean squared error of x @ w.T + b, written out (the reference)."""
    for _ in range(steps):
        err = x @ w.T + b - y
        g = 2.0 * err / err.size
        w, b = w - lr * (g.T @ x), b - lr * g.sum(0)
    return w, b


def test_eight_threads_compile_and_train_at_once():
    """Each thread builds, compiles and trains its own model while the others do; every
    result must equal the written-out SGD. ``FNX_THREAD_REPS=100`` repeats it 100 times
    (CI runs it once: each repeat compiles eight programs)."""
    reps = int(os.environ.get("FNX_THREAD_REPS", "1"))
    for rep in range(reps):
        barrier = threading.Barrier(8)
        out, errors = {}, []

        def worker(k):
            try:
                g = np.random.default_rng(1000 * rep + k)
                w0 = g.standard_normal((3, 4)).astype(np.float32)
                b0 = g.standard_normal(3).astype(np.float32)
                x = g.standard_normal((8, 4)).astype(np.float32)
                y = g.standard_normal((8, 3)).astype(np.float32)
                model = nn.Linear(4, 3)
                with fnx.no_grad():
                    model.weight.copy_(fnx.from_numpy(w0.copy()))
                    model.bias.copy_(fnx.from_numpy(b0.copy()))
                opt = optim.SGD(model.parameters(), lr=0.05)
                xt, yt = fnx.from_numpy(x), fnx.from_numpy(y)

                @fnx.compile
                def step():
                    opt.zero_grad()
                    loss = ((model(xt) - yt) ** 2).mean()
                    loss.backward()
                    opt.step()
                    return loss
                barrier.wait()              # all eight trace and compile at once
                for _ in range(4):
                    step()
                out[k] = (to_numpy(model.weight.detach()), to_numpy(model.bias.detach()),
                          _numpy_sgd(w0, b0, x, y, 0.05, 4), len(step.entries()))
            except Exception as e:      # pragma: no cover - reported below
                errors.append(e)
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert len(out) == 8
        for w, b, (w_ref, b_ref), programs in out.values():
            np.testing.assert_allclose(w, w_ref, rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(b, b_ref, rtol=1e-4, atol=1e-5)
            assert programs == 1
