"""Reductions against NumPy: values, result dtypes, dims/keepdim, empty and 0-dim inputs,
NaN rules and PyTorch's errors; meta shapes and decompositions against the kernels."""
import math
import pickle
import warnings

import ml_dtypes
import numpy as np
import pytest
import scipy.special

import fnx
from fnx.dispatch import DispatchKey
from fnx.ops import aten

F16, BF16 = fnx.float16, fnx.bfloat16
ALL = [fnx.bool, fnx.uint8, fnx.int8, fnx.int32, fnx.int64, F16, BF16, fnx.float32,
       fnx.float64, fnx.complex64]
FLOATS = [F16, BF16, fnx.float32, fnx.float64]
# sum/prod/cumsum: bool and integers give int64, floating and complex keep their dtype
SUM_DTYPE = {fnx.bool: fnx.int64, fnx.uint8: fnx.int64, fnx.int8: fnx.int64,
             fnx.int32: fnx.int64, fnx.int64: fnx.int64, F16: F16, BF16: BF16,
             fnx.float32: fnx.float32, fnx.float64: fnx.float64, fnx.complex64: fnx.complex64}
SHAPES_DIMS = [((), None), ((), 0), ((), -1), ((0,), None), ((0,), 0), ((2, 0, 3), 1),
               ((2, 0, 3), (0, 2)), ((3, 4), None), ((3, 4), 0), ((3, 4), -1),
               ((2, 3, 4), (0, 2)), ((2, 3, 4), [-1, -3]), ((2, 3, 4), [])]


def make(shape, dtype, rng, low=-3, high=4):
    """A tensor of ``dtype`` and its float64/complex128 NumPy values."""
    if dtype is fnx.bool:
        a = rng.integers(0, 2, shape).astype(bool)
    elif dtype.is_complex:
        a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    elif dtype.is_floating_point:
        a = rng.uniform(low, high, shape)
    else:
        a = rng.integers(0 if dtype is fnx.uint8 else low, high, shape)
    a = np.asarray(a).astype(dtype.numpy)
    ref = a.astype(np.complex128 if dtype.is_complex else np.float64)
    return fnx.from_numpy(a.copy()), ref


def tol(dtype):
    return {F16: 2e-3, BF16: 2e-2, fnx.float32: 1e-5, fnx.complex64: 1e-5}.get(dtype, 1e-12)


def check(t, ref, dtype, rtol=None, atol=None):
    """``t`` has exactly ``dtype`` and ``ref``'s shape and values (NaN equal to NaN)."""
    assert t.dtype is dtype
    ref = np.asarray(ref)
    assert tuple(t.shape) == ref.shape
    got = np.asarray(t.numpy())
    got = got.astype(np.complex128 if dtype.is_complex else np.float64)
    rtol = tol(dtype) if rtol is None else rtol
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol if atol is None else atol,
                               equal_nan=True)


def np_axes(dim, ndim):
    if dim is None or dim == []:
        return None
    if ndim == 0:
        return ()
    return tuple(dim) if isinstance(dim, (list, tuple)) else dim


# --------------------------------------------------------------------------- sum, mean, prod

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum(dtype, shape, dim, keepdim, rng):
    x, a = make(shape, dtype, rng)
    ref = np.sum(a, axis=np_axes(dim, len(shape)), keepdims=keepdim)
    if dim is None and not keepdim:
        check(fnx.sum(x), ref, SUM_DTYPE[dtype])
    check(fnx.sum(x, dim, keepdim), ref, SUM_DTYPE[dtype])
    check(x.sum(dim=dim, keepdim=keepdim), ref, SUM_DTYPE[dtype])


def test_sum_dtype_argument_and_specific_results():
    assert fnx.sum(fnx.tensor([True, True, False])).item() == 2
    assert fnx.sum(fnx.tensor([True, True])).dtype is fnx.int64
    assert fnx.tensor([200, 100], dtype=fnx.uint8).sum().item() == 300    # no uint8 wrap
    x = fnx.tensor([1, 2, 3])
    r = fnx.sum(x, dtype=fnx.float64)
    assert r.dtype is fnx.float64 and r.item() == 6.0
    r = x.sum(0, dtype=fnx.int8)
    assert r.dtype is fnx.int8 and r.item() == 6
    assert fnx.sum(fnx.zeros(0)).item() == 0.0 and fnx.sum(fnx.zeros(2, 0), 1).tolist() == [0, 0]
    # float16 accumulates in float32: 4096 halves of 1 sum exactly past float16's 2048 step
    r = fnx.ones(4096, dtype=F16).sum()
    assert r.dtype is F16 and r.item() == 4096.0


