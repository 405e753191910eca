"""Neural-network ops (fnx/ir/aten/nn/): each forward against an independent NumPy
reference written here (loops or einsum), PyTorch's dtypes, shapes and errors, the
decompositions against the direct CPU kernels, and the core ops decomposed to prims.
"""
import math

import numpy as np
import pytest

import fnx
from fnx.graph.decompose import run_decomposed
from fnx.testing.opinfo.nn.activation import _gelu, np_softmax
from fnx.testing.opinfo.nn.attention import _sdpa_ref
from fnx.testing.opinfo.nn.conv import np_conv, np_conv_transpose
from fnx.testing.opinfo.nn.loss import np_cross_entropy, np_nll, np_pnorm
from fnx.testing.opinfo.nn.normalization import np_group_norm, np_layer_norm
from fnx.testing.opinfo.nn.pooling import np_adaptive, np_avg_pool, np_max_pool
from fnx.testing.opinfo.nn.sampling import np_bilinear, np_col2im, np_grid_sample, np_nearest_idx

aten = fnx.ops.aten
F32, F64 = fnx.float32, fnx.float64
TOL = {F32: dict(rtol=2e-5, atol=2e-6), F64: dict(rtol=1e-10, atol=1e-12)}


def T(a, dtype=None):
    """A tensor from NumPy data: float data becomes float32 unless ``dtype`` says."""
    a = np.asarray(a)
    t = fnx.tensor(a)
    if dtype is None and a.dtype.kind == "f":
        dtype = F32
    return t if dtype is None else t.to(dtype)


def close(t, ref, dtype=None, **tol):
    """``t`` has ``dtype`` (default: its own float dtype) and is close to ``ref``."""
    assert isinstance(t, fnx.Tensor)
    if dtype is not None:
        assert t.dtype is dtype, (t.dtype, dtype)
    ref = np.asarray(ref)
    assert tuple(t.shape) == ref.shape, (tuple(t.shape), ref.shape)
    kw = dict(TOL.get(t.dtype, dict(rtol=0, atol=0)))
    kw.update(tol)
    np.testing.assert_allclose(t.numpy().astype(np.float64) if not t.dtype.is_complex
                               else t.numpy(), ref, **kw)


def rand(rng, *shape, dtype=F32):
    return T(rng.standard_normal(shape), dtype)


def decomposed(op, *args, **kwargs):
    """Run ``op``'s decomposition eagerly (its sub-ops run their own kernels)."""
    return op.decomposition(*args, **kwargs)


def same(a, b, **tol):
    """Two results (tensors or tuples of them) agree in dtype, shape and values."""
    a = list(a) if isinstance(a, (tuple, list)) else [a]
    b = list(b) if isinstance(b, (tuple, list)) else [b]
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if x is None or y is None:
            assert x is None and y is None
            continue
        assert x.dtype is y.dtype and tuple(x.shape) == tuple(y.shape), \
            (x.dtype, y.dtype, tuple(x.shape), tuple(y.shape))
        if x.dtype.is_floating_point or x.dtype.is_complex:
            kw = dict(TOL.get(x.dtype, dict(rtol=1e-3, atol=1e-3)))
            kw.update(tol)
            np.testing.assert_allclose(x.numpy(), y.numpy(), **kw)
        else:
            np.testing.assert_array_equal(x.numpy(), y.numpy())


# =============================================================================== softmax

@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_log_softmax(rng, dtype, dim):
    a = rng.standard_normal((3, 4, 5)) * 3
    x = T(a, dtype)
    close(fnx.softmax(x, dim), np_softmax(a, dim), dtype)
    close(fnx.log_softmax(x, dim), np.log(np_softmax(a, dim)), dtype)
    close(x.softmax(dim), np_softmax(a, dim), dtype)
    close(x.log_softmax(dim), np.log(np_softmax(a, dim)), dtype)
    close(aten._softmax(x, dim, False), np_softmax(a, dim), dtype)
    close(aten._log_softmax(x, dim, False), np.log(np_softmax(a, dim)), dtype)
    for op in (aten._softmax.default, aten._log_softmax.default):
        same(decomposed(op, x, dim, False), op(x, dim, False))


def test_softmax_dtype_arg_and_int_inputs():
    x = fnx.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        fnx.softmax(x, 0)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        aten._log_softmax(x, 0, False)
    close(fnx.softmax(x, 0, dtype=F64), np_softmax(np.array([1., 2, 3]), 0), F64)
    assert fnx.log_softmax(fnx.tensor([1.0]), 0, dtype=F64).dtype is F64
    with pytest.raises(RuntimeError, match="conversion is supported for Half type only"):
        aten._softmax(fnx.tensor([1.0]), 0, True)
    out = aten._softmax(fnx.tensor([1.0, 2.0]).to(fnx.float16), 0, True)
    assert out.dtype is F32


def test_softmax_edge_cases():
    close(fnx.softmax(fnx.tensor(3.0), 0), np.array(1.0), F32)
    close(fnx.log_softmax(fnx.tensor(3.0), -1), np.array(0.0), F32)
    e = fnx.softmax(fnx.zeros(2, 0), 1)
    assert tuple(e.shape) == (2, 0) and e.dtype is F32
    assert tuple(fnx.log_softmax(fnx.zeros(0, 3), 1).shape) == (0, 3)
    out = fnx.softmax(fnx.tensor([-math.inf, -math.inf]), 0).numpy()
    assert np.isnan(out).all()                      # PyTorch: all -inf gives NaN
    close(fnx.softmax(fnx.tensor([-math.inf, 0.0]), 0), [0.0, 1.0])
    close(fnx.log_softmax(fnx.tensor([1000.0, 0.0]), 0), [0.0, -1000.0])
    with pytest.raises(IndexError, match="Dimension out of range"):
        fnx.softmax(fnx.ones(2, 3), 2)


# =============================================================================== activations

@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(rng, dtype, approximate):
    a = rng.standard_normal((4, 5)) * 3
    x = T(a, dtype)
    close(aten.gelu(x, approximate=approximate), _gelu(a, approximate), dtype)
    same(decomposed(aten.gelu.default, x, approximate=approximate),
         aten.gelu(x, approximate=approximate))


def test_gelu_errors():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        aten.gelu(fnx.ones(2), approximate="fast")
    with pytest.raises(RuntimeError, match="\"GeluKernelImpl\" not implemented for 'Long'"):
        aten.gelu(fnx.tensor([1, 2]))


ACTS = {
    "elu": (lambda x: aten.elu(x), lambda a: np.where(a > 0, a, np.expm1(a))),
    "elu_params": (lambda x: aten.elu(x, 0.5, 2.0, 3.0),
                   lambda a: np.where(a > 0, 2.0 * a, 2.0 * 0.5 * np.expm1(3.0 * a))),
    "hardtanh": (lambda x: aten.hardtanh(x, -0.5, 0.7), lambda a: np.clip(a, -0.5, 0.7)),
    "leaky_relu": (lambda x: aten.leaky_relu(x, 0.2), lambda a: np.where(a > 0, a, 0.2 * a)),
    "silu": (lambda x: aten.silu(x), lambda a: a / (1 + np.exp(-a))),
    "mish": (lambda x: aten.mish(x), lambda a: a * np.tanh(np.log1p(np.exp(a)))),
    "softplus": (lambda x: aten.softplus(x, 2.0, 3.0),
                 lambda a: np.where(2 * a > 3.0, a, np.log1p(np.exp(2 * a)) / 2)),
    "relu6": (lambda x: aten.relu6(x), lambda a: np.clip(a, 0, 6)),
    "hardsigmoid": (lambda x: aten.hardsigmoid(x), lambda a: np.clip(a / 6 + 0.5, 0, 1)),
    "hardswish": (lambda x: aten.hardswish(x), lambda a: a * np.clip(a + 3, 0, 6) / 6),
    "log_sigmoid": (lambda x: aten.log_sigmoid(x), lambda a: -np.logaddexp(0, -a)),
    "selu": (lambda x: fnx.selu(x),
             lambda a: 1.0507009873554805 * np.where(a > 0, a, 1.6732632423543772 *
                                                     np.expm1(a))),
    "celu": (lambda x: fnx.celu(x, 2.0), lambda a: np.where(a > 0, a, 2.0 * np.expm1(a / 2))),
    "threshold": (lambda x: fnx.threshold(x, 0.5, -1.0), lambda a: np.where(a <= 0.5, -1.0, a)),
    "hardshrink": (lambda x: fnx.hardshrink(x, 1.0), lambda a: np.where(np.abs(a) > 1, a, 0)),
    "softshrink": (lambda x: aten.softshrink(x, 1.0),
                   lambda a: np.where(a > 1, a - 1, np.where(a < -1, a + 1, 0))),
    "tanhshrink": (lambda x: aten.tanhshrink(x), lambda a: a - np.tanh(a)),
    "prelu": (lambda x: fnx.prelu(x, fnx.tensor([0.1, 0.2, 0.3], dtype=x.dtype)),
              lambda a: np.where(a > 0, a, a * np.array([0.1, 0.2, 0.3])[:, None])),
}


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("name", sorted(ACTS))
def test_activations(rng, name, dtype):
    a = rng.standard_normal((2, 3, 4)) * 4
    f, ref = ACTS[name]
    close(f(T(a, dtype)), ref(a), dtype)


