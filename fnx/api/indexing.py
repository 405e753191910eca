"""Indexing: ``x[i]``, ``x[i] = v``, ``fnx.index_select``, ``gather``, ``scatter``, masks.

``Tensor.__getitem__`` is built from operators the way PyTorch's Python binding builds
it, so a tracer records ATen ops: an int is ``select.int`` (a 0-dim integer tensor too),
a slice ``slice.Tensor``, None ``unsqueeze``, ``...`` skips dims, and the remaining
tensor, list and bool indices go to one ``index.Tensor`` over the basic-indexed view.
Unlike NumPy, ints are applied as ``select`` first, so ``x[0, :, [0, 1]]`` has shape
``[x.shape[1], 2]`` (PyTorch's result), not ``[2, x.shape[1]]``.
``__setitem__`` indexes the same way, then ``copy_``/``fill_`` the view (basic indices)
or ``index_put_`` it (advanced indices); every check runs before anything is written.
"""
from __future__ import annotations

import operator

import numpy as np

from ..core import dtype as D
from ..core.tensor import Tensor, tensor_method
from ..ir.aten import arrange as A
from ..ir.aten import conversion as C
from ..ir.aten import indexing as I
from ..ir.aten import shape as S
from ..ir.strides import size_index
from ..ops import aten
from .creation import tensor
from ..ir.scalars import checked_convert

__all__ = ["index_select", "gather", "scatter", "scatter_add", "scatter_reduce", "index_put",
           "masked_fill", "masked_select", "masked_scatter", "nonzero", "argwhere",
           "take_along_dim"]

_INVALID = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
            "are valid indices (got {})")
_ZERO_DIM = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")


def _index_tensor(seq):
    """A list (or range, or NumPy array) used as an index: an int64 or bool tensor."""
    t = tensor(seq)
    if t.numel() == 0 and t.dtype is not D.bool:
        return tensor(seq, dtype=D.int64)
    if t.dtype.is_floating_point or t.dtype.is_complex:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return t


def _treat_as_tuple(index) -> bool:
    """NumPy's legacy rule PyTorch keeps: a short list holding a slice, None, ``...``, a
    tensor or a sequence is a tuple of indices."""
    if not isinstance(index, list) or len(index) >= 32:
        return False
    return any(i is None or i is Ellipsis or isinstance(i, (slice, Tensor, list, tuple, range,
                                                            np.ndarray)) for i in index)


def _normalize(item):
    """Python/NumPy index items in the forms ``_apply`` handles."""
    cls = item.__class__
    if cls is int or cls is slice or item is None or item is Ellipsis or cls is bool or \
            cls is Tensor:
        return item
    if isinstance(item, Tensor):
        return item
    if isinstance(item, (bool, np.bool_)):
        return bool(item)
    if isinstance(item, (list, tuple, range, np.ndarray)):     # range: any sequence in torch
        return _index_tensor(item)
    if hasattr(item, "__index__") and not isinstance(item, (float, complex)):
        return operator.index(item)
    raise IndexError(_INVALID.format(type(item).__name__))


def _is_mask(t) -> bool:
    return t._dtype is D.bool or t._dtype is D.uint8


def _select(x, dim, i, real_dim):
    shape = x._data.shape
    if not shape:
        raise IndexError(_ZERO_DIM)
    size = shape[dim]
    if not -size <= i < size:
        raise IndexError(f"index {i} is out of bounds for dimension {real_dim} with size {size}")
    return S.select_int(x, dim, i)


