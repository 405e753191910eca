"""Every layer's forward against a hand-written NumPy reference with the same weights, and
its backward (gradients of the input and of every parameter) against central finite
differences of that NumPy reference, in float64.  Also: default initializations, running
statistics, dropout, and PyTorch's errors for inputs of the wrong shape."""
import math

import numpy as np
import pytest
from scipy.special import erf

import fnx
import fnx.nn as nn
import fnx.nn.functional as F
from fnx.testing import models


def _numeric_grad(f, env, key, eps=1e-6):
    a = env[key]
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        old = a[idx]
        a[idx] = old + eps
        fp = f()
        a[idx] = old - eps
        fm = f()
        a[idx] = old
        g[idx] = (fp - fm) / (2 * eps)
    return g


def check(module, inputs, ref, *, grad=True, rtol=1e-6, atol=1e-8, seed=0, skip=()):
    """``module(*inputs)`` (float64) equals ``ref(*inputs, params)``; with ``grad``, the
    gradients of float inputs and of every parameter equal finite differences of
    ``sum(ref(...) * R)`` for a random ``R``."""
    module.double()
    params = {n: p.numpy(force=True).copy() for n, p in module.named_parameters()}
    ts = [fnx.tensor(x, requires_grad=x.dtype.kind == "f") for x in inputs]
    out = module(*ts)
    if isinstance(out, tuple):
        out = out[0]
    expect = ref(*inputs, params)
    assert out.dtype is fnx.float64 and tuple(out.shape) == expect.shape
    np.testing.assert_allclose(out.numpy(force=True), expect, rtol=rtol, atol=atol)
    if not grad:
        return out
    r = np.random.default_rng(seed).standard_normal(expect.shape)
    (out * fnx.tensor(r)).sum().backward()
    env = {f"in{i}": x.astype(np.float64) if x.dtype.kind == "f" else x
           for i, x in enumerate(inputs)}
    env.update({k: v.copy() for k, v in params.items()})

    def f():
        res = ref(*[env[f"in{i}"] for i in range(len(inputs))], {k: env[k] for k in params})
        return float((res * r).sum())

    for i, (x, t) in enumerate(zip(inputs, ts)):
        if x.dtype.kind == "f" and f"in{i}" not in skip:
            assert t.grad is not None, f"no gradient for input {i}"
            np.testing.assert_allclose(t.grad.numpy(), _numeric_grad(f, env, f"in{i}"),
                                       rtol=1e-5, atol=1e-6, err_msg=f"input {i}")
    for name, p in module.named_parameters():
        if name in skip:
            continue
        assert p.grad is not None, f"no gradient for {name}"
        np.testing.assert_allclose(p.grad.numpy(), _numeric_grad(f, env, name), rtol=1e-5,
                                   atol=1e-6, err_msg=name)
    return out


def away_from_zero(rng, *shape):
    """Random values with |x| >= 0.1 (no kinks of relu-like functions in reach of the
    finite differences)."""
    x = rng.standard_normal(shape)
    return np.sign(x) * (0.1 + np.abs(x))


# ----------------------------------------------------------------------------- NumPy references

