"""Reductions: sum, mean, prod, amax/amin, max/min, argmax/argmin, any/all, var/std,
logsumexp, cumulative sums and products, count_nonzero and vector norms.

Dtype rules (PyTorch's): sum, prod and cumsum of bool or integer tensors give int64
unless ``dtype=`` says otherwise; mean, var and std need a floating or complex input;
var/std/norm of complex input are real; any/all give bool (uint8 for uint8 input);
max-like ops keep the input dtype and return int64 indices.  ``dim`` is an int or a
list of ints, negative dims count from the end, and ``None`` or ``[]`` means every dim.
Meta functions raise PyTorch's errors, so every backend inherits them.

Core ops get backend kernels and, next to their definitions, decompositions to prims
(``reduce_sum``/``reduce_prod``/``reduce_max``/``reduce_min``, ``argmax``/``argmin``,
``cumsum``/``cumprod``): each converts to the accumulation dtype first (prims never
promote), reduces over normalized dims and puts kept dims back with a reshape.  The
others (std, var_mean, logsumexp, count_nonzero, norm, ...) are decompositions written
with fnx ops.
"""
from __future__ import annotations

import math
import warnings

from ... import _dtype as D
from ...ops import aten, prims
from .. import refs
from ..grad_utils import expand_reduced
from ..registry import TensorMeta, decomposition, defop, derivative
from ..shapes import reduction_shape, wrap_dim, wrap_dims
from ._common import _torch_name

CORE = ("core",)
ATEN = ()


# --------------------------------------------------------------------------- helpers

def norm_dims(dim, ndim: int):
    """Reduction dims as a sorted tuple of non-negative ints; ``None``/``[]``: every dim.

    A 0-dim tensor accepts dims 0 and -1 but has no axis to reduce, so it gives ().
    """
    if dim is None:
        return tuple(range(ndim))
    one = dim[0] if dim.__class__ in (list, tuple) and len(dim) == 1 else dim
    if one.__class__ is int and -ndim <= one < ndim:      # the common case, fast
        return (one + ndim if one < 0 else one,)
    if not isinstance(dim, (list, tuple)):
        dim = (dim,)
    if len(dim) == 0:
        return tuple(range(ndim))
    dims = wrap_dims(dim, ndim)
    return tuple(sorted(dims)) if ndim else ()


def _out_shape(self, dim, keepdim) -> tuple:
    if dim is not None and not isinstance(dim, (list, tuple)):
        dim = (dim,)
    return reduction_shape(tuple(self.shape), dim, keepdim)


def _is_float(d) -> bool:
    return d.is_floating_point or d.is_complex


def sum_dtype(self, dtype=None):
    """sum/prod/cumsum: integers and bool accumulate and return int64."""
    if dtype is not None:
        return dtype
    d = self.dtype
    return d if _is_float(d) else D.int64


def mean_dtype(name, self, dtype=None):
    if dtype is None:
        if not _is_float(self.dtype):
            raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be "
                               f"either a floating point or complex dtype. Got: "
                               f"{_torch_name(self.dtype)}")
        return self.dtype
    if not _is_float(dtype):
        raise RuntimeError(f"{name}(): could not infer output dtype. Optional dtype must be "
                           f"either a floating point or complex dtype. Got: "
                           f"{_torch_name(dtype)}")
    return dtype


def reduced_numel(self, dims) -> int:
    shape = tuple(self.shape)
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def check_nonempty(name, self, dims):
    """max-like ops have no identity: refuse to reduce an empty dim.

    ``dims=None`` means the caller named no dim (reduce everything).
    """
    if self.dtype.is_complex:
        raise RuntimeError(f"{name}(): does not support complex input")
    shape = tuple(self.shape)
    if dims is None:
        if 0 in shape:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               f"input.numel() == 0. Specify the reduction dim with the "
                               f"'dim' argument.")
        return
    for d in dims:
        if shape and shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def bool_dtype(self):
    """any/all: bool, except uint8 input gives uint8 (PyTorch's legacy rule)."""
    return D.uint8 if self.dtype is D.uint8 else D.bool


