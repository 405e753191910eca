"""Data-parallel training with fnx.distributed, as a torchrun script.

Each process trains a replica of an MLP on its share of a synthetic dataset
(``DistributedSampler``); ``DistributedDataParallel`` averages the gradients across the
processes after every backward, so the replicas stay identical. Rank 0 prints the loss;
at the end every rank checks that all replicas hold the same weights.

Run on 2 CPU processes:
    python -m fnx.distributed.run --nproc-per-node 2 examples/ddp_train.py [--epochs N]
Without the launcher it runs as a world of one process.
"""
import argparse
import os

import fnx
import fnx.distributed as dist
from fnx import nn, optim
from fnx.utils.data import DataLoader, TensorDataset
from fnx.utils.data.distributed import DistributedSampler


def make_data(n, dim=8, classes=4, seed=0):
    """``n`` points in ``classes`` Gaussian clusters (the same on every rank: same seed)."""
    g = fnx.Generator().manual_seed(seed)
    centers = fnx.randn(classes, dim, generator=g) * 2
    labels = fnx.randint(0, classes, (n,), generator=g)
    return centers[labels] + fnx.randn(n, dim, generator=g) * 0.5, labels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32, help="per process")
    args = parser.parse_args()

    if "RANK" in os.environ:
        dist.init_process_group("gloo")          # MASTER_ADDR, RANK, ... from the launcher
    else:
        dist.init_process_group("gloo", world_size=1, rank=0)
    rank, world = dist.get_rank(), dist.get_world_size()

    x, y = make_data(512)
    data = TensorDataset(x, y)
    sampler = DistributedSampler(data, shuffle=True, seed=0)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler)

    fnx.manual_seed(rank)       # different on purpose: DDP broadcasts rank 0's weights
    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 4)))
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    steps = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        total = fnx.zeros(1)
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.detach()
            steps += 1
        dist.all_reduce(total, op=dist.ReduceOp.AVG)     # the mean over the ranks
        if rank == 0:
            print(f"epoch {epoch}: mean loss {total.item() / len(loader):.4f}", flush=True)

    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    if rank == 0:
        print(f"all-reduce bytes per step: {model.reduced_bytes // steps} "
              f"(gradient bytes: {grad_bytes})")
    flat = fnx.cat([p.detach().reshape(-1) for p in model.parameters()])
    replicas = [fnx.zeros_like(flat) for _ in range(world)]
    dist.all_gather(replicas, flat)
    same = all(bool((r == flat).all()) for r in replicas)
    print(f"rank {rank}/{world}: replicas identical: {same}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
