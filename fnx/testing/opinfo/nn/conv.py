"""OpInfo entries for the convolutions (fnx/ir/aten/nn/conv.py), against direct loops over
output positions and kernel offsets."""
from __future__ import annotations

import numpy as np

from ....core import dtype as D
from ....ops import aten
from ...database import ErrorInput, OpInfo, SampleInput, register
from ._common import F, SUMS, _floatref, _np, _per_dim, _t


def np_conv(x, w, b, stride, padding, dilation, groups):
    """Direct convolution: loops over output positions and kernel offsets."""
    nd = x.ndim - 2
    n, c = x.shape[:2]
    o, k = w.shape[0], w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    out_sp = [(xp.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1
              for i in range(nd)]
    out = np.zeros((n, o, *out_sp), np.result_type(x, w))
    cg, og = c // groups, o // groups
    for g in range(groups):
        for pos in np.ndindex(*out_sp):
            for kk in np.ndindex(*k):
                at = tuple(pos[i] * stride[i] + kk[i] * dilation[i] for i in range(nd))
                xv = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + at]
                wv = w[(slice(g * og, (g + 1) * og), slice(None)) + kk]
                out[(slice(None), slice(g * og, (g + 1) * og)) + pos] += xv @ wv.T
    if b is not None:
        out += b.reshape((1, -1) + (1,) * nd)
    return out


def _full_size(x, w, stride, dilation, output_padding):
    nd = x.ndim - 2
    k = w.shape[2:]
    return [(x.shape[2 + i] - 1) * stride[i] + dilation[i] * (k[i] - 1) + 1 + output_padding[i]
            for i in range(nd)]


def np_conv_transpose(x, w, b, stride, padding, output_padding, dilation, groups):
    """Transposed convolution: every input element scatters itself times the kernel."""
    nd = x.ndim - 2
    n, cin = x.shape[:2]
    cog, k = w.shape[1], w.shape[2:]
    full = _full_size(x, w, stride, dilation, output_padding)
    out = np.zeros((n, cog * groups, *full), np.result_type(x, w))
    cig = cin // groups
    for g in range(groups):
        for pos in np.ndindex(*x.shape[2:]):
            for kk in np.ndindex(*k):
                at = tuple(pos[i] * stride[i] + kk[i] * dilation[i] for i in range(nd))
                xv = x[(slice(None), slice(g * cig, (g + 1) * cig)) + pos]
                wv = w[(slice(g * cig, (g + 1) * cig), slice(None)) + kk]
                out[(slice(None), slice(g * cog, (g + 1) * cog)) + at] += xv @ wv
    out = out[(slice(None), slice(None)) + tuple(slice(p, f - p) for p, f in
                                                  zip(padding, full))]
    if b is not None:
        out += b.reshape((1, -1) + (1,) * nd)
    return out


