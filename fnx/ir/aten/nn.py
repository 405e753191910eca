"""Neural-network operators: activations, normalization, convolution, pooling, losses.

Two levels live here.  Core ATen ops (tag "core") carry a meta function that does
PyTorch's validation and a decomposition written with fnx ops, registered as their
CompositeExplicitAutograd kernel (``explicit=True``); a few also get a direct NumPy
kernel in ``fnx/backends/cpu/nn.py`` where the decomposition is slow in eager.  The
aten-level ops users call (``softmax.int``, ``conv2d``, ``cross_entropy_loss``, ...)
only have a decomposition to core ops, which is their CompositeImplicitAutograd kernel.

Reductions of losses use ATen's enum: 0 none, 1 mean, 2 sum.

Derivative formulas (``@derivative``) follow each op they differentiate; they are written
with fnx ops, so they run on every backend and can be differentiated again.  Ops without
one (the aten-level convenience ops, pads, upsampling, ...) are differentiated through
their decomposition.  Multi-output ops whose first output users commonly modify in place
(``relu_`` after batch norm) recompute their statistics from the input rather than name
``result``, because naming ``result`` saves every output and pins its version.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ...core import dtype as D
from ...core.grad_mode import no_grad
from ...ops import aten, prims
from ..registry import TensorMeta, defop, derivative, nondifferentiable
from ..shapes import broadcast_shapes, wrap_dim

CORE = ("core",)
CORE_PW = ("core", "pointwise")
ATEN = ()
ATEN_PW = ("pointwise",)
RANDOM = ("nondeterministic",)
_HALF = (D.float16, D.bfloat16)


# ----------------------------------------------------------------------------- helpers

def _not_implemented(kernel, dtype):
    return RuntimeError(f"\"{kernel}\" not implemented for '{dtype.scalar_type}'")


def _check_float(x, kernel):
    """PyTorch's dispatch error of a kernel compiled for floating types only."""
    if not x.dtype.is_floating_point:
        raise _not_implemented(kernel, x.dtype)


def _opmath(dtype):
    """The dtype math runs in: half types compute in float32, as PyTorch's CPU kernels."""
    return D.float32 if dtype in _HALF else dtype


def _to(x, dtype):
    """``x`` converted to ``dtype`` (no op when it already has it)."""
    return x if x.dtype is dtype else aten._to_copy(x, dtype=dtype)


def _up(x):
    return _to(x, _opmath(x.dtype))


def _same(x):
    return TensorMeta(tuple(x.shape), x.dtype)


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def _arange(n, dtype, device):
    return aten.arange.start_step(0, n, 1, dtype=dtype, device=device)


def _full(shape, value, dtype, device):
    return aten.full(list(shape), value, dtype=dtype, device=device)


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


def _ints(name, what, v, n, allow_empty=False):
    """An ``int[n]`` argument as an n-tuple (a single int or 1-list broadcasts)."""
    v = (v,) if isinstance(v, int) else tuple(int(x) for x in v)
    if allow_empty and not v:
        return None
    if len(v) == 1:
        v = v * n
    if len(v) != n:
        raise RuntimeError(f"{name}: expected {what} to be a single integer value or a list "
                           f"of {n} values to match the convolution dimensions, but got "
                           f"{what}={list(v)}")
    return v


# ----------------------------------------------------------------------------- softmax

def _softmax_dtype(self, half_to_float, kernel):
    _check_float(self, kernel)
    if half_to_float:
        if self.dtype not in _HALF:
            raise RuntimeError("conversion is supported for Half type only")
        return D.float32
    return self.dtype


def _softmax_meta(kernel):
    def meta(self, dim, half_to_float):
        wrap_dim(dim, self.ndim)
        return TensorMeta(tuple(self.shape), _softmax_dtype(self, half_to_float, kernel))
    return meta


def _softmax_decomp(self, dim, half_to_float):
    out_dtype = _softmax_dtype(self, half_to_float, "softmax_lastdim_kernel_impl")
    dim = wrap_dim(dim, self.ndim)
    x = _up(self)
    if self.ndim and self.shape[dim] == 0:
        return _to(aten.clone(x), out_dtype)
    e = aten.exp(aten.sub.Tensor(x, aten.amax(x, [dim], True)))
    return _to(aten.div.Tensor(e, aten.sum.dim_IntList(e, [dim], True)), out_dtype)


def _log_softmax_decomp(self, dim, half_to_float):
    out_dtype = _softmax_dtype(self, half_to_float, "log_softmax_lastdim_kernel_impl")
    dim = wrap_dim(dim, self.ndim)
    x = _up(self)
    if self.ndim and self.shape[dim] == 0:
        return _to(aten.clone(x), out_dtype)
    shifted = aten.sub.Tensor(x, aten.amax(x, [dim], True))
    lse = aten.log(aten.sum.dim_IntList(aten.exp(shifted), [dim], True))
    return _to(aten.sub.Tensor(shifted, lse), out_dtype)


_softmax = defop("_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", tags=CORE,
                 meta=_softmax_meta("softmax_lastdim_kernel_impl"),
                 decomposition=_softmax_decomp, explicit=True)
_log_softmax = defop("_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
                     tags=CORE, meta=_softmax_meta("log_softmax_lastdim_kernel_impl"),
                     decomposition=_log_softmax_decomp, explicit=True)


def _softmax_axis(result, dim):
    return wrap_dim(dim, result.ndim) if result.ndim else 0


@derivative(_softmax)
def _softmax_backward(grad, result, dim):
    # d softmax: y * (g - sum(g * y)); named on the output, as PyTorch
    d = _softmax_axis(result, dim)
    return (grad - aten.sum.dim_IntList(grad * result, [d], True)) * result


@derivative(_log_softmax)
def _log_softmax_backward(grad, result, dim):
    d = _softmax_axis(result, dim)
    return grad - aten.exp(result) * aten.sum.dim_IntList(grad, [d], True)


def _softmax_int(inner):
    def decomp(self, dim, dtype=None):
        x = _to(self, dtype) if dtype is not None else self
        return inner(x, dim, False)
    return decomp


