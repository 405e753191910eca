"""Matrix products against NumPy: mm, bmm, addmm, baddbmm, dot, mv, matmul (every 1-D and
batch-broadcast rule), outer, linear, einsum, tensordot; dtypes (no promotion), PyTorch's
errors, meta shapes and decomposition levels."""
import numpy as np
import pytest

import fnx
from fnx.dispatch import DispatchKey
from fnx.ops import aten

F16, BF16 = fnx.float16, fnx.bfloat16
DTYPES = [fnx.float32, fnx.float64, F16, BF16, fnx.int64, fnx.int32, fnx.complex64]


def make(shape, dtype, rng):
    if dtype.is_complex:
        a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    elif dtype.is_floating_point:
        a = rng.uniform(-2, 2, shape)
    else:
        a = rng.integers(-5, 6, shape)
    a = np.asarray(a).astype(dtype.numpy)
    return fnx.from_numpy(a.copy()), a.astype(np.complex128 if dtype.is_complex else
                                              np.float64)


def check(t, ref, dtype):
    assert t.dtype is dtype
    ref = np.asarray(ref)
    assert tuple(t.shape) == ref.shape
    rtol = {F16: 1e-2, BF16: 5e-2, fnx.float32: 1e-5, fnx.complex64: 1e-5}.get(dtype, 1e-12)
    got = np.asarray(t.numpy()).astype(np.complex128 if dtype.is_complex else np.float64)
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * 10)


# --------------------------------------------------------------------------- mm, bmm, addmm

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("s1,s2", [((2, 3), (3, 4)), ((1, 1), (1, 1)), ((0, 3), (3, 2)),
                                   ((2, 0), (0, 3)), ((4, 5), (5, 0))])
def test_mm(dtype, s1, s2, rng):
    (x, a), (y, b) = make(s1, dtype, rng), make(s2, dtype, rng)
    check(fnx.mm(x, y), a @ b, dtype)
    check(x.mm(y), a @ b, dtype)


def test_mm_integer_results_and_errors():
    r = fnx.mm(fnx.tensor([[1, 2]]), fnx.tensor([[3], [4]]))
    assert r.dtype is fnx.int64 and r.tolist() == [[11]]
    r = fnx.mm(fnx.tensor([[1, 2]], dtype=fnx.int32), fnx.tensor([[3], [4]], dtype=fnx.int32))
    assert r.dtype is fnx.int32
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(2x3 and 4x5\)"):
        fnx.mm(fnx.ones(2, 3), fnx.ones(4, 5))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but "
                                           "got: float != double"):
        fnx.mm(fnx.ones(2, 2), fnx.ones(2, 2, dtype=fnx.float64))
    with pytest.raises(RuntimeError, match="got: long int != float"):
        fnx.mm(fnx.tensor([[1]]), fnx.ones(1, 1))
    with pytest.raises(RuntimeError, match="self must be a matrix"):
        fnx.mm(fnx.ones(2), fnx.ones(2, 2))
    with pytest.raises(RuntimeError, match="mat2 must be a matrix"):
        fnx.mm(fnx.ones(2, 2), fnx.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
        fnx.mm(fnx.tensor([[True]]), fnx.tensor([[True]]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("s1,s2", [((3, 2, 4), (3, 4, 5)), ((0, 2, 3), (0, 3, 1)),
                                   ((2, 1, 0), (2, 0, 3))])
def test_bmm(dtype, s1, s2, rng):
    (x, a), (y, b) = make(s1, dtype, rng), make(s2, dtype, rng)
    check(fnx.bmm(x, y), np.matmul(a, b), dtype)


def test_bmm_errors():
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        fnx.bmm(fnx.ones(2, 2), fnx.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="batch2 must be a 3D tensor"):
        fnx.bmm(fnx.ones(2, 2, 2), fnx.ones(2, 2))
    with pytest.raises(RuntimeError, match=r"Expected size for first two dimensions of batch2 "
                                           r"tensor to be: \[10, 4\] but got: \[11, 4\]\."):
        fnx.bmm(fnx.ones(10, 3, 4), fnx.ones(11, 4, 5))
    with pytest.raises(RuntimeError, match="same dtype"):
        fnx.bmm(fnx.ones(1, 2, 2), fnx.ones(1, 2, 2, dtype=F16))


@pytest.mark.parametrize("dtype", [fnx.float32, fnx.float64, F16, fnx.int64])
@pytest.mark.parametrize("bias_shape", [(2, 4), (4,), (1, 4), (2, 1), ()])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2), (0, 1), (2, 0)])
def test_addmm(dtype, bias_shape, beta, alpha, rng):
    if not dtype.is_floating_point:
        beta, alpha = int(beta * 2), int(alpha)
    (c, cc), (x, a), (y, b) = (make(bias_shape, dtype, rng), make((2, 3), dtype, rng),
                               make((3, 4), dtype, rng))
    check(fnx.addmm(c, x, y, beta=beta, alpha=alpha), beta * cc + alpha * (a @ b), dtype)
    check(c.addmm(x, y, beta=beta, alpha=alpha) if c.ndim else
          fnx.addmm(c, x, y, beta=beta, alpha=alpha), beta * cc + alpha * (a @ b), dtype)