def var_check(name, self):
    if not _is_float(self.dtype):
        raise RuntimeError("std and var only support floating point and complex dtypes")


def correction_of(correction):
    return 1 if correction is None else correction


def warn_dof(name, self, dims, correction):
    """PyTorch warns (and returns nan/inf) when N - correction <= 0."""
    n = reduced_numel(self, dims)
    if n - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                      f"less than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=4)


# --------------------------------------------------------------------------- prim helpers

def reshape_to(x, shape):
    """``x`` reshaped to ``shape`` (the kept size-1 dims of keepdim, a 0-dim result)."""
    shape = list(shape)
    return x if list(x.shape) == shape else prims.reshape(x, shape)


def accumulate(self, out):
    """``self`` as the reduction consumes it: converted to the result dtype ``out`` first
    (PyTorch casts before reducing when ``dtype=`` is given, so sum(x, dtype=int64) of
    floats truncates each element), then half types widened to float32, PyTorch's
    accumulation dtype; the caller rounds the result back to ``out`` once."""
    return refs.to_dtype(refs.to_dtype(self, out), refs.opmath_dtype(out))


def reduce_to(prim, self, dims, out, shape):
    """``prim`` over ``dims`` of ``self`` accumulated as ``out``, returned as ``out`` in the
    meta's ``shape`` (keepdim: the reduced dims come back as size 1)."""
    r = prim(accumulate(self, out), list(dims))
    return refs.to_dtype(reshape_to(r, shape), out)


def divide_by(x, n):
    """``x / n`` for a Python number ``n``, in ``x``'s dtype (0 / 0 is nan, as PyTorch)."""
    return prims.div(x, refs.full(tuple(x.shape), n, x.dtype, x.device))


# --------------------------------------------------------------------------- sum, mean, prod

def _sum_meta(self, dim=None, keepdim=False, *, dtype=None):
    return TensorMeta(_out_shape(self, dim, keepdim), sum_dtype(self, dtype))


sum_dim_IntList = defop("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
                        "ScalarType? dtype=None) -> Tensor", tags=CORE, meta=_sum_meta)
sum_default = defop("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", tags=ATEN,
                    meta=lambda self, *, dtype=None: _sum_meta(self, None, dtype=dtype),
                    decomposition=lambda self, *, dtype=None:
                    sum_dim_IntList(self, None, dtype=dtype))


def _mean_meta(self, dim=None, keepdim=False, *, dtype=None):
    return TensorMeta(_out_shape(self, dim, keepdim), mean_dtype("mean", self, dtype))


mean_dim = defop("mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, "
                 "ScalarType? dtype=None) -> Tensor", tags=CORE, meta=_mean_meta)
mean_default = defop("mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", tags=CORE,
                     meta=lambda self, *, dtype=None: _mean_meta(self, None, dtype=dtype))


prod_default = defop("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", tags=CORE,
                     meta=lambda self, *, dtype=None: _sum_meta(self, None, dtype=dtype))
prod_dim_int = defop("prod.dim_int(Tensor self, int dim, bool keepdim=False, *, "
                     "ScalarType? dtype=None) -> Tensor", tags=CORE, meta=_sum_meta)


@derivative(sum_dim_IntList)
def _sum_backward(grad, self, dim, keepdim):
    return expand_reduced(grad, self.shape, dim or None, keepdim)


@decomposition(sum_dim_IntList)
def _sum_decomp(self, dim=None, keepdim=False, *, dtype=None):
    """bool and integers sum in int64 (unless ``dtype=``); over no elements: 0."""
    m = _sum_meta(self, dim, keepdim, dtype=dtype)
    return reduce_to(prims.reduce_sum, self, norm_dims(dim, self.ndim), m.dtype, m.shape)


