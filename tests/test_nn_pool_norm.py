"""Padding, pooling and normalization layers (issue 19) against NumPy references: the
padding modules (``np.pad``), adaptive max pooling, max unpooling, LP pooling, fractional
max pooling and local response normalization (direct loops over windows), SyncBatchNorm
in one process, and the existing GroupNorm/InstanceNorm/RMSNorm/EmbeddingBag/Bilinear/
Unflatten plus LazyLinear.  The new functions are also checked for gradients (finite
differences), ``fnx.compile`` against eager and the cuda backend against the CPU.

The aten ops (adaptive_max_pool*, max_unpool*, fractional_max_pool*) have OpInfo entries
(fnx/testing/opinfo/nn/pooling_max.py) that run every generic check; this file checks the
``nn.functional`` and ``nn`` layers above them.
"""
import itertools
import math
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fnx
import fnx.nn as nn
import fnx.nn.functional as F
from fnx.autograd import gradcheck

CUDA = pytest.mark.skipif(not fnx.cuda.is_available(),
                          reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")


def rand(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def T(a, **kw):
    return fnx.tensor(np.asarray(a), **kw)


def N(x):
    return np.asarray(x.detach().numpy(force=True))


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(N(a) if not isinstance(a, np.ndarray) else a, b, rtol=tol,
                               atol=tol, equal_nan=True)


def grad_ok(fn, *arrays):
    ts = [T(a).requires_grad_() for a in arrays]
    assert gradcheck(fn, ts, eps=1e-6, atol=1e-5, rtol=1e-3)


# ----------------------------------------------------------------------------- padding

NP_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}
PAD_CLASSES = {"reflect": "ReflectionPad", "replicate": "ReplicationPad",
               "circular": "CircularPad"}


def np_pad(x, pad, mode, value=0.0):
    nd = len(pad) // 2
    widths = [(0, 0)] * (x.ndim - nd) + [(pad[2 * i], pad[2 * i + 1])
                                        for i in reversed(range(nd))]
    if mode == "constant":
        return np.pad(x, widths, constant_values=value)
    return np.pad(x, widths, mode=NP_MODE[mode])


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant", "zero"])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("batched", [True, False])
def test_padding_modules_match_np_pad(mode, nd, batched):
    pad = (2, 1, 0, 3, 1, 2)[:2 * nd]
    shape = ((2,) if batched else ()) + (3,) + (4, 5, 6)[:nd]
    x = rand(*shape)
    if mode == "constant":
        m = getattr(nn, f"ConstantPad{nd}d")(pad, 2.5)
        ref = np_pad(x, pad, "constant", 2.5)
    elif mode == "zero":
        m = getattr(nn, f"ZeroPad{nd}d")(pad)
        assert isinstance(m, getattr(nn, f"ConstantPad{nd}d"))
        ref = np_pad(x, pad, "constant", 0.0)
    else:
        m = getattr(nn, f"{PAD_CLASSES[mode]}{nd}d")(pad)
        ref = np_pad(x, pad, mode)
    close(m(T(x)), ref, 0)
    assert m.padding == pad


def test_padding_module_int_padding_repr_and_module_path():
    assert nn.ReflectionPad2d(2).padding == (2, 2, 2, 2)
    assert nn.ZeroPad3d(1).padding == (1,) * 6
    assert repr(nn.ConstantPad1d((1, 2), 3.5)) == "ConstantPad1d(padding=(1, 2), value=3.5)"
    assert repr(nn.ZeroPad2d(1)) == "ZeroPad2d((1, 1, 1, 1))"
    assert repr(nn.CircularPad3d(1)) == "CircularPad3d((1, 1, 1, 1, 1, 1))"
    assert nn.modules.padding.ReplicationPad3d is nn.ReplicationPad3d
    x = rand(1, 2, 5)
    close(nn.ReflectionPad1d(4)(T(x)), np_pad(x, (4, 4), "reflect"), 0)


def test_padding_errors():
    with pytest.raises(RuntimeError, match="Padding size should be less than the "
                                           "corresponding input dimension"):
        nn.ReflectionPad1d(3)(fnx.ones(1, 2, 3))
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 1D input\)"):
        nn.CircularPad2d(1)(fnx.ones(5))
    with pytest.raises(RuntimeError, match="wrapping around more than once"):
        nn.CircularPad1d(4)(fnx.ones(1, 3))
    for mode in ("reflect", "replicate", "circular"):
        with pytest.raises(NotImplementedError,
                           match="Padding size 2 is not supported for 4D input tensor"):
            F.pad(fnx.ones(2, 3, 4, 5), (1, 1), mode)
        with pytest.raises(NotImplementedError,
                           match="Padding size 2 is not supported for 1D input tensor"):
            F.pad(fnx.ones(5), (1, 1), mode)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_f_pad_unbatched_and_batched_ranks(mode):
    # 2-D..5-D inputs: the last 1-3 dims padded, with and without a batch dim
    for shape, pad in (((3, 5), (1, 2)), ((2, 3, 5), (2, 1)), ((3, 4, 5), (1, 2, 2, 1)),
                       ((2, 3, 4, 5), (1, 0, 2, 3)), ((3, 3, 4, 5), (1, 1, 2, 1, 0, 2)),
                       ((2, 3, 3, 4, 5), (1, 1, 2, 1, 0, 2))):
        x = rand(*shape)
        close(F.pad(T(x), pad, mode), np_pad(x, pad, mode), 0)


