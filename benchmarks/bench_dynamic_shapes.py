"""Growing sequence length: the cost of each new T, fnx static vs fnx dynamic vs jax.jit.

A GPT-style block (``fnx.testing.models.gpt_block``) is called at T = 1, 2, ..., N, as an
autoregressive ``generate()`` loop does. For each new T it prints the first call's time of

- ``fnx.compile(dynamic=False)`` (static): every new T is traced, decomposed, cleaned,
  lowered and XLA-compiled, until ``cache_limit`` (8) programs exist; later T run eagerly;
- ``fnx.compile()`` (dynamic=None, automatic): T=1 and T=2 as static; at the third value
  T is traced once as a symbol (``fnx.lower.dynamic_shapes``); every later T only checks
  the guards, substitutes the sizes into the recorded graph, lowers it and XLA-compiles;
- ``jax.jit`` of the hand-written block (JAX trace + XLA compile: the floor of any path
  that compiles per concrete shape),

then the steady per-call times (median of ``--repeats`` calls at that T) of the three and
of fnx eager, and the largest difference between fnx dynamic and jax.jit. A second table
does the same for an int argument that grows (a KV-cache decoding position, as Llama's
``start_pos``), against fnx eager.

    python benchmarks/bench_dynamic_shapes.py             # ~2 min on 2 CPU cores
    python benchmarks/bench_dynamic_shapes.py --max-seq 20 --width 128
"""
from __future__ import annotations

import argparse
import statistics
import time
import warnings

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
    ap.add_argument("--max-seq", type=int, default=16)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    B, C, H = args.batch, args.width, args.heads

    params = gpt_params(C)
    p_fnx = {k: fnx.tensor(v) for k, v in params.items()}
    p_jax = {k: jnp.asarray(v) for k, v in params.items()}
    eager = gpt_block(p_fnx, H)
    static = fnx.compile(eager, dynamic=False)
    dynamic = fnx.compile(eager)
    jitted = jax.jit(jax_gpt_block(H))
    rng = np.random.default_rng(0)
    warnings.simplefilter("ignore", UserWarning)      # static: cache_limit reached

    print(f"GPT block B={B} C={C} heads={H}, T = 1..{args.max_seq} (CPU; steady: median of "
          f"{args.repeats})")
    print(f"{'':>3} {'first call at a new T, s':^27} {'steady per call, ms':^38}")
    print(f"{'T':>3} {'static':>8} {'dynamic':>8} {'jax.jit':>8}  {'static':>8} "
          f"{'dynamic':>8} {'jax.jit':>8} {'eager':>8} {'max err':>9}")
    firsts = []
    for T in range(1, args.max_seq + 1):
        x_np = rng.standard_normal((B, T, C)).astype(np.float32)
        x_fnx, x_jax = fnx.tensor(x_np), jnp.asarray(x_np)
        first_s, _ = _timed(lambda: static(x_fnx))
        first_d, y_d = _timed(lambda: dynamic(x_fnx))
        first_j, y_j = _timed(lambda: jitted(p_jax, x_jax))
        err = float(np.abs(y_d.numpy() - np.asarray(y_j)).max())
        steady = {}
        for name, fn in (("s", lambda: static(x_fnx)), ("d", lambda: dynamic(x_fnx)),
                         ("j", lambda: jitted(p_jax, x_jax)), ("e", lambda: eager(x_fnx))):
            steady[name] = statistics.median(_timed(fn)[0] for _ in range(args.repeats))
        firsts.append((T, first_s, first_d, first_j))
        print(f"{T:>3} {first_s:>8.3f} {first_d:>8.3f} {first_j:>8.3f}  "
              f"{steady['s'] * 1e3:>8.2f} {steady['d'] * 1e3:>8.2f} {steady['j'] * 1e3:>8.2f} "
              f"{steady['e'] * 1e3:>8.2f} {err:>9.1e}")
    # after the symbolic trace (T=3), while the static one still compiles (T <= 8)
    both = [f for f in firsts if 4 <= f[0] <= static.cache_limit]
    if both:
        n = len(both)
        print(f"mean first call per new T, T=4..{both[-1][0]}: static "
              f"{sum(f[1] for f in both) / n:.3f} s, dynamic {sum(f[2] for f in both) / n:.3f} "
              f"s, jax.jit {sum(f[3] for f in both) / n:.3f} s")
    later = [f for f in firsts if f[0] > static.cache_limit]
    if later:
        n = len(later)
        print(f"T={later[0][0]}..{later[-1][0]}: static runs eagerly; first call dynamic "
              f"{sum(f[2] for f in later) / n:.3f} s, jax.jit {sum(f[3] for f in later) / n:.3f} s")
    print(f"traces: static {len(static.entries())} (then eager), dynamic "
          f"{sum(getattr(e, 'size', 1) for e in dynamic.entries())} static + "
          f"{dynamic.dynamic_traces()} symbolic")
    _int_positions(args, rng)


