"""CPU kernels of the neural-network ops that have a direct kernel.

Every op here also has a decomposition (fnx/ir/aten/nn/) that other backends run and
the tests compare against; these kernels exist because the decomposition is slow in
eager (convolution as many small ops, max pooling as a loop of dispatched selects) or
because the op is hot (softmax, and nll_loss with its backward: every classifier's
cross_entropy).  Validation is the op's meta function, so the errors
are the same on every path.
"""
from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...core import dtype as D
from ...ir.aten.nn import activation, conv, fft, loss, pooling
from ...ir.dims import wrap_dim
from ...ir.prims.assertions import range_error
from ._core import data, kernel, wrap

_HALF = (D.float16, D.bfloat16)


def _compute(a, dtype):
    """NumPy operand in the dtype math runs in (half types in float32)."""
    return a.astype(np.float32) if dtype in _HALF else a


# ----------------------------------------------------------------------------- softmax

def _softmax_np(x, dim, log):
    if x.ndim == 0:
        x = x.reshape(1)
        return _softmax_np(x, 0, log).reshape(())
    if x.shape[dim] == 0:
        return x.copy()
    with np.errstate(invalid="ignore", over="ignore"):
        shifted = x - np.max(x, axis=dim, keepdims=True)
        e = np.exp(shifted)
        s = np.sum(e, axis=dim, keepdims=True)
        return shifted - np.log(s) if log else e / s


def _softmax_kernel(op, log):
    @kernel(op)
    def k(ks, self, dim, half_to_float):
        m = op.meta(self, dim, half_to_float)
        x = _compute(data(self, op.name), self._dtype)
        out = _softmax_np(x, wrap_dim(dim, x.ndim) if x.ndim else 0, log)
        return wrap(np.asarray(out).astype(m.dtype.numpy, copy=False), m.dtype)
    return k


_softmax_kernel(activation._softmax, False)
_softmax_kernel(activation._log_softmax, True)


# ----------------------------------------------------------------------------- convolution

