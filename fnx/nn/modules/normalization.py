"""Normalization layers: batch (and its distributed twin SyncBatchNorm), layer, group, RMS,
instance and local response norm."""
from __future__ import annotations

import numbers
import warnings

from ... import api as fnx
from ... import distributed as dist
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from ._functions import SyncBatchNormFunction
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "RMSNorm",
           "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "SyncBatchNorm",
           "LocalResponseNorm", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class _NormBase(Module):
    """Affine weight/bias and the running statistics (buffers) of batch/instance norm."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        kw = {"device": device, "dtype": dtype}
        if affine:
            self.weight = Parameter(fnx.empty(num_features, **kw))
            if bias:
                self.bias = Parameter(fnx.empty(num_features, **kw))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", fnx.zeros(num_features, **kw))
            self.register_buffer("running_var", fnx.ones(num_features, **kw))
            self.register_buffer("num_batches_tracked",
                                 fnx.tensor(0, dtype=fnx.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self) -> str:
        # torch 2.13 prints whether there is a bias (False whenever affine is)
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:      # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None,
                            self.running_var if keep else None, self.weight, self.bias,
                            use_batch, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch norm over ``(N, C)`` or ``(N, C, L)``: per-channel batch statistics in training
    (updating ``running_mean``/``running_var`` with ``momentum``), running ones in eval.

    >>> import fnx
    >>> bn = fnx.nn.BatchNorm1d(3)
    >>> bn
    BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> list(bn.state_dict())
    ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
    """

    def _check_input_dim(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch norm over ``(N, C, H, W)``."""

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch norm over ``(N, C, D, H, W)``."""

    def _check_input_dim(self, input):
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


class _InstanceNorm(_NormBase):
    _nd = 0

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def forward(self, input):
        n = self._nd
        if input.ndim not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.ndim}D input)")
        batched = input.ndim == n + 2
        x = input if batched else input.unsqueeze(0)
        if x.shape[1] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim=1 to match num_features "
                                 f"({self.num_features}), but got: {x.shape[1]}.")
            warnings.warn(f"input's size at dim={input.ndim - n - 1} does not match "
                          f"num_features. You can silence this warning by not passing in "
                          f"num_features, which is not used because affine=False",
                          stacklevel=2)
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats, self.momentum
                              if self.momentum is not None else 0.0, self.eps)
        return out if batched else out.squeeze(0)


class InstanceNorm1d(_InstanceNorm):
    _nd = 1


class InstanceNorm2d(_InstanceNorm):
    """Normalize each (sample, channel) plane of ``(N, C, H, W)``."""
    _nd = 2


class InstanceNorm3d(_InstanceNorm):
    _nd = 3


def _shape(s):
    return (s,) if isinstance(s, numbers.Integral) else tuple(s)


