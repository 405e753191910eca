"""Order statistics and ordered scans: ``median``, ``nanmedian``, ``quantile``,
``nanquantile``, ``mode``, ``kthvalue``, ``cummax``, ``cummin``, ``logcumsumexp``
(functions and Tensor methods, PyTorch's signatures; ``(values, indices)`` results come
back as ``return_types`` named tuples)."""
from __future__ import annotations

from ..core.tensor import tensor_method
from ..ops import aten
from .out_results import write_results
from .reduction import return_types

__all__ = ["median", "nanmedian", "quantile", "nanquantile", "mode", "kthvalue", "cummax",
           "cummin", "logcumsumexp"]


def _pair(name, r, out, input):
    """The named ``(values, indices)``, written into ``out`` when given."""
    return getattr(return_types, name)(r if out is None else
                                       write_results(name, r, out, (input,)))


def _is_tensor(q) -> bool:
    return hasattr(q, "ndim") and hasattr(q, "dtype")


@tensor_method()
def median(input, dim=None, keepdim=False, *, out=None):
    """The median (the lower of the two middle values for an even count; NaN if any is
    NaN); with ``dim``, ``(values, indices)`` along it.

    >>> import fnx
    >>> fnx.median(fnx.tensor([4., 1., 3., 2.])).item()
    2.0
    >>> r = fnx.tensor([[1, 5, 3], [9, 7, 8]]).median(dim=1)
    >>> r.values.tolist(), r.indices.tolist()
    ([3, 8], [2, 2])
    """
    if dim is None:
        if out is not None:
            raise TypeError("median(): out= needs a dim (the (values, indices) form)")
        return aten.median.default(input)
    return _pair("median", aten.median.dim(input, dim, keepdim), out, input)


@tensor_method()
def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """``median`` ignoring NaNs (NaN only where every value is NaN).

    >>> import fnx
    >>> fnx.nanmedian(fnx.tensor([1., float("nan"), 3., 2.])).item()
    2.0
    """
    if dim is None:
        if out is not None:
            raise TypeError("nanmedian(): out= needs a dim (the (values, indices) form)")
        return aten.nanmedian.default(input)
    return _pair("nanmedian", aten.nanmedian.dim(input, dim, keepdim), out, input)


@tensor_method()
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-quantiles (a float or a 1-D tensor of them, in [0, 1]) over ``dim``
    (all elements when None); a tensor ``q`` adds a leading dimension.  ``interpolation``
    is one of linear, lower, higher, midpoint, nearest.

    >>> import fnx
    >>> x = fnx.tensor([1., 2., 3., 4.])
    >>> fnx.quantile(x, 0.5).item(), fnx.quantile(x, fnx.tensor([0., 1.])).tolist()
    (2.5, [1.0, 4.0])
    """
    if _is_tensor(q):
        return aten.quantile.default(input, q, dim, keepdim, interpolation=interpolation)
    return aten.quantile.scalar(input, float(q), dim, keepdim, interpolation=interpolation)


@tensor_method()
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` ignoring NaNs.

    >>> import fnx
    >>> fnx.nanquantile(fnx.tensor([1., float("nan"), 3.]), 0.5).item()
    2.0
    """
    if _is_tensor(q):
        return aten.nanquantile.default(input, q, dim, keepdim, interpolation=interpolation)
    return aten.nanquantile.scalar(input, float(q), dim, keepdim,
                                   interpolation=interpolation)


@tensor_method()
def mode(input, dim=-1, keepdim=False, *, out=None):
    """The most frequent value along ``dim`` (the smallest of a tie) and the last index
    holding it.

    >>> import fnx
    >>> r = fnx.mode(fnx.tensor([3, 1, 3, 1, 2]))
    >>> r.values.item(), r.indices.item()
    (1, 3)
    """
    return _pair("mode", aten.mode.default(input, dim, keepdim), out, input)


@tensor_method()
def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest element along ``dim`` (k from 1) and its index.

    >>> import fnx
    >>> r = fnx.tensor([5., 2., 9., 1.]).kthvalue(2)
    >>> r.values.item(), r.indices.item()
    (2.0, 1)
    """
    return _pair("kthvalue", aten.kthvalue.default(input, k, dim, keepdim), out, input)


@tensor_method()
def cummax(input, dim, *, out=None):
    """Running maximum along ``dim`` and the (last) index where it was reached.

    >>> import fnx
    >>> r = fnx.cummax(fnx.tensor([1, 3, 2, 3]), 0)
    >>> r.values.tolist(), r.indices.tolist()
    ([1, 3, 3, 3], [0, 1, 1, 3])
    """
    return _pair("cummax", aten.cummax.default(input, dim), out, input)


@tensor_method()
def cummin(input, dim, *, out=None):
    """Running minimum along ``dim`` and the (last) index where it was reached.

    >>> import fnx
    >>> r = fnx.cummin(fnx.tensor([2, 1, 3, 0]), 0)
    >>> r.values.tolist(), r.indices.tolist()
    ([2, 1, 1, 0], [0, 1, 1, 3])
    """
    return _pair("cummin", aten.cummin.default(input, dim), out, input)


@tensor_method()
def logcumsumexp(input, dim):
    """``log(cumsum(exp(input), dim))``, computed without overflow.

    >>> import fnx
    >>> [round(v, 4) for v in fnx.logcumsumexp(fnx.tensor([0., 0., 1000.]), 0).tolist()]
    [0.0, 0.6931, 1000.0]
    """
    return aten.logcumsumexp.default(input, dim)
