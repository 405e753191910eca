"""OpInfo entries for softmax and the activation functions (fnx/ir/aten/nn/activation.py)."""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sp

from ....core import dtype as D
from ....ops import aten
from ...database import ErrorInput, OpInfo, SampleInput, register
from ._common import F, FI, INF, NAN, TOLS, _arr, _floatref, _t


# --------------------------------------------------------------------------- softmax

def np_softmax(x, dim, log=False):
    if x.ndim == 0:
        return np_softmax(x.reshape(1), 0, log).reshape(())
    if x.shape[dim] == 0:
        return x.copy()
    s = x - x.max(axis=dim, keepdims=True)        # a row of -inf gives NaN, as PyTorch
    if log:
        return s - np.log(np.exp(s).sum(axis=dim, keepdims=True))
    e = np.exp(s)
    return e / e.sum(axis=dim, keepdims=True)


def _softmax_ref(log):
    def out(self, dim, half_to_float):
        return np.dtype(np.float32) if half_to_float else self.dtype

    def ref(self, dim, half_to_float):
        return np_softmax(self, dim, log)
    return _floatref(ref, out)


def _softmax_int_ref(log):
    def out(self, dim, dtype=None):
        return np.dtype(dtype.numpy) if dtype is not None else self.dtype

    def ref(self, dim, dtype=None):
        return np_softmax(self.astype(np.float64), dim, log)
    return _floatref(ref, out)


def _softmax_samples(info, device, dtype):
    yield SampleInput(_t((3, 4, 5), dtype, device), 1, False)
    yield SampleInput(_t((3, 4, 5), dtype, device, noncontiguous=True), -1, False)
    yield SampleInput(_t((4,), dtype, device), 0, False)
    yield SampleInput(_t((), dtype, device), 0, False)
    yield SampleInput(_t((2, 0), dtype, device), 1, False)
    yield SampleInput(_t((0, 3), dtype, device), 1, False)
    yield SampleInput(_arr([[-INF, 0.0, 1.0], [-INF, -INF, -INF], [1e4, 0.0, -1e4]], dtype,
                           device), 1, False)
    if dtype is D.float32:       # a half input computed and returned in float32
        yield SampleInput(_t((2, 5), D.float16, device), -1, True)


def _softmax_errors(info, device):
    yield ErrorInput(SampleInput(_t((2, 3), D.int64, device), 1, False), RuntimeError,
                     "not implemented for 'Long'")
    yield ErrorInput(SampleInput(_t((2, 3), D.float32, device), 1, True), RuntimeError,
                     "conversion is supported for Half type only")
    yield ErrorInput(SampleInput(_t((2, 3), D.float32, device), 2, False), IndexError,
                     "Dimension out of range")


def _softmax_int_samples(info, device, dtype):
    other = D.float64 if dtype is D.float32 else D.float32
    yield SampleInput(_t((3, 4), dtype, device), 1)
    yield SampleInput(_t((3, 4), dtype, device), -2, dtype=other)
    yield SampleInput(_t((), dtype, device), 0)
    yield SampleInput(_t((2, 0), dtype, device), -1)
    yield SampleInput(_t((2, 3), D.int64, device), 1, dtype=dtype)


def _softmax_int_errors(info, device):
    yield ErrorInput(SampleInput(_t((2, 3), D.int64, device), 1), RuntimeError,
                     "not implemented for 'Long'")
    yield ErrorInput(SampleInput(_t((2, 3), D.float32, device), -3), IndexError,
                     "Dimension out of range")


def _float_infos(*rows):
    """Float-only OpInfos at ``TOLS``, one per row ``(op, reference, samples, errors)``."""
    return [OpInfo(op, ref, F, samples, tols=TOLS, error_inputs=errors)
            for op, ref, samples, errors in rows]


