"""OpInfo entries for the losses and distances (fnx/ir/aten/nn/loss.py)."""
from __future__ import annotations

import numpy as np

from ....core import dtype as D
from ....ops import aten
from ...database import ErrorInput, OpInfo, SampleInput, register
from ...reference_dtypes import category, promote
from ._common import F, INF, TOLS, _arr, _floatref, _idx, _np, _t
from .activation import np_softmax


# --------------------------------------------------------------------------- losses

def _reduce(loss, reduction):
    if reduction == 0:
        return loss
    return loss.sum() if reduction == 2 else (loss.mean() if loss.size else np.float64("nan"))


def _pointwise_loss_ref(fn):
    def ref(x, t, reduction=1, *args):
        return _reduce(fn(x - t, *args), reduction)
    return _floatref(ref)


def _smooth_l1(d, beta=1.0):
    a = np.abs(d)
    return a if beta == 0 else np.where(a < beta, 0.5 * a * a / beta, a - 0.5 * beta)


def _huber(d, delta=1.0):
    a = np.abs(d)
    return np.where(a < delta, 0.5 * a * a, delta * (a - 0.5 * delta))


def _pointwise_loss_samples(extra):
    def samples(info, device, dtype):
        def t(*shape, **kw):
            return _t(shape, dtype, device, -3, 3, **kw)
        a0 = extra[0] if extra else ()
        for r in (0, 1, 2):
            yield SampleInput(t(3, 4), t(3, 4), r, *a0)
        yield SampleInput(t(3, 4, noncontiguous=True), t(4))                  # broadcasts
        yield SampleInput(t(), t(), 2, *a0)
        yield SampleInput(t(0), t(0), 1, *a0)                                 # NaN
        yield SampleInput(t(0, 2), t(0, 2), 2, *a0)
        for a in extra[1:]:
            yield SampleInput(t(2, 5), t(2, 5), 1, *a)
    return samples


def _pointwise_loss_errors(bad=None):
    def errors(info, device):
        yield ErrorInput(SampleInput(_t((2,), D.float32, device), _t((3,), D.float32, device)),
                         RuntimeError, "must be broadcastable")
        if bad is not None:
            yield ErrorInput(SampleInput(_t((2,), D.float32, device), _t((2,), D.float32,
                                                                          device), 1, bad[0]),
                             RuntimeError, bad[1])
    return errors


POINTWISE_LOSSES = [
    (aten.mse_loss.default, lambda d: d * d, [], None),
    (aten.l1_loss.default, np.abs, [], None),
    (aten.smooth_l1_loss.default, _smooth_l1, [(0.5,), (0.0,), (2.0,)],
     (-1.0, "smooth_l1_loss does not support negative values for beta")),
    (aten.huber_loss.default, _huber, [(0.5,), (2.0,)],
     (0.0, "huber_loss does not support non-positive values for delta")),
]
for _op, _fn, _extra, _bad in POINTWISE_LOSSES:
    register(OpInfo(_op, _pointwise_loss_ref(_fn), F, _pointwise_loss_samples(_extra),
                    tols=TOLS, error_inputs=_pointwise_loss_errors(_bad)))


def _bce_ref(x, t, w=None, reduction=1):
    with np.errstate(divide="ignore"):
        loss = -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log1p(-x), -100))
    if w is not None:
        loss = loss * w
    return _reduce(loss, reduction)


def _bce_samples(info, device, dtype):
    x = np.random.default_rng(7).random((3, 4)) * 0.98 + 0.01
    for r in (0, 1, 2):
        yield SampleInput(_arr(x, dtype, device), _t((3, 4), dtype, device, 0, 1),
                          _t((3, 4), dtype, device, 0, 2) if r else None, r)
    yield SampleInput(_t((2, 3), dtype, device, 0.01, 0.99), _t((2, 3), dtype, device, 0, 1),
                      _t((3,), dtype, device, 0, 2))                     # broadcast weight
    yield SampleInput(_t((0,), dtype, device, 0, 1), _t((0,), dtype, device, 0, 1))
    x[0, 0], x[0, 1] = 0.0, 1.0               # log(0) is clamped at -100
    yield SampleInput(_arr(x, dtype, device), _t((3, 4), dtype, device, 0, 1),
                      _t((3, 4), dtype, device, 0, 2), 1).at_kink(
        "probabilities exactly 0 and 1: the finite-difference step leaves the domain")


