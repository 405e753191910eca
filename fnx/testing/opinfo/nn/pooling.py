"""OpInfo entries for the pooling ops (fnx/ir/aten/nn/pooling.py)."""
from __future__ import annotations

import numpy as np

from ....core import dtype as D
from ....ops import aten
from ...database import ErrorInput, OpInfo, SampleInput, register
from ._common import F, FI, INF, NAN, TOLS, _arr, _floatref, _idx, _np, _per_dim, _t


def np_pool_size(n, k, p, s, d, ceil_mode):
    eff = d * (k - 1) + 1
    if ceil_mode:
        out = -(-(n + 2 * p - eff) // s) + 1
        if (out - 1) * s >= n + p:         # the last window must start inside
            out -= 1
        return out
    return (n + 2 * p - eff) // s + 1


def np_max_pool(x, k, s, p, d, ceil_mode):
    """PyTorch's max pool: the first valid element, replaced by a strictly greater one or
    by NaN (so the last NaN's index wins)."""
    nd = len(k)
    sp_ = x.shape[-nd:]
    out = [np_pool_size(n, kk, pp, ss, dd, ceil_mode)
           for n, kk, pp, ss, dd in zip(sp_, k, p, s, d)]
    lead = x.shape[:-nd]
    vals = np.zeros(lead + tuple(out), x.dtype)
    idx = np.zeros(lead + tuple(out), np.int64)
    for li in np.ndindex(*lead):
        for pos in np.ndindex(*out):
            best, bi = None, None
            for kk in np.ndindex(*k):
                c = [pos[i] * s[i] - p[i] + kk[i] * d[i] for i in range(nd)]
                if not all(0 <= c[i] < sp_[i] for i in range(nd)):
                    continue
                v = x[li + tuple(c)]
                if best is None or v > best or np.isnan(v):
                    best, bi = v, int(np.ravel_multi_index(c, sp_))
            vals[li + pos], idx[li + pos] = best, bi
    return vals, idx


def _pool_args(nd, kernel_size, stride=(), padding=0, dilation=1):
    k = _per_dim(kernel_size, nd)
    s = _per_dim(stride, nd) if (isinstance(stride, int) or len(stride)) else k
    return k, s, _per_dim(padding, nd), _per_dim(dilation, nd)


def _max_pool_ref(nd, values_only=False):
    def ref(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        k, s, p, d = _pool_args(nd, kernel_size, stride, padding, dilation)
        v, i = np_max_pool(x, k, s, p, d, ceil_mode)
        return v if values_only else (v, i)
    return ref


MAXPOOL2D = [
    # input shape, kernel, stride, padding, dilation, ceil_mode
    ((2, 3, 6, 7), [2, 2], [], [0, 0], [1, 1], False),
    ((1, 2, 7, 6), [3, 3], [2, 2], [1, 1], [1, 1], True),
    ((2, 5, 7), [2, 3], [1, 2], [1, 0], [2, 1], False),         # unbatched
    ((0, 2, 4, 4), [2], [], [0], [1], False),
]
MAXPOOL3D = [
    ((1, 2, 4, 5, 3), [2, 2, 2], [1, 2, 1], [1, 0, 1], [1, 1, 2], True),
    ((2, 3, 3, 3), [2], [], [0], [1], False),
]
MAXPOOL1D = [((2, 3, 9), [3], [2], [1], [2], False), ((3, 8), [2], [], [0], [1], True),
             ((1, 2, 7), [3], [3], [1], [1], True)]
POOL_SPECIAL = [[[[1.0, NAN, 3.0, NAN], [5.0, 2.0, 5.0, 5.0]],
                 [[-INF, -INF, 2.0, 2.0], [-INF, -INF, INF, 1.0]]]]


def _pool_t(shape, dtype, device, **kw):
    return _t(shape, dtype, device, **kw) if dtype.is_floating_point else \
        _t(shape, dtype, device, -4, 4, **kw)      # ties among few integers


def _max_pool_samples(cases, nd, special=False):
    def samples(info, device, dtype):
        for i, (shape, k, s, p, d, ceil) in enumerate(cases):
            yield SampleInput(_pool_t(shape, dtype, device, noncontiguous=(i == 1)), k, s, p,
                              d, ceil)
        if special and dtype.is_floating_point:      # NaN, -inf and ties, edge windows
            yield SampleInput(_arr(POOL_SPECIAL, dtype, device), [2, 2], [1, 1], [1, 1])
    return samples


def _max_pool_errors(nd, name):
    def errors(info, device):
        f = D.float32
        sp = (4,) * nd
        x = _t((1, 1) + sp, f, device)
        yield ErrorInput(SampleInput(_t(sp, f, device), [2] * nd), RuntimeError,
                         rf"Expected {nd + 1}D or {nd + 2}D|Expected 2D or 3D")
        yield ErrorInput(SampleInput(_t((1, 0) + sp, f, device), [2] * nd), RuntimeError,
                         "Expected")
        yield ErrorInput(SampleInput(x, [2] * nd, [2] * nd, [2] * nd), RuntimeError,
                         "pad should be smaller than or equal to half of kernel size")
        yield ErrorInput(SampleInput(_t((1, 1) + (2,) * nd, f, device), [3] * nd),
                         RuntimeError, "Output size is too small")
        yield ErrorInput(SampleInput(x, [2] * (nd + 1)), RuntimeError,
                         f"{name}: kernel_size must either be a single int, or a tuple")
        yield ErrorInput(SampleInput(x, [2] * nd, [0] * nd), RuntimeError,
                         "stride should be greater than zero")
        yield ErrorInput(SampleInput(_t((1, 1) + sp, D.bool, device), [2] * nd), RuntimeError,
                         "not implemented for 'Bool'")
    return errors


def _max_pool_backward_ref(g, x, kernel_size, stride, padding, dilation, ceil_mode, indices):
    nd = 2
    lead = x.shape[:-nd]
    plane = int(np.prod(x.shape[-nd:]))
    out = np.zeros(lead + (plane,), g.dtype)
    for li in np.ndindex(*lead):
        np.add.at(out[li], indices[li].ravel(), g[li].ravel())
    return out.reshape(x.shape)


def _max_pool_backward_samples(info, device, dtype):
    for shape, k, s, p, d, ceil in MAXPOOL2D[:3]:
        x = _t(shape, dtype, device)
        kk, ss, pp, dd = _pool_args(2, k, s, p, d)
        v, i = np_max_pool(_np(x), kk, ss, pp, dd, ceil)
        yield SampleInput(_t(v.shape, dtype, device), x, k, s or k, p, d, ceil,
                          _idx(i, device))


def _max_pool_backward_errors(info, device):
    x = _t((1, 1, 4, 4), D.float32, device)
    yield ErrorInput(SampleInput(_t((1, 1, 2, 2), D.float32, device), x, [2, 2], [2, 2],
                                 [0, 0], [1, 1], False, _idx(np.zeros((1, 1, 3, 3)), device)),
                     RuntimeError, "does not match indices of shape")


def np_avg_pool(x, k, s, p, ceil_mode, count_include_pad, divisor_override):
    nd = len(k)
    sp_ = x.shape[-nd:]
    out = [np_pool_size(n, kk, pp, ss, 1, ceil_mode) for n, kk, pp, ss in zip(sp_, k, p, s)]
    lead = x.shape[:-nd]
    res = np.zeros(lead + tuple(out), np.float64)
    for pos in np.ndindex(*out):
        start = [pos[i] * s[i] - p[i] for i in range(nd)]
        end = [min(start[i] + k[i], sp_[i] + p[i]) for i in range(nd)]
        pool = np.prod([e - b for b, e in zip(start, end)])
        cs = [max(b, 0) for b in start]
        ce = [min(e, n) for e, n in zip(end, sp_)]
        win = x[(Ellipsis,) + tuple(slice(b, e) for b, e in zip(cs, ce))]
        total = win.sum(axis=tuple(range(len(lead), x.ndim)))
        if divisor_override:
            div = divisor_override
        elif count_include_pad:
            div = pool
        else:
            div = np.prod([e - b for b, e in zip(cs, ce)])
        if x.dtype.kind in "iu":           # C++ integer division truncates
            res[(Ellipsis,) + pos] = np.trunc(total / div)
        else:
            res[(Ellipsis,) + pos] = total / div
    return res.astype(x.dtype)


def _avg_pool_ref(nd):
    def ref(x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
            divisor_override=None):
        k, s, p, _ = _pool_args(nd, kernel_size, stride, padding)
        return np_avg_pool(x, k, s, p, ceil_mode, count_include_pad, divisor_override)
    return _floatref(ref)


AVGPOOL2D = [
    # shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    ((2, 3, 6, 7), [2, 2], [], [0, 0], False, True, None),
    ((1, 2, 6, 6), [3, 3], [2, 2], [1, 1], True, True, None),
    ((2, 6, 6), [3, 3], [2, 2], [1, 1], True, False, None),          # unbatched
    ((1, 2, 5, 4), [3, 2], [2, 1], [1, 1], False, False, 5),
    ((0, 2, 3, 3), [2], [2], [1], True, True, None),
]
AVGPOOL3D = [((1, 2, 5, 4, 6), [2, 3, 2], [2, 1, 3], [1, 1, 0], True, False, None),
             ((2, 3, 3, 3), [2], [], [0], False, True, 3)]


def _avg_pool_samples(cases):
    def samples(info, device, dtype):
        for i, (shape, k, s, p, ceil, cip, div) in enumerate(cases):
            x = _pool_t(shape, dtype, device, noncontiguous=(i == 1))
            if div is None and cip and i % 2 == 0:
                yield SampleInput(x, k, s, p, ceil)
            else:
                yield SampleInput(x, k, s, p, ceil, cip, div)
    return samples


def _avg_pool_errors(nd):
    def errors(info, device):
        sp = (4,) * nd
        yield ErrorInput(SampleInput(_t((1, 1) + sp, D.float32, device), [2] * nd, [], [0] * nd,
                                     False, True, 0), RuntimeError, "divisor must be not zero")
        yield ErrorInput(SampleInput(_t((1, 1) + sp, D.int32, device), [2] * nd), RuntimeError,
                         "not implemented for 'Int'")
        yield ErrorInput(SampleInput(_t((1, 1) + sp, D.float32, device), [2] * nd, [1] * nd,
                                     [2] * nd), RuntimeError, "pad should be smaller than or "
                                                              "equal to half of kernel size")
    return errors


def _avg_pool1d_ref(x, kernel_size, stride=(), padding=0, ceil_mode=False,
                    count_include_pad=True):
    k, s, p, _ = _pool_args(1, kernel_size, stride, padding)
    return np_avg_pool(x, k, s, p, ceil_mode, count_include_pad, None)


def _avg_pool1d_samples(info, device, dtype):
    yield SampleInput(_t((2, 3, 7), dtype, device), 3, 2, 1, False, True)
    yield SampleInput(_t((3, 8), dtype, device), [2])
    yield SampleInput(_t((1, 2, 7), dtype, device), [3], [2], [1], True, False)


def _avg_pool_backward_ref(g, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                           divisor_override):
    nd = 2
    k, s, p, _ = _pool_args(nd, kernel_size, stride, padding)
    sp_ = x.shape[-nd:]
    gi = np.zeros(x.shape)
    for pos in np.ndindex(*g.shape[-nd:]):
        start = [pos[i] * s[i] - p[i] for i in range(nd)]
        end = [min(start[i] + k[i], sp_[i] + p[i]) for i in range(nd)]
        cs = [max(b, 0) for b in start]
        ce = [min(e, n) for e, n in zip(end, sp_)]
        if divisor_override:
            div = divisor_override
        elif count_include_pad:
            div = np.prod([e - b for b, e in zip(start, end)])
        else:
            div = np.prod([e - b for b, e in zip(cs, ce)])
        win = (Ellipsis,) + tuple(slice(b, e) for b, e in zip(cs, ce))
        gi[win] += g[(Ellipsis,) + pos][(Ellipsis,) + (None,) * nd] / div
    return gi


def _avg_pool_backward_samples(info, device, dtype):
    for shape, k, s, p, ceil, cip, div in AVGPOOL2D[:4]:
        x = _t(shape, dtype, device)
        kk, ss, pp, _ = _pool_args(2, k, s, p)
        y = np_avg_pool(_np(x), kk, ss, pp, ceil, cip, div)
        yield SampleInput(_t(y.shape, dtype, device), x, k, s, p, ceil, cip, div)


def np_adaptive(x, out):
    nd = len(out)
    sp_ = x.shape[-nd:]
    res = np.zeros(x.shape[:-nd] + tuple(out))
    for pos in np.ndindex(*out):
        sl = tuple(slice((o * n) // m, -((-(o + 1) * n) // m)) for o, n, m in zip(pos, sp_, out))
        res[(Ellipsis,) + pos] = x[(Ellipsis,) + sl].mean(axis=tuple(range(-nd, 0)))
    return res


def _adaptive_ref(nd):
    def ref(x, output_size):
        return np_adaptive(x, _per_dim(output_size, nd))
    return _floatref(ref)


def _adaptive_samples(nd):
    cases = {1: [((2, 3, 7), [3]), ((3, 8), [4]), ((1, 2, 5), [7])],
             2: [((2, 3, 7, 5), [3, 2]), ((3, 6, 4), [3, 4]), ((1, 2, 5, 5), [7, 1]),
                 ((0, 2, 4, 4), [2, 2])],
             3: [((2, 2, 5, 4, 3), [2, 3, 2]), ((2, 4, 4, 4), [2, 2, 2])]}[nd]

    def samples(info, device, dtype):
        for i, (shape, out) in enumerate(cases):
            yield SampleInput(_t(shape, dtype, device, noncontiguous=(i == 1)), out)
        if nd == 2:        # an infinity stays inside its own windows
            x = np.zeros((1, 1, 2, 5))
            x[0, 0, 0, 0] = INF
            yield SampleInput(_arr(x, dtype, device), [1, 3])
    return samples


def _adaptive_errors(nd):
    def errors(info, device):
        name = f"adaptive_avg_pool{nd}d"
        yield ErrorInput(SampleInput(_t((4,) * nd, D.float32, device), [2] * nd), RuntimeError,
                         rf"{name}\(\): Expected {nd + 1}D or {nd + 2}D tensor")
        if nd > 1:
            yield ErrorInput(SampleInput(_t((1,) + (4,) * nd, D.int64, device), [2] * nd),
                             RuntimeError, "not implemented for 'Long'")
    return errors


def _adaptive_backward_ref(g, x):
    nd = 2
    sp_, out = x.shape[-nd:], g.shape[-nd:]
    gi = np.zeros(x.shape)
    for pos in np.ndindex(*out):
        sl = tuple(slice((o * n) // m, -((-(o + 1) * n) // m)) for o, n, m in zip(pos, sp_, out))
        size = np.prod([s.stop - s.start for s in sl])
        gi[(Ellipsis,) + sl] += g[(Ellipsis,) + pos][(Ellipsis,) + (None,) * nd] / size
    return gi


def _adaptive_backward_samples(info, device, dtype):
    for shape, out in (((2, 3, 7, 5), (3, 4)), ((3, 4, 4), (2, 2)), ((1, 1, 3, 2), (5, 3))):
        yield SampleInput(_t(shape[:-2] + out, dtype, device), _t(shape, dtype, device))


register(
    OpInfo(aten.max_pool2d_with_indices.default, _floatref(_max_pool_ref(2)), FI,
           _max_pool_samples(MAXPOOL2D, 2, special=True), error_inputs=_max_pool_errors(
               2, "max_pool2d")),
    OpInfo(aten.max_pool3d_with_indices.default, _floatref(_max_pool_ref(3)), FI,
           _max_pool_samples(MAXPOOL3D, 3), error_inputs=_max_pool_errors(3, "max_pool3d")),
    OpInfo(aten.max_pool1d_with_indices.default, _floatref(_max_pool_ref(1)), F,
           _max_pool_samples(MAXPOOL1D, 1)),
    OpInfo(aten.max_pool1d.default, _floatref(_max_pool_ref(1, True)), F,
           _max_pool_samples(MAXPOOL1D, 1), error_inputs=_max_pool_errors(1, "max_pool1d")),
    OpInfo(aten.max_pool2d.default, _floatref(_max_pool_ref(2, True)), F,
           _max_pool_samples(MAXPOOL2D, 2, special=True)),
    OpInfo(aten.max_pool3d.default, _floatref(_max_pool_ref(3, True)), F,
           _max_pool_samples(MAXPOOL3D, 3)),
    OpInfo(aten.max_pool2d_with_indices_backward.default, _floatref(_max_pool_backward_ref), F,
           _max_pool_backward_samples, error_inputs=_max_pool_backward_errors),
    OpInfo(aten.avg_pool2d.default, _avg_pool_ref(2), FI, _avg_pool_samples(AVGPOOL2D),
           tols=TOLS, error_inputs=_avg_pool_errors(2)),
    OpInfo(aten.avg_pool3d.default, _avg_pool_ref(3), FI, _avg_pool_samples(AVGPOOL3D),
           tols=TOLS, error_inputs=_avg_pool_errors(3)),
    OpInfo(aten.avg_pool1d.default, _floatref(_avg_pool1d_ref), F, _avg_pool1d_samples,
           tols=TOLS),
    OpInfo(aten.avg_pool2d_backward.default, _floatref(_avg_pool_backward_ref), F,
           _avg_pool_backward_samples, tols=TOLS),
    OpInfo(aten._adaptive_avg_pool2d.default, _adaptive_ref(2), F, _adaptive_samples(2),
           tols=TOLS, error_inputs=_adaptive_errors(2)),
    OpInfo(aten._adaptive_avg_pool3d.default, _adaptive_ref(3), F, _adaptive_samples(3),
           tols=TOLS, error_inputs=_adaptive_errors(3)),
    OpInfo(aten._adaptive_avg_pool2d_backward.default, _floatref(_adaptive_backward_ref), F,
           _adaptive_backward_samples, tols=TOLS),
    OpInfo(aten.adaptive_avg_pool1d.default, _adaptive_ref(1), F, _adaptive_samples(1),
           tols=TOLS),
    OpInfo(aten.adaptive_avg_pool2d.default, _adaptive_ref(2), F, _adaptive_samples(2),
           tols=TOLS, error_inputs=_adaptive_errors(2)),
    OpInfo(aten.adaptive_avg_pool3d.default, _adaptive_ref(3), F, _adaptive_samples(3),
           tols=TOLS),
)
