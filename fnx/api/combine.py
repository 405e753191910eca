"""Everyday helpers: ``diff``, ``nan_to_num``, ``kron``, ``rot90``, ``tensor_split`` and
``hsplit``/``vsplit``/``dsplit``, ``meshgrid``, ``cartesian_prod``, ``block_diag``,
``broadcast_tensors``, ``broadcast_shapes``, ``repeat_interleave``, ``tril_indices``/
``triu_indices``, ``trapezoid``/``cumulative_trapezoid``, ``narrow_copy`` and
``combinations`` (functions and Tensor methods, PyTorch's
signatures; each picks the overload PyTorch's binding would)."""
from __future__ import annotations

import operator
import warnings

from ..core import dtype as D
from ..core.tensor import Size, Tensor, tensor_method
from ..ir.aten import combine as C
from ..ir.variants import check_writable
from ..ops import aten

__all__ = ["diff", "nan_to_num", "nan_to_num_", "kron", "rot90", "tensor_split", "hsplit",
           "vsplit", "dsplit", "meshgrid", "cartesian_prod", "block_diag", "broadcast_tensors",
           "broadcast_shapes", "repeat_interleave", "tril_indices", "triu_indices", "trapezoid",
           "cumulative_trapezoid", "narrow_copy", "combinations"]


def _tensors(args, name):
    """``f(a, b)`` and ``f([a, b])`` alike; an empty list has nothing to dispatch on."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    args = list(args)
    if not args:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return args


@tensor_method()
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` joined first;
    bool inputs use xor).

    >>> import fnx
    >>> fnx.diff(fnx.tensor([1, 3, 6, 10])).tolist()
    [2, 3, 4]
    >>> fnx.diff(fnx.tensor([1, 3, 6, 10]), n=2, prepend=fnx.tensor([0])).tolist()
    [1, 1, 1]
    """
    return C.diff(input, n, dim, prepend, append)


@tensor_method()
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0 and
    the dtype's largest and lowest finite values); integer tensors are copied.

    >>> import fnx
    >>> x = fnx.tensor([float("nan"), float("inf"), -float("inf"), 1.0])
    >>> fnx.nan_to_num(x, posinf=9.0).tolist()
    [0.0, 9.0, -3.4028234663852886e+38, 1.0]
    """
    return C.nan_to_num(input, nan, posinf, neginf)


@tensor_method()
def nan_to_num_(input, nan=0.0, posinf=None, neginf=None):
    """In-place ``nan_to_num``.

    >>> import fnx
    >>> x = fnx.tensor([float("nan"), 2.0])
    >>> x.nan_to_num_(nan=-1.0).tolist()
    [-1.0, 2.0]
    """
    r = C.nan_to_num(input, nan, posinf, neginf)
    check_writable("nan_to_num_", r, input, resize=False)
    return input.copy_(r)


@tensor_method()
def kron(input, other):
    """The Kronecker product (shapes multiply dim by dim, the shorter one padded with 1s
    on the left).

    >>> import fnx
    >>> fnx.kron(fnx.tensor([[1, 2], [3, 4]]), fnx.tensor([1, 10])).tolist()
    [[1, 10, 2, 20], [3, 30, 4, 40]]
    """
    return C.kron(input, other)


@tensor_method()
def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``dims`` (from the first toward
    the second axis).

    >>> import fnx
    >>> fnx.rot90(fnx.tensor([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """
    return C.rot90(input, k, list(dims))


@tensor_method()
def tensor_split(input, indices_or_sections, dim=0):
    """Views splitting ``dim`` into ``sections`` nearly equal pieces (the first ones one
    longer), or at the given ``indices``; a tensor argument is read as either.

    >>> import fnx
    >>> [p.tolist() for p in fnx.tensor_split(fnx.arange(7), 3)]
    [[0, 1, 2], [3, 4], [5, 6]]
    >>> [p.tolist() for p in fnx.tensor_split(fnx.arange(7), [1, 5])]
    [[0], [1, 2, 3, 4], [5, 6]]
    """
    arg = indices_or_sections
    if isinstance(arg, Tensor):
        if arg.dtype is not D.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {arg.dtype.scalar_type}")
        if arg.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {arg.ndim} dims")
        arg = arg.item() if arg.ndim == 0 else arg.tolist()     # data dependent: eager only
    if isinstance(arg, (list, tuple)):
        return tuple(C.tensor_split_indices(input, list(arg), dim))
    return tuple(C.tensor_split_sections(input, operator.index(arg), dim))