def _prod_decomp(self, dim=None, keepdim=False, *, dtype=None):
    """As sum, with reduce_prod: over no elements the product is 1."""
    m = _sum_meta(self, dim, keepdim, dtype=dtype)
    return reduce_to(prims.reduce_prod, self, norm_dims(dim, self.ndim), m.dtype, m.shape)


decomposition(prod_dim_int)(_prod_decomp)
decomposition(prod_default)(lambda self, *, dtype=None: _prod_decomp(self, dtype=dtype))


@decomposition(mean_dim)
def _mean_decomp(self, dim=None, keepdim=False, *, dtype=None):
    """sum / count in the accumulation dtype; integer input without a floating ``dtype=``
    is an error (the meta's), and a mean over no elements is 0 / 0 = nan."""
    m = _mean_meta(self, dim, keepdim, dtype=dtype)
    dims = norm_dims(dim, self.ndim)
    s = prims.reduce_sum(accumulate(self, m.dtype), list(dims))
    r = divide_by(s, reduced_numel(self, dims))
    return refs.to_dtype(reshape_to(r, m.shape), m.dtype)


decomposition(mean_default)(lambda self, *, dtype=None: _mean_decomp(self, dtype=dtype))


# --------------------------------------------------------------------------- max-like

def _minmax_meta(name):
    def meta(self, dim=(), keepdim=False):
        given = dim is not None and not (isinstance(dim, (list, tuple)) and len(dim) == 0)
        dims = norm_dims(dim, self.ndim)
        check_nonempty(name, self, dims if given else None)
        return TensorMeta(_out_shape(self, dim, keepdim), self.dtype)
    return meta


amax = defop("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", tags=CORE,
             meta=_minmax_meta("amax"))
amin = defop("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", tags=CORE,
             meta=_minmax_meta("amin"))


def _amax_amin_decomp(op, prim):
    def decomp(self, dim=(), keepdim=False):
        """reduce_max/min propagate NaN; an empty extent is refused by the meta (no
        identity), ``dim=[]`` reduces every dim."""
        m = op.meta(self, dim, keepdim)
        return reshape_to(prim(self, list(norm_dims(dim, self.ndim))), m.shape)
    return decomposition(op)(decomp)


_amax_amin_decomp(amax, prims.reduce_max)
_amax_amin_decomp(amin, prims.reduce_min)


def _full_minmax_meta(name):
    def meta(self):
        check_nonempty(name, self, None)
        return TensorMeta((), self.dtype)
    return meta


def _full_minmax_decomp(name, reduce):
    meta = _full_minmax_meta(name)

    def decomp(self):
        meta(self)              # max()'s own message for empty input, not amax()'s
        return reduce(self)
    return decomp


max_default = defop("max(Tensor self) -> Tensor", tags=ATEN, meta=_full_minmax_meta("max"),
                    decomposition=_full_minmax_decomp("max", lambda x: amax(x)))
min_default = defop("min(Tensor self) -> Tensor", tags=ATEN, meta=_full_minmax_meta("min"),
                    decomposition=_full_minmax_decomp("min", lambda x: amin(x)))


def _dim_minmax_meta(name):
    def meta(self, dim, keepdim=False):
        d = wrap_dim(dim, self.ndim)
        check_nonempty(name, self, (d,) if self.ndim else ())
        shape = _out_shape(self, d, keepdim)
        return TensorMeta(shape, self.dtype), TensorMeta(shape, D.int64)
    return meta


max_dim = defop("max.dim(Tensor self, int dim, bool keepdim=False) -> "
                "(Tensor values, Tensor indices)", tags=CORE, meta=_dim_minmax_meta("max"))
min_dim = defop("min.dim(Tensor self, int dim, bool keepdim=False) -> "
                "(Tensor values, Tensor indices)", tags=CORE, meta=_dim_minmax_meta("min"))


