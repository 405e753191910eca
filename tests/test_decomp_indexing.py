"""Indexing ops decomposed to prims: only prims run, and the result equals eager's.

Every functional op of fnx/ir/aten/indexing.py goes through ``run_decomposed(op, ...,
to="prims")``: advanced indexing with several index tensors, None entries, broadcasting,
negative indices and bool masks (via prims.nonzero, eager only), index_put with and
without accumulate, gather/scatter and every scatter_reduce mode, masks.  Results must
match eager exactly in dtype, shape and values.
"""
import re
from functools import partial

import numpy as np
import pytest

import fnx
from fnx.graph.decompose import run_decomposed
from fnx.graph.tracer import DataDependentError
from fnx.ir.aten import indexing as I
from fnx.testing.decomp import (assert_decomposes, assert_graph_decomposes, assert_same_error,
                                functional_aten_ops, sample_params, seeded_tensor)

aten = fnx.ops.aten
T = fnx.tensor

DTYPES = [fnx.float32, fnx.float64, fnx.int64, fnx.bool]


# --------------------------------------------------------------------------- helpers

# exact but for float16 sums (scatter_add, index_put accumulate) in another order
TOLS = {fnx.float16: 2e-3, fnx.bfloat16: 0, fnx.float32: 0, fnx.float64: 0, fnx.complex64: 0,
        fnx.complex128: 0}
check = partial(assert_decomposes, tols=TOLS)
check_error = assert_same_error     # same exception type and message
make = partial(seeded_tensor, low=-10, high=10)     # random values of a dtype


def idx(shape, high, seed=0, low=0):
    rng = np.random.default_rng(seed)
    return fnx.tensor(rng.integers(low, high, shape), dtype=fnx.int64)


# --------------------------------------------------------------------------- samples

