"""Index-along-a-dim and flat-index ops: index_add/copy/fill/reduce, take, put, bucketing
(searchsorted, bucketize, histc) and counting (bincount, unique, unique_consecutive).

The index ops decompose to one gather or scatter prim with the 1-D index laid along
``dim``; every bound goes through ``prims.check_in_range`` first with PyTorch's message,
so eager, compiled and cuda programs refuse the same indices (and an in-place op that
fails writes nothing).  searchsorted and bucketize also have NumPy CPU kernels (a binary
search; the decomposition compares every value with every boundary).  ``bincount`` and
``unique*`` have outputs whose size depends on the data: their meta functions refuse (as
``nonzero``'s does) and they run eagerly on NumPy kernels (fnx/backends/cpu/index_ops.py).
"""
from __future__ import annotations

import math

from ...core import dtype as D
from ...ops import aten, prims
from .. import refs
from ..dims import wrap_dim
from ..registry import defop, nondifferentiable
from ..scalars import checked_convert
from .indexing import _data_dependent
from .shape import _reshape_to

INPLACE = ("inplace",)
_INDEX_REDUCES = ("prod", "mean", "amax", "amin")


def _shape(x):
    return tuple(x.shape)


def _int64(x):
    return x if x.dtype is D.int64 else refs.to_dtype(x, D.int64)


def _flat(x):
    return _reshape_to(x, [x.numel()])


def _at_least_1d(x):
    return x if x.ndim else _reshape_to(x, [1])


# --------------------------------------------------------------------------- checks

def check_index_source(name, self, dim, index, source):
    """index_add/index_reduce's checks (PyTorch's words); returns the wrapped dim."""
    if index.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: "
                           f"{index.dtype.scalar_type}")
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {index.dtype.scalar_type} and size: "
                         f"{list(index.shape)}")
    d = wrap_dim(dim, max(self.ndim, 1))
    if source.ndim and d >= source.ndim:
        raise RuntimeError(f"{name}(): Indexing dim {d} is out of bounds of the source tensor "
                           f"with dim {source.ndim}")
    n = index.numel()
    size = source.shape[d] if source.ndim else 1
    if n != size:
        raise RuntimeError(f"{name}(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({size}), for dim: {d}")
    s, t = list(_shape(self)), list(_shape(source))
    if self.ndim and source.ndim:
        s[d], t[d] = 0, 0
    if max(self.ndim, 1) != max(source.ndim, 1) or (self.ndim and source.ndim and s != t):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(_shape(self))} "
                           f"source.shape = {list(_shape(source))}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"{name}(): self ({self.dtype.scalar_type}) and source "
                           f"({source.dtype.scalar_type}) must have the same scalar type")
    return d


def check_index_copy(self, dim, index, source):
    name = "index_copy_()"
    if index.ndim > 1:
        raise IndexError(f"{name}: Index should have dimension 1 or 0 (got {index.ndim})")
    if index.dtype is not D.int64:
        raise RuntimeError(f"{name}: Expected a long tensor for index, but got "
                           f"{index.dtype.scalar_type}")
    d = wrap_dim(dim, max(self.ndim, 1))
    if self.ndim and source.ndim and self.ndim != source.ndim:
        raise IndexError(f"{name}: When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({self.ndim})")
    n = index.numel()
    size = source.shape[d] if source.ndim else 1
    if n != size:
        raise IndexError(f"{name}: Number of indices ({n}) should be equal to "
                         f"source.size(dim) ({size})")
    if self.ndim and source.ndim:
        for i in range(self.ndim):
            if i != d and self.shape[i] != source.shape[i]:
                raise RuntimeError(f"{name}: Source/destination tensor must have same slice "
                                   f"shapes. Destination slice shape: {self.shape[i]} at "
                                   f"dimension {i} and source slice shape: {source.shape[i]} "
                                   f"at dimension {i}.")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"{name}: self and source expected to have the same dtype, but got "
                           f"(self) {self.dtype.scalar_type} and (source) "
                           f"{source.dtype.scalar_type}")
    return d