def as_vector(self, dim):
    """A 0-dim tensor seen as one element along dim 0 (prims take no dim on rank 0)."""
    if self.ndim == 0:
        return prims.reshape(self, [1]), 0
    return self, wrap_dim(dim, self.ndim)


def _max_min_dim_decomp(op, reduce, arg):
    def decomp(self, dim, keepdim=False):
        """The values come from reduce_max/min and the indices from argmax/argmin; both
        take NaN as the extreme and argmax the first of ties, so they agree."""
        vm, im = op.meta(self, dim, keepdim)
        x, d = as_vector(self, dim)
        return reshape_to(reduce(x, [d]), vm.shape), reshape_to(arg(x, d), im.shape)
    return decomposition(op)(decomp)


_max_min_dim_decomp(max_dim, prims.reduce_max, prims.argmax)
_max_min_dim_decomp(min_dim, prims.reduce_min, prims.argmin)


def _arg_meta(name):
    def meta(self, dim=None, keepdim=False):
        if dim is None:
            check_nonempty(name, self, None)
            shape = (1,) * self.ndim if keepdim else ()
        else:
            d = wrap_dim(dim, self.ndim)
            check_nonempty(name, self, (d,) if self.ndim else ())
            shape = _out_shape(self, d, keepdim)
        return TensorMeta(shape, D.int64)
    return meta


argmax = defop("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", tags=CORE,
               meta=_arg_meta("argmax"))
argmin = defop("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", tags=CORE,
               meta=_arg_meta("argmin"))


def _arg_decomp(op, prim):
    def decomp(self, dim=None, keepdim=False):
        """``dim=None``: the index into the flattened tensor (keepdim gives all-ones
        shape).  PyTorch has no argmax/argmin kernel for bool: refused here too."""
        m = op.meta(self, dim, keepdim)
        if self.dtype is D.bool:
            raise RuntimeError(f"\"{op.name}_cpu\" not implemented for 'Bool'")
        if dim is None:
            x, d = prims.reshape(self, [self.numel()]), 0
        else:
            x, d = as_vector(self, dim)
        return reshape_to(prim(x, d), m.shape)
    return decomposition(op)(decomp)


_arg_decomp(argmax, prims.argmax)
_arg_decomp(argmin, prims.argmin)


def _aminmax_meta(self, *, dim=None, keepdim=False):
    if dim is None:
        check_nonempty("aminmax", self, None)
        shape = (1,) * self.ndim if keepdim else ()
    else:
        d = wrap_dim(dim, self.ndim)
        check_nonempty("aminmax", self, (d,) if self.ndim else ())
        shape = _out_shape(self, d, keepdim)
    return TensorMeta(shape, self.dtype), TensorMeta(shape, self.dtype)


def _aminmax_decomp(self, *, dim=None, keepdim=False):
    _aminmax_meta(self, dim=dim, keepdim=keepdim)
    if dim is None and keepdim:
        dims = list(range(self.ndim))
        return amin(self, dims, True), amax(self, dims, True)
    dims = [] if dim is None else [dim]
    return amin(self, dims, keepdim), amax(self, dims, keepdim)


aminmax = defop("aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> "
                "(Tensor min, Tensor max)", tags=ATEN, meta=_aminmax_meta,
                decomposition=_aminmax_decomp)


# --------------------------------------------------------------------------- any, all

def _bool_meta(self, dim=None, keepdim=False):
    return TensorMeta(_out_shape(self, dim, keepdim), bool_dtype(self))


any_default = defop("any(Tensor self) -> Tensor", tags=CORE,
                    meta=lambda self: _bool_meta(self))
any_dim = defop("any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", tags=CORE,
                meta=_bool_meta)
any_dims = defop("any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
                 tags=CORE, meta=_bool_meta)


