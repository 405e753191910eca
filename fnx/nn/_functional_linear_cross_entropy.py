"""``linear_cross_entropy``: the cross entropy of a linear layer's logits, as
``F.linear_cross_entropy``. fnx computes it as the composition PyTorch documents as its
reference, ``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``; the
batch chunking that PyTorch's ``options`` selects (a memory saving, same values) is not
implemented, so ``options`` is accepted and has no effect."""
from __future__ import annotations

import math

from ..ops import aten
from ._loss import cross_entropy

__all__ = ["linear_cross_entropy"]


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``.

    ``linear_weight`` is ``(C, in)`` or, for a K-dimensional loss, ``(C, d1, ..., dK, in)``
    (logits ``(N, C, d1, ..., dK)``); ``ignore_index=None`` means -100 for class-index
    targets and is refused with probability targets, as PyTorch's.

    >>> import fnx, fnx.nn.functional as F
    >>> x, w = fnx.tensor([[1.0, 0.0], [0.0, 2.0]]), fnx.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> round(F.linear_cross_entropy(x, w, fnx.tensor([0, 1])).item(), 4)
    0.2201
    """
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.ndim}")
    batch = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {in_features} and {linear_weight.shape[-1]}, "
                           f"respectively")
    classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, "
                           f"(N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*batch, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    if out_features:
        n = math.prod(out_features, start=classes)
        linear_weight = linear_weight.reshape(n, in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(n)
    logits = aten.linear.default(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)
