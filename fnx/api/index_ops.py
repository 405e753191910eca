"""Indexing along a dim and by flat position, bucketing and counting: ``index_add``,
``index_copy``, ``index_fill``, ``index_reduce``, ``take``, ``put``, ``searchsorted``,
``bucketize``, ``histc``, ``bincount``, ``unique``, ``unique_consecutive``.

The in-place forms (``Tensor.index_add_`` ...) are methods only, as in PyTorch.
``bincount`` and ``unique*`` return tensors whose size depends on the data: they run
eagerly and cannot be traced (``fnx.compile`` raises the data-dependence error).
"""
from __future__ import annotations

from ..core.tensor import Tensor, tensor_method
from ..ir.aten import index_ops as X
from ..ir.variants import VARIANTS
from ..ops import aten

__all__ = ["index_add", "index_copy", "index_fill", "index_reduce", "take", "put",
           "searchsorted", "bucketize", "histc", "bincount", "unique", "unique_consecutive"]


def _out(op, out, *args, **kwargs):
    """``op``'s result, or its ``out=`` form's (fnx/ir/aten/out_variants.py: PyTorch's dtype
    rule, ``out`` resized)."""
    if out is None:
        return op(*args, **kwargs)
    return VARIANTS[op]["out"](*args, out=out, **kwargs)


@tensor_method()
def index_add(input, dim, index, source, *, alpha=1, out=None):
    """A copy of ``input`` with ``alpha * source`` added at the rows ``index`` (1-D) picks
    along ``dim``; repeated indices add up.

    >>> import fnx
    >>> fnx.index_add(fnx.zeros(3), 0, fnx.tensor([0, 0, 2]), fnx.tensor([1., 2., 3.]))
    tensor([3., 0., 3.])
    """
    return _out(X.index_add, out, input, dim, index, source, alpha=alpha)


@tensor_method()
def index_add_(self, dim, index, source, *, alpha=1):
    """``index_add`` in place.

    >>> import fnx
    >>> fnx.ones(2).index_add_(0, fnx.tensor([1]), fnx.tensor([2.]), alpha=3)
    tensor([1., 7.])
    """
    return X.index_add_(self, dim, index, source, alpha=alpha)


@tensor_method()
def index_copy(input, dim, index, source, *, out=None):
    """A copy of ``input`` with the rows ``index`` picks along ``dim`` replaced by
    ``source``'s rows, in order.

    >>> import fnx
    >>> fnx.index_copy(fnx.zeros(3), 0, fnx.tensor([2, 0]), fnx.tensor([5., 6.]))
    tensor([6., 0., 5.])
    """
    return _out(X.index_copy, out, input, dim, index, source)


@tensor_method()
def index_copy_(self, dim, index, source):
    """``index_copy`` in place.

    >>> import fnx
    >>> fnx.zeros(2).index_copy_(0, fnx.tensor([1]), fnx.tensor([4.]))
    tensor([0., 4.])
    """
    return X.index_copy_(self, dim, index, source)


@tensor_method()
def index_fill(input, dim, index, value):
    """A copy of ``input`` with the rows ``index`` picks along ``dim`` set to ``value`` (a
    number or a 0-dim tensor); negative indices count from the end.

    >>> import fnx
    >>> fnx.index_fill(fnx.zeros(2, 3), 1, fnx.tensor([0, -1]), 7.0)
    tensor([[7., 0., 7.],
            [7., 0., 7.]])
    """
    if isinstance(value, Tensor):
        return X.index_fill_int_Tensor(input, dim, index, value)
    return X.index_fill_int_Scalar(input, dim, index, value)


@tensor_method()
def index_fill_(self, dim, index, value):
    """``index_fill`` in place.

    >>> import fnx
    >>> fnx.zeros(3).index_fill_(0, fnx.tensor([1]), 2.0)
    tensor([0., 2., 0.])
    """
    if isinstance(value, Tensor):
        return X.index_fill__int_Tensor(self, dim, index, value)
    return X.index_fill__int_Scalar(self, dim, index, value)


@tensor_method()
def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """A copy of ``input`` whose rows ``index`` picks along ``dim`` are combined with
    ``source``'s rows by ``reduce`` ('prod', 'mean', 'amax' or 'amin'); with
    ``include_self=False`` those rows start from ``source`` alone.

    >>> import fnx
    >>> x = fnx.tensor([1., 2., 3.])
    >>> fnx.index_reduce(x, 0, fnx.tensor([0, 0]), fnx.tensor([4., 5.]), "amax")
    tensor([5., 2., 3.])
    """
    return _out(X.index_reduce, out, input, dim, index, source, reduce,
                include_self=include_self)


@tensor_method()
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """``index_reduce`` in place.

    >>> import fnx
    >>> fnx.tensor([2., 3.]).index_reduce_(0, fnx.tensor([1]), fnx.tensor([4.]), "prod")
    tensor([ 2., 12.])
    """
    return X.index_reduce_(self, dim, index, source, reduce, include_self=include_self)


