"""A GPT written the way nanoGPT writes it, trained as one compiled step, matches eager.

The model and training loop use the idioms real programs use: AdamW with decay and
no-decay parameter groups, a warm-up + cosine learning rate written into every group on
every step, ``clip_grad_norm_``, weight tying, a causal mask registered as a buffer, and
``generate()`` with top-k sampling from the compiled model.
"""
from __future__ import annotations

import math

import numpy as np

import fnx
import fnx.nn.functional as F
from fnx import nn
from fnx.testing import to_numpy


class Attention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.register_buffer("bias", fnx.tril(fnx.ones(block_size, block_size))
                             .view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                   for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = Attention(n_embd, n_head, block_size)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.fc = nn.Linear(n_embd, 4 * n_embd)
        self.out = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.out(F.gelu(self.fc(self.ln_2(x))))


class GPT(nn.Module):
    def __init__(self, vocab=32, block_size=16, n_layer=2, n_head=2, n_embd=32):
        super().__init__()
        self.block_size = block_size
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([Block(n_embd, n_head, block_size) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.wte.weight = self.lm_head.weight           # weight tying
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, 0.0, 0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = fnx.arange(0, t, dtype=fnx.long)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        if targets is None:
            return logits[:, [-1], :], None
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                               ignore_index=-1)
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        params = {n: p for n, p in self.named_parameters() if p.requires_grad}
        decay = [p for p in params.values() if p.dim() >= 2]
        no_decay = [p for p in params.values() if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": weight_decay},
                  {"params": no_decay, "weight_decay": 0.0}]
        return fnx.optim.AdamW(groups, lr=learning_rate, betas=betas)

    @fnx.no_grad()
    def generate(self, idx, max_new_tokens, forward=None, top_k=None, generator=None):
        forward = forward or self
        for _ in range(max_new_tokens):
            cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
            logits, _ = forward(cond)
            logits = logits[:, -1, :] / 0.8
            if top_k is not None:
                v, _ = fnx.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx = fnx.cat((idx, fnx.multinomial(probs, num_samples=1, generator=generator)),
                          dim=1)
        return idx


def get_lr(it, warmup=3, decay_iters=10, lr=6e-3, min_lr=6e-4):
    if it < warmup:
        return lr * (it + 1) / (warmup + 1)
    if it > decay_iters:
        return min_lr
    ratio = (it - warmup) / (decay_iters - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)


def _train(compiled, steps=12):
    fnx.manual_seed(0)
    model = GPT()
    opt = model.configure_optimizers(0.1, 6e-3, (0.9, 0.95))
    g = fnx.Generator().manual_seed(1)
    data = (fnx.arange(200) * 5) % 11          # a sequence the model can learn

    def step(x, y):
        _, loss = model(x, y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    run = fnx.compile(step) if compiled else step
    losses = []
    for it in range(steps):
        for group in opt.param_groups:
            group["lr"] = get_lr(it)
        ix = fnx.randint(0, 200 - 17, (4,), generator=g)
        x = fnx.stack([data[i:i + 16] for i in ix.tolist()])
        y = fnx.stack([data[i + 1:i + 17] for i in ix.tolist()])
        losses.append(run(x, y).item())
    return model, losses, run


def test_nanogpt_style_training_step_compiled_matches_eager():
    eager, eager_losses, _ = _train(False)
    model, losses, run = _train(True)
    np.testing.assert_allclose(losses, eager_losses, rtol=2e-4)
    assert losses[-1] < losses[0]
    for (name, a), b in zip(eager.named_parameters(), model.parameters()):
        np.testing.assert_allclose(to_numpy(b.detach()), to_numpy(a.detach()), rtol=2e-3,
                                   atol=2e-5, err_msg=name)
    # the learning rate changes every step; the programs do not
    assert len(run.entries()) == 1


def test_generate_top_k_from_the_compiled_model_matches_eager():
    model, _, _ = _train(False, steps=2)
    model.eval()
    compiled = fnx.compile(model)
    start = fnx.zeros((1, 1), dtype=fnx.long)
    eager_out = model.generate(start, 6, top_k=5, generator=fnx.Generator().manual_seed(3))
    out = model.generate(start, 6, forward=compiled, top_k=5,
                         generator=fnx.Generator().manual_seed(3))
    np.testing.assert_array_equal(to_numpy(out), to_numpy(eager_out))