def _convolution_ref(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    nd = w.ndim - 2
    s, p, d, op = (_per_dim(v, nd) for v in (stride, padding, dilation, output_padding))
    if transposed:
        return np_conv_transpose(x, w, b, s, p, op, d, groups)
    return np_conv(x, w, b, s, p, d, groups)


CONV_CASES = [
    # input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
    ((2, 3, 7), (4, 3, 3), True, [1], [0], [1], False, [0], 1),
    ((1, 4, 5, 5), (4, 2, 3, 2), False, [2, 1], [1, 0], [1, 2], False, [0, 0], 2),
    ((1, 2, 3, 4, 3), (2, 1, 2, 2, 2), True, [1, 2, 1], [1, 0, 1], [1, 1, 1], False,
     [0, 0, 0], 2),
    ((0, 2, 4, 4), (3, 2, 2, 2), True, [2], [1], [1], False, [0], 1),
    ((1, 4, 3, 3), (4, 3, 2, 2), True, [2, 1], [0, 1], [1, 1], True, [1, 0], 2),
    ((2, 3, 4), (3, 2, 3), False, [2], [1], [2], True, [1], 1),
]


def _conv_t(shape, dtype, device, **kw):
    return _t(shape, dtype, device, -2, 2, **kw)


def _convolution_samples(info, device, dtype):
    for i, (xs, ws, hb, s, p, d, tr, op, g) in enumerate(CONV_CASES):
        cout = ws[1] * g if tr else ws[0]
        yield SampleInput(_conv_t(xs, dtype, device, noncontiguous=(i == 1)),
                          _conv_t(ws, dtype, device), _conv_t((cout,), dtype, device)
                          if hb else None, s, p, d, tr, op, g)


def _convolution_errors(info, device):
    def s(x, w, b=None, stride=(1,), padding=(0,), transposed=False, groups=1):
        return SampleInput(x, w, b, list(stride), list(padding), [1], transposed, [0], groups)
    f = D.float32
    x, w = _t((1, 3, 5, 5), f, device), _t((4, 3, 3, 3), f, device)
    yield ErrorInput(s(_t((3, 5, 5), f, device), w), RuntimeError,
                     "Expected 4-dimensional input for 4-dimensional weight")
    yield ErrorInput(s(_t((1, 2, 5, 5), f, device), w), RuntimeError,
                     r"expected input\[1, 2, 5, 5\] to have 3 channels, but got 2 channels")
    yield ErrorInput(s(x, w, _t((3,), f, device)), RuntimeError,
                     "expected bias to be 1-dimensional with 4 elements")
    yield ErrorInput(s(_t((1, 3, 2, 2), f, device), w), RuntimeError,
                     "Kernel size can't be greater than actual input size")
    yield ErrorInput(s(x, _t((4, 1, 3, 3), f, device), groups=3), RuntimeError,
                     "expected weight to be divisible by 3")
    yield ErrorInput(s(x, w, stride=(0,)), RuntimeError, "non-positive stride is not supported")
    yield ErrorInput(s(x, w, padding=(-1,)), RuntimeError, "negative padding is not supported")
    yield ErrorInput(s(_t((1, 3, 5, 5), D.float64, device), w), RuntimeError,
                     r"Input type \(Double\) and weight type \(Float\) should be the same")
    yield ErrorInput(s(_t((1, 3, 5, 5), D.int64, device), _t((4, 3, 3, 3), D.int64, device)),
                     RuntimeError, "not implemented for 'Long'")
    yield ErrorInput(s(x, w, transposed=True), RuntimeError, "Given transposed=1, weight of "
                                                             "size")


def np_conv_backward(gy, x, w, stride, padding, dilation, transposed, output_padding, groups):
    """(grad_input, grad_weight, grad_bias) by the adjoint loops of the forward."""
    nd = x.ndim - 2
    k = w.shape[2:]
    gb = gy.sum(axis=(0,) + tuple(range(2, 2 + nd)))
    gw = np.zeros_like(w)
    if not transposed:
        c, o = x.shape[1], w.shape[0]
        cg, og = c // groups, o // groups
        xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
        gxp = np.zeros_like(xp)
        for g in range(groups):
            cs, os_ = slice(g * cg, (g + 1) * cg), slice(g * og, (g + 1) * og)
            for pos in np.ndindex(*gy.shape[2:]):
                for kk in np.ndindex(*k):
                    at = tuple(pos[i] * stride[i] + kk[i] * dilation[i] for i in range(nd))
                    gyv = gy[(slice(None), os_) + pos]                   # (N, og)
                    gxp[(slice(None), cs) + at] += gyv @ w[(os_, slice(None)) + kk]
                    gw[(os_, slice(None)) + kk] += gyv.T @ xp[(slice(None), cs) + at]
        gi = gxp[(slice(None), slice(None)) + tuple(slice(p, p + n) for p, n in
                                                     zip(padding, x.shape[2:]))]
        return gi, gw, gb
    cin, cog = x.shape[1], w.shape[1]
    cig = cin // groups
    full = _full_size(x, w, stride, dilation, output_padding)
    gyf = np.zeros(gy.shape[:2] + tuple(full), gy.dtype)
    gyf[(slice(None), slice(None)) + tuple(slice(p, f - p) for p, f in
                                           zip(padding, full))] = gy
    gi = np.zeros_like(x)
    for g in range(groups):
        cs, os_ = slice(g * cig, (g + 1) * cig), slice(g * cog, (g + 1) * cog)
        for pos in np.ndindex(*x.shape[2:]):
            for kk in np.ndindex(*k):
                at = tuple(pos[i] * stride[i] + kk[i] * dilation[i] for i in range(nd))
                gyv = gyf[(slice(None), os_) + at]                           # (N, cog)
                wv = w[(cs, slice(None)) + kk]                                # (cig, cog)
                gi[(slice(None), cs) + pos] += gyv @ wv.T
                gw[(cs, slice(None)) + kk] += x[(slice(None), cs) + pos].T @ gyv
    return gi, gw, gb


def _conv_backward_ref(gy, x, w, bias_sizes, stride, padding, dilation, transposed,
                       output_padding, groups, output_mask):
    nd = w.ndim - 2
    s, p, d, op = (_per_dim(v, nd) for v in (stride, padding, dilation, output_padding))
    return np_conv_backward(gy, x, w, s, p, d, transposed, op, groups)


def _conv_backward_samples(info, device, dtype):
    for i in (0, 1, 4, 5):
        xs, ws, hb, s, p, d, tr, op, g = CONV_CASES[i]
        x, w = _conv_t(xs, dtype, device), _conv_t(ws, dtype, device)
        y = _convolution_ref(_np(x), _np(w), None, s, p, d, tr, op, g)
        cout = y.shape[1]
        yield SampleInput(_conv_t(y.shape, dtype, device), x, w, [cout] if hb else None, s, p,
                          d, tr, op, g, [True, True, True])


def _conv_nd_ref(nd, transposed=False):
    def ref(x, w, b=None, stride=1, padding=0, *rest):
        unbatched = x.ndim == nd + 1
        if unbatched:
            x = x[None]
        if transposed:
            output_padding, groups, dilation = (list(rest) + [0, 1, 1][len(rest):])[:3]
            out = np_conv_transpose(x, w, b, _per_dim(stride, nd), _per_dim(padding, nd),
                                    _per_dim(output_padding, nd), _per_dim(dilation, nd),
                                    groups)
        else:
            dilation, groups = (list(rest) + [1, 1][len(rest):])[:2]
            d = _per_dim(dilation, nd)
            if isinstance(padding, str):
                pads = [(0, 0)] * 2
                for i in range(nd):
                    total = d[i] * (w.shape[2 + i] - 1) if padding == "same" else 0
                    pads.append((total // 2, total - total // 2))
                x, padding = np.pad(x, pads), 0
            out = np_conv(x, w, b, _per_dim(stride, nd), _per_dim(padding, nd), d, groups)
        return out[0] if unbatched else out
    return _floatref(ref)


def _conv_nd_samples(nd, kind):
    """kind: "conv", "padding" (string padding) or "transpose"."""
    def samples(info, device, dtype):
        def t(*shape, **kw):
            return _conv_t(shape, dtype, device, **kw)
        sp = (6, 5, 4)[:nd]
        k = (3, 2, 2)[:nd]
        if kind == "conv":
            yield SampleInput(t(2, 4, *sp), t(6, 2, *k), t(6), 1, 1, 1, 2)
            yield SampleInput(t(3, *sp), t(2, 3, *k))                          # unbatched
            yield SampleInput(t(1, 2, *sp), t(2, 2, *k), None, [2] * nd, [0] * nd, [1] * nd)
            yield SampleInput(t(0, 2, *sp), t(3, 2, *k), t(3))
        elif kind == "padding":
            yield SampleInput(t(1, 2, *sp), t(3, 2, *k), t(3), 1, "same")
            yield SampleInput(t(2, *sp), t(2, 2, *k), None, 1, "same", 2)      # dilation 2
            yield SampleInput(t(1, 4, *sp), t(2, 2, *k), None, 1, "valid", 1, 2)
        else:
            sp = (4, 3, 2)[:nd]
            yield SampleInput(t(2, 4, *sp), t(4, 3, *k), t(6), 2, 1, 1, 2)
            yield SampleInput(t(2, *sp), t(2, 3, *k))                          # unbatched
            yield SampleInput(t(1, 2, *sp), t(2, 2, *k), None, 1, 0, 0, 1, 2)  # dilation
    return samples


def _conv_nd_errors(nd, kind):
    def errors(info, device):
        f = D.float32
        sp, k = (6, 5, 4)[:nd], (3, 2, 2)[:nd]
        x, w = _t((1, 2) + sp, f, device), _t((3, 2) + k, f, device)
        name = f"conv_transpose{nd}d" if kind == "transpose" else f"conv{nd}d"
        yield ErrorInput(SampleInput(_t(sp, f, device), w), RuntimeError,
                         rf"Expected {nd + 1}D \(unbatched\) or {nd + 2}D \(batched\) input "
                         rf"to {name}")
        if kind == "padding":
            yield ErrorInput(SampleInput(x, w, None, 2, "same"), RuntimeError,
                             "padding='same' is not supported for strided convolutions")
            yield ErrorInput(SampleInput(x, w, None, 1, "full"), RuntimeError,
                             "Invalid padding string: 'full'")
        elif kind == "transpose":
            yield ErrorInput(SampleInput(_t((1, 3) + sp, f, device), w, None, 1, 0, 1),
                             RuntimeError, "output padding must be smaller than either "
                                           "stride or dilation")
        else:
            yield ErrorInput(SampleInput(x, _t((3, 3) + k, f, device)), RuntimeError,
                             "to have 3 channels, but got 2 channels instead")
    return errors


register(
    OpInfo(aten.convolution.default, _floatref(_convolution_ref), F, _convolution_samples,
           tols=SUMS, error_inputs=_convolution_errors),
    OpInfo(aten.convolution_backward.default, _floatref(_conv_backward_ref), F,
           _conv_backward_samples, tols=SUMS),
)
for _nd in (1, 2, 3):
    _tr = aten.conv_transpose1d.default if _nd == 1 else \
        getattr(aten, f"conv_transpose{_nd}d").input
    register(
        OpInfo(getattr(aten, f"conv{_nd}d").default, _conv_nd_ref(_nd), F,
               _conv_nd_samples(_nd, "conv"), tols=SUMS, error_inputs=_conv_nd_errors(_nd,
                                                                                   "conv")),
        OpInfo(getattr(aten, f"conv{_nd}d").padding, _conv_nd_ref(_nd), F,
               _conv_nd_samples(_nd, "padding"), tols=SUMS,
               error_inputs=_conv_nd_errors(_nd, "padding")),
        OpInfo(_tr, _conv_nd_ref(_nd, True), F, _conv_nd_samples(_nd, "transpose"), tols=SUMS,
               error_inputs=_conv_nd_errors(_nd, "transpose")),
    )
