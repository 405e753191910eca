"""The losses of issue 19 (CTC, triplet, multi-margin, multi-label) and a second look at the
older ones (KL, Poisson, Gaussian, BCE, NLL, cross entropy, ...): each against a NumPy
reference written here for every reduction, gradients against finite differences
(``gradcheck``, float64), compiled against eager, and PyTorch's errors."""
import math

import numpy as np
import pytest

import fnx
import fnx.nn as nn
import fnx.nn.functional as F
from fnx.autograd import gradcheck
from fnx.testing.opinfo.nn.loss import np_cross_entropy, np_nll

REDUCTIONS = ("none", "mean", "sum")


def _red(loss, reduction):
    loss = np.asarray(loss, dtype=np.float64)
    return loss if reduction == "none" else loss.sum() if reduction == "sum" else loss.mean()


def t64(a, grad=False):
    return fnx.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def close(out, ref, rtol=1e-9, atol=1e-11):
    ref = np.asarray(ref, dtype=np.float64)
    assert tuple(out.shape) == ref.shape, (tuple(out.shape), ref.shape)
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=rtol, atol=atol)


def compiled_matches(fn, *args):
    """``fnx.compile(fn)`` gives ``fn``'s eager result (float32 inputs)."""
    eager = fn(*args)
    got = fnx.compile(fn)(*args)
    np.testing.assert_allclose(got.numpy(), eager.numpy(), rtol=2e-5, atol=1e-6)


def log_softmax(a, axis=-1):
    m = a.max(axis, keepdims=True)
    return a - m - np.log(np.exp(a - m).sum(axis, keepdims=True))


# ----------------------------------------------------------------------------- CTC

def np_ctc(lp, target, length, blank=0):
    """-log of the summed probability of every alignment of ``target`` with the first
    ``length`` frames of ``lp`` (T, C): the alpha recursion over the extended labels."""
    ext = [blank]
    for y in target:
        ext += [int(y), blank]
    if length == 0:
        return 0.0 if not len(target) else math.inf
    alpha = np.full(len(ext), -np.inf)
    alpha[0] = lp[0, ext[0]]
    if len(ext) > 1:
        alpha[1] = lp[0, ext[1]]
    for t in range(1, length):
        new = np.full(len(ext), -np.inf)
        for s, label in enumerate(ext):
            v = alpha[s]
            if s >= 1:
                v = np.logaddexp(v, alpha[s - 1])
            if s >= 2 and label != blank and label != ext[s - 2]:
                v = np.logaddexp(v, alpha[s - 2])
            new[s] = v + lp[t, label]
        alpha = new
    total = alpha[-1] if len(ext) == 1 else np.logaddexp(alpha[-1], alpha[-2])
    return -total


def _ctc_case(rng, T=6, N=4, C=5):
    lp = log_softmax(rng.standard_normal((T, N, C)))
    targets = np.array([[1, 2, 2], [3, 0, 0], [4, 4, 1], [2, 0, 0]])
    in_len = [T, T - 2, T - 1, 3]
    tg_len = [3, 1, 2, 0]
    ref = np.array([np_ctc(lp[:in_len[n], n], targets[n, :tg_len[n]], in_len[n])
                    for n in range(N)])
    return lp, targets, in_len, tg_len, ref


def test_ctc_hand_computed():
    # two frames, classes {blank, a}, every probability 1/2: "a" has the alignments
    # (a, a), (a, blank), (blank, a): -log(3/4)
    lp = fnx.full((2, 1, 2), 0.5).log()
    out = F.ctc_loss(lp, fnx.tensor([[1]]), [2], [1], reduction="sum")
    assert abs(out.item() + math.log(0.75)) < 1e-6
    # "aa" needs a blank between the two a's: 3 frames, one alignment (a, blank, a)
    lp = fnx.full((3, 1, 2), 0.5).log()
    out = F.ctc_loss(lp, fnx.tensor([[1, 1]]), [3], [2], reduction="sum")
    assert abs(out.item() - 3 * math.log(2)) < 1e-6


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_ctc_against_reference(rng, reduction):
    lp, targets, in_len, tg_len, ref = _ctc_case(rng)
    out = F.ctc_loss(t64(lp), fnx.tensor(targets), in_len, tg_len, reduction=reduction)
    if reduction == "mean":       # each loss divided by its target length (at least 1)
        expected = (ref / np.maximum(tg_len, 1)).mean()
    else:
        expected = _red(ref, reduction)
    close(out, expected)
    # tensors as lengths, and the module
    mod = nn.CTCLoss(reduction=reduction)
    close(mod(t64(lp), fnx.tensor(targets), fnx.tensor(in_len), fnx.tensor(tg_len)),
          expected)


