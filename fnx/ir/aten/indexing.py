"""Indexing operators: advanced indexing (index, index_put), gather/scatter, masks, nonzero.

``index.Tensor`` takes one optional index tensor per leading dim (None: the whole dim),
integer tensors broadcast together; a bool mask of k dims stands for its k nonzero
coordinate tensors.  The result puts the broadcast index dims where the indexed dims
were when those are adjacent, else first: NumPy's rule, which is also PyTorch's.
Ops whose output shape depends on the data (``nonzero``, ``masked_select``, an index
with a bool mask) have meta functions that validate and then refuse to guess a shape.
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...ops import aten, prims
from .. import refs
from ..grad_utils import conj, zeros
from ..registry import TensorMeta, decomposition, defop, derivative, nondifferentiable
from ..dims import broadcast_shapes, wrap_dim
from ..strides import expand_geometry, shape_str
from .shape import _composite, _copy, _reshape_to, _slice_dim, _transpose_to, _zero
from ..scalars import checked_convert
import math

CORE = ("core",)
INPLACE = ("inplace",)

_INDEX_DTYPES = (D.int64, D.int32, D.uint8, D.bool)


def _shape(x) -> tuple:
    return tuple(x.shape)


def is_mask(x) -> bool:
    return x._dtype is D.bool or x._dtype is D.uint8


def check_indices(shape, indices):
    """Validate ``index.Tensor``'s index list against ``self``'s shape (data-free checks)."""
    count = 0
    for x in indices:
        if x is None:
            count += 1
            continue
        if x.dtype not in _INDEX_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if is_mask(x):
            for j, s in enumerate(x.shape):
                if count + j < len(shape) and s != shape[count + j]:
                    raise IndexError(f"The shape of the mask {shape_str(x.shape)} at index {j} "
                                     f"does not match the shape of the indexed tensor "
                                     f"{shape_str(shape)} at index {count + j}")
            count += x.ndim
        else:
            count += 1
    if count > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)} (got {count})")


def broadcast_index_shapes(shapes) -> tuple:
    try:
        return broadcast_shapes(*shapes)
    except RuntimeError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                         "with shapes " + ", ".join(shape_str(s) for s in shapes)) from None


def advanced_index_shape(shape, entries) -> tuple:
    """Result shape of indexing ``shape`` with ``entries``: per leading dim None (whole
    dim) or the shape of an integer index (bool masks already expanded)."""
    pos = [i for i, e in enumerate(entries) if e is not None]
    if not pos:
        return tuple(shape)
    b = broadcast_index_shapes([entries[i] for i in pos])
    if pos[-1] - pos[0] + 1 == len(pos):      # adjacent: the index dims stay in place
        return tuple(shape[:pos[0]]) + b + tuple(shape[pos[-1] + 1:])
    return b + tuple(s for i, s in enumerate(shape) if i >= len(entries) or entries[i] is None)


def _data_dependent(name):
    raise NotImplementedError(f"aten::{name}: the output shape depends on the tensor data, so "
                              f"it has no meta shape")


def _index_meta(self, indices):
    shape = _shape(self)
    check_indices(shape, indices)
    if any(x is not None and is_mask(x) for x in indices):
        _data_dependent("index.Tensor (with a boolean mask)")
    entries = [None if x is None else _shape(x) for x in indices]
    return TensorMeta(advanced_index_shape(shape, entries), self.dtype)


index_Tensor = defop("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", tags=CORE,
                     meta=_index_meta)


# ---- decomposition of advanced indexing: one gather (index) or scatter (index_put) over
# ``self`` with its indexed dims moved first and merged into one, at the linear index.

def _int64(x):
    return refs.to_dtype(x, D.int64)


def index_entries(self, indices, name):
    """One entry per dim of ``self``: None (the whole dim) or an int64 index tensor.

    A bool (or uint8) mask of k dims stands for its k nonzero coordinate vectors: the
    data-dependent step, eager only (prims.nonzero).
    """
    check_indices(_shape(self), indices)
    entries = []
    for x in indices:
        if x is None:
            entries.append(None)
        elif is_mask(x):
            if x.ndim == 0:
                raise IndexError(f"{name}: a 0-dim boolean index is not supported here; "
                                 f"index with a Python bool or unsqueeze first")
            m = x if x.dtype is D.bool else prims.ne(x, refs.full(_shape(x), 0, x.dtype,
                                                                   x.device))
            coords = prims.nonzero(m)                       # (nnz, k), row-major order
            nnz = coords.shape[0]
            entries.extend(_reshape_to(_slice_dim(coords, 1, j, j + 1), [nnz])
                           for j in range(x.ndim))
        else:
            entries.append(_int64(x))
    return entries + [None] * (self.ndim - len(entries))


class IndexPlan:
    """``self`` viewed as (M, *rest): the indexed dims first, merged into one of size M.

    ``linear`` is the flattened broadcast index into that merged dim.  A negative index
    wraps; an out-of-range one fails its ``check_in_range`` (eager, compiled and on cuda)
    instead of silently reading a neighbouring row.
    """

    def __init__(self, self_, entries):
        shape = _shape(self_)
        self.pos = [i for i, e in enumerate(entries) if e is not None]
        self.rest = [i for i, e in enumerate(entries) if e is None]
        self.perm = self.pos + self.rest
        self.rest_shape = [shape[i] for i in self.rest]
        self.sizes = [shape[i] for i in self.pos]
        self.merged = math.prod(self.sizes)
        self.index_shape = broadcast_index_shapes([tuple(entries[i].shape) for i in self.pos])
        self.count = math.prod(self.index_shape)
        # adjacent indexed dims keep their place in the result; otherwise they go first
        self.adjacent = self.pos[-1] - self.pos[0] + 1 == len(self.pos)
        self.lead = sum(1 for i in self.rest if i < self.pos[0]) if self.adjacent else 0
        dev, b = self_.device, list(self.index_shape)
        linear, stride = None, 1
        for i in reversed(self.pos):
            size = shape[i]
            e = prims.check_in_range(entries[i], -size, size, "IndexError",
                                     f"index {{}} is out of bounds for dimension {i} with "
                                     f"size {size}")
            e = refs.broadcast_to(e, self.index_shape)
            zero = refs.full(b, 0, D.int64, dev)
            e = prims.where(prims.lt(e, zero), prims.add(e, refs.full(b, size, D.int64, dev)),
                            e)
            term = prims.mul(e, refs.full(b, stride, D.int64, dev))
            linear = term if linear is None else prims.add(linear, term)
            stride *= size
        self.linear = _reshape_to(linear, [self.count])

    def merge(self, x):
        """``x`` (shaped like self) as (M, *rest)."""
        return _reshape_to(_transpose_to(x, self.perm), [self.merged] + self.rest_shape)

    def unmerge(self, x):
        """The inverse of ``merge``."""
        t = _reshape_to(x, self.sizes + self.rest_shape)
        return _transpose_to(t, [self.perm.index(i) for i in range(len(self.perm))])

    def result_shape(self) -> list:
        r, b = self.rest_shape, list(self.index_shape)
        return r[:self.lead] + b + r[self.lead:]

    def to_result(self, x):
        """(count, *rest) rows -> the result layout (index dims in place or first)."""
        k, nb = self.lead, len(self.index_shape)
        x = _reshape_to(x, list(self.index_shape) + self.rest_shape)
        perm = list(range(nb, nb + k)) + list(range(nb)) + list(range(nb + k, x.ndim))
        return _transpose_to(x, perm)

    def from_result(self, x):
        """The inverse of ``to_result``: result layout -> (count, *rest) rows."""
        k, nb = self.lead, len(self.index_shape)
        perm = list(range(k, k + nb)) + list(range(k)) + list(range(k + nb, x.ndim))
        return _reshape_to(_transpose_to(x, perm), [self.count] + self.rest_shape)

    def rows_index(self):
        """``linear`` broadcast over the rest dims: the gather/scatter index along dim 0."""
        return prims.broadcast_in_dim(self.linear, [self.count] + self.rest_shape, [0])


@decomposition(index_Tensor)
def _index_decomp(self, indices):
    entries = index_entries(self, indices, "index")
    if all(e is None for e in entries):
        return _copy(self)
    plan = IndexPlan(self, entries)
    return plan.to_result(prims.gather(plan.merge(self), 0, plan.rows_index()))


@derivative(index_Tensor)
def _index_backward(grad, self, indices):
    # repeated indices add up
    return index_put(zeros(self.shape, grad), indices, grad, True), None


def masked_fill_dispatch(self, indices, values, accumulate) -> bool:
    """PyTorch's shortcut: one bool mask and a one-element value is a masked_fill_ (the value
    is cast to self's dtype instead of having to match it)."""
    if accumulate or values.numel() != 1:
        return False
    masks = [x for x in indices if x is not None]
    return len(masks) == 1 and is_mask(masks[0])


