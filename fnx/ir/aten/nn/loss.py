"""Losses (mse, l1, smooth l1, huber, binary cross entropy, nll, cross entropy, kl_div) and
distances (pdist, cdist, pairwise_distance, cosine_similarity).

Reductions of losses use ATen's enum: 0 none, 1 mean, 2 sum.
"""
from __future__ import annotations

import math

from ....core import dtype as D
from ....ops import aten, prims
from ... import refs
from ...registry import TensorMeta, defop, derivative
from ...dims import broadcast_shapes, wrap_dim
from ._common import CORE, _arange, _check_float, _full, _opmath, _to, _up


# ----------------------------------------------------------------------------- losses

def _reduce(loss, reduction):
    if reduction == 0:
        return loss
    if reduction == 1:
        return aten.mean(loss)
    if reduction == 2:
        return aten.sum.dim_IntList(loss, None)
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduced_shape(shape, reduction):
    return tuple(shape) if reduction == 0 else ()


def _loss_shapes(name, self, target):
    try:
        return broadcast_shapes(tuple(self.shape), tuple(target.shape))
    except RuntimeError:
        raise RuntimeError(f"{name}: The size of input ({list(self.shape)}) must be "
                           f"broadcastable with the size of target ({list(target.shape)})") \
            from None


def _pointwise_loss(name, fn, extra=""):
    def decomp(self, target, reduction=1, *args):
        _loss_shapes(name, self, target)
        return _reduce(fn(self, target, *args), reduction)
    sep = ", " if extra else ""
    return defop(f"{name}(Tensor self, Tensor target, int reduction=Mean{sep}{extra}) -> Tensor",
                 decomposition=decomp)


def _smooth_l1(x, t, beta=1.0):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = aten.abs(x - t)
    if beta == 0:
        return d
    return aten.where.self(aten.lt.Scalar(d, beta), d * d * (0.5 / beta), d - 0.5 * beta)


def _huber(x, t, delta=1.0):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = aten.abs(x - t)
    return aten.where.self(aten.lt.Scalar(d, delta), d * d * 0.5, (d - 0.5 * delta) * delta)


mse_loss = _pointwise_loss("mse_loss", lambda x, t: (x - t) * (x - t))
l1_loss = _pointwise_loss("l1_loss", lambda x, t: aten.abs(x - t))
smooth_l1_loss = _pointwise_loss("smooth_l1_loss", _smooth_l1, "float beta=1.0")
huber_loss = _pointwise_loss("huber_loss", _huber, "float delta=1.0")


def _binary_cross_entropy(self, target, weight=None, reduction=1):
    if tuple(self.shape) != tuple(target.shape):
        raise ValueError(f"Using a target size ({list(target.shape)}) that is different to the "
                         f"input size ({list(self.shape)}) is deprecated. Please ensure they "
                         f"have the same size.")
    _check_float(self, "binary_cross_entropy")
    x, t = _up(self), _up(target)
    # PyTorch refuses a probability outside [0, 1] (a NaN passes and gives NaN): a value
    # check, so compiled programs and the cuda backend refuse it as the CPU kernel does
    x = refs.checked(x, aten.logical_not(aten.logical_or(aten.lt.Scalar(x, 0),
                                                         aten.gt.Scalar(x, 1))),
                     "all elements of input should be between 0 and 1", math.nan)
    # PyTorch clamps the logs at -100 so that 0 * log(0) stays finite
    log_x = aten.clamp(aten.log(x), -100, None)
    log_1mx = aten.clamp(aten.log1p(-x), -100, None)
    loss = (t - 1) * log_1mx - t * log_x
    if weight is not None:
        loss = loss * weight
    return _to(_reduce(loss, reduction), self.dtype)


binary_cross_entropy = defop(
    "binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean) "
    "-> Tensor", decomposition=_binary_cross_entropy)


def _loss_grad(grad, elem, reduction):
    """``grad`` of a reduced loss times the elementwise derivative ``elem``."""
    if reduction == 1:
        return elem * (grad / elem.numel()) if elem.numel() else elem * grad
    return elem * grad