def _bce_errors(info, device):
    yield ErrorInput(SampleInput(_t((3,), D.float32, device, 0, 1),
                                 _t((2,), D.float32, device, 0, 1)), ValueError,
                     "that is different to the input size")


def _bce_logits_ref(x, t, w=None, pos_weight=None, reduction=1):
    log_sig, log_1m = -np.logaddexp(0, -x), -np.logaddexp(0, x)
    pw = 1 if pos_weight is None else pos_weight
    loss = -(pw * t * log_sig + (1 - t) * log_1m)
    if w is not None:
        loss = loss * w
    return _reduce(loss, reduction)


def _bce_logits_samples(info, device, dtype):
    def t(*shape, lo=None, hi=None):
        return _t(shape, dtype, device, lo, hi)
    yield SampleInput(t(3, 4, lo=-30, hi=30), t(3, 4, lo=0, hi=1))
    yield SampleInput(t(3, 4), t(3, 4, lo=0, hi=1), t(3, 4, lo=0, hi=1), t(4, lo=0, hi=3), 0)
    yield SampleInput(t(2, 3), t(2, 3, lo=0, hi=1), None, t(3, lo=0, hi=3), 2)
    yield SampleInput(t(0, 2), t(0, 2, lo=0, hi=1))


def _bce_logits_errors(info, device):
    yield ErrorInput(SampleInput(_t((3,), D.float32, device), _t((2,), D.float32, device)),
                     ValueError, r"Target size \(\[2\]\) must be the same as input size")


def np_nll(logp, t, w, reduction, ignore_index):
    """PyTorch's nll_loss_forward on (N, C) or (C,): (output, total_weight).  Unreduced
    2-D input leaves total_weight 0; a 1-D input always takes the reduced path."""
    lp = logp.reshape(-1, logp.shape[-1])
    tt = np.asarray(t).reshape(-1)
    ww = np.ones(lp.shape[1]) if w is None else w
    losses = np.zeros(len(tt))
    weights = np.zeros(len(tt))
    for i, ti in enumerate(tt):
        if ti != ignore_index:
            losses[i], weights[i] = -ww[ti] * lp[i, ti], ww[ti]
    if reduction == 0 and logp.ndim == 2:
        return losses, np.zeros(())
    if not len(tt):
        return (np.float64("nan") if reduction == 1 else np.zeros(())), np.zeros(())
    total = weights.sum()
    out = losses.sum() / total if reduction == 1 else losses.sum()
    return np.asarray(out), np.asarray(total)


def _nll_forward_ref(x, t, w, reduction, ignore_index):
    return np_nll(x, t, w, reduction, ignore_index)


def _logp(shape, dtype, device, cdim=1):
    a = np.random.default_rng(sum(shape) + 11).standard_normal(shape)
    return _arr(np_softmax(a, min(cdim, a.ndim - 1), log=True), dtype, device)


def _nll_forward_samples(info, device, dtype):
    t = _idx([0, 3, 1, -100, 3], device)
    for r in (0, 1, 2):
        yield SampleInput(_logp((5, 4), dtype, device), t, None, r, -100)
        yield SampleInput(_logp((5, 4), dtype, device), t, _t((4,), dtype, device, 0.5, 2), r,
                          -100)
    yield SampleInput(_logp((4,), dtype, device), _idx(2, device), None, 0, -100)   # 1-D
    yield SampleInput(_logp((4,), dtype, device), _idx(2, device), None, 1, -100)
    yield SampleInput(_logp((3, 4), dtype, device), _idx([1, 1, 2], device), None, 1, 1)
    yield SampleInput(_logp((2, 3), dtype, device), _idx([-100, -100], device), None, 1,
                      -100)                                    # every target ignored: NaN
    yield SampleInput(_logp((0, 3), dtype, device), _idx(np.zeros(0), device), None, 2, -100)


