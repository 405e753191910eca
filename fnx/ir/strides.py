"""Stride and geometry arithmetic of the shape and view ops, with PyTorch's rules and
error messages: the shapes, strides and offsets a view gets, and the checks of the
arguments.  Plain functions shared by meta functions, decompositions, kernels (CPU, CUDA)
and functionalization, below the op families.
"""
from __future__ import annotations

import operator

from ..core.memory_format import (channels_last_rank, channels_last_strides,  # noqa: F401
                                  contiguous_strides, format_name as memory_format_name)
from .dims import infer_size, wrap_dim, wrap_dims
import math


def ints(values, op="op", arg="size") -> tuple:
    """A tuple of Python ints from ints, 0-dim integer tensors, NumPy ints or a Size."""
    if isinstance(values, int) or is_symbolic_size(values):
        return (values,)
    try:
        return tuple(v if v.__class__ is int else size_index(v) for v in values)
    except TypeError:
        if not hasattr(values, "__iter__"):
            raise TypeError(f"{op}(): argument '{arg}' must be tuple of ints, not "
                            f"{type(values).__name__}") from None
        for i, v in enumerate(values):
            if not hasattr(v, "__index__") or getattr(v, "is_floating_point", lambda: 0)():
                raise TypeError(f"{op}(): argument '{arg}' must be tuple of ints, but found "
                                f"element of type {type(v).__name__} at pos {i}") from None
        raise


def shape_str(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"






def view_strides(shape, stride, new_shape):
    """Strides that let ``new_shape`` view a tensor of ``shape``/``stride``, or None.

    PyTorch's ``computeStride``: the old dims split into chunks that are contiguous with
    each other; every chunk must be covered exactly by a run of new dims.
    """
    if not shape:
        return (1,) * len(new_shape)
    n = math.prod(shape)
    if n == 0:
        return tuple(stride) if tuple(shape) == tuple(new_shape) else \
            contiguous_strides(new_shape)
    out = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    base = stride[-1]            # stride of the innermost dim of the current chunk
    chunk_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        chunk_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and stride[d - 1] != chunk_numel * base):
            # dim d starts a chunk: consume new dims until they cover it
            while view_d >= 0 and (view_numel < chunk_numel or new_shape[view_d] == 1):
                out[view_d] = view_numel * base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != chunk_numel:
                return None
            if d > 0:
                base = stride[d - 1]
                chunk_numel = view_numel = 1
    return tuple(out) if view_d == -1 else None


VIEW_ERROR = ("view size is not compatible with input tensor's size and stride (at least one "
              "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")


def view_geometry(self, size):
    """(shape, strides) of ``self.view(size)``; PyTorch's errors."""
    shape = infer_size(ints(size, "view"), self.numel())
    strides = view_strides(tuple(self.shape), self.stride(), shape)
    if strides is None:
        raise RuntimeError(VIEW_ERROR)
    return shape, strides


def check_permutation(ndim, dims) -> tuple:
    dims = ints(dims, "permute", "dims")
    if len(dims) != ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {ndim} is not equal to len(dims) = {len(dims)}")
    out = tuple(wrap_dim(d, ndim) for d in dims)
    if len(set(out)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return out


def expand_geometry(shape, stride, sizes, dtype=None):
    """(shape, strides) of ``expand(sizes)``: PyTorch's ``inferExpandGeometry``."""
    sizes = ints(sizes, "expand")
    n, ndim = len(shape), len(sizes)
    if ndim < n:
        name = dtype.tensor_type() if dtype else "Tensor"
        raise RuntimeError(f"expand({name}{{{shape_str(shape)}}}, size={shape_str(sizes)}): "
                           f"the number of sizes provided ({ndim}) "
                           f"must be greater or equal to the number of dimensions in the tensor "
                           f"({n})")
    out_shape, out_stride = [0] * ndim, [0] * ndim
    for i in range(ndim - 1, -1, -1):
        d = i - (ndim - n)
        size = shape[d] if d >= 0 else 1
        st = stride[d] if d >= 0 else (out_shape[i + 1] * out_stride[i + 1]
                                       if i < ndim - 1 else 1)
        target = sizes[i]
        if target == -1:
            if d < 0:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            target = size
        if size != target:
            if size != 1:
                raise RuntimeError(f"The expanded size of the tensor ({target}) must match the "
                                   f"existing size ({size}) at non-singleton dimension {i}.  "
                                   f"Target sizes: {shape_str(sizes)}.  Tensor sizes: "
                                   f"{shape_str(shape)}")
            if target < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {target}: "
                                   f"{shape_str(sizes)}")
            st = 0
        out_shape[i], out_stride[i] = target, st
    return tuple(out_shape), tuple(out_stride)