def _xsplit(int_op, array_op):
    def split(input, indices_or_sections):
        if isinstance(indices_or_sections, (list, tuple)):
            return tuple(array_op(input, list(indices_or_sections)))
        return tuple(int_op(input, operator.index(indices_or_sections)))
    return split


@tensor_method()
def hsplit(input, indices_or_sections):
    """``tensor_split`` along dim 1 (dim 0 of a 1-D tensor); sections must divide it.

    >>> import fnx
    >>> [p.shape for p in fnx.hsplit(fnx.ones(2, 4), 2)]
    [fnx.Size([2, 2]), fnx.Size([2, 2])]
    """
    return _xsplit(C.hsplit_int, C.hsplit_array)(input, indices_or_sections)


@tensor_method()
def vsplit(input, indices_or_sections):
    """``tensor_split`` along dim 0 of a tensor of 2 or more dims; sections must divide it.

    >>> import fnx
    >>> [p.tolist() for p in fnx.vsplit(fnx.tensor([[1], [2], [3]]), [1])]
    [[[1]], [[2], [3]]]
    """
    return _xsplit(C.vsplit_int, C.vsplit_array)(input, indices_or_sections)


@tensor_method()
def dsplit(input, indices_or_sections):
    """``tensor_split`` along dim 2 of a tensor of 3 or more dims; sections must divide it.

    >>> import fnx
    >>> [p.shape for p in fnx.dsplit(fnx.ones(1, 2, 6), 3)]
    [fnx.Size([1, 2, 2]), fnx.Size([1, 2, 2]), fnx.Size([1, 2, 2])]
    """
    return _xsplit(C.dsplit_int, C.dsplit_array)(input, indices_or_sections)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 0-D/1-D tensors: ``indexing="ij"`` gives grids of shape
    ``(len(t0), len(t1), ...)``, ``"xy"`` swaps the first two dims. Omitting ``indexing``
    means ``"ij"`` and warns, as PyTorch does.

    >>> import fnx
    >>> x, y = fnx.meshgrid(fnx.tensor([1, 2]), fnx.tensor([3, 4, 5]), indexing="ij")
    >>> x.tolist(), y.shape
    ([[1, 1, 1], [2, 2, 2]], fnx.Size([2, 3]))
    """
    ts = _tensors(tensors, "meshgrid")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        return tuple(C.meshgrid(ts))
    return tuple(C.meshgrid_indexing(ts, indexing=indexing))


def cartesian_prod(*tensors):
    """All tuples of the 1-D inputs' elements, one per row, in lexicographic order (one
    input: a copy of it).

    >>> import fnx
    >>> fnx.cartesian_prod(fnx.tensor([1, 2]), fnx.tensor([3, 4])).tolist()
    [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    return C.cartesian_prod(_tensors(tensors, "meshgrid"))


def block_diag(*tensors):
    """The inputs (0-D as 1x1, 1-D as one row) along the diagonal of a zero matrix, in the
    inputs' promoted dtype.

    >>> import fnx
    >>> fnx.block_diag(fnx.tensor([[1, 2]]), fnx.tensor(3)).tolist()
    [[1, 2, 0], [0, 0, 3]]
    """
    if len(tensors) == 0:
        return aten.empty.memory_format([1, 0])
    return C.block_diag(list(tensors))


def broadcast_tensors(*tensors):
    """Views of the inputs expanded to their common broadcast shape.

    >>> import fnx
    >>> a, b = fnx.broadcast_tensors(fnx.ones(2, 1), fnx.zeros(3))
    >>> a.shape, b.shape
    (fnx.Size([2, 3]), fnx.Size([2, 3]))
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    return tuple(C.broadcast_tensors(list(tensors))) if tensors else ()


def broadcast_shapes(*shapes):
    """The shape that tensors of ``shapes`` broadcast to (an int stands for a 1-D shape).

    >>> import fnx
    >>> fnx.broadcast_shapes((2, 1), (3,), 1)
    fnx.Size([2, 3])
    """
    dims = [(operator.index(s),) if not isinstance(s, (list, tuple)) else
            tuple(operator.index(d) for d in s) for s in shapes]
    for s in dims:
        if any(d < 0 for d in s):
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{min(s)}: {list(s)}")
    out = [1] * max((len(s) for s in dims), default=0)
    for i, s in enumerate(dims):
        for j in range(-1, -len(s) - 1, -1):
            if s[j] == 1 or s[j] == out[j]:
                continue
            if out[j] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s[j]} at "
                                   f"{j}! Mismatching argument at index {i} had {s}; but "
                                   f"expected shape should be broadcastable to {out}")
            out[j] = s[j]
    return Size(out)


@tensor_method()
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (or each slice along ``dim``; the flattened input when ``dim`` is
    None) repeated ``repeats`` times (an int, or a tensor with one count per element).
    ``repeat_interleave(repeats)`` alone gives ``i`` repeated ``repeats[i]`` times.
    Tensor repeats without ``output_size`` make the length depend on data: eager only.

    >>> import fnx
    >>> fnx.repeat_interleave(fnx.tensor([[1, 2], [3, 4]]), 2, dim=1).tolist()
    [[1, 1, 2, 2], [3, 3, 4, 4]]
    >>> fnx.repeat_interleave(fnx.tensor([1, 2]), fnx.tensor([1, 3])).tolist()
    [1, 2, 2, 2]
    >>> fnx.repeat_interleave(fnx.tensor([2, 0, 1])).tolist()
    [0, 0, 2]
    """
    if repeats is None:
        return C.repeat_interleave_Tensor(input, output_size=output_size)
    if isinstance(repeats, Tensor):
        return C.repeat_interleave_self_Tensor(input, repeats, dim, output_size=output_size)
    return C.repeat_interleave_self_int(input, repeats, dim, output_size=output_size)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the lower triangle of a row x col matrix (on and below
    diagonal ``offset``), row by row.

    >>> import fnx
    >>> fnx.tril_indices(3, 3).tolist()
    [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    """
    return C.tril_indices(row, col, offset, dtype=dtype, device=device, layout=layout)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the upper triangle of a row x col matrix (on and above
    diagonal ``offset``), row by row.

    >>> import fnx
    >>> fnx.triu_indices(2, 3, 1).tolist()
    [[0, 0, 1], [1, 2, 2]]
    """
    return C.triu_indices(row, col, offset, dtype=dtype, device=device, layout=layout)


def _trapezoid_args(name, x, dx):
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: pass either "
                        f"x or dx, not both")


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoid rule along ``dim``: sample points ``x`` (a tensor) or a spacing
    ``dx`` (default 1). Integer ``y`` integrates in the default float dtype.

    >>> import fnx
    >>> fnx.trapezoid(fnx.tensor([1., 2., 4.]), fnx.tensor([0., 1., 3.])).item()
    7.5
    """
    _trapezoid_args("trapezoid", x, dx)
    if x is not None:
        return C.trapezoid_x(y, x, dim=dim)
    return C.trapezoid_dx(y, dx=1 if dx is None else dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid rule along ``dim`` (one value fewer than ``y`` has).

    >>> import fnx
    >>> fnx.cumulative_trapezoid(fnx.tensor([1, 2, 4])).tolist()
    [1.5, 4.5]
    """
    _trapezoid_args("cumulative_trapezoid", x, dx)
    if x is not None:
        return C.cumulative_trapezoid_x(y, x, dim=dim)
    return C.cumulative_trapezoid_dx(y, dx=1 if dx is None else dx, dim=dim)


@tensor_method()
def narrow_copy(input, dim, start, length):
    """A copy (not a view) of ``length`` elements of ``dim`` from ``start``.

    >>> import fnx
    >>> fnx.narrow_copy(fnx.tensor([1, 2, 3, 4]), 0, 1, 2).tolist()
    [2, 3]
    """
    return C.narrow_copy(input, dim, start, length)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of a 1-D tensor's elements, one per row, as
    ``itertools.combinations`` (``combinations_with_replacement`` with the flag).

    >>> import fnx
    >>> fnx.combinations(fnx.tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    return C.combinations(input, r, with_replacement)
