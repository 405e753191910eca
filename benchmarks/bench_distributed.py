"""Cost of fnx.distributed on CPU (gloo) processes: collective latency and a DDP step.

Run it plainly; it starts itself under the launcher (``--nproc`` processes, default 2):

    python benchmarks/bench_distributed.py [--nproc 2] [--steps 10]

Reported by rank 0, each a median over repeats:
- ``all_reduce`` (SUM) of a 1-element and of a 4 MiB float32 tensor;
- a training step of the 784-1024-1024-10 MLP (batch 64 per process, SGD): plain (no DDP,
  one process's work) vs wrapped in ``DistributedDataParallel`` (the difference is the
  gradient all-reduce and its bookkeeping);
- the all-reduce bytes per DDP step against the model's gradient bytes (the lower bound).
On a shared 2-core machine the processes compete for the cores: read the figures as an
upper bound.
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time

import fnx
import fnx.distributed as dist
from fnx import nn


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
    grad_bytes = sum(p.numel() * p.element_size() for p in ddp_model.parameters())
    if rank == 0:
        print(f"processes: {world} (gloo, CPU)")
        print(f"all_reduce 4 B:     {lat_small:8.2f} ms")
        print(f"all_reduce 4 MiB:   {lat_big:8.2f} ms  ({4 / lat_big * 1e3:.0f} MiB/s)")
        print(f"MLP step, plain:    {t_plain:8.2f} ms")
        print(f"MLP step, DDP:      {t_ddp:8.2f} ms  ({t_ddp / t_plain:.2f}x)")
        print(f"all-reduce bytes per step: {per_step} (gradient bytes: {grad_bytes}, "
              f"{len(ddp_model._buckets)} buckets)")
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--steps", type=int, default=10)
    args = p.parse_args()
    if "RANK" in os.environ:
        return worker(args.steps)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return subprocess.call([sys.executable, "-m", "fnx.distributed.run", "--nproc-per-node",
                            str(args.nproc), "--master-port", str(port), __file__,
                            "--steps", str(args.steps)])


if __name__ == "__main__":
    sys.exit(main())
