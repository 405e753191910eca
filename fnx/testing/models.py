"""Reference models in functional fnx style (weights as a dict of tensors), for checking a
backend or lowering on whole programs: an MLP, a GPT-style block and a small CNN with
batch norm.  The GPT block also exists in plain jax.numpy, the benchmarks' baseline.

>>> import fnx
>>> from fnx.testing import models
>>> p = {k: fnx.tensor(v) for k, v in models.gpt_params(16).items()}
>>> models.gpt_block(p, n_head=2)(fnx.ones(1, 4, 16)).shape
fnx.Size([1, 4, 16])
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

import fnx

aten = fnx.ops.aten


def training_step(model, opt, loss_fn=None):
    """``step(x, y)``: one classifier training step (zero the gradients, cross-entropy,
    backward, ``opt.step()``) returning the detached loss; the function a compiled
    training step is made of in tests and benchmarks.

    >>> import fnx
    >>> _ = fnx.manual_seed(0)
    >>> model = fnx.nn.Linear(3, 2)
    >>> step = training_step(model, fnx.optim.SGD(model.parameters(), lr=0.1))
    >>> first = step(fnx.ones(4, 3), fnx.tensor([0, 1, 0, 1])).item()
    >>> step(fnx.ones(4, 3), fnx.tensor([0, 1, 0, 1])).item() < first + 1e-6
    True
    """
    loss_fn = loss_fn or fnx.nn.functional.cross_entropy

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()
    return step


def gpt_params(C: int, seed: int = 0) -> dict:
    """NumPy float32 weights of one block with embedding width ``C``."""
    rng = np.random.default_rng(seed)

    def w(*shape):
        return (rng.standard_normal(shape) / math.sqrt(shape[-1])).astype(np.float32)
    return {"ln1_w": np.ones(C, np.float32), "ln1_b": np.zeros(C, np.float32),
            "attn_w": w(3 * C, C), "attn_b": np.zeros(3 * C, np.float32),
            "proj_w": w(C, C), "proj_b": np.zeros(C, np.float32),
            "ln2_w": np.ones(C, np.float32), "ln2_b": np.zeros(C, np.float32),
            "fc_w": w(4 * C, C), "fc_b": np.zeros(4 * C, np.float32),
            "out_w": w(C, 4 * C), "out_b": np.zeros(C, np.float32)}


def gpt_block(p: dict, n_head: int):
    """The block as an fnx function of ``x`` [B, T, C] over fnx tensors ``p``."""
    def block(x):
        B, T, C = x.shape
        h = fnx.layer_norm(x, [C], p["ln1_w"], p["ln1_b"], 1e-5)
        q, k, v = aten.linear.default(h, p["attn_w"], p["attn_b"]).split(C, dim=2)
        q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
        a = aten.scaled_dot_product_attention.default(q, k, v, is_causal=True)
        a = a.transpose(1, 2).reshape(B, T, C)
        x = x + aten.linear.default(a, p["proj_w"], p["proj_b"])
        h = fnx.layer_norm(x, [C], p["ln2_w"], p["ln2_b"], 1e-5)
        h = aten.gelu.default(aten.linear.default(h, p["fc_w"], p["fc_b"]))
        return x + aten.linear.default(h, p["out_w"], p["out_b"])
    return block


def jax_gpt_block(n_head: int):
    """The same block in jax.numpy: ``block(p, x)`` over JAX arrays."""

    def layer_norm(x, w, b):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / jnp.sqrt(var + 1e-5) * w + b

    def block(p, x):
        B, T, C = x.shape
        h = layer_norm(x, p["ln1_w"], p["ln1_b"])
        q, k, v = jnp.split(h @ p["attn_w"].T + p["attn_b"], 3, axis=2)
        q, k, v = (t.reshape(B, T, n_head, C // n_head).transpose(0, 2, 1, 3)
                   for t in (q, k, v))
        s = (q @ k.transpose(0, 1, 3, 2)) / math.sqrt(C // n_head)
        s = jnp.where(jnp.tril(jnp.ones((T, T), bool)), s, -jnp.inf)
        a = jax.nn.softmax(s, -1) @ v
        a = a.transpose(0, 2, 1, 3).reshape(B, T, C)
        x = x + a @ p["proj_w"].T + p["proj_b"]
        h = layer_norm(x, p["ln2_w"], p["ln2_b"])
        h = jax.nn.gelu(h @ p["fc_w"].T + p["fc_b"], approximate=False)
        return x + h @ p["out_w"].T + p["out_b"]
    return block


def mlp_params(sizes=(784, 1024, 1024, 10), seed: int = 0) -> dict:
    """NumPy float32 weights of an MLP with ``sizes`` (PyTorch's Linear layout [out, in])."""
    rng = np.random.default_rng(seed)
    p = {}
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        bound = 1 / math.sqrt(a)
        p[f"w{i}"] = rng.uniform(-bound, bound, (b, a)).astype(np.float32)
        p[f"b{i}"] = rng.uniform(-bound, bound, (b,)).astype(np.float32)
    return p


def mlp(p: dict):
    """ReLU MLP over fnx tensors ``p`` from ``mlp_params``."""
    n = len(p) // 2

    def forward(x):
        for i in range(n):
            x = aten.linear.default(x, p[f"w{i}"], p[f"b{i}"])
            if i < n - 1:
                x = x.relu()
        return x
    return forward


def cnn_params(in_ch=3, ch=8, classes=10, hw=8, seed: int = 0) -> dict:
    """NumPy weights and batch-norm state of ``cnn``."""
    rng = np.random.default_rng(seed)
    return {"conv_w": (rng.standard_normal((ch, in_ch, 3, 3)) / 3).astype(np.float32),
            "conv_b": np.zeros(ch, np.float32), "bn_w": np.ones(ch, np.float32),
            "bn_b": np.zeros(ch, np.float32), "bn_mean": np.zeros(ch, np.float32),
            "bn_var": np.ones(ch, np.float32),
            "fc_w": (rng.standard_normal((classes, ch * (hw // 2) ** 2)) / 8)
            .astype(np.float32)}


def cnn(p: dict, training: bool = True):
    """conv3x3 -> batch norm (running stats updated in place when training) -> ReLU ->
    2x2 max pool -> linear."""
    def forward(x):
        h = fnx.conv2d(x, p["conv_w"], p["conv_b"], padding=1)
        h = fnx.batch_norm(h, p["bn_w"], p["bn_b"], p["bn_mean"], p["bn_var"], training,
                           0.1, 1e-5, False)
        h = fnx.max_pool2d(h.relu(), 2)
        return aten.linear.default(h.flatten(1), p["fc_w"])
    return forward
