"""Autograd functions behind layers: ``SyncBatchNorm``'s batch norm with statistics
shared across the processes of a group.

Forward all-reduces each channel's (sum, sum of squares, count) so every process
normalizes with the statistics of the whole global batch; backward all-reduces each
channel's (sum of dy, sum of dy * (x - mean)), the two terms of the input gradient that
span the batch.  The weight and bias gradients stay local sums, as PyTorch returns them
(DistributedDataParallel then averages them like any parameter gradient).
"""
from __future__ import annotations

from ... import api as fnx
from ... import distributed as dist
from ...autograd.function import Function

__all__ = ["SyncBatchNormFunction"]


def _channel_view(t, ndim):
    return t.reshape([1, t.shape[0]] + [1] * (ndim - 2))


class SyncBatchNormFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum,
                process_group):
        c = input.shape[1]
        axes = [0] + list(range(2, input.ndim))
        # sums in float64 (sum of squares minus squared mean cancels in float32)
        x = input.to(fnx.float64)
        local = fnx.cat([x.sum(axes), (x * x).sum(axes),
                         fnx.full([1], input.numel() // c, dtype=fnx.float64,
                                  device=input.device)])
        dist.all_reduce(local, group=process_group)
        n = float(local[2 * c])
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {list(input.shape)} across the process group")
        mean = local[:c] / n
        var = (local[c:2 * c] / n - mean * mean).clamp(min=0.0)
        invstd = 1.0 / (var + eps).sqrt()
        if running_mean is not None:
            with fnx.no_grad():
                running_mean.mul_(1 - momentum).add_(momentum * mean.to(running_mean.dtype))
                unbiased = (var * (n / (n - 1))).to(running_var.dtype)
                running_var.mul_(1 - momentum).add_(momentum * unbiased)
        xhat = ((x - _channel_view(mean, x.ndim)) * _channel_view(invstd, x.ndim))
        out = xhat.to(input.dtype)
        if weight is not None:
            out = out * _channel_view(weight, input.ndim)
        if bias is not None:
            out = out + _channel_view(bias, input.ndim)
        ctx.save_for_backward(input, weight, mean, invstd)
        ctx.count = n
        ctx.process_group = process_group
        return out

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, mean, invstd = ctx.saved_tensors
        c, nd = input.shape[1], input.ndim
        axes = [0] + list(range(2, nd))
        dy = grad_output.to(fnx.float64)
        xmu = input.to(fnx.float64) - _channel_view(mean, nd)
        sums = fnx.cat([dy.sum(axes), (dy * xmu).sum(axes)])
        grad_weight = (sums[c:] * invstd).to(input.dtype) if weight is not None else None
        # a copy: ``to`` to the same dtype is a view, and ``sums`` is reduced in place
        grad_bias = sums[:c].clone().to(input.dtype) if ctx.needs_input_grad[2] else None
        dist.all_reduce(sums, group=ctx.process_group)
        mean_dy = _channel_view(sums[:c] / ctx.count, nd)
        mean_dy_xmu = _channel_view(sums[c:] / ctx.count, nd)
        inv = _channel_view(invstd, nd)
        scale = inv if weight is None else inv * _channel_view(weight.to(fnx.float64), nd)
        grad_input = ((dy - mean_dy - xmu * inv * inv * mean_dy_xmu) * scale).to(input.dtype)
        return grad_input, grad_weight, grad_bias, None, None, None, None, None