def test_activations_dtypes_and_errors():
    i = fnx.tensor([-3, 0, 4, 9])
    out = aten.hardtanh(i, -1, 5)
    assert out.dtype is fnx.int64 and out.tolist() == [-1, 0, 4, 5]
    assert aten.relu6(i).tolist() == [0, 0, 4, 6]
    with pytest.raises(RuntimeError, match="Bool inputs not supported for hardtanh"):
        aten.hardtanh(fnx.tensor([True]))
    for op in (aten.elu, aten.leaky_relu, aten.silu, aten.softplus):
        with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
            op(i)
    for op in (aten.elu.default, aten.leaky_relu.default, aten.hardtanh.default):
        same(decomposed(op, fnx.tensor([-2.0, 0.5])), op(fnx.tensor([-2.0, 0.5])))
    assert aten.silu(fnx.ones(2, 0)).shape == (2, 0)
    assert aten.gelu(fnx.tensor(1.0)).shape == ()


def test_glu(rng):
    a = rng.standard_normal((2, 6, 3))
    for dim in (1, -2):
        h = 3
        ref = a[:, :h] / (1 + np.exp(-a[:, h:]))
        close(aten.glu(T(a), dim), ref, F32)
    close(aten.glu(T(a[:, :, :2], F64)), a[..., :1] / (1 + np.exp(-a[..., 1:2])), F64)
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 2 "
                                           "is size 3"):
        aten.glu(T(a))
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        aten.glu(fnx.tensor(1.0))


# =============================================================================== normalization

@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("affine", [False, True])
def test_native_layer_norm(rng, dtype, affine):
    a = rng.standard_normal((2, 3, 4, 5))
    w = rng.standard_normal((4, 5)) if affine else None
    b = rng.standard_normal((4, 5)) if affine else None
    tw = T(w, dtype) if affine else None
    tb = T(b, dtype) if affine else None
    out, mean, rstd = aten.native_layer_norm(T(a, dtype), [4, 5], tw, tb, 1e-5)
    ro, rm, rr = np_layer_norm(a, a.shape[-2:], w, b)
    close(out, ro, dtype)
    close(mean, rm, dtype)
    close(rstd, rr, dtype, rtol=1e-4 if dtype is F32 else 1e-10)
    assert tuple(mean.shape) == (2, 3, 1, 1)
    close(fnx.layer_norm(T(a, dtype), (4, 5), tw, tb), ro, dtype)
    close(fnx.layer_norm(T(a, dtype), 5), np_layer_norm(a, a.shape[-1:])[0], dtype)
    same(decomposed(aten.native_layer_norm.default, T(a, dtype), [4, 5], tw, tb, 1e-5),
         (out, mean, rstd), rtol=1e-4)


def test_layer_norm_errors_and_edges():
    x = fnx.ones(2, 3)
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with "
                                           r"shape \[\*, 4\], but got input of size\[2, 3\]"):
        fnx.layer_norm(x, [4])
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape as "
                                           "normalized_shape"):
        fnx.layer_norm(x, [3], fnx.ones(2))
    with pytest.raises(RuntimeError, match="at least 1-dimensional"):
        fnx.layer_norm(x, [])
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        fnx.layer_norm(fnx.ones(2, 3, dtype=fnx.int64), [3])
    out, mean, rstd = aten.native_layer_norm(fnx.ones(0, 3), [3], None, None, 1e-5)
    assert out.shape == (0, 3) and mean.shape == (0, 1)
    m = aten.native_layer_norm(fnx.empty(4, 3, device="meta"), [3], None, None, 1e-5)
    assert [tuple(t.shape) for t in m] == [(4, 3), (4, 1), (4, 1)]


def _fd_grad(f, a, g, eps=1e-6):
    """d(sum(f(a) * g))/da by central differences (float64)."""
    grad = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        ap, am = a.copy(), a.copy()
        ap[i] += eps
        am[i] -= eps
        grad[i] = ((f(ap) * g).sum() - (f(am) * g).sum()) / (2 * eps)
    return grad


def test_native_layer_norm_backward(rng):
    a = rng.standard_normal((3, 4))
    w, b = rng.standard_normal(4), rng.standard_normal(4)
    g = rng.standard_normal((3, 4))
    _, mean, rstd = aten.native_layer_norm(T(a, F64), [4], T(w, F64), T(b, F64), 1e-5)
    gi, gw, gb = aten.native_layer_norm_backward(T(g, F64), T(a, F64), [4], mean, rstd,
                                                 T(w, F64), T(b, F64), [True, True, True])
    close(gi, _fd_grad(lambda v: np_layer_norm(v, v.shape[-1:], w, b)[0], a, g), F64, rtol=1e-6,
          atol=1e-7)
    close(gw, (g * np_layer_norm(a, a.shape[-1:])[0]).sum(0), F64, rtol=1e-8)
    close(gb, g.sum(0), F64)
    r = aten.native_layer_norm_backward(T(g, F64), T(a, F64), [4], mean, rstd, None, None,
                                        [True, False, False])
    assert r[1] is None and r[2] is None
    close(r[0], _fd_grad(lambda v: np_layer_norm(v, v.shape[-1:])[0], a, g), F64,
          rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", [F32, F64])
def test_group_norm(rng, dtype):
    a = rng.standard_normal((2, 6, 3, 2))
    w, b = rng.standard_normal(6), rng.standard_normal(6)
    out, mean, rstd = aten.native_group_norm(T(a, dtype), T(w, dtype), T(b, dtype), 2, 6, 6,
                                             3, 1e-5)
    ro, rm, rr = np_group_norm(a, 3, w, b)
    close(out, ro, dtype, rtol=1e-4)
    close(mean, rm, dtype)
    close(rstd, rr, dtype, rtol=1e-4)
    close(fnx.group_norm(T(a, dtype), 2), np_group_norm(a, 2)[0], dtype, rtol=1e-4)
    with pytest.raises(RuntimeError, match="Expected number of channels in input to be "
                                           "divisible by num_groups"):
        fnx.group_norm(T(a), 4)
    with pytest.raises(RuntimeError, match="Expected weight to be a vector of size equal to "
                                           "the number of channels"):
        fnx.group_norm(T(a), 3, fnx.ones(5))


def test_native_group_norm_backward(rng):
    a = rng.standard_normal((2, 4, 3))
    w = rng.standard_normal(4)
    g = rng.standard_normal((2, 4, 3))
    _, mean, rstd = aten.native_group_norm(T(a, F64), T(w, F64), None, 2, 4, 3, 2, 1e-5)
    gi, gw, gb = aten.native_group_norm_backward(T(g, F64), T(a, F64), mean, rstd, T(w, F64),
                                                 2, 4, 3, 2, [True, True, True])
    close(gi, _fd_grad(lambda v: np_group_norm(v, 2, w)[0], a, g), F64, rtol=1e-6, atol=1e-7)
    close(gw, (g * np_group_norm(a, 2)[0]).sum((0, 2)), F64, rtol=1e-8)
    close(gb, g.sum((0, 2)), F64)


@pytest.mark.parametrize("dtype", [F32, F64])
def test_batch_norm_training_updates_running_stats(rng, dtype):
    a = rng.standard_normal((4, 3, 2, 2))
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    rm0, rv0 = rng.standard_normal(3), rng.random(3) + 0.5
    rm, rv = T(rm0, dtype), T(rv0, dtype)
    v_m, v_v = rm._version, rv._version
    out, smean, sinv = aten._native_batch_norm_legit(T(a, dtype), T(w, dtype), T(b, dtype), rm,
                                                     rv, True, 0.1, 1e-5)
    mean = a.mean((0, 2, 3))
    var = a.var((0, 2, 3))
    ref = (a - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5) * \
        w[:, None, None] + b[:, None, None]
    close(out, ref, dtype, rtol=1e-4)
    close(smean, mean, dtype)
    close(sinv, 1 / np.sqrt(var + 1e-5), dtype, rtol=1e-4)
    n = a.size // 3
    close(rm, 0.9 * rm0 + 0.1 * mean, dtype)
    close(rv, 0.9 * rv0 + 0.1 * var * n / (n - 1), dtype, rtol=1e-5)
    assert rm._version > v_m and rv._version > v_v
    # the public batch_norm takes the same path
    rm2, rv2 = T(rm0, dtype), T(rv0, dtype)
    close(fnx.batch_norm(T(a, dtype), T(w, dtype), T(b, dtype), rm2, rv2, True, 0.1, 1e-5,
                         False), ref, dtype, rtol=1e-4)
    close(rm2, 0.9 * rm0 + 0.1 * mean, dtype)


def test_batch_norm_eval_and_no_stats(rng):
    a = rng.standard_normal((5, 3))
    rm, rv = rng.standard_normal(3), rng.random(3) + 0.5
    out, sm, si = aten._native_batch_norm_legit_no_training(T(a), None, None, T(rm), T(rv), 0.1,
                                                            1e-5)
    close(out, (a - rm) / np.sqrt(rv + 1e-5), F32, rtol=1e-5)
    assert tuple(sm.shape) == (0,) and tuple(si.shape) == (0,)
    out2 = fnx.batch_norm(T(a), None, None, T(rm), T(rv), False, 0.1, 1e-5, False)
    close(out2, (a - rm) / np.sqrt(rv + 1e-5), F32, rtol=1e-5)
    out3, m3, _ = aten._native_batch_norm_legit.no_stats(T(a), None, None, True, 0.1, 1e-5)
    close(out3, (a - a.mean(0)) / np.sqrt(a.var(0) + 1e-5), F32, rtol=1e-4)
    close(m3, a.mean(0), F32)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        aten._native_batch_norm_legit(T(a), None, None, fnx.zeros(4), fnx.ones(3), True, 0.1,
                                      1e-5)
    with pytest.raises(RuntimeError, match="weight should contain 3 elements not 2"):
        fnx.batch_norm(T(a), fnx.ones(2), None, None, None, True, 0.1, 1e-5, False)
    with pytest.raises(RuntimeError, match="must be defined in evaluation mode"):
        fnx.batch_norm(T(a), None, None, None, None, False, 0.1, 1e-5, False)


def test_batch_norm_error_writes_nothing():
    rm, rv = fnx.zeros(3), fnx.ones(3)
    with pytest.raises(RuntimeError):
        aten._native_batch_norm_legit(fnx.ones(2, 3), fnx.ones(4), None, rm, rv, True, 0.1,
                                      1e-5)
    assert rm.tolist() == [0, 0, 0] and rv.tolist() == [1, 1, 1]


def test_instance_norm(rng):
    a = rng.standard_normal((2, 3, 5))
    ref = (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-5)
    rm, rv = fnx.zeros(3), fnx.ones(3)
    out = fnx.instance_norm(T(a), None, None, rm, rv, True, 0.1, 1e-5, False)
    close(out, ref, F32, rtol=1e-4)
    n = 5
    close(rm, 0.1 * a.mean(-1).mean(0), F32)
    close(rv, 0.9 + 0.1 * (a.var(-1) * n / (n - 1)).mean(0), F32, rtol=1e-5)


def test_rms_norm(rng):
    a = rng.standard_normal((3, 4))
    w = rng.standard_normal(4)
    ref = a / np.sqrt((a * a).mean(-1, keepdims=True) + 1e-6) * w
    close(fnx.rms_norm(T(a, F64), [4], T(w, F64), 1e-6), ref, F64)
    ref = a / np.sqrt((a * a).mean(-1, keepdims=True) + np.finfo(np.float32).eps)
    close(fnx.rms_norm(T(a), 4), ref, F32)


# =============================================================================== embedding

def test_embedding(rng):
    w = rng.standard_normal((5, 3))
    idx = np.array([[0, 4], [2, 2], [1, 0]])
    for it in (fnx.int64, fnx.int32):
        out = fnx.embedding(T(w), T(idx).to(it))
        close(out, w[idx], F32)
    close(fnx.embedding(T(w, F64), fnx.tensor(3)), w[3], F64)
    assert fnx.embedding(T(w), fnx.zeros(0, dtype=fnx.int64)).shape == (0, 3)
    same(decomposed(aten.embedding.default, T(w), T(idx)), aten.embedding(T(w), T(idx)))
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have "
                                           "one of the following scalar types: Long, Int"):
        fnx.embedding(T(w), fnx.tensor([0.0]))
    with pytest.raises(RuntimeError, match="Expected 2-dimensional tensor, but got "
                                           "1-dimensional tensor for argument #1 'weight'"):
        fnx.embedding(fnx.ones(3), fnx.tensor([0]))
    with pytest.raises(IndexError, match="index out of range"):
        fnx.embedding(T(w), fnx.tensor([5]))


