"""Peak memory of a compiled training step: fnx.compile vs hand-written ``jax.jit`` with
buffer donation, on a ~110M-parameter MLP (4096-7168-7168-4096, batch 16, SGD).

Each variant runs in its own process (peak resident memory is per process): build the
model, run ``--steps`` training steps, report the process's peak RSS and the peak above
the memory held right after imports. The model's float32 weights alone are ~440 MiB; a
step that keeps a second copy of the model (inputs copied into XLA, outputs copied back,
no donation) shows up as +440 MiB or more.

    python benchmarks/bench_compile_memory.py          # ~1 min on 2 CPU cores
    python benchmarks/bench_compile_memory.py --device cuda   # on a GPU: device memory

On a GPU the figure is the device's own peak (``memory_stats()["peak_bytes_in_use"]`` of
the JAX device; run with ``XLA_PYTHON_CLIENT_PREALLOCATE=false`` or not, the allocator's
in-use count is the same), since the model then lives in GPU memory, not in the process.
Goal: fnx's peak above baseline within 1.3x of jax.jit's.

A PyTorch-style step keeps its gradients (``.grad`` is readable after ``opt.step()``), so
fnx's step holds one more model-sized set of arrays than the hand-written JAX step, which
lets XLA drop each gradient once it updated its weight. A second JAX variant that also
returns the gradients (kept until the next step, as ``.grad`` is) is printed as the
like-for-like reference.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys

GOAL = 1.3
SIZES = (4096, 7168, 7168, 4096)
BATCH = 16


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _device_stats(device):
    """The JAX device's allocator statistics, or None (CPU devices keep none)."""
    from bench_mlp_train import jax_device  # noqa: PLC0415
    stats = jax_device(device).memory_stats() if device != "cpu" else None
    return stats if stats and "peak_bytes_in_use" in stats else None


def _current_mib() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * 4096 / 2 ** 20


# Each variant's child process imports the frameworks (through bench_mlp_train, which
# holds the model and the JAX loss both benchmarks use), then measures its baseline.
def run_fnx(steps, device):
    import numpy as np  # noqa: PLC0415

    import fnx  # noqa: PLC0415
    from bench_mlp_train import fnx_step, make_model  # noqa: PLC0415
    base = _current_mib()
    step = fnx.compile(fnx_step(make_model(SIZES, device)))
    rng = np.random.default_rng(0)
    x = fnx.tensor(rng.standard_normal((BATCH, SIZES[0])).astype(np.float32), device=device)
    y = fnx.tensor(rng.integers(0, SIZES[-1], BATCH), device=device)
    for _ in range(steps):
        loss = float(step(x, y).item())
    return base, loss


def run_jax(steps, device, keep_grads=False):
    # jax's default device: the GPU where there is one, the CPU (also under FNX_CUDA_ON_CPU)
    import jax  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    import jax.numpy as jnp  # noqa: PLC0415
    from bench_mlp_train import LR, mlp_loss  # noqa: PLC0415
    base = _current_mib()
    rng = np.random.default_rng(0)
    params = []
    for a, b in zip(SIZES[:-1], SIZES[1:]):
        bound = 1 / a ** 0.5
        w = jnp.asarray(rng.uniform(-bound, bound, (b, a)).astype(np.float32))
        params.append((w, jnp.zeros((b,), jnp.float32)))

    def _step(params, x, y, old_grads):
        loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
        new = jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)
        return (new, loss, grads) if keep_grads else (new, loss, None)
    # the kept gradients' old buffers are donated too, as fnx gives its old .grad buffers
    step = jax.jit(_step, donate_argnums=(0, 3))
    x = jnp.asarray(rng.standard_normal((BATCH, SIZES[0])).astype(np.float32))
    y = jnp.asarray(rng.integers(0, SIZES[-1], BATCH))
    grads = None
    for _ in range(steps):
        params, loss, grads = step(params, x, y, grads)
    return base, float(loss)


def child(variant, steps, device):
    if variant == "fnx":
        base, loss = run_fnx(steps, device)
    else:
        base, loss = run_jax(steps, device, keep_grads=variant == "jax-grads")
    stats = _device_stats(device)
    if stats:   # the model lives in device memory: the allocator's peak, from nothing
        print(json.dumps({"peak": stats["peak_bytes_in_use"] / 2 ** 20, "base": 0.0,
                          "loss": loss, "where": "device"}))
    else:
        print(json.dumps({"peak": _peak_mib(), "base": base, "loss": loss,
                          "where": "process RSS"}))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--child", choices=["fnx", "jax", "jax-grads"])
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child, args.steps, args.device)
    n_params = sum(a * b + b for a, b in zip(SIZES[:-1], SIZES[1:]))
    print(f"MLP {'-'.join(map(str, SIZES))} ({n_params / 1e6:.0f}M parameters, "
          f"{n_params * 4 / 2 ** 20:.0f} MiB of float32), batch {BATCH}, SGD, "
          f"{args.steps} steps, device {args.device}")
    res = {}
    for variant in ("jax", "jax-grads", "fnx"):
        out = subprocess.run([sys.executable, __file__, "--child", variant, "--steps",
                              str(args.steps), "--device", args.device],
                             capture_output=True, text=True, check=True)
        res[variant] = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"peak of: {res['fnx']['where']}")
    print(f"{'variant':22s} {'peak MiB':>9s} {'above imports':>14s} {'loss':>9s}")
    for variant, label in (("jax", "jax.jit + donation"), ("jax-grads", "  ... keeping grads"),
                           ("fnx", "fnx.compile step")):
        r = res[variant]
        print(f"{label:22s} {r['peak']:9.0f} {r['peak'] - r['base']:14.0f} {r['loss']:9.4f}")
    def above(v):
        return res[v]["peak"] - res[v]["base"]
    ratio = above("fnx") / above("jax")
    print(f"fnx / jax.jit peak above imports = {ratio:.2f}x (goal <= {GOAL}x): "
          f"{'met' if ratio <= GOAL else 'NOT met'}")
    print(f"  (against the JAX step that keeps its gradients, as .grad does: "
          f"{above('fnx') / above('jax-grads'):.2f}x)")


if __name__ == "__main__":
    main()