def check_index_put(self, indices, values, accumulate, result_shape):
    if masked_fill_dispatch(self, indices, values, accumulate):
        return
    vs = _shape(values)
    ok = len(vs) <= len(result_shape) and all(
        v == 1 or v == r for v, r in zip(reversed(vs), reversed(result_shape)))
    if not ok:
        raise RuntimeError(f"shape mismatch: value tensor of shape {shape_str(vs)} cannot be "
                           f"broadcast to indexing result of shape {shape_str(result_shape)}")
    if values.dtype is not self.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{self.dtype.scalar_type} for the destination and "
                           f"{values.dtype.scalar_type} for the source.")


def _index_put_meta(self, indices, values, accumulate=False):
    shape = _shape(self)
    check_indices(shape, indices)
    if not any(x is not None and is_mask(x) for x in indices):
        entries = [None if x is None else _shape(x) for x in indices]
        check_index_put(self, indices, values, accumulate, advanced_index_shape(shape, entries))
    elif values.dtype is not self.dtype and \
            not masked_fill_dispatch(self, indices, values, accumulate):
        check_index_put(self, indices, values, accumulate, _shape(values))
    return TensorMeta(shape, self.dtype)


index_put = defop("index_put(Tensor self, Tensor?[] indices, Tensor values, "
                  "bool accumulate=False) -> Tensor", tags=CORE, meta=_index_put_meta)
