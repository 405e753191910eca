"""alpha_dropout / feature_alpha_dropout, rrelu, gumbel_softmax, the max_pool*d_with_indices
names, F.celu_/selu_, their modules and the ``torch.*`` forms of nn functions (integer
reduction losses, conv_tbc, embedding_renorm_, adaptive_max_pool1d, grid_sampler_2d):
random ops by their structure and statistics with a fixed seed, the rest against NumPy."""
import math
import warnings

import numpy as np
import pytest

import fnx
import fnx.nn as nn
import fnx.nn.functional as F

SAT = 1.0507009873554805 * 1.6732632423543772     # SELU's -(negative saturation)


def _alpha_consts(p):
    a = 1.0 / math.sqrt((SAT * SAT * p + 1.0) * (1.0 - p))
    return a, a * SAT * p, a * SAT * (p - 1.0)      # scale, kept shift, dropped value


# ----------------------------------------------------------------------------- alpha dropout

@pytest.mark.parametrize("p", [0.2, 0.5])
def test_alpha_dropout_structure_and_moments(p):
    fnx.manual_seed(0)
    x = F.selu(fnx.randn(200_000, dtype=fnx.float64))
    y = F.alpha_dropout(x, p, training=True)
    xn, yn = x.numpy(), y.numpy()
    a, kept_shift, dropped = _alpha_consts(p)
    kept = np.isclose(yn, a * xn + kept_shift, rtol=0, atol=1e-12)
    drop = np.isclose(yn, dropped, rtol=0, atol=1e-12)
    assert np.all(kept | drop)
    assert abs(drop.mean() - p) < 0.01
    # SELU-distributed input keeps zero mean and unit variance (the point of alpha dropout)
    assert abs(yn.mean() - xn.mean()) < 0.01 and abs(yn.std() - xn.std()) < 0.01


def test_alpha_dropout_eval_p0_p1_and_errors():
    x = fnx.tensor([1.0, -2.0, 3.0])
    assert F.alpha_dropout(x, 0.5) is x                       # training defaults to False
    np.testing.assert_array_equal(F.alpha_dropout(x, 0.0, True).numpy(), x.numpy())
    np.testing.assert_array_equal(F.alpha_dropout(x, 1.0, True).numpy(), np.zeros(3))
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.alpha_dropout(x, 1.5, True)
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        fnx.alpha_dropout(x, -0.1, True)
    np.testing.assert_array_equal(x.numpy(), [1.0, -2.0, 3.0])


def test_feature_alpha_dropout_drops_whole_channels():
    fnx.manual_seed(1)
    x = fnx.randn(8, 16, 5, 5, dtype=fnx.float64)
    y = F.feature_alpha_dropout(x, 0.4, training=True)
    a, kept_shift, dropped = _alpha_consts(0.4)
    xn, yn = x.numpy(), y.numpy()
    for n in range(8):
        for c in range(16):
            if np.allclose(yn[n, c], dropped):
                continue
            np.testing.assert_allclose(yn[n, c], a * xn[n, c] + kept_shift, atol=1e-12)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        fnx.feature_alpha_dropout(fnx.ones(3), 0.5, True)


def test_alpha_dropout_gradient_and_inplace():
    fnx.manual_seed(2)
    x = fnx.randn(1000, dtype=fnx.float64, requires_grad=True)
    y = F.alpha_dropout(x, 0.3, training=True)
    y.sum().backward()
    a, kept_shift, _ = _alpha_consts(0.3)
    kept = np.isclose(y.detach().numpy(), a * x.detach().numpy() + kept_shift, atol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, a, 0.0))
    z = fnx.ones(4, 3)
    out = fnx.alpha_dropout_(z, 1.0, True)
    assert out is z and np.all(z.numpy() == 0)
    w = fnx.ones(4, 3)
    assert fnx.feature_alpha_dropout_(w, 1.0, True) is w and np.all(w.numpy() == 0)


