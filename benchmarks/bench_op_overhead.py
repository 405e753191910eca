"""Per-op overhead of fnx's eager path beside NumPy, on tiny CPU tensors.

On 8x8 float32 tensors the arithmetic costs nothing, so the time of ``a + b`` is the
dispatcher's hot path: the generated call function binds the arguments, unions the
tensors' keysets with the thread-local include/exclude sets, indexes the op's dispatch
table and calls the CPU kernel, which calls NumPy and wraps the result in a Tensor.
NumPy's own call on the same arrays is the floor; the ratio is the overhead.

Every case is timed in the same run as its NumPy counterpart, alternating the two within
each repeat so that machine noise hits both; the figure is the fastest repeat per call.

    python benchmarks/bench_op_overhead.py            # ~10-20 s
    python benchmarks/bench_op_overhead.py --check    # exit 1 if a + b misses the goal
"""
from __future__ import annotations

import argparse
import sys
import timeit

import numpy as np

import fnx

GOAL = 4.0          # fnx a + b must cost at most this many np.add calls


def cases(ns):
    """(label, fnx statement, NumPy statement, ratio-line name) of each measured pair.
    Statements run in ``ns``; cases whose fnx API is missing are left out."""
    out = [
        ("a + b", "a + b", "np.add(an, bn)", "fnx a+b / np.add"),
        ("aten.add.Tensor(a, b)", "add_Tensor(a, b)", "np.add(an, bn)",
         "fnx aten.add.Tensor / np.add"),
        ("a.add_(b)", "ai.add_(b)", "np.add(ani, bn, out=ani)",
         "fnx a.add_(b) / np.add(out=)"),
        ("a * 2.0 (Python scalar)", "a * 2.0", "np.multiply(an, 2.0)",
         "fnx a*2.0 / np.multiply"),
    ]
    if hasattr(fnx.Tensor, "__matmul__") and hasattr(fnx.ops.aten, "mm"):
        out.append(("a @ b", "a @ b", "an @ bn", "fnx a@b / np.matmul"))
    if hasattr(fnx, "matmul"):
        out.append(("fnx.matmul(a, b)", "fnx.matmul(a, b)", "np.matmul(an, bn)",
                    "fnx.matmul / np.matmul"))
    if hasattr(fnx.Tensor, "sum"):
        out.append(("a.sum()", "a.sum()", "an.sum()", "fnx a.sum() / ndarray.sum"))
    return out


def per_call_us(timer: timeit.Timer, number: int) -> float:
    return timer.timeit(number) / number * 1e6


def calibrate(timer: timeit.Timer, target_s: float) -> int:
    """Loop count so that one repeat takes about ``target_s``."""
    n = 1
    while True:
        t = timer.timeit(n)
        if t >= target_s / 10 or n >= 10 ** 7:
            return max(1, int(n * target_s / max(t, 1e-9)))
        n *= 10


def run(repeat: int = 7, target_s: float = 0.1, size: int = 8):
    rng = np.random.default_rng(0)
    an = rng.standard_normal((size, size)).astype(np.float32)
    bn = rng.standard_normal((size, size)).astype(np.float32)
    ns = {"np": np, "fnx": fnx, "an": an, "bn": bn, "ani": an.copy(),
          "a": fnx.tensor(an), "b": fnx.tensor(bn), "ai": fnx.tensor(an),
          "add_Tensor": fnx.ops.aten.add.Tensor}
    # The in-place pair must not grow to inf/denormals over millions of calls.
    ns["bn"] = bn * np.float32(1e-9)
    ns["b"] = fnx.tensor(ns["bn"])
    results = []
    for label, fstmt, nstmt, name in cases(ns):
        ft = timeit.Timer(fstmt, globals=ns)
        nt = timeit.Timer(nstmt, globals=ns)
        ft.timeit(1000)                    # warm up caches, lazy imports, first-call paths
        nt.timeit(1000)
        fn, nn = calibrate(ft, target_s), calibrate(nt, target_s)
        f_best = n_best = float("inf")
        for _ in range(repeat):            # alternate so drift affects both sides alike
            f_best = min(f_best, per_call_us(ft, fn))
            n_best = min(n_best, per_call_us(nt, nn))
        results.append((label, name, f_best, n_best))
    return results


def report(results, size: int, repeat: int) -> float:
    print(f"fnx per-op overhead: {size}x{size} float32 CPU tensors, fastest of {repeat} "
          f"repeats, microseconds per call")
    print(f"numpy {np.__version__}, python {sys.version.split()[0]}")
    print()
    print(f"{'case':<26}{'fnx us':>10}{'numpy us':>10}{'ratio':>8}")
    for label, _, f, n in results:
        print(f"{label:<26}{f:>10.3f}{n:>10.3f}{f / n:>7.1f}x")
    print()
    add_ratio = None
    for label, name, f, n in results:
        ratio = f / n
        goal = ""
        if label == "a + b":
            add_ratio = ratio
            goal = f" (goal <= {GOAL:g}x)"
        print(f"{name}: {ratio:.1f}x{goal}")
    return add_ratio


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=7, help="repeats per case (default 7)")
    p.add_argument("--target", type=float, default=0.1,
                   help="seconds per repeat and side (default 0.1)")
    p.add_argument("--size", type=int, default=8, help="tensor side (default 8)")
    p.add_argument("--check", action="store_true",
                   help=f"exit with status 1 when fnx a + b costs more than {GOAL:g}x np.add")
    args = p.parse_args(argv)
    results = run(args.repeat, args.target, args.size)
    ratio = report(results, args.size, args.repeat)
    if args.check and ratio is not None and ratio > GOAL:
        print(f"FAILED: a + b is {ratio:.1f}x np.add, above the {GOAL:g}x goal")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
