"""Shapes and views: ``fnx.reshape``, ``x.view``, ``fnx.cat``, ``fnx.split``, ``x.T``, ...

Each function picks the ATen overload PyTorch's Python binding would (``squeeze`` with
no dim, one dim or several; ``split`` with a size or a list of sizes) and calls it.
"""
from __future__ import annotations

from ..backends.cpu.shape import storage_offset as _offset
from ..core.tensor import Tensor, tensor_method
from ..ir.aten import arrange as A
from ..ir.aten import shape as S
from ..ir.strides import ints

__all__ = ["reshape", "permute", "transpose", "swapaxes", "swapdims", "t", "squeeze",
           "unsqueeze", "flatten", "unflatten", "ravel", "cat", "concat", "concatenate",
           "stack", "hstack", "vstack", "dstack", "row_stack", "split", "chunk", "unbind",
           "narrow", "select", "flip", "fliplr", "flipud", "roll", "tile", "movedim",
           "moveaxis", "diagonal", "tril", "triu", "clone", "detach", "as_strided",
           "broadcast_to", "atleast_1d", "atleast_2d", "atleast_3d", "view_as_real",
           "view_as_complex", "constant_pad_nd", "select_scatter", "slice_scatter",
           "diagonal_scatter"]


def _tensor_list(tensors, name):
    """The op takes a list; an empty one has no tensor to dispatch on, so check it here."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors" if name == "cat"
                           else f"{name} expects a non-empty TensorList")
    return tensors


def _sizes(args, name, arg="size"):
    """``x.view(2, 3)``, ``x.view((2, 3))`` and ``x.view(fnx.Size([2, 3]))`` alike."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    return ints(args, name, arg)


# --------------------------------------------------------------------------- views

@tensor_method()
def view(self, *shape):
    """A view of ``self`` with another shape (-1 inferred); errors when strides forbid it.

    >>> import fnx
    >>> x = fnx.tensor([[1, 2, 3], [4, 5, 6]])
    >>> x.view(3, 2).tolist(), x.view(-1).shape
    ([[1, 2], [3, 4], [5, 6]], fnx.Size([6]))
    """
    if len(shape) == 1 and shape[0].__class__.__name__ == "dtype":
        raise NotImplementedError("Tensor.view(dtype) is not supported by fnx")
    return S.view(self, _sizes(shape, "view"))


def reshape(input, shape):
    """``input`` with a new shape: a view when the strides allow it, else a copy.

    >>> import fnx
    >>> fnx.reshape(fnx.tensor([1, 2, 3, 4]), (2, -1)).tolist()
    [[1, 2], [3, 4]]
    """
    return S.reshape(input, ints(shape, "reshape", "shape"))


@tensor_method("reshape")
def _reshape_method(self, *shape):
    """``fnx.reshape(self, shape)``; the sizes may also come as separate ints.

    >>> import fnx
    >>> fnx.tensor([1, 2, 3, 4]).reshape(2, 2).tolist()
    [[1, 2], [3, 4]]
    """
    return S.reshape(self, _sizes(shape, "reshape", "shape"))


@tensor_method()
def view_as(self, other):
    """``self.view(other.shape)``.

    >>> import fnx
    >>> fnx.tensor([1, 2]).view_as(fnx.zeros(2, 1)).shape
    fnx.Size([2, 1])
    """
    return S.view_as(self, other)


@tensor_method()
def reshape_as(self, other):
    """``self.reshape(other.shape)``.

    >>> import fnx
    >>> fnx.tensor([1, 2]).reshape_as(fnx.zeros(1, 2)).shape
    fnx.Size([1, 2])
    """
    return S.reshape_as(self, other)


@tensor_method()
def expand(self, *sizes):
    """A view broadcasting size-1 dims to ``sizes`` (-1 keeps a dim), without copying.

    >>> import fnx
    >>> fnx.tensor([[1], [2]]).expand(2, 3).tolist()
    [[1, 1, 1], [2, 2, 2]]
    """
    return S.expand(self, _sizes(sizes, "expand"))


@tensor_method()
def expand_as(self, other):
    """``self.expand(other.shape)``.

    >>> import fnx
    >>> fnx.tensor([[1], [2]]).expand_as(fnx.zeros(2, 2)).tolist()
    [[1, 1], [2, 2]]
    """
    return S.expand_as(self, other)


