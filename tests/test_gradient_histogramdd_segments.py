"""fnx.gradient, fnx.histogramdd and fnx.segment_reduce against NumPy (np.gradient,
np.histogramdd, a loop over segments), their gradients against finite differences, and
compiled against eager."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fnx

RNG = np.random.default_rng(0)


# -- gradient
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_matches_numpy(edge_order):
    a = RNG.standard_normal((5, 6, 4))
    got = fnx.gradient(fnx.tensor(a), edge_order=edge_order)
    want = np.gradient(a, edge_order=edge_order)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w, atol=1e-12)
    got = fnx.gradient(fnx.tensor(a), spacing=[0.5, 2.0], dim=[0, -1], edge_order=edge_order)
    want = np.gradient(a, 0.5, 2.0, axis=(0, 2), edge_order=edge_order)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w, atol=1e-12)
    c = np.sort(RNG.random(6)) * 3
    got = fnx.gradient(fnx.tensor(a), spacing=[fnx.tensor(c)], dim=1, edge_order=edge_order)
    np.testing.assert_allclose(got[0].numpy(), np.gradient(a, c, axis=1,
                                                           edge_order=edge_order),
                               atol=1e-10)
    got = fnx.gradient(fnx.tensor(a), spacing=3.0, dim=2, edge_order=edge_order)
    np.testing.assert_allclose(got[0].numpy(), np.gradient(a, 3.0, axis=2,
                                                           edge_order=edge_order))


def test_gradient_of_integers_is_float_and_errors():
    got = fnx.gradient(fnx.tensor([1, 2, 4]))[0]
    assert got.dtype == fnx.float32
    np.testing.assert_allclose(got.numpy(), [1.0, 1.5, 2.0])
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        fnx.gradient(fnx.tensor([1.0]))
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        fnx.gradient(fnx.tensor([1.0, 2.0]), edge_order=2)
    with pytest.raises(RuntimeError, match="edge_order=1 and edge_order=2"):
        fnx.gradient(fnx.ones(4), edge_order=3)
    with pytest.raises(RuntimeError, match="list of length 3"):
        fnx.gradient(fnx.ones(3, 3), spacing=[1.0, 2.0, 3.0])


def test_gradient_differentiates_and_compiles():
    x = fnx.tensor(RNG.standard_normal((4, 5)), requires_grad=True)
    assert fnx.autograd.gradcheck(lambda t: fnx.gradient(t, edge_order=2), (x,))

    def f(t):
        return fnx.gradient(t, spacing=[fnx.tensor([0.0, 1.0, 3.0, 4.5, 5.0])], dim=1)[0]
    v = fnx.tensor(RNG.standard_normal((3, 5)))
    np.testing.assert_allclose(fnx.compile(f)(v).numpy(), f(v).numpy(), atol=1e-12)


# -- histogramdd
def test_histogramdd_matches_numpy():
    x = RNG.random((200, 3))
    w = RNG.random(200)
    for bins, kw, npkw in [
        (4, {}, {}),
        ([2, 3, 5], {"range": [0.2, 0.8, 0.0, 1.0, 0.1, 0.5]},
         {"range": [(0.2, 0.8), (0.0, 1.0), (0.1, 0.5)]}),
        ([3, 2, 4], {"weight": fnx.tensor(w), "density": True},
         {"weights": w, "density": True}),
    ]:
        got = fnx.histogramdd(fnx.tensor(x), bins, **kw)
        hist, edges = np.histogramdd(x, bins, **npkw)
        np.testing.assert_allclose(got.hist.numpy(), hist, rtol=1e-12)
        for g, e in zip(got.bin_edges, edges, strict=True):
            np.testing.assert_allclose(g.numpy(), e, rtol=1e-12)
    # explicit, uneven edges; points on an inner edge go right, on the last edge stay in
    edges = [np.array([0.0, 0.1, 0.5, 1.0]), np.array([0.0, 0.25, 1.0]),
             np.array([0.2, 0.3])]
    pts = np.concatenate([x, [[0.1, 0.25, 0.3], [1.0, 1.0, 0.2]]])
    got = fnx.histogramdd(fnx.tensor(pts), [fnx.tensor(e) for e in edges])
    np.testing.assert_array_equal(got.hist.numpy(), np.histogramdd(pts, edges)[0])


def test_histogramdd_batched_points_equal_values_and_errors():
    x = fnx.tensor(RNG.random((4, 5, 2)))
    np.testing.assert_array_equal(fnx.histogramdd(x, 3).hist.numpy(),
                                  np.histogramdd(x.numpy().reshape(-1, 2), 3)[0])
    same = fnx.histogramdd(fnx.tensor([[1.0, 1.0], [1.0, 1.0]]), 2)
    np.testing.assert_array_equal(same.hist.numpy(), [[0, 0], [0, 2]])      # widened by 0.5
    np.testing.assert_array_equal(same.bin_edges[0].numpy(), [0.5, 1.0, 1.5])
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        fnx.histogramdd(fnx.ones(5), 3)
    with pytest.raises(RuntimeError, match="size of bins must be equal"):
        fnx.histogramdd(x, [3])
    with pytest.raises(RuntimeError, match="range should have 4 elements"):
        fnx.histogramdd(x, 3, range=[0.0, 1.0])
    with pytest.raises(RuntimeError, match="excluding its innermost dimension"):
        fnx.histogramdd(x, 3, weight=fnx.ones(4, 5, 2, dtype=fnx.float64))
    with pytest.raises(RuntimeError, match="expected 2 sequences of bin edges"):
        fnx.histogramdd(x, [fnx.tensor([0.0, 1.0], dtype=fnx.float64)])


def test_histogramdd_compiles():
    def f(x):
        return fnx.histogramdd(x, [3, 4], range=[0.0, 1.0, 0.0, 1.0]).hist
    x = fnx.tensor(RNG.random((50, 2)))
    np.testing.assert_array_equal(fnx.compile(f)(x).numpy(), f(x).numpy())


# -- segment_reduce
def _np_segments(data, reduce, lengths, initial=None):
    out = []
    start = 0
    for n in lengths:
        seg = data[start:start + n]
        start += n
        vals = list(seg) + ([] if initial is None else [initial])
        if reduce == "mean":
            out.append((seg.sum() + (initial or 0.0)) / n if n else
                       (np.nan if initial is None else initial))
        elif not vals:
            out.append({"sum": 0.0, "prod": 1.0, "max": -np.inf, "min": np.inf}[reduce])
        else:
            out.append({"sum": np.sum, "prod": np.prod, "max": np.max,
                        "min": np.min}[reduce](vals, axis=0))
    return np.array(out)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("initial", [None, 2.5])
def test_segment_reduce_matches_numpy(reduce, initial):
    data = RNG.standard_normal(10)
    lengths = [3, 0, 4, 1, 2]
    got = fnx.segment_reduce(fnx.tensor(data), reduce, lengths=fnx.tensor(lengths),
                             initial=initial)
    np.testing.assert_allclose(got.numpy(), _np_segments(data, reduce, lengths, initial),
                               rtol=1e-12)
    offsets = fnx.tensor(np.concatenate([[0], np.cumsum(lengths)]))
    again = fnx.segment_reduce(fnx.tensor(data), reduce, offsets=offsets, initial=initial)
    np.testing.assert_array_equal(again.numpy(), got.numpy())


def test_segment_reduce_axis_trailing_dims_and_batched_lengths():
    data = RNG.standard_normal((7, 3))
    got = fnx.segment_reduce(fnx.tensor(data), "max", lengths=fnx.tensor([2, 5]))
    np.testing.assert_array_equal(got.numpy(), [data[:2].max(0), data[2:].max(0)])
    rows = RNG.standard_normal((2, 6))
    lengths = [[2, 4], [3, 3]]
    got = fnx.segment_reduce(fnx.tensor(rows), "sum", lengths=fnx.tensor(lengths), axis=1)
    want = [[rows[0, :2].sum(), rows[0, 2:].sum()], [rows[1, :3].sum(), rows[1, 3:].sum()]]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_segment_reduce_gradients():
    x = fnx.tensor(RNG.standard_normal(9), requires_grad=True)
    lengths = fnx.tensor([2, 3, 0, 4])
    for reduce in ("sum", "mean", "prod", "max", "min"):
        assert fnx.autograd.gradcheck(
            lambda t: fnx.segment_reduce(t, reduce, lengths=lengths, initial=0.5), (x,))
    # ties share the gradient; a zero in a product gets the product of the others
    t = fnx.tensor([1.0, 3.0, 3.0, 2.0], requires_grad=True)
    fnx.segment_reduce(t, "max", lengths=fnx.tensor([4])).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), [0.0, 0.5, 0.5, 0.0])
    t = fnx.tensor([1.0, 0.0, 3.0, 2.0], requires_grad=True)
    fnx.segment_reduce(t, "prod", lengths=fnx.tensor([4])).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), [0.0, 6.0, 0.0, 0.0])


def test_segment_reduce_compiles_and_errors():
    def f(d, n):
        return fnx.segment_reduce(d, "mean", lengths=n)
    d, n = fnx.tensor(RNG.standard_normal(6)), fnx.tensor([1, 2, 3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (the lengths checks read values: graph breaks)
        np.testing.assert_allclose(fnx.compile(f)(d, n).numpy(), f(d, n).numpy())
    with pytest.raises(RuntimeError, match="sum to data.size"):
        fnx.segment_reduce(d, "sum", lengths=fnx.tensor([2, 2]))
    with pytest.raises(RuntimeError, match="must be either sum, prod, mean, amax or amin"):
        fnx.segment_reduce(d, "avg", lengths=n)
    with pytest.raises(RuntimeError, match="Either lengths or offsets"):
        fnx.segment_reduce(d, "sum")
    with pytest.raises(RuntimeError, match="negative value"):
        fnx.segment_reduce(d, "sum", lengths=fnx.tensor([-1, 7]))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        fnx.segment_reduce(fnx.tensor([1, 2, 3]), "sum", lengths=fnx.tensor([3]))


@pytest.mark.skipif(not fnx.cuda.is_available(),
                    reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")
def test_cuda_backend_gives_the_cpu_results():
    a = RNG.standard_normal((4, 6))
    for g, w in zip(fnx.gradient(fnx.tensor(a).cuda(), edge_order=2),
                    np.gradient(a, edge_order=2), strict=True):
        assert g.device.type == "cuda"
        np.testing.assert_allclose(g.cpu().numpy(), w, atol=1e-12)
    x = RNG.random((40, 2))
    got = fnx.histogramdd(fnx.tensor(x).cuda(), [3, 2])
    np.testing.assert_array_equal(got.hist.cpu().numpy(), np.histogramdd(x, [3, 2])[0])
    d = RNG.standard_normal(6)
    got = fnx.segment_reduce(fnx.tensor(d).cuda(), "max", lengths=fnx.tensor([2, 4]).cuda())
    np.testing.assert_array_equal(got.cpu().numpy(), [d[:2].max(), d[2:].max()])