def check_index_fill(self, dim, index, value):
    if index.dtype is not D.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if hasattr(value, "_ks") and value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    return wrap_dim(dim, max(self.ndim, 1))


def check_take(name, self, index):
    if index.dtype is not D.int64:
        raise RuntimeError(f"{name}: Expected a long tensor for index, but got "
                           f"{index.dtype.scalar_type}")


def check_put(self, index, source):
    check_take("put_()", self, index)
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, index.numel() "
                         f"= {index.numel()}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {self.dtype.scalar_type} and source.dtype = "
                           f"{source.dtype.scalar_type}")


def check_index_reduce(self, dim, index, source, reduce):
    if reduce not in _INDEX_REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    return check_index_source("index_reduce_", self, dim, index, source)


# --------------------------------------------------------------------------- decompositions

def _along(idx, dim, shape):
    """A 1-D int64 ``idx`` laid along ``dim`` of ``shape``."""
    return prims.broadcast_in_dim(idx, list(shape), [dim])


def _scatter_rows(name, self, d, index, source, mode, low_wraps, error, message):
    """``self`` (as >= 1-D) with ``source`` scattered at ``index`` along ``d``."""
    x, s = _at_least_1d(self), _at_least_1d(source)
    size = x.shape[d]
    idx = prims.check_in_range(_flat(_int64(index)), -size if low_wraps else 0, size, error,
                               message.format(d=d, size=size))
    if low_wraps:
        idx = _wrap(idx, size)
    out = prims.scatter(x, d, _along(idx, d, s.shape), s, mode)
    return _reshape_to(out, list(self.shape))


def _wrap(idx, size):
    dev = idx.device
    neg = prims.lt(idx, refs.full(_shape(idx), 0, D.int64, dev))
    return prims.where(neg, prims.add(idx, refs.full(_shape(idx), size, D.int64, dev)), idx)


def _index_add(self, dim, index, source, *, alpha=1):
    d = check_index_source("index_add_", self, dim, index, source)
    if alpha != 1:
        source = aten.mul.Tensor(source, refs.scalar(checked_convert(alpha, self.dtype),
                                                     self.dtype, self.device))
    return _scatter_rows("index_add", self, d, index, source, "add", False, "RuntimeError",
                         "index {{}} is out of bounds for dimension {d} with size {size}")


def _index_copy(self, dim, index, source):
    d = check_index_copy(self, dim, index, source)
    # duplicate indices: PyTorch leaves the winner unspecified; one of them is written
    return _scatter_rows("index_copy", self, d, index, source, "none", False, "IndexError",
                         "index_copy_(): index {{}} is out of bounds for dimension {d} with "
                         "size {size}")


def _fill_mask(self, d, index):
    """A bool tensor shaped like ``self``: True on the rows ``index`` picks along ``d``."""
    x = _at_least_1d(self)
    size, dev = x.shape[d], self.device
    idx = prims.check_in_range(_flat(index), -size, size, "IndexError",
                               f"index {{}} is out of bounds for dimension {d} with size "
                               f"{size}")
    idx = _wrap(idx, size)
    hit = prims.scatter(refs.full([size], False, D.bool, dev), 0, idx,
                        refs.full(_shape(idx), True, D.bool, dev), "none")
    return _reshape_to(_along(hit, d, x.shape), list(self.shape))


def _index_fill_scalar(self, dim, index, value):
    d = check_index_fill(self, dim, index, value)
    v = refs.full(_shape(self), checked_convert(value, self.dtype), self.dtype, self.device)
    return prims.where(_fill_mask(self, d, index), v, self)


def _index_fill_tensor(self, dim, index, value):
    d = check_index_fill(self, dim, index, value)
    v = refs.broadcast_to(refs.to_dtype(value, self.dtype), _shape(self))
    return aten.where.self(_fill_mask(self, d, index), v, self)


def _flat_index(name, self, index):
    n = self.numel()
    if n == 0 and index.numel():
        raise IndexError(f"{name}(): tried to take from an empty tensor")
    idx = prims.check_in_range(_flat(index), -n, n, "IndexError",
                               f"out of range: tried to access index {{}} on a tensor of {n} "
                               f"elements.")
    return _wrap(idx, n)


