"""The batch-norm pieces SyncBatchNorm is built from, as PyTorch's top-level functions:
per-channel statistics of a local batch (``batch_norm_stats``), their combination across
replicas (``batch_norm_gather_stats``, ``..._with_counts``, which also update the running
statistics), the normalization itself (``batch_norm_elemt``), the two backward halves
(``batch_norm_backward_reduce``, ``batch_norm_backward_elemt``), and
``batch_norm_update_stats``.  Channels are dim 1; statistics reduce every other dim.
``invstd`` is ``1 / sqrt(var + eps)`` with the biased variance.

>>> import fnx
>>> mean, invstd = fnx.batch_norm_stats(fnx.tensor([[1.0], [3.0]]), 0.0)
>>> mean, invstd
(tensor([2.]), tensor([1.]))
"""
from __future__ import annotations

from ..core.grad_mode import no_grad
from ..ops import aten

__all__ = ["batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats",
           "batch_norm_gather_stats_with_counts", "batch_norm_backward_reduce",
           "batch_norm_backward_elemt", "batch_norm_update_stats"]


def _dims(input):
    if input.ndim < 2:
        raise RuntimeError(f"batch_norm: expected an input with at least 2 dims (N, C, ...), "
                           f"got {input.ndim}")
    return [0] + list(range(2, input.ndim))


def _channel(t, ndim):
    return t.reshape([1, -1] + [1] * (ndim - 2))


def batch_norm_stats(input, eps):
    """``(mean, invstd)`` per channel of ``input``.

    >>> import fnx
    >>> fnx.batch_norm_stats(fnx.tensor([[1.0], [3.0]]), 0.0)
    (tensor([2.]), tensor([1.]))
    """
    dims = _dims(input)
    var, mean = aten.var_mean.correction(input, dims, correction=0)
    return mean, (var + eps).rsqrt()


def batch_norm_elemt(input, weight, bias, mean, invstd, eps):
    """``(input - mean) * invstd * weight + bias`` per channel (``eps`` is unused: it is
    already in ``invstd``).

    >>> import fnx
    >>> x = fnx.tensor([[1.0], [3.0]])
    >>> fnx.batch_norm_elemt(x, None, None, fnx.tensor([2.0]), fnx.tensor([1.0]), 0.0)
    tensor([[-1.],
            [ 1.]])
    """
    n = input.ndim
    _dims(input)
    out = (input - _channel(mean, n)) * _channel(invstd, n)
    if weight is not None:
        out = out * _channel(weight, n)
    if bias is not None:
        out = out + _channel(bias, n)
    return out


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                        momentum, eps, counts):
    """Combine per-replica ``mean``/``invstd`` (rows, one per replica, over ``counts``
    elements each) into the global ``(mean, invstd)``; update the running statistics in
    place with momentum (the running variance unbiased).

    >>> import fnx
    >>> m, s = fnx.batch_norm_gather_stats_with_counts(
    ...     fnx.ones(1, 1), fnx.tensor([[0.0], [2.0]]), fnx.tensor([[1.0], [1.0]]),
    ...     None, None, 0.1, 0.0, fnx.tensor([2.0, 2.0]))
    >>> m, s
    (tensor([1.]), tensor([0.7071]))
    """
    counts = counts.to(mean.dtype).reshape(-1, 1)
    total = counts.sum(0)
    var_i = invstd.reciprocal().square() - eps
    g_mean = (counts * mean).sum(0) / total
    g_var = (counts * (var_i + (mean - g_mean).square())).sum(0) / total
    if running_mean is not None or running_var is not None:
        with no_grad():
            if running_mean is not None:
                running_mean.copy_(running_mean * (1 - momentum) +
                                   g_mean.to(running_mean.dtype) * momentum)
            if running_var is not None:
                unbiased = g_var * total / (total - 1)
                running_var.copy_(running_var * (1 - momentum) +
                                  unbiased.to(running_var.dtype) * momentum)
    return g_mean, (g_var + eps).rsqrt()


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps,
                            count):
    """``batch_norm_gather_stats_with_counts`` with the same ``count`` for every replica.

    >>> import fnx
    >>> fnx.batch_norm_gather_stats(fnx.ones(1, 1), fnx.tensor([[0.0], [2.0]]),
    ...                             fnx.tensor([[1.0], [1.0]]), None, None, 0.1, 0.0, 2)
    (tensor([1.]), tensor([0.7071]))
    """
    counts = aten.full([mean.shape[0]], float(count), dtype=mean.dtype, device=mean.device)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                               momentum, eps, counts)


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g,
                               bias_g):
    """The per-channel sums of the backward pass: ``(sum_dy, sum_dy_xmu, grad_weight,
    grad_bias)``; ``sum_dy``/``sum_dy_xmu`` are None unless ``input_g``, the gradients None
    unless asked for.

    >>> import fnx
    >>> x = fnx.tensor([[1.0], [3.0]])
    >>> fnx.batch_norm_backward_reduce(fnx.ones(2, 1), x, fnx.tensor([2.0]), fnx.tensor([1.0]),
    ...                                None, True, True, True)
    (tensor([2.]), tensor([0.]), tensor([0.]), tensor([2.]))
    """
    dims = _dims(input)
    n = input.ndim
    sum_dy = grad_out.sum(dims)
    sum_dy_xmu = (grad_out * (input - _channel(mean, n))).sum(dims)
    grad_weight = sum_dy_xmu * invstd if weight_g else None
    grad_bias = sum_dy if bias_g else None
    return (sum_dy if input_g else None, sum_dy_xmu if input_g else None, grad_weight,
            grad_bias)


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu,
                              count):
    """The input gradient from the (globally reduced) sums over ``count.sum()`` elements:
    ``(dy - sum_dy/N - (x - mean) * invstd^2 * sum_dy_xmu/N) * invstd * weight``.

    >>> import fnx
    >>> x = fnx.tensor([[1.0], [3.0]])
    >>> fnx.batch_norm_backward_elemt(fnx.ones(2, 1), x, fnx.tensor([2.0]), fnx.tensor([1.0]),
    ...                               None, fnx.tensor([2.0]), fnx.tensor([0.0]), fnx.tensor([2]))
    tensor([[0.],
            [0.]])
    """
    n = input.ndim
    _dims(input)
    total = count.sum().to(grad_out.dtype) if hasattr(count, "sum") else float(count)
    mean_dy = _channel(sum_dy / total, n)
    mean_dy_xmu = _channel(sum_dy_xmu / total, n)
    inv = _channel(invstd, n)
    scale = inv if weight is None else inv * _channel(weight, n)
    return (grad_out - mean_dy - (input - _channel(mean, n)) * inv.square() * mean_dy_xmu) \
        * scale


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """``(mean, biased var)`` per channel of ``input``; the running statistics (if given)
    move toward the batch's by ``momentum`` (the variance unbiased).

    >>> import fnx
    >>> rm, rv = fnx.zeros(1), fnx.ones(1)
    >>> fnx.batch_norm_update_stats(fnx.tensor([[1.0], [3.0]]), rm, rv, 0.5), rm, rv
    ((tensor([2.]), tensor([1.])), tensor([1.]), tensor([1.5000]))
    """
    dims = _dims(input)
    var, mean = aten.var_mean.correction(input, dims, correction=0)
    count = input.numel() // input.shape[1]
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(running_mean * (1 - momentum) + mean * momentum)
        if running_var is not None:
            unbiased = var * count / max(count - 1, 1)
            running_var.copy_(running_var * (1 - momentum) + unbiased * momentum)
    return mean, var
