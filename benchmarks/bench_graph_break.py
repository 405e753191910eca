"""A compiled training step with a graph break vs the same step without it vs eager.

The step (MLP, cross-entropy, SGD with momentum) is timed in four variants from the same
weights and data:

- eager: the function with the break, run op by op
- compiled, no break: ``fnx.compile(step)`` of the step without the ``if``; the loss is
  read with ``.item()`` after the call, so every variant waits for the device once
- compiled, break: ``fnx.compile`` of the step with ``if loss.item() > LIMIT: loss =
  loss * 0.5`` before ``backward()``: two programs per call (the forward up to the break,
  then the rest: backward and update) and the value handed to Python between them
- compiled, break + float: as above, and the function also returns ``0.9 * ema + 0.1 *
  loss.item()`` (a running average in Python arithmetic, computed from the program input
  the break value is; no recompilation)

Each repeat runs every variant once, in a fresh random order; the figure is the median
over repeats after warm-up. The program count of each compiled variant is printed (it
must not grow with the number of steps); the run fails when the variants' weights differ
at the end (they all took the same steps).

    python benchmarks/bench_graph_break.py            # ~1 min on 2 CPU cores
"""
from __future__ import annotations

import random
import statistics
import time

import jax
import numpy as np

import fnx
from fnx import nn, optim

LIMIT = 1e9          # the branch is never taken: the same path every step
CONFIGS = {"big": ((784, 1024, 1024, 10), 128, 1, 30),
           "small": ((64, 128, 128, 10), 16, 20, 30)}


def make(sizes):
    fnx.manual_seed(0)
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)
    return model, optim.SGD(model.parameters(), lr=0.01, momentum=0.9), nn.CrossEntropyLoss()


def variants(sizes, models):
    out = {}

    model, opt, loss_fn = make(sizes)
    models.append(model)

    def plain(x, y, model=model, opt=opt, loss_fn=loss_fn):
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    f = fnx.compile(plain)
    out["compiled, no break"] = (lambda x, y, f=f: f(x, y).item(), f)

    for name, with_float in (("compiled, break", False), ("compiled, break + float", True),
                             ("eager", False)):
        model, opt, loss_fn = make(sizes)
        models.append(model)

        def broken(x, y, ema, model=model, opt=opt, loss_fn=loss_fn, with_float=with_float):
            loss = loss_fn(model(x), y)
            if loss.item() > LIMIT:
                loss = loss * 0.5
            loss.backward()
            opt.step()
            opt.zero_grad()
            if with_float:
                return loss, 0.9 * ema + 0.1 * loss.item()
            return loss, ema
        if name == "eager":
            out[name] = (lambda x, y, g=broken: g(x, y, 0.0)[0].item(), None)
        else:
            g = fnx.compile(broken)
            out[name] = (lambda x, y, g=g: g(x, y, 0.5)[0].item(), g)
    return out


def main():
    for config, (sizes, batch, inner, repeats) in CONFIGS.items():
        rng = np.random.default_rng(0)
        x = fnx.tensor(rng.standard_normal((batch, sizes[0])).astype(np.float32))
        y = fnx.tensor(rng.integers(0, sizes[-1], batch))
        models = []
        runs = variants(sizes, models)
        times = {k: [] for k in runs}
        order_index = {k: i for i, k in enumerate(runs)}
        for _ in range(3):                      # warm-up: traces and compiles
            for fn, _ in runs.values():
                fn(x, y)
        order = list(runs)
        for _ in range(repeats):
            random.shuffle(order)
            for k in order:
                fn = runs[k][0]
                t0 = time.perf_counter()
                for _ in range(inner):
                    fn(x, y)
                # the update may still run (programs are dispatched asynchronously and
                # the loss is ready first): the time includes it
                jax.block_until_ready([p.__dict__.get("_jax") for p in
                                       models[order_index[k]].parameters()])
                times[k].append((time.perf_counter() - t0) / inner)
        print(f"== {config}: {sizes}, batch {batch} (median per step over {repeats})")
        base = statistics.median(times["compiled, no break"])
        for k, ts in times.items():
            med = statistics.median(ts)
            compiled = runs[k][1]
            programs = "" if compiled is None else \
                f"  programs {sum(getattr(e, 'size', 1) for e in compiled.entries())}"
            print(f"  {k:26s} {med * 1e3:8.3f} ms  {med / base:5.2f}x{programs}")
        # every variant took the same number of steps from the same weights
        first = [m[0].weight.detach().numpy() for m in models]
        for w in first[1:]:
            np.testing.assert_allclose(w, first[0], rtol=1e-3, atol=1e-4)


if __name__ == "__main__":
    main()
