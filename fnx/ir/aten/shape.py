"""Shape and view operators: view, permute, expand, select, slice, cat, flip, pad, fill, ...

View ops (schema ``-> Tensor(a)``) return an alias of their input; on backends with
strides (CPU) the kernel returns a real strided view, and the ADInplaceOrView key
marks ``_base`` and shares the version counter.  The stride arithmetic PyTorch uses
(``computeStride`` for ``view``, ``inferExpandGeometry``, diagonal, unsqueeze, slice)
lives here, once, as plain functions shared by meta functions and kernels.

Convenience ops (transpose, narrow, flatten, stack, roll, ...) are decompositions onto
the core ones, run as their CompositeImplicitAutograd kernel (the ops they call do the
view bookkeeping; see fnx/keys/inplace_or_view.py).
"""
from __future__ import annotations

import math
import operator

import ml_dtypes
import numpy as np

from ...core import dtype as D
from ...core.dispatch_key import AUTOGRAD_BITS, AliasKey, DispatchKey, below
from ...dispatch.dispatcher import FALLTHROUGH
from ...ops import aten, prims
from .. import refs
from ..grad_utils import zeros
from ..registry import TensorMeta, decomposition, defop, derivative, nondifferentiable
from ..shapes import broadcast_shapes, infer_size, wrap_dim, wrap_dims

CORE = ("core",)
CORE_VIEW = ("core", "view")
VIEW = ("view",)
INPLACE = ("inplace",)


# --------------------------------------------------------------------------- helpers

def ints(values, op="op", arg="size") -> tuple:
    """A tuple of Python ints from ints, 0-dim integer tensors, NumPy ints or a Size."""
    if isinstance(values, int):
        return (values,)
    try:
        return tuple(v if v.__class__ is int else operator.index(v) for v in values)
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


def contiguous_strides(shape) -> tuple:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def view_strides(shape, stride, new_shape):
    """Strides that let ``new_shape`` view a tensor of ``shape``/``stride``, or None.

    PyTorch's ``computeStride``: the old dims split into chunks that are contiguous with
    each other; every chunk must be covered exactly by a run of new dims.
    """
    if not shape:
        return (1,) * len(new_shape)
    n = numel(shape)
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


def slice_bounds(size, start, end, step):
    """(start, end, length) after PyTorch's clamping of ``slice(start, end, step)``."""
    step = operator.index(step)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    start = 0 if start is None else operator.index(start)
    end = size if end is None else operator.index(end)
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


def memory_format_name(mf) -> str:
    """``contiguous_format`` / ``preserve_format`` / ``channels_last`` from a string or an
    object whose repr ends with that name."""
    if mf is None:
        return "preserve_format"
    s = mf if isinstance(mf, str) else repr(mf)
    return s.rsplit(".", 1)[-1]


def channels_last_strides(shape) -> tuple:
    if len(shape) != 4:
        raise RuntimeError("required rank 4 tensor to use channels_last format")
    n, c, h, w = shape
    sc = 1
    sw = max(c, 1)
    sh = sw * max(w, 1)
    sn = sh * max(h, 1)
    return (sn, sc, sh, sw)


def is_contiguous_as(x, mf: str) -> bool:
    shape = tuple(x.shape)
    if mf == "channels_last":
        if len(shape) != 4:
            return False
        expected = channels_last_strides(shape)
    else:
        expected = contiguous_strides(shape)
    return all(sz <= 1 or st == ex for sz, st, ex in zip(shape, x.stride(), expected))


_C_TYPES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64":
            "int64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
            "float64": "double", "bool": "bool"}


def checked_scalar(value, dtype):
    """``value`` converted to a Python number of ``dtype``'s kind, with PyTorch's overflow
    error (``fill_(300)`` on uint8 raises instead of wrapping)."""
    if hasattr(value, "_ks") or isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or dtype is D.bool:
        return bool(value) if not isinstance(value, complex) else value != 0
    if dtype.is_complex:
        return complex(value)
    if isinstance(value, complex):
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {_C_TYPES[dtype.name]} "
                               f"without overflow")
        value = value.real
    if dtype.is_floating_point:
        v = float(value)
        fmax = float(ml_dtypes.finfo(dtype.numpy).max)      # np.finfo rejects bfloat16
        if math.isfinite(v) and abs(v) > fmax:
            raise RuntimeError(f"value cannot be converted to type {_C_TYPES[dtype.name]} "
                               f"without overflow")
        return v
    # integer dtypes: floats truncate, out-of-range values (and inf/nan) raise
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RuntimeError(f"value cannot be converted to type {_C_TYPES[dtype.name]} "
                               f"without overflow")
        value = int(value)
    value = operator.index(value)
    info = np.iinfo(dtype.numpy)
    if not info.min <= value <= info.max:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPES[dtype.name]} without "
                           f"overflow")
    return value


def _shape(x) -> tuple:
    return tuple(x.shape)


def _composite(schema, fn, tags=()):
    """A non-core op defined by its decomposition (see the module docstring)."""
    return defop(schema, tags=tags, decomposition=fn)


# --------------------------------------------------------------------------- prim helpers
# Core ops (and non-core ops with a direct kernel) decompose to prims with the helpers
# below.  Prims are functional: a decomposed view op returns a new tensor, and aliasing
# is restored by functionalization when compiling.  Every decomposition validates its
# arguments with the op's own checks first, so it raises what the eager op raises.

def _copy(x):
    """A new tensor equal to ``x``: the identity conversion (every prim result is fresh)."""
    return prims.convert_element_type(x, x.dtype)


def _zero(dtype):
    """The zero of ``dtype`` as a Python scalar prims accept (prims do not cast 0 to bool)."""
    return False if dtype is D.bool else 0


def _slice_dim(x, dim, start, end, step=1):
    """``x[..., start:end:step, ...]`` along the normalized ``dim``."""
    starts, limits, steps = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[dim], limits[dim], steps[dim] = start, end, step
    return prims.slice(x, starts, limits, steps)


def _view_decomposition(op):
    """Decorator: record the decomposition of a non-core view op that has its own kernels,
    without making it the op's CompositeImplicitAutograd kernel: an op with one gets no
    ADInplaceOrView kernel (fnx/keys/inplace_or_view.py), so its eager views would lose
    their ``_base`` and shared version counter."""
    def deco(fn):
        op.decomposition = fn
        return fn
    return deco


