"""Derivative formulas of the core and aten ops (elementwise, reduction, linalg, shape,
indexing, sorting, conversion): gradients vs finite differences in float64 (and second
derivatives for many), float32 gradients vs hand-derived NumPy ones, and the autograd
behaviour the formulas are responsible for (views stay views, nondifferentiable ops,
in-place variants, zero-safe products, ties).
"""
import math

import numpy as np
import pytest

import fnx
from fnx.autograd import gradcheck, gradgradcheck
from fnx.ops import aten

RNG = np.random.default_rng(0)


def t(*shape, lo=-1.0, hi=1.0, grad=True):
    """A float64 tensor of uniform values in [lo, hi)."""
    x = fnx.tensor(RNG.uniform(lo, hi, size=shape), dtype=fnx.float64)
    return x.requires_grad_() if grad else x


def pos(*shape):
    return t(*shape, lo=0.5, hi=2.0)


def check(fn, *inputs, second=True):
    assert gradcheck(fn, inputs)
    if second:
        assert gradgradcheck(fn, inputs)


def case(name, fn, *makers, second=True):
    return pytest.param(fn, makers, second, id=name)


def run(fn, makers, second):
    check(fn, *[m() for m in makers], second=second)


# --------------------------------------------------------------------------- elementwise

def _a():
    return t(3, 4)


def _row():
    return t(4)


def _s():
    return t()


UNARY_ANY = ["neg", "abs", "exp", "exp2", "expm1", "sin", "cos", "tan", "sinh", "cosh",
             "tanh", "sigmoid", "atan", "asinh", "erf", "square", "frac", "relu", "sign",
             "ceil", "floor", "round", "trunc"]
