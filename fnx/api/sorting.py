"""Sorting: ``fnx.sort``, ``topk``, ``argsort``, ``msort`` and the Tensor methods of the
same names.

``sort`` and ``topk`` return ``return_types`` named tuples ``(values, indices)``.  Sorts
are always stable in fnx; ``stable=True`` picks the ``.stable`` overloads as PyTorch
does.  As in PyTorch, ``stable`` is keyword-only.
"""
from __future__ import annotations

from ..core.tensor import tensor_method
from ..ops import aten
from .out_results import write_results
from .reduction import return_types

__all__ = ["sort", "argsort", "msort", "topk"]


@tensor_method()
def sort(input, dim=-1, descending=False, *, stable=False, out=None):
    """Sort along ``dim``: ``(values, indices)``; NaN counts as the largest value.

    >>> import fnx
    >>> r = fnx.sort(fnx.tensor([3, 1, 2]), descending=True)
    >>> r.values.tolist(), r.indices.tolist()
    ([3, 2, 1], [0, 2, 1])
    """
    if stable:
        r = aten.sort.stable(input, stable=True, dim=dim, descending=descending)
    else:
        r = aten.sort.default(input, dim, descending)
    return return_types.sort(r if out is None else write_results("sort", r, out, (input,)))


@tensor_method()
def argsort(input, dim=-1, descending=False, *, stable=False):
    """The int64 indices that sort ``input`` along ``dim``.

    >>> import fnx
    >>> fnx.tensor([[2.0, 0.5, 1.0]]).argsort(dim=1).tolist()
    [[1, 2, 0]]
    """
    if stable:
        return aten.argsort.stable(input, stable=True, dim=dim, descending=descending)
    return aten.argsort.default(input, dim, descending)


@tensor_method()
def msort(input):
    """Sort along dim 0 (the values only).

    >>> import fnx
    >>> fnx.msort(fnx.tensor([[3, 1], [2, 4]])).tolist()
    [[2, 1], [3, 4]]
    """
    return aten.msort.default(input)


@tensor_method()
def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """The ``k`` largest (or smallest, ``largest=False``) elements along ``dim`` and
    their indices.

    >>> import fnx
    >>> r = fnx.tensor([1.0, 5.0, 3.0, 4.0]).topk(2)
    >>> r.values.tolist(), r.indices.tolist()
    ([5.0, 4.0], [1, 3])
    """
    r = aten.topk.default(input, k, dim, largest, sorted)
    return return_types.topk(r if out is None else write_results("topk", r, out, (input,)))
