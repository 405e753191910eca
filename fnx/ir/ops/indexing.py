"""Indexing operators: advanced indexing (index, index_put), gather/scatter, masks, nonzero.

``index.Tensor`` takes one optional index tensor per leading dim (None: the whole dim),
integer tensors broadcast together; a bool mask of k dims stands for its k nonzero
coordinate tensors.  The result puts the broadcast index dims where the indexed dims
were when those are adjacent, else first: NumPy's rule, which is also PyTorch's.
Ops whose output shape depends on the data (``nonzero``, ``masked_select``, an index
with a bool mask) have meta functions that validate and then refuse to guess a shape.
"""
from __future__ import annotations

from ... import _dtype as D
from ..registry import TensorMeta, defop
from ..shapes import broadcast_shapes, wrap_dim
from ._common import _torch_name
from .shape import _composite, expand_geometry, shape_str

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
                           f"{_torch_name(self.dtype)} for the destination and "
                           f"{_torch_name(values.dtype)} for the source.")


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


def check_gather(self, dim, index):
    if index.dtype is not D.int64:
        raise RuntimeError("gather(): Expected dtype int64 for index")
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


def check_scatter(name, self, dim, index, src):
    """PyTorch's scatter/scatter_add/scatter_reduce checks; ``src`` None for a value."""
    if index.dtype is not D.int64:
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")
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


def check_mask(name, mask):
    if mask.dtype is not D.bool:
        raise RuntimeError(f"{name}: expected BoolTensor for mask")


def _masked_select_meta(self, mask):
    check_mask("masked_select", mask)
    broadcast_shapes(_shape(self), _shape(mask))
    _data_dependent("masked_select")


masked_select = defop("masked_select(Tensor self, Tensor mask) -> Tensor",
                      meta=_masked_select_meta)


def check_masked_scatter(self, mask, source, inplace):
    if mask.dtype is not D.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_torch_name(mask.dtype)}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got {_torch_name(self.dtype)} and {_torch_name(source.dtype)}")
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
nonzero = defop("nonzero(Tensor self) -> Tensor", tags=CORE,
                meta=lambda self: _data_dependent("nonzero"))


def _take_along_dim(self, indices, dim=None):
    from .shape import expand, reshape
    if indices.dtype is not D.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_torch_name(indices.dtype)}")
    if dim is None:
        return gather(reshape(self, [-1]), 0, reshape(indices, [-1]))
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
    return gather(expand(self, bs), d, expand(indices, bi))


take_along_dim = _composite("take_along_dim(Tensor self, Tensor indices, int? dim=None) "
                            "-> Tensor", _take_along_dim)
argwhere = _composite("argwhere(Tensor self) -> Tensor", lambda self: nonzero(self))

