"""Normalization: layer, RMS, group, batch and instance norm, and their backward ops."""
from __future__ import annotations

import math

from ....core import dtype as D
from ....core.grad_mode import no_grad
from ....ops import aten
from ...registry import TensorMeta, defop, derivative
from ._common import _HALF, CORE, _channel_view, _check_float, _full, _opmath, _same, _to, _up


def _layer_norm_check(input, normalized_shape, weight, bias):
    ns = tuple(int(s) for s in normalized_shape)
    if not ns:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(ns)}")
    shape = tuple(input.shape)
    if len(shape) < len(ns) or shape[len(shape) - len(ns):] != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size"
                           f"{list(shape)}")
    _check_float(input, "LayerNormKernelImpl")
    return ns


def _native_layer_norm_meta(input, normalized_shape, weight, bias, eps):
    ns = _layer_norm_check(input, normalized_shape, weight, bias)
    axis = input.ndim - len(ns)
    stat = tuple(input.shape[:axis]) + (1,) * len(ns)
    sd = _opmath(input.dtype) if input.dtype in _HALF else input.dtype
    return _same(input), TensorMeta(stat, sd), TensorMeta(stat, sd)


def _native_layer_norm(input, normalized_shape, weight, bias, eps):
    meta = _native_layer_norm_meta(input, normalized_shape, weight, bias, eps)
    ns = tuple(normalized_shape)
    dims = list(range(input.ndim - len(ns), input.ndim))
    x = _up(input)
    mean = aten.mean.dim(x, dims, True)
    var = aten.var.correction(x, dims, correction=0, keepdim=True)
    rstd = aten.rsqrt(var + eps)
    out = (x - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return _to(out, input.dtype), _to(mean, meta[1].dtype), _to(rstd, meta[2].dtype)


native_layer_norm = defop(
    "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
    "float eps) -> (Tensor, Tensor, Tensor)", tags=CORE, meta=_native_layer_norm_meta,
    decomposition=_native_layer_norm, explicit=True)


def _native_layer_norm_backward_meta(grad_out, input, normalized_shape, mean, rstd, weight,
                                     bias, output_mask):
    _layer_norm_check(input, normalized_shape, weight, bias)
    return (_same(input) if output_mask[0] else None,
            _same(weight) if output_mask[1] and weight is not None else None,
            _same(bias) if output_mask[2] and bias is not None else None)


def _native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                                output_mask):
    _layer_norm_check(input, normalized_shape, weight, bias)
    ns = tuple(normalized_shape)
    axis = input.ndim - len(ns)
    inner = list(range(axis, input.ndim))
    outer = list(range(axis))
    n = math.prod(ns)
    x, g = _up(input), _up(grad_out)
    xhat = (x - mean) * rstd
    gw = g * weight if weight is not None else g
    gi = gw_ = None
    if output_mask[0]:
        a = aten.sum.dim_IntList(gw, inner, True)
        b = aten.sum.dim_IntList(gw * xhat, inner, True)
        gi = _to((gw * n - a - xhat * b) * (rstd / n), input.dtype)
    if output_mask[1] and weight is not None:
        gw_ = _to(aten.sum.dim_IntList(g * xhat, outer, False) if outer else g * xhat,
                  weight.dtype)
    gb = None
    if output_mask[2] and bias is not None:
        gb = _to(aten.sum.dim_IntList(g, outer, False) if outer else aten.clone(g), bias.dtype)
    return gi, gw_, gb


native_layer_norm_backward = defop(
    "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
    "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) "
    "-> (Tensor, Tensor, Tensor)", tags=CORE, meta=_native_layer_norm_backward_meta,
    decomposition=_native_layer_norm_backward, explicit=True)


def _stats(x, dims, eps):
    """mean and 1/sqrt(biased var + eps) of ``x`` over ``dims``, kept as size-1 dims."""
    mean = aten.mean.dim(x, dims, True)
    return mean, aten.rsqrt(aten.var.correction(x, dims, correction=0, keepdim=True) + eps)