def test_alpha_dropout_modules():
    m = nn.AlphaDropout(0.3)
    assert repr(m) == "AlphaDropout(p=0.3, inplace=False)"
    assert isinstance(m, nn.modules.dropout.AlphaDropout)
    x = fnx.ones(10, 4)
    fnx.manual_seed(3)
    y = m(x)
    a, kept_shift, dropped = _alpha_consts(0.3)
    assert np.all(np.isclose(y.numpy(), a + kept_shift) | np.isclose(y.numpy(), dropped))
    np.testing.assert_array_equal(m.eval()(x).numpy(), x.numpy())
    f = nn.FeatureAlphaDropout(0.3).eval()
    np.testing.assert_array_equal(f(x).numpy(), x.numpy())
    with pytest.raises(ValueError):
        nn.AlphaDropout(2.0)


# ----------------------------------------------------------------------------- rrelu

def test_rrelu_eval_is_leaky_relu_with_mean_slope():
    xn = np.array([-3.0, -0.5, 0.0, 0.5, 2.0])
    out = F.rrelu(fnx.tensor(xn), 0.1, 0.3)
    np.testing.assert_allclose(out.numpy(), np.where(xn > 0, xn, 0.2 * xn), rtol=1e-6)
    got = fnx.compile(lambda t: F.rrelu(t, 0.1, 0.3))(fnx.tensor(xn))
    np.testing.assert_allclose(got.numpy(), out.numpy(), rtol=1e-6)


def test_rrelu_training_slopes_and_gradient():
    fnx.manual_seed(4)
    lo, hi = 0.1, 0.4
    x = fnx.cat([-fnx.rand(50_000, dtype=fnx.float64) - 0.1,
                 fnx.rand(100, dtype=fnx.float64) + 0.1]).requires_grad_()
    y = F.rrelu(x, lo, hi, training=True)
    y.sum().backward()
    xn, yn = x.detach().numpy(), y.detach().numpy()
    neg = xn < 0
    slope = yn[neg] / xn[neg]
    assert slope.min() >= lo and slope.max() <= hi
    # U(lo, hi): mean (lo + hi) / 2, variance (hi - lo)^2 / 12
    assert abs(slope.mean() - (lo + hi) / 2) < 0.003
    assert abs(slope.var() - (hi - lo) ** 2 / 12) < 0.0005
    np.testing.assert_array_equal(yn[~neg], xn[~neg])
    # the gradient uses the slope that was sampled
    np.testing.assert_allclose(x.grad.numpy()[neg], slope, rtol=1e-12)
    np.testing.assert_array_equal(x.grad.numpy()[~neg], 1.0)


def test_rrelu_inplace_module_errors():
    x = fnx.tensor([-2.0, 1.0])
    assert F.rrelu_(x, 0.25, 0.25, training=True) is x
    np.testing.assert_allclose(x.numpy(), [-0.5, 1.0])
    y = fnx.tensor([-2.0, 1.0])
    assert fnx.rrelu_(y, 0.5, 0.5) is y
    np.testing.assert_allclose(y.numpy(), [-1.0, 1.0])
    m = nn.RReLU(0.1, 0.3)
    assert repr(m) == "RReLU(lower=0.1, upper=0.3)"
    assert isinstance(m, nn.modules.activation.RReLU)
    np.testing.assert_allclose(m.eval()(fnx.tensor([-1.0])).numpy(), [-0.2], rtol=1e-6)
    z = fnx.tensor([-1.0, 2.0])
    with pytest.raises(RuntimeError, match="lower bound"):
        F.rrelu(z, 0.5, 0.1, training=True)
    with pytest.raises(RuntimeError, match="rrelu"):
        F.rrelu(fnx.tensor([-1, 2]), training=True)
    with pytest.raises(NotImplementedError, match="generator"):
        fnx.rrelu(z, generator=fnx.Generator())
    np.testing.assert_array_equal(z.numpy(), [-1.0, 2.0])


# ----------------------------------------------------------------------------- gumbel softmax

