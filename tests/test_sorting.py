"""Sorting against references: sort/argsort/msort/topk values, int64 indices, result
dtypes, dims, NaN placement, stability (descending too), 0-dim/empty inputs, errors,
and meta shapes."""
import math

import ml_dtypes
import numpy as np
import pytest

import fnx
from fnx.ops import aten

F16, BF16 = fnx.float16, fnx.bfloat16
DTYPES = [fnx.bool, fnx.uint8, fnx.int8, fnx.int16, fnx.int32, fnx.int64, F16, BF16,
          fnx.float32, fnx.float64]
NP = {fnx.bool: np.bool_, fnx.uint8: np.uint8, fnx.int8: np.int8, fnx.int16: np.int16,
      fnx.int32: np.int32, fnx.int64: np.int64, F16: np.float16, BF16: ml_dtypes.bfloat16,
      fnx.float32: np.float32, fnx.float64: np.float64}


def _row_order(row, descending):
    """Stable order of one 1-D row, NaN largest, written with Python's sorted()."""
    vals = [float(v) for v in row]

    def key(i):
        v = vals[i]
        if math.isnan(v):
            return (1, 0.0)
        return (0, -v if descending else v)
    order = sorted(range(len(vals)), key=key)
    if descending:      # NaN first when descending; sorted() is stable among equal keys
        nan = [i for i in order if math.isnan(vals[i])]
        order = nan + [i for i in order if not math.isnan(vals[i])]
    return order


def ref_argsort(a, dim, descending):
    a = np.moveaxis(a, dim, -1)
    flat = a.reshape(-1, a.shape[-1]) if a.shape[-1] else a.reshape(-1, 0)
    out = np.array([_row_order(r, descending) for r in flat], dtype=np.int64)
    return np.moveaxis(out.reshape(a.shape), -1, dim)


def assert_same(got, want):
    """Equal arrays, NaN equal to NaN (bfloat16 compared as float64, which NumPy can)."""
    if want.dtype == ml_dtypes.bfloat16:
        got, want = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_array_equal(got, want)


