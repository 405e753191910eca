"""fnx.distributed: process groups, collectives, the launcher, DDP, DistributedSampler.

The multi-process tests start real worker processes through ``python -m
fnx.distributed.run`` on localhost (gloo CPU collectives); the worker
(``tests/distributed/worker.py``) checks every result against NumPy itself, so a test here
passes when every rank exits 0. Single-process tests use a world of one.
"""
import math
import os
import re
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import fnx
import fnx.distributed as dist
from fnx import nn
from fnx.distributed.run import parse_args, worker_env
from fnx.utils.data.distributed import DistributedSampler

ROOT = Path(__file__).resolve().parent.parent
WORKER = str(ROOT / "tests" / "distributed" / "worker.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(nproc, *checks, timeout=150, extra=()):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("XLA_FLAGS", None)
    cmd = [sys.executable, "-m", "fnx.distributed.run", "--nproc-per-node", str(nproc),
           "--master-port", str(free_port()), *extra, WORKER, *checks]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.terminate()        # the launcher stops its workers on SIGTERM
        out, err = proc.communicate(timeout=60)
        raise AssertionError(f"launcher timed out after {timeout} s:\n{out}\n{err}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err), \
        time.monotonic() - start


@pytest.fixture
def world_of_one():
    dist.init_process_group("gloo", world_size=1, rank=0)
    yield
    dist.destroy_process_group()


# --- multi-process, through the launcher ---------------------------------------------------

@pytest.mark.multiprocess
@pytest.mark.parametrize("nproc", [2, 4])
def test_collectives_and_ddp_across_processes(nproc):
    proc, _ = launch(nproc, "collectives", "ddp", "unused")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for r in range(nproc):
        assert f"rank {r}: collectives ok" in proc.stdout
        assert f"rank {r}: ddp ok" in proc.stdout
        assert f"rank {r}: unused ok" in proc.stdout


@pytest.mark.multiprocess
def test_launcher_stops_every_rank_when_one_fails():
    proc, seconds = launch(2, "fail", extra=("--stop-timeout", "3"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ("rank 1 (local_rank 1, pid" in proc.stderr and "failed first: exit code 1 "
            "(ZeroDivisionError: failing on purpose)" in proc.stderr), proc.stderr
    assert seconds < 60         # rank 0, blocked in a barrier, was stopped


@pytest.mark.multiprocess
def test_a_collective_that_never_completes_times_out():
    proc, seconds = launch(2, "hang", extra=("--stop-timeout", "3"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "rank 0 (local_rank 0, pid" in proc.stderr and "failed first" in proc.stderr
    assert "barrier on rank 0 did not complete within the process group's timeout (4 s)" \
        in proc.stderr, proc.stderr
    assert seconds < 50         # not the 60 s the last rank sleeps


@pytest.mark.multiprocess
def test_unreachable_master_times_out_naming_the_address():
    port = free_port()          # nothing listens there
    code = ("import datetime, fnx.distributed as d\n"
            f"d.init_process_group('gloo', init_method='tcp://127.0.0.1:{port}', world_size=2,"
            " rank=1, timeout=datetime.timedelta(seconds=1))\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode != 0
    assert f"waiting for the master (rank 0) at 127.0.0.1:{port}" in proc.stderr
    assert "RuntimeError" in proc.stderr


# --- the launcher's environment ------------------------------------------------------------

def test_launcher_sets_torchrun_environment():
    args = parse_args(["--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "4",
                       "--master-addr", "10.0.0.1", "--master-port", "1234", "t.py", "-x"])
    envs = [worker_env(args, i, {}) for i in range(4)]
    assert [e["RANK"] for e in envs] == ["4", "5", "6", "7"]
    assert {e["WORLD_SIZE"] for e in envs} == {"8"}
    assert [e["LOCAL_RANK"] for e in envs] == ["0", "1", "2", "3"]
    assert envs[0]["MASTER_ADDR"] == "10.0.0.1" and envs[0]["MASTER_PORT"] == "1234"
    assert args.script == "t.py" and args.script_args == ["-x"]
    with pytest.raises(SystemExit):
        parse_args(["--nnodes", "2", "--node-rank", "2", "t.py"])


# --- single process ------------------------------------------------------------------------

def test_before_init_raises_pytorchs_error():
    assert not dist.is_initialized()
    msg = "Default process group has not been initialized"
    for call in (dist.get_rank, dist.get_world_size, dist.barrier,
                 lambda: dist.all_reduce(fnx.ones(2))):
        with pytest.raises(ValueError, match=msg):
            call()


def test_world_of_one_collectives(world_of_one):
    assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
    x = np.array([[1.5, -2.0], [3.0, 0.25]], np.float32)
    for op in dist.ReduceOp:
        t = fnx.tensor(x)
        dist.all_reduce(t, op=op)
        np.testing.assert_array_equal(t.numpy(), x)
    t = fnx.tensor(np.array([1, 2**40], np.int64))
    dist.all_reduce(t)          # int64 stays exact (JAX runs with 64-bit types here)
    assert t.tolist() == [1, 2**40]
    out = fnx.zeros(2, 2)
    work = dist.all_gather_into_tensor(out, fnx.tensor(x), async_op=True)
    assert isinstance(work, dist.Work) and work.wait() and work.is_completed()
    np.testing.assert_array_equal(out.numpy(), x)


def test_compiled_collectives_are_one_program(world_of_one):
    x = np.array([[1.5, -2.0], [3.0, 0.25]], np.float32)

    def f(a):
        dist.all_reduce(a, op=dist.ReduceOp.AVG)
        cat = fnx.zeros(2, 2)
        dist.all_gather_into_tensor(cat, a * 2)
        part = fnx.zeros(2, 2)
        dist.reduce_scatter_tensor(part, cat + 1)
        swapped = fnx.zeros(2, 2)
        dist.all_to_all_single(swapped, part)
        return swapped - 1
    compiled = fnx.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no op left to run eagerly
        np.testing.assert_allclose(compiled(fnx.tensor(x)).numpy(), 2 * x)
    assert [len(e.programs()) for e in compiled.entries()] == [1]


def test_collective_bad_input_leaves_tensors_unchanged(world_of_one):
    out = fnx.zeros(3)
    with pytest.raises(ValueError, match="all_gather_into_tensor: output shape"):
        dist.all_gather_into_tensor(out, fnx.ones(2))
    with pytest.raises(TypeError, match="all_gather_into_tensor: output dtype"):
        dist.all_gather_into_tensor(fnx.zeros(2, dtype=fnx.int64), fnx.ones(2))
    with pytest.raises(TypeError, match="all_reduce: ReduceOp.AVG needs a floating"):
        dist.all_reduce(fnx.tensor([1, 2]), op=dist.ReduceOp.AVG)
    with pytest.raises(ValueError, match="reduce_scatter_tensor: input shape"):
        dist.reduce_scatter_tensor(out, fnx.ones(2))
    with pytest.raises(TypeError, match="expected a fnx.distributed.ReduceOp"):
        dist.all_reduce(fnx.ones(2), op="sum")
    with pytest.raises(ValueError, match="broadcast: src rank 3"):
        dist.broadcast(out, src=3)
    with pytest.raises(ValueError, match=r"input_split_sizes \[2\] must be 1 non-negative"):
        dist.all_to_all_single(out, fnx.ones(3), [3], [2])
    assert out.tolist() == [0.0, 0.0, 0.0]
    dist.all_to_all_single(out, fnx.tensor([4., 5., 6.]), [3], [3])
    assert out.tolist() == [4.0, 5.0, 6.0]


def test_init_argument_errors():
    with pytest.raises(ValueError, match="Invalid backend: 'mpi'"):
        dist.init_process_group("mpi", world_size=1, rank=0)
    with pytest.raises(ValueError, match="rank 2 is not in"):
        dist.init_process_group("gloo", world_size=2, rank=2)
    assert not dist.is_initialized()


def test_ddp_world_of_one_matches_plain_training(world_of_one):
    fnx.manual_seed(0)
    plain = nn.Linear(3, 2)
    fnx.manual_seed(0)
    ddp = nn.parallel.DistributedDataParallel(nn.Linear(3, 2))
    x = fnx.tensor(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32))
    plain(x).pow(2).sum().backward()
    ddp(x).pow(2).sum().backward()
    np.testing.assert_allclose(ddp.module.weight.grad.numpy(), plain.weight.grad.numpy())
    assert list(ddp.state_dict()) == ["module.weight", "module.bias"]


class UsesOneOfTwo(nn.Module):
    def __init__(self):
        super().__init__()
        fnx.manual_seed(0)
        self.used, self.unused = nn.Linear(3, 2), nn.Linear(3, 2)

    def forward(self, x):
        return self.used(x)


def test_ddp_unused_parameters_world_of_one(world_of_one):
    x = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    strict = nn.parallel.DistributedDataParallel(UsesOneOfTwo())
    strict(fnx.tensor(x)).sum().backward()
    with pytest.raises(RuntimeError, match="expected to have finished reduction"):
        strict(fnx.tensor(x))
    ddp = nn.parallel.DistributedDataParallel(UsesOneOfTwo(), find_unused_parameters=True)
    lin = ddp.module.used
    out = x @ lin.weight.detach().numpy().T + lin.bias.detach().numpy()
    for _ in range(2):
        ddp.zero_grad()
        ddp(fnx.tensor(x)).pow(2).sum().backward()      # hand-computed gradient below
        np.testing.assert_allclose(lin.weight.grad.numpy(), 2 * out.T @ x, rtol=1e-5)
        np.testing.assert_allclose(lin.bias.grad.numpy(), 2 * out.sum(0), rtol=1e-5)
        assert ddp.module.unused.weight.grad is None and ddp.module.unused.bias.grad is None


# --- DistributedSampler --------------------------------------------------------------------

def reference_partition(n, replicas, drop_last):
    """PyTorch's partition, written out: pad by wrapping (or cut), then stride by rank."""
    idx = list(range(n))
    if drop_last and n % replicas:
        per = math.ceil((n - replicas) / replicas)
    else:
        per = math.ceil(n / replicas)
    total = per * replicas
    idx = (idx * math.ceil(total / n))[:total]
    return [idx[r::replicas] for r in range(replicas)], per


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (2, 5, False),
                                                 (12, 4, True), (7, 2, False)])
def test_distributed_sampler_partition(n, replicas, drop_last):
    parts, per = reference_partition(n, replicas, drop_last)
    for r in range(replicas):
        s = DistributedSampler(range(n), num_replicas=replicas, rank=r, shuffle=False,
                               drop_last=drop_last)
        assert list(s) == parts[r] and len(s) == per


def test_distributed_sampler_shuffle_is_shared_and_changes_per_epoch():
    def draw(r, epoch):
        s = DistributedSampler(range(9), num_replicas=3, rank=r, seed=5)
        s.set_epoch(epoch)
        return list(s)
    epoch0 = [draw(r, 0) for r in range(3)]
    assert sorted(sum(epoch0, [])) == list(range(9))      # the ranks split one permutation
    assert epoch0 == [draw(r, 0) for r in range(3)]       # deterministic
    assert epoch0 != [draw(r, 1) for r in range(3)]
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval"):
        DistributedSampler(range(9), num_replicas=3, rank=3)


@pytest.mark.multiprocess
def test_ddp_example_under_the_launcher():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("XLA_FLAGS", None)
    cmd = [sys.executable, "-m", "fnx.distributed.run", "--nproc-per-node", "2",
           "--master-port", str(free_port()), str(ROOT / "examples" / "ddp_train.py"),
           "--epochs", "2"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=150)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    losses = [float(v) for v in re.findall(r"epoch \d: mean loss (\d+\.\d+)", proc.stdout)]
    assert len(losses) == 2 and losses[1] < losses[0]
    assert "rank 0/2: replicas identical: True" in proc.stdout
    assert "rank 1/2: replicas identical: True" in proc.stdout
    sent, grads = re.search(r"all-reduce bytes per step: (\d+) \(gradient bytes: (\d+)\)",
                            proc.stdout).groups()
    # one Linear(8, 64) and one Linear(64, 4), float32
    assert int(sent) == int(grads) == 4 * (8 * 64 + 64 + 64 * 4 + 4)


def _run_on_8_host_devices(worker, done, timeout):
    """Run ``tests/distributed/<worker>`` in one process over 8 forced host devices."""
    env = dict(os.environ, PYTHONPATH=str(ROOT),
               XLA_FLAGS="--xla_force_host_platform_device_count=8")
    env.pop("FNX_CUDA_ON_CPU", None)
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "distributed" / worker)],
                          env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0 and done in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.multiprocess
def test_spmd_dtensor_data_parallel_and_fully_shard_on_8_host_devices():
    _run_on_8_host_devices("spmd_worker.py", "spmd ok", 120)


@pytest.mark.multiprocess
def test_fully_shard_uneven_parameters_on_8_host_devices():
    _run_on_8_host_devices("fsdp_uneven_worker.py", "fsdp uneven ok", 300)