def _stat_grads(gi, g_mean, g_rstd, x, mean, rstd, n, view, shape):
    """Add to the input's gradient what flowed into the saved mean and rstd outputs
    (viewed as ``view`` to broadcast over ``x``): d mean/dx = 1/n, d rstd/dx =
    -rstd^3 (x - mean) / n."""
    extra = None
    inv_n = 1.0 / n if n else math.nan      # statistics over no elements are NaN
    if g_mean is not None:
        extra = aten.expand(aten.reshape(g_mean, view), list(x.shape)) * inv_n
    if g_rstd is not None:
        r = aten.reshape(g_rstd, view) * rstd * rstd * rstd * -inv_n
        extra = (x - mean) * r if extra is None else extra + (x - mean) * r
    if extra is None:
        return gi
    extra = aten.reshape(extra, shape)
    return extra if gi is None else gi + extra


@derivative(native_layer_norm)
def _native_layer_norm_derivative(grads, input, normalized_shape, weight, bias, eps,
                                  needs_input_grad):
    g_out, g_mean, g_rstd = grads
    ns = tuple(normalized_shape)
    axis = input.ndim - len(ns)
    x = _up(input)
    mean, rstd = _stats(x, list(range(axis, input.ndim)), eps)
    gi = gw = gb = None
    if g_out is not None:
        gi, gw, gb = aten.native_layer_norm_backward(g_out, input, list(ns), mean, rstd, weight,
                                                     bias, list(needs_input_grad))
    if needs_input_grad[0]:
        gi = _stat_grads(gi, g_mean, g_rstd, x, mean, rstd, math.prod(ns), list(mean.shape),
                         list(input.shape))
    return gi, gw, gb


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return aten.native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


layer_norm = defop("layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
                   "Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
                   decomposition=_layer_norm)


def _rms_norm(input, normalized_shape, weight=None, eps=None):
    _layer_norm_check(input, normalized_shape, weight, None)
    dims = list(range(input.ndim - len(normalized_shape), input.ndim))
    x = _up(input)
    if eps is None:     # torch.finfo(input.dtype).eps
        eps = {D.float64: 2.220446049250313e-16, D.float16: 0.0009765625,
               D.bfloat16: 0.0078125}.get(input.dtype, 1.1920928955078125e-07)
    out = x * aten.rsqrt(aten.mean.dim(x * x, dims, True) + eps)
    if weight is not None:
        out = out * weight
    return _to(out, input.dtype)


rms_norm = defop("rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
                 "float? eps=None) -> Tensor", decomposition=_rms_norm)


def _group_norm_check(input, weight, bias, N, C, HxW, group):
    if group <= 0 or C % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={group}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number "
                               f"of channels in input, but got {name} of shape "
                               f"{list(t.shape)} and input of shape {list(input.shape)}")
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected the input of shape {list(input.shape)} to have "
                           f"N * C * HxW = {N * C * HxW} elements")
    _check_float(input, "GroupNormKernelImpl")


def _native_group_norm_meta(input, weight, bias, N, C, HxW, group, eps):
    _group_norm_check(input, weight, bias, N, C, HxW, group)
    return (_same(input), TensorMeta((N, group), input.dtype),
            TensorMeta((N, group), input.dtype))


