"""Issue 14's smaller Tensor methods (fnx/api/tensor_extras.py, fnx/api/inplace_views.py)
and the shift operators, against NumPy / math / hand-computed values."""
import math
import warnings

import numpy as np
import pytest

import fnx


def test_predicates():
    assert fnx.tensor([2.5]).is_nonzero() and not fnx.is_nonzero(fnx.tensor(0))
    for t, msg in ((fnx.tensor([1, 2]), "more than one value"), (fnx.tensor([]), "no values")):
        with pytest.raises(RuntimeError, match=msg):
            t.is_nonzero()
    assert fnx.ones(2, 3).is_same_size(fnx.zeros(2, 3))
    assert not fnx.is_same_size(fnx.ones(2, 3), fnx.ones(3, 2))
    signed = {d: np.dtype(d.numpy).kind in "ifc" for d in
              (fnx.uint8, fnx.int8, fnx.int64, fnx.float32, fnx.bool, fnx.complex64)}
    for d, want in signed.items():
        assert fnx.is_signed(fnx.zeros(1, dtype=d)) == want, d
    x = fnx.ones(1)
    assert not fnx.is_neg(x) and x.resolve_neg() is x and not x.is_inference()


def test_dim_order_and_data_ptr():
    assert fnx.ones(2, 3, 4).dim_order() == (0, 1, 2)
    assert fnx.ones(2, 3, 4).permute(2, 0, 1).dim_order() == (1, 2, 0)
    x = fnx.arange(10.0)
    assert x[3:].data_ptr() - x.data_ptr() == 3 * 4
    assert x.const_data_ptr() == x.data_ptr() != 0
    assert x.view(2, 5).data_ptr() == x.data_ptr()


def test_memory_flags():
    x = fnx.ones(2)
    assert not x.is_pinned() and not x.is_shared()
    assert x.share_memory_() is x and x.is_shared()
    assert x.record_stream(None) is None
    if not fnx.cuda.is_available():
        with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
            x.pin_memory()
    else:
        p = x.pin_memory()
        assert p.is_pinned() and p.tolist() == [1.0, 1.0] and not x.is_pinned()


def test_new():
    x = fnx.tensor([1.5], dtype=fnx.float64)
    y = x.new([1, 2])
    assert y.dtype is fnx.float64 and y.tolist() == [1.0, 2.0]
    assert x.new(2, 3).shape == (2, 3) and x.new(fnx.Size([4])).shape == (4,)
    assert x.new().shape == (0,) and x.new().dtype is fnx.float64
    assert fnx.tensor([1]).new([1.7]).tolist() == [1]               # cast to self's dtype
    z = fnx.zeros(2, dtype=fnx.float64)
    assert x.new(z).data_ptr() == z.data_ptr()
    with pytest.raises(TypeError):
        x.new(fnx.zeros(2, dtype=fnx.int64))


def test_apply_map_map2():
    x = fnx.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.apply_(lambda v: v * v + 1) is x
    np.testing.assert_array_equal(x.numpy(), [[2, 5], [10, 17]])
    x.map_(fnx.tensor([10.0, 20.0]), lambda a, b: a - b)             # broadcast
    np.testing.assert_array_equal(x.numpy(), [[-8, -15], [0, -3]])
    x.map2_(fnx.tensor(1.0), fnx.ones(2, 2), lambda a, b, c: max(a, b + c))
    np.testing.assert_array_equal(x.numpy(), [[2, 2], [2, 2]])
    w = fnx.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call apply_\\(\\) on Variable that requires"):
        w.apply_(abs)