class _LazyNormBase(LazyModuleMixin):
    """The lazy form of batch/instance norm: ``num_features`` from the first input's
    channel dim."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False)
        self.affine, self.track_running_stats = affine, track_running_stats
        kw = {"device": device, "dtype": dtype}
        if affine:
            self.weight = UninitializedParameter(**kw)
            self.bias = UninitializedParameter(**kw)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(**kw)
            self.running_var = UninitializedBuffer(**kw)
            self.num_batches_tracked = fnx.tensor(0, dtype=fnx.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1 if input.ndim > self._unbatched_ndim else 0]
        for t in (self.weight, self.bias, self.running_mean, self.running_var):
            if t is not None:
                t.materialize((self.num_features,))
        self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """A ``BatchNorm1d`` whose ``num_features`` comes from its first input.

    >>> import fnx
    >>> m = fnx.nn.LazyBatchNorm1d()
    >>> m(fnx.randn(4, 3)).shape, m.running_mean.shape
    (fnx.Size([4, 3]), fnx.Size([3]))
    """
    cls_to_become = BatchNorm1d
    _unbatched_ndim = 1


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """A ``BatchNorm2d`` whose ``num_features`` comes from its first input."""
    cls_to_become = BatchNorm2d
    _unbatched_ndim = 0


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """A ``BatchNorm3d`` whose ``num_features`` comes from its first input."""
    cls_to_become = BatchNorm3d
    _unbatched_ndim = 0


class _LazyInstanceNorm(_LazyNormBase):
    def __init__(self, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False,
                 device=None, dtype=None):
        super().__init__(eps, momentum, affine, track_running_stats, device, dtype)


class LazyInstanceNorm1d(_LazyInstanceNorm, InstanceNorm1d):
    """An ``InstanceNorm1d`` whose ``num_features`` comes from its first input."""
    cls_to_become = InstanceNorm1d
    _unbatched_ndim = 2


class LazyInstanceNorm2d(_LazyInstanceNorm, InstanceNorm2d):
    """An ``InstanceNorm2d`` whose ``num_features`` comes from its first input."""
    cls_to_become = InstanceNorm2d
    _unbatched_ndim = 3


class LazyInstanceNorm3d(_LazyInstanceNorm, InstanceNorm3d):
    """An ``InstanceNorm3d`` whose ``num_features`` comes from its first input."""
    cls_to_become = InstanceNorm3d
    _unbatched_ndim = 4


class LayerNorm(Module):
    """Normalize over the trailing ``normalized_shape`` dims, then scale and shift.

    >>> import fnx
    >>> ln = fnx.nn.LayerNorm(4)
    >>> ln
    LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    >>> ln(fnx.arange(8.).reshape(2, 4)).sum(-1).tolist()
    [0.0, 0.0]
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        kw = {"device": device, "dtype": dtype}
        if elementwise_affine:
            self.weight = Parameter(fnx.empty(*self.normalized_shape, **kw))
            if bias:
                self.bias = Parameter(fnx.empty(*self.normalized_shape, **kw))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalize over groups of channels of ``(N, C, *)``.

    >>> import fnx
    >>> fnx.nn.GroupNorm(2, 4)
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(fnx.empty(num_channels, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(fnx.empty(num_channels, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing dims (``eps=None``: the
    dtype's machine epsilon).

    >>> import fnx
    >>> fnx.nn.RMSNorm(4)
    RMSNorm((4,), eps=None, elementwise_affine=True)
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(fnx.empty(*self.normalized_shape, device=device,
                                              dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class SyncBatchNorm(_BatchNorm):
    """Batch norm over any input of 2 or more dims whose training statistics are those of
    the global batch: every process of ``process_group`` (default: the world) normalizes
    its part with the mean and variance over all the processes' parts, and the input
    gradients account for every part.  In one process (or with no process group
    initialized, or in eval mode) it is ``BatchNorm`` over dim 1.

    >>> import fnx
    >>> net = fnx.nn.Sequential(fnx.nn.Conv2d(3, 4, 1), fnx.nn.BatchNorm2d(4))
    >>> net = fnx.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    >>> net[1]
    SyncBatchNorm(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> net(fnx.randn(2, 3, 5, 5)).shape
    fnx.Size([2, 4, 5, 5])
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        if not (self.training and dist.is_available() and dist.is_initialized()
                and dist.get_world_size(self.process_group) > 1):
            return super().forward(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:      # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        keep = self.track_running_stats
        return SyncBatchNormFunction.apply(input, self.weight, self.bias,
                                           self.running_mean if keep else None,
                                           self.running_var if keep else None, self.eps,
                                           factor, self.process_group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every ``BatchNorm*d`` in it replaced by a ``SyncBatchNorm``
        sharing its parameters and running statistics."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group,
                      bias=module.bias is not None or not module.affine)
            if module.affine:
                with fnx.no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


class LocalResponseNorm(Module):
    """Normalize each channel by its ``size`` neighbouring channels:
    ``x / (k + alpha * mean(x**2 over the window)) ** beta``.

    >>> import fnx
    >>> lrn = fnx.nn.LocalResponseNorm(2)
    >>> lrn
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    >>> lrn(fnx.ones(1, 4, 3, 3)).shape
    fnx.Size([1, 4, 3, 3])
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