def _slice(x, dim, s):
    step = 1 if s.step is None else operator.index(s.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    # (a symbolic bound stays one, so the slice follows the size instead of fixing it)
    start = None if s.start is None else size_index(s.start)
    stop = None if s.stop is None else size_index(s.stop)
    if start is None or start.__class__ is int and start == 0:
        start = None
    if start is None and stop is None and step == 1:
        return x                  # a full slice: nothing to record
    return S.slice_Tensor(x, dim, start, stop, step)


def _bool_index(value):
    return tensor([0]) if value else tensor([], dtype=D.int64)


def _apply(self, index):
    """Basic indexing as view ops; returns (view, advanced index list or None)."""
    if index.__class__ is tuple:
        items = [_normalize(i) for i in index]
    elif _treat_as_tuple(index):
        items = [_normalize(i) for i in index]
    else:
        items = [_normalize(index)]
    ndim = self.ndim
    specified, ellipsis = 0, False
    for it in items:
        if it is None or it.__class__ is bool:
            continue
        if it is Ellipsis:
            if ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis = True
        elif isinstance(it, Tensor):
            specified += it.ndim if _is_mask(it) else 1
        else:
            specified += 1
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result, dim, real = self, 0, 0
    adv, covered = None, 0            # index list and how many dims its entries consume

    def record(t, width):
        nonlocal adv, covered
        if adv is None:
            adv = []
        adv.extend([None] * (dim - covered))
        adv.append(t)
        covered = dim + width

    for it in items:
        cls = it.__class__
        if cls is int:
            result = _select(result, dim, it, real)
            real += 1
        elif cls is slice:
            result = _slice(result, dim, it)
            dim += 1
            real += 1
        elif it is None:
            result = S.unsqueeze(result, dim)
            dim += 1
        elif it is Ellipsis:
            dim += ndim - specified
            real += ndim - specified
        elif cls is bool:
            result = S.unsqueeze(result, dim)
            record(_bool_index(it), 1)
            dim += 1
        else:       # a tensor
            if it.ndim == 0 and not _is_mask(it):
                if it.dtype.is_floating_point or it.dtype.is_complex:
                    raise IndexError("tensors used as indices must be long, int, byte or bool "
                                     "tensors")
                result = _select(result, dim, int(it.item()), real)
                real += 1
            elif it.ndim == 0:
                result = S.unsqueeze(result, dim)
                record(_bool_index(bool(it.item())), 1)
                dim += 1
            else:
                width = it.ndim if _is_mask(it) else 1
                record(it, width)
                dim += width
                real += width
    return result, adv


@tensor_method("__getitem__")
def _getitem(self, index):
    if index.__class__ is int:                       # the common cases, without the loop
        return _select(self, 0, index, 0)
    result, adv = _apply(self, index)
    if adv is not None:
        return I.index_Tensor(result, adv)
    if result is self:
        return S.alias(self)          # x[...] and x[:] are views, never self
    return result


def _value_tensor(self, value):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, complex, np.bool_, np.number)):
        # PyTorch 2.13 lets a float16/bfloat16 element overflow to inf here (not in fill_)
        v = checked_convert(value, self._dtype, check_half=False)
        return aten.scalar_tensor.default(v, dtype=self._dtype, device=self._device)
    raise TypeError(f"can't assign a {type(value).__name__} to a {self._dtype.tensor_type()}")


def _strip_leading_ones(v):
    shape = tuple(v.shape)
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return S.view(v, list(shape[k:])) if k else v


def _copy_to(dst, src):
    """PyTorch's setitem copy: equal shapes copy, a 0-dim value fills, else broadcast."""
    if dst.shape == src.shape:
        C.copy_(dst, src)
    elif src.ndim == 0:
        A.fill__Tensor(dst, src)
    else:
        C.copy_(dst, S.expand(_strip_leading_ones(src), list(dst.shape)))


@tensor_method("__setitem__")
def _setitem(self, index, value):
    if index is False:
        return                         # x[False] selects nothing: PyTorch does nothing
    v = _value_tensor(self, value)
    sliced, adv = _apply(self, index)
    if adv is None:
        _copy_to(sliced, v)
    else:
        I.index_put_(sliced, adv, _strip_leading_ones(v))


# --------------------------------------------------------------------------- functions

@tensor_method()
def index_select(input, dim, index):
    """The entries of ``input`` at positions ``index`` (1-D) along ``dim``.

    >>> import fnx
    >>> fnx.index_select(fnx.tensor([[1, 2], [3, 4]]), 1, fnx.tensor([1, 1])).tolist()
    [[2, 2], [4, 4]]
    """
    return I.index_select(input, dim, index)


