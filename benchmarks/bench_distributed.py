"""Cost of fnx.distributed: collective latency and DDP steps on CPU (gloo) processes, and
a compiled SPMD data-parallel step on forced host devices against the same step written
in JAX.

Run it plainly; it starts itself under the launcher (``--nproc`` processes, default 2),
then in one process with ``--devices`` forced host devices (default 8):

    python benchmarks/bench_distributed.py [--nproc 2] [--steps 10] [--devices 8]
    python benchmarks/bench_distributed.py --only spmd        # (or --only ddp)

Reported by rank 0, each a median over repeats:
- ``all_reduce`` (SUM) of a 1-element and of a 4 MiB float32 tensor;
- a training step of the 784-1024-1024-10 MLP (batch 64 per process, SGD): plain (no DDP,
  one process's work) vs wrapped in ``DistributedDataParallel`` (the difference is the
  gradient all-reduce and its bookkeeping);
- the same DDP step under ``fnx.compile``: one XLA program with the bucket all-reduces in
  it (their bytes read off the compiled HLO);
- the all-reduce bytes per DDP step against the model's gradient bytes (the lower bound).

The SPMD part (one process, ``--devices`` host devices, global batch 64 per device):
the 784-1024-1024-10 MLP, cross-entropy, SGD, parameters replicated
(``distribute_module``), batch ``Shard(0)``, the step under ``fnx.compile``, against the
same step hand-written in JAX (``jax.jit`` over ``NamedSharding`` arrays, the parameters
donated), side by side with the ratio (goal: 1.10x), and the all-reduce bytes of the
compiled program (XLA inserts them) against the gradient bytes.
On a shared 2-core machine the processes compete for the cores: read the figures as an
upper bound.
"""
from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import fnx
import fnx.distributed as dist
from fnx import nn

_DTYPE_BYTES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "s32": 4, "s64": 8, "pred": 1}
_SHAPE = re.compile(r"(f32|f64|f16|bf16|s32|s64|pred)\[([\d,]*)\]")


def allreduce_bytes(hlo):
    """Bytes all-reduced by one run of a compiled program: the result shapes of its
    all-reduce instructions (outside the reduction computations they apply)."""
    total = 0
    for line in hlo.splitlines():
        if " all-reduce(" not in line and " all-reduce-start(" not in line:
            continue
        result = line.split(" = ", 1)[1].split(" all-reduce", 1)[0]
        for dt, dims in _SHAPE.findall(result):
            n = 1
            for d in filter(None, dims.split(",")):
                n *= int(d)
            total += n * _DTYPE_BYTES[dt]
    return total


def _median_ms(fn, repeats):
    times = []
    for _ in range(repeats):
        dist.barrier()
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def _mlp():
    fnx.manual_seed(0)
    return nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                         nn.Linear(1024, 10))


def worker(steps):
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    small, big = fnx.ones(1), fnx.ones(1 << 20)
    for t in (small, big):          # compile the programs first
        dist.all_reduce(t)
    lat_small = _median_ms(lambda: dist.all_reduce(small), 20)
    lat_big = _median_ms(lambda: dist.all_reduce(big), 10)

    x, y = fnx.randn(64, 784), fnx.randint(0, 10, (64,))
    loss_fn = nn.CrossEntropyLoss()

    def stepper(model):
        opt = fnx.optim.SGD(model.parameters(), lr=0.01)

        def step():
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()
        return step
    plain = stepper(_mlp())
    ddp_model = nn.parallel.DistributedDataParallel(_mlp())
    ddp = stepper(ddp_model)
    plain(), ddp()                  # warm up
    before = ddp_model.reduced_bytes
    t_plain = _median_ms(plain, steps)
    t_ddp = _median_ms(ddp, steps)
    per_step = (ddp_model.reduced_bytes - before) // steps

    compiled_model = nn.parallel.DistributedDataParallel(_mlp())
    opt = fnx.optim.SGD(compiled_model.parameters(), lr=0.01)

    def compiled_step(xb, yb):
        opt.zero_grad()
        loss = loss_fn(compiled_model(xb), yb)
        loss.backward()
        opt.step()
        return loss
    compiled = fnx.compile(compiled_step)
    for _ in range(2):
        compiled(x, y).item()       # warm up (the first step makes the optimizer state)
    t_compiled = _median_ms(lambda: compiled(x, y).item(), steps)
    programs = len(compiled.entries()[-1].programs())
    report = compiled.explain(x, y)
    compiled_bytes = allreduce_bytes(report.fusions[0]["hlo"])
    grad_bytes = sum(p.numel() * p.element_size() for p in ddp_model.parameters())
    if rank == 0:
        print(f"processes: {world} (gloo, CPU)")
        print(f"all_reduce 4 B:     {lat_small:8.2f} ms")
        print(f"all_reduce 4 MiB:   {lat_big:8.2f} ms  ({4 / lat_big * 1e3:.0f} MiB/s)")
        print(f"MLP step, plain:    {t_plain:8.2f} ms")
        print(f"MLP step, DDP:      {t_ddp:8.2f} ms  ({t_ddp / t_plain:.2f}x)")
        print(f"MLP step, DDP compiled: {t_compiled:8.2f} ms  ({programs} program(s))")
        print(f"all-reduce bytes per step: {per_step} eager, {compiled_bytes} compiled "
              f"(gradient bytes: {grad_bytes}, {len(ddp_model._buckets)} buckets)")
    dist.destroy_process_group()


