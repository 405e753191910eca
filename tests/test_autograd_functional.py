"""``fnx.autograd.functional`` against central finite differences in float64 (an
independent reference) and PyTorch's shape and error rules."""
from __future__ import annotations

import numpy as np
import pytest

import fnx
from fnx.autograd import functional as AF

X = np.array([0.5, -1.0, 2.0])
Y = np.array([[1.0, 2.0], [3.0, -0.5]])


def t(a):
    return fnx.tensor(a, dtype=fnx.float64)


def f1(a):
    return a.sin() * a.sum()


def f2(a, b):
    return (a[:2] * b).exp().sum(0), b.tanh() * a[0]


def scalar(a, b):
    return (a.pow(3).sum() * b.sum()).sin()


def numeric_jacobian(fn, args, which, eps=1e-6):
    """d fn(*args) / d args[which] by central differences (NumPy in, NumPy out)."""
    base = [np.array(a, dtype=np.float64) for a in args]
    out0 = np.asarray(fn(*base))
    jac = np.zeros(out0.shape + base[which].shape)
    for idx in np.ndindex(base[which].shape):
        hi = [a.copy() for a in base]
        lo = [a.copy() for a in base]
        hi[which][idx] += eps
        lo[which][idx] -= eps
        jac[(...,) + idx] = (np.asarray(fn(*hi)) - np.asarray(fn(*lo))) / (2 * eps)
    return jac


def np_f1(a):
    return np.sin(a) * a.sum()


def np_f2_first(a, b):
    return np.exp(a[:2] * b).sum(0)


def np_f2_second(a, b):
    return np.tanh(b) * a[0]


def np_scalar(a, b):
    return np.sin((a ** 3).sum() * b.sum())


def np_grad_scalar(a, b):
    c = np.cos((a ** 3).sum() * b.sum())
    return np.concatenate([c * 3 * a ** 2 * b.sum(), np.full(b.size, c * (a ** 3).sum())])


def test_jacobian_matches_finite_differences_and_pytorchs_shapes():
    j = AF.jacobian(f1, t(X))
    assert j.shape == (3, 3) and not j.requires_grad
    np.testing.assert_allclose(j.numpy(), numeric_jacobian(np_f1, [X], 0), rtol=1e-6, atol=1e-8)
    jt = AF.jacobian(f2, (t(X), t(Y)))         # outputs tuple x inputs tuple
    assert [[tuple(e.shape) for e in row] for row in jt] == [[(2, 3), (2, 2, 2)],
                                                             [(2, 2, 3), (2, 2, 2, 2)]]
    for o, np_fn in enumerate([np_f2_first, np_f2_second]):
        for i in range(2):
            np.testing.assert_allclose(jt[o][i].numpy(), numeric_jacobian(np_fn, [X, Y], i),
                                       rtol=1e-6, atol=1e-8)
    one_in = AF.jacobian(lambda a: f2(a, t(Y)), t(X))    # outputs tuple, one input
    assert isinstance(one_in, tuple) and one_in[1].shape == (2, 2, 3)
    np.testing.assert_allclose(one_in[1].numpy(), jt[1][0].numpy())
    same = AF.jacobian(f1, t(X), vectorize=True, strategy="forward-mode")
    np.testing.assert_allclose(same.numpy(), j.numpy())


def test_hessian_matches_finite_differences_of_the_gradient():
    h = AF.hessian(scalar, (t(X), t(Y)))
    full = numeric_jacobian(lambda a, b: np_grad_scalar(a, b), [X, Y], 0)   # (7, 3)
    np.testing.assert_allclose(h[0][0].numpy(), full[:3], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h[1][0].numpy(), full[3:].reshape(2, 2, 3), rtol=1e-5,
                               atol=1e-6)
    assert h[0][1].shape == (3, 2, 2) and h[1][1].shape == (2, 2, 2, 2)
    np.testing.assert_allclose(h[0][1].numpy(), np.moveaxis(h[1][0].numpy(), -1, 0),
                               rtol=1e-10)      # a Hessian is symmetric


def test_products_agree_with_the_matrices():
    x, y = t(X), t(Y)
    u = t([1.0, 0.5, -1.0])
    out, g = AF.vjp(f1, x, u)
    np.testing.assert_allclose(out.numpy(), np_f1(X))
    j = numeric_jacobian(np_f1, [X], 0)
    np.testing.assert_allclose(g.numpy(), u.numpy() @ j, rtol=1e-6)
    _, tv = AF.jvp(f1, x, u)
    np.testing.assert_allclose(tv.numpy(), j @ u.numpy(), rtol=1e-6)
    h = AF.hessian(lambda a: scalar(a, y), x).numpy()
    _, hv = AF.hvp(lambda a: scalar(a, y), x, u)
    _, vh = AF.vhp(lambda a: scalar(a, y), x, u)
    np.testing.assert_allclose(hv.numpy(), h @ u.numpy(), rtol=1e-10)
    np.testing.assert_allclose(vh.numpy(), u.numpy() @ h, rtol=1e-10)


def test_create_graph_gives_differentiable_results():
    x = t([1.0, 2.0]).requires_grad_()
    h = AF.hessian(lambda a: (a ** 3).sum(), x, create_graph=True)
    assert h.requires_grad
    (d,) = fnx.autograd.grad(h.trace(), x)      # d/dx of 6x summed: 6 each
    np.testing.assert_allclose(d.numpy(), [6.0, 6.0])
    _, g = AF.vjp(lambda a: a.exp(), x, t([1.0, 1.0]), create_graph=True)
    (d2,) = fnx.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(d2.numpy(), np.exp([1.0, 2.0]))


def test_pytorchs_errors():
    x = t(X)
    with pytest.raises(RuntimeError, match="v can only be None if the user-provided function "
                                           "returns a single Tensor with a single element"):
        AF.vjp(f1, x)
    with pytest.raises(RuntimeError, match="should contain a single element"):
        AF.hessian(f1, x)
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be fnx.Size\(\[3\]\)"):
        AF.jvp(f1, x, fnx.ones(2, dtype=fnx.float64))
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        AF.jacobian(f1, [x])
    with pytest.raises(RuntimeError, match="independent of input 1. This is not allowed in "
                                           "strict mode"):
        AF.vjp(lambda a, b: a * 2, (x, t(Y)), fnx.ones(3, dtype=fnx.float64), strict=True)
    out = AF.vjp(lambda a, b: a * 2, (x, t(Y)), fnx.ones(3, dtype=fnx.float64))[1]
    assert out[1].tolist() == [[0.0, 0.0], [0.0, 0.0]]     # not strict: zeros
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        AF.jacobian(f1, x, strategy="forward-mode")
