"""OpInfo entries for adaptive max pooling, max unpooling and fractional max pooling
(fnx/ir/aten/nn/pooling_max.py), against direct NumPy loops."""
from __future__ import annotations

import numpy as np

from ....core import dtype as D
from ....ops import aten
from ...database import ErrorInput, OpInfo, SampleInput, register
from ._common import F, INF, NAN, _arr, _floatref, _idx, _np, _t
from .pooling import np_max_pool


def _window_max(x, plane_idx):
    """PyTorch's scan over a window (row-major): a strictly greater value or a NaN takes
    over; the first element starts it.  ``x``: the window's values, ``plane_idx``: their
    flat plane indices."""
    best, bi = x[0], plane_idx[0]
    for v, i in zip(x[1:], plane_idx[1:]):
        if v > best or np.isnan(v):
            best, bi = v, i
    return best, bi


def _pool_windows(x, nd, windows):
    """Values and indices of max pooling ``x`` over per-dim ``windows(lead, dim)``:
    a list of (start, end) per output position along that dim."""
    sp = x.shape[-nd:]
    lead = x.shape[:-nd]
    flat_ids = np.arange(int(np.prod(sp))).reshape(sp)
    out = None
    for li in np.ndindex(*lead):
        wins = [windows(li, d) for d in range(nd)]
        if out is None:
            shape = lead + tuple(len(w) for w in wins)
            vals, idx = np.zeros(shape, x.dtype), np.zeros(shape, np.int64)
            out = vals, idx
        for pos in np.ndindex(*(len(w) for w in wins)):
            sl = tuple(slice(*wins[d][pos[d]]) for d in range(nd))
            vals[li + pos], idx[li + pos] = _window_max(x[li][sl].ravel(),
                                                        flat_ids[sl].ravel())
    return out