def test_ctc_concatenated_targets_blank_and_unbatched(rng):
    lp, targets, in_len, tg_len, ref = _ctc_case(rng)
    flat = np.concatenate([targets[n, :tg_len[n]] for n in range(4)])
    close(F.ctc_loss(t64(lp), fnx.tensor(flat), in_len, tg_len, reduction="none"), ref)
    # another blank index: relabel so class 4 is the blank
    perm = np.array([4, 0, 1, 2, 3])                  # old class c -> new class perm[c]
    lp2 = np.empty_like(lp)
    lp2[..., perm] = lp
    out = F.ctc_loss(t64(lp2), fnx.tensor(perm[targets]), in_len, tg_len, blank=4,
                     reduction="none")
    close(out, ref)
    # unbatched: (T, C) and a 1-D target
    out = F.ctc_loss(t64(lp[:, 0]), fnx.tensor(targets[0]), fnx.tensor(6), fnx.tensor(3),
                     reduction="none")
    close(out, ref[0])


def test_ctc_impossible_alignment_and_zero_infinity(rng):
    lp = log_softmax(rng.standard_normal((3, 2, 4)))
    targets = fnx.tensor([[1, 1, 2], [1, 2, 3]])
    # "1 1 2" needs 4 frames (a blank between the 1s); only 3 exist
    out = F.ctc_loss(t64(lp), targets, [3, 3], [3, 3], reduction="none")
    assert math.isinf(out[0].item()) and out[0].item() > 0
    close(out[1], np_ctc(lp[:, 1], [1, 2, 3], 3))
    x = t64(lp, grad=True)
    out = F.ctc_loss(x, targets, [3, 3], [3, 3], reduction="sum", zero_infinity=True)
    close(out, np_ctc(lp[:, 1], [1, 2, 3], 3))
    out.backward()
    assert np.isfinite(x.grad.numpy()).all() and not x.grad.numpy()[:, 0].any()
    # an empty input: zero loss for an empty target, inf otherwise
    out = F.ctc_loss(t64(lp), targets, [0, 0], [0, 1], reduction="none")
    assert out[0].item() == 0 and math.isinf(out[1].item())


def test_ctc_gradient_and_compiled(rng):
    lp, targets, in_len, tg_len, _ = _ctc_case(rng, T=5, N=4, C=5)

    def loss(x):
        return F.ctc_loss(x, fnx.tensor(targets), in_len, tg_len)
    assert gradcheck(loss, (t64(lp, grad=True),))

    # the gradient of a log-softmax'd input against the alpha-beta one, via finite
    # differences of the NumPy reference on the raw activations
    a = rng.standard_normal((4, 1, 3))
    x = t64(a, grad=True)
    F.ctc_loss(x.log_softmax(2), fnx.tensor([[1, 2]]), [4], [2], reduction="sum").backward()
    num = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        up, dn = a.copy(), a.copy()
        up[idx] += 1e-6
        dn[idx] -= 1e-6
        num[idx] = (np_ctc(log_softmax(up)[:, 0], [1, 2], 4) -
                    np_ctc(log_softmax(dn)[:, 0], [1, 2], 4)) / 2e-6
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-6, atol=1e-8)

    lp32 = fnx.tensor(lp.astype(np.float32))
    compiled_matches(lambda x: F.ctc_loss(x, fnx.tensor(targets), fnx.tensor(in_len),
                                          fnx.tensor(tg_len)), lp32)