def test_sum_dim_errors():
    x = fnx.ones(2, 3)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                                         r"of \[-2, 1\], but got 2\)"):
        x.sum(2)
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times"):
        x.sum((1, -1))
    with pytest.raises(IndexError, match="Dimension out of range"):
        fnx.tensor(1.0).sum(1)


@pytest.mark.parametrize("dtype", [F16, BF16, fnx.float32, fnx.float64, fnx.complex64])
@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
def test_mean(dtype, shape, dim, rng):
    x, a = make(shape, dtype, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # NumPy warns on empty means
        ref = np.mean(a, axis=np_axes(dim, len(shape)))
        ref_k = np.mean(a, axis=np_axes(dim, len(shape)), keepdims=True)
    check(fnx.mean(x, dim), ref, dtype)
    check(x.mean(dim, keepdim=True), ref_k, dtype)


def test_mean_dtype_rules():
    with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype. Input "
                                           r"dtype must be either a floating point or complex "
                                           r"dtype. Got: Long"):
        fnx.mean(fnx.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="Got: Bool"):
        fnx.tensor([True]).mean(0)
    with pytest.raises(RuntimeError, match="Optional dtype must be either a floating point or "
                                           "complex dtype. Got: Int"):
        fnx.mean(fnx.tensor([1.0]), dtype=fnx.int32)
    r = fnx.mean(fnx.tensor([1, 2]), dtype=fnx.float64)
    assert r.dtype is fnx.float64 and r.item() == 1.5
    assert math.isnan(fnx.mean(fnx.zeros(0)).item())
    assert fnx.zeros(0, 2).mean(0).dtype is fnx.float32


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,dim", [((), None), ((), 0), ((0,), None), ((0, 2), 0),
                                       ((3, 4), 1), ((2, 3, 2), -2)])
def test_prod(dtype, shape, dim, rng):
    x, a = make(shape, dtype, rng, low=-2, high=3)
    ref = np.prod(a, axis=np_axes(dim, len(shape)))
    check(fnx.prod(x, dim) if dim is not None else fnx.prod(x), ref, SUM_DTYPE[dtype])
    if dim is not None:
        check(x.prod(dim, keepdim=True), np.prod(a, axis=np_axes(dim, len(shape)),
                                                 keepdims=True), SUM_DTYPE[dtype])


def test_prod_specifics():
    assert fnx.prod(fnx.zeros(0)).item() == 1.0
    assert fnx.prod(fnx.tensor([True, False])).dtype is fnx.int64
    assert fnx.prod(fnx.tensor([2, 3]), dtype=fnx.float32).dtype is fnx.float32
    with pytest.raises(TypeError, match="must be int, not tuple"):
        fnx.prod(fnx.ones(2, 2), (0, 1))


# --------------------------------------------------------------------------- amax, max, argmax

MAXABLE = [fnx.bool, fnx.uint8, fnx.int8, fnx.int64, F16, BF16, fnx.float32, fnx.float64]