def _transpose_to(x, perm):
    """prims.transpose, skipped when ``perm`` is the identity (for intermediates only)."""
    perm = list(perm)
    return x if perm == list(range(x.ndim)) else prims.transpose(x, perm)


def _reshape_to(x, shape):
    """prims.reshape, skipped when the shape is unchanged (for intermediates only)."""
    shape = list(shape)
    return x if shape == list(x.shape) else prims.reshape(x, shape)


def _inverse(perm) -> list:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


# --------------------------------------------------------------------------- view ops

def _view_meta(self, size):
    return TensorMeta(view_geometry(self, size)[0], self.dtype)


view = defop("view(Tensor(a) self, SymInt[] size) -> Tensor(a)", tags=CORE_VIEW,
             meta=_view_meta)


@decomposition(view)
def _view_decomp(self, size):
    # view_geometry also raises where eager would (strides that cannot be viewed)
    return prims.reshape(self, list(view_geometry(self, size)[0]))


def _unsafe_view_meta(self, size):
    return TensorMeta(infer_size(ints(size, "_unsafe_view"), self.numel()), self.dtype)


# The copy half of ``reshape``: a view of a fresh contiguous tensor, not marked as a view.
_unsafe_view = defop("_unsafe_view(Tensor self, SymInt[] size) -> Tensor",
                     meta=_unsafe_view_meta)


@decomposition(_unsafe_view)
def _unsafe_view_decomp(self, size):
    return prims.reshape(self, list(_unsafe_view_meta(self, size).shape))


# Derivatives of view ops are required (not only faster): without one, autograd would run
# the op's decomposition, whose result is a copy, not a view.

@derivative(view, _unsafe_view)
def _view_backward(grad, self_shape):
    return aten.reshape.default(grad, list(self_shape))


permute = defop("permute(Tensor(a) self, int[] dims) -> Tensor(a)", tags=CORE_VIEW,
                meta=lambda self, dims: TensorMeta(
                    tuple(self.shape[d] for d in check_permutation(self.ndim, dims)),
                    self.dtype))


@decomposition(permute)
def _permute_decomp(self, dims):
    return prims.transpose(self, list(check_permutation(self.ndim, dims)))


@derivative(permute)
def _permute_backward(grad, dims):
    return aten.permute.default(grad, _inverse(check_permutation(grad.ndim, dims)))


def _expand_meta(self, size, *, implicit=False):
    return TensorMeta(expand_geometry(_shape(self), self.stride(), size, self.dtype)[0],
                      self.dtype)


expand = defop("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
               tags=CORE_VIEW, meta=_expand_meta)


@decomposition(expand)
def _expand_decomp(self, size, *, implicit=False):
    shape = _expand_meta(self, size).shape
    # new dims are leading; existing dims keep their order (size 1 broadcasts)
    lead = len(shape) - self.ndim
    return prims.broadcast_in_dim(self, list(shape), list(range(lead, len(shape))))


@derivative(expand)
def _expand_backward(grad):
    return grad         # autograd sums the broadcast dims back to self's shape


def _squeeze_dims_meta(self, dim):
    shape = _shape(self)
    drop = squeeze_dims(shape, dim)
    return TensorMeta(tuple(s for i, s in enumerate(shape) if i not in drop), self.dtype)


squeeze_dim = defop("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", tags=CORE_VIEW,
                    meta=lambda self, dim: _squeeze_dims_meta(self, (dim,)))
squeeze_dims_op = defop("squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)",
                        tags=CORE_VIEW, meta=_squeeze_dims_meta)
unsqueeze = defop("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", tags=CORE_VIEW,
                  meta=lambda self, dim: TensorMeta(
                      unsqueeze_geometry(_shape(self), self.stride(), dim)[0], self.dtype))


@decomposition(squeeze_dim)
def _squeeze_dim_decomp(self, dim):
    return prims.squeeze(self, sorted(squeeze_dims(_shape(self), (dim,))))


@decomposition(squeeze_dims_op)
def _squeeze_dims_decomp(self, dim):
    # dims whose size is not 1 are silently kept, as in PyTorch
    return prims.squeeze(self, sorted(squeeze_dims(_shape(self), dim)))


@decomposition(unsqueeze)
def _unsqueeze_decomp(self, dim):
    shape, _, d = unsqueeze_geometry(_shape(self), self.stride(), dim)
    return prims.broadcast_in_dim(self, list(shape), [i for i in range(len(shape)) if i != d])


def _unsqueeze_at(grad, shape, dims):
    """``grad`` with the size-1 ``dims`` of ``shape`` that a squeeze removed put back."""
    for d in sorted(squeeze_dims(tuple(shape), dims)):
        grad = aten.unsqueeze.default(grad, d)
    return grad


@derivative(squeeze_dim)
def _squeeze_dim_backward(grad, self_shape, dim):
    return _unsqueeze_at(grad, self_shape, (dim,))


@derivative(squeeze_dims_op)
def _squeeze_dims_backward(grad, self_shape, dim):
    return _unsqueeze_at(grad, self_shape, dim)


@derivative(unsqueeze)
def _unsqueeze_backward(grad, dim):
    return aten.squeeze.dim(grad, wrap_dim(dim, grad.ndim))


def _select_meta(self, dim, index):
    shape = _shape(self)
    d, _ = check_select(shape, dim, index)
    return TensorMeta(shape[:d] + shape[d + 1:], self.dtype)


select_int = defop("select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
                   tags=CORE_VIEW, meta=_select_meta)


@decomposition(select_int)
def _select_decomp(self, dim, index):
    d, i = check_select(_shape(self), dim, index)      # negative index wraps
    return prims.squeeze(_slice_dim(self, d, i, i + 1), [d])


@derivative(select_int)
def _select_backward(grad, self_shape, dim, index):
    return select_scatter(zeros(self_shape, grad), grad, dim, index)


def _slice_meta(self, dim=0, start=None, end=None, step=1):
    shape = _shape(self)
    d = check_slice(shape, dim)
    length = slice_bounds(shape[d], start, end, step)[2]
    return TensorMeta(shape[:d] + (length,) + shape[d + 1:], self.dtype)