def conv_general_np(x, w, strides, pad_lo, pad_hi, lhs_dil, rhs_dil, groups):
    """lax.conv_general_dilated in NumPy: x (N, C, *S), w (O, C/groups, *K)."""
    nd = x.ndim - 2
    if any(d > 1 for d in lhs_dil):
        shape = x.shape[:2] + tuple((s - 1) * d + 1 if s else 0
                                    for s, d in zip(x.shape[2:], lhs_dil))
        z = np.zeros(shape, x.dtype)
        z[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in lhs_dil)] = x
        x = z
    x = np.pad(x, [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0))
                                      for lo, hi in zip(pad_lo, pad_hi)])
    crop = tuple(slice(max(-lo, 0), x.shape[2 + i] - max(-hi, 0))
                 for i, (lo, hi) in enumerate(zip(pad_lo, pad_hi)))
    x = x[(slice(None), slice(None)) + crop]
    k = w.shape[2:]
    eff = tuple(d * (kk - 1) + 1 for d, kk in zip(rhs_dil, k))
    out = tuple(max(0, (s - e) // st + 1) if s >= e else 0
                for s, e, st in zip(x.shape[2:], eff, strides))
    n, c = x.shape[:2]
    o = w.shape[0]
    if 0 in out or n == 0 or o == 0:
        return np.zeros((n, o) + out, x.dtype)
    axes = tuple(range(2, 2 + nd))
    win = sliding_window_view(x, eff, axis=axes)       # (N, C, *S', *eff)
    sel = tuple(slice(0, (ou - 1) * st + 1, st) for ou, st in zip(out, strides)) + \
        tuple(slice(None, None, d) for d in rhs_dil)
    win = win[(slice(None), slice(None)) + sel]        # (N, C, *out, *K)
    cg, og = c // groups, o // groups
    kprod = int(np.prod(k))
    p = int(np.prod(out))
    win = win.reshape((n, groups, cg) + out + k)
    # (N, G, *out, Cg, *K) -> rows of the im2col matrix
    perm = (0, 1) + tuple(range(3, 3 + nd)) + (2,) + tuple(range(3 + nd, 3 + 2 * nd))
    cols = np.ascontiguousarray(win.transpose(perm)).reshape(n, groups, p, cg * kprod)
    wm = w.reshape(groups, og, cg * kprod).transpose(0, 2, 1)     # (G, Cg*K, Og)
    r = np.matmul(cols, wm)                                       # (N, G, P, Og)
    return np.ascontiguousarray(r.transpose(0, 1, 3, 2)).reshape((n, o) + out)


@kernel(conv.convolution)
def _convolution(ks, input, weight, bias, stride, padding, dilation, transposed,
                 output_padding, groups):
    m = conv._conv_meta(input, weight, bias, stride, padding, dilation, transposed,
                        output_padding, groups)
    x = _compute(data(input, "convolution"), input._dtype)
    w = _compute(data(weight, "convolution"), weight._dtype)
    nd = w.ndim - 2
    s, p, d = (conv._ints("convolution", "", v, nd) for v in (stride, padding, dilation))
    if transposed:
        op = conv._ints("convolution", "", output_padding, nd)
        cin, cog = w.shape[:2]
        k = w.shape[2:]
        w = w.reshape((groups, cin // groups, cog) + k).swapaxes(1, 2)
        w = w.reshape((groups * cog, cin // groups) + k)[(slice(None), slice(None)) +
                                                          (slice(None, None, -1),) * nd]
        lo = [dd * (kk - 1) - pp for dd, kk, pp in zip(d, k, p)]
        hi = [a + b for a, b in zip(lo, op)]
        out = conv_general_np(x, w, (1,) * nd, lo, hi, s, d, groups)
    else:
        out = conv_general_np(x, w, s, p, p, (1,) * nd, d, groups)
    if bias is not None:
        b = _compute(data(bias, "convolution"), bias._dtype)
        out = out + b.reshape((1, -1) + (1,) * nd)
    assert out.shape == m.shape, (out.shape, m.shape)
    return wrap(out.astype(m.dtype.numpy, copy=False), m.dtype)


# ----------------------------------------------------------------------------- max pooling

def _max_pool_kernel(op, nd):
    @kernel(op)
    def k(ks, self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        mv, _ = op.meta(self, kernel_size, stride, padding, dilation, ceil_mode)
        kk, s, p, d, out = pooling._pool_setup(f"max_pool{nd}d", self, nd, kernel_size, stride,
                                               padding, dilation, ceil_mode)
        x = data(self, op.name)
        lead = x.shape[:x.ndim - nd]
        sp = x.shape[x.ndim - nd:]
        # (bfloat16 is NumPy kind "V", not "f": ml_dtypes)
        isfloat = x.dtype.kind == "f" or x.dtype == D.bfloat16.numpy
        fill = -np.inf if isfloat else np.iinfo(x.dtype).min
        hi = [max(0, (o - 1) * ss + dd * (k_ - 1) + 1 - (n + pp))
              for o, ss, dd, k_, n, pp in zip(out, s, d, kk, sp, p)]
        xp = np.pad(x, [(0, 0)] * len(lead) + list(zip(p, hi)), constant_values=fill)
        grids = np.meshgrid(*(np.arange(o) * ss - pp for o, ss, pp in zip(out, s, p)),
                            indexing="ij")
        instride = [int(np.prod(sp[i + 1:])) for i in range(nd)]
        best = np.full(lead + out, fill, x.dtype)
        idx = np.full(lead + out, -1, np.int64)
        for off in itertools.product(*(range(n) for n in kk)):
            sl = tuple(slice(o_ * dd, o_ * dd + ss * (ou - 1) + 1, ss)
                       for o_, dd, ss, ou in zip(off, d, s, out))
            v = xp[(Ellipsis,) + sl]
            coords = [g + o_ * dd for g, o_, dd in zip(grids, off, d)]
            valid = np.logical_and.reduce([(c >= 0) & (c < n) for c, n in zip(coords, sp)])
            flat = sum(c * st for c, st in zip(coords, instride))
            better = (v > best) | (idx < 0)
            if isfloat:
                better |= np.isnan(v)
            take = valid & better
            best = np.where(take, v, best)
            idx = np.where(take, flat, idx)
        return wrap(best, mv.dtype), wrap(idx, D.int64)
    return k


_max_pool_kernel(pooling.max_pool2d_with_indices, 2)
_max_pool_kernel(pooling.max_pool3d_with_indices, 3)


# ----------------------------------------------------------------------------- fft

def _fft_scale(out, shape, dims, normalization):
    n = int(np.prod([shape[d] for d in dims])) if dims else 1
    if normalization == 1:
        out = out / np.sqrt(n)
    elif normalization == 2:
        out = out / n
    return out


@kernel(fft._fft_r2c_op)
def _fft_r2c(ks, self, dim, normalization, onesided):
    m = fft._fft_r2c_meta(self, dim, normalization, onesided)
    x = _compute(data(self, "_fft_r2c"), self._dtype)
    dims = fft._fft_dims("_fft_r2c", self, dim)
    if not dims:
        out = x.astype(m.dtype.numpy)
    elif onesided:
        out = np.fft.rfftn(x, axes=dims)
    else:
        out = np.fft.fftn(x, axes=dims)
    out = _fft_scale(out, x.shape, dims, normalization)
    return wrap(np.asarray(out).astype(m.dtype.numpy, copy=False), m.dtype)


@kernel(fft._fft_c2r_op)
def _fft_c2r(ks, self, dim, normalization, last_dim_size):
    m = fft._fft_c2r_meta(self, dim, normalization, last_dim_size)
    x = data(self, "_fft_c2r")
    dims = fft._fft_dims("_fft_c2r", self, dim)
    sizes = [x.shape[d] for d in dims[:-1]] + [last_dim_size]
    # unnormalized inverse: NumPy's irfftn divides by n, so multiply it back
    out = np.fft.irfftn(x, s=sizes, axes=dims) * float(np.prod(sizes))
    out = _fft_scale(out, m.shape, dims, normalization)
    return wrap(np.asarray(out).astype(m.dtype.numpy, copy=False), m.dtype)


# ----------------------------------------------------------------------------- nll_loss
# (float32/float64 here; half types take the decomposition, whose sums accumulate in
# float32)

def _nll_rows(self, target, ignore_index, op):
    """(the input as an (n, c) array, which targets are kept, and the targets with the
    ignored ones at 0), the targets checked to be classes."""
    x = data(self, op)
    x = x.reshape(1, x.shape[0]) if x.ndim == 1 else x
    t = data(target, op).reshape(x.shape[0]).astype(np.int64, copy=False)
    kept = t != ignore_index
    safe = np.where(kept, t, 0)
    bad = (safe < 0) | (safe >= x.shape[1])
    if bad.any():
        raise range_error("IndexError", "Target {} is out of bounds.", int(safe[bad][0]))
    return x, kept, safe


def _nll_weights(weight, kept, safe, dtype, op):
    if weight is None:
        return kept.astype(dtype)
    return np.where(kept, data(weight, op).reshape(-1)[safe], 0).astype(dtype, copy=False)


@kernel(loss.nll_loss_forward)
def _nll_loss_forward(ks, self, target, weight, reduction, ignore_index):
    op = loss.nll_loss_forward
    op.meta(self, target, weight, reduction, ignore_index)       # validation
    if self._dtype not in _NLL_DTYPES:
        return loss._nll_loss_forward(self, target, weight, reduction, ignore_index)
    x, kept, safe = _nll_rows(self, target, ignore_index, op.name)
    dt = x.dtype
    w = _nll_weights(weight, kept, safe, dt, op.name)
    losses = -x[np.arange(x.shape[0]), safe] * w
    total = np.sum(w, dtype=dt)
    if reduction == 0:
        if self.ndim == 2:
            return wrap(losses, self._dtype), wrap(np.zeros((), dt), self._dtype)
        return wrap(losses.reshape(()), self._dtype), wrap(np.asarray(total), self._dtype)
    s = np.sum(losses, dtype=dt)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = s if reduction == 2 else s / total
    return wrap(np.asarray(out, dt), self._dtype), wrap(np.asarray(total), self._dtype)


@kernel(loss.nll_loss_backward)
def _nll_loss_backward(ks, grad_output, self, target, weight, reduction, ignore_index,
                       total_weight):
    op = loss.nll_loss_backward
    m = op.meta(grad_output, self, target, weight, reduction, ignore_index, total_weight)
    if self._dtype not in _NLL_DTYPES:
        return loss._nll_loss_backward(grad_output, self, target, weight, reduction,
                                       ignore_index, total_weight)
    x, kept, safe = _nll_rows(self, target, ignore_index, op.name)
    dt = x.dtype
    w = _nll_weights(weight, kept, safe, dt, op.name)
    g = data(grad_output, op.name).astype(dt, copy=False).reshape(-1 if reduction == 0 else ())
    with np.errstate(invalid="ignore", divide="ignore"):
        if reduction == 1:
            g = g / data(total_weight, op.name).astype(dt, copy=False).reshape(())
        coef = np.broadcast_to(-(g * w), kept.shape)
    out = np.zeros(x.shape, dt)
    rows = np.flatnonzero(kept)
    out[rows, safe[rows]] = coef[rows]
    return wrap(out.reshape(m.shape), m.dtype)


_NLL_DTYPES = (D.float32, D.float64)
