"""NumPy kernels for the reductions of ``fnx.ir.aten.reduction``.

Each kernel runs the op's meta function first (PyTorch's checks and result dtype), then
one NumPy reduction.  float16/bfloat16 accumulate in float32 and round once at the end,
var/std accumulate in float64 (PyTorch's CPU kernels do the same); integer and bool
sums accumulate in int64.  Max-like ops take indices from ``argmax``, which picks the
first occurrence of a tie and the first NaN, so values and indices always agree.
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...ir.aten import reduction as R
from ...ir.aten._common import not_implemented
from ...ir.dims import wrap_dim
from ._core import data, kernel, wrap

_HALF = (D.float16, D.bfloat16)
_F32 = np.dtype(np.float32)
_add_reduce = np.add.reduce


def _operand(a, dtype):
    """``a`` cast to ``dtype`` (PyTorch converts first when ``dtype=`` is given), in the
    dtype NumPy should accumulate in."""
    if a.dtype != dtype.numpy:
        a = a.astype(dtype.numpy)
    if dtype in _HALF:
        a = a.astype(_F32)
    return a


def _result(r, dtype):
    r = np.asarray(r)
    return wrap(r if r.dtype == dtype.numpy else r.astype(dtype.numpy), dtype)


# --------------------------------------------------------------------------- sum, mean, prod

@kernel(R.sum_dim_IntList)
def _sum(ks, self, dim=None, keepdim=False, *, dtype=None):
    a = data(self, "sum")
    out = R.sum_dtype(self, dtype)
    axes = R.norm_dims(dim, a.ndim)
    if out is self._dtype and out not in _HALF:
        return _result(_add_reduce(a, axes, keepdims=keepdim), out)
    return _result(_add_reduce(_operand(a, out), axes, keepdims=keepdim), out)


@kernel(R.sum_default)
def _sum_all(ks, self, *, dtype=None):
    return _sum(ks, self, None, dtype=dtype)


@kernel(R.mean_dim)
def _mean(ks, self, dim=None, keepdim=False, *, dtype=None):
    a = data(self, "mean")
    out = R.mean_dtype("mean", self, dtype)
    axes = R.norm_dims(dim, a.ndim)
    n = R.reduced_numel(self, axes)
    with np.errstate(all="ignore"):      # an empty reduction is 0 / 0 = nan, like PyTorch
        r = np.true_divide(np.sum(_operand(a, out), axis=axes, keepdims=keepdim), n)
    return _result(r, out)


@kernel(R.mean_default)
def _mean_all(ks, self, *, dtype=None):
    return _mean(ks, self, None, dtype=dtype)


@kernel(R.prod_dim_int)
def _prod(ks, self, dim=None, keepdim=False, *, dtype=None):
    a = data(self, "prod")
    out = R.sum_dtype(self, dtype)
    axes = R.norm_dims(dim, a.ndim)
    with np.errstate(all="ignore"):
        return _result(np.prod(_operand(a, out), axis=axes, keepdims=keepdim), out)


@kernel(R.prod_default)
def _prod_all(ks, self, *, dtype=None):
    return _prod(ks, self, None, dtype=dtype)


# --------------------------------------------------------------------------- max-like

def _minmax(name, fn):
    op = getattr(R, name)

    def k(ks, self, dim=(), keepdim=False):
        op.meta(self, dim, keepdim)
        a = data(self, name)
        with np.errstate(invalid="ignore"):     # NaN inputs: NaN is the answer, no warning
            r = fn(a, axis=R.norm_dims(dim, a.ndim), keepdims=keepdim)
        return wrap(np.asarray(r), self._dtype)
    return k


kernel(R.amax)(_minmax("amax", np.max))
kernel(R.amin)(_minmax("amin", np.min))


@kernel(R.max_default)
def _max_all(ks, self):
    R.max_default.meta(self)
    with np.errstate(invalid="ignore"):
        return wrap(np.asarray(np.max(data(self, "max"))), self._dtype)


@kernel(R.min_default)
def _min_all(ks, self):
    R.min_default.meta(self)
    with np.errstate(invalid="ignore"):
        return wrap(np.asarray(np.min(data(self, "min"))), self._dtype)


def _comparable(a):
    """An array ``argmax`` handles; half types widen exactly to float32."""
    return a.astype(_F32) if a.dtype.kind == "V" or a.dtype == np.float16 or \
        a.dtype.name == "bfloat16" else a


def _dim_minmax(name, argfn):
    op = getattr(R, f"{name}_dim")

    def k(ks, self, dim, keepdim=False):
        op.meta(self, dim, keepdim)
        a = data(self, name)
        if a.ndim == 0:
            return wrap(a.copy(), self._dtype), wrap(np.zeros((), np.int64), D.int64)
        d = wrap_dim(dim, a.ndim)
        idx = argfn(_comparable(a), axis=d, keepdims=True)
        vals = np.take_along_axis(a, idx, axis=d)
        if not keepdim:
            idx, vals = idx.squeeze(d), vals.squeeze(d)
        return wrap(vals, self._dtype), wrap(idx.astype(np.int64, copy=False), D.int64)
    return k


kernel(R.max_dim)(_dim_minmax("max", np.argmax))
kernel(R.min_dim)(_dim_minmax("min", np.argmin))


def _arg(name, argfn):
    op = getattr(R, name)

    def k(ks, self, dim=None, keepdim=False):
        op.meta(self, dim, keepdim)
        if self._dtype is D.bool:
            raise not_implemented(f"{name}_cpu", D.bool)
        a = _comparable(data(self, name))
        if dim is None or a.ndim == 0:
            r = np.asarray(argfn(a))
            if keepdim:
                r = r.reshape((1,) * a.ndim)
        else:
            r = argfn(a, axis=wrap_dim(dim, a.ndim), keepdims=keepdim)
        return wrap(r.astype(np.int64, copy=False), D.int64)
    return k


kernel(R.argmax)(_arg("argmax", np.argmax))
kernel(R.argmin)(_arg("argmin", np.argmin))


# --------------------------------------------------------------------------- any, all

def _logical(name, fn):
    def k(ks, self, dim=None, keepdim=False):
        a = data(self, name)
        if a.dtype.kind == "V" or a.dtype.name == "bfloat16":
            a = a.astype(_F32)
        r = np.asarray(fn(a, axis=R.norm_dims(dim, a.ndim), keepdims=keepdim))
        out = R.bool_dtype(self)
        return wrap(r.astype(out.numpy, copy=False), out)
    return k


kernel(R.any_default, R.any_dim, R.any_dims)(_logical("any", np.any))
kernel(R.all_default, R.all_dim, R.all_dims)(_logical("all", np.all))


# --------------------------------------------------------------------------- var

def _var(name, self, dim, correction, keepdim):
    a = data(self, name)
    # the declared dtype (a complex input's real type), after var's dtype check
    out = R.var_correction.meta(self, dim, correction=correction, keepdim=keepdim).dtype
    axes = R.norm_dims(dim, a.ndim)
    corr = R.correction_of(correction)
    R.warn_dof(name, self, axes, corr)
    n = R.reduced_numel(self, axes)
    x = a.astype(np.complex128 if self._dtype.is_complex else np.float64)
    with np.errstate(all="ignore"):
        dev = x - np.sum(x, axis=axes, keepdims=True) / n
        sq = dev.real * dev.real + dev.imag * dev.imag if dev.dtype.kind == "c" else dev * dev
        # N - correction <= 0 divides by zero: nan (no spread) or inf, as PyTorch does
        r = np.true_divide(np.sum(sq, axis=axes, keepdims=keepdim), max(0, n - corr))
    return _result(r, out)


@kernel(R.var_correction)
def _var_correction(ks, self, dim=None, *, correction=None, keepdim=False):
    return _var("var", self, dim, correction, keepdim)


@kernel(R.var_dim)
def _var_dim(ks, self, dim, unbiased=True, keepdim=False):
    return _var("var", self, dim, int(unbiased), keepdim)


# --------------------------------------------------------------------------- cumulative

def _cum(name, fn):
    op = getattr(R, name)

    def k(ks, self, dim, *, dtype=None):
        out = op.meta(self, dim, dtype=dtype).dtype
        a = _operand(data(self, name), out)
        if a.ndim == 0:
            return _result(a.copy(), out)
        with np.errstate(all="ignore"):
            return _result(fn(a, axis=wrap_dim(dim, a.ndim)), out)
    return k


kernel(R.cumsum)(_cum("cumsum", np.cumsum))
kernel(R.cumprod)(_cum("cumprod", np.cumprod))
