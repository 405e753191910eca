"""Losses and distances of ``fnx.nn.functional``, which re-exports them: PyTorch's
arguments (``reduction='mean'``, the deprecated ``size_average``/``reduce`` flags) over the
aten loss ops, and short compositions of fnx ops for the losses with no op of their own.
"""
from __future__ import annotations

import math
import warnings

from .. import api as fnx
from ..core.grad_mode import no_grad
from ..graph.tracer import is_compiling
from ..ops import aten

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _legacy_reduction(size_average, reduce) -> str:
    """The reduction string the deprecated ``size_average``/``reduce`` flags mean."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    out = "none" if not reduce else "mean" if size_average else "sum"
    # the message names the reduction the flags mean, as PyTorch's does
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{out}' instead.", stacklevel=4)
    return out


def _reduction(reduction, size_average=None, reduce=None) -> int:
    """PyTorch's reduction enum from the string (or the legacy size_average/reduce flags)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


# ----------------------------------------------------------------------------- distances

def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return aten.pairwise_distance.default(x1, x2, p, eps, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    return aten.cosine_similarity.default(x1, x2, dim, eps)


# ----------------------------------------------------------------------------- losses

def _size_warning(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      f"to broadcasting. Please ensure they have the same size.", stacklevel=3)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean (or sum, or none) of ``|input - target|``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.l1_loss(fnx.tensor([1.0, 2.0]), fnx.tensor([2.0, 4.0]))
    tensor(1.5000)
    """
    _size_warning(input, target)
    return aten.l1_loss.default(input, target, _reduction(reduction, size_average, reduce))


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean (or sum, or none) of ``(input - target) ** 2``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.mse_loss(fnx.tensor([1.0, 2.0]), fnx.tensor([2.0, 4.0]))
    tensor(2.5000)
    """
    _size_warning(input, target)
    red = _reduction(reduction, size_average, reduce)
    if weight is None:
        return aten.mse_loss.default(input, target, red)
    return _reduce((input - target) ** 2 * weight, red)


def _reduce(loss, red):
    return loss if red == 0 else loss.sum() if red == 2 else loss.mean()


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _size_warning(input, target)
    return aten.smooth_l1_loss.default(input, target, _reduction(reduction, size_average,
                                                                 reduce), beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _size_warning(input, target)
    red = _reduction(reduction)
    if weight is None:
        return aten.huber_loss.default(input, target, red, delta)
    return _reduce(aten.huber_loss.default(input, target, 0, delta) * weight, red)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """Log-softmax over dim 1 (dim 0 for unbatched input) and negative log likelihood;
    ``target`` holds class indices (``ignore_index`` skipped) or class probabilities.

    >>> import fnx, fnx.nn.functional as F
    >>> F.cross_entropy(fnx.tensor([[2.0, 0.0]]), fnx.tensor([[0.5, 0.5]]))
    tensor(1.1269)
    """
    return aten.cross_entropy_loss.default(input, target, weight,
                                           _reduction(reduction, size_average, reduce),
                                           ignore_index, label_smoothing)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """``-input[n, target[n]]`` (weighted), averaged over the non-ignored targets."""
    return aten.nll_loss_nd.default(input, target, weight,
                                    _reduction(reduction, size_average, reduce), ignore_index)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """``-(t * log(x) + (1 - t) * log(1 - x))`` for probabilities ``x`` (logs clamped at
    -100, as PyTorch)."""
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the "
                         f"input size ({input.shape}) is deprecated. Please ensure they have "
                         f"the same size.")
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        weight = weight.expand(input.shape)
    return aten.binary_cross_entropy.default(input, target, weight,
                                             _reduction(reduction, size_average, reduce))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """``binary_cross_entropy(sigmoid(input), target)``, computed stably."""
    return aten.binary_cross_entropy_with_logits.default(
        input, target, weight, pos_weight, _reduction(reduction, size_average, reduce))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL divergence of log-probabilities ``input`` from ``target``; ``'batchmean'``
    divides the sum by the batch size (the mathematically right mean)."""
    if reduction == "batchmean":
        loss = aten.kl_div.default(input, target, 2, log_target=log_target)
        return loss / input.shape[0] if input.ndim else loss
    if reduction == "mean" and size_average is None and reduce is None:
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                      "the support size.'batchmean' divides only by the batch size, and "
                      "aligns with the KL div math definition.'mean' will be changed to behave "
                      "the same as 'batchmean' in the next major release.", stacklevel=2)
    return aten.kl_div.default(input, target, _reduction(reduction, size_average, reduce),
                               log_target=log_target)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-target * input))``."""
    return _reduce(aten.softplus.default(-target * input), _reduction(reduction, size_average,
                                                                      reduce))


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``."""
    if not (input1.ndim == input2.ndim == target.ndim):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {input1.shape}, input2: "
                           f"{input2.shape}, target: {target.shape} ")
    loss = aten.relu.default(-target * (input1 - input2) + margin)
    return _reduce(loss, _reduction(reduction, size_average, reduce))


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``."""
    zeros = fnx.zeros_like(input)
    margin_part = fnx.where(target == 1, zeros, aten.relu.default(margin - input))
    loss = fnx.where(target == -1, zeros, input) + margin_part
    return _reduce(loss, _reduction(reduction, size_average, reduce))


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos(x1, x2)`` for ``target == 1``, ``max(0, cos(x1, x2) - margin)`` for -1.

    >>> import fnx, fnx.nn.functional as F
    >>> F.cosine_embedding_loss(fnx.tensor([[1.0, 0.0]]), fnx.tensor([[0.0, 1.0]]),
    ...                         fnx.tensor([1.0]))
    tensor(1.)
    """
    red = _reduction(reduction, size_average, reduce)
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = target.ndim + 1
    for x in (input1, input2):
        if x.ndim != want:
            raise RuntimeError(f"{target.ndim}D target tensor expects {want}D input tensors, "
                               f"but found inputs with sizes {list(input1.shape)} and "
                               f"{list(input2.shape)}.")
    cos = cosine_similarity(input1, input2, dim=-1)
    loss = fnx.where(target == 1, 1 - cos, aten.relu.default(cos - margin))
    return _reduce(loss, red)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """``0.5 * (log(max(var, eps)) + (input - target)**2 / max(var, eps))`` (+ const).

    ``var`` has ``input``'s shape, or one dimension less (one variance per row), or one
    dimension of size 1 where ``input``'s differs, or is a float.

    >>> import fnx, fnx.nn.functional as F
    >>> F.gaussian_nll_loss(fnx.tensor([1.0]), fnx.tensor([3.0]), fnx.tensor([1.0]))
    tensor(2.)
    """
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * fnx.ones_like(input)
    elif not is_compiling() and bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)      # one variance per row of the last dimension
        elif not (input.ndim == var.ndim and sum(
                v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not valid")
    var = var.clone()
    with no_grad():     # clamped for stability without stopping the gradient, as PyTorch
        var.clamp_(eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, _REDUCTIONS[reduction])


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Negative log likelihood of ``target ~ Poisson(input)``."""
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + fnx.where(target > 1, stirling, fnx.zeros_like(stirling))
    return _reduce(loss, _reduction(reduction, size_average, reduce))


# ----------------------------------------------------------------------------- margin losses

def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not a == p == n:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a}D, positive "
                           f"{p}D, and negative {n}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the ``p``-norm pairwise distance;
    ``swap`` uses ``min(d(a, n), d(p, n))`` as the negative distance.

    >>> import fnx, fnx.nn.functional as F
    >>> a, p, n = fnx.tensor([[0.0, 0.0]]), fnx.tensor([[3.0, 4.0]]), fnx.tensor([[1.0, 0.0]])
    >>> F.triplet_margin_loss(a, p, n, eps=0.0)
    tensor(5.)
    """
    red = _reduction(reduction, size_average, reduce)
    _check_triplet_dims(anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = fnx.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(aten.relu.default(margin + d_pos - d_neg), red)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """``triplet_margin_loss`` with any distance: ``distance_function(x1, x2)`` returns one
    distance per row (default: the Euclidean ``pairwise_distance``).

    >>> import fnx, fnx.nn.functional as F
    >>> a, p, n = fnx.tensor([[0.0, 0.0]]), fnx.tensor([[3.0, 4.0]]), fnx.tensor([[1.0, 0.0]])
    >>> F.triplet_margin_with_distance_loss(a, p, n, distance_function=lambda x, y:
    ...                                     (x - y).abs().sum(-1))
    tensor(7.)
    """
    red = _reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = fnx.minimum(d_neg, dist(positive, negative))
    return _reduce(aten.relu.default(margin + d_pos - d_neg), red)


def _check_margin_input(input):
    if not (input.ndim == 1 and input.shape[0] or input.ndim == 2 and input.shape[1]) \
            and not (input.ndim == 2 and input.shape[0] == 0 and input.shape[1]):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")


def _class_mask(target, c, device):
    """``mask[n, i] = (i == target[n])`` for a (N,) long target."""
    return target.unsqueeze(1) == fnx.arange(c, device=device).unsqueeze(0)


def _check_class_targets(target, c, what):
    if not is_compiling() and target.numel() and bool(((target < 0) | (target >= c)).any()):
        raise RuntimeError(what)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Multi-class hinge loss: ``sum_{i != y} max(0, margin - x[y] + x[i])**p / C`` per
    sample (``weight[y]`` scales the terms of a sample of class ``y``).

    >>> import fnx, fnx.nn.functional as F
    >>> F.multi_margin_loss(fnx.tensor([[0.1, 0.2, 0.4, 0.8]]), fnx.tensor([3]))
    tensor(0.3250)
    """
    red = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    _check_margin_input(input)
    x = input if input.ndim == 2 else input.unsqueeze(0)
    n, c = x.shape
    if target.numel() != n or target.ndim > 1 or (input.ndim == 2 and target.ndim != 1):
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal "
                           f"to the number of input samples (batch size). Expected target "
                           f"size [{n}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got "
                           f"{list(weight.shape)}")
    _check_class_targets(target, c, "target out of range")
    y = target.reshape(n).long().clamp(0, max(c - 1, 0))
    picked = x.gather(1, y.unsqueeze(1))
    z = aten.relu.default(margin - picked + x)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[y].unsqueeze(1)
    z = fnx.where(_class_mask(y, c, x.device), fnx.zeros_like(z), z)
    loss = z.sum(1) / c
    return _reduce(loss if input.ndim == 2 else loss.squeeze(0), red)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: ``target`` lists each sample's classes, ended by the first
    ``-1``; each (class in, class out) pair costs ``max(0, 1 - (x[in] - x[out])) / C``.

    >>> import fnx, fnx.nn.functional as F
    >>> F.multilabel_margin_loss(fnx.tensor([[0.1, 0.2, 0.4, 0.8]]),
    ...                          fnx.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    red = _reduction(reduction, size_average, reduce)
    _check_margin_input(input)
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}")
    x = input if input.ndim == 2 else input.unsqueeze(0)
    n, c = x.shape
    t = target.reshape(n, c).long()
    _check_class_targets(fnx.where(t < 0, fnx.zeros_like(t), t), c,
                         "argument #2 'target' is out of range")
    # a label counts while no -1 came before it in its row
    valid = fnx.cumprod((t >= 0).long(), 1).bool()                       # (N, C)
    safe = fnx.where(valid, t, fnx.zeros_like(t))
    # is_target[n, i]: class i is one of row n's labels
    hits = (safe.unsqueeze(2) == fnx.arange(c, device=x.device)) & valid.unsqueeze(2)
    is_target = hits.any(1)                                              # (N, C)
    picked = x.gather(1, safe)                                           # (N, C): x[y_j]
    z = aten.relu.default(1 - (picked.unsqueeze(2) - x.unsqueeze(1)))    # (N, j, i)
    keep = valid.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = fnx.where(keep, z, fnx.zeros_like(z)).sum((1, 2)) / c
    return _reduce(loss if input.ndim == 2 else loss.squeeze(0), red)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Per-class binary cross entropy with logits, averaged over the classes (last dim).

    >>> import fnx, fnx.nn.functional as F
    >>> F.multilabel_soft_margin_loss(fnx.tensor([[0.0, 0.0]]), fnx.tensor([[1.0, 0.0]]))
    tensor(0.6931)
    """
    red = _reduction(reduction, size_average, reduce)
    log_sig = aten.log_sigmoid.default
    loss = -(target * log_sig(input) + (1 - target) * log_sig(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.ndim - 1) / input.shape[-1] if input.ndim else loss
    return _reduce(loss, red)
