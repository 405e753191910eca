"""Shape and view ops decomposed to prims: only prims run, and the result equals eager's.

Every op of fnx/ir/aten/shape.py and arrange.py (except in-place ones, which
functionalization handles) goes through ``run_decomposed(op, ..., to="prims")`` on
representative samples: several dtypes, 0-dim and empty tensors, non-contiguous inputs,
negative dims and PyTorch's clamping/legacy rules.  The result must match eager exactly in
dtype, shape and values.  Decompositions validate with the op's own checks, so errors
match eager's too.
"""
from functools import partial

import pytest

import fnx
from fnx.graph.decompose import run_decomposed
from fnx.ir.aten import arrange, shape
from fnx.testing.decomp import (assert_decomposes, assert_graph_decomposes, assert_same_error,
                                functional_aten_ops, sample_params, seeded_tensor)

aten = fnx.ops.aten

DTYPES = [fnx.float32, fnx.float64, fnx.int64, fnx.bool]


# --------------------------------------------------------------------------- helpers

# data movement: the decomposed results equal eager's exactly (tolerance 0)
check = partial(assert_decomposes, tols=0)
check_error = assert_same_error     # same exception type and message
make = partial(seeded_tensor, low=-10, high=10)     # random values of a dtype


def noncontig(shape, dtype=fnx.float32, seed=0):
    """A non-contiguous view (a transpose of the last two dims) of the given shape."""
    s = list(shape)
    s[-1], s[-2] = s[-2], s[-1]
    out = make(s, dtype, seed).transpose(-1, -2)
    assert not out.is_contiguous() or 0 in shape or 1 in shape[-2:]
    return out


# --------------------------------------------------------------------------- samples

