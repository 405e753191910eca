"""Pooling: max and average pooling (1-3 spatial dims, with indices and backward ops) and
adaptive average pooling."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ....core import dtype as D
from ....ops import aten
from ...registry import TensorMeta, defop, derivative
from ._common import CORE, _arange, _check_float, _full, _not_implemented, _same, _to, _up


_NUM = {1: "one int", 2: "two ints", 3: "three ints"}


def _pool_ints(name, what, v, nd, allow_empty=False):
    v = (v,) if isinstance(v, int) else tuple(v)
    if allow_empty and not v:
        return None
    if len(v) == 1:
        v = v * nd
    if len(v) != nd:
        lead = "either be omitted, a single int" if allow_empty else \
            ("be either a single int" if what == "dilation" else "either be a single int")
        raise RuntimeError(f"{name}: {what} must {lead}, or a tuple of {_NUM[nd]}")
    return v


def pool_output_size(n, k, p, s, d, ceil_mode):
    """PyTorch's ``pooling_output_shape``: a last window must start inside the input or
    its left padding."""
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool_shape_check(name, x, nd, k, s, p, d, out):
    rank = (nd + 1, nd + 2)
    sp = list(x.shape)
    if x.ndim not in rank or any(n == 0 for n in sp[x.ndim - nd - 1 if x.ndim == nd + 2
                                                   else 0:]):
        raise RuntimeError(f"Expected {rank[0]}D or {rank[1]}D (batch mode) tensor with "
                           f"optional 0 dim batch size for input, but got:{sp}")
    if any(kk // 2 < pp for kk, pp in zip(k, p)):
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but "
                           f"got pad={list(p)}, kernel_size={list(k)}")
    if any(o < 1 for o in out):
        c = sp[-nd - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, [c] + sp[-nd:]))}). "
                           f"Calculated output size: ({'x'.join(map(str, [c] + list(out)))}). "
                           f"Output size is too small")


def _pool_setup(name, x, nd, kernel_size, stride, padding, dilation, ceil_mode):
    k = _pool_ints(name, "kernel_size", kernel_size, nd)
    s = _pool_ints(name, "stride", stride, nd, allow_empty=True) or k
    p = _pool_ints(name, "padding", padding, nd)
    d = _pool_ints(name, "dilation", dilation, nd)
    if any(v <= 0 for v in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got {list(k)}")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"stride should be greater than zero, but got {list(s)}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(d)}")
    sp = x.shape[x.ndim - nd:]
    out = tuple(pool_output_size(n, kk, pp, ss, dd, ceil_mode)
                for n, kk, pp, ss, dd in zip(sp, k, p, s, d))
    _pool_shape_check(name, x, nd, k, s, p, d, out)
    return k, s, p, d, out


def _max_pool_meta(nd):
    name = f"max_pool{nd}d"

    def meta(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        if self.dtype is D.bool or self.dtype.is_complex:
            raise _not_implemented(name, self.dtype)
        out = _pool_setup(name, self, nd, kernel_size, stride, padding, dilation, ceil_mode)[4]
        shape = tuple(self.shape[:self.ndim - nd]) + out
        return TensorMeta(shape, self.dtype), TensorMeta(shape, D.int64)
    return meta


def _lowest(dtype):
    if dtype.is_floating_point:
        return -math.inf
    return int(np.iinfo(dtype.numpy).min)


def _window_offsets(x, nd, k, s, d, out, lead):
    """(kernel offset, strided view of ``x`` at that offset) for every kernel offset."""
    for kk in itertools.product(*(range(n) for n in k)):
        v = x
        for i in range(nd):
            st = kk[i] * d[i]
            v = aten.slice.Tensor(v, lead + i, st, st + s[i] * (out[i] - 1) + 1, s[i])
        yield kk, v


def _max_pool_decomp(nd):
    meta = _max_pool_meta(nd)

    def decomp(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        meta(self, kernel_size, stride, padding, dilation, ceil_mode)
        name = f"max_pool{nd}d"
        k, s, p, d, out = _pool_setup(name, self, nd, kernel_size, stride, padding, dilation,
                                      ceil_mode)
        lead = self.ndim - nd
        sp = self.shape[lead:]
        fill = _lowest(self.dtype)
        pad = []
        for i in reversed(range(nd)):
            hi = max(0, (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - (sp[i] + p[i]))
            pad += [p[i], hi]
        x = aten.constant_pad_nd(self, pad, fill) if any(pad) else self
        dev = self.device
        base = []
        for i in range(nd):
            view = [1] * nd
            view[i] = out[i]
            base.append(aten.view(_arange(out[i], D.int64, dev) * s[i] - p[i], view))
        instride = [math.prod(sp[i + 1:]) for i in range(nd)]
        best = idx = None
        isfloat = self.dtype.is_floating_point
        for kk, v in _window_offsets(x, nd, k, s, d, out, lead):
            coords = [b + kk[i] * d[i] for i, b in enumerate(base)]
            valid = None
            flat = None
            for i, c in enumerate(coords):
                ok = aten.logical_and(aten.ge.Scalar(c, 0), aten.lt.Scalar(c, sp[i]))
                valid = ok if valid is None else aten.logical_and(valid, ok)
                term = c * instride[i]
                flat = term if flat is None else flat + term
            if best is None:
                best = aten.where.self(valid, v, fill)
                idx = aten.where.self(valid, flat, -1)
                continue
            better = aten.logical_or(aten.gt.Tensor(v, best), aten.lt.Scalar(idx, 0))
            if isfloat:
                better = aten.logical_or(better, aten.isnan(v))
            take = aten.logical_and(valid, better)
            best = aten.where.self(take, v, best)
            idx = aten.where.self(take, flat, idx)
        if tuple(idx.shape) != tuple(best.shape):
            idx = aten.clone(aten.expand(idx, list(best.shape)))
        return best, idx
    return decomp


_POOL_ARGS = ("Tensor self, int[{n}] kernel_size, int[{n}] stride=[], int[{n}] padding=0, "
              "int[{n}] dilation=1, bool ceil_mode=False")
max_pool2d_with_indices = defop(
    "max_pool2d_with_indices(" + _POOL_ARGS.format(n=2) + ") -> (Tensor, Tensor)", tags=CORE,
    meta=_max_pool_meta(2), decomposition=_max_pool_decomp(2), explicit=True)
max_pool3d_with_indices = defop(
    "max_pool3d_with_indices(" + _POOL_ARGS.format(n=3) + ") -> (Tensor, Tensor)", tags=CORE,
    meta=_max_pool_meta(3), decomposition=_max_pool_decomp(3), explicit=True)


def _max_pool_backward_meta(grad_output, self, kernel_size, stride, padding, dilation,
                            ceil_mode, indices):
    if tuple(grad_output.shape) != tuple(indices.shape):
        raise RuntimeError(f"max_pool2d_with_indices_backward: grad_output of shape "
                           f"{list(grad_output.shape)} does not match indices of shape "
                           f"{list(indices.shape)}")
    return _same(self)


def _max_pool_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                       indices, nd=2):
    _max_pool_backward_meta(grad_output, self, kernel_size, stride, padding, dilation,
                            ceil_mode, indices)
    lead = list(self.shape[:self.ndim - nd])
    plane = math.prod(self.shape[self.ndim - nd:])
    n_out = math.prod(grad_output.shape[self.ndim - nd:])
    g = aten.reshape(grad_output, lead + [n_out])
    i = aten.reshape(indices, lead + [n_out])
    acc = _full(lead + [plane], 0, grad_output.dtype, grad_output.device)
    return aten.view(aten.scatter_add(acc, len(lead), i, g), list(self.shape))


max_pool2d_with_indices_backward = defop(
    "max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
    "int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor",
    tags=CORE, meta=_max_pool_backward_meta, decomposition=_max_pool_backward, explicit=True)


# The values' gradient goes to the input element each window picked: only the indices
# output is saved (``result1``, as PyTorch does), so the values may be changed in place
# after, as ``MaxPool2d`` followed by ``ReLU(inplace=True)`` does.

@derivative(max_pool2d_with_indices)
def _max_pool2d_derivative(grad, self, kernel_size, stride, padding, dilation, ceil_mode,
                           result1):
    return aten.max_pool2d_with_indices_backward(grad, self, kernel_size, stride, padding,
                                                 dilation, ceil_mode, result1)


@derivative(max_pool3d_with_indices)
def _max_pool3d_derivative(grad, self, kernel_size, stride, padding, dilation, ceil_mode,
                           result1):
    return _max_pool_backward(grad, self, kernel_size, stride, padding, dilation, ceil_mode,
                              result1, nd=3)


def _max_pool_nd(nd, with_indices=False):
    name = f"max_pool{nd}d"

    def decomp(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        if nd == 1:
            if self.ndim not in (2, 3):
                raise RuntimeError(f"max_pool1d() Expected 2D or 3D input tensor, but got "
                                   f"{list(self.shape)}")
            k = _pool_ints(name, "kernel_size", kernel_size, 1)
            s = _pool_ints(name, "stride", stride, 1, allow_empty=True) or k
            p = _pool_ints(name, "padding", padding, 1)
            d = _pool_ints(name, "dilation", dilation, 1)
            x = aten.unsqueeze(self, -2)
            v, i = aten.max_pool2d_with_indices(x, [1, k[0]], [1, s[0]], [0, p[0]],
                                                [1, d[0]], ceil_mode)
            v, i = aten.squeeze.dim(v, -2), aten.squeeze.dim(i, -2)
        else:
            op = aten.max_pool2d_with_indices if nd == 2 else aten.max_pool3d_with_indices
            v, i = op(self, kernel_size, stride, padding, dilation, ceil_mode)
        return (v, i) if with_indices else v
    return decomp


max_pool1d = defop("max_pool1d(" + _POOL_ARGS.format(n=1) + ") -> Tensor",
                   decomposition=_max_pool_nd(1))
max_pool1d_with_indices = defop(
    "max_pool1d_with_indices(" + _POOL_ARGS.format(n=1) + ") -> (Tensor, Tensor)",
    decomposition=_max_pool_nd(1, True))
max_pool2d = defop("max_pool2d(" + _POOL_ARGS.format(n=2) + ") -> Tensor",
                   decomposition=_max_pool_nd(2))
max_pool3d = defop("max_pool3d(" + _POOL_ARGS.format(n=3) + ") -> Tensor",
                   decomposition=_max_pool_nd(3))


def _avg_setup(name, self, nd, kernel_size, stride, padding, ceil_mode, divisor_override):
    if self.dtype is D.bool or self.dtype.is_complex or \
            (not self.dtype.is_floating_point and self.dtype is not D.int64):
        raise _not_implemented(name, self.dtype)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return _pool_setup(name, self, nd, kernel_size, stride, padding, 1, ceil_mode)


def _avg_meta(nd):
    def meta(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
             divisor_override=None):
        out = _avg_setup(f"avg_pool{nd}d", self, nd, kernel_size, stride, padding, ceil_mode,
                         divisor_override)[4]
        return TensorMeta(tuple(self.shape[:self.ndim - nd]) + out, self.dtype)
    return meta


def _avg_divisor(sp, k, s, p, out, count_include_pad, divisor_override, dtype, device):
    """The per-window divisor, broadcastable over the output's spatial dims."""
    nd = len(sp)
    if divisor_override is not None:
        return divisor_override
    div = None
    for i in range(nd):
        start = _arange(out[i], D.int64, device) * s[i] - p[i]
        end = aten.clamp(start + k[i], None, sp[i] + p[i])
        if count_include_pad:
            n = end - start
        else:
            n = aten.clamp(end, None, sp[i]) - aten.clamp(start, 0, None)
        view = [1] * nd
        view[i] = out[i]
        n = aten.view(n, view)
        div = n if div is None else div * n
    return _to(div, dtype)


