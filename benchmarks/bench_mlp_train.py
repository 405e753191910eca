"""MLP training step: fnx eager vs compiled model vs compiled step vs hand-written JAX.

Two models, each with ReLU, cross-entropy and plain SGD (lr 0.01):

- big: 784-1024-1024-10, batch 128 (the jitted program dominates: copies around it show)
- small: 64-128-128-10, batch 16 (the program is tiny: Python around it shows)

Variants of each start from the same weights and data:

- eager: ``opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step()``
- compiled model: the same step with ``fnx.compile(model)`` (its backward a compiled program)
- compiled step: ``fnx.compile(step)``: forward, backward and update as one jitted program
- JAX: ``jax.value_and_grad`` plus the SGD update in one ``jax.jit`` (the goals'
  reference), and the same with the old parameters donated (``donate_argnums``), which
  on the small model saves output allocations (printed as a second reference)
- JAX, grads: the same, also returning the gradients (what a PyTorch step keeps in
  ``.grad``: the compiled step must output them; printed as a second reference)

plus the compiled step and JAX (without and with donation) with a learning rate set before
every step (as a scheduler does; JAX takes it as a jit argument), compared with each other
(goal 1.1x, with no recompilation: the program count is printed).

Then the call overhead alone: ``fnx.compile(lambda x: x + 1)`` beside
``jax.jit(lambda x: x + 1)`` on one 4-element float32 array.

Each repeat runs every variant once (interleaved, so machine noise hits all of them, in
a fresh random order every repeat); the figure is the median over repeats after warm-up. The
two eager-driven variants are timed apart from the others: NumPy's BLAS threads keep
spinning for a while after an eager step, and on 2 cores they slowed whatever ran next (the
big model's jitted steps took 12 ms beside them, 5.5 ms without). The goals are judged on the
paired ratio: the median over repeats of the two variants' times in the same repeat
(quartiles in brackets); the ratio of the two medians is printed beside it. The losses of
the variants are printed after the timed steps as a correctness check (they train the same
model the same number of steps): the run fails when they differ.
``--memory N`` instead runs N eager steps and prints the process's resident memory along
the way (a loop that leaks graphs grows by the activations of every step).

    python benchmarks/bench_mlp_train.py                # ~1 min on 2 CPU cores
    python benchmarks/bench_mlp_train.py --memory 1000
Goals: the compiled step within 1.05x of hand-written JAX on the big MLP, 1.2x on the
small one.
"""
from __future__ import annotations

import argparse
import gc
import math
import os
import random
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import fnx
from fnx import nn, optim
from fnx.backends import cuda as cuda_backend
from fnx.testing.models import training_step

LR = 0.01
# name: (sizes, batch, steps timed together per repeat, repeats, goal for compiled step)
CONFIGS = {
    "big": ((784, 1024, 1024, 10), 128, 4, 40, 1.05),
    "small": ((64, 128, 128, 10), 16, 100, 40, 1.2),
}


def make_model(sizes, device):
    fnx.manual_seed(0)
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers).to(device)


def fnx_step(model, keep=None):
    opt = optim.SGD(model.parameters(), lr=LR)
    if keep is not None:
        keep.append(opt)
    return training_step(model, opt, nn.CrossEntropyLoss())


def jax_device(device):
    """The JAX device an fnx device's tensors live on (a cuda device may be a CPU one, with
    ``FNX_CUDA_ON_CPU=1``)."""
    if device.startswith("cuda"):
        return cuda_backend.jax_device(fnx.device(device if ":" in device else "cuda:0"))
    return jax.devices("cpu")[0]