def per_dtype(dtype):
    """(op, args, kwargs) samples run for each dtype of DTYPES."""
    x = make((2, 3, 4), dtype)
    nc = noncontig((2, 3, 4), dtype, 1)
    s0 = make((), dtype, 2)
    e = make((0, 3), dtype, 3)
    m = make((3, 4), dtype, 4)
    return [
        (aten.view.default, (x, [4, -1]), {}),
        (aten.view.default, (s0, [1, 1]), {}),
        (aten.view.default, (e, [3, -1, 2]), {}),
        (aten.view.default, (nc[:, :, 1], [2, 3]), {}),
        (aten._unsafe_view.default, (x, [6, 4]), {}),
        (aten.permute.default, (x, [2, 0, -2]), {}),
        (aten.permute.default, (s0, []), {}),
        (aten.permute.default, (nc, [1, 2, 0]), {}),
        (aten.expand.default, (make((3, 1), dtype), [2, 3, 4]), {}),
        (aten.expand.default, (make((3, 1), dtype), [-1, 0]), {}),
        (aten.expand.default, (s0, [2, 2]), {}),
        (aten.squeeze.dim, (make((2, 1, 3), dtype), -2), {}),
        (aten.squeeze.dim, (x, 0), {}),
        (aten.squeeze.dim, (s0, -1), {}),
        (aten.squeeze.dims, (make((1, 2, 1), dtype), [0, -1, 1]), {}),
        (aten.unsqueeze.default, (x, -1), {}),
        (aten.unsqueeze.default, (s0, 0), {}),
        (aten.unsqueeze.default, (nc, 1), {}),
        (aten.select.int, (x, 1, -1), {}),
        (aten.select.int, (make((3,), dtype), 0, 2), {}),
        (aten.slice.Tensor, (x, 2, -3, 100, 2), {}),
        (aten.slice.Tensor, (x, 0, 5, 1), {}),
        (aten.slice.Tensor, (x, 1, -100, -1), {}),
        (aten.slice.Tensor, (nc, -1, None, None, 3), {}),
        (aten.diagonal.default, (x, 1, -1, 1), {}),
        (aten.diagonal.default, (x, -1, 1, 2), {}),
        (aten.diagonal.default, (x, 9, 1, 2), {}),
        (aten.diagonal.default, (nc, 0, 0, 2), {}),
        (aten.as_strided.default, (x, [3, 3], [1, 2], 1), {}),
        (aten.as_strided.default, (x, [2, 2], [0, 23]), {}),
        (aten.as_strided.default, (x, [], [], 5), {}),
        (aten.as_strided.default, (x, [0, 4], [4, 1]), {}),
        (aten.alias.default, (nc,), {}),
        (aten.detach.default, (x,), {}),
        (aten.clone.default, (nc,), {}),
        (aten.clone.default, (make((2, 3, 2, 2), dtype),), {"memory_format": "channels_last"}),
        (aten.split_with_sizes.default, (x, [1, 0, 3], -1), {}),
        (aten.split_with_sizes.default, (e, [0], 0), {}),
        (aten.unfold.default, (x, 2, 2, 1), {}),
        (aten.unfold.default, (nc, 1, 2, 2), {}),
        (aten.unfold.default, (x, -1, 0, 3), {}),
        (aten.unfold.default, (s0, 0, 1, 1), {}),
        (aten.cat.default, ([x, nc], -2), {}),
        (aten.cat.default, ([make((0,), dtype), x, make((0,), dtype)], 0), {}),
        (aten.cat.default, ([make((0,), dtype), make((0,), dtype)],), {}),
        (aten.cat.default, ([e, make((2, 3), dtype)],), {}),
        (aten.flip.default, (x, [0, -1]), {}),
        (aten.flip.default, (nc, []), {}),
        (aten.repeat.default, (m, [2, 1, 3]), {}),
        (aten.repeat.default, (s0, []), {}),
        (aten.repeat.default, (e, [2, 0]), {}),
        (aten.constant_pad_nd.default, (x, [1, -2, 0, 2]), {}),
        (aten.constant_pad_nd.default, (m, [-5, 4]), {}),
        (aten.constant_pad_nd.default, (e, [1, 1, 1, 1], 1), {}),
        (aten.tril.default, (x, 1), {}),
        (aten.tril.default, (nc, -2), {}),
        (aten.triu.default, (m, -1), {}),
        (aten.triu.default, (e, 0), {}),
        (aten.select_scatter.default, (x, make((2, 4), dtype, 5), 1, -1), {}),
        (aten.select_scatter.default, (make((3,), dtype), make((), dtype, 5), 0, 0), {}),
        (aten.slice_scatter.default, (x, make((2, 3, 2), dtype, 5), 2, 1, None, 2), {}),
        (aten.slice_scatter.default, (x, make((2, 3, 0), dtype, 5), 2, 3, 1), {}),
        (aten.slice_scatter.default, (nc, make((2, 3, 4), dtype, 5)), {}),
        (aten.slice_scatter.default, (x, make((1, 3, 4), dtype, 5), 0, -1, 100), {}),
        (aten.diagonal_scatter.default, (x, make((2, 2), dtype, 5), 1, -1, 1), {}),
        (aten.diagonal_scatter.default, (x, make((4, 1), dtype, 5), -1, 0, 1), {}),
        (aten.diagonal_scatter.default, (m, make((0,), dtype, 5), 7), {}),
        (aten.fill.Scalar, (x, 1), {}),
        (aten.fill.Tensor, (nc, make((), dtype, 6)), {}),
        (aten.masked_fill.Scalar, (x, make((4,), fnx.bool, 7), 0), {}),
        (aten.masked_fill.Scalar, (make((3, 1), dtype), make((2, 3, 4), fnx.bool, 7), 1), {}),
        (aten.masked_fill.Tensor, (nc, make((3, 4), fnx.bool, 7), make((), dtype, 8)), {}),
        # non-core ops: their decompositions to core ops must reach prims
        (aten.transpose.int, (x, 0, -1), {}),
        (aten.t.default, (m,), {}),
        (aten.t.default, (make((3,), dtype),), {}),
        (aten.swapaxes.default, (x, 0, 1), {}),
        (aten.swapdims.default, (x, -1, 1), {}),
        (aten.squeeze.default, (make((1, 2, 1), dtype),), {}),
        (aten.narrow.default, (x, 2, -3, 2), {}),
        (aten.split.Tensor, (x, 3, -1), {}),
        (aten.chunk.default, (x, 2, 1), {}),
        (aten.unbind.int, (x, 1), {}),
        (aten.movedim.intlist, (x, [0, 1], [2, 0]), {}),
        (aten.movedim.int, (x, -1, 0), {}),
        (aten.expand_as.default, (make((3, 1), dtype), x), {}),
        (aten.view_as.default, (x, make((4, 6), dtype)), {}),
        (aten.reshape.default, (nc, [-1]), {}),
        (aten.reshape.default, (x, [4, 6]), {}),
        (aten.reshape_as.default, (nc, m.reshape(12, 1).expand(12, 2)), {}),
        (aten.contiguous.default, (nc,), {}),
        (aten.flatten.using_ints, (x, 1), {}),
        (aten.flatten.using_ints, (s0,), {}),
        (aten.unflatten.int, (x, -1, [2, -1]), {}),
        (aten.stack.default, ([x, nc], 1), {}),
        (aten.stack.default, ([s0, s0], -1), {}),
        (aten.atleast_1d.default, (s0,), {}),
        (aten.atleast_2d.default, (make((3,), dtype),), {}),
        (aten.atleast_3d.default, (m,), {}),
        (aten.hstack.default, ([make((3,), dtype), make((2,), dtype)],), {}),
        (aten.vstack.default, ([make((3,), dtype), m[:, :3]],), {}),
        (aten.dstack.default, ([m, m],), {}),
        (aten.roll.default, (x, [1, -5], [0, 2]), {}),
        (aten.roll.default, (nc, [3]), {}),
        (aten.roll.default, (x, [3], [1]), {}),
        (aten.tile.default, (x, [2]), {}),
        (aten.tile.default, (m, [2, 1, 2]), {}),
    ]


