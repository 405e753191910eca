"""2-layer LSTM language model training step: fnx eager vs compiled vs hand-written JAX.

The model is word_language_model's: embedding -> ``nn.LSTM(E, H, 2)`` -> linear decoder,
cross-entropy over every position, plain SGD. Variants, from the same weights and data:

- eager: ``opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step()``
- compiled model: the same step with ``fnx.compile(model)``
- compiled step: ``fnx.compile(step)``: forward, backward and update as one program
- JAX: the same LSTM written with ``jax.lax.scan`` over time, ``jax.value_and_grad`` and
  the SGD update in one ``jax.jit``

fnx's ``nn.LSTM`` runs each layer as one ``prims.rnn_scan`` (a ``lax.scan`` once lowered);
in the compiled step its backward (``rnn_scan_backward``) reuses the forward scan's
residuals. The first-call time (trace + XLA compile) is printed too. The compiled step and
the JAX step are interleaved in a fresh random order each repeat (``bench_mlp_train.timed_apart``)
and judged on their paired ratio; the eager-driven variants are timed apart, since NumPy's
BLAS threads still spinning after them slow whatever runs next.

    python benchmarks/bench_lstm.py                  # ~10 s on 2 CPU cores
    python benchmarks/bench_lstm.py --seq 35 --batch 20 --hidden 200 --repeats 10
Goal: the compiled step within 1.2x of the JAX scan.
"""
from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np

import fnx
from bench_mlp_train import paired, ratio_line, timed_apart
from fnx import nn, optim

LR = 0.1


class LM(nn.Module):
    def __init__(self, vocab, emb, hidden, layers):
        super().__init__()
        self.encoder = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, layers)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        out, _ = self.rnn(self.encoder(tokens))
        return self.decoder(out)


def fnx_step(model, vocab):
    loss_fn = nn.CrossEntropyLoss()
    opt = optim.SGD(model.parameters(), lr=LR)

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x).reshape(-1, vocab), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss.detach()
    return step


def jax_lstm_layer(x, w_ih, w_hh, b_ih, b_hh):
    """One LSTM layer over ``x`` (T, B, I) with ``lax.scan``; gates i, f, g, o."""
    gi = x @ w_ih.T + b_ih
    batch, hidden = x.shape[1], w_hh.shape[1]

    def cell(carry, g_in):
        h, c = carry
        i, f, g, o = jnp.split(g_in + h @ w_hh.T + b_hh, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h

    zeros = jnp.zeros((batch, hidden), x.dtype)
    _, out = jax.lax.scan(cell, (zeros, zeros), gi)
    return out


def jax_loss(params, x, y):
    h = params["encoder"][x]
    for layer in params["layers"]:
        h = jax_lstm_layer(h, *layer)
    logits = h @ params["dec_w"].T + params["dec_b"]
    logp = jax.nn.log_softmax(logits.reshape(-1, logits.shape[-1]), axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, y.reshape(-1)[:, None], axis=1))


def jax_step(model, num_layers):
    def get(t):
        return jnp.asarray(t.detach().numpy())

    params = {"encoder": get(model.encoder.weight),
              "layers": [tuple(get(getattr(model.rnn, f"{k}_l{i}")) for k in
                               ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
                         for i in range(num_layers)],
              "dec_w": get(model.decoder.weight), "dec_b": get(model.decoder.bias)}

    @jax.jit
    def step(params, x, y):
        loss, grads = jax.value_and_grad(jax_loss)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads), loss

    state = {"params": params}

    def run(x, y):
        state["params"], loss = step(state["params"], x, y)
        return loss
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--emb", type=int, default=200)
    ap.add_argument("--hidden", type=int, default=200)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--seq", type=int, default=35)
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--skip-eager", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x_np = rng.integers(0, args.vocab, (args.seq, args.batch))
    y_np = rng.integers(0, args.vocab, (args.seq, args.batch))
    x, y = fnx.tensor(x_np), fnx.tensor(y_np)
    xj, yj = jnp.asarray(x_np), jnp.asarray(y_np)

    def model():
        fnx.manual_seed(0)
        return LM(args.vocab, args.emb, args.hidden, args.layers)

    variants = {}
    if not args.skip_eager:
        eager = fnx_step(model(), args.vocab)
        variants["eager"] = lambda: eager(x, y)
    m = model()
    cmodel = fnx_step(fnx.compile(m), args.vocab)
    variants["compiled model"] = lambda: cmodel(x, y)
    cstep = fnx.compile(fnx_step(model(), args.vocab))
    variants["compiled step"] = lambda: cstep(x, y)
    jstep = jax_step(model(), args.layers)
    variants["jax lax.scan"] = lambda: jstep(xj, yj)

    med, first, last, times = timed_apart(variants, ("eager", "compiled model"),
                                          args.repeats, 1, 1)
    losses = {k: float(np.asarray(getattr(v, "_data", v))) for k, v in last.items()}
    base = med["jax lax.scan"]
    print(f"LSTM LM: vocab {args.vocab}, emb {args.emb}, hidden {args.hidden}, "
          f"{args.layers} layers, seq {args.seq}, batch {args.batch}; "
          f"median of {args.repeats} steps")
    print(f"{'variant':16s} {'ms/step':>9s} {'vs jax':>7s} {'first call s':>13s} "
          f"{'loss after':>11s}")
    for name in variants:
        print(f"{name:16s} {med[name] * 1e3:9.2f} {med[name] / base:6.2f}x "
              f"{first[name]:13.2f} {losses[name]:11.5f}")
    print(ratio_line("compiled step / jax lax.scan", med["compiled step"] / base,
                     paired(times, "compiled step", "jax lax.scan"), 1.2))
    ref = losses["jax lax.scan"]
    bad = {k: v for k, v in losses.items() if abs(v - ref) > 1e-3 * max(1.0, abs(ref))}
    if bad:
        raise SystemExit(f"losses differ from JAX's {ref}: {bad}")


if __name__ == "__main__":
    main()