def broadcast_to(input, size):
    """``input.expand(size)``, as ``torch.broadcast_to``.

    >>> import fnx
    >>> fnx.broadcast_to(fnx.tensor([1, 2]), (2, 2)).tolist()
    [[1, 2], [1, 2]]
    """
    return S.expand(input, ints(size, "broadcast_to"))


def permute(input, dims):
    """A view with the dims reordered.

    >>> import fnx
    >>> fnx.permute(fnx.tensor([[1, 2, 3]]), (1, 0)).shape
    fnx.Size([3, 1])
    """
    return S.permute(input, ints(dims, "permute", "dims"))


@tensor_method("permute")
def _permute_method(self, *dims):
    """``fnx.permute(self, dims)``; the dims may also come as separate ints.

    >>> import fnx
    >>> fnx.zeros(2, 3, 4).permute(2, 0, 1).shape
    fnx.Size([4, 2, 3])
    """
    return S.permute(self, _sizes(dims, "permute", "dims"))


@tensor_method()
def transpose(input, dim0, dim1):
    """A view with ``dim0`` and ``dim1`` swapped.

    >>> import fnx
    >>> x = fnx.tensor([[1, 2, 3], [4, 5, 6]])
    >>> fnx.transpose(x, 0, 1).tolist(), x.transpose(0, 1).is_contiguous()
    ([[1, 4], [2, 5], [3, 6]], False)
    """
    return S.transpose_int(input, dim0, dim1)


@tensor_method()
def swapaxes(input, axis0, axis1):
    """NumPy's name for ``transpose``.

    >>> import fnx
    >>> fnx.swapaxes(fnx.tensor([[1, 2]]), 0, 1).shape
    fnx.Size([2, 1])
    """
    return S.swapaxes(input, axis0, axis1)


@tensor_method()
def swapdims(input, dim0, dim1):
    """Alias of ``transpose``.

    >>> import fnx
    >>> fnx.swapdims(fnx.tensor([[1, 2]]), 0, 1).shape
    fnx.Size([2, 1])
    """
    return S.swapdims(input, dim0, dim1)


@tensor_method()
def t(input):
    """Transpose of a matrix; 0-D and 1-D tensors come back as views of themselves.

    >>> import fnx
    >>> fnx.t(fnx.tensor([[1, 2]])).tolist()
    [[1], [2]]
    """
    return S.t(input)


def _T(self) -> Tensor:
    """The dims reversed (the transpose of a matrix).

    >>> import fnx
    >>> fnx.zeros(2, 3, 4).T.shape
    fnx.Size([4, 3, 2])
    """
    if self.ndim == 2:
        return S.t(self)
    return S.permute(self, list(range(self.ndim - 1, -1, -1)))


def _mT(self) -> Tensor:
    """The last two dims swapped (the transpose of every matrix of a batch).

    >>> import fnx
    >>> fnx.zeros(5, 2, 3).mT.shape
    fnx.Size([5, 3, 2])
    """
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self.ndim}-D tensor.")
    return S.transpose_int(self, -2, -1)


Tensor.T = property(_T)
Tensor.mT = property(_mT)


@tensor_method()
def squeeze(input, dim=None):
    """Remove dims of size 1 (all of them, ``dim``, or the dims in a tuple).

    >>> import fnx
    >>> x = fnx.tensor([[[1], [2]]])
    >>> fnx.squeeze(x).shape, x.squeeze(0).shape, x.squeeze((0, 2)).shape
    (fnx.Size([2]), fnx.Size([2, 1]), fnx.Size([2]))
    """
    if dim is None:
        return S.squeeze(input)
    if isinstance(dim, (tuple, list)):
        return S.squeeze_dims_op(input, ints(dim, "squeeze", "dim"))
    return S.squeeze_dim(input, dim)


@tensor_method()
def unsqueeze(input, dim):
    """A view with a new dim of size 1 at ``dim``.

    >>> import fnx
    >>> fnx.unsqueeze(fnx.tensor([1, 2]), -1).shape
    fnx.Size([2, 1])
    """
    return S.unsqueeze(input, dim)


