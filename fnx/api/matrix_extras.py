"""PyTorch's everyday matrix helpers that are compositions of fnx ops: ``diag``,
``diag_embed``, ``diagflat``, ``cross`` (``torch.cross``'s ``dim=None``), ``addmv``,
``addr``, ``addbmm`` (and their in-place forms), ``dist`` and ``chain_matmul``. Being
compositions, they differentiate, trace and compile like the ops they call.

>>> import fnx
>>> fnx.diag(fnx.tensor([1, 2])).tolist()
[[1, 0], [0, 2]]
>>> fnx.addmv(fnx.ones(2), fnx.eye(2), fnx.tensor([3., 4.]), beta=2).tolist()
[5.0, 6.0]
"""
from __future__ import annotations

import warnings

from ..core.tensor import tensor_method
from ..ops import aten
from . import math as _m
from .combine import broadcast_shapes as _broadcast_shapes
from .creation import zeros as _zeros
from .creation import zeros_like as _zeros_like
from .linalg import bmm as _bmm
from .linalg import mm as _mm
from .linalg import mv as _mv
from .linalg import outer as _outer
from .shape import diagonal as _diagonal
from .shape import diagonal_scatter as _diagonal_scatter

__all__ = ["diag", "diag_embed", "diagflat", "cross", "addmv", "addr", "addbmm", "dist",
           "chain_matmul"]


@tensor_method()
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices whose ``offset`` diagonal (in dims ``dim1``, ``dim2`` of the result) holds
    the last dimension of ``input``; zeros elsewhere.

    >>> import fnx
    >>> fnx.diag_embed(fnx.tensor([[1, 2]])).tolist()
    [[[1, 0], [0, 2]]]
    """
    nd = input.ndim + 1
    d1, d2 = (dim1 % nd if -nd <= dim1 < nd else None), (dim2 % nd if -nd <= dim2 < nd else None)
    if d1 is None or d2 is None:
        bad = dim1 if d1 is None else dim2
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                         f"{nd - 1}], but got {bad})")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = (input.shape[-1] if input.ndim else 1) + abs(offset)
    shape = list(input.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    out = _zeros(shape, dtype=input.dtype, device=input.device)
    src = input if input.ndim else input.reshape(1)
    return _diagonal_scatter(out, src, offset, d1, d2)


@tensor_method()
def diag(input, diagonal=0):
    """A 1-D ``input`` as the ``diagonal``-th diagonal of a square matrix, or the
    ``diagonal``-th diagonal of a 2-D ``input`` (a new tensor, not a view).

    >>> import fnx
    >>> fnx.diag(fnx.tensor([[1, 2], [3, 4]])).tolist(), fnx.diag(fnx.tensor([5]), 1).tolist()
    ([1, 4], [[0, 5], [0, 0]])
    """
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return _diagonal(input, diagonal, 0, 1).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


@tensor_method()
def diagflat(input, offset=0):
    """``input`` flattened, as the ``offset``-th diagonal of a square matrix.

    >>> import fnx
    >>> fnx.diagflat(fnx.tensor([[1, 2]])).tolist()
    [[1, 0], [0, 2]]
    """
    return diag_embed(input.reshape(-1), offset, 0, 1)


@tensor_method()
def cross(input, other, dim=None):
    """The cross product of 3-vectors along ``dim``; ``dim=None`` takes the first dimension
    of size 3, with PyTorch's deprecation warning (``fnx.linalg.cross`` defaults to -1).

    >>> import fnx
    >>> fnx.cross(fnx.tensor([1., 0., 0.]), fnx.tensor([0., 1., 0.]), dim=0).tolist()
    [0.0, 0.0, 1.0]
    """
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
                      "The default value of dim will change to agree with that of "
                      "linalg.cross in a future release.", UserWarning, stacklevel=2)
        shape = _broadcast_shapes(input.shape, other.shape)
        sizes = [i for i, s in enumerate(shape) if s == 3]
        if not sizes:
            raise RuntimeError(f"no dimension of size 3 in input ({list(shape)})")
        dim = sizes[0]
    return aten.linalg_cross.default(input, other, dim=dim)


def _scaled_sum(name, input, product, beta, alpha):
    """``beta * input + alpha * product``; with ``beta == 0`` input is ignored (its NaN and
    inf do not propagate), as PyTorch's BLAS-style ops do."""
    if not isinstance(beta, (int, float, complex)) or not isinstance(alpha, (int, float, complex)):
        raise TypeError(f"{name}(): beta and alpha must be Python numbers")
    scaled = product if alpha == 1 else _m.mul(product, alpha)
    if beta == 0:
        return _m.add(_zeros_like(input), scaled)
    return _m.add(input if beta == 1 else _m.mul(input, beta), scaled)