def test_ctc_errors():
    lp = fnx.randn(5, 2, 4).log_softmax(2)
    tg = fnx.tensor([[1, 2], [1, 1]])
    with pytest.raises(RuntimeError, match="target_lengths must be of size batch_size"):
        F.ctc_loss(lp, tg, [5, 5], [2])
    with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
        F.ctc_loss(lp, tg, [5], [2, 2])
    with pytest.raises(RuntimeError, match="Expected input_lengths to have value at most 5, "
                                           "but got value 6"):
        F.ctc_loss(lp, tg, [6, 5], [2, 2])
    with pytest.raises(RuntimeError, match="Expected tensor to have size at least 3 at "
                                           "dimension 1, but got size 2"):
        F.ctc_loss(lp, tg, [5, 5], [3, 2])
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(lp, tg, [5, 5], [2, 2], blank=4)
    with pytest.raises(RuntimeError, match="Expected tensor to have size 4 at dimension 0, "
                                           "but got size 3"):
        F.ctc_loss(lp, fnx.tensor([1, 2, 1]), [5, 5], [2, 2])
    with pytest.raises(RuntimeError, match="Expected 3-dimensional tensor"):
        F.ctc_loss(lp.unsqueeze(0), tg, [5, 5], [2, 2])
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        F.ctc_loss(lp, tg, [5, 5], [2, 2], reduction="avg")


# ----------------------------------------------------------------------------- triplet

def np_pdist(a, b, p=2.0, eps=1e-6):
    return (np.abs(a - b + eps) ** p).sum(-1) ** (1 / p)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p,swap", [(2.0, False), (1.0, True), (3.0, True)])
def test_triplet_margin_loss(rng, reduction, p, swap):
    a, pos, neg = rng.standard_normal((3, 5, 4))
    d_neg = np_pdist(a, neg, p)
    if swap:
        d_neg = np.minimum(d_neg, np_pdist(pos, neg, p))
    ref = _red(np.maximum(np_pdist(a, pos, p) - d_neg + 0.7, 0), reduction)
    out = F.triplet_margin_loss(t64(a), t64(pos), t64(neg), margin=0.7, p=p, swap=swap,
                                reduction=reduction)
    close(out, ref)
    mod = nn.TripletMarginLoss(margin=0.7, p=p, swap=swap, reduction=reduction)
    close(mod(t64(a), t64(pos), t64(neg)), ref)
    assert gradcheck(lambda x, y, z: F.triplet_margin_loss(x, y, z, margin=0.7, p=p,
                                                           swap=swap, reduction=reduction),
                     (t64(a, True), t64(pos, True), t64(neg, True)))


def test_triplet_with_distance_and_unbatched(rng):
    a, pos, neg = rng.standard_normal((3, 5, 4))

    def l1(x, y):
        return (x - y).abs().sum(-1)
    for swap in (False, True):
        d_neg = np.abs(a - neg).sum(-1)
        if swap:
            d_neg = np.minimum(d_neg, np.abs(pos - neg).sum(-1))
        ref = np.maximum(np.abs(a - pos).sum(-1) - d_neg + 2.0, 0)
        out = F.triplet_margin_with_distance_loss(t64(a), t64(pos), t64(neg),
                                                  distance_function=l1, margin=2.0,
                                                  swap=swap, reduction="none")
        close(out, ref)
        mod = nn.TripletMarginWithDistanceLoss(distance_function=l1, margin=2.0, swap=swap)
        close(mod(t64(a), t64(pos), t64(neg)), ref.mean())
    # the default distance is the Euclidean pairwise distance
    ref = np.maximum(np_pdist(a, pos) - np_pdist(a, neg) + 1.0, 0).sum()
    close(F.triplet_margin_with_distance_loss(t64(a), t64(pos), t64(neg), reduction="sum"),
          ref)
    # unbatched: one triplet of vectors
    out = F.triplet_margin_loss(t64(a[0]), t64(pos[0]), t64(neg[0]), reduction="none")
    close(out, max(np_pdist(a[0], pos[0]) - np_pdist(a[0], neg[0]) + 1.0, 0.0))
    compiled_matches(lambda x, y, z: F.triplet_margin_loss(x, y, z, swap=True),
                     *(fnx.tensor(v.astype(np.float32)) for v in (a, pos, neg)))


