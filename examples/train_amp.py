"""Mixed-precision training, written as a PyTorch AMP script with only the import changed.

A small classifier on synthetic data: the forward runs under ``autocast`` (bfloat16 on
cpu, float16 on cuda), ``GradScaler`` scales the loss, unscales the gradients (clipped
here) and skips the step if any is inf/NaN. ``--compile`` turns the whole training step
(forward, backward, inf check, optimizer step, scale update) into one XLA program.

    python examples/train_amp.py                          # cpu, bfloat16
    python examples/train_amp.py --compile
    FNX_CUDA_ON_CPU=1 python examples/train_amp.py --device cuda --dtype float16
"""
import argparse

import fnx as torch
import fnx.nn as nn
import fnx.nn.functional as F


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default=None, help="bfloat16 or float16 (default: the "
                                                  "device's autocast dtype)")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--compile", action="store_true")
    args = ap.parse_args(argv)
    device = args.device
    dtype = getattr(torch, args.dtype) if args.dtype else torch.get_autocast_dtype(device)

    torch.manual_seed(0)
    x = torch.randn(512, 16)
    y = ((x[:, :8].sum(1) * x[:, 8:].sum(1)) > 0).long()       # not linearly separable
    x, y = x.to(device), y.to(device)
    model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(),
                          nn.Linear(64, 2)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    scaler = torch.amp.GradScaler(device, init_scale=2.0 ** 12)

    def train_step(x, y):
        with torch.autocast(device, dtype=dtype):
            logits = model(x)                       # matmuls in 16 bits
            loss = F.cross_entropy(logits, y)       # float32 (autocast's policy)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        return loss.detach()

    step = torch.compile(train_step) if args.compile else train_step
    for i in range(args.steps):
        loss = step(x, y)
        if i % 50 == 0 or i == args.steps - 1:
            print(f"step {i}: loss {loss.item():.4f} scale {scaler.get_scale():g}")
    with torch.no_grad(), torch.autocast(device, dtype=dtype):
        logits = model(x)
    acc = (logits.argmax(1) == y).float().mean().item()
    print(f"logits dtype: {logits.dtype}; weights dtype: {model[0].weight.dtype}")
    print(f"train accuracy: {100 * acc:.1f}%")


if __name__ == "__main__":
    main()