@derivative(binary_cross_entropy)
def _binary_cross_entropy_derivative(grad, self, target, weight, reduction,
                                     needs_input_grad):
    # PyTorch's formula: (x - t) / max(x (1 - x), 1e-12), finite at x = 0 and x = 1 where the
    # decomposition's chain rule would give 0 * inf
    x, t = _up(self), _up(target)
    w = _up(weight) if weight is not None else 1.0
    g = _up(grad)
    gi = gt = gw = None
    if needs_input_grad[0]:
        gi = _loss_grad(g, (x - t) / aten.clamp((1.0 - x) * x, 1e-12, None) * w, reduction)
    if needs_input_grad[1] or needs_input_grad[2]:
        log_x = aten.clamp(aten.log(x), -100, None)
        log_1mx = aten.clamp(aten.log1p(-x), -100, None)
        if needs_input_grad[1]:
            gt = _loss_grad(g, (log_1mx - log_x) * w, reduction)
        if needs_input_grad[2]:     # the weight multiplies the unweighted loss
            gw = _loss_grad(g, ((t - 1) * log_1mx - t * log_x) * aten.ones_like(weight),
                            reduction)
    return gi, gt, gw


def _bce_with_logits(self, target, weight=None, pos_weight=None, reduction=1):
    if tuple(self.shape) != tuple(target.shape):
        raise ValueError(f"Target size ({list(target.shape)}) must be the same as input size "
                         f"({list(self.shape)})")
    x, t = self, target
    # log(1 + exp(-|x|)) + max(-x, 0) is log(1 + exp(-x)) without overflow
    softplus_neg = aten.log1p(aten.exp(-aten.abs(x))) + aten.clamp(-x, 0, None)
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * t + 1
        loss = (1 - t) * x + log_weight * softplus_neg
    else:
        loss = (1 - t) * x + softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


binary_cross_entropy_with_logits = defop(
    "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
    "Tensor? pos_weight=None, int reduction=Mean) -> Tensor", decomposition=_bce_with_logits)


@derivative(binary_cross_entropy_with_logits)
def _bce_with_logits_derivative(grad, self, target, weight, pos_weight, reduction,
                                needs_input_grad):
    # sigmoid(x) - t (with pos_weight: lw sigmoid(x) - pw t, lw = (pw - 1) t + 1): the
    # decomposition's |x| and clamp(-x, 0) give a wrong one-sided slope at x = 0
    x, t = self, target
    w = weight if weight is not None else 1.0
    gi = gt = gw = gpw = None
    if needs_input_grad[0]:
        if pos_weight is not None:
            lw = (pos_weight - 1) * t + 1
            d = lw * aten.sigmoid(x) - pos_weight * t
        else:
            d = aten.sigmoid(x) - t
        gi = _loss_grad(grad, d * w, reduction)
    if needs_input_grad[1]:
        d = -x if pos_weight is None else -x - (pos_weight - 1) * aten.log_sigmoid(x)
        gt = _loss_grad(grad, d * w, reduction)
    if needs_input_grad[2] or needs_input_grad[3]:
        # (PyTorch does not differentiate the weights; their chain rule is cheap)
        softplus_neg = -aten.log_sigmoid(x)
        if needs_input_grad[2]:
            lw = (pos_weight - 1) * t + 1 if pos_weight is not None else 1.0
            gw = _loss_grad(grad, ((1 - t) * x + lw * softplus_neg) * aten.ones_like(weight),
                            reduction)
        if needs_input_grad[3]:
            gpw = _loss_grad(grad, t * softplus_neg * w * aten.ones_like(pos_weight), reduction)
    return gi, gt, gw, gpw


def _nll_check(self, target, weight):
    if self.ndim < 1 or self.ndim > 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    no_batch = self.ndim == 1 and target.ndim == 0
    if not no_batch and self.shape[0] != (target.shape[0] if target.ndim else 1):
        raise RuntimeError(f"size mismatch (got input: {list(self.shape)}, target: "
                           f"{list(target.shape)})")
    c = self.shape[-1]
    if weight is not None and not (weight.ndim <= 1 and weight.numel() == c):
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    if target.dtype not in (D.int64, D.uint8):
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.scalar_type}")
    _check_float(self, "nll_loss_forward_reduce_cuda_kernel_2d_index")


