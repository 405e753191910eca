"""The JAX target: every prim maps to ``jax.lax`` (or a thin ``jax.numpy`` wrapper), and a
graph becomes one ``jax.jit``-ed function.

dtypes are exact: tracing and calling happen under ``jax.enable_x64(True)`` (a context
manager, so the user's global flag is untouched), hence int64 and float64 stay 64-bit.
Rules take JAX arrays plus the node's non-tensor arguments and return JAX arrays.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..ir import prims as P
from ..ir.prims.recurrence import RNN_MODES
from . import precision
from .jax_autograd import compile_joint, compile_vjp
from .jax_compile import compile_graph
from .jax_spmd import node_checks
from .target import Target

__all__ = ["JAX_TARGET", "JaxTarget", "np_dtype", "random_key"]

_HALF = (np.dtype(np.float16), np.dtype(jnp.bfloat16))


@functools.cache
def _host_only() -> bool:
    """No accelerator: 16-bit products take float32 GEMMs (see the dot_general rule).
    Asked at the first 16-bit product, not at import (that would start JAX's backends)."""
    return jax.default_backend() == "cpu"


def np_dtype(dtype):
    """The NumPy dtype JAX uses for an fnx dtype (bfloat16 via ml_dtypes)."""
    return dtype.numpy


class JaxTarget(Target):
    name = "jax"

    def supports(self, node) -> bool:
        check = node_checks.get(node.target)
        return node.target in self.rules and (check is None or check(node))

    def compile(self, graph):
        """A function of fnx tensors running ``graph`` as one jitted JAX program."""
        return compile_graph(self, graph)

    def vjp(self, compiled, graph):
        """The compiled forward of ``graph`` with a ``jax.vjp`` backward (compiled autograd)."""
        return compile_vjp(compiled, graph)

    def joint(self, forward, backward, plan, out_nodes):
        """The compiled forward and backward of a split joint graph as an autograd node
        (``plan``: its ``fnx.graph.joint.Backward``; ``out_nodes``: the forward's outputs)."""
        return compile_joint(forward, backward, plan, out_nodes)


JAX_TARGET = JaxTarget()
# {forward prim: (backward prim, gradient operands, fn -> (outputs, vjp))}: see
# jax_compile._paired_backwards
JAX_TARGET.vjp_rules = {}
rule = JAX_TARGET.rule

# ----------------------------------------------------------------------------- pointwise
def _exp2(x):
    # XLA evaluates a 16-bit exp2 in 16 bits (1262 for 2**10.3, not 1258): through float32,
    # rounded once, as the eager kernel
    if x.dtype in (jnp.float16, jnp.bfloat16):
        return lax.exp2(x.astype(jnp.float32)).astype(x.dtype)
    return lax.exp2(x)


_UNARY = {
    P.abs: lambda x: x if np.issubdtype(x.dtype, np.unsignedinteger) else lax.abs(x),
    P.neg: lax.neg, P.sign: lax.sign, P.exp: lax.exp, P.exp2: _exp2,
    P.expm1: lax.expm1, P.log: lax.log, P.log1p: lax.log1p, P.log2: jnp.log2,
    P.log10: jnp.log10, P.sin: lax.sin, P.cos: lax.cos, P.tan: lax.tan, P.asin: lax.asin,
    P.acos: lax.acos, P.atan: lax.atan, P.sinh: lax.sinh, P.cosh: lax.cosh, P.tanh: lax.tanh,
    P.asinh: lax.asinh, P.acosh: lax.acosh, P.atanh: lax.atanh, P.sqrt: lax.sqrt,
    P.rsqrt: lax.rsqrt, P.erf: lax.erf, P.erfc: lax.erfc, P.erf_inv: lax.erf_inv,
    P.lgamma: lax.lgamma, P.digamma: lax.digamma, P.floor: lax.floor, P.ceil: lax.ceil,
    P.round: lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), P.trunc: jnp.trunc,
    P.bitwise_not: lax.bitwise_not, P.conj: lambda x: lax.conj(x) if jnp.iscomplexobj(x) else x,
    P.reciprocal: lambda x: lax.div(jnp.ones((), x.dtype), x), P.signbit: jnp.signbit,
    P.isfinite: lax.is_finite, P.real: lax.real, P.imag: lax.imag,
    P.bessel_i0e: lax.bessel_i0e, P.bessel_i1e: lax.bessel_i1e,
}


