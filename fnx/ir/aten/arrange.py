"""Shape operators that build a new tensor from their inputs' elements (no views):
joining (cat, stack, hstack, ...), reordering and tiling (flip, roll, repeat, tile),
padding (constant_pad_nd), triangles (tril, triu) and fills (fill, masked_fill).

As in ``shape``, convenience ops (stack, roll, tile, ...) are decompositions onto the core
ones, run as their CompositeImplicitAutograd kernel.
"""
from __future__ import annotations

import operator

from ...core import dtype as D
from ...ops import aten, prims
from .. import refs
from ..registry import TensorMeta, decomposition, defop, derivative
from ..dims import broadcast_shapes, wrap_dim, wrap_dims
from ..strides import cat_geometry, expand_geometry, ints, pad_geometry, repeat_shape, shape_str
from .shape import (_composite, _shape, _zero, clone, flatten_using_ints, reshape,
                    slice_Tensor, unsqueeze, view)
from ..scalars import checked_convert

CORE = ("core",)
INPLACE = ("inplace",)


# --------------------------------------------------------------------------- joining

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
    # constant_pad_nd does not wrap negative values into unsigned types
    return prims.pad(self, checked_convert(value, self.dtype, strict_unsigned=True), low, high,
                     [0] * n)


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
    return refs.full(_shape(self), checked_convert(value, self.dtype), self.dtype, self.device)


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
        fill = refs.full(shape, checked_convert(value, self.dtype), self.dtype, self.device)
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