@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("padding_idx", [-1, 2])
def test_embedding_dense_backward(rng, scale, padding_idx):
    idx = np.array([[0, 2, 2], [4, 2, 0]])
    g = rng.standard_normal((2, 3, 4))
    ref = np.zeros((6, 4))
    counts = np.bincount(idx.ravel(), minlength=6)
    for i, row in zip(idx.ravel(), g.reshape(-1, 4)):
        if i == padding_idx:
            continue
        ref[i] += row / (counts[i] if scale else 1)
    out = aten.embedding_dense_backward(T(g, F64), T(idx), 6, padding_idx, scale)
    close(out, ref, F64)


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_embedding_bag(rng, mode):
    w = rng.standard_normal((6, 3))
    idx = np.array([1, 2, 4, 5, 4, 3, 2])
    offsets = np.array([0, 2, 2, 5])         # bag 1 is empty
    bags = [idx[0:2], idx[2:2], idx[2:5], idx[5:]]
    red = {0: lambda r: r.sum(0), 1: lambda r: r.mean(0), 2: lambda r: r.max(0)}[mode]
    ref = np.stack([red(w[b]) if len(b) else np.zeros(3) for b in bags])
    out, o2b, bag_size, max_idx = aten._embedding_bag(T(w), T(idx), T(offsets), False, mode)
    close(out, ref, F32)
    assert o2b.tolist() == [0, 0, 2, 2, 2, 3, 3]
    assert bag_size.tolist() == [2, 0, 3, 2]
    if mode == 2:
        want = [[b[np.argmax(w[b][:, j])] if len(b) else -1 for j in range(3)] for b in bags]
        assert max_idx.tolist() == want
    # include_last_offset: the last offset closes the last bag
    out2 = fnx.embedding_bag(T(w), T(idx), T(np.array([0, 2, 7])), mode=mode,
                             include_last_offset=True)[0]
    close(out2, np.stack([red(w[idx[:2]]), red(w[idx[2:]])]), F32)
    # 2-D input: one bag per row; padding_idx entries are left out
    idx2 = np.array([[1, 2], [3, 3]])
    out3 = fnx.embedding_bag(T(w), T(idx2), None, mode=mode, padding_idx=2)[0]
    close(out3, np.stack([red(w[[1]]), red(w[[3, 3]])]), F32)


def test_embedding_bag_per_sample_weights(rng):
    w = rng.standard_normal((4, 2))
    idx, off = np.array([0, 1, 3]), np.array([0, 1])
    psw = np.array([2.0, 0.5, -1.0])
    out = aten._embedding_bag(T(w), T(idx), T(off), False, 0, False, T(psw))[0]
    close(out, np.stack([2 * w[0], 0.5 * w[1] - w[3]]), F32)


def test_one_hot():
    out = aten.one_hot(fnx.tensor([0, 2, 1]), 4)
    assert out.dtype is fnx.int64 and out.tolist() == np.eye(4, dtype=int)[[0, 2, 1]].tolist()
    assert aten.one_hot(fnx.tensor([[1], [0]])).shape == (2, 1, 2)
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        aten.one_hot(fnx.tensor([3]), 3)
    with pytest.raises(RuntimeError, match="LongTensor"):
        aten.one_hot(fnx.tensor([1.0]), 3)


# =============================================================================== dropout

def test_native_dropout_semantics():
    x = fnx.ones(200, 50)
    out, mask = aten.native_dropout(x, 0.3, True)
    assert out.dtype is F32 and mask.dtype is fnx.bool
    o, m = out.numpy(), mask.numpy()
    np.testing.assert_allclose(o, np.where(m, 1 / 0.7, 0.0), rtol=1e-6)
    assert abs(m.mean() - 0.7) < 0.02
    out, mask = aten.native_dropout(x, 0.3, None)           # None means train
    assert not mask.numpy().all()
    out, mask = aten.native_dropout(x, 0.3, False)
    assert mask.numpy().all() and (out.numpy() == 1).all() and out is not x
    out, mask = aten.native_dropout(x, 1.0, True)
    assert (out.numpy() == 0).all() and not mask.numpy().any()
    out, mask = aten.native_dropout(x, 0.0, True)
    assert (out.numpy() == 1).all() and mask.numpy().all()


def test_dropout():
    x = fnx.ones(100, 10, dtype=F64)
    assert fnx.dropout(x, 0.5, False) is x
    assert fnx.dropout(x, 0.0, True) is x
    o = fnx.dropout(x, 0.25, True)
    assert o.dtype is F64
    vals = set(np.unique(o.numpy()).tolist())
    assert vals <= {0.0, 1 / 0.75} and len(vals) == 2
    assert (fnx.dropout(x, 1.0, True).numpy() == 0).all()
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, but "
                                           "got 1.5"):
        fnx.dropout(x, 1.5, True)
    f = fnx.feature_dropout(fnx.ones(50, 20, 3), 0.5, True).numpy()
    assert (f == f[:, :, :1]).all()                 # whole channels dropped
    assert set(np.unique(f).tolist()) == {0.0, 2.0}


# =============================================================================== convolution