UNARY_POS = ["log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "acosh"]
UNARY_UNIT = ["asin", "acos", "atanh", "erfinv"]


@pytest.mark.parametrize("name", UNARY_ANY)
def test_unary(name):
    check(getattr(aten, name).default, t(3, 4))
    check(getattr(aten, name).default, t(), second=False)       # 0-dim


@pytest.mark.parametrize("name", UNARY_POS)
def test_unary_positive_domain(name):
    check(getattr(aten, name).default, t(3, 4, lo=1.2, hi=3.0))


@pytest.mark.parametrize("name", UNARY_UNIT)
def test_unary_unit_domain(name):
    check(getattr(aten, name).default, t(2, 3, lo=-0.8, hi=0.8))


m34 = fnx.tensor(RNG.uniform(size=(3, 4)) > 0.5)

BINARY = [
    case("add", lambda x, y: aten.add.Tensor(x, y, alpha=2), _a, _row),
    case("add.Scalar", lambda x: aten.add.Scalar(x, 3, 2), _a),
    case("sub", lambda x, y: aten.sub.Tensor(x, y, alpha=-0.5), _row, _a),
    case("rsub", lambda x, y: aten.rsub.Tensor(x, y, alpha=2), _a, _s),
    case("rsub.Scalar", lambda x: aten.rsub.Scalar(x, 3, 2), _a),
    case("mul", aten.mul.Tensor, _a, _row),
    case("mul number", lambda x: x * 2.5, _a),
    case("div", aten.div.Tensor, _a, lambda: pos(4)),
    case("div.Scalar", lambda x: aten.div.Scalar(x, 4.0), _a),
    case("div mode None", lambda x, y: aten.div.Tensor_mode(x, y, rounding_mode=None),
         _a, lambda: pos(3, 1)),
    case("div floor", lambda x, y: aten.div.Tensor_mode(x, y, rounding_mode="floor") + x * y,
         _a, lambda: pos(4)),
    case("div.Scalar_mode", lambda x: aten.div.Scalar_mode(x, 2.0, rounding_mode="trunc") + x,
         _a),
    case("floor_divide", lambda x, y: aten.floor_divide.default(x, y) + x, _a, lambda: pos(4)),
    case("remainder", aten.remainder.Tensor, lambda: t(3, 4, lo=0.1, hi=5.0),
         lambda: t(4, lo=0.7, hi=0.9)),
    case("remainder.Scalar", lambda x: aten.remainder.Scalar(x, 0.75), _a),
    case("fmod", aten.fmod.Tensor, lambda: t(3, 4, lo=-5.0, hi=-0.1),
         lambda: t(4, lo=0.7, hi=0.9)),
    case("pow.Tensor_Scalar int", lambda x: aten.pow.Tensor_Scalar(x, 3), _a),
    case("pow.Tensor_Scalar float", lambda x: aten.pow.Tensor_Scalar(x, -1.5), lambda: pos(4)),
    case("pow.Tensor_Scalar 0", lambda x: aten.pow.Tensor_Scalar(x, 0) + x, _a),
    case("pow.Tensor_Tensor", aten.pow.Tensor_Tensor, lambda: pos(3, 4), _row),
    case("pow.Scalar", lambda e: aten.pow.Scalar(2.5, e), _a),
    case("atan2", aten.atan2.default, _a, _row),
    case("atan2 number", lambda x: aten.atan2.default(x, 2.5), _a),
    case("maximum", aten.maximum.default, _a, _row),
    case("minimum", aten.minimum.default, _row, _a),
    case("where", lambda x, y: aten.where.self(m34, x, y), _a, _row),
    case("where number", lambda x: aten.where.self(m34, 0.5, x), _a),
    case("clamp", lambda x: aten.clamp.default(x, -0.5, 0.5), _a),
    case("clamp max only", lambda x: aten.clamp.default(x, None, 0.2), _a),
    case("clamp.Tensor", lambda x, lo, hi: aten.clamp.Tensor(x, lo, hi), _a,
         lambda: t(4, lo=-1, hi=0), lambda: t(3, 1, lo=0, hi=1)),
    case("clamp.Tensor min > max", lambda x, lo, hi: aten.clamp.Tensor(x, lo, hi), _a,
         lambda: t(4, lo=0.2, hi=1), lambda: t(3, 1, lo=-1, hi=0)),
    case("clamp.Tensor min only", lambda x, lo: aten.clamp.Tensor(x, lo), _a, _row),
    case("round.decimals", lambda x: aten.round.decimals(x, decimals=1) + x, _a),
]


@pytest.mark.parametrize("fn,makers,second", BINARY)
def test_binary(fn, makers, second):
    run(fn, makers, second)


# --------------------------------------------------------------------------- reductions

def _zeros_at(x, *where):
    with fnx.no_grad():
        for idx in where:
            x[idx] = 0
    return x


REDUCTIONS = [
    case("sum dim", lambda x: aten.sum.dim_IntList(x, [1]), _a),
    case("sum keepdim", lambda x: aten.sum.dim_IntList(x, [0, -1], True), _a),
    case("sum 0-dim dim 0", lambda x: aten.sum.dim_IntList(x, [0]), _s),
    case("sum all", aten.sum.default, _a),
    case("mean dim", lambda x: aten.mean.dim(x, [-1]), _a),
    case("mean None keepdim", lambda x: aten.mean.dim(x, None, True), _a),
    case("mean all", aten.mean.default, _a),
    case("prod", aten.prod.default, lambda: pos(2, 3)),
    case("prod.dim_int", lambda x: aten.prod.dim_int(x, 1), lambda: pos(3, 4)),
    case("prod one zero", aten.prod.default, lambda: _zeros_at(pos(3), 1)),
    case("prod zeros in rows", lambda x: aten.prod.dim_int(x, 1, True),
         lambda: _zeros_at(pos(3, 4), (0, 1), (1, 1), (1, 2))),
    case("prod two zeros", aten.prod.default, lambda: _zeros_at(pos(4), 1, 3)),
    case("prod 0-dim", lambda x: aten.prod.dim_int(x, 0), _s),
    case("amax", lambda x: aten.amax.default(x, [1]), _a),
    case("amin keepdim", lambda x: aten.amin.default(x, [0], True), _a),
    case("amax all", aten.amax.default, _a),
    case("max", aten.max.default, _a),
    case("min", aten.min.default, _a),
    case("max.dim", lambda x: aten.max.dim(x, 1)[0], _a),
    case("min.dim keepdim", lambda x: aten.min.dim(x, 0, True)[0], _a),
    case("max.dim 0-dim", lambda x: aten.max.dim(x, 0)[0], _s),
    case("var", lambda x: aten.var.correction(x, [1]), _a),
    case("var all", aten.var.correction, _a),
    case("var correction 0", lambda x: aten.var.correction(x, [0], correction=0, keepdim=True),
         _a),
    case("var.dim", lambda x: aten.var.dim(x, [1], False), _a),
    case("std", lambda x: aten.std.correction(x, [1]), _a),
    case("std.dim", lambda x: aten.std.dim(x, [0], True, True), _a),
    case("var_mean", lambda x: aten.var_mean.correction(x, [1]), _a),
    case("std_mean", lambda x: aten.std_mean.correction(x, [0], keepdim=True), _a),
    case("logsumexp", lambda x: aten.logsumexp.default(x, [1]), _a),
    case("logsumexp keepdim", lambda x: aten.logsumexp.default(x, [0, 1], True), _a),
    case("cumsum", lambda x: aten.cumsum.default(x, 1), _a),
    case("cumsum 0-dim", lambda x: aten.cumsum.default(x, 0), _s),
    case("cumprod", lambda x: aten.cumprod.default(x, -1), _a),
    case("cumprod zeros", lambda x: aten.cumprod.default(x, 1),
         lambda: _zeros_at(t(3, 4), (0, 1), (1, 1), (1, 2), (2, 0))),
    case("cumprod 0-dim", lambda x: aten.cumprod.default(x, 0), _s),
    case("vector_norm 2", lambda x: aten.linalg_vector_norm.default(x, 2, [1]), _a),
    case("vector_norm 1", lambda x: aten.linalg_vector_norm.default(x, 1), _a),
    case("vector_norm 3", lambda x: aten.linalg_vector_norm.default(x, 3, [0], True), _a),
    case("vector_norm 1.5", lambda x: aten.linalg_vector_norm.default(x, 1.5, [1]), _a),
    case("vector_norm 0.5", lambda x: aten.linalg_vector_norm.default(x, 0.5, [1]), _a,
         second=False),
    case("vector_norm inf", lambda x: aten.linalg_vector_norm.default(x, math.inf, [1]), _a),
    case("vector_norm -inf", lambda x: aten.linalg_vector_norm.default(x, -math.inf), _a),
    case("norm.Scalar", lambda x: aten.norm.Scalar(x, 2), _a),
]


@pytest.mark.parametrize("fn,makers,second", REDUCTIONS)
def test_reduction(fn, makers, second):
    run(fn, makers, second)


# --------------------------------------------------------------------------- linalg

LINALG = [
    case("mm", aten.mm.default, lambda: t(2, 3), lambda: t(3, 4)),
    case("bmm", aten.bmm.default, lambda: t(2, 2, 3), lambda: t(2, 3, 4)),
    case("addmm", lambda b, x, y: aten.addmm.default(b, x, y, beta=0.5, alpha=2),
         lambda: t(4), lambda: t(2, 3), lambda: t(3, 4)),
    case("addmm beta 0", lambda b, x, y: aten.addmm.default(b, x, y, beta=0),
         lambda: t(2, 4), lambda: t(2, 3), lambda: t(3, 4)),
    case("dot", aten.dot.default, lambda: t(3), lambda: t(3)),
    case("mv", aten.mv.default, lambda: t(2, 3), lambda: t(3)),
    case("matmul batched", aten.matmul.default, lambda: t(2, 1, 2, 3), lambda: t(3, 3, 2)),
    case("matmul 1-d", aten.matmul.default, lambda: t(3), lambda: t(2, 3, 4)),
    case("linear", aten.linear.default, lambda: t(2, 5, 3), lambda: t(4, 3), lambda: t(4)),
    case("baddbmm", lambda b, x, y: aten.baddbmm.default(b, x, y, beta=0.5, alpha=2),
         lambda: t(4), lambda: t(2, 2, 3), lambda: t(2, 3, 4)),
]


@pytest.mark.parametrize("fn,makers,second", LINALG)
def test_linalg(fn, makers, second):
    run(fn, makers, second)


# --------------------------------------------------------------------------- shape

SHAPE = [
    case("view", lambda x: aten.view.default(x, [4, 3]), _a),
    case("view 0-dim", lambda x: aten.view.default(x, [1, 1]), _s),
    case("_unsafe_view", lambda x: aten._unsafe_view.default(x, [12]), _a),
    case("permute", lambda x: aten.permute.default(x, [2, 0, 1]), lambda: t(2, 3, 4)),
    case("expand", lambda x: aten.expand.default(x, [2, 3, 4]), lambda: t(3, 1)),
    case("expand 0-dim", lambda x: aten.expand.default(x, [2, 3]), _s),
    case("squeeze.dim", lambda x: aten.squeeze.dim(x, 1), lambda: t(3, 1, 2)),
    case("squeeze.dims", lambda x: aten.squeeze.dims(x, [0, 2, -1]), lambda: t(1, 3, 1, 1)),
    case("squeeze", aten.squeeze.default, lambda: t(1, 3, 1)),
    case("unsqueeze", lambda x: aten.unsqueeze.default(x, -1), _a),
    case("select", lambda x: aten.select.int(x, 1, -1), _a),
    case("slice step", lambda x: aten.slice.Tensor(x, 1, 1, None, 2), _a),
    case("slice clamped", lambda x: aten.slice.Tensor(x, 0, -2, 10), _a),
    case("diagonal", lambda x: aten.diagonal.default(x, 1), _a),
    case("diagonal 3-d", lambda x: aten.diagonal.default(x, -1, 2, 0), lambda: t(3, 2, 4)),
    case("as_strided", lambda x: aten.as_strided.default(x, [2, 2], [1, 2], 1), _a),
    case("as_strided overlapping", lambda x: aten.as_strided.default(x, [3, 3], [1, 1]), _a),
    case("as_strided of expanded", lambda x: aten.as_strided.default(
        aten.expand.default(x, [3, 4]), [2, 2], [1, 0]), _row),
    case("alias", aten.alias.default, _a),
    case("split_with_sizes", lambda x: aten.split_with_sizes.default(x, [1, 3], 1), _a),
    case("split one piece used", lambda x: aten.split_with_sizes.default(x, [1, 2], 0)[1],
         _a),
    case("split.Tensor", lambda x: aten.split.Tensor(x, 3, 1), _a),
    case("chunk", lambda x: aten.chunk.default(x, 2, 0), _a),
    case("unbind", lambda x: aten.unbind.int(x, 1), _a),
    case("unfold", lambda x: aten.unfold.default(x, 1, 2, 1), _a),
    case("unfold step", lambda x: aten.unfold.default(x, 0, 2, 2), lambda: t(5, 2)),
    case("unfold 0-dim", lambda x: aten.unfold.default(x, 0, 1, 1), _s),
    case("view_as_complex/real", lambda x: aten.view_as_real.default(
        aten.view_as_complex.default(x)) * 2, lambda: t(3, 2)),
    case("transpose", lambda x: aten.transpose.int(x, 0, 1), _a),
    case("reshape (copy)", lambda x: aten.reshape.default(aten.t.default(x), [12]), _a),
    case("movedim", lambda x: aten.movedim.int(x, 0, -1), lambda: t(2, 3, 2)),
    case("narrow", lambda x: aten.narrow.default(x, 1, 1, 2), _a),
    case("clone", aten.clone.default, _a),
    case("contiguous", lambda x: aten.contiguous.default(aten.t.default(x)), _a),
    case("cat", lambda x, y: aten.cat.default([x, y], 1), _a, lambda: t(3, 2)),
    case("cat legacy empty", lambda x, y: aten.cat.default(
        [x, fnx.zeros(0, dtype=fnx.float64), y], 0), _a, lambda: t(1, 4)),
    case("stack", lambda x, y: aten.stack.default([x, y], 1), _a, _a),
    case("flip", lambda x: aten.flip.default(x, [0, 1]), _a),
    case("roll", lambda x: aten.roll.default(x, [1, -2], [0, 1]), _a),
    case("repeat", lambda x: aten.repeat.default(x, [2, 1, 3]), _a),
    case("repeat 0-dim", lambda x: aten.repeat.default(x, [2]), _s),
    case("constant_pad_nd", lambda x: aten.constant_pad_nd.default(x, [1, 2, -1, 1], 0.5), _a),
    case("tril", lambda x: aten.tril.default(x, 1), _a),
    case("triu", lambda x: aten.triu.default(x, -1), lambda: t(2, 3, 3)),
    case("select_scatter", lambda x, y: aten.select_scatter.default(x, y, 1, 2), _a,
         lambda: t(3)),
    case("slice_scatter", lambda x, y: aten.slice_scatter.default(x, y, 1, 0, 4, 2), _a,
         lambda: t(3, 2)),
    case("diagonal_scatter", lambda x, y: aten.diagonal_scatter.default(x, y, 1), _a,
         lambda: t(3)),
    case("fill.Scalar", lambda x: aten.fill.Scalar(x, 2.0) * x, _a),
    case("fill.Tensor", lambda x, v: aten.fill.Tensor(x, v), _a, _s),
    case("masked_fill", lambda x: aten.masked_fill.Scalar(x, m34, 0.5), _a),
    case("masked_fill broadcast", lambda x: aten.masked_fill.Scalar(x, m34, 0.5), _row),
    case("masked_fill.Tensor", lambda x, v: aten.masked_fill.Tensor(x, m34, v), _a, _s),
]


@pytest.mark.parametrize("fn,makers,second", SHAPE)
def test_shape(fn, makers, second):
    run(fn, makers, second)


# --------------------------------------------------------------------------- indexing, sorting

i3 = fnx.tensor([2, 0, 2])
g32 = fnx.tensor([[0, 1], [2, 2], [1, 0]])
s24 = fnx.tensor([[0, 1, 2, 0], [2, 0, 1, 1]])

INDEXING = [
    case("index", lambda x: aten.index.Tensor(x, [i3]), _a),
    case("index later dim", lambda x: aten.index.Tensor(x, [None, fnx.tensor([[1, 3], [3, 3]])]),
         _a),
    case("index bool mask", lambda x: aten.index.Tensor(x, [fnx.tensor([True, False, True])]),
         _a),
    case("index_put", lambda x, v: aten.index_put.default(x, [fnx.tensor([2, 0])], v), _a,
         _row),
    case("index_put accumulate", lambda x, v: aten.index_put.default(x, [i3], v, True), _a,
         _a),
    case("index_put mask", lambda x, v: aten.index_put.default(x, [m34], v), _a, _s),
    case("index_select", lambda x: aten.index_select.default(x, 1, fnx.tensor([3, 0, 3])), _a),
    case("index_select int32", lambda x: aten.index_select.default(
        x, 0, fnx.tensor([1, 1], dtype=fnx.int32)), _a),
    case("index_select 0-dim", lambda x: aten.index_select.default(x, 0, fnx.tensor([0])), _s),
    case("gather", lambda x: aten.gather.default(x, 1, g32), _a),
    case("take_along_dim", lambda x: aten.take_along_dim.default(x, g32, 1), _a),
    case("scatter.src", lambda x, s: aten.scatter.src(x, 0, s24, s), _a, lambda: t(2, 4)),
    case("scatter.src larger src", lambda x, s: aten.scatter.src(x, 0, s24, s), _a,
         lambda: t(3, 5)),
    case("scatter.value", lambda x: aten.scatter.value(x, 0, s24, 1.5), _a),
    case("scatter_add", lambda x, s: aten.scatter_add.default(x, 0, s24, s), _a,
         lambda: t(2, 4)),
    case("masked_select", lambda x: aten.masked_select.default(x, m34), _a),
    case("masked_select broadcast", lambda x: aten.masked_select.default(x, m34), _row),
    case("masked_scatter", lambda x, s: aten.masked_scatter.default(x, m34, s), _a,
         lambda: t(3, 5)),
    case("sort", lambda x: aten.sort.default(x, 1), _a),
    case("sort descending", lambda x: aten.sort.default(x, 0, True)[0], _a),
    case("sort 0-dim", lambda x: aten.sort.default(x)[0], _s),
    case("sort.stable", lambda x: aten.sort.stable(x, stable=True, dim=0)[0], _a),
    case("topk", lambda x: aten.topk.default(x, 2, 1)[0], _a),
    case("topk smallest", lambda x: aten.topk.default(x, 2, 0, False)[0], _a),
    case("_to_copy", lambda x: aten._to_copy.default(x, dtype=fnx.float64, device="cpu"), _a),
    case("copy", aten.copy.default, _a, _row),
]


@pytest.mark.parametrize("fn,makers,second", INDEXING)
def test_indexing_sorting_conversion(fn, makers, second):
    run(fn, makers, second)


@pytest.mark.parametrize("reduce", ["sum", "mean", "prod", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    fn = lambda x, s: aten.scatter_reduce.two(x, 0, s24, s, reduce,       # noqa: E731
                                              include_self=include_self)
    check(fn, pos(3, 4), pos(2, 4), second=reduce in ("sum", "mean"))
    check(fn, pos(3, 4), pos(3, 5), second=False)          # a src larger than index


def test_scatter_reduce_prod_with_zeros():
    x = _zeros_at(pos(3, 4), (0, 0))
    src = _zeros_at(pos(2, 4), (1, 1), (0, 2), (1, 2))
    check(lambda a, b: aten.scatter_reduce.two(a, 0, s24, b, "prod"), x, src, second=False)


# --------------------------------------------------------------------------- in-place variants

def _inplace(op):
    def fn(x, *args):
        y = x * 1
        op(y, *args)
        return y
    return fn


INPLACE = [
    case("mul_ on a view", lambda x, y: _inplace(lambda z, w: z[:, 1:3].mul_(w))(x, y), _a,
         lambda: t(2), second=False),
    case("copy_", _inplace(lambda z, w: z.copy_(w)), _a, _row),
    case("copy_ into a view", _inplace(lambda z, w: z[1].copy_(w)), _a, _row, second=False),
    case("relu_ after sin", lambda x: aten.sin.default(x).relu_(), _a),
    case("index_put_", _inplace(lambda z, v: z.index_put_([fnx.tensor([0, 2])], v)), _a, _row),
    case("masked_fill_", _inplace(lambda z: z.masked_fill_(fnx.tensor([True, False, False,
                                                                       True]), 0.5)), _a),
    case("tril_ on a transpose", _inplace(lambda z: z.t().tril_()), lambda: t(3, 3)),
    case("clamp_", _inplace(lambda z: z.clamp_(-0.3, 0.3)), _a),
    case("eq_ (zero gradient)", _inplace(lambda z, w: z.eq_(w)), _a, _row),
    case("logical_not_ (zero gradient)", _inplace(lambda z: z.logical_not_()), _a),
]


@pytest.mark.parametrize("fn,makers,second", INPLACE)
def test_inplace(fn, makers, second):
    run(fn, makers, second)


# --------------------------------------------------------------------------- float32 vs NumPy

def _leaf32(a):
    return fnx.tensor(a, dtype=fnx.float32, requires_grad=True)


def test_float32_gradients_match_numpy():
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    b = RNG.standard_normal((4, 2)).astype(np.float32)
    g = RNG.standard_normal((3, 2)).astype(np.float32)
    x, w = _leaf32(a), _leaf32(b)
    aten.mm.default(x, w).backward(fnx.tensor(g))
    assert x.grad.dtype is fnx.float32 and w.grad.dtype is fnx.float32
    np.testing.assert_allclose(x.grad.numpy(), g @ b.T, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), a.T @ g, rtol=1e-5, atol=1e-6)

    x = _leaf32(a)
    y = aten.sigmoid.default(x)
    (y * aten.exp.default(x)).sum().backward()
    s = 1 / (1 + np.exp(-a))
    np.testing.assert_allclose(x.grad.numpy(), s * (1 - s) * np.exp(a) + s * np.exp(a),
                               rtol=1e-5)

    x = _leaf32(a)
    aten.mean.dim(aten.tanh.default(x), [1]).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (1 - np.tanh(a) ** 2) / 4, rtol=1e-5)

    x = _leaf32(a)
    aten.cumsum.default(x, 1).backward(fnx.tensor(np.ones((3, 4), np.float32)))
    np.testing.assert_allclose(x.grad.numpy(), np.tile([4, 3, 2, 1], (3, 1)))

    x = _leaf32(a)
    aten.logsumexp.default(x, [1]).sum().backward()
    e = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(x.grad.numpy(), e / e.sum(1, keepdims=True), rtol=1e-5)

    x = _leaf32(a)
    idx = fnx.tensor([3, 3, 0])
    aten.index_select.default(x, 1, idx).sum().backward()
    want = np.zeros((3, 4), np.float32)
    want[:, 3], want[:, 0] = 2, 1
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_float16_gradient_keeps_the_input_dtype():
    x = fnx.tensor([0.5, -1.0, 2.0], dtype=fnx.float16, requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.dtype is fnx.float16
    np.testing.assert_array_equal(x.grad.numpy(), np.array([1.0, -2.0, 4.0], np.float16))


def test_to_copy_gradient_comes_back_in_the_input_dtype():
    x = fnx.tensor([1.0, 2.0], dtype=fnx.float32, requires_grad=True)
    y = x.to(fnx.float64)
    (y * y).sum().backward()
    assert x.grad.dtype is fnx.float32
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


# --------------------------------------------------------------------------- behaviour

def test_view_ops_return_views_under_autograd():
    x = t(3, 4)
    for y in (x.view(12), x.t(), x[1], x[:, 1:], x.unsqueeze(0), x.expand(2, 3, 4),
              x.diagonal(), x.permute(1, 0), aten.alias.default(x)):
        assert y._base is x and y.requires_grad
    a, b = x.split(2, 1)
    assert a._base is x and b._base is x
    assert x.view(12).grad_fn.name() == "ViewBackward0"


def test_write_through_a_view_reaches_the_base():
    x, y = t(3, 4), t(4)
    z = x * 1
    z[1].copy_(y)
    z.sum().backward()
    want = np.ones((3, 4))
    want[1] = 0
    np.testing.assert_array_equal(x.grad.numpy(), want)
    np.testing.assert_array_equal(y.grad.numpy(), np.ones(4))


def test_detach_shares_data_and_has_no_history():
    x = t(3)
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    d[0] = 5.0                                  # shares x's memory and version counter
    assert x[0].item() == 5.0 and x._version == d._version


def test_nondifferentiable_outputs_do_not_require_grad():
    x = t(3, 4)
    outs = [x > 0, aten.eq.Tensor(x, x), aten.isnan.default(x), aten.argmax.default(x),
            aten.max.dim(x, 1)[1], aten.sort.default(x)[1], aten.nonzero.default(x),
            aten.zeros_like.default(x), aten.ones_like.default(x), aten.full_like.default(x, 2),
            aten.rand_like.default(x), aten.bernoulli.p(x, 0.5), aten.any.default(x),
            aten.logical_and.default(x, x), aten.signbit.default(x), aten.isfinite.default(x)]
    for o in outs:
        assert not o.requires_grad, o


def test_relu_saves_its_output_not_its_input():
    x = t(5)
    h = x * 1
    y = aten.relu.default(h)
    h.add_(1)           # relu's backward does not need h
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), (x.detach().numpy() > 0).astype(float))


