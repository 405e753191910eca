"""Shape and view operators: view, permute, expand, select, slice, diagonal, as_strided,
split, unfold, the composite views (transpose, narrow, movedim, ...), reshape, contiguous,
clone and the scatter views (select_scatter, slice_scatter, diagonal_scatter).  The ops
that build new tensors (cat, flip, repeat, pad, tril, fill, ...) are in ``arrange``.

View ops (schema ``-> Tensor(a)``) return an alias of their input; on backends with
strides (CPU) the kernel returns a real strided view, and the ADInplaceOrView key
marks ``_base`` and shares the version counter.  The stride arithmetic PyTorch uses
(``computeStride`` for ``view``, ``inferExpandGeometry``, diagonal, unsqueeze, slice)
lives once in fnx/ir/strides.py, as plain functions shared by meta functions, kernels
and functionalization.

Convenience ops (transpose, narrow, flatten, unbind, movedim, ...) are decompositions onto
the core ones, run as their CompositeImplicitAutograd kernel (the ops they call do the
view bookkeeping; see fnx/keys/inplace_or_view.py).
"""
from __future__ import annotations

import operator

from ...core import dtype as D
from ...core.dispatch_key import AUTOGRAD_BITS, AliasKey, DispatchKey, below
from ...core.tensor import make_private
from ...dispatch.dispatcher import FALLTHROUGH
from ...ops import aten, prims
from .. import refs
from ..grad_utils import zeros
from ..registry import TensorMeta, decomposition, defop, derivative, nondifferentiable
from ..dims import infer_size, wrap_dim
from ..strides import (channels_last_rank, check_as_strided, check_permutation, check_select,
                       check_slice, check_split_sizes, diagonal_block, diagonal_geometry,
                       expand_geometry, ints, memory_format_name, shape_str, size_index,
                       slice_bounds, squeeze_dims, unfold_geometry, unsqueeze_geometry,
                       view_geometry, view_strides)
import math

CORE = ("core",)
CORE_VIEW = ("core", "view")
VIEW = ("view",)
INPLACE = ("inplace",)


# --------------------------------------------------------------------------- helpers

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
    out = prims.gather(flat, 0, prims.reshape(index, [math.prod(size)]))
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
    return aten.reshape.default(idx, [math.prod(size)])


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
    if math.prod(in_size) == 0 or math.prod(size) == 0:
        return zeros(in_size, grad)
    n = 1 + max(_last_position(in_size, in_stride, in_off),
                _last_position(size, stride, out_off))
    store = aten.scatter_add.default(zeros([n], grad), 0, _storage_index(size, stride, out_off,
                                                                          grad),
                                     aten.reshape.default(grad, [math.prod(size)]))
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


# In a traced program detach is a copy that differentiation treats as a constant: the
# autograd key (above the tracer) has already cut the graph there, and a compiled module
# that jax.vjp differentiates (fnx.lower.jax_autograd) must stop there too.
_view_decomposition(detach)(prims.stop_gradient)
nondifferentiable(detach)       # a view outside autograd: its output never requires grad


def _detach_inplace_or_view(ks, self):
    # PyTorch's detach is a non-differentiable view: it shares data and the version
    # counter, but ``_base`` stays None. A resident CPU tensor gets private storage first,
    # for the two to share (fnx.core.tensor.make_private).
    if "_jax" in self.__dict__:
        make_private(self)
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
    # (a symbolic start or length, fnx.graph.symint, stays one: its decisions are guarded)
    start, length = size_index(start), size_index(length)
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
    if self.is_contiguous(memory_format=mf):
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
    return reshape(self, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


flatten_using_ints = _composite("flatten.using_ints(Tensor(a) self, int start_dim=0, "
                                "int end_dim=-1) -> Tensor(a)", _flatten)


def _clone_meta(self, *, memory_format=None):
    mf = memory_format_name(memory_format)
    rank = channels_last_rank(mf)
    if rank is not None and self.ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {mf} format")
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