def np_conv2d(x, w, b=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                           j * dw:j * dw + sw * (ow - 1) + 1:sw]
                out[:, g * og:(g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    return out


def np_conv_transpose2d(x, w, b=None, stride=(1, 1), padding=(0, 0), output_padding=(0, 0),
                        groups=1, dilation=(1, 1)):
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    (sh, sw), (ph, pw), (oph, opw), (dh, dw) = stride, padding, output_padding, dilation
    fh, fw = (h - 1) * sh + dh * (kh - 1) + 1 + oph, (wd - 1) * sw + dw * (kw - 1) + 1 + opw
    full = np.zeros((n, og * groups, fh, fw))
    cg = c // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                full[:, g * og:(g + 1) * og, i * dh:i * dh + sh * (h - 1) + 1:sh,
                     j * dw:j * dw + sw * (wd - 1) + 1:sw] += np.einsum(
                    "nchw,co->nohw", x[:, g * cg:(g + 1) * cg], w[g * cg:(g + 1) * cg, :, i, j])
    out = full[:, :, ph:fh - ph, pw:fw - pw]
    if b is not None:
        out = out + b[None, :, None, None]
    return out


def np_max_pool2d(x, k, s, p=0):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=-np.inf)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.empty((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = xp[:, :, i * s:i * s + k, j * s:j * s + k].max(axis=(2, 3))
    return out


def np_avg_pool2d(x, k, s, p=0):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.empty((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = xp[:, :, i * s:i * s + k, j * s:j * s + k].sum(axis=(2, 3)) / k / k
    return out


def np_adaptive_avg_pool2d(x, size):
    n, c, h, w = x.shape
    oh, ow = size
    out = np.empty((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, h1 = (i * h) // oh, -(-(i + 1) * h // oh)
            w0, w1 = (j * w) // ow, -(-(j + 1) * w // ow)
            out[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return out


def np_layer_norm(x, w, b, eps, dims):
    axes = tuple(range(x.ndim - dims, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def np_mha(q, k, v, P, heads, prefix="", mask=None):
    """(L, N, E) multi-head attention with packed in-projection; returns (out, weights)."""
    e = q.shape[-1]
    d = e // heads
    wq, wk, wv = np.split(P[prefix + "in_proj_weight"], 3)
    bq, bk, bv = np.split(P[prefix + "in_proj_bias"], 3)

    def heads_of(x, w, b):
        y = x @ w.T + b                                     # (L, N, E)
        return y.reshape(y.shape[0], y.shape[1], heads, d).transpose(1, 2, 0, 3)
    qh, kh, vh = heads_of(q, wq, bq), heads_of(k, wk, bk), heads_of(v, wv, bv)
    s = qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(d)
    if mask is not None:
        s = s + mask
    a = np_softmax(s)
    o = (a @ vh).transpose(2, 0, 1, 3).reshape(q.shape[0], q.shape[1], e)
    return o @ P[prefix + "out_proj.weight"].T + P[prefix + "out_proj.bias"], a.mean(axis=1)


# ----------------------------------------------------------------------------- linear, conv

def test_linear(rng):
    fnx.manual_seed(0)
    check(nn.Linear(5, 3), [rng.standard_normal((4, 5))],
          lambda x, P: x @ P["weight"].T + P["bias"])
    check(nn.Linear(5, 3, bias=False), [rng.standard_normal((2, 4, 5))],
          lambda x, P: x @ P["weight"].T)


def test_linear_input_shape_error():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(20x7 and 10x5\)"):
        nn.Linear(10, 5)(fnx.randn(20, 7))


def test_bilinear(rng):
    check(nn.Bilinear(3, 4, 2), [rng.standard_normal((5, 3)), rng.standard_normal((5, 4))],
          lambda a, b, P: np.einsum("ni,oij,nj->no", a, P["weight"], b) + P["bias"])
    with pytest.raises(RuntimeError, match="bilinear"):
        nn.Bilinear(3, 4, 2)(fnx.randn(5, 3), fnx.randn(5, 5))


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1), dict(dilation=2, padding=2),
                                dict(groups=2, padding=1), dict(padding="same")])
def test_conv2d(rng, kw):
    m = nn.Conv2d(4, 6, 3, **kw)
    pad = m.padding if not isinstance(m.padding, str) else (1, 1)
    check(m, [rng.standard_normal((2, 4, 6, 5))],
          lambda x, P: np_conv2d(x, P["weight"], P["bias"], m.stride, pad, m.dilation,
                                 m.groups))


def test_conv2d_unbatched_and_padding_modes(rng):
    m = nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect", bias=False)
    x = rng.standard_normal((2, 5, 5))
    check(m, [x], lambda x, P: np_conv2d(np.pad(x[None], ((0, 0), (0, 0), (1, 1), (1, 1)),
                                                mode="reflect"), P["weight"])[0])
    m = nn.Conv2d(2, 3, 3, padding=1, padding_mode="circular")
    check(m, [x[None]], lambda x, P: np_conv2d(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)),
                                                      mode="wrap"), P["weight"], P["bias"]),
          grad=False)


def test_conv1d(rng):
    m = nn.Conv1d(3, 4, 3, stride=2, padding=1)
    check(m, [rng.standard_normal((2, 3, 9))],
          lambda x, P: np_conv2d(x[:, :, None], P["weight"][:, :, None], P["bias"],
                                 (1, 2), (0, 1))[:, :, 0])


def test_conv_transpose2d(rng):
    m = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)
    check(m, [rng.standard_normal((2, 4, 3, 4))],
          lambda x, P: np_conv_transpose2d(x, P["weight"], P["bias"], (2, 2), (1, 1), (1, 1)))
    m = nn.ConvTranspose2d(4, 6, 2, groups=2, bias=False)
    check(m, [rng.standard_normal((1, 4, 3, 3))],
          lambda x, P: np_conv_transpose2d(x, P["weight"], None, groups=2))


def test_conv_transpose2d_output_size():
    m = nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1)
    x = fnx.randn(1, 2, 4, 4)
    assert m(x).shape == (1, 2, 7, 7)
    assert m(x, output_size=[8, 8]).shape == (1, 2, 8, 8)
    with pytest.raises(ValueError, match="requested an output size of \\[9, 9\\], but valid "
                                         "sizes range from 7 to 8"):
        m(x, output_size=[9, 9])


def test_conv_errors():
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input "
                                           r"to conv2d, but got input of size: \[3, 3\]"):
        nn.Conv2d(1, 2, 3)(fnx.randn(3, 3))
    with pytest.raises(RuntimeError, match=r"expected input\[1, 4, 5, 5\] to have 3 channels, "
                                           r"but got 4 channels instead"):
        nn.Conv2d(3, 2, 3)(fnx.randn(1, 4, 5, 5))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided "
                                         "convolutions"):
        nn.Conv2d(3, 4, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(3, 4, 3, padding_mode="mirror")


# ----------------------------------------------------------------------------- pooling

def test_max_pool2d(rng):
    x = rng.permutation(2 * 3 * 6 * 6).reshape(2, 3, 6, 6) / 10.0     # distinct: no ties
    check(nn.MaxPool2d(2), [x], lambda x, P: np_max_pool2d(x, 2, 2))
    check(nn.MaxPool2d(3, stride=2, padding=1), [x], lambda x, P: np_max_pool2d(x, 3, 2, 1))
    with pytest.raises(RuntimeError, match="Expected 3D or 4D"):
        nn.MaxPool2d(2)(fnx.randn(5, 5))


def test_avg_and_adaptive_pool2d(rng):
    x = rng.standard_normal((2, 3, 6, 7))
    check(nn.AvgPool2d(2), [x], lambda x, P: np_avg_pool2d(x, 2, 2))
    check(nn.AvgPool2d(3, stride=2, padding=1), [x], lambda x, P: np_avg_pool2d(x, 3, 2, 1))
    check(nn.AdaptiveAvgPool2d((3, 2)), [x], lambda x, P: np_adaptive_avg_pool2d(x, (3, 2)))
    check(nn.AdaptiveAvgPool2d(1), [x], lambda x, P: x.mean(axis=(2, 3), keepdims=True))


def test_adaptive_max_pool2d(rng):
    x = rng.permutation(2 * 6 * 6).reshape(1, 2, 6, 6).astype(np.float64)
    out = nn.AdaptiveMaxPool2d(2)(fnx.tensor(x))
    assert out.numpy().tolist() == np_max_pool2d(x, 3, 3).tolist()


# ----------------------------------------------------------------------------- normalization

def test_layer_norm(rng):
    check(nn.LayerNorm(5), [rng.standard_normal((3, 5))],
          lambda x, P: np_layer_norm(x, P["weight"], P["bias"], 1e-5, 1))
    m = nn.LayerNorm((2, 3), eps=1e-3)
    with fnx.no_grad():        # non-trivial affine weights
        m.weight.copy_(fnx.tensor(rng.standard_normal((2, 3))))
        m.bias.copy_(fnx.tensor(rng.standard_normal((2, 3))))
    check(m, [rng.standard_normal((4, 2, 3))],
          lambda x, P: np_layer_norm(x, P["weight"], P["bias"], 1e-3, 2))
    check(nn.LayerNorm(4, elementwise_affine=False), [rng.standard_normal((2, 4))],
          lambda x, P: np_layer_norm(x, None, None, 1e-5, 1))
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[5\], expected input with "
                                           r"shape \[\*, 5\], but got input of size"):
        nn.LayerNorm(5)(fnx.randn(3, 4))


