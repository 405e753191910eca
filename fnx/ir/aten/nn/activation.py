"""Softmax, log_softmax and the activation functions (gelu, elu, hardtanh, leaky_relu,
silu, softplus, ..., glu, prelu, threshold)."""
from __future__ import annotations

import math

from ....core import dtype as D
from ....ops import aten
from ...registry import TensorMeta, defop, derivative
from ...dims import wrap_dim
from ._common import _HALF, ATEN_PW, CORE, CORE_PW, _check_float, _same, _to, _up


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
        return aten.clamp(self, int(min_val), int(max_val))
    # clamp's values, as selects whose derivative (a compiled function differentiated by
    # jax.vjp, fnx.lower.jax_autograd) is this op's: zero at and beyond the bounds,
    # passed through NaN; min, then max, so min_val > max_val gives max_val as clamp does
    lo = aten.full_like(self, min_val)
    hi = aten.full_like(self, max_val)
    low = aten.where.self(aten.le.Tensor(self, lo), lo, self)
    return aten.where.self(aten.ge.Tensor(low, hi), hi, low)


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
# (hardtanh, not clamp: zero gradient at -3 and 3 for a compiled module's jax.vjp too)
hardsigmoid = _float_act("hardsigmoid", "hardsigmoid_cpu",
                         lambda x: aten.hardtanh(x + 3.0, 0.0, 6.0) / 6.0)
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
