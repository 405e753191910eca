"""Contraction prims: dot_general and conv_general (lax's ``dot_general`` and
``conv_general_dilated`` with NCH..W / OIH..W layouts).

Both accumulate in the operands' dtype (integers wrap; bool: or of ands); half types
accumulate in float32.
"""
from __future__ import annotations

from ...ops import prims as _p
from ..registry import TensorMeta, derivative
from ._common import cj, permute_to, prim, zeros
from .checks import (IFC, check_category, check_dims, check_tensor, fail, int_arg, per_dim,
                     same_dtype)
from .layout import pad_sizes
import math

__all__ = ["dot_general", "dot_general_dims", "conv_general", "conv_shape"]


def dot_general_dims(lhs, rhs, lhs_contracting_dims, rhs_contracting_dims, lhs_batch_dims,
                     rhs_batch_dims):
    """Validated dims of a dot_general: (lc, rc, lb, rb, lhs free, rhs free)."""
    n = "dot_general"
    check_tensor(n, "lhs", lhs)
    check_tensor(n, "rhs", rhs)
    same_dtype(n, ("lhs", lhs), ("rhs", rhs))
    lc = check_dims(n, lhs_contracting_dims, lhs.ndim, "lhs_contracting_dims")
    rc = check_dims(n, rhs_contracting_dims, rhs.ndim, "rhs_contracting_dims")
    lb = check_dims(n, lhs_batch_dims, lhs.ndim, "lhs_batch_dims")
    rb = check_dims(n, rhs_batch_dims, rhs.ndim, "rhs_batch_dims")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise fail(n, "lhs and rhs need as many contracting dims and as many batch dims")
    if set(lc) & set(lb) or set(rc) & set(rb):
        raise fail(n, "a dim cannot be both a contracting and a batch dim")
    for kind, ld, rd in (("contracting", lc, rc), ("batch", lb, rb)):
        for a, b in zip(ld, rd):
            if lhs.shape[a] != rhs.shape[b]:
                raise fail(n, f"{kind} dims have different sizes: lhs dim {a} is "
                              f"{lhs.shape[a]}, rhs dim {b} is {rhs.shape[b]}")
    lf = tuple(d for d in range(lhs.ndim) if d not in lc and d not in lb)
    rf = tuple(d for d in range(rhs.ndim) if d not in rc and d not in rb)
    return lc, rc, lb, rb, lf, rf


def _dot_general_meta(lhs, rhs, lhs_contracting_dims, rhs_contracting_dims, lhs_batch_dims,
                      rhs_batch_dims):
    lc, rc, lb, rb, lf, rf = dot_general_dims(lhs, rhs, lhs_contracting_dims,
                                              rhs_contracting_dims, lhs_batch_dims,
                                              rhs_batch_dims)
    shape = tuple(lhs.shape[d] for d in lb + lf) + tuple(rhs.shape[d] for d in rf)
    return TensorMeta(shape, lhs.dtype)


dot_general = prim(
    "dot_general(Tensor lhs, Tensor rhs, int[] lhs_contracting_dims, "
    "int[] rhs_contracting_dims, int[] lhs_batch_dims, int[] rhs_batch_dims) -> Tensor",
    _dot_general_meta)


@derivative(dot_general)
def _dot_general_backward(grad, lhs, rhs, lhs_contracting_dims, rhs_contracting_dims,
                          lhs_batch_dims, rhs_batch_dims, needs_input_grad):
    lc, rc, lb, rb = (list(x) for x in (lhs_contracting_dims, rhs_contracting_dims,
                                         lhs_batch_dims, rhs_batch_dims))
    lf = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rf = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    # grad's dims: batch, lhs free, rhs free
    gb = list(range(len(lb)))
    g_lf = list(range(len(lb), len(lb) + len(lf)))
    g_rf = list(range(len(lb) + len(lf), grad.ndim))
    gl = gr = None
    if needs_input_grad[0]:
        # grad contracted with rhs over rhs's free dims: (batch, lhs free, rhs's contracting
        # dims in ascending order), each of which stands for its lhs contracting partner
        x = _p.dot_general(grad, cj(rhs), g_rf, rf, gb, rb)
        gl = permute_to(x, lb + lf + [lc[rc.index(r)] for r in sorted(rc)])
    if needs_input_grad[1]:
        x = _p.dot_general(grad, cj(lhs), g_lf, lf, gb, lb)
        gr = permute_to(x, rb + rf + [rc[lc.index(ld)] for ld in sorted(lc)])
    return gl, gr


