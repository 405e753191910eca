"""Run under ``python -m fnx.distributed.run``: ``worker.py CHECK...`` runs the named checks
in one process group, each against NumPy computed here, independently of fnx.

- ``collectives``: rank r contributes ``base(r)``; every collective's result is compared
  with NumPy over every rank's (known) input.
- ``ddp``: every rank builds its replica from a different seed; DDP must broadcast rank 0's
  weights, and after each step on rank r's shard of the batch the weights must equal plain
  SGD on the whole batch, computed with NumPy from rank 0's initial weights.
- ``syncbn``: SyncBatchNorm over a global batch split across the ranks (values, input
  gradients and running statistics against NumPy batch norm of the whole batch).
- ``fail``: the last rank raises while the others wait in a collective it never joins; it
  must exit (code 1) and the launcher must stop the others.
"""
import datetime
import os
import sys
import time
import warnings

import numpy as np

import fnx
import fnx.distributed as dist
from fnx import nn


def base(r, shape=(2, 3), dtype=np.float32):
    return (np.arange(np.prod(shape)).reshape(shape) * (r + 1) + r).astype(dtype)


def check_collectives():
    r, n = dist.get_rank(), dist.get_world_size()
    assert (r, n) == (int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    every = np.stack([base(q) for q in range(n)])
    # all_reduce, every op
    for op, ref in [(dist.ReduceOp.SUM, every.sum(0)), (dist.ReduceOp.AVG, every.mean(0)),
                    (dist.ReduceOp.MAX, every.max(0)), (dist.ReduceOp.MIN, every.min(0)),
                    (dist.ReduceOp.PRODUCT, every.prod(0))]:
        t = fnx.tensor(base(r))
        dist.all_reduce(t, op=op)
        np.testing.assert_allclose(t.numpy(), ref, rtol=1e-6, err_msg=str(op))
    ints = fnx.tensor(base(r, dtype=np.int64))
    dist.all_reduce(ints)
    assert ints.dtype == fnx.int64
    np.testing.assert_array_equal(ints.numpy(), every.astype(np.int64).sum(0))
    for dtype, npdtype in [(fnx.float16, np.float16), (fnx.bfloat16, np.float32),
                           (fnx.float64, np.float64), (fnx.complex64, np.complex64)]:
        t = fnx.tensor(base(r)).to(dtype) * (1 + 1j if dtype.is_complex else 1)
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        assert t.dtype == dtype
        want = every.mean(0) * (1 + 1j if dtype.is_complex else 1)
        got = t.to(fnx.complex128 if dtype.is_complex else fnx.float64).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-2 if npdtype != np.float64 else 1e-12,
                                   err_msg=str(dtype))
    flags = fnx.tensor(np.array([r == 0, False, True]))
    dist.all_reduce(flags, op=dist.ReduceOp.MIN)
    np.testing.assert_array_equal(flags.numpy(), [n == 1, False, True])
    # async
    t = fnx.tensor(base(r))
    work = dist.all_reduce(t, async_op=True)
    assert work.wait() and work.is_completed()
    np.testing.assert_allclose(t.numpy(), every.sum(0), rtol=1e-6)
    # broadcast from the last rank
    t = fnx.tensor(base(r))
    dist.broadcast(t, src=n - 1)
    np.testing.assert_array_equal(t.numpy(), base(n - 1))
    # all_gather / all_gather_into_tensor
    out = [fnx.zeros(2, 3) for _ in range(n)]
    dist.all_gather(out, fnx.tensor(base(r)))
    for q in range(n):
        np.testing.assert_array_equal(out[q].numpy(), base(q))
    cat = fnx.zeros(2 * n, 3)
    dist.all_gather_into_tensor(cat, fnx.tensor(base(r)))
    np.testing.assert_array_equal(cat.numpy(), np.concatenate([base(q) for q in range(n)]))
    # reduce_scatter_tensor: input (2n, 3), rank r gets rows [2r, 2r+2) of the sum
    big = [base(q, shape=(2 * n, 3)) for q in range(n)]
    for op, red in [(dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.MAX, np.max),
                    (dist.ReduceOp.AVG, np.mean), (dist.ReduceOp.MIN, np.min),
                    (dist.ReduceOp.PRODUCT, np.prod)]:
        o = fnx.zeros(2, 3)
        dist.reduce_scatter_tensor(o, fnx.tensor(big[r]), op=op)
        np.testing.assert_allclose(o.numpy(), red(np.stack(big), 0)[2 * r:2 * r + 2],
                                   rtol=1e-6)
    # all_to_all_single: chunk j of rank q goes to rank j, at position q
    o = fnx.zeros(2 * n, 3)
    dist.all_to_all_single(o, fnx.tensor(big[r]))
    np.testing.assert_array_equal(o.numpy(),
                                  np.concatenate([big[q][2 * r:2 * r + 2] for q in range(n)]))
    # uneven all_to_all_single: rank q sends (q + j) % 3 + 1 rows to rank j, 10 * q + k
    def rows(q, j):
        return (q + j) % 3 + 1
    sends = [rows(r, j) for j in range(n)]
    data = np.concatenate([np.full((sends[j], 2), 10 * r + j, np.float32) for j in range(n)])
    gets = [rows(q, r) for q in range(n)]
    o = fnx.zeros(sum(gets), 2)
    dist.all_to_all_single(o, fnx.tensor(data), gets, sends)
    np.testing.assert_array_equal(
        o.numpy(), np.concatenate([np.full((gets[q], 2), 10 * q + r) for q in range(n)]))
    try:
        dist.all_to_all_single(fnx.zeros(sum(gets) + 1, 2), fnx.tensor(data),
                               [gets[0] + 1] + gets[1:], sends)
    except ValueError as e:
        assert f"rank {r} expects output_split_sizes" in str(e), e
    else:
        raise AssertionError("inconsistent split sizes did not raise")
    # the same collectives inside fnx.compile: traced as _c10d_functional ops
    def program(a, b):
        dist.all_reduce(a, op=dist.ReduceOp.MAX)
        cat = fnx.zeros(2 * n, 3)
        dist.all_gather_into_tensor(cat, b)
        part = fnx.zeros(2, 3)
        dist.reduce_scatter_tensor(part, cat * 2)
        dist.broadcast(b, src=n - 1)
        swapped = fnx.zeros(2 * n, 3)
        dist.all_to_all_single(swapped, cat)
        # uneven splits have no lowering: this one runs eagerly between compiled regions
        uneven = fnx.zeros(sum(gets), 2)
        dist.all_to_all_single(uneven, fnx.tensor(data) * 1, gets, sends)
        return a + 1, cat, part, b, swapped, uneven + 0
    compiled = fnx.compile(program)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a, cat, part, b, swapped, uneven = compiled(fnx.tensor(base(r)), fnx.tensor(base(r)))
    assert [str(w.message) for w in caught if "all_to_all_single" in str(w.message)], \
        [str(w.message) for w in caught]
    np.testing.assert_array_equal(
        uneven.numpy(), np.concatenate([np.full((gets[q], 2), 10 * q + r) for q in range(n)]))
    np.testing.assert_allclose(a.numpy(), every.max(0) + 1, rtol=1e-6)
    gathered = np.concatenate([base(q) for q in range(n)])
    np.testing.assert_array_equal(cat.numpy(), gathered)
    np.testing.assert_allclose(part.numpy(), 2 * n * gathered[2 * r:2 * r + 2], rtol=1e-6)
    np.testing.assert_array_equal(b.numpy(), base(n - 1))
    np.testing.assert_array_equal(swapped.numpy(), np.concatenate([gathered[2 * r:2 * r + 2]] * n))
    # a sub-group of the even ranks
    evens = dist.new_group(list(range(0, n, 2)))
    if r % 2 == 0:
        t = fnx.tensor(base(r))
        dist.all_reduce(t, group=evens)
        np.testing.assert_allclose(t.numpy(), every[0::2].sum(0), rtol=1e-6)
    else:
        assert evens is dist.GroupMember.NON_GROUP_MEMBER
    dist.barrier()
    # mismatched shapes: every rank gets an error naming the op and the ranks
    try:
        dist.all_reduce(fnx.zeros(r + 1))
    except RuntimeError as e:
        assert "all_reduce" in str(e) and "rank 1: all_reduce float32[2]" in str(e), e
    else:
        raise AssertionError("mismatched shapes did not raise")
    try:
        dist.broadcast(fnx.zeros(2, dtype=fnx.float64 if r == 1 else fnx.float32), src=0)
    except TypeError as e:
        assert "broadcast" in str(e) and "rank 1: broadcast float64[2] src=0" in str(e), e
    else:
        raise AssertionError("mismatched dtypes did not raise")
    dist.barrier()
    print(f"rank {r}: collectives ok", flush=True)


