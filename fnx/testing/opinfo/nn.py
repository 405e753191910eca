"""OpInfo entries for the neural-network ops (fnx/ir/aten/nn.py): softmax, activations,
dropout, embedding, normalization, convolution, pooling, padding, sampling, losses,
distances, attention and the real FFTs, core and aten level.

Every reference is written here in NumPy/SciPy, independently of fnx: direct loops over
output positions and kernel offsets (convolution, pooling, col2im, grid sampling), the
adjoint loops for the ``*_backward`` ops, ``np.pad`` for padding and ``np.fft`` for the
FFTs.  Floating references compute in float64 and round once to PyTorch's result dtype.
They restate PyTorch's CPU semantics where it is particular: NaN wins a max pool (the last
NaN's index), ties keep the first index, integer ``avg_pool2d`` truncates, ``nll_loss``
ignores ``ignore_index`` and its mean over nothing is NaN, bicubic grid sampling applies
the padding mode to each tap and not to the source coordinate, ``hardshrink`` and
``softshrink`` keep NaN.

Samples are small: a few per op and dtype, in float32 and float64, plus int64 for the
core pools, the pads, nearest upsampling and the clamping activations (the aten-level
pooling wrappers are sampled in floats only: their integer path is the core op's).  They
cover what each op's arguments change: strides, padding, dilation, groups, ``ceil_mode``,
``count_include_pad``, unbatched and 0-size batches, reduction modes, ``ignore_index``
and ``label_smoothing``, NaN and infinities.  The random ops (``native_dropout``,
``dropout``, ``feature_dropout``) are ``nondeterministic``: only shapes and dtypes are
compared.  ``scaled_dot_product_attention`` is sampled without dropout, so its values
are compared.

The ``*_backward`` ops are sampled with every ``output_mask`` entry True: the checks
compare tuples of tensors and cannot compare the ``None`` a False entry gives.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sp

import fnx

from ...core import dtype as D
from ...ops import aten
from ..database import ErrorInput, Known, OpInfo, SampleInput, make_tensor, register
from ..reference_dtypes import category, promote

F = (D.float32, D.float64)
FI = (D.float32, D.float64, D.int64)
C = (D.complex64, D.complex128)
# float32 kernels round every step, the references once (float64 math)
TOLS = {D.float32: (1e-5, 1e-5), D.float64: (1e-7, 1e-7)}
# sums of many products (convolution, attention, pooling backward)
SUMS = {D.float32: (1e-4, 1e-4), D.float64: (1e-7, 1e-7)}
NAN, INF = float("nan"), float("inf")


# --------------------------------------------------------------------------- helpers

def _t(shape, dtype, device, low=None, high=None, **kw):
    return make_tensor(shape, dtype, device, low=low, high=high, **kw)


def _arr(values, dtype, device="cpu"):
    """A tensor holding exactly ``values`` (NumPy data, cast to ``dtype``)."""
    t = fnx.from_numpy(np.array(np.asarray(values).astype(dtype.numpy), order="C"))
    return t if str(device) == "cpu" else t.to(device)


def _np(t):
    return np.asarray(t.numpy(force=True))


def _idx(values, device, dtype=D.int64):
    return _arr(np.asarray(values, np.int64), dtype, device)


def _wide(x):
    if isinstance(x, np.ndarray):
        c = category(x.dtype)
        return x.astype(np.float64) if c == 2 else x.astype(np.complex128) if c == 3 else x
    if isinstance(x, (list, tuple)) and any(isinstance(y, np.ndarray) for y in x):
        return type(x)(_wide(y) for y in x)
    return x


def _first_float(*args, **kwargs):
    for a in args:
        if isinstance(a, np.ndarray) and category(a.dtype) == 2:
            return a.dtype
    return None


def _cast(r, dt):
    if isinstance(r, (tuple, list)):
        return tuple(_cast(x, dt) for x in r)
    r = np.asarray(r)
    return r.astype(dt) if dt is not None and r.dtype.kind == "f" else r


def _floatref(fn, out=_first_float):
    """A reference computed in float64 (complex128) whose floating results are rounded to
    ``out(*args)`` (default: the dtype of the first floating array argument)."""
    def ref(*args, **kwargs):
        dt = out(*args, **kwargs)
        with np.errstate(all="ignore"):
            r = fn(*(_wide(a) for a in args), **{k: _wide(v) for k, v in kwargs.items()})
        return _cast(r, dt)
    ref.__name__ = fn.__name__
    return ref


def _reduce(loss, reduction):
    if reduction == 0:
        return loss
    return loss.sum() if reduction == 2 else (loss.mean() if loss.size else np.float64("nan"))


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


# --------------------------------------------------------------------------- dropout

def _native_dropout_ref(input, p, train):
    return np.zeros(input.shape, input.dtype), np.zeros(input.shape, np.bool_)


def _dropout_ref(input, p, train):
    return np.zeros(input.shape, input.dtype)


def _native_dropout_samples(info, device, dtype):
    for p, train in ((0.3, True), (0.3, None), (0.3, False), (0.0, True), (1.0, True)):
        yield SampleInput(_t((4, 5), dtype, device), p, train)
    yield SampleInput(_t((0, 3), dtype, device), 0.5, True)


def _dropout_samples(info, device, dtype):
    for p, train in ((0.5, True), (0.5, False), (0.0, True), (1.0, True)):
        yield SampleInput(_t((4, 3, 2), dtype, device), p, train)
    yield SampleInput(_t((0, 3), dtype, device), 0.5, True)


def _dropout_errors(info, device):
    for p in (1.5, -0.1):
        yield ErrorInput(SampleInput(_t((2, 3), D.float32, device), p, True), RuntimeError,
                         f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_dropout_errors(info, device):
    yield from _dropout_errors(info, device)
    yield ErrorInput(SampleInput(_t((3,), D.float32, device), 0.5, True), RuntimeError,
                     "Feature dropout requires at least 2 dimensions in the input")


register(
    OpInfo(aten.native_dropout.default, _native_dropout_ref, F, _native_dropout_samples,
           nondeterministic=True),
    OpInfo(aten.dropout.default, _dropout_ref, F, _dropout_samples, nondeterministic=True,
           error_inputs=_dropout_errors),
    OpInfo(aten.feature_dropout.default, _dropout_ref, F, _dropout_samples,
           nondeterministic=True, error_inputs=_feature_dropout_errors),
)


# --------------------------------------------------------------------------- embedding

def _embedding_ref(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return weight[indices]


def _embedding_samples(info, device, dtype):
    w = _t((5, 3), dtype, device)
    yield SampleInput(w, _idx([[0, 4], [2, 2], [1, 0]], device))
    yield SampleInput(w, _idx([3, 1, 3], device, D.int32), 1)
    yield SampleInput(w, _idx(3, device))
    yield SampleInput(w, _idx(np.zeros(0, np.int64), device))
    yield SampleInput(_t((6, 4), dtype, device, noncontiguous=True), _idx([[5], [0]], device))


def _embedding_errors(info, device):
    w = _t((5, 3), D.float32, device)
    yield ErrorInput(SampleInput(w, _t((2,), D.float32, device)), RuntimeError,
                     "Expected tensor for argument #1 'indices' to have one of the following "
                     "scalar types: Long, Int")
    yield ErrorInput(SampleInput(_t((3,), D.float32, device), _idx([0], device)), RuntimeError,
                     "Expected 2-dimensional tensor, but got 1-dimensional tensor for "
                     "argument #1 'weight'")
    yield ErrorInput(SampleInput(w, _idx([5], device)), IndexError, "index out of range",
                     meta=False)


def _embedding_backward_ref(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    d = grad.shape[-1]
    flat = indices.reshape(-1)
    rows = grad.reshape(-1, d)
    counts = np.bincount(flat, minlength=num_weights)
    out = np.zeros((num_weights, d))
    for i, row in zip(flat, rows):
        if i == padding_idx:
            continue
        out[i] += row / (counts[i] if scale_grad_by_freq else 1)
    return out


def _embedding_backward_samples(info, device, dtype):
    idx = _idx([[0, 2, 2], [4, 2, 0]], device)
    for padding_idx, scale in ((-1, False), (2, True), (0, False)):
        yield SampleInput(_t((2, 3, 4), dtype, device), idx, 6, padding_idx, scale)
    yield SampleInput(_t((3, 2), dtype, device), _idx([1, 1, 0], device, D.int32), 2, -1,
                      True)
    yield SampleInput(_t((0, 4), dtype, device), _idx(np.zeros(0, np.int64), device), 3, -1,
                      False)


def _embedding_backward_errors(info, device):
    yield ErrorInput(SampleInput(_t((2, 4), D.float32, device), _t((2,), D.float32, device), 3,
                                 -1, False), RuntimeError,
                     "Expected tensor for argument #2 'indices' to have one of the following "
                     "scalar types: Long, Int")


def _embedding_bag_ref(weight, indices, offsets, scale_grad_by_freq=False, mode=0,
                       sparse=False, per_sample_weights=None, include_last_offset=False,
                       padding_idx=-1):
    """(output, offset2bag, bag_size, max_indices).  PyTorch leaves max_indices unwritten
    for sum and mean (fnx: zeros) and may skip offset2bag in its sum fast path (fnx always
    gives the bag of each index)."""
    n, d = indices.shape[0], weight.shape[1]
    bags = len(offsets) - (1 if include_last_offset else 0)
    ends = list(offsets[1:bags]) + ([offsets[bags]] if include_last_offset else [n])
    out = np.zeros((bags, d))
    o2b = np.zeros(n, np.int64)
    size = np.zeros(bags, np.int64)
    max_idx = np.full((bags, d), -1, np.int64) if mode == 2 else np.zeros(bags, np.int64)
    for b in range(bags):
        lo, hi = int(offsets[b]), int(ends[b])
        o2b[lo:hi] = b
        keep = [i for i in range(lo, hi) if indices[i] != padding_idx or padding_idx < 0]
        size[b] = len(keep)
        if not keep:
            continue
        rows = weight[indices[keep]]
        if mode == 0:
            if per_sample_weights is not None:
                rows = rows * per_sample_weights[keep][:, None]
            out[b] = rows.sum(0)
        elif mode == 1:
            out[b] = rows.mean(0)
        else:
            j = rows.argmax(0)
            out[b] = rows[j, np.arange(d)]
            max_idx[b] = indices[keep][j]
    it = indices.dtype
    return (out.astype(weight.dtype), o2b.astype(it), size.astype(it), max_idx.astype(it))


def _embedding_bag_samples(info, device, dtype):
    w = _t((6, 3), dtype, device)
    idx = _idx([1, 2, 4, 5, 4, 3, 2], device)
    off = _idx([0, 2, 2, 5], device)             # bag 1 is empty
    for mode in (1, 2):
        yield SampleInput(w, idx, off, False, mode)
    yield SampleInput(w, idx, off, False, 0, False, _t((7,), dtype, device))      # weighted sum
    yield SampleInput(w, idx, _idx([0, 2, 7], device), False, 0, False, None, True)
    yield SampleInput(w, idx, off, False, 1, False, None, False, 4)      # padding_idx
    yield SampleInput(w, _idx([0, 5, 1], device, D.int32), _idx([0, 1], device, D.int32),
                      False, 2)


def _embedding_bag_errors(info, device):
    w = _t((6, 3), D.float32, device)
    idx, off = _idx([1, 2, 3], device), _idx([0, 2], device)
    yield ErrorInput(SampleInput(w, idx, off, False, 3), RuntimeError,
                     "mode has to be one of sum, mean or max")
    yield ErrorInput(SampleInput(w, _idx([[1, 2]], device), off), ValueError,
                     "input has to be 1D, and offsets has to be 1D")
    yield ErrorInput(SampleInput(w, _t((3,), D.float32, device), off), RuntimeError,
                     "Expected tensor for argument #2 'indices'")
    yield ErrorInput(SampleInput(w, idx, off, False, 1, False, _t((3,), D.float32, device)),
                     NotImplementedError, "per_sample_weights is only supported for "
                                          "mode='sum'")


def _one_hot_ref(x, num_classes=-1):
    n = int(x.max()) + 1 if num_classes == -1 else num_classes
    return (x[..., None] == np.arange(n)).astype(np.int64)


def _one_hot_samples(info, device, dtype):
    yield SampleInput(_idx([0, 2, 1], device), 4)
    yield SampleInput(_idx([[1], [0], [3]], device))
    yield SampleInput(_idx(2, device), 3)
    yield SampleInput(_idx(np.zeros((0, 2), np.int64), device), 3)


def _one_hot_errors(info, device):
    yield ErrorInput(SampleInput(_t((3,), D.float32, device), 3), RuntimeError,
                     "one_hot is only applicable to index tensor")
    yield ErrorInput(SampleInput(_idx(np.zeros(0, np.int64), device)), RuntimeError,
                     "Can not infer total number of classes from empty tensor")
    yield ErrorInput(SampleInput(_idx([3], device), 3), RuntimeError,
                     "Class values must be smaller than num_classes", meta=False)
    yield ErrorInput(SampleInput(_idx([-1, 0], device), 3), RuntimeError,
                     "Class values must be non-negative", meta=False)


def _grad_kink(why):
    """A sample sits where the op is not differentiable: finite differences cannot agree."""
    return Known("grad", reason=why)


_ONE_HOT = ("one_hot reads the data (min/max with .item()) to check the classes and, for "
            "num_classes=-1, to size the result: the shape depends on values")
register(
    OpInfo(aten.embedding.default, _floatref(_embedding_ref), F, _embedding_samples,
           error_inputs=_embedding_errors,
           known_failures=[_grad_kink("the padding_idx row gets no gradient by definition "
                                      "(PyTorch's rule), which is not d out / d weight")]),
    OpInfo(aten.embedding_dense_backward.default, _floatref(_embedding_backward_ref), F,
           _embedding_backward_samples, tols=TOLS, error_inputs=_embedding_backward_errors),
    OpInfo(aten._embedding_bag.default, _floatref(_embedding_bag_ref), F,
           _embedding_bag_samples, tols=TOLS, error_inputs=_embedding_bag_errors),
    OpInfo(aten.one_hot.default, _one_hot_ref, (D.int64,), _one_hot_samples,
           error_inputs=_one_hot_errors,
           known_failures=[Known("meta", reason=_ONE_HOT)]),
)


# --------------------------------------------------------------------------- normalization

def np_layer_norm(x, ns, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(ns), x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    out = (x - mean) * rstd
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out, mean, rstd


def _native_layer_norm_ref(x, ns, w, b, eps):
    return np_layer_norm(x, ns, w, b, eps)


def _layer_norm_ref(x, ns, w=None, b=None, eps=1e-5, cudnn_enable=True):
    return np_layer_norm(x, list(ns) if not isinstance(ns, int) else [ns], w, b, eps)[0]


def _layer_norm_samples(native):
    def samples(info, device, dtype):
        def t(*shape, **kw):
            return _t(shape, dtype, device, **kw)
        cases = [((2, 3, 4), [4], True, True, 1e-5), ((2, 3, 4), [3, 4], False, False, 1e-5),
                 ((0, 3), [3], True, False, 1e-5), ((3,), [3], False, True, 1e-3),
                 ((2, 5), [5], True, True, 1e-5)]
        for i, (shape, ns, hw, hb, eps) in enumerate(cases):
            x = t(*shape, noncontiguous=(i == 4))
            w = t(*ns) if hw else None
            b = t(*ns) if hb else None
            if native:
                yield SampleInput(x, ns, w, b, eps)
            elif eps == 1e-5 and i % 2 == 0:
                yield SampleInput(x, ns, w, b)
            else:
                yield SampleInput(x, ns, w, b, eps)
    return samples


def _layer_norm_errors(native):
    def errors(info, device):
        def s(x, ns, w=None, b=None):
            return SampleInput(x, ns, w, b, 1e-5) if native else SampleInput(x, ns, w, b)
        x = _t((2, 3), D.float32, device)
        yield ErrorInput(s(x, [4]), RuntimeError, r"Given normalized_shape=\[4\], expected "
                         r"input with shape \[\*, 4\], but got input of size\[2, 3\]")
        yield ErrorInput(s(x, [3], _t((2,), D.float32, device)), RuntimeError,
                         "Expected weight to be of same shape as normalized_shape")
        yield ErrorInput(s(x, []), RuntimeError, "at least 1-dimensional")
        yield ErrorInput(s(_t((2, 3), D.int64, device), [3]), RuntimeError,
                         "not implemented for 'Long'")
    return errors


def _ln_backward_ref(g, x, ns, mean, rstd, w, b, output_mask):
    """The vector-Jacobian product of layer norm with the given statistics:
    dxhat_i/dx_j = rstd * (delta_ij - 1/N - xhat_i * xhat_j / N) over the normalized dims."""
    k = len(ns)
    axes = tuple(range(x.ndim - k, x.ndim))
    outer = tuple(range(x.ndim - k))
    xhat = (x - mean) * rstd
    gx = g * w if w is not None else g
    n = int(np.prod(ns))
    gi = rstd * (gx - gx.sum(axes, keepdims=True) / n -
                 xhat * (gx * xhat).sum(axes, keepdims=True) / n)
    gw = (g * xhat).sum(outer) if outer else g * xhat
    gb = g.sum(outer) if outer else g.copy()
    return gi, gw, gb


def _ln_backward_samples(info, device, dtype):
    for shape, ns in (((3, 4), [4]), ((2, 2, 3), [2, 3]), ((4,), [4]), ((0, 3), [3])):
        x = _t(shape, dtype, device)
        _, mean, rstd = np_layer_norm(_np(x).astype(np.float64), ns)
        yield SampleInput(_t(shape, dtype, device), x, ns, _arr(mean, dtype, device),
                          _arr(rstd, dtype, device), _t(ns, dtype, device),
                          _t(ns, dtype, device), [True, True, True])


def _rms_norm_ref(x, ns, w=None, eps=None):
    ns = [ns] if isinstance(ns, int) else list(ns)
    if eps is None:                 # torch.finfo(input.dtype).eps
        eps = float(np.finfo(x.dtype).eps)
    axes = tuple(range(x.ndim - len(ns), x.ndim))
    xw = _wide(x)
    out = xw / np.sqrt((xw * xw).mean(axes, keepdims=True) + eps)
    return (out * _wide(w) if w is not None else out).astype(x.dtype)


def _rms_norm_samples(info, device, dtype):
    yield SampleInput(_t((3, 4), dtype, device), [4], _t((4,), dtype, device), 1e-6)
    yield SampleInput(_t((2, 3, 4), dtype, device), [3, 4])
    yield SampleInput(_t((0, 4), dtype, device), [4], None, 1e-5)
    yield SampleInput(_t((2, 5), dtype, device, noncontiguous=True), [5])


def np_group_norm(x, groups, w=None, b=None, eps=1e-5):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, (c // groups) * int(np.prod(x.shape[2:])))
    mean = g.mean(-1, keepdims=True)
    var = ((g - mean) ** 2).mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    out = ((g - mean) * rstd).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if w is not None:
        out = out * w.reshape(shape)
    if b is not None:
        out = out + b.reshape(shape)
    return out, mean.reshape(n, groups), rstd.reshape(n, groups)


def _native_group_norm_ref(x, w, b, N, C, HxW, group, eps):
    return np_group_norm(x, group, w, b, eps)


GROUP_CASES = [((2, 6, 3, 2), 3, True, True), ((2, 4, 5), 2, False, False),
               ((0, 4, 3), 2, True, False), ((3, 2), 1, True, True)]


def _native_group_norm_samples(info, device, dtype):
    for shape, group, hw, hb in GROUP_CASES:
        c = shape[1]
        yield SampleInput(_t(shape, dtype, device), _t((c,), dtype, device) if hw else None,
                          _t((c,), dtype, device) if hb else None, shape[0], c,
                          int(np.prod(shape[2:])), group, 1e-5)


def _native_group_norm_errors(info, device):
    x = _t((2, 6, 3), D.float32, device)
    yield ErrorInput(SampleInput(x, None, None, 2, 6, 3, 4, 1e-5), RuntimeError,
                     "Expected number of channels in input to be divisible by num_groups")
    yield ErrorInput(SampleInput(x, _t((5,), D.float32, device), None, 2, 6, 3, 3, 1e-5),
                     RuntimeError, "Expected weight to be a vector of size equal to the number "
                                   "of channels in input")
    yield ErrorInput(SampleInput(_t((2, 6, 3), D.int64, device), None, None, 2, 6, 3, 3,
                                 1e-5), RuntimeError, "not implemented for 'Long'")


def _group_norm_ref(x, num_groups, w=None, b=None, eps=1e-5, cudnn_enabled=True):
    return np_group_norm(x, num_groups, w, b, eps)[0]


def _group_norm_samples(info, device, dtype):
    for i, (shape, group, hw, hb) in enumerate(GROUP_CASES):
        c = shape[1]
        w = _t((c,), dtype, device) if hw else None
        b = _t((c,), dtype, device) if hb else None
        x = _t(shape, dtype, device, noncontiguous=(i == 1))
        yield SampleInput(x, group, w, b) if i % 2 else SampleInput(x, group, w, b, 1e-3)


def _group_norm_errors(info, device):
    yield ErrorInput(SampleInput(_t((6,), D.float32, device), 2), RuntimeError,
                     "Expected at least 2 dimensions for input tensor but received 1")
    yield ErrorInput(SampleInput(_t((2, 6, 3), D.float32, device), 4), RuntimeError,
                     "Expected number of channels in input to be divisible by num_groups")


def _gn_backward_ref(g, x, mean, rstd, w, N, C, HxW, group, output_mask):
    cg = C // group
    xg = x.reshape(N, group, cg, HxW)
    gg = g.reshape(N, group, cg, HxW)
    m = mean.reshape(N, group, 1, 1)
    r = rstd.reshape(N, group, 1, 1)
    xhat = (xg - m) * r
    gx = gg * w.reshape(1, group, cg, 1) if w is not None else gg
    n = cg * HxW
    gi = r * (gx - gx.sum((2, 3), keepdims=True) / n -
              xhat * (gx * xhat).sum((2, 3), keepdims=True) / n)
    gw = (gg * xhat).sum((0, 3)).reshape(C)
    gb = gg.sum((0, 3)).reshape(C)
    return gi.reshape(x.shape), gw, gb


def _gn_backward_samples(info, device, dtype):
    for shape, group, hw in (((2, 4, 3), 2, True), ((2, 6, 2, 2), 3, False),
                             ((3, 2), 1, True)):
        n, c = shape[:2]
        hxw = int(np.prod(shape[2:]))
        x = _t(shape, dtype, device)
        _, mean, rstd = np_group_norm(_np(x).astype(np.float64), group)
        yield SampleInput(_t(shape, dtype, device), x, _arr(mean, dtype, device),
                          _arr(rstd, dtype, device), _t((c,), dtype, device) if hw else None,
                          n, c, hxw, group, [True, True, True])


def np_batch_norm(x, w, b, rm, rv, training, eps):
    """(output, save_mean, save_invstd): statistics over every dim but 1 when training,
    the running ones otherwise (then the saved statistics are empty)."""
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if training:
        mean = x.mean(axes)
        invstd = 1 / np.sqrt(((x - mean.reshape(shape)) ** 2).mean(axes) + eps)
        save = (mean, invstd)
    else:
        mean, invstd = rm, 1 / np.sqrt(rv + eps)
        save = (np.zeros(0), np.zeros(0))
    out = (x - mean.reshape(shape)) * invstd.reshape(shape)
    if w is not None:
        out = out * w.reshape(shape)
    if b is not None:
        out = out + b.reshape(shape)
    return (out,) + save


def _bn_samples(kind):
    """kind: "legit" (running stats, training flag), "no_stats", "no_training", "native"
    (optional stats, training flag) or "batch_norm" (native + cudnn_enabled)."""
    def samples(info, device, dtype):
        def t(*shape, **kw):
            return _t(shape, dtype, device, **kw)

        def stats(c):
            return t(c), t(c, low=0.5, high=2.0)
        cases = [((4, 3, 2, 2), True, True, True), ((5, 3), False, False, True),
                 ((3, 2), True, True, False), ((2, 3, 4), False, True, True),
                 ((0, 2, 3), False, True, True)]
        for shape, train, affine, with_stats in cases:
            c = shape[1]
            x = t(*shape)
            w, b = (t(c), t(c)) if affine else (None, None)
            if kind == "no_stats":
                if train and shape[0]:
                    yield SampleInput(x, w, b, True, 0.1, 1e-5)
                continue
            if kind == "no_training":
                if with_stats:
                    yield SampleInput(x, w, b, *stats(c), 0.1, 1e-5)
                continue
            if not shape[0] and train:
                continue
            if kind == "legit":
                if with_stats:
                    yield SampleInput(x, w, b, *stats(c), train, 0.1, 1e-5)
                continue
            rm, rv = stats(c) if with_stats else (None, None)
            if not with_stats and not train:
                continue
            args = (x, w, b, rm, rv, train, 0.1, 1e-5)
            yield SampleInput(*args, False) if kind == "batch_norm" else SampleInput(*args)
    return samples


def _bn_ref(kind):
    def ref(x, w, b, *rest):
        if kind == "no_stats":
            return np_batch_norm(x, w, b, None, None, True, rest[-1])
        if kind == "no_training":
            return np_batch_norm(x, w, b, rest[0], rest[1], False, rest[-1])
        rm, rv, train, _, eps = rest[:5]
        r = np_batch_norm(x, w, b, rm, rv, train, eps)
        return r[0] if kind == "batch_norm" else r
    return _floatref(ref)


def _bn_errors(kind):
    def errors(info, device):
        x = _t((5, 3), D.float32, device)

        def s(x, w=None, rm=None, rv=None):
            if kind == "no_stats":
                return SampleInput(x, w, None, True, 0.1, 1e-5)
            if kind == "no_training":
                return SampleInput(x, w, None, rm, rv, 0.1, 1e-5)
            args = (x, w, None, rm, rv, True, 0.1, 1e-5)
            return SampleInput(*args, False) if kind == "batch_norm" else SampleInput(*args)
        ones = _t((3,), D.float32, device, 0.5, 1)
        yield ErrorInput(s(x, _t((2,), D.float32, device), ones, ones), RuntimeError,
                         "weight should contain 3 elements not 2")
        yield ErrorInput(s(_t((3,), D.float32, device), None, ones, ones), RuntimeError,
                         "expected input with at least 2 dimensions")
        yield ErrorInput(s(_t((5, 3), D.int64, device), None, ones, ones), RuntimeError,
                         "not implemented for 'Long'")
        if kind != "no_stats":
            yield ErrorInput(s(x, None, _t((4,), D.float32, device), ones), RuntimeError,
                             "running_mean should contain 3 elements not 4")
        if kind in ("native", "batch_norm"):
            yield ErrorInput(SampleInput(x, None, None, None, None, False, 0.1, 1e-5,
                                         *((False,) if kind == "batch_norm" else ())),
                             RuntimeError, "must be defined in evaluation mode")
    return errors


def _instance_norm_ref(x, w, b, rm, rv, use_input_stats, momentum, eps, cudnn_enabled):
    n, c = x.shape[:2]
    axes = tuple(range(2, x.ndim))
    shape = (1, c) + (1,) * (x.ndim - 2)
    if use_input_stats:
        mean = x.mean(axes, keepdims=True)
        var = ((x - mean) ** 2).mean(axes, keepdims=True)
    else:
        mean, var = rm.reshape(shape), rv.reshape(shape)
    out = (x - mean) / np.sqrt(var + eps)
    if w is not None:
        out = out * w.reshape(shape)
    if b is not None:
        out = out + b.reshape(shape)
    return out


def _instance_norm_samples(info, device, dtype):
    def t(*shape, **kw):
        return _t(shape, dtype, device, **kw)
    yield SampleInput(t(2, 3, 5), t(3), t(3), t(3), t(3, low=0.5, high=2), True, 0.1, 1e-5,
                      False)
    yield SampleInput(t(2, 2, 3, 2), None, None, None, None, True, 0.1, 1e-5, False)
    yield SampleInput(t(2, 3, 4), None, t(3), t(3), t(3, low=0.5, high=2), False, 0.1, 1e-5,
                      False)


def _instance_norm_errors(info, device):
    yield ErrorInput(SampleInput(_t((2, 3, 4), D.float32, device), None, None, None, None,
                                 False, 0.1, 1e-5, False), RuntimeError,
                     "Expected running_mean and running_var to be defined")


register(
    OpInfo(aten.native_layer_norm.default, _floatref(_native_layer_norm_ref), F,
           _layer_norm_samples(True), tols=TOLS, error_inputs=_layer_norm_errors(True)),
    OpInfo(aten.layer_norm.default, _floatref(_layer_norm_ref), F, _layer_norm_samples(False),
           tols=TOLS, error_inputs=_layer_norm_errors(False)),
    OpInfo(aten.native_layer_norm_backward.default, _floatref(_ln_backward_ref), F,
           _ln_backward_samples, tols=SUMS),
    OpInfo(aten.rms_norm.default, _rms_norm_ref, F, _rms_norm_samples, tols=TOLS),
    OpInfo(aten.native_group_norm.default, _floatref(_native_group_norm_ref), F,
           _native_group_norm_samples, tols=TOLS, error_inputs=_native_group_norm_errors),
    OpInfo(aten.group_norm.default, _floatref(_group_norm_ref), F, _group_norm_samples,
           tols=TOLS, error_inputs=_group_norm_errors),
    OpInfo(aten.native_group_norm_backward.default, _floatref(_gn_backward_ref), F,
           _gn_backward_samples, tols=SUMS),
    OpInfo(aten._native_batch_norm_legit.default, _bn_ref("legit"), F, _bn_samples("legit"),
           tols=TOLS, error_inputs=_bn_errors("legit")),
    OpInfo(aten._native_batch_norm_legit.no_stats, _bn_ref("no_stats"), F,
           _bn_samples("no_stats"), tols=TOLS, error_inputs=_bn_errors("no_stats")),
    OpInfo(aten._native_batch_norm_legit_no_training.default, _bn_ref("no_training"), F,
           _bn_samples("no_training"), tols=TOLS, error_inputs=_bn_errors("no_training")),
    OpInfo(aten.native_batch_norm.default, _bn_ref("native"), F, _bn_samples("native"),
           tols=TOLS, error_inputs=_bn_errors("native")),
    OpInfo(aten.batch_norm.default, _bn_ref("batch_norm"), F, _bn_samples("batch_norm"),
           tols=TOLS, error_inputs=_bn_errors("batch_norm")),
    OpInfo(aten.instance_norm.default, _floatref(_instance_norm_ref), F,
           _instance_norm_samples, tols=TOLS, error_inputs=_instance_norm_errors),
)


# --------------------------------------------------------------------------- convolution

def np_conv(x, w, b, stride, padding, dilation, groups):
    """Direct convolution: loops over output positions and kernel offsets."""
    nd = x.ndim - 2
    n, c = x.shape[:2]
    o, k = w.shape[0], w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    out_sp = [(xp.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1
              for i in range(nd)]
    out = np.zeros((n, o, *out_sp), np.result_type(x, w))
    cg, og = c // groups, o // groups
    for g in range(groups):
        for pos in np.ndindex(*out_sp):
            for kk in np.ndindex(*k):
                at = tuple(pos[i] * stride[i] + kk[i] * dilation[i] for i in range(nd))
                xv = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + at]
                wv = w[(slice(g * og, (g + 1) * og), slice(None)) + kk]
                out[(slice(None), slice(g * og, (g + 1) * og)) + pos] += xv @ wv.T
    if b is not None:
        out += b.reshape((1, -1) + (1,) * nd)
    return out


def _full_size(x, w, stride, dilation, output_padding):
    nd = x.ndim - 2
    k = w.shape[2:]
    return [(x.shape[2 + i] - 1) * stride[i] + dilation[i] * (k[i] - 1) + 1 + output_padding[i]
            for i in range(nd)]


def np_conv_transpose(x, w, b, stride, padding, output_padding, dilation, groups):
    """Transposed convolution: every input element scatters itself times the kernel."""
    nd = x.ndim - 2
    n, cin = x.shape[:2]
    cog, k = w.shape[1], w.shape[2:]
    full = _full_size(x, w, stride, dilation, output_padding)
    out = np.zeros((n, cog * groups, *full), np.result_type(x, w))
    cig = cin // groups
    for g in range(groups):
        for pos in np.ndindex(*x.shape[2:]):
            for kk in np.ndindex(*k):
                at = tuple(pos[i] * stride[i] + kk[i] * dilation[i] for i in range(nd))
                xv = x[(slice(None), slice(g * cig, (g + 1) * cig)) + pos]
                wv = w[(slice(g * cig, (g + 1) * cig), slice(None)) + kk]
                out[(slice(None), slice(g * cog, (g + 1) * cog)) + at] += xv @ wv
    out = out[(slice(None), slice(None)) + tuple(slice(p, f - p) for p, f in
                                                  zip(padding, full))]
    if b is not None:
        out += b.reshape((1, -1) + (1,) * nd)
    return out


def _per_dim(v, nd):
    v = [v] if isinstance(v, int) else list(v)
    return v * nd if len(v) == 1 else v


def _convolution_ref(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    nd = w.ndim - 2
    s, p, d, op = (_per_dim(v, nd) for v in (stride, padding, dilation, output_padding))
    if transposed:
        return np_conv_transpose(x, w, b, s, p, op, d, groups)
    return np_conv(x, w, b, s, p, d, groups)


CONV_CASES = [
    # input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
    ((2, 3, 7), (4, 3, 3), True, [1], [0], [1], False, [0], 1),
    ((1, 4, 5, 5), (4, 2, 3, 2), False, [2, 1], [1, 0], [1, 2], False, [0, 0], 2),
    ((1, 2, 3, 4, 3), (2, 1, 2, 2, 2), True, [1, 2, 1], [1, 0, 1], [1, 1, 1], False,
     [0, 0, 0], 2),
    ((0, 2, 4, 4), (3, 2, 2, 2), True, [2], [1], [1], False, [0], 1),
    ((1, 4, 3, 3), (4, 3, 2, 2), True, [2, 1], [0, 1], [1, 1], True, [1, 0], 2),
    ((2, 3, 4), (3, 2, 3), False, [2], [1], [2], True, [1], 1),
]


def _conv_t(shape, dtype, device, **kw):
    return _t(shape, dtype, device, -2, 2, **kw)


def _convolution_samples(info, device, dtype):
    for i, (xs, ws, hb, s, p, d, tr, op, g) in enumerate(CONV_CASES):
        cout = ws[1] * g if tr else ws[0]
        yield SampleInput(_conv_t(xs, dtype, device, noncontiguous=(i == 1)),
                          _conv_t(ws, dtype, device), _conv_t((cout,), dtype, device)
                          if hb else None, s, p, d, tr, op, g)


def _convolution_errors(info, device):
    def s(x, w, b=None, stride=(1,), padding=(0,), transposed=False, groups=1):
        return SampleInput(x, w, b, list(stride), list(padding), [1], transposed, [0], groups)
    f = D.float32
    x, w = _t((1, 3, 5, 5), f, device), _t((4, 3, 3, 3), f, device)
    yield ErrorInput(s(_t((3, 5, 5), f, device), w), RuntimeError,
                     "Expected 4-dimensional input for 4-dimensional weight")
    yield ErrorInput(s(_t((1, 2, 5, 5), f, device), w), RuntimeError,
                     r"expected input\[1, 2, 5, 5\] to have 3 channels, but got 2 channels")
    yield ErrorInput(s(x, w, _t((3,), f, device)), RuntimeError,
                     "expected bias to be 1-dimensional with 4 elements")
    yield ErrorInput(s(_t((1, 3, 2, 2), f, device), w), RuntimeError,
                     "Kernel size can't be greater than actual input size")
    yield ErrorInput(s(x, _t((4, 1, 3, 3), f, device), groups=3), RuntimeError,
                     "expected weight to be divisible by 3")
    yield ErrorInput(s(x, w, stride=(0,)), RuntimeError, "non-positive stride is not supported")
    yield ErrorInput(s(x, w, padding=(-1,)), RuntimeError, "negative padding is not supported")
    yield ErrorInput(s(_t((1, 3, 5, 5), D.float64, device), w), RuntimeError,
                     r"Input type \(Double\) and weight type \(Float\) should be the same")
    yield ErrorInput(s(_t((1, 3, 5, 5), D.int64, device), _t((4, 3, 3, 3), D.int64, device)),
                     RuntimeError, "not implemented for 'Long'")
    yield ErrorInput(s(x, w, transposed=True), RuntimeError, "Given transposed=1, weight of "
                                                             "size")


def np_conv_backward(gy, x, w, stride, padding, dilation, transposed, output_padding, groups):
    """(grad_input, grad_weight, grad_bias) by the adjoint loops of the forward."""
    nd = x.ndim - 2
    k = w.shape[2:]
    gb = gy.sum(axis=(0,) + tuple(range(2, 2 + nd)))
    gw = np.zeros_like(w)
    if not transposed:
        c, o = x.shape[1], w.shape[0]
        cg, og = c // groups, o // groups
        xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
        gxp = np.zeros_like(xp)
        for g in range(groups):
            cs, os_ = slice(g * cg, (g + 1) * cg), slice(g * og, (g + 1) * og)
            for pos in np.ndindex(*gy.shape[2:]):
                for kk in np.ndindex(*k):
                    at = tuple(pos[i] * stride[i] + kk[i] * dilation[i] for i in range(nd))
                    gyv = gy[(slice(None), os_) + pos]                   # (N, og)
                    gxp[(slice(None), cs) + at] += gyv @ w[(os_, slice(None)) + kk]
                    gw[(os_, slice(None)) + kk] += gyv.T @ xp[(slice(None), cs) + at]
        gi = gxp[(slice(None), slice(None)) + tuple(slice(p, p + n) for p, n in
                                                     zip(padding, x.shape[2:]))]
        return gi, gw, gb
    cin, cog = x.shape[1], w.shape[1]
    cig = cin // groups
    full = _full_size(x, w, stride, dilation, output_padding)
    gyf = np.zeros(gy.shape[:2] + tuple(full), gy.dtype)
    gyf[(slice(None), slice(None)) + tuple(slice(p, f - p) for p, f in
                                           zip(padding, full))] = gy
    gi = np.zeros_like(x)
    for g in range(groups):
        cs, os_ = slice(g * cig, (g + 1) * cig), slice(g * cog, (g + 1) * cog)
        for pos in np.ndindex(*x.shape[2:]):
            for kk in np.ndindex(*k):
                at = tuple(pos[i] * stride[i] + kk[i] * dilation[i] for i in range(nd))
                gyv = gyf[(slice(None), os_) + at]                           # (N, cog)
                wv = w[(cs, slice(None)) + kk]                                # (cig, cog)
                gi[(slice(None), cs) + pos] += gyv @ wv.T
                gw[(cs, slice(None)) + kk] += x[(slice(None), cs) + pos].T @ gyv
    return gi, gw, gb


def _conv_backward_ref(gy, x, w, bias_sizes, stride, padding, dilation, transposed,
                       output_padding, groups, output_mask):
    nd = w.ndim - 2
    s, p, d, op = (_per_dim(v, nd) for v in (stride, padding, dilation, output_padding))
    return np_conv_backward(gy, x, w, s, p, d, transposed, op, groups)


def _conv_backward_samples(info, device, dtype):
    for i in (0, 1, 4, 5):
        xs, ws, hb, s, p, d, tr, op, g = CONV_CASES[i]
        x, w = _conv_t(xs, dtype, device), _conv_t(ws, dtype, device)
        y = _convolution_ref(_np(x), _np(w), None, s, p, d, tr, op, g)
        cout = y.shape[1]
        yield SampleInput(_conv_t(y.shape, dtype, device), x, w, [cout] if hb else None, s, p,
                          d, tr, op, g, [True, True, True])


def _conv_nd_ref(nd, transposed=False):
    def ref(x, w, b=None, stride=1, padding=0, *rest):
        unbatched = x.ndim == nd + 1
        if unbatched:
            x = x[None]
        if transposed:
            output_padding, groups, dilation = (list(rest) + [0, 1, 1][len(rest):])[:3]
            out = np_conv_transpose(x, w, b, _per_dim(stride, nd), _per_dim(padding, nd),
                                    _per_dim(output_padding, nd), _per_dim(dilation, nd),
                                    groups)
        else:
            dilation, groups = (list(rest) + [1, 1][len(rest):])[:2]
            d = _per_dim(dilation, nd)
            if isinstance(padding, str):
                pads = [(0, 0)] * 2
                for i in range(nd):
                    total = d[i] * (w.shape[2 + i] - 1) if padding == "same" else 0
                    pads.append((total // 2, total - total // 2))
                x, padding = np.pad(x, pads), 0
            out = np_conv(x, w, b, _per_dim(stride, nd), _per_dim(padding, nd), d, groups)
        return out[0] if unbatched else out
    return _floatref(ref)


def _conv_nd_samples(nd, kind):
    """kind: "conv", "padding" (string padding) or "transpose"."""
    def samples(info, device, dtype):
        def t(*shape, **kw):
            return _conv_t(shape, dtype, device, **kw)
        sp = (6, 5, 4)[:nd]
        k = (3, 2, 2)[:nd]
        if kind == "conv":
            yield SampleInput(t(2, 4, *sp), t(6, 2, *k), t(6), 1, 1, 1, 2)
            yield SampleInput(t(3, *sp), t(2, 3, *k))                          # unbatched
            yield SampleInput(t(1, 2, *sp), t(2, 2, *k), None, [2] * nd, [0] * nd, [1] * nd)
            yield SampleInput(t(0, 2, *sp), t(3, 2, *k), t(3))
        elif kind == "padding":
            yield SampleInput(t(1, 2, *sp), t(3, 2, *k), t(3), 1, "same")
            yield SampleInput(t(2, *sp), t(2, 2, *k), None, 1, "same", 2)      # dilation 2
            yield SampleInput(t(1, 4, *sp), t(2, 2, *k), None, 1, "valid", 1, 2)
        else:
            sp = (4, 3, 2)[:nd]
            yield SampleInput(t(2, 4, *sp), t(4, 3, *k), t(6), 2, 1, 1, 2)
            yield SampleInput(t(2, *sp), t(2, 3, *k))                          # unbatched
            yield SampleInput(t(1, 2, *sp), t(2, 2, *k), None, 1, 0, 0, 1, 2)  # dilation
    return samples


def _conv_nd_errors(nd, kind):
    def errors(info, device):
        f = D.float32
        sp, k = (6, 5, 4)[:nd], (3, 2, 2)[:nd]
        x, w = _t((1, 2) + sp, f, device), _t((3, 2) + k, f, device)
        name = f"conv_transpose{nd}d" if kind == "transpose" else f"conv{nd}d"
        yield ErrorInput(SampleInput(_t(sp, f, device), w), RuntimeError,
                         rf"Expected {nd + 1}D \(unbatched\) or {nd + 2}D \(batched\) input "
                         rf"to {name}")
        if kind == "padding":
            yield ErrorInput(SampleInput(x, w, None, 2, "same"), RuntimeError,
                             "padding='same' is not supported for strided convolutions")
            yield ErrorInput(SampleInput(x, w, None, 1, "full"), RuntimeError,
                             "Invalid padding string: 'full'")
        elif kind == "transpose":
            yield ErrorInput(SampleInput(_t((1, 3) + sp, f, device), w, None, 1, 0, 1),
                             RuntimeError, "output padding must be smaller than either "
                                           "stride or dilation")
        else:
            yield ErrorInput(SampleInput(x, _t((3, 3) + k, f, device)), RuntimeError,
                             "to have 3 channels, but got 2 channels instead")
    return errors


register(
    OpInfo(aten.convolution.default, _floatref(_convolution_ref), F, _convolution_samples,
           tols=SUMS, error_inputs=_convolution_errors),
    OpInfo(aten.convolution_backward.default, _floatref(_conv_backward_ref), F,
           _conv_backward_samples, tols=SUMS),
)
for _nd in (1, 2, 3):
    _tr = aten.conv_transpose1d.default if _nd == 1 else \
        getattr(aten, f"conv_transpose{_nd}d").input
    register(
        OpInfo(getattr(aten, f"conv{_nd}d").default, _conv_nd_ref(_nd), F,
               _conv_nd_samples(_nd, "conv"), tols=SUMS, error_inputs=_conv_nd_errors(_nd,
                                                                                   "conv")),
        OpInfo(getattr(aten, f"conv{_nd}d").padding, _conv_nd_ref(_nd), F,
               _conv_nd_samples(_nd, "padding"), tols=SUMS,
               error_inputs=_conv_nd_errors(_nd, "padding")),
        OpInfo(_tr, _conv_nd_ref(_nd, True), F, _conv_nd_samples(_nd, "transpose"), tols=SUMS,
               error_inputs=_conv_nd_errors(_nd, "transpose")),
    )


# --------------------------------------------------------------------------- pooling

def np_pool_size(n, k, p, s, d, ceil_mode):
    eff = d * (k - 1) + 1
    if ceil_mode:
        out = -(-(n + 2 * p - eff) // s) + 1
        if (out - 1) * s >= n + p:         # the last window must start inside
            out -= 1
        return out
    return (n + 2 * p - eff) // s + 1


def np_max_pool(x, k, s, p, d, ceil_mode):
    """PyTorch's max pool: the first valid element, replaced by a strictly greater one or
    by NaN (so the last NaN's index wins)."""
    nd = len(k)
    sp_ = x.shape[-nd:]
    out = [np_pool_size(n, kk, pp, ss, dd, ceil_mode)
           for n, kk, pp, ss, dd in zip(sp_, k, p, s, d)]
    lead = x.shape[:-nd]
    vals = np.zeros(lead + tuple(out), x.dtype)
    idx = np.zeros(lead + tuple(out), np.int64)
    for li in np.ndindex(*lead):
        for pos in np.ndindex(*out):
            best, bi = None, None
            for kk in np.ndindex(*k):
                c = [pos[i] * s[i] - p[i] + kk[i] * d[i] for i in range(nd)]
                if not all(0 <= c[i] < sp_[i] for i in range(nd)):
                    continue
                v = x[li + tuple(c)]
                if best is None or v > best or np.isnan(v):
                    best, bi = v, int(np.ravel_multi_index(c, sp_))
            vals[li + pos], idx[li + pos] = best, bi
    return vals, idx


def _pool_args(nd, kernel_size, stride=(), padding=0, dilation=1):
    k = _per_dim(kernel_size, nd)
    s = _per_dim(stride, nd) if (isinstance(stride, int) or len(stride)) else k
    return k, s, _per_dim(padding, nd), _per_dim(dilation, nd)


def _max_pool_ref(nd, values_only=False):
    def ref(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        k, s, p, d = _pool_args(nd, kernel_size, stride, padding, dilation)
        v, i = np_max_pool(x, k, s, p, d, ceil_mode)
        return v if values_only else (v, i)
    return ref


MAXPOOL2D = [
    # input shape, kernel, stride, padding, dilation, ceil_mode
    ((2, 3, 6, 7), [2, 2], [], [0, 0], [1, 1], False),
    ((1, 2, 7, 6), [3, 3], [2, 2], [1, 1], [1, 1], True),
    ((2, 5, 7), [2, 3], [1, 2], [1, 0], [2, 1], False),         # unbatched
    ((0, 2, 4, 4), [2], [], [0], [1], False),
]
MAXPOOL3D = [
    ((1, 2, 4, 5, 3), [2, 2, 2], [1, 2, 1], [1, 0, 1], [1, 1, 2], True),
    ((2, 3, 3, 3), [2], [], [0], [1], False),
]
MAXPOOL1D = [((2, 3, 9), [3], [2], [1], [2], False), ((3, 8), [2], [], [0], [1], True),
             ((1, 2, 7), [3], [3], [1], [1], True)]
POOL_SPECIAL = [[[[1.0, NAN, 3.0, NAN], [5.0, 2.0, 5.0, 5.0]],
                 [[-INF, -INF, 2.0, 2.0], [-INF, -INF, INF, 1.0]]]]


def _pool_t(shape, dtype, device, **kw):
    return _t(shape, dtype, device, **kw) if dtype.is_floating_point else \
        _t(shape, dtype, device, -4, 4, **kw)      # ties among few integers


def _max_pool_samples(cases, nd, special=False):
    def samples(info, device, dtype):
        for i, (shape, k, s, p, d, ceil) in enumerate(cases):
            yield SampleInput(_pool_t(shape, dtype, device, noncontiguous=(i == 1)), k, s, p,
                              d, ceil)
        if special and dtype.is_floating_point:      # NaN, -inf and ties, edge windows
            yield SampleInput(_arr(POOL_SPECIAL, dtype, device), [2, 2], [1, 1], [1, 1])
    return samples


def _max_pool_errors(nd, name):
    def errors(info, device):
        f = D.float32
        sp = (4,) * nd
        x = _t((1, 1) + sp, f, device)
        yield ErrorInput(SampleInput(_t(sp, f, device), [2] * nd), RuntimeError,
                         rf"Expected {nd + 1}D or {nd + 2}D|Expected 2D or 3D")
        yield ErrorInput(SampleInput(_t((1, 0) + sp, f, device), [2] * nd), RuntimeError,
                         "Expected")
        yield ErrorInput(SampleInput(x, [2] * nd, [2] * nd, [2] * nd), RuntimeError,
                         "pad should be smaller than or equal to half of kernel size")
        yield ErrorInput(SampleInput(_t((1, 1) + (2,) * nd, f, device), [3] * nd),
                         RuntimeError, "Output size is too small")
        yield ErrorInput(SampleInput(x, [2] * (nd + 1)), RuntimeError,
                         f"{name}: kernel_size must either be a single int, or a tuple")
        yield ErrorInput(SampleInput(x, [2] * nd, [0] * nd), RuntimeError,
                         "stride should be greater than zero")
        yield ErrorInput(SampleInput(_t((1, 1) + sp, D.bool, device), [2] * nd), RuntimeError,
                         "not implemented for 'Bool'")
    return errors


def _max_pool_backward_ref(g, x, kernel_size, stride, padding, dilation, ceil_mode, indices):
    nd = 2
    lead = x.shape[:-nd]
    plane = int(np.prod(x.shape[-nd:]))
    out = np.zeros(lead + (plane,), g.dtype)
    for li in np.ndindex(*lead):
        np.add.at(out[li], indices[li].ravel(), g[li].ravel())
    return out.reshape(x.shape)


def _max_pool_backward_samples(info, device, dtype):
    for shape, k, s, p, d, ceil in MAXPOOL2D[:3]:
        x = _t(shape, dtype, device)
        kk, ss, pp, dd = _pool_args(2, k, s, p, d)
        v, i = np_max_pool(_np(x), kk, ss, pp, dd, ceil)
        yield SampleInput(_t(v.shape, dtype, device), x, k, s or k, p, d, ceil,
                          _idx(i, device))


def _max_pool_backward_errors(info, device):
    x = _t((1, 1, 4, 4), D.float32, device)
    yield ErrorInput(SampleInput(_t((1, 1, 2, 2), D.float32, device), x, [2, 2], [2, 2],
                                 [0, 0], [1, 1], False, _idx(np.zeros((1, 1, 3, 3)), device)),
                     RuntimeError, "does not match indices of shape")


def np_avg_pool(x, k, s, p, ceil_mode, count_include_pad, divisor_override):
    nd = len(k)
    sp_ = x.shape[-nd:]
    out = [np_pool_size(n, kk, pp, ss, 1, ceil_mode) for n, kk, pp, ss in zip(sp_, k, p, s)]
    lead = x.shape[:-nd]
    res = np.zeros(lead + tuple(out), np.float64)
    for pos in np.ndindex(*out):
        start = [pos[i] * s[i] - p[i] for i in range(nd)]
        end = [min(start[i] + k[i], sp_[i] + p[i]) for i in range(nd)]
        pool = np.prod([e - b for b, e in zip(start, end)])
        cs = [max(b, 0) for b in start]
        ce = [min(e, n) for e, n in zip(end, sp_)]
        win = x[(Ellipsis,) + tuple(slice(b, e) for b, e in zip(cs, ce))]
        total = win.sum(axis=tuple(range(len(lead), x.ndim)))
        if divisor_override:
            div = divisor_override
        elif count_include_pad:
            div = pool
        else:
            div = np.prod([e - b for b, e in zip(cs, ce)])
        if x.dtype.kind in "iu":           # C++ integer division truncates
            res[(Ellipsis,) + pos] = np.trunc(total / div)
        else:
            res[(Ellipsis,) + pos] = total / div
    return res.astype(x.dtype)


def _avg_pool_ref(nd):
    def ref(x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
            divisor_override=None):
        k, s, p, _ = _pool_args(nd, kernel_size, stride, padding)
        return np_avg_pool(x, k, s, p, ceil_mode, count_include_pad, divisor_override)
    return _floatref(ref)


AVGPOOL2D = [
    # shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    ((2, 3, 6, 7), [2, 2], [], [0, 0], False, True, None),
    ((1, 2, 6, 6), [3, 3], [2, 2], [1, 1], True, True, None),
    ((2, 6, 6), [3, 3], [2, 2], [1, 1], True, False, None),          # unbatched
    ((1, 2, 5, 4), [3, 2], [2, 1], [1, 1], False, False, 5),
    ((0, 2, 3, 3), [2], [2], [1], True, True, None),
]
AVGPOOL3D = [((1, 2, 5, 4, 6), [2, 3, 2], [2, 1, 3], [1, 1, 0], True, False, None),
             ((2, 3, 3, 3), [2], [], [0], False, True, 3)]


def _avg_pool_samples(cases):
    def samples(info, device, dtype):
        for i, (shape, k, s, p, ceil, cip, div) in enumerate(cases):
            x = _pool_t(shape, dtype, device, noncontiguous=(i == 1))
            if div is None and cip and i % 2 == 0:
                yield SampleInput(x, k, s, p, ceil)
            else:
                yield SampleInput(x, k, s, p, ceil, cip, div)
    return samples


def _avg_pool_errors(nd):
    def errors(info, device):
        sp = (4,) * nd
        yield ErrorInput(SampleInput(_t((1, 1) + sp, D.float32, device), [2] * nd, [], [0] * nd,
                                     False, True, 0), RuntimeError, "divisor must be not zero")
        yield ErrorInput(SampleInput(_t((1, 1) + sp, D.int32, device), [2] * nd), RuntimeError,
                         "not implemented for 'Int'")
        yield ErrorInput(SampleInput(_t((1, 1) + sp, D.float32, device), [2] * nd, [1] * nd,
                                     [2] * nd), RuntimeError, "pad should be smaller than or "
                                                              "equal to half of kernel size")
    return errors


def _avg_pool1d_ref(x, kernel_size, stride=(), padding=0, ceil_mode=False,
                    count_include_pad=True):
    k, s, p, _ = _pool_args(1, kernel_size, stride, padding)
    return np_avg_pool(x, k, s, p, ceil_mode, count_include_pad, None)


def _avg_pool1d_samples(info, device, dtype):
    yield SampleInput(_t((2, 3, 7), dtype, device), 3, 2, 1, False, True)
    yield SampleInput(_t((3, 8), dtype, device), [2])
    yield SampleInput(_t((1, 2, 7), dtype, device), [3], [2], [1], True, False)


def _avg_pool_backward_ref(g, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                           divisor_override):
    nd = 2
    k, s, p, _ = _pool_args(nd, kernel_size, stride, padding)
    sp_ = x.shape[-nd:]
    gi = np.zeros(x.shape)
    for pos in np.ndindex(*g.shape[-nd:]):
        start = [pos[i] * s[i] - p[i] for i in range(nd)]
        end = [min(start[i] + k[i], sp_[i] + p[i]) for i in range(nd)]
        cs = [max(b, 0) for b in start]
        ce = [min(e, n) for e, n in zip(end, sp_)]
        if divisor_override:
            div = divisor_override
        elif count_include_pad:
            div = np.prod([e - b for b, e in zip(start, end)])
        else:
            div = np.prod([e - b for b, e in zip(cs, ce)])
        win = (Ellipsis,) + tuple(slice(b, e) for b, e in zip(cs, ce))
        gi[win] += g[(Ellipsis,) + pos][(Ellipsis,) + (None,) * nd] / div
    return gi


def _avg_pool_backward_samples(info, device, dtype):
    for shape, k, s, p, ceil, cip, div in AVGPOOL2D[:4]:
        x = _t(shape, dtype, device)
        kk, ss, pp, _ = _pool_args(2, k, s, p)
        y = np_avg_pool(_np(x), kk, ss, pp, ceil, cip, div)
        yield SampleInput(_t(y.shape, dtype, device), x, k, s, p, ceil, cip, div)


def np_adaptive(x, out):
    nd = len(out)
    sp_ = x.shape[-nd:]
    res = np.zeros(x.shape[:-nd] + tuple(out))
    for pos in np.ndindex(*out):
        sl = tuple(slice((o * n) // m, -((-(o + 1) * n) // m)) for o, n, m in zip(pos, sp_, out))
        res[(Ellipsis,) + pos] = x[(Ellipsis,) + sl].mean(axis=tuple(range(-nd, 0)))
    return res


def _adaptive_ref(nd):
    def ref(x, output_size):
        return np_adaptive(x, _per_dim(output_size, nd))
    return _floatref(ref)


def _adaptive_samples(nd):
    cases = {1: [((2, 3, 7), [3]), ((3, 8), [4]), ((1, 2, 5), [7])],
             2: [((2, 3, 7, 5), [3, 2]), ((3, 6, 4), [3, 4]), ((1, 2, 5, 5), [7, 1]),
                 ((0, 2, 4, 4), [2, 2])],
             3: [((2, 2, 5, 4, 3), [2, 3, 2]), ((2, 4, 4, 4), [2, 2, 2])]}[nd]

    def samples(info, device, dtype):
        for i, (shape, out) in enumerate(cases):
            yield SampleInput(_t(shape, dtype, device, noncontiguous=(i == 1)), out)
        if nd == 2:        # an infinity stays inside its own windows
            x = np.zeros((1, 1, 2, 5))
            x[0, 0, 0, 0] = INF
            yield SampleInput(_arr(x, dtype, device), [1, 3])
    return samples


def _adaptive_errors(nd):
    def errors(info, device):
        name = f"adaptive_avg_pool{nd}d"
        yield ErrorInput(SampleInput(_t((4,) * nd, D.float32, device), [2] * nd), RuntimeError,
                         rf"{name}\(\): Expected {nd + 1}D or {nd + 2}D tensor")
        if nd > 1:
            yield ErrorInput(SampleInput(_t((1,) + (4,) * nd, D.int64, device), [2] * nd),
                             RuntimeError, "not implemented for 'Long'")
    return errors


def _adaptive_backward_ref(g, x):
    nd = 2
    sp_, out = x.shape[-nd:], g.shape[-nd:]
    gi = np.zeros(x.shape)
    for pos in np.ndindex(*out):
        sl = tuple(slice((o * n) // m, -((-(o + 1) * n) // m)) for o, n, m in zip(pos, sp_, out))
        size = np.prod([s.stop - s.start for s in sl])
        gi[(Ellipsis,) + sl] += g[(Ellipsis,) + pos][(Ellipsis,) + (None,) * nd] / size
    return gi


def _adaptive_backward_samples(info, device, dtype):
    for shape, out in (((2, 3, 7, 5), (3, 4)), ((3, 4, 4), (2, 2)), ((1, 1, 3, 2), (5, 3))):
        yield SampleInput(_t(shape[:-2] + out, dtype, device), _t(shape, dtype, device))


register(
    OpInfo(aten.max_pool2d_with_indices.default, _floatref(_max_pool_ref(2)), FI,
           _max_pool_samples(MAXPOOL2D, 2, special=True), error_inputs=_max_pool_errors(
               2, "max_pool2d")),
    OpInfo(aten.max_pool3d_with_indices.default, _floatref(_max_pool_ref(3)), FI,
           _max_pool_samples(MAXPOOL3D, 3), error_inputs=_max_pool_errors(3, "max_pool3d")),
    OpInfo(aten.max_pool1d_with_indices.default, _floatref(_max_pool_ref(1)), F,
           _max_pool_samples(MAXPOOL1D, 1)),
    OpInfo(aten.max_pool1d.default, _floatref(_max_pool_ref(1, True)), F,
           _max_pool_samples(MAXPOOL1D, 1), error_inputs=_max_pool_errors(1, "max_pool1d")),
    OpInfo(aten.max_pool2d.default, _floatref(_max_pool_ref(2, True)), F,
           _max_pool_samples(MAXPOOL2D, 2, special=True)),
    OpInfo(aten.max_pool3d.default, _floatref(_max_pool_ref(3, True)), F,
           _max_pool_samples(MAXPOOL3D, 3)),
    OpInfo(aten.max_pool2d_with_indices_backward.default, _floatref(_max_pool_backward_ref), F,
           _max_pool_backward_samples, error_inputs=_max_pool_backward_errors),
    OpInfo(aten.avg_pool2d.default, _avg_pool_ref(2), FI, _avg_pool_samples(AVGPOOL2D),
           tols=TOLS, error_inputs=_avg_pool_errors(2)),
    OpInfo(aten.avg_pool3d.default, _avg_pool_ref(3), FI, _avg_pool_samples(AVGPOOL3D),
           tols=TOLS, error_inputs=_avg_pool_errors(3)),
    OpInfo(aten.avg_pool1d.default, _floatref(_avg_pool1d_ref), F, _avg_pool1d_samples,
           tols=TOLS),
    OpInfo(aten.avg_pool2d_backward.default, _floatref(_avg_pool_backward_ref), F,
           _avg_pool_backward_samples, tols=TOLS),
    OpInfo(aten._adaptive_avg_pool2d.default, _adaptive_ref(2), F, _adaptive_samples(2),
           tols=TOLS, error_inputs=_adaptive_errors(2)),
    OpInfo(aten._adaptive_avg_pool3d.default, _adaptive_ref(3), F, _adaptive_samples(3),
           tols=TOLS, error_inputs=_adaptive_errors(3)),
    OpInfo(aten._adaptive_avg_pool2d_backward.default, _floatref(_adaptive_backward_ref), F,
           _adaptive_backward_samples, tols=TOLS),
    OpInfo(aten.adaptive_avg_pool1d.default, _adaptive_ref(1), F, _adaptive_samples(1),
           tols=TOLS),
    OpInfo(aten.adaptive_avg_pool2d.default, _adaptive_ref(2), F, _adaptive_samples(2),
           tols=TOLS, error_inputs=_adaptive_errors(2)),
    OpInfo(aten.adaptive_avg_pool3d.default, _adaptive_ref(3), F, _adaptive_samples(3),
           tols=TOLS),
)


# --------------------------------------------------------------------------- padding

def np_pad(x, pad, mode="constant", value=0.0):
    """``pad`` lists (before, after) per dim from the last one; negative amounts crop."""
    nd = len(pad) // 2
    widths = [(0, 0)] * (x.ndim - nd) + [(pad[2 * i], pad[2 * i + 1])
                                        for i in reversed(range(nd))]
    grow = [(max(a, 0), max(b, 0)) for a, b in widths]
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
               "circular": "wrap"}[mode]
    kw = {"constant_values": value} if mode == "constant" else {}
    r = np.pad(x, grow, mode=np_mode, **kw)
    crop = tuple(slice(max(-a, 0), r.shape[i] - max(-b, 0)) for i, (a, b) in
                 enumerate(widths))
    return r[crop]


def _pad_nd_ref(mode):
    def ref(x, padding):
        return np_pad(x, list(padding), mode)
    return ref


def _pad_nd_samples(nd, reflect):
    def samples(info, device, dtype):
        sp = (4, 5, 3)[:nd]
        pad = [2, 1, 0, 3, 1, 2][:2 * nd]
        yield SampleInput(_t((2, 3) + sp, dtype, device), pad)
        yield SampleInput(_t((3,) + sp, dtype, device, noncontiguous=True), pad)   # unbatched
        yield SampleInput(_t((0, 2) + sp, dtype, device), pad)
        neg = [-1, 1, 1, -2, 0, 1][:2 * nd]
        yield SampleInput(_t((1, 2) + sp, dtype, device), neg)
        if not reflect:      # replication may repeat an edge more than the size
            yield SampleInput(_t((1, 2) + (1,) * nd, dtype, device), [3] * (2 * nd))
    return samples


def _pad_nd_errors(nd, reflect):
    name = f"{'reflection' if reflect else 'replication'}_pad{nd}d"

    def errors(info, device):
        sp = (3,) * nd
        yield ErrorInput(SampleInput(_t((1, 1) + sp, D.float32, device), [1] * (2 * nd + 2)),
                         RuntimeError, f"{name}: padding size is expected to be {2 * nd}")
        yield ErrorInput(SampleInput(_t(sp, D.float32, device), [1] * (2 * nd)),
                         RuntimeError, f"expected {nd + 1}D or {nd + 2}D")
        if reflect:
            yield ErrorInput(SampleInput(_t((1, 1) + sp, D.float32, device), [3] * (2 * nd)),
                             RuntimeError, "Padding size should be less than the "
                                           "corresponding input dimension")
        else:
            yield ErrorInput(SampleInput(_t((1, 1) + (0,) * nd, D.float32, device),
                                         [1] * (2 * nd)), RuntimeError, "non-zero")
    return errors


def _pad_ref(x, pad, mode="constant", value=None):
    return np_pad(x, list(pad), mode, 0.0 if value is None else value)


def _pad_samples(info, device, dtype):
    def t(*shape, **kw):
        return _t(shape, dtype, device, **kw)
    yield SampleInput(t(2, 3, 4), [1, 2])
    yield SampleInput(t(2, 3, 4), [1, 0, -1, 2], "constant", 2.5 if dtype.is_floating_point
                      else 3.0)
    yield SampleInput(t(2, 3, 2), [1, 1, 0, 2, 1, 0])               # pads every dim
    yield SampleInput(t(1, 2, 4, 5), [2, 1, 0, 3], "reflect")
    yield SampleInput(t(2, 5), [1, 2], "replicate")
    yield SampleInput(t(1, 2, 3, 4, 2), [1, 1, 2, 0, 0, 1], "replicate")
    yield SampleInput(t(1, 2, 4, 5, noncontiguous=True), [2, 1, -1, 3], "circular")
    yield SampleInput(t(0, 3), [1, 1])


def _pad_errors(info, device):
    x = _t((1, 2, 4), D.float32, device)
    yield ErrorInput(SampleInput(x, [1, 2, 3]), RuntimeError,
                     "Padding length must be divisible by 2")
    yield ErrorInput(SampleInput(x, [1] * 8), RuntimeError,
                     "Padding length should be less than or equal to two times the input "
                     "dimension")
    yield ErrorInput(SampleInput(x, [1, 1], "reflect", 1.0), RuntimeError,
                     "Padding mode \"reflect\" doesn't take in value argument")
    yield ErrorInput(SampleInput(x, [5, 5], "circular"), RuntimeError,
                     "Padding value causes wrapping around more than once")
    yield ErrorInput(SampleInput(x, [1, 1], "mirror"), NotImplementedError,
                     "Unrecognised padding mode mirror")


for _nd in (1, 2, 3):
    for _kind, _reflect in (("reflection", True), ("replication", False)):
        register(OpInfo(getattr(aten, f"{_kind}_pad{_nd}d").default,
                        _pad_nd_ref("reflect" if _reflect else "replicate"), FI,
                        _pad_nd_samples(_nd, _reflect), error_inputs=_pad_nd_errors(_nd,
                                                                                     _reflect)))
register(OpInfo(aten.pad.default, _pad_ref, FI, _pad_samples, error_inputs=_pad_errors))


# --------------------------------------------------------------------------- sampling

def np_nearest_idx(n_in, n_out, scale=None):
    """PyTorch's nearest source index: floor(dst * scale) in float32, clamped."""
    if n_out == n_in:
        return np.arange(n_out)
    if n_out == 2 * n_in:
        return np.arange(n_out) // 2
    sc = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
    return np.minimum(np.floor(np.arange(n_out, dtype=np.float32) * sc).astype(np.int64),
                      n_in - 1)


def _up_size(x, output_size, scales):
    if output_size is not None:
        return list(output_size), (None, None)
    return [int(n * s) for n, s in zip(x.shape[2:], scales)], tuple(scales)


def _nearest_ref(x, output_size, scale_factors):
    out, scales = _up_size(x, output_size, scale_factors)
    return np.take(np.take(x, np_nearest_idx(x.shape[2], out[0], scales[0]), 2),
                   np_nearest_idx(x.shape[3], out[1], scales[1]), 3)


def np_bilinear(a, out, align_corners, scales=(None, None)):
    def src(n_in, n_out, scale):
        dst = np.arange(n_out, dtype=np.float64)
        if align_corners:
            s = dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
        else:
            s = np.maximum((dst + 0.5) * (1.0 / scale if scale else n_in / n_out) - 0.5, 0)
        i0 = np.floor(s).astype(np.int64)
        return i0, np.minimum(i0 + 1, n_in - 1), s - i0
    h0, h1, lh = src(a.shape[2], out[0], scales[0])
    w0, w1, lw = src(a.shape[3], out[1], scales[1])
    rows = a[:, :, h0] * (1 - lh)[:, None] + a[:, :, h1] * lh[:, None]
    return rows[..., w0] * (1 - lw) + rows[..., w1] * lw


def _bilinear_ref(x, output_size, align_corners, scale_factors):
    out, scales = _up_size(x, output_size, scale_factors)
    return np_bilinear(x, out, align_corners, scales)


UPSAMPLE = [((2, 3, 3, 4), [6, 8], None), ((1, 2, 3, 4), [5, 3], None),
            ((1, 2, 3, 5), None, [1.5, 0.6]), ((0, 2, 3, 4), [2, 7], None)]


def _nearest_samples(vec):
    def samples(info, device, dtype):
        for i, (shape, out, scales) in enumerate(UPSAMPLE):
            x = _t(shape, dtype, device, noncontiguous=(i == 1))
            if vec:
                yield SampleInput(x, out, scales)
            elif out is not None:
                yield SampleInput(x, out)
        if not vec:
            yield SampleInput(_t((1, 2, 3, 5), dtype, device), [4, 3], 1.5, 0.6)
    return samples


def _bilinear_samples(vec):
    def samples(info, device, dtype):
        cases = UPSAMPLE + [((2, 2, 4, 4), [1, 5], None)]
        for i, (shape, out, scales) in enumerate(cases):
            x = _t(shape, dtype, device, noncontiguous=(i == 1))
            align = i % 2 == 1
            if vec:
                yield SampleInput(x, out, align, scales)
            elif out is not None:
                yield SampleInput(x, out, align)
        if not vec:
            yield SampleInput(_t((1, 2, 4, 4), dtype, device), [10, 6], False, 2.5, 1.5)
    return samples


def _scaled_ref(bilinear):
    def ref(x, output_size, *rest):
        if bilinear:
            align, rest = rest[0], rest[1:]
        sh, sw = (list(rest) + [None, None])[:2]
        scales = (sh, sw)
        if bilinear:
            return np_bilinear(x, list(output_size), align, scales)
        return np.take(np.take(x, np_nearest_idx(x.shape[2], output_size[0], sh), 2),
                       np_nearest_idx(x.shape[3], output_size[1], sw), 3)
    return ref


def _upsample_errors(bilinear):
    def errors(info, device):
        x = _t((1, 2, 3, 5), D.float32, device)
        mid = (False,) if bilinear else ()
        yield ErrorInput(SampleInput(x, [2, 2], *mid, [2.0, 2.0]), RuntimeError,
                         "Must specify exactly one of output_size and scale_factors")
        yield ErrorInput(SampleInput(x[0], [2, 2], *mid, None), RuntimeError,
                         "It is expected input_size equals to 4")
        yield ErrorInput(SampleInput(x, [0, 2], *mid, None), RuntimeError,
                         "Input and output sizes should be greater than 0")
        if bilinear:
            yield ErrorInput(SampleInput(_t((1, 2, 3, 5), D.int64, device), [4, 4], False,
                                         None), RuntimeError, "not implemented for 'Long'")
    return errors


def np_grid_sample(a, grid, mode, padding_mode, align_corners):
    n, c, h, w = a.shape
    _, ho, wo, _ = grid.shape

    def unnorm(v, size):
        return (v + 1) / 2 * (size - 1) if align_corners else ((v + 1) * size - 1) / 2

    def reflect(v, lo2, hi2):
        if lo2 == hi2:
            return 0.0
        mn, span = lo2 / 2, (hi2 - lo2) / 2
        v = abs(v - mn)
        extra = math.fmod(v, span)
        flips = math.floor(v / span)
        return extra + mn if flips % 2 == 0 else span - extra + mn

    def pad_coord(v, size):
        if padding_mode == 1:
            return min(max(v, 0), size - 1)
        if padding_mode == 2:
            v = reflect(v, 0, 2 * (size - 1)) if align_corners else reflect(v, -1, 2 * size - 1)
            return min(max(v, 0), size - 1)
        return v

    def at(b, y, x):
        if 0 <= y < h and 0 <= x < w:
            return a[b, :, int(y), int(x)]
        return np.zeros(c)

    def cubic(t):
        A = -0.75

        def near(v):
            return ((A + 2) * v - (A + 3)) * v * v + 1

        def far(v):
            return ((A * v - 5 * A) * v + 8 * A) * v - 4 * A
        return [far(t + 1), near(t), near(1 - t), far(2 - t)]

    out = np.zeros((n, c, ho, wo))
    for b, i, j in np.ndindex(n, ho, wo):
        gx, gy = grid[b, i, j]
        if mode == 2:
            # bicubic: the source coordinate is not padded, each of the 16 taps is
            x, y = unnorm(gx, w), unnorm(gy, h)
            x0, y0 = math.floor(x), math.floor(y)
            wx, wy = cubic(x - x0), cubic(y - y0)
            acc = np.zeros(c)
            for jj in range(4):
                for ii in range(4):
                    tx, ty = x0 - 1 + ii, y0 - 1 + jj
                    if padding_mode:
                        tx, ty = pad_coord(tx, w), pad_coord(ty, h)
                    acc += at(b, ty, tx) * wx[ii] * wy[jj]
            out[b, :, i, j] = acc
            continue
        x = pad_coord(unnorm(gx, w), w)
        y = pad_coord(unnorm(gy, h), h)
        if mode == 1:
            out[b, :, i, j] = at(b, np.rint(y), np.rint(x))
        else:
            x0, y0 = math.floor(x), math.floor(y)
            tx, ty = x - x0, y - y0
            out[b, :, i, j] = (at(b, y0, x0) * (1 - tx) * (1 - ty) +
                               at(b, y0, x0 + 1) * tx * (1 - ty) +
                               at(b, y0 + 1, x0) * (1 - tx) * ty +
                               at(b, y0 + 1, x0 + 1) * tx * ty)
    return out


GRID_MODES = [(0, 0, False), (0, 2, True), (1, 1, False), (2, 0, False), (2, 1, True)]


def _grid_samples(info, device, dtype):
    for k, (mode, padding, align) in enumerate(GRID_MODES):
        shape = (2, 3, 4, 5) if k % 2 == 0 else (1, 2, 3, 3)
        yield SampleInput(_t(shape, dtype, device), _t((shape[0], 3, 2, 2), dtype, device, -1.4,
                                                       1.4), mode, padding, align)
    ys, xs = np.meshgrid(np.linspace(-1, 1, 4), np.linspace(-1, 1, 5), indexing="ij")
    identity = np.stack([xs, ys], -1)[None]      # sampling exactly at the pixels
    yield SampleInput(_t((1, 2, 4, 5), dtype, device), _arr(identity, dtype, device), 2, 0,
                      True)


def _grid_errors(info, device):
    f = D.float32
    x = _t((1, 2, 4, 5), f, device)
    yield ErrorInput(SampleInput(x, _t((1, 2, 2, 3), f, device), 0, 0, False), RuntimeError,
                     "expected grid to have size 2 in last dimension")
    yield ErrorInput(SampleInput(x, _t((2, 2, 2, 2), f, device), 0, 0, False), RuntimeError,
                     "expected grid and input to have same batch size")
    yield ErrorInput(SampleInput(x, _t((1, 2, 2, 2), D.float64, device), 0, 0, False),
                     RuntimeError, "expected input and grid to have same dtype")
    yield ErrorInput(SampleInput(x[0], _t((1, 2, 2), f, device), 0, 0, False), RuntimeError,
                     "expected 4D input and grid")


def np_col2im(cols, out, k, d, p, s):
    n, ckk, L = cols.shape
    c = ckk // (k[0] * k[1])
    hp, wp = out[0] + 2 * p[0], out[1] + 2 * p[1]
    bh = (hp - d[0] * (k[0] - 1) - 1) // s[0] + 1
    bw = (wp - d[1] * (k[1] - 1) - 1) // s[1] + 1
    res = np.zeros((n, c, hp, wp))
    cols = cols.reshape(n, c, k[0], k[1], bh, bw)
    for ki, kj, bi, bj in np.ndindex(k[0], k[1], bh, bw):
        res[:, :, bi * s[0] + ki * d[0], bj * s[1] + kj * d[1]] += cols[:, :, ki, kj, bi, bj]
    return res[:, :, p[0]:p[0] + out[0], p[1]:p[1] + out[1]]


def _col2im_ref(x, output_size, kernel_size, dilation, padding, stride):
    args = [_per_dim(v, 2) for v in (output_size, kernel_size, dilation, padding, stride)]
    if x.ndim == 2:
        return np_col2im(x[None], *args)[0]
    return np_col2im(x, *args)


def _blocks(out, k, d, p, s):
    return [(o + 2 * pp - dd * (kk - 1) - 1) // ss + 1 for o, kk, dd, pp, ss in
            zip(out, k, d, p, s)]


COL2IM = [((5, 6), (2, 3), (1, 2), (1, 0), (2, 1), 2, 3), ((4, 4), (2, 2), (1, 1), (0, 0),
                                                           (1, 1), 1, 2),
          ((3, 3), (3, 3), (1, 1), (1, 1), (1, 1), 0, 1)]


def _col2im_samples(info, device, dtype):
    for i, (out, k, d, p, s, n, c) in enumerate(COL2IM):
        bh, bw = _blocks(out, k, d, p, s)
        shape = (c * k[0] * k[1], bh * bw)
        x = _t(shape if i == 1 else (n,) + shape, dtype, device)       # sample 1: unbatched
        yield SampleInput(x, list(out), list(k), list(d), list(p), list(s))


def _col2im_errors(info, device):
    yield ErrorInput(SampleInput(_t((1, 12, 8), D.float32, device), [4, 4], [2, 2], [1, 1],
                                 [0, 0], [1, 1]), RuntimeError,
                     "expected size of input's dimension 2 to match the calculated number of "
                     "sliding blocks")
    yield ErrorInput(SampleInput(_t((1, 5, 4), D.float32, device), [3, 3], [2, 2], [1, 1],
                                 [0, 0], [1, 1]), RuntimeError,
                     "to be divisible by the product of kernel_size")


def _im2col_ref(x, kernel_size, dilation, padding, stride):
    k, d, p, s = (_per_dim(v, 2) for v in (kernel_size, dilation, padding, stride))
    xb = x if x.ndim == 4 else x[None]
    n, c, h, w = xb.shape
    bh, bw = _blocks((h, w), k, d, p, s)
    xp = np.pad(xb, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    out = np.zeros((n, c, k[0], k[1], bh, bw), x.dtype)
    for ki, kj, bi, bj in np.ndindex(k[0], k[1], bh, bw):
        out[:, :, ki, kj, bi, bj] = xp[:, :, bi * s[0] + ki * d[0], bj * s[1] + kj * d[1]]
    out = out.reshape(n, c * k[0] * k[1], bh * bw)
    return out if x.ndim == 4 else out[0]


def _im2col_samples(info, device, dtype):
    yield SampleInput(_t((2, 3, 5, 6), dtype, device), [2, 3], [1, 2], [1, 0], [2, 1])
    yield SampleInput(_t((3, 4, 4), dtype, device), [2, 2], [1, 1], [0, 0], [1, 1])
    yield SampleInput(_t((0, 2, 3, 3), dtype, device), [3, 3], [1, 1], [1, 1], [1, 1])


def _im2col_errors(info, device):
    yield ErrorInput(SampleInput(_t((1, 1, 2, 2), D.float32, device), [3, 3], [1, 1], [0, 0],
                                 [1, 1]), RuntimeError, "must be at least one")
    yield ErrorInput(SampleInput(_t((2, 2), D.float32, device), [1, 1], [1, 1], [0, 0],
                                 [1, 1]), RuntimeError, "Expected 3D or 4D")


register(
    OpInfo(aten.upsample_nearest2d.vec, _nearest_ref, FI, _nearest_samples(True),
           error_inputs=_upsample_errors(False)),
    OpInfo(aten.upsample_nearest2d.default, _scaled_ref(False), F, _nearest_samples(False)),
    OpInfo(aten.upsample_bilinear2d.vec, _floatref(_bilinear_ref), F, _bilinear_samples(True),
           tols=TOLS, error_inputs=_upsample_errors(True)),
    OpInfo(aten.upsample_bilinear2d.default, _floatref(_scaled_ref(True)), F,
           _bilinear_samples(False), tols=TOLS),
    OpInfo(aten.grid_sampler_2d.default, _floatref(np_grid_sample), F, _grid_samples,
           tols=TOLS, error_inputs=_grid_errors),
    OpInfo(aten.col2im.default, _floatref(_col2im_ref), F, _col2im_samples, tols=TOLS,
           error_inputs=_col2im_errors),
    OpInfo(aten.im2col.default, _im2col_ref, F, _im2col_samples, error_inputs=_im2col_errors),
)


# --------------------------------------------------------------------------- losses

def _pointwise_loss_ref(fn):
    def ref(x, t, reduction=1, *args):
        return _reduce(fn(x - t, *args), reduction)
    return _floatref(ref)


def _smooth_l1(d, beta=1.0):
    a = np.abs(d)
    return a if beta == 0 else np.where(a < beta, 0.5 * a * a / beta, a - 0.5 * beta)


def _huber(d, delta=1.0):
    a = np.abs(d)
    return np.where(a < delta, 0.5 * a * a, delta * (a - 0.5 * delta))


def _pointwise_loss_samples(extra):
    def samples(info, device, dtype):
        def t(*shape, **kw):
            return _t(shape, dtype, device, -3, 3, **kw)
        a0 = extra[0] if extra else ()
        for r in (0, 1, 2):
            yield SampleInput(t(3, 4), t(3, 4), r, *a0)
        yield SampleInput(t(3, 4, noncontiguous=True), t(4))                  # broadcasts
        yield SampleInput(t(), t(), 2, *a0)
        yield SampleInput(t(0), t(0), 1, *a0)                                 # NaN
        yield SampleInput(t(0, 2), t(0, 2), 2, *a0)
        for a in extra[1:]:
            yield SampleInput(t(2, 5), t(2, 5), 1, *a)
    return samples


def _pointwise_loss_errors(bad=None):
    def errors(info, device):
        yield ErrorInput(SampleInput(_t((2,), D.float32, device), _t((3,), D.float32, device)),
                         RuntimeError, "must be broadcastable")
        if bad is not None:
            yield ErrorInput(SampleInput(_t((2,), D.float32, device), _t((2,), D.float32,
                                                                          device), 1, bad[0]),
                             RuntimeError, bad[1])
    return errors


POINTWISE_LOSSES = [
    (aten.mse_loss.default, lambda d: d * d, [], None),
    (aten.l1_loss.default, np.abs, [], None),
    (aten.smooth_l1_loss.default, _smooth_l1, [(0.5,), (0.0,), (2.0,)],
     (-1.0, "smooth_l1_loss does not support negative values for beta")),
    (aten.huber_loss.default, _huber, [(0.5,), (2.0,)],
     (0.0, "huber_loss does not support non-positive values for delta")),
]
for _op, _fn, _extra, _bad in POINTWISE_LOSSES:
    register(OpInfo(_op, _pointwise_loss_ref(_fn), F, _pointwise_loss_samples(_extra),
                    tols=TOLS, error_inputs=_pointwise_loss_errors(_bad)))


def _bce_ref(x, t, w=None, reduction=1):
    with np.errstate(divide="ignore"):
        loss = -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log1p(-x), -100))
    if w is not None:
        loss = loss * w
    return _reduce(loss, reduction)


def _bce_samples(info, device, dtype):
    x = np.random.default_rng(7).random((3, 4)) * 0.98 + 0.01
    x[0, 0], x[0, 1] = 0.0, 1.0               # log(0) is clamped at -100
    for r in (0, 1, 2):
        yield SampleInput(_arr(x, dtype, device), _t((3, 4), dtype, device, 0, 1),
                          _t((3, 4), dtype, device, 0, 2) if r else None, r)
    yield SampleInput(_t((2, 3), dtype, device, 0.01, 0.99), _t((2, 3), dtype, device, 0, 1),
                      _t((3,), dtype, device, 0, 2))                     # broadcast weight
    yield SampleInput(_t((0,), dtype, device, 0, 1), _t((0,), dtype, device, 0, 1))


def _bce_errors(info, device):
    yield ErrorInput(SampleInput(_t((3,), D.float32, device, 0, 1),
                                 _t((2,), D.float32, device, 0, 1)), ValueError,
                     "that is different to the input size")


def _bce_logits_ref(x, t, w=None, pos_weight=None, reduction=1):
    log_sig, log_1m = -np.logaddexp(0, -x), -np.logaddexp(0, x)
    pw = 1 if pos_weight is None else pos_weight
    loss = -(pw * t * log_sig + (1 - t) * log_1m)
    if w is not None:
        loss = loss * w
    return _reduce(loss, reduction)


def _bce_logits_samples(info, device, dtype):
    def t(*shape, lo=None, hi=None):
        return _t(shape, dtype, device, lo, hi)
    yield SampleInput(t(3, 4, lo=-30, hi=30), t(3, 4, lo=0, hi=1))
    yield SampleInput(t(3, 4), t(3, 4, lo=0, hi=1), t(3, 4, lo=0, hi=1), t(4, lo=0, hi=3), 0)
    yield SampleInput(t(2, 3), t(2, 3, lo=0, hi=1), None, t(3, lo=0, hi=3), 2)
    yield SampleInput(t(0, 2), t(0, 2, lo=0, hi=1))


def _bce_logits_errors(info, device):
    yield ErrorInput(SampleInput(_t((3,), D.float32, device), _t((2,), D.float32, device)),
                     ValueError, r"Target size \(\[2\]\) must be the same as input size")


def np_nll(logp, t, w, reduction, ignore_index):
    """PyTorch's nll_loss_forward on (N, C) or (C,): (output, total_weight).  Unreduced
    2-D input leaves total_weight 0; a 1-D input always takes the reduced path."""
    lp = logp.reshape(-1, logp.shape[-1])
    tt = np.asarray(t).reshape(-1)
    ww = np.ones(lp.shape[1]) if w is None else w
    losses = np.zeros(len(tt))
    weights = np.zeros(len(tt))
    for i, ti in enumerate(tt):
        if ti != ignore_index:
            losses[i], weights[i] = -ww[ti] * lp[i, ti], ww[ti]
    if reduction == 0 and logp.ndim == 2:
        return losses, np.zeros(())
    if not len(tt):
        return (np.float64("nan") if reduction == 1 else np.zeros(())), np.zeros(())
    total = weights.sum()
    out = losses.sum() / total if reduction == 1 else losses.sum()
    return np.asarray(out), np.asarray(total)


def _nll_forward_ref(x, t, w, reduction, ignore_index):
    return np_nll(x, t, w, reduction, ignore_index)


def _logp(shape, dtype, device, cdim=1):
    a = np.random.default_rng(sum(shape) + 11).standard_normal(shape)
    return _arr(np_softmax(a, min(cdim, a.ndim - 1), log=True), dtype, device)


def _nll_forward_samples(info, device, dtype):
    t = _idx([0, 3, 1, -100, 3], device)
    for r in (0, 1, 2):
        yield SampleInput(_logp((5, 4), dtype, device), t, None, r, -100)
        yield SampleInput(_logp((5, 4), dtype, device), t, _t((4,), dtype, device, 0.5, 2), r,
                          -100)
    yield SampleInput(_logp((4,), dtype, device), _idx(2, device), None, 0, -100)   # 1-D
    yield SampleInput(_logp((4,), dtype, device), _idx(2, device), None, 1, -100)
    yield SampleInput(_logp((3, 4), dtype, device), _idx([1, 1, 2], device), None, 1, 1)
    yield SampleInput(_logp((2, 3), dtype, device), _idx([-100, -100], device), None, 1,
                      -100)                                    # every target ignored: NaN
    yield SampleInput(_logp((0, 3), dtype, device), _idx(np.zeros(0), device), None, 2, -100)


def _nll_errors(forward):
    def errors(info, device):
        def s(x, t, w=None):
            return SampleInput(x, t, w, 1, -100) if forward else SampleInput(x, t, w)
        f = D.float32
        x = _t((2, 3), f, device)
        yield ErrorInput(s(x, _idx([0, 5], device)), IndexError, "Target 5 is out of bounds",
                         meta=False)
        yield ErrorInput(s(x, _idx([0, 1], device, D.int32)), RuntimeError,
                         "expected scalar type Long but found Int")
        yield ErrorInput(s(x, _idx([0, 1], device), _t((2,), f, device)), RuntimeError,
                         "weight tensor should be defined either for all 3 classes or no "
                         "classes")
        if forward:
            yield ErrorInput(s(_t((2, 3, 4), f, device), _idx([0, 1], device)), RuntimeError,
                             "input tensor should be 1D or 2D")
        else:
            yield ErrorInput(s(x, _idx([0, 1, 2], device)), ValueError,
                             r"Expected input batch_size \(2\) to match target batch_size "
                             r"\(3\)")
    return errors


def _nll_loss_ref(x, t, w=None, reduction=1, ignore_index=-100):
    if x.ndim > 2:       # (N, C, d1, ...) -> (N * d1 * ..., C)
        c = x.shape[1]
        flat = np.moveaxis(x, 1, -1).reshape(-1, c)
        out = np_nll(flat, t.reshape(-1), w, reduction, ignore_index)[0]
        return out.reshape(t.shape) if reduction == 0 else out
    return np_nll(x, t, w, reduction, ignore_index)[0]


def _nll_loss_samples(info, device, dtype):
    yield SampleInput(_logp((5, 4), dtype, device), _idx([0, 3, 1, -100, 3], device))
    yield SampleInput(_logp((5, 4), dtype, device), _idx([0, 3, 1, 2, 3], device),
                      _t((4,), dtype, device, 0.5, 2), 2)
    yield SampleInput(_logp((4,), dtype, device), _idx(2, device))
    t = np.random.default_rng(3).integers(0, 3, (2, 4, 5))
    t[0, 0, 0] = 1
    yield SampleInput(_logp((2, 3, 4, 5), dtype, device), _idx(t, device), None, 0, 1)
    yield SampleInput(_logp((2, 3, 4, 5), dtype, device), _idx(t, device))
    yield SampleInput(_logp((0, 3), dtype, device), _idx(np.zeros(0), device))


def np_cross_entropy(a, t, w=None, reduction=1, ignore_index=-100, ls=0.0):
    cdim = 1 if a.ndim >= 2 else 0
    logp = np_softmax(a, cdim, log=True)
    c = a.shape[cdim]
    lp = np.moveaxis(logp, cdim, -1).reshape(-1, c)
    ww = np.ones(c) if w is None else w
    if np.asarray(t).dtype.kind == "f":                 # class probabilities
        tt = np.moveaxis(t, cdim, -1).reshape(-1, c) * (1 - ls) + ls / c
        loss = -(lp * tt * ww).sum(-1)
        if reduction == 0:
            return loss.reshape(np.moveaxis(logp, cdim, -1).shape[:-1])
        return loss.sum() if reduction == 2 else loss.sum() / lp.shape[0]
    tt = np.asarray(t).reshape(-1)
    nll, smooth, wsum = np.zeros(len(tt)), np.zeros(len(tt)), np.zeros(len(tt))
    for i, ti in enumerate(tt):
        if ti != ignore_index:
            nll[i], smooth[i], wsum[i] = -ww[ti] * lp[i, ti], -(ww * lp[i]).sum(), ww[ti]
    if reduction == 0:
        return ((1 - ls) * nll + ls / c * smooth).reshape(np.shape(t))
    if reduction == 2:
        return (1 - ls) * nll.sum() + ls / c * smooth.sum()
    total = wsum.sum()
    return ((1 - ls) * nll.sum() + ls / c * smooth.sum()) / total if len(tt) else \
        np.float64("nan")


def _cross_entropy_ref(x, t, w=None, reduction=1, ignore_index=-100, label_smoothing=0.0):
    return np_cross_entropy(x, t, w, reduction, ignore_index, label_smoothing)


def _cross_entropy_samples(info, device, dtype):
    def t(*shape, lo=None, hi=None):
        return _t(shape, dtype, device, lo, hi)
    tgt = _idx([0, 4, -100, 1, 1, 3], device)
    yield SampleInput(t(6, 5), tgt)
    yield SampleInput(t(6, 5), _idx([0, 4, 2, 1, 1, 3], device), t(5, lo=0.5, hi=2), 0)
    yield SampleInput(t(6, 5), _idx([0, 4, 2, -1, 1, 3], device), t(5, lo=0.5, hi=2), 1, -1,
                      0.2)
    yield SampleInput(t(6, 5), tgt, None, 2, -100, 0.1)
    yield SampleInput(t(6, 5), tgt, None, 0, -100, 0.3)
    k = np.random.default_rng(5).integers(0, 4, (2, 3, 2))
    yield SampleInput(t(2, 4, 3, 2), _idx(k, device), None, 0)                    # K-dim
    yield SampleInput(t(2, 4, 3, 2), _idx(k, device), None, 1, -100, 0.1)
    yield SampleInput(t(5), _idx(3, device))                                       # unbatched
    p = np.random.default_rng(6).random((4, 5))
    p /= p.sum(1, keepdims=True)
    for r in (0, 1, 2):                                                 # probabilities
        yield SampleInput(t(4, 5), _arr(p, dtype, device), t(5, lo=0, hi=1), r, -100,
                          0.3 if r else 0.0)
    yield SampleInput(t(0, 5), _idx(np.zeros(0), device))                        # NaN


def _cross_entropy_errors(info, device):
    f = D.float32
    x, p = _t((4, 5), f, device), _t((4, 5), f, device, 0, 1)
    yield ErrorInput(SampleInput(x, _idx([0, 1, 2, 3], device), None, 1, -100, 1.5),
                     RuntimeError, "label_smoothing must be between 0.0 and 1.0")
    yield ErrorInput(SampleInput(x, p, None, 1, 2), RuntimeError,
                     "ignore_index is not supported for floating point target")
    yield ErrorInput(SampleInput(x, _t((4, 4), f, device, 0, 1)), RuntimeError,
                     "Expected input and target to have the same shape")


def _kl_div_ref(x, t, reduction=1, log_target=False):
    if log_target:
        loss = np.exp(t) * (t - x)
    else:
        loss = np.where(t > 0, t * (np.log(np.where(t > 0, t, 1)) - x), 0.0)
    return _reduce(loss, reduction)


def _kl_div_samples(info, device, dtype):
    t = np.random.default_rng(8).random((3, 4))
    t[0, 0] = 0.0                          # contributes 0, not NaN
    for r in (0, 1, 2):
        yield SampleInput(_logp((3, 4), dtype, device), _arr(t, dtype, device), r)
    yield SampleInput(_logp((3, 4), dtype, device), _logp((3, 4), dtype, device), 2,
                      log_target=True)
    yield SampleInput(_t((0, 2), dtype, device), _t((0, 2), dtype, device, 0, 1), 2)


register(
    OpInfo(aten.binary_cross_entropy.default, _floatref(_bce_ref), F, _bce_samples, tols=TOLS,
           error_inputs=_bce_errors,
           known_failures=[_grad_kink("samples with probabilities exactly 0 and 1: the "
                                      "finite-difference step leaves the domain, and the log "
                                      "is clamped at -100 there")]),
    OpInfo(aten.binary_cross_entropy_with_logits.default, _floatref(_bce_logits_ref), F,
           _bce_logits_samples, tols=TOLS, error_inputs=_bce_logits_errors),
    OpInfo(aten.nll_loss_forward.default, _floatref(_nll_forward_ref), F, _nll_forward_samples,
           tols=TOLS, error_inputs=_nll_errors(True)),
    OpInfo(aten.nll_loss.default, _floatref(_nll_loss_ref), F, _nll_loss_samples, tols=TOLS,
           error_inputs=_nll_errors(False)),
    OpInfo(aten.nll_loss_nd.default, _floatref(_nll_loss_ref), F, _nll_loss_samples,
           tols=TOLS, error_inputs=_nll_errors(False)),
    OpInfo(aten.cross_entropy_loss.default, _floatref(_cross_entropy_ref), F,
           _cross_entropy_samples, tols=TOLS, error_inputs=_cross_entropy_errors),
    OpInfo(aten.kl_div.default, _floatref(_kl_div_ref), F, _kl_div_samples, tols=TOLS,
           known_failures=[_grad_kink("a target of exactly 0 (xlogy's branch point): the "
                                      "finite-difference step crosses the branch")]),
)


# --------------------------------------------------------------------------- distances

def np_pnorm(d, p, axis=-1, keepdims=False):
    if p == 0:
        return (d != 0).sum(axis, keepdims=keepdims).astype(d.dtype)
    if p == np.inf:
        return np.abs(d).max(axis, keepdims=keepdims, initial=0.0)
    return (np.abs(d) ** p).sum(axis, keepdims=keepdims) ** (1 / p)


def _pdist_ref(x, p=2.0):
    n = x.shape[0]
    return np.array([np_pnorm(x[i] - x[j], p) for i in range(n) for j in range(i + 1, n)])


def _pdist_samples(info, device, dtype):
    x = _t((5, 3), dtype, device)
    a = _np(x)
    a[1] = a[0]                                   # a zero distance
    for p in (2.0, 0.0, 1.5, INF):
        yield SampleInput(_arr(a, dtype, device), p)
    yield SampleInput(_t((4, 2), dtype, device, noncontiguous=True), 1.0)
    yield SampleInput(_t((1, 3), dtype, device))
    yield SampleInput(_t((0, 3), dtype, device), 2.0)


def _pdist_errors(info, device):
    yield ErrorInput(SampleInput(_t((2, 2, 2), D.float32, device)), RuntimeError,
                     "pdist only supports 2D tensors, got: 3D")
    yield ErrorInput(SampleInput(_t((2, 2), D.float32, device), -1.0), RuntimeError,
                     "pdist only supports non-negative p values")
    yield ErrorInput(SampleInput(_t((2, 2), D.int64, device)), RuntimeError,
                     "pdist only supports floating-point dtypes")


def _cdist_ref(x1, x2, p=2.0, compute_mode=None):
    return np_pnorm(x1[..., :, None, :] - x2[..., None, :, :], p)


def _cdist_samples(info, device, dtype):
    def t(*shape, **kw):
        return _t(shape, dtype, device, **kw)
    yield SampleInput(t(2, 4, 3), t(1, 5, 3), 2.0, None)
    yield SampleInput(t(3, 2), t(4, 2, noncontiguous=True), 1.0, None)
    yield SampleInput(t(3, 2), t(4, 2), 0.0, 0)
    yield SampleInput(t(2, 3, 2), t(3, 2), INF, None)
    yield SampleInput(t(0, 3), t(2, 3), 3.0, None)


def _cdist_errors(info, device):
    f = D.float32
    yield ErrorInput(SampleInput(_t((2, 3), f, device), _t((2, 4), f, device), 2.0, None),
                     RuntimeError, "X1 and X2 must have the same number of columns. X1: 3 "
                                   "X2: 4")
    yield ErrorInput(SampleInput(_t((2, 3), D.int64, device), _t((2, 3), f, device), 2.0,
                                 None), RuntimeError, "cdist only supports floating-point "
                                                      "dtypes, X1 got: Long")
    yield ErrorInput(SampleInput(_t((3,), f, device), _t((2, 3), f, device), 2.0, None),
                     RuntimeError, "cdist only supports at least 2D tensors, X1 got: 1D")
    yield ErrorInput(SampleInput(_t((2, 3), f, device), _t((2, 3), f, device), -1.0, None),
                     RuntimeError, "cdist only supports non-negative p values")


def _cdist_public_samples(info, device, dtype):
    def t(*shape):
        return _t(shape, dtype, device)
    yield SampleInput(t(2, 4, 3), t(1, 5, 3))
    yield SampleInput(t(3, 2), t(4, 2), 1.0)
    yield SampleInput(t(0, 3), t(2, 3), 2.0, 1)


def _pairwise_ref(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return np_pnorm(x1 - x2 + eps, p, -1, keepdim)


def _pairwise_samples(info, device, dtype):
    def t(*shape):
        return _t(shape, dtype, device)
    yield SampleInput(t(4, 3), t(1, 3))
    yield SampleInput(t(4, 3), t(4, 3), 1.0, 1e-6, True)
    yield SampleInput(t(3), t(3), 3.0)
    yield SampleInput(t(2, 4), t(2, 4), INF, 0.0)
    yield SampleInput(t(0, 3), t(0, 3))


def _cosine_ref(x1, x2, dim=1, eps=1e-8):
    x1, x2 = np.broadcast_arrays(x1.astype(np.float64), x2.astype(np.float64))
    n1 = np.maximum(np.sqrt((x1 * x1).sum(dim, keepdims=True)), eps)
    n2 = np.maximum(np.sqrt((x2 * x2).sum(dim, keepdims=True)), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _cosine_out(x1, x2, *args, **kwargs):
    d = promote(x1.dtype, x2.dtype)
    return d if category(d) == 2 else np.dtype(np.float32)


def _cosine_samples(info, device, dtype):
    def t(*shape, **kw):
        return _t(shape, dtype, device, **kw)
    yield SampleInput(t(4, 3), t(1, 3))
    yield SampleInput(t(4, 3, noncontiguous=True), t(4, 3), 0)
    yield SampleInput(_arr(np.zeros((2, 3)), dtype, device), t(2, 3))       # eps guards 0/0
    yield SampleInput(t(2, 3, 4), t(3, 4), -1, 1e-3)
    if dtype is D.float32:                                # integers compute in float32
        yield SampleInput(_idx([[1, 2]], device), _idx([[2, 4]], device))


register(
    OpInfo(aten._pdist_forward.default, _floatref(_pdist_ref), F, _pdist_samples, tols=TOLS,
           error_inputs=_pdist_errors),
    OpInfo(aten._cdist_forward.default, _floatref(_cdist_ref), F, _cdist_samples, tols=TOLS,
           error_inputs=_cdist_errors),
    OpInfo(aten.cdist.default, _floatref(_cdist_ref), F, _cdist_public_samples, tols=TOLS),
    OpInfo(aten.pairwise_distance.default, _floatref(_pairwise_ref), F, _pairwise_samples,
           tols=TOLS),
    OpInfo(aten.cosine_similarity.default, _floatref(_cosine_ref, _cosine_out), F,
           _cosine_samples, tols=TOLS,
           known_failures=[_grad_kink("a zero-vector sample: the norm's eps clamp (1e-8) is "
                                      "far below the finite-difference step")]),
)


# --------------------------------------------------------------------------- attention

def _sdpa_ref(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
              enable_gqa=False):
    if enable_gqa and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        rep = q.shape[-3] // k.shape[-3]
        k, v = np.repeat(k, rep, axis=-3), np.repeat(v, rep, axis=-3)
    s = (q @ np.swapaxes(k, -1, -2)) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if is_causal:
        attn_mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), bool))
    if attn_mask is not None:
        s = np.where(attn_mask, s, -np.inf) if attn_mask.dtype == bool else s + attn_mask
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    p = np.where(np.isneginf(m), 0.0, e / e.sum(-1, keepdims=True))  # masked rows give 0
    return p @ v


def _sdpa_samples(info, device, dtype):
    def t(*shape, **kw):
        return _t(shape, dtype, device, -2, 2, **kw)
    q, k, v = t(2, 2, 3, 4), t(2, 2, 5, 4), t(2, 2, 5, 3)
    yield SampleInput(q, k, v)
    yield SampleInput(q, k, v, scale=0.3)
    mask = np.random.default_rng(9).random((3, 5)) > 0.4
    mask[1] = False                               # a fully masked row
    yield SampleInput(q, k, v, _arr(mask, D.bool, device))
    yield SampleInput(q, k, v, t(2, 1, 3, 5))                                  # additive mask
    yield SampleInput(t(2, 2, 5, 4), k, v, None, 0.0, True)                    # causal
    yield SampleInput(t(1, 4, 3, 4), t(1, 2, 5, 4), t(1, 2, 5, 3), enable_gqa=True)
    yield SampleInput(t(3, 4, noncontiguous=True), t(5, 4), t(5, 2))         # 2-D


def _sdpa_errors(info, device):
    f = D.float32
    q, k, v = _t((1, 3, 4), f, device), _t((1, 5, 4), f, device), _t((1, 5, 2), f, device)
    yield ErrorInput(SampleInput(q, k, v, _arr(np.ones((3, 5)), D.bool, device), 0.0, True),
                     RuntimeError, "Explicit attn_mask should not be set when is_causal=True")
    yield ErrorInput(SampleInput(q, k.double(), v), RuntimeError,
                     "Expected query, key, and value to have the same dtype")
    yield ErrorInput(SampleInput(q, _t((1, 5, 3), f, device), v), RuntimeError,
                     "expected key's last dimension")


register(OpInfo(aten.scaled_dot_product_attention.default, _floatref(_sdpa_ref), F,
                _sdpa_samples, tols=SUMS, error_inputs=_sdpa_errors))


# --------------------------------------------------------------------------- fft

_NORM_R2C = {0: "backward", 1: "ortho", 2: "forward"}     # normalization: none, 1/sqrt(n), 1/n
_NORM_C2R = {0: "forward", 1: "ortho", 2: "backward"}


def _complex_of(x, *args):
    return np.dtype(np.complex64) if x.dtype == np.float32 else np.dtype(np.complex128)


def _fft_r2c_ref(x, dim, normalization, onesided):
    out = (np.fft.rfftn if onesided else np.fft.fftn)(x.astype(np.float64), axes=list(dim),
                                                       norm=_NORM_R2C[normalization])
    return out.astype(_complex_of(x))


def _fft_r2c_samples(info, device, dtype):
    yield SampleInput(_t((3, 6, 5), dtype, device), [1, 2], 0, True)
    yield SampleInput(_t((4, 6), dtype, device, noncontiguous=True), [-1], 1, False)
    yield SampleInput(_t((5,), dtype, device), [0], 2, True)
    yield SampleInput(_t((2, 3, 4), dtype, device), [0, 2], 2, False)


def _fft_r2c_errors(info, device):
    yield ErrorInput(SampleInput(_t((4,), D.int64, device), [0], 0, True), RuntimeError,
                     "expected a real floating input")
    yield ErrorInput(SampleInput(_t((4, 4), D.float32, device), [0, -2], 0, True),
                     RuntimeError, "dims must be unique")


def _fft_c2r_ref(x, dim, normalization, last_dim_size):
    dims = list(dim)
    s = [x.shape[d] for d in dims[:-1]] + [last_dim_size]
    out = np.fft.irfftn(x.astype(np.complex128), s=s, axes=dims, norm=_NORM_C2R[normalization])
    return out.astype(np.float32 if x.dtype == np.complex64 else np.float64)


def _fft_c2r_samples(info, device, dtype):
    real = D.float32 if dtype is D.complex64 else D.float64
    for shape, dims, norm in (((3, 6, 5), [1, 2], 0), ((4, 6), [1], 1), ((5, 4), [0], 2)):
        a = _np(_t(shape, real, device))
        half = np.fft.rfftn(a, axes=dims)                 # a Hermitian half-spectrum
        yield SampleInput(_arr(half, dtype, device), dims, norm, shape[dims[-1]])


def _fft_c2r_errors(info, device):
    yield ErrorInput(SampleInput(_t((4,), D.float32, device), [0], 0, 6), RuntimeError,
                     "expected a complex input")
    yield ErrorInput(SampleInput(_t((4,), D.complex64, device), [0], 0, 0), RuntimeError,
                     r"Invalid number of data points \(0\) specified")


register(
    OpInfo(aten._fft_r2c.default, _fft_r2c_ref, F, _fft_r2c_samples, tols=SUMS,
           error_inputs=_fft_r2c_errors),
    OpInfo(aten._fft_c2r.default, _fft_c2r_ref, C, _fft_c2r_samples, tols=SUMS,
           error_inputs=_fft_c2r_errors),
)