def test_addmm_beta_zero_ignores_nan_and_errors():
    nan = float("nan")
    r = fnx.addmm(fnx.tensor([nan, nan]), fnx.eye(2), fnx.eye(2), beta=0)
    assert r.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(RuntimeError, match="expanded size of self"):
        fnx.addmm(fnx.ones(3), fnx.ones(2, 3), fnx.ones(3, 4))
    with pytest.raises(RuntimeError, match="self and mat2 must have the same dtype, but got "
                                           "Double and Float"):
        fnx.addmm(fnx.ones(4, dtype=fnx.float64), fnx.ones(2, 3), fnx.ones(3, 4))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        fnx.addmm(fnx.ones(4), fnx.ones(2, 3), fnx.ones(2, 4))


def test_baddbmm(rng):
    (c, cc), (x, a), (y, b) = (make((1, 4), fnx.float64, rng),
                               make((3, 2, 5), fnx.float64, rng),
                               make((3, 5, 4), fnx.float64, rng))
    check(fnx.baddbmm(c, x, y), cc + a @ b, fnx.float64)
    check(c.baddbmm(x, y, beta=0.5, alpha=-1), 0.5 * cc - a @ b, fnx.float64)
    r = fnx.baddbmm(fnx.full((1,), float("nan"), dtype=fnx.float64), x, y, beta=0)
    check(r, a @ b, fnx.float64)
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        fnx.baddbmm(c, fnx.ones(2, 2), fnx.ones(2, 2, 2))


# --------------------------------------------------------------------------- dot, mv

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 7])
def test_dot_mv(dtype, n, rng):
    (x, a), (y, b), (m, mm) = (make((n,), dtype, rng), make((n,), dtype, rng),
                               make((3, n), dtype, rng))
    check(fnx.dot(x, y), np.dot(a, b), dtype)
    check(x.dot(y), np.dot(a, b), dtype)
    check(fnx.mv(m, x), mm @ a, dtype)
    check(m.mv(x), mm @ a, dtype)


def test_dot_mv_errors():
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D tensors"):
        fnx.dot(fnx.ones(2, 2), fnx.ones(2))
    with pytest.raises(RuntimeError, match=r"inconsistent tensor size, expected tensor \[3\] "
                                           r"and src \[4\] to have the same number of elements"):
        fnx.dot(fnx.ones(3), fnx.ones(4))
    with pytest.raises(RuntimeError, match="dot : expected both vectors to have same dtype, "
                                           "but found Float and Double"):
        fnx.dot(fnx.ones(3), fnx.ones(3, dtype=fnx.float64))
    with pytest.raises(RuntimeError, match=r"size mismatch, got input \(2\), mat \(2x3\), "
                                           r"vec \(4\)"):
        fnx.mv(fnx.ones(2, 3), fnx.ones(4))
    with pytest.raises(RuntimeError, match="vector \\+ matrix @ vector expected"):
        fnx.mv(fnx.ones(2), fnx.ones(2))


# --------------------------------------------------------------------------- matmul

MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)),
    ((1, 5, 2, 3), (4, 1, 3, 2)), ((2, 1, 2, 3), (7, 3, 4)), ((0, 2, 3), (3, 4)),
    ((4, 0, 3), (4, 3, 2)), ((2, 3, 0), (0, 5)), ((6, 2, 3), (6, 3, 2)), ((0,), (0,)),
]