def test_sum_over_dim_0_of_a_0_dim_tensor():
    x = fnx.tensor(2.0, dtype=fnx.float64, requires_grad=True)
    x.sum(0).backward()
    assert x.grad.shape == () and x.grad.item() == 1.0


def test_amax_splits_ties_and_max_dim_picks_the_index():
    x = fnx.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], requires_grad=True)
    aten.amax.default(x, [1]).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    x.grad = None
    vals, idx = aten.max.dim(x, 1)
    vals.sum().backward()
    want = np.zeros((2, 3), np.float32)
    want[0, idx[0].item()] = want[1, idx[1].item()] = 1
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_prod_with_zeros_is_exact():
    x = fnx.tensor([2.0, 0.0, 3.0, 4.0], requires_grad=True)
    aten.prod.default(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 24, 0, 0])
    x = fnx.tensor([2.0, 0.0, 3.0, 0.0], requires_grad=True)
    aten.prod.default(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 0, 0])


def test_cumprod_with_zeros_is_exact():
    x = fnx.tensor([2.0, 0.0, 3.0, 0.0], dtype=fnx.float64, requires_grad=True)
    aten.cumprod.default(x, 0).sum().backward()
    # out = [2, 0, 0, 0]: d/dx0 = 1, d/dx1 = 2 + 2*3 + 0, d/dx2 = 0, d/dx3 = 0
    np.testing.assert_array_equal(x.grad.numpy(), [1, 8, 0, 0])


