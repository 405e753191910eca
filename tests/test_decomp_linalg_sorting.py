"""Linear algebra and sorting decomposed to prims: only prims run, results equal eager.

Products must reach ``prims.dot_general`` (integer products stay integer, bool products
are refused as eagerly), addmm/baddbmm with beta=0 must ignore NaN in ``self``, matmul
must follow PyTorch's 1-D and batch broadcasting rules; sort/topk must keep NaN as the
largest value and be stable.
"""
from functools import partial

import numpy as np
import pytest

import fnx
from fnx.graph.decompose import run_decomposed
from fnx.testing.decomp import (REDUCTION_TOLS, assert_decomposes, assert_graph_decomposes,
                                assert_same, assert_same_error)
from fnx.testing.decomp import seeded_tensor as rand

aten = fnx.ops.aten
t = fnx.tensor
# eager vs decomposed to prims, only prims ran; accumulation-order tolerances
check = partial(assert_decomposes, tols=REDUCTION_TOLS)


NAN = float("nan")
INF = float("inf")
prims = fnx.ops.prims

PRODUCT_DTYPES = [fnx.float32, fnx.float64, fnx.int64, fnx.float16, fnx.int32]


def ran_names(op, *args, **kwargs):
    _, ran = run_decomposed(op, *args, to="prims", **kwargs)
    return {str(o) for o in ran}


# --------------------------------------------------------------------------- mm, bmm, addmm

@pytest.mark.parametrize("dtype", PRODUCT_DTYPES)
@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((1, 1), (1, 1)), ((0, 3), (3, 2)),
                                    ((2, 0), (0, 3)), ((3, 2), (2, 0))])
def test_mm(dtype, shapes):
    a, b = rand(shapes[0], dtype, 1), rand(shapes[1], dtype, 2)
    out = check(aten.mm.default, a, b)
    assert out.dtype is dtype                 # integer products stay integer
    assert ran_names(aten.mm.default, a, b) == {"prims::dot_general"}


def test_mm_int_wraps_and_noncontiguous():
    big = t([[2 ** 62, 2 ** 62]])
    check(aten.mm.default, big, t([[2], [2]]))
    a = rand((4, 3), fnx.float64)
    check(aten.mm.default, a.t(), a)           # a transposed view


@pytest.mark.parametrize("op", [aten.mm.default, aten.bmm.default])
def test_products_refuse_bool_and_mixed_dtypes(op):
    shape = (2, 2) if op is aten.mm.default else (1, 2, 2)
    assert_same_error(op, rand(shape, fnx.bool), rand(shape, fnx.bool), match="not implemented")
    assert_same_error(op, rand(shape), rand(shape, fnx.float64), match="same dtype")


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES)
@pytest.mark.parametrize("shapes", [((2, 3, 4), (2, 4, 5)), ((0, 2, 3), (0, 3, 1)),
                                    ((3, 1, 0), (3, 0, 2))])
def test_bmm(dtype, shapes):
    a, b = rand(shapes[0], dtype, 1), rand(shapes[1], dtype, 2)
    check(aten.bmm.default, a, b)
    assert ran_names(aten.bmm.default, a, b) == {"prims::dot_general"}


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES)
@pytest.mark.parametrize("bias_shape", [(3, 5), (5,), (1, 5), (3, 1), ()])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2), (0, 1), (2, 0), (-1, 3)])
def test_addmm(dtype, bias_shape, beta, alpha):
    if not dtype.is_floating_point and isinstance(beta, float):
        beta = 2
    bias = rand(bias_shape, dtype, 3)
    a, b = rand((3, 4), dtype, 1), rand((4, 5), dtype, 2)
    check(aten.addmm.default, bias, a, b, beta=beta, alpha=alpha)


def test_addmm_beta_zero_ignores_nan_in_self():
    bias = t([[NAN, INF], [-INF, NAN]])
    a, b = rand((2, 3)), rand((3, 2))
    out = check(aten.addmm.default, bias, a, b, beta=0)
    assert np.isfinite(out.numpy()).all()
    out = check(aten.addmm.default, bias, a, b, beta=1)
    assert not np.isfinite(out.numpy()).any()