B, LR, STEPS = 8, 0.1, 3


def make_model(seed):
    fnx.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))


def numpy_step(w, x, y):
    """One SGD step of mean((relu(x W1' + b1) W2' + b2 - y)^2) on the full batch."""
    w1, b1, w2, b2 = w
    h = x @ w1.T + b1
    a = np.maximum(h, 0)
    out = a @ w2.T + b2
    dout = 2 * (out - y) / out.size
    dh = (dout @ w2) * (h > 0)
    grads = [dh.T @ x, dh.sum(0), dout.T @ a, dout.sum(0)]
    return [p - LR * g for p, g in zip(w, grads)]


def check_ddp():
    r, n = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, 4)).astype(np.float32)
    y = rng.standard_normal((B, 2)).astype(np.float32)
    ref = [p.detach().numpy().astype(np.float64) for p in make_model(100).parameters()]
    model = nn.parallel.DistributedDataParallel(make_model(100 + r), bucket_cap_mb=1e-5)
    assert len(model._buckets) > 1        # tiny cap: one bucket per parameter
    for p, q in zip(model.module.parameters(), ref):
        np.testing.assert_array_equal(p.detach().numpy(), q.astype(np.float32))
    opt = fnx.optim.SGD(model.parameters(), lr=LR)
    rows = slice(r * B // n, (r + 1) * B // n)
    for _ in range(STEPS):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(fnx.tensor(x[rows])), fnx.tensor(y[rows]))
        loss.backward()
        opt.step()
        ref = numpy_step(ref, x.astype(np.float64), y.astype(np.float64))
    for p, q in zip(model.module.parameters(), ref):
        np.testing.assert_allclose(p.detach().numpy(), q, rtol=1e-5, atol=1e-6)
    # the same training, the step compiled: the bucket all-reduces are traced as
    # _c10d_functional ops and lowered, so the step is one XLA program across the ranks
    model2 = nn.parallel.DistributedDataParallel(make_model(200 + r), bucket_cap_mb=1e-5)
    opt2 = fnx.optim.SGD(model2.parameters(), lr=LR)
    ref2 = [p.detach().numpy().astype(np.float64) for p in model2.module.parameters()]

    def step(xb, yb):
        opt2.zero_grad()
        loss = nn.functional.mse_loss(model2(xb), yb)
        loss.backward()
        opt2.step()
        return loss
    compiled = fnx.compile(step)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(STEPS):
            compiled(fnx.tensor(x[rows]), fnx.tensor(y[rows]))
            ref2 = numpy_step(ref2, x.astype(np.float64), y.astype(np.float64))
    assert not caught, [str(w.message) for w in caught]      # no eager fallback
    for p, q in zip(model2.module.parameters(), ref2):
        np.testing.assert_allclose(p.detach().numpy(), q, rtol=1e-5, atol=1e-6)
    entry = compiled.entries()[-1]
    assert len(entry.programs()) == 1 and not entry.parts.fallback_ops
    report = compiled.explain(fnx.tensor(x[rows]), fnx.tensor(y[rows]))
    assert len(report.regions) == 1 and not report.fallback_ops, str(report)
    hlo = report.fusions[0]["hlo"]     # the bucket reductions (XLA may combine them)
    assert " all-reduce(" in hlo, hlo
    # every rank holds bit-identical weights
    flat = fnx.cat([p.detach().reshape(-1) for p in model.parameters()])
    every = [fnx.zeros_like(flat) for _ in range(n)]
    dist.all_gather(every, flat)
    for e in every:
        np.testing.assert_array_equal(e.numpy(), flat.numpy())
    # no_sync: local gradients, then the next synced backward averages the accumulated sum
    opt.zero_grad()
    with model.no_sync():
        nn.functional.mse_loss(model(fnx.tensor(x[rows])), fnx.tensor(y[rows])).backward()
    local = model.module[2].bias.grad.clone()
    every = [fnx.zeros_like(local) for _ in range(n)]
    dist.all_gather(every, local)
    nn.functional.mse_loss(model(fnx.tensor(x[rows])), fnx.tensor(y[rows])).backward()
    np.testing.assert_allclose(model.module[2].bias.grad.numpy(),
                               2 * np.mean([e.numpy() for e in every], axis=0), rtol=1e-5)
    print(f"rank {r}: ddp ok", flush=True)