def mlp_loss(params, x, y):
    """The MLP's cross-entropy in JAX: ``params`` is a list of (weight, bias)."""
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w.T + b
        if i < len(params) - 1:
            h = jax.nn.relu(h)
    logp = jax.nn.log_softmax(h, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


def jax_step(model, device, keep_grads=False, donate=False):
    """The hand-written JAX step; ``keep_grads``: it also returns the gradients, which
    a PyTorch-style step must keep (``.grad`` is readable after ``opt.step()``);
    ``donate``: the old parameters' buffers are donated for the new ones."""
    dev = jax_device(device)
    params = [(jax.device_put(jnp.asarray(m.weight.detach().cpu().numpy()), dev),
               jax.device_put(jnp.asarray(m.bias.detach().cpu().numpy()), dev))
              for m in model if isinstance(m, nn.Linear)]

    def _step(params, x, y, lr):
        loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
        new = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
        return (new, loss, grads) if keep_grads else (new, loss)
    step = jax.jit(_step, donate_argnums=(0,) if donate else ())

    state = {"params": params}

    def run(x, y, lr=LR):       # lr: a Python float, a traced (weak-typed) jit argument
        state["params"], loss, *grads = step(state["params"], x, y, lr)
        state["grads"] = grads
        return loss
    return run, dev


def schedule(k: int) -> float:
    """The learning rate of step ``k`` in the scheduled variants: a new value every step."""
    return LR * (0.5 + 0.5 * math.cos(k / 25))


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
    sizes, batch = CONFIGS["big"][:2]
    model = make_model(sizes, args.device)
    step = fnx_step(model)
    rng = np.random.default_rng(0)
    x = fnx.tensor(rng.standard_normal((batch, sizes[0])).astype(np.float32),
                   device=args.device)
    y = fnx.tensor(rng.integers(0, sizes[-1], batch), device=args.device)
    marks = sorted({10, 100, args.memory // 2, args.memory})
    print(f"eager training loop, {args.memory} steps (batch {batch}): resident memory")
    start = None
    for i in range(1, args.memory + 1):
        step(x, y)
        if i in marks:
            gc.collect()
            rss = _rss_mb()
            start = start if start is not None else rss
            print(f"  step {i:5d}: {rss:8.1f} MiB  ({rss - start:+.1f} MiB since step {marks[0]})")


def _timed(steps, repeats, warmup, inner):
    """Median seconds per call of every variant; first-call seconds; last results; every
    repeat's seconds per call of each variant (for ``paired``)."""
    first = {}
    for name, fn in steps.items():
        t0 = time.perf_counter()
        _sync(fn())
        first[name] = time.perf_counter() - t0
    for _ in range(warmup):
        for fn in steps.values():
            for _ in range(inner):
                _sync(fn())
    times = {name: [] for name in steps}
    last = {}
    names = list(steps)
    order = random.Random(0)
    for _ in range(repeats):
        # a fresh order each repeat: whatever runs right after an eager variant shares the
        # CPU with NumPy's BLAS threads still spinning down (a fixed cyclic order would make
        # one variant always follow the same neighbour)
        order.shuffle(names)
        for name in names:
            fn = steps[name]
            t0 = time.perf_counter()
            for _ in range(inner):
                out = fn()
            last[name] = _sync(out)
            times[name].append((time.perf_counter() - t0) / inner)
    return {k: statistics.median(v) for k, v in times.items()}, first, last, times


def timed_apart(steps, apart, repeats, warmup, inner):
    """``_timed`` for ``steps``, the variants named in ``apart`` timed among themselves
    after the others: they are eager-driven, and NumPy's BLAS threads keep spinning for a
    while after an eager step, slowing whatever runs next on 2 cores. The repeat times
    returned are the others' (for ``paired``)."""
    med, first, last, times = _timed({n: f for n, f in steps.items() if n not in apart},
                                     repeats, warmup, inner)
    rest = {n: steps[n] for n in apart if n in steps}
    if rest:
        for part, got in zip((med, first, last), _timed(rest, repeats, warmup, inner)):
            part.update(got)
    return med, first, last, times


def paired(times: dict, a: str, b: str) -> tuple:
    """The median and quartiles over repeats of variant ``a``'s time over ``b``'s in the
    same repeat (``times``: {variant: [seconds per repeat]}). Both ran in the same repeat,
    so a slow spell of the machine, which moves two medians apart by chance, mostly
    cancels in each ratio."""
    q = statistics.quantiles([x / y for x, y in zip(times[a], times[b])], n=4)
    return q[1], q[0], q[2]


def ratio_line(what, ratio, pair, goal):
    return (f"{what} = {ratio:.2f}x; paired {pair[0]:.2f}x [{pair[1]:.2f}-{pair[2]:.2f}] "
            f"(goal <= {goal}x): {'met' if pair[0] <= goal else 'NOT met'}")


def mlp(which, args) -> bool:
    sizes, batch, inner, repeats, goal = CONFIGS[which]
    repeats = args.repeats or repeats
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y_np = rng.integers(0, sizes[-1], batch)
    x = fnx.tensor(x_np, device=args.device)
    y = fnx.tensor(y_np, device=args.device)

    models = {name: make_model(sizes, args.device) for name in ("eager", "compiled model",
                                                                "compiled step", "lr")}
    fns = {"eager": fnx_step(models["eager"])}
    m = models["compiled model"]
    fns["compiled model"] = fnx_step(_Wrapped(m, fnx.compile(m)))
    fns["compiled step"] = fnx.compile(fnx_step(models["compiled step"]))
    jrun, dev = jax_step(models["eager"], args.device)
    xj, yj = jax.device_put(jnp.asarray(x_np), dev), jax.device_put(jnp.asarray(y_np), dev)
    steps = {name: (lambda f=f: f(x, y)) for name, f in fns.items()}
    steps["JAX jit"] = lambda: jrun(xj, yj)
    jrun_d, _ = jax_step(models["eager"], args.device, donate=True)
    steps["JAX jit, donated"] = lambda: jrun_d(xj, yj)
    jrun_g, _ = jax_step(models["eager"], args.device, keep_grads=True)
    steps["JAX jit, grads"] = lambda: jrun_g(xj, yj)
    # A learning rate set before every step, as a scheduler does: the compiled step reads
    # it as a program input (no recompilation); JAX gets it as a jit argument.
    opt_lr = []
    sched_step = fnx.compile(fnx_step(models["lr"], opt_lr))
    k = {"fnx": 0}

    def fnx_sched():
        opt_lr[0].param_groups[0]["lr"] = schedule(k["fnx"])
        k["fnx"] += 1
        return sched_step(x, y)
    steps["compiled step, lr"] = fnx_sched
    for name, donate in (("JAX jit, lr", False), ("JAX jit, lr, donated", True)):
        k[name] = 0
        jrun_lr, _ = jax_step(models["eager"], args.device, donate=donate)

        def jax_sched(run=jrun_lr, name=name):
            k[name] += 1
            return run(xj, yj, schedule(k[name] - 1))
        steps[name] = jax_sched
    med, first, losses, times = timed_apart(steps, ("eager", "compiled model"), repeats,
                                            args.warmup, inner)

    ref = med["JAX jit"]
    print(f"MLP {'-'.join(map(str, sizes))}, batch {batch}, SGD, device {args.device}: "
          f"median of {repeats} repeats of {inner} step(s) after {args.warmup + 1} warm-up")
    print(f"{'variant':16s} {'step ms':>9s} {'vs JAX':>8s} {'first call s':>13s} "
          f"{'loss after':>11s}")
    values = {}
    for name in steps:
        values[name] = float(np.asarray(getattr(losses[name], "_data", losses[name])))
        print(f"{name:16s} {med[name] * 1e3:9.3f} {med[name] / ref:7.2f}x "
              f"{first[name]:13.2f} {values[name]:11.5f}")
    def close(a, b):
        return abs(values[a] - values[b]) <= 1e-3 * max(1.0, abs(values[b]))
    agree = all(close(name, "JAX jit") for name in values if ", lr" not in name)
    agree_lr = all(close("compiled step, lr", n) for n in values if ", lr" in n)
    ratio = med["compiled step"] / ref
    print(ratio_line("compiled step / JAX jit", ratio,
                     paired(times, "compiled step", "JAX jit"), goal) +
          f"; losses {'agree' if agree else 'DIFFER'}")
    print(f"  against the JAX step with donation: paired "
          f"{paired(times, 'compiled step', 'JAX jit, donated')[0]:.2f}x; one that also "
          f"returns its gradients, as .grad must be kept: "
          f"{paired(times, 'compiled step', 'JAX jit, grads')[0]:.2f}x")
    ratio_lr = med["compiled step, lr"] / med["JAX jit, lr"]
    programs = len(sched_step.entries())
    print(ratio_line("with a new learning rate every step: compiled step / JAX jit",
                     ratio_lr, paired(times, "compiled step, lr", "JAX jit, lr"), 1.1) +
          f"; {programs} program(s) after {k['fnx']} steps; losses "
          f"{'agree' if agree_lr else 'DIFFER'}")
    print(f"  against the JAX step with donation: paired "
          f"{paired(times, 'compiled step, lr', 'JAX jit, lr, donated')[0]:.2f}x")
    return agree and agree_lr


def call_overhead(args):
    """``x + 1`` on one small array: what a call costs beyond the program."""
    f = fnx.compile(lambda t: t + 1)
    g = jax.jit(lambda a: a + 1)
    x = fnx.tensor(np.arange(4, dtype=np.float32), device=args.device)
    xj = jax.device_put(jnp.arange(4, dtype=jnp.float32), jax_device(args.device))
    steps = {"fnx.compile": lambda: f(x), "jax.jit": lambda: g(xj)}
    med, _, last, _ = _timed(steps, 15, 2, 500)
    ok = np.array_equal(np.asarray(last["fnx.compile"].cpu()._data), np.asarray(last["jax.jit"]))
    ratio = med["fnx.compile"] / med["jax.jit"]
    print(f"call overhead, x + 1 on 4 floats: fnx.compile {med['fnx.compile'] * 1e6:.1f} us, "
          f"jax.jit {med['jax.jit'] * 1e6:.1f} us: {ratio:.2f}x; results "
          f"{'agree' if ok else 'DIFFER'}")
    return ok


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=0, help="repeats per model (default: "
                                                           "40)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--only", choices=["big", "small", "overhead"], action="append")
    ap.add_argument("--memory", type=int, default=0, help="run N eager steps, print memory")
    ap.add_argument("--precision", choices=["highest", "high"], default="highest",
                    help="float32 products, fnx's and the JAX reference's alike: 'highest' "
                         "full float32 (PyTorch's default), 'high' TF32 on a GPU")
    args = ap.parse_args(argv)
    # one precision for both sides: JAX's own default on a GPU is TF32, fnx's full float32
    fnx.set_float32_matmul_precision(args.precision)
    if args.memory:
        return memory(args)
    parts = args.only or ["big", "small", "overhead"]
    ok = True
    for which in parts:
        ok &= call_overhead(args) if which == "overhead" else mlp(which, args)
        print()
    if not ok:
        sys.exit("results differ between variants")


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