def _take(self, index):
    check_take("take()", self, index)
    if self.numel() == 0:       # nothing to read from (the index is empty too)
        return refs.full(_shape(index), False if self.dtype is D.bool else 0, self.dtype,
                         self.device)
    idx = _flat_index("take", self, index)
    return _reshape_to(prims.gather(_flat(self), 0, idx), list(index.shape))


def _put(self, index, source, accumulate=False):
    check_put(self, index, source)
    if index.numel() == 0:
        return aten.clone.default(self)
    idx = _flat_index("put", self, index)
    out = prims.scatter(_flat(self), 0, idx, _flat(source), "add" if accumulate else "none")
    return _reshape_to(out, list(self.shape))


def _index_reduce(self, dim, index, source, reduce, *, include_self=True):
    d = check_index_reduce(self, dim, index, source, reduce)
    x, s = _at_least_1d(self), _at_least_1d(source)
    size = x.shape[d]
    idx = prims.check_in_range(_flat(_int64(index)), 0, size, "IndexError",
                               "index out of range in self")
    out = aten.scatter_reduce.two(x, d, _along(idx, d, s.shape), s, reduce,
                                  include_self=include_self)
    return _reshape_to(out, list(self.shape))


def _inplace(functional, saves_self=False):
    """``op_`` as its functional twin then one copy into ``self``: every check and bound
    runs before anything is written, so a failing call leaves ``self`` unchanged.  A twin
    whose backward reads ``self`` (``saves_self``) gets a clone, which the copy leaves
    intact."""
    def fn(self, *args, **kwargs):
        x = aten.clone.default(self) if saves_self else self
        return aten.copy_.default(self, functional(x, *args, **kwargs))
    return fn


_ADD = "Tensor self, int dim, Tensor index, Tensor source"
_ADD_ = "Tensor(a!) self, int dim, Tensor index, Tensor source"
index_add = defop(f"index_add({_ADD}, *, Scalar alpha=1) -> Tensor", decomposition=_index_add)
index_add_ = defop(f"index_add_({_ADD_}, *, Scalar alpha=1) -> Tensor(a!)", tags=INPLACE,
                    decomposition=_inplace(_index_add))
index_copy = defop(f"index_copy({_ADD}) -> Tensor", decomposition=_index_copy)
index_copy_ = defop(f"index_copy_({_ADD_}) -> Tensor(a!)", tags=INPLACE,
                     decomposition=_inplace(_index_copy))
index_reduce = defop(f"index_reduce({_ADD}, str reduce, *, bool include_self=True) -> Tensor",
                     decomposition=_index_reduce)
index_reduce_ = defop(f"index_reduce_({_ADD_}, str reduce, *, bool include_self=True) "
                      f"-> Tensor(a!)", tags=INPLACE,
                       decomposition=_inplace(_index_reduce, True))
index_fill_int_Scalar = defop("index_fill.int_Scalar(Tensor self, int dim, Tensor index, "
                              "Scalar value) -> Tensor", decomposition=_index_fill_scalar)
index_fill_int_Tensor = defop("index_fill.int_Tensor(Tensor self, int dim, Tensor index, "
                              "Tensor value) -> Tensor", decomposition=_index_fill_tensor)
index_fill__int_Scalar = defop("index_fill_.int_Scalar(Tensor(a!) self, int dim, Tensor index, "
                               "Scalar value) -> Tensor(a!)", tags=INPLACE,
                                decomposition=_inplace(_index_fill_scalar))
index_fill__int_Tensor = defop("index_fill_.int_Tensor(Tensor(a!) self, int dim, Tensor index, "
                               "Tensor value) -> Tensor(a!)", tags=INPLACE,
                                decomposition=_inplace(_index_fill_tensor))
take = defop("take(Tensor self, Tensor index) -> Tensor", decomposition=_take)
put = defop("put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor",
            decomposition=_put)
