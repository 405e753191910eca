"""Complex numbers: views of ``real``/``imag``, the Tensor properties, conjugation
without a lazy bit, gradients under PyTorch's conjugate Wirtinger convention (checked by
finite differences with ``fnx.autograd.gradcheck``, which checks real and imaginary
parts), and compiled vs eager."""
import numpy as np
import pytest

import fnx

RNG = np.random.default_rng(1)


def _z(shape, dtype=np.complex128, requires_grad=False):
    a = (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)
    return fnx.tensor(a, requires_grad=requires_grad), a


def test_complex_and_polar_against_numpy():
    re, im = RNG.standard_normal((3, 1)), RNG.standard_normal(4)
    got = fnx.complex(fnx.tensor(re), fnx.tensor(im))
    np.testing.assert_allclose(got.numpy(), re + 1j * im)
    assert got.dtype == fnx.complex128
    r, th = np.abs(RNG.standard_normal(5)), RNG.standard_normal(5)
    np.testing.assert_allclose(fnx.polar(fnx.tensor(r), fnx.tensor(th)).numpy(),
                               r * np.exp(1j * th), rtol=1e-12)


def test_real_and_imag_are_views_and_assignable():
    z, a = _z((2, 3))
    z.real.mul_(2)
    np.testing.assert_allclose(z.numpy(), 2 * a.real + 1j * a.imag)
    z.imag = fnx.zeros(2, 3, dtype=fnx.float64)
    np.testing.assert_allclose(z.numpy(), 2 * a.real + 0j)
    x = fnx.ones(3)
    assert fnx.real(x) is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with "
                                           "non-complex dtypes"):
        x.imag


def test_conj_is_materialized_and_no_conj_bit():
    z, a = _z((3,))
    c = z.conj()
    assert not c.is_conj() and not fnx.is_conj(c) and fnx.resolve_conj(c) is c
    c.mul_(0)            # a new tensor: the input keeps its values
    np.testing.assert_allclose(z.numpy(), a)
    np.testing.assert_allclose(fnx.conj_physical(z).numpy(), np.conj(a))
    assert fnx.is_complex(z) and not fnx.is_complex(fnx.ones(1))


def test_adjoint_mH_H_mT():
    z, a = _z((2, 3, 4))
    want = np.conj(np.swapaxes(a, -1, -2))
    np.testing.assert_allclose(z.mH.numpy(), want)
    np.testing.assert_allclose(z.adjoint().numpy(), want)
    np.testing.assert_allclose(z.mT.numpy(), np.swapaxes(a, -1, -2))
    m, b = _z((3, 2))
    np.testing.assert_allclose(m.H.numpy(), np.conj(b.T))
    with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices"):
        z.H
    with pytest.raises(RuntimeError, match="tensor.mH is only supported on matrices"):
        fnx.ones(3).mH


def test_angle():
    z, a = _z((5,))
    np.testing.assert_allclose(fnx.angle(z).numpy(), np.angle(a))
    got = fnx.angle(fnx.tensor([-2.0, -0.0, 0.0, 1.0, float("nan")]))
    np.testing.assert_array_equal(got.numpy()[:4], np.float32([np.pi, 0, 0, 0]))
    assert np.isnan(got.numpy()[4])
    assert fnx.angle(fnx.tensor([-3, 2])).dtype == fnx.float32


@pytest.mark.parametrize("fn", [
    lambda z: fnx.angle(z), lambda z: z.real, lambda z: z.imag, lambda z: fnx.conj(z),
    lambda z: fnx.conj_physical(z) * z, lambda z: z.mH, lambda z: fnx.real(z * z),
], ids=["angle", "real", "imag", "conj", "conj_physical", "mH", "real_of_square"])
def test_complex_gradients_against_finite_differences(fn):
    z, _ = _z((2, 2), requires_grad=True)
    assert fnx.autograd.gradcheck(fn, (z,))


def test_complex_and_polar_gradients():
    a = fnx.tensor(np.abs(RNG.standard_normal(4)) + 0.5, requires_grad=True)
    b = fnx.tensor(RNG.standard_normal(4), requires_grad=True)
    assert fnx.autograd.gradcheck(fnx.complex, (a, b))
    assert fnx.autograd.gradcheck(fnx.polar, (a, b))


def test_wirtinger_convention_of_abs_squared():
    # PyTorch's convention: the gradient of a real L(z) is dL/dx + i dL/dy; for |z|^2 it
    # is 2z
    z, a = _z((3,), requires_grad=True)
    (z.real ** 2 + z.imag ** 2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * a)


def test_compiled_matches_eager():
    z, _ = _z((3, 3))
    x = fnx.tensor(RNG.standard_normal((3, 3)))

    def f(z, x):
        return (z.real, z.imag, fnx.angle(z), fnx.conj(z), z.mH, fnx.complex(x, x * 2),
                fnx.polar(x.abs(), x), fnx.angle(x))
    for c, e in zip(fnx.compile(f)(z, x), f(z, x)):
        np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-12)


def test_writes_through_real_and_imag_compile_like_eager():
    def f(z):
        w = z.clone()
        w.imag.mul_(3)
        w.real = fnx.zeros(2, dtype=fnx.float64)
        return w
    z, a = _z((2,))
    want = 0 + 3j * a.imag
    np.testing.assert_allclose(f(z).numpy(), want)
    np.testing.assert_allclose(fnx.compile(f)(z).numpy(), want)
