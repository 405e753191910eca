"""``MultiheadAttention`` and the Transformer modules against NumPy implementations of the
attention math with the same weights (masks bool and float, key padding, kdim/vdim,
add_bias_kv/add_zero_attn, norm_first, activations, batch_first); gradients against
central finite differences of the NumPy model (float64); ``fnx.compile`` against eager;
``state_dict`` keys and PyTorch's errors."""
import math

import numpy as np
import pytest
from scipy.special import erf

import fnx
import fnx.nn as nn
import fnx.nn.functional as F


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def additive(mask):
    if mask is None:
        return None
    return np.where(mask, -np.inf, 0.0) if mask.dtype == bool else mask


def np_mha(q, k, v, P, heads, prefix="", attn_mask=None, key_padding_mask=None,
           average=True, add_zero_attn=False):
    """Multi-head attention on (L, N, E) query, (S, N, kdim) key, (S, N, vdim) value."""
    L, N, E = q.shape
    d = E // heads
    if prefix + "in_proj_weight" in P:
        wq, wk, wv = np.split(P[prefix + "in_proj_weight"], 3)
    else:
        wq, wk, wv = (P[prefix + n] for n in ("q_proj_weight", "k_proj_weight",
                                              "v_proj_weight"))
    b = P.get(prefix + "in_proj_bias")
    bq, bk, bv = np.split(b, 3) if b is not None else (0, 0, 0)
    Q, K, V = q @ wq.T + bq, k @ wk.T + bk, v @ wv.T + bv
    am, kpm = additive(attn_mask), additive(key_padding_mask)
    if prefix + "bias_k" in P:
        K = np.concatenate([K, np.broadcast_to(P[prefix + "bias_k"], (1, N, E))])
        V = np.concatenate([V, np.broadcast_to(P[prefix + "bias_v"], (1, N, E))])
        am = None if am is None else np.concatenate([am, np.zeros(am.shape[:-1] + (1,))], -1)
        kpm = None if kpm is None else np.concatenate([kpm, np.zeros((N, 1))], -1)

    def split(x):                                            # (S, N, E) -> (N, H, S, d)
        return x.reshape(x.shape[0], N, heads, d).transpose(1, 2, 0, 3)
    Qh, Kh, Vh = split(Q), split(K), split(V)
    if add_zero_attn:
        Kh = np.concatenate([Kh, np.zeros((N, heads, 1, d))], 2)
        Vh = np.concatenate([Vh, np.zeros((N, heads, 1, d))], 2)
        am = None if am is None else np.concatenate([am, np.zeros(am.shape[:-1] + (1,))], -1)
        kpm = None if kpm is None else np.concatenate([kpm, np.zeros((N, 1))], -1)
    S = Kh.shape[2]
    s = Qh @ Kh.transpose(0, 1, 3, 2) / math.sqrt(d)
    if am is not None:
        s = s + (am if am.ndim == 2 else am.reshape(N, heads, L, S))
    if kpm is not None:
        s = s + kpm[:, None, None, :]
    a = np_softmax(s)
    o = (a @ Vh).transpose(2, 0, 1, 3).reshape(L, N, E)
    out = o @ P[prefix + "out_proj.weight"].T + P.get(prefix + "out_proj.bias", 0)
    return out, (a.mean(1) if average else a)