put_ = defop("put_(Tensor(a!) self, Tensor index, Tensor source, bool accumulate=False) "
             "-> Tensor(a!)", tags=INPLACE,
              decomposition=_inplace(_put))


# --------------------------------------------------------------------------- bucketing

def check_searchsorted(boundaries, values, right, side, sorter):
    name = "torch.searchsorted()"
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(f"{name}: side can only be 'left' or 'right' but got {side}")
    if side == "left" and right:
        raise RuntimeError(f"{name}: side and right can't be set to opposites, got side of "
                           f"left while right was True")
    vshape = _shape(values) if hasattr(values, "_ks") else ()
    b = _shape(boundaries)
    if len(b) != 1 and (len(b) == 0 or b[:-1] != vshape[:-1] or len(b) != len(vshape)):
        raise RuntimeError(f"{name}: boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must "
                           f"match, but we got boundaries tensor {list(b)} and input value "
                           f"tensor {list(vshape)}")
    if sorter is not None:
        if _shape(sorter) != b:
            raise RuntimeError(f"{name}: boundary and sorter must have the same size, but got "
                               f"boundary tensor {list(b)}and got sorter tensor "
                               f"{list(_shape(sorter))}")
        if sorter.dtype is not D.int64:
            raise RuntimeError(f"{name}: sorter must be a tensor of long dtype but got "
                               f"{sorter.dtype.scalar_type}")
    return right or side == "right"


def _searchsorted(boundaries, values, *, out_int32=False, right=False, side=None, sorter=None):
    right = check_searchsorted(boundaries, values, right, side, sorter)
    if not hasattr(values, "_ks"):
        values = refs.scalar(values, D.float64 if isinstance(values, float) else D.int64,
                             boundaries.device)
    if sorter is not None:
        n = boundaries.shape[-1]
        s = prims.check_in_range(sorter, 0, n, "RuntimeError",
                                 "torch.searchsorted(): sorter index out of range")
        boundaries = aten.gather.default(boundaries, -1, s)
    # the insertion point counts the boundaries below the value (or not above it)
    v = aten.unsqueeze.default(values, -1)
    b = boundaries if boundaries.ndim == 1 else aten.unsqueeze.default(boundaries, -2)
    below = aten.le.Tensor(b, v) if right else aten.lt.Tensor(b, v)
    out = aten.sum.dim_IntList(below, [-1], dtype=D.int32 if out_int32 else D.int64)
    return out


def check_bucketize(boundaries):
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.ndim})")


def _bucketize(self, boundaries, *, out_int32=False, right=False):
    check_bucketize(boundaries)
    return _searchsorted(boundaries, self, out_int32=out_int32, right=right)


_SS = "*, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None"
searchsorted_Tensor = defop(f"searchsorted.Tensor(Tensor sorted_sequence, Tensor self, {_SS}) "
                            f"-> Tensor", decomposition=_searchsorted)
searchsorted_Scalar = defop(f"searchsorted.Scalar(Tensor sorted_sequence, Scalar self, {_SS}) "
                            f"-> Tensor", decomposition=_searchsorted)
bucketize_Tensor = defop("bucketize.Tensor(Tensor self, Tensor boundaries, *, "
                         "bool out_int32=False, bool right=False) -> Tensor",
                         decomposition=_bucketize)
bucketize_Scalar = defop("bucketize.Scalar(Scalar self, Tensor boundaries, *, "
                         "bool out_int32=False, bool right=False) -> Tensor",
                         decomposition=_bucketize)