def test_group_norm(rng):
    m = nn.GroupNorm(2, 4)
    with fnx.no_grad():
        m.weight.copy_(fnx.tensor(rng.standard_normal(4)))

    def ref(x, P):
        n, c = x.shape[:2]
        g = x.reshape(n, 2, -1)
        mu, var = g.mean(-1, keepdims=True), g.var(-1, keepdims=True)
        y = ((g - mu) / np.sqrt(var + 1e-5)).reshape(x.shape)
        shape = (1, c) + (1,) * (x.ndim - 2)
        return y * P["weight"].reshape(shape) + P["bias"].reshape(shape)
    check(m, [rng.standard_normal((3, 4, 5))], ref)
    with pytest.raises(ValueError,
                       match=r"num_channels \(4\) must be divisible by num_groups \(3\)"):
        nn.GroupNorm(3, 4)


def test_rms_norm(rng):
    m = nn.RMSNorm(4, eps=1e-6)
    with fnx.no_grad():
        m.weight.copy_(fnx.tensor(rng.standard_normal(4)))
    check(m, [rng.standard_normal((3, 4))],
          lambda x, P: x / np.sqrt((x ** 2).mean(-1, keepdims=True) + 1e-6) * P["weight"])
    # eps=None: the dtype's machine epsilon, as PyTorch
    m = nn.RMSNorm(4).double()
    x = rng.standard_normal((2, 4)) * 1e-9
    expect = x / np.sqrt((x ** 2).mean(-1, keepdims=True) + np.finfo(np.float64).eps)
    np.testing.assert_allclose(m(fnx.tensor(x)).numpy(force=True), expect, rtol=1e-6)


