"""Convolution: the core ``convolution`` op and its backward, ``conv1d``-``conv3d`` (also
with string padding) and ``conv_transpose1d``-``conv_transpose3d``."""
from __future__ import annotations

from ....ops import aten, prims
from ...registry import TensorMeta, defop, derivative
from ._common import CORE, _channel_view, _check_float, _same, _to, _up


def _ints(name, what, v, n, allow_empty=False):
    """An ``int[n]`` argument as an n-tuple (a single int or 1-list broadcasts)."""
    v = (v,) if isinstance(v, int) else tuple(int(x) for x in v)
    if allow_empty and not v:
        return None
    if len(v) == 1:
        v = v * n
    if len(v) != n:
        raise RuntimeError(f"{name}: expected {what} to be a single integer value or a list "
                           f"of {n} values to match the convolution dimensions, but got "
                           f"{what}={list(v)}")
    return v


def _conv_params(input, weight, stride, padding, dilation, transposed, output_padding, groups):
    """PyTorch's ``check_shape_forward``: validated per-dim parameters and the output shape."""
    k = weight.ndim
    nd = k - 2
    if nd < 1:
        raise RuntimeError(f"weight should have at least three dimensions, but got weight of "
                           f"size {list(weight.shape)}")
    if input.ndim != k:
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.ndim}-dimensional input of "
                           f"size {list(input.shape)} instead")
    s = _ints("convolution", "stride", stride, nd)
    p = _ints("convolution", "padding", padding, nd)
    d = _ints("convolution", "dilation", dilation, nd)
    op = _ints("convolution", "output_padding", output_padding, nd) if transposed else (0,) * nd
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(x < 0 for x in p):
        raise RuntimeError("negative padding is not supported")
    if any(x < 0 for x in op):
        raise RuntimeError("negative output_padding is not supported")
    if any(x <= 0 for x in s):
        raise RuntimeError("non-positive stride is not supported")
    if any(x <= 0 for x in d):
        raise RuntimeError("dilation should be greater than zero")
    w = list(weight.shape)
    if w[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {w} instead")
    if w[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size {w} instead")
    return nd, s, p, d, op


def _conv_meta(input, weight, bias, stride, padding, dilation, transposed, output_padding,
               groups):
    nd, s, p, d, op = _conv_params(input, weight, stride, padding, dilation, transposed,
                                   output_padding, groups)
    w, x = list(weight.shape), list(input.shape)
    if not transposed:
        if x[1] != w[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {w}, expected input{x} to "
                               f"have {w[1] * groups} channels, but got {x[1]} channels instead")
        nb = w[0]
    else:
        if x[1] != w[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {w}, expected input{x} to "
                               f"have {w[0]} channels, but got {x[1]} channels instead")
        nb = w[1] * groups
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != nb):
        what = "Given transposed=1, weight" if transposed else "Given weight"
        raise RuntimeError(f"{what} of size {w}, expected bias to be 1-dimensional with {nb} "
                           f"elements, but got bias of size {list(bias.shape)} instead")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"Input type ({input.dtype.scalar_type}) and weight type "
                           f"({weight.dtype.scalar_type}) should be the same")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({input.dtype.scalar_type}) and bias type "
                           f"({bias.dtype.scalar_type}) should be the same")
    _check_float(input, f"slow_conv{'_transpose' if transposed else ''}{nd}d_cpu")
    spatial, kern = x[2:], w[2:]
    if not transposed:
        padded = [n + 2 * pp for n, pp in zip(spatial, p)]
        eff = [dd * (kk - 1) + 1 for dd, kk in zip(d, kern)]
        if any(a < b for a, b in zip(padded, eff)):
            raise RuntimeError(f"Calculated padded input size per channel: "
                               f"({' x '.join(map(str, padded))}). Kernel size: "
                               f"({' x '.join(map(str, eff))}). Kernel size can't be greater "
                               f"than actual input size")
        out = [(a - b) // ss + 1 for a, b, ss in zip(padded, eff, s)]
    else:
        out = [(n - 1) * ss - 2 * pp + dd * (kk - 1) + o + 1
               for n, ss, pp, dd, kk, o in zip(spatial, s, p, d, kern, op)]
        if any(o < 0 for o in out):
            raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, spatial))})."
                               f" Calculated output size per channel: "
                               f"({' x '.join(map(str, out))}). Output size is too small")
    return TensorMeta((x[0], nb, *out), input.dtype)


