"""Factories, conversions and random ops decomposed to prims.

Factories and conversions must match their eager kernels exactly (dtype, shape, values).
Random ops decompose to the key-based prims with keys from ``fnx.random.next_key``, so
their numbers differ from the eager kernels': they are tested by dtype, shape, range,
distribution (mean/variance bounds with a fixed seed) and reproducibility under
``fnx.manual_seed``.  (The eager RNG prims run jax.random, which compiles once per shape
and dtype: the samples below reuse a few shapes, [SN] and [6], to keep this file fast.)
"""
import math
from functools import partial

import numpy as np
import pytest

import fnx
from fnx.graph.decompose import run_decomposed
from fnx.testing.decomp import assert_decomposes, assert_graph_decomposes, assert_ran_only

aten = fnx.ops.aten
RNG_PRIMS = {"random_bits", "uniform", "normal"}


def decomposed(op, *args, **kwargs):
    """Decomposed to prims (only prims may run): the result and the names of the ops."""
    out, ran = run_decomposed(op, *args, **kwargs)
    assert_ran_only(ran)
    return out, {op.name for op in ran}


# eager and decomposed agree exactly (``values=False``: dtype, shape and device only); where
# eager raises, the decomposition must raise the same: the exception is returned
check = partial(assert_decomposes, tols=0, allow_error=True)


# ---------------------------------------------------------------------------- factories

@pytest.mark.parametrize("fill,dtype", [
    (2, None), (2.5, None), (True, None), (1 + 2j, None), (-1, fnx.uint8), (3, fnx.float16),
    (2.7, fnx.int32), (1, fnx.bool), (0.1, fnx.float64), (math.inf, fnx.float32),
])
def test_full(fill, dtype):
    out = check(aten.full.default, [2, 3], fill, dtype=dtype)
    assert not isinstance(out, Exception)
    check(aten.full.default, [0, 4], fill, dtype=dtype)
    check(aten.full.default, [], fill, dtype=dtype)
    check(aten.full_like.default, fnx.ones(3, 1, dtype=fnx.int8), fill, dtype=dtype)


def test_full_dtype_inference_and_errors():
    assert check(aten.full.default, [2], 7).dtype is fnx.int64
    assert check(aten.full.default, [2], False).dtype is fnx.bool
    assert check(aten.full_like.default, fnx.ones(2, dtype=fnx.int16), 3.9).dtype is fnx.int16
    e = check(aten.full.default, [2], 300, dtype=fnx.int8)
    assert isinstance(e, RuntimeError) and "overflow" in str(e)
    assert isinstance(check(aten.full.default, [-1], 0), RuntimeError)


@pytest.mark.parametrize("op,args", [
    (aten.zeros.default, ([2, 3],)), (aten.ones.default, ([4],)),
    (aten.zeros_like.default, (fnx.ones(2, dtype=fnx.int32),)),
    (aten.ones_like.default, (fnx.ones(0, 2),)),
    (aten.new_zeros.default, (fnx.ones(1, dtype=fnx.float64), [3])),
    (aten.new_ones.default, (fnx.ones(1, dtype=fnx.bool), [2, 2])),
    (aten.new_full.default, (fnx.ones(1, dtype=fnx.int8), [2], 5)),
], ids=["zeros", "ones", "zeros_like", "ones_like", "new_zeros", "new_ones", "new_full"])
def test_filled_factories(op, args):
    check(op, *args)
    check(op, *args, dtype=fnx.float16)


@pytest.mark.parametrize("op,args", [
    (aten.empty.memory_format, ([2, 3],)), (aten.empty.memory_format, ([0],)),
    (aten.empty_strided.default, ([2, 3], [1, 2])),
    (aten.empty_like.default, (fnx.ones(3, dtype=fnx.int64),)),
    (aten.new_empty.default, (fnx.ones(1, dtype=fnx.bool), [2])),
    (aten.new_empty_strided.default, (fnx.ones(1), [2, 2], [2, 1])),
], ids=["empty", "empty-0", "empty_strided", "empty_like", "new_empty", "new_empty_strided"])
def test_empty_factories_shape_and_dtype(op, args):
    check(op, *args, values=False)
    check(op, *args, dtype=fnx.int16, values=False)


