"""The Python work of one call of a compiled training step, without its program.

A compiled small-MLP step (64-128-128-10, batch 16, SGD with momentum, as in
``bench_mlp_train.py``) is warmed up; then its XLA executables are replaced by stubs that
give each donated buffer back as its output (``_stub_programs``), so that donation,
rebinding and ``.grad`` reuse behave as in a real call while the program itself costs
nothing. What remains per call is
fnx's own work: the guard key, the entry's guards, feeding, write-back. The split printed
below times each part of the general path alone, then whole calls, which take the
generated fast path (``fnx.lower.fast_call``), and whole calls again with it disarmed;
``--profile`` adds cProfile's view.

    python benchmarks/bench_call_overhead.py                  # ~20 s on 2 CPU cores
    python benchmarks/bench_call_overhead.py --device cuda    # tensors holding jax.Arrays
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import sys
import time

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import bench_mlp_train as mlp  # noqa: E402

import fnx  # noqa: E402


def _best_us(fn, calls: int, repeats: int = 5) -> float:
    # (the cyclic collector off while timing: the stubs' pool of arrays would make its
    # passes, not fnx's work, the noise)
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            best = min(best, (time.perf_counter() - t0) / calls)
    finally:
        gc.enable()
    return best * 1e6


def _stub_programs(entry) -> None:
    """Replace the entry's executables by a program that costs nothing: it returns, for
    each output that replaces a donated input (a parameter, a momentum buffer) or a given-up
    ``.grad`` buffer, that very array, and for the others (the loss) the arrays of one real
    call. So rebinding and donation go on as in a real call, and no buffer is freed or
    made per call (which a real program does in XLA, not in fnx's Python)."""
    plan = entry._plan
    program = plan.program
    n = len(plan.feed)
    for prog in [program, *program._variants.values()]:
        for key, real in list(prog._compiled.items()):
            made = []

            def stub(*arrays, real=real, made=made):
                if not made:
                    made.extend(real(*arrays))
                    return list(made)
                outs = list(made)
                for j, k, _, _ in plan.donated_outs:
                    outs[k] = arrays[j]
                for s, g in enumerate(plan.grad_outs[:len(arrays) - n]):
                    outs[g[1]] = arrays[n + s]
                return outs
            prog._compiled[key] = stub


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--calls", type=int, default=4000)
    p.add_argument("--profile", action="store_true")
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    x = fnx.tensor(rng.standard_normal((16, 64)).astype(np.float32), device=args.device)
    y = fnx.tensor(rng.integers(0, 10, 16), device=args.device)
    keep = []
    step = fnx.compile(mlp.fnx_step(mlp.make_model([64, 128, 128, 10], args.device), keep))
    group = keep[0].param_groups[0]
    count = iter(range(1 << 60))

    def scheduled():        # a new learning rate every call, as a scheduler sets it
        group["lr"] = mlp.schedule(next(count))
        step(x, y)
    for _ in range(20):
        step(x, y)
    (entry,) = step.entries()
    if entry._plan is None:
        sys.exit("the step is not one planned program: nothing to measure")
    _stub_programs(entry)
    for _ in range(20):
        step(x, y)
    key = step._guards((x, y), {})
    inputs = entry.flat_inputs((x, y), {})
    parts = {
        "guard key (CompiledFunction._guards)": lambda: step._guards((x, y), {}),
        "entry guards (_Entry.match)": lambda: entry.match((x, y), {}),
        "inputs (_Entry.flat_inputs)": lambda: entry.flat_inputs((x, y), {}),
        "run (ProgramPlan.run, program stubbed)": lambda: entry._plan.run(inputs),
        "whole call, program stubbed (fast path)": lambda: step(x, y),
        "the same, a new learning rate every call": scheduled,
    }
    print(f"compiled small-MLP step on {args.device}, jax {jax.__version__}: "
          f"best of 5 x {args.calls} calls")
    assert step._fast is not None and step._fast.entry is entry, "the fast path is armed"
    for name, fn in parts.items():
        print(f"  {name:44s} {_best_us(fn, args.calls):7.1f} us")
    # the same calls with the generated fast path (fnx.lower.fast_call) disarmed
    fast, entry.fast, step._fast = entry.fast, False, None
    for name, fn in (("whole call, program stubbed, general path", lambda: step(x, y)),
                     ("the same, a new learning rate every call", scheduled)):
        print(f"  {name:44s} {_best_us(fn, args.calls):7.1f} us")
    entry.fast = fast
    assert step._lookup(key, (x, y), {})[0] is entry
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.calls):
            step(x, y)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