CONV_CASES = [
    # nd, N, C, O, spatial, kernel, stride, padding, dilation, groups
    (1, 2, 3, 4, (7,), (3,), (1,), (0,), (1,), 1),
    (1, 1, 4, 6, (9,), (2,), (2,), (1,), (2,), 2),
    (2, 2, 3, 4, (5, 6), (3, 2), (1, 1), (1, 0), (1, 1), 1),
    (2, 1, 4, 4, (7, 7), (3, 3), (2, 3), (1, 2), (2, 1), 4),
    (2, 0, 2, 2, (4, 4), (2, 2), (1, 1), (0, 0), (1, 1), 1),
    (3, 1, 2, 2, (4, 3, 5), (2, 2, 3), (1, 2, 1), (1, 0, 1), (1, 1, 2), 2),
]


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("case", CONV_CASES)
def test_convolution(rng, case, dtype):
    nd, n, c, o, sp_, k, s, p, d, g = case
    x = rng.standard_normal((n, c) + sp_)
    w = rng.standard_normal((o, c // g) + k)
    b = rng.standard_normal(o)
    ref = np_conv(x, w, b, s, p, d, g)
    out = aten.convolution(T(x, dtype), T(w, dtype), T(b, dtype), list(s), list(p), list(d),
                           False, [0] * nd, g)
    close(out, ref, dtype, rtol=1e-4 if dtype is F32 else 1e-10, atol=1e-4)
    conv = getattr(fnx, f"conv{nd}d")
    close(conv(T(x, dtype), T(w, dtype), T(b, dtype), s, p, d, g), ref, dtype, rtol=1e-4,
          atol=1e-4)
    same(decomposed(aten.convolution.default, T(x, dtype), T(w, dtype), T(b, dtype), list(s),
                    list(p), list(d), False, [0] * nd, g), out, rtol=1e-4, atol=1e-4)


CONVT_CASES = [
    # nd, N, Cin, Cout/g, spatial, kernel, stride, padding, output_padding, dilation, groups
    (1, 2, 3, 2, (4,), (3,), (2,), (1,), (1,), (1,), 1),
    (2, 1, 4, 3, (3, 4), (2, 3), (2, 1), (0, 1), (1, 0), (1, 2), 2),
    (2, 2, 2, 2, (3, 3), (3, 3), (1, 1), (1, 1), (0, 0), (1, 1), 1),
    (3, 1, 2, 1, (2, 3, 2), (2, 2, 2), (2, 1, 2), (0, 0, 1), (1, 0, 0), (1, 1, 1), 1),
]


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("case", CONVT_CASES)
def test_conv_transpose(rng, case, dtype):
    nd, n, cin, cog, sp_, k, s, p, op, d, g = case
    x = rng.standard_normal((n, cin) + sp_)
    w = rng.standard_normal((cin, cog) + k)
    b = rng.standard_normal(cog * g)
    ref = np_conv_transpose(x, w, b, s, p, op, d, g)
    out = aten.convolution(T(x, dtype), T(w, dtype), T(b, dtype), list(s), list(p), list(d),
                           True, list(op), g)
    close(out, ref, dtype, rtol=1e-4 if dtype is F32 else 1e-10, atol=1e-4)
    convt = getattr(fnx, f"conv_transpose{nd}d")
    close(convt(T(x, dtype), T(w, dtype), T(b, dtype), s, p, op, g, d), ref, dtype, rtol=1e-4,
          atol=1e-4)
    same(decomposed(aten.convolution.default, T(x, dtype), T(w, dtype), T(b, dtype), list(s),
                    list(p), list(d), True, list(op), g), out, rtol=1e-4, atol=1e-4)


def test_conv_unbatched_and_same_padding(rng):
    x = rng.standard_normal((3, 6, 5))
    w = rng.standard_normal((2, 3, 3, 2))
    out = fnx.conv2d(T(x), T(w))
    assert tuple(out.shape) == (2, 4, 4)
    close(out, np_conv(x[None], w, None, (1, 1), (0, 0), (1, 1), 1)[0], F32, rtol=1e-4,
          atol=1e-5)
    # 'same' with an even kernel pads one more on the right, as PyTorch
    out = fnx.conv2d(T(x), T(w), padding="same", dilation=(1, 2))
    assert tuple(out.shape) == (2, 6, 5)
    xp = np.pad(x, [(0, 0), (1, 1), (1, 1)])
    close(out, np_conv(xp[None], w, None, (1, 1), (0, 0), (1, 2), 1)[0], F32, rtol=1e-4,
          atol=1e-5)
    assert tuple(fnx.conv1d(T(x[:, :, 0]), T(w[..., 0]), padding="valid").shape) == (2, 4)
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided"):
        fnx.conv2d(T(x), T(w), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="Invalid padding string: 'full'"):
        fnx.conv2d(T(x), T(w), padding="full")


def test_conv_errors():
    x, w = fnx.ones(1, 3, 5, 5), fnx.ones(4, 3, 3, 3)
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input "
                                           r"to conv2d, but got input of size: \[5, 5\]"):
        fnx.conv2d(fnx.ones(5, 5), w)
    with pytest.raises(RuntimeError, match=r"Expected 4-dimensional input for 4-dimensional "
                                           r"weight \[4, 3, 3, 3\], but got 3-dimensional"):
        aten.convolution(fnx.ones(3, 5, 5), w, None, [1], [0], [1], False, [0], 1)
    with pytest.raises(RuntimeError, match=r"Given groups=1, weight of size \[4, 3, 3, 3\], "
                                           r"expected input\[1, 2, 5, 5\] to have 3 channels, "
                                           r"but got 2 channels instead"):
        fnx.conv2d(fnx.ones(1, 2, 5, 5), w)
    with pytest.raises(RuntimeError, match="expected bias to be 1-dimensional with 4 elements"):
        fnx.conv2d(x, w, fnx.ones(3))
    with pytest.raises(RuntimeError, match=r"Kernel size: \(3 x 3\). Kernel size can't be "
                                           r"greater than actual input size"):
        fnx.conv2d(fnx.ones(1, 3, 2, 2), w)
    with pytest.raises(RuntimeError, match="expected weight to be divisible by 3"):
        fnx.conv2d(fnx.ones(1, 3, 5, 5), fnx.ones(4, 1, 3, 3), groups=3)
    with pytest.raises(RuntimeError, match="non-positive stride is not supported"):
        fnx.conv2d(x, w, stride=0)
    with pytest.raises(RuntimeError, match="negative padding is not supported"):
        fnx.conv2d(x, w, padding=-1)
    with pytest.raises(RuntimeError, match=r"Input type \(Double\) and weight type \(Float\)"):
        fnx.conv2d(x.double(), w)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        fnx.conv2d(x.long(), w.long())
    with pytest.raises(RuntimeError, match="Given transposed=1, weight of size"):
        fnx.conv_transpose2d(x, w)
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride "
                                           "or dilation"):
        fnx.conv_transpose2d(fnx.ones(1, 4, 3, 3), w, output_padding=1)
    m = aten.convolution(fnx.empty(2, 3, 5, 5, device="meta"), fnx.empty(4, 3, 3, 3,
                         device="meta"), None, [2], [1], [1], False, [0], 1)
    assert tuple(m.shape) == (2, 4, 3, 3) and m.device.type == "meta"


def _dot(a, b):
    return float((a.numpy().astype(np.float64) * b.numpy()).sum())