@pytest.mark.parametrize("args,dtype", [
    ((0, 5, 1), None), ((1, 10, 3), None), ((10, -3, -2), None), ((0, 5, 0.5), None),
    ((0.1, 1.0, 0.3), None), ((0.1, 1.0, 0.3), fnx.float64), ((1, 10, 3), fnx.float16),
    ((0, 5, 1.5), fnx.int64), ((-2.5, 3.7, 1), fnx.int32), ((3, 3, 1), None),
    ((0, 1, 0.1), fnx.float32), ((-1, 1e6, 12345.5), fnx.float64),
])
def test_arange(args, dtype):
    check(aten.arange.start_step, *args, dtype=dtype)
    check(aten.arange.start, *args[:2], dtype=dtype)
    check(aten.arange.default, args[1], dtype=dtype)


def test_arange_errors():
    assert isinstance(check(aten.arange.start_step, 0, 5, 0), RuntimeError)
    assert isinstance(check(aten.arange.start_step, 0, 5, -1), RuntimeError)
    assert isinstance(check(aten.arange.start_step, 0, 5, 1, dtype=fnx.bool), RuntimeError)


@pytest.mark.parametrize("start,end", [(0, 1), (-3, 7), (2.5, -1.25), (1, 1)])
@pytest.mark.parametrize("steps", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("dtype", [None, fnx.float64, fnx.float16, fnx.int64, fnx.complex64])
def test_linspace(start, end, steps, dtype):
    check(aten.linspace.default, start, end, steps, dtype=dtype)


@pytest.mark.parametrize("base", [10.0, 2.0, 0.5])
@pytest.mark.parametrize("dtype", [None, fnx.float64, fnx.int64, fnx.float16])
def test_logspace(base, dtype):
    check(aten.logspace.default, -2, 3, 6, base, dtype=dtype)
    check(aten.logspace.default, 0.5, 0.5, 1, base, dtype=dtype)


def test_linspace_complex_and_errors():
    check(aten.linspace.default, 0, 1 + 2j, 5)
    assert isinstance(check(aten.linspace.default, 0, 1, -1), RuntimeError)


@pytest.mark.parametrize("n,m", [(3, None), (0, None), (2, 4), (4, 0)])
@pytest.mark.parametrize("dtype", [None, fnx.int64, fnx.bool])
def test_eye(n, m, dtype):
    if m is None:
        check(aten.eye.default, n, dtype=dtype)
    else:
        check(aten.eye.m, n, m, dtype=dtype)


# ---------------------------------------------------------------------------- conversions

@pytest.mark.parametrize("value,dtype", [
    (2.5, None), (3, None), (True, None), (1 - 1j, None), (2.7, fnx.int64), (-2.7, fnx.int8),
    (300, fnx.int8), (-1, fnx.uint8), (0.1, fnx.float16), (2, fnx.bool), (0.0, fnx.bool),
    (7, fnx.complex64),
])
def test_scalar_tensor(value, dtype):
    out = check(aten.scalar_tensor.default, value, dtype=dtype)
    assert not isinstance(out, Exception)
    assert tuple(out.shape) == ()


X = fnx.tensor([[1.75, -2.5, 0.0], [-0.0, 3.25, 100.5]])


SOURCES = {"float": X, "non-contiguous": X.t(), "int": fnx.tensor([[1, -2, 0], [7, 255, -128]]),
           "bool": fnx.tensor([True, False]), "complex": fnx.tensor([1 + 2j, -3j])}
TARGETS = [None, fnx.float32, fnx.float64, fnx.float16, fnx.int64, fnx.int8, fnx.uint8,
           fnx.bool, fnx.complex128]
# complex -> real drops the imaginary part with a NumPy warning eagerly: tested once below
TO_COPY_CASES = [(s, d) for s in SOURCES for d in TARGETS
                 if s != "complex" or d is None or d.is_complex or d is fnx.bool]


@pytest.mark.parametrize("src,dtype", TO_COPY_CASES, ids=[f"{s}-{d}" for s, d in TO_COPY_CASES])
def test_to_copy(src, dtype):
    src = SOURCES[src]
    if src.dtype.is_floating_point and dtype in (fnx.int8, fnx.uint8) or \
            src.dtype is fnx.int64 and dtype is fnx.float16:
        # out-of-range float -> int casts are implementation defined (PyTorch too)
        src = fnx.tensor([[1.75, -2.5, 0.0]]) if dtype is fnx.int8 else fnx.tensor([[1.75]])
    out = check(aten._to_copy.default, src, dtype=dtype)
    actual, _ = decomposed(aten._to_copy.default, src, dtype=dtype)
    actual.numpy()[...] = 0         # a copy: the source is untouched
    assert out.tolist() == src.to(out.dtype).tolist()


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_complex_to_real_drops_the_imaginary_part():
    out = check(aten._to_copy.default, SOURCES["complex"], dtype=fnx.float32)
    assert out.tolist() == [1.0, 0.0]
    assert check(aten.scalar_tensor.default, 1.5 + 2j, dtype=fnx.float64).item() == 1.5


def test_to_copy_device_and_copy():
    out, _ = decomposed(aten._to_copy.default, X, device="cpu", dtype=fnx.int32)
    assert out.tolist() == [[1, -2, 0], [0, 3, 100]]
    check(aten.copy.default, fnx.zeros(2, 3, dtype=fnx.int64), fnx.tensor([1.5, -2.5, 7.0]))
    check(aten.copy.default, fnx.zeros(2, 2), fnx.tensor(3))
    check(aten.copy.default, fnx.zeros(2, dtype=fnx.bool), fnx.tensor([0.0, 0.5]))
    assert isinstance(check(aten.copy.default, fnx.zeros(2), fnx.ones(3)), RuntimeError)


# ---------------------------------------------------------------------------- random

def test_next_key():
    fnx.manual_seed(5)
    a, b = fnx.random.next_key(), fnx.random.next_key()
    fnx.manual_seed(5)
    assert fnx.random.next_key().tolist() == a.tolist()
    assert a.dtype is fnx.int64 and tuple(a.shape) == (2,) and a.tolist() != b.tolist()
    assert all(0 <= w < 2 ** 32 for w in a.tolist() + b.tolist())
    g = fnx.Generator().manual_seed(5)
    assert fnx.random.next_key(generator=g).tolist() == a.tolist()
    state = fnx.random.get_rng_state()
    fnx.random.next_key(generator=g)
    assert fnx.random.get_rng_state().tolist() == state.tolist()    # only g advanced


SN = 24000


def _stats(t):
    a = t.numpy().astype(np.float64)
    return a.mean(), a.var()


@pytest.mark.parametrize("dtype", [fnx.float32, fnx.float64, fnx.float16, fnx.bfloat16])
def test_rand(dtype):
    fnx.manual_seed(0)
    out, ran = decomposed(aten.rand.default, [SN], dtype=dtype)
    assert out.dtype is dtype and tuple(out.shape) == (SN,) and "uniform" in ran
    a = out.numpy().astype(np.float64)
    assert a.min() >= 0 and a.max() < 1
    mean, var = _stats(out)
    assert abs(mean - 0.5) < 0.01 and abs(var - 1 / 12) < 0.005


@pytest.mark.parametrize("dtype", [fnx.float32, fnx.float64, fnx.float16])
def test_randn(dtype):
    fnx.manual_seed(0)
    out, ran = decomposed(aten.randn.default, [SN], dtype=dtype)
    assert out.dtype is dtype and "normal" in ran
    mean, var = _stats(out)
    assert abs(mean) < 0.03 and abs(var - 1) < 0.04


def test_complex_samples():
    fnx.manual_seed(0)
    z, _ = decomposed(aten.randn.default, [SN], dtype=fnx.complex64)
    assert z.dtype is fnx.complex64
    a = z.numpy()
    assert abs(a.real.var() - 0.5) < 0.03 and abs(a.imag.var() - 0.5) < 0.03
    u, _ = decomposed(aten.rand.default, [SN], dtype=fnx.complex128)
    a = u.numpy()
    assert u.dtype is fnx.complex128 and 0 <= a.real.min() and a.imag.max() < 1
    assert abs(np.corrcoef(a.real, a.imag)[0, 1]) < 0.05       # independent parts


def test_generator_overloads_and_reproducibility():
    g = fnx.Generator().manual_seed(7)
    a, _ = decomposed(aten.rand.generator, [6], generator=g)
    b, _ = decomposed(aten.randn.generator, [6], generator=g)
    g.manual_seed(7)
    assert decomposed(aten.rand.generator, [6], generator=g)[0].tolist() == a.tolist()
    assert decomposed(aten.randn.generator, [6], generator=g)[0].tolist() == b.tolist()
    for op, args in ((aten.rand.default, ([6],)), (aten.randint.low, (0, 100, [6])),
                     (aten.randperm.default, (6,)), (aten.normal.float_float, (1., 2., [6])),
                     (aten.bernoulli.p, (fnx.ones(6), 0.5)),
                     (aten.multinomial.default, (fnx.ones(6), 3))):
        fnx.manual_seed(11)
        first = decomposed(op, *args)[0].tolist()
        fnx.manual_seed(11)
        assert decomposed(op, *args)[0].tolist() == first, op
        assert decomposed(op, *args)[0].tolist() != first or op is aten.bernoulli.p, op


@pytest.mark.parametrize("op,args,low,high", [
    (aten.randint.default, (7, [SN]), 0, 7),
    (aten.randint.low, (-3, 4, [SN]), -3, 4),
    (aten.randint.generator, (5, [SN]), 0, 5),
    (aten.randint.low_generator, (10, 13, [SN]), 10, 13),
])
@pytest.mark.parametrize("dtype", [None, fnx.int8, fnx.float32])
def test_randint(op, args, low, high, dtype):
    fnx.manual_seed(1)
    kw = {"generator": fnx.Generator().manual_seed(3)} if "generator" in op.name + \
        op.overload_name else {}
    out, _ = decomposed(op, *args, dtype=dtype, **kw)
    assert out.dtype is (dtype or fnx.int64)
    a = out.numpy().astype(np.int64)
    assert a.min() == low and a.max() == high - 1
    counts = np.bincount(a - low)
    assert counts.min() > SN / (high - low) * 0.85       # roughly uniform


def test_randint_large_range_and_errors():
    out, _ = decomposed(aten.randint.low, -2 ** 40, 2 ** 40, [SN])
    a = out.numpy()
    assert a.min() >= -2 ** 40 and a.max() < 2 ** 40 and a.std() > 2 ** 38
    with pytest.raises(RuntimeError, match="from"):
        run_decomposed(aten.randint.low, 5, 5, [2])
    with pytest.raises(RuntimeError, match="out of bounds"):
        run_decomposed(aten.randint.default, 300, [2], dtype=fnx.int8)


@pytest.mark.parametrize("n", [0, 6, SN])
@pytest.mark.parametrize("dtype", [None, fnx.int32, fnx.float32])
def test_randperm(n, dtype):
    out, ran = decomposed(aten.randperm.default, n, dtype=dtype)
    assert out.dtype is (dtype or fnx.int64) and tuple(out.shape) == (n,)
    assert sorted(out.tolist()) == list(range(n))
    assert "random_bits" in ran and "sort" in ran


def test_randperm_is_shuffled():
    fnx.manual_seed(2)
    perm = decomposed(aten.randperm.generator, SN, generator=None)[0].numpy()
    assert abs(np.corrcoef(perm, np.arange(SN))[0, 1]) < 0.05
    assert (perm == np.arange(SN)).sum() < 10          # about one fixed point expected
    # each quarter of the positions gets about a quarter of each quarter of the values
    counts = np.histogram2d(np.arange(SN), perm, bins=4)[0]
    np.testing.assert_allclose(counts / (SN / 16), 1, atol=0.1)


def test_bernoulli():
    fnx.manual_seed(3)
    p = fnx.tensor(np.tile([0.0, 0.2, 0.8, 1.0], SN // 4).tolist())
    out, ran = decomposed(aten.bernoulli.default, p)
    assert out.dtype is fnx.float32 and "uniform" in ran
    means = out.numpy().reshape(-1, 4).mean(0)
    np.testing.assert_allclose(means, [0, 0.2, 0.8, 1], atol=0.03)
    assert means[0] == 0 and means[3] == 1
    out, _ = decomposed(aten.bernoulli.p, fnx.zeros(SN, dtype=fnx.float64), 0.3)
    assert out.dtype is fnx.float64 and abs(out.numpy().mean() - 0.3) < 0.02
    out, _ = decomposed(aten.bernoulli.p, fnx.zeros(6, dtype=fnx.int64), 0.5)
    assert out.dtype is fnx.int64 and set(out.tolist()) <= {0, 1}
    out, _ = decomposed(aten.bernoulli.Tensor, fnx.zeros(SN, dtype=fnx.float16),
                        fnx.tensor(np.tile([0.25, 0.75], SN // 2).tolist()))
    assert out.dtype is fnx.float16
    np.testing.assert_allclose(out.numpy().astype(np.float64).reshape(-1, 2).mean(0),
                               [0.25, 0.75], atol=0.03)
    with pytest.raises(RuntimeError, match="p to be in"):
        run_decomposed(aten.bernoulli.p, fnx.zeros(2), 1.5)


def test_normal_overloads():
    fnx.manual_seed(4)
    means = fnx.tensor(np.tile([-5.0, 0.0, 10.0], SN // 3).tolist())
    out, _ = decomposed(aten.normal.Tensor_float, means, 3.0)
    a = out.numpy().reshape(-1, 3)
    np.testing.assert_allclose(a.mean(0), [-5, 0, 10], atol=0.15)
    np.testing.assert_allclose(a.std(0), [3, 3, 3], rtol=0.05)
    out, _ = decomposed(aten.normal.Tensor_Tensor, fnx.tensor([-5.0, 0.0, 10.0]),
                        fnx.tensor([[0.5], [2.0]]).double())
    assert out.dtype is fnx.float64 and tuple(out.shape) == (2, 3)
    out, _ = decomposed(aten.normal.float_Tensor, 2.0,
                        fnx.tensor(np.tile([0.0, 1.0], SN // 2).tolist()))
    a = out.numpy().reshape(-1, 2)
    assert (a[:, 0] == 2).all() and abs(a[:, 1].std() - 1) < 0.05
    out, _ = decomposed(aten.normal.float_float, -1.0, 0.5, [SN], dtype=fnx.float16)
    assert out.dtype is fnx.float16
    mean_, var = _stats(out)
    assert abs(mean_ + 1) < 0.02 and abs(var - 0.25) < 0.02
    with pytest.raises(RuntimeError, match="std >= 0"):
        run_decomposed(aten.normal.float_float, 0.0, -1.0, [2])


def test_like_samplers():
    x = fnx.ones(6, dtype=fnx.float64)
    for op, args in ((aten.rand_like.default, ()), (aten.randn_like.default, ()),
                     (aten.randint_like.default, (5,)),
                     (aten.randint_like.low_dtype, (-2, 2))):
        out, ran = decomposed(op, x, *args)
        assert out.dtype is fnx.float64 and tuple(out.shape) == (6,)
        assert ran & RNG_PRIMS
    out, _ = decomposed(aten.randint_like.default, x, 5, dtype=fnx.int16)
    assert out.dtype is fnx.int16 and 0 <= min(out.numpy().ravel()) and out.numpy().max() < 5


def test_multinomial():
    fnx.manual_seed(6)
    p = fnx.tensor([1.0, 0.0, 3.0, 4.0])
    out, _ = decomposed(aten.multinomial.default, p, SN, True)
    assert out.dtype is fnx.int64 and tuple(out.shape) == (SN,)
    freq = np.bincount(out.numpy(), minlength=4) / SN
    np.testing.assert_allclose(freq, [0.125, 0, 0.375, 0.5], atol=0.015)
    rows = p.expand(SN // 4, 4).contiguous()
    out, _ = decomposed(aten.multinomial.default, rows, 3)
    a = out.numpy()
    assert a.shape == (SN // 4, 3)
    assert all(len(set(r)) == 3 and 1 not in r for r in a.tolist())    # distinct, p > 0
    first = np.bincount(a[:, 0], minlength=4) / len(a)
    np.testing.assert_allclose(first, [0.125, 0, 0.375, 0.5], atol=0.03)
    out, _ = decomposed(aten.multinomial.default, fnx.ones(1, 6, dtype=fnx.float16), 6)
    assert sorted(out.numpy()[0].tolist()) == [0, 1, 2, 3, 4, 5]
    with pytest.raises(RuntimeError, match="without replacement"):
        run_decomposed(aten.multinomial.default, p, 5)


# ---------------------------------------------------------------------------- graphs

@pytest.mark.parametrize("fn", [
    lambda x: fnx.arange(6).float() + fnx.linspace(0, 1, 6) + fnx.full((6,), 2.0) + x,
    lambda x: x.to(fnx.int32) + fnx.eye(6, dtype=fnx.int32)[0],
    lambda x: fnx.rand(6) * x + fnx.randn(6) + fnx.randperm(6),
    lambda x: fnx.ops.aten.bernoulli.p(x, 0.5) + fnx.zeros_like(x),
], ids=["ranges", "convert-eye", "samplers", "bernoulli"])
def test_decompose_graph_has_only_prims(fn):
    # random values differ from eager's: dtype and shape only
    assert_graph_decomposes(fn, fnx.ones(6), values=False)
