"""Per-sample gradients: ``vmap(grad(loss))`` over ``functional_call`` against an eager loop
of one backward per example, on an MLP classifier.

The first call traces and compiles (reported apart); steady state is the median of
repeated calls. The result is checked against the loop's gradients.

    python benchmarks/bench_func.py                       # cpu (~1 min on 2 cores)
    python benchmarks/bench_func.py --batch 256 --repeats 10
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import fnx
from fnx.func import functional_call, grad, vmap


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    fnx.manual_seed(0)
    model = fnx.nn.Sequential(fnx.nn.Linear(32, 64), fnx.nn.ReLU(),
                              fnx.nn.Linear(64, 10)).to(a.device)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = fnx.randn(a.batch, 32, device=a.device)
    y = fnx.randint(0, 10, (a.batch,), device=a.device)

    def loss(p, xi, yi):
        return fnx.nn.functional.cross_entropy(functional_call(model, p, (xi[None],)),
                                               yi[None])
    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))
    t0 = time.perf_counter()
    g = per_sample(params, x, y)
    first = time.perf_counter() - t0
    times = []
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        g = per_sample(params, x, y)
        g["2.weight"].cpu().numpy()
        times.append(time.perf_counter() - t0)
    loop = []
    for _ in range(max(1, a.repeats // 10)):
        t0 = time.perf_counter()
        for i in range(a.batch):
            model.zero_grad()
            fnx.nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        loop.append(time.perf_counter() - t0)
    err = np.abs(g["2.weight"][-1].cpu().numpy() - model[2].weight.grad.cpu().numpy()).max()
    print(f"per-sample gradients, batch {a.batch}, {a.device}: first call (trace + compile) "
          f"{first * 1e3:.0f} ms; vmap(grad) {statistics.median(times) * 1e3:.2f} ms; eager "
          f"loop {statistics.median(loop) * 1e3:.1f} ms "
          f"({statistics.median(loop) / statistics.median(times):.0f}x); max |diff| {err:.1e}")


if __name__ == "__main__":
    main()