@pytest.mark.parametrize("dtype", [fnx.float32, fnx.float64, F16, fnx.int64, fnx.complex64])
@pytest.mark.parametrize("s1,s2", MATMUL_SHAPES)
def test_matmul(dtype, s1, s2, rng):
    (x, a), (y, b) = make(s1, dtype, rng), make(s2, dtype, rng)
    ref = np.matmul(a, b)
    check(fnx.matmul(x, y), ref, dtype)
    check(x @ y, ref, dtype)
    check(x.matmul(y), ref, dtype)
    m = aten.matmul.default(aten._to_copy.default(x, device=fnx.device("meta")),
                            aten._to_copy.default(y, device=fnx.device("meta")))
    assert m.shape == ref.shape and m.dtype is dtype


def test_matmul_errors():
    with pytest.raises(RuntimeError, match="both arguments to matmul need to be at least 1D, "
                                           "but they are 0D and 1D"):
        fnx.matmul(fnx.tensor(1.0), fnx.ones(2))
    with pytest.raises(RuntimeError, match="but they are 2D and 0D"):
        fnx.ones(2, 2) @ fnx.tensor(2.0)
    with pytest.raises(RuntimeError, match=r"\(2x3 and 4x5\)"):
        fnx.ones(2, 3) @ fnx.ones(4, 5)
    with pytest.raises(RuntimeError, match=r"\(1x3 and 4x5\)"):
        fnx.ones(3) @ fnx.ones(4, 5)
    with pytest.raises(RuntimeError, match="inconsistent tensor size"):
        fnx.ones(3) @ fnx.ones(4)
    with pytest.raises(RuntimeError, match="size mismatch"):
        fnx.ones(2, 3) @ fnx.ones(4)
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        fnx.ones(2, 2, 3) @ fnx.ones(3, 3, 4)
    with pytest.raises(RuntimeError, match="Expected size for first two dimensions of batch2"):
        fnx.ones(2, 2, 3) @ fnx.ones(2, 4, 4)
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but "
                                           "got: float != double"):
        fnx.ones(2, 2) @ fnx.ones(2, 2, dtype=fnx.float64)
    with pytest.raises(RuntimeError, match="same dtype"):
        fnx.ones(2, 2, 2) @ fnx.ones(2, 2, 2, dtype=F16)


def test_matmul_integer_and_operators():
    x = fnx.tensor([[1, 2], [3, 4]])
    r = x @ x
    assert r.dtype is fnx.int64 and r.tolist() == [[7, 10], [15, 22]]
    r = np.array([[1, 0], [0, 1]]) @ x                      # __rmatmul__
    assert isinstance(r, fnx.Tensor) and r.tolist() == [[1, 2], [3, 4]]
    r = (fnx.tensor([1, 1]) @ x)
    assert r.shape == (2,) and r.tolist() == [4, 6]


def test_matmul_is_a_decomposition():
    op = aten.matmul.default
    assert "core" not in op.tags and DispatchKey.CPU not in op.kernels
    assert op.has_kernel_for(DispatchKey.CPU)            # CompositeImplicit: mm/bmm/dot/mv
    for name in ("mm", "bmm", "addmm"):
        assert "core" in getattr(aten, name).default.tags


# --------------------------------------------------------------------------- outer, linear

def test_outer(rng):
    (x, a), (y, b) = make((3,), fnx.int64, rng), make((4,), fnx.float32, rng)
    check(fnx.outer(x, y), np.outer(a, b), fnx.float32)        # outer promotes
    check(x.outer(x), np.outer(a, a), fnx.int64)
    check(fnx.ger(x, x), np.outer(a, a), fnx.int64)
    assert fnx.outer(fnx.ones(0), fnx.ones(2)).shape == (0, 2)
    with pytest.raises(RuntimeError, match="outer: Expected 1-D argument self, but got 2-D"):
        fnx.outer(fnx.ones(2, 2), fnx.ones(2))
    with pytest.raises(RuntimeError, match="outer: Expected 1-D argument vec2, but got 0-D"):
        fnx.outer(fnx.ones(2), fnx.tensor(1.0))


