"""Loss modules against NumPy references (every reduction), their gradients against finite
differences of the reference, and PyTorch's errors."""
import numpy as np
import pytest

import fnx
import fnx.nn as nn
import fnx.nn.functional as F


def _reduce(loss, reduction):
    return loss if reduction == "none" else loss.sum() if reduction == "sum" else loss.mean()


def _grad_check(loss_module, x, ref, *others, eps=1e-6):
    """d loss / d input (float64) against central differences of ``ref``."""
    t = fnx.tensor(x, requires_grad=True)
    out = loss_module(t, *[fnx.tensor(o) for o in others])
    r = np.random.default_rng(1).standard_normal(out.shape)
    (out * fnx.tensor(r)).sum().backward()
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += eps
        xm[idx] -= eps
        g[idx] = ((ref(xp) - ref(xm)) * r).sum() / (2 * eps)
    np.testing.assert_allclose(t.grad.numpy(), g, rtol=1e-5, atol=1e-7)


def np_log_softmax(x, axis=1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_pointwise_losses(rng, reduction):
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)) * 2
    cases = [
        (nn.MSELoss(reduction=reduction), lambda a: (a - y) ** 2),
        (nn.L1Loss(reduction=reduction), lambda a: np.abs(a - y)),
        (nn.SmoothL1Loss(reduction=reduction, beta=0.5),
         lambda a: np.where(np.abs(a - y) < 0.5, 0.5 * (a - y) ** 2 / 0.5,
                            np.abs(a - y) - 0.25)),
        (nn.HuberLoss(reduction=reduction, delta=0.7),
         lambda a: np.where(np.abs(a - y) < 0.7, 0.5 * (a - y) ** 2,
                            0.7 * (np.abs(a - y) - 0.35))),
    ]
    for module, fn in cases:
        out = module(fnx.tensor(x), fnx.tensor(y))
        np.testing.assert_allclose(out.numpy(), _reduce(fn(x), reduction), rtol=1e-10)
        _grad_check(module, x, lambda a: _reduce(fn(a), reduction), y)
    assert nn.MSELoss()(fnx.ones(3), fnx.zeros(3)).dtype is fnx.float32


def test_mse_size_warning_and_reduction_errors():
    with pytest.warns(UserWarning, match="Using a target size"):
        nn.MSELoss()(fnx.ones(3, 1), fnx.ones(3))
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        nn.MSELoss(reduction="avg")(fnx.ones(3), fnx.ones(3))
    with pytest.raises(RuntimeError, match="must be broadcastable"), \
            pytest.warns(UserWarning, match="Using a target size"):
        nn.L1Loss()(fnx.ones(3), fnx.ones(4))
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, "
                      "please use reduction='sum' instead"):
        assert nn.MSELoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning, match="please use reduction='none' instead"):
        assert F.nll_loss(fnx.zeros(2, 3), fnx.tensor([0, 2]), reduce=False).shape == (2,)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_class_indices(rng, reduction):
    x = rng.standard_normal((5, 4))
    t = np.array([0, 3, 1, 1, 2])
    w = np.array([1.0, 2.0, 0.5, 1.5])

    def ref(a, weight=None, ignore=None):
        lp = np_log_softmax(a)
        ww = np.ones(4) if weight is None else weight
        per = -lp[np.arange(5), t] * ww[t]
        keep = np.ones(5) if ignore is None else (t != ignore).astype(float)
        per = per * keep
        if reduction == "mean":
            return per.sum() / (ww[t] * keep).sum()
        return per.sum() if reduction == "sum" else per

    for kw, rkw in [({}, {}), ({"weight": fnx.tensor(w)}, {"weight": w}),
                    ({"ignore_index": 1}, {"ignore": 1})]:
        module = nn.CrossEntropyLoss(reduction=reduction, **kw)
        out = module(fnx.tensor(x), fnx.tensor(t))
        np.testing.assert_allclose(out.numpy(), ref(x, **rkw), rtol=1e-10)
        _grad_check(module, x, lambda a: ref(a, **rkw), t)


def test_cross_entropy_probabilities_and_label_smoothing(rng):
    x = rng.standard_normal((3, 4))
    p = rng.random((3, 4))
    p /= p.sum(1, keepdims=True)
    lp = np_log_softmax(x)
    out = nn.CrossEntropyLoss()(fnx.tensor(x), fnx.tensor(p))
    np.testing.assert_allclose(out.numpy(), -(lp * p).sum(1).mean(), rtol=1e-10)
    _grad_check(nn.CrossEntropyLoss(), x,
                lambda a: -(np_log_softmax(a) * p).sum(1).mean(), p)
    t = np.array([2, 0, 3])
    out = nn.CrossEntropyLoss(label_smoothing=0.1)(fnx.tensor(x), fnx.tensor(t))
    smooth = np.full((3, 4), 0.1 / 4)
    smooth[np.arange(3), t] += 0.9
    np.testing.assert_allclose(out.numpy(), -(lp * smooth).sum(1).mean(), rtol=1e-10)
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(fnx.tensor(x), fnx.tensor(t), label_smoothing=1.5)


def test_cross_entropy_spatial_and_unbatched(rng):
    x = rng.standard_normal((2, 3, 4, 5))           # (N, C, H, W) logits
    t = rng.integers(0, 3, (2, 4, 5))
    lp = np_log_softmax(x, 1)
    picked = np.take_along_axis(lp, t[:, None], 1)[:, 0]
    out = nn.CrossEntropyLoss()(fnx.tensor(x), fnx.tensor(t))
    np.testing.assert_allclose(out.numpy(), -picked.mean(), rtol=1e-10)
    v = rng.standard_normal(4)
    out = F.cross_entropy(fnx.tensor(v), fnx.tensor(2))
    np.testing.assert_allclose(out.numpy(), -np_log_softmax(v, 0)[2], rtol=1e-10)