SAMPLES = sample_params(per_dtype, DTYPES)


@pytest.mark.parametrize("op,args,kwargs", SAMPLES)
def test_decomposed_matches_eager(op, args, kwargs):
    check(op, *args, **kwargs)


# --------------------------------------------------------------------------- special dtypes

def test_float16_samples():
    x = make((2, 3, 4), fnx.float16)
    check(aten.permute.default, x, [1, 2, 0])
    check(aten.diagonal.default, x, 0, 1, 2)
    check(aten.constant_pad_nd.default, x, [2, 1], 0.5)
    check(aten.cat.default, [x, make((2, 1, 4), fnx.float16)], 1)
    check(aten.masked_fill.Scalar, x, x > 0, -1.5)


def test_view_as_real_and_complex():
    for dtype in (fnx.complex64, fnx.complex128):
        c = make((2, 3), dtype)
        out = check(aten.view_as_real.default, c)
        assert out.dtype is dtype.to_real()
        check(aten.view_as_real.default, make((), dtype))
        check(aten.clone.default, c)
        check(aten.cat.default, [c, make((1, 3), dtype)])
    for dtype in (fnx.float32, fnx.float64):
        out = check(aten.view_as_complex.default, make((2, 3, 2), dtype))
        assert out.dtype is dtype.to_complex()


def test_cat_promotes_across_dtypes():
    # int64 + float32 -> float32; a skipped legacy empty float64 still takes part
    out = check(aten.cat.default, [make((2,), fnx.int64), make((3,), fnx.float32)])
    assert out.dtype is fnx.float32
    out = check(aten.cat.default, [make((2, 2), fnx.int64), make((0,), fnx.float64)])
    assert out.dtype is fnx.float64 and tuple(out.shape) == (2, 2)
    out = check(aten.cat.default, [make((2,), fnx.bool), make((1,), fnx.int32)])
    assert out.dtype is fnx.int32


def test_scalar_arguments_are_cast_like_eager():
    ints = make((2, 3), fnx.int64)
    # a float fill value truncates on an integer tensor, as eager fill does
    assert check(aten.fill.Scalar, ints, 2.7).tolist() == [[2] * 3] * 2
    check(aten.constant_pad_nd.default, ints, [1, 1], 3.9)
    check(aten.masked_fill.Scalar, ints, ints > 0, -1.5)
    check(aten.masked_fill.Tensor, ints, ints > 0, fnx.tensor(7.9))
    check(aten.fill.Tensor, make((2,), fnx.bool), fnx.tensor(0.5))
    check(aten.fill.Scalar, make((2,), fnx.float32), True)


def test_slice_clamping_values():
    x = fnx.arange(10)
    for start, end, step in [(None, None, 1), (-3, None, 1), (2, -2, 3), (-100, 100, 4),
                             (8, 3, 1), (12, 20, 2), (None, -12, 1)]:
        out = check(aten.slice.Tensor, x, 0, start, end, step)
        assert out.tolist() == list(range(10))[slice(start, end, step)]


