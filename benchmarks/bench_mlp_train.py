"""MLP training step: fnx eager vs compiled model vs compiled step vs hand-written JAX.

The model is 784-1024-1024-10 with ReLU, batch 128, cross-entropy, plain SGD (lr 0.01).
Four variants start from the same weights and data:

- eager: ``opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step()``
- compiled model: the same step with ``fnx.compile(model)`` (backward through ``jax.vjp``)
- compiled step: ``fnx.compile(step)``: forward, backward and update as one jitted program
- JAX: ``jax.value_and_grad`` plus the SGD update in one ``jax.jit``

Each repeat runs every variant once (interleaved, so machine noise hits all of them, in
an order rotated every repeat);
the figure is the median over repeats after warm-up. The losses of the four variants are
printed after the timed steps as a correctness check (they train the same model).
``--memory N`` instead runs N eager steps and prints the process's resident memory along
the way (a loop that leaks graphs grows by the activations of every step).

    python benchmarks/bench_mlp_train.py                # ~1 min on 2 CPU cores
    python benchmarks/bench_mlp_train.py --memory 1000
Goal: the compiled step within 1.15x of hand-written JAX.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import fnx
from fnx import nn, optim

GOAL = 1.15
SIZES = (784, 1024, 1024, 10)
LR = 0.01


def make_model(device):
    fnx.manual_seed(0)
    layers = []
    for i, (a, b) in enumerate(zip(SIZES[:-1], SIZES[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(SIZES) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers).to(device)


def fnx_step(model):
    loss_fn = nn.CrossEntropyLoss()
    opt = optim.SGD(model.parameters(), lr=LR)

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()
    return step


def jax_step(model, device):
    dev = jax.devices("gpu" if device.startswith("cuda") else "cpu")[0]
    params = [(jax.device_put(jnp.asarray(m.weight.detach().cpu().numpy()), dev),
               jax.device_put(jnp.asarray(m.bias.detach().cpu().numpy()), dev))
              for m in model if isinstance(m, nn.Linear)]

    def loss_fn(params, x, y):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w.T + b
            if i < len(params) - 1:
                h = jax.nn.relu(h)
        logp = jax.nn.log_softmax(h, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    @jax.jit
    def step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads), loss

    state = {"params": params}

    def run(x, y):
        state["params"], loss = step(state["params"], x, y)
        return loss
    return run, dev


def _sync(v):
    data = getattr(v, "_data", v)
    if hasattr(data, "block_until_ready"):
        data.block_until_ready()
    return v


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def memory(args):
    model = make_model(args.device)
    step = fnx_step(model)
    rng = np.random.default_rng(0)
    x = fnx.tensor(rng.standard_normal((args.batch, SIZES[0])).astype(np.float32),
                   device=args.device)
    y = fnx.tensor(rng.integers(0, SIZES[-1], args.batch), device=args.device)
    marks = sorted({10, 100, args.memory // 2, args.memory})
    print(f"eager training loop, {args.memory} steps (batch {args.batch}): resident memory")
    start = None
    for i in range(1, args.memory + 1):
        step(x, y)
        if i in marks:
            gc.collect()
            rss = _rss_mb()
            start = start if start is not None else rss
            print(f"  step {i:5d}: {rss:8.1f} MiB  ({rss - start:+.1f} MiB since step {marks[0]})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--memory", type=int, default=0, help="run N eager steps, print memory")
    args = ap.parse_args(argv)
    if args.memory:
        return memory(args)

    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((args.batch, SIZES[0])).astype(np.float32)
    y_np = rng.integers(0, SIZES[-1], args.batch)
    x = fnx.tensor(x_np, device=args.device)
    y = fnx.tensor(y_np, device=args.device)

    models = {name: make_model(args.device) for name in ("eager", "compiled model",
                                                         "compiled step")}
    steps = {"eager": fnx_step(models["eager"])}
    m = models["compiled model"]
    cm = fnx.compile(m)
    steps["compiled model"] = fnx_step(_Wrapped(m, cm))
    steps["compiled step"] = fnx.compile(fnx_step(models["compiled step"]))
    jrun, dev = jax_step(models["eager"], args.device)
    xj, yj = jax.device_put(jnp.asarray(x_np), dev), jax.device_put(jnp.asarray(y_np), dev)
    steps["JAX jit"] = lambda a, b: jrun(xj, yj)

    first = {}
    for name, fn in steps.items():
        t0 = time.perf_counter()
        _sync(fn(x, y))
        first[name] = time.perf_counter() - t0
    for _ in range(args.warmup):
        for fn in steps.values():
            _sync(fn(x, y))
    times = {name: [] for name in steps}
    losses = {}
    names = list(steps)
    for r in range(args.repeats):
        # rotate the order each repeat: whatever runs right after the eager variant shares
        # the CPU with NumPy's BLAS threads still spinning down
        for name in names[r % len(names):] + names[:r % len(names)]:
            fn = steps[name]
            t0 = time.perf_counter()
            losses[name] = _sync(fn(x, y))
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    ref = med["JAX jit"]
    print(f"MLP {'-'.join(map(str, SIZES))}, batch {args.batch}, SGD, device {args.device}: "
          f"median of {args.repeats} steps after {args.warmup + 1} warm-up")
    print(f"{'variant':16s} {'step ms':>9s} {'vs JAX':>8s} {'first call s':>13s} "
          f"{'loss after':>11s}")
    for name in steps:
        loss = float(np.asarray(getattr(losses[name], "_data", losses[name])))
        print(f"{name:16s} {med[name] * 1e3:9.2f} {med[name] / ref:7.2f}x "
              f"{first[name]:13.2f} {loss:11.5f}")
    ratio = med["compiled step"] / ref
    print(f"compiled step / JAX jit = {ratio:.2f}x (goal <= {GOAL}x): "
          f"{'met' if ratio <= GOAL else 'NOT met'}")


class _Wrapped(nn.Module):
    """``model``'s parameters, called through its compiled version."""

    def __init__(self, model, compiled):
        super().__init__()
        self.inner = model
        self._compiled = compiled

    def forward(self, x):
        return self._compiled(x)


if __name__ == "__main__":
    main()