softmax_int = defop("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                    decomposition=_softmax_int(aten._softmax))
log_softmax_int = defop("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                        decomposition=_softmax_int(aten._log_softmax))


# ----------------------------------------------------------------------------- activations

def _float_pointwise_meta(kernel):
    def meta(self, *args, **kwargs):
        _check_float(self, kernel)
        return _same(self)
    return meta


def _gelu_meta(self, *, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _check_float(self, "GeluKernelImpl")
    return _same(self)


def _gelu(self, *, approximate="none"):
    _gelu_meta(self, approximate=approximate)
    x = _up(self)
    if approximate == "tanh":
        inner = (x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)
        out = x * 0.5 * (aten.tanh(inner) + 1.0)
    else:
        out = x * 0.5 * (aten.erf(x * (1.0 / math.sqrt(2.0))) + 1.0)
    return _to(out, self.dtype)


gelu = defop('gelu(Tensor self, *, str approximate="none") -> Tensor', tags=CORE_PW,
             meta=_gelu_meta, decomposition=_gelu, explicit=True)


@derivative(gelu)
def _gelu_backward(grad, self, approximate):
    x = _up(self)
    if approximate == "tanh":
        beta, kappa = math.sqrt(2.0 / math.pi), 0.044715
        t = aten.tanh((x + x * x * x * kappa) * beta)
        d = (t + 1.0) * 0.5 + x * 0.5 * (1.0 - t * t) * ((x * x * (3.0 * kappa) + 1.0) * beta)
    else:
        cdf = (aten.erf(x * (1.0 / math.sqrt(2.0))) + 1.0) * 0.5
        d = cdf + x * aten.exp(x * x * -0.5) * (1.0 / math.sqrt(2.0 * math.pi))
    return grad * d


def _elu(self, alpha=1, scale=1, input_scale=1):
    _check_float(self, "elu_cpu")
    x = _up(self)
    neg = aten.expm1(x * float(input_scale)) * float(alpha * scale)
    return _to(aten.where.self(x > 0, x * float(scale), neg), self.dtype)


elu = defop("elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
            tags=CORE_PW, meta=_float_pointwise_meta("elu_cpu"), decomposition=_elu,
            explicit=True)


@derivative(elu)
def _elu_backward(grad, self, alpha, scale, input_scale):
    neg = aten.exp(_up(self) * float(input_scale)) * float(input_scale * alpha * scale)
    return aten.where.self(self > 0, grad * float(scale), grad * neg)


def _hardtanh_meta(self, min_val=-1, max_val=1):
    if self.dtype is D.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    return _same(self)


def _hardtanh(self, min_val=-1, max_val=1):
    _hardtanh_meta(self)
    if not self.dtype.is_floating_point:
        min_val, max_val = int(min_val), int(max_val)
    return aten.clamp(self, min_val, max_val)


hardtanh = defop("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
                 tags=CORE_PW, meta=_hardtanh_meta, decomposition=_hardtanh, explicit=True)


@derivative(hardtanh)
def _hardtanh_backward(grad, self, min_val, max_val):
    # zero at and beyond the bounds (clamp's gradient passes at them); NaN passes through
    out = aten.logical_or(aten.le.Scalar(self, min_val), aten.ge.Scalar(self, max_val))
    return aten.where.self(out, 0.0, grad)


def _leaky_relu(self, negative_slope=0.01):
    _check_float(self, "leaky_relu_cpu")
    return aten.where.self(self > 0, self, self * negative_slope)


leaky_relu = defop("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
                   tags=CORE_PW, meta=_float_pointwise_meta("leaky_relu_cpu"),
                   decomposition=_leaky_relu, explicit=True)


@derivative(leaky_relu)
def _leaky_relu_backward(grad, self, negative_slope):
    return aten.where.self(self > 0, grad, grad * negative_slope)


def _float_act(name, kernel, fn, args="", tags=ATEN_PW):
    """An aten-level float-only activation ``name(Tensor self<args>)`` decomposed by ``fn``."""
    def decomp(self, *a, **k):
        _check_float(self, kernel)
        return _to(fn(_up(self), *a, **k), self.dtype)
    sep = ", " if args else ""
    return defop(f"{name}(Tensor self{sep}{args}) -> Tensor", tags=tags,
                 meta=_float_pointwise_meta(kernel), decomposition=decomp)


def _softplus_fn(x, beta=1, threshold=20):
    xb = x * beta
    return aten.where.self(xb > threshold, x, aten.log1p(aten.exp(xb)) / beta)


silu = _float_act("silu", "silu_cpu", lambda x: x * aten.sigmoid(x))
mish = _float_act("mish", "mish_cpu", lambda x: x * aten.tanh(_softplus_fn(x)))
softplus = _float_act("softplus", "softplus_cpu", _softplus_fn,
                      "Scalar beta=1, Scalar threshold=20")
hardsigmoid = _float_act("hardsigmoid", "hardsigmoid_cpu",
                         lambda x: aten.clamp(x + 3.0, 0.0, 6.0) / 6.0)
hardswish = _float_act("hardswish", "hardswish_cpu",
                       lambda x: x * aten.clamp(x + 3.0, 0.0, 6.0) / 6.0)
log_sigmoid = _float_act("log_sigmoid", "log_sigmoid_cpu",
                         lambda x: aten.minimum(x, aten.zeros_like(x)) -
                         aten.log1p(aten.exp(-aten.abs(x))))
selu = _float_act("selu", "elu_cpu", lambda x: aten.elu(x, 1.6732632423543772848170429916717,
                                                        1.0507009873554804934193349852946))
celu = _float_act("celu", "elu_cpu", lambda x, alpha=1.0: aten.elu(x, alpha, 1.0, 1.0 / alpha),
                  "Scalar alpha=1.0")
tanhshrink = _float_act("tanhshrink", "tanhshrink_cpu", lambda x: x - aten.tanh(x))
# Written so that NaN fails every comparison and passes through, as PyTorch's kernels.
hardshrink = _float_act("hardshrink", "hardshrink_cpu",
                        lambda x, lambd=0.5: aten.where.self(
                            aten.logical_and(x >= -lambd, x <= lambd), aten.zeros_like(x), x),
                        "Scalar lambd=0.5")
softshrink = _float_act("softshrink", "softshrink_cpu",
                        lambda x, lambd=0.5: aten.where.self(
                            x > lambd, x - lambd,
                            aten.where.self(x < -lambd, x + lambd, x * 0)),
                        "Scalar lambd=0.5")



# Formulas of the aten-level activations: one node instead of their decomposition's
# several, and finite where the decomposition's unused branch overflows (softplus's
# log1p(exp(x)) for large x would give 0 * inf = NaN through the chain rule).

@derivative(silu)
def _silu_backward(grad, self):
    x = _up(self)
    s = aten.sigmoid(x)
    return grad * (s * (x * (1.0 - s) + 1.0))


@derivative(softplus)
def _softplus_backward(grad, self, beta, threshold):
    x = _up(self)
    xb = x * beta
    return aten.where.self(xb > threshold, grad, grad * aten.sigmoid(xb))


@derivative(mish)
def _mish_backward(grad, self):
    x = _up(self)
    t = aten.tanh(aten.softplus(x))
    return grad * (t + x * aten.sigmoid(x) * (1.0 - t * t))


@derivative(hardsigmoid)
def _hardsigmoid_backward(grad, self):
    inside = aten.logical_and(self > -3.0, self < 3.0)
    return aten.where.self(inside, grad * (1.0 / 6.0), 0.0)


@derivative(hardswish)
def _hardswish_backward(grad, self):
    x = _up(self)
    mid = aten.where.self(x <= 3.0, grad * (x / 3.0 + 0.5), grad)
    return aten.where.self(x < -3.0, 0.0, mid)


@derivative(log_sigmoid)
def _log_sigmoid_backward(grad, self):
    return grad * aten.sigmoid(-_up(self))


def _relu6(self):
    return aten.hardtanh(self, 0, 6)


relu6 = defop("relu6(Tensor self) -> Tensor", tags=ATEN_PW, meta=_hardtanh_meta,
              decomposition=_relu6)


def _glu_meta(self, dim=-1):
    if self.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, self.ndim)
    if self.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{self.shape[d]}")
    _check_float(self, "glu_cpu")
    shape = list(self.shape)
    shape[d] //= 2
    return TensorMeta(tuple(shape), self.dtype)


def _glu(self, dim=-1):
    _glu_meta(self, dim)
    d = wrap_dim(dim, self.ndim)
    h = self.shape[d] // 2
    a = aten.slice.Tensor(self, d, 0, h)
    b = aten.slice.Tensor(self, d, h, 2 * h)
    return a * aten.sigmoid(b)


glu = defop("glu(Tensor self, int dim=-1) -> Tensor", meta=_glu_meta, decomposition=_glu)


def _prelu(self, weight):
    if weight.ndim > 1 or (self.ndim >= 2 and weight.numel() not in (1, self.shape[1])):
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = "
                           f"{self.shape[1] if self.ndim >= 2 else 1}.")
    w = weight
    if self.ndim >= 2 and weight.numel() > 1:
        w = aten.view(weight, [weight.numel()] + [1] * (self.ndim - 2))
    return aten.where.self(self > 0, self, self * w)


_prelu_kernel = defop("_prelu_kernel(Tensor self, Tensor weight) -> Tensor",
                      decomposition=_prelu)
prelu = defop("prelu(Tensor self, Tensor weight) -> Tensor",
                     decomposition=lambda self, weight: aten._prelu_kernel(self, weight))


def _threshold(self, threshold, value):
    return aten.where.self(self <= threshold, aten.full_like(self, value), self)


threshold = defop("threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor",
                  tags=ATEN_PW, decomposition=_threshold)


# ----------------------------------------------------------------------------- dropout

def _dropout_p(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _native_dropout_meta(input, p, train):
    return _same(input), TensorMeta(tuple(input.shape), D.bool)


def _native_dropout(input, p, train):
    if train is not None and not train:
        return aten.clone(input), aten.full_like(input, True, dtype=D.bool)
    keep = 1.0 - p
    noise = aten.rand(list(input.shape), dtype=_opmath(input.dtype)
                      if input.dtype.is_floating_point else D.float32, device=input.device)
    mask = aten.lt.Scalar(noise, keep)
    scale = 0.0 if keep == 0 else 1.0 / keep
    return _to(input * mask * scale, input.dtype), mask


native_dropout = defop("native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
                       tags=("core", "nondeterministic"), meta=_native_dropout_meta,
                       decomposition=_native_dropout, explicit=True)


@derivative(native_dropout)
def _native_dropout_backward(grad, result, p, train):
    if train is not None and not train:
        return grad
    # the mask is random: it must be the saved output (which pins output 0's version too)
    return grad * result[1] * (0.0 if p == 1 else 1.0 / (1.0 - p))


def _dropout(input, p, train):
    _dropout_p(p)
    if not train or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        return input * aten.zeros_like(input)
    return aten.native_dropout(input, p, train)[0]


def _feature_dropout(input, p, train):
    _dropout_p(p)
    if not train or p == 0 or input.numel() == 0:
        return input
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = list(input.shape[:2]) + [1] * (input.ndim - 2)
    keep = 1.0 - p
    noise = aten.rand(shape, dtype=_opmath(input.dtype), device=input.device)
    mask = aten.lt.Scalar(noise, keep)
    return _to(input * mask * (0.0 if keep == 0 else 1.0 / keep), input.dtype)


dropout = defop("dropout(Tensor input, float p, bool train) -> Tensor", tags=RANDOM,
                decomposition=_dropout)
feature_dropout = defop("feature_dropout(Tensor input, float p, bool train) -> Tensor",
                        tags=RANDOM, decomposition=_feature_dropout)


# ----------------------------------------------------------------------------- embedding

def _check_indices(name, indices, arg="indices", pos=1):
    if indices.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"Expected tensor for argument #{pos} '{arg}' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{indices.device.type.upper()}{indices.dtype.scalar_type}Type "
                           f"instead (while checking arguments for {name})")


def _embedding_meta(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    _check_indices("embedding", indices)
    if weight.ndim != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {weight.ndim}-dimensional "
                           f"tensor for argument #1 'weight' (while checking arguments for "
                           f"embedding)")
    return TensorMeta(tuple(indices.shape) + (weight.shape[1],), weight.dtype)


def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    shape = _embedding_meta(weight, indices).shape
    rows = aten.index_select(weight, 0, aten.reshape(indices, [indices.numel()]))
    return aten.view(rows, list(shape))


embedding = defop("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
                  "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor", tags=CORE,
                  meta=_embedding_meta, decomposition=_embedding, explicit=True)


@derivative(embedding)
def _embedding_backward(grad, weight, indices, padding_idx, scale_grad_by_freq):
    # sparse=True still gets a dense gradient (fnx has no sparse tensors)
    return (aten.embedding_dense_backward(grad, indices, weight.shape[0], padding_idx,
                                          scale_grad_by_freq), None)


def _embedding_dense_backward_meta(grad_output, indices, num_weights, padding_idx,
                                   scale_grad_by_freq):
    _check_indices("embedding_backward", indices, "indices", 2)
    return TensorMeta((num_weights, grad_output.shape[-1]), grad_output.dtype)


def _embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
                              scale_grad_by_freq):
    _check_indices("embedding_backward", indices, "indices", 2)    # float indices: error
    n = indices.numel()
    dim = grad_output.shape[-1]
    idx = aten.reshape(indices, [n])
    if idx.dtype is not D.int64:
        idx = _to(idx, D.int64)
    grad = aten.reshape(_up(grad_output), [n, dim])
    if scale_grad_by_freq:
        counts = aten.index_put(_full([num_weights], 0, D.int64, idx.device), [idx],
                                _full([n], 1, D.int64, idx.device), True)
        grad = grad / aten.unsqueeze(aten.index_select(counts, 0, idx), 1)
    if padding_idx >= 0:
        grad = aten.where.self(aten.unsqueeze(aten.eq.Scalar(idx, padding_idx), 1), 0.0, grad)
    out = _full([num_weights, dim], 0, grad.dtype, grad.device)
    return _to(aten.index_put(out, [idx], grad, True), grad_output.dtype)


embedding_dense_backward = defop(
    "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, "
    "SymInt padding_idx, bool scale_grad_by_freq) -> Tensor", tags=CORE,
    meta=_embedding_dense_backward_meta, decomposition=_embedding_dense_backward, explicit=True)


def _embedding_bag_meta(weight, indices, offsets, scale_grad_by_freq=False, mode=0,
                        sparse=False, per_sample_weights=None, include_last_offset=False,
                        padding_idx=-1):
    _check_indices("embedding_bag", indices, "indices", 2)
    _check_indices("embedding_bag", offsets, "offsets", 3)
    if weight.ndim != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {weight.ndim}-dimensional "
                           f"tensor for argument #1 'weight' (while checking arguments for "
                           f"embedding_bag)")
    if indices.ndim != 1 or offsets.ndim != 1:
        raise ValueError("input has to be 1D, and offsets has to be 1D (2D input is handled "
                         "by embedding_bag)")
    if mode not in (0, 1, 2):
        raise RuntimeError(f"mode has to be one of sum, mean or max, got {mode}")
    if per_sample_weights is not None:
        if mode != 0:
            raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                      "per_sample_weights is only supported for mode='sum'")
        if tuple(per_sample_weights.shape) != tuple(indices.shape):
            raise RuntimeError("embedding_bag: per_sample_weights must have the same shape "
                               "as indices")
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    bags = max(bags, 0)
    d = weight.shape[1]
    idt = indices.dtype
    return (TensorMeta((bags, d), weight.dtype), TensorMeta((indices.shape[0],), idt),
            TensorMeta((bags,), idt), TensorMeta((bags, d) if mode == 2 else (bags,), idt))


def _bag_layout(indices, offsets, bags, include_last_offset, padding_idx):
    """int64 indices, each index's bag (-1 before the first offset), whether it counts
    (inside a bag, not padding), its bag clamped to >= 0, and each bag's count."""
    n = indices.shape[0]
    dev = indices.device
    idx = _to(indices, D.int64)
    offs = _to(offsets, D.int64)
    # bag of each index: how many bag starts are <= its position, minus one
    pos = _arange(n, D.int64, dev)
    starts = aten.slice.Tensor(offs, 0, 0, bags)
    offset2bag = aten.sub.Scalar(aten.sum.dim_IntList(
        aten.ge.Tensor(aten.unsqueeze(pos, 1), aten.unsqueeze(starts, 0)), [1]), 1)
    in_bag = aten.ge.Scalar(offset2bag, 0)
    if include_last_offset and bags >= 0 and offs.shape[0] > 0:
        in_bag = aten.logical_and(in_bag, aten.lt.Tensor(pos, aten.select.int(offs, 0, -1)))
    keep = in_bag
    if padding_idx >= 0:
        keep = aten.logical_and(keep, aten.ne.Scalar(idx, padding_idx))
    bag = aten.clamp(offset2bag, 0, None)
    count = aten.index_put(_full([bags], 0, D.int64, dev), [bag], _to(keep, D.int64), True)
    return idx, offset2bag, keep, bag, count