def check_histc(self, bins, min, max):
    if not (self.dtype.is_floating_point):
        raise NotImplementedError(f'"histogram_cpu" not implemented for '
                                  f"'{self.dtype.scalar_type}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           f"dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not (math.isfinite(min) and math.isfinite(max)):
        raise RuntimeError(f"torch.histc: range of [{min}, {max}] is not finite")


def _histc(self, bins=100, min=0, max=0):
    check_histc(self, bins, min, max)
    dev, ct = self.device, refs.opmath_dtype(self.dtype)
    x = refs.to_dtype(_flat(self), ct)
    n = x.numel()
    if min == max and n:
        # the data's range (widened by 1 each way when it is a single value)
        lo, hi = aten.amin.default(x), aten.amax.default(x)
        same = aten.eq.Tensor(lo, hi)
        lo = aten.where.self(same, aten.sub.Tensor(lo, 1.0), lo)
        hi = aten.where.self(same, aten.add.Tensor(hi, 1.0), hi)
        # a NaN or infinite element makes the data's range unusable: refused on every path
        finite = aten.logical_and.default(aten.isfinite.default(lo), aten.isfinite.default(hi))
        ok = prims.check_in_range(refs.to_dtype(finite, D.int64), 1, 2, "RuntimeError",
                                  "torch.histc: range of the data (min == max, so the range "
                                  "is taken from the input) is not finite")
        lo = aten.where.self(aten.eq.Scalar(ok, 1), lo, hi)   # the check's result is used
    else:
        lo = refs.scalar(float(min) - (min == max), ct, dev)
        hi = refs.scalar(float(max) + (min == max), ct, dev)
    inside = aten.logical_and.default(aten.ge.Tensor(x, lo), aten.le.Tensor(x, hi))
    pos = aten.floor.default(aten.div.Tensor(aten.mul.Scalar(aten.sub.Tensor(x, lo), bins),
                                             aten.sub.Tensor(hi, lo)))
    # outside (or NaN): bin 0 with weight 0; the max itself falls in the last bin
    pos = prims.where(inside, pos, refs.full(_shape(pos), 0.0, ct, dev))
    pos = aten.clamp.default(pos, 0, bins - 1)
    counts = aten.scatter_add.default(refs.full([bins], 0.0, ct, dev), 0,
                                      refs.to_dtype(pos, D.int64), refs.to_dtype(inside, ct))
    return refs.to_dtype(counts, self.dtype)


histc = defop("histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor",
              decomposition=_histc)


# --------------------------------------------------------------------------- counting

def check_bincount(self, weights, minlength):
    if self.dtype is D.bool or self.dtype.is_floating_point or self.dtype.is_complex:
        raise NotImplementedError(f'"bincount_cpu" not implemented for '
                                  f"'{self.dtype.scalar_type}'")
    if self.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != self.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights is None:
        return D.int64
    return D.float32 if weights.dtype is D.float32 else D.float64


def _bincount_meta(self, weights=None, minlength=0):
    check_bincount(self, weights, minlength)
    _data_dependent("bincount")


bincount = defop("bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor",
                 meta=_bincount_meta)


def check_unique(self, dim=None):
    if dim is not None:
        wrap_dim(dim, self.ndim)


def _unique_meta(name):
    def meta(self, *args, **kwargs):
        if name == "unique_dim":            # (self, dim, sorted, ...)
            check_unique(self, args[0] if args else kwargs["dim"])
        elif name == "unique_consecutive":  # (self, return_inverse, return_counts, dim)
            check_unique(self, kwargs.get("dim", args[2] if len(args) > 2 else None))
        _data_dependent(name)
    return meta


unique2 = defop("_unique2(Tensor self, bool sorted=True, bool return_inverse=False, "
                "bool return_counts=False) -> (Tensor, Tensor, Tensor)",
                meta=_unique_meta("_unique2"))
unique_dim = defop("unique_dim(Tensor self, int dim, bool sorted=True, "
                   "bool return_inverse=False, bool return_counts=False) "
                   "-> (Tensor, Tensor, Tensor)", meta=_unique_meta("unique_dim"))
unique_consecutive = defop("unique_consecutive(Tensor self, bool return_inverse=False, "
                           "bool return_counts=False, int? dim=None) -> (Tensor, Tensor, Tensor)",
                           meta=_unique_meta("unique_consecutive"))

nondifferentiable(searchsorted_Tensor, searchsorted_Scalar, bucketize_Tensor,
                  bucketize_Scalar, histc, bincount, unique2, unique_dim, unique_consecutive)