register(*_float_infos(
    (aten._softmax.default, _softmax_ref(False), _softmax_samples, _softmax_errors),
    (aten._log_softmax.default, _softmax_ref(True), _softmax_samples, _softmax_errors),
    (aten.softmax.int, _softmax_int_ref(False), _softmax_int_samples, _softmax_int_errors),
    (aten.log_softmax.int, _softmax_int_ref(True), _softmax_int_samples, _softmax_int_errors),
))


# --------------------------------------------------------------------------- activations

def _gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + sp.erf(x / math.sqrt(2)))


def _elu(x, alpha=1, scale=1, input_scale=1):
    return np.where(x > 0, x * scale, np.expm1(x * input_scale) * alpha * scale)


def _hardtanh(x, min_val=-1, max_val=1):
    return np.clip(x, min_val, max_val)


def _leaky_relu(x, negative_slope=0.01):
    return np.where(x > 0, x, x * negative_slope)


def _softplus(x, beta=1, threshold=20):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)


def _selu(x):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return scale * np.where(x > 0, x, alpha * np.expm1(x))


def _celu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(x / alpha))


def _hardshrink(x, lambd=0.5):
    # PyTorch: (x >= -lambd && x <= lambd) ? 0 : x, so NaN stays NaN
    return np.where((x >= -lambd) & (x <= lambd), 0.0, x)


def _softshrink(x, lambd=0.5):
    # PyTorch: x > l ? x - l : (x < -l ? x + l : x * 0), so NaN stays NaN
    return np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, x * 0))


def _threshold(x, threshold, value):
    return np.where(x <= threshold, np.asarray(value).astype(x.dtype), x)


def _glu(x, dim=-1):
    a, b = np.split(x, 2, axis=dim)
    return a / (1 + np.exp(-b))


def _prelu(x, w):
    if w.size > 1:
        w = w.reshape((w.size,) + (1,) * (x.ndim - 2))
    return np.where(x > 0, x, x * w)


ACTS = [
    # op, reference, dtypes, argument variants ((args, kwargs), ...)
    (aten.gelu.default, _gelu, F, [((), {}), ((), {"approximate": "tanh"})]),
    (aten.elu.default, _elu, F, [((), {}), ((0.5, 2.0, 1.5), {})]),
    (aten.hardtanh.default, _hardtanh, FI, [((), {}), ((-2, 3), {}), ((-0.5, 0.7), {})]),
    (aten.leaky_relu.default, _leaky_relu, F, [((), {}), ((0.2,), {})]),
    (aten.relu6.default, lambda x: np.clip(x, 0, 6), FI, [((), {})]),
    (aten.threshold.default, _threshold, FI, [((1, -1), {}), ((0.25, -1.5), {})]),
    (aten.silu.default, lambda x: x / (1 + np.exp(-x)), F, [((), {})]),
    (aten.mish.default, lambda x: x * np.tanh(np.log1p(np.exp(x))), F, [((), {})]),
    (aten.softplus.default, _softplus, F, [((), {}), ((2.0, 3.0), {})]),
    (aten.hardsigmoid.default, lambda x: np.clip(x + 3, 0, 6) / 6, F, [((), {})]),
    (aten.hardswish.default, lambda x: x * np.clip(x + 3, 0, 6) / 6, F, [((), {})]),
    (aten.log_sigmoid.default, lambda x: np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x))), F,
     [((), {})]),
    (aten.selu.default, _selu, F, [((), {})]),
    (aten.celu.default, _celu, F, [((), {}), ((2.0,), {})]),
    (aten.tanhshrink.default, lambda x: x - np.tanh(x), F, [((), {})]),
    (aten.hardshrink.default, _hardshrink, F, [((), {}), ((1.0,), {})]),
    (aten.softshrink.default, _softshrink, F, [((), {}), ((1.0,), {})]),
]
EXTREMES = [NAN, INF, -INF, 0.0, -0.0, 0.25, -0.25, 0.5, -0.5, 1.0, -1.0, 3.0, -3.0, 30.0,
            -30.0, 100.0, -100.0]
ACT_KNOWN: dict = {}