def np_ln(x, P, name, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * P[name + ".weight"] + P[name + ".bias"]


def np_gelu(x):
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def np_ff(x, P, p, act):
    h = act(x @ P[p + "linear1.weight"].T + P[p + "linear1.bias"])
    return h @ P[p + "linear2.weight"].T + P[p + "linear2.bias"]


def np_encoder_layer(x, P, p, heads, norm_first, act, mask=None, kpm=None):
    def sa(y):
        return np_mha(y, y, y, P, heads, p + "self_attn.", mask, kpm)[0]
    if norm_first:
        x = x + sa(np_ln(x, P, p + "norm1"))
        return x + np_ff(np_ln(x, P, p + "norm2"), P, p, act)
    x = np_ln(x + sa(x), P, p + "norm1")
    return np_ln(x + np_ff(x, P, p, act), P, p + "norm2")


def np_decoder_layer(x, mem, P, p, heads, norm_first, act, tgt_mask=None, mem_kpm=None):
    def sa(y):
        return np_mha(y, y, y, P, heads, p + "self_attn.", tgt_mask)[0]

    def ca(y):
        return np_mha(y, mem, mem, P, heads, p + "multihead_attn.", None, mem_kpm)[0]
    if norm_first:
        x = x + sa(np_ln(x, P, p + "norm1"))
        x = x + ca(np_ln(x, P, p + "norm2"))
        return x + np_ff(np_ln(x, P, p + "norm3"), P, p, act)
    x = np_ln(x + sa(x), P, p + "norm1")
    x = np_ln(x + ca(x), P, p + "norm2")
    return np_ln(x + np_ff(x, P, p, act), P, p + "norm3")


def np_transformer(src, tgt, P, heads, n_enc, n_dec, norm_first, act, tgt_mask=None,
                   src_kpm=None):
    mem = src
    for i in range(n_enc):
        mem = np_encoder_layer(mem, P, f"encoder.layers.{i}.", heads, norm_first, act,
                               kpm=src_kpm)
    mem = np_ln(mem, P, "encoder.norm")
    x = tgt
    for i in range(n_dec):
        x = np_decoder_layer(x, mem, P, f"decoder.layers.{i}.", heads, norm_first, act,
                             tgt_mask, src_kpm)
    return np_ln(x, P, "decoder.norm")


def params_of(m):
    return {n: p.numpy(force=True).copy() for n, p in m.named_parameters()}


def randomize_(m, rng):
    """Random values for every parameter (biases and norms included, which start 0/1)."""
    with fnx.no_grad():
        for p in m.parameters():
            p.copy_(fnx.tensor(rng.standard_normal(tuple(p.shape)) * 0.5))
    return m


# ----------------------------------------------------------------------------- attention

def test_mha_kdim_vdim_masks_and_per_head_weights():
    rng = np.random.default_rng(0)
    m = randomize_(nn.MultiheadAttention(8, 2, kdim=3, vdim=5).double(), rng)
    assert m.in_proj_weight is None and tuple(m.k_proj_weight.shape) == (8, 3)
    q, k, v = (rng.standard_normal((4, 2, 8)), rng.standard_normal((6, 2, 3)),
               rng.standard_normal((6, 2, 5)))
    kpm = np.zeros((2, 6), bool)
    kpm[0, 4:] = kpm[1, 0] = True
    am = rng.standard_normal((4, 6))
    out, w = m(fnx.tensor(q), fnx.tensor(k), fnx.tensor(v), key_padding_mask=fnx.tensor(kpm),
               attn_mask=fnx.tensor(am), average_attn_weights=False)
    ro, rw = np_mha(q, k, v, params_of(m), 2, attn_mask=am, key_padding_mask=kpm,
                    average=False)
    assert tuple(w.shape) == (2, 2, 4, 6)
    np.testing.assert_allclose(out.numpy(force=True), ro, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.numpy(force=True), rw, rtol=1e-10, atol=1e-12)
    # need_weights=False takes the fused attention path: same output
    out2, none = m(fnx.tensor(q), fnx.tensor(k), fnx.tensor(v),
                   key_padding_mask=fnx.tensor(kpm), attn_mask=fnx.tensor(am),
                   need_weights=False)
    assert none is None
    np.testing.assert_allclose(out2.numpy(force=True), ro, rtol=1e-10, atol=1e-12)


def test_mha_bias_kv_zero_attn_3d_bool_mask_batch_first():
    rng = np.random.default_rng(1)
    m = randomize_(nn.MultiheadAttention(6, 3, add_bias_kv=True, add_zero_attn=True,
                                         batch_first=True).double(), rng)
    x = rng.standard_normal((2, 4, 6))                        # (N, L, E)
    am = rng.random((2 * 3, 4, 4)) < 0.3
    am[..., 0] = False                                        # every row keeps a key
    out, w = m(fnx.tensor(x), fnx.tensor(x), fnx.tensor(x), attn_mask=fnx.tensor(am))
    xt = x.transpose(1, 0, 2)
    ro, rw = np_mha(xt, xt, xt, params_of(m), 3, attn_mask=am, add_zero_attn=True)
    assert tuple(w.shape) == (2, 4, 6)                        # 4 keys + bias_k + zero
    np.testing.assert_allclose(out.numpy(force=True), ro.transpose(1, 0, 2), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(w.numpy(force=True), rw, rtol=1e-10, atol=1e-12)


def test_mha_unbatched_and_float_key_padding_mask():
    rng = np.random.default_rng(2)
    m = randomize_(nn.MultiheadAttention(4, 2).double(), rng)
    q, k = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
    kpm = np.array([0.0, -1.5, 0.0, 2.0, -np.inf])
    out, w = m(fnx.tensor(q), fnx.tensor(k), fnx.tensor(k), key_padding_mask=fnx.tensor(kpm))
    ro, rw = np_mha(q[:, None], k[:, None], k[:, None], params_of(m), 2,
                    key_padding_mask=kpm[None])
    assert tuple(out.shape) == (3, 4) and tuple(w.shape) == (3, 5)
    np.testing.assert_allclose(out.numpy(force=True), ro[:, 0], rtol=1e-10)
    np.testing.assert_allclose(w.numpy(force=True), rw[0], rtol=1e-10)


def _fd_grads(module, inputs, ref, names=None, seed=0):
    """Gradients of ``sum(module(*inputs) * R)`` against central finite differences of
    ``ref(*inputs, params)`` for every float input and parameter."""
    P = params_of(module)
    expect = ref(*inputs, P)
    R = np.random.default_rng(seed).standard_normal(expect.shape)
    ts = [fnx.tensor(x, requires_grad=True) for x in inputs]
    out = module(*ts)
    out = out[0] if isinstance(out, tuple) else out
    np.testing.assert_allclose(out.numpy(force=True), expect, rtol=1e-9, atol=1e-11)
    (out * fnx.tensor(R)).sum().backward()
    env = dict(P, **{f"in{i}": x.copy() for i, x in enumerate(inputs)})

    def f():
        res = ref(*[env[f"in{i}"] for i in range(len(inputs))], env)
        return float((res * R).sum())

    def numeric(key, eps=1e-6):
        a, g = env[key], np.zeros_like(env[key])
        for idx in np.ndindex(a.shape):
            old = a[idx]
            a[idx] = old + eps
            fp = f()
            a[idx] = old - eps
            fm = f()
            a[idx] = old
            g[idx] = (fp - fm) / (2 * eps)
        return g

    for i, t in enumerate(ts):
        np.testing.assert_allclose(t.grad.numpy(), numeric(f"in{i}"), rtol=1e-5, atol=1e-7,
                                   err_msg=f"input {i}")
    for name, p in module.named_parameters():
        if names is None or name in names:
            np.testing.assert_allclose(p.grad.numpy(), numeric(name), rtol=1e-5, atol=1e-7,
                                       err_msg=name)


class _Bound(nn.Module):
    """``MultiheadAttention`` with a fixed attention mask, so its parameters keep their
    names (``named_parameters`` of the wrapped module)."""

    def __init__(self, mha, mask):
        super().__init__()
        self.mha = mha
        self.mask = fnx.tensor(mask)

    def named_parameters(self, *args, **kwargs):
        return self.mha.named_parameters(*args, **kwargs)

    def forward(self, q, k, v):
        return self.mha(q, k, v, attn_mask=self.mask)


def test_mha_gradients_finite_differences():
    rng = np.random.default_rng(3)
    m = randomize_(nn.MultiheadAttention(4, 2, kdim=3, vdim=2).double(), rng)
    am = np.triu(np.ones((3, 2), bool), 1)
    _fd_grads(_Bound(m, am),
              [rng.standard_normal((3, 2, 4)), rng.standard_normal((2, 2, 3)),
               rng.standard_normal((2, 2, 2))],
              lambda q, k, v, P: np_mha(q, k, v, P, 2, attn_mask=am)[0])


# ----------------------------------------------------------------------------- layers, model

@pytest.mark.parametrize("norm_first,activation", [(False, "relu"), (True, "gelu"),
                                                   (False, F.gelu)])
def test_decoder_layer_matches_numpy(norm_first, activation):
    rng = np.random.default_rng(4)
    layer = randomize_(nn.TransformerDecoderLayer(8, 2, 12, dropout=0.0, norm_first=norm_first,
                                                  activation=activation).double(), rng)
    act = (lambda x: np.maximum(x, 0)) if activation == "relu" else np_gelu
    tgt, mem = rng.standard_normal((5, 2, 8)), rng.standard_normal((3, 2, 8))
    causal = nn.Transformer.generate_square_subsequent_mask(5, dtype=fnx.float64)
    mem_kpm = np.array([[False, False, True], [False, False, False]])
    out = layer(fnx.tensor(tgt), fnx.tensor(mem), tgt_mask=causal,
                memory_key_padding_mask=fnx.tensor(mem_kpm), tgt_is_causal=True)
    ref = np_decoder_layer(tgt, mem, params_of(layer), "", 2, norm_first, act,
                           np.triu(np.full((5, 5), -np.inf), 1), mem_kpm)
    np.testing.assert_allclose(out.numpy(force=True), ref, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("norm_first,batch_first", [(False, False), (True, True)])
def test_transformer_matches_numpy(norm_first, batch_first):
    rng = np.random.default_rng(5)
    model = randomize_(nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, norm_first=norm_first,
                                      batch_first=batch_first).double(), rng)
    src, tgt = rng.standard_normal((6, 2, 8)), rng.standard_normal((4, 2, 8))
    src_kpm = np.zeros((2, 6), bool)
    src_kpm[1, 3:] = True
    mask = nn.Transformer.generate_square_subsequent_mask(4, dtype=fnx.float64)
    tr = (lambda a: a.transpose(1, 0, 2)) if batch_first else (lambda a: a)
    out = model(fnx.tensor(tr(src)), fnx.tensor(tr(tgt)), tgt_mask=mask,
                src_key_padding_mask=fnx.tensor(src_kpm),
                memory_key_padding_mask=fnx.tensor(src_kpm))
    ref = np_transformer(src, tgt, params_of(model), 2, 2, 2, norm_first,
                         lambda x: np.maximum(x, 0), np.triu(np.full((4, 4), -np.inf), 1),
                         src_kpm)
    np.testing.assert_allclose(out.numpy(force=True), tr(ref), rtol=1e-9, atol=1e-11)


def test_transformer_gradients_finite_differences():
    rng = np.random.default_rng(6)
    model = randomize_(nn.Transformer(4, 2, 1, 1, 6, dropout=0.0).double(), rng)
    mask = np.triu(np.full((3, 3), -np.inf), 1)

    class WithMask(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def named_parameters(self, *args, **kwargs):
            return model.named_parameters(*args, **kwargs)

        def forward(self, src, tgt):
            return model(src, tgt, tgt_mask=fnx.tensor(mask))

    def relu(x):
        return np.maximum(x, 0)

    _fd_grads(WithMask(), [rng.standard_normal((4, 2, 4)), rng.standard_normal((3, 2, 4))],
              lambda s, t, P: np_transformer(s, t, P, 2, 1, 1, False, relu, mask))


def test_compiled_transformer_matches_eager():
    fnx.manual_seed(0)
    model = nn.Transformer(16, 4, 1, 1, 32, dropout=0.0, batch_first=True)
    src, tgt = fnx.randn(2, 7, 16), fnx.randn(2, 5, 16)
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    eager = model(src, tgt, tgt_mask=mask, tgt_is_causal=True)
    eager.square().sum().backward()
    grads = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
    model.zero_grad()
    out = fnx.compile(model)(src, tgt, tgt_mask=mask, tgt_is_causal=True)
    out.square().sum().backward()
    np.testing.assert_allclose(out.numpy(force=True), eager.numpy(force=True), rtol=1e-5,
                               atol=1e-5)
    for n, p in model.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), grads[n], rtol=1e-4, atol=1e-5, err_msg=n)


def test_transformer_module_structure_init_and_errors():
    fnx.manual_seed(0)
    model = nn.Transformer(16, 4, 2, 2, 32)
    keys = list(model.state_dict())
    assert len(keys) == 64
    assert keys[:4] == ["encoder.layers.0.self_attn.in_proj_weight",
                        "encoder.layers.0.self_attn.in_proj_bias",
                        "encoder.layers.0.self_attn.out_proj.weight",
                        "encoder.layers.0.self_attn.out_proj.bias"]
    for k in ("encoder.norm.weight", "decoder.norm.bias",
              "decoder.layers.1.multihead_attn.in_proj_weight", "decoder.layers.0.norm3.weight"):
        assert k in keys
    assert isinstance(model, nn.Module) and model.d_model == 16 and model.nhead == 4
    w = model.decoder.layers[0].linear1.weight.numpy(force=True)      # xavier: U(+-sqrt(6/48))
    bound = math.sqrt(6 / (16 + 32))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert model.encoder.layers[0].linear1.weight is not model.encoder.layers[1].linear1.weight
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(fnx.randn(3, 2, 16), fnx.randn(3, 4, 16))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal "
                                           "to d_model"):
        model(fnx.randn(3, 2, 16), fnx.randn(3, 2, 8))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerDecoderLayer(8, 2, activation="tanh")
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.Transformer(10, 3)
    # unbatched src/tgt
    assert tuple(model.eval()(fnx.randn(5, 16), fnx.randn(3, 16)).shape) == (3, 16)
    # custom encoder/decoder are used as given
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32), 1)
    assert nn.Transformer(16, 4, custom_encoder=enc, num_decoder_layers=1).encoder is enc