def _nll_errors(forward):
    def errors(info, device):
        def s(x, t, w=None):
            return SampleInput(x, t, w, 1, -100) if forward else SampleInput(x, t, w)
        f = D.float32
        x = _t((2, 3), f, device)
        yield ErrorInput(s(x, _idx([0, 5], device)), IndexError, "Target 5 is out of bounds",
                         meta=False)
        yield ErrorInput(s(x, _idx([0, 1], device, D.int32)), RuntimeError,
                         "expected scalar type Long but found Int")
        yield ErrorInput(s(x, _idx([0, 1], device), _t((2,), f, device)), RuntimeError,
                         "weight tensor should be defined either for all 3 classes or no "
                         "classes")
        if forward:
            yield ErrorInput(s(_t((2, 3, 4), f, device), _idx([0, 1], device)), RuntimeError,
                             "input tensor should be 1D or 2D")
        else:
            yield ErrorInput(s(x, _idx([0, 1, 2], device)), ValueError,
                             r"Expected input batch_size \(2\) to match target batch_size "
                             r"\(3\)")
    return errors


def _nll_backward_ref(g, x, t, w, reduction, ignore_index, total):
    """-w[t_n] g_n at (n, t_n) of kept rows (g over the total weight for the mean)."""
    gi = np.zeros(x.reshape(-1, x.shape[-1]).shape)
    ww = np.ones(gi.shape[1]) if w is None else w
    gg = np.broadcast_to(np.asarray(g, np.float64).reshape(-1) /
                         (total if reduction == 1 else 1.0), (gi.shape[0],))
    for i, ti in enumerate(np.asarray(t).reshape(-1)):
        if ti != ignore_index:
            gi[i, ti] = -ww[ti] * gg[i]
    return gi.reshape(x.shape)


def _nll_backward_samples(info, device, dtype):
    for s in _nll_forward_samples(info, device, dtype):
        x, (t, w, r, ii) = s.input, s.args
        total = np_nll(_np(x), _np(t), None if w is None else _np(w), r, ii)[1]
        out = (x.shape[0],) if r == 0 and x.ndim == 2 else ()
        g = _t(out, dtype, device, 0.5, 2)
        yield SampleInput(g, x, t, w, r, ii, _arr(np.asarray(total), dtype, device))


def _nll_backward_errors(info, device):
    f = D.float32
    x, one = _t((2, 3), f, device), _arr(np.asarray(1.0), f, device)
    yield ErrorInput(SampleInput(_t((), f, device), x, _idx([0, 5], device), None, 1, -100,
                                 one),
                     IndexError, "Target 5 is out of bounds", meta=False)
    yield ErrorInput(SampleInput(_t((3,), f, device), x, _idx([0, 1], device), None, 0, -100,
                                 one),
                     RuntimeError, r"expected grad_output of shape \[2\], got \[3\]")
    yield ErrorInput(SampleInput(_t((), f, device), x, _idx([0, 1], device), None, 1, -100,
                                 _t((2,), f, device)),
                     RuntimeError, "expected total_weight to be a single element tensor")


def _nll_loss_ref(x, t, w=None, reduction=1, ignore_index=-100):
    if x.ndim > 2:       # (N, C, d1, ...) -> (N * d1 * ..., C)
        c = x.shape[1]
        flat = np.moveaxis(x, 1, -1).reshape(-1, c)
        out = np_nll(flat, t.reshape(-1), w, reduction, ignore_index)[0]
        return out.reshape(t.shape) if reduction == 0 else out
    return np_nll(x, t, w, reduction, ignore_index)[0]


def _nll_loss_samples(info, device, dtype):
    yield SampleInput(_logp((5, 4), dtype, device), _idx([0, 3, 1, -100, 3], device))
    yield SampleInput(_logp((5, 4), dtype, device), _idx([0, 3, 1, 2, 3], device),
                      _t((4,), dtype, device, 0.5, 2), 2)
    yield SampleInput(_logp((4,), dtype, device), _idx(2, device))
    t = np.random.default_rng(3).integers(0, 3, (2, 4, 5))
    t[0, 0, 0] = 1
    yield SampleInput(_logp((2, 3, 4, 5), dtype, device), _idx(t, device), None, 0, 1)
    yield SampleInput(_logp((2, 3, 4, 5), dtype, device), _idx(t, device))
    yield SampleInput(_logp((0, 3), dtype, device), _idx(np.zeros(0), device))


