"""Order statistics and ordered scans beyond the OpInfo checks: the public API's named
tuples and methods, where gradients go, compiled vs eager, and cross-checks against
NumPy's own functions (np.median, np.quantile, np.logaddexp.accumulate)."""
import numpy as np
import pytest

import fnx

RNG = np.random.default_rng(0)


def _t(a, **kw):
    return fnx.tensor(np.asarray(a), **kw)


def test_median_against_numpy_for_odd_counts_and_lower_middle_for_even():
    a = RNG.standard_normal((4, 7))
    np.testing.assert_allclose(fnx.median(_t(a), 1).values.numpy(), np.median(a, 1))
    b = RNG.standard_normal((3, 6))
    want = np.sort(b, 1)[:, 2]            # the lower of the two middle values
    got = fnx.median(_t(b), dim=1)
    np.testing.assert_array_equal(got.values.numpy(), want)
    np.testing.assert_array_equal(b[np.arange(3), got.indices.numpy()], want)
    assert type(got).__name__ == "median" and got._fields == ("values", "indices")


def test_median_keepdim_method_and_all_form():
    a = RNG.standard_normal((2, 5, 3))
    r = _t(a).median(1, keepdim=True)
    assert tuple(r.values.shape) == (2, 1, 3) and tuple(r.indices.shape) == (2, 1, 3)
    assert _t(a).median().item() == np.sort(a.ravel())[(a.size - 1) // 2]


def test_nanmedian_ignores_nan():
    a = np.array([[1.0, np.nan, 5.0, 2.0], [np.nan, np.nan, np.nan, np.nan]])
    r = fnx.nanmedian(_t(a), 1)
    assert r.values[0].item() == 2.0 and np.isnan(r.values[1].item())
    assert fnx.nanmedian(_t(a)).item() == 2.0
    assert np.isnan(fnx.median(_t(a)).item())


def test_quantile_matches_numpy_on_finite_data():
    a = RNG.standard_normal((5, 8))
    q = np.array([0.0, 0.1, 0.5, 0.73, 1.0])
    for method in ("linear", "lower", "higher", "midpoint", "nearest"):
        got = fnx.quantile(_t(a), _t(q), dim=1, keepdim=True, interpolation=method)
        np.testing.assert_allclose(got.numpy(), np.quantile(a, q, axis=1, keepdims=True,
                                                            method=method), rtol=1e-12)
        got = fnx.nanquantile(_t(a), 0.3, interpolation=method)
        np.testing.assert_allclose(got.numpy(), np.nanquantile(a, 0.3, method=method))


def test_quantile_rejects_q_out_of_range():
    with pytest.raises(RuntimeError, match=r"quantile\(\) q must be in the range \[0, 1\]"):
        fnx.quantile(fnx.ones(3), -0.1)


def test_mode_kthvalue_named_tuples():
    m = fnx.tensor([[2, 2, 1, 1, 3], [5, 4, 4, 5, 5]]).mode(1)
    assert m.values.tolist() == [1, 5] and m.indices.tolist() == [3, 4]
    k = fnx.kthvalue(fnx.tensor([[3.0, 1.0, 2.0]]), 3, 1, True)
    assert k.values.tolist() == [[3.0]] and k.indices.tolist() == [[0]]


@pytest.mark.parametrize("op,k", [("median", None), ("kthvalue", 2), ("mode", None)])
def test_value_selecting_gradient_goes_to_the_chosen_element(op, k):
    a = np.array([[0.5, 3.0, 1.0, 2.0, 1.0], [4.0, 4.0, -1.0, 0.0, 7.0]])
    x = _t(a, requires_grad=True)
    args = (k, 1) if k is not None else (1,)
    r = getattr(fnx, op)(x, *args)
    r.values.sum().backward()
    want = np.zeros_like(a)
    want[np.arange(2), r.indices.numpy()] = 1.0
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_cummax_cummin_against_numpy_accumulate():
    a = RNG.standard_normal((3, 9))
    np.testing.assert_array_equal(fnx.cummax(_t(a), 1).values.numpy(),
                                  np.maximum.accumulate(a, 1))
    r = _t(a).cummin(0)
    np.testing.assert_array_equal(r.values.numpy(), np.minimum.accumulate(a, 0))
    np.testing.assert_array_equal(np.take_along_axis(a, r.indices.numpy(), 0), r.values.numpy())


def test_gradients_against_finite_differences():
    a = _t(RNG.standard_normal((3, 6)), dtype=fnx.float64, requires_grad=True)
    q = _t([0.21, 0.66], dtype=fnx.float64, requires_grad=True)
    assert fnx.autograd.gradcheck(lambda x: fnx.cummax(x, 1).values, (a,))
    assert fnx.autograd.gradcheck(lambda x: fnx.cummin(x, 0).values, (a,))
    assert fnx.autograd.gradcheck(lambda x: fnx.logcumsumexp(x, 1), (a,))
    assert fnx.autograd.gradcheck(lambda x, q: fnx.quantile(x, q, 1), (a, q))
    assert fnx.autograd.gradcheck(lambda x: fnx.nanmedian(x, 0).values, (a,))


def test_logcumsumexp_is_stable_for_large_spreads():
    a = np.array([-1000.0, 0.0, 1000.0, 999.0, -5.0])
    got = fnx.logcumsumexp(_t(a, dtype=fnx.float64), 0).numpy()
    np.testing.assert_allclose(got, np.logaddexp.accumulate(a), rtol=1e-12)


def test_compiled_matches_eager():
    a = _t(RNG.standard_normal((4, 6)))
    b = _t(RNG.integers(0, 3, (4, 6)))

    def f(x, y):
        return (fnx.median(x, 1).values, fnx.nanmedian(x), fnx.quantile(x, 0.4, dim=0),
                fnx.kthvalue(x, 2, 1).indices, fnx.mode(y, 1).values, fnx.cummax(x, 1).indices,
                fnx.cummin(y, 0).values, fnx.logcumsumexp(x, 1))
    for c, e in zip(fnx.compile(f)(a, b), f(a, b)):
        np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-6, atol=1e-6)


def test_bad_dim_and_complex_are_rejected():
    with pytest.raises(IndexError, match="Dimension out of range"):
        fnx.median(fnx.ones(2, 3), 2)
    with pytest.raises(RuntimeError, match="not implemented for 'ComplexFloat'"):
        fnx.cummax(fnx.ones(3, dtype=fnx.complex64), 0)


def test_long_scans_against_numpy():
    # a log-step scan: a length whose n x n comparison matrix would not fit in memory
    a = RNG.standard_normal(50_000)
    r = fnx.cummax(_t(a), 0)
    np.testing.assert_array_equal(r.values.numpy(), np.maximum.accumulate(a))
    np.testing.assert_array_equal(a[r.indices.numpy()], r.values.numpy())
    np.testing.assert_allclose(fnx.logcumsumexp(_t(a), 0).numpy(), np.logaddexp.accumulate(a),
                               rtol=1e-12)


def test_tensor_q_out_of_range_is_refused_eager_and_compiled():
    x, q = fnx.ones(2, 3), fnx.tensor([0.2, -0.5])
    with pytest.raises(RuntimeError, match=r"quantile\(\) q values must be in the range"):
        fnx.quantile(x, q, 1)
    with pytest.raises(RuntimeError, match=r"nanquantile\(\) q values must be in the range"):
        fnx.compile(lambda x, q: fnx.nanquantile(x, q))(x, q)