@pytest.mark.parametrize("in_shape,w_shape,b_shape", [
    ((4, 3), (5, 3), (5,)), ((4, 3), (5, 3), None), ((3,), (5, 3), (5,)),
    ((2, 4, 3), (5, 3), (5,)), ((2, 4, 3), (5, 3), None), ((4, 3), (3,), ()),
    ((0, 3), (2, 3), (2,)), ((2, 3), (5, 3), (2, 5)),
])
def test_linear(in_shape, w_shape, b_shape, rng):
    (x, a), (w, ww) = make(in_shape, fnx.float64, rng), make(w_shape, fnx.float64, rng)
    ref = a @ ww.T
    bias = None
    if b_shape is not None:
        bias, bb = make(b_shape, fnx.float64, rng)
        ref = ref + bb
    check(aten.linear.default(x, w, bias), ref, fnx.float64)
    m = aten.linear.default.meta(x, w, bias)
    assert tuple(m.shape) == ref.shape and m.dtype is fnx.float64


def test_linear_errors():
    with pytest.raises(RuntimeError, match=r"\(4x3 and 2x5\)"):
        aten.linear.default(fnx.ones(4, 3), fnx.ones(5, 2))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
        aten.linear.default(fnx.ones(4, 3), fnx.ones(5, 3, dtype=fnx.float64))
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions"):
        aten.linear.default(fnx.ones(4, 3), fnx.ones(1, 5, 3))