def _embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                   per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    metas = _embedding_bag_meta(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                                per_sample_weights, include_last_offset, padding_idx)
    bags, d = metas[0].shape
    n = indices.shape[0]
    dev = weight.device
    idx, offset2bag, keep, bag, count = _bag_layout(indices, offsets, bags,
                                                    include_last_offset, padding_idx)
    rows = aten.index_select(weight, 0, idx)
    if mode == 2:
        fill = -math.inf if weight.dtype.is_floating_point else 0
        vals = aten.where.self(aten.unsqueeze(keep, 1), rows, fill)
        init = _full([bags, d], fill, weight.dtype, dev)
        # scatter_reduce-free max: compare every index with every bag
        onehot = aten.logical_and(aten.eq.Tensor(aten.unsqueeze(bag, 0),
                                                 aten.unsqueeze(_arange(bags, D.int64, dev), 1)),
                                  aten.unsqueeze(keep, 0))           # (bags, n)
        cand = aten.where.self(aten.unsqueeze(onehot, 2), aten.unsqueeze(vals, 0),
                               aten.unsqueeze(init, 1))             # (bags, n, d)
        if n:
            out, arg = aten.max.dim(cand, 1)
            max_idx = aten.where.self(aten.unsqueeze(count > 0, 1), aten.index_select(idx, 0,
                                      aten.reshape(arg, [bags * d])).reshape([bags, d]), -1)
            out = aten.where.self(aten.unsqueeze(count > 0, 1), out, 0)
        else:
            out = _full([bags, d], 0, weight.dtype, dev)
            max_idx = _full([bags, d], -1, D.int64, dev)
        max_indices = _to(max_idx, indices.dtype)
    else:
        contrib = aten.where.self(aten.unsqueeze(keep, 1), rows, 0)
        if per_sample_weights is not None:
            contrib = contrib * aten.unsqueeze(per_sample_weights, 1)
        out = aten.index_put(_full([bags, d], 0, weight.dtype, dev), [bag], contrib, True)
        if mode == 1:
            out = out / aten.unsqueeze(aten.clamp(count, 1, None), 1)
            out = _to(out, weight.dtype)
        max_indices = _full([bags], 0, indices.dtype, dev)
    return (out, _to(aten.clamp(offset2bag, 0, None), indices.dtype),
            _to(count, indices.dtype), max_indices)


_embedding_bag_op = defop(
    "_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, "
    "int mode=0, bool sparse=False, Tensor? per_sample_weights=None, "
    "bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)",
    tags=CORE, meta=_embedding_bag_meta, decomposition=_embedding_bag, explicit=True)


@derivative(_embedding_bag_op)
def _embedding_bag_derivative(grad, weight, indices, offsets, scale_grad_by_freq, mode,
                              per_sample_weights, include_last_offset, padding_idx, result,
                              needs_input_grad):
    """Each kept index's row gets its bag's gradient (divided by the bag's count for mean,
    times its per-sample weight for sum); max sends it to the rows the max picked (the
    saved max indices, which is why this names ``result``)."""
    num, d = weight.shape
    bags = grad.shape[0]
    dev = grad.device
    g = _up(grad)
    if mode == 2:
        mi = _to(result[3], D.int64)
        valid = aten.ge.Scalar(mi, 0)
        flat = aten.where.self(valid, mi * d + aten.unsqueeze(_arange(d, D.int64, dev), 0), 0)
        vals = aten.where.self(valid, g, 0.0)
        gw = aten.index_put(_full([num * d], 0, g.dtype, dev), [aten.reshape(flat, [bags * d])],
                            aten.reshape(vals, [bags * d]), True)
        return aten.view(gw, [num, d]), None, None, None
    idx, _, keep, bag, count = _bag_layout(indices, offsets, bags, include_last_offset,
                                           padding_idx)
    rows = aten.index_select(g, 0, bag)                                   # (n, d)
    if mode == 1:
        rows = rows / aten.unsqueeze(_to(aten.index_select(aten.clamp(count, 1, None), 0, bag),
                                         g.dtype), 1)
    gpsw = None
    if per_sample_weights is not None and needs_input_grad[3]:
        dots = aten.sum.dim_IntList(rows * aten.index_select(_up(weight), 0, idx), [1], False)
        gpsw = aten.where.self(keep, dots, 0.0)
    if per_sample_weights is not None:
        rows = rows * aten.unsqueeze(_up(per_sample_weights), 1)
    if scale_grad_by_freq:
        freq = aten.index_put(_full([num], 0, D.int64, dev), [idx],
                              _full([idx.shape[0]], 1, D.int64, dev), True)
        rows = rows / aten.unsqueeze(_to(aten.index_select(freq, 0, idx), g.dtype), 1)
    rows = aten.where.self(aten.unsqueeze(keep, 1), rows, 0.0)
    gw = aten.index_put(_full([num, d], 0, g.dtype, dev), [idx], rows, True)
    return gw, None, None, gpsw


def _one_hot(self, num_classes=-1):
    if self.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if self.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(aten.max(self).item()) + 1
    elif self.numel() > 0:
        if int(aten.min(self).item()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(aten.max(self).item()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    classes = _arange(num_classes, D.int64, self.device)
    return _to(aten.eq.Tensor(aten.unsqueeze(self, -1), classes), D.int64)


one_hot = defop("one_hot(Tensor self, int num_classes=-1) -> Tensor", decomposition=_one_hot)
nondifferentiable(one_hot)


# ----------------------------------------------------------------------------- normalization

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
    n = _prod(ns)
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
        gi = _stat_grads(gi, g_mean, g_rstd, x, mean, rstd, _prod(ns), list(mean.shape),
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


def _channel_view(t, ndim):
    return aten.view(t, [1, t.shape[0]] + [1] * (ndim - 2))


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
    HxW = _prod(input.shape[2:])
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

# ----------------------------------------------------------------------------- convolution

def _conv_params(input, weight, stride, padding, dilation, transposed, output_padding, groups):
    """PyTorch's ``check_shape_forward``: validated per-dim parameters and the output shape."""
    k = weight.ndim
    nd = k - 2
    if nd < 1:
        raise RuntimeError(f"weight should have at least three dimensions, but got weight of "
                           f"size {list(weight.shape)}")
    if input.ndim != k:
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.ndim}-dimensional input of "
                           f"size {list(input.shape)} instead")
    s = _ints("convolution", "stride", stride, nd)
    p = _ints("convolution", "padding", padding, nd)
    d = _ints("convolution", "dilation", dilation, nd)
    op = _ints("convolution", "output_padding", output_padding, nd) if transposed else (0,) * nd
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(x < 0 for x in p):
        raise RuntimeError("negative padding is not supported")
    if any(x < 0 for x in op):
        raise RuntimeError("negative output_padding is not supported")
    if any(x <= 0 for x in s):
        raise RuntimeError("non-positive stride is not supported")
    if any(x <= 0 for x in d):
        raise RuntimeError("dilation should be greater than zero")
    w = list(weight.shape)
    if w[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {w} instead")
    if w[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size {w} instead")
    return nd, s, p, d, op


def _conv_meta(input, weight, bias, stride, padding, dilation, transposed, output_padding,
               groups):
    nd, s, p, d, op = _conv_params(input, weight, stride, padding, dilation, transposed,
                                   output_padding, groups)
    w, x = list(weight.shape), list(input.shape)
    if not transposed:
        if x[1] != w[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {w}, expected input{x} to "
                               f"have {w[1] * groups} channels, but got {x[1]} channels instead")
        nb = w[0]
    else:
        if x[1] != w[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {w}, expected input{x} to "
                               f"have {w[0]} channels, but got {x[1]} channels instead")
        nb = w[1] * groups
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != nb):
        what = "Given transposed=1, weight" if transposed else "Given weight"
        raise RuntimeError(f"{what} of size {w}, expected bias to be 1-dimensional with {nb} "
                           f"elements, but got bias of size {list(bias.shape)} instead")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"Input type ({input.dtype.scalar_type}) and weight type "
                           f"({weight.dtype.scalar_type}) should be the same")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({input.dtype.scalar_type}) and bias type "
                           f"({bias.dtype.scalar_type}) should be the same")
    _check_float(input, f"slow_conv{'_transpose' if transposed else ''}{nd}d_cpu")
    spatial, kern = x[2:], w[2:]
    if not transposed:
        padded = [n + 2 * pp for n, pp in zip(spatial, p)]
        eff = [dd * (kk - 1) + 1 for dd, kk in zip(d, kern)]
        if any(a < b for a, b in zip(padded, eff)):
            raise RuntimeError(f"Calculated padded input size per channel: "
                               f"({' x '.join(map(str, padded))}). Kernel size: "
                               f"({' x '.join(map(str, eff))}). Kernel size can't be greater "
                               f"than actual input size")
        out = [(a - b) // ss + 1 for a, b, ss in zip(padded, eff, s)]
    else:
        out = [(n - 1) * ss - 2 * pp + dd * (kk - 1) + o + 1
               for n, ss, pp, dd, kk, o in zip(spatial, s, p, d, kern, op)]
        if any(o < 0 for o in out):
            raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, spatial))})."
                               f" Calculated output size per channel: "
                               f"({' x '.join(map(str, out))}). Output size is too small")
    return TensorMeta((x[0], nb, *out), input.dtype)


