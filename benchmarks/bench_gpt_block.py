"""GPT-style block forward: fnx eager vs ``fnx.compile`` vs hand-written ``jax.jit``.

One pre-norm transformer block (B=8, T=128, C=256, 4 heads by default), the same
weights in all three.  Steady state is the median of repeated calls after warm-up,
fnx.compile and jax.jit interleaved within each repeat, in a fresh random order, so machine
noise hits both, and fnx eager timed apart (a variant run right after it shares the CPU
with NumPy's BLAS threads still spinning down); the goal is judged on the paired ratio
(bench_mlp_train); first call is the time of the very first call (trace + passes + XLA compile for
fnx.compile; trace + XLA compile for jax.jit), each in a fresh compile cache.

    python benchmarks/bench_gpt_block.py                 # ~1 min on 2 CPU cores
    python benchmarks/bench_gpt_block.py --device cuda   # on a GPU (issue 7)
Goals (issue 13): compiled steady state <= 1.05x jax.jit; first call <= 1.5x jax.jit's.
"""
from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import fnx
from bench_mlp_train import jax_device, paired, ratio_line, timed_apart
from fnx.testing.models import gpt_block, gpt_params, jax_gpt_block

STEADY_GOAL, FIRST_GOAL = 1.05, 1.5     # issue 13


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--precision", choices=["highest", "high"], default="highest",
                    help="float32 products, fnx's and the JAX reference's alike: 'highest' "
                         "full float32 (PyTorch's default), 'high' TF32 on a GPU")
    args = ap.parse_args(argv)
    # one precision for both sides: JAX's own default on a GPU is TF32, fnx's full float32
    fnx.set_float32_matmul_precision(args.precision)
    B, T, C, H = args.batch, args.seq, args.width, args.heads

    params = gpt_params(C)
    x_np = np.random.default_rng(1).standard_normal((B, T, C)).astype(np.float32)
    p_fnx = {k: fnx.tensor(v, device=args.device) for k, v in params.items()}
    x_fnx = fnx.tensor(x_np, device=args.device)
    eager = gpt_block(p_fnx, H)
    compiled = fnx.compile(eager)
    jdev = jax_device(args.device)
    p_jax = {k: jax.device_put(jnp.asarray(v), jdev) for k, v in params.items()}
    x_jax = jax.device_put(jnp.asarray(x_np), jdev)
    jitted = jax.jit(jax_gpt_block(H))

    def sync(t):
        data = getattr(t, "_data", t)
        if hasattr(data, "block_until_ready"):
            data.block_until_ready()
        return t

    t0 = time.perf_counter()
    y_jax = sync(jitted(p_jax, x_jax))
    first_jax = time.perf_counter() - t0
    t0 = time.perf_counter()
    y_comp = sync(compiled(x_fnx))
    first_comp = time.perf_counter() - t0
    y_eager = sync(eager(x_fnx))
    ref = np.asarray(y_jax)
    err_c = np.abs(y_comp.cpu().numpy() - ref).max()
    err_e = np.abs(y_eager.cpu().numpy() - ref).max()

    runs = {"fnx eager": lambda: sync(eager(x_fnx)),
            "fnx.compile": lambda: sync(compiled(x_fnx)),
            "jax.jit": lambda: sync(jitted(p_jax, x_jax))}
    med, _, _, times = timed_apart(runs, ("fnx eager",), args.repeats, 1, 1)

    print(f"GPT block B={B} T={T} C={C} heads={H} on {args.device} "
          f"(median of {args.repeats}, interleaved)")
    print(f"  max |fnx.compile - jax.jit| = {err_c:.2e}, |fnx eager - jax.jit| = {err_e:.2e}")
    print(f"  {'variant':<12} {'steady ms':>10} {'first call s':>13}")
    print(f"  {'fnx eager':<12} {med['fnx eager'] * 1e3:>10.2f} {'-':>13}")
    print(f"  {'fnx.compile':<12} {med['fnx.compile'] * 1e3:>10.2f} {first_comp:>13.2f}")
    print(f"  {'jax.jit':<12} {med['jax.jit'] * 1e3:>10.2f} {first_jax:>13.2f}")
    steady = med["fnx.compile"] / med["jax.jit"]
    first = first_comp / first_jax
    print(ratio_line("fnx.compile / jax.jit steady state", steady,
                     paired(times, "fnx.compile", "jax.jit"), STEADY_GOAL))
    print(f"fnx.compile / jax.jit first call:   {first:.2f}x (goal <= {FIRST_GOAL})")
    print(f"fnx eager / fnx.compile steady state: {med['fnx eager'] / med['fnx.compile']:.2f}x")
    return steady, first


if __name__ == "__main__":
    main()