def _nll_loss_forward_meta(self, target, weight, reduction, ignore_index):
    _nll_check(self, target, weight)
    shape = (self.shape[0],) if reduction == 0 and self.ndim == 2 else ()
    return TensorMeta(shape, self.dtype), TensorMeta((), self.dtype)


def _nll_loss_forward(self, target, weight, reduction, ignore_index):
    _nll_check(self, target, weight)
    x = self if self.ndim == 2 else aten.unsqueeze(self, 0)
    t = aten.reshape(target, [x.shape[0]])
    t = _to(t, D.int64)
    c = x.shape[1]
    ignored = aten.eq.Scalar(t, ignore_index)
    # checked in the program too (compiled, cuda): an out-of-range target must not pick
    # a neighbouring row's log-probability
    safe = prims.check_in_range(aten.where.self(ignored, 0, t), 0, c, "IndexError",
                                "Target {} is out of bounds.")
    picked = aten.squeeze.dim(aten.gather(x, 1, aten.unsqueeze(safe, 1)), 1)
    if weight is not None:
        w = aten.where.self(ignored, 0, aten.index_select(weight, 0, safe))
    else:
        w = _to(aten.logical_not(ignored), x.dtype)
    loss = -picked * w
    total = aten.sum.dim_IntList(w, None)
    if reduction == 0:
        # a 1-D input takes PyTorch's single-sample path, which reports the target's weight
        if self.ndim == 2:
            return loss, _full([], 0, self.dtype, self.device)
        return aten.squeeze.dim(loss, 0), total
    s = aten.sum.dim_IntList(loss, None)
    if reduction == 2:
        return s, total
    return s / total, total


nll_loss_forward = defop(
    "nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, "
    "SymInt ignore_index) -> (Tensor output, Tensor total_weight)",
    meta=_nll_loss_forward_meta, decomposition=_nll_loss_forward)


def _nll_rows(self, target, ignore_index):
    """(n, c, which targets are kept (not ``ignore_index``), and the targets as n int64s
    with the ignored ones at class 0)."""
    n, c = (1, self.shape[0]) if self.ndim == 1 else tuple(self.shape)
    t = _to(aten.reshape(target, [n]), D.int64)
    kept = aten.ne.Scalar(t, ignore_index)
    return n, c, kept, aten.where.self(kept, t, 0)


def _kept_weights(weight, kept, safe):
    """Each row's class weight (in its opmath dtype), 0 on ignored rows."""
    return aten.where.self(kept, aten.index_select(_up(weight), 0, safe), 0.0)


def _class_sums(weight, safe, r, c):
    """The per-row values ``r`` summed into their classes: a gradient shaped as
    ``weight``."""
    return aten.reshape(aten.index_put(aten.zeros_like(_up(weight)).reshape([c]),
                                       [safe], r, True), list(weight.shape))


def _nll_loss_backward_meta(grad_output, self, target, weight, reduction, ignore_index,
                            total_weight):
    _nll_check(self, target, weight)
    want = (self.shape[0],) if reduction == 0 and self.ndim == 2 else ()
    if tuple(grad_output.shape) != want:
        raise RuntimeError(f"nll_loss_backward: expected grad_output of shape {list(want)}, "
                           f"got {list(grad_output.shape)}")
    if total_weight.numel() != 1:
        raise RuntimeError(f"expected total_weight to be a single element tensor, got: "
                           f"{list(total_weight.shape)} ({total_weight.numel()} elements)")
    return TensorMeta(tuple(self.shape), self.dtype)


def _nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index,
                       total_weight):
    """-w[t_n] * g_n at (n, t_n), zero elsewhere and on ignored rows (so a NaN mean over
    no kept row stays out of them); the mean's g is divided by the total weight."""
    _nll_loss_backward_meta(grad_output, self, target, weight, reduction, ignore_index,
                            total_weight)
    n, c, kept, safe = _nll_rows(self, target, ignore_index)
    safe = prims.check_in_range(safe, 0, c, "IndexError", "Target {} is out of bounds.")
    w = _kept_weights(weight, kept, safe) if weight is not None else \
        _to(kept, _opmath(self.dtype))
    g = _up(grad_output)
    if reduction == 0:
        g = aten.reshape(g, [n])
    elif reduction == 1:
        g = g / _up(total_weight)
    coef = aten.unsqueeze(-(g * w), 1)                                   # (n, 1)
    hit = aten.logical_and(
        aten.eq.Tensor(aten.unsqueeze(safe, 1),
                       aten.unsqueeze(_arange(c, D.int64, self.device), 0)),
        aten.unsqueeze(kept, 1))                                         # (n, c)
    gi = aten.where.self(hit, coef, 0.0)
    return _to(gi if self.ndim == 2 else aten.squeeze.dim(gi, 0), self.dtype)