@pytest.mark.parametrize("beta", [0, 1, 0.5])
def test_baddbmm(beta):
    bias = rand((2, 3, 5), fnx.float32, 3)
    a, b = rand((2, 3, 4), seed=1), rand((2, 4, 5), seed=2)
    check(aten.baddbmm.default, bias, a, b, beta=beta, alpha=2)
    check(aten.baddbmm.default, rand((5,)), a, b, beta=beta)
    out = check(aten.baddbmm.default, fnx.full((1, 3, 5), NAN), a, b, beta=0)
    assert (beta != 0) or np.isfinite(out.numpy()).all()
    check(aten.baddbmm.default, rand((2, 3, 5), fnx.int64), rand((2, 3, 4), fnx.int64),
          rand((2, 4, 5), fnx.int64), beta=beta if beta != 0.5 else 3)


# --------------------------------------------------------------------------- dot, mv, outer

@pytest.mark.parametrize("dtype", PRODUCT_DTYPES)
@pytest.mark.parametrize("n", [0, 1, 7])
def test_dot_mv(dtype, n):
    v, w = rand((n,), dtype, 1), rand((n,), dtype, 2)
    assert check(aten.dot.default, v, w).dtype is dtype
    assert ran_names(aten.dot.default, v, w) == {"prims::dot_general"}
    m = rand((3, n), dtype, 3)
    check(aten.mv.default, m, v)
    assert ran_names(aten.mv.default, m, v) == {"prims::dot_general"}


def test_dot_mv_errors():
    assert_same_error(aten.dot.default, rand((3,), fnx.bool), rand((3,), fnx.bool),
                      match="not implemented")
    assert_same_error(aten.dot.default, rand((3,)), rand((4,)), match="inconsistent tensor size")
    assert_same_error(aten.dot.default, rand((3,)), rand((3,), fnx.float64), match="same dtype")
    assert_same_error(aten.mv.default, rand((2, 3)), rand((4,)), match="size mismatch")


@pytest.mark.parametrize("dtypes", [(fnx.float32, fnx.float32), (fnx.int64, fnx.float32),
                                    (fnx.bool, fnx.int64), (fnx.float16, fnx.float64)])
def test_outer(dtypes):
    out = check(aten.outer.default, rand((3,), dtypes[0]), rand((4,), dtypes[1]))
    assert out.dtype is fnx.promote_types(*dtypes)      # outer promotes, products do not
    check(aten.outer.default, rand((0,)), rand((2,)))


# --------------------------------------------------------------------------- matmul, linear

MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((5, 2, 3), (3,)), ((5, 2, 3), (3, 4)), ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)), ((1, 2, 3), (5, 3, 4)), ((6, 1, 2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (1, 4, 3, 2)), ((0, 2, 3), (3, 4)), ((2, 0), (0, 3)), ((0,), (0,)),
    ((4, 2, 3), (3,)), ((3,), (2, 1, 3, 1)),
]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES)
@pytest.mark.parametrize("dtype", [fnx.float32, fnx.int64, fnx.float16])
def test_matmul(shapes, dtype):
    a, b = rand(shapes[0], dtype, 1), rand(shapes[1], dtype, 2)
    out = check(aten.matmul.default, a, b)
    assert tuple(out.shape) == np.matmul(np.ones(shapes[0]), np.ones(shapes[1])).shape
    assert "prims::dot_general" in ran_names(aten.matmul.default, a, b)


def test_matmul_errors():
    assert_same_error(aten.matmul.default, t(1.0), rand((3,)), match="at least 1D")
    assert_same_error(aten.matmul.default, rand((2, 3)), rand((4, 2)), match="cannot be multiplied")
    assert_same_error(aten.matmul.default, rand((2, 3, 4)), rand((3, 3, 4)))
    assert_same_error(aten.matmul.default, rand((2, 3), fnx.bool), rand((3, 2), fnx.bool),
                      match="not implemented")