def _native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    _group_norm_check(input, weight, bias, N, C, HxW, group)
    x = aten.view(_up(input), [N, group, (C // group) * HxW])
    mean = aten.mean.dim(x, [2], True)
    var = aten.var.correction(x, [2], correction=0, keepdim=True)
    rstd = aten.rsqrt(var + eps)
    out = aten.view((x - mean) * rstd, list(input.shape))
    if weight is not None:
        out = out * _channel_view(weight, input.ndim)
    if bias is not None:
        out = out + _channel_view(bias, input.ndim)
    return (_to(out, input.dtype), _to(aten.view(mean, [N, group]), input.dtype),
            _to(aten.view(rstd, [N, group]), input.dtype))


native_group_norm = defop(
    "native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, "
    "SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)", tags=CORE,
    meta=_native_group_norm_meta, decomposition=_native_group_norm, explicit=True)


def _native_group_norm_backward_meta(grad_out, input, mean, rstd, weight, N, C, HxW, group,
                                     output_mask):
    _group_norm_check(input, weight, None, N, C, HxW, group)
    pshape = (C,)
    dt = input.dtype
    return (_same(input) if output_mask[0] else None,
            TensorMeta(pshape, dt) if output_mask[1] else None,
            TensorMeta(pshape, dt) if output_mask[2] else None)


def _native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group,
                                output_mask):
    _group_norm_check(input, weight, None, N, C, HxW, group)
    cg = C // group
    x = aten.view(_up(input), [N, group, cg, HxW])
    g = aten.view(_up(grad_out), [N, group, cg, HxW])
    m = aten.view(_up(mean), [N, group, 1, 1])
    r = aten.view(_up(rstd), [N, group, 1, 1])
    xhat = (x - m) * r
    gi = gw = gb = None
    if output_mask[0]:
        gx = g * aten.view(_up(weight), [1, group, cg, 1]) if weight is not None else g
        n = cg * HxW
        a = aten.sum.dim_IntList(gx, [2, 3], True)
        b = aten.sum.dim_IntList(gx * xhat, [2, 3], True)
        gi = _to(aten.view((gx * n - a - xhat * b) * (r / n), list(input.shape)), input.dtype)
    if output_mask[1]:
        gw = _to(aten.view(aten.sum.dim_IntList(g * xhat, [0, 3], False), [C]), input.dtype)
    if output_mask[2]:
        gb = _to(aten.view(aten.sum.dim_IntList(g, [0, 3], False), [C]), input.dtype)
    return gi, gw, gb


native_group_norm_backward = defop(
    "native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, "
    "Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) "
    "-> (Tensor, Tensor, Tensor)", tags=CORE, meta=_native_group_norm_backward_meta,
    decomposition=_native_group_norm_backward, explicit=True)


@derivative(native_group_norm)
def _native_group_norm_derivative(grads, input, weight, N, C, HxW, group, eps,
                                  needs_input_grad):
    g_out, g_mean, g_rstd = grads
    x = aten.reshape(_up(input), [N, group, (C // group) * HxW])
    mean, rstd = _stats(x, [2], eps)
    gi = gw = gb = None
    if g_out is not None:
        gi, gw, gb = aten.native_group_norm_backward(
            g_out, input, aten.view(mean, [N, group]), aten.view(rstd, [N, group]), weight,
            N, C, HxW, group, list(needs_input_grad))
    if needs_input_grad[0]:
        gi = _stat_grads(gi, g_mean, g_rstd, x, mean, rstd, (C // group) * HxW,
                         [N, group, 1], list(input.shape))
    return gi, gw, gb


def _group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    N, C = input.shape[:2]
    HxW = math.prod(input.shape[2:])
    return aten.native_group_norm(input, weight, bias, N, C, HxW, num_groups, eps)[0]


group_norm = defop("group_norm(Tensor input, int num_groups, Tensor? weight=None, "
                   "Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True) -> Tensor",
                   decomposition=_group_norm)


def _bn_check(input, weight, bias, running_mean, running_var):
    if input.ndim < 2:
        raise RuntimeError(f"batch_norm: expected input with at least 2 dimensions (N, C, ...), "
                           f"but got input of size {list(input.shape)}")
    c = input.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    _check_float(input, "batch_norm_cpu")
    return c


def _bn_meta(input, weight, bias, running_mean, running_var, training):
    c = _bn_check(input, weight, bias, running_mean, running_var)
    sd = _opmath(input.dtype)
    n = c if training else 0
    return _same(input), TensorMeta((n,), sd), TensorMeta((n,), sd)


def _update_running_stats(input, c, mean, var, running_mean, running_var, momentum):
    # The buffers are state, never part of the autograd graph (even when this runs with
    # grad recording on inside an autograd kernel).
    with no_grad():
        n = input.numel() // c if c else 0
        unbiased = var * (n / (n - 1)) if n > 1 else var / 0.0
        new_mean = running_mean * (1 - momentum) + mean * momentum
        new_var = running_var * (1 - momentum) + unbiased * momentum
        # both computed before either is written: no partial update on error
        aten.copy_(running_mean, _to(new_mean, running_mean.dtype))
        aten.copy_(running_var, _to(new_var, running_var.dtype))


def _batch_norm_impl(input, weight, bias, running_mean, running_var, training, momentum, eps):
    c = _bn_check(input, weight, bias, running_mean, running_var)
    dims = [0] + list(range(2, input.ndim))
    x = _up(input)
    if training:
        mean = aten.mean.dim(x, dims, False)
        var = aten.var.correction(x, dims, correction=0, keepdim=False)
        invstd = aten.rsqrt(var + eps)
        if running_mean is not None:
            _update_running_stats(input, c, mean, var, running_mean, running_var, momentum)
        save_mean, save_invstd = mean, invstd
    else:
        mean, invstd = _up(running_mean), aten.rsqrt(_up(running_var) + eps)
        empty = _full([0], 0, x.dtype, x.device)
        save_mean, save_invstd = empty, aten.clone(empty)
    out = (x - _channel_view(mean, input.ndim)) * _channel_view(invstd, input.ndim)
    if weight is not None:
        out = out * _channel_view(weight, input.ndim)
    if bias is not None:
        out = out + _channel_view(bias, input.ndim)
    return _to(out, input.dtype), save_mean, save_invstd


_native_batch_norm_legit = defop(
    "_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, "
    "Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, "
    "float eps) -> (Tensor, Tensor, Tensor)",
    tags=CORE,
    meta=lambda input, weight, bias, rm, rv, training, momentum, eps:
        _bn_meta(input, weight, bias, rm, rv, training),
    decomposition=_batch_norm_impl, explicit=True)
_native_batch_norm_legit_no_stats = defop(
    "_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, "
    "bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)", tags=CORE,
    meta=lambda input, weight, bias, training, momentum, eps:
        _bn_meta(input, weight, bias, None, None, True),
    decomposition=lambda input, weight, bias, training, momentum, eps:
        _batch_norm_impl(input, weight, bias, None, None, True, momentum, eps),
    explicit=True)
_native_batch_norm_legit_no_training = defop(
    "_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, "
    "Tensor running_mean, Tensor running_var, float momentum, float eps) "
    "-> (Tensor, Tensor, Tensor)", tags=CORE,
    meta=lambda input, weight, bias, rm, rv, momentum, eps:
        _bn_meta(input, weight, bias, rm, rv, False),
    decomposition=lambda input, weight, bias, rm, rv, momentum, eps:
        _batch_norm_impl(input, weight, bias, rm, rv, False, momentum, eps),
    explicit=True)


def _bn_backward(grads, input, weight, eps, running_mean, running_var, training,
                 needs_input_grad):
    """Gradients of batch norm's (input, weight, bias). Training statistics are
    recomputed from the input (see the module docstring); the running buffers are written
    by the forward, never differentiated."""
    g_out, g_mean, g_invstd = grads[0], grads[1], grads[2]
    nd = input.ndim
    c = input.shape[1]
    dims = [0] + list(range(2, nd))
    view = [1, c] + [1] * (nd - 2)
    x = _up(input)
    if training:
        mean, invstd = _stats(x, dims, eps)
    else:
        mean = aten.reshape(_up(running_mean), view)
        invstd = aten.reshape(aten.rsqrt(_up(running_var) + eps), view)
    gi = gw = gb = None
    if g_out is not None:
        g = _up(g_out)
        xhat = (x - mean) * invstd
        if needs_input_grad[2]:
            gb = aten.sum.dim_IntList(g, dims, False)
        if needs_input_grad[1]:
            gw = aten.sum.dim_IntList(g * xhat, dims, False)
        if needs_input_grad[0]:
            gy = g * aten.reshape(_up(weight), view) if weight is not None else g
            if training:
                a = aten.mean.dim(gy, dims, True)
                b = aten.mean.dim(gy * xhat, dims, True)
                gi = (gy - a - xhat * b) * invstd
            else:
                gi = gy * invstd
    if training and needs_input_grad[0]:
        n = input.numel() // c if c else 0
        gi = _stat_grads(gi, g_mean, g_invstd, x, mean, invstd, n, view, list(input.shape))
    return gi, gw, gb


def _bn_running_stats_backward(g_out, input, weight, running_mean, running_var, eps,
                               needs_input_grad):
    """Eval mode reads the running statistics: out = (x - rm) (rv + eps)^-1/2 w + b.
    (PyTorch refuses to differentiate them; their chain rule is cheap, so fnx gives it.)"""
    if g_out is None or not (needs_input_grad[3] or needs_input_grad[4]):
        return None, None
    nd = input.ndim
    c = input.shape[1]
    dims = [0] + list(range(2, nd))
    view = [1, c] + [1] * (nd - 2)
    g = _up(g_out)
    if weight is not None:
        g = g * aten.reshape(_up(weight), view)
    invstd = aten.rsqrt(_up(running_var) + eps)
    grm = grv = None
    if needs_input_grad[3]:
        grm = aten.reshape(-aten.sum.dim_IntList(g, dims, False) * invstd,
                           list(running_mean.shape))
    if needs_input_grad[4]:
        xc = _up(input) - aten.reshape(_up(running_mean), view)
        grv = aten.reshape(aten.sum.dim_IntList(g * xc, dims, False) * invstd * invstd * invstd
                           * -0.5, list(running_var.shape))
    return grm, grv


@derivative(_native_batch_norm_legit)
def _native_batch_norm_legit_backward(grads, input, weight, running_mean, running_var,
                                      training, eps, needs_input_grad):
    return _bn_backward(grads, input, weight, eps, running_mean, running_var, training,
                        needs_input_grad)


@derivative(_native_batch_norm_legit_no_stats)
def _native_batch_norm_legit_no_stats_backward(grads, input, weight, eps, needs_input_grad):
    return _bn_backward(grads, input, weight, eps, None, None, True, needs_input_grad)


@derivative(_native_batch_norm_legit_no_training)
def _native_batch_norm_legit_no_training_backward(grads, input, weight, running_mean,
                                                  running_var, eps, needs_input_grad):
    return _bn_backward(grads, input, weight, eps, running_mean, running_var, False,
                        needs_input_grad) + \
        _bn_running_stats_backward(grads[0], input, weight, running_mean, running_var, eps,
                                   needs_input_grad)


def _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    if training:
        if running_mean is not None and running_var is not None:
            return aten._native_batch_norm_legit(input, weight, bias, running_mean, running_var,
                                                 True, momentum, eps)
        return aten._native_batch_norm_legit.no_stats(input, weight, bias, True, momentum, eps)
    if running_mean is None or running_var is None:
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    return aten._native_batch_norm_legit_no_training(input, weight, bias, running_mean,
                                                     running_var, momentum, eps)


native_batch_norm = defop(
    "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    decomposition=_native_batch_norm)


def _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                cudnn_enabled):
    return _native_batch_norm(input, weight, bias, running_mean, running_var, training,
                              momentum, eps)[0]


batch_norm = defop(
    "batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) "
    "-> Tensor", decomposition=_batch_norm)


def _instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                   eps, cudnn_enabled):
    if input.ndim < 2:
        raise RuntimeError(f"instance_norm: expected input with at least 2 dimensions, but got "
                           f"input of size {list(input.shape)}")
    n, c = input.shape[:2]
    shape = [1, n * c] + list(input.shape[2:])
    x = aten.reshape(input, shape)
    w = aten.repeat(weight, [n]) if weight is not None else None
    b = aten.repeat(bias, [n]) if bias is not None else None
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when "
                               "use_input_stats is false")
        rm, rv = aten.repeat(running_mean, [n]), aten.repeat(running_var, [n])
        out = aten._native_batch_norm_legit_no_training(x, w, b, rm, rv, momentum, eps)[0]
        return aten.view(out, list(input.shape))
    if running_mean is not None and running_var is not None:
        rm, rv = aten.repeat(running_mean, [n]), aten.repeat(running_var, [n])
        out = aten._native_batch_norm_legit(x, w, b, rm, rv, True, momentum, eps)[0]
        with no_grad():         # buffers: updated, never part of the graph
            aten.copy_(running_mean, aten.mean.dim(aten.view(rm, [n, c]), [0], False))
            aten.copy_(running_var, aten.mean.dim(aten.view(rv, [n, c]), [0], False))
    else:
        out = aten._native_batch_norm_legit.no_stats(x, w, b, True, momentum, eps)[0]
    return aten.view(out, list(input.shape))


instance_norm = defop(
    "instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) "
    "-> Tensor", decomposition=_instance_norm)
