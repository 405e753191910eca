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

from ...core import dtype as D
from ...core.grad_mode import is_grad_enabled
from ...ops import aten, prims
from .. import refs
from ..grad_utils import conj, reduced_dims, reverse_cumsum, sgn, unreduce, zeros
from ..registry import TensorMeta, decomposition, defop, derivative, nondifferentiable
from ..dims import reduction_shape, wrap_dim, wrap_dims

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
                               f"{self.dtype.scalar_type}")
        return self.dtype
    if not _is_float(dtype):
        raise RuntimeError(f"{name}(): could not infer output dtype. Optional dtype must be "
                           f"either a floating point or complex dtype. Got: "
                           f"{dtype.scalar_type}")
    return dtype


def reduced_numel(self, dims) -> int:
    return math.prod(self.shape[d] for d in dims)


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
def _sum_backward(grad, self_shape, dim, keepdim):
    dims = reduced_dims(dim, len(self_shape))     # (a 0-dim input has no dim to put back)
    return aten.expand.default(unreduce(grad, self_shape, dims, keepdim), list(self_shape))


@derivative(sum_default)
def _sum_all_backward(grad, self_shape):
    return aten.expand.default(grad, list(self_shape))


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


def _exclusive_cumprod(x, d):
    """prod_{j < k} x_j at each k along ``d`` (1 at k = 0)."""
    pad = [0] * (2 * (x.ndim - d))
    pad[-2] = 1                         # one leading element along d...
    shifted = aten.constant_pad_nd.default(
        aten.slice.Tensor(x, d, 0, x.shape[d] - 1), pad, 1)    # ...equal to 1
    return aten.cumprod.default(shifted, d)


def _prod_of_others(x, d):
    """prod_{j != k} x_j at each k along ``d``, from the products before and after k:
    no division, so zeros need no special case and the result differentiates again."""
    if x.shape[d] == 0:
        return x
    after = aten.flip.default(_exclusive_cumprod(aten.flip.default(x, [d]), d), [d])
    return aten.mul.Tensor(_exclusive_cumprod(x, d), after)


@derivative(prod_default)
def _prod_backward(grad, self):
    flat = aten.reshape.default(self, [-1])
    others = aten.reshape.default(_prod_of_others(flat, 0), list(self.shape))
    return aten.mul.Tensor(grad, conj(others))


@derivative(prod_dim_int)
def _prod_dim_backward(grad, self, dim, keepdim):
    if self.ndim == 0:
        return grad
    d = wrap_dim(dim, self.ndim)
    g = grad if keepdim else aten.unsqueeze.default(grad, d)
    return aten.mul.Tensor(g, conj(_prod_of_others(self, d)))


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


@derivative(mean_dim)
def _mean_backward(grad, self_shape, dim, keepdim):
    dims = reduced_dims(dim, len(self_shape))
    count = 1
    for d in dims:
        count *= self_shape[d]
    g = aten.div.Scalar(unreduce(grad, self_shape, dims, keepdim), count)
    return aten.expand.default(g, list(self_shape))


@derivative(mean_default)
def _mean_all_backward(grad, self_shape):
    # (an empty input gets an empty gradient: no division by 0 needed)
    n = math.prod(self_shape)
    return aten.expand.default(aten.div.Scalar(grad, max(n, 1)), list(self_shape))


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


def _distribute(grad, self, result, dims, keepdim, with_nan=False):
    """The gradient of a max/min over ``dims``, split evenly among the tied extremes."""
    g = unreduce(grad, self.shape, dims, keepdim)
    r = unreduce(result, self.shape, dims, keepdim)
    mask = aten.eq.Tensor(self, r)
    if with_nan:        # max()/min() propagate NaN: the NaN elements get the gradient
        mask = aten.logical_or.default(mask, aten.logical_and.default(
            aten.isnan.default(self), aten.isnan.default(r)))
    count = sum_dim_IntList(mask, list(dims), True, dtype=g.dtype)
    return aten.where.self(mask, aten.div.Tensor(g, count), 0.0)


@derivative(amax, amin)
def _amax_backward(grad, self, dim, keepdim, result):
    return _distribute(grad, self, result, reduced_dims(dim, self.ndim), keepdim)


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


@derivative(max_default, min_default)
def _max_backward(grad, self, result):
    return _distribute(grad, self, result, tuple(range(self.ndim)), False, with_nan=True)


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


@derivative(max_dim, min_dim)
def _max_dim_backward(grad, self, dim, keepdim, result1):
    # the gradient goes to the element the index output names (only it is saved)
    if self.ndim == 0:
        return grad
    d = wrap_dim(dim, self.ndim)
    g, index = grad, result1
    if not keepdim:
        g, index = aten.unsqueeze.default(g, d), aten.unsqueeze.default(index, d)
    return aten.scatter.src(zeros(self.shape, g), d, index, g)


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
nondifferentiable(argmax, argmin)


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
nondifferentiable(any_default, any_dim, any_dims)


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
nondifferentiable(all_default, all_dim, all_dims)


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