@tensor_method()
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``.

    >>> import fnx
    >>> fnx.addmv(fnx.zeros(2), fnx.eye(2), fnx.tensor([1., 2.]), alpha=3).tolist()
    [3.0, 6.0]
    """
    return _scaled_sum("addmv", input, _mv(mat, vec), beta, alpha)


@tensor_method()
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)``.

    >>> import fnx
    >>> fnx.addr(fnx.zeros(2, 2), fnx.tensor([1., 2.]), fnx.tensor([1., 0.])).tolist()
    [[1.0, 0.0], [2.0, 0.0]]
    """
    return _scaled_sum("addr", input, _outer(vec1, vec2), beta, alpha)


@tensor_method()
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``.

    >>> import fnx
    >>> fnx.addbmm(fnx.zeros(1, 1), fnx.ones(3, 1, 2), fnx.ones(3, 2, 1)).tolist()
    [[6.0]]
    """
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if batch1.ndim != 3 else
                           "batch2 must be a 3D tensor")
    return _scaled_sum("addbmm", input, _bmm(batch1, batch2).sum(0), beta, alpha)


@tensor_method("addmv_")
def _addmv_(self, mat, vec, *, beta=1, alpha=1):
    """In-place ``addmv``: ``self = beta * self + alpha * (mat @ vec)``.

    >>> import fnx
    >>> fnx.ones(2).addmv_(fnx.eye(2), fnx.tensor([1., 2.])).tolist()
    [2.0, 3.0]
    """
    return self.copy_(addmv(self, mat, vec, beta=beta, alpha=alpha))


@tensor_method("addr_")
def _addr_(self, vec1, vec2, *, beta=1, alpha=1):
    """In-place ``addr``: ``self = beta * self + alpha * outer(vec1, vec2)``.

    >>> import fnx
    >>> fnx.zeros(1, 2).addr_(fnx.tensor([2.]), fnx.tensor([1., 3.])).tolist()
    [[2.0, 6.0]]
    """
    return self.copy_(addr(self, vec1, vec2, beta=beta, alpha=alpha))


@tensor_method("addbmm_")
def _addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """In-place ``addbmm``: ``self = beta * self + alpha * sum_b(batch1[b] @ batch2[b])``.

    >>> import fnx
    >>> fnx.ones(1, 1).addbmm_(fnx.ones(2, 1, 3), fnx.ones(2, 3, 1)).tolist()
    [[7.0]]
    """
    return self.copy_(addbmm(self, batch1, batch2, beta=beta, alpha=alpha))


@tensor_method()
def dist(input, other, p=2):
    """The ``p``-norm of ``input - other`` (broadcast).

    >>> import fnx
    >>> fnx.dist(fnx.tensor([0., 3.]), fnx.tensor([4., 0.])).item()
    5.0
    """
    return aten.linalg_vector_norm.default(_m.sub(input, other), p)


def chain_matmul(*matrices, out=None):
    """The product of 2-D ``matrices`` (deprecated in PyTorch for ``linalg.multi_dot``).

    >>> import fnx
    >>> fnx.chain_matmul(fnx.eye(2), fnx.tensor([[1., 2.], [3., 4.]])).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    result = matrices[0].clone() if len(matrices) == 1 else matrices[0]
    for m in matrices[1:]:
        result = _mm(result, m)
    return result if out is None else out.copy_(result)