def _all_ints(variant):
    args, kwargs = variant
    return all(isinstance(a, int) for a in list(args) + list(kwargs.values())
               if not isinstance(a, str))


def _act_samples(variants):
    def samples(info, device, dtype):
        isf = dtype.is_floating_point
        vs = [v for v in variants if isf or _all_ints(v)]
        a0, k0 = vs[0]
        yield SampleInput(_t((3, 4), dtype, device), *a0, **k0)
        yield SampleInput(_t((), dtype, device), *a0, **k0)
        yield SampleInput(_t((0, 2), dtype, device), *a0, **k0)
        yield SampleInput(_t((2, 6), dtype, device, noncontiguous=True), *a0, **k0)
        for a, k in vs[1:]:
            yield SampleInput(_t((2, 5), dtype, device), *a, **k)
        if isf:
            for a, k in (vs[0], vs[-1]) if len(vs) > 1 else (vs[0],):
                yield SampleInput(_arr(EXTREMES, dtype, device), *a, **k)
    return samples


def _act_errors(op, dtypes):
    def errors(info, device):
        if D.int64 not in dtypes:
            kernel = "not implemented for 'Long'"
            yield ErrorInput(SampleInput(_t((3,), D.int64, device)), RuntimeError, kernel)
        elif op in (aten.hardtanh.default, aten.relu6.default):
            yield ErrorInput(SampleInput(_t((3,), D.bool, device)), RuntimeError,
                             "Bool inputs not supported for hardtanh")
        if op is aten.gelu.default:
            yield ErrorInput(SampleInput(_t((3,), D.float32, device), approximate="fast"),
                             RuntimeError, "approximate argument must be either none or tanh")
    return errors


for _op, _ref, _dtypes, _variants in ACTS:
    _ref = _floatref(_ref)
    _errs = _act_errors(_op, _dtypes)
    register(OpInfo(_op, _ref, _dtypes, _act_samples(_variants), tols=TOLS,
                    error_inputs=_errs if _op is not aten.threshold.default else None,
                    known_failures=ACT_KNOWN.get(f"{_op.name}.{_op.overload_name}", ())))


def _glu_samples(info, device, dtype):
    yield SampleInput(_t((2, 6, 3), dtype, device), 1)
    yield SampleInput(_t((4, 2), dtype, device))
    yield SampleInput(_t((3, 4, 2), dtype, device, noncontiguous=True), -2)
    yield SampleInput(_t((0, 4), dtype, device), -1)


def _glu_errors(info, device):
    yield ErrorInput(SampleInput(_t((2, 3), D.float32, device)), RuntimeError,
                     "Halving dimension must be even, but dimension 1 is size 3")
    yield ErrorInput(SampleInput(_t((), D.float32, device)), RuntimeError,
                     "glu does not support scalars")
    yield ErrorInput(SampleInput(_t((2, 4), D.int64, device)), RuntimeError,
                     "not implemented for 'Long'")


def _prelu_samples(info, device, dtype):
    yield SampleInput(_t((2, 3, 4), dtype, device), _t((3,), dtype, device, 0, 1))
    yield SampleInput(_t((2, 3), dtype, device), _t((1,), dtype, device, 0, 1))
    yield SampleInput(_t((4,), dtype, device), _t((1,), dtype, device, 0, 1))
    yield SampleInput(_t((), dtype, device), _t((1,), dtype, device, 0, 1))
    yield SampleInput(_t((0, 2, 3), dtype, device), _t((2,), dtype, device, 0, 1))


def _prelu_errors(info, device):
    yield ErrorInput(SampleInput(_t((2, 3, 4), D.float32, device), _t((2,), D.float32, device)),
                     RuntimeError, "Mismatch of parameter numbers and input channel size")


register(*_float_infos(
    (aten.glu.default, _floatref(_glu), _glu_samples, _glu_errors),
    (aten.prelu.default, _floatref(_prelu), _prelu_samples, _prelu_errors),
    (aten._prelu_kernel.default, _floatref(_prelu), _prelu_samples, _prelu_errors),
))
