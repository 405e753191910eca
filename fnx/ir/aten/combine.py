"""Everyday array helpers built from the shape, joining, indexing and pointwise ops:
finite differences (``diff``), ``nan_to_num``, the Kronecker product, ``rot90``,
index/section splits (``tensor_split``, ``hsplit``/``vsplit``/``dsplit``), grids
(``meshgrid``, ``cartesian_prod``, ``combinations``, ``tril_indices``/``triu_indices``),
``block_diag``, ``broadcast_tensors``, ``repeat_interleave``, the trapezoid rule
(``trapezoid``, ``cumulative_trapezoid``) and ``narrow_copy``.

Each is a decomposition (CompositeImplicitAutograd), so autograd, tracing and every
backend come from the ops it calls; the checks raise PyTorch's errors first.  Selections
whose size is known from the shapes alone (``combinations``, the triangle indices) avoid
``nonzero``: a running count of a mask scatters each kept position to its place, so they
trace.  ``repeat_interleave`` with tensor repeats and no ``output_size`` reads the repeats'
sum: eager only, like ``nonzero``.
"""
from __future__ import annotations

import math
import operator

import ml_dtypes

from ...core import dtype as D
from ...ops import aten
from ..backend_select import backend_select
from ..dims import broadcast_shapes, wrap_dim
from ..strides import shape_str
from .arrange import cat, cat_dtype, constant_pad_nd, flip, stack
from .shape import (VIEW, _composite, _shape, expand, narrow, reshape, slice_Tensor,
                    transpose_int, unsqueeze, view, view_as_complex, view_as_real)

__all__ = ["diff", "nan_to_num", "kron", "rot90", "tensor_split_sections",
           "tensor_split_indices", "hsplit_int", "hsplit_array", "vsplit_int", "vsplit_array",
           "dsplit_int", "dsplit_array", "meshgrid", "meshgrid_indexing", "cartesian_prod",
           "block_diag", "broadcast_tensors", "repeat_interleave_Tensor",
           "repeat_interleave_self_Tensor", "repeat_interleave_self_int", "tril_indices",
           "triu_indices", "combinations", "trapezoid_x", "trapezoid_dx", "cumulative_trapezoid_x",
           "cumulative_trapezoid_dx", "narrow_copy"]


# --------------------------------------------------------------------------- diff

def _diff_side(self, other, d):
    if other.ndim != self.ndim:
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for i in range(self.ndim):
        if i != d and other.shape[i] != self.shape[i]:
            raise RuntimeError(f"diff expects the shape of tensor to prepend or append to match "
                               f"that of input except along the differencing dimension; "
                               f"input.size({i}) = {self.shape[i]}, but got "
                               f"tensor.size({i}) = {other.shape[i]}")


def _diff(self, n=1, dim=-1, prepend=None, append=None):
    if self.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    n = operator.index(n)
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, self.ndim)
    parts = [self]
    if prepend is not None:
        _diff_side(self, prepend, d)
        parts.insert(0, prepend)
    if append is not None:
        _diff_side(self, append, d)
        parts.append(append)
    x = cat(parts, d) if len(parts) > 1 else self
    if n == 0:
        return aten.clone.default(x)
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        hi, lo = slice_Tensor(x, d, 1, size), slice_Tensor(x, d, 0, size - 1)
        x = aten.logical_xor(hi, lo) if x.dtype is D.bool else aten.sub.Tensor(hi, lo)
    return x


diff = _composite("diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, "
                  "Tensor? append=None) -> Tensor", _diff)


# --------------------------------------------------------------------------- nan_to_num

def _nan_to_num_real(x, nan, posinf, neginf):
    big = ml_dtypes.finfo(x.dtype.numpy)
    posinf = float(big.max) if posinf is None else posinf
    neginf = float(big.min) if neginf is None else neginf
    x = aten.where.self(aten.isnan(x), nan, x)
    inf = aten.isinf(x)
    x = aten.where.self(aten.logical_and(inf, aten.gt.Scalar(x, 0)), posinf, x)
    return aten.where.self(aten.logical_and(inf, aten.lt.Scalar(x, 0)), neginf, x)