def test_random_fills_statistics():
    fnx.manual_seed(0)
    n = 20000
    c = fnx.empty(n, dtype=fnx.float64).cauchy_(1.0, 2.0).numpy()
    assert abs(np.median(c) - 1.0) < 0.1                     # median 1
    q75, q25 = np.percentile(c, [75, 25])
    assert abs((q75 - q25) / 2 - 2.0) < 0.15                 # half the IQR is sigma
    g = fnx.zeros(n, dtype=fnx.int64).geometric_(0.25).numpy()
    assert g.min() >= 1 and abs(g.mean() - 4.0) < 0.15       # mean 1/p
    ln = fnx.empty(n).log_normal_(0.5, 0.25).numpy()
    assert abs(np.log(ln).mean() - 0.5) < 0.01 and abs(np.log(ln).std() - 0.25) < 0.01
    fnx.manual_seed(3)
    a = fnx.empty(5).cauchy_()
    fnx.manual_seed(3)
    assert a.tolist() == fnx.empty(5).cauchy_().tolist()       # fnx's generator
    with pytest.raises(RuntimeError, match="geometric_ expects p to be in \\(0, 1\\)"):
        fnx.zeros(2).geometric_(1.5)
    with pytest.raises(RuntimeError, match="dtype must be a floating point"):
        fnx.zeros(2, dtype=fnx.int64).cauchy_()
    with pytest.raises(RuntimeError, match="log_normal_ expects std > 0.0"):
        fnx.zeros(2).log_normal_(std=-1)


def test_sum_to_size():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = fnx.from_numpy(a)
    np.testing.assert_array_equal(x.sum_to_size(3, 1).numpy(), a.sum(0).sum(1, keepdims=True))
    np.testing.assert_array_equal(x.sum_to_size((1, 3, 4)).numpy(), a.sum(0, keepdims=True))
    assert x.sum_to_size(2, 3, 4) is x
    with pytest.raises(RuntimeError, match="is not expandable to size"):
        x.sum_to_size(2, 4)


def test_fill_diagonal_():
    want = np.zeros((7, 3))
    for r in (0, 1, 2, 4, 5, 6):          # wrap: the diagonal restarts after a skipped row
        want[r, r % 4] = 5
    np.testing.assert_array_equal(fnx.zeros(7, 3).fill_diagonal_(5, wrap=True).numpy(), want)
    np.testing.assert_array_equal(fnx.zeros(7, 3).fill_diagonal_(5).numpy(),
                                  np.pad(np.eye(3) * 5, ((0, 4), (0, 0))))
    cube = fnx.zeros(3, 3, 3).fill_diagonal_(2).numpy()
    assert cube.sum() == 6 and all(cube[i, i, i] == 2 for i in range(3))
    t = fnx.zeros(3, 2).t()                                    # strided target
    assert t.fill_diagonal_(1.5) is t
    np.testing.assert_array_equal(t.numpy(), [[1.5, 0, 0], [0, 1.5, 0]])
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        fnx.zeros(2, 3, 3).fill_diagonal_(1)


def _renorm_ref(a, p, dim, maxnorm):
    moved = np.moveaxis(a, dim, 0)
    out = moved.copy()
    for i in range(moved.shape[0]):
        n = np.sum(np.abs(moved[i]) ** p) ** (1 / p)
        if n > maxnorm:
            out[i] = moved[i] * (maxnorm / (n + 1e-7))
    return np.moveaxis(out, 0, dim)


@pytest.mark.parametrize("p,dim,maxnorm", [(2, 0, 1.0), (1, 1, 2.5), (3, -1, 0.5)])
def test_renorm(p, dim, maxnorm):
    a = np.random.default_rng(0).normal(size=(3, 4, 2))
    np.testing.assert_allclose(fnx.renorm(fnx.from_numpy(a), p, dim, maxnorm).numpy(),
                               _renorm_ref(a, p, dim, maxnorm), rtol=1e-10)
    x = fnx.from_numpy(a.copy())
    assert x.renorm_(p, dim, maxnorm) is x
    np.testing.assert_allclose(x.numpy(), _renorm_ref(a, p, dim, maxnorm), rtol=1e-10)
    with pytest.raises(RuntimeError, match="non-positive-norm"):
        fnx.renorm(fnx.from_numpy(a), 0, 0, 1.0)