index_put_ = defop("index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, "
                   "bool accumulate=False) -> Tensor(a!)", tags=INPLACE,
                   meta=lambda self, indices, values, accumulate=False: (
                       _index_put_meta(self, indices, values, accumulate), self)[1])


def _masked_fill_put(self, indices, values):
    """index_put with one bool mask and a one-element value: a select, no data needed."""
    start = 0
    for x in indices:
        if x is not None:
            break
        start += 1
    mask = next(x for x in indices if x is not None)
    if mask.ndim == 0:
        raise IndexError("index_put_: a 0-dim boolean index is not supported here; index "
                         "with a Python bool or unsqueeze first")
    if mask.dtype is not D.bool:
        mask = prims.ne(mask, refs.full(_shape(mask), 0, mask.dtype, mask.device))
    where = prims.broadcast_in_dim(mask, list(self.shape),
                                   list(range(start, start + mask.ndim)))
    # the value is cast to self's dtype (no dtype match required on this path)
    value = _reshape_to(refs.to_dtype(values, self.dtype), [])
    return prims.where(where, prims.broadcast_in_dim(value, list(self.shape), []), self)


@decomposition(index_put)
def _index_put_decomp(self, indices, values, accumulate=False):
    _index_put_meta(self, indices, values, accumulate)
    if masked_fill_dispatch(self, indices, values, accumulate):
        return _masked_fill_put(self, indices, values)
    entries = index_entries(self, indices, "index_put_")
    if all(e is None for e in entries):
        v = refs.broadcast_to(values, _shape(self))
        return prims.add(self, v) if accumulate else _copy(v)
    plan = IndexPlan(self, entries)
    check_index_put(self, indices, values, accumulate, tuple(plan.result_shape()))
    rows = plan.from_result(refs.broadcast_to(values, plan.result_shape()))
    # duplicate indices: accumulate adds them all; otherwise one of them (the last) wins
    out = prims.scatter(plan.merge(self), 0, plan.rows_index(), rows,
                        "add" if accumulate else "none")
    return plan.unmerge(out)