def _nan_to_num(self, nan=None, posinf=None, neginf=None):
    nan = 0.0 if nan is None else nan
    if self.dtype.is_complex:
        # the real and imaginary parts separately, as PyTorch does
        parts = _nan_to_num_real(view_as_real(self), nan, posinf, neginf)
        return view_as_complex(parts)
    if not self.dtype.is_floating_point:
        return aten.clone.default(self)
    return _nan_to_num_real(self, nan, posinf, neginf)


nan_to_num = _composite("nan_to_num(Tensor self, float? nan=None, float? posinf=None, "
                        "float? neginf=None) -> Tensor", _nan_to_num)


# --------------------------------------------------------------------------- kron

def _kron(self, other):
    nd = max(self.ndim, other.ndim)
    sa = [1] * (nd - self.ndim) + list(self.shape)
    sb = [1] * (nd - other.ndim) + list(other.shape)
    # a[i0, 1, i1, 1, ...] * b[1, j0, 1, j1, ...], then merge each (i, j) pair of dims
    a = reshape(self, [s for n in sa for s in (n, 1)])
    b = reshape(other, [s for n in sb for s in (1, n)])
    return reshape(aten.mul.Tensor(a, b), [p * q for p, q in zip(sa, sb)])


kron = _composite("kron(Tensor self, Tensor other) -> Tensor", _kron)


# --------------------------------------------------------------------------- rot90

def _rot90(self, k=1, dims=(0, 1)):
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if self.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {self.ndim}")
    if dims[0] == dims[1] or dims[0] - dims[1] in (self.ndim, -self.ndim):
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    d0, d1 = wrap_dim(dims[0], self.ndim), wrap_dim(dims[1], self.ndim)
    k = operator.index(k) % 4
    if k == 1:
        return transpose_int(flip(self, [d1]), d0, d1)
    if k == 2:
        return flip(self, [d0, d1])
    if k == 3:
        return transpose_int(flip(self, [d0]), d0, d1)
    return aten.clone.default(self)


rot90 = _composite("rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor", _rot90)


# --------------------------------------------------------------------------- splits

def _split_input(self):
    if self.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")


def _tensor_split_sections(self, sections, dim=0):
    _split_input(self)
    sections = operator.index(sections)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d]
    per, extra = divmod(size, sections)
    out, start = [], 0
    for i in range(sections):
        n = per + (1 if i < extra else 0)
        out.append(slice_Tensor(self, d, start, start + n))
        start += n
    return out


def _tensor_split_indices(self, indices, dim=0):
    _split_input(self)
    d = wrap_dim(dim, self.ndim)
    bounds = [None] + [operator.index(i) for i in indices] + [None]
    return [slice_Tensor(self, d, lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:])]


tensor_split_sections = _composite(
    "tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[]",
    _tensor_split_sections, VIEW)
tensor_split_indices = _composite(
    "tensor_split.indices(Tensor(a -> *) self, SymInt[] indices, int dim=0) -> Tensor(a)[]",
    _tensor_split_indices, VIEW)


def _xsplit(name, min_dims, dim):
    def check(self):
        if self.ndim < min_dims:
            what = "1 dimension" if min_dims == 1 else f"{min_dims} dimension"
            raise RuntimeError(f"torch.{name} requires a tensor with at least {what}, but got a "
                               f"tensor with {self.ndim} dimensions!")
        return 0 if name == "hsplit" and self.ndim == 1 else dim

    def by_sections(self, sections):
        d = check(self)
        sections = operator.index(sections)
        if sections != 0 and self.shape[d] % sections != 0:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the "
                               f"size of the dimension {self.shape[d]} is not divisible by the "
                               f"split_size {sections}!")
        return _tensor_split_sections(self, sections, d)

    def by_indices(self, indices):
        return _tensor_split_indices(self, indices, check(self))

    return (_composite(f"{name}.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]",
                       by_sections, VIEW),
            _composite(f"{name}.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]",
                       by_indices, VIEW))