def test_as_strided_indexes_the_flattened_input():
    x = fnx.arange(12.)
    out = check(aten.as_strided.default, x, [3, 2], [3, 2], 2)
    assert out.tolist() == [[2., 4.], [5., 7.], [8., 10.]]


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("op,args,exc", [
    (aten.view.default, (noncontig((2, 3, 4)), [-1]), RuntimeError),
    (aten.view.default, (make((2, 3)), [4, -1]), RuntimeError),
    (aten.permute.default, (make((2, 3)), [0, 0]), RuntimeError),
    (aten.expand.default, (make((2, 3)), [3, 3]), RuntimeError),
    (aten.select.int, (make((2, 3)), 1, 3), IndexError),
    (aten.select.int, (make(()), 0, 0), IndexError),
    (aten.slice.Tensor, (make((2, 3)), 0, 0, 2, 0), RuntimeError),
    (aten.diagonal.default, (make((2, 3)), 0, 1, -1), RuntimeError),
    (aten.squeeze.dim, (make((2, 3)), 2), IndexError),
    (aten.as_strided.default, (make((4,)), [2], [-1]), RuntimeError),
    (aten.split_with_sizes.default, (make((4,)), [1, 2]), RuntimeError),
    (aten.unfold.default, (make((4,)), 0, 5, 1), RuntimeError),
    (aten.cat.default, ([make(()), make((2,))],), RuntimeError),
    (aten.cat.default, ([make((2, 3)), make((2, 4))],), RuntimeError),
    (aten.flip.default, (make((2, 3)), [0, -2]), RuntimeError),
    (aten.repeat.default, (make((2, 3)), [2]), RuntimeError),
    (aten.constant_pad_nd.default, (make((2, 3)), [1]), RuntimeError),
    (aten.constant_pad_nd.default, (make((2, 3)), [-2, -2]), RuntimeError),
    (aten.tril.default, (make((3,)),), RuntimeError),
    (aten.select_scatter.default, (make((2, 3)), make((3,)), 1, 0), RuntimeError),
    (aten.slice_scatter.default, (make((2, 3)), make((2, 2)), 1), RuntimeError),
    (aten.diagonal_scatter.default, (make((2, 3)), make((3,))), RuntimeError),
    (aten.fill.Tensor, (make((2, 3)), make((1,))), RuntimeError),
    (aten.fill.Scalar, (make((2,), fnx.int64), 2 ** 70), OverflowError),  # as PyTorch 2.13
    (aten.masked_fill.Scalar, (make((2, 3)), make((2, 3), fnx.int64), 1), RuntimeError),
    (aten.view_as_real.default, (make((2,)),), RuntimeError),
    (aten.view_as_complex.default, (make((2, 3)),), RuntimeError),
])
def test_errors_match_eager(op, args, exc):
    check_error(op, *args, exc=exc)


def test_as_strided_past_the_end_raises():
    with pytest.raises(RuntimeError):
        aten.as_strided.default(make((4,)), [3], [2])
    with pytest.raises(RuntimeError, match="out of bounds"):
        run_decomposed(aten.as_strided.default, make((4,)), [3], [2], to="prims")


# --------------------------------------------------------------------------- coverage

# the families this file covers (arrange's namespace also holds the views it imports)
FAMILY_OPS = list({id(op): op for m in (shape, arrange) for op in functional_aten_ops(m)}.values())


def test_every_functional_op_has_a_decomposition():
    missing = [str(op) for op in FAMILY_OPS if op.decomposition is None]
    assert missing == []


def test_every_functional_op_is_sampled():
    sampled = {id(op) for p in SAMPLES for op in [p.values[0]]}
    sampled |= {id(op) for op in (aten.view_as_real.default, aten.view_as_complex.default)}
    missing = [str(op) for op in FAMILY_OPS if id(op) not in sampled]
    assert missing == []


# --------------------------------------------------------------------------- traced graphs

@pytest.mark.parametrize("fn,args", [
    (lambda a: a.transpose(0, 1).reshape(-1), (make((2, 3, 4)),)),
    (lambda a: aten.unfold.default(a, 2, 2, 1), (make((2, 3, 4)),)),
    (lambda a: aten.as_strided.default(a, [2, 2], [1, 3]), (make((2, 3, 4)),)),
    (lambda a: aten.diagonal.default(a, 1, 1, 2), (make((2, 3, 4)),)),
    (lambda a, b: fnx.cat([a, b], 1), (make((2, 3)), make((2, 2), fnx.int64))),
    (lambda a, b: fnx.cat([a, b]), (make((2, 3)), make((0,)))),
    (lambda a: aten.constant_pad_nd.default(a, [1, 2, -1, 0]), (make((2, 3)),)),
    (lambda a: aten.repeat.default(a, [2, 1, 2]), (make((2, 3)),)),
    (lambda a: aten.tril.default(a, 1), (make((3, 3)),)),
    (lambda a, s: aten.diagonal_scatter.default(a, s, 0, 1, 2), (make((2, 3, 4)),
                                                                make((2, 3)))),
    (lambda a, s: aten.slice_scatter.default(a, s, 1, 0, None, 2), (make((2, 4)),
                                                                   make((2, 2)))),
    (lambda a, m: aten.masked_fill.Scalar(a, m, 3), (make((2, 3)), make((3,), fnx.bool))),
    (lambda a: aten.roll.default(a, [1], [0]), (make((3, 2)),)),
])
def test_traced_graph_has_only_prims(fn, args):
    # only prims, eager's shapes and dtypes in the trace, eager's values when run
    assert_graph_decomposes(fn, *args, tols=0)