@derivative(index_put)
def _index_put_backward(grad, indices, values, accumulate, needs_input_grad):
    g_self = None
    if needs_input_grad[0]:
        # written positions lose self's value, unless the values were added to it
        g_self = grad if accumulate else index_put(
            grad, indices, zeros([], grad), False)
    g_values = index_Tensor(grad, indices) if needs_input_grad[2] else None
    return g_self, None, g_values


def check_index_select(self, dim, index):
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in (D.int64, D.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    shape = _shape(self)
    d = wrap_dim(dim, len(shape))
    if not shape:
        if index.numel() != 1:
            raise IndexError(f"index_select(): Index to scalar can have only 1 value, got "
                             f"{index.numel()} value(s)")
        return d, ()
    return d, shape[:d] + (index.numel(),) + shape[d + 1:]


index_select = defop("index_select(Tensor self, int dim, Tensor index) -> Tensor", tags=CORE,
                     meta=lambda self, dim, index: TensorMeta(
                         check_index_select(self, dim, index)[1], self.dtype))


@decomposition(index_select)
def _index_select_decomp(self, dim, index):
    d, shape = check_index_select(self, dim, index)
    x = self if self.ndim else _reshape_to(self, [1])
    n = index.numel()
    rows = list(x.shape)
    rows[d] = n
    # no wrapping of negative indices here: PyTorch raises for them
    flat = prims.check_in_range(_reshape_to(_int64(index), [n]), 0, x.shape[d], "IndexError",
                                "index out of range in self")
    idx = prims.broadcast_in_dim(flat, rows, [d])
    return _reshape_to(prims.gather(x, d, idx), list(shape))


def _along(index, dim, shape):
    """A 1-D ``index`` laid along ``dim`` of ``shape`` (int64, expanded)."""
    if index.dtype is not D.int64:
        index = refs_to_int64(index)
    view = [1] * len(shape)
    view[dim] = index.numel()
    return aten.expand.default(aten.reshape.default(index, view), list(shape))


def refs_to_int64(x):
    return aten._to_copy.default(x, dtype=D.int64)


@derivative(index_select)
def _index_select_backward(grad, self, dim, index):
    if self.ndim == 0:
        return aten.reshape.default(grad, []), None
    d = wrap_dim(dim, self.ndim)
    return scatter_add(zeros(self.shape, grad), d, _along(index, d, grad.shape), grad), None


def check_gather(self, dim, index):
    if index.dtype not in (D.int64, D.int32):
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    d = wrap_dim(dim, self.ndim)
    if max(self.ndim, 1) != max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    if index.numel():
        for i in range(index.ndim):
            if i != d and index.shape[i] > self.shape[i]:
                raise RuntimeError(f"Size does not match at dimension {i} expected index "
                                   f"{shape_str(index.shape)} to be smaller than self "
                                   f"{shape_str(self.shape)} apart from dimension {d}")
    return d


gather = defop("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
               tags=CORE, meta=lambda self, dim, index, *, sparse_grad=False: (
                   check_gather(self, dim, index), TensorMeta(_shape(index), self.dtype))[1])



def checked_index(index, dim, size):
    """``index`` through the bounds check of gather and scatter (PyTorch's words)."""
    return prims.check_in_range(index, 0, size, "RuntimeError",
                                f"index {{}} is out of bounds for dimension {dim} with size "
                                f"{size}")


def _at_least_1d(x):
    return x if x.ndim else _reshape_to(x, [1])


@decomposition(gather)
def _gather_decomp(self, dim, index, *, sparse_grad=False):
    d = check_gather(self, dim, index)
    # 0-dim self/index behave as 1-element vectors
    x = _at_least_1d(self)
    out = prims.gather(x, d, checked_index(_int64(_at_least_1d(index)), d, x.shape[d]))
    return _reshape_to(out, list(index.shape))


@derivative(gather)
def _gather_backward(grad, self, dim, index):
    # an element gathered more than once gets the sum of its gradients
    return scatter_add(zeros(self.shape, grad), dim, index, grad), None


def check_scatter(name, self, dim, index, src):
    """PyTorch's scatter/scatter_add/scatter_reduce checks; ``src`` None for a value."""
    if index.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if src is not None and src.dtype is not self.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    d = wrap_dim(dim, self.ndim)
    n = max(index.ndim, 1)
    if max(self.ndim, 1) != n:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src is not None and max(src.ndim, 1) != n:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if index.numel():
        for i in range(index.ndim):
            too_big = i != d and index.shape[i] > self.shape[i]
            if src is not None and index.shape[i] > src.shape[i]:
                too_big = True
            if too_big:
                tail = f" and to be smaller size than src {shape_str(src.shape)}" \
                    if src is not None else ""
                raise RuntimeError(f"Expected index {shape_str(index.shape)} to be smaller than "
                                   f"self {shape_str(self.shape)} apart from dimension {d}"
                                   f"{tail}")
    return d


def _scatter_meta(name, inplace):
    def meta(self, dim, index, src, *args, **kwargs):
        check_scatter(name, self, dim, index, src if hasattr(src, "_ks") else None)
        return self if inplace else TensorMeta(_shape(self), self.dtype)
    return meta


_SCATTER = "Tensor self, int dim, Tensor index"
_SCATTER_ = "Tensor(a!) self, int dim, Tensor index"
scatter_src = defop(f"scatter.src({_SCATTER}, Tensor src) -> Tensor", tags=CORE,
                    meta=_scatter_meta("scatter", False))
scatter_value = defop(f"scatter.value({_SCATTER}, Scalar value) -> Tensor", tags=CORE,
                      meta=_scatter_meta("scatter", False))
scatter__src = defop(f"scatter_.src({_SCATTER_}, Tensor src) -> Tensor(a!)", tags=INPLACE,
                     meta=_scatter_meta("scatter", True))
scatter__value = defop(f"scatter_.value({_SCATTER_}, Scalar value) -> Tensor(a!)", tags=INPLACE,
                       meta=_scatter_meta("scatter", True))
scatter_add = defop(f"scatter_add({_SCATTER}, Tensor src) -> Tensor", tags=CORE,
                    meta=_scatter_meta("scatter_add", False))
scatter_add_ = defop(f"scatter_add_({_SCATTER_}, Tensor src) -> Tensor(a!)", tags=INPLACE,
                     meta=_scatter_meta("scatter_add", True))



def scatter_prim(self, dim, index, src, reduce="none"):
    """prims.scatter with torch's extras: 0-dim operands, a src larger than index (only
    its leading index-shaped block is used), a Python scalar src."""
    x = _at_least_1d(self)
    idx = checked_index(_int64(_at_least_1d(index)), dim, x.shape[dim])
    if hasattr(src, "_ks"):
        s = _at_least_1d(src)
        s = prims.slice(s, [0] * s.ndim, list(idx.shape))
    else:
        s = refs.full(_shape(idx), checked_convert(src, self.dtype), self.dtype, self.device)
    return _reshape_to(prims.scatter(x, dim, idx, s, reduce), list(self.shape))


def _scatter_decomp(name, reduce):
    def fn(self, dim, index, src):
        d = check_scatter(name, self, dim, index, src if hasattr(src, "_ks") else None)
        return scatter_prim(self, d, index, src, reduce)
    return fn


decomposition(scatter_src)(_scatter_decomp("scatter", "none"))
decomposition(scatter_value)(_scatter_decomp("scatter", "none"))
decomposition(scatter_add)(_scatter_decomp("scatter_add", "add"))


def _leading(src, shape):
    """The leading ``shape`` block of ``src``: the part a scatter reads (src may be larger
    than index)."""
    for d, n in enumerate(shape):
        if src.shape[d] != n:
            src = aten.slice.Tensor(src, d, 0, n)
    return src


def _src_grad(g, src):
    """``g`` (index-shaped) padded with zeros to ``src``'s shape: the elements of a larger
    src that were never read get no gradient."""
    if g.ndim != src.ndim:          # a 0-dim index read a one-element src
        return aten.reshape.default(g, list(src.shape))
    pad = []
    for d in reversed(range(g.ndim)):
        pad += [0, src.shape[d] - g.shape[d]]
    return aten.constant_pad_nd.default(g, pad, 0) if any(pad) else g


@derivative(scatter_src)
def _scatter_backward(grad, dim, index, src, needs_input_grad):
    # self keeps its value where nothing was written; src's elements are read at index
    return (scatter_value(grad, dim, index, 0) if needs_input_grad[0] else None, None,
            _src_grad(gather(grad, dim, index), src) if needs_input_grad[2] else None)


@derivative(scatter_value)
def _scatter_value_backward(grad, dim, index):
    return scatter_value(grad, dim, index, 0), None


@derivative(scatter_add)
def _scatter_add_backward(grad, dim, index, src, needs_input_grad):
    return grad, None, (_src_grad(gather(grad, dim, index), src) if needs_input_grad[2]
                        else None)

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def check_reduce(reduce):
    if reduce not in REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")


def _scatter_reduce_meta(inplace):
    base = _scatter_meta("scatter_reduce", inplace)

    def meta(self, dim, index, src, reduce, *, include_self=True):
        check_reduce(reduce)
        return base(self, dim, index, src)
    return meta


scatter_reduce_two = defop(f"scatter_reduce.two({_SCATTER}, Tensor src, str reduce, *, "
                           f"bool include_self=True) -> Tensor", tags=CORE,
                           meta=_scatter_reduce_meta(False))
scatter_reduce__two = defop(f"scatter_reduce_.two({_SCATTER_}, Tensor src, str reduce, *, "
                            f"bool include_self=True) -> Tensor(a!)", tags=INPLACE,
                            meta=_scatter_reduce_meta(True))


_PRIM_REDUCE = {"sum": "add", "mean": "add", "prod": "mul", "amax": "max", "amin": "min"}


def reduce_identity(reduce, dtype):
    """The value a position starts from when ``include_self=False``."""
    if reduce in ("sum", "mean"):
        return _zero(dtype)
    if reduce == "prod":
        return True if dtype is D.bool else 1
    big = reduce == "amin"            # amin starts from the largest value, amax the smallest
    if dtype is D.bool:
        return big
    if dtype.is_floating_point:
        return float("inf") if big else float("-inf")
    info = np.iinfo(dtype.numpy)
    return int(info.max) if big else int(info.min)


@decomposition(scatter_reduce_two)
def _scatter_reduce_decomp(self, dim, index, src, reduce, *, include_self=True):
    check_reduce(reduce)
    d = check_scatter("scatter_reduce", self, dim, index, src)
    base = self
    if not include_self:
        # the scattered-to positions forget self's value: start them at the identity
        base = scatter_prim(self, d, index, reduce_identity(reduce, self.dtype))
    total = scatter_prim(base, d, index, src, _PRIM_REDUCE[reduce])
    if reduce != "mean":
        return total
    # mean = total / count, count including self's value when include_self (a position
    # nothing was scattered to keeps its value: count 1)
    dev, shape = self.device, _shape(self)
    count = scatter_prim(refs.full(shape, 1 if include_self else 0, D.int64, dev), d, index,
                         1, "add")
    one = refs.full(shape, 1, D.int64, dev)
    count = prims.where(prims.eq(count, refs.full(shape, 0, D.int64, dev)), one, count)
    if self.dtype.is_floating_point or self.dtype.is_complex:
        ct = refs.opmath_dtype(self.dtype)
        mean = prims.div(refs.to_dtype(total, ct), refs.to_dtype(count, ct))
        return refs.to_dtype(mean, self.dtype)
    # integers round the mean down (floor division; count > 0, so only a negative total
    # with a remainder needs the truncated quotient lowered by one)
    t = refs.to_dtype(total, D.int64)
    q = prims.div(t, count)
    inexact = prims.bitwise_and(prims.ne(prims.rem(t, count), refs.full(shape, 0, D.int64, dev)),
                                prims.lt(t, refs.full(shape, 0, D.int64, dev)))
    return refs.to_dtype(prims.where(inexact, prims.sub(q, one), q), self.dtype)


@derivative(scatter_reduce_two)
def _scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result,
                             needs_input_grad):
    """PyTorch's scatter_reduce backward: sum and mean pass the (averaged) gradient, prod
    the product of the other factors (zero-safe), amax/amin split it evenly among the
    elements equal to the result."""
    d = wrap_dim(dim, self.ndim)
    full_src, src = src, _leading(src, index.shape)
    if reduce == "sum":
        g_self, g_src = grad, gather(grad, d, index)
    elif reduce == "mean":
        count = aten.ones_like.default(self) if include_self else zeros(self.shape, self)
        count = scatter_add(count, d, index, aten.ones_like.default(src))
        count = aten.masked_fill.Scalar(count, aten.eq.Scalar(count, 0), 1)
        g_self = aten.div.Tensor(grad, count)
        g_src = gather(g_self, d, index)
    elif reduce == "prod":
        # self's factor: the product of everything else at its position
        masked_self = aten.masked_fill.Scalar(self, aten.eq.Scalar(self, 0), 1)
        rest = scatter_reduce_two(masked_self, d, index, src, "prod",
                                  include_self=include_self)
        g_self = aten.mul.Tensor(grad, conj(aten.div.Tensor(rest, masked_self)))
        # src's factor: result / src, or, for the one zero of its position, the product
        # of the others computed with that zero replaced by 1
        src_zero = aten.eq.Scalar(src, 0)
        n_zero = gather(scatter_add(zeros(self.shape, self), d, index,
                                    aten._to_copy.default(src_zero, dtype=self.dtype)),
                        d, index)
        single = aten.logical_and.default(src_zero, aten.eq.Scalar(n_zero, 1))
        rest_src = scatter_reduce_two(self, d, index, aten.masked_fill.Scalar(src, single, 1),
                                      "prod", include_self=include_self)
        by_div = aten.div.Tensor(gather(aten.mul.Tensor(grad, conj(result)), d, index),
                                 conj(aten.masked_fill.Scalar(src, src_zero, 1)))
        g_src = aten.where.self(single, gather(aten.mul.Tensor(grad, conj(rest_src)), d, index),
                                by_div)
    else:       # amax, amin
        value = gather(result, d, index)
        self_is = aten.eq.Tensor(self, result)
        src_is = aten.eq.Tensor(src, value)
        n = scatter_add(aten._to_copy.default(self_is, dtype=grad.dtype), d, index,
                        aten._to_copy.default(src_is, dtype=grad.dtype))
        share = aten.div.Tensor(grad, n)
        g_self = aten.where.self(self_is, share, 0.0)
        g_src = aten.where.self(src_is, gather(share, d, index), 0.0)
    if not include_self:
        g_self = scatter_value(g_self, d, index, 0)
    return (g_self if needs_input_grad[0] else None, None,
            _src_grad(g_src, full_src) if needs_input_grad[2] else None)