hsplit_int, hsplit_array = _xsplit("hsplit", 1, 1)
vsplit_int, vsplit_array = _xsplit("vsplit", 2, 0)
dsplit_int, dsplit_array = _xsplit("dsplit", 3, 2)


# --------------------------------------------------------------------------- grids

def _meshgrid(tensors, *, indexing="ij"):
    if len(tensors) == 0:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f'received: {indexing}')
    for x in tensors:
        if x.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got a tensor of shape {shape_str(x.shape)}")
    for x in tensors[1:]:
        if x.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:                                  # "xy": the first two grids' axes trade places
        ts[0], ts[1] = ts[1], ts[0]
    shape = [x.numel() for x in ts]
    out = []
    for i, x in enumerate(ts):
        lead = [1] * len(ts)
        lead[i] = shape[i]
        out.append(expand(view(x, lead), shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return out


meshgrid = _composite("meshgrid(Tensor[] tensors) -> Tensor[]", _meshgrid)
meshgrid_indexing = _composite("meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]",
                               _meshgrid)


def _cartesian_prod(tensors):
    if len(tensors) == 0:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for x in tensors:
        if x.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    if len(tensors) == 1:
        return aten.clone.default(tensors[0])
    grids = _meshgrid(tensors, indexing="ij")
    return stack([reshape(g, [-1]) for g in grids], 1)


cartesian_prod = _composite("cartesian_prod(Tensor[] tensors) -> Tensor", _cartesian_prod)


def _block_diag(tensors):
    mats = []
    for i, x in enumerate(tensors):
        if x.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {x.ndim} dimensions")
        mats.append(reshape(x, [1, -1] if x.ndim == 1 else [1, 1]) if x.ndim < 2 else x)
    if not mats:
        return aten.empty.memory_format([1, 0])
    dtype = cat_dtype(mats)
    cols = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        m = m if m.dtype is dtype else aten._to_copy.default(m, dtype=dtype)
        right = cols - left - m.shape[1]
        rows.append(constant_pad_nd(m, [left, right]))
        left += m.shape[1]
    return cat(rows, 0)


block_diag = _composite("block_diag(Tensor[] tensors) -> Tensor", _block_diag)


def _broadcast_tensors(tensors):
    shape = list(broadcast_shapes(*[_shape(x) for x in tensors]))
    return [expand(x, shape) for x in tensors]


broadcast_tensors = _composite("broadcast_tensors(Tensor(a -> *)[] tensors) -> Tensor(a)[]",
                               _broadcast_tensors, VIEW)


# --------------------------------------------------------------------------- repeat_interleave

def _long(x):
    return x if x.dtype is D.int64 else aten._to_copy.default(x, dtype=D.int64)


def _expand_index(counts, total):
    """``[i] * counts[i]`` for each i, concatenated (length ``total``): mark where each
    run starts, then a running count of the marks numbers the runs."""
    n = counts.shape[0]
    starts = aten.sub.Tensor(aten.cumsum.default(counts, 0), counts)
    marks = aten.zeros.default([total + 1], dtype=D.int64, device=counts.device)
    ones = aten.ones.default([n], dtype=D.int64, device=counts.device)
    marks = aten.scatter_add.default(marks, 0, starts, ones)
    return aten.sub.Scalar(aten.cumsum.default(slice_Tensor(marks, 0, 0, total), 0), 1)


def _check_repeats_dtype(repeats):
    if repeats.dtype not in (D.int64, D.int32):
        raise NotImplementedError(f'"repeat_interleave" not implemented for '
                                  f"'{repeats.dtype.scalar_type}'")


def _check_repeats(repeats):
    if repeats.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    _check_repeats_dtype(repeats)


def _repeat_interleave_tensor(repeats, *, output_size=None):
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    _check_repeats_dtype(repeats)
    repeats = _long(repeats)
    if output_size is None:             # the length is data: eager only, like nonzero
        if repeats.numel() and bool(aten.lt.Scalar(repeats, 0).any().item()):
            raise RuntimeError("repeats can not be negative")
        output_size = int(aten.sum.default(repeats).item())
    return _expand_index(repeats, operator.index(output_size))


def _repeat_interleave_self_tensor(self, repeats, dim=None, *, output_size=None):
    _check_repeats(repeats)
    x = reshape(self, [-1]) if dim is None else self
    d = 0 if dim is None else wrap_dim(dim, self.ndim)
    size = x.shape[d] if x.ndim else 1
    if repeats.ndim == 0 or repeats.numel() == 1:
        repeats = expand(reshape(repeats, [1]), [size])
    elif repeats.shape[0] != size:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {repeats.shape[0]} and input.size({d}) = {size}")
    index = _repeat_interleave_tensor(repeats, output_size=output_size)
    return aten.index_select.default(x if x.ndim else reshape(x, [1]), d, index)


def _repeat_interleave_self_int(self, repeats, dim=None, *, output_size=None):
    repeats = operator.index(repeats)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    x = reshape(self, [-1]) if dim is None or self.ndim == 0 else self
    d = 0 if dim is None or self.ndim == 0 else wrap_dim(dim, self.ndim)
    shape = list(x.shape)
    if output_size is not None and output_size != shape[d] * repeats:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected "
                           f"{shape[d] * repeats} but got {output_size}")
    y = expand(unsqueeze(x, d + 1), shape[:d + 1] + [repeats] + shape[d + 1:])
    return reshape(y, shape[:d] + [shape[d] * repeats] + shape[d + 1:])


repeat_interleave_Tensor = _composite(
    "repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor",
    _repeat_interleave_tensor)
repeat_interleave_self_Tensor = _composite(
    "repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, "
    "SymInt? output_size=None) -> Tensor", _repeat_interleave_self_tensor)
repeat_interleave_self_int = _composite(
    "repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, "
    "SymInt? output_size=None) -> Tensor", _repeat_interleave_self_int)


# --------------------------------------------------------------------------- selections of a grid

def _static_positions(mask, count):
    """Flat positions of the ``count`` true elements of the 1-D ``mask``, in order, with
    no data-dependent shape: each true element's rank (a running count) is where its
    position goes; the false ones all go to a spare slot that is dropped."""
    n = mask.shape[0]
    rank = aten.sub.Scalar(aten.cumsum.default(mask, 0, dtype=D.int64), 1)
    target = aten.where.self(mask, rank, count)
    pos = aten.arange.default(n, dtype=D.int64, device=mask.device)
    buf = aten.zeros.default([count + 1], dtype=D.int64, device=mask.device)
    return slice_Tensor(aten.scatter_add.default(buf, 0, target, pos), 0, 0, count)


def _tri_count(row, col, offset, lower):
    """How many (r, c) of a row x col grid have c - r <= offset (lower) or >= offset."""
    if lower:
        return sum(max(0, min(col, r + offset + 1)) for r in range(row))
    return sum(max(0, col - max(0, r + offset)) for r in range(row))


def _tri_indices(name, lower):
    def fn(row, col, offset=0, *, dtype=None, layout=None, device=None, pin_memory=None):
        row, col, offset = operator.index(row), operator.index(col), operator.index(offset)
        if row < 0:
            raise RuntimeError(f"row must be non-negative, got{row}")
        if col < 0:
            raise RuntimeError(f"col must be non-negative, got{col}")
        dtype = D.int64 if dtype is None else dtype
        if dtype not in (D.int64, D.int32):
            raise NotImplementedError(f'"{name}" not implemented for \'{dtype.scalar_type}\'')
        r = unsqueeze(aten.arange.default(row, dtype=D.int64, device=device), 1)
        c = unsqueeze(aten.arange.default(col, dtype=D.int64, device=device), 0)
        off = aten.sub.Tensor(c, r)
        mask = aten.le.Scalar(off, offset) if lower else aten.ge.Scalar(off, offset)
        p = _static_positions(reshape(mask, [-1]), _tri_count(row, col, offset, lower))
        w = max(col, 1)
        out = stack([aten.floor_divide.Scalar(p, w), aten.remainder.Scalar(p, w)])
        return out if dtype is D.int64 else aten._to_copy.default(out, dtype=dtype)
    return _composite(f"{name}(int row, int col, int offset=0, *, ScalarType? dtype=None, "
                      f"Layout? layout=None, Device? device=None, bool? pin_memory=None) "
                      f"-> Tensor", fn)


tril_indices = _tri_indices("tril_indices", True)
triu_indices = _tri_indices("triu_indices", False)
backend_select(tril_indices)
backend_select(triu_indices)


def _combinations(self, r=2, with_replacement=False):
    if self.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(self.shape)}")
    r = operator.index(r)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:                          # empty, but still computed from self (autograd)
        return aten.clone.default(slice_Tensor(self, 0, 0, 0))
    n = self.shape[0]
    idx = aten.arange.default(n, dtype=D.int64, device=self.device)
    grids = _meshgrid([idx] * r, indexing="ij")
    # keep the index tuples that increase (strictly, or weakly with replacement)
    mask = None
    for a, b in zip(grids[:-1], grids[1:]):
        step = aten.le.Tensor(a, b) if with_replacement else aten.lt.Tensor(a, b)
        mask = step if mask is None else aten.logical_and(mask, step)
    count = math.comb(n + r - 1, r) if with_replacement else math.comb(n, r)
    if mask is None:                    # r == 1: one column
        return stack([self], 1)
    p = _static_positions(reshape(mask, [-1]), count)
    cols = [aten.index_select.default(self, 0, aten.index_select.default(reshape(g, [-1]), 0, p))
            for g in grids]
    return stack(cols, 1)


