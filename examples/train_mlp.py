"""Train an MLP classifier on a synthetic dataset with fnx.nn, fnx.optim and fnx.utils.data.

The data: 4 classes in 8 dimensions, each class a mixture of two Gaussian clusters placed
so that no linear model separates them (an XOR-like layout).  The script trains a small
MLP with AdamW and a cosine learning-rate schedule, shows a progress bar, reports held-out
accuracy (> 95%), and saves and reloads a checkpoint.

Run: python examples/train_mlp.py [--epochs N] [--quick] [--compile] [--device cpu|cuda]
"""
import argparse
import os
import sys
import tempfile
import time

import fnx
from fnx import nn, optim
from fnx.utils.data import DataLoader, TensorDataset, random_split


def make_data(n, dim=8, classes=4, seed=0):
    """``n`` points: class c is a mix of clusters at +-center_c (never linearly separable)."""
    g = fnx.Generator().manual_seed(seed)
    centers = fnx.randn(classes, dim, generator=g) * 1.5
    labels = fnx.randint(0, classes, (n,), generator=g)
    signs = fnx.randint(0, 2, (n, 1), generator=g) * 2 - 1       # which of the two clusters
    x = centers[labels] * signs + fnx.randn(n, dim, generator=g) * 0.7
    return x, labels


def progress(i, total, width=30, **stats):
    """A one-line progress bar, redrawn in place with a carriage return."""
    done = int(width * i / total)
    text = " ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}"
                    for k, v in stats.items())
    sys.stdout.write(f"\r  [{'#' * done}{'.' * (width - done)}] {i}/{total} {text}")
    if i == total:
        sys.stdout.write("\n")
    sys.stdout.flush()


def accuracy(model, loader, device):
    model.eval()
    correct = total = 0
    with fnx.no_grad():
        for x, y in loader:
            pred = model(x.to(device)).argmax(dim=1)
            correct += int((pred == y.to(device)).sum().item())
            total += y.shape[0]
    model.train()
    return correct / total


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--samples", type=int, default=4000)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--quick", action="store_true", help="a short run (for tests)")
    p.add_argument("--compile", action="store_true", help="run the model through fnx.compile")
    p.add_argument("--device", default=None)
    args = p.parse_args(argv)
    if args.quick:
        args.epochs, args.samples = 3, 2000
    cuda = getattr(fnx, "cuda", None)
    device = args.device or ("cuda" if cuda is not None and cuda.is_available() else "cpu")

    fnx.manual_seed(0)
    x, y = make_data(args.samples)
    train_set, test_set = random_split(TensorDataset(x, y), [0.8, 0.2],
                                       generator=fnx.Generator().manual_seed(1))
    train = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, drop_last=True,
                       generator=fnx.Generator().manual_seed(2))
    test = DataLoader(test_set, batch_size=256)

    model = nn.Sequential(
        nn.Linear(8, 64), nn.ReLU(),
        nn.Linear(64, 64), nn.ReLU(),
        nn.Linear(64, 4),
    ).to(device)
    forward = fnx.compile(model) if args.compile else model
    loss_fn = nn.CrossEntropyLoss()
    opt = optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    print(model)
    print(f"{len(train_set)} training / {len(test_set)} test samples on {device}, "
          f"{sum(p.numel() for p in model.parameters())} parameters")

    start = time.perf_counter()
    for epoch in range(args.epochs):
        print(f"epoch {epoch + 1}/{args.epochs} (lr {sched.get_last_lr()[0]:.5f})")
        running = 0.0
        for i, (xb, yb) in enumerate(train, 1):
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad()
            loss = loss_fn(forward(xb), yb)
            loss.backward()
            opt.step()
            running += loss.item()
            if i % 5 == 0 or i == len(train):
                progress(i, len(train), loss=running / i)
        sched.step()
        print(f"  test accuracy {accuracy(model, test, device):.2%}")
    elapsed = time.perf_counter() - start
    acc = accuracy(model, test, device)
    print(f"final test accuracy: {acc:.2%} ({elapsed:.1f} s)")

    # A checkpoint round trip: fnx.save writes a zip of arrays + a JSON header (no pickle).
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "mlp.fnx")
        fnx.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                  "epoch": args.epochs}, path)
        ckpt = fnx.load(path)
        restored = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                                 nn.Linear(64, 4)).to(device)
        restored.load_state_dict(ckpt["model"])
        print(f"checkpoint: {os.path.getsize(path)} bytes, reloaded model accuracy "
              f"{accuracy(restored, test, device):.2%}")
    return acc


if __name__ == "__main__":
    main()