def test_gumbel_softmax_soft_is_a_distribution_and_follows_the_logits():
    p = np.array([0.1, 0.2, 0.7])
    logits = fnx.tensor(np.log(p)).expand(20_000, 3)
    fnx.manual_seed(5)
    y = F.gumbel_softmax(logits, tau=0.5)
    yn = y.numpy()
    assert np.all(yn > 0)
    np.testing.assert_allclose(yn.sum(-1), 1.0, rtol=1e-12)
    # Gumbel-max: the argmax of logits + Gumbel noise is distributed as softmax(logits)
    freq = np.bincount(yn.argmax(-1), minlength=3) / len(yn)
    np.testing.assert_allclose(freq, p, atol=0.015)


def test_gumbel_softmax_hard_straight_through():
    logits = fnx.tensor([[0.5, -1.0, 2.0, 0.0]] * 4, dtype=fnx.float64, requires_grad=True)
    w = fnx.tensor(np.arange(16.0).reshape(4, 4))
    fnx.manual_seed(6)
    soft = F.gumbel_softmax(logits, tau=0.7, dim=1)
    (soft * w).sum().backward()
    g_soft = logits.grad.numpy().copy()
    logits.grad = None
    fnx.manual_seed(6)
    hard = F.gumbel_softmax(logits, tau=0.7, hard=True, dim=1)
    (hard * w).sum().backward()
    sn = soft.detach().numpy()
    np.testing.assert_allclose(hard.detach().numpy(), np.eye(4)[sn.argmax(1)], atol=1e-12)
    np.testing.assert_allclose(logits.grad.numpy(), g_soft, rtol=1e-10)
    with pytest.warns(UserWarning, match="eps"):
        F.gumbel_softmax(logits, eps=1e-3)


# ----------------------------------------------------------------------------- pooling names

def test_max_pool_with_indices_names():
    xn = np.array([[[1.0, 3.0, 2.0, 0.0, 5.0, 4.0]]])
    v, i = F.max_pool1d_with_indices(fnx.tensor(xn), 2)
    np.testing.assert_array_equal(v.numpy(), [[[3.0, 2.0, 5.0]]])
    np.testing.assert_array_equal(i.numpy(), [[[1, 2, 4]]])
    x2 = np.arange(16.0)[::-1].reshape(1, 1, 4, 4).copy()
    v, i = F.max_pool2d_with_indices(fnx.tensor(x2), 2, stride=2)
    np.testing.assert_array_equal(v.numpy(), [[[[15.0, 13.0], [7.0, 5.0]]]])
    np.testing.assert_array_equal(i.numpy(), [[[[0, 2], [8, 10]]]])
    x3 = fnx.tensor(np.arange(8.0).reshape(1, 1, 2, 2, 2))
    v, i = F.max_pool3d_with_indices(x3, 2)
    assert v.item() == 7.0 and i.item() == 7
    assert F.max_pool1d_with_indices.__name__ == "max_pool1d_with_indices"


def test_celu_selu_inplace():
    xn = np.array([-1.0, 0.5])
    x = fnx.tensor(xn)
    assert F.celu_(x, 2.0) is x
    np.testing.assert_allclose(x.numpy(), np.where(xn > 0, xn, 2.0 * np.expm1(xn / 2.0)),
                               rtol=1e-6)
    y = fnx.tensor(xn)
    assert F.selu_(y) is y
    ref = 1.0507009873554805 * np.where(xn > 0, xn, 1.6732632423543772 * np.expm1(xn))
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-6)


# ----------------------------------------------------------------------------- torch.* forms