@decomposition(any_dims)
def _any_decomp(self, dim=None, keepdim=False):
    """The max of ``self != 0`` (NaN counts as true), False over no elements; uint8 input
    gives uint8, as PyTorch."""
    m = _bool_meta(self, dim, keepdim)
    r = prims.reduce_max(refs.to_dtype(self, D.bool), list(norm_dims(dim, self.ndim)))
    return refs.to_dtype(reshape_to(r, m.shape), m.dtype)


decomposition(any_dim)(_any_decomp)
decomposition(any_default)(lambda self: _any_decomp(self))


def _all_decomp(self, dim=None, keepdim=False):
    """all(x) == not any(not x); uint8 input keeps its uint8 result."""
    r = aten.logical_not.default(any_dims(aten.logical_not.default(self), _as_list(dim),
                                          keepdim))
    if self.dtype is D.uint8:
        r = aten._to_copy.default(r, dtype=D.uint8)
    return r


def _as_list(dim):
    if dim is None or isinstance(dim, (list, tuple)):
        return dim
    return [dim]


all_default = defop("all(Tensor self) -> Tensor", tags=ATEN, meta=lambda self: _bool_meta(self),
                    decomposition=lambda self: _all_decomp(self))
all_dim = defop("all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", tags=ATEN,
                meta=_bool_meta, decomposition=_all_decomp)
all_dims = defop("all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
                 tags=ATEN, meta=_bool_meta, decomposition=_all_decomp)


# --------------------------------------------------------------------------- var, std

def _var_meta_impl(name, self, dim, correction, keepdim):
    var_check(name, self)
    return TensorMeta(_out_shape(self, dim, keepdim), self.dtype.to_real())


var_correction = defop("var.correction(Tensor self, int[1]? dim=None, *, "
                       "Scalar? correction=None, bool keepdim=False) -> Tensor", tags=CORE,
                       meta=lambda self, dim=None, *, correction=None, keepdim=False:
                       _var_meta_impl("var", self, dim, correction, keepdim))
var_dim = defop("var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) "
                "-> Tensor", tags=CORE,
                meta=lambda self, dim, unbiased=True, keepdim=False:
                _var_meta_impl("var", self, dim, int(unbiased), keepdim))


@decomposition(var_correction)
def _var_decomp(self, dim=None, *, correction=None, keepdim=False):
    """Two passes: the mean, then the sum of squared deviations divided by
    ``max(0, N - correction)`` (PyTorch gives nan or inf there, with a warning).  Complex
    input: squared magnitudes, a real result.  Half types compute in float32."""
    m = _var_meta_impl("var", self, dim, correction, keepdim)
    dims = norm_dims(dim, self.ndim)
    corr = correction_of(correction)
    warn_dof("var", self, dims, corr)
    n = reduced_numel(self, dims)
    x = refs.to_dtype(self, refs.opmath_dtype(self.dtype))
    kept = [i for i in range(x.ndim) if i not in dims]
    mean = divide_by(prims.reduce_sum(x, list(dims)), n)
    dev = prims.sub(x, prims.broadcast_in_dim(mean, list(x.shape), kept))
    if dev.dtype.is_complex:
        re, im = prims.real(dev), prims.imag(dev)
        sq = prims.add(prims.mul(re, re), prims.mul(im, im))
    else:
        sq = prims.mul(dev, dev)
    r = divide_by(prims.reduce_sum(sq, list(dims)), max(0, n - corr))
    return refs.to_dtype(reshape_to(r, m.shape), m.dtype)


decomposition(var_dim)(lambda self, dim, unbiased=True, keepdim=False:
                       _var_decomp(self, dim, correction=int(unbiased), keepdim=keepdim))


def _std_decomp(self, dim=None, *, correction=None, keepdim=False):
    return aten.sqrt.default(var_correction(self, dim, correction=correction, keepdim=keepdim))


std_correction = defop("std.correction(Tensor self, int[1]? dim=None, *, "
                       "Scalar? correction=None, bool keepdim=False) -> Tensor", tags=ATEN,
                       meta=lambda self, dim=None, *, correction=None, keepdim=False:
                       _var_meta_impl("std", self, dim, correction, keepdim),
                       decomposition=_std_decomp)