def _bool_aware(arith, logical):
    # lax arithmetic rejects bool; on bool, add is `or` and mul is `and` (PyTorch's meaning).
    return lambda a, b: logical(a, b) if a.dtype == np.bool_ else arith(a, b)


_BINARY = {
    P.add: _bool_aware(lax.add, lax.bitwise_or), P.sub: lax.sub,
    P.mul: _bool_aware(lax.mul, lax.bitwise_and), P.div: lax.div, P.rem: lax.rem,
    P.pow: jnp.power, P.atan2: lax.atan2, P.maximum: jnp.maximum, P.minimum: jnp.minimum,
    P.bitwise_and: lax.bitwise_and, P.bitwise_or: lax.bitwise_or,
    P.bitwise_xor: lax.bitwise_xor, P.shift_left: lax.shift_left,
    P.shift_right_arithmetic: lax.shift_right_arithmetic, P.nextafter: lax.nextafter,
    P.eq: lax.eq, P.ne: lax.ne, P.lt: lax.lt, P.le: lax.le, P.gt: lax.gt, P.ge: lax.ge,
    P.complex: lax.complex, P.igamma: lax.igamma, P.igammac: lax.igammac,
}   # (polygamma and zeta: jax_zeta.py)


def _bind_tables():
    for op, fn in _UNARY.items():
        rule(op)(lambda x, _f=fn: _f(x))
    for op, fn in _BINARY.items():
        rule(op)(lambda a, b, _f=fn: _f(a, b))

# ----------------------------------------------------------------------------- the rest