@pytest.mark.parametrize("dtype", MAXABLE)
@pytest.mark.parametrize("shape,dim", [((), []), ((), 0), ((3, 4), []), ((3, 4), 0),
                                       ((3, 4), -1), ((2, 3, 4), (0, 2)), ((2, 0, 3), 2)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_amax_amin(dtype, shape, dim, keepdim, rng):
    x, a = make(shape, dtype, rng)
    ax = np_axes(dim, len(shape))
    check(fnx.amax(x, dim, keepdim), np.max(a, axis=ax, keepdims=keepdim), dtype)
    check(x.amin(dim, keepdim), np.min(a, axis=ax, keepdims=keepdim), dtype)


@pytest.mark.parametrize("dtype", MAXABLE)
@pytest.mark.parametrize("shape,dim", [((), 0), ((), -1), ((5,), 0), ((3, 4), 1),
                                       ((3, 4), -2), ((2, 3, 4), 1), ((3, 0), 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim(dtype, shape, dim, keepdim, rng):
    x, a = make(shape, dtype, rng, low=-2, high=2)   # small range: many ties
    ax = np_axes(dim, len(shape))
    for fn, npfn, arg in ((fnx.max, np.max, np.argmax), (fnx.min, np.min, np.argmin)):
        r = fn(x, dim, keepdim)
        assert isinstance(r, tuple) and type(r).__name__ == fn.__name__
        values, indices = r
        assert r.values is values and r.indices is indices
        check(values, npfn(a, axis=ax, keepdims=keepdim), dtype)
        ref_idx = arg(a, axis=ax, keepdims=keepdim) if a.ndim else np.zeros((), np.int64)
        check(indices, ref_idx, fnx.int64)     # the first occurrence of a tie


@pytest.mark.parametrize("dtype", MAXABLE)
def test_max_min_full(dtype, rng):
    x, a = make((3, 5), dtype, rng)
    check(fnx.max(x), np.max(a), dtype)
    check(x.min(), np.min(a), dtype)
    check(fnx.tensor(4, dtype=dtype).max(), np.asarray(4 if dtype is not fnx.bool else 1),
          dtype)


def test_max_min_binary_overloads():
    a, b = fnx.tensor([1, 5, 3]), fnx.tensor([4., 2., 3.])
    r = fnx.max(a, b)
    assert r.dtype is fnx.float32 and r.tolist() == [4.0, 5.0, 3.0]      # maximum promotes
    assert a.min(b).tolist() == [1.0, 2.0, 3.0]
    assert fnx.max(a, other=b).tolist() == [4.0, 5.0, 3.0]
    r = fnx.max(fnx.tensor([[1, 9], [8, 2]]), dim=0)
    assert r.values.tolist() == [8, 9] and r.indices.tolist() == [1, 0]


def test_nan_propagates_in_max_like_ops():
    nan = float("nan")
    x = fnx.tensor([[1.0, nan, 3.0], [nan, 0.0, nan], [4.0, 5.0, 6.0]])
    assert math.isnan(fnx.max(x).item()) and math.isnan(fnx.min(x).item())
    assert [math.isnan(v) for v in fnx.amax(x, 1).tolist()] == [True, True, False]
    assert [math.isnan(v) for v in fnx.amin(x, 0).tolist()] == [True, True, True]
    r = fnx.max(x, 1)
    assert r.indices.tolist() == [1, 0, 2]                    # the first NaN wins
    r = fnx.min(x, 1)
    assert r.indices.tolist() == [1, 0, 0]
    assert math.isnan(r.values.tolist()[1])
    assert fnx.argmax(x).item() == 1 and fnx.argmin(x, 0).tolist() == [1, 0, 1]
    h = fnx.tensor([1.0, nan], dtype=BF16)
    assert math.isnan(h.max().item()) and h.argmin().item() == 1


def test_max_like_on_empty_raises():
    e = fnx.zeros(0, 3)
    for name in ("amax", "amin"):
        with pytest.raises(IndexError, match=rf"{name}\(\): Expected reduction dim 0 to have "
                                             r"non-zero size\."):
            getattr(fnx, name)(e, 0)
        with pytest.raises(RuntimeError, match=rf"{name}\(\): Expected reduction dim to be "
                                               r"specified for input.numel\(\) == 0"):
            getattr(fnx, name)(e)
        assert getattr(fnx, name)(e, 1).shape == (0,)
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified"):
        fnx.max(e)
    with pytest.raises(RuntimeError, match=r"min\(\): Expected reduction dim to be specified"):
        e.min()
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero"):
        fnx.max(e, 0)
    with pytest.raises(IndexError, match=r"min\(\): Expected reduction dim 0 to have non-zero"):
        fnx.min(e, -2)
    with pytest.raises(RuntimeError, match=r"argmax\(\): Expected reduction dim to be "):
        fnx.argmax(e)
    with pytest.raises(IndexError, match=r"argmin\(\): Expected reduction dim 0 to have"):
        fnx.argmin(e, 0)
    assert fnx.max(e, 1).values.shape == (0,) and fnx.argmax(e, 1).shape == (0,)


def test_max_errors():
    with pytest.raises(IndexError, match="Dimension out of range"):
        fnx.max(fnx.ones(2, 2), 2)
    with pytest.raises(RuntimeError, match="does not support complex input"):
        fnx.amax(fnx.tensor([1j]))
    with pytest.raises(TypeError, match="keepdim"):
        fnx.max(fnx.ones(2), keepdim=True)


@pytest.mark.parametrize("dtype", [fnx.uint8, fnx.int8, fnx.int64, F16, BF16, fnx.float32,
                                   fnx.float64])
@pytest.mark.parametrize("shape,dim", [((), None), ((), 0), ((7,), None), ((3, 4), None),
                                       ((3, 4), 1), ((3, 4), -2), ((2, 3, 4), 2)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_argmin(dtype, shape, dim, keepdim, rng):
    x, a = make(shape, dtype, rng, low=-2, high=2)
    for fn, npfn in ((fnx.argmax, np.argmax), (fnx.argmin, np.argmin)):
        r = fn(x, dim, keepdim)
        if dim is None:
            ref = np.asarray(npfn(a))
            if keepdim:
                ref = ref.reshape((1,) * a.ndim)      # every dim kept with size 1
        elif a.ndim == 0:
            ref = np.zeros((), np.int64)
        else:
            ref = npfn(a, axis=dim, keepdims=keepdim)
        check(r, ref, fnx.int64)


def test_argmax_bool_not_implemented():
    with pytest.raises(RuntimeError, match="\"argmax_cpu\" not implemented for 'Bool'"):
        fnx.tensor([True, False]).argmax()


def test_aminmax():
    r = fnx.aminmax(fnx.tensor([[3, 1], [2, 8]]), dim=1, keepdim=True)
    assert type(r).__name__ == "aminmax"
    assert r.min.tolist() == [[1], [2]] and r.max.tolist() == [[3], [8]]
    r = fnx.tensor([[3, 1], [2, 8]]).aminmax()
    assert (r.min.item(), r.max.item()) == (1, 8) and r.min.dtype is fnx.int64
    with pytest.raises(RuntimeError, match=r"aminmax\(\): Expected reduction dim to be"):
        fnx.aminmax(fnx.zeros(0))


def test_return_types_repr_and_pickle():
    r = fnx.max(fnx.tensor([1, 3]), 0)
    assert repr(r).startswith("fnx.return_types.max(\nvalues=")
    r2 = pickle.loads(pickle.dumps(fnx.return_types.max((1, 2))))
    assert type(r2) is fnx.return_types.max and r2.indices == 2


# --------------------------------------------------------------------------- any, all

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,dim", [((), None), ((), 0), ((0,), None), ((0, 2), 0),
                                       ((3, 4), None), ((3, 4), 1), ((2, 3, 4), (0, -1))])
@pytest.mark.parametrize("keepdim", [False, True])
def test_any_all(dtype, shape, dim, keepdim, rng):
    x, a = make(shape, dtype, rng, low=0, high=2)          # plenty of zeros
    expected = fnx.uint8 if dtype is fnx.uint8 else fnx.bool
    ax = np_axes(dim, len(shape))
    check(fnx.any(x, dim, keepdim), np.any(a, axis=ax, keepdims=keepdim), expected)
    check(x.all(dim, keepdim), np.all(a, axis=ax, keepdims=keepdim), expected)


def test_any_all_specifics():
    assert fnx.any(fnx.zeros(0)).item() is False and fnx.all(fnx.zeros(0)).item() is True
    assert fnx.all(fnx.tensor([float("nan"), 1.0])).item() is True       # NaN is nonzero
    r = fnx.all(fnx.tensor([1, 2], dtype=fnx.uint8))
    assert r.dtype is fnx.uint8 and r.item() == 1
    assert fnx.any(fnx.tensor([[0, 1], [0, 0]]), dim=[0, 1]).item() is True
    assert fnx.all(fnx.ones(2, 3), keepdim=True).shape == (1, 1)


# --------------------------------------------------------------------------- var, std

@pytest.mark.parametrize("dtype", [F16, BF16, fnx.float32, fnx.float64])
@pytest.mark.parametrize("shape,dim", [((5,), None), ((3, 4), 1), ((3, 4), (0, 1)),
                                       ((2, 3, 4), [-1, 0]), ((), None)])
@pytest.mark.parametrize("correction", [0, 1, 2, 0.5])
def test_var_std(dtype, shape, dim, correction, rng):
    x, a = make(shape, dtype, rng)
    ax = np_axes(dim, len(shape))
    n = a.size if ax is None else np.prod([a.shape[d] for d in np.atleast_1d(ax)]) \
        if a.ndim else 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m2 = np.sum((a - np.mean(a, axis=ax, keepdims=True)) ** 2, axis=ax, keepdims=True)
        ref = m2 / max(0, n - correction)
        v = fnx.var(x, dim, keepdim=True, correction=correction)
        s = x.std(dim, correction=correction, keepdim=True)
        vm = fnx.var_mean(x, dim, correction=correction, keepdim=True)
        sm = fnx.std_mean(x, dim, correction=correction, keepdim=True)
    check(v, ref, dtype)
    check(s, np.sqrt(ref), dtype)
    check(vm[0], ref, dtype)
    check(vm[1], np.mean(a, axis=ax, keepdims=True), dtype)
    check(sm[0], np.sqrt(ref), dtype)
    assert isinstance(vm, tuple) and len(sm) == 2


def test_var_signatures_and_degenerate_cases():
    x = fnx.tensor([[1., 2., 4.], [3., 3., 3.]])
    a = np.array([[1., 2., 4.], [3., 3., 3.]])
    check(fnx.var(x), np.var(a, ddof=1), fnx.float32)
    check(fnx.var(x, 1, False), np.var(a, axis=1), fnx.float32)      # (dim, unbiased)
    check(fnx.var(x, False), np.var(a), fnx.float32)                  # (unbiased)
    check(x.std(1, True, True), np.std(a, axis=1, ddof=1, keepdims=True), fnx.float32)
    check(fnx.std(x, dim=0, unbiased=False), np.std(a, axis=0), fnx.float32)
    check(aten.var.dim(x, [1], False), np.var(a, axis=1), fnx.float32)
    check(aten.std.dim(x, [1]), np.std(a, axis=1, ddof=1), fnx.float32)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        r = fnx.var(fnx.tensor([5.0]))
    assert math.isnan(r.item())
    with pytest.warns(UserWarning):
        r = fnx.var(fnx.tensor([1.0, 2.0]), correction=3)       # m2 > 0 over 0: inf
    assert r.item() == math.inf
    with pytest.warns(UserWarning):
        assert math.isnan(fnx.std(fnx.zeros(0)).item())


def test_var_dtypes():
    with pytest.raises(RuntimeError, match="std and var only support floating point and "
                                           "complex dtypes"):
        fnx.var(fnx.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="std and var only support"):
        fnx.std(fnx.tensor([True]))
    z = np.array([1 + 2j, 3 - 1j, -2j], np.complex64)
    v = fnx.var(fnx.from_numpy(z))
    assert v.dtype is fnx.float32                    # complex variance is real
    np.testing.assert_allclose(v.item(), np.var(z.astype(np.complex128), ddof=1), rtol=1e-6)
    v, m = fnx.var_mean(fnx.from_numpy(z))
    assert v.dtype is fnx.float32 and m.dtype is fnx.complex64
    with pytest.raises(TypeError, match="either 'unbiased' or 'correction'"):
        fnx.var(fnx.ones(2), 0, True, correction=1)


# --------------------------------------------------------------------------- logsumexp

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", [((5,), 0), ((3, 4), 1), ((3, 4), (0, 1)),
                                       ((2, 3, 4), [-1]), ((), 0), ((2, 3), [])])
@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp(dtype, shape, dim, keepdim, rng):
    x, a = make(shape, dtype, rng, low=-20, high=20)
    ax = np_axes(dim, len(shape))
    ref = scipy.special.logsumexp(a, axis=ax, keepdims=keepdim) if a.ndim else a
    check(fnx.logsumexp(x, dim, keepdim), ref, dtype, rtol=tol(dtype) * 5)


def test_logsumexp_specials():
    inf = math.inf
    assert fnx.logsumexp(fnx.tensor([-inf, -inf]), 0).item() == -inf
    assert fnx.logsumexp(fnx.tensor([inf, 1.0]), 0).item() == inf
    assert fnx.logsumexp(fnx.tensor([1000.0, 1000.0]), 0).item() == pytest.approx(
        1000 + math.log(2))
    r = fnx.logsumexp(fnx.tensor([1, 2]), 0)
    assert r.dtype is fnx.float32 and r.item() == pytest.approx(math.log(math.e + math.e ** 2))
    r = fnx.logsumexp(fnx.zeros(2, 0), 1)
    assert r.tolist() == [-inf, -inf]
    with pytest.raises(IndexError, match="Dimension out of range"):
        fnx.logsumexp(fnx.ones(2), 1)


# --------------------------------------------------------------------------- cumsum, cumprod

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,dim", [((), 0), ((), -1), ((0,), 0), ((6,), 0), ((3, 4), 1),
                                       ((3, 4), -2), ((2, 3, 2), 1)])
def test_cumsum_cumprod(dtype, shape, dim, rng):
    x, a = make(shape, dtype, rng, low=-2, high=3)
    ax = dim if a.ndim else None
    check(fnx.cumsum(x, dim), np.cumsum(a, axis=ax).reshape(shape), SUM_DTYPE[dtype])
    check(x.cumprod(dim=dim), np.cumprod(a, axis=ax).reshape(shape), SUM_DTYPE[dtype])


def test_cumsum_dtype_argument_and_errors():
    r = fnx.cumsum(fnx.tensor([1, 2, 3]), 0, dtype=fnx.float32)
    assert r.dtype is fnx.float32 and r.tolist() == [1.0, 3.0, 6.0]
    assert fnx.cumsum(fnx.tensor([True, True]), 0).tolist() == [1, 2]
    r = fnx.ones(3000, dtype=F16).cumsum(0)
    assert r.dtype is F16 and r.tolist()[-1] == 3000.0      # accumulated in float32
    with pytest.raises(IndexError, match="Dimension out of range"):
        fnx.cumsum(fnx.ones(2, 2), 2)


# --------------------------------------------------------------------------- count, norm

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,dim", [((), None), ((0, 3), 0), ((3, 4), None), ((3, 4), 1),
                                       ((2, 3, 4), (0, -1))])
