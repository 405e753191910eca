"""The everyday helpers (fnx/api/combine.py) through the public API: argument forms,
methods, PyTorch's errors and warnings, inputs left unchanged on errors, autograd, and
compiled results equal to eager ones.  References are NumPy/SciPy/itertools; the OpInfo
entries (fnx/testing/opinfo/combine.py) check every op across dtypes."""
from __future__ import annotations

import itertools
import re
import warnings

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg

import fnx
from fnx.graph.tracer import DataDependentError

RNG = np.random.default_rng(0)


def _a(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _np(t):
    return t.detach().cpu().numpy()


# --------------------------------------------------------------------------- argument forms

def test_diff_method_and_keywords_match_numpy():
    a = _a(3, 5)
    x = fnx.tensor(a)
    np.testing.assert_allclose(_np(x.diff(n=2, dim=0)), np.diff(a, 2, axis=0), rtol=1e-6)
    pre, app = _a(3, 1), _a(3, 2)
    got = fnx.diff(x, prepend=fnx.tensor(pre), append=fnx.tensor(app))
    np.testing.assert_allclose(_np(got), np.diff(a, prepend=pre, append=app), rtol=1e-6)
    b = np.array([True, False, False, True])
    assert fnx.diff(fnx.tensor(b)).tolist() == np.diff(b).tolist()


def test_nan_to_num_defaults_and_in_place():
    a = np.array([np.nan, np.inf, -np.inf, 1.5], np.float32)
    x = fnx.tensor(a)
    np.testing.assert_array_equal(_np(fnx.nan_to_num(x)), np.nan_to_num(a))
    np.testing.assert_array_equal(_np(x.nan_to_num(1.0, 2.0, -2.0)),
                                  np.nan_to_num(a, nan=1.0, posinf=2.0, neginf=-2.0))
    h = fnx.tensor(a, dtype=fnx.float16)
    assert _np(fnx.nan_to_num(h)).tolist()[1:3] == [65504.0, -65504.0]
    y = x.clone()
    out = y.nan_to_num_(nan=-7.0)
    assert out is y
    np.testing.assert_array_equal(_np(y), np.nan_to_num(a, nan=-7.0))
    assert fnx.nan_to_num_(fnx.tensor([1, 2])).tolist() == [1, 2]


def test_kron_rot90_match_numpy():
    a, b = _a(2, 3), _a(3, 1, 2)
    np.testing.assert_allclose(_np(fnx.kron(fnx.tensor(a), fnx.tensor(b))), np.kron(a, b),
                               rtol=1e-6)
    c = _a(2, 3, 4)
    for k in range(-2, 6):
        assert np.array_equal(_np(fnx.tensor(c).rot90(k, [2, 0])), np.rot90(c, k, (2, 0)))


def test_tensor_split_forms():
    a = np.arange(10)
    x = fnx.tensor(a)
    for arg in (3, [2, 7], (1, -2, 20)):
        got = fnx.tensor_split(x, arg)
        assert isinstance(got, tuple)
        assert [p.tolist() for p in got] == [p.tolist() for p in np.array_split(a, arg)]
    t = fnx.tensor_split(x, fnx.tensor([2, 7]))
    assert [p.tolist() for p in t] == [p.tolist() for p in np.array_split(a, [2, 7])]
    t = x.tensor_split(fnx.tensor(4))
    assert [p.tolist() for p in t] == [p.tolist() for p in np.array_split(a, 4)]
    # pieces are views, as PyTorch's: writing one writes x
    y = fnx.arange(10)
    fnx.tensor_split(y, 4)[1].fill_(-1)
    assert y.tolist() == [0, 1, 2, -1, -1, -1, 6, 7, 8, 9]
    m = np.arange(24).reshape(2, 3, 4)
    xm = fnx.tensor(m)
    for f, g in ((fnx.hsplit, np.hsplit), (fnx.vsplit, np.vsplit), (fnx.dsplit, np.dsplit)):
        for arg in ([1], [1, 2]):
            assert [p.tolist() for p in f(xm, arg)] == [p.tolist() for p in g(m, arg)]
    assert [p.tolist() for p in xm.dsplit(2)] == [p.tolist() for p in np.dsplit(m, 2)]
    assert [p.tolist() for p in fnx.hsplit(x, 5)] == [p.tolist() for p in np.hsplit(a, 5)]


def test_tensor_split_tensor_errors():
    x = fnx.arange(4)
    with pytest.raises(RuntimeError, match="to have dtype of long, but got Float"):
        fnx.tensor_split(x, fnx.tensor([1.0]))
    with pytest.raises(RuntimeError, match="zero-dimensional or one-dimensional tensor, but "
                                           "got a tensor with 2 dims"):
        fnx.tensor_split(x, fnx.tensor([[1]]))


def test_meshgrid_indexing_and_warning():
    a, b, c = np.arange(2), np.arange(3) * 10, np.arange(4) * 100
    ta, tb, tc = fnx.tensor(a), fnx.tensor(b), fnx.tensor(c)
    for indexing in ("ij", "xy"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = fnx.meshgrid(ta, tb, tc, indexing=indexing)
        ref = np.meshgrid(a, b, c, indexing=indexing)
        assert isinstance(got, tuple)
        assert all(np.array_equal(_np(g), r) for g, r in zip(got, ref))
    listed = fnx.meshgrid([ta, tb], indexing="xy")
    assert all(np.array_equal(_np(g), r) for g, r in zip(listed, np.meshgrid(a, b)))
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        got = fnx.meshgrid(ta, tb)
    assert all(np.array_equal(_np(g), r)
               for g, r in zip(got, np.meshgrid(a, b, indexing="ij")))
    with pytest.raises(RuntimeError, match='indexing must be one of "xy" or "ij"'):
        fnx.meshgrid(ta, indexing="yx")
    with pytest.raises(RuntimeError, match="meshgrid expects a non-empty TensorList"):
        fnx.meshgrid(indexing="ij")


def test_cartesian_prod_block_diag_broadcast():
    a, b = np.array([1, 2]), np.array([3, 4, 5])
    got = fnx.cartesian_prod(fnx.tensor(a), fnx.tensor(b))
    assert got.tolist() == [list(p) for p in itertools.product(a.tolist(), b.tolist())]
    assert fnx.cartesian_prod(fnx.tensor(a)).tolist() == a.tolist()
    m, v, s = _a(2, 2), _a(3), np.float64(2.5)
    got = fnx.block_diag(fnx.tensor(m), fnx.tensor(v), fnx.tensor(s))
    assert got.dtype is fnx.float64
    np.testing.assert_allclose(_np(got), scipy.linalg.block_diag(m, v, s), rtol=1e-6)
    empty = fnx.block_diag()
    assert tuple(empty.shape) == (1, 0)
    x, y = fnx.broadcast_tensors(fnx.ones(2, 1), fnx.zeros(3))
    assert tuple(x.shape) == tuple(y.shape) == np.broadcast_shapes((2, 1), (3,))
    assert fnx.broadcast_shapes((2, 1), (1, 3), 3) == fnx.Size(np.broadcast_shapes((2, 1),
                                                                                    (1, 3), 3))
    assert fnx.broadcast_shapes() == fnx.Size([])
    assert fnx.broadcast_tensors() == ()
    with pytest.raises(RuntimeError, match=re.escape("Attempting to broadcast a dimension of "
                                                     "length 4 at -1! Mismatching argument at "
                                                     "index 1 had (4,)")):
        fnx.broadcast_shapes((2, 3), (4,))


def test_repeat_interleave_forms():
    a = np.arange(6).reshape(2, 3)
    x = fnx.tensor(a)
    assert x.repeat_interleave(2).tolist() == np.repeat(a, 2).tolist()
    assert fnx.repeat_interleave(x, 2, dim=1).tolist() == np.repeat(a, 2, axis=1).tolist()
    r = np.array([0, 3])
    assert fnx.repeat_interleave(x, fnx.tensor(r), dim=0).tolist() == \
        np.repeat(a, r, axis=0).tolist()
    assert fnx.repeat_interleave(x, fnx.tensor([2]), dim=1).tolist() == \
        np.repeat(a, 2, axis=1).tolist()
    counts = np.array([2, 0, 1, 3])
    assert fnx.repeat_interleave(fnx.tensor(counts)).tolist() == \
        np.repeat(np.arange(4), counts).tolist()
    with pytest.raises(RuntimeError, match="repeats can not be negative"):
        fnx.repeat_interleave(x, fnx.tensor([1, -1]), dim=0)
    with pytest.raises(RuntimeError, match="Repeats must be non-negative"):
        fnx.repeat_interleave(x, -1)
    with pytest.raises(RuntimeError, match="only accept 1D vector as repeat"):
        fnx.repeat_interleave(fnx.tensor(3))
    with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
        fnx.repeat_interleave(x, fnx.tensor([1.0, 2.0]), dim=0)


def test_triangle_indices_match_numpy():
    for row, col, off in ((4, 4, 0), (3, 5, -1), (5, 2, 1), (2, 3, 7)):
        assert fnx.tril_indices(row, col, off).tolist() == \
            np.stack(np.tril_indices(row, off, col)).tolist()
        assert fnx.triu_indices(row, col, off).tolist() == \
            np.stack(np.triu_indices(row, off, col)).tolist()
    assert fnx.triu_indices(3, 3, dtype=fnx.int32).dtype is fnx.int32
    with pytest.raises(RuntimeError, match="col must be non-negative"):
        fnx.tril_indices(2, -3)


def test_trapezoid_forms():
    y, xs = _a(3, 6), np.cumsum(RNG.uniform(0.1, 1.0, 6))
    ty, tx = fnx.tensor(y), fnx.tensor(xs.astype(np.float32))
    np.testing.assert_allclose(_np(fnx.trapezoid(ty, tx)), np.trapezoid(y, xs), rtol=1e-5)
    np.testing.assert_allclose(_np(fnx.trapezoid(ty, dx=0.5, dim=0)),
                               np.trapezoid(y, dx=0.5, axis=0), rtol=1e-5)
    np.testing.assert_allclose(_np(fnx.cumulative_trapezoid(ty, tx)),
                               scipy.integrate.cumulative_trapezoid(y, xs), rtol=1e-5)
    np.testing.assert_allclose(_np(fnx.cumulative_trapezoid(ty, dx=2.0, dim=0)),
                               scipy.integrate.cumulative_trapezoid(y, dx=2.0, axis=0),
                               rtol=1e-5)
    assert fnx.trapezoid(fnx.tensor([1, 2, 4])).dtype is fnx.float32
    with pytest.raises(TypeError, match="trapezoid"):
        fnx.trapezoid(ty, tx, dx=1.0)


def test_narrow_copy_is_a_copy_and_combinations():
    x = fnx.arange(6.0)
    c = x.narrow_copy(0, 1, 3)
    c.add_(100)
    assert x.tolist() == list(range(6))
    assert c._base is None
    v = [3, 1, 4, 1]
    t = fnx.tensor(v)
    assert fnx.combinations(t, 3).tolist() == [list(p) for p in itertools.combinations(v, 3)]
    assert fnx.combinations(t, 2, with_replacement=True).tolist() == \
        [list(p) for p in itertools.combinations_with_replacement(v, 2)]


# --------------------------------------------------------------------------- errors

def test_errors_leave_inputs_unchanged():
    x = fnx.tensor([[1.0, float("nan")], [3.0, 4.0]])
    before = _np(x).copy()
    for call, exc, match in (
            (lambda: fnx.diff(x, n=-1), RuntimeError, "order must be non-negative"),
            (lambda: fnx.rot90(x, 1, [0, 0]), RuntimeError, "expected rotation dims"),
            (lambda: fnx.hsplit(x, 3), RuntimeError, "not divisible by the split_size 3"),
            (lambda: fnx.block_diag(x[None]), RuntimeError, "2 or fewer dimensions"),
            (lambda: fnx.combinations(x), RuntimeError, "Expect a 1D vector"),
            (lambda: fnx.narrow_copy(x, 0, 1, 5), RuntimeError, "exceeds dimension size"),
            (lambda: fnx.repeat_interleave(x, fnx.tensor([1, 2, 3]), dim=0), RuntimeError,
             "repeats must have the same size")):
        with pytest.raises(exc, match=match):
            call()
        np.testing.assert_array_equal(_np(x), before)


# --------------------------------------------------------------------------- autograd, compile

def test_grad_of_diff_and_kron_by_finite_differences():
    a = RNG.standard_normal(5)
    x = fnx.tensor(a, requires_grad=True)
    w = RNG.standard_normal(3)
    (fnx.diff(x, n=2) * fnx.tensor(w)).sum().backward()
    # d/dx of sum(w * D2 x) is D2^T w
    d2 = np.diff(np.eye(5), n=2, axis=0)
    np.testing.assert_allclose(_np(x.grad), d2.T @ w, rtol=1e-12)
    b = RNG.standard_normal((2, 2))
    y = fnx.tensor(b, requires_grad=True)
    fnx.kron(y, fnx.tensor(np.ones((1, 3)))).sum().backward()
    np.testing.assert_allclose(_np(y.grad), np.full((2, 2), 3.0))


def _same(compiled, eager):
    if isinstance(eager, (tuple, list)):
        assert len(compiled) == len(eager)
        for c, e in zip(compiled, eager):
            _same(c, e)
        return
    assert compiled.dtype is eager.dtype and tuple(compiled.shape) == tuple(eager.shape)
    np.testing.assert_allclose(_np(compiled), _np(eager), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name, fn", [
    ("diff", lambda x: fnx.diff(x, n=2, dim=0, append=x[:1])),
    ("nan_to_num", lambda x: fnx.nan_to_num(x / (x - x), posinf=3.0)),
    ("kron", lambda x: fnx.kron(x, x[:2])),
    ("rot90", lambda x: fnx.rot90(x, 3)),
    ("tensor_split", lambda x: fnx.tensor_split(x, 3, dim=1)),
    ("vsplit", lambda x: fnx.vsplit(x, [1])),
    ("meshgrid", lambda x: fnx.meshgrid(x[0], x[1], indexing="xy")),
    ("cartesian_prod", lambda x: fnx.cartesian_prod(x[0], x[1, :2])),
    ("block_diag", lambda x: fnx.block_diag(x, x[0])),
    ("broadcast_tensors", lambda x: fnx.broadcast_tensors(x, x[:1, :1])),
    ("repeat_interleave", lambda x: fnx.repeat_interleave(x, 2, dim=0)),
    ("repeat_interleave_sized",
     lambda x: fnx.repeat_interleave(x, fnx.tensor([2, 0, 1]), dim=0, output_size=3)),
    ("triu_indices", lambda x: fnx.triu_indices(4, 5, -1) + x.sum().long()),
    ("combinations", lambda x: fnx.combinations(x[0], 3)),
    ("trapezoid", lambda x: fnx.trapezoid(x, x[0].cumsum(0), dim=1)),
    ("cumulative_trapezoid", lambda x: fnx.cumulative_trapezoid(x, dx=0.5, dim=0)),
    ("narrow_copy", lambda x: fnx.narrow_copy(x, 1, 1, 2)),
])
def test_compiled_matches_eager(name, fn):
    x = fnx.tensor(_a(3, 4))
    _same(fnx.compile(fn, fullgraph=True)(x), fn(x))


def test_repeat_interleave_tensor_repeats_need_output_size_to_trace():
    x, r = fnx.tensor([1.0, 2.0, 3.0]), fnx.tensor([1, 0, 2])
    f = fnx.compile(lambda x, r: fnx.repeat_interleave(x, r), fullgraph=True)
    with pytest.raises(DataDependentError, match="depends on data"):
        f(x, r)
    assert fnx.compile(lambda x, r: fnx.repeat_interleave(x, r))(x, r).tolist() == \
        np.repeat([1.0, 2.0, 3.0], [1, 0, 2]).tolist()