@tensor_method()
def gather(input, dim, index, *, sparse_grad=False):
    """``out[i][j] = input[index[i][j]][j]`` for ``dim=0`` (and likewise for other dims).

    >>> import fnx
    >>> fnx.gather(fnx.tensor([[1, 2], [3, 4]]), 1, fnx.tensor([[1, 0], [0, 0]])).tolist()
    [[2, 1], [3, 3]]
    """
    return I.gather(input, dim, index, sparse_grad=sparse_grad)


def _scatter_dispatch(input, dim, index, src, value, reduce, inplace):
    """The overload ``Tensor.scatter(_)`` means: src or value, and the legacy ``reduce``."""
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' (or 'value')")
    source = src if src is not None else value
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
        if not isinstance(source, Tensor):
            v = aten.scalar_tensor.default(checked_convert(source, input.dtype),
                                           dtype=input.dtype, device=input.device)
            source = S.expand(v, list(index.shape))
        if reduce == "add":
            return (I.scatter_add_ if inplace else I.scatter_add)(input, dim, index, source)
        op = I.scatter_reduce__two if inplace else I.scatter_reduce_two
        return op(input, dim, index, source, "prod")
    if isinstance(source, Tensor):
        return (I.scatter__src if inplace else I.scatter_src)(input, dim, index, source)
    return (I.scatter__value if inplace else I.scatter_value)(input, dim, index, source)


@tensor_method()
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """A copy of ``input`` with ``src`` (a tensor or a number) written at ``index`` along
    ``dim``: ``out[index[i][j]][j] = src[i][j]`` for ``dim=0``.

    >>> import fnx
    >>> fnx.scatter(fnx.tensor([0, 0, 0]), 0, fnx.tensor([2, 0]), fnx.tensor([5, 6])).tolist()
    [6, 0, 5]
    """
    return _scatter_dispatch(input, dim, index, src, value, reduce, False)


@tensor_method()
def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    """``scatter`` in place.

    >>> import fnx
    >>> fnx.zeros(3).scatter_(0, fnx.tensor([1]), 5.0)
    tensor([0., 5., 0.])
    """
    return _scatter_dispatch(self, dim, index, src, value, reduce, True)


@tensor_method()
def scatter_add(input, dim, index, src):
    """``scatter`` that adds, duplicates included.

    >>> import fnx
    >>> fnx.scatter_add(fnx.tensor([0, 0]), 0, fnx.tensor([1, 1]), fnx.tensor([5, 6])).tolist()
    [0, 11]
    """
    return I.scatter_add(input, dim, index, src)


@tensor_method()
def scatter_add_(self, dim, index, src):
    """``scatter_add`` in place.

    >>> import fnx
    >>> fnx.zeros(2).scatter_add_(0, fnx.tensor([0, 0]), fnx.ones(2))
    tensor([2., 0.])
    """
    return I.scatter_add_(self, dim, index, src)


@tensor_method()
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``scatter`` combining with ``reduce`` in sum, prod, mean, amax, amin.

    >>> import fnx
    >>> x = fnx.tensor([1.0, 1.0])
    >>> fnx.scatter_reduce(x, 0, fnx.tensor([0, 0]), fnx.tensor([4.0, 2.0]), "amax").tolist()
    [4.0, 1.0]
    """
    return I.scatter_reduce_two(input, dim, index, src, reduce, include_self=include_self)


@tensor_method()
def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """``scatter_reduce`` in place.

    >>> import fnx
    >>> fnx.ones(2).scatter_reduce_(0, fnx.tensor([1, 1]), fnx.tensor([3., 4.]), "sum")
    tensor([1., 8.])
    """
    return I.scatter_reduce__two(self, dim, index, src, reduce, include_self=include_self)


@tensor_method()
def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` written at ``input[indices]`` (added with
    ``accumulate=True``).

    >>> import fnx
    >>> i = (fnx.tensor([0, 0]),)
    >>> fnx.index_put(fnx.tensor([0, 0]), i, fnx.tensor([1, 2]), accumulate=True).tolist()
    [3, 0]
    """
    return I.index_put(input, list(indices), values, accumulate)