def transposed_weight(weight, groups):
    """(Cin, Cout/g, *k) weights of a transposed conv as (Cout, Cin/g, *k) of the equivalent
    direct conv over the stride-dilated input: groups regrouped and kernels flipped."""
    cin, cog = weight.shape[:2]
    k = list(weight.shape[2:])
    nd = len(k)
    w = aten.view(weight, [groups, cin // groups, cog] + k)
    w = aten.permute(w, [0, 2, 1] + list(range(3, 3 + nd)))
    w = aten.reshape(w, [groups * cog, cin // groups] + k)
    return aten.flip(w, list(range(2, 2 + nd)))


def conv_as_general(input, weight, stride, padding, dilation, transposed, output_padding,
                    groups):
    """convolution's arguments in conv_general's terms (lax.conv_general_dilated)."""
    nd = weight.ndim - 2
    s, p, d = (_ints("convolution", n, v, nd) for n, v in
               (("stride", stride), ("padding", padding), ("dilation", dilation)))
    if not transposed:
        return weight, dict(window_strides=list(s), padding_low=list(p), padding_high=list(p),
                            lhs_dilation=[1] * nd, rhs_dilation=list(d),
                            feature_group_count=groups)
    op = _ints("convolution", "output_padding", output_padding, nd)
    k = weight.shape[2:]
    lo = [dd * (kk - 1) - pp for dd, kk, pp in zip(d, k, p)]
    hi = [a + o for a, o in zip(lo, op)]
    return transposed_weight(weight, groups), dict(
        window_strides=[1] * nd, padding_low=lo, padding_high=hi, lhs_dilation=list(s),
        rhs_dilation=list(d), feature_group_count=groups)


def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                 groups):
    meta = _conv_meta(input, weight, bias, stride, padding, dilation, transposed,
                      output_padding, groups)
    w, kw = conv_as_general(input, weight, stride, padding, dilation, transposed,
                            output_padding, groups)
    x = _up(input)
    out = prims.conv_general(x, _up(w), kw["window_strides"], kw["padding_low"],
                             kw["padding_high"], kw["lhs_dilation"], kw["rhs_dilation"],
                             kw["feature_group_count"])
    if bias is not None:
        out = out + _channel_view(_up(bias), out.ndim)
    assert tuple(out.shape) == meta.shape
    return _to(out, input.dtype)


convolution = defop(
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
    "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
    tags=CORE, meta=_conv_meta, decomposition=_convolution, explicit=True)


def _conv_backward_meta(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                        transposed, output_padding, groups, output_mask):
    _conv_params(input, weight, stride, padding, dilation, transposed, output_padding, groups)
    nb = weight.shape[1] * groups if transposed else weight.shape[0]
    return (_same(input) if output_mask[0] else None,
            _same(weight) if output_mask[1] else None,
            TensorMeta((nb,), grad_output.dtype) if output_mask[2] else None)


def _conv_weight_grad(x, gy, weight_shape, stride, padding, dilation, groups):
    """d(conv(x, w))/dw as a convolution: batch and channel roles swap, stride and dilation
    swap, and the groups become the feature groups of the swapped input."""
    n, c = x.shape[:2]
    nd = x.ndim - 2
    cg = c // groups
    sp = list(range(2, 2 + nd))
    # lhs[c', g*N + n, ...] = x[n, g*cg + c', ...]
    lhs = aten.view(x, [n, groups, cg] + list(x.shape[2:]))
    lhs = aten.reshape(aten.permute(lhs, [2, 1, 0] + [i + 1 for i in sp]),
                       [cg, groups * n] + list(x.shape[2:]))
    # rhs[g*og + o', n, ...] = gy[n, g*og + o', ...]
    rhs = aten.permute(gy, [1, 0] + sp)
    gw = aten.convolution(lhs, rhs, None, list(dilation), list(padding), list(stride), False,
                          [0] * nd, groups)                     # (cg, O, *k')
    for i, kk in enumerate(weight_shape[2:]):
        if gw.shape[2 + i] != kk:
            gw = aten.slice.Tensor(gw, 2 + i, 0, kk)
    return aten.permute(gw, [1, 0] + sp)


def _convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                          transposed, output_padding, groups, output_mask):
    nd, s, p, d, op = _conv_params(input, weight, stride, padding, dilation, transposed,
                                   output_padding, groups)
    gi = gw = gb = None
    if output_mask[2]:
        gb = aten.sum.dim_IntList(grad_output, [0] + list(range(2, 2 + nd)), False)
    if not transposed:
        if output_mask[0]:
            k = weight.shape[2:]
            # output_padding recovers input sizes the forward's floor division dropped
            extra = [n - ((o - 1) * ss - 2 * pp + dd * (kk - 1) + 1) for n, o, ss, pp, dd, kk in
                     zip(input.shape[2:], grad_output.shape[2:], s, p, d, k)]
            gi = aten.convolution(grad_output, weight, None, list(s), list(p), list(d), True,
                                  extra, groups)
        if output_mask[1]:
            gw = _conv_weight_grad(input, grad_output, weight.shape, s, p, d, groups)
    else:
        if output_mask[0]:
            gi = aten.convolution(grad_output, weight, None, list(s), list(p), list(d), False,
                                  [0] * nd, groups)
        if output_mask[1]:
            gw = _conv_weight_grad(grad_output, input, weight.shape, s, p, d, groups)
    return gi, gw, gb


convolution_backward = defop(
    "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, "
    "SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, "
    "SymInt[] output_padding, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    tags=CORE, meta=_conv_backward_meta, decomposition=_convolution_backward, explicit=True)


@derivative(convolution)
def _convolution_derivative(grad, input, weight, stride, padding, dilation, transposed,
                            output_padding, groups, needs_input_grad):
    nb = weight.shape[1] * groups if transposed else weight.shape[0]
    return aten.convolution_backward(grad, input, weight, [nb], stride, padding, dilation,
                                     transposed, output_padding, groups,
                                     list(needs_input_grad))


def _batchify(name, input, nd):
    """conv/pool accept an unbatched input: (C, *spatial) runs as a batch of one."""
    if input.ndim == nd + 1:
        return aten.unsqueeze(input, 0), True
    if input.ndim == nd + 2:
        return input, False
    raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, "
                       f"but got input of size: {list(input.shape)}")


def _conv_nd(nd):
    name = f"conv{nd}d"

    def decomp(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        x, unbatched = _batchify(name, input, nd)
        if isinstance(padding, str):
            x, padding = _same_padding(x, weight, stride, padding, dilation, nd)
        out = aten.convolution(x, weight, bias, list(_ints(name, "stride", stride, nd)),
                               list(_ints(name, "padding", padding, nd)),
                               list(_ints(name, "dilation", dilation, nd)), False, [0] * nd,
                               groups)
        return aten.squeeze.dim(out, 0) if unbatched else out
    return decomp


def _same_padding(x, weight, stride, padding, dilation, nd):
    if padding == "valid":
        return x, 0
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if any(s != 1 for s in _ints("convolution", "stride", stride, nd)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    d = _ints("convolution", "dilation", dilation, nd)
    total = [dd * (k - 1) for dd, k in zip(d, weight.shape[2:])]
    left = [t // 2 for t in total]
    extra = [t - 2 * lft for t, lft in zip(total, left)]
    if any(extra):
        pad = []
        for e in reversed(extra):
            pad += [0, e]
        x = aten.constant_pad_nd(x, pad, 0)
    return x, left


def _conv_transpose_nd(nd):
    name = f"conv_transpose{nd}d"

    def decomp(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
               dilation=1):
        x, unbatched = _batchify(name, input, nd)
        s = _ints(name, "stride", stride, nd)
        d = _ints(name, "dilation", dilation, nd)
        op = _ints(name, "output_padding", output_padding, nd)
        if any(o >= ss and o >= dd for o, ss, dd in zip(op, s, d)):
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, "
                               f"but got output_padding={list(op)}, stride={list(s)} and "
                               f"dilation={list(d)}")
        out = aten.convolution(x, weight, bias, list(s),
                               list(_ints(name, "padding", padding, nd)), list(d), True,
                               list(op), groups)
        return aten.squeeze.dim(out, 0) if unbatched else out
    return decomp


_CONV_ARGS = "Tensor input, Tensor weight, Tensor? bias=None, SymInt[{n}] stride=1, "
conv1d = defop("conv1d(" + _CONV_ARGS.format(n=1) + "SymInt[1] padding=0, SymInt[1] dilation=1, "
               "SymInt groups=1) -> Tensor", decomposition=_conv_nd(1))
conv2d = defop("conv2d(" + _CONV_ARGS.format(n=2) + "SymInt[2] padding=0, SymInt[2] dilation=1, "
               "SymInt groups=1) -> Tensor", decomposition=_conv_nd(2))
conv3d = defop("conv3d(" + _CONV_ARGS.format(n=3) + "SymInt[3] padding=0, SymInt[3] dilation=1, "
               "SymInt groups=1) -> Tensor", decomposition=_conv_nd(3))
conv1d_padding = defop("conv1d.padding(" + _CONV_ARGS.format(n=1) + 'str padding="valid", '
                       "SymInt[1] dilation=1, SymInt groups=1) -> Tensor",
                       decomposition=_conv_nd(1))
conv2d_padding = defop("conv2d.padding(" + _CONV_ARGS.format(n=2) + 'str padding="valid", '
                       "SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
                       decomposition=_conv_nd(2))
conv3d_padding = defop("conv3d.padding(" + _CONV_ARGS.format(n=3) + 'str padding="valid", '
                       "SymInt[3] dilation=1, SymInt groups=1) -> Tensor",
                       decomposition=_conv_nd(3))
_CONVT = ("SymInt[{n}] padding=0, SymInt[{n}] output_padding=0, SymInt groups=1, "
          "SymInt[{n}] dilation=1) -> Tensor")
conv_transpose1d = defop("conv_transpose1d(" + _CONV_ARGS.format(n=1) + _CONVT.format(n=1),
                         decomposition=_conv_transpose_nd(1))
conv_transpose2d = defop("conv_transpose2d.input(" + _CONV_ARGS.format(n=2) + _CONVT.format(n=2),
                         decomposition=_conv_transpose_nd(2))
conv_transpose3d = defop("conv_transpose3d.input(" + _CONV_ARGS.format(n=3) + _CONVT.format(n=3),
                         decomposition=_conv_transpose_nd(3))


# ----------------------------------------------------------------------------- pooling

_NUM = {1: "one int", 2: "two ints", 3: "three ints"}


def _pool_ints(name, what, v, nd, allow_empty=False):
    v = (v,) if isinstance(v, int) else tuple(v)
    if allow_empty and not v:
        return None
    if len(v) == 1:
        v = v * nd
    if len(v) != nd:
        lead = "either be omitted, a single int" if allow_empty else \
            ("be either a single int" if what == "dilation" else "either be a single int")
        raise RuntimeError(f"{name}: {what} must {lead}, or a tuple of {_NUM[nd]}")
    return v


def pool_output_size(n, k, p, s, d, ceil_mode):
    """PyTorch's ``pooling_output_shape``: a last window must start inside the input or
    its left padding."""
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool_shape_check(name, x, nd, k, s, p, d, out):
    rank = (nd + 1, nd + 2)
    sp = list(x.shape)
    if x.ndim not in rank or any(n == 0 for n in sp[x.ndim - nd - 1 if x.ndim == nd + 2
                                                   else 0:]):
        raise RuntimeError(f"Expected {rank[0]}D or {rank[1]}D (batch mode) tensor with "
                           f"optional 0 dim batch size for input, but got:{sp}")
    if any(kk // 2 < pp for kk, pp in zip(k, p)):
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but "
                           f"got pad={list(p)}, kernel_size={list(k)}")
    if any(o < 1 for o in out):
        c = sp[-nd - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, [c] + sp[-nd:]))}). "
                           f"Calculated output size: ({'x'.join(map(str, [c] + list(out)))}). "
                           f"Output size is too small")


def _pool_setup(name, x, nd, kernel_size, stride, padding, dilation, ceil_mode):
    k = _pool_ints(name, "kernel_size", kernel_size, nd)
    s = _pool_ints(name, "stride", stride, nd, allow_empty=True) or k
    p = _pool_ints(name, "padding", padding, nd)
    d = _pool_ints(name, "dilation", dilation, nd)
    if any(v <= 0 for v in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got {list(k)}")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"stride should be greater than zero, but got {list(s)}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(d)}")
    sp = x.shape[x.ndim - nd:]
    out = tuple(pool_output_size(n, kk, pp, ss, dd, ceil_mode)
                for n, kk, pp, ss, dd in zip(sp, k, p, s, d))
    _pool_shape_check(name, x, nd, k, s, p, d, out)
    return k, s, p, d, out


