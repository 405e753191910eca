"""``fnx.nn.init``: in-place weight initializers, as ``torch.nn.init``.

Every function fills its tensor under ``no_grad`` from fnx's random generators (the global
one unless ``generator=`` is given), so ``fnx.manual_seed`` makes a model's initial weights
reproducible.

>>> import fnx
>>> _ = fnx.manual_seed(0)
>>> w = fnx.nn.init.kaiming_uniform_(fnx.empty(3, 5), a=5 ** 0.5)
>>> bool((w.abs() <= 1 / 5 ** 0.5).all())
True
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from .. import api as fnx
from ..core.grad_mode import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_", "uniform", "normal", "constant",
           "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal", "orthogonal",
           "sparse"]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d")


def calculate_gain(nonlinearity, param=None) -> float:
    """The recommended gain for ``nonlinearity`` (``relu``: sqrt(2), ``tanh``: 5/3, ...).

    >>> import fnx
    >>> fnx.nn.init.calculate_gain("relu") == 2 ** 0.5
    True
    """
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with draws from U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with draws from N(mean, std**2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std**2) draws restricted to [a, b], by rejection as PyTorch 2.13
    does (so a seeded fill draws PyTorch's values): redraw normals outside [a, b] when
    the interval holds more than 30% of the mass, else uniform proposals on [a, b]
    accepted with probability pdf / pdf(mode)."""
    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0
    with no_grad():
        if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
            lo, hi = (fnx.tensor(v, dtype=tensor.dtype).item() for v in (a, b))
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                redraw = fnx.empty_like(result).normal_(mean, std, generator=generator)
                result = fnx.where(mask, redraw, result)
            if result is not tensor:
                tensor.copy_(result)
            return tensor
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        candidates = fnx.empty_like(tensor)
        accept = fnx.empty_like(tensor)

        def log_pdf_minus_peak(c):
            return c.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)

        tensor.uniform_(a, b, generator=generator)
        candidates.copy_(tensor)
        log_pdf_minus_peak(candidates)
        pending = accept.uniform_(generator=generator).log_().gt(candidates)
        result = tensor
        while pending.any():
            candidates.uniform_(a, b, generator=generator)
            result = fnx.where(pending, candidates, result)
            log_pdf_minus_peak(candidates)
            pending = fnx.where(pending, accept.uniform_(generator=generator).log_()
                                .gt(candidates), pending)
        if result is not tensor:
            tensor.copy_(result)
        return tensor


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """The identity matrix, for a 2-D tensor."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(fnx.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def dirac_(tensor, groups=1):
    """The Dirac delta for 3-5-D convolution weights: the layer passes its input through."""
    d = tensor.ndim
    if d not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for i in range(min_dim):
                idx = (g * out_per_group + i, i) + tuple(s // 2 for s in sizes[2:])
                tensor[idx] = 1
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std**2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound) with ``bound = gain * sqrt(3 / fan)`` (He); ``Linear`` and ``Conv``
    use ``a=sqrt(5)``, i.e. ``bound = 1 / sqrt(fan_in)``."""
    if 0 in tensor.shape:
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std**2) with ``std = gain / sqrt(fan)`` (He)."""
    if 0 in tensor.shape:
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian draw."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    # Drawn in the tensor's dtype, as PyTorch does (the same normals for the same seed).
    flat = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
    a = flat.numpy()
    if rows < cols:
        a = a.T
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.copy_(fnx.tensor(q.reshape(tensor.shape) * gain, dtype=tensor.dtype))
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """N(0, std**2) with a fraction ``sparsity`` of each column set to zero."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for c in range(cols):
            idx = fnx.randperm(rows, generator=generator)[:num_zeros]
            tensor[idx, c] = 0
    return tensor


def _no_grad_uniform_(tensor, a, b, generator=None):
    return uniform_(tensor, a, b, generator)


def _deprecated(new, example="fnx.empty(2, 3)"):
    """PyTorch's old name of the initializer ``new`` (no trailing underscore): it warns
    (FutureWarning, as PyTorch) and calls ``new``; ``example``: the arguments of the
    docstring's call."""
    old = new.__name__[:-1]

    @functools.wraps(new)
    def deprecated(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
                      FutureWarning, stacklevel=2)
        return new(*args, **kwargs)
    deprecated.__name__ = deprecated.__qualname__ = old
    deprecated.__doc__ = (f"Deprecated: ``{new.__name__}`` (PyTorch keeps this name with a "
                          f"FutureWarning).\n\n    >>> import fnx, warnings\n"
                          f"    >>> with warnings.catch_warnings(record=True) as w:\n"
                          f"    ...     warnings.simplefilter('always')\n"
                          f"    ...     _ = fnx.nn.init.{old}({example})\n"
                          f"    >>> w[0].category.__name__\n    'FutureWarning'\n")
    return deprecated


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
constant = _deprecated(constant_, "fnx.empty(2, 3), 0.5")
sparse = _deprecated(sparse_, "fnx.empty(4, 3), 0.5")