def _data(dtype, shape, rng, dups=True):
    """Small-range values (many ties) with NaNs for floating dtypes."""
    if dtype is fnx.bool:
        return rng.integers(0, 2, shape).astype(bool)
    a = rng.integers(0, 5 if dups else 1000, shape).astype(NP[dtype])
    if dtype.is_floating_point and a.size:
        a.reshape(-1)[rng.integers(0, a.size, max(1, a.size // 5))] = np.nan
    return a


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((7,), -1), ((3, 6), 0), ((3, 6), 1),
                                       ((2, 3, 5), -2), ((4, 0), 0), ((0, 3), -1)])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_against_reference(dtype, shape, dim, descending, rng):
    a = _data(dtype, shape, rng)
    r = fnx.sort(fnx.from_numpy(a.copy()), dim=dim, descending=descending)
    assert isinstance(r, fnx.return_types.sort)
    assert r.values.dtype is dtype and r.indices.dtype is fnx.int64
    idx = ref_argsort(a, dim, descending)
    np.testing.assert_array_equal(r.indices.numpy(), idx)
    assert_same(r.values.numpy(), np.take_along_axis(a, idx, axis=dim))
    s = fnx.sort(fnx.from_numpy(a.copy()), dim=dim, descending=descending, stable=True)
    np.testing.assert_array_equal(s.indices.numpy(), idx)
    ai = fnx.argsort(fnx.from_numpy(a.copy()), dim, descending)
    assert ai.dtype is fnx.int64
    np.testing.assert_array_equal(ai.numpy(), idx)


def test_sort_nan_and_specific_results():
    nan = float("nan")
    x = fnx.tensor([2.0, nan, -1.0, nan, 2.0, -math.inf, math.inf], dtype=fnx.float32)
    up = x.sort()
    assert up.indices.tolist() == [5, 2, 0, 4, 6, 1, 3]
    assert up.values.tolist()[:5] == [-math.inf, -1.0, 2.0, 2.0, math.inf]
    assert all(math.isnan(v) for v in up.values.tolist()[5:])
    down = x.sort(descending=True)
    assert down.indices.tolist() == [1, 3, 6, 0, 4, 2, 5]      # NaN first, ties in order
    assert down.values.tolist()[2:] == [math.inf, 2.0, 2.0, -1.0, -math.inf]
    b = fnx.tensor([True, False, True, False]).sort(descending=True)
    assert b.values.dtype is fnx.bool and b.values.tolist() == [True, True, False, False]
    assert b.indices.tolist() == [0, 2, 1, 3]
    u = fnx.tensor([0, 255, 7], dtype=fnx.uint8).sort(descending=True)
    assert u.values.dtype is fnx.uint8 and u.values.tolist() == [255, 7, 0]


def test_sort_values_and_indices_agree_and_input_untouched():
    x = fnx.tensor([[3, 1, 2], [9, 8, 7]])
    v, i = fnx.sort(x, dim=1)
    assert v.tolist() == [[1, 2, 3], [7, 8, 9]] and i.tolist() == [[1, 2, 0], [2, 1, 0]]
    assert x.tolist() == [[3, 1, 2], [9, 8, 7]]
    v.add_(100)
    assert x.tolist() == [[3, 1, 2], [9, 8, 7]]             # a new tensor, not a view


def test_sort_0dim():
    for dim in (0, -1):
        r = fnx.sort(fnx.tensor(2.5), dim=dim)
        assert r.values.shape == () and r.values.item() == 2.5
        assert r.indices.shape == () and r.indices.item() == 0 and r.indices.dtype is fnx.int64
    assert fnx.argsort(fnx.tensor(7)).item() == 0
    assert fnx.msort(fnx.tensor(3)).item() == 3


def test_msort(rng):
    a = rng.normal(size=(5, 3)).astype(np.float32)
    r = fnx.msort(fnx.from_numpy(a.copy()))
    assert r.dtype is fnx.float32
    np.testing.assert_array_equal(r.numpy(), np.sort(a, axis=0))
    np.testing.assert_array_equal(fnx.from_numpy(a.copy()).msort().numpy(), np.sort(a, axis=0))


@pytest.mark.parametrize("dtype", [fnx.uint8, fnx.int32, fnx.int64, F16, BF16, fnx.float32,
                                   fnx.float64])
@pytest.mark.parametrize("shape,dim", [((9,), 0), ((4, 6), 1), ((4, 6), -2), ((2, 3, 5), 1)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_distinct_values(dtype, shape, dim, largest, rng):
    a = rng.permutation(np.prod(shape)).reshape(shape).astype(NP[dtype])    # no ties
    k = min(3, shape[dim])
    r = fnx.topk(fnx.from_numpy(a.copy()), k, dim=dim, largest=largest)
    assert isinstance(r, fnx.return_types.topk)
    assert r.values.dtype is dtype and r.indices.dtype is fnx.int64
    order = np.argsort(a.astype(np.float64), axis=dim)
    if largest:
        order = np.flip(order, dim)
    idx = np.take(order, np.arange(k), axis=dim)
    np.testing.assert_array_equal(r.indices.numpy(), idx)
    assert_same(r.values.numpy(), np.take_along_axis(a, idx, axis=dim))


@pytest.mark.parametrize("largest", [True, False])
def test_topk_ties_and_nan_values(largest, rng):
    a = _data(fnx.float64, (5, 8), rng)
    r = fnx.from_numpy(a.copy()).topk(4, dim=1, largest=largest)
    # ties may pick any indices: check values, and that indices point at those values
    want = np.take_along_axis(a, ref_argsort(a, 1, largest), 1)[:, :4]
    np.testing.assert_array_equal(r.values.numpy(), want)
    np.testing.assert_array_equal(np.take_along_axis(a, r.indices.numpy(), 1), want)
    nan = float("nan")
    t = fnx.tensor([1.0, nan, 3.0]).topk(2)
    assert math.isnan(t.values.tolist()[0]) and t.values.tolist()[1] == 3.0
    assert t.indices.tolist() == [1, 2]
    assert fnx.tensor([1.0, nan, 3.0]).topk(2, largest=False).values.tolist() == [1.0, 3.0]


def test_topk_edge_cases():
    x = fnx.tensor([[4, 1, 3]])
    r = x.topk(0)
    assert r.values.shape == (1, 0) and r.indices.shape == (1, 0)
    assert r.values.dtype is fnx.int64
    r = x.topk(3, sorted=False)
    assert sorted(r.values.tolist()[0]) == [1, 3, 4]
    np.testing.assert_array_equal(np.take_along_axis(x.numpy(), r.indices.numpy(), 1),
                                  r.values.numpy())
    r = fnx.topk(fnx.tensor(5.0), 1)
    assert r.values.shape == () and r.values.item() == 5.0 and r.indices.item() == 0
    r = fnx.topk(fnx.tensor(5.0), 0)
    assert r.values.shape == () and r.indices.dtype is fnx.int64
    r = fnx.topk(fnx.empty(0, 3), 2, dim=1)
    assert r.values.shape == (0, 2) and r.indices.shape == (0, 2)


def test_errors():
    x = fnx.tensor([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                                         r"of \[-2, 1\], but got 2\)"):
        fnx.sort(x, dim=2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        fnx.argsort(x, dim=-3, stable=True)
    with pytest.raises(IndexError, match="Dimension out of range"):
        fnx.topk(x, 1, dim=5)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        fnx.topk(x, 3)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        fnx.topk(x, -1)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        fnx.topk(fnx.tensor(1.0), 2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        fnx.sort(fnx.tensor(1.0), dim=1)
    with pytest.raises(RuntimeError, match="not implemented for 'ComplexFloat'"):
        fnx.sort(fnx.tensor([1 + 1j, 2j]))
    with pytest.raises(RuntimeError, match="not implemented for 'ComplexFloat'"):
        fnx.topk(fnx.tensor([1 + 1j, 2j]), 1)
    with pytest.raises(TypeError):
        fnx.sort(x, 0, False, True)     # stable is keyword-only, as in PyTorch


def test_aten_overloads_and_schemas():
    x = fnx.tensor([3, 1, 3, 2])
    assert "core" in aten.sort.default.tags and "core" in aten.topk.default.tags
    assert "core" not in aten.argsort.default.tags
    v, i = aten.sort.default(x, 0, True)
    assert v.tolist() == [3, 3, 2, 1] and i.tolist() == [0, 2, 3, 1]
    v, i = aten.sort.stable(x, stable=None, descending=True)
    assert i.tolist() == [0, 2, 3, 1]
    assert aten.argsort.stable(x, stable=True).tolist() == [1, 3, 0, 2]
    assert aten.argsort.default(x, descending=True).tolist() == [0, 2, 3, 1]
    assert aten.msort.default(x).tolist() == [1, 2, 3, 3]
    v, i = aten.topk.default(x, 2, largest=False)
    assert v.tolist() == [1, 2] and i.tolist() == [1, 3]


@pytest.mark.parametrize("fn", [
    lambda t: tuple(fnx.sort(t, dim=0)), lambda t: tuple(fnx.sort(t, descending=True)),
    lambda t: (fnx.argsort(t, 1, stable=True),), lambda t: (fnx.msort(t),),
    lambda t: tuple(fnx.topk(t, 2, dim=0)), lambda t: tuple(fnx.topk(t, 0))])
def test_meta_matches_cpu(fn):
    cpu = fn(fnx.ones(3, 4, dtype=fnx.int16))
    meta = fn(fnx.empty(3, 4, dtype=fnx.int16, device="meta"))
    assert len(cpu) == len(meta)
    for c, m in zip(cpu, meta):
        assert m.device == fnx.device("meta")
        assert tuple(c.shape) == tuple(m.shape) and c.dtype is m.dtype
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        fnx.topk(fnx.empty(3, 4, device="meta"), 5)