def check_mask(name, mask):
    if mask.dtype is not D.bool:
        raise RuntimeError(f"{name}: expected BoolTensor for mask")


def _masked_select_meta(self, mask):
    check_mask("masked_select", mask)
    broadcast_shapes(_shape(self), _shape(mask))
    _data_dependent("masked_select")


masked_select = defop("masked_select(Tensor self, Tensor mask) -> Tensor",
                      meta=_masked_select_meta)



@decomposition(masked_select)
def _masked_select_decomp(self, mask):
    check_mask("masked_select", mask)
    shape = broadcast_shapes(_shape(self), _shape(mask))
    n = math.prod(shape)
    flat = _reshape_to(refs.broadcast_to(self, shape), [n])
    # data-dependent: the positions of the True elements (eager only)
    where = prims.nonzero(_reshape_to(refs.broadcast_to(mask, shape), [n]))
    return prims.gather(flat, 0, _reshape_to(where, [where.shape[0]]))


@derivative(masked_select)
def _masked_select_backward(grad, self, mask):
    shape = broadcast_shapes(_shape(self), _shape(mask))
    return masked_scatter(zeros(shape, grad), mask, grad), None


def check_masked_scatter(self, mask, source, inplace):
    if mask.dtype is not D.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {mask.dtype.scalar_type}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got {self.dtype.scalar_type} and {source.dtype.scalar_type}")
    if inplace:
        expand_geometry(_shape(mask), mask.stride(), _shape(self), mask.dtype)
        return self
    return TensorMeta(broadcast_shapes(_shape(self), _shape(mask)), self.dtype)