@tensor_method()
def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one (a view when possible).

    >>> import fnx
    >>> fnx.flatten(fnx.tensor([[[1, 2], [3, 4]]]), 1).shape
    fnx.Size([1, 4])
    """
    return S.flatten_using_ints(input, start_dim, end_dim)


@tensor_method()
def unflatten(input, dim, sizes):
    """Split ``dim`` into ``sizes`` (one -1 allowed).

    >>> import fnx
    >>> fnx.unflatten(fnx.tensor([1, 2, 3, 4, 5, 6]), 0, (2, -1)).shape
    fnx.Size([2, 3])
    """
    return S.unflatten_int(input, dim, ints(sizes, "unflatten", "sizes"))


@tensor_method()
def ravel(input):
    """The elements as a 1-D tensor (a view when possible).

    >>> import fnx
    >>> fnx.ravel(fnx.tensor([[1, 2], [3, 4]])).tolist()
    [1, 2, 3, 4]
    """
    return S.reshape(input, [-1])


@tensor_method()
def movedim(input, source, destination):
    """Move dims ``source`` to positions ``destination`` (ints or tuples).

    >>> import fnx
    >>> fnx.movedim(fnx.tensor([[[1, 2, 3]]]), 2, 0).shape
    fnx.Size([3, 1, 1])
    """
    if isinstance(source, (tuple, list)) or isinstance(destination, (tuple, list)):
        return S.movedim_intlist(input, ints(source, "movedim", "source"),
                                 ints(destination, "movedim", "destination"))
    return S.movedim_int(input, source, destination)


@tensor_method()
def moveaxis(input, source, destination):
    """NumPy's name for ``movedim``.

    >>> import fnx
    >>> fnx.moveaxis(fnx.tensor([[1, 2, 3]]), 0, 1).shape
    fnx.Size([3, 1])
    """
    return movedim(input, source, destination)


@tensor_method()
def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of the diagonal (``offset`` above it when positive) over ``dim1``/``dim2``.

    >>> import fnx
    >>> x = fnx.tensor([[1, 2, 3], [4, 5, 6]])
    >>> fnx.diagonal(x).tolist(), x.diagonal(1).tolist(), x.diagonal(-1).tolist()
    ([1, 5], [2, 6], [4])
    """
    return S.diagonal(input, offset, dim1, dim2)


@tensor_method()
def narrow(input, dim, start, length):
    """A view of ``length`` elements of ``dim`` from ``start``.

    >>> import fnx
    >>> fnx.narrow(fnx.tensor([1, 2, 3, 4]), 0, 1, 2).tolist()
    [2, 3]
    """
    return S.narrow(input, dim, start, length)


@tensor_method()
def select(input, dim, index):
    """The view ``input[..., index, ...]`` at ``dim``: that dim removed.

    >>> import fnx
    >>> fnx.select(fnx.tensor([[1, 2], [3, 4]]), 1, 0).tolist()
    [1, 3]
    """
    return S.select_int(input, dim, index)


@tensor_method()
def as_strided(input, size, stride, storage_offset=None):
    """A view with explicit sizes, strides (in elements) and storage offset.

    >>> import fnx
    >>> fnx.as_strided(fnx.tensor([1, 2, 3, 4]), (3, 2), (1, 1)).tolist()
    [[1, 2], [2, 3], [3, 4]]
    """
    return S.as_strided(input, ints(size, "as_strided"), ints(stride, "as_strided",
                                                                    "stride"), storage_offset)


@tensor_method()
def unfold(self, dimension, size, step):
    """Sliding windows of ``size`` with ``step`` along ``dimension``, as a new last dim.

    >>> import fnx
    >>> fnx.tensor([1, 2, 3, 4, 5]).unfold(0, 2, 2).tolist()
    [[1, 2], [3, 4]]
    """
    return S.unfold(self, dimension, size, step)


def view_as_real(input):
    """A real view of a complex tensor with a last dim of size 2.

    >>> import fnx
    >>> fnx.view_as_real(fnx.tensor([1 + 2j])).tolist()
    [[1.0, 2.0]]
    """
    return S.view_as_real(input)


def view_as_complex(input):
    """A complex view of a float tensor whose last dim has size 2.

    >>> import fnx
    >>> fnx.view_as_complex(fnx.tensor([[1.0, 2.0]])).dtype
    fnx.complex64
    """
    return S.view_as_complex(input)


@tensor_method()
def detach(input):
    """A tensor sharing ``input``'s data and version counter, outside autograd.

    >>> import fnx
    >>> x = fnx.tensor([1.0], requires_grad=True)
    >>> x.detach().requires_grad
    False
    """
    return S.detach(input)