def _max_pool_meta(nd):
    name = f"max_pool{nd}d"

    def meta(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        if self.dtype is D.bool or self.dtype.is_complex:
            raise _not_implemented(name, self.dtype)
        out = _pool_setup(name, self, nd, kernel_size, stride, padding, dilation, ceil_mode)[4]
        shape = tuple(self.shape[:self.ndim - nd]) + out
        return TensorMeta(shape, self.dtype), TensorMeta(shape, D.int64)
    return meta


def _lowest(dtype):
    if dtype.is_floating_point:
        return -math.inf
    return int(np.iinfo(dtype.numpy).min)


def _window_offsets(x, nd, k, s, d, out, lead):
    """(kernel offset, strided view of ``x`` at that offset) for every kernel offset."""
    for kk in itertools.product(*(range(n) for n in k)):
        v = x
        for i in range(nd):
            st = kk[i] * d[i]
            v = aten.slice.Tensor(v, lead + i, st, st + s[i] * (out[i] - 1) + 1, s[i])
        yield kk, v


def _max_pool_decomp(nd):
    meta = _max_pool_meta(nd)

    def decomp(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        meta(self, kernel_size, stride, padding, dilation, ceil_mode)
        name = f"max_pool{nd}d"
        k, s, p, d, out = _pool_setup(name, self, nd, kernel_size, stride, padding, dilation,
                                      ceil_mode)
        lead = self.ndim - nd
        sp = self.shape[lead:]
        fill = _lowest(self.dtype)
        pad = []
        for i in reversed(range(nd)):
            hi = max(0, (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - (sp[i] + p[i]))
            pad += [p[i], hi]
        x = aten.constant_pad_nd(self, pad, fill) if any(pad) else self
        dev = self.device
        base = []
        for i in range(nd):
            view = [1] * nd
            view[i] = out[i]
            base.append(aten.view(_arange(out[i], D.int64, dev) * s[i] - p[i], view))
        instride = [_prod(sp[i + 1:]) for i in range(nd)]
        best = idx = None
        isfloat = self.dtype.is_floating_point
        for kk, v in _window_offsets(x, nd, k, s, d, out, lead):
            coords = [b + kk[i] * d[i] for i, b in enumerate(base)]
            valid = None
            flat = None
            for i, c in enumerate(coords):
                ok = aten.logical_and(aten.ge.Scalar(c, 0), aten.lt.Scalar(c, sp[i]))
                valid = ok if valid is None else aten.logical_and(valid, ok)
                term = c * instride[i]
                flat = term if flat is None else flat + term
            if best is None:
                best = aten.where.self(valid, v, fill)
                idx = aten.where.self(valid, flat, -1)
                continue
            better = aten.logical_or(aten.gt.Tensor(v, best), aten.lt.Scalar(idx, 0))
            if isfloat:
                better = aten.logical_or(better, aten.isnan(v))
            take = aten.logical_and(valid, better)
            best = aten.where.self(take, v, best)
            idx = aten.where.self(take, flat, idx)
        if tuple(idx.shape) != tuple(best.shape):
            idx = aten.clone(aten.expand(idx, list(best.shape)))
        return best, idx
    return decomp


_POOL_ARGS = ("Tensor self, int[{n}] kernel_size, int[{n}] stride=[], int[{n}] padding=0, "
              "int[{n}] dilation=1, bool ceil_mode=False")
max_pool2d_with_indices = defop(
    "max_pool2d_with_indices(" + _POOL_ARGS.format(n=2) + ") -> (Tensor, Tensor)", tags=CORE,
    meta=_max_pool_meta(2), decomposition=_max_pool_decomp(2), explicit=True)
max_pool3d_with_indices = defop(
    "max_pool3d_with_indices(" + _POOL_ARGS.format(n=3) + ") -> (Tensor, Tensor)", tags=CORE,
    meta=_max_pool_meta(3), decomposition=_max_pool_decomp(3), explicit=True)


def _max_pool_backward_meta(grad_output, self, kernel_size, stride, padding, dilation,
                            ceil_mode, indices):
    if tuple(grad_output.shape) != tuple(indices.shape):
        raise RuntimeError(f"max_pool2d_with_indices_backward: grad_output of shape "
                           f"{list(grad_output.shape)} does not match indices of shape "
                           f"{list(indices.shape)}")
    return _same(self)


def _max_pool_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                       indices, nd=2):
    _max_pool_backward_meta(grad_output, self, kernel_size, stride, padding, dilation,
                            ceil_mode, indices)
    lead = list(self.shape[:self.ndim - nd])
    plane = _prod(self.shape[self.ndim - nd:])
    n_out = _prod(grad_output.shape[self.ndim - nd:])
    g = aten.reshape(grad_output, lead + [n_out])
    i = aten.reshape(indices, lead + [n_out])
    acc = _full(lead + [plane], 0, grad_output.dtype, grad_output.device)
    return aten.view(aten.scatter_add(acc, len(lead), i, g), list(self.shape))


max_pool2d_with_indices_backward = defop(
    "max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
    "int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor",
    tags=CORE, meta=_max_pool_backward_meta, decomposition=_max_pool_backward, explicit=True)


# The values' gradient goes to the input element each window picked: the indices output
# (named through ``result``, as PyTorch saves it).

@derivative(max_pool2d_with_indices)
def _max_pool2d_derivative(grad, self, kernel_size, stride, padding, dilation, ceil_mode,
                           result):
    return aten.max_pool2d_with_indices_backward(grad, self, kernel_size, stride, padding,
                                                 dilation, ceil_mode, result[1])


@derivative(max_pool3d_with_indices)
def _max_pool3d_derivative(grad, self, kernel_size, stride, padding, dilation, ceil_mode,
                           result):
    return _max_pool_backward(grad, self, kernel_size, stride, padding, dilation, ceil_mode,
                              result[1], nd=3)


def _max_pool_nd(nd, with_indices=False):
    name = f"max_pool{nd}d"

    def decomp(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        if nd == 1:
            if self.ndim not in (2, 3):
                raise RuntimeError(f"max_pool1d() Expected 2D or 3D input tensor, but got "
                                   f"{list(self.shape)}")
            k = _pool_ints(name, "kernel_size", kernel_size, 1)
            s = _pool_ints(name, "stride", stride, 1, allow_empty=True) or k
            p = _pool_ints(name, "padding", padding, 1)
            d = _pool_ints(name, "dilation", dilation, 1)
            x = aten.unsqueeze(self, -2)
            v, i = aten.max_pool2d_with_indices(x, [1, k[0]], [1, s[0]], [0, p[0]],
                                                [1, d[0]], ceil_mode)
            v, i = aten.squeeze.dim(v, -2), aten.squeeze.dim(i, -2)
        else:
            op = aten.max_pool2d_with_indices if nd == 2 else aten.max_pool3d_with_indices
            v, i = op(self, kernel_size, stride, padding, dilation, ceil_mode)
        return (v, i) if with_indices else v
    return decomp


max_pool1d = defop("max_pool1d(" + _POOL_ARGS.format(n=1) + ") -> Tensor",
                   decomposition=_max_pool_nd(1))
max_pool1d_with_indices = defop(
    "max_pool1d_with_indices(" + _POOL_ARGS.format(n=1) + ") -> (Tensor, Tensor)",
    decomposition=_max_pool_nd(1, True))
max_pool2d = defop("max_pool2d(" + _POOL_ARGS.format(n=2) + ") -> Tensor",
                   decomposition=_max_pool_nd(2))
max_pool3d = defop("max_pool3d(" + _POOL_ARGS.format(n=3) + ") -> Tensor",
                   decomposition=_max_pool_nd(3))


def _avg_setup(name, self, nd, kernel_size, stride, padding, ceil_mode, divisor_override):
    if self.dtype is D.bool or self.dtype.is_complex or \
            (not self.dtype.is_floating_point and self.dtype is not D.int64):
        raise _not_implemented(name, self.dtype)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return _pool_setup(name, self, nd, kernel_size, stride, padding, 1, ceil_mode)


def _avg_meta(nd):
    def meta(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
             divisor_override=None):
        out = _avg_setup(f"avg_pool{nd}d", self, nd, kernel_size, stride, padding, ceil_mode,
                         divisor_override)[4]
        return TensorMeta(tuple(self.shape[:self.ndim - nd]) + out, self.dtype)
    return meta


def _avg_divisor(sp, k, s, p, out, count_include_pad, divisor_override, dtype, device):
    """The per-window divisor, broadcastable over the output's spatial dims."""
    nd = len(sp)
    if divisor_override is not None:
        return divisor_override
    div = None
    for i in range(nd):
        start = _arange(out[i], D.int64, device) * s[i] - p[i]
        end = aten.clamp(start + k[i], None, sp[i] + p[i])
        if count_include_pad:
            n = end - start
        else:
            n = aten.clamp(end, None, sp[i]) - aten.clamp(start, 0, None)
        view = [1] * nd
        view[i] = out[i]
        n = aten.view(n, view)
        div = n if div is None else div * n
    return _to(div, dtype)


def _avg_decomp(nd):
    def decomp(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
        k, s, p, _, out = _avg_setup(f"avg_pool{nd}d", self, nd, kernel_size, stride, padding,
                                     ceil_mode, divisor_override)
        lead = self.ndim - nd
        sp = self.shape[lead:]
        isint = not self.dtype.is_floating_point
        x = _up(self)
        pad = []
        for i in reversed(range(nd)):
            hi = max(0, (out[i] - 1) * s[i] + k[i] - (sp[i] + p[i]))
            pad += [p[i], hi]
        if any(pad):
            x = aten.constant_pad_nd(x, pad, 0)
        total = None
        for _, v in _window_offsets(x, nd, k, s, (1,) * nd, out, lead):
            total = v if total is None else total + v
        div = _avg_divisor(sp, k, s, p, out, count_include_pad, divisor_override, x.dtype,
                           self.device)
        if isint:
            if not isinstance(div, int):
                return aten.div.Tensor_mode(total, div, rounding_mode="trunc")
            return aten.div.Scalar_mode(total, div, rounding_mode="trunc")
        return _to(total / div, self.dtype)
    return decomp


_AVG_ARGS = ("Tensor self, int[{n}] kernel_size, int[{n}] stride=[], int[{n}] padding=0, "
             "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None")
avg_pool2d = defop("avg_pool2d(" + _AVG_ARGS.format(n=2) + ") -> Tensor", tags=CORE,
                   meta=_avg_meta(2), decomposition=_avg_decomp(2), explicit=True)
avg_pool3d = defop("avg_pool3d(" + _AVG_ARGS.format(n=3) + ") -> Tensor", tags=CORE,
                   meta=_avg_meta(3), decomposition=_avg_decomp(3), explicit=True)


def _avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
                         count_include_pad, divisor_override, nd=2):
    k, s, p, _, out = _avg_setup("avg_pool2d_backward", self, nd, kernel_size, stride, padding,
                                 ceil_mode, divisor_override)
    lead = list(self.shape[:self.ndim - nd])
    sp = self.shape[self.ndim - nd:]
    if tuple(grad_output.shape[self.ndim - nd:]) != out:
        raise RuntimeError(f"avg_pool2d_backward: expected grad_output of spatial size "
                           f"{list(out)}, but got {list(grad_output.shape)}")
    g = _up(grad_output)
    div = _avg_divisor(sp, k, s, p, out, count_include_pad, divisor_override, g.dtype,
                       self.device)
    g = g / div
    padded = [(o - 1) * ss + kk for o, ss, kk in zip(out, s, k)]
    padded = [max(a, n + 2 * pp) for a, n, pp in zip(padded, sp, p)]
    pstride = [_prod(padded[i + 1:]) for i in range(nd)]
    dev = self.device
    n_out = _prod(out)
    idx_parts = []
    for kk in itertools.product(*(range(n) for n in k)):
        flat = None
        for i in range(nd):
            view = [1] * nd
            view[i] = out[i]
            c = aten.view((_arange(out[i], D.int64, dev) * s[i] + kk[i]) * pstride[i], view)
            flat = c if flat is None else flat + c
        idx_parts.append(aten.reshape(aten.expand(flat, list(out)), [n_out]))
    nk = len(idx_parts)
    idx = aten.expand(aten.cat(idx_parts), lead + [nk * n_out])
    vals = aten.reshape(g, lead + [n_out])
    vals = aten.cat([vals] * nk, len(lead))
    acc = _full(lead + [_prod(padded)], 0, g.dtype, dev)
    acc = aten.view(aten.scatter_add(acc, len(lead), idx, vals), lead + padded)
    for i in range(nd):
        acc = aten.slice.Tensor(acc, len(lead) + i, p[i], p[i] + sp[i])
    return _to(aten.clone(acc), self.dtype)


avg_pool2d_backward = defop(
    "avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
    "int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor",
    tags=CORE, meta=lambda grad_output, self, *a: _same(self),
    decomposition=_avg_pool2d_backward, explicit=True)


@derivative(avg_pool2d)
def _avg_pool2d_derivative(grad, self, kernel_size, stride, padding, ceil_mode,
                           count_include_pad, divisor_override):
    return aten.avg_pool2d_backward(grad, self, kernel_size, stride, padding, ceil_mode,
                                    count_include_pad, divisor_override)


@derivative(avg_pool3d)
def _avg_pool3d_derivative(grad, self, kernel_size, stride, padding, ceil_mode,
                           count_include_pad, divisor_override):
    return _avg_pool2d_backward(grad, self, kernel_size, stride, padding, ceil_mode,
                                count_include_pad, divisor_override, nd=3)


def _avg_pool1d(self, kernel_size, stride=(), padding=0, ceil_mode=False,
                count_include_pad=True):
    name = "avg_pool1d"
    if self.ndim not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(self.shape)}")
    k = _pool_ints(name, "kernel_size", kernel_size, 1)
    s = _pool_ints(name, "stride", stride, 1, allow_empty=True) or k
    p = _pool_ints(name, "padding", padding, 1)
    out = aten.avg_pool2d(aten.unsqueeze(self, -2), [1, k[0]], [1, s[0]], [0, p[0]], ceil_mode,
                          count_include_pad)
    return aten.squeeze.dim(out, -2)


avg_pool1d = defop("avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], "
                   "int[1] padding=0, bool ceil_mode=False, bool count_include_pad=True) "
                   "-> Tensor", decomposition=_avg_pool1d)


def _adaptive_check(name, self, output_size, nd):
    out = tuple(int(o) for o in ((output_size,) if isinstance(output_size, int)
                                 else output_size))
    if len(out) == 1:
        out = out * nd
    if len(out) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd}")
    # every dim but an optional batch dim must be non-empty
    if self.ndim not in (nd + 1, nd + 2) or any(n == 0 for n in self.shape[-nd - 1:]):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{list(self.shape)}")
    if any(o < 0 for o in out):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal "
                           f"to 0 but received {list(out)}")
    _check_float(self, name)
    return out