@pytest.mark.parametrize("case", [CONV_CASES[1], CONV_CASES[3], CONV_CASES[5]])
def test_convolution_backward(rng, case):
    """Both gradients are adjoints of the (bilinear) forward: <conv(x, w), g> equals
    <x, grad_input> and <w, grad_weight>."""
    nd, n, c, o, sp_, k, s, p, d, g = case
    x, w = rand(rng, n, c, *sp_, dtype=F64), rand(rng, o, c // g, *k, dtype=F64)
    y = aten.convolution(x, w, None, list(s), list(p), list(d), False, [0] * nd, g)
    gy = rand(rng, *y.shape, dtype=F64)
    gi, gw, gb = aten.convolution_backward(gy, x, w, [o], list(s), list(p), list(d), False,
                                           [0] * nd, g, [True, True, True])
    assert gi.shape == x.shape and gw.shape == w.shape and gb.shape == (o,)
    assert math.isclose(_dot(y, gy), _dot(x, gi), rel_tol=1e-9)
    assert math.isclose(_dot(y, gy), _dot(w, gw), rel_tol=1e-9)
    close(gb, gy.numpy().sum(axis=(0,) + tuple(range(2, 2 + nd))), F64)
    r = aten.convolution_backward(gy, x, w, None, list(s), list(p), list(d), False, [0] * nd, g,
                                  [False, True, False])
    assert r[0] is None and r[2] is None


def test_conv_transpose_backward(rng):
    x, w = rand(rng, 2, 4, 3, 4, dtype=F64), rand(rng, 4, 3, 2, 3, dtype=F64)
    args = ([2, 1], [0, 1], [1, 2], True, [1, 0], 2)
    y = aten.convolution(x, w, None, *args)
    gy = rand(rng, *y.shape, dtype=F64)
    gi, gw, _ = aten.convolution_backward(gy, x, w, None, *args, [True, True, False])
    assert math.isclose(_dot(y, gy), _dot(x, gi), rel_tol=1e-9)
    assert math.isclose(_dot(y, gy), _dot(w, gw), rel_tol=1e-9)


# =============================================================================== pooling

MAXPOOL_CASES = [
    # kernel, stride, padding, dilation, ceil_mode, spatial
    ((2, 2), (), (0, 0), (1, 1), False, (6, 7)),
    ((3, 3), (2, 2), (1, 1), (1, 1), True, (7, 6)),
    ((2, 3), (1, 2), (1, 0), (2, 1), False, (5, 7)),
    ((2, 2), (2, 2), (1, 1), (1, 1), True, (3, 3)),
    ((3, 1), (3, 1), (0, 0), (1, 1), True, (8, 2)),
]


@pytest.mark.parametrize("dtype", [F32, F64, fnx.int64])
@pytest.mark.parametrize("case", MAXPOOL_CASES)
def test_max_pool2d_with_indices(rng, case, dtype):
    k, s, p, d, ceil_mode, sp_ = case
    a = rng.integers(-5, 5, (2, 3) + sp_) if dtype is fnx.int64 else \
        rng.standard_normal((2, 3) + sp_)
    x = T(a, dtype)
    vals, idx = aten.max_pool2d_with_indices(x, list(k), list(s), list(p), list(d), ceil_mode)
    rv, ri = np_max_pool(a, k, s or k, p, d, ceil_mode)
    close(vals, rv, dtype)
    assert idx.dtype is fnx.int64
    np.testing.assert_array_equal(idx.numpy(), ri)
    same(decomposed(aten.max_pool2d_with_indices.default, x, list(k), list(s), list(p), list(d),
                    ceil_mode), (vals, idx))
    close(fnx.max_pool2d(x, k, s or None, p, d, ceil_mode), rv, dtype)
    # unbatched (C, H, W)
    v3, i3 = aten.max_pool2d_with_indices(x[0], list(k), list(s), list(p), list(d), ceil_mode)
    np.testing.assert_array_equal(i3.numpy(), ri[0])


def test_max_pool_nan_inf_and_ties():
    a = np.array([[[[1.0, np.nan, 3.0, np.nan], [5.0, 2.0, 5.0, 5.0]]]])
    v, i = aten.max_pool2d_with_indices(T(a), [2, 2])
    assert np.isnan(v.numpy()[0, 0, 0, 0]) and i.tolist() == [[[[1, 3]]]]  # last NaN wins
    dv, di = decomposed(aten.max_pool2d_with_indices.default, T(a), [2, 2])
    assert di.tolist() == [[[[1, 3]]]]
    b = np.array([[[[5.0, 5.0], [5.0, 1.0]]]])
    assert aten.max_pool2d_with_indices(T(b), [2, 2])[1].tolist() == [[[[0]]]]  # first tie
    c = np.full((1, 1, 2, 2), -np.inf)
    v, i = aten.max_pool2d_with_indices(T(c), [2, 2], [1, 1], [1, 1])
    rv, ri = np_max_pool(c, (2, 2), (1, 1), (1, 1), (1, 1), False)
    np.testing.assert_array_equal(i.numpy(), ri)


def test_max_pool3d_and_1d(rng):
    a = rng.standard_normal((2, 2, 4, 5, 3))
    v, i = aten.max_pool3d_with_indices(T(a), [2, 2, 2], [1, 2, 1], [1, 0, 1], [1, 1, 2], True)
    rv, ri = np_max_pool(a, (2, 2, 2), (1, 2, 1), (1, 0, 1), (1, 1, 2), True)
    close(v, rv, F32)
    np.testing.assert_array_equal(i.numpy(), ri)
    same(decomposed(aten.max_pool3d_with_indices.default, T(a), [2, 2, 2], [1, 2, 1],
                    [1, 0, 1], [1, 1, 2], True), (v, i))
    b = rng.standard_normal((2, 3, 9))
    rv, ri = np_max_pool(b, (3,), (2,), (1,), (2,), False)
    close(fnx.max_pool1d(T(b), 3, 2, 1, 2), rv, F32)
    v1, i1 = fnx.max_pool1d_with_indices(T(b), 3, 2, 1, 2)
    np.testing.assert_array_equal(i1.numpy(), ri)
    assert fnx.max_pool2d(fnx.ones(0, 2, 4, 4), 2).shape == (0, 2, 2, 2)


def test_max_pool_errors():
    x = fnx.ones(1, 1, 4, 4)
    with pytest.raises(RuntimeError, match=r"Expected 3D or 4D \(batch mode\) tensor"):
        fnx.max_pool2d(fnx.ones(4, 4), 2)
    with pytest.raises(RuntimeError, match=r"Expected 3D or 4D \(batch mode\) tensor"):
        fnx.max_pool2d(fnx.ones(1, 0, 4, 4), 2)
    with pytest.raises(RuntimeError, match="pad should be smaller than or equal to half of "
                                           "kernel size"):
        fnx.max_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        fnx.max_pool2d(fnx.ones(1, 1, 2, 2), 3)
    with pytest.raises(RuntimeError, match="max_pool2d: kernel_size must either be a single "
                                           "int, or a tuple of two ints"):
        fnx.max_pool2d(x, (2, 2, 2))
    with pytest.raises(RuntimeError, match="max_pool2d: stride must either be omitted, a "
                                           "single int, or a tuple of two ints"):
        fnx.max_pool2d(x, 2, (1, 1, 1))
    with pytest.raises(RuntimeError, match="stride should be greater than zero"):
        fnx.max_pool2d(x, 2, 0)
    with pytest.raises(RuntimeError, match=r"max_pool1d\(\) Expected 2D or 3D input"):
        fnx.max_pool1d(fnx.ones(1, 1, 1, 4), 2)
    with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
        fnx.max_pool2d(x.bool(), 2)


def test_max_pool2d_backward(rng):
    a = rng.standard_normal((2, 2, 5, 5))
    v, i = aten.max_pool2d_with_indices(T(a, F64), [3, 3], [2, 2], [1, 1], [1, 1], True)
    g = rng.standard_normal(v.shape)
    out = aten.max_pool2d_with_indices_backward(T(g, F64), T(a, F64), [3, 3], [2, 2], [1, 1],
                                                [1, 1], True, i)
    ref = np.zeros((2, 2, 25))
    for n, c in np.ndindex(2, 2):
        np.add.at(ref[n, c], i.numpy()[n, c].ravel(), g[n, c].ravel())
    close(out, ref.reshape(a.shape), F64)


AVG_CASES = [
    # kernel, stride, padding, ceil_mode, count_include_pad, divisor_override, spatial
    ((2, 2), (), (0, 0), False, True, None, (6, 7)),
    ((3, 3), (2, 2), (1, 1), True, True, None, (6, 6)),
    ((3, 3), (2, 2), (1, 1), True, False, None, (6, 6)),
    ((3, 2), (2, 1), (1, 1), False, False, 5, (5, 4)),
    ((2, 2), (2, 2), (1, 1), True, True, None, (3, 3)),
]


@pytest.mark.parametrize("dtype", [F32, F64, fnx.int64])
@pytest.mark.parametrize("case", AVG_CASES)
def test_avg_pool2d(rng, case, dtype):
    k, s, p, ceil_mode, cip, div, sp_ = case
    a = rng.integers(-9, 9, (2, 3) + sp_) if dtype is fnx.int64 else \
        rng.standard_normal((2, 3) + sp_)
    out = aten.avg_pool2d(T(a, dtype), list(k), list(s), list(p), ceil_mode, cip, div)
    ref = np_avg_pool(a, k, s or k, p, ceil_mode, cip, div)
    close(out, ref, dtype)
    same(decomposed(aten.avg_pool2d.default, T(a, dtype), list(k), list(s), list(p), ceil_mode,
                    cip, div), out)


def test_avg_pool3d_and_1d(rng):
    a = rng.standard_normal((1, 2, 5, 4, 6))
    out = aten.avg_pool3d(T(a, F64), [2, 3, 2], [2, 1, 3], [1, 1, 0], True, False)
    close(out, np_avg_pool(a, (2, 3, 2), (2, 1, 3), (1, 1, 0), True, False, None), F64)
    b = rng.standard_normal((2, 3, 7))
    close(fnx.avg_pool1d(T(b), 3, 2, 1, False, True),
          np_avg_pool(b, (3,), (2,), (1,), False, True, None), F32)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        aten.avg_pool2d(fnx.ones(1, 1, 4, 4), [2, 2], [], [0, 0], False, True, 0)
    with pytest.raises(RuntimeError, match="not implemented for 'Int'"):
        aten.avg_pool2d(fnx.ones(1, 1, 4, 4, dtype=fnx.int32), [2, 2])


@pytest.mark.parametrize("case", AVG_CASES)
def test_avg_pool2d_backward(rng, case):
    """The backward is the adjoint of the (linear) forward."""
    k, s, p, ceil_mode, cip, div, sp_ = case
    x = rand(rng, 2, 2, *sp_, dtype=F64)
    y = aten.avg_pool2d(x, list(k), list(s), list(p), ceil_mode, cip, div)
    gy = rand(rng, *y.shape, dtype=F64)
    gi = aten.avg_pool2d_backward(gy, x, list(k), list(s), list(p), ceil_mode, cip, div)
    assert gi.shape == x.shape and gi.dtype is F64
    assert math.isclose(_dot(y, gy), _dot(x, gi), rel_tol=1e-10)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("shape,out", [((2, 3, 7, 5), (3, 2)), ((3, 6, 4), (3, 4)),
                                       ((1, 2, 5, 5), (7, 1)), ((0, 2, 4, 4), (2, 2))])
def test_adaptive_avg_pool2d(rng, shape, out, dtype):
    a = rng.standard_normal(shape)
    r = aten._adaptive_avg_pool2d(T(a, dtype), list(out))
    close(r, np_adaptive(a, out), dtype)
    close(aten.adaptive_avg_pool2d(T(a, dtype), list(out)), np_adaptive(a, out), dtype)


def test_adaptive_avg_pool_3d_1d_and_backward(rng):
    a = rng.standard_normal((2, 2, 5, 4, 3))
    close(aten._adaptive_avg_pool3d(T(a, F64), [2, 3, 2]), np_adaptive(a, (2, 3, 2)), F64)
    b = rng.standard_normal((2, 7))
    close(fnx.adaptive_avg_pool1d(T(b), 3), np_adaptive(b, (3,)), F32)
    # an inf stays in its own windows
    c = np.zeros((1, 1, 5))
    c[0, 0, 0] = np.inf
    r = fnx.adaptive_avg_pool1d(T(c), 3).numpy()
    assert np.isinf(r[0, 0, 0]) and np.isfinite(r[0, 0, 1:]).all()
    x = rand(rng, 2, 3, 7, 5, dtype=F64)
    y = aten._adaptive_avg_pool2d(x, [3, 4])
    gy = rand(rng, *y.shape, dtype=F64)
    gi = aten._adaptive_avg_pool2d_backward(gy, x)
    assert math.isclose(_dot(y, gy), _dot(x, gi), rel_tol=1e-10)
    with pytest.raises(RuntimeError, match=r"adaptive_avg_pool2d\(\): Expected 3D or 4D tensor"):
        aten._adaptive_avg_pool2d(fnx.ones(4, 4), [2, 2])
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        aten._adaptive_avg_pool2d(fnx.ones(1, 4, 4, dtype=fnx.int64), [2, 2])


# =============================================================================== padding

@pytest.mark.parametrize("nd", [1, 2, 3])
def test_reflection_replication_pad(rng, nd):
    a = rng.standard_normal((2, 3) + (4, 5, 3)[:nd])
    pad = [2, 1, 0, 3, 1, 2][:2 * nd]
    np_pad = [(0, 0), (0, 0)] + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(nd))]
    close(getattr(aten, f"reflection_pad{nd}d")(T(a), pad), np.pad(a, np_pad, mode="reflect"),
          F32)
    close(getattr(aten, f"replication_pad{nd}d")(T(a, F64), pad),
          np.pad(a, np_pad, mode="edge"), F64)
    close(aten.pad(T(a), pad, "reflect"), np.pad(a, np_pad, mode="reflect"), F32)
    close(aten.pad(T(a), pad, "replicate"), np.pad(a, np_pad, mode="edge"), F32)
    close(aten.pad(T(a), pad, "circular"), np.pad(a, np_pad, mode="wrap"), F32)
    close(aten.pad(T(a), pad, "constant", 2.5), np.pad(a, np_pad, constant_values=2.5), F32)


