"""Run under ``python -m fnx.distributed.run``: DDP on shards vs NumPy on the full batch.

Every rank builds its replica from a different seed; DDP must broadcast rank 0's weights,
and after each step on rank r's shard of the batch the weights must equal plain SGD on the
whole batch, computed here with NumPy from rank 0's initial weights.
"""
import sys

import numpy as np

import fnx
import fnx.distributed as dist
from fnx import nn

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


def main():
    dist.init_process_group("gloo")
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
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