def test_cross_entropy_errors():
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target "
                                         r"batch_size \(2\)"):
        nn.CrossEntropyLoss()(fnx.randn(3, 4), fnx.tensor([0, 1]))
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        nn.CrossEntropyLoss()(fnx.randn(2, 4), fnx.tensor([0, 7]))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        nn.NLLLoss()(fnx.randn(2, 4), fnx.tensor([0.0, 1.0]))


def test_nll_loss(rng):
    x = np_log_softmax(rng.standard_normal((4, 3)))
    t = np.array([2, 0, 1, 2])
    out = nn.NLLLoss()(fnx.tensor(x), fnx.tensor(t))
    np.testing.assert_allclose(out.numpy(), -x[np.arange(4), t].mean(), rtol=1e-10)
    _grad_check(nn.NLLLoss(reduction="sum"), x, lambda a: -a[np.arange(4), t].sum(), t)
    out = nn.NLLLoss(reduction="none", ignore_index=2)(fnx.tensor(x), fnx.tensor(t))
    np.testing.assert_allclose(out.numpy(), [0, -x[1, 0], -x[2, 1], 0], rtol=1e-10)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_losses(rng, reduction):
    p = rng.uniform(0.05, 0.95, (3, 4))
    y = rng.integers(0, 2, (3, 4)).astype(np.float64)
    w = rng.uniform(0.5, 2.0, (3, 4))

    def bce(a):
        return _reduce(-(y * np.log(a) + (1 - y) * np.log(1 - a)) * w, reduction)
    module = nn.BCELoss(weight=fnx.tensor(w), reduction=reduction)
    np.testing.assert_allclose(module(fnx.tensor(p), fnx.tensor(y)).numpy(), bce(p),
                               rtol=1e-10)
    _grad_check(module, p, bce, y)
    z = rng.standard_normal((3, 4)) * 3
    pw = np.array([1.0, 2.0, 0.5, 3.0])

    def bce_logits(a):
        s = 1 / (1 + np.exp(-a))
        return _reduce(-(pw * y * np.log(s) + (1 - y) * np.log(1 - s)), reduction)
    module = nn.BCEWithLogitsLoss(pos_weight=fnx.tensor(pw), reduction=reduction)
    np.testing.assert_allclose(module(fnx.tensor(z), fnx.tensor(y)).numpy(), bce_logits(z),
                               rtol=1e-9)
    _grad_check(module, z, bce_logits, y)
    assert list(module.state_dict()) == ["pos_weight"]


def test_bce_errors_and_stability():
    with pytest.raises(ValueError, match="Using a target size"):
        nn.BCELoss()(fnx.rand(3), fnx.rand(3, 1))
    with pytest.raises(ValueError, match=r"Target size \(\[3, 1\]\) must be the same as input "
                                         r"size \(\[3\]\)"):
        nn.BCEWithLogitsLoss()(fnx.rand(3), fnx.rand(3, 1))
    # logs are clamped at -100, as PyTorch: no inf for saturated probabilities
    out = nn.BCELoss()(fnx.tensor([0.0, 1.0]), fnx.tensor([1.0, 0.0]))
    assert out.item() == 100.0
    big = nn.BCEWithLogitsLoss()(fnx.tensor([200.0, -200.0]), fnx.tensor([0.0, 1.0]))
    assert abs(big.item() - 200.0) < 1e-3


def test_kl_div_and_other_losses(rng):
    lp = np_log_softmax(rng.standard_normal((3, 4)))
    q = np.exp(np_log_softmax(rng.standard_normal((3, 4))))
    out = nn.KLDivLoss(reduction="batchmean")(fnx.tensor(lp), fnx.tensor(q))
    np.testing.assert_allclose(out.numpy(), (q * (np.log(q) - lp)).sum() / 3, rtol=1e-10)
    x1, x2 = rng.standard_normal(5), rng.standard_normal(5)
    tgt = np.array([1.0, -1, 1, -1, 1])
    out = nn.MarginRankingLoss(margin=0.1)(fnx.tensor(x1), fnx.tensor(x2), fnx.tensor(tgt))
    np.testing.assert_allclose(out.numpy(), np.maximum(0, -tgt * (x1 - x2) + 0.1).mean(),
                               rtol=1e-10)
    out = nn.SoftMarginLoss()(fnx.tensor(x1), fnx.tensor(tgt))
    np.testing.assert_allclose(out.numpy(), np.log1p(np.exp(-tgt * x1)).mean(), rtol=1e-10)
    out = nn.HingeEmbeddingLoss()(fnx.tensor(x1), fnx.tensor(tgt))
    np.testing.assert_allclose(out.numpy(), np.where(tgt == 1, x1, np.maximum(0, 1 - x1)).mean(),
                               rtol=1e-10)
    var = rng.uniform(0.5, 2, 5)
    out = nn.GaussianNLLLoss()(fnx.tensor(x1), fnx.tensor(x2), fnx.tensor(var))
    np.testing.assert_allclose(out.numpy(), (0.5 * (np.log(var) + (x1 - x2) ** 2 / var)).mean(),
                               rtol=1e-10)