def _adaptive_meta(nd):
    name = f"adaptive_avg_pool{nd}d"

    def meta(self, output_size):
        out = _adaptive_check(name, self, output_size, nd)
        return TensorMeta(tuple(self.shape[:self.ndim - nd]) + out, self.dtype)
    return meta


def adaptive_windows(n_in, n_out):
    """Window i of an adaptive pool: [floor(i*in/out), ceil((i+1)*in/out))."""
    return [((i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)) for i in range(n_out)]


def _adaptive_axis(x, dim, n_out):
    """Average ``x`` along ``dim`` over the adaptive windows (exact sums, no 0*inf)."""
    n_in = x.shape[dim]
    if n_in == n_out:
        return x
    if n_in % n_out == 0:
        shape = list(x.shape)
        shape[dim:dim + 1] = [n_out, n_in // n_out]
        return aten.mean.dim(aten.reshape(x, shape), [dim + 1], False)
    dev = x.device
    i = _arange(n_out, D.int64, dev)
    start = aten.div.Scalar_mode(i * n_in, n_out, rounding_mode="floor")
    end = -aten.div.Scalar_mode(-(i + 1) * n_in, n_out, rounding_mode="floor")
    width = max(e - s for s, e in adaptive_windows(n_in, n_out))
    j = aten.unsqueeze(start, 1) + aten.unsqueeze(_arange(width, D.int64, dev), 0)
    inside = aten.lt.Tensor(j, aten.unsqueeze(end, 1))                  # (out, width)
    j = aten.clamp(j, None, n_in - 1)
    g = aten.index_select(x, dim, aten.reshape(j, [n_out * width]))
    shape = list(x.shape)
    shape[dim:dim + 1] = [n_out, width]
    g = aten.reshape(g, shape)
    mview = [1] * len(shape)
    mview[dim], mview[dim + 1] = n_out, width
    g = aten.where.self(aten.view(inside, mview), g, 0)
    cview = [1] * x.ndim
    cview[dim] = n_out
    return aten.sum.dim_IntList(g, [dim + 1], False) / _to(aten.view(end - start, cview), x.dtype)


def _adaptive_decomp(nd):
    name = f"adaptive_avg_pool{nd}d"

    def decomp(self, output_size):
        out = _adaptive_check(name, self, output_size, nd)
        x = _up(self)
        for i in range(nd):
            x = _adaptive_axis(x, self.ndim - nd + i, out[i])
        if x is self:
            x = aten.clone(x)
        return _to(x, self.dtype)
    return decomp


_adaptive_avg_pool2d = defop("_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
                             tags=CORE, meta=_adaptive_meta(2), decomposition=_adaptive_decomp(2),
                             explicit=True)
_adaptive_avg_pool3d = defop("_adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
                             tags=CORE, meta=_adaptive_meta(3), decomposition=_adaptive_decomp(3),
                             explicit=True)


def _adaptive_matrix(n_in, n_out, dtype, device):
    """(n_out, n_in) averaging matrix of the adaptive windows."""
    i = _arange(n_out, D.int64, device)
    start = aten.div.Scalar_mode(i * n_in, n_out, rounding_mode="floor")
    end = -aten.div.Scalar_mode(-(i + 1) * n_in, n_out, rounding_mode="floor")
    j = aten.unsqueeze(_arange(n_in, D.int64, device), 0)
    m = aten.logical_and(aten.ge.Tensor(j, aten.unsqueeze(start, 1)),
                         aten.lt.Tensor(j, aten.unsqueeze(end, 1)))
    return _to(m, dtype) / _to(aten.unsqueeze(end - start, 1), dtype)


def _adaptive_avg_pool2d_backward(grad_output, self, nd=2):
    if grad_output.ndim != self.ndim:
        raise RuntimeError(f"adaptive_avg_pool2d_backward(): Expected grad_output to have the "
                           f"same rank as self, but got {list(grad_output.shape)} and "
                           f"{list(self.shape)}")
    g = _up(grad_output)
    for i in range(nd):
        dim = self.ndim - nd + i
        m = _adaptive_matrix(self.shape[dim], grad_output.shape[dim], g.dtype, g.device)
        # contract the output axis ``dim`` of g with m's rows: result axis is the input axis
        perm = [a for a in range(g.ndim) if a != dim] + [dim]
        gt = aten.permute(g, perm)
        rest = list(gt.shape[:-1])
        r = aten.mm(aten.reshape(gt, [_prod(rest), gt.shape[-1]]), m)
        r = aten.reshape(r, rest + [m.shape[1]])
        inv = [perm.index(a) for a in range(g.ndim)]
        g = aten.permute(r, inv)
    return _to(aten.clone(g), self.dtype)


_adaptive_avg_pool2d_backward_op = defop(
    "_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor", tags=CORE,
    meta=lambda grad_output, self: _same(self), decomposition=_adaptive_avg_pool2d_backward,
    explicit=True)


@derivative(_adaptive_avg_pool2d)
def _adaptive_avg_pool2d_derivative(grad, self):
    return aten._adaptive_avg_pool2d_backward(grad, self)


@derivative(_adaptive_avg_pool3d)
def _adaptive_avg_pool3d_derivative(grad, self):
    return _adaptive_avg_pool2d_backward(grad, self, nd=3)


def _adaptive_avg_pool1d(self, output_size):
    out = _pool_ints("adaptive_avg_pool1d", "output_size", output_size, 1)
    if self.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got "
                           f"{list(self.shape)}")
    r = aten._adaptive_avg_pool2d(aten.unsqueeze(self, -2), [1, out[0]])
    return aten.squeeze.dim(r, -2)


adaptive_avg_pool1d = defop("adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor",
                            decomposition=_adaptive_avg_pool1d)
adaptive_avg_pool2d = defop("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
                            decomposition=lambda self, output_size:
                                aten._adaptive_avg_pool2d(self, output_size))
adaptive_avg_pool3d = defop("adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
                            decomposition=lambda self, output_size:
                                aten._adaptive_avg_pool3d(self, output_size))


# ----------------------------------------------------------------------------- padding

def _pad_check(name, self, padding, nd, reflect):
    pad = tuple(int(v) for v in padding)
    if len(pad) != 2 * nd:
        raise RuntimeError(f"{name}: padding size is expected to be {2 * nd}, but got: "
                           f"{len(pad)}")
    if self.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: expected {nd + 1}D or {nd + 2}D (batch mode) tensor with "
                           f"possibly 0 batch size and other non-zero dimensions for input, "
                           f"but got: {list(self.shape)}")
    sp = self.shape[self.ndim - nd:]
    out = []
    for i in range(nd):
        lo, hi = pad[2 * (nd - 1 - i)], pad[2 * (nd - 1 - i) + 1]
        n = sp[i]
        if reflect and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({lo}, {hi}) at dimension "
                               f"{self.ndim - nd + i} of input {list(self.shape)}")
        if not reflect and n == 0:
            raise RuntimeError(f"{name}: input tensor must have non-zero spatial dims, but got "
                               f"{list(self.shape)}")
        o = n + lo + hi
        if o < 1:
            raise RuntimeError(f"input ({'x'.join(map(str, sp))}) is too small. Calculated "
                               f"output {o}")
        out.append((lo, hi, o))
    return out


def _pad_meta(name, nd, reflect):
    def meta(self, padding):
        out = _pad_check(name, self, padding, nd, reflect)
        return TensorMeta(tuple(self.shape[:self.ndim - nd]) + tuple(o for _, _, o in out),
                          self.dtype)
    return meta


def _pad_decomp(name, nd, reflect):
    def decomp(self, padding):
        out = _pad_check(name, self, padding, nd, reflect)
        x = self
        for i, (lo, hi, o) in enumerate(out):
            dim = self.ndim - nd + i
            n = self.shape[dim]
            j = _arange(o, D.int64, self.device) - lo
            if reflect:
                j = (n - 1) - aten.abs((n - 1) - aten.abs(j))
            else:
                j = aten.clamp(j, 0, n - 1)
            x = aten.index_select(x, dim, j)
        return x
    return decomp


def _define_pad(kind, nd, core):
    name = f"{kind}_pad{nd}d"
    reflect = kind == "reflection"
    return defop(f"{name}(Tensor self, SymInt[{2 * nd}] padding) -> Tensor",
                 tags=CORE if core else ATEN, meta=_pad_meta(name, nd, reflect),
                 decomposition=_pad_decomp(name, nd, reflect), explicit=core)


reflection_pad1d = _define_pad("reflection", 1, True)
reflection_pad2d = _define_pad("reflection", 2, True)
reflection_pad3d = _define_pad("reflection", 3, True)
replication_pad1d = _define_pad("replication", 1, False)
replication_pad2d = _define_pad("replication", 2, True)
replication_pad3d = _define_pad("replication", 3, True)


def _pad_circular(self, pad):
    nd = len(pad) // 2
    x = self
    for i in range(nd):
        dim = self.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = self.shape[dim]
        if lo > n or hi > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        parts = []
        if lo > 0:
            parts.append(aten.slice.Tensor(x, dim, n - lo, n))
        parts.append(aten.slice.Tensor(x, dim, max(-lo, 0), n - max(-hi, 0)))
        if hi > 0:
            parts.append(aten.slice.Tensor(x, dim, 0, hi))
        x = aten.cat(parts, dim)
    return x