std_dim = defop("std.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) "
                "-> Tensor", tags=ATEN,
                meta=lambda self, dim, unbiased=True, keepdim=False:
                _var_meta_impl("std", self, dim, int(unbiased), keepdim),
                decomposition=lambda self, dim, unbiased=True, keepdim=False:
                _std_decomp(self, dim, correction=int(unbiased), keepdim=keepdim))


def _var_mean_meta(name):
    def meta(self, dim=None, *, correction=None, keepdim=False):
        v = _var_meta_impl(name, self, dim, correction, keepdim)
        return v, TensorMeta(v.shape, self.dtype)
    return meta


def _var_mean_decomp(self, dim=None, *, correction=None, keepdim=False):
    return (var_correction(self, dim, correction=correction, keepdim=keepdim),
            mean_dim(self, dim, keepdim))


def _std_mean_decomp(self, dim=None, *, correction=None, keepdim=False):
    return (_std_decomp(self, dim, correction=correction, keepdim=keepdim),
            mean_dim(self, dim, keepdim))


var_mean_correction = defop("var_mean.correction(Tensor self, int[1]? dim=None, *, "
                            "Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)",
                            tags=ATEN, meta=_var_mean_meta("var_mean"),
                            decomposition=_var_mean_decomp)
std_mean_correction = defop("std_mean.correction(Tensor self, int[1]? dim=None, *, "
                            "Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)",
                            tags=ATEN, meta=_var_mean_meta("std_mean"),
                            decomposition=_std_mean_decomp)


# --------------------------------------------------------------------------- logsumexp

def _logsumexp_meta(self, dim, keepdim=False):
    d = self.dtype if _is_float(self.dtype) else D.get_default_dtype()
    return TensorMeta(_out_shape(self, dim, keepdim), d)


def _logsumexp_decomp(self, dim, keepdim=False):
    """log(sum(exp(x - m))) + m with m the max over ``dim`` (0 where it is infinite, so
    all -inf gives -inf and +inf gives +inf instead of nan)."""
    if not _is_float(self.dtype):
        self = aten._to_copy.default(self, dtype=D.get_default_dtype())
    dims = list(norm_dims(dim, self.ndim))
    if self.ndim and reduced_numel(self, dims) == 0:   # no max to subtract: log(0) = -inf
        return aten.log.default(sum_dim_IntList(aten.exp.default(self), dims, keepdim))
    def finite_max(keep):
        m = amax(self, dims, keep)
        return aten.where.self(aten.isinf.default(m), 0.0, m)
    m = finite_max(True)
    s = sum_dim_IntList(aten.exp.default(aten.sub.Tensor(self, m)), dims, keepdim)
    # the max again without keepdim, rather than a squeeze: no shape op needed
    return aten.add.Tensor(aten.log.default(s), m if keepdim else finite_max(False))


logsumexp = defop("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
                  tags=ATEN, meta=_logsumexp_meta, decomposition=_logsumexp_decomp)


# --------------------------------------------------------------------------- cumulative

def _cum_meta(self, dim, *, dtype=None):
    wrap_dim(dim, self.ndim)
    return TensorMeta(tuple(self.shape), sum_dtype(self, dtype))


cumsum = defop("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", tags=CORE,
               meta=_cum_meta)
cumprod = defop("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
                tags=ATEN, meta=_cum_meta)


def _cum_decomp(op, prim):
    def decomp(self, dim, *, dtype=None):
        """An inclusive scan in the accumulation dtype (bool and integers: int64)."""
        out = op.meta(self, dim, dtype=dtype).dtype
        x, d = as_vector(accumulate(self, out), dim)
        return refs.to_dtype(reshape_to(prim(x, d), self.shape), out)
    return decomposition(op)(decomp)