def _kv_decode(wq, wk, wv):
    """One decoding step of a KV-cached attention head at int position ``pos`` (as
    Llama's reference ``forward(tokens, start_pos)``): the keys read grow with ``pos``."""
    def step(cache_k, cache_v, x, pos):
        cache_k[:, pos:pos + 1] = x @ wk
        cache_v[:, pos:pos + 1] = x @ wv
        keys, values = cache_k[:, :pos + 1], cache_v[:, :pos + 1]
        att = ((x @ wq) @ keys.transpose(1, 2) / keys.shape[-1] ** 0.5).softmax(-1)
        return att @ values
    return step


def _int_positions(args, rng):
    """The same comparison for an int argument that grows (a decoding position): static
    specializes every value (eager after cache_limit); dynamic traces it as a symbol at
    its third value and then lowers and XLA-compiles per new position."""
    B, C = args.batch, args.width
    w = [fnx.tensor(rng.standard_normal((C, C)).astype(np.float32) / C ** 0.5)
         for _ in range(3)]
    eager = _kv_decode(*w)
    static, dynamic = fnx.compile(eager, dynamic=False), fnx.compile(eager)
    n = args.max_seq * 2
    caches = {name: [fnx.zeros(B, n, C), fnx.zeros(B, n, C)]
              for name in ("static", "dynamic", "eager")}
    print(f"\nKV-cache decode step B={B} C={C}, int position 0..{n - 1} (a new value per "
          f"call)")
    print(f"{'pos':>3} {'first call, s':^18} {'steady per call, ms':^28} {'max err':>9}")
    print(f"{'':>3} {'static':>8} {'dynamic':>8}  {'static':>8} {'dynamic':>8} {'eager':>8}")
    firsts = []
    for pos in range(n):
        x = fnx.tensor(rng.standard_normal((B, 1, C)).astype(np.float32))
        first_s, _ = _timed(lambda: static(*caches["static"], x, pos))
        first_d, y_d = _timed(lambda: dynamic(*caches["dynamic"], x, pos))
        y_e = eager(*caches["eager"], x, pos)
        err = float(np.abs(y_d.numpy() - y_e.numpy()).max())
        steady = {name: statistics.median(_timed(lambda: fn(*caches[name], x, pos))[0]
                                          for _ in range(args.repeats))
                  for name, fn in (("static", static), ("dynamic", dynamic),
                                   ("eager", eager))}
        firsts.append((pos, first_s, first_d))
        print(f"{pos:>3} {first_s:>8.3f} {first_d:>8.3f}  {steady['static'] * 1e3:>8.2f} "
              f"{steady['dynamic'] * 1e3:>8.2f} {steady['eager'] * 1e3:>8.2f} {err:>9.1e}")
    later = [f for f in firsts if f[0] > static.cache_limit]
    if later:
        print(f"pos={later[0][0]}..{later[-1][0]}: static runs eagerly; first call dynamic "
              f"{sum(f[2] for f in later) / len(later):.3f} s per new position")
    print(f"traces: static {len(static.entries())} (then eager), dynamic "
          f"{sum(getattr(e, 'size', 1) for e in dynamic.entries())} static + "
          f"{dynamic.dynamic_traces()} symbolic")


if __name__ == "__main__":
    main()
