"""Everyday helpers of PyTorch's namespace that are compositions of fnx ops: ``trace``,
``vander``, ``isin``, ``unravel_index`` and ``column_stack``. Being compositions, they
differentiate (where PyTorch does), trace and compile like the ops they call.

>>> import fnx
>>> fnx.trace(fnx.tensor([[1, 2], [3, 4]])).item()
5
>>> fnx.vander(fnx.tensor([1, 2, 3])).tolist()
[[1, 1, 1], [4, 2, 1], [9, 3, 1]]
"""
from __future__ import annotations

from ..core import dtype as D
from ..core.tensor import Tensor, tensor_method
from .creation import ones as _ones
from .creation import tensor as _tensor
from .creation import zeros as _zeros
from .shape import cat as _cat
from .shape import hstack as _hstack

__all__ = ["trace", "vander", "isin", "unravel_index", "column_stack"]


@tensor_method()
def trace(input):
    """The sum of the main diagonal of a matrix (integers sum to int64, as ``sum``).

    >>> import fnx
    >>> fnx.ones(2, 3).trace().item()
    2.0
    """
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return input.diagonal().sum()


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D ``x``: columns ``x**(N-1), ..., x**0`` (or the
    reverse with ``increasing``); integers and booleans give int64.

    >>> import fnx
    >>> fnx.vander(fnx.tensor([1., 2.]), N=3, increasing=True).tolist()
    [[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]]
    """
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = x.dtype if x.dtype.is_floating_point or x.dtype.is_complex else D.int64
    rows = x.shape[0]
    if n == 0:
        return _zeros(rows, 0, dtype=dtype, device=x.device)
    out = _ones(rows, 1, dtype=dtype, device=x.device)
    if n > 1:
        powers = x.to(dtype).unsqueeze(1).expand(rows, n - 1).cumprod(1)
        out = _cat([out, powers], 1)
    return out if increasing else out.flip(1)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` is in ``test_elements`` (either may be a
    number), as a bool tensor of ``elements``' shape; ``invert`` negates it.

    >>> import fnx
    >>> fnx.isin(fnx.tensor([1, 2, 3]), fnx.tensor([2, 5])).tolist()
    [False, True, False]
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments: "
                        "expected at least one Tensor")
    like = elements if isinstance(elements, Tensor) else test_elements
    if not isinstance(elements, Tensor):
        elements = _tensor(elements, device=like.device)
    if not isinstance(test_elements, Tensor):
        test_elements = _tensor(test_elements, device=like.device)
    hit = (elements.unsqueeze(-1) == test_elements.reshape(-1)).any(-1)
    return hit.logical_not() if invert else hit


def unravel_index(indices, shape):
    """The coordinates in an array of ``shape`` of each flat index in ``indices``, one
    int64 tensor per dimension (an index outside ``shape`` wraps around, as PyTorch's).

    >>> import fnx
    >>> [t.tolist() for t in fnx.unravel_index(fnx.tensor([5, 7]), (2, 4))]
    [[1, 1], [1, 3]]
    """
    if not isinstance(indices, Tensor):
        raise TypeError(f"unravel_index(): argument 'indices' must be Tensor, not "
                        f"{type(indices).__name__}")
    if indices.dtype.is_floating_point or indices.dtype.is_complex or \
            indices.dtype is D.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got "
                        f"{indices.dtype}")
    dims = (shape,) if isinstance(shape, int) else tuple(int(d) for d in shape)
    if any(d < 0 for d in dims):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(dims)}")
    idx = indices.to(D.int64)
    coords = []
    for d in reversed(dims):
        coords.append(idx.remainder(d))
        idx = idx.div(d, rounding_mode="floor")
    return tuple(reversed(coords))


def column_stack(tensors):
    """``tensors`` side by side as columns: 0-D and 1-D tensors become columns, the rest
    are joined on dim 1.

    >>> import fnx
    >>> fnx.column_stack((fnx.tensor([1, 2]), fnx.tensor([3, 4]))).tolist()
    [[1, 3], [2, 4]]
    """
    return _hstack([t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in tensors])