slice_Tensor = defop("slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, "
                     "SymInt? end=None, SymInt step=1) -> Tensor(a)", tags=CORE_VIEW,
                     meta=_slice_meta)


@decomposition(slice_Tensor)
def _slice_decomp(self, dim=0, start=None, end=None, step=1):
    d = check_slice(_shape(self), dim)
    # PyTorch clamps out-of-range bounds (negative ones wrap first) instead of raising
    lo, hi, _ = slice_bounds(self.shape[d], start, end, step)
    return _slice_dim(self, d, lo, hi, operator.index(step))


@derivative(slice_Tensor)
def _slice_backward(grad, self_shape, dim, start, end, step):
    return slice_scatter(zeros(self_shape, grad), grad, dim, start, end, step)


def _diagonal_meta(self, offset=0, dim1=0, dim2=1):
    return TensorMeta(diagonal_geometry(_shape(self), self.stride(), offset, dim1, dim2)[0],
                      self.dtype)


diagonal = defop("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
                 tags=CORE_VIEW, meta=_diagonal_meta)


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


@decomposition(diagonal)
def _diagonal_decomp(self, offset=0, dim1=0, dim2=1):
    shape = _diagonal_meta(self, offset, dim1, dim2).shape
    perm, row, col, length = diagonal_block(_shape(self), offset, dim1, dim2)
    n = self.ndim
    x = _transpose_to(self, perm)
    x = _slice_dim(_slice_dim(x, n - 2, row, row + length), n - 1, col, col + length)
    # The main diagonal of an L x L block is every (L + 1)-th element of its flattening.
    x = prims.reshape(x, list(shape[:-1]) + [length * length])
    return _slice_dim(x, n - 2, 0, length * length, length + 1)


@derivative(diagonal)
def _diagonal_backward(grad, self_shape, offset, dim1, dim2):
    return diagonal_scatter(zeros(self_shape, grad), grad, offset, dim1, dim2)


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


as_strided = defop("as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, "
                   "SymInt? storage_offset=None) -> Tensor(a)", tags=CORE_VIEW,
                   meta=lambda self, size, stride, storage_offset=None: TensorMeta(
                       check_as_strided(size, stride, storage_offset)[0], self.dtype))


@decomposition(as_strided)
def _as_strided_decomp(self, size, stride, storage_offset=None):
    """A gather from ``self`` flattened, at ``offset + sum(i_k * stride_k)``.

    ``self``'s elements in row-major order stand for the storage: exact for a contiguous
    tensor that starts its storage (the base functionalization replays views from).
    An index past the end raises, as eager as_strided does for a too small storage.
    """
    size, stride = check_as_strided(size, stride, storage_offset)
    dev = self.device
    index = prims.full(list(size), storage_offset or 0, dtype=D.int64, device=dev)
    for k, (n, st) in enumerate(zip(size, stride)):
        if n > 1 and st:
            step = prims.mul(prims.iota(list(size), k, dtype=D.int64, device=dev),
                             prims.full(list(size), st, dtype=D.int64, device=dev))
            index = prims.add(index, step)
    flat = prims.reshape(self, [self.numel()])
    out = prims.gather(flat, 0, prims.reshape(index, [numel(size)]))
    return prims.reshape(out, list(size))

def _storage_index(size, stride, offset, like):
    """The storage position of each element of a ``size``/``stride`` view, flattened."""
    idx = aten.full.default(list(size), offset, dtype=D.int64, device=like.device)
    for k, (n, st) in enumerate(zip(size, stride)):
        if n > 1 and st:
            shape = [1] * len(size)
            shape[k] = n
            step = aten.arange.default(n, dtype=D.int64, device=like.device)
            idx = aten.add.Tensor(idx, aten.reshape.default(aten.mul.Scalar(step, st), shape))
    return aten.reshape.default(idx, [numel(size)])


def _last_position(size, stride, offset):
    return offset + sum((n - 1) * st for n, st in zip(size, stride))


def _may_overlap(size, stride) -> bool:
    """True unless the geometry provably gives each element its own storage position."""
    dims = sorted((st, n) for n, st in zip(size, stride) if n > 1)
    extent = 0
    for st, n in dims:
        if st <= extent:
            return True
        extent += (n - 1) * st
    return False


@derivative(as_strided)
def _as_strided_backward(grad, self, size, stride, storage_offset):
    """Through the storage: the output's gradient is added up at the storage positions it
    reads, and each input element takes the value at its own position (split evenly
    where input elements share a position)."""
    size, stride = check_as_strided(size, stride, storage_offset)
    in_size, in_stride = tuple(self.shape), tuple(self.stride())
    in_off = self.storage_offset() if hasattr(self, "storage_offset") else 0
    out_off = in_off if storage_offset is None else storage_offset
    if numel(in_size) == 0 or numel(size) == 0:
        return zeros(in_size, grad)
    n = 1 + max(_last_position(in_size, in_stride, in_off),
                _last_position(size, stride, out_off))
    store = aten.scatter_add.default(zeros([n], grad), 0, _storage_index(size, stride, out_off,
                                                                          grad),
                                     aten.reshape.default(grad, [numel(size)]))
    in_idx = _storage_index(in_size, in_stride, in_off, grad)
    g = aten.gather.default(store, 0, in_idx)
    if _may_overlap(in_size, in_stride):
        ones = aten.ones_like.default(g)
        count = aten.gather.default(aten.scatter_add.default(zeros([n], grad), 0, in_idx, ones),
                                    0, in_idx)
        g = aten.div.Tensor(g, count)
    return aten.reshape.default(g, list(in_size))
alias = defop("alias(Tensor(a) self) -> Tensor(a)", tags=CORE_VIEW,
              meta=lambda self: TensorMeta(_shape(self), self.dtype))

decomposition(alias)(_copy)


@derivative(alias)
def _alias_backward(grad):
    return grad


def _split_meta(self, split_sizes, dim=0):
    shape = _shape(self)
    d, sizes = check_split_sizes(shape, split_sizes, dim)
    return [TensorMeta(shape[:d] + (s,) + shape[d + 1:], self.dtype) for s in sizes]


split_with_sizes = defop("split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, "
                         "int dim=0) -> Tensor(a)[]", tags=CORE_VIEW, meta=_split_meta)