def _red(loss, reduction):
    return loss if reduction == 0 else loss.mean() if reduction == 1 else loss.sum()


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_torch_level_losses_take_int_reduction(reduction):
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=5), rng.normal(size=5)
    t = np.array([1.0, -1.0, 1.0, 1.0, -1.0])
    got = fnx.margin_ranking_loss(fnx.tensor(a), fnx.tensor(b), fnx.tensor(t), 0.3, reduction)
    np.testing.assert_allclose(got.numpy(), _red(np.maximum(0, -t * (a - b) + 0.3), reduction))
    got = fnx.hinge_embedding_loss(fnx.tensor(a), fnx.tensor(t), 0.5, reduction)
    ref = np.where(t == 1, a, np.maximum(0, 0.5 - a))
    np.testing.assert_allclose(got.numpy(), _red(ref, reduction))
    x1, x2 = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    cos = (x1 * x2).sum(1) / np.sqrt((x1 * x1).sum(1) * (x2 * x2).sum(1))
    got = fnx.cosine_embedding_loss(fnx.tensor(x1), fnx.tensor(x2), fnx.tensor(t), 0.1,
                                    reduction)
    ref = np.where(t == 1, 1 - cos, np.maximum(0, cos - 0.1))
    np.testing.assert_allclose(got.numpy(), _red(ref, reduction), rtol=1e-6)
    tgt = rng.poisson(2.0, size=5).astype(np.float64)
    got = fnx.poisson_nll_loss(fnx.tensor(a), fnx.tensor(tgt), True, False, 1e-8, reduction)
    np.testing.assert_allclose(got.numpy(), _red(np.exp(a) - tgt * a, reduction), rtol=1e-6)
    n = rng.normal(size=(5, 3))
    d = lambda u, v: np.sqrt(((u - v + 1e-6) ** 2).sum(1))  # noqa: E731
    got = fnx.triplet_margin_loss(fnx.tensor(x1), fnx.tensor(x2), fnx.tensor(n), 1.0, 2.0,
                                  1e-6, False, reduction)
    ref = np.maximum(d(x1, x2) - d(x1, n) + 1.0, 0)
    np.testing.assert_allclose(got.numpy(), _red(ref, reduction), rtol=1e-5)


def test_torch_level_ctc_and_bad_reduction():
    # one frame, one label: the only alignment emits it, loss = -log p(label)
    lp = np.log(np.array([[[0.2, 0.5, 0.3]]]))
    got = fnx.ctc_loss(fnx.tensor(lp), fnx.tensor([[2]]), [1], [1], 0, 0)
    np.testing.assert_allclose(got.numpy(), [-np.log(0.3)], rtol=1e-6)
    with pytest.raises(ValueError, match="reduction"):
        fnx.margin_ranking_loss(fnx.ones(2), fnx.ones(2), fnx.ones(2), 0.0, 3)
    with pytest.raises(ValueError, match="reduction"):
        fnx.hinge_embedding_loss(fnx.ones(2), fnx.ones(2), 1.0, "mean")


def test_bilinear_conv_tbc_embedding_renorm():
    rng = np.random.default_rng(1)
    x1, x2 = rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    w, b = rng.normal(size=(5, 3, 2)), rng.normal(size=5)
    got = fnx.bilinear(fnx.tensor(x1), fnx.tensor(x2), fnx.tensor(w), fnx.tensor(b))
    np.testing.assert_allclose(got.numpy(), np.einsum("ni,oij,nj->no", x1, w, x2) + b,
                               rtol=1e-6)
    # conv_tbc: out[t, n, o] = b[o] + sum_k,i xpad[t + k, n, i] * w[k, i, o]
    x = rng.normal(size=(6, 2, 3))
    w = rng.normal(size=(3, 3, 4))
    b = rng.normal(size=4)
    pad = 1
    xp = np.pad(x, ((pad, pad), (0, 0), (0, 0)))
    ref = np.stack([np.einsum("kni,kio->no", xp[t:t + 3], w) for t in range(6 + 2 * pad - 2)]) + b
    fn = lambda a, c, d: fnx.conv_tbc(a, c, d, pad)  # noqa: E731
    args = (fnx.tensor(x), fnx.tensor(w), fnx.tensor(b))
    np.testing.assert_allclose(fn(*args).numpy(), ref, rtol=1e-6)
    args32 = tuple(t.float() for t in args)
    np.testing.assert_allclose(fnx.compile(fn)(*args32).numpy(), fn(*args32).numpy(),
                               rtol=2e-5, atol=1e-5)
    assert F.conv_tbc is fnx.conv_tbc
    with pytest.raises(RuntimeError, match="conv_tbc"):
        fnx.conv_tbc(fnx.ones(6, 3), fnx.ones(3, 3, 4), fnx.ones(4))
    with pytest.raises(RuntimeError, match="Bias size"):
        fnx.conv_tbc(fnx.ones(6, 2, 3), fnx.ones(3, 3, 4), fnx.ones(5))
    wn = rng.normal(size=(4, 3)) * 3
    emb = fnx.tensor(wn)
    assert fnx.embedding_renorm_(emb, fnx.tensor([0, 2, 2]), 1.5, 2.0) is emb
    norms = np.linalg.norm(wn, axis=1, keepdims=True)
    ref = wn.copy()
    for r in (0, 2):
        if norms[r] > 1.5:
            ref[r] = wn[r] * 1.5 / (norms[r] + 1e-7)
    np.testing.assert_allclose(emb.numpy(), ref, rtol=1e-9)