def _avg_decomp(nd):
    def decomp(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
        k, s, p, _, out = _avg_setup(f"avg_pool{nd}d", self, nd, kernel_size, stride, padding,
                                     ceil_mode, divisor_override)
        lead = self.ndim - nd
        sp = self.shape[lead:]
        isint = not self.dtype.is_floating_point
        x = _up(self)
        pad = []
        for i in reversed(range(nd)):
            hi = max(0, (out[i] - 1) * s[i] + k[i] - (sp[i] + p[i]))
            pad += [p[i], hi]
        if any(pad):
            x = aten.constant_pad_nd(x, pad, 0)
        total = None
        for _, v in _window_offsets(x, nd, k, s, (1,) * nd, out, lead):
            total = v if total is None else total + v
        div = _avg_divisor(sp, k, s, p, out, count_include_pad, divisor_override, x.dtype,
                           self.device)
        if isint:
            if not isinstance(div, int):
                return aten.div.Tensor_mode(total, div, rounding_mode="trunc")
            return aten.div.Scalar_mode(total, div, rounding_mode="trunc")
        return _to(total / div, self.dtype)
    return decomp


_AVG_ARGS = ("Tensor self, int[{n}] kernel_size, int[{n}] stride=[], int[{n}] padding=0, "
             "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None")
avg_pool2d = defop("avg_pool2d(" + _AVG_ARGS.format(n=2) + ") -> Tensor", tags=CORE,
                   meta=_avg_meta(2), decomposition=_avg_decomp(2), explicit=True)
avg_pool3d = defop("avg_pool3d(" + _AVG_ARGS.format(n=3) + ") -> Tensor", tags=CORE,
                   meta=_avg_meta(3), decomposition=_avg_decomp(3), explicit=True)


def _avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
                         count_include_pad, divisor_override, nd=2):
    k, s, p, _, out = _avg_setup("avg_pool2d_backward", self, nd, kernel_size, stride, padding,
                                 ceil_mode, divisor_override)
    lead = list(self.shape[:self.ndim - nd])
    sp = self.shape[self.ndim - nd:]
    if tuple(grad_output.shape[self.ndim - nd:]) != out:
        raise RuntimeError(f"avg_pool2d_backward: expected grad_output of spatial size "
                           f"{list(out)}, but got {list(grad_output.shape)}")
    g = _up(grad_output)
    div = _avg_divisor(sp, k, s, p, out, count_include_pad, divisor_override, g.dtype,
                       self.device)
    g = g / div
    padded = [(o - 1) * ss + kk for o, ss, kk in zip(out, s, k)]
    padded = [max(a, n + 2 * pp) for a, n, pp in zip(padded, sp, p)]
    pstride = [math.prod(padded[i + 1:]) for i in range(nd)]
    dev = self.device
    n_out = math.prod(out)
    idx_parts = []
    for kk in itertools.product(*(range(n) for n in k)):
        flat = None
        for i in range(nd):
            view = [1] * nd
            view[i] = out[i]
            c = aten.view((_arange(out[i], D.int64, dev) * s[i] + kk[i]) * pstride[i], view)
            flat = c if flat is None else flat + c
        idx_parts.append(aten.reshape(aten.expand(flat, list(out)), [n_out]))
    nk = len(idx_parts)
    idx = aten.expand(aten.cat(idx_parts), lead + [nk * n_out])
    vals = aten.reshape(g, lead + [n_out])
    vals = aten.cat([vals] * nk, len(lead))
    acc = _full(lead + [math.prod(padded)], 0, g.dtype, dev)
    acc = aten.view(aten.scatter_add(acc, len(lead), idx, vals), lead + padded)
    for i in range(nd):
        acc = aten.slice.Tensor(acc, len(lead) + i, p[i], p[i] + sp[i])
    return _to(aten.clone(acc), self.dtype)