def test_pad_int_negative_and_errors():
    a = np.arange(12).reshape(1, 3, 4)
    out = aten.reflection_pad1d(T(a), [1, 2])
    assert out.dtype is fnx.int64
    np.testing.assert_array_equal(out.numpy(), np.pad(a, [(0, 0), (0, 0), (1, 2)], "reflect"))
    np.testing.assert_array_equal(aten.reflection_pad1d(T(a), [-1, 1]).numpy(),
                                  np.pad(a, [(0, 0), (0, 0), (0, 1)], "reflect")[..., 1:])
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding "
                                           "input dimension"):
        aten.reflection_pad1d(T(a), [4, 0])
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        aten.pad(T(a), [1, 2, 3])
    with pytest.raises(RuntimeError, match="Padding mode \"reflect\" doesn't take in value"):
        aten.pad(T(a), [1, 1], "reflect", 1.0)
    with pytest.raises(RuntimeError, match="expected 3D or 4D"):
        aten.reflection_pad2d(T(a[0]), [1, 1, 1, 1])


# =============================================================================== sampling

@pytest.mark.parametrize("out", [(6, 8), (5, 3), (3, 7), (2, 4)])
def test_upsample_nearest2d(rng, out):
    a = rng.standard_normal((2, 3, 3, 4))
    r = aten.upsample_nearest2d.vec(T(a), list(out), None)
    close(r, a[:, :, np_nearest_idx(3, out[0])][..., np_nearest_idx(4, out[1])], F32)
    close(aten.upsample_nearest2d(T(a), list(out)),
          a[:, :, np_nearest_idx(3, out[0])][..., np_nearest_idx(4, out[1])], F32)


def test_upsample_nearest2d_scale_factors(rng):
    a = rng.standard_normal((1, 2, 3, 5))
    r = aten.upsample_nearest2d.vec(T(a), None, [1.5, 0.6])
    assert tuple(r.shape) == (1, 2, 4, 3)
    close(r, a[:, :, np_nearest_idx(3, 4, 1.5)][..., np_nearest_idx(5, 3, 0.6)], F32)
    with pytest.raises(RuntimeError, match="Must specify exactly one of output_size and "
                                           "scale_factors"):
        aten.upsample_nearest2d.vec(T(a), [2, 2], [2.0, 2.0])
    with pytest.raises(RuntimeError, match="It is expected input_size equals to 4"):
        aten.upsample_nearest2d.vec(T(a[0]), [2, 2], None)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("out", [(6, 8), (2, 3), (1, 5), (4, 4)])
def test_upsample_bilinear2d(rng, out, align_corners):
    a = rng.standard_normal((2, 2, 4, 4))
    r = aten.upsample_bilinear2d.vec(T(a, F64), list(out), align_corners, None)
    close(r, np_bilinear(a, out, align_corners), F64)
    r = aten.upsample_bilinear2d.vec(T(a), list(out), align_corners, None)
    close(r, np_bilinear(a, out, align_corners), F32, rtol=1e-5, atol=1e-5)
    close(aten.upsample_bilinear2d(T(a, F64), list(out), align_corners),
          np_bilinear(a, out, align_corners), F64)
    r = aten.upsample_bilinear2d.vec(T(a, F64), None, False, [2.5, 1.5])
    close(r, np_bilinear(a, (10, 6), False, (2.5, 1.5)), F64)


@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("padding_mode", [0, 1, 2])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sampler_2d(rng, mode, padding_mode, align_corners):
    a = rng.standard_normal((2, 3, 4, 5))
    grid = rng.uniform(-1.4, 1.4, (2, 3, 6, 2))
    out = aten.grid_sampler_2d(T(a, F64), T(grid, F64), mode, padding_mode, align_corners)
    close(out, np_grid_sample(a, grid, mode, padding_mode, align_corners), F64)


def test_grid_sampler_bicubic_identity_and_errors(rng):
    a = rng.standard_normal((1, 2, 4, 5))
    ys, xs = np.meshgrid(np.linspace(-1, 1, 4), np.linspace(-1, 1, 5), indexing="ij")
    grid = np.stack([xs, ys], -1)[None]
    out = aten.grid_sampler_2d(T(a, F64), T(grid, F64), 2, 0, True)
    close(out, a, F64)                   # sampling exactly at the pixels reproduces them
    with pytest.raises(RuntimeError, match="expected grid to have size 2 in last dimension"):
        aten.grid_sampler_2d(T(a), fnx.ones(1, 2, 2, 3), 0, 0, False)


def test_col2im_and_im2col(rng):
    out, k, d, p, s = (5, 6), (2, 3), (1, 2), (1, 0), (2, 1)
    bh = (5 + 2 - 1 - 1) // 2 + 1
    bw = (6 - 4 - 1) // 1 + 1
    cols = rng.standard_normal((2, 3 * 6, bh * bw))
    r = aten.col2im(T(cols, F64), list(out), list(k), list(d), list(p), list(s))
    close(r, np_col2im(cols, out, k, d, p, s), F64)
    r2 = aten.col2im(T(cols[0], F64), list(out), list(k), list(d), list(p), list(s))
    close(r2, np_col2im(cols[:1], out, k, d, p, s)[0], F64)
    # im2col is col2im's adjoint
    x = rand(rng, 2, 3, *out, dtype=F64)
    c = aten.im2col(x, list(k), list(d), list(p), list(s))
    assert tuple(c.shape) == cols.shape
    assert math.isclose(_dot(c, T(cols, F64)), _dot(x, r), rel_tol=1e-10)
    with pytest.raises(RuntimeError, match="expected size of input's dimension 2 to match the "
                                           "calculated number of sliding blocks"):
        aten.col2im(T(cols[..., :-1]), list(out), list(k), list(d), list(p), list(s))
    with pytest.raises(RuntimeError, match="to be divisible by the product of kernel_size"):
        aten.col2im(fnx.ones(1, 5, 4), [3, 3], [2, 2], [1, 1], [0, 0], [1, 1])


# =============================================================================== losses

@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(rng, dtype, reduction, weighted):
    logp = np_softmax(rng.standard_normal((5, 4)), 1, log=True)
    t = np.array([0, 3, 1, -100, 3])
    w = rng.random(4) + 0.5 if weighted else None
    out, total = aten.nll_loss_forward(T(logp, dtype), T(t), T(w, dtype) if weighted else None,
                                       reduction, -100)
    close(out, np_nll(logp, t, w, reduction, -100)[0], dtype)
    assert total.shape == () and total.dtype is dtype
    if reduction:
        ww = np.ones(4) if w is None else w
        close(total, sum(ww[i] for i in t if i != -100), dtype)
    close(aten.nll_loss(T(logp, dtype), T(t), T(w, dtype) if weighted else None, reduction),
          np_nll(logp, t, w, reduction, -100)[0], dtype)