@tensor_method()
def detach_(self):
    """Detach ``self`` from autograd in place (it becomes a leaf).

    >>> import fnx
    >>> y = fnx.ones(1, requires_grad=True) * 2
    >>> y.detach_().requires_grad
    False
    """
    return S.detach_(self)


@tensor_method()
def storage_offset(self) -> int:
    """Offset of the first element in the underlying storage, in elements.

    >>> import fnx
    >>> fnx.tensor([1, 2, 3])[1:].storage_offset()
    1
    """
    arr = self._data
    if arr.__class__.__name__ != "ndarray":
        return 0
    return _offset(arr, self._dtype.itemsize)


def _split_sizes(tensor, split_size_or_sections, dim):
    if isinstance(split_size_or_sections, (list, tuple)):
        return tuple(S.split_with_sizes(tensor, ints(split_size_or_sections, "split",
                                                        "split_size"), dim))
    return tuple(S.split_Tensor(tensor, split_size_or_sections, dim))


@tensor_method()
def split(tensor, split_size_or_sections, dim=0):
    """Views of consecutive pieces of ``dim``: equal ``split_size`` pieces (the last may be
    smaller) or the listed sizes.

    >>> import fnx
    >>> [p.tolist() for p in fnx.split(fnx.tensor([1, 2, 3, 4, 5]), 2)]
    [[1, 2], [3, 4], [5]]
    >>> [p.tolist() for p in fnx.split(fnx.tensor([1, 2, 3]), [1, 2])]
    [[1], [2, 3]]
    """
    return _split_sizes(tensor, split_size_or_sections, dim)


@tensor_method()
def chunk(input, chunks, dim=0):
    """At most ``chunks`` views of equal size (the last may be smaller).

    >>> import fnx
    >>> [p.tolist() for p in fnx.chunk(fnx.tensor([1, 2, 3, 4, 5]), 3)]
    [[1, 2], [3, 4], [5]]
    """
    return tuple(S.chunk(input, chunks, dim))


@tensor_method()
def unbind(input, dim=0):
    """The views ``input.select(dim, i)`` for every ``i``.

    >>> import fnx
    >>> [p.tolist() for p in fnx.unbind(fnx.tensor([[1, 2], [3, 4]]), 1)]
    [[1, 3], [2, 4]]
    """
    return tuple(S.unbind_int(input, dim))


# --------------------------------------------------------------------------- copies

@tensor_method()
def contiguous(self, memory_format="contiguous_format"):
    """``self`` when already contiguous, else a contiguous copy.

    >>> import fnx
    >>> x = fnx.tensor([[1, 2], [3, 4]])
    >>> x.contiguous() is x, x.t().contiguous().is_contiguous()
    (True, True)
    """
    return S.contiguous(self, memory_format=memory_format)


@tensor_method()
def clone(input, *, memory_format=None):
    """A copy with its own memory (same strides when dense, unless ``memory_format``).

    >>> import fnx
    >>> x = fnx.tensor([1, 2])
    >>> y = fnx.clone(x); _ = y.add_(1)
    >>> x.tolist(), y.tolist()
    ([1, 2], [2, 3])
    """
    return S.clone(input, memory_format=memory_format)


def cat(tensors, dim=0):
    """Concatenate along ``dim`` with type promotion over the inputs; 1-D empty tensors are
    skipped (PyTorch's legacy rule).

    >>> import fnx
    >>> fnx.cat([fnx.tensor([[1, 2]]), fnx.tensor([[3.5, 4.5]])]).tolist()
    [[1.0, 2.0], [3.5, 4.5]]
    """
    return A.cat(_tensor_list(tensors, "cat"), dim)


def concat(tensors, dim=0):
    """Alias of ``cat``.

    >>> import fnx
    >>> fnx.concat([fnx.tensor([1]), fnx.tensor([2])]).tolist()
    [1, 2]
    """
    return A.cat(_tensor_list(tensors, "cat"), dim)


def concatenate(tensors, axis=0):
    """NumPy's name for ``cat``.

    >>> import fnx
    >>> fnx.concatenate([fnx.tensor([1]), fnx.tensor([2])], axis=0).tolist()
    [1, 2]
    """
    return A.cat(_tensor_list(tensors, "cat"), axis)