@tensor_method()
def take(input, index, *, out=None):
    """The elements of ``input``, read as 1-D, at ``index`` (int64, any shape; negative
    counts from the end).

    >>> import fnx
    >>> fnx.take(fnx.tensor([[1, 2], [3, 4]]), fnx.tensor([[3, 0]])).tolist()
    [[4, 1]]
    """
    return _out(X.take, out, input, index)


@tensor_method()
def put(input, index, source, accumulate=False):
    """A copy of ``input`` with ``source``'s elements written at the flat positions
    ``index`` (added with ``accumulate=True``).

    >>> import fnx
    >>> fnx.put(fnx.zeros(2, 2), fnx.tensor([3, 3]), fnx.tensor([1., 2.]), accumulate=True)
    tensor([[0., 0.],
            [0., 3.]])
    """
    return X.put(input, index, source, accumulate)


@tensor_method()
def put_(self, index, source, accumulate=False):
    """``put`` in place.

    >>> import fnx
    >>> fnx.zeros(3).put_(fnx.tensor([-1]), fnx.tensor([9.]))
    tensor([0., 0., 9.])
    """
    return X.put_(self, index, source, accumulate)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    """Where ``input``'s values go in the sorted last dim of ``sorted_sequence``: the
    first position whose boundary is >= the value (> with ``right=True`` or
    ``side='right'``); ``sorter`` sorts an unsorted sequence.

    >>> import fnx
    >>> fnx.searchsorted(fnx.tensor([1, 3, 5]), fnx.tensor([3, 6])).tolist()
    [1, 3]
    >>> fnx.searchsorted(fnx.tensor([1, 3, 5]), fnx.tensor([3, 6]), side="right").tolist()
    [2, 3]
    """
    if out is not None and isinstance(input, Tensor):
        return aten.searchsorted.Tensor_out(sorted_sequence, input, out_int32=out_int32,
                                            right=right, side=side, sorter=sorter, out=out)
    op = X.searchsorted_Tensor if isinstance(input, Tensor) else X.searchsorted_Scalar
    return op(sorted_sequence, input, out_int32=out_int32, right=right, side=side,
              sorter=sorter)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each element of ``input`` given the sorted 1-D ``boundaries``:
    ``searchsorted(boundaries, input)``.

    >>> import fnx
    >>> fnx.bucketize(fnx.tensor([0.5, 2.0, 9.0]), fnx.tensor([1.0, 2.0, 3.0])).tolist()
    [0, 1, 3]
    """
    if out is not None and isinstance(input, Tensor):
        return aten.bucketize.Tensor_out(input, boundaries, out_int32=out_int32, right=right,
                                         out=out)
    op = X.bucketize_Tensor if isinstance(input, Tensor) else X.bucketize_Scalar
    return op(input, boundaries, out_int32=out_int32, right=right)


@tensor_method()
def histc(input, bins=100, min=0, max=0, *, out=None):
    """A histogram of ``input`` with ``bins`` equal bins over [min, max] (the data's range
    when both are 0); values outside are ignored, the max falls in the last bin.

    >>> import fnx
    >>> fnx.histc(fnx.tensor([1., 2., 1., 4.]), bins=4, min=0, max=4)
    tensor([0., 2., 1., 1.])
    """
    return _out(X.histc, out, input, bins, min, max)


@tensor_method()
def bincount(input, weights=None, minlength=0):
    """How often each value 0, 1, ... occurs in the 1-D non-negative integer ``input`` (the
    sum of ``weights`` at those positions if given); at least ``minlength`` bins.

    >>> import fnx
    >>> fnx.bincount(fnx.tensor([0, 2, 2])).tolist()
    [1, 0, 2]
    """
    return X.bincount(input, weights, minlength)


@tensor_method()
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of ``input`` (or distinct slices along ``dim``), sorted;
    with ``return_inverse`` also where each element went, with ``return_counts`` how
    often each occurs.

    >>> import fnx
    >>> values, counts = fnx.unique(fnx.tensor([3, 1, 3]), return_counts=True)
    >>> values.tolist(), counts.tolist()
    ([1, 3], [1, 2])
    """
    if dim is None:
        out = X.unique2(input, sorted, return_inverse, return_counts)
    else:
        out = X.unique_dim(input, dim, sorted, return_inverse, return_counts)
    return _pick(out, return_inverse, return_counts)


def _pick(out, return_inverse, return_counts):
    values, inverse, counts = out
    if return_inverse and return_counts:
        return values, inverse, counts
    if return_inverse:
        return values, inverse
    if return_counts:
        return values, counts
    return values


@tensor_method()
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``input`` with each run of equal consecutive elements (slices along ``dim``)
    collapsed to one.

    >>> import fnx
    >>> fnx.unique_consecutive(fnx.tensor([1, 1, 2, 1])).tolist()
    [1, 2, 1]
    """
    out = X.unique_consecutive(input, return_inverse, return_counts, dim)
    return _pick(out, return_inverse, return_counts)
