"""fnx.compile with a size that keeps changing: dynamic sizes (fnx/lower/dynamic_shapes.py).

A dim that took a third value (``dynamic=None``), every dim (``dynamic=True``) or a dim
marked with ``fnx.compiler.mark_dynamic`` is traced once as a SymInt; new sizes check the
trace's guards and lower its graph with the sizes substituted. References are NumPy (or
the same fnx function run eagerly, for the models); trace counts come from
``CompiledFunction.dynamic_traces()`` (symbolic traces) and the entries that count
against ``cache_limit`` (static traces).
"""
import math
import warnings

import numpy as np
import pytest

import fnx
import fnx.nn as nn
import fnx.nn.functional as F
from fnx.lower import dynamic_shapes
from fnx.testing.models import gpt_block, gpt_params


def _static_traces(g) -> int:
    """Entries made by a static trace (a symbolic trace's per-size programs have size 0)."""
    return sum(getattr(e, "size", 1) for e in g.entries())


class _Attention(nn.Module):
    def __init__(self, C, nh, block):
        super().__init__()
        self.c_attn, self.c_proj, self.nh = nn.Linear(C, 3 * C), nn.Linear(C, C), nh
        self.register_buffer("bias", fnx.tril(fnx.ones(block, block)).view(1, 1, block, block))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.nh, C // self.nh).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class _GPT(nn.Module):
    """nanoGPT's shape: token + positional (arange(T)) embeddings, masked attention."""

    def __init__(self, vocab=23, C=16, nh=2, block=48):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, C), nn.Embedding(block, C)
        self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(C), _Attention(C, nh, block), \
            nn.LayerNorm(C)
        self.fc, self.proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)
        self.ln_f, self.lm_head = nn.LayerNorm(C), nn.Linear(C, vocab, bias=False)

    def forward(self, idx):
        _, t = idx.size()
        pos = fnx.arange(0, t, dtype=fnx.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        x = x + self.attn(self.ln_1(x))
        x = x + self.proj(F.gelu(self.fc(self.ln_2(x))))
        return self.lm_head(self.ln_f(x))


def _generate_step(model, idx, k=5):
    """One step of nanoGPT's generate(): top-k on the last position, greedy, appended."""
    logits = model(idx)[:, -1, :]
    v, _ = fnx.topk(logits, k)
    logits = logits.masked_fill(logits < v[:, [-1]], float("-inf"))
    return fnx.cat((idx, logits.argmax(-1, keepdim=True)), dim=1), v


def test_generate_growing_T_traces_once_and_matches_eager():
    fnx.manual_seed(0)
    model = _GPT().eval()
    step = fnx.compile(lambda idx: _generate_step(model, idx))
    idx = ref = fnx.tensor([[3]])
    with warnings.catch_warnings(), fnx.no_grad():     # generate() runs without grad
        warnings.simplefilter("error")          # no cache_limit warning: nothing eager
        for _ in range(40):                     # T = 1 .. 40
            idx, vals = step(idx)
            ref, ref_vals = _generate_step(model, ref)
            np.testing.assert_array_equal(idx.numpy(), ref.numpy())
            np.testing.assert_allclose(vals.numpy(), ref_vals.numpy(), rtol=1e-4, atol=1e-5)
    assert idx.shape == (1, 41)
    # T=1 and T=2 are traced statically; T=3 (the third value) once symbolically, and the
    # 37 sizes after it only lower that graph
    assert step.dynamic_traces() == 1
    assert _static_traces(step) == 2
    assert step._eager_reason is None


class _KVCache:
    """Hugging Face's DynamicCache in small: per-layer lists grown with ``torch.cat``."""

    def __init__(self):
        self.keys, self.values = [], []

    def update(self, k, v, layer):
        if len(self.keys) <= layer:
            self.keys.append(k)
            self.values.append(v)
        else:
            self.keys[layer] = fnx.cat([self.keys[layer], k], dim=-2)
            self.values[layer] = fnx.cat([self.values[layer], v], dim=-2)
        return self.keys[layer], self.values[layer]


def _attend(x, cache, layer, wqkv):
    b, t, c = x.shape
    q, k, v = [u.view(b, t, 2, c // 2).transpose(1, 2) for u in (x @ wqkv).split(c, -1)]
    k, v = cache.update(k, v, layer)
    att = (q @ k.transpose(-2, -1) / math.sqrt(c // 2)).softmax(-1)
    return x + (att @ v).transpose(1, 2).reshape(b, t, c)


def test_a_kv_cache_object_growing_every_call_is_traced_symbolically():
    # the cache is an argument whose tensors grow by one position per call; the program
    # writes the new ones into the caller's cache (before: each length was a static
    # trace, and after cache_limit the model ran eagerly)
    fnx.manual_seed(0)
    w = [fnx.randn(8, 24) * 0.3 for _ in range(2)]

    def model(x, cache):
        for layer, wqkv in enumerate(w):
            x = _attend(x, cache, layer, wqkv)
        return x
    compiled = fnx.compile(model)
    caches = _KVCache(), _KVCache()
    x = fnx.randn(1, 4, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no cache_limit warning: nothing eager
        for _ in range(12):
            want, got = model(x, caches[0]), compiled(x, caches[1])
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
            for a, b in zip(caches[0].keys + caches[0].values,
                            caches[1].keys + caches[1].values):
                np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)
            x = want[:, -1:] / want[:, -1:].abs().amax()       # (bounded, as a LayerNorm)
    assert caches[1].keys[0].shape == (1, 2, 15, 4)
    assert compiled.dynamic_traces() == 1 and compiled._eager_reason is None


def test_gpt_block_growing_T_matches_numpy_shapes_and_eager():
    C = 16
    params = {k: fnx.tensor(v) for k, v in gpt_params(C).items()}
    eager = gpt_block(params, 2)
    compiled = fnx.compile(eager, cache_limit=3)
    rng = np.random.default_rng(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for T in range(1, 13):
            x = fnx.tensor(rng.standard_normal((1, T, C)).astype(np.float32))
            got, ref = compiled(x), eager(x)
            assert got.shape == (1, T, C)
            np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-4, atol=1e-5)
    assert compiled.dynamic_traces() == 1 and _static_traces(compiled) == 2


@pytest.mark.parametrize("dynamic", [None, True])
def test_python_decision_on_a_size_takes_both_branches(dynamic):
    def f(x):
        if x.shape[1] > 4:
            return x.sum(1) * 2
        return x.sum(1) - 1

    g = fnx.compile(f, dynamic=dynamic)
    rng = np.random.default_rng(0)
    for T in (2, 6, 3, 5, 4, 7, 8, 9, 3):
        a = rng.standard_normal((2, T)).astype(np.float32)
        ref = a.sum(1) * 2 if T > 4 else a.sum(1) - 1
        np.testing.assert_allclose(g(fnx.tensor(a)).numpy(), ref, rtol=1e-5, atol=1e-6)
    # one symbolic trace per branch
    assert g.dynamic_traces() == 2


def test_size_equality_specializes_and_stays_correct():
    def f(x):
        if x.shape[1] == 7:
            return x * 0
        return x + 1

    g = fnx.compile(f, dynamic=True)
    for T in (3, 7, 5, 7, 8, 2):
        a = np.arange(2 * T, dtype=np.float32).reshape(2, T)
        ref = a * 0 if T == 7 else a + 1
        np.testing.assert_array_equal(g(fnx.tensor(a)).numpy(), ref)
    # T != 7 shares one trace; T == 7 pinned its own, after which no more are tried
    assert g.dynamic_traces() == 2


def test_int_of_a_size_specializes():
    g = fnx.compile(lambda x: x * int(x.shape[1]), dynamic=True)
    for T in (3, 4, 3, 5):
        a = np.ones((2, T), np.float32)
        np.testing.assert_array_equal(g(fnx.tensor(a)).numpy(), a * T)
    assert g.dynamic_traces() == 1        # pinned to 3: later sizes are traced statically


_SYMBOLIC = [
    # (function, NumPy reference)
    (lambda x: x.mean(1), lambda a: a.mean(1)),
    (lambda x: x.reshape(-1).cumsum(0), lambda a: a.reshape(-1).cumsum(0)),
    (lambda x: x[:, : x.shape[1] // 2].sum(1), lambda a: a[:, : a.shape[1] // 2].sum(1)),
    (lambda x: fnx.arange(1, x.shape[1] + 1) + x[0],
     lambda a: np.arange(1, a.shape[1] + 1) + a[0]),
    (lambda x: fnx.ones(x.shape[1]) * 3 + x[1], lambda a: 3 + a[1]),
    (lambda x: fnx.tril(fnx.ones(x.shape[1], x.shape[1])).sum(0) + x[0],
     lambda a: np.tril(np.ones((a.shape[1], a.shape[1]))).sum(0) + a[0]),
    (lambda x: x[:, :1].expand(2, x.shape[1]) + x, lambda a: a[:, :1] + a),
    (lambda x: F.pad(x, (0, 3)), lambda a: np.pad(a, ((0, 0), (0, 3)))),
    (lambda x: x.softmax(-1),
     lambda a: np.exp(a - a.max(-1, keepdims=True)) /
     np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True)),
    (lambda x: x.view(x.shape[0] * x.shape[1]) * 2, lambda a: a.reshape(-1) * 2),
    (lambda x: x * x.shape[1] + x.shape[1] // 2,                    # a size as a Scalar
     lambda a: a * a.shape[1] + a.shape[1] // 2),
]


@pytest.mark.parametrize("i", range(len(_SYMBOLIC)))
def test_symbolic_trace_matches_numpy_at_every_size(i):
    f, ref = _SYMBOLIC[i]
    g = fnx.compile(f, dynamic=True)
    rng = np.random.default_rng(i)
    for T in (3, 6, 4):
        a = rng.standard_normal((2, T)).astype(np.float32)
        got = g(fnx.tensor(a)).numpy()
        np.testing.assert_allclose(got, ref(a), rtol=1e-5, atol=1e-5)
    assert g.dynamic_traces() == 1 and _static_traces(g) == 0


@pytest.mark.parametrize("f, ref", [
    (lambda x: (x.sum(), x.shape[1]), lambda a: (a.sum(), a.shape[1])),   # returned
    (lambda x: fnx.tensor([x.shape[1], 1]) * 2, lambda a: np.array([a.shape[1], 1]) * 2),
])
def test_what_a_symbolic_trace_cannot_hold_is_traced_statically(f, ref):
    g = fnx.compile(f, dynamic=True)
    for T in (3, 5, 4):
        a = np.ones((2, T), np.float32)
        got, want = g(fnx.tensor(a)), ref(a)
        if isinstance(want, tuple):
            np.testing.assert_allclose(got[0].numpy(), want[0], rtol=1e-6)
            assert got[1] == want[1] and type(got[1]) is int
        else:
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    assert g.dynamic_traces() == 0 and _static_traces(g) == 3


def test_dynamic_false_specializes_every_shape():
    g = fnx.compile(lambda x: x * 2, dynamic=False)
    for T in (3, 4, 5, 6, 3, 4):
        a = np.arange(T, dtype=np.float32)
        np.testing.assert_array_equal(g(fnx.tensor(a)).numpy(), a * 2)
    assert len(g.entries()) == 4 and g.dynamic_traces() == 0


def test_static_path_reuses_a_program_per_shape():
    g = fnx.compile(lambda x: x * 2)
    for T in (3, 4, 3, 4, 3):
        a = np.arange(T, dtype=np.float32)
        np.testing.assert_array_equal(g(fnx.tensor(a)).numpy(), a * 2)
    assert len(g.entries()) == 2 and g.dynamic_traces() == 0


def test_mark_dynamic_traces_symbolically_from_the_first_call():
    g = fnx.compile(lambda x: (x * x).sum(0))
    for T in (3, 5, 8):
        x = fnx.ones(4, T)
        fnx.compiler.mark_dynamic(x, -1)
        np.testing.assert_array_equal(g(x).numpy(), np.full(T, 4.0, np.float32))
    assert g.dynamic_traces() == 1 and _static_traces(g) == 0
    with pytest.raises(IndexError, match="mark_dynamic"):
        fnx.compiler.mark_dynamic(fnx.ones(2), 1)


def test_new_sizes_never_end_in_eager_mode_and_the_lru_bounds_programs(monkeypatch):
    monkeypatch.setattr(dynamic_shapes, "MAX_SIZES", 3)
    g = fnx.compile(lambda x: x.cumsum(1), cache_limit=1, dynamic=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # a cache_limit warning would fail here
        for T in (2, 3, 4, 5, 6, 2, 7):
            a = np.arange(3 * T, dtype=np.float32).reshape(3, T)
            np.testing.assert_allclose(g(fnx.tensor(a)).numpy(), a.cumsum(1))
    (entry,), = g._dynamic_shapes.entries.values()
    assert len(entry.programs) == 3
    assert len(g.entries()) == 3               # dropped sizes leave the call cache too
    assert g.dynamic_traces() == 1 and g._eager_reason is None


def test_reset_forgets_symbolic_traces():
    g = fnx.compile(lambda x: x + 1, dynamic=True)
    g(fnx.ones(3))
    fnx.compiler.reset()
    assert g.dynamic_traces() == 0 and not g.entries()
    np.testing.assert_array_equal(g(fnx.ones(4)).numpy(), np.full(4, 2.0, np.float32))


def test_last_short_batch_training_step_traces_twice():
    fnx.manual_seed(0)
    model = nn.Linear(4, 1)
    w0, b0 = model.weight.detach().numpy().copy(), model.bias.detach().numpy().copy()
    opt = fnx.optim.SGD(model.parameters(), lr=0.1)

    @fnx.compile
    def train_step(x, y):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    rng = np.random.default_rng(0)
    w, b = w0.astype(np.float64), b0.astype(np.float64)
    for n in (8, 8, 8, 3):                      # the last batch is short
        xa = rng.standard_normal((n, 4)).astype(np.float32)
        ya = rng.standard_normal((n, 1)).astype(np.float32)
        loss = train_step(fnx.tensor(xa), fnx.tensor(ya))
        r = xa @ w.T + b - ya                   # NumPy reference of the same SGD step
        np.testing.assert_allclose(loss.item(), (r ** 2).mean(), rtol=1e-5)
        w = w - 0.1 * (2 * r * xa).mean(0, keepdims=True)
        b = b - 0.1 * (2 * r).mean(0)
        np.testing.assert_allclose(model.weight.detach().numpy(), w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(model.bias.detach().numpy(), b, rtol=1e-5, atol=1e-6)
    assert _static_traces(train_step) == 2 and train_step.dynamic_traces() == 0


def test_dynamic_must_be_a_bool_or_none():
    with pytest.raises(AssertionError, match="bool"):
        fnx.compile(lambda x: x, dynamic="yes")


def test_a_float_argument_beside_a_dynamic_size():
    g = fnx.compile(lambda x, s: x.cumsum(1) * s, dynamic=True)
    for T, s in ((3, 0.5), (5, 2.0), (4, 1.5), (5, -1.0)):
        a = np.arange(2 * T, dtype=np.float32).reshape(2, T)
        np.testing.assert_allclose(g(fnx.tensor(a), s).numpy(), a.cumsum(1) * s, rtol=1e-6)
    assert g.dynamic_traces() == 1 and _static_traces(g) == 0


def test_sizes_zero_and_one_stay_static():
    g = fnx.compile(lambda x: x.sum(1) + x[:, :1], dynamic=True)
    for T in (1, 4, 6, 1, 9):
        a = np.arange(T, dtype=np.float32).reshape(1, T)
        np.testing.assert_allclose(g(fnx.tensor(a)).numpy(), a.sum(1) + a[:, :1])
    # T=1 is its own static trace; 4, 6 and 9 share one symbolic trace
    assert _static_traces(g) == 1 and g.dynamic_traces() == 1
