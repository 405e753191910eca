"""OpInfo entries for the normalization ops (fnx/ir/aten/nn/normalization.py)."""
from __future__ import annotations

import numpy as np

from ....core import dtype as D
from ....ops import aten
from ...database import ErrorInput, OpInfo, SampleInput, register
from ._common import F, SUMS, TOLS, _arr, _floatref, _np, _t, _wide


def np_layer_norm(x, ns, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(ns), x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    out = (x - mean) * rstd
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out, mean, rstd


def _native_layer_norm_ref(x, ns, w, b, eps):
    return np_layer_norm(x, ns, w, b, eps)


def _layer_norm_ref(x, ns, w=None, b=None, eps=1e-5, cudnn_enable=True):
    return np_layer_norm(x, list(ns) if not isinstance(ns, int) else [ns], w, b, eps)[0]


def _layer_norm_samples(native):
    def samples(info, device, dtype):
        def t(*shape, **kw):
            return _t(shape, dtype, device, **kw)
        cases = [((2, 3, 4), [4], True, True, 1e-5), ((2, 3, 4), [3, 4], False, False, 1e-5),
                 ((0, 3), [3], True, False, 1e-5), ((3,), [3], False, True, 1e-3),
                 ((2, 5), [5], True, True, 1e-5)]
        for i, (shape, ns, hw, hb, eps) in enumerate(cases):
            x = t(*shape, noncontiguous=(i == 4))
            w = t(*ns) if hw else None
            b = t(*ns) if hb else None
            if native:
                yield SampleInput(x, ns, w, b, eps)
            elif eps == 1e-5 and i % 2 == 0:
                yield SampleInput(x, ns, w, b)
            else:
                yield SampleInput(x, ns, w, b, eps)
    return samples


def _layer_norm_errors(native):
    def errors(info, device):
        def s(x, ns, w=None, b=None):
            return SampleInput(x, ns, w, b, 1e-5) if native else SampleInput(x, ns, w, b)
        x = _t((2, 3), D.float32, device)
        yield ErrorInput(s(x, [4]), RuntimeError, r"Given normalized_shape=\[4\], expected "
                         r"input with shape \[\*, 4\], but got input of size\[2, 3\]")
        yield ErrorInput(s(x, [3], _t((2,), D.float32, device)), RuntimeError,
                         "Expected weight to be of same shape as normalized_shape")
        yield ErrorInput(s(x, []), RuntimeError, "at least 1-dimensional")
        yield ErrorInput(s(_t((2, 3), D.int64, device), [3]), RuntimeError,
                         "not implemented for 'Long'")
    return errors


def _ln_backward_ref(g, x, ns, mean, rstd, w, b, output_mask):
    """The vector-Jacobian product of layer norm with the given statistics:
    dxhat_i/dx_j = rstd * (delta_ij - 1/N - xhat_i * xhat_j / N) over the normalized dims."""
    k = len(ns)
    axes = tuple(range(x.ndim - k, x.ndim))
    outer = tuple(range(x.ndim - k))
    xhat = (x - mean) * rstd
    gx = g * w if w is not None else g
    n = int(np.prod(ns))
    gi = rstd * (gx - gx.sum(axes, keepdims=True) / n -
                 xhat * (gx * xhat).sum(axes, keepdims=True) / n)
    gw = (g * xhat).sum(outer) if outer else g * xhat
    gb = g.sum(outer) if outer else g.copy()
    return gi, gw, gb


def _ln_backward_samples(info, device, dtype):
    for shape, ns in (((3, 4), [4]), ((2, 2, 3), [2, 3]), ((4,), [4]), ((0, 3), [3])):
        x = _t(shape, dtype, device)
        _, mean, rstd = np_layer_norm(_np(x).astype(np.float64), ns)
        yield SampleInput(_t(shape, dtype, device), x, ns, _arr(mean, dtype, device),
                          _arr(rstd, dtype, device), _t(ns, dtype, device),
                          _t(ns, dtype, device), [True, True, True])


def _rms_norm_ref(x, ns, w=None, eps=None):
    ns = [ns] if isinstance(ns, int) else list(ns)
    if eps is None:                 # torch.finfo(input.dtype).eps
        eps = float(np.finfo(x.dtype).eps)
    axes = tuple(range(x.ndim - len(ns), x.ndim))
    xw = _wide(x)
    out = xw / np.sqrt((xw * xw).mean(axes, keepdims=True) + eps)
    return (out * _wide(w) if w is not None else out).astype(x.dtype)


def _rms_norm_samples(info, device, dtype):
    yield SampleInput(_t((3, 4), dtype, device), [4], _t((4,), dtype, device), 1e-6)
    yield SampleInput(_t((2, 3, 4), dtype, device), [3, 4])
    yield SampleInput(_t((0, 4), dtype, device), [4], None, 1e-5)
    yield SampleInput(_t((2, 5), dtype, device, noncontiguous=True), [5])


def np_group_norm(x, groups, w=None, b=None, eps=1e-5):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, (c // groups) * int(np.prod(x.shape[2:])))
    mean = g.mean(-1, keepdims=True)
    var = ((g - mean) ** 2).mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    out = ((g - mean) * rstd).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if w is not None:
        out = out * w.reshape(shape)
    if b is not None:
        out = out + b.reshape(shape)
    return out, mean.reshape(n, groups), rstd.reshape(n, groups)


def _native_group_norm_ref(x, w, b, N, C, HxW, group, eps):
    return np_group_norm(x, group, w, b, eps)


GROUP_CASES = [((2, 6, 3, 2), 3, True, True), ((2, 4, 5), 2, False, False),
               ((0, 4, 3), 2, True, False), ((3, 2), 1, True, True)]


def _native_group_norm_samples(info, device, dtype):
    for shape, group, hw, hb in GROUP_CASES:
        c = shape[1]
        yield SampleInput(_t(shape, dtype, device), _t((c,), dtype, device) if hw else None,
                          _t((c,), dtype, device) if hb else None, shape[0], c,
                          int(np.prod(shape[2:])), group, 1e-5)


def _native_group_norm_errors(info, device):
    x = _t((2, 6, 3), D.float32, device)
    yield ErrorInput(SampleInput(x, None, None, 2, 6, 3, 4, 1e-5), RuntimeError,
                     "Expected number of channels in input to be divisible by num_groups")
    yield ErrorInput(SampleInput(x, _t((5,), D.float32, device), None, 2, 6, 3, 3, 1e-5),
                     RuntimeError, "Expected weight to be a vector of size equal to the number "
                                   "of channels in input")
    yield ErrorInput(SampleInput(_t((2, 6, 3), D.int64, device), None, None, 2, 6, 3, 3,
                                 1e-5), RuntimeError, "not implemented for 'Long'")


def _group_norm_ref(x, num_groups, w=None, b=None, eps=1e-5, cudnn_enabled=True):
    return np_group_norm(x, num_groups, w, b, eps)[0]


def _group_norm_samples(info, device, dtype):
    for i, (shape, group, hw, hb) in enumerate(GROUP_CASES):
        c = shape[1]
        w = _t((c,), dtype, device) if hw else None
        b = _t((c,), dtype, device) if hb else None
        x = _t(shape, dtype, device, noncontiguous=(i == 1))
        yield SampleInput(x, group, w, b) if i % 2 else SampleInput(x, group, w, b, 1e-3)


def _group_norm_errors(info, device):
    yield ErrorInput(SampleInput(_t((6,), D.float32, device), 2), RuntimeError,
                     "Expected at least 2 dimensions for input tensor but received 1")
    yield ErrorInput(SampleInput(_t((2, 6, 3), D.float32, device), 4), RuntimeError,
                     "Expected number of channels in input to be divisible by num_groups")


def _gn_backward_ref(g, x, mean, rstd, w, N, C, HxW, group, output_mask):
    cg = C // group
    xg = x.reshape(N, group, cg, HxW)
    gg = g.reshape(N, group, cg, HxW)
    m = mean.reshape(N, group, 1, 1)
    r = rstd.reshape(N, group, 1, 1)
    xhat = (xg - m) * r
    gx = gg * w.reshape(1, group, cg, 1) if w is not None else gg
    n = cg * HxW
    gi = r * (gx - gx.sum((2, 3), keepdims=True) / n -
              xhat * (gx * xhat).sum((2, 3), keepdims=True) / n)
    gw = (gg * xhat).sum((0, 3)).reshape(C)
    gb = gg.sum((0, 3)).reshape(C)
    return gi.reshape(x.shape), gw, gb


def _gn_backward_samples(info, device, dtype):
    for shape, group, hw in (((2, 4, 3), 2, True), ((2, 6, 2, 2), 3, False),
                             ((3, 2), 1, True)):
        n, c = shape[:2]
        hxw = int(np.prod(shape[2:]))
        x = _t(shape, dtype, device)
        _, mean, rstd = np_group_norm(_np(x).astype(np.float64), group)
        yield SampleInput(_t(shape, dtype, device), x, _arr(mean, dtype, device),
                          _arr(rstd, dtype, device), _t((c,), dtype, device) if hw else None,
                          n, c, hxw, group, [True, True, True])


def np_batch_norm(x, w, b, rm, rv, training, eps):
    """(output, save_mean, save_invstd): statistics over every dim but 1 when training,
    the running ones otherwise (then the saved statistics are empty)."""
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if training:
        mean = x.mean(axes)
        invstd = 1 / np.sqrt(((x - mean.reshape(shape)) ** 2).mean(axes) + eps)
        save = (mean, invstd)
    else:
        mean, invstd = rm, 1 / np.sqrt(rv + eps)
        save = (np.zeros(0), np.zeros(0))
    out = (x - mean.reshape(shape)) * invstd.reshape(shape)
    if w is not None:
        out = out * w.reshape(shape)
    if b is not None:
        out = out + b.reshape(shape)
    return (out,) + save


def _bn_samples(kind):
    """kind: "legit" (running stats, training flag), "no_stats", "no_training", "native"
    (optional stats, training flag) or "batch_norm" (native + cudnn_enabled)."""
    def samples(info, device, dtype):
        def t(*shape, **kw):
            return _t(shape, dtype, device, **kw)

        def stats(c):
            return t(c), t(c, low=0.5, high=2.0)
        cases = [((4, 3, 2, 2), True, True, True), ((5, 3), False, False, True),
                 ((3, 2), True, True, False), ((2, 3, 4), False, True, True),
                 ((0, 2, 3), False, True, True)]
        for shape, train, affine, with_stats in cases:
            c = shape[1]
            x = t(*shape)
            w, b = (t(c), t(c)) if affine else (None, None)
            if kind == "no_stats":
                if train and shape[0]:
                    yield SampleInput(x, w, b, True, 0.1, 1e-5)
                continue
            if kind == "no_training":
                if with_stats:
                    yield SampleInput(x, w, b, *stats(c), 0.1, 1e-5)
                continue
            if not shape[0] and train:
                continue
            if kind == "legit":
                if with_stats:
                    yield SampleInput(x, w, b, *stats(c), train, 0.1, 1e-5)
                continue
            rm, rv = stats(c) if with_stats else (None, None)
            if not with_stats and not train:
                continue
            args = (x, w, b, rm, rv, train, 0.1, 1e-5)
            yield SampleInput(*args, False) if kind == "batch_norm" else SampleInput(*args)
    return samples


def _bn_ref(kind):
    def ref(x, w, b, *rest):
        if kind == "no_stats":
            return np_batch_norm(x, w, b, None, None, True, rest[-1])
        if kind == "no_training":
            return np_batch_norm(x, w, b, rest[0], rest[1], False, rest[-1])
        rm, rv, train, _, eps = rest[:5]
        r = np_batch_norm(x, w, b, rm, rv, train, eps)
        return r[0] if kind == "batch_norm" else r
    return _floatref(ref)


def _bn_errors(kind):
    def errors(info, device):
        x = _t((5, 3), D.float32, device)

        def s(x, w=None, rm=None, rv=None):
            if kind == "no_stats":
                return SampleInput(x, w, None, True, 0.1, 1e-5)
            if kind == "no_training":
                return SampleInput(x, w, None, rm, rv, 0.1, 1e-5)
            args = (x, w, None, rm, rv, True, 0.1, 1e-5)
            return SampleInput(*args, False) if kind == "batch_norm" else SampleInput(*args)
        ones = _t((3,), D.float32, device, 0.5, 1)
        yield ErrorInput(s(x, _t((2,), D.float32, device), ones, ones), RuntimeError,
                         "weight should contain 3 elements not 2")
        yield ErrorInput(s(_t((3,), D.float32, device), None, ones, ones), RuntimeError,
                         "expected input with at least 2 dimensions")
        yield ErrorInput(s(_t((5, 3), D.int64, device), None, ones, ones), RuntimeError,
                         "not implemented for 'Long'")
        if kind != "no_stats":
            yield ErrorInput(s(x, None, _t((4,), D.float32, device), ones), RuntimeError,
                             "running_mean should contain 3 elements not 4")
        if kind in ("native", "batch_norm"):
            yield ErrorInput(SampleInput(x, None, None, None, None, False, 0.1, 1e-5,
                                         *((False,) if kind == "batch_norm" else ())),
                             RuntimeError, "must be defined in evaluation mode")
    return errors


def _instance_norm_ref(x, w, b, rm, rv, use_input_stats, momentum, eps, cudnn_enabled):
    n, c = x.shape[:2]
    axes = tuple(range(2, x.ndim))
    shape = (1, c) + (1,) * (x.ndim - 2)
    if use_input_stats:
        mean = x.mean(axes, keepdims=True)
        var = ((x - mean) ** 2).mean(axes, keepdims=True)
    else:
        mean, var = rm.reshape(shape), rv.reshape(shape)
    out = (x - mean) / np.sqrt(var + eps)
    if w is not None:
        out = out * w.reshape(shape)
    if b is not None:
        out = out + b.reshape(shape)
    return out


def _instance_norm_samples(info, device, dtype):
    def t(*shape, **kw):
        return _t(shape, dtype, device, **kw)
    yield SampleInput(t(2, 3, 5), t(3), t(3), t(3), t(3, low=0.5, high=2), True, 0.1, 1e-5,
                      False)
    yield SampleInput(t(2, 2, 3, 2), None, None, None, None, True, 0.1, 1e-5, False)
    yield SampleInput(t(2, 3, 4), None, t(3), t(3), t(3, low=0.5, high=2), False, 0.1, 1e-5,
                      False)


def _instance_norm_errors(info, device):
    yield ErrorInput(SampleInput(_t((2, 3, 4), D.float32, device), None, None, None, None,
                                 False, 0.1, 1e-5, False), RuntimeError,
                     "Expected running_mean and running_var to be defined")


register(
    OpInfo(aten.native_layer_norm.default, _floatref(_native_layer_norm_ref), F,
           _layer_norm_samples(True), tols=TOLS, error_inputs=_layer_norm_errors(True)),
    OpInfo(aten.layer_norm.default, _floatref(_layer_norm_ref), F, _layer_norm_samples(False),
           tols=TOLS, error_inputs=_layer_norm_errors(False)),
    OpInfo(aten.native_layer_norm_backward.default, _floatref(_ln_backward_ref), F,
           _ln_backward_samples, tols=SUMS),
    OpInfo(aten.rms_norm.default, _rms_norm_ref, F, _rms_norm_samples, tols=TOLS),
    OpInfo(aten.native_group_norm.default, _floatref(_native_group_norm_ref), F,
           _native_group_norm_samples, tols=TOLS, error_inputs=_native_group_norm_errors),
    OpInfo(aten.group_norm.default, _floatref(_group_norm_ref), F, _group_norm_samples,
           tols=TOLS, error_inputs=_group_norm_errors),
    OpInfo(aten.native_group_norm_backward.default, _floatref(_gn_backward_ref), F,
           _gn_backward_samples, tols=SUMS),
    OpInfo(aten._native_batch_norm_legit.default, _bn_ref("legit"), F, _bn_samples("legit"),
           tols=TOLS, error_inputs=_bn_errors("legit")),
    OpInfo(aten._native_batch_norm_legit.no_stats, _bn_ref("no_stats"), F,
           _bn_samples("no_stats"), tols=TOLS, error_inputs=_bn_errors("no_stats")),
    OpInfo(aten._native_batch_norm_legit_no_training.default, _bn_ref("no_training"), F,
           _bn_samples("no_training"), tols=TOLS, error_inputs=_bn_errors("no_training")),
    OpInfo(aten.native_batch_norm.default, _bn_ref("native"), F, _bn_samples("native"),
           tols=TOLS, error_inputs=_bn_errors("native")),
    OpInfo(aten.batch_norm.default, _bn_ref("batch_norm"), F, _bn_samples("batch_norm"),
           tols=TOLS, error_inputs=_bn_errors("batch_norm")),
    OpInfo(aten.instance_norm.default, _floatref(_instance_norm_ref), F,
           _instance_norm_samples, tols=TOLS, error_inputs=_instance_norm_errors),
)
