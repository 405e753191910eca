"""OpInfo entries for the reductions (fnx/ir/aten/reduction.py).

The NumPy references restate PyTorch's rules on their own: sum/prod/cumsum of bool and
integers give int64 unless ``dtype=`` says otherwise (and ``dtype=`` converts the input
first), mean/var/std need floating input, var/std/norm of complex input are real,
any/all give bool (uint8 for uint8), max-like ops propagate NaN and their indices pick
the first NaN or the first of ties, and over an empty extent sum is 0, prod 1, mean nan
while max-like ops raise.  References compute in float64 (complex128) and round once.

Samples: every dim form (None, [], one dim, several, negative), keepdim, 0-dim and empty
inputs (empty reduced dims and empty kept dims), non-contiguous and transposed views,
``dtype=`` arguments, and NaN/inf for floating dtypes.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sp

import fnx

from ...core import dtype as D
from ...ir.aten import reduction as R
from ..database import ALL_DTYPES, FLOATS, INTS, ErrorInput, OpInfo, SampleInput, register
from ..database import make_tensor as _make_tensor
from ..reference_dtypes import category, np_dtype

NUMERIC = FLOATS + INTS
COMPLEX = (D.complex64, D.complex128)
F64, C128 = np.dtype(np.float64), np.dtype(np.complex128)
SPECIAL = [np.nan, 1.0, -np.inf, 2.0, np.inf, -0.0, 0.0, -3.5, np.nan, 7.0, 1.0, -1.0]
# sums of half types: the reference rounds a float64 sum, the kernels a float32 one
TOLS = {D.float16: (2e-3, 1e-3), D.bfloat16: (1.6e-2, 1e-2), D.float32: (1.3e-6, 1e-4)}


def make_tensor(shape, dtype, device="cpu", **kw):
    """``fnx.testing.make_tensor``, also for 0-dim complex tensors (which it cannot make:
    NumPy turns the 0-dim complex array into a scalar)."""
    if tuple(shape) == () and dtype.is_complex:
        return _make_tensor((1,), dtype, device, **kw).reshape(())
    return _make_tensor(shape, dtype, device, **kw)


def _is_float(dtype) -> bool:
    return dtype.is_floating_point or dtype.is_complex


def _special(dtype, device, shape=(3, 4)):
    a = np.array(SPECIAL, np.float64).reshape(shape).astype(dtype.numpy)
    t = fnx.from_numpy(a)
    return t if str(device) == "cpu" else t.to(device)


# --------------------------------------------------------------------------- reference helpers

def _axes(dim, ndim):
    """PyTorch's dims as a NumPy axis tuple: None or [] is every dim; a 0-dim array has
    none."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = [dim]
    if len(dim) == 0:
        return tuple(range(ndim))
    return tuple(sorted(d % ndim for d in dim)) if ndim else ()


def _wide(dt):
    """Where a reference accumulates: floats in float64, complex in complex128, integers
    and bool in int64 (integer wraparound is the same modulo the result width)."""
    c = category(dt)
    return F64 if c == 2 else C128 if c == 3 else np.dtype(np.int64)


def _sum_dtype(a, dtype):
    if dtype is not None:
        return np_dtype(dtype)
    return a.dtype if category(a.dtype) >= 2 else np.dtype(np.int64)


def _reduce_ref(fn, out_dtype):
    """A reference for a sum-like reduction: ``fn(wide array, axes, keepdims)``."""
    def ref(a, dim=None, keepdim=False, *, dtype=None):
        out = out_dtype(a, dtype)
        x = a.astype(out)           # dtype= converts first (a float sum to int truncates)
        with np.errstate(all="ignore"):
            r = fn(x.astype(_wide(out)), _axes(dim, a.ndim), keepdim)
        return np.asarray(r).astype(out)
    return ref


def _full_ref(ref):
    """The all-dims overload (``sum(x, *, dtype)``) of a dim reference."""
    return lambda a, *, dtype=None: ref(a, None, False, dtype=dtype)