def np_cross_entropy(a, t, w=None, reduction=1, ignore_index=-100, ls=0.0):
    cdim = 1 if a.ndim >= 2 else 0
    logp = np_softmax(a, cdim, log=True)
    c = a.shape[cdim]
    lp = np.moveaxis(logp, cdim, -1).reshape(-1, c)
    ww = np.ones(c) if w is None else w
    if np.asarray(t).dtype.kind == "f":                 # class probabilities
        tt = np.moveaxis(t, cdim, -1).reshape(-1, c) * (1 - ls) + ls / c
        loss = -(lp * tt * ww).sum(-1)
        if reduction == 0:
            return loss.reshape(np.moveaxis(logp, cdim, -1).shape[:-1])
        return loss.sum() if reduction == 2 else loss.sum() / lp.shape[0]
    tt = np.asarray(t).reshape(-1)
    nll, smooth, wsum = np.zeros(len(tt)), np.zeros(len(tt)), np.zeros(len(tt))
    for i, ti in enumerate(tt):
        if ti != ignore_index:
            nll[i], smooth[i], wsum[i] = -ww[ti] * lp[i, ti], -(ww * lp[i]).sum(), ww[ti]
    if reduction == 0:
        return ((1 - ls) * nll + ls / c * smooth).reshape(np.shape(t))
    if reduction == 2:
        return (1 - ls) * nll.sum() + ls / c * smooth.sum()
    total = wsum.sum()
    return ((1 - ls) * nll.sum() + ls / c * smooth.sum()) / total if len(tt) else \
        np.float64("nan")


def _cross_entropy_ref(x, t, w=None, reduction=1, ignore_index=-100, label_smoothing=0.0):
    return np_cross_entropy(x, t, w, reduction, ignore_index, label_smoothing)


def _cross_entropy_samples(info, device, dtype):
    def t(*shape, lo=None, hi=None):
        return _t(shape, dtype, device, lo, hi)
    tgt = _idx([0, 4, -100, 1, 1, 3], device)
    yield SampleInput(t(6, 5), tgt)
    yield SampleInput(t(6, 5), _idx([0, 4, 2, 1, 1, 3], device), t(5, lo=0.5, hi=2), 0)
    yield SampleInput(t(6, 5), _idx([0, 4, 2, -1, 1, 3], device), t(5, lo=0.5, hi=2), 1, -1,
                      0.2)
    yield SampleInput(t(6, 5), tgt, None, 2, -100, 0.1)
    yield SampleInput(t(6, 5), tgt, None, 0, -100, 0.3)
    k = np.random.default_rng(5).integers(0, 4, (2, 3, 2))
    yield SampleInput(t(2, 4, 3, 2), _idx(k, device), None, 0)                    # K-dim
    yield SampleInput(t(2, 4, 3, 2), _idx(k, device), None, 1, -100, 0.1)
    yield SampleInput(t(5), _idx(3, device))                                       # unbatched
    p = np.random.default_rng(6).random((4, 5))
    p /= p.sum(1, keepdims=True)
    for r in (0, 1, 2):                                                 # probabilities
        yield SampleInput(t(4, 5), _arr(p, dtype, device), t(5, lo=0, hi=1), r, -100,
                          0.3 if r else 0.0)
    yield SampleInput(t(0, 5), _idx(np.zeros(0), device))                        # NaN


def _cross_entropy_errors(info, device):
    f = D.float32
    x, p = _t((4, 5), f, device), _t((4, 5), f, device, 0, 1)
    yield ErrorInput(SampleInput(x, _idx([0, 1, 2, 3], device), None, 1, -100, 1.5),
                     RuntimeError, "label_smoothing must be between 0.0 and 1.0")
    yield ErrorInput(SampleInput(x, p, None, 1, 2), RuntimeError,
                     "ignore_index is not supported for floating point target")
    yield ErrorInput(SampleInput(x, _t((4, 4), f, device, 0, 1)), RuntimeError,
                     "Expected input and target to have the same shape")


def _kl_div_ref(x, t, reduction=1, log_target=False):
    if log_target:
        loss = np.exp(t) * (t - x)
    else:
        loss = np.where(t > 0, t * (np.log(np.where(t > 0, t, 1)) - x), 0.0)
    return _reduce(loss, reduction)