def _rules():
    @rule(P.where)
    def _(pred, a, b):
        return lax.select(pred, a, b)

    rule(P.stop_gradient)(lax.stop_gradient)

    @rule(P.convert_element_type)
    def _(x, dtype):
        to = np_dtype(dtype)
        if jnp.iscomplexobj(x) and not np.issubdtype(to, np.complexfloating):
            x = lax.real(x)
        if to == np.bool_:
            return x != 0
        if x.dtype == np.bool_ and np.issubdtype(to, np.inexact):
            # XLA rewrites convert(pred) * y as select(pred, y, 0), which turns eager's
            # False * inf = NaN into 0 (a mask times logits); a select of 1 and 0 it keeps
            return lax.select(x, lax.full_like(x, 1, to), lax.full_like(x, 0, to))
        return lax.convert_element_type(x, to)

    @rule(P.broadcast_in_dim)
    def _(x, shape, broadcast_dimensions):
        return lax.broadcast_in_dim(x, tuple(shape), tuple(broadcast_dimensions))

    @rule(P.reshape)
    def _(x, shape):
        return lax.reshape(x, tuple(shape))

    @rule(P.transpose)
    def _(x, permutation):
        return lax.transpose(x, tuple(permutation))

    @rule(P.squeeze)
    def _(x, dimensions):
        return lax.squeeze(x, tuple(dimensions))

    @rule(P.slice)
    def _(x, start_indices, limit_indices, strides=None):
        return lax.slice(x, tuple(start_indices), tuple(limit_indices),
                         None if strides is None else tuple(strides))

    @rule(P.pad)
    def _(x, padding_value, low, high, interior):
        return lax.pad(x, jnp.asarray(padding_value, x.dtype),
                       [(lo, hi, i) for lo, hi, i in zip(low, high, interior)])

    @rule(P.concatenate)
    def _(tensors, dim):
        return lax.concatenate(list(tensors), dim)

    @rule(P.rev)
    def _(x, dims):
        return lax.rev(x, tuple(dims))

    def _reduce(arith, logical):
        def fn(x, dims):
            dims = tuple(dims)
            if not dims:
                return x
            return (logical if x.dtype == np.bool_ else arith)(x, axis=dims)
        return fn

    rule(P.reduce_sum)(_reduce(lambda x, axis: jnp.sum(x, axis, dtype=x.dtype),
                                       jnp.any))
    rule(P.reduce_prod)(_reduce(lambda x, axis: jnp.prod(x, axis, dtype=x.dtype),
                                        jnp.all))
    rule(P.reduce_max)(_reduce(_reduce_max, jnp.any))
    rule(P.reduce_min)(_reduce(_reduce_min, jnp.all))

    @rule(P.argmax)
    def _(x, dim):
        return jnp.argmax(x, axis=dim).astype(np.int64)

    @rule(P.argmin)
    def _(x, dim):
        return jnp.argmin(x, axis=dim).astype(np.int64)

    @rule(P.cumsum)
    def _(x, dim):
        return lax.cumsum(x, dim) if x.dtype != np.bool_ else \
            lax.cummax(x.astype(np.int8), dim).astype(np.bool_)

    @rule(P.cumprod)
    def _(x, dim):
        return lax.cumprod(x, dim) if x.dtype != np.bool_ else \
            lax.cummin(x.astype(np.int8), dim).astype(np.bool_)

    @rule(P.iota)
    def _(shape, dimension, *, dtype, device=None):
        return lax.broadcasted_iota(np_dtype(dtype), tuple(shape), dimension)

    @rule(P.full)
    def _(shape, fill_value, *, dtype, device=None):
        return jnp.full(tuple(shape), fill_value, np_dtype(dtype))

    @rule(P.check_in_range)
    def _(x, low, high, error, message):
        return x     # the check itself: graph_program computes it (range_status)

    @rule(P.check_linalg_info)
    def _(x, info, api, message):
        return x     # the check itself: graph_program computes it (info_status)

    @rule(P.device_put)
    def _(x, device):
        return x     # within one jitted region every array lives on the region's device

    @rule(P.dot_general)
    def _(lhs, rhs, lhs_contracting_dims, rhs_contracting_dims, lhs_batch_dims,
          rhs_batch_dims):
        dims = ((tuple(lhs_contracting_dims), tuple(rhs_contracting_dims)),
                (tuple(lhs_batch_dims), tuple(rhs_batch_dims)))
        if lhs.dtype == np.bool_:
            out = lax.dot_general(lhs.astype(np.int32), rhs.astype(np.int32), dims)
            return out != 0
        acc = _accumulator(lhs.dtype)
        if acc != lhs.dtype and _host_only():
            # XLA's CPU backend has no fast 16-bit GEMM: the exact float32 values of the
            # operands through the float32 one give the same sums
            lhs32, rhs32 = lhs.astype(acc), rhs.astype(acc)
            out = lax.dot_general(lhs32, rhs32, dims, precision=_precision(acc, "matmul"))
            return out.astype(lhs.dtype)
        out = lax.dot_general(lhs, rhs, dims, precision=_precision(lhs.dtype, "matmul"),
                              preferred_element_type=acc)
        return out if acc == lhs.dtype else out.astype(lhs.dtype)

    @rule(P.conv_general)
    def _(lhs, rhs, window_strides, padding_low, padding_high, lhs_dilation, rhs_dilation,
          feature_group_count):
        n = lhs.ndim - 2
        spatial = "DHW"[-n:] if n <= 3 else None
        dn = lax.conv_dimension_numbers(lhs.shape, rhs.shape,
                                        ("NC" + spatial, "OI" + spatial, "NC" + spatial))
        acc = _accumulator(lhs.dtype)
        out = lax.conv_general_dilated(
            lhs, rhs, tuple(window_strides), list(zip(padding_low, padding_high)),
            lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(rhs_dilation),
            dimension_numbers=dn, feature_group_count=feature_group_count,
            precision=_precision(lhs.dtype, "conv"), preferred_element_type=acc)
        return out if acc == lhs.dtype else out.astype(lhs.dtype)

    @rule(P.gather)
    def _(x, dim, index):
        # torch.gather allows an index smaller than the input off `dim`: trim the input.
        limits = [i if d != dim else s for d, (i, s) in enumerate(zip(index.shape, x.shape))]
        x = lax.slice(x, (0,) * x.ndim, tuple(limits))
        return jnp.take_along_axis(x, index, axis=dim, mode="promise_in_bounds")

    @rule(P.scatter)
    def _(x, dim, index, src, reduce="none"):
        idx = tuple(index if d == dim else lax.broadcasted_iota(np.int64, index.shape, d)
                    for d in range(x.ndim))
        at = x.at[idx]
        if reduce == "none":
            return at.set(src)
        if x.dtype == np.bool_:
            return {"add": at.max, "mul": at.min, "max": at.max, "min": at.min}[reduce](src)
        return {"add": at.add, "mul": at.multiply, "max": at.max, "min": at.min}[reduce](src)

    @rule(P.sort)
    def _(x, dim, descending, stable):
        return _sort(x, dim, descending, stable)

    @rule(P.top_k)
    def _(x, k, dim, largest):
        values, indices = _sort(x, dim, largest, True)
        limit = list(x.shape)
        limit[dim] = k
        return (lax.slice(values, (0,) * x.ndim, tuple(limit)),
                lax.slice(indices, (0,) * x.ndim, tuple(limit)))

    @rule(P.fft_c2c)
    def _(x, dim, forward):
        dim = tuple(dim)
        return jnp.fft.fftn(x, axes=dim) if forward else \
            jnp.fft.ifftn(x, axes=dim, norm="forward")

    @rule(P.fft_r2c)
    def _(x, dim, onesided):
        dim = tuple(dim)
        out_dtype = np.complex128 if x.dtype == np.float64 else np.complex64
        if onesided:
            return jnp.fft.rfftn(x, axes=dim).astype(out_dtype)
        return jnp.fft.fftn(x.astype(out_dtype), axes=dim)

    @rule(P.fft_c2r)
    def _(x, dim, last_dim_size):
        dim = tuple(dim)
        sizes = [x.shape[d] for d in dim[:-1]] + [last_dim_size]
        out = jnp.fft.irfftn(x, s=sizes, axes=dim, norm="forward")
        return out.astype(np.float64 if x.dtype == np.complex128 else np.float32)

    @rule(P.random_bits)
    def _(key, shape):
        return jax.random.bits(random_key(key), tuple(shape), np.uint32).astype(np.int64)

    @rule(P.uniform)
    def _(key, shape, low, high, *, dtype):
        return jax.random.uniform(random_key(key), tuple(shape), np_dtype(dtype), low, high)

    @rule(P.normal)
    def _(key, shape, mean, std, *, dtype):
        z = jax.random.normal(random_key(key), tuple(shape), np_dtype(dtype))
        return z * jnp.asarray(std, z.dtype) + jnp.asarray(mean, z.dtype)

    @rule(P.poisson)
    def _(key, rate):
        return poisson_sample(random_key(key), rate)

    @rule(P.binomial)
    def _(key, count, prob):
        return binomial_sample(random_key(key), count, prob)

    @rule(P.split_key)
    def _(key, num):
        keys = jax.random.split(random_key(key), num)
        return jax.random.key_data(keys).astype(np.int64)