class Branchy(nn.Module):
    """``a`` is used on every rank, ``b`` on rank 0 only, ``c`` never."""

    def __init__(self):
        super().__init__()
        fnx.manual_seed(7)
        self.a, self.b, self.c = nn.Linear(3, 2), nn.Linear(3, 2), nn.Linear(3, 2)

    def forward(self, x, use_b):
        y = self.a(x)
        return y + self.b(x) if use_b else y


def check_unused():
    """find_unused_parameters=True: unused parameters reduce as zeros (PyTorch)."""
    r, n = dist.get_rank(), dist.get_world_size()
    xs = [np.random.default_rng(10 + q).standard_normal((4, 3)).astype(np.float32)
          for q in range(n)]
    model = nn.parallel.DistributedDataParallel(Branchy(), find_unused_parameters=True,
                                                bucket_cap_mb=1e-5)
    w = {k: v.detach().numpy().astype(np.float64) for k, v in model.module.state_dict().items()}

    def grads(q):       # d/dparams of sum(out^2) on rank q, by hand
        x = xs[q].astype(np.float64)
        out = x @ w["a.weight"].T + w["a.bias"]
        if q == 0:
            out = out + x @ w["b.weight"].T + w["b.bias"]
        return 2 * out.T @ x, 2 * out.sum(0)
    every = [grads(q) for q in range(n)]
    for _ in range(2):      # twice: the reduction state resets after each backward
        model.zero_grad()
        model(fnx.tensor(xs[r]), r == 0).pow(2).sum().backward()
        np.testing.assert_allclose(model.module.a.weight.grad.numpy(),
                                   np.mean([g[0] for g in every], 0), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(model.module.b.weight.grad.numpy(), every[0][0] / n,
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(model.module.b.bias.grad.numpy(), every[0][1] / n,
                                   rtol=1e-5, atol=1e-6)
        assert model.module.c.weight.grad is None and model.module.c.bias.grad is None
    print(f"rank {r}: unused ok", flush=True)


def fail():
    dist.barrier()
    if dist.get_rank() == dist.get_world_size() - 1:
        raise ZeroDivisionError("failing on purpose")
    dist.barrier()          # never completes: the last rank is gone
    return 0


def hang():
    """The last rank never joins the barrier; the others' watchdog must end them."""
    if dist.get_rank() == dist.get_world_size() - 1:
        time.sleep(60)
        return 0
    dist.barrier()
    return 0


def check_syncbn():
    """SyncBatchNorm: each rank holds 2 rows of a global batch; outputs, input gradients
    and running statistics must be batch norm's over the whole batch (NumPy), the weight
    and bias gradients the rank's own sums."""
    r, n = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2 * n, 3, 5)) * 2 + 1
    g = rng.standard_normal((2 * n, 3, 5))
    w, b = np.array([0.5, 2.0, -1.0]), np.array([0.1, 0.0, 0.3])
    rows = slice(2 * r, 2 * r + 2)
    m = nn.SyncBatchNorm(3, momentum=0.2).double()
    with fnx.no_grad():
        m.weight.copy_(fnx.tensor(w))
        m.bias.copy_(fnx.tensor(b))
    xt = fnx.tensor(x[rows]).requires_grad_()
    y = m(xt)
    (y * fnx.tensor(g[rows])).sum().backward()
    mean, var = x.mean((0, 2)), x.var((0, 2))
    c = (1, 3, 1)
    xhat = (x - mean.reshape(c)) / np.sqrt(var.reshape(c) + 1e-5)
    np.testing.assert_allclose(y.detach().numpy(), (xhat * w.reshape(c) + b.reshape(c))[rows],
                               rtol=1e-10, atol=1e-12)
    dx = w.reshape(c) / np.sqrt(var.reshape(c) + 1e-5) * (
        g - g.mean((0, 2), keepdims=True) - xhat * (g * xhat).mean((0, 2), keepdims=True))
    np.testing.assert_allclose(xt.grad.numpy(), dx[rows], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(m.weight.grad.numpy(), (g * xhat)[rows].sum((0, 2)),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(m.bias.grad.numpy(), g[rows].sum((0, 2)), rtol=1e-9)
    count = x.shape[0] * x.shape[2]
    np.testing.assert_allclose(m.running_mean.numpy(), 0.2 * mean, rtol=1e-10)
    np.testing.assert_allclose(m.running_var.numpy(), 0.8 + 0.2 * var * count / (count - 1),
                               rtol=1e-10)
    print(f"rank {r}: syncbn ok", flush=True)


CHECKS = {"collectives": check_collectives, "ddp": check_ddp, "unused": check_unused,
          "fail": fail, "hang": hang, "syncbn": check_syncbn}


def main(names):
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=4))
    for name in names:
        code = CHECKS[name]()
        if code:
            return code
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