@decomposition(split_with_sizes)
def _split_with_sizes_decomp(self, split_sizes, dim=0):
    d, sizes = check_split_sizes(_shape(self), split_sizes, dim)
    out, start = [], 0
    for s in sizes:
        out.append(_slice_dim(self, d, start, start + s))
        start += s
    return out


@derivative(split_with_sizes)
def _split_with_sizes_backward(grads, split_sizes, dim):
    # pieces no gradient flowed to count as zeros
    ref = next(g for g in grads if g is not None)
    d = wrap_dim(dim, ref.ndim)
    parts = []
    for g, n in zip(grads, ints(split_sizes)):
        if g is None:
            shape = list(ref.shape)
            shape[d] = n
            g = zeros(shape, ref)
        parts.append(g)
    return aten.cat.default(parts, d)


unfold = defop("unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)",
               tags=VIEW, meta=lambda self, dimension, size, step: TensorMeta(
                   unfold_geometry(_shape(self), self.stride(), dimension, size, step)[0],
                   self.dtype))


@_view_decomposition(unfold)
def _unfold_decomp(self, dimension, size, step):
    shape = unfold_geometry(_shape(self), self.stride(), dimension, size, step)[0]
    if self.ndim == 0:                   # a 0-dim tensor unfolds as a 1-element vector
        return _slice_dim(prims.reshape(self, [1]), 0, 0, size)
    d = wrap_dim(dimension, self.ndim)
    count, dev = shape[d], self.device
    # Window w, element j reads position w * step + j along d: gather them all at once
    # (as a (count * size)-long dim d), then split that dim and move j last.
    grid = [count, size]
    pos = prims.add(prims.mul(prims.iota(grid, 0, dtype=D.int64, device=dev),
                              prims.full(grid, step, dtype=D.int64, device=dev)),
                    prims.iota(grid, 1, dtype=D.int64, device=dev))
    flat_shape = list(self.shape)
    flat_shape[d] = count * size
    index = prims.broadcast_in_dim(prims.reshape(pos, [count * size]), flat_shape, [d])
    out = prims.gather(self, d, index)
    out = prims.reshape(out, flat_shape[:d] + grid + flat_shape[d + 1:])
    n = self.ndim + 1
    return prims.transpose(out, [i for i in range(n) if i != d + 1] + [d + 1])


@derivative(unfold)
def _unfold_backward(grad, self_shape, dimension, size, step):
    """Each window element adds into the input position it was read from (windows may
    overlap)."""
    if len(self_shape) == 0:
        return aten.reshape.default(aten.sum.default(grad), [])
    d = wrap_dim(dimension, len(self_shape))
    count, dev = grad.shape[d], grad.device
    flat = list(self_shape)
    flat[d] = count * size
    g = aten.reshape.default(aten.movedim.int(grad, -1, d + 1), flat)
    pos = aten.add.Tensor(aten.unsqueeze.default(aten.mul.Scalar(
        aten.arange.default(count, dtype=D.int64, device=dev), step), 1),
        aten.arange.default(size, dtype=D.int64, device=dev))
    shape = [1] * len(self_shape)
    shape[d] = count * size
    index = aten.expand.default(aten.reshape.default(pos, shape), flat)
    return aten.scatter_add.default(zeros(self_shape, grad), d, index, g)


def _view_as_real_meta(self):
    if not self.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return TensorMeta(_shape(self) + (2,), self.dtype.to_real())


def _view_as_complex_meta(self):
    if self.dtype not in (D.float32, D.float64):
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, "
                           f"but got a tensor of scalar type: {self.dtype.scalar_type}")
    shape = _shape(self)
    if not shape or shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if self.numel() == 0:
        return TensorMeta(shape[:-1], self.dtype.to_complex())   # strides of no elements
    if self.stride()[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in self.stride()[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    return TensorMeta(shape[:-1], self.dtype.to_complex())


view_as_real = defop("view_as_real(Tensor(a) self) -> Tensor(a)", tags=VIEW,
                     meta=_view_as_real_meta)
view_as_complex = defop("view_as_complex(Tensor(a) self) -> Tensor(a)", tags=VIEW,
                        meta=_view_as_complex_meta)
detach = defop("detach(Tensor(a) self) -> Tensor(a)", tags=VIEW,
               meta=lambda self: TensorMeta(_shape(self), self.dtype))


@_view_decomposition(view_as_real)
def _view_as_real_decomp(self):
    shape = list(_view_as_real_meta(self).shape)
    parts = [prims.real(self), prims.imag(self)]
    return prims.concatenate([prims.reshape(p, shape[:-1] + [1]) for p in parts], len(shape) - 1)


@_view_decomposition(view_as_complex)
def _view_as_complex_decomp(self):
    _view_as_complex_meta(self)
    last = self.ndim - 1
    re, im = (prims.squeeze(_slice_dim(self, last, i, i + 1), [last]) for i in (0, 1))
    return prims.complex(re, im)


@derivative(view_as_real)
def _view_as_real_backward(grad):
    return view_as_complex(aten.contiguous.default(grad))


@derivative(view_as_complex)
def _view_as_complex_backward(grad):
    return view_as_real(grad)


# The decomposition drops autograd's detach semantics: it is for functional programs,
# where the autograd key (above the tracer) has already handled it.
_view_decomposition(detach)(_copy)
nondifferentiable(detach)       # a view outside autograd: its output never requires grad


def _detach_inplace_or_view(ks, self):
    # PyTorch's detach is a non-differentiable view: it shares data and the version
    # counter, but ``_base`` stays None.
    out = detach.redispatch(ks & below(DispatchKey.ADInplaceOrView), self)
    out._vc = self._shared_version_counter()
    return out


detach.register(DispatchKey.ADInplaceOrView, _detach_inplace_or_view)


def _detach_(self):
    if self._base is not None and self._base.requires_grad:
        raise RuntimeError("Can't detach views in-place. Use detach() instead.")
    self._ks &= ~AUTOGRAD_BITS
    self.grad_fn = None
    return self


# detach_ flips a flag (no data is written, no version bump): one kernel for every backend.
detach_ = defop("detach_(Tensor(a!) self) -> Tensor(a!)", tags=INPLACE,
                meta=lambda self: self)
detach_.register(AliasKey.CompositeExplicitAutograd, lambda ks, self: _detach_(self))
detach_.register(DispatchKey.ADInplaceOrView, FALLTHROUGH)
nondifferentiable(detach_)      # it cuts self's history; nothing to record


# --------------------------------------------------------------------------- composite views

def _transpose(self, dim0, dim1):
    n = self.ndim
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    perm = list(range(n))
    if n:
        perm[d0], perm[d1] = perm[d1], perm[d0]
    return permute(self, perm)


transpose_int = _composite("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
                           _transpose, VIEW)


def _t(self):
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.ndim}D")
    return transpose_int(self, 0, 1 if self.ndim == 2 else 0)


t = _composite("t(Tensor(a) self) -> Tensor(a)", _t, VIEW)
swapaxes = _composite("swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)",
                      lambda self, axis0, axis1: transpose_int(self, axis0, axis1), VIEW)
swapdims = _composite("swapdims(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
                      lambda self, dim0, dim1: transpose_int(self, dim0, dim1), VIEW)
squeeze = _composite("squeeze(Tensor(a) self) -> Tensor(a)",
                     lambda self: squeeze_dims_op(
                         self, [i for i, s in enumerate(self.shape) if s == 1]), VIEW)


def _narrow(self, dim, start, length):
    if self.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    start, length = operator.index(start), operator.index(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return slice_Tensor(self, d, start, start + length, 1)


narrow = _composite("narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)",
                    _narrow, VIEW)


def _split(self, split_size, dim=0):
    if self.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    split_size = operator.index(split_size)
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={split_size}")
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d]
    if split_size == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                           f"dimension size of {size}")
    count = max((size + split_size - 1) // split_size, 1) if split_size else 1
    sizes = [split_size] * count
    sizes[-1] = split_size - (split_size * count - size)
    return split_with_sizes(self, sizes, d)


split_Tensor = _composite("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) "
                          "-> Tensor(a)[]", _split, VIEW)


def _chunk(self, chunks, dim=0):
    if self.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        return split_with_sizes(self, [0] * chunks, d)
    return split_Tensor(self, split_size, d)


chunk = _composite("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
                   _chunk, VIEW)


def _unbind(self, dim=0):
    if self.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, self.ndim)
    return [select_int(self, d, i) for i in range(self.shape[d])]