def poisson_sample(key, rate):
    """Poisson counts of ``rate`` (float), in its dtype (the CPU kernel computes the same)."""
    return jax.random.poisson(key, rate, rate.shape).astype(rate.dtype)


def binomial_sample(key, count, prob):
    """Binomial counts (float, of ``prob``'s dtype); the CPU kernel computes the same."""
    return jax.random.binomial(key, count, prob, prob.shape, prob.dtype).astype(prob.dtype)


def random_key(data):
    """A threefry2x32 key from its int64[2] fnx form (two 32-bit words)."""
    return jax.random.wrap_key_data(data.astype(np.uint32), impl="threefry2x32")


def _accumulator(dtype):
    # 16-bit products accumulate in float32 and round once, as PyTorch's kernels (and the
    # CPU eager kernels) do; tensor cores take the 16-bit operands as they are.
    return np.dtype(np.float32) if dtype in _HALF else dtype


def _precision(dtype, kind):
    # Full float32 products by default, as PyTorch's matmuls (no TF32) on every platform;
    # the backends' allow_tf32 flags relax it (fnx.lower.precision)
    return precision.lax_precision(kind) if jnp.issubdtype(dtype, jnp.floating) else None


def _reduce_max(x, axis):
    return jnp.max(x, axis=axis, initial=_lowest(x.dtype))