def _spmd_median_ms(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def spmd(steps, per_device=64):
    """The compiled SPMD step against the hand-written JAX one, on this process's devices."""
    n = len(jax.devices())
    mesh = dist.init_device_mesh("cpu", (n,), mesh_dim_names=("dp",))
    batch, lr = per_device * n, 0.01
    rng = np.random.default_rng(0)
    xh = rng.standard_normal((batch, 784)).astype(np.float32)
    yh = rng.integers(0, 10, batch)

    model = dist.distribute_module(_mlp(), mesh)
    opt = fnx.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()

    def step(xb, yb):
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        return loss
    compiled = fnx.compile(step)
    x = dist.distribute_tensor(fnx.tensor(xh), mesh, [dist.Shard(0)])
    y = dist.distribute_tensor(fnx.tensor(yh), mesh, [dist.Shard(0)])
    for _ in range(2):
        compiled(x, y).item()

    # the same step in JAX: parameters replicated, batch sharded, parameters donated
    rep, rows = NamedSharding(mesh.jax_mesh, P()), NamedSharding(mesh.jax_mesh, P("dp"))
    params = [jax.device_put(p.detach().numpy(), rep) for p in _mlp().parameters()]
    jx, jy = jax.device_put(xh, rows), jax.device_put(yh.astype(np.int32), rows)

    def loss_of(ps, xb, yb):
        h = xb
        for i in range(0, len(ps), 2):
            h = h @ ps[i].T + ps[i + 1]
            if i + 2 < len(ps):
                h = jax.nn.relu(h)
        logp = jax.nn.log_softmax(h)
        return -jnp.mean(jnp.take_along_axis(logp, yb[:, None], axis=1))

    @jax.jit
    def jax_step(ps, xb, yb):
        loss, grads = jax.value_and_grad(loss_of)(ps, xb, yb)
        return [p - lr * g for p, g in zip(ps, grads)], loss
    jax_step = jax.jit(jax_step, donate_argnums=0)
    state = {"p": params}

    def run_jax():
        state["p"], loss = jax_step(state["p"], jx, jy)
        return float(loss)
    for _ in range(2):
        run_jax()

    t_fnx = t_jax = 0.0
    for _ in range(3):              # interleaved, so both see the same machine load
        t_fnx += _spmd_median_ms(lambda: compiled(x, y).item(), steps)
        t_jax += _spmd_median_ms(run_jax, steps)
    t_fnx, t_jax = t_fnx / 3, t_jax / 3
    report = compiled.explain(x, y)
    fnx_bytes = allreduce_bytes(report.fusions[0]["hlo"])
    jax_bytes = allreduce_bytes(jax_step.lower(state["p"], jx, jy).compile().as_text())
    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    print(f"SPMD: {n} host devices, one process, global batch {batch} ({per_device} per "
          f"device)")
    print(f"MLP step, fnx.compile over DTensors: {t_fnx:8.2f} ms  "
          f"({len(compiled.entries()[-1].programs())} program(s))")
    print(f"MLP step, hand-written JAX:          {t_jax:8.2f} ms")
    print(f"ratio fnx / JAX: {t_fnx / t_jax:.2f}x (goal 1.10x)")
    print(f"all-reduce bytes per step: fnx {fnx_bytes}, JAX {jax_bytes} "
          f"(gradient bytes: {grad_bytes})")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--devices", type=int, default=8)
    p.add_argument("--only", choices=["ddp", "spmd"], default=None)
    p.add_argument("--spmd-worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if "RANK" in os.environ:
        return worker(args.steps)
    if args.spmd_worker:
        return spmd(args.steps)
    code = 0
    if args.only != "spmd":
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        code = subprocess.call([sys.executable, "-m", "fnx.distributed.run",
                                "--nproc-per-node", str(args.nproc), "--master-port",
                                str(port), __file__, "--steps", str(args.steps)])
    if args.only != "ddp" and not code:
        env = dict(os.environ,
                   XLA_FLAGS=f"--xla_force_host_platform_device_count={args.devices}")
        code = subprocess.call([sys.executable, __file__, "--spmd-worker", "--steps",
                                str(args.steps)], env=env)
    return code


if __name__ == "__main__":
    sys.exit(main())