masked_scatter = defop("masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor",
                       tags=CORE, meta=lambda self, mask, source: check_masked_scatter(
                           self, mask, source, False))
masked_scatter_ = defop("masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) "
                        "-> Tensor(a!)", tags=INPLACE,
                        meta=lambda self, mask, source: check_masked_scatter(
                            self, mask, source, True))



@decomposition(masked_scatter)
def _masked_scatter_decomp(self, mask, source):
    shape = check_masked_scatter(self, mask, source, False).shape
    n, dev = math.prod(shape), self.device
    m = _reshape_to(refs.broadcast_to(mask, shape), [n])
    # The k-th True position (row-major, k from 1) takes source's k-th element: k is the
    # running count of Trues, so no nonzero is needed and the shape stays static.  A dummy
    # element in front of source serves the False positions (index 0); too few source
    # elements give an index past the end, refused as eager refuses it.
    src = prims.concatenate([refs.full([1], _zero(self.dtype), self.dtype, dev),
                             _reshape_to(source, [source.numel()])], 0)
    k = prims.where(m, prims.cumsum(refs.to_dtype(m, D.int64), 0),
                    refs.full([n], 0, D.int64, dev))
    k = prims.check_in_range(k, 0, source.numel() + 1, "RuntimeError",
                             "Number of elements of source < number of ones in mask")
    taken = _reshape_to(prims.gather(src, 0, k), list(shape))
    return prims.where(_reshape_to(m, list(shape)), taken, refs.broadcast_to(self, shape))