def per_dtype(dtype):
    x = make((3, 4, 5), dtype)
    nc = make((5, 4, 3), dtype, 1).permute(2, 1, 0)          # non-contiguous (3, 4, 5)
    m = make((4, 5), dtype, 2)
    s0 = make((), dtype, 3)
    e = make((0, 5), dtype, 4)
    src = make((4, 6), dtype, 5)
    mask = make((4,), fnx.bool, 6)
    return [
        # index.Tensor
        (aten.index.Tensor, (x, [T([0, -1, 2, 0])]), {}),
        (aten.index.Tensor, (x, [None, T([[0], [3]]), T([1, -2, 4])]), {}),
        (aten.index.Tensor, (x, [T([0, 2]), None, T([1, -2])]), {}),
        (aten.index.Tensor, (nc, [T([[0, 2]]), T([[1], [3]]), T([4])]), {}),
        (aten.index.Tensor, (x, [None, None, T(2)]), {}),
        (aten.index.Tensor, (x, [T([], dtype=fnx.int64)]), {}),
        (aten.index.Tensor, (x, [T([1, 2], dtype=fnx.int32), None]), {}),
        (aten.index.Tensor, (x, [None]), {}),
        (aten.index.Tensor, (s0, []), {}),
        (aten.index.Tensor, (e, [T([], dtype=fnx.int64), T([], dtype=fnx.int64)]), {}),
        (aten.index.Tensor, (x, [T([True, False, True])]), {}),
        (aten.index.Tensor, (x, [None, mask]), {}),
        (aten.index.Tensor, (nc, [make((3, 4), fnx.bool, 7)]), {}),
        (aten.index.Tensor, (x, [T([2]), None, make((5,), fnx.bool, 8)]), {}),
        (aten.index.Tensor, (m, [T([1, 0, 1, 1], dtype=fnx.uint8)]), {}),
        # index_put
        (aten.index_put.default, (x, [T([0, 2, 0]), T([1, 3, 1])], make((3, 5), dtype, 9),
                                  True), {}),
        (aten.index_put.default, (x, [T([0, 2]), T([1, 3])], make((5,), dtype, 9)), {}),
        (aten.index_put.default, (nc, [T([0, 2]), None, T([1, -3])],
                                  make((2, 4), dtype, 9)), {}),
        (aten.index_put.default, (x, [None, T([[0], [3]]), T([1, -2])],
                                  make((3, 2, 2), dtype, 9), True), {}),
        (aten.index_put.default, (x, [None, mask], make((), dtype, 9)), {}),
        (aten.index_put.default, (x, [None, mask], make((5,), dtype, 9), True), {}),
        (aten.index_put.default, (m, [make((4, 5), fnx.bool, 10)], make((1,), dtype, 9)), {}),
        (aten.index_put.default, (m, [None], make((5,), dtype, 9)), {}),
        (aten.index_put.default, (m, [None], make((4, 1), dtype, 9), True), {}),
        (aten.index_put.default, (e, [T([], dtype=fnx.int64)], make((5,), dtype, 9)), {}),
        # index_select
        (aten.index_select.default, (x, -1, T([4, 0, 0])), {}),
        (aten.index_select.default, (nc, 1, T([], dtype=fnx.int32)), {}),
        (aten.index_select.default, (s0, 0, T([0])), {}),
        (aten.index_select.default, (m, 0, T(3)), {}),
        # gather
        (aten.gather.default, (m, 0, idx((3, 4), 4)), {}),
        (aten.gather.default, (nc, -1, idx((2, 3, 7), 5)), {}),
        (aten.gather.default, (s0, 0, T(0)), {}),
        (aten.gather.default, (m, 1, idx((4, 0), 5)), {}),
        # scatter
        (aten.scatter.src, (m, 1, idx((3, 2), 5), src), {}),
        (aten.scatter.src, (s0, 0, T(0), make((), dtype, 11)), {}),
        (aten.scatter.value, (nc, -1, idx((2, 2, 2), 5), 1), {}),
        (aten.scatter_add.default, (m, 0, idx((3, 5), 4), src), {}),
        (aten.scatter_add.default, (m, 0, idx((0, 5), 4), src), {}),
        # masks
        (aten.masked_select.default, (x, mask.reshape(4, 1)), {}),
        (aten.masked_select.default, (s0, make((2, 2), fnx.bool, 12)), {}),
        (aten.masked_scatter.default, (x, mask.reshape(4, 1), make((60,), dtype, 13)), {}),
        (aten.masked_scatter.default, (s0, make((2, 3), fnx.bool, 12), src), {}),
        (aten.nonzero.default, (x,), {}),
        (aten.nonzero.default, (s0,), {}),
        (aten.nonzero.default, (e,), {}),
        (aten.argwhere.default, (nc,), {}),
        (aten.take_along_dim.default, (x, idx((1, 4, 2), 5), -1), {}),
        (aten.take_along_dim.default, (nc, idx((7,), 60)), {}),
    ]


SAMPLES = sample_params(per_dtype, DTYPES)


@pytest.mark.parametrize("op,args,kwargs", SAMPLES)
def test_decomposed_matches_eager(op, args, kwargs):
    check(op, *args, **kwargs)


# scatter_reduce: every mode, with and without self, on each numeric dtype
REDUCE_SAMPLES = [
    pytest.param(dtype, reduce, include_self, id=f"{reduce}-{include_self}-{dtype.name}")
    for dtype in (fnx.float32, fnx.float64, fnx.int64, fnx.int32, fnx.float16)
    for reduce in ("sum", "prod", "mean", "amax", "amin")
    for include_self in (True, False)]


@pytest.mark.parametrize("dtype,reduce,include_self", REDUCE_SAMPLES)
def test_scatter_reduce(dtype, reduce, include_self):
    base = make((4, 5), dtype, 1)
    src = make((5, 3), dtype, 2)
    if dtype is fnx.float16 and reduce == "prod":
        base, src = base / 4, src / 4                     # keep products in range
    check(aten.scatter_reduce.two, base, 0, idx((5, 3), 4, 3), src, reduce,
          include_self=include_self)
    # along the last dim, with duplicates and an index smaller than src
    check(aten.scatter_reduce.two, base, -1, T([[0, 0, 4], [1, 1, 1]]), src[:3], reduce,
          include_self=include_self)