def test_renorm_gradient_matches_finite_differences():
    a = np.array([[3.0, 4.0], [0.3, 0.4]])
    w = fnx.tensor(a, requires_grad=True)
    weight = np.array([[1.0, -2.0], [0.5, 3.0]])
    (fnx.renorm(w, 2, 0, 1.0) * fnx.from_numpy(weight)).sum().backward()
    eps, num = 1e-6, np.zeros_like(a)
    for idx in np.ndindex(*a.shape):
        hi, lo = a.copy(), a.copy()
        hi[idx] += eps
        lo[idx] -= eps
        num[idx] = ((_renorm_ref(hi, 2, 0, 1.0) - _renorm_ref(lo, 2, 0, 1.0)) * weight).sum() \
            / (2 * eps)
    np.testing.assert_allclose(w.grad.numpy(), num, rtol=1e-5, atol=1e-7)


def _nonzero_static_ref(a, size, fill):
    nz = np.argwhere(a)[:size]
    out = np.full((size, a.ndim), fill, np.int64)
    out[:len(nz)] = nz
    return out


@pytest.mark.parametrize("size,fill", [(2, -1), (6, -7), (0, -1)])
def test_nonzero_static(size, fill):
    a = np.array([[0, 3, 0], [1, 0, 2]])
    got = fnx.nonzero_static(fnx.from_numpy(a), size=size, fill_value=fill)
    assert got.dtype is fnx.int64
    np.testing.assert_array_equal(got.numpy(), _nonzero_static_ref(a, size, fill))
    np.testing.assert_array_equal(fnx.from_numpy(a).nonzero_static(size=size,
                                                                   fill_value=fill).numpy(),
                                  _nonzero_static_ref(a, size, fill))
    compiled = fnx.compile(lambda t: fnx.nonzero_static(t, size=size, fill_value=fill))
    np.testing.assert_array_equal(compiled(fnx.from_numpy(a)).numpy(),
                                  _nonzero_static_ref(a, size, fill))


def test_method_bindings():
    x = fnx.tensor([-1.0, 0.2, 2.0])
    assert x.broadcast_to((2, 3)).shape == (2, 3)
    np.testing.assert_allclose(x.hardshrink(0.5).numpy(), [-1.0, 0.0, 2.0])
    np.testing.assert_allclose(x.prelu(fnx.tensor([0.25])).numpy(), [-0.25, 0.2, 2.0])


# ----------------------------------------------------------------------- geometry in place

@pytest.mark.parametrize("name,args,ref", [
    ("t_", (), lambda a: a.T), ("transpose_", (0, 1), lambda a: a.T),
    ("swapaxes_", (1, 0), lambda a: a.T), ("swapdims_", (0, -1), lambda a: a.T),
    ("unsqueeze_", (1,), lambda a: a[:, None]),
    ("as_strided_", ((2, 2), (1, 3), 1), lambda a: np.lib.stride_tricks.as_strided(
        a.reshape(-1)[1:], (2, 2), (8, 24)))])
def test_geometry_in_place(name, args, ref):
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    base = fnx.from_numpy(a.copy())
    x = base.view(2, 3)
    assert getattr(x, name)(*args) is x
    np.testing.assert_array_equal(x.numpy(), ref(a))
    x.mul_(10)                                                   # still shares base's data
    assert base.numpy().sum() == ref(a).sum() * 10 + (a.sum() - ref(a).sum())


def test_squeeze_and_views_keep_sharing():
    b = fnx.zeros(1, 3, 1)
    row = b[0]
    assert b.squeeze_().shape == (3,)
    row[1, 0] = 4.0
    assert b.tolist() == [0.0, 4.0, 0.0]