def _mean_dtype(a, dtype):
    return np_dtype(dtype) if dtype is not None else a.dtype


_sum_ref = _reduce_ref(lambda x, ax, k: np.sum(x, axis=ax, keepdims=k), _sum_dtype)
_prod_ref = _reduce_ref(lambda x, ax, k: np.prod(x, axis=ax, keepdims=k), _sum_dtype)
# the mean is sum / count: 0 / 0 = nan over no elements
_mean_ref = _reduce_ref(lambda x, ax, k: np.sum(x, axis=ax, keepdims=k) /
                        int(np.prod([x.shape[i] for i in ax])), _mean_dtype)


def _prod_dim_ref(a, dim, keepdim=False, *, dtype=None):
    return _prod_ref(a, [dim], keepdim, dtype=dtype)


def _minmax_ref(fn):
    def ref(a, dim=(), keepdim=False):
        with np.errstate(invalid="ignore"):
            return np.asarray(fn(a, axis=_axes(dim, a.ndim), keepdims=keepdim)).astype(a.dtype)
    return ref


def _full_minmax_ref(fn):
    return lambda a: np.asarray(fn(a)).astype(a.dtype)


def _arg(fn, a, axis):
    """NumPy's argmax/argmin return the first NaN, else the first of ties: PyTorch's rule.
    Half types compare exactly in float32."""
    x = a.astype(np.float32) if a.dtype.itemsize == 2 and category(a.dtype) == 2 else a
    return fn(x, axis=axis)


def _dim_minmax_ref(fn):
    def ref(a, dim, keepdim=False):
        if a.ndim == 0:
            return a.copy(), np.zeros((), np.int64)
        d = dim % a.ndim
        idx = np.expand_dims(_arg(fn, a, d), d)
        vals = np.take_along_axis(a, idx, d)
        if not keepdim:
            idx, vals = idx.squeeze(d), vals.squeeze(d)
        return vals, idx.astype(np.int64)
    return ref


def _argminmax_ref(fn):
    def ref(a, dim=None, keepdim=False):
        if dim is None or a.ndim == 0:
            r = np.asarray(_arg(fn, a.reshape(-1), 0))
            return r.reshape((1,) * a.ndim if keepdim else ()).astype(np.int64)
        r = _arg(fn, a, dim % a.ndim)
        return (np.expand_dims(r, dim % a.ndim) if keepdim else r).astype(np.int64)
    return ref


def _aminmax_ref(a, *, dim=None, keepdim=False):
    if dim is None:
        lo, hi = np.min(a), np.max(a)
        shape = (1,) * a.ndim if keepdim else ()
        return np.asarray(lo).reshape(shape), np.asarray(hi).reshape(shape)
    return (_minmax_ref(np.min)(a, [dim], keepdim), _minmax_ref(np.max)(a, [dim], keepdim))


def _bool_ref(fn):
    def ref(a, dim=None, keepdim=False):
        r = np.asarray(fn(a != 0, axis=_axes(dim, a.ndim), keepdims=keepdim))
        return r.astype(np.uint8 if a.dtype == np.uint8 else np.bool_)
    return ref


def _var_np(a, dim, correction, keepdim):
    corr = 1 if correction is None else correction
    x = a.astype(_wide(a.dtype))
    axes = _axes(dim, a.ndim)
    n = int(np.prod([a.shape[i] for i in axes]))
    with np.errstate(all="ignore"):
        mean = np.sum(x, axis=axes, keepdims=True) / n
        dev = np.abs(x - mean) ** 2
        r = np.sum(dev, axis=axes, keepdims=keepdim) / max(0, n - corr)
    real = np.float32 if a.dtype == np.complex64 else np.float64 if a.dtype == C128 \
        else a.dtype
    return np.asarray(r).real.astype(real)


def _var_ref(a, dim=None, *, correction=None, keepdim=False):
    return _var_np(a, dim, correction, keepdim)


def _std_ref(a, dim=None, *, correction=None, keepdim=False):
    v = _var_np(a, dim, correction, keepdim)
    return np.sqrt(v.astype(F64)).astype(v.dtype)