unbind_int = _composite("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
                        _unbind, VIEW)


def _movedim(self, source, destination):
    n = self.ndim
    source = ints(source, "movedim", "source")
    destination = ints(destination, "movedim", "destination")
    if len(source) != len(destination):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source "
                           f"({shape_str(source)} dims) should contain the same number of dims "
                           f"as destination ({shape_str(destination)} dims)")
    src = [wrap_dim(d, n) for d in source]
    dst = [wrap_dim(d, n) for d in destination]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({shape_str(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({shape_str(destination)})")
    if n == 0:                  # a 0-dim tensor: dims 0 and -1 name "no dim"
        return permute(self, [])
    perm = [-1] * n
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(d for d in range(n) if d not in src)
    perm = [p if p >= 0 else next(rest) for p in perm]
    return permute(self, perm)


movedim_intlist = _composite("movedim.intlist(Tensor(a) self, int[] source, int[] destination) "
                             "-> Tensor(a)", _movedim, VIEW)
movedim_int = _composite("movedim.int(Tensor(a) self, int source, int destination) "
                         "-> Tensor(a)",
                         lambda self, source, destination: _movedim(self, (source,),
                                                                    (destination,)), VIEW)
expand_as = _composite("expand_as(Tensor(a) self, Tensor other) -> Tensor(a)",
                       lambda self, other: expand(self, list(other.shape)), VIEW)
view_as = _composite("view_as(Tensor(a) self, Tensor other) -> Tensor(a)",
                     lambda self, other: view(self, list(other.shape)), VIEW)


def _unflatten(self, dim, sizes):
    if self.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, self.ndim)
    sizes = ints(sizes, "unflatten", "sizes")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    shape = tuple(self.shape)
    try:
        sizes = infer_size(sizes, shape[d])
    except RuntimeError:
        if sizes.count(-1) > 1:
            raise
        raise RuntimeError(f"unflatten: Provided sizes {shape_str(sizes)} don't multiply up to "
                           f"the size of dim {dim} ({shape[d]}) in the input tensor") from None
    return view(self, shape[:d] + sizes + shape[d + 1:])


unflatten_int = _composite("unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) "
                           "-> Tensor(a)", _unflatten, VIEW)


# --------------------------------------------------------------------------- reshape family

def _reshape(self, shape):
    shape = infer_size(ints(shape, "reshape", "shape"), self.numel())
    if view_strides(tuple(self.shape), self.stride(), shape) is not None:
        return view(self, shape)
    return _unsafe_view(clone(self, memory_format="contiguous_format"), shape)


# reshape returns a view when strides allow, else a copy (PyTorch's CompositeImplicit rule).
reshape = _composite("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", _reshape)
reshape_as = _composite("reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)",
                        lambda self, other: reshape(self, list(other.shape)))


def _contiguous(self, *, memory_format="contiguous_format"):
    mf = memory_format_name(memory_format)
    if mf == "preserve_format":
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if is_contiguous_as(self, mf):
        return self
    return clone(self, memory_format=memory_format)


contiguous = _composite("contiguous(Tensor(a) self, *, MemoryFormat memory_format="
                        "contiguous_format) -> Tensor(a)", _contiguous)


def _flatten(self, start_dim=0, end_dim=-1):
    n = self.ndim
    if n == 0:
        return reshape(self, [1])
    s, e = wrap_dim(start_dim, n), wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return self
    shape = tuple(self.shape)
    return reshape(self, shape[:s] + (numel(shape[s:e + 1]),) + shape[e + 1:])


flatten_using_ints = _composite("flatten.using_ints(Tensor(a) self, int start_dim=0, "
                                "int end_dim=-1) -> Tensor(a)", _flatten)


def _clone_meta(self, *, memory_format=None):
    mf = memory_format_name(memory_format)
    if mf == "channels_last" and self.ndim != 4:
        raise RuntimeError("required rank 4 tensor to use channels_last format")
    return TensorMeta(_shape(self), self.dtype)


clone = defop("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", tags=CORE,
              meta=_clone_meta)


@decomposition(clone)
def _clone_decomp(self, *, memory_format=None):
    _clone_meta(self, memory_format=memory_format)
    return _copy(self)          # memory formats are a layout matter prims do not see


@derivative(clone)
def _clone_backward(grad):
    return grad


# --------------------------------------------------------------------------- joining

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


def cat_dtype(tensors):
    out = tensors[0].dtype
    for x in tensors[1:]:
        if x.dtype is not out:
            out = D.promote_types(out, x.dtype)
    return out


cat = defop("cat(Tensor[] tensors, int dim=0) -> Tensor", tags=CORE,
            meta=lambda tensors, dim=0: TensorMeta(cat_geometry(tensors, dim)[0],
                                                   cat_dtype(tensors)))


@decomposition(cat)
def _cat_decomp(tensors, dim=0):
    shape, d, used = cat_geometry(tensors, dim)
    dtype = cat_dtype(tensors)          # promoted over all inputs, skipped ones included
    if not used:
        return refs.full(shape, _zero(dtype), dtype, refs.device_of(*tensors))
    return prims.concatenate([refs.to_dtype(tensors[i], dtype) for i in used], d)


@derivative(cat)
def _cat_backward(grad, tensors, dim):
    # each input gets its slice; the legacy skipped empty 1-D inputs get none
    _, d, used = cat_geometry(tensors, dim)
    out, start = [None] * len(tensors), 0
    for i in used:
        n = tensors[i].shape[d]
        out[i] = slice_Tensor(grad, d, start, start + n)
        start += n
    return out


def _stack(tensors, dim=0):
    if len(tensors) == 0:
        raise RuntimeError("stack expects a non-empty TensorList")
    s0 = tuple(tensors[0].shape)
    for i, x in enumerate(tensors):
        if tuple(x.shape) != s0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{shape_str(s0)} at entry 0 and {shape_str(x.shape)} at entry "
                               f"{i}")
    d = wrap_dim(dim, len(s0) + 1)
    return cat([unsqueeze(x, d) for x in tensors], d)


stack = _composite("stack(Tensor[] tensors, int dim=0) -> Tensor", _stack)


def _atleast_1d(self):
    return reshape(self, [1]) if self.ndim == 0 else self


def _atleast_2d(self):
    if self.ndim == 0:
        return reshape(self, [1, 1])
    return unsqueeze(self, 0) if self.ndim == 1 else self


def _atleast_3d(self):
    n = self.ndim
    if n == 0:
        return reshape(self, [1, 1, 1])
    if n == 1:
        return unsqueeze(unsqueeze(self, 0), -1)
    return unsqueeze(self, -1) if n == 2 else self


atleast_1d = _composite("atleast_1d(Tensor self) -> Tensor", _atleast_1d)
atleast_2d = _composite("atleast_2d(Tensor self) -> Tensor", _atleast_2d)
atleast_3d = _composite("atleast_3d(Tensor self) -> Tensor", _atleast_3d)


def _nonempty(name, tensors):
    if len(tensors) == 0:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def _hstack(tensors):
    _nonempty("hstack", tensors)
    ts = [_atleast_1d(x) for x in tensors]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def _vstack(tensors):
    _nonempty("vstack", tensors)
    return cat([_atleast_2d(x) for x in tensors], 0)


def _dstack(tensors):
    _nonempty("dstack", tensors)
    return cat([_atleast_3d(x) for x in tensors], 2)


hstack = _composite("hstack(Tensor[] tensors) -> Tensor", _hstack)
vstack = _composite("vstack(Tensor[] tensors) -> Tensor", _vstack)
dstack = _composite("dstack(Tensor[] tensors) -> Tensor", _dstack)


# --------------------------------------------------------------------------- reordering, tiling

def _flip_meta(self, dims):
    wrap_dims(ints(dims, "flip", "dims"), self.ndim)
    return TensorMeta(_shape(self), self.dtype)


flip = defop("flip(Tensor self, int[] dims) -> Tensor", tags=CORE, meta=_flip_meta)


@decomposition(flip)
def _flip_decomp(self, dims):
    dims = wrap_dims(ints(dims, "flip", "dims"), self.ndim)
    # a 0-dim tensor accepts dim 0 (or -1) and has nothing to reverse
    return prims.rev(self, sorted(dims) if self.ndim else [])


@derivative(flip)
def _flip_backward(grad, dims):
    return flip(grad, dims)


def _roll(self, shifts, dims=()):
    shifts = ints(shifts, "roll", "shifts")
    dims = ints(dims, "roll", "dims")
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        return view(_roll(flatten_using_ints(self), shifts, (0,)), list(self.shape))
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    out = self
    for shift, dim in zip(shifts, dims):
        d = wrap_dim(dim, self.ndim)
        size = self.shape[d] if self.ndim else 1
        start = (size - shift) % size if size else 0
        if size == 0 or start == 0:
            continue
        out = cat([slice_Tensor(out, d, start, None), slice_Tensor(out, d, 0, start)], d)
    return clone(out) if out is self else out


roll = _composite("roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor", _roll)


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


repeat = defop("repeat(Tensor self, SymInt[] repeats) -> Tensor", tags=CORE,
               meta=lambda self, repeats: TensorMeta(repeat_shape(_shape(self), repeats)[0],
                                                     self.dtype))


@decomposition(repeat)
def _repeat_decomp(self, repeats):
    shape, reps = repeat_shape(_shape(self), repeats)
    # Leading size-1 dims for extra repeats; then each dim (size s, repeat r) broadcasts
    # to a pair (r, s) and the pairs merge: the whole tensor repeats, not each element.
    padded = [1] * (len(reps) - self.ndim) + list(self.shape)
    pairs = [v for r, s in zip(reps, padded) for v in (r, s)]
    x = prims.broadcast_in_dim(prims.reshape(self, padded), pairs,
                               list(range(1, len(pairs), 2)))
    return prims.reshape(x, list(shape))


@derivative(repeat)
def _repeat_backward(grad, self_shape, repeats):
    # grad seen as (r0, s0, r1, s1, ...): summing the r dims adds up the copies
    reps = ints(repeats, "repeat", "repeats")
    if not reps:
        return grad
    padded = [1] * (len(reps) - len(self_shape)) + list(self_shape)
    pairs = [v for r, s in zip(reps, padded) for v in (r, s)]
    g = aten.sum.dim_IntList(aten.reshape.default(grad, pairs),
                             list(range(0, len(pairs), 2)), False)
    return aten.reshape.default(g, list(self_shape))


def _tile(self, dims):
    dims = ints(dims, "tile", "dims")
    if len(dims) < self.ndim:
        dims = (1,) * (self.ndim - len(dims)) + dims
    return repeat(self, dims)


tile = _composite("tile(Tensor self, SymInt[] dims) -> Tensor", _tile)


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


constant_pad_nd = defop("constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor",
                        tags=CORE, meta=lambda self, pad, value=0: TensorMeta(
                            pad_geometry(_shape(self), pad)[0], self.dtype))


@decomposition(constant_pad_nd)
def _constant_pad_nd_decomp(self, pad, value=0):
    pad_geometry(_shape(self), pad)
    pad = ints(pad, "constant_pad_nd", "pad")
    n = self.ndim
    low, high = [0] * n, [0] * n
    # pad lists (low, high) pairs from the last dim backwards; negative pads crop,
    # which is also lax.pad's meaning
    for i in range(len(pad) // 2):
        low[n - 1 - i], high[n - 1 - i] = pad[2 * i], pad[2 * i + 1]
    return prims.pad(self, checked_scalar(value, self.dtype), low, high, [0] * n)


@derivative(constant_pad_nd)
def _constant_pad_nd_backward(grad, pad):
    return constant_pad_nd(grad, [-p for p in ints(pad, "constant_pad_nd", "pad")])


def _tri_meta(name):
    def meta(self, diagonal=0):
        if self.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return TensorMeta(_shape(self), self.dtype)
    return meta


tril = defop("tril(Tensor self, int diagonal=0) -> Tensor", meta=_tri_meta("tril"))
triu = defop("triu(Tensor self, int diagonal=0) -> Tensor", meta=_tri_meta("triu"))


def _tri_decomp(name, keep):
    """tril/triu: keep the elements whose (column - row) passes ``keep`` vs ``diagonal``."""
    def fn(self, diagonal=0):
        _tri_meta(name)(self, diagonal)
        grid, dev = list(self.shape[-2:]), self.device
        rows = prims.iota(grid, 0, dtype=D.int64, device=dev)
        cols = prims.iota(grid, 1, dtype=D.int64, device=dev)
        k = prims.full(grid, operator.index(diagonal), dtype=D.int64, device=dev)
        mask = refs.broadcast_to(keep(prims.sub(cols, rows), k), _shape(self))
        zero = refs.full(_shape(self), _zero(self.dtype), self.dtype, dev)
        return prims.where(mask, self, zero)
    return fn


decomposition(tril)(_tri_decomp("tril", prims.le))
decomposition(triu)(_tri_decomp("triu", prims.ge))


@derivative(tril)
def _tril_backward(grad, diagonal):
    return tril(grad, diagonal)


@derivative(triu)
def _triu_backward(grad, diagonal):
    return triu(grad, diagonal)
tril_ = defop("tril_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)", tags=INPLACE,
              meta=lambda self, diagonal=0: (_tri_meta("tril")(self), self)[1])
triu_ = defop("triu_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)", tags=INPLACE,
              meta=lambda self, diagonal=0: (_tri_meta("triu")(self), self)[1])


# --------------------------------------------------------------------------- scatter views

def select_scatter_check(self, src, dim, index):
    shape = _shape(self)
    d, _ = check_select(shape, dim, index)
    want = shape[:d] + shape[d + 1:]
    _check_src(src, want)
    return TensorMeta(shape, self.dtype)


def _check_src(src, want):
    if tuple(src.shape) != tuple(want):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {shape_str(src.shape)}, slice size = {shape_str(want)}")


def _slice_scatter_meta(self, src, dim=0, start=None, end=None, step=1):
    _check_src(src, _slice_meta(self, dim, start, end, step).shape)
    return TensorMeta(_shape(self), self.dtype)


def _diagonal_scatter_meta(self, src, offset=0, dim1=0, dim2=1):
    _check_src(src, _diagonal_meta(self, offset, dim1, dim2).shape)
    return TensorMeta(_shape(self), self.dtype)


select_scatter = defop("select_scatter(Tensor self, Tensor src, int dim, SymInt index) "
                       "-> Tensor", tags=CORE, meta=select_scatter_check)
slice_scatter = defop("slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, "
                      "SymInt? end=None, SymInt step=1) -> Tensor", tags=CORE,
                      meta=_slice_scatter_meta)
diagonal_scatter = defop("diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, "
                         "int dim2=1) -> Tensor", meta=_diagonal_scatter_meta)


@decomposition(select_scatter)
def _select_scatter_decomp(self, src, dim, index):
    select_scatter_check(self, src, dim, index)
    d, i = check_select(_shape(self), dim, index)
    shape = list(self.shape)
    shape[d] = 1
    row = prims.reshape(refs.to_dtype(src, self.dtype), shape)
    return prims.concatenate([_slice_dim(self, d, 0, i), row,
                              _slice_dim(self, d, i + 1, self.shape[d])], d)


@derivative(select_scatter)
def _select_scatter_backward(grad, dim, index, needs_input_grad):
    g_src = select_int(grad, dim, index)
    g_self = select_scatter(grad, aten.zeros_like.default(g_src), dim, index) \
        if needs_input_grad[0] else None
    return g_self, g_src


def _embed(self, src, low, high, interior):
    """``self`` with ``src`` written where ``pad(src, low, high, interior)`` puts it."""
    src = refs.to_dtype(src, self.dtype)
    spread = prims.pad(src, _zero(self.dtype), low, high, interior)
    mask = prims.pad(refs.full(_shape(src), True, D.bool, self.device), False, low, high,
                     interior)
    return prims.where(mask, spread, self)


@decomposition(slice_scatter)
def _slice_scatter_decomp(self, src, dim=0, start=None, end=None, step=1):
    _slice_scatter_meta(self, src, dim, start, end, step)
    d = check_slice(_shape(self), dim)
    size = self.shape[d]
    lo, hi, length = slice_bounds(size, start, end, step)
    if length == 0:
        return _copy(self)
    # src's elements go to lo, lo + step, ...: interior padding puts step - 1 between them
    n = self.ndim
    low, high, interior = [0] * n, [0] * n, [0] * n
    low[d], interior[d] = lo, step - 1
    high[d] = size - (lo + (length - 1) * step + 1)
    return _embed(self, src, low, high, interior)


@derivative(slice_scatter)
def _slice_scatter_backward(grad, dim, start, end, step, needs_input_grad):
    g_src = slice_Tensor(grad, dim, start, end, step)
    g_self = slice_scatter(grad, aten.zeros_like.default(g_src), dim, start, end, step) \
        if needs_input_grad[0] else None
    return g_self, g_src


@decomposition(diagonal_scatter)
def _diagonal_scatter_decomp(self, src, offset=0, dim1=0, dim2=1):
    _diagonal_scatter_meta(self, src, offset, dim1, dim2)
    perm, row, col, length = diagonal_block(_shape(self), offset, dim1, dim2)
    if length == 0:
        return _copy(self)
    n = self.ndim
    lead = [self.shape[i] for i in perm[:-2]]
    src = refs.to_dtype(src, self.dtype)
    # Interior padding of L after each of src's L diagonal elements gives the row-major
    # flattening of an L x L block with src on its main diagonal (element k at k * (L + 1)).
    zero, none = _zero(self.dtype), [0] * (n - 1)
    block = prims.reshape(prims.pad(src, zero, none, none, [0] * (n - 2) + [length]),
                          lead + [length, length])
    mask = prims.reshape(prims.pad(refs.full(_shape(src), True, D.bool, self.device), False,
                                   none, none, [0] * (n - 2) + [length]),
                         lead + [length, length])
    rows, cols = self.shape[perm[-2]], self.shape[perm[-1]]
    low = [0] * (n - 2) + [row, col]
    high = [0] * (n - 2) + [rows - row - length, cols - col - length]
    block = prims.pad(block, zero, low, high, [0] * n)
    mask = prims.pad(mask, False, low, high, [0] * n)
    back = _inverse(perm)
    return prims.where(_transpose_to(mask, back), _transpose_to(block, back), self)


@derivative(diagonal_scatter)
def _diagonal_scatter_backward(grad, offset, dim1, dim2, needs_input_grad):
    g_src = diagonal(grad, offset, dim1, dim2)
    g_self = diagonal_scatter(grad, aten.zeros_like.default(g_src), offset, dim1, dim2) \
        if needs_input_grad[0] else None
    return g_self, g_src


# --------------------------------------------------------------------------- fill, masked_fill

def _fill_tensor_check(value):
    if value.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.ndim} dimensions.")


def _fill_meta(self, value):
    if hasattr(value, "_ks"):
        _fill_tensor_check(value)
    return TensorMeta(_shape(self), self.dtype)


fill_Scalar = defop("fill.Scalar(Tensor self, Scalar value) -> Tensor", tags=CORE,
                    meta=_fill_meta)
fill_Tensor = defop("fill.Tensor(Tensor self, Tensor value) -> Tensor", meta=_fill_meta)


@decomposition(fill_Scalar)
def _fill_scalar_decomp(self, value):
    return refs.full(_shape(self), checked_scalar(value, self.dtype), self.dtype, self.device)


@decomposition(fill_Tensor)
def _fill_tensor_decomp(self, value):
    _fill_tensor_check(value)
    return prims.broadcast_in_dim(refs.to_dtype(value, self.dtype), list(self.shape), [])


@derivative(fill_Scalar)
def _fill_backward(grad):
    return aten.zeros_like.default(grad)


@derivative(fill_Tensor)
def _fill_tensor_backward(grad):
    return aten.zeros_like.default(grad), aten.sum.default(grad)


fill__Scalar = defop("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", tags=INPLACE,
                     meta=lambda self, value: self)
fill__Tensor = defop("fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)", tags=INPLACE,
                     meta=lambda self, value: (_fill_tensor_check(value), self)[1])
zero_ = defop("zero_(Tensor(a!) self) -> Tensor(a!)", tags=INPLACE, meta=lambda self: self)


def masked_fill_check(self, mask, value, inplace):
    if mask.dtype is not D.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype.scalar_type}")
    if hasattr(value, "_ks") and value.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    if inplace:
        expand_geometry(_shape(mask), mask.stride(), _shape(self), mask.dtype)
        return self
    return TensorMeta(broadcast_shapes(_shape(self), _shape(mask)), self.dtype)


