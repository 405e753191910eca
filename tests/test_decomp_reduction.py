"""Reductions decomposed to prims: only prims run, and the result equals eager's.

Every op of fnx/ir/aten/reduction.py goes through ``run_decomposed(op, ..., to="prims")``
on representative samples (dtypes, 0-dim, empty, negative dims, keepdim, ``dtype=``,
NaN/inf) and must match the eager result exactly in dtype and shape, bitwise for
integer and bool results and to float tolerance otherwise.  Errors must be the same.
"""
import math
from functools import partial

import numpy as np
import pytest

import fnx
from fnx.graph.decompose import run_decomposed
from fnx.testing.decomp import (REDUCTION_TOLS, assert_decomposes, assert_graph_decomposes,
                                assert_same_error)
from fnx.testing.decomp import seeded_tensor as rand

aten = fnx.ops.aten
t = fnx.tensor
# eager vs decomposed to prims, only prims ran; accumulation-order tolerances
check = partial(assert_decomposes, tols=REDUCTION_TOLS)


NAN = float("nan")
INF = float("inf")
FLOATS = [fnx.float32, fnx.float64, fnx.float16]
ALL = [fnx.float32, fnx.float64, fnx.int64, fnx.bool, fnx.float16]
DIMS = [None, [], [1], [-1], [0, 2], [-1, -3]]


# --------------------------------------------------------------------------- sum, mean, prod

@pytest.mark.parametrize("dtype", ALL + [fnx.int32, fnx.uint8, fnx.complex64])
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_dim(dtype, dim, keepdim):
    x = rand((2, 3, 4), dtype)
    out = check(aten.sum.dim_IntList, x, dim, keepdim)
    if not (dtype.is_floating_point or dtype.is_complex):
        assert out.dtype is fnx.int64      # bool and integers accumulate in int64


@pytest.mark.parametrize("dtype,out", [(fnx.float32, fnx.int64), (fnx.int64, fnx.float64),
                                       (fnx.bool, fnx.int32), (fnx.float32, fnx.float16),
                                       (fnx.float64, fnx.bool), (fnx.int64, fnx.int8)])
def test_sum_dtype_argument(dtype, out):
    x = rand((3, 5), dtype, low=-100, high=100)
    assert check(aten.sum.dim_IntList, x, [1], dtype=out).dtype is out
    assert check(aten.sum.default, x, dtype=out).dtype is out


def test_sum_float_dtype_truncates_each_element_first():
    out = check(aten.sum.default, t([0.6, 0.6, 0.6]), dtype=fnx.int64)
    assert out.item() == 0


@pytest.mark.parametrize("shape,dim", [((0,), None), ((0, 3), [0]), ((3, 0), [1]),
                                       ((0, 3), [1]), ((), None), ((), [0]), ((), [-1])])
@pytest.mark.parametrize("dtype", [fnx.float32, fnx.int64, fnx.bool])
def test_sum_empty_and_0dim(shape, dim, dtype):
    x = rand(shape, dtype)
    out = check(aten.sum.dim_IntList, x, dim)
    if 0 in shape and dim in (None, [0]) and shape[0] == 0:
        assert np.all(out.numpy() == 0)       # the sum of nothing is 0


def test_sum_nan_inf():
    x = t([[1., NAN, 2.], [INF, 1., -INF], [INF, INF, 1.]])
    out = check(aten.sum.dim_IntList, x, [1])
    assert math.isnan(out[0].item()) and math.isnan(out[1].item()) and out[2].item() == INF


def test_sum_default_bool_is_int64():
    assert check(aten.sum.default, t([True, True, False])).dtype is fnx.int64


@pytest.mark.parametrize("dtype", FLOATS + [fnx.complex64])
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_mean_dim(dtype, dim, keepdim):
    check(aten.mean.dim, rand((2, 3, 4), dtype), dim, keepdim)


@pytest.mark.parametrize("dtype", FLOATS)
def test_mean_default(dtype):
    check(aten.mean.default, rand((3, 4), dtype))
    check(aten.mean.default, rand((), dtype))