def squeeze_dims(shape, dims) -> tuple:
    """The dims of ``dims`` (wrapped) that have size 1 and so are removed."""
    return tuple(d for d in wrap_dims(ints(dims, "squeeze", "dim"), len(shape))
                 if len(shape) and shape[d] == 1)


def unsqueeze_geometry(shape, stride, dim):
    d = wrap_dim(dim, len(shape) + 1)
    new_stride = stride[d] * shape[d] if d < len(shape) else 1
    return (tuple(shape[:d]) + (1,) + tuple(shape[d:]),
            tuple(stride[:d]) + (new_stride,) + tuple(stride[d:]), d)


def check_select(shape, dim, index):
    """(wrapped dim, wrapped index) of ``select``; PyTorch's IndexErrors."""
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, len(shape))
    index = operator.index(index)
    size = shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{shape_str(shape)} at dimension {d}")
    return d, index + size if index < 0 else index


def is_symbolic_size(v) -> bool:
    """Whether ``v`` is a symbolic size or int (``fnx.graph.symint.SymInt``, while
    tracing): kept as it is, its decisions guarded."""
    return getattr(v.__class__, "symbolic_size", False)


def size_index(v):
    """An int argument; a symbolic size (``fnx.graph.symint``) stays one (its decisions
    below are guarded)."""
    return v if is_symbolic_size(v) else operator.index(v)


def slice_bounds(size, start, end, step):
    """(start, end, length) after PyTorch's clamping of ``slice(start, end, step)``."""
    step = operator.index(step)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    start = 0 if start is None else size_index(start)
    end = size if end is None else size_index(end)
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = 0 if start < 0 else (size if start > size else start)
    end = start if end < start else (size if end > size else end)
    return start, end, (end - start + step - 1) // step


def check_slice(shape, dim):
    if not shape:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    return wrap_dim(dim, len(shape))


def diagonal_geometry(shape, stride, offset, dim1, dim2):
    """(shape, strides, element offset) of ``diagonal(offset, dim1, dim2)``."""
    n = len(shape)
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    if offset >= 0:
        length = max(min(shape[d1], shape[d2] - offset), 0)
        start = offset * stride[d2]
    else:
        length = max(min(shape[d1] + offset, shape[d2]), 0)
        start = -offset * stride[d1]
    if length == 0:
        start = 0
    rest = [i for i in range(n) if i != d1 and i != d2]
    return (tuple(shape[i] for i in rest) + (length,),
            tuple(stride[i] for i in rest) + (stride[d1] + stride[d2],), start)


def diagonal_block(shape, offset, dim1, dim2):
    """Where the diagonal lies: (permutation putting dim1, dim2 last, first row, first
    column, length) of the square block whose main diagonal it is."""
    n = len(shape)
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if offset >= 0:
        row, col, length = 0, offset, max(min(shape[d1], shape[d2] - offset), 0)
    else:
        row, col, length = -offset, 0, max(min(shape[d1] + offset, shape[d2]), 0)
    if length == 0:
        row = col = 0
    return [i for i in range(n) if i not in (d1, d2)] + [d1, d2], row, col, length


