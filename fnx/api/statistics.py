"""Statistics and closeness: ``nansum``, ``nanmean``, ``cov``, ``corrcoef``, ``isclose``,
``allclose``, ``equal`` (functions and Tensor methods, PyTorch's signatures)."""
from __future__ import annotations

from ..core.tensor import tensor_method
from ..ops import aten
from .reduction import dim_list

__all__ = ["nansum", "nanmean", "cov", "corrcoef", "isclose", "allclose", "equal"]


@tensor_method()
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum treating NaN as zero (integers: ``sum``).

    >>> import fnx
    >>> fnx.nansum(fnx.tensor([1., float("nan"), 2.])).item()
    3.0
    """
    return aten.nansum.default(input, dim_list(dim), keepdim, dtype=dtype)


@tensor_method()
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of the non-NaN elements (floating or complex input).

    >>> import fnx
    >>> fnx.nanmean(fnx.tensor([[1., float("nan")], [2., 4.]]), dim=1).tolist()
    [1.0, 3.0]
    """
    return aten.nanmean.default(input, dim_list(dim), keepdim, dtype=dtype)


@tensor_method()
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance matrix of the variables in the rows of ``input`` (observations in the
    columns), with frequency and observation weights, as ``torch.cov``.

    >>> import fnx
    >>> fnx.cov(fnx.tensor([[0., 1., 2.], [2., 1., 0.]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    return aten.cov.default(input, correction=correction, fweights=fweights,
                            aweights=aweights)


@tensor_method()
def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input``.

    >>> import fnx
    >>> fnx.corrcoef(fnx.tensor([[0., 1., 2.], [4., 2., 0.]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    return aten.corrcoef.default(input)


@tensor_method()
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (equal infinities close;
    NaNs only with ``equal_nan``); both of one dtype.

    >>> import fnx
    >>> fnx.isclose(fnx.tensor([1., 2.]), fnx.tensor([1. + 1e-7, 2.1])).tolist()
    [True, False]
    """
    return aten.isclose.default(input, other, rtol, atol, equal_nan)


@tensor_method()
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether ``isclose`` holds everywhere (a Python bool).

    >>> import fnx
    >>> fnx.allclose(fnx.tensor([1., 2.]), fnx.tensor([1., 2. + 1e-6]))
    True
    """
    return bool(aten.all.default(isclose(input, other, rtol, atol, equal_nan)).item())


@tensor_method()
def equal(input, other) -> bool:
    """Whether both have the same shape and the same values (a Python bool; NaN is never
    equal; the dtypes may differ, values compare after promotion).

    >>> import fnx
    >>> fnx.equal(fnx.tensor([1, 2]), fnx.tensor([1., 2.])), fnx.equal(fnx.ones(2), fnx.ones(3))
    (True, False)
    """
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(aten.all.default(aten.eq.Tensor(input, other)).item())
