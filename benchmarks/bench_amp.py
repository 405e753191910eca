"""Mixed precision: float32 vs autocast, eager and ``fnx.compile``, on the GPT block forward
and an MLP training step (forward, backward, AdamW step; with a GradScaler for float16).

Steady state is the median of repeated calls after warm-up; within each repeat every
variant runs once, so machine noise hits all of them. Each line gives the time and the
ratio to float32 with the same execution mode (ratio < 1: autocast is faster).

    python benchmarks/bench_amp.py                       # cpu, bfloat16 (~2 min, 2 cores)
    python benchmarks/bench_amp.py --device cuda         # on a GPU: bfloat16 and float16
    python benchmarks/bench_amp.py --only gpt --repeats 5

Goal on CPU: bfloat16 autocast at most 1.3x the float32 time (no cliff from 16-bit math
NumPy has no BLAS for); on a GPU, report the speed-up.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import fnx
from fnx.testing.models import gpt_block, gpt_params

CPU_GOAL = 1.3


def _sync(t):
    data = getattr(t, "_jax", None)
    if data is None:
        data = getattr(t, "_data", None)
    if hasattr(data, "block_until_ready"):
        data.block_until_ready()
    return t


def gpt_variants(device, dtypes, batch, seq, width, heads):
    p = {k: fnx.tensor(v, device=device) for k, v in gpt_params(width).items()}
    x = fnx.tensor(np.random.default_rng(1).standard_normal((batch, seq, width))
                   .astype(np.float32), device=device)
    block = gpt_block(p, heads)
    out = {}
    for dt in (None,) + dtypes:
        def fwd(dt=dt):
            if dt is None:
                return block(x)
            with fnx.autocast(device, dtype=dt):
                return block(x)
        name = "float32" if dt is None else str(dt).split(".")[-1]
        out[("gpt", name, "eager")] = fwd
        compiled = fnx.compile(fwd)
        out[("gpt", name, "compiled")] = compiled
    return out


def mlp_variants(device, dtypes, batch, sizes):
    rng = np.random.default_rng(2)
    x = fnx.tensor(rng.standard_normal((batch, sizes[0])).astype(np.float32), device=device)
    y = fnx.tensor(rng.integers(0, sizes[-1], batch), device=device)
    out = {}
    for dt in (None,) + dtypes:
        for mode in ("eager", "compiled"):
            fnx.manual_seed(0)
            layers = []
            for a, b in zip(sizes[:-1], sizes[1:]):
                layers += [fnx.nn.Linear(a, b), fnx.nn.ReLU()]
            model = fnx.nn.Sequential(*layers[:-1]).to(device)
            opt = fnx.optim.AdamW(model.parameters(), lr=1e-3)
            scaler = fnx.amp.GradScaler(device, enabled=dt is fnx.float16)

            def step(model=model, opt=opt, scaler=scaler, dt=dt):
                with fnx.autocast(device, dtype=dt or fnx.bfloat16, enabled=dt is not None):
                    loss = fnx.nn.functional.cross_entropy(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
                opt.zero_grad()
                return loss.detach()
            name = "float32" if dt is None else str(dt).split(".")[-1]
            out[("mlp", name, mode)] = fnx.compile(step) if mode == "compiled" else step
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--only", choices=("gpt", "mlp"), default=None)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--mlp-batch", type=int, default=128)
    args = ap.parse_args(argv)
    cuda = args.device.startswith("cuda")
    dtypes = (fnx.bfloat16, fnx.float16) if cuda else (fnx.bfloat16,)
    variants = {}
    if args.only in (None, "gpt"):
        variants.update(gpt_variants(args.device, dtypes, args.batch, args.seq, args.width,
                                     args.heads))
    if args.only in (None, "mlp"):
        variants.update(mlp_variants(args.device, dtypes, args.mlp_batch,
                                     (784, 1024, 1024, 10)))
    for fn in variants.values():        # warm-up: traces and XLA compiles
        _sync(fn())
        _sync(fn())
    times = {k: [] for k in variants}
    for _ in range(args.repeats):
        for k, fn in variants.items():
            t0 = time.perf_counter()
            _sync(fn())
            times[k].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    worst = 0.0
    print(f"device {args.device}; median of {args.repeats} calls, ms")
    for (what, dt, mode), ms in med.items():
        base = med[(what, "float32", mode)]
        ratio = ms / base
        if dt != "float32" and not cuda:
            worst = max(worst, ratio)
        print(f"{what:4s} {mode:9s} {dt:9s} {ms:9.2f} ms   x{ratio:.2f} vs float32")
    if not cuda:
        verdict = "ok" if worst <= CPU_GOAL else "MISSED"
        print(f"worst bfloat16/float32 ratio {worst:.2f} (goal <= {CPU_GOAL}): {verdict}")


if __name__ == "__main__":
    main()