nll_loss_backward = defop(
    "nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, "
    "int reduction, SymInt ignore_index, Tensor total_weight) -> Tensor",
    meta=_nll_loss_backward_meta, decomposition=_nll_loss_backward)


@derivative(nll_loss_forward)
def _nll_loss_derivative(grads, self, target, weight, reduction, ignore_index, result1,
                         needs_input_grad):
    """The input's gradient is ``nll_loss_backward`` (one kernel in eager) with the total
    weight output; the class weights get their chain rule too, through the loss and the
    total weight output (PyTorch differentiates neither)."""
    g_out, g_total = grads
    gi = None
    if g_out is not None and needs_input_grad[0]:
        gi = aten.nll_loss_backward(g_out, self, target, weight, reduction, ignore_index,
                                    result1)
    if weight is None or not needs_input_grad[2]:
        return gi, None, None
    x = self if self.ndim == 2 else aten.unsqueeze(self, 0)
    n, c, kept, safe = _nll_rows(self, target, ignore_index)
    r = None
    if g_out is not None:
        g = _up(g_out)
        if reduction == 0:
            g = aten.reshape(g, [n])
        picked = aten.squeeze.dim(aten.gather(_up(x), 1, aten.unsqueeze(safe, 1)), 1)
        if reduction == 1:      # d(sum(-x w) / sum(w)) / dw = (-x - mean) / sum(w)
            w = _kept_weights(weight, kept, safe)
            total = aten.sum.dim_IntList(w, None)
            r = (-picked - aten.sum.dim_IntList(-picked * w, None) / total) * (g / total)
        else:
            r = -picked * g
    # the total weight output is sum(w[t_n]) over kept rows (a constant 0 for an
    # unreduced batch)
    if g_total is not None and not (reduction == 0 and self.ndim == 2):
        gt = aten.expand(_up(g_total), [n])
        r = gt if r is None else r + gt
    gw = None
    if r is not None:
        r = aten.where.self(kept, r, 0.0)
        gw = _class_sums(weight, safe, r, c)
    return gi, None, gw


@derivative(nll_loss_backward)
def _nll_loss_backward_derivative(grad, grad_output, target, weight, reduction,
                                  ignore_index, total_weight, needs_input_grad):
    """``nll_loss_backward`` is linear in ``grad_output`` and does not read ``self``:
    with G the incoming gradient, its adjoint in ``grad_output`` is ``nll_loss(G)``
    (summed for the mean, then over the total weight); the weights and the mean's total
    weight get theirs from the same picked values -G[n, t_n]."""
    n, c, kept, safe = _nll_rows(grad, target, ignore_index)
    gg = gw = gt = None
    # -w[t_n] G[n, t_n] per row (0 on ignored rows); a mean's rows are over the total
    # weight on kept rows only, so no 0 / 0 reaches a batch with every row ignored
    rows = aten.nll_loss_forward(grad, target, weight, 0, ignore_index)[0]
    if reduction == 1:
        per = aten.where.self(kept, aten.reshape(rows, [n]) / total_weight, 0.0)
    if needs_input_grad[0]:
        gg = rows if reduction == 0 else aten.sum.dim_IntList(
            per if reduction == 1 else rows, None)
    if weight is not None and needs_input_grad[3]:
        # per row: -G[n, t_n] g'_n on kept rows, summed into the row's class
        g = _up(grad_output)
        g = aten.reshape(g, [n]) if reduction == 0 else g
        g = g / _up(total_weight) if reduction == 1 else g
        picked = aten.nll_loss_forward(_up(grad), target, None, 0, ignore_index)[0]
        r = aten.where.self(kept, aten.reshape(picked, [n]) * g, 0.0)
        gw = _class_sums(weight, safe, r, c)
    if reduction == 1 and needs_input_grad[4]:
        gt = -grad_output * aten.sum.dim_IntList(
            aten.where.self(kept, per / total_weight, 0.0), None)
    return gg, None, None, gw, gt


