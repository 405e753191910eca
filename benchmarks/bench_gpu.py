"""GPU benchmark: fnx eager vs ``fnx.compile`` vs hand-written ``jax.jit`` on a cuda device.

Three parts, each variant on the same weights and inputs:

1. per-op eager overhead: one fnx cuda op (dispatch, functionalization, cached jitted
   kernel, result wrap) beside the same ``jax.numpy`` call on the same ``jax.Array``s;
2. the GPT-style block forward (``fnx.testing.models``): eager, compiled, jax.jit;
3. the MLP training step (784-1024-1024-10, batch 128, cross-entropy, SGD): eager
   (``fnx.autograd``), ``fnx.compile`` of the whole step, and jax.jit of
   ``jax.value_and_grad`` plus the update.

Device-side timing: every timed call ends with ``block_until_ready`` on its result (JAX
dispatches asynchronously), each variant is warmed up first (compiles excluded), the
variants are interleaved within each repeat so machine noise hits all of them, and the
figure is the median over repeats.

    python benchmarks/bench_gpu.py                       # on a JAX GPU
    FNX_CUDA_ON_CPU=1 python benchmarks/bench_gpu.py --small   # smoke run on a CPU (~1 min)

Goals on a GPU (issue 7): GPT block fnx.compile <= 1.05x jax.jit, and >= 3x faster than
fnx eager.  Under FNX_CUDA_ON_CPU the numbers only show the code runs.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np

import fnx
import fnx.nn.functional as F
from fnx.backends import cuda as backend
from fnx.testing.models import gpt_block, gpt_params, jax_gpt_block, mlp, mlp_params

COMPILE_VS_JIT_GOAL, EAGER_VS_COMPILE_GOAL = 1.05, 3.0


def sync(x):
    """Wait for ``x`` (a tensor, an array, or a structure of them) to be computed."""
    if isinstance(x, (list, tuple)):
        for v in x:
            sync(v)
    elif isinstance(x, dict):
        for v in x.values():
            sync(v)
    else:
        data = getattr(x, "_data", x)
        if hasattr(data, "block_until_ready"):
            data.block_until_ready()
    return x


def bench(runs: dict, repeats: int, number: int = 1) -> dict:
    """Median seconds per call of each ``fn`` in ``runs`` (interleaved, after a warm-up)."""
    for fn in runs.values():
        sync(fn())
        sync(fn())
    times = {k: [] for k in runs}
    for _ in range(repeats):
        for name, fn in runs.items():
            t0 = time.perf_counter()
            for _ in range(number):
                out = fn()
            sync(out)
            times[name].append((time.perf_counter() - t0) / number)
    return {k: statistics.median(v) for k, v in times.items()}


def _fmt(seconds):
    return f"{seconds * 1e3:9.3f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:9.1f} us"


# ----------------------------------------------------------------------------- 1. per op

def per_op(dev, n, repeats):
    rng = np.random.default_rng(0)
    a_np, b_np = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    a, b = fnx.tensor(a_np, device=dev), fnx.tensor(b_np, device=dev)
    acc = fnx.zeros(n, n, device=dev)
    ja, jb = a._data, b._data
    jacc = [acc._data]

    def jadd_():
        jacc[0] = jacc[0] + jb
        return jacc[0]
    cases = [
        ("a + b", lambda: a + b, lambda: jnp.add(ja, jb)),
        ("a * 2.0", lambda: a * 2.0, lambda: jnp.multiply(ja, 2.0)),
        ("a @ b", lambda: a @ b, lambda: jnp.matmul(ja, jb)),
        ("a.sum(-1)", lambda: a.sum(-1), lambda: jnp.sum(ja, -1)),
        ("a.relu()", lambda: a.relu(), lambda: jax.nn.relu(ja)),
        ("a.t()", lambda: a.t(), lambda: ja.T),
        ("a[1:, 0]", lambda: a[1:, 0], lambda: ja[1:, 0]),
        ("acc.add_(b)", lambda: acc.add_(b), jadd_),
    ]
    print(f"\n1. per-op eager overhead, {n}x{n} float32 (median of {repeats} x 50 calls)")
    print(f"  {'op':<14} {'fnx eager':>12} {'jax.numpy':>12} {'ratio':>7}")
    ratios = []
    for label, f, j in cases:
        with jax.enable_x64(True):      # fnx runs its kernels with 64-bit types on
            med = bench({"fnx": f, "jnp": j}, repeats, number=50)
        ratios.append(med["fnx"] / med["jnp"])
        print(f"  {label:<14} {_fmt(med['fnx']):>12} {_fmt(med['jnp']):>12} "
              f"{ratios[-1]:6.2f}x")
    print(f"  median ratio {statistics.median(ratios):.2f}x; eager kernel cache: "
          f"{backend.cache_info()}")


# ----------------------------------------------------------------------------- 2. GPT block

def gpt(dev, jdev, B, T, C, H, repeats):
    params = gpt_params(C)
    x_np = np.random.default_rng(1).standard_normal((B, T, C)).astype(np.float32)
    p_fnx = {k: fnx.tensor(v, device=dev) for k, v in params.items()}
    x = fnx.tensor(x_np, device=dev)
    eager = gpt_block(p_fnx, H)
    compiled = fnx.compile(eager)
    p_jax = {k: jax.device_put(jnp.asarray(v), jdev) for k, v in params.items()}
    x_jax = jax.device_put(jnp.asarray(x_np), jdev)
    jitted = jax.jit(jax_gpt_block(H))

    ref = np.asarray(sync(jitted(p_jax, x_jax)))
    err_c = np.abs(sync(compiled(x)).cpu().numpy() - ref).max()
    err_e = np.abs(sync(eager(x)).cpu().numpy() - ref).max()
    assert isinstance(compiled(x)._data, jax.Array), "compiled output left the device"
    med = bench({"fnx eager": lambda: eager(x), "fnx.compile": lambda: compiled(x),
                 "jax.jit": lambda: jitted(p_jax, x_jax)}, repeats)
    print(f"\n2. GPT block B={B} T={T} C={C} heads={H} forward (median of {repeats})")
    print(f"  max |compile - jit| = {err_c:.2e}, max |eager - jit| = {err_e:.2e}")
    for k, v in med.items():
        print(f"  {k:<12} {_fmt(v)}")
    r1 = med["fnx.compile"] / med["jax.jit"]
    r2 = med["fnx eager"] / med["fnx.compile"]
    print(f"  fnx.compile / jax.jit:   {r1:.3f}x (GPU goal <= {COMPILE_VS_JIT_GOAL})")
    print(f"  fnx eager / fnx.compile: {r2:.2f}x (GPU goal >= {EAGER_VS_COMPILE_GOAL})")
    return r1, r2


# ----------------------------------------------------------------------------- 3. MLP step

def train(dev, jdev, sizes, batch, repeats, lr=0.01):
    rng = np.random.default_rng(2)
    params = mlp_params(sizes)
    x_np = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y_np = rng.integers(0, sizes[-1], batch)
    x, y = fnx.tensor(x_np, device=dev), fnx.tensor(y_np, device=dev)

    def fnx_step(P):
        fwd = mlp(P)

        def step(x, y):
            loss = F.cross_entropy(fwd(x), y)
            loss.backward()
            with fnx.no_grad():
                for p in P.values():
                    p.sub_(lr * p.grad)
                    p.grad = None
            return loss.detach()
        return step

    P_eager = {k: fnx.tensor(v, device=dev).requires_grad_() for k, v in params.items()}
    P_comp = {k: fnx.tensor(v, device=dev).requires_grad_() for k, v in params.items()}
    eager = fnx_step(P_eager)
    compiled = fnx.compile(fnx_step(P_comp))

    n = len(params) // 2

    def jax_loss(p, x, y):
        for i in range(n):
            x = x @ p[f"w{i}"].T + p[f"b{i}"]
            if i < n - 1:
                x = jax.nn.relu(x)
        logp = jax.nn.log_softmax(x, -1)
        return -jnp.take_along_axis(logp, y[:, None], 1).mean()

    @jax.jit
    def jax_step(p, x, y):
        loss, g = jax.value_and_grad(jax_loss)(p, x, y)
        return {k: p[k] - lr * g[k] for k in p}, loss
    state = {"p": {k: jax.device_put(jnp.asarray(v), jdev) for k, v in params.items()}}
    xj, yj = jax.device_put(jnp.asarray(x_np), jdev), jax.device_put(jnp.asarray(y_np), jdev)

    def jit_run():
        state["p"], loss = jax_step(state["p"], xj, yj)
        return loss

    first = [float(eager(x, y)), float(jit_run())]
    runs = {"fnx eager": lambda: eager(x, y), "jax.jit": jit_run}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            sync(compiled(x, y))
            note = getattr(compiled, "_eager_reason", None)
        except Exception as e:      # noqa: BLE001  (report, do not hide the other numbers)
            note = f"{type(e).__name__}: {e}"
    if note is None:
        runs["fnx.compile"] = lambda: compiled(x, y)
    med = bench(runs, repeats)
    print(f"\n3. MLP {'-'.join(map(str, sizes))} training step, batch {batch}, cross-entropy, "
          f"SGD (median of {repeats})")
    print(f"  first losses: fnx eager {first[0]:.5f}, jax.jit {first[1]:.5f} (same weights)")
    for k, v in med.items():
        print(f"  {k:<12} {_fmt(v)}")
    if note is not None:
        msg = str(note).splitlines()[0][:150]
        print(f"  fnx.compile: the whole step does not compile yet, so it ran eagerly "
              f"({msg}); {len(caught)} warning(s)")
    else:
        print(f"  fnx.compile / jax.jit:   {med['fnx.compile'] / med['jax.jit']:.3f}x")
        print(f"  fnx eager / fnx.compile: {med['fnx eager'] / med['fnx.compile']:.2f}x")
    print(f"  fnx eager / jax.jit:     {med['fnx eager'] / med['jax.jit']:.2f}x")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true",
                    help="small sizes, for a smoke run on a CPU under FNX_CUDA_ON_CPU=1")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--precision", choices=["highest", "high"], default="highest",
                    help="float32 products, fnx's and the JAX reference's alike: 'highest' "
                         "full float32 (PyTorch's default), 'high' TF32 on a GPU")
    args = ap.parse_args(argv)
    # one precision for both sides: JAX's own default on a GPU is TF32, fnx's full float32
    fnx.set_float32_matmul_precision(args.precision)
    backend.register()      # fnx does this at import once issue 7 lands; idempotent
    if not fnx.cuda.is_available():
        print("bench_gpu: no cuda device (no JAX GPU backend; install fnx[cuda12], or set "
              "FNX_CUDA_ON_CPU=1 for a smoke run on the CPU)")
        return 0
    dev = fnx.device(args.device)
    jdev = backend.jax_device(fnx.device("cuda", dev.index or 0))
    small = args.small
    repeats = args.repeats or (5 if small else 20)
    print(f"bench_gpu on {dev} = JAX {jdev.platform} device {jdev} "
          f"({'FNX_CUDA_ON_CPU switch' if fnx.cuda.on_cpu() else 'GPU'}), jax {jax.__version__}")
    per_op(dev, 8 if small else 256, repeats)
    if small:
        gpt(dev, jdev, 2, 16, 32, 2, repeats)
        train(dev, jdev, (64, 128, 128, 10), 16, repeats)
    else:
        gpt(dev, jdev, 8, 128, 256, 4, repeats)
        train(dev, jdev, (784, 1024, 1024, 10), 128, repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