_cum_decomp(cumsum, prims.cumsum)
# cumprod is not core (it keeps its CPU kernel): straight to the prim, there is no core scan
_cum_decomp(cumprod, prims.cumprod)


# --------------------------------------------------------------------------- count_nonzero

def _count_meta(self, dim=None):
    return TensorMeta(_out_shape(self, dim, False), D.int64)


def _count_decomp(self, dim=None):
    return sum_dim_IntList(aten.ne.Scalar(self, 0), _as_list(dim), False)


count_nonzero_dim_IntList = defop("count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor",
                                  tags=ATEN, meta=_count_meta, decomposition=_count_decomp)
count_nonzero = defop("count_nonzero(Tensor self, int? dim=None) -> Tensor", tags=ATEN,
                      meta=_count_meta, decomposition=_count_decomp)


# --------------------------------------------------------------------------- norms

def _vector_norm_meta(self, ord=2, dim=None, keepdim=False, *, dtype=None):
    name = "linalg.vector_norm"
    if not _is_float(self.dtype):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_torch_name(self.dtype)}")
    if dtype is not None and not _is_float(dtype):
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{_torch_name(dtype)}")
    if isinstance(ord, complex) or (hasattr(ord, "_ks")):
        raise TypeError(f"{name}: ord must be a real number, got {type(ord).__name__}")
    dims = norm_dims(dim, self.ndim)
    if ord < 0 or math.isinf(ord):
        if self.ndim and reduced_numel(self, dims) == 0:
            raise RuntimeError(f"{name} cannot compute the {ord} norm on an empty tensor "
                               f"because the operation does not have an identity")
    d = dtype if dtype is not None else self.dtype
    return TensorMeta(_out_shape(self, dim, keepdim), d.to_real())


def _vector_norm_decomp(self, ord=2, dim=None, keepdim=False, *, dtype=None):
    out = _vector_norm_meta(self, ord, dim, keepdim, dtype=dtype).dtype
    if dtype is not None and dtype is not self.dtype:
        self = aten._to_copy.default(self, dtype=dtype)
    half = self.dtype in (D.float16, D.bfloat16)
    if half:        # accumulate in float32 (PyTorch's opmath), round once at the end
        self = aten._to_copy.default(self, dtype=D.float32)
    dims = list(norm_dims(dim, self.ndim))
    a = aten.abs.default(self)
    if ord == 0:
        r = sum_dim_IntList(aten.ne.Scalar(a, 0), dims, keepdim, dtype=a.dtype)
    elif ord == math.inf:
        r = amax(a, dims, keepdim)
    elif ord == -math.inf:
        r = amin(a, dims, keepdim)
    elif ord == 1:
        r = sum_dim_IntList(a, dims, keepdim)
    elif ord == 2:
        r = aten.sqrt.default(sum_dim_IntList(aten.mul.Tensor(a, a), dims, keepdim))
    else:
        r = aten.pow.Tensor_Scalar(
            sum_dim_IntList(aten.pow.Tensor_Scalar(a, ord), dims, keepdim), 1.0 / ord)
    if r.dtype is not out:
        r = aten._to_copy.default(r, dtype=out)
    return r


linalg_vector_norm = defop("linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, "
                           "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                           tags=ATEN, meta=_vector_norm_meta, decomposition=_vector_norm_decomp)


def _p(p):
    return 2 if p is None else p


norm_Scalar = defop("norm.Scalar(Tensor self, Scalar p=2) -> Tensor", tags=ATEN,
                    meta=lambda self, p=2: _vector_norm_meta(self, _p(p)),
                    decomposition=lambda self, p=2: linalg_vector_norm(self, _p(p)))
norm_ScalarOpt_dim = defop(
    "norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor",
    tags=ATEN,
    meta=lambda self, p, dim, keepdim=False: _vector_norm_meta(self, _p(p), dim, keepdim),
    decomposition=lambda self, p, dim, keepdim=False:
    linalg_vector_norm(self, _p(p), dim, keepdim))