def _reduce_min(x, axis):
    return jnp.min(x, axis=axis, initial=_highest(x.dtype))


def _lowest(dtype):
    return -np.inf if jnp.issubdtype(dtype, jnp.floating) else np.iinfo(dtype).min


def _highest(dtype):
    return np.inf if jnp.issubdtype(dtype, jnp.floating) else np.iinfo(dtype).max


def _sort_key(x, descending):
    """An integer (or float) key whose ascending order is the requested order, NaN last
    ascending and first descending (PyTorch); ties keep input order under a stable sort."""
    if x.dtype == np.bool_:
        x = x.astype(np.int8)
    if jnp.issubdtype(x.dtype, jnp.integer):
        return lax.bitwise_not(x) if descending else x
    # Floats: map to ints with the same total order, NaN (canonicalized) above +inf.
    x = jnp.where(jnp.isnan(x), jnp.asarray(np.nan, x.dtype), x)
    x = jnp.where(x == 0, jnp.zeros((), x.dtype), x)  # -0.0 sorts with 0.0, as PyTorch
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize]
    i = lax.bitcast_convert_type(x.astype(_float_of(x.dtype)), bits)
    i = jnp.where(i < 0, lax.bitwise_xor(i, jnp.asarray(np.iinfo(bits).max, bits)), i)
    return lax.bitwise_not(i) if descending else i


def _float_of(dtype):
    # bfloat16 and float16 share a width; both bitcast from their own type.
    return dtype


def _sort(x, dim, descending, stable):
    key = _sort_key(x, descending)
    iota = lax.broadcasted_iota(np.int64, x.shape, dim)
    _, values, indices = lax.sort((key, x, iota), dimension=dim, is_stable=True,
                                  num_keys=1)
    return values, indices