def conv_shape(lhs, rhs, window_strides, padding_low, padding_high, lhs_dilation,
               rhs_dilation, feature_group_count):
    """Validated conv_general arguments and output shape, as a dict."""
    n = "conv_general"
    check_tensor(n, "lhs", lhs)
    check_tensor(n, "rhs", rhs)
    same_dtype(n, ("lhs", lhs), ("rhs", rhs))
    check_category(n, lhs, IFC, "lhs")
    if lhs.ndim != rhs.ndim or lhs.ndim not in (3, 4, 5):
        raise fail(n, f"expected lhs (N, C, *spatial) and rhs (O, C/groups, *kernel) of the "
                      f"same rank 3, 4 or 5, got ranks {lhs.ndim} and {rhs.ndim}")
    ns = lhs.ndim - 2
    strides = per_dim(n, "window_strides", window_strides, ns)
    plo = per_dim(n, "padding_low", padding_low, ns)
    phi = per_dim(n, "padding_high", padding_high, ns)
    ld = per_dim(n, "lhs_dilation", lhs_dilation, ns)
    rd = per_dim(n, "rhs_dilation", rhs_dilation, ns)
    g = int_arg(n, "feature_group_count", feature_group_count)
    for what, xs in (("window_strides", strides), ("lhs_dilation", ld),
                     ("rhs_dilation", rd)):
        if any(x < 1 for x in xs):
            raise fail(n, f"{what} {list(xs)} must be >= 1")
    nb, c = lhs.shape[:2]
    o, cg = rhs.shape[:2]
    if g < 1 or c % g or o % g:
        raise fail(n, f"feature_group_count {g} must be >= 1 and divide the input channels "
                      f"({c}) and output channels ({o})")
    if cg * g != c:
        raise fail(n, f"rhs has {cg} input channels per group, expected {c} / {g} = "
                      f"{c // g}")
    kernel = tuple(rhs.shape[2:])
    if any(k < 1 for k in kernel):
        raise fail(n, f"kernel spatial sizes {list(kernel)} must be >= 1")
    padded = pad_sizes(n, lhs.shape[2:], plo, phi, [x - 1 for x in ld])
    out = []
    for p, k, r, s in zip(padded, kernel, rd, strides):
        kd = (k - 1) * r + 1
        out.append(max(0, (p - kd) // s + 1) if p >= kd else 0)
    return dict(strides=strides, plo=plo, phi=phi, ld=ld, rd=rd, groups=g,
                shape=(nb, o, *out))


def _conv_meta(lhs, rhs, window_strides, padding_low, padding_high, lhs_dilation,
               rhs_dilation, feature_group_count):
    c = conv_shape(lhs, rhs, window_strides, padding_low, padding_high, lhs_dilation,
                   rhs_dilation, feature_group_count)
    return TensorMeta(c["shape"], lhs.dtype)


conv_general = prim(
    "conv_general(Tensor lhs, Tensor rhs, int[] window_strides, SymInt[] padding_low, "
    "SymInt[] padding_high, int[] lhs_dilation, int[] rhs_dilation, int feature_group_count)"
    " -> Tensor", _conv_meta)


def _conv_lhs_grad(grad, rhs, strides, plo, lhs_size, ld, rd, groups):
    """The gradient of conv_general wrt ``lhs``: a conv of ``grad`` dilated by the strides
    with the kernel flipped and its channel axes swapped per group."""
    o, cg = rhs.shape[:2]
    k = list(rhs.shape[2:])
    ns = len(k)
    spatial = list(range(2, 2 + ns))
    # (O, C/g, *K) -> (g, O/g, C/g, *K) -> (g, C/g, O/g, *K) -> (C, O/g, *K), flipped
    w = _p.reshape(cj(rhs), [groups, o // groups, cg] + k)
    w = _p.transpose(w, [0, 2, 1] + [3 + i for i in range(ns)])
    w = _p.rev(_p.reshape(w, [groups * cg, o // groups] + k), spatial)
    low, high = [], []
    for kk, r, lo, n, s, d, p in zip(k, rd, plo, lhs_size, strides, ld, grad.shape[2:]):
        # lhs element i sits at lo + i * d of the padded input; output p reads it through
        # tap kk' where p * s + kk' * r = lo + i * d
        kd = (kk - 1) * r + 1
        low.append(kd - 1 - lo)
        high.append((n - 1) * d + lo - (p - 1) * s)
    return _p.conv_general(grad, w, list(ld), low, high, list(strides), list(rd), groups)


def _conv_rhs_grad(grad, lhs, strides, plo, kernel, ld, rd, groups):
    """The gradient of conv_general wrt ``rhs``: a conv of ``lhs`` (batch as channels) with
    ``grad`` (batch as input channels); groups go through the batch axis."""
    n, c = lhs.shape[:2]
    ns = lhs.ndim - 2
    sp = [3 + i for i in range(ns)]
    # (N, C, *S) -> (N, g, C/g, *S) -> (C/g, g, N, *S) -> (C/g, g*N, *S)
    x = _p.reshape(cj(lhs), [n, groups, c // groups] + list(lhs.shape[2:]))
    x = _p.reshape(_p.transpose(x, [2, 1, 0] + sp), [c // groups, groups * n]
                   + list(lhs.shape[2:]))
    g = _p.transpose(grad, [1, 0] + [2 + i for i in range(ns)])       # (O, N, *P)
    high = []
    for kk, r, lo, size, s, d, p in zip(kernel, rd, plo, lhs.shape[2:], strides, ld,
                                        grad.shape[2:]):
        # exactly K outputs: the padded length is (K - 1) * r + (P - 1) * s + 1
        high.append((kk - 1) * r + (p - 1) * s - lo - (size - 1) * d)
    w = _p.conv_general(x, g, list(rd), list(plo), high, list(ld), list(strides), groups)
    return _p.transpose(w, [1, 0] + [2 + i for i in range(ns)])       # (O, C/g, *K)


@derivative(conv_general)
def _conv_general_backward(grad, lhs, rhs, window_strides, padding_low, lhs_dilation,
                           rhs_dilation, feature_group_count, needs_input_grad):
    empty = math.prod(grad.shape) == 0 or math.prod(lhs.shape) == 0 or math.prod(rhs.shape) == 0
    gl = gr = None
    if needs_input_grad[0]:
        gl = zeros(lhs.shape, grad) if empty else _conv_lhs_grad(
            grad, rhs, window_strides, padding_low, lhs.shape[2:], lhs_dilation, rhs_dilation,
            feature_group_count)
    if needs_input_grad[1]:
        gr = zeros(rhs.shape, grad) if empty else _conv_rhs_grad(
            grad, lhs, window_strides, padding_low, rhs.shape[2:], lhs_dilation, rhs_dilation,
            feature_group_count)
    return gl, gr
