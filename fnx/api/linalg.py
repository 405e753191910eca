"""Matrix products: ``fnx.matmul`` (and ``x @ y``), ``mm``, ``bmm``, ``addmm``, ``baddbmm``,
``dot``, ``mv``, ``outer``, ``einsum``, ``tensordot`` and their Tensor methods.

Products do not promote dtypes (PyTorch's rule): ``float32 @ float64`` is an error.
"""
from __future__ import annotations

from ..core.tensor import Tensor, tensor_method
from ..ops import aten
from .creation import as_tensor

__all__ = ["matmul", "mm", "bmm", "addmm", "baddbmm", "dot", "mv", "outer", "ger", "einsum",
           "tensordot"]


@tensor_method("matmul", "__matmul__")
def matmul(input, other):
    """Matrix product with PyTorch's rules, as ``torch.matmul``: 1-D operands are vectors
    (a dim is added and removed again), batch dims broadcast.

    >>> import fnx
    >>> a = fnx.tensor([[1., 2.], [3., 4.]])
    >>> fnx.matmul(a, fnx.tensor([1., 1.])).tolist(), (a @ a).tolist()
    ([3.0, 7.0], [[7.0, 10.0], [15.0, 22.0]])
    """
    return _matmul(input, other)


_matmul = aten.matmul.default._call     # the generated call itself: one frame less


@tensor_method()
def mm(input, mat2):
    """Product of two matrices, as ``torch.mm``.

    >>> import fnx
    >>> fnx.mm(fnx.tensor([[1, 2]]), fnx.tensor([[3], [4]])).tolist()
    [[11]]
    """
    return aten.mm.default(input, mat2)


@tensor_method()
def bmm(input, mat2):
    """Batched matrix product of two 3-D tensors, as ``torch.bmm``.

    >>> import fnx
    >>> fnx.bmm(fnx.ones(2, 3, 4), fnx.ones(2, 4, 5)).shape
    fnx.Size([2, 3, 5])
    """
    return aten.bmm.default(input, mat2)


@tensor_method()
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``, as ``torch.addmm`` (``beta=0`` ignores
    ``input``).

    >>> import fnx
    >>> fnx.addmm(fnx.tensor([1., 1.]), fnx.eye(2), fnx.eye(2), alpha=2).tolist()
    [[3.0, 1.0], [1.0, 3.0]]
    """
    return aten.addmm.default(input, mat1, mat2, beta=beta, alpha=alpha)


@tensor_method()
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * bmm(batch1, batch2)``, as ``torch.baddbmm``.

    >>> import fnx
    >>> fnx.baddbmm(fnx.zeros(1), fnx.ones(2, 1, 3), fnx.ones(2, 3, 1)).tolist()
    [[[3.0]], [[3.0]]]
    """
    return aten.baddbmm.default(input, batch1, batch2, beta=beta, alpha=alpha)


@tensor_method()
def dot(input, tensor):
    """Inner product of two 1-D tensors of one dtype, as ``torch.dot``.

    >>> import fnx
    >>> fnx.dot(fnx.tensor([1, 2, 3]), fnx.tensor([4, 5, 6])).item()
    32
    """
    return aten.dot.default(input, tensor)


@tensor_method()
def mv(input, vec):
    """Matrix-vector product, as ``torch.mv``.

    >>> import fnx
    >>> fnx.mv(fnx.tensor([[1, 2], [3, 4]]), fnx.tensor([1, -1])).tolist()
    [-1, -1]
    """
    return aten.mv.default(input, vec)


@tensor_method("outer", "ger")
def outer(input, vec2):
    """Outer product of two 1-D tensors (dtypes promote), as ``torch.outer``.

    >>> import fnx
    >>> fnx.outer(fnx.tensor([1, 2]), fnx.tensor([1., 10.])).tolist()
    [[1.0, 10.0], [2.0, 20.0]]
    """
    return aten.outer.default(input, vec2)


ger = outer


def einsum(equation, *operands):
    """Einstein summation, as ``torch.einsum``; operands may also come as one list.

    >>> import fnx
    >>> a = fnx.tensor([[1., 2.], [3., 4.]])
    >>> fnx.einsum("ij,jk->ik", a, a).tolist(), fnx.einsum("ii", a).item()
    ([[7.0, 10.0], [15.0, 22.0]], 5.0)
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return aten.einsum.default(equation, list(operands))


def tensordot(a, b, dims=2):
    """Contract the last ``dims`` dims of ``a`` with the first of ``b``, or the listed
    pairs ``dims=([dims of a], [dims of b])``, as ``torch.tensordot``.

    >>> import fnx
    >>> fnx.tensordot(fnx.ones(2, 3, 4), fnx.ones(3, 4, 5), dims=2).shape
    fnx.Size([2, 5])
    """
    if isinstance(dims, Tensor):
        dims = dims.tolist() if dims.ndim else dims.item()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got "
                               f"dims={dims}")
        ds, do = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        ds, do = dims
        ds = [ds] if isinstance(ds, int) else list(ds)
        do = [do] if isinstance(do, int) else list(do)
    return aten.tensordot.default(a, b, ds, do)


@tensor_method("__rmatmul__")
def _rmatmul(self, other):
    if not isinstance(other, Tensor):
        other = as_tensor(other)
    return aten.matmul.default(other, self)