def test_triplet_errors():
    a = fnx.randn(3, 4)
    msg = ("The anchor, positive, and negative tensors are expected to have the same number "
           "of dimensions, but got: anchor 2D, positive 1D, and negative 2D inputs")
    with pytest.raises(RuntimeError, match=msg):
        F.triplet_margin_loss(a, fnx.randn(4), a)
    with pytest.raises(RuntimeError, match=msg):
        F.triplet_margin_with_distance_loss(a, fnx.randn(4), a)
    with pytest.raises(ValueError, match="margin must be greater than 0, got 0"):
        F.triplet_margin_with_distance_loss(a, a, a, margin=0)
    with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater "
                                         "than 0, got -1 instead"):
        nn.TripletMarginLoss(margin=-1)


# ----------------------------------------------------------------------------- multi-margin

def np_multi_margin(x, y, p=1, margin=1.0, w=None):
    x2 = np.atleast_2d(x)
    n, c = x2.shape
    out = np.zeros(n)
    for i in range(n):
        yi = int(np.atleast_1d(y)[i])
        for j in range(c):
            if j != yi:
                z = max(0.0, margin - x2[i, yi] + x2[i, j]) ** p
                out[i] += z * (1.0 if w is None else w[yi])
    out /= c
    return out if x.ndim == 2 else out[0]


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multi_margin_loss(rng, reduction):
    x = rng.standard_normal((5, 4))
    y = np.array([0, 3, 2, 3, 1])
    w = rng.uniform(0.5, 2, 4)
    for p, margin, weight in ((1, 1.0, None), (2, 0.5, w), (1, 2.0, w)):
        ref = _red(np_multi_margin(x, y, p, margin, weight), reduction)
        wt = None if weight is None else t64(weight)
        out = F.multi_margin_loss(t64(x), fnx.tensor(y), p=p, margin=margin, weight=wt,
                                  reduction=reduction)
        close(out, ref)
        close(nn.MultiMarginLoss(p=p, margin=margin, weight=wt, reduction=reduction)(
            t64(x), fnx.tensor(y)), ref)
        assert gradcheck(lambda a: F.multi_margin_loss(a, fnx.tensor(y), p=p, margin=margin,
                                                       weight=wt, reduction=reduction),
                         (t64(x, True),))
    # one sample, 0-dim target
    close(F.multi_margin_loss(t64(x[1]), fnx.tensor(3), reduction=reduction),
          np_multi_margin(x[1], np.array(3)))
    assert list(nn.MultiMarginLoss(weight=fnx.ones(4)).state_dict()) == ["weight"]


def test_multi_margin_errors_and_compiled():
    x = fnx.randn(3, 4)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        F.multi_margin_loss(x, fnx.tensor([0, 1, 2]), p=3)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="weight must be one-dimensional"):
        F.multi_margin_loss(x, fnx.tensor([0, 1, 2]), weight=fnx.ones(2, 2))
    with pytest.raises(RuntimeError, match=r"Expected target size \[3\], but got \[2\]"):
        F.multi_margin_loss(x, fnx.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x, fnx.tensor([0, 1, 5]))
    with pytest.raises(RuntimeError, match="inconsistent weight size, expected 4 but got"):
        F.multi_margin_loss(x, fnx.tensor([0, 1, 2]), weight=fnx.ones(3))
    with pytest.raises(RuntimeError, match="Expected non-empty vector or matrix"):
        F.multi_margin_loss(fnx.randn(2, 3, 4), fnx.tensor([0, 1]))
    y = fnx.tensor([0, 3, 2])
    compiled_matches(lambda a: F.multi_margin_loss(a, y, p=2, weight=fnx.arange(1.0, 5.0)), x)