def np_adaptive_max(x, out):
    nd = len(out)
    sp = x.shape[-nd:]

    def windows(li, d):
        n, o = sp[d], out[d]
        return [((i * n) // o, -((-(i + 1) * n) // o)) for i in range(o)]
    if 0 in x.shape[:-nd] or 0 in out:
        shape = x.shape[:-nd] + tuple(out)
        return np.zeros(shape, x.dtype), np.zeros(shape, np.int64)
    return _pool_windows(x, nd, windows)


def _adaptive_max_ref(x, output_size):
    return np_adaptive_max(x, [int(o) for o in output_size])


_ADAPTIVE = {1: [((2, 3, 7), [3]), ((3, 8), [5]), ((1, 2, 5), [7]), ((0, 2, 4), [2])],
             2: [((2, 3, 7, 5), [3, 2]), ((3, 6, 4), [4, 4]), ((1, 2, 5, 5), [7, 1]),
                 ((0, 2, 4, 4), [2, 2]), ((1, 2, 3, 3), [0, 2])],
             3: [((2, 2, 5, 4, 3), [2, 3, 2]), ((2, 4, 4, 4), [3, 2, 1])]}


def _adaptive_max_samples(nd):
    def samples(info, device, dtype):
        for i, (shape, out) in enumerate(_ADAPTIVE[nd]):
            yield SampleInput(_t(shape, dtype, device, noncontiguous=(i == 1)), out)
        if nd == 2:     # NaN (the last wins), -inf windows and ties (the first wins)
            x = [[[1.0, NAN, 3.0, NAN], [5.0, 2.0, 5.0, 5.0]],
                 [[-INF, -INF, 2.0, 2.0], [-INF, -INF, INF, 1.0]]]
            yield SampleInput(_arr(x, dtype, device), [1, 3])
            yield SampleInput(_arr(x, dtype, device), [2, 1])
    return samples


def _adaptive_max_errors(nd):
    name = f"adaptive_max_pool{nd}d"

    def errors(info, device):
        f = D.float32
        sp = (4,) * nd
        yield ErrorInput(SampleInput(_t(sp, f, device), [2] * nd), RuntimeError,
                         "Expected 2 to 3 dimensions" if nd == 1 else
                         rf"{name}\(\): Expected {nd + 1}D or {nd + 2}D tensor")
        yield ErrorInput(SampleInput(_t((1, 0) + sp, f, device), [2] * nd), RuntimeError,
                         "Expected input to have non-zero size for non-batch dimensions")
        yield ErrorInput(SampleInput(_t((1, 1) + sp, f, device), [2] * (nd + 1)),
                         RuntimeError, "output_size")
        yield ErrorInput(SampleInput(_t((1, 1) + sp, f, device), [-1] * nd), RuntimeError,
                         "negative dimension")
        yield ErrorInput(SampleInput(_t((1, 1) + sp, D.int64, device), [2] * nd),
                         RuntimeError, "not implemented for 'Long'")
    return errors


# ----------------------------------------------------------------------------- unpool

def np_max_unpool(x, indices, output_size):
    nd = len(output_size)
    lead = x.shape[:-nd]
    plane = int(np.prod(output_size))
    out = np.zeros(lead + (plane,), x.dtype)
    for li in np.ndindex(*lead):
        for v, i in zip(x[li].ravel(), indices[li].ravel()):
            out[li + (int(i),)] = v
    return out.reshape(lead + tuple(output_size))


def _unpool_ref(x, indices, output_size, stride=None, padding=None):
    return np_max_unpool(x, indices, [int(o) for o in output_size])


_UNPOOL = {
    # input shape, kernel (= stride: distinct indices), padding, output size
    2: [((2, 3, 6, 7), [2, 2], [0, 0], [6, 7]), ((3, 5, 4), [2, 2], [1, 0], [5, 4]),
        ((1, 2, 6, 5), [3, 2], [0, 0], [7, 6]), ((0, 2, 4, 4), [2, 2], [0, 0], [4, 4])],
    3: [((1, 2, 4, 5, 4), [2, 2, 2], [0, 1, 0], [4, 5, 4]), ((2, 4, 4, 4), [2, 2, 2],
                                                              [0, 0, 0], [5, 4, 4])],
}


def _unpool_samples(nd):
    def samples(info, device, dtype):
        for i, (shape, k, p, out) in enumerate(_UNPOOL[nd]):
            x = _np(_t(shape, dtype, device))
            v, idx = np_max_pool(x, k, k, p, [1] * nd, False)
            # re-index into the (possibly larger) output planes PyTorch's output_size names
            rows = np.unravel_index(idx, shape[-nd:])
            idx = np.ravel_multi_index(rows, out)
            vals = _arr(v, dtype, device)
            if i == 1:
                vals = _t(v.shape, dtype, device, noncontiguous=True)
            extra = (k, p) if nd == 3 else ()
            yield SampleInput(vals, _idx(idx, device), out, *extra)
    return samples


def _unpool_errors(nd):
    def errors(info, device):
        f = D.float32
        sp = (2,) * nd
        x = _t((1, 2) + sp, f, device)
        i = _idx(np.zeros((1, 2) + sp), device)
        extra = ([2] * nd, [0] * nd) if nd == 3 else ()
        out = [4] * nd
        yield ErrorInput(SampleInput(x, _idx(np.zeros((1, 2) + sp), device, D.int32), out,
                                     *extra), RuntimeError,
                         "elements in indices should be type int64")
        yield ErrorInput(SampleInput(x, i, [4] * (nd - 1), *extra), RuntimeError,
                         "There should be exactly")
        yield ErrorInput(SampleInput(_t(sp, f, device), _idx(np.zeros(sp), device), out,
                                     *extra), RuntimeError,
                         f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d")
        yield ErrorInput(SampleInput(x, _idx(np.zeros((1, 1) + sp), device), out, *extra),
                         RuntimeError, "Expected shape of indices to be same as that of the "
                                       "input tensor")
        yield ErrorInput(SampleInput(x, _idx(np.full((1, 2) + sp, 4 ** nd), device), out,
                                     *extra), RuntimeError,
                         f"Found an invalid max index: {4 ** nd} \\(output volumes are of "
                         f"size {'x'.join(['4'] * nd)}\\)", meta=False)
        yield ErrorInput(SampleInput(x, _idx(np.full((1, 2) + sp, -1), device), out, *extra),
                         RuntimeError, "Found an invalid max index: -1", meta=False)
        yield ErrorInput(SampleInput(_t((1, 2) + sp, D.int64, device), i, out, *extra),
                         RuntimeError, "not implemented for 'Long'")
        if nd == 3:
            yield ErrorInput(SampleInput(x, i, out, [0, 2, 2], [0, 0, 0]), RuntimeError,
                             "strides should be greater than zero")
    return errors


# ----------------------------------------------------------------------------- fractional

def np_fractional_starts(u, n, o, k):
    """PyTorch's interval formula, in the samples' dtype: alpha = (n-k)/(o-1),
    start_i = trunc((i+u)*alpha) - trunc(u*alpha), the last start n-k."""
    if o == 0:
        return []
    t = u.dtype.type
    seq = [n - k] * o
    if o > 1:
        alpha = t(n - k) / t(o - 1)
        for i in range(o - 1):
            seq[i] = int(t(t(i) + u) * alpha) - int(u * alpha)
    return seq


def _fractional_ref(x, kernel_size, output_size, random_samples):
    nd = len(kernel_size)
    k, out = [int(v) for v in kernel_size], [int(v) for v in output_size]
    batched = x.ndim == nd + 2
    xb = x if batched else x[None]
    shape = xb.shape[:2] + tuple(out)
    if 0 in shape:
        v, i = np.zeros(shape, x.dtype), np.zeros(shape, np.int64)
    else:
        # sample 0 drives the last dim in 2-D, the first in 3-D
        order = (1, 0) if nd == 2 else (0, 1, 2)

        def windows(li, d):
            u = random_samples[li[0], li[1], order[d]]
            return [(s, s + k[d]) for s in
                    np_fractional_starts(u, xb.shape[2 + d], out[d], k[d])]
        v, i = _pool_windows(xb, nd, windows)
    return (v, i) if batched else (v[0], i[0])


_FRACTIONAL = {
    # input shape, kernel, output size
    2: [((2, 3, 7, 8), [2, 2], [4, 5]), ((3, 9, 6), [3, 2], [5, 5]),
        ((1, 2, 5, 5), [2, 3], [1, 3]), ((2, 2, 6, 6), [2, 2], [5, 5]),
        ((0, 2, 4, 4), [2, 2], [2, 2])],
    3: [((2, 2, 5, 6, 7), [2, 2, 2], [3, 4, 5]), ((2, 4, 5, 6), [1, 2, 3], [2, 3, 1])],
}


def _fractional_samples(nd):
    def samples(info, device, dtype):
        for i, (shape, k, out) in enumerate(_FRACTIONAL[nd]):
            n = 1 if len(shape) == nd + 1 else shape[0]
            u = _t((n, shape[-nd - 1], nd), dtype, device, 0.0, 1.0)
            yield SampleInput(_t(shape, dtype, device, noncontiguous=(i == 1)), k, out, u)
    return samples


def _fractional_errors(nd):
    name = f"fractional_max_pool{nd}d"

    def errors(info, device):
        f = D.float32
        sp = (6,) * nd
        x = _t((2, 3) + sp, f, device)
        u = _t((2, 3, nd), f, device, 0.0, 1.0)
        k, out = [2] * nd, [3] * nd
        yield ErrorInput(SampleInput(x, [2] * (nd - 1), out, u), RuntimeError,
                         f"{name}: kernel_size must either be a single Int or tuple")
        yield ErrorInput(SampleInput(x, k, [3] * (nd + 1), u), RuntimeError,
                         f"{name}: output_size must either be a single Int or tuple")
        yield ErrorInput(SampleInput(_t(sp, f, device), k, out, u), RuntimeError,
                         f"Expected {nd + 1}D or {nd + 2}D tensor")
        yield ErrorInput(SampleInput(_t((2, 0) + sp, f, device), k, out, u), RuntimeError,
                         "Expected input to have non-zero size for non-batch dimensions")
        yield ErrorInput(SampleInput(x, [6] + [2] * (nd - 1), out, u), RuntimeError,
                         "too large relative to input")
        yield ErrorInput(SampleInput(x, k, out, u[:1]), RuntimeError,
                         r"Expect _random_samples.size\(0\) no less then input batch size")
        yield ErrorInput(SampleInput(x, k, out, _t((2, 3, nd + 1), f, device, 0.0, 1.0)),
                         RuntimeError, rf"Expect _random_samples.size\(2\) equals to {nd}")
        yield ErrorInput(SampleInput(x, k, out, u.double()), RuntimeError,
                         "Expect _random_samples to have the same dtype as input")
        yield ErrorInput(SampleInput(x.long(), k, out, u.long()), RuntimeError,
                         "not implemented for 'Long'")
    return errors


register(
    OpInfo(aten.adaptive_max_pool1d.default, _floatref(_adaptive_max_ref), F,
           _adaptive_max_samples(1), error_inputs=_adaptive_max_errors(1)),
    OpInfo(aten.adaptive_max_pool2d.default, _floatref(_adaptive_max_ref), F,
           _adaptive_max_samples(2), error_inputs=_adaptive_max_errors(2)),
    OpInfo(aten.adaptive_max_pool3d.default, _floatref(_adaptive_max_ref), F,
           _adaptive_max_samples(3), error_inputs=_adaptive_max_errors(3)),
    OpInfo(aten.max_unpool2d.default, _floatref(_unpool_ref), F, _unpool_samples(2),
           error_inputs=_unpool_errors(2)),
    OpInfo(aten.max_unpool3d.default, _floatref(_unpool_ref), F, _unpool_samples(3),
           error_inputs=_unpool_errors(3)),
    OpInfo(aten.fractional_max_pool2d.default, _fractional_ref, F, _fractional_samples(2),
           error_inputs=_fractional_errors(2)),
    OpInfo(aten.fractional_max_pool3d.default, _fractional_ref, F, _fractional_samples(3),
           error_inputs=_fractional_errors(3)),
)