combinations = _composite("combinations(Tensor self, int r=2, bool with_replacement=False) "
                          "-> Tensor", _combinations)


# --------------------------------------------------------------------------- trapezoid

def _integrand(y):
    return y if _is_float(y.dtype) else aten._to_copy.default(y, dtype=D.get_default_dtype())


def _is_float(d) -> bool:
    return d.is_floating_point or d.is_complex


def _trapezoid_parts(y, x, dx, dim):
    """The per-interval areas along ``dim`` (size(dim) - 1 of them)."""
    d = wrap_dim(dim, y.ndim)
    n = y.shape[d]
    y = _integrand(y)
    mid = aten.add.Tensor(slice_Tensor(y, d, 1, n), slice_Tensor(y, d, 0, max(n - 1, 0)))
    if x is None:
        return aten.mul.Scalar(mid, dx / 2), d
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[d] = n
        x = reshape(x, shape)
        xd = d
    else:
        xd = wrap_dim(dim, x.ndim)
    m = x.shape[xd]
    step = aten.sub.Tensor(slice_Tensor(x, xd, 1, m), slice_Tensor(x, xd, 0, max(m - 1, 0)))
    return aten.div.Scalar(aten.mul.Tensor(step, mid), 2), d


def _trapezoid_x(y, x, *, dim=-1):
    parts, d = _trapezoid_parts(y, x, None, dim)
    return aten.sum.dim_IntList(parts, [d])


def _trapezoid_dx(y, *, dx=1, dim=-1):
    parts, d = _trapezoid_parts(y, None, dx, dim)
    return aten.sum.dim_IntList(parts, [d])


def _cumulative_trapezoid_x(y, x, *, dim=-1):
    parts, d = _trapezoid_parts(y, x, None, dim)
    return aten.cumsum.default(parts, d)


def _cumulative_trapezoid_dx(y, *, dx=1, dim=-1):
    parts, d = _trapezoid_parts(y, None, dx, dim)
    return aten.cumsum.default(parts, d)


trapezoid_x = _composite("trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor",
                         _trapezoid_x)
trapezoid_dx = _composite("trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor",
                          _trapezoid_dx)
cumulative_trapezoid_x = _composite(
    "cumulative_trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor",
    _cumulative_trapezoid_x)
cumulative_trapezoid_dx = _composite(
    "cumulative_trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor",
    _cumulative_trapezoid_dx)


def _narrow_copy(self, dim, start, length):
    return aten.clone.default(narrow(self, dim, start, length))


narrow_copy = _composite("narrow_copy(Tensor self, int dim, SymInt start, SymInt length) "
                         "-> Tensor", _narrow_copy)