def test_mean_integer_needs_float_dtype():
    x = rand((3, 4), fnx.int64)
    assert_same_error(aten.mean.dim, x, [0], match="Input dtype must be either a floating point")
    assert_same_error(aten.mean.default, x, match="Input dtype must be either a floating point")
    assert_same_error(aten.mean.dim, rand((3,)), [0], dtype=fnx.int64,
                      match="Optional dtype must be either a floating point")
    assert check(aten.mean.dim, x, [0], dtype=fnx.float32).dtype is fnx.float32
    assert check(aten.mean.default, rand((3,), fnx.bool), dtype=fnx.float64).dtype is \
        fnx.float64


def test_mean_empty_is_nan():
    out = check(aten.mean.dim, fnx.zeros(0, 3), [0])
    assert tuple(out.shape) == (3,) and np.isnan(out.numpy()).all()
    assert math.isnan(check(aten.mean.default, fnx.zeros(0)).item())


def test_mean_nan_propagates():
    out = check(aten.mean.dim, t([[1., NAN], [2., 4.]]), [1])
    assert math.isnan(out[0].item()) and out[1].item() == 3.0


@pytest.mark.parametrize("dtype", ALL + [fnx.int32])
@pytest.mark.parametrize("dim", [0, -1, 2])
@pytest.mark.parametrize("keepdim", [False, True])
def test_prod_dim_int(dtype, dim, keepdim):
    x = rand((2, 3, 4), dtype, low=-3, high=3)
    out = check(aten.prod.dim_int, x, dim, keepdim)
    if dtype in (fnx.bool, fnx.int32):
        assert out.dtype is fnx.int64


@pytest.mark.parametrize("dtype", ALL)
def test_prod_default(dtype):
    check(aten.prod.default, rand((2, 3), dtype, low=-2, high=2))
    check(aten.prod.default, rand((2, 3), dtype, low=-2, high=2), dtype=fnx.float64)


def test_prod_empty_is_one_and_0dim():
    assert check(aten.prod.default, fnx.zeros(0)).item() == 1.0
    assert check(aten.prod.default, fnx.zeros(0, dtype=fnx.int64)).dtype is fnx.int64
    out = check(aten.prod.dim_int, fnx.zeros(2, 0), 1)
    assert out.tolist() == [1.0, 1.0]
    check(aten.prod.dim_int, t(3.0), 0, True)
    check(aten.prod.dim_int, t(3), -1)


# --------------------------------------------------------------------------- max-like

MINMAX_DTYPES = [fnx.float32, fnx.float64, fnx.int64, fnx.bool, fnx.float16, fnx.uint8]


@pytest.mark.parametrize("op", [aten.amax.default, aten.amin.default])
@pytest.mark.parametrize("dtype", MINMAX_DTYPES)
@pytest.mark.parametrize("dim", [[], [0], [-1], [0, 2], [1, -1]])
@pytest.mark.parametrize("keepdim", [False, True])
def test_amax_amin(op, dtype, dim, keepdim):
    check(op, rand((2, 3, 4), dtype), dim, keepdim)


@pytest.mark.parametrize("op", [aten.amax.default, aten.amin.default])
def test_amax_amin_nan_0dim_empty(op):
    out = check(op, t([[1., NAN, 2.], [1., 2., 3.]]), [1])
    assert math.isnan(out[0].item())
    check(op, t([-INF, INF]), [0])
    check(op, t(2.5), [0])
    check(op, t(2.5))
    check(op, fnx.zeros(0, 3), [1])        # the empty dim is not reduced: fine
    assert_same_error(op, fnx.zeros(0, 3), [0], exc=IndexError, match="non-zero size")
    assert_same_error(op, fnx.zeros(0, 3), match="Expected reduction dim")


@pytest.mark.parametrize("op", [aten.max.default, aten.min.default])
@pytest.mark.parametrize("dtype", MINMAX_DTYPES)
def test_max_min_default(op, dtype):
    check(op, rand((3, 4), dtype))
    check(op, rand((), dtype))