def test_geometry_in_place_autograd_and_refusals():
    w = fnx.arange(6.0, requires_grad=True)
    c = (w * 1).reshape(2, 3)
    c.t_()
    weight = np.arange(6.0).reshape(3, 2)
    (c * fnx.from_numpy(weight)).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), weight.T.reshape(-1))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        fnx.ones(2, 3, requires_grad=True).t_()
    # an in-place view op cannot be traced: the function runs eagerly, with a warning
    with pytest.warns(UserWarning, match=r"raised NotImplementedError \(t_: .*while "
                                         r"fnx.compile traces.*running it eagerly"):
        out = fnx.compile(lambda t: t.t_())(fnx.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(out.numpy(), np.arange(6.0).reshape(2, 3).T)


def test_resize():
    x = fnx.arange(6.0)
    assert x.resize_(2, 2) is x
    assert x.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    x.resize_(3, 3)                              # grows: the old elements come first
    assert x.shape == (3, 3) and x.reshape(-1)[:4].tolist() == [0.0, 1.0, 2.0, 3.0]
    y = fnx.arange(4).resize_as_(fnx.zeros(1, 4))
    assert y.tolist() == [[0, 1, 2, 3]]
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        fnx.ones(2, requires_grad=True).resize_(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        z = fnx.arange(6).resize(3, 2)
    assert z.tolist() == [[0, 1], [2, 3], [4, 5]]
    assert "non-inplace resize is deprecated" in str(caught[0].message)
    with pytest.raises(RuntimeError, match="can only change the shape"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fnx.arange(6).resize(4)


# --------------------------------------------------------------------------------- shifts

def test_shift_operators_python_semantics():
    vals = [-100, -3, -1, 0, 1, 5, 77, 127]
    for dt, bits in ((fnx.int8, 8), (fnx.int32, 32), (fnx.int64, 64)):
        lo = -(1 << (bits - 1))
        x = fnx.tensor(vals, dtype=dt)
        for s in (0, 1, 3, bits - 1, bits, bits + 5):
            def wrap(v):
                return (v - lo) % (1 << bits) + lo
            want_l = [0 if s >= bits else wrap(v << s) for v in vals]
            want_r = [(-1 if v < 0 else 0) if s >= bits else v >> s for v in vals]
            assert (x << s).tolist() == want_l, (dt, s)
            assert (x >> s).tolist() == want_r, (dt, s)
    u = fnx.tensor([200, 3], dtype=fnx.uint8)
    assert (u >> 1).tolist() == [100, 1] and (u << 1).tolist() == [144, 6]   # logical, wraps
    assert (2 << fnx.tensor([1, 3])).tolist() == [4, 16]
    assert (100 >> fnx.tensor([1, 3])).tolist() == [50, 12]
    x = fnx.tensor([1, 2], dtype=fnx.int8)
    x <<= fnx.tensor([3, 6])
    assert x.tolist() == [8, -128] and x.dtype is fnx.int8
    x >>= 2
    assert x.tolist() == [2, -32]
    assert fnx.bitwise_left_shift(fnx.tensor([1]), fnx.tensor([62])).tolist() == [1 << 62]
    assert math.isclose(fnx.bitwise_right_shift(fnx.tensor([-9]), 1).item(), -5)


def test_shift_errors_leave_target_unchanged():
    with pytest.raises(NotImplementedError, match="\"lshift_cpu\" not implemented for 'Float'"):
        fnx.tensor([1.5]) << 1
    with pytest.raises(NotImplementedError, match="\"rshift_cpu\" not implemented for 'Bool'"):
        fnx.tensor([True]) >> fnx.tensor([True])
    x = fnx.tensor([1, 2])
    with pytest.raises(RuntimeError):
        x.bitwise_left_shift_(fnx.tensor([1.0, 2.0]))
    assert x.tolist() == [1, 2]


def test_shifts_compiled_match_eager():
    def f(a, b):
        return a << b, a >> b, (a >> 1) << 2

    for dt in (fnx.int8, fnx.uint8, fnx.int64):
        a = fnx.tensor([1, 3, 100, 127], dtype=dt)
        b = fnx.tensor([0, 7, 8, 70 if dt is fnx.int64 else 9], dtype=dt)
        for e, c in zip(f(a, b), fnx.compile(f)(a, b)):
            assert e.tolist() == c.tolist() and e.dtype is c.dtype


def test_function_forms_of_geometry_ops():
    x = fnx.arange(6.0)
    assert fnx.as_strided_(x, (2, 2), (1, 2), 1) is x
    assert x.tolist() == [[1.0, 3.0], [2.0, 4.0]]
    y = fnx.arange(6)
    assert fnx.resize_as_(y, fnx.ones(3, 2)) is y and y.tolist() == [[0, 1], [2, 3], [4, 5]]


def test_random_fills_and_autograd():
    w = fnx.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w.cauchy_()
    y = w * 2
    y.log_normal_()                      # a fill cuts the history: zero gradient
    y.sum().backward()
    assert w.grad.tolist() == [0.0, 0.0]