def _var_backward_impl(grad, self, dim, correction, keepdim):
    """2 (x - mean) / (N - correction); with no dim and N <= correction, PyTorch's inf
    (or nan where x equals the mean)."""
    dims = reduced_dims(dim, self.ndim)
    g = unreduce(grad, self.shape, dims, keepdim)
    dev = aten.sub.Tensor(self, mean_dim(self, list(dims), True)) if dims else \
        aten.sub.Tensor(self, self)
    dof = reduced_numel(self, dims) - correction_of(correction)
    if (dim is None or self.ndim == 0) and dof <= 0:
        scale = aten.where.self(aten.eq.Scalar(dev, 0), math.nan, math.inf)
        return aten.mul.Tensor(g, scale)
    return aten.mul.Tensor(aten.mul.Tensor(g, dev), 2.0 / dof if dof else math.inf)


@derivative(var_correction)
def _var_backward(grad, self, dim, correction, keepdim):
    return _var_backward_impl(grad, self, dim, correction, keepdim)


@derivative(var_dim)
def _var_dim_backward(grad, self, dim, unbiased, keepdim):
    return _var_backward_impl(grad, self, dim, int(unbiased), keepdim)


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


def _std_backward_impl(grad, self, dim, correction, keepdim, result):
    # var's gradient times d sqrt(v) / dv = 1 / (2 std); 0 where std is 0 (not nan)
    g = aten.where.self(aten.eq.Scalar(result, 0), 0.0,
                        aten.div.Tensor(grad, aten.mul.Scalar(result, 2)))
    return _var_backward_impl(g, self, dim, correction, keepdim)


@derivative(std_correction)
def _std_backward(grad, self, dim, correction, keepdim, result):
    return _std_backward_impl(grad, self, dim, correction, keepdim, result)


@derivative(std_dim)
def _std_dim_backward(grad, self, dim, unbiased, keepdim, result):
    return _std_backward_impl(grad, self, dim, int(unbiased), keepdim, result)


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


def _with_mean_grad(g, grad_mean, self, dim, keepdim):
    """Add the mean output's gradient (if any flowed) to the var/std part ``g``."""
    if grad_mean is None:
        return g
    dims = reduced_dims(dim, self.ndim)
    m = aten.div.Scalar(unreduce(grad_mean, self.shape, dims, keepdim),
                        max(reduced_numel(self, dims), 1))
    return m if g is None else aten.add.Tensor(g, m)


@derivative(var_mean_correction)
def _var_mean_backward(grads, self, dim, correction, keepdim):
    g = None if grads[0] is None else _var_backward_impl(grads[0], self, dim, correction,
                                                          keepdim)
    return aten.expand.default(_with_mean_grad(g, grads[1], self, dim, keepdim),
                               list(self.shape))


@derivative(std_mean_correction)
def _std_mean_backward(grads, self, dim, correction, keepdim, result0):
    # only the std is saved: the mean may be changed in place after
    g = None if grads[0] is None else _std_backward_impl(grads[0], self, dim, correction,
                                                          keepdim, result0)
    return aten.expand.default(_with_mean_grad(g, grads[1], self, dim, keepdim),
                               list(self.shape))


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


@derivative(logsumexp)
def _logsumexp_backward(grad, self, dim, keepdim, result):
    dims = reduced_dims(dim, self.ndim)
    g = unreduce(grad, self.shape, dims, keepdim)
    r = unreduce(result, self.shape, dims, keepdim)
    return aten.mul.Tensor(g, aten.exp.default(aten.sub.Tensor(self, r)))


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


@derivative(cumsum)
def _cumsum_backward(grad, dim):
    return reverse_cumsum(grad, wrap_dim(dim, grad.ndim)) if grad.ndim else grad



def fnx_grad_enabled():
    return is_grad_enabled()


def _cumprod_backward_quadratic(grad, x, d):
    """sum_{i >= k} g_i prod_{j <= i, j != k} x_j with no division: the products after k,
    R[k, i] = prod_{k < j <= i} x_j, as an n x n cumprod.  O(n^2), but differentiable
    again at zeros too; used when the backward itself is recorded (create_graph=True)."""
    n, dev = x.shape[d], x.device
    xm, gm = aten.movedim.int(x, d, -1), aten.movedim.int(grad, d, -1)
    pos = aten.arange.default(n, dtype=D.int64, device=dev)
    rows, cols = aten.unsqueeze.default(pos, 1), aten.unsqueeze.default(pos, 0)  # k, i
    after = aten.cumprod.default(aten.where.self(
        aten.gt.Tensor(cols, rows), aten.unsqueeze.default(xm, -2), 1.0), -1)
    terms = aten.where.self(aten.ge.Tensor(cols, rows),
                            aten.mul.Tensor(aten.unsqueeze.default(gm, -2), after), 0.0)
    s = sum_dim_IntList(terms, [-1], False)
    return aten.movedim.int(aten.mul.Tensor(_exclusive_cumprod(xm, xm.ndim - 1), s), -1, d)