def _bn_ref(x, P, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mu, var = x.mean(axis=axes), x.var(axis=axes)
    y = (x - mu.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    return y * P["weight"].reshape(shape) + P["bias"].reshape(shape)


def test_batch_norm_training_forward_backward_and_running_stats(rng):
    m = nn.BatchNorm2d(3, momentum=0.2)
    with fnx.no_grad():
        m.weight.copy_(fnx.tensor(rng.standard_normal(3)))
        m.bias.copy_(fnx.tensor(rng.standard_normal(3)))
    x = rng.standard_normal((4, 3, 2, 3))
    check(m, [x], _bn_ref)
    # one training forward ran inside check: running stats moved by momentum, unbiased var
    n = x.size // 3
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3)) * n / (n - 1)
    np.testing.assert_allclose(m.running_mean.numpy(), 0.2 * mean, rtol=1e-10)
    np.testing.assert_allclose(m.running_var.numpy(), 0.8 + 0.2 * var, rtol=1e-10)
    assert m.num_batches_tracked.item() == 1 and m.num_batches_tracked.dtype is fnx.int64
    # eval uses the running statistics
    m.eval()
    y = m(fnx.tensor(x)).numpy(force=True)
    shape = (1, 3, 1, 1)
    expect = (x - m.running_mean.numpy().reshape(shape)) / np.sqrt(
        m.running_var.numpy().reshape(shape) + 1e-5) * m.weight.numpy(force=True).reshape(
        shape) + m.bias.numpy(force=True).reshape(shape)
    np.testing.assert_allclose(y, expect, rtol=1e-10)
    assert m.num_batches_tracked.item() == 1


def test_batch_norm1d_and_cumulative_momentum(rng):
    check(nn.BatchNorm1d(4), [rng.standard_normal((6, 4))], _bn_ref)
    check(nn.BatchNorm1d(2), [rng.standard_normal((3, 2, 5))], _bn_ref)
    m = nn.BatchNorm1d(2, momentum=None).double()
    xs = [rng.standard_normal((5, 2)) for _ in range(3)]
    for x in xs:
        m(fnx.tensor(x))
    # momentum=None: the running mean is the plain average of the batch means
    np.testing.assert_allclose(m.running_mean.numpy(), np.mean([x.mean(0) for x in xs], 0),
                               rtol=1e-10)
    m = nn.BatchNorm1d(2, affine=False, track_running_stats=False)
    assert m.running_mean is None and list(m.state_dict()) == []
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(2)(fnx.randn(2, 2, 2, 2))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(2)(fnx.randn(2, 2, 2))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when "
                                         "training"):
        nn.BatchNorm1d(2)(fnx.randn(1, 2))


# ----------------------------------------------------------------------------- embedding