def stack(tensors, dim=0):
    """Join equal-shaped tensors along a new dim.

    >>> import fnx
    >>> fnx.stack([fnx.tensor([1, 2]), fnx.tensor([3, 4])], dim=1).tolist()
    [[1, 3], [2, 4]]
    """
    return A.stack(_tensor_list(tensors, "stack"), dim)


def hstack(tensors):
    """Concatenate column-wise (along dim 0 for 1-D tensors).

    >>> import fnx
    >>> fnx.hstack([fnx.tensor([1, 2]), fnx.tensor([3])]).tolist()
    [1, 2, 3]
    """
    return A.hstack(_tensor_list(tensors, "hstack"))


def vstack(tensors):
    """Concatenate row-wise, 1-D tensors taken as rows.

    >>> import fnx
    >>> fnx.vstack([fnx.tensor([1, 2]), fnx.tensor([3, 4])]).tolist()
    [[1, 2], [3, 4]]
    """
    return A.vstack(_tensor_list(tensors, "vstack"))


row_stack = vstack


def dstack(tensors):
    """Concatenate depth-wise (along dim 2 after ``atleast_3d``).

    >>> import fnx
    >>> fnx.dstack([fnx.tensor([1, 2]), fnx.tensor([3, 4])]).shape
    fnx.Size([1, 2, 2])
    """
    return A.dstack(_tensor_list(tensors, "dstack"))