def _var_dim_ref(a, dim, unbiased=True, keepdim=False):
    return _var_ref(a, dim, correction=int(unbiased), keepdim=keepdim)


def _std_dim_ref(a, dim, unbiased=True, keepdim=False):
    return _std_ref(a, dim, correction=int(unbiased), keepdim=keepdim)


def _var_mean_ref(var):
    def ref(a, dim=None, *, correction=None, keepdim=False):
        return (var(a, dim, correction=correction, keepdim=keepdim),
                _mean_ref(a, dim, keepdim))
    return ref


def _logsumexp_ref(a, dim, keepdim=False):
    out = a.dtype if category(a.dtype) >= 2 else np.dtype(np.float32)
    axes = _axes(dim, a.ndim)
    with np.errstate(all="ignore"):
        r = sp.logsumexp(a.astype(F64), axis=axes, keepdims=keepdim) if a.ndim else \
            a.astype(F64)
    return np.asarray(r).astype(out)


def _cum_ref(fn):
    def ref(a, dim, *, dtype=None):
        out = _sum_dtype(a, dtype)
        x = a.astype(out).astype(_wide(out))
        if a.ndim == 0:
            return x.astype(out)
        with np.errstate(all="ignore"):
            return fn(x, axis=dim % a.ndim).astype(out)
    return ref


def _count_nonzero_ref(a, dim=None):
    return np.asarray(np.count_nonzero(a, axis=_axes(dim, a.ndim))).astype(np.int64) \
        if a.ndim else np.asarray(int(a != 0), np.int64)


