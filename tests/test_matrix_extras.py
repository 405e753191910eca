"""diag, diag_embed, diagflat, cross (dim=None), addmv/addr/addbmm (and in place), dist and
chain_matmul: values against NumPy, PyTorch's edge rules (beta=0 ignores NaN in input, the
first size-3 dim), errors, gradients against finite differences, compiled against eager."""
import warnings

import numpy as np
import pytest

import fnx
from fnx.autograd import gradcheck

rng = np.random.default_rng(0)


def T(a):
    return fnx.tensor(np.asarray(a))


@pytest.mark.parametrize("offset", [-2, -1, 0, 1, 3])
def test_diag_and_diagflat_match_numpy(offset):
    v = rng.standard_normal(4)
    np.testing.assert_array_equal(fnx.diag(T(v), offset).numpy(), np.diag(v, offset))
    m = rng.standard_normal((3, 5))
    np.testing.assert_array_equal(fnx.diag(T(m), offset).numpy(), np.diag(m, offset))
    np.testing.assert_array_equal(T(m).diagflat(offset).numpy(), np.diagflat(m, offset))


def test_diag_is_a_copy_and_refuses_3d():
    m = T(np.arange(4.0).reshape(2, 2))
    d = fnx.diag(m)
    d.add_(10)
    assert m.numpy().tolist() == [[0.0, 1.0], [2.0, 3.0]]
    with pytest.raises(RuntimeError, match="diag\\(\\): Supports 1D or 2D tensors. Got 3D"):
        fnx.diag(fnx.ones(2, 2, 2))


@pytest.mark.parametrize("offset,dim1,dim2", [(0, -2, -1), (1, 0, 2), (-1, 2, 0), (2, 1, -1)])
def test_diag_embed_matches_a_numpy_loop(offset, dim1, dim2):
    x = rng.standard_normal((2, 3))
    got = fnx.diag_embed(T(x), offset, dim1, dim2).numpy()
    n = 3 + abs(offset)
    want = np.zeros((2, n, n))
    for b in range(2):
        want[b] = np.diag(x[b], offset)
    # want has dims (batch, row, col); place row/col at dim1/dim2 of the 3-d result
    d1, d2 = dim1 % 3, dim2 % 3
    order = [None] * 3
    order[d1], order[d2] = 1, 2
    order[[i for i in range(3) if i not in (d1, d2)][0]] = 0
    np.testing.assert_array_equal(got, want.transpose(order))
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical"):
        fnx.diag_embed(T(x), 0, 1, 1)


def test_cross_default_dim_is_the_first_of_size_3():
    a, b = rng.standard_normal((4, 3, 3)), rng.standard_normal((4, 3, 3))
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        got = fnx.cross(T(a), T(b))
    np.testing.assert_allclose(got.numpy(), np.cross(a, b, axis=1), rtol=1e-12)
    np.testing.assert_allclose(T(a).cross(T(b), dim=2).numpy(), np.cross(a, b, axis=2),
                               rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="no dimension of size 3"):
            fnx.cross(fnx.ones(2, 2), fnx.ones(2, 2))


def test_addmv_addr_addbmm_match_numpy_and_beta_zero_ignores_nan():
    inp, mat, vec = rng.standard_normal(3), rng.standard_normal((3, 4)), rng.standard_normal(4)
    np.testing.assert_allclose(fnx.addmv(T(inp), T(mat), T(vec), beta=0.5, alpha=2).numpy(),
                               0.5 * inp + 2 * mat @ vec, rtol=1e-12)
    v1, v2 = rng.standard_normal(3), rng.standard_normal(2)
    m = rng.standard_normal((3, 2))
    np.testing.assert_allclose(T(m).addr(T(v1), T(v2), alpha=-1).numpy(), m - np.outer(v1, v2),
                               rtol=1e-12)
    b1, b2 = rng.standard_normal((5, 3, 4)), rng.standard_normal((5, 4, 2))
    np.testing.assert_allclose(fnx.addbmm(T(m), T(b1), T(b2), beta=3).numpy(),
                               3 * m + np.einsum("bij,bjk->ik", b1, b2), rtol=1e-12)
    nan = T([np.nan, np.inf, 1.0])
    np.testing.assert_allclose(fnx.addmv(nan, T(mat), T(vec), beta=0).numpy(), mat @ vec,
                               rtol=1e-12)
    t = T(m.copy())
    assert t.addr_(T(v1), T(v2)) is t
    np.testing.assert_allclose(t.numpy(), m + np.outer(v1, v2), rtol=1e-12)
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        fnx.addbmm(T(m), T(b1[0]), T(b2))


@pytest.mark.parametrize("p", [0, 1, 2, 3.5, float("inf")])
def test_dist_is_the_p_norm_of_the_difference(p):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal(3)
    d = a - b
    want = np.count_nonzero(d) if p == 0 else np.linalg.norm(d.ravel(), p)
    np.testing.assert_allclose(fnx.dist(T(a), T(b), p).item(), want, rtol=1e-12)


def test_chain_matmul_is_the_product():
    ms = [rng.standard_normal(s) for s in ((2, 3), (3, 4), (4, 2))]
    np.testing.assert_allclose(fnx.chain_matmul(*map(T, ms)).numpy(),
                               np.linalg.multi_dot(ms), rtol=1e-12)
    with pytest.raises(RuntimeError, match="expected 2 instead"):
        fnx.chain_matmul(fnx.ones(2))


def test_gradients_against_finite_differences():
    x = T(rng.standard_normal(3)).requires_grad_()
    mat = T(rng.standard_normal((3, 3))).requires_grad_()
    assert gradcheck(lambda v: fnx.diag_embed(v, 1), (x,))
    assert gradcheck(lambda m: fnx.diag(m, -1), (mat,))
    assert gradcheck(lambda i, m, v: fnx.addmv(i, m, v, beta=0.5, alpha=2), (x, mat, x))
    y = T(rng.standard_normal(3)).requires_grad_()
    assert gradcheck(lambda a, b: fnx.dist(a, b, 3), (x, y))


def test_compiled_equals_eager():
    def f(m, v):
        return fnx.addr(fnx.diag(v), v, v, beta=2) + fnx.diagflat(m)[:3, :3] + fnx.cross(
            fnx.diag(m).reshape(1, 3), v.reshape(1, 3), dim=1)
    m, v = T(rng.standard_normal((3, 3))), T(rng.standard_normal(3))
    np.testing.assert_allclose(fnx.compile(f)(m, v).numpy(), f(m, v).numpy(), rtol=1e-12)