def test_embedding_forward_backward_padding(rng):
    m = nn.Embedding(6, 3, padding_idx=2)
    assert m.weight[2].abs().sum().item() == 0.0
    m.double()
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    out = m(fnx.tensor(idx))
    w = m.weight.numpy(force=True)
    np.testing.assert_array_equal(out.numpy(force=True), w[idx])
    r = rng.standard_normal(out.shape)
    (out * fnx.tensor(r)).sum().backward()
    expect = np.zeros_like(w)
    np.add.at(expect, idx, r)
    expect[2] = 0                                    # padding_idx gets no gradient
    np.testing.assert_allclose(m.weight.grad.numpy(), expect, rtol=1e-12)
    assert nn.Embedding(5, 2, padding_idx=-1).padding_idx == 4
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 2, padding_idx=5)
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar "
                                           "types: Long, Int"):
        m(fnx.tensor([1.0]))
    with pytest.raises(IndexError, match="index out of range in self"):
        m(fnx.tensor([6]))


def test_embedding_from_pretrained_and_max_norm():
    w = fnx.tensor([[3.0, 4.0], [0.3, 0.4]], dtype=fnx.float64)
    e = nn.Embedding.from_pretrained(w)
    assert not e.weight.requires_grad and e(fnx.tensor([1])).tolist() == [[0.3, 0.4]]
    e = nn.Embedding.from_pretrained(w.clone(), max_norm=1.0)
    out = e(fnx.tensor([0, 1]))
    np.testing.assert_allclose(out.numpy(force=True), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-5)
    np.testing.assert_allclose(e.weight.numpy(force=True)[0], [0.6, 0.8], rtol=1e-5)


# ----------------------------------------------------------------------------- activations

@pytest.mark.parametrize("module,ref", [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.GELU(), np_gelu),
    (nn.GELU(approximate="tanh"), lambda x: np_gelu(x, "tanh")),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.Tanh(), np.tanh),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.ELU(), lambda x: np.where(x > 0, x, np.exp(x) - 1)),
    (nn.Softplus(), lambda x: np.log1p(np.exp(x))),
    (nn.Hardtanh(-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5)),
    (nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    (nn.Mish(), lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    (nn.Identity(), lambda x: x),
    (nn.Softmax(dim=1), lambda x: np_softmax(x, 1)),
    (nn.Softmax(dim=-1), np_softmax),
    (nn.LogSoftmax(dim=1), lambda x: np.log(np_softmax(x, 1))),
    (nn.Softmin(dim=1), lambda x: np_softmax(-x, 1)),
])
def test_activations(rng, module, ref):
    x = away_from_zero(rng, 3, 4)
    x[np.abs(np.abs(x) - 0.5) < 0.05] = 0.7         # away from the hardtanh kinks too
    check(module, [x], lambda x, P: ref(x))


def test_prelu_and_glu(rng):
    m = nn.PReLU(3, init=0.3)
    check(m, [away_from_zero(rng, 2, 3, 4)],
          lambda x, P: np.where(x > 0, x, P["weight"][None, :, None] * x))
    x = rng.standard_normal((2, 6))
    check(nn.GLU(), [x], lambda x, P: x[:, :3] / (1 + np.exp(-x[:, 3:])))


def test_inplace_activation_writes_input():
    x = fnx.tensor([-1.0, 2.0])
    y = nn.ReLU(inplace=True)(x)
    assert y is x and x.tolist() == [0.0, 2.0]
    x = fnx.tensor([-1.0, 2.0])
    nn.SiLU(inplace=True)(x)
    np.testing.assert_allclose(x.numpy(), [-1 / (1 + math.e), 2 / (1 + math.exp(-2))],
                               rtol=1e-6)


def test_flatten_unflatten(rng):
    x = rng.standard_normal((2, 3, 4))
    check(nn.Flatten(), [x], lambda x, P: x.reshape(2, 12))
    check(nn.Flatten(0, 1), [x], lambda x, P: x.reshape(6, 4))
    check(nn.Unflatten(2, (2, 2)), [x], lambda x, P: x.reshape(2, 3, 2, 2))


# ----------------------------------------------------------------------------- dropout

def test_dropout_train_and_eval():
    fnx.manual_seed(0)
    d = nn.Dropout(0.25)
    x = fnx.ones(200, 50, requires_grad=True)
    y = d(x)
    vals = np.unique(y.numpy(force=True))
    np.testing.assert_allclose(vals, [0.0, 1 / 0.75], rtol=1e-6)
    kept = (y.numpy(force=True) != 0).mean()
    assert abs(kept - 0.75) < 0.02
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.numpy(force=True), rtol=1e-6)  # mask/(1-p)
    d.eval()
    z = fnx.randn(3, 4)
    assert np.array_equal(d(z).numpy(), z.numpy())
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        nn.Dropout(1.5)
    d2 = nn.Dropout2d(0.5)
    y = d2(fnx.ones(8, 16, 3, 3)).numpy()
    per_channel = y.reshape(8, 16, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1)).all()


