"""A character-level GPT trained on bundled public-domain verse, with the model compiled by
``fnx.compile`` (the forward and the loss become one XLA program; backward runs compiled).

Model: token + position embeddings, ``n_layer`` pre-norm transformer blocks (causal
self-attention through ``scaled_dot_product_attention``, a GELU MLP), a final LayerNorm and
a linear head, trained with AdamW on random windows of the text.  The loss falls from
about ln(vocab) and a sample is printed at the end.

Run: python examples/mini_gpt.py [--steps N] [--quick] [--no-compile] [--device cpu|cuda]
"""
import argparse
import math
import os
import time

import fnx
import fnx.nn.functional as F
from fnx import nn, optim

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "verse.txt")


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                   for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(),
                                 nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size=64, n_layer=2, n_head=4, n_embd=64):
        super().__init__()
        self.block_size = block_size
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.pos_emb = nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList([Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m):
        # GPT-2's initialization: N(0, 0.02) weights, zero biases
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, 0.0, 0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        pos = fnx.arange(T, device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        if targets is None:
            return logits
        return F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))

    @fnx.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, generator=None):
        """Append ``max_new_tokens`` sampled characters to ``idx`` [1, T]."""
        for _ in range(max_new_tokens):
            context = idx[:, -self.block_size:]
            logits = self(context)[:, -1, :] / temperature
            probs = F.softmax(logits, dim=-1)
            nxt = fnx.multinomial(probs, 1, generator=generator)
            idx = fnx.cat([idx, nxt], dim=1)
        return idx


def get_batch(data, block_size, batch_size, device, generator):
    """``batch_size`` random windows of the text and the same windows shifted by one."""
    starts = fnx.randint(0, data.shape[0] - block_size - 1, (batch_size, 1), generator=generator)
    idx = starts + fnx.arange(block_size)
    return data[idx].to(device), data[idx + 1].to(device)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--block-size", type=int, default=64)
    p.add_argument("--n-layer", type=int, default=2)
    p.add_argument("--n-embd", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--sample-len", type=int, default=200)
    p.add_argument("--quick", action="store_true", help="a short run (for tests)")
    p.add_argument("--no-compile", action="store_true", help="train the eager model")
    p.add_argument("--device", default=None)
    args = p.parse_args(argv)
    if args.quick:
        args.steps, args.batch_size, args.block_size, args.sample_len = 20, 8, 32, 40
    cuda = getattr(fnx, "cuda", None)
    device = args.device or ("cuda" if cuda is not None and cuda.is_available() else "cpu")

    text = open(DATA, encoding="utf-8").read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = fnx.tensor([stoi[c] for c in text], dtype=fnx.int64)
    split = int(0.9 * data.shape[0])
    train_data, val_data = data[:split], data[split:]
    print(f"{len(text)} characters, vocabulary of {len(chars)}, training on {device}")

    fnx.manual_seed(1337)
    model = GPT(len(chars), args.block_size, args.n_layer, 4, args.n_embd).to(device)
    print(f"{sum(p.numel() for p in model.parameters())} parameters")
    step_fn = model if args.no_compile else fnx.compile(model)
    opt = optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.99), weight_decay=0.01)
    sched = optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 20) * 0.5 * (1 + math.cos(math.pi * s / args.steps)))
    g = fnx.Generator().manual_seed(0)

    print(f"step 0: loss {math.log(len(chars)):.3f} expected at random (ln vocab)")
    start = time.perf_counter()
    first = None
    for step in range(1, args.steps + 1):
        x, y = get_batch(train_data, args.block_size, args.batch_size, device, g)
        opt.zero_grad()
        loss = step_fn(x, y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if first is None:
            first = loss.item()
        if step % max(1, args.steps // 10) == 0 or step == 1:
            print(f"step {step}: loss {loss.item():.3f} "
                  f"({(time.perf_counter() - start) / step * 1000:.0f} ms/step)")
    model.eval()
    with fnx.no_grad():     # one eager evaluation (compiling it would cost more than it saves)
        vx, vy = get_batch(val_data, args.block_size, 64, device, g)
        val = model(vx, vy).item()
    print(f"trained {args.steps} steps in {time.perf_counter() - start:.1f} s; first loss "
          f"{first:.3f}, validation loss {val:.3f}")

    prompt = fnx.tensor([[stoi[c] for c in "Shall I "]], dtype=fnx.int64, device=device)
    out = model.generate(prompt, args.sample_len, temperature=0.8,
                         generator=fnx.Generator().manual_seed(42))
    print("sample:\n" + "".join(chars[i] for i in out[0].tolist()))
    return first, val


if __name__ == "__main__":
    main()