# --------------------------------------------------------------------------- einsum, tensordot

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]), ("ij->ji", [(2, 3)]), ("ba", [(2, 3)]), ("i,j->ij", [(2,), (3,)]),
    ("i,i->", [(4,), (4,)]), ("bij,bjk->bik", [(5, 2, 3), (5, 3, 2)]),
    ("...ij,...jk->...ik", [(4, 2, 3), (3, 2)]), ("...ij,...jk", [(2, 1, 2, 3), (5, 3, 2)]),
    ("i...->...", [(3, 2, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("b i j , b j -> b i", [(2, 3, 4), (2, 4)]), ("i,i->i", [(1,), (3,)]), ("ij->", [(0, 3)]),
    ("Aa,aB->AB", [(2, 3), (3, 2)]),
]


@pytest.mark.parametrize("dtype", [fnx.float32, fnx.float64, fnx.int64, F16])
@pytest.mark.parametrize("eq,shapes", EINSUM_CASES)
def test_einsum(dtype, eq, shapes, rng):
    made = [make(s, dtype, rng) for s in shapes]
    ts, arrays = [m[0] for m in made], [m[1] for m in made]
    if eq == "i...->...":
        ref = np.einsum("i...->...", *arrays)
    elif eq == "i,i->i":
        ref = arrays[0] * arrays[1]                        # size-1 labels broadcast
    else:
        ref = np.einsum(eq.replace(" ", ""), *arrays)
    check(fnx.einsum(eq, *ts), ref, dtype)
    check(fnx.einsum(eq, ts), ref, dtype)                    # operands as one list


def test_einsum_result_never_aliases_and_ellipsis_sum():
    x = fnx.tensor([[1., 2.], [3., 4.]])
    t = fnx.einsum("ij->ji", x)
    t.add_(10)
    assert x.tolist() == [[1., 2.], [3., 4.]]
    # ellipsis dims missing from an explicit output are summed
    assert fnx.einsum("...i->i", fnx.ones(2, 3, 4)).tolist() == [6.0] * 4


def test_einsum_errors():
    a = fnx.ones(2, 3)
    with pytest.raises(RuntimeError, match="more operands were provided than specified"):
        fnx.einsum("ij", a, a)
    with pytest.raises(RuntimeError, match="fewer operands were provided than specified"):
        fnx.einsum("ij,jk", a)
    with pytest.raises(RuntimeError, match=r"number of subscripts in the equation \(3\) does "
                                           r"not match the number of dimensions \(2\) for "
                                           r"operand 0 and no ellipsis was given"):
        fnx.einsum("ijk", a)
    with pytest.raises(RuntimeError, match="invalid subscript given at index 1"):
        fnx.einsum("i1", a)
    with pytest.raises(RuntimeError, match="subscript j has size 2 for operand 1"):
        fnx.einsum("ij,jk", a, a)
    with pytest.raises(RuntimeError, match="repeated for operand 0 but the sizes don't match"):
        fnx.einsum("ii", a)
    with pytest.raises(RuntimeError, match="output subscript k does not appear"):
        fnx.einsum("ij->k", a)
    with pytest.raises(RuntimeError, match="output subscript i appears more than once"):
        fnx.einsum("ij->ii", a)
    with pytest.raises(RuntimeError, match="same dtype, but got Float and Double"):
        fnx.einsum("ij,jk", a, fnx.ones(3, 2, dtype=fnx.float64))
    with pytest.raises(RuntimeError, match="found '.' for operand 0"):
        fnx.einsum("i.j", a)


@pytest.mark.parametrize("s1,s2,dims", [((2, 3, 4), (3, 4, 5), 2), ((2, 3), (3, 2), 1),
                                        ((2, 3), (4, 5), 0), ((3, 4, 5), (4, 3), ([0, 1], [1, 0])),
                                        ((2, 3, 4), (4, 2), ([-1, 0], [0, 1])),
                                        ((3, 4), (4,), (1, 0))])
def test_tensordot(s1, s2, dims, rng):
    (x, a), (y, b) = make(s1, fnx.float64, rng), make(s2, fnx.float64, rng)
    ref = np.tensordot(a, b, axes=dims if not isinstance(dims, tuple) or
                       isinstance(dims[0], list) else ([dims[0]], [dims[1]]))
    check(fnx.tensordot(x, y, dims=dims), ref, fnx.float64)


def test_tensordot_errors():
    with pytest.raises(RuntimeError, match="contracted dimensions need to match, but first has "
                                           "size 3 in dim 1 and second has size 4 in dim 0"):
        fnx.tensordot(fnx.ones(2, 3), fnx.ones(4, 2), dims=([1], [0]))
    with pytest.raises(RuntimeError, match="both dimension lists should have same length"):
        fnx.tensordot(fnx.ones(2, 3), fnx.ones(3, 2), dims=([1], [0, 1]))
    with pytest.raises(RuntimeError, match="tensordot expects dims >= 0"):
        fnx.tensordot(fnx.ones(2), fnx.ones(2), dims=-1)


@pytest.mark.parametrize("call", [
    lambda x, y: aten.mm.default(x[0], y), lambda x, y: aten.addmm.default(x[1], x[0], y),
    lambda x, y: aten.dot.default(x[2], x[2]), lambda x, y: aten.mv.default(x[0], x[2]),
    lambda x, y: aten.einsum.default("ij,jk->ki", [x[0], y]),
])
def test_meta_matches_cpu(call, rng):
    x = [make((2, 3), fnx.float32, rng)[0], make((3,), fnx.float32, rng)[0],
         make((3,), fnx.float32, rng)[0]]
    x[1] = make((4,), fnx.float32, rng)[0]
    y = make((3, 4), fnx.float32, rng)[0]

    def meta(t):
        return aten._to_copy.default(t, device=fnx.device("meta"))
    real = call(x, y)
    m = call([meta(t) for t in x], meta(y))
    assert m.device.type == "meta" and m.shape == real.shape and m.dtype is real.dtype


def test_decompositions_of_dot_and_mv_agree(rng):
    for dtype in (fnx.float64, fnx.int32):
        (v, _), (m, _) = make((5,), dtype, rng), make((3, 5), dtype, rng)
        for op, args in ((aten.dot.default, (v, v)), (aten.mv.default, (m, v))):
            k, d = op(*args), op.decomposition(*args)
            assert d.dtype is k.dtype is dtype and d.shape == k.shape
            np.testing.assert_allclose(d.numpy(), k.numpy(), rtol=1e-12)


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES)
def test_einsum_decomposition_agrees_with_kernel(eq, shapes, rng):
    for dtype in (fnx.float64, fnx.int32):
        ts = [make(s, dtype, rng)[0] for s in shapes]
        k = aten.einsum.default(eq, ts)
        d = aten.einsum.default.decomposition(eq, ts)
        assert d.dtype is k.dtype is dtype and d.shape == k.shape
        np.testing.assert_allclose(d.numpy(), k.numpy(), rtol=1e-12)
    x = fnx.ones(2, 3)
    aten.einsum.default.decomposition("ij->ji", [x]).add_(1)      # a copy, not a view
    assert x.tolist() == [[1.0] * 3] * 2