# ----------------------------------------------------------------------------- attention

def test_multihead_attention(rng):
    m = nn.MultiheadAttention(8, 2)
    with fnx.no_grad():
        m.in_proj_bias.copy_(fnx.tensor(rng.standard_normal(24) * 0.1))
    q, k, v = (rng.standard_normal((4, 2, 8)), rng.standard_normal((5, 2, 8)),
               rng.standard_normal((5, 2, 8)))
    check(m, [q, k, v], lambda q, k, v, P: np_mha(q, k, v, P, 2)[0])
    out, w = m(fnx.tensor(q), fnx.tensor(k), fnx.tensor(v))
    np.testing.assert_allclose(w.numpy(force=True),
                               np_mha(q, k, v, {n: p.numpy(force=True) for n, p in
                                                m.named_parameters()}, 2)[1], rtol=1e-8)
    # batch_first, self-attention with a boolean causal mask, no weights (the SDPA path)
    m = nn.MultiheadAttention(8, 4, batch_first=True).double()
    x = rng.standard_normal((2, 5, 8))
    mask = np.triu(np.ones((5, 5), bool), 1)
    P = {n: p.numpy(force=True) for n, p in m.named_parameters()}
    out, w = m(fnx.tensor(x), fnx.tensor(x), fnx.tensor(x), attn_mask=fnx.tensor(mask),
               need_weights=False)
    xt = x.transpose(1, 0, 2)
    expect = np_mha(xt, xt, xt, P, 4, mask=np.where(mask, -np.inf, 0.0))[0].transpose(1, 0, 2)
    assert w is None
    np.testing.assert_allclose(out.numpy(force=True), expect, rtol=1e-8, atol=1e-12)
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(10, 3)


def test_multihead_attention_init():
    fnx.manual_seed(0)
    m = nn.MultiheadAttention(16, 4)
    bound = math.sqrt(6 / (16 + 48))                  # xavier_uniform over [3E, E]
    w = m.in_proj_weight.numpy(force=True)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert not m.in_proj_bias.numpy(force=True).any()
    assert not m.out_proj.bias.numpy(force=True).any()


def test_transformer_encoder_layer(rng):
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)

    def ref(x, P):
        xt = x.transpose(1, 0, 2)
        sa = np_mha(xt, xt, xt, P, 2, "self_attn.")[0].transpose(1, 0, 2)
        h = np_layer_norm(x + sa, P["norm1.weight"], P["norm1.bias"], 1e-5, 1)
        ff = np.maximum(h @ P["linear1.weight"].T + P["linear1.bias"], 0)
        ff = ff @ P["linear2.weight"].T + P["linear2.bias"]
        return np_layer_norm(h + ff, P["norm2.weight"], P["norm2.bias"], 1e-5, 1)
    check(layer, [rng.standard_normal((2, 3, 8))], ref)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, 0.0, norm_first=True,
                                                           activation="gelu"), 2)
    assert [n for n, _ in enc.named_children()] == ["layers"]
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    x = fnx.randn(4, 2, 8)
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    assert enc(x, mask=mask, is_causal=True).shape == (4, 2, 8)
    assert mask.tolist()[0] == [0.0, -math.inf, -math.inf, -math.inf]


# ----------------------------------------------------------------------------- initialization

def test_default_initializations_follow_pytorch():
    fnx.manual_seed(0)
    lin = nn.Linear(50, 40)
    bound = 1 / math.sqrt(50)                         # kaiming_uniform(a=sqrt(5)) = 1/sqrt(fan_in)
    w, b = lin.weight.numpy(force=True), lin.bias.numpy(force=True)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01
    assert np.abs(b).max() <= bound
    conv = nn.Conv2d(4, 8, 3)
    bound = 1 / math.sqrt(4 * 9)
    assert np.abs(conv.weight.numpy(force=True)).max() <= bound
    assert np.abs(conv.bias.numpy(force=True)).max() <= bound
    emb = nn.Embedding(1000, 20).weight.numpy(force=True)
    assert abs(emb.mean()) < 0.02 and abs(emb.std() - 1) < 0.02
    bn = nn.BatchNorm2d(3)
    assert bn.weight.tolist() == [1.0] * 3 and bn.bias.tolist() == [0.0] * 3
    assert bn.running_var.tolist() == [1.0] * 3
    ln = nn.LayerNorm(3)
    assert ln.weight.tolist() == [1.0] * 3 and ln.bias.tolist() == [0.0] * 3
    # reproducible from the global seed
    fnx.manual_seed(7)
    a = nn.Linear(3, 3).weight.numpy(force=True).copy()
    fnx.manual_seed(7)
    assert np.array_equal(a, nn.Linear(3, 3).weight.numpy(force=True))