def _vector_norm_ref(a, ord=2, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        a = a.astype(np_dtype(dtype))
    real = np.float32 if a.dtype == np.complex64 else np.float64 if a.dtype == C128 \
        else a.dtype
    x = np.abs(a.astype(_wide(a.dtype))).astype(F64)
    axes = _axes(dim, a.ndim)
    with np.errstate(all="ignore"):
        if ord == 0:
            r = np.sum(x != 0, axis=axes, keepdims=keepdim).astype(F64)
        elif ord == np.inf:
            r = np.max(x, axis=axes, keepdims=keepdim)
        elif ord == -np.inf:
            r = np.min(x, axis=axes, keepdims=keepdim)
        else:
            r = np.sum(x ** ord, axis=axes, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(r).astype(real)


def _norm_ref(a, p=2):
    return _vector_norm_ref(a, 2 if p is None else p)


def _norm_dim_ref(a, p, dim, keepdim=False):
    return _vector_norm_ref(a, 2 if p is None else p, dim, keepdim)


# --------------------------------------------------------------------------- samples

def _inputs(dtype, device, low=None, high=None, empty=True):
    """(tensor, dims) pairs for dim-list reductions; ``empty``: include empty reduced dims."""
    def mk(shape, **kw):
        return make_tensor(shape, dtype, device, low=low, high=high, **kw)
    yield mk((3, 4, 5)), [1]
    yield mk((3, 4, 5)), [-1, 0]
    yield mk((3, 4, 5)), None
    yield mk((3, 4)), []
    yield mk(()), None
    yield mk(()), [0]
    yield mk((0, 3)), [1]                # an empty kept dim: nothing is reduced empty
    if empty:
        yield mk((0, 3)), [0]
        yield mk((2, 0)), None
    yield mk((3, 4), noncontiguous=True), [1]
    yield mk((5, 3)).t(), [0]
    if dtype.is_floating_point:
        yield _special(dtype, device), [1]


def _dtype_args(dtype, wanted):
    """The ``dtype=`` arguments to sample: none that would drop an imaginary part."""
    return [d for d in wanted if d.is_complex or not dtype.is_complex]


def _dims_samples(empty=True, keepdim=True, dtypes_arg=(), low=None, high=None):
    """Samples ``(x, dim, keepdim[, dtype=])`` for ops taking ``int[1]? dim``."""
    def samples(info, device, dtype):
        for i, (x, dims) in enumerate(_inputs(dtype, device, low, high, empty)):
            yield SampleInput(x, dims, keepdim and i % 2 == 1)
        for d in _dtype_args(dtype, dtypes_arg):
            yield SampleInput(make_tensor((3, 4), dtype, device, low=low, high=high), [1],
                              dtype=d)
    return samples


def _dim_samples(empty=True, keepdim=True, extra=(), low=None, high=None):
    """Samples ``(x, dim[, keepdim])`` for ops taking ``int dim``; ``extra``: dtypes for
    ``dtype=`` samples."""
    def samples(info, device, dtype):
        def mk(shape, **kw):
            return make_tensor(shape, dtype, device, low=low, high=high, **kw)
        cases = [(mk((3, 4, 5)), 1), (mk((3, 4, 5)), -1), (mk((3, 4)), 0), (mk(()), 0),
                 (mk(()), -1), (mk((0, 3)), 1), (mk((3, 4), noncontiguous=True), 1),
                 (mk((5, 3)).t(), 0)]
        if empty:
            cases.append((mk((0, 3)), 0))
        if dtype.is_floating_point:
            cases.append((_special(dtype, device), 1))
        for i, (x, d) in enumerate(cases):
            yield SampleInput(x, d, keepdim and i % 2 == 1) if keepdim else SampleInput(x, d)
        for d in _dtype_args(dtype, extra):
            yield SampleInput(mk((3, 4)), 1, dtype=d)
    return samples


def _full_samples(empty=True, dtypes_arg=(), low=None, high=None):
    """Samples ``(x[, dtype=])`` for the all-dims overloads."""
    def samples(info, device, dtype):
        def mk(shape, **kw):
            return make_tensor(shape, dtype, device, low=low, high=high, **kw)
        yield SampleInput(mk((3, 4)))
        yield SampleInput(mk(()))
        if empty:
            yield SampleInput(mk((0, 3)))
        yield SampleInput(mk((3, 4), noncontiguous=True))
        yield SampleInput(mk((4, 3)).t())
        if dtype.is_floating_point:
            yield SampleInput(_special(dtype, device))
        for d in _dtype_args(dtype, dtypes_arg):
            yield SampleInput(mk((3, 4)), dtype=d)
    return samples


def _var_samples(info, device, dtype):
    for i, (x, dims) in enumerate(_inputs(dtype, device)):
        corr = (None, 0, 1, 2, 0.5)[i % 5]
        yield SampleInput(x, dims, correction=corr, keepdim=i % 2 == 1)


def _var_dim_samples(info, device, dtype):
    for i, (x, dims) in enumerate(_inputs(dtype, device)):
        yield SampleInput(x, dims, i % 3 != 0, i % 2 == 1)


def _logsumexp_samples(info, device, dtype):
    for i, (x, dims) in enumerate(_inputs(dtype, device)):
        if dims is None or dims == []:
            dims = [0] if x.ndim else []
        yield SampleInput(x, dims, i % 2 == 1)


def _aminmax_samples(info, device, dtype):
    for i, (x, d) in enumerate([(make_tensor((3, 4), dtype, device), None),
                                (make_tensor((3, 4), dtype, device), 1),
                                (make_tensor((3, 4, 2), dtype, device), -1),
                                (make_tensor((), dtype, device), None),
                                (make_tensor((), dtype, device), 0),
                                (make_tensor((0, 3), dtype, device), 1),
                                (make_tensor((5, 3), dtype, device).t(), 0)]):
        yield SampleInput(x, dim=d, keepdim=i % 2 == 1)
    if dtype.is_floating_point:
        yield SampleInput(_special(dtype, device), dim=1)


def _cum_samples(info, device, dtype):
    low, high = (-2, 3) if not _is_float(dtype) else (-2, 2)
    s = _dim_samples(keepdim=False, low=low, high=high)(info, device, dtype)
    yield from s
    if not dtype.is_complex:            # (complex -> real would drop the imaginary part)
        yield SampleInput(make_tensor((3, 4), dtype, device, low=low, high=high), 1,
                          dtype=D.float64)
        yield SampleInput(make_tensor((3, 4), dtype, device, low=low, high=high), 0,
                          dtype=D.int64)


def _count_samples(info, device, dtype):
    for x, dims in _inputs(dtype, device, low=-1, high=2):
        yield SampleInput(x, dims if dims != [] else None)


def _count_dims_samples(info, device, dtype):
    for x, dims in _inputs(dtype, device, low=-1, high=2):
        if dims:
            yield SampleInput(x, dims)


def _count_int_samples(info, device, dtype):
    for x, dims in _inputs(dtype, device, low=-1, high=2):
        yield SampleInput(x, dims[0] if dims else None)


ORDS = (2, 1, 0, 3, 0.5, -1, float("inf"), float("-inf"))


def _norm_samples(info, device, dtype):
    for i, (x, dims) in enumerate(_inputs(dtype, device)):
        for j, o in enumerate(ORDS):
            if (o < 0 or o == float("inf")) and x.numel() == 0:
                continue                    # no identity: an error (see error inputs)
            if (i + j) % 3 == 0:
                yield SampleInput(x, o, dims, (i + j) % 2 == 1)
    if dtype in (D.float32, D.complex64):
        yield SampleInput(make_tensor((3, 4), dtype, device), 2, [1], dtype=D.float64
                          if dtype is D.float32 else D.complex128)


def _norm_scalar_samples(info, device, dtype):
    for i, (x, dims) in enumerate(_inputs(dtype, device)):
        o = ORDS[i % len(ORDS)]
        if x.numel() == 0 and (o < 0 or o == float("inf")):
            o = 2                           # no identity: an error (see vector_norm's)
        yield SampleInput(x, o)


def _norm_dim_samples(info, device, dtype):
    for i, (x, dims) in enumerate(_inputs(dtype, device, empty=False)):
        yield SampleInput(x, (None, 2, 1, float("inf"), 3)[i % 5], dims or [0], i % 2 == 1)


# --------------------------------------------------------------------------- error inputs

def _empty_dim_errors(name, dim_first=True, exc=IndexError):
    def errors(info, device):
        e = make_tensor((0, 3), D.float32, device)
        yield ErrorInput(SampleInput(e, [0] if dim_first else 0), exc,
                         f"{name}\\(\\): Expected reduction dim 0 to have non-zero size")
        yield ErrorInput(SampleInput(make_tensor((2, 3), D.float32, device),
                                     [2] if dim_first else 2), IndexError,
                         "Dimension out of range")
    return errors


def _full_empty_errors(name):
    def errors(info, device):
        yield ErrorInput(SampleInput(make_tensor((0,), D.float32, device)), RuntimeError,
                         f"{name}\\(\\): Expected reduction dim to be specified")
    return errors


def _arg_errors(name):
    def errors(info, device):
        yield ErrorInput(SampleInput(make_tensor((0, 3), D.float32, device)), RuntimeError,
                         f"{name}\\(\\): Expected reduction dim to be specified")
        yield ErrorInput(SampleInput(make_tensor((0, 3), D.float32, device), 0), IndexError,
                         "Expected reduction dim 0 to have non-zero size")
        yield ErrorInput(SampleInput(make_tensor((2, 3), D.bool, device)), RuntimeError,
                         f"\"{name}_cpu\" not implemented for 'Bool'", meta=False)
    return errors


def _mean_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2, 3), D.int64, device), [0]), RuntimeError,
                     "Input dtype must be either a floating point or complex dtype")
    yield ErrorInput(SampleInput(make_tensor((2, 3), D.float32, device), [0],
                                 dtype=D.int64), RuntimeError,
                     "Optional dtype must be either a floating point or complex dtype")
    yield ErrorInput(SampleInput(make_tensor((2, 3), D.float32, device), [0, 0]),
                     RuntimeError, "appears multiple times")