# ----------------------------------------------------------------------------- adaptive max

def np_window_max(vals, ids):
    """PyTorch's scan: a strictly greater value or a NaN takes over."""
    best, bi = vals[0], ids[0]
    for v, i in zip(vals[1:], ids[1:]):
        if v > best or np.isnan(v):
            best, bi = v, i
    return best, bi


def np_pool_windows(x, nd, windows):
    lead, sp = x.shape[:-nd], x.shape[-nd:]
    ids = np.arange(int(np.prod(sp))).reshape(sp)
    out_shape = None
    for li in np.ndindex(*lead):
        wins = [windows(li, d) for d in range(nd)]
        if out_shape is None:
            out_shape = lead + tuple(len(w) for w in wins)
            v, i = np.zeros(out_shape), np.zeros(out_shape, np.int64)
        for pos in np.ndindex(*(len(w) for w in wins)):
            sl = tuple(slice(*wins[d][pos[d]]) for d in range(nd))
            v[li + pos], i[li + pos] = np_window_max(x[li][sl].ravel(), ids[sl].ravel())
    return v, i


def np_adaptive_max(x, out):
    nd = len(out)
    sp = x.shape[-nd:]
    return np_pool_windows(x, nd, lambda li, d: [
        ((j * sp[d]) // out[d], -((-(j + 1) * sp[d]) // out[d])) for j in range(out[d])])


@pytest.mark.parametrize("nd,shape,out", [
    (1, (2, 3, 7), (3,)), (1, (3, 8), (5,)), (2, (2, 3, 7, 5), (3, 2)),
    (2, (3, 5, 4), (4, 4)), (3, (2, 2, 5, 4, 3), (2, 3, 2)), (3, (2, 5, 4, 4), (3, 2, 1)),
    (3, (1, 1, 3, 3, 3), (5, 4, 3))])
def test_adaptive_max_pool(nd, shape, out):
    x = rand(*shape)
    f = getattr(F, f"adaptive_max_pool{nd}d")
    v, i = f(T(x), out, return_indices=True)
    rv, ri = np_adaptive_max(x, out)
    close(v, rv, 0)
    assert N(i).tolist() == ri.tolist() and i.dtype == fnx.int64
    close(f(T(x), out), rv, 0)
    m = getattr(nn, f"AdaptiveMaxPool{nd}d")(out, return_indices=True)
    close(m(T(x))[0], rv, 0)


def test_adaptive_max_pool_nan_ties_none_sizes():
    x = np.array([[[1.0, np.nan, 3.0, np.nan], [5.0, 2.0, 5.0, 5.0]],
                  [[-np.inf, -np.inf, 2.0, 2.0], [-np.inf, -np.inf, np.inf, 1.0]]])
    for out in ((1, 3), (2, 1), (1, 1)):
        v, i = F.adaptive_max_pool2d(T(x), out, return_indices=True)
        rv, ri = np_adaptive_max(x, out)
        close(v, rv, 0)
        assert N(i).tolist() == ri.tolist()
    x = rand(1, 2, 4, 5, 6)
    v = F.adaptive_max_pool3d(T(x), (None, 2, None))
    close(v, np_adaptive_max(x, (4, 2, 6))[0], 0)
    assert repr(nn.AdaptiveMaxPool3d(2)) == "AdaptiveMaxPool3d(output_size=2)"


def test_adaptive_max_pool_errors():
    with pytest.raises(RuntimeError, match=r"adaptive_max_pool3d\(\): Expected 4D or 5D"):
        F.adaptive_max_pool3d(fnx.ones(3, 3, 3), 2)
    with pytest.raises(RuntimeError, match="dimension 1 being empty"):
        F.adaptive_max_pool2d(fnx.ones(2, 0, 3, 3), 2)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        F.adaptive_max_pool2d(fnx.ones(1, 3, 3, dtype=fnx.int64), 2)
    with pytest.raises(RuntimeError, match="Expected 2 to 3 dimensions"):
        F.adaptive_max_pool1d(fnx.ones(4), 2)


def test_adaptive_max_pool_grad_compile():
    x = rand(2, 2, 5, 4, 3)
    grad_ok(lambda t: F.adaptive_max_pool3d(t, (2, 3, 2)), x)
    grad_ok(lambda t: F.adaptive_max_pool1d(t, 3), rand(2, 7))
    f = lambda t: F.adaptive_max_pool2d(t, (3, 2), return_indices=True)  # noqa: E731
    (v, i), (cv, ci) = f(T(x[0])), fnx.compile(f)(T(x[0]))
    close(cv, N(v), 0)
    assert N(ci).tolist() == N(i).tolist()


# ----------------------------------------------------------------------------- unpool

def np_unpool(v, i, out):
    nd = len(out)
    lead = v.shape[:-nd]
    r = np.zeros(lead + (int(np.prod(out)),))
    for li in np.ndindex(*lead):
        r[li][i[li].ravel()] = v[li].ravel()
    return r.reshape(lead + tuple(out))


@pytest.mark.parametrize("nd,shape,k,s,p", [
    (1, (2, 3, 9), 2, None, 0), (1, (3, 8), 3, 3, 1), (2, (2, 3, 6, 7), 2, None, 0),
    (2, (3, 7, 5), (3, 2), (3, 2), (1, 0)), (3, (1, 2, 4, 5, 4), 2, None, 0),
    (3, (2, 4, 6, 4), 2, 2, (0, 1, 0))])
def test_max_unpool_round_trip(nd, shape, k, s, p):
    x = rand(*shape)
    v, i = getattr(F, f"max_pool{nd}d")(T(x), k, s, p, return_indices=True)
    kk = (k,) * nd if isinstance(k, int) else k
    ss = kk if s is None else ((s,) * nd if isinstance(s, int) else s)
    pp = (p,) * nd if isinstance(p, int) else p
    default = [(v.shape[-nd + d] - 1) * ss[d] + kk[d] - 2 * pp[d] for d in range(nd)]
    if default == list(shape[-nd:]):       # the indices address planes of this size
        u = getattr(F, f"max_unpool{nd}d")(v, i, k, s, p)
        close(u, np_unpool(N(v), N(i), default), 0)
    # the module, with the input's size as output_size (batch and channel dims allowed)
    m = getattr(nn, f"MaxUnpool{nd}d")(k, s, p)
    u2 = m(v, i, output_size=list(shape) if len(shape) == nd + 2 else list(shape[-nd:]))
    assert tuple(u2.shape) == shape
    close(u2, np_unpool(N(v), N(i), shape[-nd:]), 0)


def test_max_unpool_errors_and_repr():
    v, i = F.max_pool2d(T(rand(1, 1, 4, 4)), 2, return_indices=True)
    with pytest.raises(ValueError, match=r'invalid output_size "\[7, 7\]" \(dim 0 must be '
                                         r'between 2 and 6\)'):
        F.max_unpool2d(v, i, 2, output_size=[7, 7])
    with pytest.raises(ValueError, match="output_size should be a sequence containing 2 or 4"):
        F.max_unpool2d(v, i, 2, output_size=[1, 2, 3])
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 100 \(output volumes "
                                           r"are of size 4x4\)"):
        F.max_unpool2d(v, fnx.full_like(i, 100), 2)
    with pytest.raises(RuntimeError, match="Expected shape of indices to be same"):
        F.max_unpool2d(v, i[..., :1], 2)
    assert repr(nn.MaxUnpool2d(2)) == \
        "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))"
    assert repr(nn.MaxUnpool1d(2, 1, 1)) == \
        "MaxUnpool1d(kernel_size=(2,), stride=(1,), padding=(1,))"


def test_max_unpool_grad_compile_cuda_parity():
    v, i = F.max_pool3d(T(rand(1, 2, 4, 4, 4)), 2, return_indices=True)
    v = N(v)

    def f(t):
        return F.max_unpool3d(t, i, 2)
    grad_ok(f, v)
    close(fnx.compile(f)(T(v)), N(f(T(v))), 0)


# ----------------------------------------------------------------------------- LP pooling

def np_lp_pool(x, p, k, s, ceil_mode):
    """(mean over the window's elements * kernel numel) ** (1/p); a ceil-mode window cut by
    the input's end averages the elements it has."""
    nd = len(k)
    sp = x.shape[-nd:]
    outs = []
    for n, kk, ss in zip(sp, k, s):
        o = (n - kk + (ss - 1 if ceil_mode else 0)) // ss + 1
        if ceil_mode and (o - 1) * ss >= n:
            o -= 1
        outs.append(o)
    r = np.zeros(x.shape[:-nd] + tuple(outs))
    for pos in np.ndindex(*outs):
        sl = tuple(slice(q * ss, min(q * ss + kk, n)) for q, ss, kk, n in zip(pos, s, k, sp))
        w = x[(Ellipsis,) + sl]
        axes = tuple(range(-nd, 0))
        if p == math.inf:
            r[(Ellipsis,) + pos] = np.abs(w).max(axis=axes)
        else:
            r[(Ellipsis,) + pos] = ((w ** p).mean(axis=axes) * np.prod(k)) ** (1.0 / p)
    return r


@pytest.mark.parametrize("nd,shape,p,k,s,ceil", [
    (1, (2, 3, 9), 2, 3, None, False), (1, (3, 8), 3.0, 3, 2, True),
    (2, (2, 3, 6, 7), 2, 2, None, False), (2, (1, 2, 7, 6), 1.5, (3, 2), (2, 2), True),
    (2, (2, 5, 5), math.inf, 2, 1, False), (3, (1, 2, 4, 5, 4), 2, 2, (1, 2, 1), True),
    (3, (2, 4, 4, 4), 4, (2, 1, 2), None, False)])
def test_lp_pool(nd, shape, p, k, s, ceil):
    x = rand(*shape)
    if p not in (2, 4, math.inf):
        x = np.abs(x) + 0.1                 # x**p of a negative x is NaN (as PyTorch)
    kk = (k,) * nd if isinstance(k, int) else k
    ss = kk if s is None else ((s,) * nd if isinstance(s, int) else s)
    ref = np_lp_pool(x, p, kk, ss, ceil)
    close(getattr(F, f"lp_pool{nd}d")(T(x), p, k, s, ceil), ref, 1e-10)
    close(getattr(nn, f"LPPool{nd}d")(p, k, s, ceil)(T(x)), ref, 1e-10)


def test_lp_pool_grad_compile_repr():
    x = np.abs(rand(1, 2, 6, 5)) + 0.5
    grad_ok(lambda t: F.lp_pool2d(t, 2, 2, ceil_mode=True), x)
    grad_ok(lambda t: F.lp_pool1d(t, 3, 2), x[0])
    f = lambda t: F.lp_pool3d(t, 2.5, 2)  # noqa: E731
    y = rand(1, 2, 4, 4, 4)
    close(fnx.compile(f)(T(y)), N(f(T(y))), 1e-12)
    assert repr(nn.LPPool1d(1.5, 3, 2, True)) == \
        "LPPool1d(norm_type=1.5, kernel_size=3, stride=2, ceil_mode=True)"


# ----------------------------------------------------------------------------- fractional

def np_starts(u, n, o, k):
    """PyTorch's intervals in the samples' dtype: alpha = (n-k)/(o-1),
    start_i = trunc((i+u)*alpha) - trunc(u*alpha), last start n-k."""
    t = type(u)
    seq = [n - k] * o
    if o > 1:
        alpha = t(n - k) / t(o - 1)
        for i in range(o - 1):
            seq[i] = int(t(t(i) + u) * alpha) - int(u * alpha)
    return seq


def np_fractional(x, k, out, samples):
    nd = len(k)
    xb = x if x.ndim == nd + 2 else x[None]
    order = (1, 0) if nd == 2 else (0, 1, 2)       # 2-D: sample 0 drives the width

    def windows(li, d):
        u = samples[li[0], li[1], order[d]]
        return [(s, s + k[d]) for s in np_starts(u, xb.shape[2 + d], out[d], k[d])]
    v, i = np_pool_windows(xb, nd, windows)
    return (v, i) if x.ndim == nd + 2 else (v[0], i[0])


@pytest.mark.parametrize("nd,shape,k,out,dtype", [
    (2, (2, 3, 7, 8), (2, 2), (4, 5), np.float64), (2, (3, 9, 6), (3, 2), (5, 5), np.float32),
    (2, (1, 2, 6, 6), (2, 2), (5, 5), np.float32), (2, (1, 2, 5, 5), (2, 3), (1, 3), np.float64),
    (3, (2, 2, 5, 6, 7), (2, 2, 2), (3, 4, 5), np.float32),
    (3, (2, 4, 5, 6), (1, 2, 3), (2, 3, 1), np.float64)])
def test_fractional_max_pool(nd, shape, k, out, dtype):
    x = rand(*shape, dtype=dtype)
    n = shape[0] if len(shape) == nd + 2 else 1
    u = np.random.default_rng(1).random((n, shape[-nd - 1], nd)).astype(dtype)
    f = getattr(F, f"fractional_max_pool{nd}d")
    v, i = f(T(x), k, output_size=out, return_indices=True, _random_samples=T(u))
    rv, ri = np_fractional(x, k, out, u)
    close(v, rv, 0)
    assert N(i).tolist() == ri.tolist()
    m = getattr(nn, f"FractionalMaxPool{nd}d")(k, output_size=out, _random_samples=T(u))
    close(m(T(x)), rv, 0)


def test_fractional_max_pool_ratio_and_random_windows():
    x = rand(2, 3, 10, 9, dtype=np.float32)
    v, i = F.fractional_max_pool2d(T(x), 2, output_ratio=(0.5, 0.7), return_indices=True)
    assert tuple(v.shape) == (2, 3, 5, 6)            # int(10 * 0.5), int(9 * 0.7)
    # every value is the input at its index, the maximum of a 2x2 window there
    flat = x.reshape(2, 3, -1)
    assert np.array_equal(np.take_along_axis(flat, N(i).reshape(2, 3, -1), 2).ravel(),
                          N(v).ravel())
    m = nn.FractionalMaxPool3d(2, output_ratio=0.5)
    assert tuple(m(T(rand(1, 2, 6, 8, 4))).shape) == (1, 2, 3, 4, 2)
    assert repr(nn.FractionalMaxPool2d(2, output_size=3)) == "FractionalMaxPool2d()"


def test_fractional_max_pool_errors():
    with pytest.raises(ValueError, match="requires specifying either an output size, or a "
                                         "pooling ratio"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)
    with pytest.raises(ValueError, match=r"output_ratio must be between 0 and 1 \(got 1.5\)"):
        nn.FractionalMaxPool3d(2, output_ratio=1.5)
    with pytest.raises(ValueError, match="requires specifying either an output_size or an "
                                         "output_ratio"):
        F.fractional_max_pool2d(fnx.ones(1, 1, 4, 4), 2)
    with pytest.raises(RuntimeError, match="pool height 5 too large relative to input height 7"):
        F.fractional_max_pool2d(fnx.ones(1, 1, 7, 8), (5, 2), output_size=(4, 5))
    with pytest.raises(RuntimeError, match="pool time 2 too large relative to input time 4"):
        F.fractional_max_pool3d(fnx.ones(1, 1, 4, 8, 8), 2, output_size=(3, 2, 2))
    with pytest.raises(RuntimeError, match="same dtype as input"):
        F.fractional_max_pool2d(fnx.ones(1, 1, 4, 4), 2, output_size=2,
                                _random_samples=fnx.rand(1, 1, 2, dtype=fnx.float64))


def test_fractional_max_pool_grad_compile():
    x = rand(1, 2, 7, 6)
    u = T(np.random.default_rng(2).random((1, 2, 2)))
    grad_ok(lambda t: F.fractional_max_pool2d(t, 2, output_size=(4, 3), _random_samples=u), x)
    f = lambda t: F.fractional_max_pool2d(t, (2, 3), output_size=(4, 3),  # noqa: E731
                                          return_indices=True, _random_samples=u)
    (v, i), (cv, ci) = f(T(x)), fnx.compile(f)(T(x))
    close(cv, N(v), 0)
    assert N(ci).tolist() == N(i).tolist()


# ----------------------------------------------------------------------------- LRN

def np_lrn(x, size, alpha, beta, k):
    c = x.shape[1]
    div = np.zeros_like(x)
    for ch in range(c):
        lo, hi = max(0, ch - size // 2), min(c, ch + (size - 1) // 2 + 1)
        div[:, ch] = (x[:, lo:hi] ** 2).sum(axis=1) / size
    return x / (k + alpha * div) ** beta


@pytest.mark.parametrize("shape,size,alpha,beta,k", [
    ((2, 5, 7), 3, 1e-2, 0.75, 1.0), ((2, 6, 4, 3), 2, 0.5, 0.6, 2.0),
    ((1, 4, 3, 2, 3), 5, 1.0, 1.0, 0.5), ((3, 3, 4), 1, 0.3, 0.5, 1.0)])
def test_local_response_norm(shape, size, alpha, beta, k):
    x = rand(*shape)
    ref = np_lrn(x, size, alpha, beta, k)
    close(F.local_response_norm(T(x), size, alpha, beta, k), ref, 1e-12)
    close(nn.LocalResponseNorm(size, alpha, beta, k)(T(x)), ref, 1e-12)


def test_local_response_norm_grad_compile_errors():
    x = rand(2, 4, 3, 3)
    grad_ok(lambda t: F.local_response_norm(t, 3, 0.5, 0.75, 1.0), x)
    f = lambda t: F.local_response_norm(t, 2, 0.1)  # noqa: E731
    close(fnx.compile(f)(T(x)), N(f(T(x))), 1e-12)
    with pytest.raises(ValueError, match=r"Expected 3D or higher dimensionality input \(got 2"):
        F.local_response_norm(fnx.ones(3, 4), 2)
    assert tuple(F.local_response_norm(fnx.ones(0, 3, 4), 2).shape) == (0, 3, 4)
    assert repr(nn.LocalResponseNorm(3)) == "LocalResponseNorm(3, alpha=0.0001, beta=0.75, k=1.0)"


# ----------------------------------------------------------------------------- cuda backend

@CUDA
def test_new_functions_on_the_cuda_backend_match_cpu():
    x = rand(2, 3, 6, 5, dtype=np.float32)
    u = np.random.default_rng(3).random((2, 3, 2)).astype(np.float32)
    xp = np.abs(x) + 0.1
    v, i = F.max_pool2d(T(x), 2, return_indices=True)
    cases = [
        (lambda t: F.lp_pool2d(t, 1.5, 2, ceil_mode=True), xp),
        (lambda t: F.local_response_norm(t, 3, 0.5), x),
        (lambda t: F.adaptive_max_pool2d(t, (4, 3), return_indices=True), x),
        (lambda t: F.adaptive_max_pool3d(t, (2, 2, 3)), x),
        (lambda t: F.fractional_max_pool2d(
            t, 2, output_size=(4, 3), return_indices=True,
            _random_samples=T(u).to(t.device)), x),
        (lambda t: F.max_unpool2d(t, i.to(t.device), 2, output_size=(6, 5)), N(v)),
        (lambda t: nn.ReflectionPad2d((1, 2, 2, 0))(t), x),
        (lambda t: nn.CircularPad3d(1)(t), x),
    ]
    for fn, a in cases:
        cpu, gpu = fn(T(a)), fn(T(a).to("cuda"))
        cpu = cpu if isinstance(cpu, tuple) else (cpu,)
        gpu = gpu if isinstance(gpu, tuple) else (gpu,)
        for c, g in zip(cpu, gpu):
            assert g.device.type == "cuda"
            np.testing.assert_allclose(N(g), N(c), rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------- SyncBatchNorm

def np_batch_norm_train(x, eps):
    axes = (0,) + tuple(range(2, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps), x.mean(axis=axes), x.var(axis=axes, ddof=1)


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 2, 2, 3, 2)])
def test_sync_batch_norm_single_process_is_batch_norm(shape):
    x = rand(*shape)
    m = nn.SyncBatchNorm(3, momentum=0.3).double()
    with fnx.no_grad():
        m.weight.copy_(T([0.5, 2.0, -1.0]))
        m.bias.copy_(T([0.1, 0.0, 0.3]))
    y = m(T(x))
    xhat, mean, var = np_batch_norm_train(x, 1e-5)
    view = (1, 3) + (1,) * (len(shape) - 2)
    close(y, xhat * np.reshape([0.5, 2.0, -1.0], view) + np.reshape([0.1, 0.0, 0.3], view),
          1e-10)
    close(m.running_mean, 0.3 * mean, 1e-10)
    close(m.running_var, 0.7 + 0.3 * var, 1e-10)
    assert int(m.num_batches_tracked) == 1
    m.eval()
    rm, rv = N(m.running_mean).reshape(view), N(m.running_var).reshape(view)
    close(m(T(x)), (x - rm) / np.sqrt(rv + 1e-5) * np.reshape([0.5, 2.0, -1.0], view)
          + np.reshape([0.1, 0.0, 0.3], view), 1e-10)


def test_convert_sync_batchnorm_shares_parameters_and_stats():
    net = nn.Sequential(nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4, momentum=0.2),
                        nn.Sequential(nn.ReLU(), nn.BatchNorm1d(4, affine=False)))
    bn, bn1 = net[1], net[2][1]
    bn.eval()
    conv = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    s, s1 = conv[1], conv[2][1]
    assert type(s) is nn.SyncBatchNorm and type(s1) is nn.SyncBatchNorm
    assert s.weight is bn.weight and s.bias is bn.bias and s.running_mean is bn.running_mean
    assert s.momentum == 0.2 and not s.training and s1.weight is None and s1.training
    assert s1.running_var is bn1.running_var
    assert nn.modules.batchnorm.SyncBatchNorm is nn.SyncBatchNorm


def test_sync_batch_norm_errors():
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        nn.SyncBatchNorm(3)(fnx.ones(3))
    with pytest.raises(ValueError, match="number of input channels should be non-zero"):
        nn.SyncBatchNorm(0)(fnx.ones(2, 0, 3))


# ----------------------------------------------------------------------------- other norms

def np_group_norm(x, g, w, b, eps):
    n, c = x.shape[:2]
    xg = x.reshape(n, g, -1)
    y = ((xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + eps))
    y = y.reshape(x.shape)
    view = (1, c) + (1,) * (x.ndim - 2)
    if w is not None:
        y = y * w.reshape(view)
    if b is not None:
        y = y + b.reshape(view)
    return y


@pytest.mark.parametrize("affine,bias", [(True, True), (True, False), (False, True)])
def test_group_norm(affine, bias):
    x = rand(2, 6, 5, 4)
    m = nn.GroupNorm(3, 6, eps=1e-3, affine=affine, bias=bias).double()
    w = rand(6, seed=1)
    if affine:
        with fnx.no_grad():
            m.weight.copy_(T(w))
    assert (m.bias is None) == (not affine or not bias)
    close(m(T(x)), np_group_norm(x, 3, w if affine else None, None, 1e-3), 1e-10)
    with pytest.raises(ValueError, match=r"num_channels \(6\) must be divisible by "
                                         r"num_groups \(4\)"):
        nn.GroupNorm(4, 6)


@pytest.mark.parametrize("nd,batched", [(1, True), (1, False), (2, True), (3, True),
                                        (3, False)])
@pytest.mark.parametrize("affine,track", list(itertools.product([False, True], repeat=2)))
def test_instance_norm(nd, batched, affine, track):
    shape = ((2,) if batched else ()) + (3,) + ((7,), (4, 5), (3, 4, 5))[nd - 1]
    x = rand(*shape)
    m = getattr(nn, f"InstanceNorm{nd}d")(3, affine=affine, track_running_stats=track,
                                          momentum=0.3).double()
    w, b = rand(3, seed=1), rand(3, seed=2)
    if affine:
        with fnx.no_grad():
            m.weight.copy_(T(w))
            m.bias.copy_(T(b))
    xb = x if batched else x[None]
    axes = tuple(range(2, xb.ndim))
    view = (1, 3) + (1,) * nd
    y = (xb - xb.mean(axes, keepdims=True)) / np.sqrt(xb.var(axes, keepdims=True) + 1e-5)
    if affine:
        y = y * w.reshape(view) + b.reshape(view)
    close(m(T(x)), y if batched else y[0], 1e-10)
    if track:
        mean = xb.mean(axes).mean(0)
        var = xb.var(axes, ddof=1).mean(0)
        close(m.running_mean, 0.3 * mean, 1e-10)
        close(m.running_var, 0.7 + 0.3 * var, 1e-10)
        m.eval()
        rm, rv = N(m.running_mean).reshape(view), N(m.running_var).reshape(view)
        y = (xb - rm) / np.sqrt(rv + 1e-5)
        if affine:
            y = y * w.reshape(view) + b.reshape(view)
        close(m(T(x)), y if batched else y[0], 1e-10)


def test_rms_norm():
    x = rand(2, 6, 5, 4)
    w = rand(5, 4, seed=1)
    m = nn.RMSNorm([5, 4]).double()
    with fnx.no_grad():
        m.weight.copy_(T(w))
    ms = (x ** 2).mean(axis=(-2, -1), keepdims=True)
    close(m(T(x)), x / np.sqrt(ms + np.finfo(np.float64).eps) * w, 1e-10)
    ms = (x ** 2).mean(axis=-1, keepdims=True)
    close(nn.RMSNorm(4, eps=0.5, elementwise_affine=False)(T(x)), x / np.sqrt(ms + 0.5), 1e-10)
    with pytest.raises(RuntimeError, match="normalized_shape"):
        nn.RMSNorm(3)(T(x))


# ----------------------------------------------------------------------------- sparse, linear

def np_bags(W, idx, offsets, mode, psw=None, padding_idx=None, last=False):
    ends = list(offsets[1:]) + ([] if last else [len(idx)])
    starts = list(offsets[:len(ends)])
    out = np.zeros((len(starts), W.shape[1]))
    for b, (s, e) in enumerate(zip(starts, ends)):
        rows = [(W[j] * (1.0 if psw is None else psw[p])) for p, j in
                enumerate(idx[s:e], start=s) if j != padding_idx]
        if rows:
            out[b] = {"sum": np.sum, "mean": np.mean, "max": np.max}[mode](rows, axis=0)
    return out


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    W = rand(10, 3)
    idx = [1, 2, 4, 5, 4, 3, 2, 9]
    bag = nn.EmbeddingBag.from_pretrained(T(W), mode=mode)
    assert not bag.weight.requires_grad
    close(bag(T(idx), T([0, 4])), np_bags(W, idx, [0, 4], mode), 1e-12)
    close(bag(T(idx).view(2, 4)), np_bags(W, idx, [0, 4], mode), 1e-12)
    close(bag(T(idx), T([0, 0, 4])), np_bags(W, idx, [0, 0, 4], mode), 1e-12)   # empty bag
    last = nn.EmbeddingBag.from_pretrained(T(W), mode=mode, include_last_offset=True)
    close(last(T(idx), T([0, 3, 8])), np_bags(W, idx, [0, 3, 8], mode, last=True), 1e-12)
    pad = nn.EmbeddingBag.from_pretrained(T(W), mode=mode, padding_idx=2)
    close(pad(T(idx), T([0, 4])), np_bags(W, idx, [0, 4], mode, padding_idx=2), 1e-12)
    psw = rand(8, seed=3)
    if mode == "sum":
        close(bag(T(idx), T([0, 4]), per_sample_weights=T(psw)),
              np_bags(W, idx, [0, 4], mode, psw), 1e-12)
    else:
        with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
            bag(T(idx), T([0, 4]), per_sample_weights=T(psw))


def test_embedding_bag_errors():
    bag = nn.EmbeddingBag(10, 3)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        bag(T([1, 2]))
    with pytest.raises(ValueError, match="input has to be 1D or 2D Tensor, but got Tensor of "
                                         "dimension 3"):
        bag(T([[[1, 2]]]))
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        bag(T([[1, 2]]), T([0]))


def test_bilinear_identity_unflatten():
    m = nn.Bilinear(3, 4, 5).double()
    x1, x2 = rand(2, 6, 3), rand(2, 6, 4, seed=1)
    W, b = N(m.weight), N(m.bias)
    close(m(T(x1), T(x2)), np.einsum("...i,oij,...j->...o", x1, W, x2) + b, 1e-10)
    with pytest.raises(RuntimeError, match="input batch dimensions do not match at dim 0: got "
                                           "2 and 3"):
        m(T(rand(2, 3)), T(rand(3, 4)))
    x = fnx.ones(2)
    assert nn.Identity(3, foo=1)(x) is x
    y = nn.Unflatten(1, (2, -1))(T(rand(2, 6, 3)))
    assert tuple(y.shape) == (2, 2, 3, 3)
    with pytest.raises(RuntimeError, match="don't multiply up to the size of dim 1"):
        nn.Unflatten(1, (4, 2))(T(rand(2, 6, 3)))


def test_lazy_linear():
    fnx.manual_seed(0)
    m = nn.LazyLinear(3).double()
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    w0, b0 = m.weight, m.bias
    opt = fnx.optim.SGD(m.parameters(), lr=0.1)
    x = rand(5, 4)
    y = m(T(x))
    assert type(m) is nn.Linear and m.in_features == 4
    assert m.weight is w0 and m.bias is b0 and tuple(w0.shape) == (3, 4)
    W, b = N(m.weight).copy(), N(m.bias).copy()
    bound = 1 / math.sqrt(4)                  # PyTorch's init bounds for fan_in 4
    assert np.abs(W).max() <= bound and np.abs(b).max() <= bound
    close(y, x @ W.T + b, 1e-12)
    y.sum().backward()
    opt.step()                                # the optimizer made before the call trains it
    close(m.weight, W - 0.1 * np.ones((3, 1)) * x.sum(0), 1e-12)


@pytest.mark.multiprocess
def test_sync_batch_norm_across_two_processes():
    """tests/distributed/worker.py ``syncbn``: each rank checks itself against NumPy."""
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("XLA_FLAGS", None)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "fnx.distributed.run", "--nproc-per-node", "2",
           "--master-port", str(port), str(root / "tests" / "distributed" / "worker.py"),
           "syncbn"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "rank 0: syncbn ok" in proc.stdout and "rank 1: syncbn ok" in proc.stdout


def test_sync_batch_norm_in_a_world_of_one_is_batch_norm():
    dist = fnx.distributed
    dist.init_process_group("gloo", world_size=1, rank=0)
    try:
        x = rand(4, 3, 5)
        y = nn.SyncBatchNorm(3).double()(T(x))
        close(y, np_batch_norm_train(x, 1e-5)[0], 1e-10)
    finally:
        dist.destroy_process_group()


def test_instance_norm_num_features_mismatch():
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        y = nn.InstanceNorm1d(4)(T(rand(2, 3, 7)))      # affine=False: num_features unused
    assert tuple(y.shape) == (2, 3, 7)
    with pytest.raises(ValueError, match=r"match num_features \(4\), but got: 3"):
        nn.InstanceNorm1d(4, affine=True)(T(rand(2, 3, 7)))


def test_max_pool_in_bfloat16_matches_float32_rounded():
    # bfloat16 is NumPy kind "V" (ml_dtypes): the CPU kernel took it for an integer type
    x = fnx.randn(2, 3, 6, 6)
    got = F.max_pool2d(x.bfloat16(), 3, stride=2, padding=1)
    want = F.max_pool2d(x, 3, stride=2, padding=1).bfloat16()
    assert got.dtype == fnx.bfloat16
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