def test_init_functions():
    g = fnx.Generator().manual_seed(0)
    w = nn.init.xavier_normal_(fnx.empty(200, 300), generator=g)
    assert abs(w.numpy().std() - math.sqrt(2 / 500)) < 0.002
    w = nn.init.kaiming_normal_(fnx.empty(200, 300), mode="fan_out", nonlinearity="relu")
    assert abs(w.numpy().std() - math.sqrt(2 / 200)) < 0.003
    w = nn.init.trunc_normal_(fnx.empty(10000), std=1.0, a=-1.0, b=1.0)
    assert w.numpy().min() >= -1 and w.numpy().max() <= 1 and w.numpy().std() > 0.45
    assert nn.init.eye_(fnx.empty(2, 3)).tolist() == [[1, 0, 0], [0, 1, 0]]
    assert nn.init.constant_(fnx.empty(2), 0.5).tolist() == [0.5, 0.5]
    q = nn.init.orthogonal_(fnx.empty(3, 5)).numpy()
    np.testing.assert_allclose(q @ q.T, np.eye(3), atol=1e-5)
    d = nn.init.dirac_(fnx.empty(2, 2, 3, 3))
    x = fnx.randn(1, 2, 5, 5)
    np.testing.assert_allclose(F.conv2d(x, d, padding=1).numpy(), x.numpy(), rtol=1e-6)
    assert nn.init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
        nn.init.xavier_uniform_(fnx.empty(3))
    p = nn.Parameter(fnx.empty(3, 3))
    nn.init.uniform_(p)                               # under no_grad: no graph, still a leaf
    assert p.is_leaf and p.grad_fn is None


# ----------------------------------------------------------------------------- functional

