"""Max pooling with indices beyond the core pools: adaptive max pooling (1-3 spatial dims),
max unpooling (2-D, 3-D) and fractional max pooling (2-D, 3-D).

All are ATen-level ops (not in the Core ATen set): their decompositions are their kernels
on every backend and autograd differentiates through them.  The values are gathered at
the chosen indices, so a gradient goes to the one element each window picked, as
PyTorch's backward kernels scatter it.  An index is the flat offset of that element in
its input plane (``h * W + w``), as ``max_pool2d(return_indices=True)`` gives it.  Ties
keep the first element in row-major order and a NaN wins (the last NaN), PyTorch's scan
``val > max || isnan(val)``.
"""
from __future__ import annotations

import itertools
import math

from ....core import dtype as D
from ....ops import aten, prims
from ...registry import TensorMeta, defop
from ._common import ATEN, _arange, _check_float, _full, _to


def _empty_dim(self):
    """The first empty dim but the first (a batch, or an unbatched input's channels)."""
    return next((i for i in range(1, self.ndim) if self.shape[i] == 0), None)


def _empty_pool(x, nd, shape):
    """The empty result of pooling ``x`` to ``shape``, still connected to ``x`` for
    autograd (a first element per plane, expanded to no elements)."""
    v = x
    for d in range(x.ndim - nd, x.ndim):
        v = aten.slice.Tensor(v, d, 0, 1)
    return aten.clone(aten.expand(v, shape)), _full(shape, 0, D.int64, x.device)


# ----------------------------------------------------------------------------- adaptive max

def _adaptive_max_check(self, output_size, nd):
    name = f"adaptive_max_pool{nd}d"
    out = tuple(int(o) for o in output_size)
    if nd == 1:
        if len(out) != 1:
            raise RuntimeError(f"adaptive_max_pool1d() argument 'output_size' should contain "
                               f"one int (got {len(out)})")
        if self.ndim not in (2, 3):
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {self.ndim}-dimensional "
                               f"tensor for argument #1 'self' (while checking arguments for "
                               f"adaptive_max_pool1d)")
    else:
        if self.ndim not in (nd + 1, nd + 2):
            raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                               f"{list(self.shape)}")
        if len(out) != nd:
            raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
    i = _empty_dim(self)
    if i is not None:
        raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                           f"dimensions, but input has sizes {list(self.shape)} with "
                           f"dimension {i} being empty")
    shape = list(self.shape[:self.ndim - nd]) + list(out)
    for o in out:
        if o < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {o}: {shape}")
    _check_float(self, f"{name}_cpu" if nd == 3 else name)
    return out


def _adaptive_max_meta(nd):
    def meta(self, output_size):
        out = _adaptive_max_check(self, output_size, nd)
        shape = tuple(self.shape[:self.ndim - nd]) + out
        return TensorMeta(shape, self.dtype), TensorMeta(shape, D.int64)
    return meta


def _window_argmax(g, dim):
    """Position along ``dim`` (kept, size 1) of each window's pick: the first maximum, or
    the last NaN.  ``g`` holds -inf where a window is shorter than ``dim``'s size."""
    width = g.shape[dim]
    view = [1] * g.ndim
    view[dim] = width
    pos = aten.view(_arange(width, D.int64, g.device), view)
    m = aten.amax(g, [dim], True)
    first = aten.amin(aten.where.self(aten.eq.Tensor(g, m), pos, width), [dim], True)
    last_nan = aten.amax(aten.where.self(aten.isnan(g), pos, -1), [dim], True)
    return aten.where.self(aten.ge.Scalar(last_nan, 0), last_nan, first)