def np_multilabel_margin(x, y):
    x2, y2 = np.atleast_2d(x), np.atleast_2d(y)
    n, c = x2.shape
    out = np.zeros(n)
    for i in range(n):
        labels = []
        for v in y2[i]:
            if v < 0:
                break
            labels.append(int(v))
        for j in labels:
            for k in range(c):
                if k not in labels:
                    out[i] += max(0.0, 1 - (x2[i, j] - x2[i, k]))
    out /= c
    return out if x.ndim == 2 else out[0]


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(rng, reduction):
    x = rng.standard_normal((4, 5))
    y = np.array([[3, 0, -1, 1, 2], [1, -1, 0, 0, 0], [4, 3, 2, 1, 0], [-1, 2, 2, 2, 2]])
    ref = _red(np_multilabel_margin(x, y), reduction)
    close(F.multilabel_margin_loss(t64(x), fnx.tensor(y), reduction=reduction), ref)
    close(nn.MultiLabelMarginLoss(reduction=reduction)(t64(x), fnx.tensor(y)), ref)
    assert gradcheck(lambda a: F.multilabel_margin_loss(a, fnx.tensor(y), reduction=reduction),
                     (t64(x, True),))
    close(F.multilabel_margin_loss(t64(x[0]), fnx.tensor(y[0]), reduction=reduction),
          np_multilabel_margin(x[0], y[0]))


def test_multilabel_margin_errors_and_compiled():
    x = fnx.randn(3, 4)
    with pytest.raises(RuntimeError, match=r"inconsistent target size: \[3\] for input of "
                                           r"size: \[3, 4\]"):
        F.multilabel_margin_loss(x, fnx.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="'target' is out of range"):
        F.multilabel_margin_loss(x, fnx.tensor([[0, 1, 2, 5]] * 3))
    with pytest.raises(RuntimeError, match="Expected non-empty vector or matrix"):
        F.multilabel_margin_loss(fnx.randn(2, 3, 4), fnx.zeros(2, 3, 4, dtype=fnx.int64))
    y = fnx.tensor([[0, 2, -1, 1], [3, -1, 0, 0], [1, 2, 3, 0]])
    compiled_matches(lambda a: F.multilabel_margin_loss(a, y), x)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_soft_margin_loss(rng, reduction):
    x = rng.standard_normal((4, 5)) * 3
    y = (rng.random((4, 5)) > 0.5).astype(np.float64)
    w = rng.uniform(0.5, 2, 5)
    sig = 1 / (1 + np.exp(-x))
    per = -(y * np.log(sig) + (1 - y) * np.log(1 - sig))
    for weight in (None, w):
        ref = _red((per * (1 if weight is None else weight)).mean(1), reduction)
        wt = None if weight is None else t64(weight)
        close(F.multilabel_soft_margin_loss(t64(x), t64(y), weight=wt, reduction=reduction),
              ref)
        close(nn.MultiLabelSoftMarginLoss(weight=wt, reduction=reduction)(t64(x), t64(y)), ref)
    assert gradcheck(lambda a, b: F.multilabel_soft_margin_loss(a, b, weight=t64(w),
                                                                reduction=reduction),
                     (t64(x, True), t64(y, True)))
    compiled_matches(lambda a, b: F.multilabel_soft_margin_loss(a, b),
                     fnx.tensor(x.astype(np.float32)), fnx.tensor(y.astype(np.float32)))
    with pytest.raises(RuntimeError, match="must match the size"):
        F.multilabel_soft_margin_loss(fnx.randn(3, 4), fnx.ones(3, 5))