def _pad(self, pad, mode="constant", value=None):
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > self.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pad)} and input of "
                           f"dimension {self.ndim}")
    if mode == "constant":
        return aten.constant_pad_nd(self, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    nd = len(pad) // 2
    if mode == "circular":
        return _pad_circular(self, pad)
    if mode not in ("reflect", "replicate"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if nd not in (1, 2, 3) or self.ndim not in (nd + 1, nd + 2):
        raise NotImplementedError(f"Only 2D, 3D, 4D, 5D padding with non-constant padding are "
                                  f"supported for now (got a {self.ndim}D input and {nd} padded "
                                  f"dims)")
    kind = "reflection" if mode == "reflect" else "replication"
    return getattr(aten, f"{kind}_pad{nd}d")(self, pad)


pad = defop('pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor',
            decomposition=_pad)


# ----------------------------------------------------------------------------- sampling

def _upsample_sizes(name, input, output_size, scale_factors):
    if input.ndim != 4:
        raise RuntimeError(f"{name}: It is expected input_size equals to 4, but got size "
                           f"{input.ndim}")
    if (output_size is None) == (scale_factors is None):
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    sp = input.shape[2:]
    if output_size is not None:
        out = tuple(int(o) for o in output_size)
        if len(out) != 2:
            raise RuntimeError(f"{name}: It is expected output_size equals to 2, but got size "
                               f"{len(out)}")
        scales = (None, None)
    else:
        scales = tuple(float(s) for s in scale_factors)
        if len(scales) != 2:
            raise RuntimeError(f"{name}: It is expected scale_factors equals to 2, but got size "
                               f"{len(scales)}")
        out = tuple(int(n * sc) for n, sc in zip(sp, scales))
    if any(n <= 0 for n in sp) or any(o <= 0 for o in out) or input.shape[1] == 0:
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"(H: {sp[0]}, W: {sp[1]}) output (H: {out[0]}, W: {out[1]})")
    return out, scales


def _f32(v):
    return float(np.float32(v))


def _nearest_index(n_in, n_out, scale, device):
    """PyTorch's ``nearest_idx``: floor(dst * scale) in float32, clamped."""
    if n_out == n_in:
        return _arange(n_out, D.int64, device)
    if n_out == 2 * n_in:
        return aten.div.Scalar_mode(_arange(n_out, D.int64, device), 2, rounding_mode="floor")
    sc = _f32(1.0 / scale if scale is not None and scale > 0 else _f32(n_in) / n_out)
    src = aten.floor(_arange(n_out, D.float32, device) * sc)
    return aten.clamp(_to(src, D.int64), None, n_in - 1)


def _upsample_nearest2d_vec(input, output_size, scale_factors):
    out, scales = _upsample_sizes("upsample_nearest2d", input, output_size, scale_factors)
    x = input
    for i in range(2):
        x = aten.index_select(x, 2 + i, _nearest_index(input.shape[2 + i], out[i], scales[i],
                                                       input.device))
    return x


def _upsample_meta(name):
    def meta(input, output_size, *rest):
        scale_factors = rest[-1]
        out, _ = _upsample_sizes(name, input, output_size, scale_factors)
        if name == "upsample_bilinear2d":
            _check_float(input, "upsample_bilinear2d_channels_last")
        return TensorMeta(tuple(input.shape[:2]) + out, input.dtype)
    return meta


upsample_nearest2d_vec = defop(
    "upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) "
    "-> Tensor", tags=CORE, meta=_upsample_meta("upsample_nearest2d"),
    decomposition=_upsample_nearest2d_vec, explicit=True)


def _linear_source(n_in, n_out, align_corners, scale, dtype, device):
    """Source coordinate, lower/upper neighbour and weights of linear interpolation."""
    if align_corners:
        sc = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        sc = 1.0 / scale if scale is not None and scale > 0 else n_in / n_out
    if dtype is D.float32:
        sc = _f32(sc)
    dst = _arange(n_out, dtype, device)
    if align_corners:
        src = dst * sc
    else:
        src = aten.clamp((dst + 0.5) * sc - 0.5, 0, None)
    i0 = _to(aten.trunc(src), D.int64)
    i1 = aten.clamp(i0 + 1, None, n_in - 1)
    l1 = aten.clamp(src - _to(i0, dtype), 0, 1)
    return i0, i1, 1.0 - l1, l1


def _upsample_bilinear2d_vec(input, output_size, align_corners, scale_factors):
    out, scales = _upsample_sizes("upsample_bilinear2d", input, output_size, scale_factors)
    _check_float(input, "upsample_bilinear2d_channels_last")
    x = _up(input)
    for i, view in ((0, [-1, 1]), (1, [-1])):
        dim = 2 + i
        i0, i1, l0, l1 = _linear_source(input.shape[dim], out[i], align_corners, scales[i],
                                        x.dtype, x.device)
        a = aten.index_select(x, dim, i0)
        b = aten.index_select(x, dim, i1)
        x = a * aten.view(l0, view) + b * aten.view(l1, view)
    return _to(x, input.dtype)


upsample_bilinear2d_vec = defop(
    "upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
    "float[]? scale_factors) -> Tensor", tags=CORE, meta=_upsample_meta("upsample_bilinear2d"),
    decomposition=_upsample_bilinear2d_vec, explicit=True)


def _scales(sh, sw):
    return None if sh is None and sw is None else [sh or 0.0, sw or 0.0]


upsample_nearest2d = defop(
    "upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, "
    "float? scales_w=None) -> Tensor",
    decomposition=lambda self, output_size, scales_h=None, scales_w=None:
        _upsample_nearest2d_scaled(self, output_size, scales_h, scales_w))
upsample_bilinear2d = defop(
    "upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, "
    "float? scales_h=None, float? scales_w=None) -> Tensor",
    decomposition=lambda self, output_size, align_corners, scales_h=None, scales_w=None:
        _upsample_bilinear2d_scaled(self, output_size, align_corners, scales_h, scales_w))


def _upsample_nearest2d_scaled(self, output_size, scales_h, scales_w):
    out, _ = _upsample_sizes("upsample_nearest2d", self, output_size, None)
    x = self
    for i, sc in enumerate((scales_h, scales_w)):
        x = aten.index_select(x, 2 + i, _nearest_index(self.shape[2 + i], out[i], sc,
                                                       self.device))
    return x


def _upsample_bilinear2d_scaled(self, output_size, align_corners, scales_h, scales_w):
    out, _ = _upsample_sizes("upsample_bilinear2d", self, output_size, None)
    _check_float(self, "upsample_bilinear2d_channels_last")
    x = _up(self)
    for i, (view, sc) in enumerate((([-1, 1], scales_h), ([-1], scales_w))):
        dim = 2 + i
        i0, i1, l0, l1 = _linear_source(self.shape[dim], out[i], align_corners, sc, x.dtype,
                                        x.device)
        x = aten.index_select(x, dim, i0) * aten.view(l0, view) + \
            aten.index_select(x, dim, i1) * aten.view(l1, view)
    return _to(x, self.dtype)


def _grid_sampler_meta(input, grid, interpolation_mode, padding_mode, align_corners):
    if input.ndim != 4 or grid.ndim != 4:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of "
                           f"dimensions, but got input with sizes {list(input.shape)} and grid "
                           f"with sizes {list(grid.shape)}")
    if grid.shape[-1] != 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size 2 in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but "
                           f"input has {input.dtype.scalar_type} and grid has "
                           f"{grid.dtype.scalar_type}")
    if interpolation_mode not in (0, 1, 2) or padding_mode not in (0, 1, 2):
        raise RuntimeError(f"grid_sampler(): invalid interpolation_mode {interpolation_mode} or "
                           f"padding_mode {padding_mode}")
    _check_float(input, "grid_sampler_2d_cpu")
    return TensorMeta((input.shape[0], input.shape[1], grid.shape[1], grid.shape[2]),
                      input.dtype)


def _reflect(c, lo2, hi2):
    """Reflect coordinates into [lo2/2, hi2/2] (PyTorch's ``reflect_coordinates``)."""
    if lo2 == hi2:
        return aten.zeros_like(c)
    mn = lo2 / 2
    span = (hi2 - lo2) / 2
    c = aten.abs(c - mn)
    extra = aten.fmod.Scalar(c, span)
    flips = aten.floor(c / span)
    even = aten.eq.Scalar(aten.remainder.Scalar(flips, 2), 0)
    return aten.where.self(even, extra + mn, (span - extra) + mn)


def _grid_coord(c, size, padding_mode, align_corners):
    if align_corners:
        c = (c + 1) / 2 * (size - 1)
    else:
        c = ((c + 1) * size - 1) / 2
    if padding_mode == 1:
        c = aten.clamp(c, 0, size - 1)
    elif padding_mode == 2:
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        c = aten.clamp(c, 0, size - 1)
    return c


def _grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    meta = _grid_sampler_meta(input, grid, interpolation_mode, padding_mode, align_corners)
    n, c, h, w = input.shape
    ho, wo = grid.shape[1:3]
    x = _up(input)
    g = _up(grid)
    # bicubic unnormalizes only and pads each of its 16 taps (as PyTorch); the others pad
    # the source coordinate itself
    pm = 0 if interpolation_mode == 2 else padding_mode
    ix = _grid_coord(aten.select.int(g, 3, 0), w, pm, align_corners)
    iy = _grid_coord(aten.select.int(g, 3, 1), h, pm, align_corners)
    flat = aten.reshape(x, [n, c, h * w])

    def tap(yy, xx):
        """Input values at integer coordinates (N, Ho, Wo), zero outside."""
        inb = aten.logical_and(aten.logical_and(aten.ge.Scalar(xx, 0), aten.lt.Scalar(xx, w)),
                               aten.logical_and(aten.ge.Scalar(yy, 0), aten.lt.Scalar(yy, h)))
        k = aten.clamp(yy, 0, h - 1) * w + aten.clamp(xx, 0, w - 1)
        k = aten.expand(aten.reshape(k, [n, 1, ho * wo]), [n, c, ho * wo])
        v = aten.reshape(aten.gather(flat, 2, k), [n, c, ho, wo])
        return aten.where.self(aten.unsqueeze(inb, 1), v, 0)

    if interpolation_mode == 1:
        out = tap(_to(aten.round(iy), D.int64), _to(aten.round(ix), D.int64))
    elif interpolation_mode == 0:
        x0f, y0f = aten.floor(ix), aten.floor(iy)
        x0, y0 = _to(x0f, D.int64), _to(y0f, D.int64)
        tx, ty = ix - x0f, iy - y0f
        out = None
        for dy, wy in ((0, 1 - ty), (1, ty)):
            for dx, wx in ((0, 1 - tx), (1, tx)):
                term = tap(y0 + dy, x0 + dx) * aten.unsqueeze(wy * wx, 1)
                out = term if out is None else out + term
    else:
        out = _bicubic(tap, ix, iy, w, h, padding_mode, align_corners)
    assert tuple(out.shape) == meta.shape
    return _to(out, input.dtype)


def _cubic_weights(t, a=-0.75):
    def near(v):   # |v| <= 1
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v):    # 1 < |v| < 2
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _bicubic(tap, ix, iy, w, h, padding_mode, align_corners):
    # bicubic taps re-apply the padding rule to each of the 4x4 neighbours
    x0f, y0f = aten.floor(ix), aten.floor(iy)
    wx = _cubic_weights(ix - x0f)
    wy = _cubic_weights(iy - y0f)
    out = None
    for j in range(4):
        yy = y0f + (j - 1)
        for i in range(4):
            xx = x0f + (i - 1)
            if padding_mode:
                xc = _to(_grid_pad_index(xx, w, padding_mode, align_corners), D.int64)
                yc = _to(_grid_pad_index(yy, h, padding_mode, align_corners), D.int64)
            else:
                xc, yc = _to(xx, D.int64), _to(yy, D.int64)
            term = tap(yc, xc) * aten.unsqueeze(wy[j] * wx[i], 1)
            out = term if out is None else out + term
    return out


def _grid_pad_index(c, size, padding_mode, align_corners):
    if padding_mode == 1:
        return aten.clamp(c, 0, size - 1)
    c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
    return aten.clamp(c, 0, size - 1)


grid_sampler_2d = defop(
    "grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
    "bool align_corners) -> Tensor", tags=CORE, meta=_grid_sampler_meta,
    decomposition=_grid_sampler_2d, explicit=True)


def _col2im_check(self, output_size, kernel_size, dilation, padding, stride):
    out = _pool_ints("col2im", "output_size", output_size, 2)
    k = _pool_ints("col2im", "kernel_size", kernel_size, 2)
    d = _pool_ints("col2im", "dilation", dilation, 2)
    p = _pool_ints("col2im", "padding", padding, 2)
    s = _pool_ints("col2im", "stride", stride, 2)
    if any(v <= 0 for v in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{k[0]} kernel_width: {k[1]}")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} "
                           f"stride_width: {s[1]}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{d[0]} dilation_width: {d[1]}")
    if self.ndim not in (2, 3) or any(n == 0 for n in self.shape[self.ndim - 2:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(self.shape)}")
    kk = k[0] * k[1]
    cols = self.shape[-2]
    if cols % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={cols} and "
                           f"kernel_size=({k[0]}, {k[1]})")
    blocks = [(o + 2 * pp - dd * (kq - 1) - 1) // ss + 1 for o, pp, dd, kq, ss in
              zip(out, p, d, k, s)]
    if blocks[0] * blocks[1] != self.shape[-1] or min(blocks) < 1:
        raise RuntimeError(f"Given output_size=({out[0]}, {out[1]}), kernel_size=({k[0]}, "
                           f"{k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), "
                           f"stride=({s[0]}, {s[1]}), expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {blocks[0]} * "
                           f"{blocks[1]} = {blocks[0] * blocks[1]}, but got input.size(2)="
                           f"{self.shape[-1]}.")
    return out, k, d, p, s, blocks, cols // kk


def _col2im_meta(self, output_size, kernel_size, dilation, padding, stride):
    out, *_, c = _col2im_check(self, output_size, kernel_size, dilation, padding, stride)
    lead = (self.shape[0],) if self.ndim == 3 else ()
    return TensorMeta(lead + (c,) + out, self.dtype)