def _kl_div_samples(info, device, dtype):
    t = np.random.default_rng(8).random((3, 4)) + 0.05
    for r in (0, 1, 2):
        yield SampleInput(_logp((3, 4), dtype, device), _arr(t, dtype, device), r)
    yield SampleInput(_logp((3, 4), dtype, device), _logp((3, 4), dtype, device), 2,
                      log_target=True)
    yield SampleInput(_t((0, 2), dtype, device), _t((0, 2), dtype, device, 0, 1), 2)
    t[0, 0] = 0.0                          # contributes 0, not NaN
    yield SampleInput(_logp((3, 4), dtype, device), _arr(t, dtype, device), 1).at_kink(
        "a target of exactly 0 (xlogy's branch point): the finite-difference step crosses "
        "the branch")


register(
    OpInfo(aten.binary_cross_entropy.default, _floatref(_bce_ref), F, _bce_samples, tols=TOLS,
           error_inputs=_bce_errors),
    OpInfo(aten.binary_cross_entropy_with_logits.default, _floatref(_bce_logits_ref), F,
           _bce_logits_samples, tols=TOLS, error_inputs=_bce_logits_errors),
    OpInfo(aten.nll_loss_forward.default, _floatref(_nll_forward_ref), F, _nll_forward_samples,
           tols=TOLS, error_inputs=_nll_errors(True)),
    OpInfo(aten.nll_loss_backward.default, _floatref(_nll_backward_ref), F,
           _nll_backward_samples, tols=TOLS, error_inputs=_nll_backward_errors),
    OpInfo(aten.nll_loss.default, _floatref(_nll_loss_ref), F, _nll_loss_samples, tols=TOLS,
           error_inputs=_nll_errors(False)),
    OpInfo(aten.nll_loss_nd.default, _floatref(_nll_loss_ref), F, _nll_loss_samples,
           tols=TOLS, error_inputs=_nll_errors(False)),
    OpInfo(aten.cross_entropy_loss.default, _floatref(_cross_entropy_ref), F,
           _cross_entropy_samples, tols=TOLS, error_inputs=_cross_entropy_errors),
    OpInfo(aten.kl_div.default, _floatref(_kl_div_ref), F, _kl_div_samples, tols=TOLS),
)


# --------------------------------------------------------------------------- distances

def np_pnorm(d, p, axis=-1, keepdims=False):
    if p == 0:
        return (d != 0).sum(axis, keepdims=keepdims).astype(d.dtype)
    if p == np.inf:
        return np.abs(d).max(axis, keepdims=keepdims, initial=0.0)
    return (np.abs(d) ** p).sum(axis, keepdims=keepdims) ** (1 / p)


def _pdist_ref(x, p=2.0):
    n = x.shape[0]
    return np.array([np_pnorm(x[i] - x[j], p) for i in range(n) for j in range(i + 1, n)])


def _pdist_samples(info, device, dtype):
    x = _t((5, 3), dtype, device)
    a = _np(x)
    a[1] = a[0]                                   # a zero distance
    for p in (2.0, 0.0, 1.5, INF):
        yield SampleInput(_arr(a, dtype, device), p)
    yield SampleInput(_t((4, 2), dtype, device, noncontiguous=True), 1.0)
    yield SampleInput(_t((1, 3), dtype, device))
    yield SampleInput(_t((0, 3), dtype, device), 2.0)


def _pdist_errors(info, device):
    yield ErrorInput(SampleInput(_t((2, 2, 2), D.float32, device)), RuntimeError,
                     "pdist only supports 2D tensors, got: 3D")
    yield ErrorInput(SampleInput(_t((2, 2), D.float32, device), -1.0), RuntimeError,
                     "pdist only supports non-negative p values")
    yield ErrorInput(SampleInput(_t((2, 2), D.int64, device)), RuntimeError,
                     "pdist only supports floating-point dtypes")


def _cdist_ref(x1, x2, p=2.0, compute_mode=None):
    return np_pnorm(x1[..., :, None, :] - x2[..., None, :, :], p)