def test_scatter_reduce_bool_and_0dim():
    b = make((3, 4), fnx.bool)
    for reduce in ("sum", "prod", "amax", "amin"):
        check(aten.scatter_reduce.two, b, 1, idx((3, 2), 4), make((3, 2), fnx.bool, 1),
              reduce, include_self=False)
    check(aten.scatter_reduce.two, T(2.), 0, T(0), T(5.), "mean")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_scatter_reduce_nan_and_negative_integer_mean():
    base = T([0., 1., 2.])
    src = T([float("nan"), 5., -1., 7.])
    i = T([0, 0, 1, 2])
    out = check(aten.scatter_reduce.two, base, 0, i, src, "amax")
    assert np.isnan(out.numpy()[0])
    check(aten.scatter_reduce.two, base, 0, i, src, "amin", include_self=False)
    # the integer mean rounds down: (-7 + 0) / 2 -> -4, (5 + 0) / 2 -> 2
    out = check(aten.scatter_reduce.two, T([0, 0]), 0, T([0, 1]), T([-7, 5]), "mean")
    assert out.tolist() == [-4, 2]


def test_index_put_duplicates():
    x = fnx.zeros(4)
    i = [T([1, 1, 3, 1])]
    out = check(aten.index_put.default, x, i, T([1., 2., 3., 4.]), True)
    assert out.tolist() == [0., 7., 0., 3.]
    out = check(aten.index_put.default, x, i, T([1., 2., 3., 4.]), False)
    assert out.tolist() == [0., 4., 0., 3.]       # the last write wins, as eager


def test_index_put_masked_fill_path_casts_the_value():
    # one bool mask and a one-element value: a masked fill, the value is cast to self's dtype
    x = make((3, 4), fnx.int64)
    out = check(aten.index_put.default, x, [x > 0], T(2.7))
    assert out.dtype is fnx.int64
    check(aten.index_put.default, x, [None, T([True, False, True, False])], T([9.5]))


def test_float16_and_complex():
    h = make((3, 4), fnx.float16)
    check(aten.index.Tensor, h, [T([2, 0]), T([-1, 1])])
    check(aten.index_put.default, h, [T([0, 0])], make((2, 4), fnx.float16, 1), True)
    check(aten.gather.default, h, 1, idx((3, 2), 4))
    check(aten.masked_select.default, h, h > 0)
    c = make((3, 4), fnx.complex64)
    check(aten.index.Tensor, c, [None, T([3, 0])])
    check(aten.scatter.src, c, 0, idx((2, 4), 3), make((2, 4), fnx.complex64, 1))
    check(aten.nonzero.default, c)


def test_index_semantics_against_numpy():
    x = make((3, 4, 5), fnx.int64)
    a = x.numpy()
    i0, i2 = np.array([[0], [2]]), np.array([1, -2, 4])
    out = check(aten.index.Tensor, x, [T(i0), None, T(i2)])
    np.testing.assert_array_equal(out.numpy(), a[i0, :, i2])
    m = a[:, :, 0] > 0
    out = check(aten.index.Tensor, x, [T(m)])
    np.testing.assert_array_equal(out.numpy(), a[m])


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("op,args,exc", [
    (aten.index.Tensor, (make((3, 4)), [T([0.5])]), IndexError),
    (aten.index.Tensor, (make((3, 4)), [None, None, T([0])]), IndexError),
    (aten.index.Tensor, (make((3, 4)), [T([0, 1]), T([0, 1, 2])]), IndexError),
    (aten.index.Tensor, (make((3, 4)), [T([True, False])]), IndexError),
    (aten.index_put.default, (make((3, 4)), [T([0])], make((3,))), RuntimeError),
    (aten.index_put.default, (make((3, 4)), [T([0])], make((4,), fnx.float64)), RuntimeError),
    (aten.index_select.default, (make((3, 4)), 0, T([[0]])), IndexError),
    (aten.index_select.default, (make((3, 4)), 0, T([0.])), RuntimeError),
    (aten.gather.default, (make((3, 4)), 0, T([0])), RuntimeError),
    (aten.gather.default, (make((3, 4)), 2, T([[0]])), IndexError),
    (aten.scatter.src, (make((3, 4)), 0, T([[0]]), make((1, 1), fnx.float64)), RuntimeError),
    (aten.scatter.value, (make((3, 4)), 0, T([[0.]]), 1.0), RuntimeError),   # float index
    (aten.scatter_reduce.two, (make((3, 4)), 0, T([[0]]), make((1, 1)), "max"),
     RuntimeError),
    (aten.masked_select.default, (make((3, 4)), make((3, 4), fnx.int64)), RuntimeError),
    (aten.masked_scatter.default, (make((3,)), make((3,), fnx.bool), make((3,), fnx.int64)),
     RuntimeError),
])
def test_errors_match_eager(op, args, exc):
    check_error(op, *args, exc=exc)