def _col2im(self, output_size, kernel_size, dilation, padding, stride):
    out, k, d, p, s, blocks, c = _col2im_check(self, output_size, kernel_size, dilation,
                                               padding, stride)
    x = self if self.ndim == 3 else aten.unsqueeze(self, 0)
    n = x.shape[0]
    L = blocks[0] * blocks[1]
    K = k[0] * k[1]
    hp, wp = out[0] + 2 * p[0], out[1] + 2 * p[1]
    dev = self.device
    # padded-plane position of column (kernel offset ki, kj; block bi, bj)
    ki = aten.view(_arange(k[0], D.int64, dev) * d[0], [k[0], 1, 1, 1])
    kj = aten.view(_arange(k[1], D.int64, dev) * d[1], [1, k[1], 1, 1])
    bi = aten.view(_arange(blocks[0], D.int64, dev) * s[0], [1, 1, blocks[0], 1])
    bj = aten.view(_arange(blocks[1], D.int64, dev) * s[1], [1, 1, 1, blocks[1]])
    pos = aten.reshape((ki + bi) * wp + (kj + bj), [K * L])
    vals = aten.reshape(x, [n, c, K * L])
    acc = _full([n, c, hp * wp], 0, self.dtype, dev)
    acc = aten.scatter_add(acc, 2, aten.expand(pos, [n, c, K * L]), vals)
    acc = aten.view(acc, [n, c, hp, wp])
    acc = aten.slice.Tensor(aten.slice.Tensor(acc, 2, p[0], p[0] + out[0]), 3, p[1],
                            p[1] + out[1])
    acc = aten.clone(acc)
    return acc if self.ndim == 3 else aten.squeeze.dim(acc, 0)


col2im = defop("col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, "
               "int[2] padding, int[2] stride) -> Tensor", tags=CORE, meta=_col2im_meta,
               decomposition=_col2im, explicit=True)


def _im2col(self, kernel_size, dilation, padding, stride):
    k = _pool_ints("im2col", "kernel_size", kernel_size, 2)
    d = _pool_ints("im2col", "dilation", dilation, 2)
    p = _pool_ints("im2col", "padding", padding, 2)
    s = _pool_ints("im2col", "stride", stride, 2)
    if self.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(self.shape)}")
    x = self if self.ndim == 4 else aten.unsqueeze(self, 0)
    n, c, h, w = x.shape
    blocks = [(sz + 2 * pp - dd * (kq - 1) - 1) // ss + 1 for sz, pp, dd, kq, ss in
              zip((h, w), p, d, k, s)]
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size=({k[0]}, "
                           f"{k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), "
                           f"calculated shape of the array of sliding blocks as ({blocks[0]}, "
                           f"{blocks[1]}), but its components must be at least one.")
    if any(p):
        x = aten.constant_pad_nd(x, [p[1], p[1], p[0], p[0]], 0)
    cols = [v for _, v in _window_offsets(x, 2, k, s, d, blocks, 2)]
    out = aten.reshape(aten.stack(cols, 2), [n, c * k[0] * k[1], blocks[0] * blocks[1]])
    return out if self.ndim == 4 else aten.squeeze.dim(out, 0)


im2col = defop("im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, "
               "int[2] stride) -> Tensor", decomposition=_im2col)


# ----------------------------------------------------------------------------- losses

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
    safe = aten.where.self(ignored, 0, t)
    if x.shape[0]:
        bad = aten.logical_and(aten.logical_not(ignored),
                               aten.logical_or(aten.lt.Scalar(safe, 0), aten.ge.Scalar(safe, c)))
        if _is_concrete(bad) and bool(aten.any(bad).item()):
            raise IndexError(f"Target {int(aten.max(aten.where.self(bad, t, -1)).item())} is "
                             f"out of bounds.")
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


def _is_concrete(t):
    """True for tensors with data (not meta or traced): data-dependent checks run only there."""
    return t.device.type != "meta" and getattr(t, "_data", None) is not None and \
        hasattr(t._data, "__array__")


nll_loss_forward = defop(
    "nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, "
    "SymInt ignore_index) -> (Tensor output, Tensor total_weight)",
    meta=_nll_loss_forward_meta, decomposition=_nll_loss_forward)


@derivative(nll_loss_forward)
def _nll_loss_derivative(grads, self, target, weight, reduction, ignore_index,
                         needs_input_grad):
    """-w[t_n] * g_n at (n, t_n), zero elsewhere and on ignored rows; the mean divides by
    the total weight (recomputed: naming ``result`` would save the loss too). The class
    weights get their chain rule too, through the loss and the total weight output
    (PyTorch differentiates neither)."""
    g_out, g_total = grads
    x = self if self.ndim == 2 else aten.unsqueeze(self, 0)
    n, c = x.shape
    t = _to(aten.reshape(target, [n]), D.int64)
    kept = aten.ne.Scalar(t, ignore_index)
    safe = aten.where.self(kept, t, 0)
    if weight is not None:
        w = aten.where.self(kept, aten.index_select(_up(weight), 0, safe), 0.0)
    else:
        w = _to(kept, _opmath(x.dtype))
    total = aten.sum.dim_IntList(w, None) if reduction == 1 else None
    gi = r = None
    if g_out is not None:
        g = _up(g_out)
        if reduction == 0:
            g = aten.reshape(g, [n])
        elif reduction == 1:
            g = g / total
        if needs_input_grad[0]:
            coef = aten.unsqueeze(-(g * w), 1)                           # (n, 1)
            hit = aten.logical_and(
                aten.eq.Tensor(aten.unsqueeze(safe, 1),
                               aten.unsqueeze(_arange(c, D.int64, x.device), 0)),
                aten.unsqueeze(kept, 1))                                 # (n, c)
            gi = aten.where.self(hit, coef, 0.0)
            gi = gi if self.ndim == 2 else aten.squeeze.dim(gi, 0)
        if weight is not None and needs_input_grad[2]:
            picked = aten.squeeze.dim(aten.gather(_up(x), 1, aten.unsqueeze(safe, 1)), 1)
            if reduction == 1:      # d(sum(-x w) / sum(w)) / dw = (-x - mean) / sum(w)
                r = (-picked - aten.sum.dim_IntList(-picked * w, None) / total) * g
            else:
                r = -picked * g
    gw = None
    if weight is not None and needs_input_grad[2]:
        # the total weight output is sum(w[t_n]) over kept rows (a constant 0 for an
        # unreduced batch)
        if g_total is not None and not (reduction == 0 and self.ndim == 2):
            gt = aten.expand(_up(g_total), [n])
            r = gt if r is None else r + gt
        if r is not None:
            r = aten.where.self(kept, r, 0.0)
            gw = aten.reshape(aten.index_put(aten.zeros_like(_up(weight)).reshape([c]),
                                             [safe], r, True), list(weight.shape))
    return gi, None, gw


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
        raise RuntimeError(f"size mismatch (got input: {list(self.shape)}, target: "
                           f"{list(target.shape)})")
    x = aten.permute(self, [0] + list(range(2, self.ndim)) + [1])
    x = aten.reshape(x, [n * _prod(rest), c])
    t = aten.reshape(target, [n * _prod(rest)])
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


# ----------------------------------------------------------------------------- attention

def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
          enable_gqa=False):
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must be at "
                           "least 2-dimensional")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if query.dtype is not key.dtype or query.dtype is not value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {query.dtype.scalar_type} key.dtype: "
                           f"{key.dtype.scalar_type} and value.dtype: "
                           f"{value.dtype.scalar_type} instead.")
    e = query.shape[-1]
    if key.shape[-1] != e:
        raise RuntimeError(f"scaled_dot_product_attention: expected key's last dimension "
                           f"({key.shape[-1]}) to match query's ({e})")
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = aten.repeat_interleave.self_int(key, rep, key.ndim - 3) \
            if hasattr(aten, "repeat_interleave") else _repeat_heads(key, rep)
        value = aten.repeat_interleave.self_int(value, rep, value.ndim - 3) \
            if hasattr(aten, "repeat_interleave") else _repeat_heads(value, rep)
    sc = 1.0 / math.sqrt(e) if scale is None else scale
    q = _up(query)
    k, v = _up(key), _up(value)
    scores = aten.matmul(q, aten.transpose.int(k, -2, -1)) * sc
    L, S = q.shape[-2], k.shape[-2]
    if is_causal:
        i = aten.unsqueeze(_arange(L, D.int64, q.device), 1)
        j = aten.unsqueeze(_arange(S, D.int64, q.device), 0)
        attn_mask = aten.ge.Tensor(i, j)
    if attn_mask is not None:
        if attn_mask.dtype is D.bool:
            scores = aten.where.self(attn_mask, scores, -math.inf)
        else:
            scores = scores + attn_mask
    # rows with every position masked give zeros, not NaN (PyTorch's _safe_softmax)
    probs = aten._softmax(scores, -1, False)
    dead = aten.eq.Scalar(aten.amax(scores, [-1], True), -math.inf) if S else None
    if dead is not None:
        probs = aten.where.self(dead, 0.0, probs)
    if dropout_p > 0:
        probs = aten.dropout(probs, dropout_p, True)
    return _to(aten.matmul(probs, v), query.dtype)


def _repeat_heads(x, rep):
    shape = list(x.shape)
    h = shape[-3]
    y = aten.unsqueeze(x, x.ndim - 2)
    y = aten.expand(y, shape[:-3] + [h, rep] + shape[-2:])
    return aten.reshape(y, shape[:-3] + [h * rep] + shape[-2:])


scaled_dot_product_attention = defop(
    "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None,"
    " float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) "
    "-> Tensor", tags=RANDOM, decomposition=_sdpa)


# ----------------------------------------------------------------------------- fft

def _fft_norm_scale(shape, dims, normalization):
    n = _prod(shape[d] for d in dims)
    if normalization == 0:
        return None
    if normalization == 1:
        return 1.0 / math.sqrt(n)
    if normalization == 2:
        return 1.0 / n
    raise RuntimeError(f"Invalid normalization mode: {normalization}")


def _fft_dims(name, self, dim):
    dims = [wrap_dim(d, self.ndim) for d in dim]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{name}: dims must be unique")
    return dims


def _fft_r2c_meta(self, dim, normalization, onesided):
    if self.dtype not in (D.float32, D.float64, D.float16):
        raise RuntimeError(f"_fft_r2c: expected a real floating input, got "
                           f"{self.dtype.scalar_type}")
    dims = _fft_dims("_fft_r2c", self, dim)
    shape = list(self.shape)
    if onesided and dims:
        shape[dims[-1]] = shape[dims[-1]] // 2 + 1
    return TensorMeta(tuple(shape), self.dtype.to_complex())


def _fft_r2c(self, dim, normalization, onesided):
    _fft_r2c_meta(self, dim, normalization, onesided)
    dims = _fft_dims("_fft_r2c", self, dim)
    out = prims.fft_r2c(self, dims, onesided)
    sc = _fft_norm_scale(self.shape, dims, normalization)
    return out if sc is None else out * sc


def _fft_c2r_meta(self, dim, normalization, last_dim_size):
    if not self.dtype.is_complex:
        raise RuntimeError(f"_fft_c2r: expected a complex input, got {self.dtype.scalar_type}")
    dims = _fft_dims("_fft_c2r", self, dim)
    if not dims:
        raise RuntimeError("_fft_c2r: expected at least one dim")
    if last_dim_size < 1:
        raise RuntimeError(f"Invalid number of data points ({last_dim_size}) specified")
    shape = list(self.shape)
    shape[dims[-1]] = last_dim_size
    return TensorMeta(tuple(shape), self.dtype.to_real())


def _fft_c2r(self, dim, normalization, last_dim_size):
    meta = _fft_c2r_meta(self, dim, normalization, last_dim_size)
    dims = _fft_dims("_fft_c2r", self, dim)
    x = self
    want = last_dim_size // 2 + 1
    have = x.shape[dims[-1]]
    if have > want:
        x = aten.slice.Tensor(x, dims[-1], 0, want)
    elif have < want:
        pad = [0, 0] * (x.ndim - 1 - dims[-1]) + [0, want - have]
        x = aten.constant_pad_nd(x, pad, 0)
    out = prims.fft_c2r(x, dims, last_dim_size)
    sc = _fft_norm_scale(meta.shape, dims, normalization)
    return out if sc is None else out * sc


_fft_r2c_op = defop("_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor",
                    tags=CORE, meta=_fft_r2c_meta, decomposition=_fft_r2c, explicit=True)
_fft_c2r_op = defop("_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) "
                    "-> Tensor", tags=CORE, meta=_fft_c2r_meta, decomposition=_fft_c2r,
                    explicit=True)