# ----------------------------------------------------------------------------- older losses

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_kl_div_log_target_and_batchmean(rng, reduction):
    x = log_softmax(rng.standard_normal((3, 4)))
    q = log_softmax(rng.standard_normal((3, 4)))
    ref = np.exp(q) * (q - x)
    close(F.kl_div(t64(x), t64(q), reduction=reduction, log_target=True), _red(ref, reduction))
    p = np.exp(q)
    p[0, 0] = 0.0                                    # contributes 0 (xlogy)
    ref = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1)) - x), 0.0)
    close(F.kl_div(t64(x), t64(p), reduction=reduction), _red(ref, reduction))
    close(nn.KLDivLoss(reduction="batchmean")(t64(x), t64(p)), ref.sum() / 3)
    close(nn.KLDivLoss(reduction="batchmean", log_target=True)(t64(x), t64(q)),
          (np.exp(q) * (q - x)).sum() / 3)
    assert gradcheck(lambda a, b: F.kl_div(a, b, reduction="batchmean", log_target=True),
                     (t64(x, True), t64(q, True)))
    assert gradcheck(lambda a, b: F.kl_div(a, b, reduction=reduction),
                     (t64(x, True), t64(np.exp(q), True)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_poisson_nll_loss(rng, reduction):
    x = rng.standard_normal((3, 4))
    y = rng.integers(0, 6, (3, 4)).astype(np.float64)
    stirling = np.where(y > 1, y * np.log(np.where(y > 1, y, 1)) - y +
                        0.5 * np.log(2 * np.pi * np.where(y > 1, y, 1)), 0.0)
    close(F.poisson_nll_loss(t64(x), t64(y), reduction=reduction),
          _red(np.exp(x) - y * x, reduction))
    close(F.poisson_nll_loss(t64(x), t64(y), full=True, reduction=reduction),
          _red(np.exp(x) - y * x + stirling, reduction))
    rate = np.exp(x)
    close(nn.PoissonNLLLoss(log_input=False, full=True, eps=1e-3, reduction=reduction)(
        t64(rate), t64(y)), _red(rate - y * np.log(rate + 1e-3) + stirling, reduction))
    assert gradcheck(lambda a: F.poisson_nll_loss(a, t64(y), full=True, reduction=reduction),
                     (t64(x, True),))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gaussian_nll_loss(rng, reduction):
    x, y = rng.standard_normal((2, 3, 4))
    full_var = rng.uniform(0.1, 2, (3, 4))
    row_var = rng.uniform(0.1, 2, 3)
    for var, v in ((full_var, full_var), (row_var, row_var[:, None]),
                   (row_var[:, None], row_var[:, None])):
        for full in (False, True):
            ref = 0.5 * (np.log(v) + (x - y) ** 2 / v) + (0.5 * np.log(2 * np.pi) if full
                                                          else 0.0)
            out = F.gaussian_nll_loss(t64(x), t64(y), t64(var), full=full,
                                      reduction=reduction)
            close(out, _red(np.broadcast_to(ref, x.shape), reduction))
    # eps clamps small variances (the gradient still reaches var, as PyTorch)
    small = full_var.copy()
    small[0, 0] = 1e-9
    clamped = np.maximum(small, 0.05)
    ref = 0.5 * (np.log(clamped) + (x - y) ** 2 / clamped)
    close(nn.GaussianNLLLoss(eps=0.05, reduction=reduction)(t64(x), t64(y), t64(small)),
          _red(ref, reduction))
    close(F.gaussian_nll_loss(t64(x), t64(y), 0.5, reduction=reduction),
          _red(0.5 * (np.log(0.5) + (x - y) ** 2 / 0.5), reduction))
    assert gradcheck(lambda a, b, v: F.gaussian_nll_loss(a, b, v, reduction=reduction),
                     (t64(x, True), t64(y, True), t64(full_var, True)))


def test_gaussian_nll_errors():
    a = fnx.ones(3, 4)
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(a, a, fnx.ones(3, 2))
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(a, a, fnx.tensor(2.0))
    with pytest.raises(ValueError, match="var has negative entry"):
        F.gaussian_nll_loss(a, a, -fnx.ones(3, 4))
    with pytest.raises(ValueError, match="var has negative entry"):
        F.gaussian_nll_loss(a, a, -1.0)
    with pytest.raises(ValueError, match="x is not valid"):
        F.gaussian_nll_loss(a, a, fnx.ones(3, 4), reduction="x")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_ranking_cosine_embedding_hinge_soft_margin(rng, reduction):
    x1, x2 = rng.standard_normal((2, 5))
    s = np.array([1.0, -1, 1, -1, -1])
    close(F.margin_ranking_loss(t64(x1), t64(x2), t64(s), margin=0.3, reduction=reduction),
          _red(np.maximum(0, -s * (x1 - x2) + 0.3), reduction))
    a, b = rng.standard_normal((2, 5, 3))
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    ref = np.where(s == 1, 1 - cos, np.maximum(0, cos - 0.2))
    close(F.cosine_embedding_loss(t64(a), t64(b), t64(s), margin=0.2, reduction=reduction),
          _red(ref, reduction))
    close(nn.CosineEmbeddingLoss(margin=0.2, reduction=reduction)(t64(a[0]), t64(b[0]),
                                                                  t64(s[0])),
          _red(ref[0], reduction))
    close(nn.HingeEmbeddingLoss(margin=0.5, reduction=reduction)(t64(x1), t64(s)),
          _red(np.where(s == 1, x1, np.maximum(0, 0.5 - x1)), reduction))
    close(nn.SoftMarginLoss(reduction=reduction)(t64(x1), t64(s)),
          _red(np.log1p(np.exp(-s * x1)), reduction))
    for fn, args in ((lambda p, q: F.margin_ranking_loss(p, q, t64(s), 0.3,
                                                         reduction=reduction), (x1, x2)),
                     (lambda p, q: F.cosine_embedding_loss(p, q, t64(s), 0.2,
                                                           reduction=reduction), (a, b)),
                     (lambda p: F.soft_margin_loss(p, t64(s), reduction=reduction), (x1,)),
                     (lambda p: F.hinge_embedding_loss(p, t64(s), 0.5, reduction=reduction),
                      (x1,))):
        assert gradcheck(fn, tuple(t64(v, True) for v in args))


def test_cosine_embedding_errors():
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        F.cosine_embedding_loss(fnx.ones(3, 4), fnx.ones(3, 4), fnx.ones(3, 1))
    with pytest.raises(RuntimeError, match=r"1D target tensor expects 2D input tensors, but "
                                           r"found inputs with sizes \[2, 3, 4\]"):
        F.cosine_embedding_loss(fnx.ones(2, 3, 4), fnx.ones(2, 3, 4), fnx.ones(2))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_huber_smooth_l1(rng, reduction):
    x, y = rng.standard_normal((2, 4, 3)) * 2
    d = np.abs(x - y)
    for beta in (0.5, 1.0, 2.0):
        close(F.smooth_l1_loss(t64(x), t64(y), beta=beta, reduction=reduction),
              _red(np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction))
        close(F.huber_loss(t64(x), t64(y), delta=beta, reduction=reduction),
              _red(np.where(d < beta, 0.5 * d * d, beta * (d - 0.5 * beta)), reduction))
    close(F.smooth_l1_loss(t64(x), t64(y), beta=0.0, reduction=reduction), _red(d, reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_weight_and_pos_weight_broadcast(rng, reduction):
    p = rng.uniform(0.05, 0.95, (3, 4))
    y = rng.random((3, 4))
    w = rng.uniform(0.5, 2, 4)                       # broadcast over rows
    ref = -(y * np.log(p) + (1 - y) * np.log(1 - p)) * w
    close(F.binary_cross_entropy(t64(p), t64(y), weight=t64(w), reduction=reduction),
          _red(ref, reduction))
    z = rng.standard_normal((3, 4)) * 3
    pw = rng.uniform(0.5, 3, 4)
    ls, lm = -np.logaddexp(0, -z), -np.logaddexp(0, z)
    ref = -(pw * y * ls + (1 - y) * lm) * w
    close(F.binary_cross_entropy_with_logits(t64(z), t64(y), weight=t64(w), pos_weight=t64(pw),
                                             reduction=reduction), _red(ref, reduction))
    assert gradcheck(lambda a, b: F.binary_cross_entropy(a, b, weight=t64(w),
                                                         reduction=reduction),
                     (t64(p, True), t64(y, True)))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(fnx.tensor([1.5]), fnx.tensor([1.0]))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_and_cross_entropy_k_dim(rng, reduction):
    red = REDUCTIONS.index(reduction)
    x = rng.standard_normal((2, 5, 3, 4))
    y = rng.integers(0, 5, (2, 3, 4))
    y[0, 0, 0] = 2
    w = rng.uniform(0.5, 2, 5)
    lp = log_softmax(x, 1)
    flat = np.moveaxis(lp, 1, -1).reshape(-1, 5)
    ref = np_nll(flat, y.reshape(-1), w, red, 2)[0]
    out = F.nll_loss(t64(lp), fnx.tensor(y), weight=t64(w), ignore_index=2,
                     reduction=reduction)
    close(out, ref.reshape(y.shape) if reduction == "none" else ref)
    for ls in (0.0, 0.25):
        ref = np_cross_entropy(x, y, w, red, 2, ls)
        close(F.cross_entropy(t64(x), fnx.tensor(y), weight=t64(w), ignore_index=2,
                              label_smoothing=ls, reduction=reduction), ref)
    probs = np.exp(log_softmax(rng.standard_normal((2, 5, 3, 4)), 1))
    close(F.cross_entropy(t64(x), t64(probs), weight=t64(w), label_smoothing=0.1,
                          reduction=reduction), np_cross_entropy(x, probs, w, red, -100, 0.1))
    assert gradcheck(lambda a: F.cross_entropy(a, fnx.tensor(y), weight=t64(w),
                                               ignore_index=2, label_smoothing=0.25,
                                               reduction=reduction), (t64(x, True),))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 4\], got \[2, 5\]"):
        F.nll_loss(fnx.ones(2, 3, 4), fnx.zeros(2, 5, dtype=fnx.int64))


def test_cross_entropy_compiled(rng):
    x = fnx.tensor(rng.standard_normal((4, 5)).astype(np.float32))
    y = fnx.tensor([0, 4, 2, 1])
    compiled_matches(lambda a: F.cross_entropy(a, y, label_smoothing=0.2), x)
    compiled_matches(lambda a: F.kl_div(a.log_softmax(1), a.softmax(0), reduction="batchmean"),
                     x)
    compiled_matches(lambda a: F.gaussian_nll_loss(a, a.flip(0), a.exp(), full=True), x)


@pytest.mark.skipif(not fnx.cuda.is_available(),
                    reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")
def test_new_losses_on_cuda_match_cpu(rng):
    lp, targets, in_len, tg_len, _ = _ctc_case(rng)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    y = np.array([0, 3, 4, 1])
    ml = np.array([[3, 0, -1, 1, 2], [1, -1, 0, 0, 0], [4, 3, 2, 1, 0], [-1, 2, 2, 2, 2]])
    a, p, n = rng.standard_normal((3, 4, 6)).astype(np.float32)
    cases = [
        (lambda d, v: F.ctc_loss(v, fnx.tensor(targets, device=d), in_len, tg_len),
         lp.astype(np.float32)),
        (lambda d, v: F.multi_margin_loss(v, fnx.tensor(y, device=d), p=2), x),
        (lambda d, v: F.multilabel_margin_loss(v, fnx.tensor(ml, device=d)), x),
        (lambda d, v: F.multilabel_soft_margin_loss(v, fnx.tensor((x > 0) * 1.0, device=d)),
         x),
        (lambda d, v: F.triplet_margin_loss(v, fnx.tensor(p, device=d),
                                            fnx.tensor(n, device=d), swap=True), a),
    ]
    for fn, data in cases:
        outs, grads = [], []
        for d in ("cpu", "cuda"):
            v = fnx.tensor(data, device=d, requires_grad=True)
            out = fn(d, v)
            out.backward()
            outs.append(out.detach().cpu().numpy())
            grads.append(v.grad.cpu().numpy())
        np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-6)