def test_count_nonzero(dtype, shape, dim, rng):
    x, a = make(shape, dtype, rng, low=0, high=2)
    check(fnx.count_nonzero(x, dim), np.count_nonzero(a, axis=np_axes(dim, len(shape))),
          fnx.int64)
    check(x.count_nonzero(dim), np.count_nonzero(a, axis=np_axes(dim, len(shape))), fnx.int64)


@pytest.mark.parametrize("dtype", [F16, BF16, fnx.float32, fnx.float64, fnx.complex64])
@pytest.mark.parametrize("p", [2, 1, math.inf, -math.inf, 0, 3, 0.5, "fro", None])
@pytest.mark.parametrize("shape,dim", [((5,), None), ((3, 4), 1), ((3, 4), (0, 1)),
                                       ((2, 3, 4), -2), ((), None)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_norm(dtype, p, shape, dim, keepdim, rng):
    x, a = make(shape, dtype, rng)
    ax = np_axes(dim, len(shape))
    mag = np.abs(a)
    q = 2 if p in ("fro", None) else p
    if q == math.inf:
        ref = np.max(mag, axis=ax, keepdims=keepdim)
    elif q == -math.inf:
        ref = np.min(mag, axis=ax, keepdims=keepdim)
    elif q == 0:
        ref = np.sum(mag != 0, axis=ax, keepdims=keepdim).astype(np.float64)
    else:
        ref = np.sum(mag ** q, axis=ax, keepdims=keepdim) ** (1 / q)
    r = fnx.norm(x, p, dim, keepdim) if p is not None else x.norm(dim=dim, keepdim=keepdim)
    check(r, ref, dtype.to_real(), rtol=tol(dtype) * 2)


def test_norm_specifics():
    assert fnx.norm(fnx.tensor([3., 4.])).item() == 5.0
    assert fnx.norm(fnx.zeros(0)).item() == 0.0
    r = fnx.norm(fnx.tensor([3., 4.], dtype=F16), dtype=fnx.float64)
    assert r.dtype is fnx.float64 and r.item() == 5.0
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or "
                                           "complex tensor as input. Got Long"):
        fnx.norm(fnx.tensor([3, 4]))
    with pytest.raises(RuntimeError, match="cannot compute the inf norm on an empty tensor"):
        fnx.norm(fnx.zeros(0), math.inf)
    # the nuclear norm: the sum of the singular values (of [[1, 1], [1, 1]]: 2 and 0)
    assert fnx.norm(fnx.ones(2, 2), "nuc").item() == pytest.approx(2.0)
    assert fnx.norm(fnx.ones(3, 2, 2), "nuc", dim=(1, 2)).tolist() == pytest.approx([2.0] * 3)
    r = aten.linalg_vector_norm.default(fnx.tensor([[3., 4.]]), 2, [1], True)
    assert r.shape == (1, 1) and r.item() == 5.0


# --------------------------------------------------------------------------- dispatch levels

def _meta(x):
    return aten._to_copy.default(x, device=fnx.device("meta"))


@pytest.mark.parametrize("call", [
    lambda x: aten.sum.dim_IntList(x, [0], True), lambda x: aten.sum.default(x),
    lambda x: aten.mean.dim(x, [-1]), lambda x: aten.amax.default(x, [0, 2]),
    lambda x: aten.max.dim(x, 1), lambda x: aten.argmin.default(x, None, True),
    lambda x: aten.any.dims(x, [1]), lambda x: aten.all.default(x),
    lambda x: aten.var.correction(x, [0], correction=0), lambda x: aten.cumsum.default(x, 1),
    lambda x: aten.prod.dim_int(x, 2, dtype=fnx.float64), lambda x: aten.logsumexp.default(x, [1]),
    lambda x: aten.linalg_vector_norm.default(x, 1, [0, 1]),
    lambda x: aten.std_mean.correction(x, None, keepdim=True),
    lambda x: aten.count_nonzero.default(x, 0),
])
def test_meta_matches_cpu(call, rng):
    x, _ = make((2, 3, 4), fnx.float32, rng)
    real, meta = call(x), call(_meta(x))
    real = real if isinstance(real, tuple) else (real,)
    meta = meta if isinstance(meta, tuple) else (meta,)
    for r, m in zip(real, meta):
        assert m.device.type == "meta" and m.shape == r.shape and m.dtype is r.dtype


def test_meta_raises_pytorch_errors():
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        aten.mean.default(_meta(fnx.tensor([1, 2])))
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        aten.max.dim(_meta(fnx.zeros(0, 2)), 0)


@pytest.mark.parametrize("op,args", [
    (aten.sum.default, ()), (aten.max.default, ()), (aten.min.default, ()),
    (aten.all.default, ()), (aten.all.dim, (1, True)), (aten.all.dims, ([0, 1],)),
])
def test_decompositions_agree_with_kernels(op, args, rng):
    for dtype in (fnx.float32, fnx.int64, fnx.uint8, fnx.bool):
        x, _ = make((3, 4), dtype, rng, low=0, high=3)
        k, d = op(x, *args), op.decomposition(x, *args)
        assert d.dtype is k.dtype and d.shape == k.shape
        np.testing.assert_array_equal(d.numpy(), k.numpy())


def test_op_levels():
    for op in (aten.sum.dim_IntList, aten.mean.default, aten.amax.default, aten.max.dim,
               aten.argmax.default, aten.any.dims, aten.var.correction, aten.cumsum.default):
        assert "core" in op.tags and op.has_kernel_for(DispatchKey.CPU)
    for op in (aten.std.correction, aten.logsumexp.default, aten.norm.ScalarOpt_dim,
               aten.count_nonzero.dim_IntList, aten.var_mean.correction):
        assert "core" not in op.tags and op.decomposition is not None
        assert DispatchKey.CPU not in op.kernels       # runs as its decomposition
    assert str(aten.max.dim.schema) == ("max.dim(Tensor self, int dim, bool keepdim=False) -> "
                                        "(Tensor values, Tensor indices)")


def test_bfloat16_data_is_ml_dtypes():
    x = fnx.tensor([1.5, 2.5], dtype=BF16)
    assert x.numpy().dtype == ml_dtypes.bfloat16 and x.sum().dtype is BF16