def _adaptive_max_axis(v, idx, dim, n_out, inner):
    """Max of ``v`` along ``dim`` over the adaptive windows [floor(i*in/out),
    ceil((i+1)*in/out)), and the flat input index of each pick (``idx``: the flat index,
    within the ``inner`` elements of the dims after ``dim``, of each element of ``v``)."""
    n_in = v.shape[dim]
    dev = v.device
    i = _arange(n_out, D.int64, dev)
    start = aten.div.Scalar_mode(i * n_in, n_out, rounding_mode="floor")
    end = -aten.div.Scalar_mode(-(i + 1) * n_in, n_out, rounding_mode="floor")
    width = max(-((-(o + 1) * n_in) // n_out) - (o * n_in) // n_out for o in range(n_out))
    j = aten.unsqueeze(start, 1) + aten.unsqueeze(_arange(width, D.int64, dev), 0)
    inside = aten.lt.Tensor(j, aten.unsqueeze(end, 1))                  # (out, width)
    j = aten.reshape(aten.clamp(j, None, n_in - 1), [n_out * width])
    shape = list(v.shape)
    shape[dim:dim + 1] = [n_out, width]
    g = aten.reshape(aten.index_select(v, dim, j), shape)
    mview = [1] * len(shape)
    mview[dim], mview[dim + 1] = n_out, width
    p = _window_argmax(aten.where.self(aten.view(inside, mview), g, -math.inf), dim + 1)
    values = aten.squeeze.dim(aten.gather(g, dim + 1, p), dim + 1)
    sview = [1] * v.ndim
    sview[dim] = n_out
    row = aten.view(start, sview) + aten.squeeze.dim(p, dim + 1)
    if idx is None:
        return values, row
    gi = aten.reshape(aten.index_select(idx, dim, j), shape)
    return values, row * inner + aten.squeeze.dim(aten.gather(gi, dim + 1, p), dim + 1)


def _adaptive_max_decomp(nd):
    def decomp(self, output_size):
        out = _adaptive_max_check(self, output_size, nd)
        lead = self.ndim - nd
        shape = list(self.shape[:lead]) + list(out)
        if 0 in out:
            return _empty_pool(self, nd, shape)
        # max is separable: pool the last dim first, carrying each pick's flat index
        v, idx = self, None
        for i in reversed(range(nd)):
            inner = math.prod(self.shape[lead + i + 1:])
            v, idx = _adaptive_max_axis(v, idx, lead + i, out[i], inner)
        return v, idx
    return decomp


adaptive_max_pool1d = defop(
    "adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)", tags=ATEN,
    meta=_adaptive_max_meta(1), decomposition=_adaptive_max_decomp(1))
adaptive_max_pool2d = defop(
    "adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)", tags=ATEN,
    meta=_adaptive_max_meta(2), decomposition=_adaptive_max_decomp(2))
adaptive_max_pool3d = defop(
    "adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)", tags=ATEN,
    meta=_adaptive_max_meta(3), decomposition=_adaptive_max_decomp(3))


# ----------------------------------------------------------------------------- max unpool

_AXES = {2: "two elements (height, width)", 3: "three elements (depth, height, width)"}


def _unpool_check(self, indices, output_size, nd, stride=None, padding=None):
    name = f"max_unpooling{nd}d"
    if indices.dtype is not D.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{indices.dtype.scalar_type}")
    out = tuple(int(o) for o in output_size)
    if nd == 2 and len(out) != 2:
        raise RuntimeError(f"There should be exactly {_AXES[2]} in output_size, but got "
                           f"{len(out)} elements.")
    if self.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to {name} should be a {nd + 1}d or {nd + 2}d Tensor, but got "
                           f"a tensor with {self.ndim} dimensions.")
    if nd == 3:
        for what, v in (("output_size", out), ("stride", stride), ("padding", padding)):
            if len(v) != 3:
                sep = " " if what == "output_size" else ": "
                raise RuntimeError(f"There should be exactly {_AXES[3]} in {what}, but got"
                                   f"{sep}{len(v)} elements.")
    if tuple(self.shape) != tuple(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(self.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    i = _empty_dim(self)
    if i is not None:
        raise RuntimeError(f"{name}_forward_out_cpu(): Expected input to have non-zero size "
                           f"for non-batch dimensions, but got {list(self.shape)} with "
                           f"dimension {i} being empty.")
    if nd == 3 and any(s <= 0 for s in stride):
        raise RuntimeError(f"strides should be greater than zero, but got stride: "
                           f"{list(stride)}")
    if any(o < 0 for o in out):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: "
                           f"{list(self.shape[:self.ndim - nd]) + list(out)}")
    _check_float(self, f"max_unpool{nd}d")
    return out


def _unpool_meta(nd):
    def meta(self, indices, output_size, stride=None, padding=None):
        out = _unpool_check(self, indices, output_size, nd, stride, padding)
        return TensorMeta(tuple(self.shape[:self.ndim - nd]) + out, self.dtype)
    return meta


def _unpool_decomp(nd):
    def decomp(self, indices, output_size, stride=None, padding=None):
        out = _unpool_check(self, indices, output_size, nd, stride, padding)
        lead = list(self.shape[:self.ndim - nd])
        n_in = math.prod(self.shape[self.ndim - nd:])
        plane = math.prod(out)
        msg = (f"Found an invalid max index: {{}} (output volumes are of size "
               f"{'x'.join(map(str, out))})")
        idx = prims.check_in_range(aten.reshape(indices, lead + [n_in]), 0, plane,
                                   "RuntimeError", msg)
        acc = _full(lead + [plane], 0, self.dtype, self.device)
        r = aten.scatter.src(acc, len(lead), idx, aten.reshape(self, lead + [n_in]))
        return aten.view(r, lead + list(out))
    return decomp


max_unpool2d = defop(
    "max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> Tensor", tags=ATEN,
    meta=_unpool_meta(2), decomposition=_unpool_decomp(2))
max_unpool3d = defop(
    "max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, int[3] stride, "
    "int[3] padding) -> Tensor", tags=ATEN, meta=_unpool_meta(3),
    decomposition=_unpool_decomp(3))


# ----------------------------------------------------------------------------- fractional

_FRAC_DIMS = {2: ("height", "width"), 3: ("time", "height", "width")}


def _fractional_check(self, kernel_size, output_size, random_samples, nd):
    name = f"fractional_max_pool{nd}d"
    fn = f"{name}()" if nd == 2 else f"{name}_out()"
    what = "tuple of Ints" if nd == 2 else "tuple of three Ints"
    k = tuple(int(v) for v in kernel_size)
    out = tuple(int(v) for v in output_size)
    if len(k) != nd:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or {what}")
    if len(out) != nd:
        raise RuntimeError(f"{name}: output_size must either be a single Int or {what}")
    if self.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{fn}: Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(self.shape)}")
    i = _empty_dim(self)
    if i is not None:
        raise RuntimeError(f"{fn}: Expected input to have non-zero size for non-batch "
                           f"dimensions, but got{list(self.shape)} with dimension {i} "
                           f"being empty.")
    if any(v <= 0 for v in k):
        raise RuntimeError(f"{fn}: kernel_size must be greater than zero, but got {list(k)}")
    sp = self.shape[self.ndim - nd:]
    for axis, o, kk, n in zip(_FRAC_DIMS[nd], out, k, sp):
        if o < 0:
            raise RuntimeError(f"{fn}: output_size must be non-negative, but got {list(out)}")
        # PyTorch's 3-D check is strict (a 3-D window may not end at the input's end)
        if o + kk - 1 > n - (nd == 3):
            raise RuntimeError(f"{fn}: pool {axis} {kk} too large relative to input {axis} {n}")
    batch = self.shape[0] if self.ndim == nd + 2 else 1
    rs = random_samples
    if rs.ndim != 3:
        raise RuntimeError(f"{fn}: Expect _random_samples to be 3D (batch, channels, {nd}), "
                           f"but got {list(rs.shape)}")
    if rs.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if rs.shape[1] < self.shape[-nd - 1]:
        raise RuntimeError(f"{fn}: Expect _random_samples.size(1) no less than the input's "
                           f"{self.shape[-nd - 1]} channels, but got {rs.shape[1]}")
    if rs.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{rs.shape[2]}.")
    if rs.dtype is not self.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    _check_float(self, f"{name}_out_frame")
    return k, out


def _fractional_meta(nd):
    def meta(self, kernel_size, output_size, random_samples):
        _, out = _fractional_check(self, kernel_size, output_size, random_samples, nd)
        shape = tuple(self.shape[:self.ndim - nd]) + out
        return TensorMeta(shape, self.dtype), TensorMeta(shape, D.int64)
    return meta


def _fractional_starts(u, n_in, n_out, k):
    """Window starts (..., n_out) for samples ``u`` (..., 1) in [0, 1), in the samples'
    dtype as PyTorch computes them: trunc((i+u)*alpha) - trunc(u*alpha) with
    alpha = (in-k)/(out-1); the last window ends at the input's end."""
    dev = u.device
    last = _full([1], n_in - k, D.int64, dev)
    if n_out == 1:
        return aten.expand(last, list(u.shape[:-1]) + [1])
    alpha = _full([], n_in - k, u.dtype, dev) / _full([], n_out - 1, u.dtype, dev)
    i = _to(_arange(n_out - 1, D.int64, dev), u.dtype)
    s = _to(aten.trunc((i + u) * alpha), D.int64) - _to(aten.trunc(u * alpha), D.int64)
    return aten.cat([s, aten.expand(last, list(u.shape[:-1]) + [1])], -1)


def _fractional_decomp(nd):
    def decomp(self, kernel_size, output_size, random_samples):
        k, out = _fractional_check(self, kernel_size, output_size, random_samples, nd)
        batched = self.ndim == nd + 2
        x = self if batched else aten.unsqueeze(self, 0)
        n, c = x.shape[0], x.shape[1]
        sp = x.shape[2:]
        shape = [n, c] + list(out)
        if 0 in out or n == 0:
            v, i = _empty_pool(x, nd, shape)
        else:
            rs = aten.slice.Tensor(aten.slice.Tensor(random_samples, 0, 0, n), 1, 0, c)
            # sample 0 drives the last dim in 2-D (W, then H), the first in 3-D (T, H, W)
            order = (1, 0) if nd == 2 else (0, 1, 2)
            starts = []
            for d in range(nd):
                u = aten.slice.Tensor(rs, 2, order[d], order[d] + 1)       # (n, c, 1)
                st = _fractional_starts(u, sp[d], out[d], k[d])             # (n, c, out_d)
                view = [n, c] + [1] * nd
                view[2 + d] = out[d]
                starts.append(aten.view(st, view))
            instride = [math.prod(sp[d + 1:]) for d in range(nd)]
            flat = aten.reshape(x, [n, c, math.prod(sp)])
            v = i = None
            for kk in itertools.product(*(range(m) for m in k)):
                pos = None
                for d in range(nd):
                    term = (starts[d] + kk[d]) * instride[d]
                    pos = term if pos is None else pos + term
                pos = aten.reshape(aten.expand(pos, shape), [n, c, math.prod(out)])
                val = aten.view(aten.gather(flat, 2, pos), shape)
                pos = aten.view(pos, shape)
                if v is None:
                    v, i = val, pos
                    continue
                take = aten.logical_or(aten.gt.Tensor(val, v), aten.isnan(val))
                v = aten.where.self(take, val, v)
                i = aten.where.self(take, pos, i)
        if not batched:
            v, i = aten.squeeze.dim(v, 0), aten.squeeze.dim(i, 0)
        return v, i
    return decomp


fractional_max_pool2d = defop(
    "fractional_max_pool2d(Tensor self, int[2] kernel_size, int[2] output_size, "
    "Tensor random_samples) -> (Tensor, Tensor)", tags=ATEN, meta=_fractional_meta(2),
    decomposition=_fractional_decomp(2))
fractional_max_pool3d = defop(
    "fractional_max_pool3d(Tensor self, int[3] kernel_size, int[3] output_size, "
    "Tensor random_samples) -> (Tensor, Tensor)", tags=ATEN, meta=_fractional_meta(3),
    decomposition=_fractional_decomp(3))