@pytest.mark.parametrize("in_shape", [(3, 4), (4,), (2, 3, 4), (0, 4)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [fnx.float32, fnx.float64, fnx.int64])
def test_linear(in_shape, bias, dtype):
    x, w = rand(in_shape, dtype, 1), rand((5, 4), dtype, 2)
    b = rand((5,), dtype, 3) if bias else None
    check(aten.linear.default, x, w, b)
    check(aten.linear.default, x, rand((4,), dtype, 2), rand((), dtype, 3) if bias else None)


# --------------------------------------------------------------------------- tensordot, einsum

@pytest.mark.parametrize("shapes,ds,do", [
    (((3, 4, 5), (4, 3, 2)), [0, 1], [1, 0]), (((3, 4), (4, 5)), [1], [0]),
    (((3, 4), (5, 6)), [], []), (((2, 3, 4), (4, 3)), [-1, -2], [0, 1]),
    (((0, 3), (3, 2)), [1], [0]),
])
@pytest.mark.parametrize("dtype", [fnx.float32, fnx.int64])
def test_tensordot(shapes, ds, do, dtype):
    check(aten.tensordot.default, rand(shapes[0], dtype, 1), rand(shapes[1], dtype, 2), ds, do)


EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(2,), (3,)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("ij->ji", [(2, 3)]),
    ("ij", [(2, 3)]), ("ijk->kji", [(2, 3, 4)]), ("iij->j", [(3, 3, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("...ij,...jk", [(5, 2, 3), (3, 4)]),
    ("...ij,...jk->...ik", [(1, 2, 3), (4, 3, 2)]), ("b...,b...->b", [(2, 3, 4), (2, 1, 4)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]), ("ij,ij->", [(2, 3), (2, 3)]), ("i,i,i->i", [(4,)] * 3),
    ("ab,bc,ca->", [(2, 3), (3, 4), (4, 2)]), ("ji,kj->ik", [(3, 2), (4, 3)]),
    ("i...->...", [(2, 3, 4)]), ("ij,k->", [(2, 3), (4,)]), ("iji->j", [(2, 3, 2)]),
    ("ij,jk->ik", [(0, 3), (3, 2)]), ("ij,jk->ik", [(2, 0), (0, 3)]), ("->", [()]),
    ("i,->i", [(3,), ()]), ("ij,j->ij", [(2, 1), (3,)]), ("a...b,b...->a...", [(2, 3, 4),
                                                                               (4, 1)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM)
@pytest.mark.parametrize("dtype", [fnx.float32, fnx.float64, fnx.int64, fnx.float16])
def test_einsum(eq, shapes, dtype):
    xs = [rand(s, dtype, i) for i, s in enumerate(shapes)]
    out = check(aten.einsum.default, eq, xs)
    assert out.dtype is dtype
    # NumPy will not sum '...' dims away when the output omits them; PyTorch does
    if dtype is fnx.float64 and not ("..." in eq.split("->")[0] and "->" in eq
                                     and "..." not in eq.split("->")[1]):
        expected = np.einsum(eq, *[x.numpy() for x in xs])
        assert_same(out, fnx.tensor(np.asarray(expected), dtype=dtype), REDUCTION_TOLS)


def test_einsum_result_is_a_new_tensor_and_errors():
    x = rand((2, 3))
    out, _ = run_decomposed(aten.einsum.default, "ij", [x], to="prims")
    assert out is not x
    assert_same_error(aten.einsum.default, "ij,jk", [rand((2, 3)), rand((4, 5))])
    assert_same_error(aten.einsum.default, "ij,jk",
                      [rand((2, 3), fnx.bool), rand((3, 5), fnx.bool)], match="not implemented")
    assert_same_error(aten.einsum.default, "ij,jk", [rand((2, 3)), rand((3, 5), fnx.float64)],
                      match="same dtype")


def test_einsum_contracts_with_dot_general():
    xs = [rand((2, 3, 4)), rand((2, 4, 5))]
    names = ran_names(aten.einsum.default, "bij,bjk->bik", xs)
    assert "prims::dot_general" in names and "prims::mul" not in names


# --------------------------------------------------------------------------- sorting

SORT_DTYPES = [fnx.float32, fnx.float64, fnx.int64, fnx.bool, fnx.float16, fnx.uint8]


@pytest.mark.parametrize("dtype", SORT_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort(dtype, dim, descending):
    x = rand((4, 6), dtype, low=0, high=3)          # many ties: stability shows
    check(aten.sort.default, x, dim, descending)
    check(aten.sort.stable, x, stable=True, dim=dim, descending=descending)
    check(aten.argsort.default, x, dim, descending)
    check(aten.argsort.stable, x, stable=False, dim=dim, descending=descending)


@pytest.mark.parametrize("descending", [False, True])
def test_sort_nan_stable_0dim_empty(descending):
    x = t([3., NAN, -INF, 1., NAN, 3., INF, 1.])
    vals, idx = check(aten.sort.default, x, 0, descending)
    # NaN is the largest value; equal values keep their order (stable) either way
    expected = [1, 4, 6, 0, 5, 3, 7, 2] if descending else [2, 3, 7, 0, 5, 6, 1, 4]
    assert idx.tolist() == expected
    check(aten.sort.default, t(2.0))
    check(aten.sort.default, t(2.0), 0, True)
    check(aten.sort.default, fnx.zeros(0))
    check(aten.sort.default, fnx.zeros(3, 0), 0)
    assert_same_error(aten.sort.default, rand((3,)), 1, exc=IndexError)


def test_msort():
    check(aten.msort.default, rand((4, 3)))
    check(aten.msort.default, t([2, 1, 2, 0]))
    check(aten.msort.default, t([NAN, 1.0, -1.0]))


@pytest.mark.parametrize("dtype", [fnx.float32, fnx.float64, fnx.int64, fnx.float16,
                                   fnx.uint8])
@pytest.mark.parametrize("k", [0, 1, 3, 5])
@pytest.mark.parametrize("dim", [1, -1, 0])
@pytest.mark.parametrize("largest", [True, False])
def test_topk(dtype, k, dim, largest):
    x = rand((5, 5), dtype, low=0, high=4)
    check(aten.topk.default, x, k, dim, largest)
    check(aten.topk.default, x, k, dim, largest, False)


@pytest.mark.parametrize("largest", [True, False])
def test_topk_nan_ties_0dim_errors(largest):
    x = t([1., NAN, 5., 5., NAN, -INF])
    vals, idx = check(aten.topk.default, x, 3, 0, largest)
    if largest:
        assert idx.tolist() == [1, 4, 2]       # NaN is the largest value; ties: lower first
    else:
        assert idx.tolist() == [5, 0, 2]
    check(aten.topk.default, t(2.0), 1)
    check(aten.topk.default, t(2.0), 0)
    check(aten.topk.default, fnx.zeros(0, 3), 2, 1)
    assert_same_error(aten.topk.default, rand((3,)), 4, match="k out of range")


def test_sorting_reaches_sort_prims():
    x = rand((3, 4))
    assert ran_names(aten.sort.default, x) == {"prims::sort"}
    assert ran_names(aten.topk.default, x, 2) == {"prims::top_k"}
    assert ran_names(aten.argsort.default, x) == {"prims::sort"}


# --------------------------------------------------------------------------- graphs

@pytest.mark.parametrize("fn,shapes", [
    (lambda a, b: fnx.matmul(a, b), [(5, 2, 3), (3, 4)]),
    (lambda a, b: fnx.matmul(a, b), [(2, 1, 2, 3), (4, 3, 2)]),
    (lambda a, b: fnx.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 5)]),
    (lambda a, b: aten.linear.default(a, b), [(3, 4), (5, 4)]),
    (lambda a, b: fnx.addmm(a, a, b, beta=0), [(3, 3), (3, 3)]),
    (lambda a, b: fnx.sort(a, descending=True)[0] + fnx.topk(b, 2)[0].sum(), [(3, 2), (3, 4)]),
])
def test_decompose_graph_has_only_prims(fn, shapes):
    xs = [rand(s, seed=i) for i, s in enumerate(shapes)]
    assert_graph_decomposes(fn, *xs, tols=REDUCTION_TOLS)
