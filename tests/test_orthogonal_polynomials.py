"""torch.special's orthogonal polynomials against SciPy's eval_* functions (and the
identities V_n = U_n - U_{n-1}, W_n = U_n + U_{n-1} for the third and fourth kinds), with
PyTorch's special cases, eager, compiled and on the cuda backend."""
from __future__ import annotations

import numpy as np
import pytest
import fnx
from fnx.testing.opinfo.polynomials import SCIPY_REFS

RNG = np.random.default_rng(0)


# SciPy's eval_* functions (n first), shared with the OpInfo entries
REF = SCIPY_REFS


@pytest.mark.parametrize("name", sorted(REF))
def test_values_match_scipy(name):
    shifted = name.startswith("shifted")
    x = RNG.uniform(0.0, 1.0, 40) if shifted else RNG.uniform(-1.0, 1.0, 40)
    x = np.concatenate([x, [1.3, -1.2] if not shifted else [1.2, -0.1]])
    n = np.arange(0, 21)[:, None]
    got = getattr(fnx.special, name)(fnx.tensor(x), fnx.tensor(n)).numpy()
    want = REF[name](n, x)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())


@pytest.mark.parametrize("name", sorted(REF))
def test_special_cases(name):
    f = getattr(fnx.special, name)
    x = fnx.tensor([0.3, 0.7, -0.4], dtype=fnx.float64)
    # negative, NaN and infinite orders give 0; order 0 gives 1; float orders truncate
    np.testing.assert_array_equal(f(x, fnx.tensor([-1.0, float("nan"), float("inf")],
                                                  dtype=fnx.float64)).numpy(), 0.0)
    np.testing.assert_array_equal(f(x, 0).numpy(), 1.0)
    np.testing.assert_allclose(f(x, 2.9).numpy(), f(x, 2).numpy())
    # integers compute in the default float dtype; a Python number is accepted for x
    assert f(fnx.tensor([1, 2]), fnx.tensor([3, 4])).dtype == fnx.float32
    np.testing.assert_allclose(f(0.25, fnx.tensor([3])).numpy(),
                               f(fnx.tensor([0.25]), 3).numpy())
    # not differentiable, as PyTorch's
    assert not f(fnx.tensor([0.5], requires_grad=True), 2).requires_grad


def test_chebyshev_interval_ends():
    s = fnx.special
    ends = fnx.tensor([1.0, -1.0], dtype=fnx.float64)
    n = fnx.tensor([[4], [5]])
    np.testing.assert_array_equal(s.chebyshev_polynomial_t(ends, n).numpy(),
                                  [[1, 1], [1, -1]])
    np.testing.assert_array_equal(s.chebyshev_polynomial_u(ends, n).numpy(),
                                  [[5, 5], [6, -6]])
    np.testing.assert_array_equal(s.chebyshev_polynomial_v(ends, n).numpy(),
                                  [[1, 9], [1, -11]])
    np.testing.assert_array_equal(s.chebyshev_polynomial_w(ends, n).numpy(),
                                  [[9, 1], [11, -1]])
    np.testing.assert_array_equal(
        s.shifted_chebyshev_polynomial_w(fnx.tensor([1.0, 0.0], dtype=fnx.float64),
                                         n).numpy(), [[9, 1], [11, -1]])
    np.testing.assert_array_equal(s.legendre_polynomial_p(ends, n).numpy(),
                                  [[1, 1], [1, -1]])
    np.testing.assert_array_equal(s.laguerre_polynomial_l(fnx.zeros(2), n).numpy(), 1.0)
    # large orders inside (-1, 1) use the trigonometric forms: cos(n acos x) for T
    x = RNG.uniform(-0.99, 0.99, 5)
    np.testing.assert_allclose(s.chebyshev_polynomial_t(fnx.tensor(x), 50).numpy(),
                               np.cos(50 * np.arccos(x)), rtol=1e-10, atol=1e-12)
    # Hermite orders past PyTorch's limit (512 in double precision) are NaN
    assert np.isnan(s.hermite_polynomial_h(fnx.tensor([0.5], dtype=fnx.float64),
                                           513).item())


def test_compiled_and_out_forms_match_eager():
    x = fnx.tensor(RNG.uniform(-1, 1, (3, 4)))
    n = fnx.tensor([[2], [7], [12]])

    def f(x, n):
        return (fnx.special.chebyshev_polynomial_u(x, n) +
                fnx.special.legendre_polynomial_p(x, n) * fnx.special.hermite_polynomial_he(x, 3))
    # (XLA may fuse the multiply-add: the last bit may differ)
    np.testing.assert_allclose(fnx.compile(f)(x, n).numpy(), f(x, n).numpy(), rtol=1e-14)
    out = fnx.empty(0, dtype=fnx.float64)
    fnx.special.laguerre_polynomial_l(x, n, out=out)
    np.testing.assert_array_equal(out.numpy(), fnx.special.laguerre_polynomial_l(x, n).numpy())


@pytest.mark.skipif(not fnx.cuda.is_available(),
                    reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")
def test_cuda_backend_gives_the_cpu_values():
    x = RNG.uniform(-1, 1, 6)
    n = np.arange(6)
    for name in REF:
        f = getattr(fnx.special, name)
        got = f(fnx.tensor(x).cuda(), fnx.tensor(n).cuda())
        assert got.device.type == "cuda"
        np.testing.assert_array_equal(got.cpu().numpy(), f(fnx.tensor(x), fnx.tensor(n)).numpy())
