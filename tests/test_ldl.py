"""fnx.linalg.ldl_factor / ldl_factor_ex / ldl_solve: the compact factors rebuild A by
LAPACK's documented rule (an independent NumPy reconstruction), solves match
np.linalg.solve, eagerly and compiled; errors and no-derivative behaviour as PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import fnx
from fnx.testing.opinfo.factorizations import ldl_reconstruct

RNG = np.random.default_rng(7)


def _sym(shape, herm, complex_=False):
    b = RNG.standard_normal(shape)
    if complex_:
        b = b + 1j * RNG.standard_normal(shape)
    bt = np.swapaxes(b, -1, -2)
    return b + (np.conj(bt) if herm else bt)


@pytest.mark.parametrize("herm", [False, True])
@pytest.mark.parametrize("complex_", [False, True])
def test_factors_rebuild_a(herm, complex_):
    a = _sym((3, 5, 5), herm, complex_)
    LD, piv = fnx.linalg.ldl_factor(fnx.tensor(a), hermitian=herm)
    assert piv.dtype is fnx.int32 and tuple(piv.shape) == (3, 5)
    ld = LD.numpy()
    assert np.all(np.triu(ld, 1) == 0)
    for i in range(3):
        np.testing.assert_allclose(ldl_reconstruct(ld[i], piv.numpy()[i], herm), a[i],
                                   atol=1e-10)


def test_two_by_two_pivot_block():
    LD, piv = fnx.linalg.ldl_factor(fnx.tensor([[0.0, 1.0], [1.0, 0.0]]))
    assert piv.tolist() == [-2, -2]       # one 2x2 block (LAPACK's convention)
    np.testing.assert_array_equal(LD.numpy(), [[0.0, 0.0], [1.0, 0.0]])


@pytest.mark.parametrize("compiled", [False, True])
def test_solve_matches_numpy(compiled):
    a = _sym((2, 4, 4), False)
    b = RNG.standard_normal((3, 1, 4, 2))          # broadcast batch

    def f(a, b):
        return fnx.linalg.ldl_solve(*fnx.linalg.ldl_factor(a), b)

    g = fnx.compile(f) if compiled else f
    np.testing.assert_allclose(g(fnx.tensor(a), fnx.tensor(b)).numpy(), np.linalg.solve(a, b),
                               rtol=1e-9, atol=1e-9)


def test_hermitian_solve_complex():
    a = _sym((4, 4), True, True)
    b = RNG.standard_normal((4, 1)) + 0j
    LD, piv = fnx.linalg.ldl_factor(fnx.tensor(a), hermitian=True)
    x = fnx.linalg.ldl_solve(LD, piv, fnx.tensor(b), hermitian=True)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b), atol=1e-10)


def test_singular_raises_and_ex_reports_info():
    z = fnx.zeros(2, 3, 3)
    with pytest.raises(fnx.linalg.LinAlgError, match=r"ldl_factor: \(Batch element 0\)"):
        fnx.linalg.ldl_factor(z)
    with pytest.raises(fnx.linalg.LinAlgError, match=r"ldl_factor: \(Batch element 0\)"):
        fnx.compile(fnx.linalg.ldl_factor)(z)
    r = fnx.linalg.ldl_factor_ex(z)
    assert r.info.tolist() == [1, 1]              # D[0,0] is exactly zero
    with pytest.raises(fnx.linalg.LinAlgError):
        fnx.linalg.ldl_factor_ex(z, check_errors=True)


def test_errors():
    with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they "
                                           "are 2 by 3 matrices"):
        fnx.linalg.ldl_factor(fnx.zeros(2, 3))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
        fnx.linalg.ldl_factor(fnx.zeros(2, 2, dtype=fnx.int64))


def test_no_derivative():
    x = fnx.tensor(_sym((3, 3), False), requires_grad=True)
    LD, _ = fnx.linalg.ldl_factor(x)
    with pytest.raises(RuntimeError, match="derivative for 'linalg_ldl_factor' is not "
                                           "implemented"):
        LD.sum().backward()


