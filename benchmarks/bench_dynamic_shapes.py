"""Growing sequence length: the cost of each new T under ``fnx.compile`` today.

A GPT-style block (``fnx.testing.models.gpt_block``) is called at T = 1, 2, ..., N, as an
autoregressive ``generate()`` loop does. For each new T it prints the first call's time
under ``fnx.compile`` (fnx trace + passes + JAX lowering + XLA compile while the entry
cache has room; once ``cache_limit`` shapes are compiled, new shapes run eagerly), the
same for ``jax.jit`` of the hand-written block (JAX trace + XLA compile: the floor for any
path that still compiles per concrete shape, as a symbolic-shape graph lowered per size
would), and the steady per-call times of both and of fnx eager.

    python benchmarks/bench_dynamic_shapes.py             # ~1 min on 2 CPU cores
    python benchmarks/bench_dynamic_shapes.py --max-seq 20 --width 128

Symbolic sizes (``fnx.graph.symint``) exist; ``fnx.compile`` does not trace with them yet,
so the "fnx.compile first" column is today's behaviour (the "before" number).
"""
from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import fnx
from fnx.testing.models import gpt_block, gpt_params, jax_gpt_block


def _sync(t):
    data = getattr(t, "_data", t)
    if hasattr(data, "block_until_ready"):
        data.block_until_ready()
    return t


def _timed(fn):
    t0 = time.perf_counter()
    out = _sync(fn())
    return time.perf_counter() - t0, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--max-seq", type=int, default=12)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    B, C, H = args.batch, args.width, args.heads

    params = gpt_params(C)
    p_fnx = {k: fnx.tensor(v) for k, v in params.items()}
    p_jax = {k: jnp.asarray(v) for k, v in params.items()}
    eager = gpt_block(p_fnx, H)
    compiled = fnx.compile(eager)
    jitted = jax.jit(jax_gpt_block(H))
    rng = np.random.default_rng(0)

    print(f"GPT block B={B} C={C} heads={H}, T = 1..{args.max_seq} (CPU; steady: median of "
          f"{args.repeats})")
    print(f"{'T':>3} {'compile first s':>16} {'jax.jit first s':>16} {'compile ms':>11} "
          f"{'jax.jit ms':>11} {'eager ms':>9} {'max err':>9}")
    firsts = []
    for T in range(1, args.max_seq + 1):
        x_np = rng.standard_normal((B, T, C)).astype(np.float32)
        x_fnx, x_jax = fnx.tensor(x_np), jnp.asarray(x_np)
        first_c, y_c = _timed(lambda: compiled(x_fnx))
        first_j, y_j = _timed(lambda: jitted(p_jax, x_jax))
        err = float(np.abs(y_c.numpy() - np.asarray(y_j)).max())
        steady = {}
        for name, fn in (("c", lambda: compiled(x_fnx)), ("j", lambda: jitted(p_jax, x_jax)),
                         ("e", lambda: eager(x_fnx))):
            steady[name] = statistics.median(_timed(fn)[0] for _ in range(args.repeats))
        firsts.append((first_c, first_j))
        print(f"{T:>3} {first_c:>16.3f} {first_j:>16.3f} {steady['c'] * 1e3:>11.2f} "
              f"{steady['j'] * 1e3:>11.2f} {steady['e'] * 1e3:>9.2f} {err:>9.1e}")
    n = len(firsts)
    print(f"mean first call per new T: fnx.compile {sum(f for f, _ in firsts) / n:.3f} s, "
          f"jax.jit {sum(j for _, j in firsts) / n:.3f} s; "
          f"compiled entries: {len(compiled.entries())}")


if __name__ == "__main__":
    main()