def _nll_loss_nd(self, target, weight=None, reduction=1, ignore_index=-100):
    if self.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {self.ndim})")
    if self.ndim != 1 and self.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({self.shape[0]}) to match target "
                         f"batch_size ({target.shape[0]}).")
    if self.ndim <= 2:
        return aten.nll_loss_forward(self, target, weight, reduction, ignore_index)[0]
    n, c = self.shape[:2]
    rest = list(self.shape[2:])
    if list(target.shape) != [n] + rest:
        raise RuntimeError(f"Expected target size {[n] + rest}, got {list(target.shape)}")
    x = aten.permute(self, [0] + list(range(2, self.ndim)) + [1])
    x = aten.reshape(x, [n * math.prod(rest), c])
    t = aten.reshape(target, [n * math.prod(rest)])
    out = aten.nll_loss_forward(x, t, weight, reduction, ignore_index)[0]
    return aten.reshape(out, [n] + rest) if reduction == 0 else out


_NLL = ("Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, "
        "SymInt ignore_index=-100")
nll_loss = defop(f"nll_loss({_NLL}) -> Tensor", decomposition=_nll_loss_nd)
nll_loss_nd = defop(f"nll_loss_nd({_NLL}) -> Tensor", decomposition=_nll_loss_nd)


def _cross_entropy(self, target, weight=None, reduction=1, ignore_index=-100,
                   label_smoothing=0.0):
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    cdim = 1 if self.ndim >= 2 else 0
    c = self.shape[cdim] if self.ndim else 0
    logp = aten._log_softmax(self, cdim, False)
    wshape = [1] * self.ndim
    if self.ndim:
        wshape[cdim] = c
    if target.dtype.is_floating_point:      # class probabilities
        if tuple(self.shape) != tuple(target.shape):
            raise RuntimeError(f"Expected input and target to have the same shape for "
                               f"probability targets, but got input {list(self.shape)} and "
                               f"target {list(target.shape)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        t = target
        if label_smoothing > 0:
            t = t * (1 - label_smoothing) + label_smoothing / c
        prod = logp * t
        if weight is not None:
            prod = prod * aten.view(weight, wshape)
        loss = -aten.sum.dim_IntList(prod, [cdim], False)
        if reduction == 1:
            n = self.numel() // c if c else 0
            return aten.sum.dim_IntList(loss, None) / n if n else \
                aten.sum.dim_IntList(loss, None) / 0.0
        return _reduce(loss, reduction)
    nll = aten.nll_loss_nd(logp, target, weight, reduction, ignore_index)
    if label_smoothing == 0:
        return nll
    ignored = aten.eq.Scalar(target, ignore_index)
    if weight is not None:
        smooth = -aten.sum.dim_IntList(logp * aten.view(weight, wshape), [cdim], False)
    else:
        smooth = -aten.sum.dim_IntList(logp, [cdim], False)
    smooth = aten.where.self(ignored, 0, smooth)
    if reduction == 1:
        if weight is not None:
            safe = aten.where.self(ignored, 0, target)
            w = aten.where.self(ignored, 0, aten.reshape(
                aten.index_select(weight, 0, aten.reshape(safe, [safe.numel()])),
                list(target.shape)))
            ret = aten.sum.dim_IntList(smooth, None) / aten.sum.dim_IntList(w, None)
        else:
            ret = aten.sum.dim_IntList(smooth, None) / \
                aten.sum.dim_IntList(aten.logical_not(ignored), None)
    elif reduction == 2:
        ret = aten.sum.dim_IntList(smooth, None)
    else:
        ret = smooth
    return nll * (1 - label_smoothing) + ret * (label_smoothing / c)


cross_entropy_loss = defop(
    "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, "
    "SymInt ignore_index=-100, float label_smoothing=0.0) -> Tensor",
    decomposition=_cross_entropy)


def _kl_div(self, target, reduction=1, log_target=False):
    if log_target:
        loss = aten.exp(target) * (target - self)
    else:
        pos = aten.gt.Scalar(target, 0)
        # xlogy: a zero target contributes zero, whatever log(0) is
        safe = aten.where.self(pos, target, aten.ones_like(target))
        loss = aten.where.self(pos, target * (aten.log(safe) - self), 0.0 * self)
    return _reduce(loss, reduction)


kl_div = defop("kl_div(Tensor self, Tensor target, int reduction=Mean, *, bool log_target=False) "
               "-> Tensor", decomposition=_kl_div)


# ----------------------------------------------------------------------------- distances

def _vector_norm(d, p, dim, keepdim=False):
    """The p-norm of ``d`` along ``dim`` as cdist/pdist define it (p=0 counts non-zeros)."""
    a = aten.abs(d)
    if p == 0:
        return _to(aten.sum.dim_IntList(aten.ne.Scalar(d, 0), [dim], keepdim), d.dtype)
    if p == math.inf:
        return aten.amax(a, [dim], keepdim) if d.shape[dim] else \
            aten.sum.dim_IntList(a, [dim], keepdim)
    if p == 1:
        return aten.sum.dim_IntList(a, [dim], keepdim)
    if p == 2:
        return aten.sqrt(aten.sum.dim_IntList(d * d, [dim], keepdim))
    return aten.pow.Tensor_Scalar(aten.sum.dim_IntList(aten.pow.Tensor_Scalar(a, p), [dim],
                                                       keepdim), 1.0 / p)


def _pdist_meta(self, p=2.0):
    if self.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {self.ndim}D")
    if not self.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = self.shape[0]
    return TensorMeta((n * (n - 1) // 2,), self.dtype)


def _pdist_forward(self, p=2.0):
    _pdist_meta(self, p)
    n = self.shape[0]
    if n < 2:
        return _full([0], 0, self.dtype, self.device)
    x = _up(self)
    parts = []
    for i in range(n - 1):
        d = aten.slice.Tensor(x, 0, i + 1, n) - aten.slice.Tensor(x, 0, i, i + 1)
        parts.append(_vector_norm(d, p, 1))
    return _to(aten.cat(parts), self.dtype)


_pdist_forward_op = defop("_pdist_forward(Tensor self, float p=2.) -> Tensor", tags=CORE,
                          meta=_pdist_meta, decomposition=_pdist_forward, explicit=True)


def _norm_grad(diff, dist, p):
    """d dist / d diff for dist = ||diff||_p along the last dim (``dist`` keeps it as
    size 1); zero where the distance is zero, as PyTorch's cdist/pdist backward."""
    zero = aten.eq.Scalar(dist, 0)
    safe = aten.where.self(zero, 1.0, dist)
    if p == 0:
        return aten.zeros_like(diff)
    if p == 1:
        return aten.sign(diff)
    if p == math.inf:
        hit = aten.eq.Tensor(aten.abs(diff), dist)
        return aten.where.self(aten.logical_and(hit, aten.logical_not(zero)), aten.sign(diff),
                               0.0)
    if p == 2:
        return aten.where.self(zero, 0.0, diff / safe)
    a = aten.abs(diff)
    if p < 1:
        # |d|^(p-1) is infinite at d = 0: PyTorch gives those entries zero
        a = aten.where.self(aten.eq.Scalar(a, 0), 1.0, a)
        g = aten.sign(diff) * aten.pow.Tensor_Scalar(a, p - 1)
    else:
        g = diff * aten.pow.Tensor_Scalar(a, p - 2) if p >= 2 else \
            aten.sign(diff) * aten.pow.Tensor_Scalar(a, p - 1)
    return aten.where.self(zero, 0.0, g / aten.pow.Tensor_Scalar(safe, p - 1))


@derivative(_pdist_forward_op)
def _pdist_derivative(grad, self, p, result):
    n = self.shape[0]
    if n < 2:
        return aten.zeros_like(self)
    dev = self.device
    # pair k = (i, j), i < j, in the forward's order; its difference is x[j] - x[i]
    i = aten.cat([_full([n - 1 - a], a, D.int64, dev) for a in range(n - 1)])
    j = aten.cat([_arange(n - 1 - a, D.int64, dev) + (a + 1) for a in range(n - 1)])
    x = _up(self)
    diff = aten.index_select(x, 0, j) - aten.index_select(x, 0, i)
    c = _norm_grad(diff, aten.unsqueeze(_up(result), 1), p) * aten.unsqueeze(_up(grad), 1)
    acc = aten.index_put(aten.zeros_like(x), [j], c, True)
    return aten.index_put(acc, [i], -c, True)


def _cdist_meta(x1, x2, p, compute_mode=None):
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{x.dtype.scalar_type}")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{x.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode is not None and compute_mode not in (0, 1, 2):
        raise RuntimeError(f"{compute_mode} is not a valid value for compute_mode")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"cdist: expected X1 and X2 to have the same dtype, but got: "
                           f"{x1.dtype.scalar_type} != {x2.dtype.scalar_type}")
    batch = broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    return TensorMeta(batch + (x1.shape[-2], x2.shape[-2]), x1.dtype)


def _cdist_forward(x1, x2, p, compute_mode=None):
    meta = _cdist_meta(x1, x2, p, compute_mode)
    a, b = _up(x1), _up(x2)
    d = aten.unsqueeze(a, -2) - aten.unsqueeze(b, -3)          # (..., P, R, M)
    out = _vector_norm(d, p, d.ndim - 1)
    if tuple(out.shape) != meta.shape:
        out = aten.clone(aten.expand(out, list(meta.shape)))
    return _to(out, x1.dtype)


_cdist_forward_op = defop("_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) "
                          "-> Tensor", tags=CORE, meta=_cdist_meta, decomposition=_cdist_forward,
                          explicit=True)


@derivative(_cdist_forward_op)
def _cdist_derivative(grad, x1, x2, p, result, needs_input_grad):
    d = aten.unsqueeze(_up(x1), -2) - aten.unsqueeze(_up(x2), -3)        # (..., P, R, M)
    c = _norm_grad(d, aten.unsqueeze(_up(result), -1), p) * aten.unsqueeze(_up(grad), -1)
    # broadcast batch dimensions are summed away by autograd
    return (aten.sum.dim_IntList(c, [-2], False) if needs_input_grad[0] else None,
            -aten.sum.dim_IntList(c, [-3], False) if needs_input_grad[1] else None)
cdist = defop("cdist(Tensor x1, Tensor x2, float p=2, int? compute_mode=None) -> Tensor",
              decomposition=lambda x1, x2, p=2.0, compute_mode=None:
                  aten._cdist_forward(x1, x2, p, compute_mode))


def _pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    nd = max(x1.ndim, x2.ndim)
    d = x1 - x2 + eps
    if nd == 0:
        return _vector_norm(aten.unsqueeze(d, 0), p, 0, False)
    return _vector_norm(d, p, nd - 1, keepdim)


pairwise_distance = defop("pairwise_distance(Tensor x1, Tensor x2, float p=2, float eps=1e-06, "
                          "bool keepdim=False) -> Tensor", decomposition=_pairwise_distance)


def _cosine_similarity(x1, x2, dim=1, eps=1e-08):
    if not (x1.dtype.is_floating_point or x1.dtype.is_complex):
        x1 = _to(x1, D.get_default_dtype())
    if not (x2.dtype.is_floating_point or x2.dtype.is_complex):
        x2 = _to(x2, D.get_default_dtype())
    shape = broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    dim = wrap_dim(dim, len(shape))
    a = aten.expand(x1, list(shape)) if tuple(x1.shape) != shape else x1
    b = aten.expand(x2, list(shape)) if tuple(x2.shape) != shape else x2
    # linalg_vector_norm: its gradient at a zero vector is 0 (sqrt's would be 0 * inf)
    na = aten.clamp(aten.linalg_vector_norm(a, 2, [dim], True), eps, None)
    nb = aten.clamp(aten.linalg_vector_norm(b, 2, [dim], True), eps, None)
    return aten.sum.dim_IntList((a / na) * (b / nb), [dim], False)


cosine_similarity = defop("cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) "
                          "-> Tensor", decomposition=_cosine_similarity)