@derivative(cumprod)
def _cumprod_backward(grad, self, dim, result):
    """out_i = prod_{j <= i} x_j, so d out / d x_k = sum_{i >= k} g_i out_i / x_k, except
    at zeros: the first zero of a row gets sum_{i >= k} g_i prod_{j <= i, j != k} x_j (the
    products with that zero set to 1), later elements get 0."""
    if self.ndim == 0:
        return grad
    d = wrap_dim(dim, self.ndim)
    if fnx_grad_enabled():
        return _cumprod_backward_quadratic(grad, conj(self), d)
    x, out = conj(self), conj(result)
    zero = aten.eq.Scalar(self, 0)
    first = aten.logical_and.default(zero, aten.eq.Scalar(aten.cumsum.default(zero, d), 1))
    plain = aten.div.Tensor(reverse_cumsum(aten.mul.Tensor(grad, out), d),
                            aten.masked_fill.Scalar(x, zero, 1))
    without_first = aten.cumprod.default(aten.masked_fill.Scalar(x, first, 1), d)
    at_first = reverse_cumsum(aten.mul.Tensor(grad, without_first), d)
    return aten.where.self(first, at_first, aten.where.self(zero, 0.0, plain))


# --------------------------------------------------------------------------- count_nonzero

def _count_meta(self, dim=None):
    return TensorMeta(_out_shape(self, dim, False), D.int64)


def _count_decomp(self, dim=None):
    return sum_dim_IntList(aten.ne.Scalar(self, 0), _as_list(dim), False)


count_nonzero_dim_IntList = defop("count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor",
                                  tags=ATEN, meta=_count_meta, decomposition=_count_decomp)
count_nonzero = defop("count_nonzero(Tensor self, int? dim=None) -> Tensor", tags=ATEN,
                      meta=_count_meta, decomposition=_count_decomp)
nondifferentiable(count_nonzero_dim_IntList, count_nonzero)


# --------------------------------------------------------------------------- norms

def _vector_norm_meta(self, ord=2, dim=None, keepdim=False, *, dtype=None):
    name = "linalg.vector_norm"
    if not _is_float(self.dtype):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {self.dtype.scalar_type}")
    if dtype is not None and not _is_float(dtype):
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{dtype.scalar_type}")
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


@derivative(linalg_vector_norm)
def _vector_norm_backward(grad, self, ord, dim, keepdim, result):
    """PyTorch's norm_backward: 0 at a zero norm (not nan), ties of the inf-norm share."""
    dims = reduced_dims(dim, self.ndim)
    g = unreduce(grad, self.shape, dims, keepdim)
    n = unreduce(result, self.shape, dims, keepdim)
    p = float(ord)
    if p == 0:
        return zeros(self.shape, g)
    if p == 1:
        return aten.mul.Tensor(sgn(self), g)
    zero_norm = aten.eq.Scalar(n, 0)
    if p == 2:
        return aten.mul.Tensor(self, aten.where.self(zero_norm, 0.0, aten.div.Tensor(g, n)))
    if math.isinf(p):
        a = aten.abs.default(self)
        mask = aten.logical_or.default(aten.eq.Tensor(a, n), aten.isnan.default(a))
        count = sum_dim_IntList(mask, list(dims), True, dtype=g.dtype)
        return aten.mul.Tensor(sgn(self), aten.where.self(mask, aten.div.Tensor(g, count), 0.0))
    a = aten.abs.default(self)
    if p < 1:
        scaled = aten.mul.Tensor(sgn(self), aten.where.self(
            aten.eq.Scalar(self, 0), 0.0, aten.pow.Tensor_Scalar(a, p - 1)))
        return aten.mul.Tensor(scaled, aten.mul.Tensor(g, aten.pow.Tensor_Scalar(n, 1 - p)))
    if p < 2:
        scaled = aten.mul.Tensor(sgn(self), aten.pow.Tensor_Scalar(a, p - 1))
    else:
        scaled = aten.mul.Tensor(self, aten.pow.Tensor_Scalar(a, p - 2))
    scale = aten.where.self(zero_norm, 0.0, aten.div.Tensor(g, aten.pow.Tensor_Scalar(n, p - 1)))
    return aten.mul.Tensor(scaled, scale)


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