@pytest.mark.parametrize("op", [aten.max.default, aten.min.default])
def test_max_min_default_nan_and_empty(op):
    assert math.isnan(check(op, t([1., NAN, 3.])).item())
    assert_same_error(op, fnx.zeros(0), match=r"max\(\)|min\(\)")


@pytest.mark.parametrize("op", [aten.max.dim, aten.min.dim])
@pytest.mark.parametrize("dtype", MINMAX_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim(op, dtype, dim, keepdim):
    check(op, rand((3, 4, 2), dtype, low=-2, high=2), dim, keepdim)    # many ties


@pytest.mark.parametrize("op", [aten.max.dim, aten.min.dim])
def test_max_min_dim_nan_ties_0dim(op):
    vals, idx = check(op, t([[1., NAN, 2., NAN], [3., 3., 1., 1.]]), 1)
    assert math.isnan(vals[0].item()) and idx[0].item() == 1     # first NaN wins
    assert idx[1].item() in (0, 2)                                 # first of the ties
    check(op, t(4.0), 0)
    check(op, t(4.0), -1, True)
    check(op, fnx.zeros(0, 3), 1)
    assert_same_error(op, fnx.zeros(0, 3), 0, exc=IndexError, match="non-zero size")
    assert_same_error(op, fnx.zeros(2, 3), 2, exc=IndexError, match="Dimension out of range")


@pytest.mark.parametrize("op", [aten.argmax.default, aten.argmin.default])
@pytest.mark.parametrize("dtype", [fnx.float32, fnx.float64, fnx.int64, fnx.float16,
                                   fnx.uint8])
@pytest.mark.parametrize("dim", [None, 0, -1, 1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_argmin(op, dtype, dim, keepdim):
    check(op, rand((3, 4, 2), dtype, low=-2, high=3), dim, keepdim)


@pytest.mark.parametrize("op", [aten.argmax.default, aten.argmin.default])
def test_argmax_argmin_edges(op):
    assert check(op, t([1., NAN, 5., NAN])).item() == 1
    assert check(op, t([2, 7, 7, 2])).item() in (0, 1)
    check(op, t(3.0))
    check(op, t(3.0), 0, True)
    check(op, t(3.0), None, True)
    check(op, fnx.zeros(0, 2), 1)
    assert_same_error(op, t([True, False]), match="not implemented for 'Bool'")
    assert_same_error(op, fnx.zeros(0, 2), match="Expected reduction dim")


@pytest.mark.parametrize("dtype", [fnx.float32, fnx.int64, fnx.bool])
@pytest.mark.parametrize("dim", [None, 0, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_aminmax(dtype, dim, keepdim):
    check(aten.aminmax.default, rand((3, 4), dtype), dim=dim, keepdim=keepdim)
    check(aten.aminmax.default, t(2.0), dim=dim, keepdim=keepdim)


# --------------------------------------------------------------------------- any, all

ANY_OPS = [(aten.any.default, aten.all.default), (aten.any.dim, aten.all.dim),
           (aten.any.dims, aten.all.dims)]


@pytest.mark.parametrize("dtype", [fnx.float32, fnx.int64, fnx.bool, fnx.uint8, fnx.float16,
                                   fnx.complex64])
@pytest.mark.parametrize("which", [0, 1])
def test_any_all(dtype, which):
    x = rand((3, 4), dtype, low=0, high=2)
    d, dim, dims = [op[which] for op in ANY_OPS]
    expect = fnx.uint8 if dtype is fnx.uint8 else fnx.bool
    assert check(d, x).dtype is expect
    for i in (0, 1, -1):
        for keepdim in (False, True):
            check(dim, x, i, keepdim)
    for ds in (None, [], [0], [-1, 0]):
        for keepdim in (False, True):
            check(dims, x, ds, keepdim)


@pytest.mark.parametrize("which", [0, 1])
def test_any_all_nan_empty_0dim(which):
    d, dim, dims = [op[which] for op in ANY_OPS]
    check(d, t([0., NAN]))
    check(dim, t([[0., NAN], [0., 0.]]), 1)
    assert check(d, fnx.zeros(0)).item() is bool(which)        # any: False, all: True
    check(dims, fnx.zeros(2, 0), [1])
    check(dim, t(0.0), 0)
    check(dims, t(1), None, True)


# --------------------------------------------------------------------------- var, std

VAR_DTYPES = [fnx.float32, fnx.float64, fnx.float16, fnx.complex64, fnx.complex128]


@pytest.mark.parametrize("op", [aten.var.correction, aten.std.correction,
                                aten.var_mean.correction, aten.std_mean.correction])
@pytest.mark.parametrize("dtype", VAR_DTYPES)
@pytest.mark.parametrize("dim", [None, [1], [-1, 0], []])
@pytest.mark.parametrize("correction", [None, 0, 1, 2, 0.5])
@pytest.mark.parametrize("keepdim", [False, True])
def test_var_std_correction(op, dtype, dim, correction, keepdim):
    x = rand((3, 4, 2), dtype)
    out = check(op, x, dim, correction=correction, keepdim=keepdim)
    first = out[0] if isinstance(out, tuple) else out      # var_mean/std_mean: a pair
    assert first.dtype is dtype.to_real()


@pytest.mark.parametrize("op", [aten.var.dim, aten.std.dim])
@pytest.mark.parametrize("unbiased", [True, False])
@pytest.mark.parametrize("dim", [None, [0], [-1]])
def test_var_std_dim(op, unbiased, dim):
    check(op, rand((4, 5), fnx.float64), dim, unbiased, True)
    check(op, rand((4, 5), fnx.float32), dim, unbiased)


@pytest.mark.parametrize("op", [aten.var.correction, aten.std.correction])
def test_var_degrees_of_freedom(op):
    """N - correction <= 0: nan (one element) or inf, with PyTorch's warning."""
    with pytest.warns(UserWarning, match="degrees of freedom"):
        run_decomposed(op, t([3.0]), None, to="prims")
    check(op, t([3.0]))
    check(op, t([3.0, 4.0]), correction=2)
    check(op, t([3.0, 4.0]), correction=3)
    check(op, fnx.zeros(0))
    check(op, fnx.zeros(2, 0), [1])
    check(op, t(2.0), correction=0)


def test_var_nan_inf_and_errors():
    check(aten.var.correction, t([1., NAN, 3.]))
    check(aten.var.correction, t([1., INF, 3.]))
    assert_same_error(aten.var.correction, rand((3,), fnx.int64), match="floating point")
    assert_same_error(aten.var.correction, rand((3,)), [2], exc=IndexError)


# --------------------------------------------------------------------------- logsumexp

@pytest.mark.parametrize("dtype", [fnx.float32, fnx.float64, fnx.float16, fnx.int64,
                                   fnx.bool])
@pytest.mark.parametrize("dim", [[0], [-1], [0, 1]])
@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp(dtype, dim, keepdim):
    out = check(aten.logsumexp.default, rand((3, 4), dtype, low=-50, high=50), dim, keepdim)
    if not dtype.is_floating_point:
        assert out.dtype is fnx.float32


def test_logsumexp_infinities_and_empty():
    x = t([[-INF, -INF], [INF, 1.0], [NAN, 1.0], [INF, -INF], [1000., 1000.]])
    out = check(aten.logsumexp.default, x, [1])
    assert out[0].item() == -INF and out[1].item() == INF and math.isnan(out[2].item())
    assert out[3].item() == INF
    check(aten.logsumexp.default, fnx.zeros(0, 3), [0])
    check(aten.logsumexp.default, t(2.0), [0])


# --------------------------------------------------------------------------- cumulative

@pytest.mark.parametrize("op", [aten.cumsum.default, aten.cumprod.default])
@pytest.mark.parametrize("dtype", ALL + [fnx.int32])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_cumprod(op, dtype, dim):
    x = rand((3, 4), dtype, low=-3, high=3)
    out = check(op, x, dim)
    if not dtype.is_floating_point:
        assert out.dtype is fnx.int64


@pytest.mark.parametrize("op", [aten.cumsum.default, aten.cumprod.default])
def test_cumsum_cumprod_dtype_0dim_empty_nan(op):
    check(op, rand((3, 4)), 1, dtype=fnx.float64)
    check(op, rand((3, 4), fnx.int64), 0, dtype=fnx.float32)
    check(op, rand((5,), fnx.bool), 0, dtype=fnx.bool)
    check(op, t(2.5), 0)
    check(op, t(True), -1)
    check(op, fnx.zeros(0, 3), 0)
    check(op, fnx.zeros(0, 3), 1)
    check(op, t([1., NAN, 2.]), 0)
    assert_same_error(op, rand((3,)), 1, exc=IndexError, match="Dimension out of range")


# --------------------------------------------------------------------------- count_nonzero

@pytest.mark.parametrize("dtype", [fnx.float32, fnx.int64, fnx.bool])
def test_count_nonzero(dtype):
    x = rand((3, 4), dtype, low=-1, high=2)
    check(aten.count_nonzero.default, x)
    check(aten.count_nonzero.default, x, 1)
    check(aten.count_nonzero.default, x, -2)
    check(aten.count_nonzero.dim_IntList, x, [0, 1])
    check(aten.count_nonzero.dim_IntList, x, [-1])
    check(aten.count_nonzero.default, t([NAN, 0.0]))
    check(aten.count_nonzero.default, fnx.zeros(0))


# --------------------------------------------------------------------------- norms

ORDS = [2, 1, 0, 3, 0.5, -1, INF, -INF]


@pytest.mark.parametrize("ord", ORDS)
@pytest.mark.parametrize("dtype", [fnx.float32, fnx.float64, fnx.float16, fnx.complex64])
@pytest.mark.parametrize("dim", [None, [1], [-1, 0]])
@pytest.mark.parametrize("keepdim", [False, True])
def test_linalg_vector_norm(ord, dtype, dim, keepdim):
    out = check(aten.linalg_vector_norm.default, rand((3, 4), dtype), ord, dim, keepdim)
    assert out.dtype is dtype.to_real()


def test_vector_norm_dtype_and_edges():
    x = rand((3, 4))
    assert check(aten.linalg_vector_norm.default, x, 2, None, False,
                 dtype=fnx.float64).dtype is fnx.float64
    check(aten.linalg_vector_norm.default, t([NAN, 1.0]), INF)
    check(aten.linalg_vector_norm.default, t([INF, 1.0]), 2)
    check(aten.linalg_vector_norm.default, fnx.zeros(0), 2)
    check(aten.linalg_vector_norm.default, t(-3.0), 1)
    assert_same_error(aten.linalg_vector_norm.default, fnx.zeros(0), INF, match="identity")
    assert_same_error(aten.linalg_vector_norm.default, rand((3,), fnx.int64), 2,
                      match="floating point")


@pytest.mark.parametrize("p", [2, 1, INF, 3, None])
def test_norm(p):
    x = rand((3, 4))
    check(aten.norm.Scalar, x, 2 if p is None else p)
    check(aten.norm.ScalarOpt_dim, x, p, [1])
    check(aten.norm.ScalarOpt_dim, x, p, [-1, 0], True)


# --------------------------------------------------------------------------- graphs

@pytest.mark.parametrize("fn", [
    lambda x: fnx.sum(x, 1),
    lambda x: fnx.mean(x, [0, 1], keepdim=True),
    lambda x: fnx.var(x, 1),
    lambda x: fnx.max(x, 0),
    lambda x: fnx.argmax(x),
    lambda x: fnx.cumsum(x, -1),
    lambda x: fnx.logsumexp(x, 1),
    lambda x: fnx.norm(x, 3, 1),
    lambda x: aten.linalg_vector_norm.default(x, float("inf")),
    lambda x: fnx.all(x > 0, 1),
    lambda x: fnx.prod(x, 1, dtype=fnx.float64),
])
def test_decompose_graph_has_only_prims(fn):
    assert_graph_decomposes(fn, rand((3, 4)), tols=REDUCTION_TOLS)