def check_split_sizes(shape, split_sizes, dim):
    if not shape:
        raise RuntimeError("split_with_sizes expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, len(shape))
    sizes = ints(split_sizes, "split_with_sizes", "split_sizes")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                           f"entries, but got split_sizes={shape_str(sizes)}")
    if sum(sizes) != shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {shape[d]} "
                           f"(input tensor's size at dimension {d}), but got "
                           f"split_sizes={shape_str(sizes)}")
    return d, sizes


def unfold_geometry(shape, stride, dimension, size, step):
    n = len(shape)
    d = wrap_dim(dimension, n)
    dim_size = shape[d] if n else 1
    dim_stride = stride[d] if n else 1
    if size > dim_size:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {dim_size} but size "
                           f"is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    count = (dim_size - size) // step + 1
    if not n:
        return (size,), (1,)
    new_shape = tuple(shape[:d]) + (count,) + tuple(shape[d + 1:]) + (size,)
    new_stride = tuple(stride[:d]) + (step * dim_stride,) + tuple(stride[d + 1:]) + \
        (dim_stride,)
    return new_shape, new_stride


def check_as_strided(size, stride, storage_offset):
    size, stride = ints(size, "as_strided"), ints(stride, "as_strided", "stride")
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {shape_str(stride)}")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(size)}: {shape_str(size)}")
    if storage_offset is not None and storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    return size, stride


def cat_geometry(tensors, dim):
    """(result shape, wrapped dim, indices of tensors that take part) of ``cat``."""
    if len(tensors) == 0:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    for i, x in enumerate(tensors):
        if x.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               f"concatenated")
    # legacy: 1-D empty tensors are skipped whatever the other shapes
    used = [i for i, x in enumerate(tensors) if not (x.ndim == 1 and x.shape[0] == 0)]
    if not used:
        return (0,), 0, used
    ref = tuple(tensors[used[0]].shape)
    d = wrap_dim(dim, len(ref))
    total = 0
    for i in used:
        s = tuple(tensors[i].shape)
        if len(s) != len(ref):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(ref)} "
                               f"and {len(s)}")
        for j in range(len(ref)):
            if j != d and s[j] != ref[j]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref[j]} but got size {s[j]} for tensor "
                                   f"number {i} in the list.")
        total += s[d]
    return ref[:d] + (total,) + ref[d + 1:], d, used


def repeat_shape(shape, repeats):
    repeats = ints(repeats, "repeat", "repeats")
    if len(repeats) < len(shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    padded = (1,) * (len(repeats) - len(shape)) + tuple(shape)
    out = tuple(p * r for p, r in zip(padded, repeats))
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(out)}: {shape_str(out)}")
    return out, repeats