def test_cuda_backend_matches_numpy():
    if not fnx.cuda.is_available():
        pytest.skip("no CUDA backend available (set FNX_CUDA_ON_CPU=1 to emulate one)")
    rng = np.random.default_rng(7)
    model = randomize_(nn.Transformer(8, 2, 1, 1, 16, dropout=0.0).double(), rng)
    src, tgt = rng.standard_normal((5, 2, 8)), rng.standard_normal((3, 2, 8))
    ref = np_transformer(src, tgt, params_of(model), 2, 1, 1, False,
                         lambda x: np.maximum(x, 0), np.triu(np.full((3, 3), -np.inf), 1))
    model.cuda()
    mask = nn.Transformer.generate_square_subsequent_mask(3, device="cuda", dtype=fnx.float64)
    out = model(fnx.tensor(src, device="cuda"), fnx.tensor(tgt, device="cuda"), tgt_mask=mask)
    assert out.device.type == "cuda"
    np.testing.assert_allclose(out.numpy(force=True), ref, rtol=1e-9, atol=1e-11)


class TransformerLM(nn.Transformer):
    """A language model written as PyTorch programs write one: a subclass of
    ``nn.Transformer`` that keeps its encoder, replaces its decoder by a ``Linear`` head and
    adds a causal mask made with ``log(tril(ones))``."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers):
        super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                         num_encoder_layers=nlayers, dropout=0.0)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)

    def forward(self, src):
        mask = fnx.log(fnx.tril(fnx.ones(len(src), len(src))))
        src = self.input_emb(src) * math.sqrt(self.ninp)
        return F.log_softmax(self.decoder(self.encoder(src, mask=mask)), dim=-1)


def test_transformer_subclass_program():
    fnx.manual_seed(0)
    model = TransformerLM(20, 8, 2, 16, 2)
    assert "decoder.weight" in model.state_dict() and "decoder.layers.0.norm1.weight" not in \
        model.state_dict()
    tokens = fnx.randint(0, 20, (6, 3))
    out = model(tokens)
    P = params_of(model)
    src = P["input_emb.weight"][tokens.numpy()] * math.sqrt(8)
    mask = np.triu(np.full((6, 6), -np.inf), 1)
    mem = src
    for i in range(2):
        mem = np_encoder_layer(mem, P, f"encoder.layers.{i}.", 2, False,
                               lambda x: np.maximum(x, 0), mask=mask)
    logits = np_ln(mem, P, "encoder.norm") @ P["decoder.weight"].T + P["decoder.bias"]
    ref = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    np.testing.assert_allclose(out.numpy(force=True), ref, rtol=1e-4, atol=1e-5)
    loss = F.nll_loss(out.view(-1, 20), fnx.randint(0, 20, (18,)))
    loss.backward()
    assert model.encoder.layers[1].self_attn.in_proj_weight.grad is not None