def _cdist_samples(info, device, dtype):
    def t(*shape, **kw):
        return _t(shape, dtype, device, **kw)
    yield SampleInput(t(2, 4, 3), t(1, 5, 3), 2.0, None)
    yield SampleInput(t(3, 2), t(4, 2, noncontiguous=True), 1.0, None)
    yield SampleInput(t(3, 2), t(4, 2), 0.0, 0)
    yield SampleInput(t(2, 3, 2), t(3, 2), INF, None)
    yield SampleInput(t(0, 3), t(2, 3), 3.0, None)


def _cdist_errors(info, device):
    f = D.float32
    yield ErrorInput(SampleInput(_t((2, 3), f, device), _t((2, 4), f, device), 2.0, None),
                     RuntimeError, "X1 and X2 must have the same number of columns. X1: 3 "
                                   "X2: 4")
    yield ErrorInput(SampleInput(_t((2, 3), D.int64, device), _t((2, 3), f, device), 2.0,
                                 None), RuntimeError, "cdist only supports floating-point "
                                                      "dtypes, X1 got: Long")
    yield ErrorInput(SampleInput(_t((3,), f, device), _t((2, 3), f, device), 2.0, None),
                     RuntimeError, "cdist only supports at least 2D tensors, X1 got: 1D")
    yield ErrorInput(SampleInput(_t((2, 3), f, device), _t((2, 3), f, device), -1.0, None),
                     RuntimeError, "cdist only supports non-negative p values")


def _cdist_public_samples(info, device, dtype):
    def t(*shape):
        return _t(shape, dtype, device)
    yield SampleInput(t(2, 4, 3), t(1, 5, 3))
    yield SampleInput(t(3, 2), t(4, 2), 1.0)
    yield SampleInput(t(0, 3), t(2, 3), 2.0, 1)


def _pairwise_ref(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return np_pnorm(x1 - x2 + eps, p, -1, keepdim)


def _pairwise_samples(info, device, dtype):
    def t(*shape):
        return _t(shape, dtype, device)
    yield SampleInput(t(4, 3), t(1, 3))
    yield SampleInput(t(4, 3), t(4, 3), 1.0, 1e-6, True)
    yield SampleInput(t(3), t(3), 3.0)
    yield SampleInput(t(2, 4), t(2, 4), INF, 0.0)
    yield SampleInput(t(0, 3), t(0, 3))


def _cosine_ref(x1, x2, dim=1, eps=1e-8):
    x1, x2 = np.broadcast_arrays(x1.astype(np.float64), x2.astype(np.float64))
    n1 = np.maximum(np.sqrt((x1 * x1).sum(dim, keepdims=True)), eps)
    n2 = np.maximum(np.sqrt((x2 * x2).sum(dim, keepdims=True)), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _cosine_out(x1, x2, *args, **kwargs):
    d = promote(x1.dtype, x2.dtype)
    return d if category(d) == 2 else np.dtype(np.float32)


def _cosine_samples(info, device, dtype):
    def t(*shape, **kw):
        return _t(shape, dtype, device, **kw)
    yield SampleInput(t(4, 3), t(1, 3))
    yield SampleInput(t(4, 3, noncontiguous=True), t(4, 3), 0)
    yield SampleInput(_arr(np.zeros((2, 3)), dtype, device), t(2, 3)).at_kink(   # 0/0
        "a zero vector: the norm's eps clamp (1e-8) is far below the finite-difference step")
    yield SampleInput(t(2, 3, 4), t(3, 4), -1, 1e-3)
    if dtype is D.float32:                                # integers compute in float32
        yield SampleInput(_idx([[1, 2]], device), _idx([[2, 4]], device))


register(
    OpInfo(aten._pdist_forward.default, _floatref(_pdist_ref), F, _pdist_samples, tols=TOLS,
           error_inputs=_pdist_errors),
    OpInfo(aten._cdist_forward.default, _floatref(_cdist_ref), F, _cdist_samples, tols=TOLS,
           error_inputs=_cdist_errors),
    OpInfo(aten.cdist.default, _floatref(_cdist_ref), F, _cdist_public_samples, tols=TOLS),
    OpInfo(aten.pairwise_distance.default, _floatref(_pairwise_ref), F, _pairwise_samples,
           tols=TOLS),
    OpInfo(aten.cosine_similarity.default, _floatref(_cosine_ref, _cosine_out), F,
           _cosine_samples, tols=TOLS),
)