avg_pool2d_backward = defop(
    "avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
    "int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor",
    tags=CORE, meta=lambda grad_output, self, *a: _same(self),
    decomposition=_avg_pool2d_backward, explicit=True)


@derivative(avg_pool2d)
def _avg_pool2d_derivative(grad, self, kernel_size, stride, padding, ceil_mode,
                           count_include_pad, divisor_override):
    return aten.avg_pool2d_backward(grad, self, kernel_size, stride, padding, ceil_mode,
                                    count_include_pad, divisor_override)


@derivative(avg_pool3d)
def _avg_pool3d_derivative(grad, self, kernel_size, stride, padding, ceil_mode,
                           count_include_pad, divisor_override):
    return _avg_pool2d_backward(grad, self, kernel_size, stride, padding, ceil_mode,
                                count_include_pad, divisor_override, nd=3)


def _avg_pool1d(self, kernel_size, stride=(), padding=0, ceil_mode=False,
                count_include_pad=True):
    name = "avg_pool1d"
    if self.ndim not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(self.shape)}")
    k = _pool_ints(name, "kernel_size", kernel_size, 1)
    s = _pool_ints(name, "stride", stride, 1, allow_empty=True) or k
    p = _pool_ints(name, "padding", padding, 1)
    out = aten.avg_pool2d(aten.unsqueeze(self, -2), [1, k[0]], [1, s[0]], [0, p[0]], ceil_mode,
                          count_include_pad)
    return aten.squeeze.dim(out, -2)