def _atleast(op, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(op(x) for x in tensors[0])
    if len(tensors) == 1:
        return op(tensors[0])
    return tuple(op(x) for x in tensors)


def atleast_1d(*tensors):
    """Tensors with at least 1 dim (0-dim ones become shape [1]).

    >>> import fnx
    >>> fnx.atleast_1d(fnx.tensor(3)).shape
    fnx.Size([1])
    """
    return _atleast(A.atleast_1d, tensors)


def atleast_2d(*tensors):
    """Tensors with at least 2 dims (1-D ones become rows).

    >>> import fnx
    >>> fnx.atleast_2d(fnx.tensor([1, 2])).shape
    fnx.Size([1, 2])
    """
    return _atleast(A.atleast_2d, tensors)


def atleast_3d(*tensors):
    """Tensors with at least 3 dims.

    >>> import fnx
    >>> fnx.atleast_3d(fnx.tensor([1, 2])).shape
    fnx.Size([1, 2, 1])
    """
    return _atleast(A.atleast_3d, tensors)


def _dims_arg(dims, name):
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = dims[0]
    return ints(dims, name, "dims")


def flip(input, dims):
    """A copy with the order of elements reversed along ``dims``.

    >>> import fnx
    >>> fnx.flip(fnx.tensor([[1, 2], [3, 4]]), [1]).tolist()
    [[2, 1], [4, 3]]
    """
    return A.flip(input, ints(dims, "flip", "dims"))


@tensor_method("flip")
def _flip_method(self, *dims):
    """``fnx.flip(self, dims)``; the dims may also come as separate ints.

    >>> import fnx
    >>> fnx.tensor([[1, 2], [3, 4]]).flip(0, 1).tolist()
    [[4, 3], [2, 1]]
    """
    return A.flip(self, _dims_arg(dims, "flip"))


@tensor_method()
def fliplr(input):
    """Flip dim 1 (left/right).

    >>> import fnx
    >>> fnx.fliplr(fnx.tensor([[1, 2]])).tolist()
    [[2, 1]]
    """
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return A.flip(input, [1])


@tensor_method()
def flipud(input):
    """Flip dim 0 (up/down).

    >>> import fnx
    >>> fnx.flipud(fnx.tensor([1, 2])).tolist()
    [2, 1]
    """
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return A.flip(input, [0])


@tensor_method()
def roll(input, shifts, dims=None):
    """Rotate elements by ``shifts`` along ``dims`` (over the flattened tensor if None).

    >>> import fnx
    >>> fnx.roll(fnx.tensor([1, 2, 3, 4]), 1).tolist()
    [4, 1, 2, 3]
    """
    return A.roll(input, ints(shifts, "roll", "shifts"),
                  () if dims is None else ints(dims, "roll", "dims"))


@tensor_method()
def repeat(self, *repeats):
    """Tile the data ``repeats`` times along each dim (new leading dims allowed).

    >>> import fnx
    >>> fnx.tensor([1, 2]).repeat(2, 2).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    return A.repeat(self, _sizes(repeats, "repeat", "repeats"))


def tile(input, dims):
    """``repeat`` where missing leading ``dims`` count as 1.

    >>> import fnx
    >>> fnx.tile(fnx.tensor([[1, 2]]), (2,)).tolist()
    [[1, 2, 1, 2]]
    """
    return A.tile(input, ints(dims, "tile", "dims"))


@tensor_method("tile")
def _tile_method(self, *dims):
    """``fnx.tile(self, dims)``; the dims may also come as separate ints.

    >>> import fnx
    >>> fnx.tensor([1, 2]).tile(2).tolist()
    [1, 2, 1, 2]
    """
    return A.tile(self, _sizes(dims, "tile", "dims"))


@tensor_method()
def tril(input, diagonal=0):
    """The lower triangle of the last two dims, zeros above ``diagonal``.

    >>> import fnx
    >>> fnx.tril(fnx.tensor([[1, 2], [3, 4]])).tolist()
    [[1, 0], [3, 4]]
    """
    return A.tril(input, diagonal)


@tensor_method()
def triu(input, diagonal=0):
    """The upper triangle of the last two dims, zeros below ``diagonal``.

    >>> import fnx
    >>> fnx.triu(fnx.tensor([[1, 2], [3, 4]])).tolist()
    [[1, 2], [0, 4]]
    """
    return A.triu(input, diagonal)


@tensor_method()
def tril_(self, diagonal=0):
    """``tril`` in place.

    >>> import fnx
    >>> fnx.tensor([[1, 2], [3, 4]]).tril_().tolist()
    [[1, 0], [3, 4]]
    """
    return A.tril_(self, diagonal)


@tensor_method()
def triu_(self, diagonal=0):
    """``triu`` in place.

    >>> import fnx
    >>> fnx.tensor([[1, 2], [3, 4]]).triu_(1).tolist()
    [[0, 2], [0, 0]]
    """
    return A.triu_(self, diagonal)


def constant_pad_nd(input, pad, value=0):
    """Pad the last dims by ``pad`` = (last_lo, last_hi, prev_lo, ...) with ``value``;
    negative pads crop.

    >>> import fnx
    >>> fnx.constant_pad_nd(fnx.tensor([1, 2]), (1, 2), 9).tolist()
    [9, 1, 2, 9, 9]
    """
    return A.constant_pad_nd(input, ints(pad, "constant_pad_nd", "pad"), value)


@tensor_method()
def fill_(self, value):
    """Fill with ``value`` (a number or a 0-dim tensor) in place.

    >>> import fnx
    >>> fnx.tensor([1, 2]).fill_(7).tolist()
    [7, 7]
    """
    if isinstance(value, Tensor):
        return A.fill__Tensor(self, value)
    return A.fill__Scalar(self, value)


@tensor_method()
def zero_(self):
    """Fill with zeros in place.

    >>> import fnx
    >>> fnx.tensor([1.5, 2.0]).zero_().tolist()
    [0.0, 0.0]
    """
    return A.zero_(self)


@tensor_method()
def select_scatter(input, src, dim, index):
    """A copy of ``input`` with ``input.select(dim, index)`` replaced by ``src``.

    >>> import fnx
    >>> fnx.select_scatter(fnx.tensor([[0, 0], [0, 0]]), fnx.tensor([1, 2]), 0, 1).tolist()
    [[0, 0], [1, 2]]
    """
    return S.select_scatter(input, src, dim, index)


@tensor_method()
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` with the slice ``start:end:step`` of ``dim`` replaced by ``src``.

    >>> import fnx
    >>> fnx.slice_scatter(fnx.tensor([0, 0, 0, 0]), fnx.tensor([1, 2]), 0, 0, None, 2).tolist()
    [1, 0, 2, 0]
    """
    return S.slice_scatter(input, src, dim, start, end, step)


@tensor_method()
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` with its diagonal replaced by ``src``.

    >>> import fnx
    >>> fnx.diagonal_scatter(fnx.tensor([[0, 0], [0, 0]]), fnx.tensor([1, 2])).tolist()
    [[1, 0], [0, 2]]
    """
    return S.diagonal_scatter(input, src, offset, dim1, dim2)
