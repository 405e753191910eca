"""What the compiled value checks cost: a char-level GPT training step (token and
position embeddings, cross-entropy over the targets: three checked index tensors) with
``fnx.compile``'s value checks on (the default) and off (``options={"value_checks":
False}``), side by side.

A check on an index a few integer ops away from a CPU input (token ids, targets) runs on
the host in NumPy before the call (``fnx/lower/host_checks.py``); any other check is
computed inside the program, whose status the call then reads before it returns. A
program without checks (the GPT block of ``bench_gpt_block.py``: no indexing) pays
nothing.
Each repeat runs both variants once, in a fresh random order (interleaved, so machine
noise hits both); the figure is the median over repeats after warm-up. Both variants
train the same model from the same weights on the same batches: their losses must agree.

    python benchmarks/bench_value_checks.py             # ~1 min on 2 CPU cores
    python benchmarks/bench_value_checks.py --device cuda
"""
from __future__ import annotations

import argparse
import copy
import pathlib
import random
import statistics
import sys
import time

import fnx

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
from mini_gpt import GPT  # noqa: E402  (the example's model, not a package)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--block", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=65)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)
    fnx.manual_seed(0)
    base = GPT(args.vocab, block_size=args.block).to(args.device)
    gen = fnx.Generator().manual_seed(1)
    batches = [(fnx.randint(0, args.vocab, (args.batch, args.block), generator=gen)
                .to(args.device),
                fnx.randint(0, args.vocab, (args.batch, args.block), generator=gen)
                .to(args.device)) for _ in range(4)]

    def variant(options):
        model = copy.deepcopy(base)
        opt = fnx.optim.AdamW(model.parameters(), lr=1e-3)

        @fnx.compile(options=options)
        def step(x, y):
            opt.zero_grad(set_to_none=True)
            loss = model(x, y)
            loss.backward()
            opt.step()
            return loss
        return step

    steps = {"checks on": variant(None), "checks off": variant({"value_checks": False})}
    losses = {k: [] for k in steps}
    times = {k: [] for k in steps}
    for r in range(args.repeats + 3):
        order = list(steps)
        random.Random(r).shuffle(order)
        x, y = batches[r % len(batches)]
        for k in order:
            t0 = time.perf_counter()
            loss = steps[k](x, y)
            value = loss.item()         # waits for the step
            dt = time.perf_counter() - t0
            losses[k].append(value)
            if r >= 3:
                times[k].append(dt)
    on, off = (statistics.median(times[k]) * 1e3 for k in ("checks on", "checks off"))
    (entry,) = steps["checks on"].entries()
    n_checks = sum(len(p.checks) for p in entry.programs())
    print(f"GPT training step, batch {args.batch}x{args.block}, vocab {args.vocab}, "
          f"{args.device}: {n_checks} value checks in the program")
    print(f"  checks on : {on:8.2f} ms")
    print(f"  checks off: {off:8.2f} ms")
    print(f"  ratio on/off: {on / off:.3f}x")
    if max(abs(a - b) for a, b in zip(losses["checks on"], losses["checks off"])) > 1e-5:
        raise SystemExit("the two variants' losses differ")
    overhead(args.device)


def overhead(device, calls=2000):
    """The fixed cost per call: ``x[i] * 2`` on 8 elements, where the program is nothing;
    each call's result is read (as a loop that uses it would), so both variants wait for
    their program and the difference is the checks' own work."""
    x = fnx.arange(8.0, device=device)
    i = fnx.tensor([1, 5], device=device)
    fns = {"checks on": fnx.compile(lambda x, i: x[i] * 2),
           "checks off": fnx.compile(lambda x, i: x[i] * 2, options={"value_checks": False})}
    per = {k: [] for k in fns}
    for r in range(7):
        for k, f in fns.items():
            f(x, i).sum().item()
            t0 = time.perf_counter()
            for _ in range(calls):
                f(x, i).tolist()
            per[k].append((time.perf_counter() - t0) / calls * 1e6)
    on, off = (statistics.median(per[k]) for k in ("checks on", "checks off"))
    print(f"call overhead, x[i] * 2 on 8 elements: checks on {on:.1f} us, off {off:.1f} us "
          f"(+{on - off:.1f} us per call)")


if __name__ == "__main__":
    main()