def _rnn_scan(gi, h0, c0, w_hh, b_hh, w_hr, lengths, mode, reverse):
    """``prims.rnn_scan`` as one ``lax.scan`` over the time steps."""
    prec = _precision(gi.dtype, "matmul")

    def cell(carry, xs):
        g_in, t = xs
        h_prev, c_prev = h, c = carry
        gh = jnp.dot(h, w_hh.T, precision=prec)
        if b_hh is not None:
            gh = gh + b_hh
        if mode == "LSTM":
            i, f, g, o = jnp.split(g_in + gh, 4, axis=1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            if w_hr is not None:
                h = jnp.dot(h, w_hr.T, precision=prec)
        elif mode == "GRU":
            i_r, i_z, i_n = jnp.split(g_in, 3, axis=1)
            h_r, h_z, h_n = jnp.split(gh, 3, axis=1)
            r, z = jax.nn.sigmoid(i_r + h_r), jax.nn.sigmoid(i_z + h_z)
            n = jnp.tanh(i_n + r * h_n)
            h = n + z * (h - n)
        else:
            a = g_in + gh
            h = jnp.tanh(a) if mode == "RNN_TANH" else jnp.maximum(a, 0)
        if lengths is None:
            return (h, c), h
        act = (t < lengths)[:, None]              # finished or not yet started: hold
        return ((jnp.where(act, h, h_prev), jnp.where(act, c, c_prev)),
                jnp.where(act, h, jnp.zeros((), h.dtype)))

    steps = jnp.arange(gi.shape[0], dtype=np.int64)
    (h, c), out = lax.scan(cell, (h0, c0), (gi, steps), reverse=reverse)
    return out, h, c


def _recurrence_rules():
    @rule(P.rnn_scan)
    def _(gi, h0, c0, w_hh, b_hh, w_hr, lengths, mode, reverse):
        return _rnn_scan(gi, h0, c0, w_hh, b_hh, w_hr, lengths, mode, reverse)

    @rule(P.rnn_scan_backward)
    def _(g_out, g_h, g_c, gi, h0, c0, w_hh, b_hh, w_hr, lengths, mode, reverse):
        # JAX's own reverse-mode of the scan: a second scan, backwards in time (after
        # re-running the forward; a graph holding the forward too shares it: vjp_rules)
        _, vjp = _rnn_scan_vjp(gi, h0, c0, w_hh, b_hh, w_hr, lengths, mode, reverse)
        return vjp(g_out, g_h, g_c)

    JAX_TARGET.vjp_rules[P.rnn_scan] = (P.rnn_scan_backward, 3, _rnn_scan_vjp)


def _rnn_scan_vjp(gi, h0, c0, w_hh, b_hh, w_hr, lengths, mode, reverse):
    """``(rnn_scan's outputs, vjp)``: ``vjp(g_out, g_h, g_c)`` gives ``rnn_scan_backward``'s
    six gradients from the residuals the forward scan saved."""
    def fwd(*ops):
        return _rnn_scan(*ops, lengths, mode, reverse)
    outs, vjp = jax.vjp(fwd, gi, h0, c0, w_hh, b_hh, w_hr)
    g = w_hh.shape[0]

    def backward(g_out, g_h, g_c):
        grads = vjp((g_out, g_h, g_c))
        return (*grads[:4], jnp.zeros((g,), gi.dtype) if b_hh is None else grads[4],
                jnp.zeros((0, g // RNN_MODES[mode]), gi.dtype) if w_hr is None else grads[5])
    return outs, backward


def _ctc_alpha(alpha0, emit, skip, active):
    """``prims.ctc_alpha`` as one ``lax.scan`` over the time frames."""
    neg = jnp.full(alpha0.shape[:-1] + (1,), -jnp.inf, alpha0.dtype)

    def step(alpha, xs):
        e, on = xs
        one = jnp.concatenate([neg, alpha[:, :-1]], 1)
        two = jnp.concatenate([neg, neg, alpha[:, :-2]], 1)[:, :alpha.shape[1]]
        terms = jnp.stack([alpha, one, jnp.where(skip, two, -jnp.inf)])
        # the stay term is finite, so the max is (and the gradient is NaN-free)
        m = lax.stop_gradient(jnp.max(terms, 0))
        new = jnp.log(jnp.sum(jnp.exp(terms - m), 0)) + m + e
        return jnp.where(on[:, None], new, alpha), None

    out, _ = lax.scan(step, alpha0, (emit, active))
    return out


def _ctc_rules():
    @rule(P.ctc_alpha)
    def _(alpha0, emit, skip, active):
        return _ctc_alpha(alpha0, emit, skip, active)

    @rule(P.ctc_alpha_backward)
    def _(grad, alpha0, emit, skip, active):
        _, vjp = jax.vjp(lambda a, e: _ctc_alpha(a, e, skip, active), alpha0, emit)
        return vjp(grad)


_bind_tables()
_rules()
_recurrence_rules()
_ctc_rules()
