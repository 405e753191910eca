"""``python -m fnx.distributed.run``: start one process per device, as ``torchrun``.

    python -m fnx.distributed.run --nproc-per-node 2 train.py --epochs 3
    python -m fnx.distributed.run --nnodes 2 --node-rank 0 --nproc-per-node 8 \\
        --master-addr 10.0.0.1 --master-port 29500 train.py      # on node 0 (then node 1)

Each worker gets torchrun's environment: ``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE``,
``RANK``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, so ``init_process_group()``
needs no argument.

When a worker fails (nonzero exit or a signal), the launcher stops the others (SIGTERM,
then SIGKILL after ``--stop-timeout`` seconds: JAX's preemption notifier catches SIGTERM,
so a worker blocked in a collective ends by the SIGKILL), reports the rank that failed
first with its exit code and, for an uncaught exception after ``init_process_group``, the
exception (the worker writes it, with its time, to the file that
``FNX_DISTRIBUTED_ERROR_FILE`` names), and exits with that worker's exit code (1 for a
signal). Such a worker exits at once with code 1 (``init_process_group`` arranges it;
JAX's exit handler would otherwise wait for the other ranks).

>>> from fnx.distributed.run import parse_args, worker_env
>>> args = parse_args(["--nproc-per-node", "2", "train.py", "--lr", "0.1"])
>>> env = worker_env(args, 1, {})
>>> env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"], args.script_args
('1', '2', '1', ['--lr', '0.1'])
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from .process_group import ERROR_FILE_ENV

__all__ = ["parse_args", "worker_env", "launch", "main"]


def parse_args(argv=None):
    """The launcher's command line (torchrun's flags, dashes or underscores)."""
    p = argparse.ArgumentParser(prog="python -m fnx.distributed.run",
                                description="Start one fnx process per device, as torchrun.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1)
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--node-rank", "--node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--standalone", action="store_true",
                   help="single node on localhost (the default)")
    p.add_argument("--stop-timeout", type=float, default=10.0,
                   help="seconds between SIGTERM and SIGKILL when stopping the workers")
    p.add_argument("-m", "--module", action="store_true",
                   help="run script as a module (python -m script)")
    p.add_argument("script")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if args.nproc_per_node < 1 or args.nnodes < 1:
        p.error("--nproc-per-node and --nnodes must be at least 1")
    if not 0 <= args.node_rank < args.nnodes:
        p.error(f"--node-rank {args.node_rank} is not in [0, {args.nnodes})")
    return args


def worker_env(args, local_rank, base=None):
    """The environment of local worker ``local_rank`` (torchrun's variables over ``base``)."""
    env = dict(os.environ if base is None else base)
    env.update(MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port),
               WORLD_SIZE=str(args.nnodes * args.nproc_per_node),
               RANK=str(args.node_rank * args.nproc_per_node + local_rank),
               LOCAL_RANK=str(local_rank), LOCAL_WORLD_SIZE=str(args.nproc_per_node),
               GROUP_RANK=str(args.node_rank), NODE_RANK=str(args.node_rank))
    return env


def _describe(code):
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _stop(procs, timeout):
    """SIGTERM every live worker's process group, SIGKILL what is left after ``timeout``."""
    live = [p for p in procs if p.poll() is None]
    for p in live:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    for p in live:
        try:
            p.wait(max(deadline - time.monotonic(), 0))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def _root_cause(procs, failed, first, error_dir):
    """The rank that failed first: by the time its error file records (an uncaught
    exception after ``init_process_group``), else in the order the launcher saw the exits."""
    def info(i):
        path = os.path.join(error_dir, f"rank{first + i}.json")
        try:
            with open(path) as f:
                data = json.load(f)
            return data["time"], data["error"]
        except (OSError, ValueError, KeyError):
            return float("inf"), None
    ranked = sorted(failed, key=lambda i: (info(i)[0], failed.index(i)))
    return ranked[0], info(ranked[0])[1], ranked[1:]


def launch(args) -> int:
    """Start the workers and watch them; returns the launcher's exit code."""
    cmd = [sys.executable, "-u"] + (["-m"] if args.module else []) + [args.script]
    cmd += args.script_args
    error_dir = tempfile.mkdtemp(prefix="fnx-run-")
    first = args.node_rank * args.nproc_per_node
    procs = []
    for i in range(args.nproc_per_node):
        env = worker_env(args, i)
        env[ERROR_FILE_ENV] = os.path.join(error_dir, f"rank{first + i}.json")
        procs.append(subprocess.Popen(cmd, env=env, start_new_session=True))

    def forward(signum, frame):
        _stop(procs, args.stop_timeout)
        sys.exit(128 + signum)
    old = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    by_pid = {p.pid: i for i, p in enumerate(procs)}
    failed = []                             # local ranks, in the order their exits were seen
    try:
        while any(p.returncode is None for p in procs) and not failed:
            pid, status = os.wait()
            i = by_pid.get(pid)
            if i is None:
                continue
            procs[i].returncode = os.waitstatus_to_exitcode(status)
            if procs[i].returncode != 0:
                failed.append(i)
        if not failed:
            return 0
        time.sleep(0.2)                     # near-simultaneous failures count as failures
        failed += [i for i, p in enumerate(procs) if i not in failed and p.poll()]
        _stop(procs, args.stop_timeout)
        i, error, others = _root_cause(procs, failed, first, error_dir)
        code = procs[i].returncode
        why = _describe(code) + (f" ({error})" if error else "")
        print(f"fnx.distributed.run: rank {first + i} (local_rank {i}, pid {procs[i].pid}) "
              f"failed first: {why}; stopped the other workers", file=sys.stderr, flush=True)
        if others:
            print("fnx.distributed.run: also failed: " + ", ".join(
                f"rank {first + j} ({_describe(procs[j].returncode)})" for j in others),
                file=sys.stderr, flush=True)
        return code if code > 0 else 1
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        shutil.rmtree(error_dir, ignore_errors=True)


def main(argv=None) -> int:
    return launch(parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