@pytest.mark.parametrize("op,args", [
    (aten.index.Tensor, (make((3, 4)), [T([3])])),
    (aten.index.Tensor, (make((3, 4)), [T([0]), T([-5])])),
    (aten.index.Tensor, (make((3, 4)), [None, T([4])])),
    (aten.index_put.default, (make((3, 4)), [T([0]), T([4])], make((1,)))),
    (aten.index_select.default, (make((3, 4)), 1, T([-1]))),
    (aten.gather.default, (make((3, 4)), 1, T([[4]]))),
    (aten.scatter_add.default, (make((3, 4)), 0, T([[3]]), make((1, 1)))),
    (aten.masked_scatter.default, (make((3,)), T([True, True, False]), make((1,)))),
    (aten.masked_scatter.default, (make((3,)), T([False, True, False]), make((0,)))),
])
def test_out_of_range_indices_raise(op, args):
    """Bounds are data: the decomposition checks them with prims.check_in_range, so it
    raises eager's exception with eager's message (an out-of-range index never reads a
    neighbouring element)."""
    with pytest.raises((IndexError, RuntimeError)) as eager:
        op(*args)
    with pytest.raises(eager.type, match=re.escape(str(eager.value))):
        run_decomposed(op, *args, to="prims")


def test_masked_scatter_with_an_empty_source_and_no_true():
    check(aten.masked_scatter.default, make((3,)), make((3,), fnx.bool) & False,
          make((0,)))


# --------------------------------------------------------------------------- coverage

def test_every_functional_op_has_a_decomposition():
    missing = [str(op) for op in functional_aten_ops(I) if op.decomposition is None]
    assert missing == []


def test_every_functional_op_is_sampled():
    sampled = {id(p.values[0]) for p in SAMPLES} | {id(aten.scatter_reduce.two)}
    missing = [str(op) for op in functional_aten_ops(I) if id(op) not in sampled]
    assert missing == []


# --------------------------------------------------------------------------- traced graphs

@pytest.mark.parametrize("fn,args", [
    (lambda a, i: aten.index.Tensor(a, [None, i]), (make((2, 3, 4)), T([[0, 2]]))),
    (lambda a, i, j: aten.index.Tensor(a, [i, None, j]), (make((2, 3, 4)), T([1]),
                                                          T([[0], [3]]))),
    (lambda a, i, v: aten.index_put.default(a, [i], v, True), (make((2, 3)), T([0, 0]),
                                                               make((2, 3)))),
    (lambda a, m: aten.index_put.default(a, [m], T(1.)), (make((2, 3)),
                                                          make((2, 3), fnx.bool))),
    (lambda a, i: aten.index_select.default(a, 1, i), (make((2, 3)), T([2, 2]))),
    (lambda a, i: aten.gather.default(a, 1, i), (make((2, 3)), T([[2], [0]]))),
    (lambda a, i, s: aten.scatter_reduce.two(a, 1, i, s, "mean", include_self=False),
     (make((2, 3)), T([[2, 2]]), make((1, 2)))),
    (lambda a, i, s: aten.scatter_add.default(a, 0, i, s), (make((2, 3)), T([[1, 1]]),
                                                            make((1, 2)))),
    (lambda a, m, s: aten.masked_scatter.default(a, m, s), (make((2, 3)),
                                                            make((2, 3), fnx.bool),
                                                            make((6,)))),
])
def test_traced_graph_has_only_prims(fn, args):
    # only prims, eager's shapes and dtypes in the trace, eager's values when run
    assert_graph_decomposes(fn, *args, tols=TOLS)


def test_data_dependent_ops_do_not_trace():
    with pytest.raises(DataDependentError):
        fnx.decompose(lambda a: aten.nonzero.default(a), make((3,)), to="prims")
    with pytest.raises(DataDependentError):
        fnx.decompose(lambda a, m: aten.index.Tensor(a, [m]), make((3,)),
                      make((3,), fnx.bool), to="prims")