avg_pool1d = defop("avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], "
                   "int[1] padding=0, bool ceil_mode=False, bool count_include_pad=True) "
                   "-> Tensor", decomposition=_avg_pool1d)


def _adaptive_check(name, self, output_size, nd):
    out = tuple(int(o) for o in ((output_size,) if isinstance(output_size, int)
                                 else output_size))
    if len(out) == 1:
        out = out * nd
    if len(out) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd}")
    # every dim but an optional batch dim must be non-empty
    if self.ndim not in (nd + 1, nd + 2) or any(n == 0 for n in self.shape[-nd - 1:]):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{list(self.shape)}")
    if any(o < 0 for o in out):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal "
                           f"to 0 but received {list(out)}")
    _check_float(self, name)
    return out


def _adaptive_meta(nd):
    name = f"adaptive_avg_pool{nd}d"

    def meta(self, output_size):
        out = _adaptive_check(name, self, output_size, nd)
        return TensorMeta(tuple(self.shape[:self.ndim - nd]) + out, self.dtype)
    return meta


def adaptive_windows(n_in, n_out):
    """Window i of an adaptive pool: [floor(i*in/out), ceil((i+1)*in/out))."""
    return [((i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)) for i in range(n_out)]


def _adaptive_axis(x, dim, n_out):
    """Average ``x`` along ``dim`` over the adaptive windows (exact sums, no 0*inf)."""
    n_in = x.shape[dim]
    if n_in == n_out:
        return x
    if n_in % n_out == 0:
        shape = list(x.shape)
        shape[dim:dim + 1] = [n_out, n_in // n_out]
        return aten.mean.dim(aten.reshape(x, shape), [dim + 1], False)
    dev = x.device
    i = _arange(n_out, D.int64, dev)
    start = aten.div.Scalar_mode(i * n_in, n_out, rounding_mode="floor")
    end = -aten.div.Scalar_mode(-(i + 1) * n_in, n_out, rounding_mode="floor")
    width = max(e - s for s, e in adaptive_windows(n_in, n_out))
    j = aten.unsqueeze(start, 1) + aten.unsqueeze(_arange(width, D.int64, dev), 0)
    inside = aten.lt.Tensor(j, aten.unsqueeze(end, 1))                  # (out, width)
    j = aten.clamp(j, None, n_in - 1)
    g = aten.index_select(x, dim, aten.reshape(j, [n_out * width]))
    shape = list(x.shape)
    shape[dim:dim + 1] = [n_out, width]
    g = aten.reshape(g, shape)
    mview = [1] * len(shape)
    mview[dim], mview[dim + 1] = n_out, width
    g = aten.where.self(aten.view(inside, mview), g, 0)
    cview = [1] * x.ndim
    cview[dim] = n_out
    return aten.sum.dim_IntList(g, [dim + 1], False) / _to(aten.view(end - start, cview), x.dtype)


def _adaptive_decomp(nd):
    name = f"adaptive_avg_pool{nd}d"

    def decomp(self, output_size):
        out = _adaptive_check(name, self, output_size, nd)
        x = _up(self)
        for i in range(nd):
            x = _adaptive_axis(x, self.ndim - nd + i, out[i])
        if x is self:
            x = aten.clone(x)
        return _to(x, self.dtype)
    return decomp


_adaptive_avg_pool2d = defop("_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
                             tags=CORE, meta=_adaptive_meta(2), decomposition=_adaptive_decomp(2),
                             explicit=True)
_adaptive_avg_pool3d = defop("_adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
                             tags=CORE, meta=_adaptive_meta(3), decomposition=_adaptive_decomp(3),
                             explicit=True)


def _adaptive_matrix(n_in, n_out, dtype, device):
    """(n_out, n_in) averaging matrix of the adaptive windows."""
    i = _arange(n_out, D.int64, device)
    start = aten.div.Scalar_mode(i * n_in, n_out, rounding_mode="floor")
    end = -aten.div.Scalar_mode(-(i + 1) * n_in, n_out, rounding_mode="floor")
    j = aten.unsqueeze(_arange(n_in, D.int64, device), 0)
    m = aten.logical_and(aten.ge.Tensor(j, aten.unsqueeze(start, 1)),
                         aten.lt.Tensor(j, aten.unsqueeze(end, 1)))
    return _to(m, dtype) / _to(aten.unsqueeze(end - start, 1), dtype)


def _adaptive_avg_pool2d_backward(grad_output, self, nd=2):
    if grad_output.ndim != self.ndim:
        raise RuntimeError(f"adaptive_avg_pool2d_backward(): Expected grad_output to have the "
                           f"same rank as self, but got {list(grad_output.shape)} and "
                           f"{list(self.shape)}")
    g = _up(grad_output)
    for i in range(nd):
        dim = self.ndim - nd + i
        m = _adaptive_matrix(self.shape[dim], grad_output.shape[dim], g.dtype, g.device)
        # contract the output axis ``dim`` of g with m's rows: result axis is the input axis
        perm = [a for a in range(g.ndim) if a != dim] + [dim]
        gt = aten.permute(g, perm)
        rest = list(gt.shape[:-1])
        r = aten.mm(aten.reshape(gt, [math.prod(rest), gt.shape[-1]]), m)
        r = aten.reshape(r, rest + [m.shape[1]])
        inv = [perm.index(a) for a in range(g.ndim)]
        g = aten.permute(r, inv)
    return _to(aten.clone(g), self.dtype)


_adaptive_avg_pool2d_backward_op = defop(
    "_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor", tags=CORE,
    meta=lambda grad_output, self: _same(self), decomposition=_adaptive_avg_pool2d_backward,
    explicit=True)


@derivative(_adaptive_avg_pool2d)
def _adaptive_avg_pool2d_derivative(grad, self):
    return aten._adaptive_avg_pool2d_backward(grad, self)


@derivative(_adaptive_avg_pool3d)
def _adaptive_avg_pool3d_derivative(grad, self):
    return _adaptive_avg_pool2d_backward(grad, self, nd=3)


def _adaptive_avg_pool1d(self, output_size):
    out = _pool_ints("adaptive_avg_pool1d", "output_size", output_size, 1)
    if self.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got "
                           f"{list(self.shape)}")
    r = aten._adaptive_avg_pool2d(aten.unsqueeze(self, -2), [1, out[0]])
    return aten.squeeze.dim(r, -2)


adaptive_avg_pool1d = defop("adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor",
                            decomposition=_adaptive_avg_pool1d)
adaptive_avg_pool2d = defop("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
                            decomposition=lambda self, output_size:
                                aten._adaptive_avg_pool2d(self, output_size))
adaptive_avg_pool3d = defop("adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
                            decomposition=lambda self, output_size:
                                aten._adaptive_avg_pool3d(self, output_size))