@tensor_method()
def index_put_(self, indices, values, accumulate=False):
    """``index_put`` in place.

    >>> import fnx
    >>> fnx.zeros(3).index_put_((fnx.tensor([2]),), fnx.tensor(1.0))
    tensor([0., 0., 1.])
    """
    return I.index_put_(self, list(indices), values, accumulate)


@tensor_method()
def masked_fill(input, mask, value):
    """A copy of ``input`` with ``value`` where the bool ``mask`` (broadcast) is True.

    >>> import fnx
    >>> fnx.masked_fill(fnx.tensor([1, 2, 3]), fnx.tensor([True, False, True]), 0).tolist()
    [0, 2, 0]
    """
    if isinstance(value, Tensor):
        return A.masked_fill_Tensor(input, mask, value)
    return A.masked_fill_Scalar(input, mask, value)


@tensor_method()
def masked_fill_(self, mask, value):
    """``masked_fill`` in place.

    >>> import fnx
    >>> fnx.tensor([1, 2]).masked_fill_(fnx.tensor([False, True]), 0)
    tensor([1, 0])
    """
    if isinstance(value, Tensor):
        return A.masked_fill__Tensor(self, mask, value)
    return A.masked_fill__Scalar(self, mask, value)


@tensor_method()
def masked_select(input, mask):
    """The elements where ``mask`` is True, as a 1-D tensor.

    >>> import fnx
    >>> fnx.masked_select(fnx.tensor([[1, 2], [3, 4]]), fnx.tensor([True, False])).tolist()
    [1, 3]
    """
    return I.masked_select(input, mask)


@tensor_method()
def masked_scatter(input, mask, source):
    """A copy of ``input`` with consecutive ``source`` elements where ``mask`` is True.

    >>> import fnx
    >>> m = fnx.tensor([True, False, True])
    >>> fnx.masked_scatter(fnx.tensor([0, 0, 0]), m, fnx.tensor([7, 8])).tolist()
    [7, 0, 8]
    """
    return I.masked_scatter(input, mask, source)


@tensor_method()
def masked_scatter_(self, mask, source):
    """``masked_scatter`` in place.

    >>> import fnx
    >>> fnx.zeros(2).masked_scatter_(fnx.tensor([False, True]), fnx.tensor([7.]))
    tensor([0., 7.])
    """
    return I.masked_scatter_(self, mask, source)


@tensor_method()
def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements: an int64 tensor of shape [n, ndim], or one 1-D
    tensor per dim with ``as_tuple=True``.

    >>> import fnx
    >>> fnx.nonzero(fnx.tensor([[0, 1], [2, 0]])).tolist()
    [[0, 1], [1, 0]]
    >>> [t.tolist() for t in fnx.nonzero(fnx.tensor([0, 3, 4]), as_tuple=True)]
    [[1, 2]]
    """
    if not as_tuple:
        return I.nonzero(input)
    x = S.unsqueeze(input, 0) if input.ndim == 0 else input
    return tuple(S.unbind_int(I.nonzero(x), 1))


@tensor_method()
def argwhere(input):
    """``nonzero(input)``, NumPy's name.

    >>> import fnx
    >>> fnx.argwhere(fnx.tensor([0, 5])).tolist()
    [[1]]
    """
    return I.argwhere(input)


@tensor_method()
def take_along_dim(input, indices, dim=None):
    """``gather`` with broadcasting of ``input`` and ``indices`` (over the flattened input
    when ``dim`` is None), as NumPy's ``take_along_axis``.

    >>> import fnx
    >>> x = fnx.tensor([[10, 30, 20]])
    >>> fnx.take_along_dim(x, fnx.tensor([[0, 2, 1]]), dim=1).tolist()
    [[10, 20, 30]]
    """
    return I.take_along_dim(input, indices, dim)