def test_norm_and_std_at_zero_have_zero_gradient():
    x = fnx.zeros(3, dtype=fnx.float64, requires_grad=True)
    aten.linalg_vector_norm.default(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 0])
    x = fnx.ones(4, dtype=fnx.float64, requires_grad=True)
    aten.std.correction(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 0, 0])


def test_clamp_passes_the_gradient_at_the_bounds():
    x = fnx.tensor([-2.0, -1.0, 0.0, 1.0, 2.0], requires_grad=True)
    aten.clamp.default(x, -1.0, 1.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 1, 1, 1, 0])


def test_maximum_splits_ties():
    x = fnx.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = fnx.tensor([1.0, 3.0, 2.0], requires_grad=True)
    aten.maximum.default(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.5, 0, 1])
    np.testing.assert_array_equal(y.grad.numpy(), [0.5, 1, 0])


def test_copy_gives_no_gradient_to_the_overwritten_self():
    x, src = t(2, 3), t(3)
    y = x * 2
    y.copy_(src)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(src.grad.numpy(), [2, 2, 2])      # summed over broadcast


def test_index_put_accumulate_adds_duplicates():
    x, v = t(3), t(3)
    aten.index_put.default(x, [fnx.tensor([1, 1, 0])], v, True).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 1, 1])
    np.testing.assert_array_equal(v.grad.numpy(), [1, 1, 1])
    x = t(3)
    aten.index_select.default(x, 0, fnx.tensor([1, 1, 0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 2, 0])


def test_scatter_gives_unread_src_elements_no_gradient():
    x, src = t(3, 4), t(3, 5)
    aten.scatter.src(x, 0, s24, src).sum().backward()
    want = np.zeros((3, 5))
    want[:2, :4] = 1
    np.testing.assert_array_equal(src.grad.numpy(), want)


def test_where_with_a_number_branch():
    x = t(3, 4)
    aten.where.self(m34, x, 0.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), m34.numpy().astype(float))


def test_double_backward_of_a_small_model():
    w = t(3, 2)
    x = t(4, 3, grad=False)
    loss = aten.logsumexp.default(aten.mm.default(x, w).tanh(), [1]).sum()
    (g,) = fnx.autograd.grad(loss, w, create_graph=True)
    (gg,) = fnx.autograd.grad((g * g).sum(), w)
    assert gg.shape == (3, 2) and bool(np.isfinite(gg.numpy()).all())
    check(lambda a: aten.logsumexp.default(aten.mm.default(x, a).tanh(), [1]), w)