def transposed_weight(weight, groups):
    """(Cin, Cout/g, *k) weights of a transposed conv as (Cout, Cin/g, *k) of the equivalent
    direct conv over the stride-dilated input: groups regrouped and kernels flipped."""
    cin, cog = weight.shape[:2]
    k = list(weight.shape[2:])
    nd = len(k)
    w = aten.view(weight, [groups, cin // groups, cog] + k)
    w = aten.permute(w, [0, 2, 1] + list(range(3, 3 + nd)))
    w = aten.reshape(w, [groups * cog, cin // groups] + k)
    return aten.flip(w, list(range(2, 2 + nd)))


def conv_as_general(input, weight, stride, padding, dilation, transposed, output_padding,
                    groups):
    """convolution's arguments in conv_general's terms (lax.conv_general_dilated)."""
    nd = weight.ndim - 2
    s, p, d = (_ints("convolution", n, v, nd) for n, v in
               (("stride", stride), ("padding", padding), ("dilation", dilation)))
    if not transposed:
        return weight, dict(window_strides=list(s), padding_low=list(p), padding_high=list(p),
                            lhs_dilation=[1] * nd, rhs_dilation=list(d),
                            feature_group_count=groups)
    op = _ints("convolution", "output_padding", output_padding, nd)
    k = weight.shape[2:]
    lo = [dd * (kk - 1) - pp for dd, kk, pp in zip(d, k, p)]
    hi = [a + o for a, o in zip(lo, op)]
    return transposed_weight(weight, groups), dict(
        window_strides=[1] * nd, padding_low=lo, padding_high=hi, lhs_dilation=list(s),
        rhs_dilation=list(d), feature_group_count=groups)


def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                 groups):
    meta = _conv_meta(input, weight, bias, stride, padding, dilation, transposed,
                      output_padding, groups)
    w, kw = conv_as_general(input, weight, stride, padding, dilation, transposed,
                            output_padding, groups)
    x = _up(input)
    out = prims.conv_general(x, _up(w), kw["window_strides"], kw["padding_low"],
                             kw["padding_high"], kw["lhs_dilation"], kw["rhs_dilation"],
                             kw["feature_group_count"])
    if bias is not None:
        out = out + _channel_view(_up(bias), out.ndim)
    assert tuple(out.shape) == meta.shape
    return _to(out, input.dtype)


convolution = defop(
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
    "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
    tags=CORE, meta=_conv_meta, decomposition=_convolution, explicit=True)


def _conv_backward_meta(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                        transposed, output_padding, groups, output_mask):
    _conv_params(input, weight, stride, padding, dilation, transposed, output_padding, groups)
    nb = weight.shape[1] * groups if transposed else weight.shape[0]
    return (_same(input) if output_mask[0] else None,
            _same(weight) if output_mask[1] else None,
            TensorMeta((nb,), grad_output.dtype) if output_mask[2] else None)


def _conv_weight_grad(x, gy, weight_shape, stride, padding, dilation, groups):
    """d(conv(x, w))/dw as a convolution: batch and channel roles swap, stride and dilation
    swap, and the groups become the feature groups of the swapped input."""
    n, c = x.shape[:2]
    nd = x.ndim - 2
    cg = c // groups
    sp = list(range(2, 2 + nd))
    # lhs[c', g*N + n, ...] = x[n, g*cg + c', ...]
    lhs = aten.view(x, [n, groups, cg] + list(x.shape[2:]))
    lhs = aten.reshape(aten.permute(lhs, [2, 1, 0] + [i + 1 for i in sp]),
                       [cg, groups * n] + list(x.shape[2:]))
    # rhs[g*og + o', n, ...] = gy[n, g*og + o', ...]
    rhs = aten.permute(gy, [1, 0] + sp)
    gw = aten.convolution(lhs, rhs, None, list(dilation), list(padding), list(stride), False,
                          [0] * nd, groups)                     # (cg, O, *k')
    for i, kk in enumerate(weight_shape[2:]):
        if gw.shape[2 + i] != kk:
            gw = aten.slice.Tensor(gw, 2 + i, 0, kk)
    return aten.permute(gw, [1, 0] + sp)


def _convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                          transposed, output_padding, groups, output_mask):
    nd, s, p, d, op = _conv_params(input, weight, stride, padding, dilation, transposed,
                                   output_padding, groups)
    gi = gw = gb = None
    if output_mask[2]:
        gb = aten.sum.dim_IntList(grad_output, [0] + list(range(2, 2 + nd)), False)
    if not transposed:
        if output_mask[0]:
            k = weight.shape[2:]
            # output_padding recovers input sizes the forward's floor division dropped
            extra = [n - ((o - 1) * ss - 2 * pp + dd * (kk - 1) + 1) for n, o, ss, pp, dd, kk in
                     zip(input.shape[2:], grad_output.shape[2:], s, p, d, k)]
            gi = aten.convolution(grad_output, weight, None, list(s), list(p), list(d), True,
                                  extra, groups)
        if output_mask[1]:
            gw = _conv_weight_grad(input, grad_output, weight.shape, s, p, d, groups)
    else:
        if output_mask[0]:
            gi = aten.convolution(grad_output, weight, None, list(s), list(p), list(d), False,
                                  [0] * nd, groups)
        if output_mask[1]:
            gw = _conv_weight_grad(grad_output, input, weight.shape, s, p, d, groups)
    return gi, gw, gb


convolution_backward = defop(
    "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, "
    "SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, "
    "SymInt[] output_padding, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    tags=CORE, meta=_conv_backward_meta, decomposition=_convolution_backward, explicit=True)


@derivative(convolution)
def _convolution_derivative(grad, input, weight, stride, padding, dilation, transposed,
                            output_padding, groups, needs_input_grad):
    nb = weight.shape[1] * groups if transposed else weight.shape[0]
    return aten.convolution_backward(grad, input, weight, [nb], stride, padding, dilation,
                                     transposed, output_padding, groups,
                                     list(needs_input_grad))


def _batchify(name, input, nd):
    """conv/pool accept an unbatched input: (C, *spatial) runs as a batch of one."""
    if input.ndim == nd + 1:
        return aten.unsqueeze(input, 0), True
    if input.ndim == nd + 2:
        return input, False
    raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, "
                       f"but got input of size: {list(input.shape)}")


def _conv_nd(nd):
    name = f"conv{nd}d"

    def decomp(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        x, unbatched = _batchify(name, input, nd)
        if isinstance(padding, str):
            x, padding = _same_padding(x, weight, stride, padding, dilation, nd)
        out = aten.convolution(x, weight, bias, list(_ints(name, "stride", stride, nd)),
                               list(_ints(name, "padding", padding, nd)),
                               list(_ints(name, "dilation", dilation, nd)), False, [0] * nd,
                               groups)
        return aten.squeeze.dim(out, 0) if unbatched else out
    return decomp


def _same_padding(x, weight, stride, padding, dilation, nd):
    if padding == "valid":
        return x, 0
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if any(s != 1 for s in _ints("convolution", "stride", stride, nd)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    d = _ints("convolution", "dilation", dilation, nd)
    total = [dd * (k - 1) for dd, k in zip(d, weight.shape[2:])]
    left = [t // 2 for t in total]
    extra = [t - 2 * lft for t, lft in zip(total, left)]
    if any(extra):
        pad = []
        for e in reversed(extra):
            pad += [0, e]
        x = aten.constant_pad_nd(x, pad, 0)
    return x, left


def _conv_transpose_nd(nd):
    name = f"conv_transpose{nd}d"

    def decomp(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
               dilation=1):
        x, unbatched = _batchify(name, input, nd)
        s = _ints(name, "stride", stride, nd)
        d = _ints(name, "dilation", dilation, nd)
        op = _ints(name, "output_padding", output_padding, nd)
        if any(o >= ss and o >= dd for o, ss, dd in zip(op, s, d)):
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, "
                               f"but got output_padding={list(op)}, stride={list(s)} and "
                               f"dilation={list(d)}")
        out = aten.convolution(x, weight, bias, list(s),
                               list(_ints(name, "padding", padding, nd)), list(d), True,
                               list(op), groups)
        return aten.squeeze.dim(out, 0) if unbatched else out
    return decomp


_CONV_ARGS = "Tensor input, Tensor weight, Tensor? bias=None, SymInt[{n}] stride=1, "
conv1d = defop("conv1d(" + _CONV_ARGS.format(n=1) + "SymInt[1] padding=0, SymInt[1] dilation=1, "
               "SymInt groups=1) -> Tensor", decomposition=_conv_nd(1))
conv2d = defop("conv2d(" + _CONV_ARGS.format(n=2) + "SymInt[2] padding=0, SymInt[2] dilation=1, "
               "SymInt groups=1) -> Tensor", decomposition=_conv_nd(2))
conv3d = defop("conv3d(" + _CONV_ARGS.format(n=3) + "SymInt[3] padding=0, SymInt[3] dilation=1, "
               "SymInt groups=1) -> Tensor", decomposition=_conv_nd(3))
conv1d_padding = defop("conv1d.padding(" + _CONV_ARGS.format(n=1) + 'str padding="valid", '
                       "SymInt[1] dilation=1, SymInt groups=1) -> Tensor",
                       decomposition=_conv_nd(1))
conv2d_padding = defop("conv2d.padding(" + _CONV_ARGS.format(n=2) + 'str padding="valid", '
                       "SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
                       decomposition=_conv_nd(2))
conv3d_padding = defop("conv3d.padding(" + _CONV_ARGS.format(n=3) + 'str padding="valid", '
                       "SymInt[3] dilation=1, SymInt groups=1) -> Tensor",
                       decomposition=_conv_nd(3))
_CONVT = ("SymInt[{n}] padding=0, SymInt[{n}] output_padding=0, SymInt groups=1, "
          "SymInt[{n}] dilation=1) -> Tensor")
conv_transpose1d = defop("conv_transpose1d(" + _CONV_ARGS.format(n=1) + _CONVT.format(n=1),
                         decomposition=_conv_transpose_nd(1))
conv_transpose2d = defop("conv_transpose2d.input(" + _CONV_ARGS.format(n=2) + _CONVT.format(n=2),
                         decomposition=_conv_transpose_nd(2))
conv_transpose3d = defop("conv_transpose3d.input(" + _CONV_ARGS.format(n=3) + _CONVT.format(n=3),
                         decomposition=_conv_transpose_nd(3))