def test_functional_extras(rng):
    x = rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(F.normalize(fnx.tensor(x), dim=-1).numpy(),
                               x / np.linalg.norm(x, axis=-1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(F.pad(fnx.tensor(x), (1, 2)).numpy(),
                               np.pad(x, ((0, 0), (0, 0), (1, 2))))
    y = rng.standard_normal((1, 8, 2, 3))
    ps = F.pixel_shuffle(fnx.tensor(y), 2).numpy()
    expect = y.reshape(1, 2, 2, 2, 2, 3).transpose(0, 1, 4, 2, 5, 3).reshape(1, 2, 4, 6)
    np.testing.assert_array_equal(ps, expect)
    np.testing.assert_array_equal(F.pixel_unshuffle(fnx.tensor(ps), 2).numpy(), y)
    up = F.interpolate(fnx.tensor(y), scale_factor=2, mode="nearest").numpy()
    np.testing.assert_array_equal(up, y.repeat(2, axis=2).repeat(2, axis=3))
    assert F.one_hot(fnx.tensor([1, 0]), 3).tolist() == [[0, 1, 0], [1, 0, 0]]
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        F.softmax(fnx.ones(2, 3))
    u = F.unfold(fnx.tensor(y[:, :2]), 2)
    assert u.shape == (1, 2 * 4, 2)


# ----------------------------------------------------------------------------- reference models

def test_modules_match_fnx_testing_models():
    """nn modules loaded with the weights of fnx.testing.models' functional MLP, CNN and
    GPT block compute the same outputs (and the CNN's batch-norm buffers move the same)."""
    p = models.mlp_params((6, 8, 3))
    mlp = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    mlp.load_state_dict({"0.weight": fnx.tensor(p["w0"]), "0.bias": fnx.tensor(p["b0"]),
                         "2.weight": fnx.tensor(p["w1"]), "2.bias": fnx.tensor(p["b1"])})
    x = fnx.randn(4, 6)
    ref = models.mlp({k: fnx.tensor(v) for k, v in p.items()})(x)
    np.testing.assert_allclose(mlp(x).numpy(force=True), ref.numpy(), rtol=1e-6, atol=1e-6)

    p = models.cnn_params(in_ch=3, ch=4, classes=5, hw=6)
    cnn = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 9, 5, bias=False))
    cnn.load_state_dict({"0.weight": fnx.tensor(p["conv_w"]), "0.bias": fnx.tensor(p["conv_b"]),
                         "1.weight": fnx.tensor(p["bn_w"]), "1.bias": fnx.tensor(p["bn_b"]),
                         "1.running_mean": fnx.tensor(p["bn_mean"]),
                         "1.running_var": fnx.tensor(p["bn_var"]),
                         "1.num_batches_tracked": fnx.tensor(0),
                         "5.weight": fnx.tensor(p["fc_w"])})
    fp = {k: fnx.tensor(v) for k, v in p.items()}
    x = fnx.randn(2, 3, 6, 6)
    np.testing.assert_allclose(cnn(x).numpy(force=True), models.cnn(fp)(x).numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cnn[1].running_mean.numpy(), fp["bn_mean"].numpy(), rtol=1e-6)

    c, heads = 16, 2
    p = models.gpt_params(c)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(c), nn.LayerNorm(c)
            self.attn, self.proj = nn.Linear(c, 3 * c), nn.Linear(c, c)
            self.mlp = nn.Sequential(nn.Linear(c, 4 * c), nn.GELU(), nn.Linear(4 * c, c))

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.attn(self.ln1(x)).split(c, dim=2)
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, c))
            return x + self.mlp(self.ln2(x))

    blk = Block()
    names = {"ln1.weight": "ln1_w", "ln1.bias": "ln1_b", "attn.weight": "attn_w",
             "attn.bias": "attn_b", "proj.weight": "proj_w", "proj.bias": "proj_b",
             "ln2.weight": "ln2_w", "ln2.bias": "ln2_b", "mlp.0.weight": "fc_w",
             "mlp.0.bias": "fc_b", "mlp.2.weight": "out_w", "mlp.2.bias": "out_b"}
    blk.load_state_dict({k: fnx.tensor(p[v]) for k, v in names.items()})
    x = fnx.randn(2, 5, c)
    ref = models.gpt_block({k: fnx.tensor(v) for k, v in p.items()}, heads)(x)
    np.testing.assert_allclose(blk(x).numpy(force=True), ref.numpy(), rtol=1e-5, atol=1e-5)


def test_other_layers(rng):
    x = rng.standard_normal((2, 3, 4, 5, 5))
    m = nn.Conv3d(3, 2, (1, 3, 3), padding=(0, 1, 1))
    check(m, [x], lambda x, P: np.stack([np_conv2d(x[:, :, d], P["weight"][:, :, 0],
                                                   P["bias"], padding=(1, 1))
                                         for d in range(4)], 2), grad=False)
    m = nn.ConvTranspose1d(3, 2, 3, stride=2)
    y = rng.standard_normal((2, 3, 4))
    check(m, [y], lambda y, P: np_conv_transpose2d(y[:, :, None], P["weight"][:, :, None],
                                                   P["bias"], (1, 2))[:, :, 0])
    check(nn.InstanceNorm2d(3), [x[:, :, 0]],
          lambda x, P: (x - x.mean((2, 3), keepdims=True)) /
          np.sqrt(x.var((2, 3), keepdims=True) + 1e-5))
    z = rng.permutation(2 * 3 * 8).reshape(2, 3, 8) / 10.0
    check(nn.MaxPool1d(2), [z], lambda z, P: z.reshape(2, 3, 4, 2).max(-1))
    check(nn.AvgPool1d(4), [z], lambda z, P: z.reshape(2, 3, 2, 4).mean(-1))
    bag = nn.EmbeddingBag(6, 3, mode="sum").double()
    idx = np.array([[0, 2, 5], [1, 1, 4]])
    out = bag(fnx.tensor(idx))
    np.testing.assert_allclose(out.numpy(force=True),
                               bag.weight.numpy(force=True)[idx].sum(1), rtol=1e-12)
    out = bag(fnx.tensor([0, 2, 5, 1]), fnx.tensor([0, 3]))
    np.testing.assert_allclose(out.numpy(force=True)[1], bag.weight.numpy(force=True)[1],
                               rtol=1e-12)