def test_nll_loss_shapes_and_errors(rng):
    logp = np_softmax(rng.standard_normal(4), 0, log=True)
    close(aten.nll_loss(T(logp), fnx.tensor(2)), -logp[2], F32)      # unbatched
    k = np_softmax(rng.standard_normal((2, 3, 4, 5)), 1, log=True)
    t = rng.integers(0, 3, (2, 4, 5))
    ref = -np.take_along_axis(k, t[:, None], 1)[:, 0]
    close(aten.nll_loss(T(k), T(t), None, 0), ref, F32)               # K-dim
    close(aten.nll_loss(T(k), T(t)), ref.mean(), F32)
    with pytest.raises(ValueError, match=r"Expected input batch_size \(2\) to match target "
                                         r"batch_size \(3\)"):
        aten.nll_loss(fnx.ones(2, 3), fnx.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 3 "
                                           "classes or no classes"):
        aten.nll_loss(fnx.ones(2, 3), fnx.tensor([0, 1]), fnx.ones(2))
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        aten.nll_loss(fnx.ones(2, 3), fnx.tensor([0, 5]))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Int"):
        aten.nll_loss(fnx.ones(2, 3), fnx.tensor([0, 1], dtype=fnx.int32))
    r = aten.nll_loss(fnx.ones(2, 3), fnx.tensor([-100, -100]))
    assert np.isnan(r.item())                       # every target ignored: 0/0
    assert aten.nll_loss(fnx.ones(0, 3), fnx.zeros(0, dtype=fnx.int64), None, 2).item() == 0


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("ls", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_indices(rng, reduction, ls, weighted):
    a = rng.standard_normal((6, 5))
    t = np.array([0, 4, 2, 1, 1, 3])
    t[2] = 1 if not weighted else -1          # an ignored target when ignore_index=-1
    w = rng.random(5) + 0.5 if weighted else None
    ii = -1 if weighted else -100
    out = aten.cross_entropy_loss(T(a, F64), T(t), T(w, F64) if weighted else None, reduction,
                                  ii, ls)
    close(out, np_cross_entropy(a, t, w, reduction, ii, ls), F64)


def test_cross_entropy_kdim_unbatched_and_probs(rng):
    a = rng.standard_normal((2, 4, 3, 2))
    t = rng.integers(0, 4, (2, 3, 2))
    close(aten.cross_entropy_loss(T(a), T(t), None, 0), np_cross_entropy(a, t, None, 0), F32)
    close(aten.cross_entropy_loss(T(a), T(t), None, 1, -100, 0.1),
          np_cross_entropy(a, t, None, 1, -100, 0.1), F32)
    v = rng.standard_normal(5)
    close(aten.cross_entropy_loss(T(v), fnx.tensor(3)), np_cross_entropy(v, np.array(3)), F32)
    p = rng.random((4, 5))
    p /= p.sum(1, keepdims=True)
    a2 = rng.standard_normal((4, 5))
    w = rng.random(5)
    for reduction in (0, 1, 2):
        close(aten.cross_entropy_loss(T(a2, F64), T(p, F64), T(w, F64), reduction, -100, 0.3),
              np_cross_entropy(a2, p, w, reduction, -100, 0.3), F64)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point "
                                           "target"):
        aten.cross_entropy_loss(T(a2), T(p), None, 1, 2)
    with pytest.raises(RuntimeError):
        aten.cross_entropy_loss(T(a2), T(p[:, :4]))


POINTWISE_LOSSES = {
    "mse_loss": (lambda x, t, r: aten.mse_loss(x, t, r), lambda d: d * d),
    "l1_loss": (lambda x, t, r: aten.l1_loss(x, t, r), np.abs),
    "smooth_l1_loss": (lambda x, t, r: aten.smooth_l1_loss(x, t, r, 0.5),
                       lambda d: np.where(np.abs(d) < 0.5, 0.5 * d * d / 0.5, np.abs(d) - 0.25)),
    "smooth_l1_beta0": (lambda x, t, r: aten.smooth_l1_loss(x, t, r, 0.0), np.abs),
    "huber_loss": (lambda x, t, r: aten.huber_loss(x, t, r, 0.5),
                   lambda d: np.where(np.abs(d) < 0.5, 0.5 * d * d, 0.5 * (np.abs(d) - 0.25))),
}


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(POINTWISE_LOSSES))
def test_pointwise_losses(rng, name, reduction, dtype):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    f, ref = POINTWISE_LOSSES[name]
    r = ref(a - b)
    r = r if reduction == 0 else (r.mean() if reduction == 1 else r.sum())
    close(f(T(a, dtype), T(b, dtype), reduction), r, dtype)


def test_loss_errors_and_empty():
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values "
                                           "for beta"):
        aten.smooth_l1_loss(fnx.ones(2), fnx.ones(2), 1, -1.0)
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values "
                                           "for delta"):
        aten.huber_loss(fnx.ones(2), fnx.ones(2), 1, 0.0)
    with pytest.raises(RuntimeError, match="must be broadcastable"):
        aten.mse_loss(fnx.ones(2), fnx.ones(3))
    assert np.isnan(aten.mse_loss(fnx.ones(0), fnx.ones(0)).item())
    assert aten.l1_loss(fnx.ones(0), fnx.ones(0), 2).item() == 0


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_binary_cross_entropy(rng, reduction):
    x = rng.random((3, 4)) * 0.98 + 0.01
    x[0, 0], x[0, 1] = 0.0, 1.0
    t = rng.random((3, 4))
    w = rng.random((3, 4))
    ref = -w * (t * np.maximum(np.log(np.maximum(x, 1e-300)), -100) +
                (1 - t) * np.maximum(np.log(np.maximum(1 - x, 1e-300)), -100))
    ref = ref if reduction == 0 else (ref.mean() if reduction == 1 else ref.sum())
    close(aten.binary_cross_entropy(T(x, F64), T(t, F64), T(w, F64), reduction), ref, F64)
    with pytest.raises(ValueError, match="that is different to the input size"):
        aten.binary_cross_entropy(fnx.ones(3) * 0.5, fnx.ones(2))


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_binary_cross_entropy_with_logits(rng, reduction):
    x = rng.standard_normal((3, 4)) * 30
    t = rng.random((3, 4))
    pw = rng.random(4) * 3
    w = rng.random((3, 4))
    sig = 1 / (1 + np.exp(-x))
    # written with logaddexp so that large |x| stays finite
    log_sig, log_1m = -np.logaddexp(0, -x), -np.logaddexp(0, x)
    ref = -w * (pw * t * log_sig + (1 - t) * log_1m)
    ref = ref if reduction == 0 else (ref.mean() if reduction == 1 else ref.sum())
    out = fnx.binary_cross_entropy_with_logits(T(x, F64), T(t, F64), T(w, F64), T(pw, F64),
                                               reduction)
    close(out, ref, F64)
    assert np.isfinite(sig).all()
    ref2 = -(t * log_sig + (1 - t) * log_1m).mean()
    close(fnx.binary_cross_entropy_with_logits(T(x), T(t)), ref2, F32, rtol=1e-5)


def test_kl_div(rng):
    lp = np_softmax(rng.standard_normal((3, 4)), 1, log=True)
    t = rng.random((3, 4))
    t[0, 0] = 0.0
    ref = np.where(t > 0, t * (np.log(np.where(t > 0, t, 1)) - lp), 0)
    close(fnx.kl_div(T(lp, F64), T(t, F64), 0), ref, F64)
    close(fnx.kl_div(T(lp, F64), T(np.log(t + 1e-3), F64), 2, log_target=True),
          ((t + 1e-3) * (np.log(t + 1e-3) - lp)).sum(), F64)


# =============================================================================== distances

@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, np.inf])
def test_pdist_cdist(rng, p):
    a = rng.standard_normal((5, 3))
    a[1] = a[0]                            # a zero distance
    ref = np.array([np_pnorm(a[i] - a[j], p) for i in range(5) for j in range(i + 1, 5)])
    close(fnx.pdist(T(a, F64), p), ref, F64)
    close(aten._pdist_forward(T(a), p), ref, F32, rtol=1e-5, atol=1e-6)
    x1, x2 = rng.standard_normal((2, 4, 3)), rng.standard_normal((1, 5, 3))
    ref = np_pnorm(x1[:, :, None] - x2[:, None], p)
    close(fnx.cdist(T(x1, F64), T(x2, F64), p), ref, F64)
    close(aten._cdist_forward(T(x1), T(x2), p, None), ref, F32, rtol=1e-5, atol=1e-6)


def test_distance_edges_and_errors(rng):
    assert fnx.pdist(fnx.ones(1, 3)).shape == (0,)
    assert fnx.cdist(fnx.ones(0, 3), fnx.ones(2, 3)).shape == (0, 2)
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
        fnx.pdist(fnx.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="pdist only supports non-negative p values"):
        fnx.pdist(fnx.ones(2, 2), -1)
    with pytest.raises(RuntimeError, match="X1 and X2 must have the same number of columns. "
                                           "X1: 3 X2: 4"):
        fnx.cdist(fnx.ones(2, 3), fnx.ones(2, 4))
    with pytest.raises(RuntimeError, match="cdist only supports floating-point dtypes, X1 got: "
                                           "Long"):
        fnx.cdist(fnx.ones(2, 3, dtype=fnx.int64), fnx.ones(2, 3))
    with pytest.raises(RuntimeError, match="cdist only supports at least 2D tensors, X1 got: "
                                           "1D"):
        fnx.cdist(fnx.ones(3), fnx.ones(2, 3))