def pad_geometry(shape, pad):
    """[(input start, input end, output start)] per dim and the output shape."""
    pad = ints(pad, "constant_pad_nd", "pad")
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > len(shape):
        raise RuntimeError(f"Length of pad should be no more than twice the number of "
                           f"dimensions of the input. Pad length is {len(pad)} while the input "
                           f"has {len(shape)} dimensions.")
    out, regions = list(shape), [(0, s, 0) for s in shape]
    for i in range(len(pad) // 2):
        d = len(shape) - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = shape[d] + lo + hi
        if size < 0:
            raise RuntimeError(f"The input size {shape[d]}, plus negative padding {lo} and "
                               f"{hi} resulted in a negative output size, which is invalid. "
                               f"Check dimension {d} of your input.")
        out[d] = size
        in_start, in_end = max(-lo, 0), shape[d] - max(-hi, 0)
        regions[d] = (in_start, max(in_end, in_start), max(lo, 0))
    return tuple(out), regions


# ----------------------------------------------------------------------------- view strides
# Data with no strides of its own (a functional backend's arrays, a trace's meta tensors)
# still reports the strides each view has in PyTorch, so is_contiguous(), contiguous(),
# reshape() (view or copy) and view()'s errors behave as on CPU, eager and traced.
# ``VIEW_STRIDES[op qualname](self, bound arguments)``: the view's strides (a list for
# ops returning several views), raising the op's errors first.

def _g_view(self, a):
    return view_geometry(self, a["size"])[1]


def _g_permute(self, a):
    st = self.stride()
    return tuple(st[d] for d in check_permutation(self.ndim, a["dims"]))


def _g_expand(self, a):
    return expand_geometry(tuple(self.shape), self.stride(), a["size"], self._dtype)[1]


def _g_squeeze(self, a):
    dims = squeeze_dims(tuple(self.shape), a["dim"])
    return tuple(s for i, s in enumerate(self.stride()) if i not in dims)


def _g_unsqueeze(self, a):
    return unsqueeze_geometry(tuple(self.shape), self.stride(), a["dim"])[1]


def _g_select(self, a):
    d, _ = check_select(tuple(self.shape), a["dim"], a["index"])
    return tuple(s for i, s in enumerate(self.stride()) if i != d)


def _g_slice(self, a):
    d = check_slice(tuple(self.shape), a["dim"])
    st = list(self.stride())
    st[d] *= a["step"]
    return tuple(st)


def _g_diagonal(self, a):
    return diagonal_geometry(tuple(self.shape), self.stride(), a["offset"], a["dim1"],
                             a["dim2"])[1]


def _g_as_strided(self, a):
    return tuple(int(s) for s in a["stride"])


def _g_same(self, a):
    return tuple(self.stride())


def _g_split(self, a):
    _, sizes = check_split_sizes(tuple(self.shape), a["split_sizes"], a["dim"])
    return [tuple(self.stride())] * len(sizes)


def _g_unfold(self, a):
    return unfold_geometry(tuple(self.shape), self.stride(), a["dimension"], a["size"],
                           a["step"])[1]


def _g_view_as_real(self, a):
    return tuple(s * 2 for s in self.stride()) + (1,)


def _g_view_as_complex(self, a):
    if self.numel() == 0:
        return None
    return tuple(s // 2 for s in self.stride()[:-1])


VIEW_STRIDES = {
    "aten::view": _g_view, "aten::permute": _g_permute, "aten::expand": _g_expand,
    "aten::squeeze.dim": _g_squeeze, "aten::squeeze.dims": _g_squeeze,
    "aten::unsqueeze": _g_unsqueeze, "aten::select.int": _g_select,
    "aten::slice.Tensor": _g_slice, "aten::diagonal": _g_diagonal,
    "aten::as_strided": _g_as_strided, "aten::alias": _g_same, "aten::detach": _g_same,
    "aten::split_with_sizes": _g_split, "aten::unfold": _g_unfold,
    "aten::view_as_real": _g_view_as_real, "aten::view_as_complex": _g_view_as_complex,
}


# ----------------------------------------------------------------------------- overlap

OVERLAP_ERROR = ("unsupported operation: more than one element of the written-to tensor "
                 "refers to a single memory location. Please clone() the tensor before "
                 "performing the operation.")

# ops PyTorch lets write an expanded tensor (every element gets the same value, or the
# write is only deprecated there)
OVERLAP_ALLOWED = frozenset({"fill_", "zero_", "index_put_", "masked_fill_"})


def check_no_internal_overlap(name: str, t) -> None:
    """PyTorch's refusal to write a tensor whose elements share memory: an expanded view
    (stride 0 over a dim of size > 1), for every op but ``OVERLAP_ALLOWED``'s.

    >>> import fnx
    >>> check_no_internal_overlap("add_", fnx.zeros(1, 3).expand(3, 3))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    RuntimeError: unsupported operation: more than one element of the written-to tensor ...
    """
    if name in OVERLAP_ALLOWED or 0 in t.shape:      # an empty tensor overlaps nothing
        return
    if any(s == 0 and n > 1 for s, n in zip(t.stride(), t.shape)):
        raise RuntimeError(OVERLAP_ERROR)
