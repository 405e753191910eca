"""index_add/copy/fill/reduce, take, put, searchsorted, bucketize, histc, bincount and unique
beyond the OpInfo samples: in-place failures write nothing, gradients against hand-derived
NumPy values, data-dependent ops refuse tracing as ``nonzero`` does, and the details of
PyTorch's semantics (negative indices, NaN in unique, scalar forms, int32 indices)."""
from __future__ import annotations

import numpy as np
import pytest

import fnx
from fnx.graph.tracer import DataDependentError

DEVICES = ["cpu"] + (["cuda"] if fnx.cuda.is_available() else [])
T = fnx.tensor


def _np(t):
    return t.detach().cpu().numpy()


BAD_INPLACE = [
    ("index_add_", lambda x, d: x.index_add_(0, T([0, 3], device=d), T([1., 2.], device=d)),
     RuntimeError, "index 3 is out of bounds for dimension 0 with size 3"),
    ("index_copy_", lambda x, d: x.index_copy_(0, T([0, 3], device=d), T([1., 2.], device=d)),
     IndexError, "index_copy_(): index 3 is out of bounds"),
    ("index_fill_", lambda x, d: x.index_fill_(0, T([0, -4], device=d), 7.0),
     IndexError, "index -4 is out of bounds for dimension 0 with size 3"),
    ("index_reduce_", lambda x, d: x.index_reduce_(0, T([1, 3], device=d),
                                                   T([1., 2.], device=d), "amax"),
     IndexError, "index out of range in self"),
    ("put_", lambda x, d: x.put_(T([0, 3], device=d), T([1., 2.], device=d)),
     IndexError, "tried to access index 3 on a tensor of 3 elements"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", BAD_INPLACE, ids=[c[0] for c in BAD_INPLACE])
def test_failed_inplace_op_leaves_self_unchanged(case, device):
    _, fn, exc, message = case
    x = T([5., 6., 7.], device=device)
    with pytest.raises(exc, match=message.replace("(", r"\(").replace(")", r"\)")):
        fn(x, device)
    np.testing.assert_array_equal(_np(x), [5., 6., 7.])


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_ops_write_and_return_self(device):
    x = fnx.zeros(2, 3, device=device)
    assert x.index_add_(1, T([2, 2], device=device), fnx.ones(2, 2, device=device),
                        alpha=3) is x
    x.index_fill_(0, T(-1, device=device), T(4., device=device))
    x.put_(T([0], device=device), T([9.], device=device), accumulate=True)
    np.testing.assert_array_equal(_np(x), [[9., 0., 6.], [4., 4., 4.]])


def test_index_add_and_put_gradients():
    src = np.array([[1., 2.], [3., 4.], [5., 6.]])
    s = T(src, requires_grad=True)
    x = fnx.zeros(4, 2, dtype=fnx.float64, requires_grad=True)
    w = np.arange(8.).reshape(4, 2)
    out = fnx.index_add(x, 0, T([3, 0, 3]), s, alpha=-2)
    (out * T(w)).sum().backward()
    np.testing.assert_array_equal(_np(x.grad), w)                  # self passes through
    np.testing.assert_array_equal(_np(s.grad), -2 * w[[3, 0, 3]])  # rows read at index
    # put without accumulate: the overwritten positions lose self's gradient
    a = fnx.ones(5, dtype=fnx.float64, requires_grad=True)
    v = T([2., 3.], dtype=fnx.float64, requires_grad=True)
    g = np.array([1., 10., 100., 1000., 10000.])
    (fnx.put(a, T([4, 1]), v) * T(g)).sum().backward()
    np.testing.assert_array_equal(_np(a.grad), [1., 0., 100., 1000., 0.])
    np.testing.assert_array_equal(_np(v.grad), [10000., 10.])


def test_take_gradient_adds_repeated_reads():
    x = fnx.zeros(2, 3, dtype=fnx.float64, requires_grad=True)
    idx = np.array([5, -1, 0, 2, 5])
    fnx.take(x, T(idx)).sum().backward()
    expected = np.bincount(idx % 6, minlength=6).reshape(2, 3)
    np.testing.assert_array_equal(_np(x.grad), expected)


def test_index_copy_and_fill_gradients():
    x = fnx.ones(3, 2, dtype=fnx.float64, requires_grad=True)
    s = fnx.ones(1, 2, dtype=fnx.float64, requires_grad=True)
    fnx.index_copy(x, 0, T([1]), s).sum().backward()
    np.testing.assert_array_equal(_np(x.grad), [[1., 1.], [0., 0.], [1., 1.]])
    np.testing.assert_array_equal(_np(s.grad), [[1., 1.]])
    v = T(2., dtype=fnx.float64, requires_grad=True)
    y = fnx.ones(3, 2, dtype=fnx.float64, requires_grad=True)
    fnx.index_fill(y, 1, T([0]), v).sum().backward()
    np.testing.assert_array_equal(_np(y.grad), [[0., 1.]] * 3)
    assert v.grad.item() == 3.0                  # the value fills three elements


@pytest.mark.parametrize("fn", [lambda a: fnx.bincount(a), lambda a: fnx.unique(a),
                                lambda a: fnx.unique_consecutive(a)],
                         ids=["bincount", "unique", "unique_consecutive"])
def test_data_dependent_ops_refuse_a_full_graph_like_nonzero(fn):
    with pytest.raises(DataDependentError, match="depends on"):
        fnx.compile(fn, fullgraph=True)(T([1, 2, 2]))
    with pytest.raises(DataDependentError):
        fnx.compile(lambda a: fnx.nonzero(a), fullgraph=True)(T([1, 2, 2]))


@pytest.mark.parametrize("device", DEVICES)
def test_bincount_against_numpy(device):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 9, 40)
    w = rng.standard_normal(40).astype(np.float32)
    out = fnx.bincount(T(a, device=device), T(w, device=device), minlength=12)
    assert out.dtype is fnx.float32 and out.device.type == device
    np.testing.assert_allclose(_np(out), np.bincount(a, w, minlength=12), rtol=1e-5)
    with pytest.raises(RuntimeError, match="non-negative integral"):
        fnx.bincount(T([1, -1], device=device))


def test_unique_keeps_nans_apart_and_orders_slices():
    v, c = fnx.unique(T([np.nan, 1., np.nan, 1.]), return_counts=True)
    ref_v, ref_c = np.unique([np.nan, 1., np.nan, 1.], return_counts=True, equal_nan=False)
    np.testing.assert_array_equal(_np(v), ref_v)
    np.testing.assert_array_equal(_np(c), ref_c)
    a = np.array([[2, 1], [0, 5], [2, 1]])
    v, inv = fnx.unique(T(a), dim=0, return_inverse=True)
    ref_v, ref_inv = np.unique(a, axis=0, return_inverse=True)
    np.testing.assert_array_equal(_np(v), ref_v)
    np.testing.assert_array_equal(_np(inv), ref_inv.reshape(-1))
    assert T(a).unique().tolist() == sorted(set(a.reshape(-1).tolist()))


def test_searchsorted_scalar_forms_and_int32():
    b = T([1., 2., 2., 4.])
    assert fnx.searchsorted(b, 2.0).item() == int(np.searchsorted(b.numpy(), 2.0))
    assert fnx.searchsorted(b, 2.0, right=True).item() == 3
    out = fnx.bucketize(T([[0., 2.], [5., 4.]]), b, out_int32=True, right=True)
    assert out.dtype is fnx.int32
    np.testing.assert_array_equal(_np(out), np.searchsorted(b.numpy(), [[0., 2.], [5., 4.]],
                                                            side="right"))
    assert fnx.bucketize(3, T([1, 3, 5])).item() == 1


def test_histc_uses_the_data_range_when_min_equals_max():
    x = np.array([0.5, 1.5, 2.5, 2.5, 4.0])
    counts, _ = np.histogram(x, bins=5, range=(x.min(), x.max()))
    np.testing.assert_array_equal(_np(fnx.histc(T(x), bins=5)), counts)
    np.testing.assert_array_equal(_np(T(x).histc(2, 1, 2)), np.histogram(x, 2, (1, 2))[0])


@pytest.mark.parametrize("device", DEVICES)
def test_histc_refuses_a_nan_data_range_when_compiled_too(device):
    x = T([1.0, float("nan")], device=device)
    for f in (lambda a: fnx.histc(a, 3), fnx.compile(lambda a: fnx.histc(a, 3))):
        with pytest.raises(RuntimeError, match="torch.histc: range of the data"):
            f(x)


def test_nonzero_as_tuple_matches_numpy():
    a = np.array([[0, 3, 0], [4, 0, 5]])
    got = fnx.nonzero(T(a), as_tuple=True)
    for g, r in zip(got, np.nonzero(a)):
        np.testing.assert_array_equal(_np(g), r)


@pytest.mark.parametrize("device", DEVICES)
def test_int32_indices_where_pytorch_takes_them(device):
    a = np.arange(12.).reshape(3, 4)
    i32 = T([[2, 0, 1, 1]], dtype=fnx.int32, device=device)
    x = T(a, device=device)
    np.testing.assert_array_equal(_np(x.gather(0, i32)), a[[2, 0, 1, 1], [0, 1, 2, 3]][None])
    out = fnx.zeros(3, 4, device=device).scatter_add(0, i32, fnx.ones(1, 4, device=device))
    ref = np.zeros((3, 4))
    ref[[2, 0, 1, 1], [0, 1, 2, 3]] += 1
    np.testing.assert_array_equal(_np(out), ref)
    y = fnx.zeros(3, device=device).index_add(0, T([2, 2], dtype=fnx.int32, device=device),
                                               T([1., 2.], device=device))
    np.testing.assert_array_equal(_np(y), [0., 0., 3.])
    with pytest.raises(RuntimeError, match="Expected a long tensor for index"):
        fnx.take(x, T([0], dtype=fnx.int32, device=device))     # take wants int64
