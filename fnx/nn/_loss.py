"""Losses and distances of ``fnx.nn.functional``, which re-exports them: PyTorch's
arguments (``reduction='mean'``, the deprecated ``size_average``/``reduce`` flags) over the
aten loss ops, and short compositions of fnx ops for the losses with no op of their own.
"""
from __future__ import annotations

import math
import warnings

from .. import api as fnx
from ..core.grad_mode import no_grad
from ..ops import aten

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _legacy_reduction(size_average, reduce) -> str:
    """The reduction string the deprecated ``size_average``/``reduce`` flags mean."""
    warnings.warn("size_average and reduce args will be deprecated, please use "
                  "reduction='mean'/'sum'/'none' instead.", stacklevel=4)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "none" if not reduce else "mean" if size_average else "sum"


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
    """``1 - cos(x1, x2)`` for ``target == 1``, ``max(0, cos(x1, x2) - margin)`` for -1."""
    cos = cosine_similarity(input1, input2, dim=-1)
    loss = fnx.where(target == 1, 1 - cos, aten.relu.default(cos - margin))
    return _reduce(loss, _reduction(reduction, size_average, reduce))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """``0.5 * (log(max(var, eps)) + (input - target)**2 / max(var, eps))`` (+ const)."""
    if var.ndim == input.ndim - 1 and var.ndim and tuple(var.shape) == tuple(input.shape[:-1]):
        var = var.unsqueeze(-1)
    if (var < 0).any():
        raise ValueError("var has negative entry/entries")
    var = var.clone()
    with no_grad():     # clamped for stability without stopping the gradient, as PyTorch
        var.clamp_(eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, _reduction(reduction))


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