def _mean_full_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2, 3), D.int64, device)), RuntimeError,
                     "Input dtype must be either a floating point or complex dtype")


def _sum_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2, 3), D.float32, device), [3]), IndexError,
                     "Dimension out of range")
    yield ErrorInput(SampleInput(make_tensor((2, 3), D.float32, device), [1, -1]),
                     RuntimeError, "appears multiple times")


def _var_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2, 3), D.int64, device)), RuntimeError,
                     "std and var only support floating point and complex dtypes")
    yield ErrorInput(SampleInput(make_tensor((2, 3), D.float32, device), [2]), IndexError,
                     "Dimension out of range")


def _cum_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2, 3), D.float32, device), 2), IndexError,
                     "Dimension out of range")


def _norm_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((0,), D.float32, device), float("inf")),
                     RuntimeError, "does not have an identity")
    yield ErrorInput(SampleInput(make_tensor((2, 3), D.int64, device), 2), RuntimeError,
                     "Expected a floating point or complex tensor as input")


# --------------------------------------------------------------------------- entries

SUM_DTYPES = ALL_DTYPES + COMPLEX
NO_COMPLEX_MAX = ALL_DTYPES


def _entries():
    return [
        OpInfo(R.sum_dim_IntList, _sum_ref, SUM_DTYPES,
               _dims_samples(dtypes_arg=(D.int64, D.float64, D.int32)), tols=TOLS,
               error_inputs=_sum_errors),
        OpInfo(R.sum_default, _full_ref(_sum_ref), SUM_DTYPES,
               _full_samples(dtypes_arg=(D.float64, D.int64)), tols=TOLS),
        OpInfo(R.mean_dim, _mean_ref, FLOATS + COMPLEX,
               _dims_samples(dtypes_arg=(D.float64,)), tols=TOLS, error_inputs=_mean_errors),
        OpInfo(R.mean_default, _full_ref(_mean_ref), FLOATS + COMPLEX,
               _full_samples(dtypes_arg=(D.float64,)), tols=TOLS,
               error_inputs=_mean_full_errors),
        OpInfo(R.prod_dim_int, _prod_dim_ref, SUM_DTYPES,
               _dim_samples(low=-2, high=3, extra=(D.float64, D.int64)), tols=TOLS,
               error_inputs=_cum_errors),
        OpInfo(R.prod_default, _full_ref(_prod_ref), SUM_DTYPES,
               _full_samples(low=-2, high=3, dtypes_arg=(D.float64,)), tols=TOLS),
        OpInfo(R.amax, _minmax_ref(np.max), NO_COMPLEX_MAX, _dims_samples(empty=False),
               error_inputs=_empty_dim_errors("amax")),
        OpInfo(R.amin, _minmax_ref(np.min), NO_COMPLEX_MAX, _dims_samples(empty=False),
               error_inputs=_empty_dim_errors("amin")),
        OpInfo(R.max_default, _full_minmax_ref(np.max), NO_COMPLEX_MAX,
               _full_samples(empty=False), error_inputs=_full_empty_errors("max")),
        OpInfo(R.min_default, _full_minmax_ref(np.min), NO_COMPLEX_MAX,
               _full_samples(empty=False), error_inputs=_full_empty_errors("min")),
        OpInfo(R.max_dim, _dim_minmax_ref(np.argmax), NO_COMPLEX_MAX,
               _dim_samples(empty=False, low=-2, high=2),
               error_inputs=_empty_dim_errors("max", dim_first=False)),
        OpInfo(R.min_dim, _dim_minmax_ref(np.argmin), NO_COMPLEX_MAX,
               _dim_samples(empty=False, low=-2, high=2),
               error_inputs=_empty_dim_errors("min", dim_first=False)),
        OpInfo(R.argmax, _argminmax_ref(np.argmax), NUMERIC, _argmax_samples,
               error_inputs=_arg_errors("argmax")),
        OpInfo(R.argmin, _argminmax_ref(np.argmin), NUMERIC, _argmax_samples,
               error_inputs=_arg_errors("argmin")),
        OpInfo(R.aminmax, _aminmax_ref, NO_COMPLEX_MAX, _aminmax_samples),
        OpInfo(R.any_default, _bool_ref(np.any), SUM_DTYPES, _full_samples(low=0, high=2)),
        OpInfo(R.any_dim, _bool_ref(np.any), SUM_DTYPES, _dim_samples(low=0, high=2)),
        OpInfo(R.any_dims, _bool_ref(np.any), SUM_DTYPES, _dims_samples(low=0, high=2)),
        OpInfo(R.all_default, _bool_ref(np.all), SUM_DTYPES, _full_samples(low=0, high=2)),
        OpInfo(R.all_dim, _bool_ref(np.all), SUM_DTYPES, _dim_samples(low=0, high=2)),
        OpInfo(R.all_dims, _bool_ref(np.all), SUM_DTYPES, _dims_samples(low=0, high=2)),
        OpInfo(R.var_correction, _var_ref, FLOATS + COMPLEX, _var_samples, tols=TOLS,
               error_inputs=_var_errors),
        OpInfo(R.var_dim, _var_dim_ref, FLOATS + COMPLEX, _var_dim_samples, tols=TOLS),
        OpInfo(R.std_correction, _std_ref, FLOATS + COMPLEX, _var_samples, tols=TOLS,
               error_inputs=_var_errors),
        OpInfo(R.std_dim, _std_dim_ref, FLOATS + COMPLEX, _var_dim_samples, tols=TOLS),
        OpInfo(R.var_mean_correction, _var_mean_ref(_var_ref), FLOATS + COMPLEX,
               _var_samples, tols=TOLS),
        OpInfo(R.std_mean_correction, _var_mean_ref(_std_ref), FLOATS + COMPLEX,
               _var_samples, tols=TOLS),
        OpInfo(R.logsumexp, _logsumexp_ref, ALL_DTYPES, _logsumexp_samples,
               tols={D.float16: (1e-2, 1e-2), D.bfloat16: (5e-2, 5e-2),
                     D.float32: (1e-5, 1e-5)}),
        OpInfo(R.cumsum, _cum_ref(np.cumsum), SUM_DTYPES, _cum_samples, tols=TOLS,
               error_inputs=_cum_errors),
        OpInfo(R.cumprod, _cum_ref(np.cumprod), SUM_DTYPES, _cum_samples, tols=TOLS,
               error_inputs=_cum_errors),
        OpInfo(R.count_nonzero, _count_nonzero_ref, ALL_DTYPES, _count_int_samples),
        OpInfo(R.count_nonzero_dim_IntList, _count_nonzero_ref, ALL_DTYPES,
               _count_dims_samples),
        OpInfo(R.linalg_vector_norm, _vector_norm_ref, FLOATS + COMPLEX, _norm_samples,
               tols={**TOLS, D.float16: (5e-3, 1e-3), D.bfloat16: (3e-2, 1e-2),
                     D.float32: (1e-5, 1e-5)},
               error_inputs=_norm_errors),
        OpInfo(R.norm_Scalar, _norm_ref, FLOATS + COMPLEX, _norm_scalar_samples,
               tols={**TOLS, D.float16: (5e-3, 1e-3), D.bfloat16: (3e-2, 1e-2),
                     D.float32: (1e-5, 1e-5)}),
        OpInfo(R.norm_ScalarOpt_dim, _norm_dim_ref, FLOATS + COMPLEX, _norm_dim_samples,
               tols={**TOLS, D.float16: (5e-3, 1e-3), D.bfloat16: (3e-2, 1e-2),
                     D.float32: (1e-5, 1e-5)}),
    ]


def _argmax_samples(info, device, dtype):
    s = _dim_samples(empty=False, low=-2, high=3)(info, device, dtype)
    yield from s
    yield SampleInput(make_tensor((3, 4), dtype, device, low=-2, high=3))
    yield SampleInput(make_tensor((3, 4), dtype, device, low=-2, high=3), None, True)
    yield SampleInput(make_tensor((), dtype, device), None, True)


register(*_entries())