@derivative(masked_scatter)
def _masked_scatter_backward(grad, mask, source, needs_input_grad):
    g_self = aten.masked_fill.Scalar(grad, mask, 0) if needs_input_grad[0] else None
    g_source = None
    if needs_input_grad[2]:
        # the k-th masked position took source's k-th element; the rest of source is unused
        taken = masked_select(grad, mask)
        n = source.numel()
        if taken.numel() < n:
            taken = aten.cat.default([taken, zeros([n - taken.numel()], grad)])
        g_source = aten.reshape.default(taken, list(source.shape))
    return g_self, None, g_source


nonzero = defop("nonzero(Tensor self) -> Tensor", tags=CORE,
                meta=lambda self: _data_dependent("nonzero"))
decomposition(nonzero)(lambda self: prims.nonzero(self))
nondifferentiable(nonzero)


def _take_along_dim(self, indices, dim=None):
    if indices.dtype is not D.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{indices.dtype.scalar_type}")
    if dim is None:
        return gather(aten.reshape.default(self, [-1]), 0, aten.reshape.default(indices, [-1]))
    if self.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {self.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    d = wrap_dim(dim, self.ndim)
    s, i = list(self.shape), list(indices.shape)
    if s:
        s[d], i[d] = 1, 1
    b = list(broadcast_shapes(tuple(s), tuple(i)))
    bs, bi = list(b), list(b)
    if b:
        bs[d], bi[d] = self.shape[d], indices.shape[d]
    return gather(aten.expand.default(self, bs), d, aten.expand.default(indices, bi))


take_along_dim = _composite("take_along_dim(Tensor self, Tensor indices, int? dim=None) "
                            "-> Tensor", _take_along_dim)
argwhere = _composite("argwhere(Tensor self) -> Tensor", lambda self: nonzero(self))