def test_cosine_similarity_pairwise_distance(rng):
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((1, 3))
    b2 = np.broadcast_to(b, a.shape)
    ref = (a * b2).sum(1) / (np.maximum(np.linalg.norm(a, axis=1), 1e-8) *
                             np.maximum(np.linalg.norm(b2, axis=1), 1e-8))
    close(fnx.cosine_similarity(T(a, F64), T(b, F64)), ref, F64)
    ref0 = (a * b2).sum(0) / (np.linalg.norm(a, axis=0) * np.linalg.norm(b2, axis=0))
    close(fnx.cosine_similarity(T(a, F64), T(b, F64), 0), ref0, F64)
    close(fnx.cosine_similarity(fnx.zeros(2, 3), fnx.ones(2, 3)), [0.0, 0.0], F32)
    assert fnx.cosine_similarity(fnx.tensor([[1, 2]]), fnx.tensor([[2, 4]])).dtype is F32
    for p in (1.0, 2.0, 3.0):
        close(fnx.pairwise_distance(T(a, F64), T(b, F64), p),
              np_pnorm(a - b + 1e-6, p), F64)
    close(fnx.pairwise_distance(T(a, F64), T(b, F64), keepdim=True),
          np_pnorm(a - b + 1e-6, 2)[:, None], F64)
    close(fnx.pairwise_distance(T(a[0], F64), T(b[0], F64)), np_pnorm(a[0] - b[0] + 1e-6, 2),
          F64)


# =============================================================================== attention

def np_sdpa(q, k, v, mask=None, causal=False, scale=None):
    with np.errstate(invalid="ignore"):          # fully masked rows
        return _sdpa_ref(q, k, v, mask, is_causal=causal, scale=scale)


def test_scaled_dot_product_attention(rng):
    q, k, v = (rng.standard_normal(s) for s in ((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5)))
    sdpa = aten.scaled_dot_product_attention
    close(sdpa(T(q, F64), T(k, F64), T(v, F64)), np_sdpa(q, k, v), F64)
    close(sdpa(T(q), T(k), T(v)), np_sdpa(q, k, v), F32, rtol=1e-5, atol=1e-5)
    close(sdpa(T(q, F64), T(k, F64), T(v, F64), scale=0.3), np_sdpa(q, k, v, scale=0.3), F64)
    bm = rng.random((4, 6)) > 0.3
    bm[1] = False                                   # a fully masked row gives zeros
    close(sdpa(T(q, F64), T(k, F64), T(v, F64), T(bm)), np_sdpa(q, k, v, bm), F64)
    fm = rng.standard_normal((2, 1, 4, 6))
    close(sdpa(T(q, F64), T(k, F64), T(v, F64), T(fm, F64)), np_sdpa(q, k, v, fm), F64)
    qq = rng.standard_normal((2, 3, 6, 8))
    close(sdpa(T(qq, F64), T(k, F64), T(v, F64), None, 0.0, True),
          np_sdpa(qq, k, v, causal=True), F64)
    # grouped-query attention: 6 query heads share 3 key/value heads
    q6 = rng.standard_normal((2, 6, 4, 8))
    ref = np_sdpa(q6, np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1))
    close(sdpa(T(q6, F64), T(k, F64), T(v, F64), enable_gqa=True), ref, F64)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when "
                                           "is_causal=True"):
        sdpa(T(q), T(k), T(v), T(bm), 0.0, True)
    out = sdpa(T(q), T(k), T(v), None, 0.5)
    assert tuple(out.shape) == (2, 3, 4, 5) and out.dtype is F32


# =============================================================================== fft

@pytest.mark.parametrize("norm", [0, 1, 2])
def test_fft_r2c_c2r(rng, norm):
    a = rng.standard_normal((3, 6, 5))
    scale = {0: 1.0, 1: 1 / math.sqrt(30), 2: 1 / 30}[norm]
    r = aten._fft_r2c(T(a, F64), [1, 2], norm, True)
    assert r.dtype is fnx.complex128
    np.testing.assert_allclose(r.numpy(), np.fft.rfftn(a, axes=(1, 2)) * scale, rtol=1e-10,
                               atol=1e-12)
    r = aten._fft_r2c(T(a), [-2], norm, False)
    assert r.dtype is fnx.complex64
    scale1 = {0: 1.0, 1: 1 / math.sqrt(6), 2: 1 / 6}[norm]
    np.testing.assert_allclose(r.numpy(), np.fft.fft(a, axis=1) * scale1, rtol=1e-4,
                               atol=1e-5)
    c = np.fft.rfftn(a, axes=(1, 2))
    out = aten._fft_c2r(fnx.tensor(c), [1, 2], norm, 5)
    assert out.dtype is F64
    np.testing.assert_allclose(out.numpy(), np.fft.irfftn(c, s=(6, 5), axes=(1, 2)) * 30 *
                               scale, rtol=1e-10, atol=1e-10)
    for op, args in ((aten._fft_r2c.default, (T(a, F64), [1, 2], norm, True)),
                     (aten._fft_c2r.default, (fnx.tensor(c), [1, 2], norm, 5))):
        same(decomposed(op, *args), op(*args))


# =============================================================================== decompositions

def _core_samples():
    rng = np.random.default_rng(1)

    def r(*s, dtype=F32):
        return T(rng.standard_normal(s), dtype)
    x4 = r(2, 3, 5, 5)
    idx = fnx.tensor([[0, 3], [2, 2]])
    yield aten._softmax.default, (r(3, 4), 1, False)
    yield aten._log_softmax.default, (r(3, 4), 0, False)
    yield aten.gelu.default, (r(5),)
    yield aten.elu.default, (r(5), 0.5, 2.0, 1.5)
    yield aten.hardtanh.default, (r(5),)
    yield aten.leaky_relu.default, (r(5), 0.1)
    yield aten.native_layer_norm.default, (r(2, 3, 4), [4], r(4), r(4), 1e-5)
    yield aten.native_group_norm.default, (r(2, 4, 3), r(4), r(4), 2, 4, 3, 2, 1e-5)
    yield aten._native_batch_norm_legit.no_stats, (r(4, 3, 2), r(3), r(3), True, 0.1, 1e-5)
    yield aten._native_batch_norm_legit_no_training.default, (r(4, 3), None, None, r(3),
                                                              r(3).abs(), 0.1, 1e-5)
    yield aten.embedding.default, (r(5, 3), idx)
    yield aten.embedding_dense_backward.default, (r(2, 2, 3), idx, 5, 2, True)
    yield aten.convolution.default, (x4, r(4, 3, 3, 3), r(4), [2, 1], [1, 1], [1, 2], False,
                                     [0, 0], 1)
    yield aten.convolution.default, (x4, r(3, 2, 2, 3), r(6), [2, 1], [1, 0], [1, 1], True,
                                     [1, 0], 3)
    yield aten.max_pool2d_with_indices.default, (x4, [3, 3], [2, 2], [1, 1], [1, 1], True)
    yield aten.avg_pool2d.default, (x4, [3, 2], [2, 1], [1, 1], True, False)
    yield aten._adaptive_avg_pool2d.default, (x4, [3, 2])
    yield aten.reflection_pad2d.default, (x4, [1, 2, 2, 0])
    yield aten.replication_pad2d.default, (x4, [1, 2, 2, 0])
    yield aten.upsample_nearest2d.vec, (x4, [7, 3], None)
    yield aten.upsample_bilinear2d.vec, (x4, [7, 3], False, None)
    yield aten.grid_sampler_2d.default, (x4, T(rng.uniform(-1, 1, (2, 3, 4, 2))), 0, 0, False)
    yield aten._pdist_forward.default, (r(4, 3), 2.0)
    yield aten._cdist_forward.default, (r(3, 2), r(4, 2), 1.0, None)
    yield aten.col2im.default, (r(2, 12, 9), [4, 4], [2, 2], [1, 1], [0, 0], [1, 1])
    yield aten._fft_r2c.default, (r(4, 6), [1], 2, True)


_CORE_SAMPLES = list(_core_samples())


@pytest.mark.parametrize("op,args", _CORE_SAMPLES,
                         ids=[f"{op.name}.{op.overload_name}" for op, _ in _CORE_SAMPLES])
def test_core_decomposes_to_prims(op, args):
    """Decomposed all the way to prims, each core op runs only prims and agrees with eager;
    its meta function gives the eager shapes and dtypes."""
    eager = op(*args)
    out, ran = run_decomposed(op, *args, to="prims")
    bad = sorted(str(o) for o in ran if "prim" not in o.tags)
    assert not bad, bad
    same(out, eager, rtol=1e-4, atol=1e-5)
    meta_args = [fnx.empty(*a.shape, dtype=a.dtype, device="meta")
                 if isinstance(a, fnx.Tensor) else a for a in args]
    m = op(*meta_args)
    for mt, et in zip(m if isinstance(m, tuple) else [m],
                      eager if isinstance(eager, tuple) else [eager]):
        assert tuple(mt.shape) == tuple(et.shape) and mt.dtype is et.dtype


def test_aten_level_decomposes_to_core():
    x, w, logits = fnx.randn(2, 3, 6, 6), fnx.randn(4, 3, 3, 3), fnx.randn(4, 5)
    for fn in (lambda: fnx.conv2d(x, w, padding="same"),
               lambda: fnx.max_pool2d(x, 2),
               lambda: aten.cross_entropy_loss(logits, fnx.tensor([0, 1, 2, 3]), None, 1,
                                               -100, 0.1),
               lambda: fnx.layer_norm(x, [6]),
               lambda: aten.silu(x)):
        eager = fn()
        out, ran = run_decomposed(fn, to="core")
        bad = sorted(str(o) for o in ran if not ({"core", "prim"} & o.tags))
        assert not bad, bad
        same(out, eager, rtol=1e-4, atol=1e-5)