masked_fill_Scalar = defop("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) "
                           "-> Tensor", meta=lambda s, m, v: masked_fill_check(s, m, v, False))
masked_fill_Tensor = defop("masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) "
                           "-> Tensor", meta=lambda s, m, v: masked_fill_check(s, m, v, False))


@decomposition(masked_fill_Scalar)
@decomposition(masked_fill_Tensor)
def _masked_fill_decomp(self, mask, value):
    shape = masked_fill_check(self, mask, value, False).shape     # self and mask broadcast
    if hasattr(value, "_ks"):
        fill = prims.broadcast_in_dim(refs.to_dtype(value, self.dtype), list(shape), [])
    else:
        fill = refs.full(shape, checked_scalar(value, self.dtype), self.dtype, self.device)
    return prims.where(refs.broadcast_to(mask, shape), fill, refs.broadcast_to(self, shape))


@derivative(masked_fill_Scalar)
def _masked_fill_backward(grad, mask):
    return masked_fill_Scalar(grad, mask, 0), None


@derivative(masked_fill_Tensor)
def _masked_fill_tensor_backward(grad, mask, needs_input_grad):
    return (masked_fill_Scalar(grad, mask, 0) if needs_input_grad[0] else None, None,
            aten.sum.default(aten.where.self(mask, grad, 0.0)) if needs_input_grad[2] else None)


masked_fill__Scalar = defop("masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) "
                            "-> Tensor(a!)", tags=INPLACE,
                            meta=lambda s, m, v: masked_fill_check(s, m, v, True))
masked_fill__Tensor = defop("masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) "
                            "-> Tensor(a!)", tags=INPLACE,
                            meta=lambda s, m, v: masked_fill_check(s, m, v, True))
