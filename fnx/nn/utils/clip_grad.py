"""Gradient clipping, written with tensor ops only (no ``.item()``), so a compiled
training step keeps it inside the program."""
from __future__ import annotations

import math
import warnings

from ... import api as fnx
from ...core.grad_mode import no_grad
from ...core.tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of the norms of ``tensors`` (a 0-dim tensor)."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return fnx.tensor(0.0)
    with no_grad():
        norms = [fnx.ops.aten.linalg_vector_norm.default(t, norm_type) for t in tensors]
        stacked = fnx.stack([n.to(tensors[0].device) for n in norms])
        total = fnx.ops.aten.linalg_vector_norm.default(stacked, norm_type)
    if error_if_nonfinite and not bool(fnx.isfinite(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           f"`parameters` is non-finite, so it cannot be clipped. To disable "
                           f"this error and scale the gradients by the non-finite norm anyway, "
                           f"set `error_if_nonfinite=False`")
    return total


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale the gradients in place so their total norm is at most ``max_norm``; returns
    the total norm before clipping.

    >>> import fnx
    >>> p = fnx.nn.Parameter(fnx.zeros(2))
    >>> p.grad = fnx.tensor([3.0, 4.0])
    >>> fnx.nn.utils.clip_grad_norm_([p], 1.0), p.grad
    (tensor(5.), tensor([0.6000, 0.8000]))
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    parameters = list(parameters)
    grads = _grads(parameters)
    if not grads:
        return fnx.tensor(0.0)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None) -> None:
    """Scale the gradients in place by ``max_norm / (total_norm + 1e-6)`` when that is
    below 1 (``total_norm`` computed beforehand, e.g. by ``get_total_norm``).

    >>> import fnx
    >>> p = fnx.nn.Parameter(fnx.zeros(2))
    >>> p.grad = fnx.tensor([3.0, 4.0])
    >>> fnx.nn.utils.clip_grads_with_norm_([p], 1.0, fnx.tensor(5.0)); p.grad
    tensor([0.6000, 0.8000])
    """
    grads = _grads(parameters)
    if not grads:
        return
    if not isinstance(total_norm, Tensor):
        total_norm = fnx.tensor(float(total_norm))
    with no_grad():
        coef = fnx.clamp(float(max_norm) / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device, g.dtype))


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """Deprecated: ``clip_grad_norm_`` (PyTorch keeps this name with a FutureWarning).

    >>> import fnx, warnings
    >>> p = fnx.nn.Parameter(fnx.zeros(2))
    >>> p.grad = fnx.tensor([3.0, 4.0])
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     total = fnx.nn.utils.clip_grad_norm([p], 1.0)
    >>> total, p.grad, w[0].category.__name__
    (tensor(5.), tensor([0.6000, 0.8000]), 'FutureWarning')
    """
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None) -> None:
    """Clamp every gradient element to ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    if math.isnan(clip_value):
        raise ValueError("clip_value is nan")
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