def test_adaptive_max_pool1d_and_grid_sampler():
    xn = np.array([[[1.0, 4.0, 2.0, 3.0, 0.0, 5.0]]])
    v, i = fnx.adaptive_max_pool1d(fnx.tensor(xn), 3)
    np.testing.assert_array_equal(v.numpy(), [[[4.0, 3.0, 5.0]]])
    np.testing.assert_array_equal(i.numpy(), [[[1, 3, 5]]])
    # an identity grid with align_corners samples every pixel centre exactly
    img = np.arange(12.0).reshape(1, 1, 3, 4)
    ys, xs = np.meshgrid(np.linspace(-1, 1, 3), np.linspace(-1, 1, 4), indexing="ij")
    grid = np.stack([xs, ys], -1)[None]
    for mode in (0, 1):
        out = fnx.grid_sampler_2d(fnx.tensor(img), fnx.tensor(grid), mode, 0, True)
        np.testing.assert_allclose(out.numpy(), img, atol=1e-12)
    vol = np.arange(8.0).reshape(1, 1, 2, 2, 2)
    zs, ys, xs = np.meshgrid(*[np.linspace(-1, 1, 2)] * 3, indexing="ij")
    grid3 = np.stack([xs, ys, zs], -1)[None]
    out = fnx.grid_sampler_3d(fnx.tensor(vol), fnx.tensor(grid3), 0, 0, True)
    np.testing.assert_allclose(out.numpy(), vol, atol=1e-12)


def test_f_names_are_exported():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("alpha_dropout", "feature_alpha_dropout", "rrelu", "rrelu_",
                     "gumbel_softmax", "celu_", "selu_", "max_pool1d_with_indices",
                     "max_pool2d_with_indices", "max_pool3d_with_indices"):
            assert name in F.__all__ and callable(getattr(F, name))


def test_random_ops_compiled_keep_their_structure():
    fnx.manual_seed(7)
    x = fnx.randn(20_000)
    xn = x.numpy()
    y = fnx.compile(lambda t: F.alpha_dropout(t, 0.3, True))(x).numpy()
    a, kept_shift, dropped = _alpha_consts(0.3)
    drop = np.isclose(y, dropped, atol=1e-5)
    assert np.all(drop | np.isclose(y, a * xn + kept_shift, atol=1e-5))
    assert abs(drop.mean() - 0.3) < 0.015
    r = fnx.compile(lambda t: F.rrelu(t, 0.1, 0.3, True))(x).numpy()
    neg = xn < 0
    slope = r[neg] / xn[neg]
    assert slope.min() >= 0.1 - 1e-5 and slope.max() <= 0.3 + 1e-5
    assert abs(slope.mean() - 0.2) < 0.005
    np.testing.assert_array_equal(r[~neg], xn[~neg])
    g = fnx.compile(lambda t: F.gumbel_softmax(t, hard=True))(fnx.zeros(50, 3)).numpy()
    assert set(np.unique(g)) <= {0.0, 1.0}
    np.testing.assert_array_equal(g.sum(1), 1.0)
