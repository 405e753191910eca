"""A singular or non-positive-definite matrix raises ``fnx.linalg.LinAlgError`` (with the
batch element) under ``fnx.compile`` and on the cuda backend as in eager calls, before any
write-back; the ``*_ex`` functions return LAPACK's ``info`` instead (checked against
SciPy's LAPACK wrappers)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from scipy.linalg import lapack

import fnx

SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]])
NOT_PD = np.diag([1.0, 2.0, -1.0, 3.0])


def _batch(bad, n=3):
    """Three matrices, the middle one ``bad`` (the others well conditioned)."""
    good = np.eye(n) * 2 + 0.1
    return np.stack([good, bad, good])


def _potrf_info(a):
    """LAPACK's info of each matrix (lower triangle read), via SciPy."""
    return np.array([max(lapack.dpotrf(m, lower=True)[1], 0) for m in a.reshape(-1, *a.shape[-2:])],
                    np.int32).reshape(a.shape[:-2])


def _getrf_info(a):
    return np.array([max(lapack.dgetrf(m)[2], 0) for m in a.reshape(-1, *a.shape[-2:])],
                    np.int32).reshape(a.shape[:-2])


CASES = [
    ("inv", fnx.linalg.inv, SINGULAR, r"linalg.inv: \(Batch element 1\): The diagonal element 2 "
                                      r"is zero"),
    ("inverse", fnx.inverse, SINGULAR, r"linalg.inv: \(Batch element 1\): The diagonal element"),
    ("solve", lambda a: fnx.linalg.solve(a, fnx.ones(3, 3, dtype=a.dtype, device=a.device)),
     SINGULAR, r"torch.linalg.solve: \(Batch element 1\): The solver failed because the input "
               r"matrix is singular"),
    ("cholesky", fnx.linalg.cholesky, np.diag([1.0, -2.0, 3.0]),
     r"linalg.cholesky: \(Batch element 1\): .*leading minor of order 2 is not "
     r"positive-definite"),
    ("cholesky_upper", lambda a: fnx.linalg.cholesky(a, upper=True), np.diag([1.0, 2.0, -3.0]),
     r"linalg.cholesky: \(Batch element 1\): .*leading minor of order 3"),
    ("lu_factor", fnx.linalg.lu_factor, SINGULAR,
     r"torch.linalg.lu_factor: \(Batch element 1\): U\[2,2\] is zero"),
    ("matrix_power", lambda a: fnx.linalg.matrix_power(a, -1), SINGULAR,
     r"linalg.inv: \(Batch element 1\)"),
    ("inv_ex_checked", lambda a: fnx.linalg.inv_ex(a, check_errors=True), SINGULAR,
     r"linalg.inv_ex: \(Batch element 1\)"),
    ("cholesky_ex_checked", lambda a: fnx.linalg.cholesky_ex(a, check_errors=True),
     np.diag([1.0, -2.0, 3.0]), r"linalg.cholesky_ex: \(Batch element 1\): .*order 2"),
]


@pytest.mark.parametrize("mode", ["eager", "compile"])
@pytest.mark.parametrize("name,fn,bad,match", CASES, ids=[c[0] for c in CASES])
def test_raises_with_batch_element(name, fn, bad, match, mode):
    a = fnx.tensor(_batch(bad))
    f = fn if mode == "eager" else fnx.compile(fn)
    with pytest.raises(fnx.linalg.LinAlgError, match=match):
        f(a)


@pytest.mark.parametrize("name,fn,bad,match", CASES[:4], ids=[c[0] for c in CASES[:4]])
def test_unbatched_message_has_no_batch_element(name, fn, bad, match):
    with pytest.raises(fnx.linalg.LinAlgError) as e:
        fnx.compile(fn)(fnx.tensor(bad))
    assert "Batch element" not in str(e.value)
    assert str(e.value).startswith(match.split(":")[0].replace("\\", ""))


def test_compiled_good_input_matches_numpy():
    a = _batch(np.array([[4.0, 1, 0], [1, 3, 1], [0, 1, 2]]))
    np.testing.assert_allclose(fnx.compile(fnx.linalg.inv)(fnx.tensor(a)).numpy(),
                               np.linalg.inv(a), rtol=1e-10)
    np.testing.assert_allclose(fnx.compile(fnx.linalg.cholesky)(fnx.tensor(a)).numpy(),
                               np.linalg.cholesky(a), rtol=1e-10)


def test_compiled_error_leaves_inputs_unwritten():
    state = fnx.tensor([1.0, 2.0])

    def step(a):
        state.add_(1)
        return fnx.linalg.inv(a)

    f = fnx.compile(step)
    f(fnx.tensor(_batch(np.eye(3))))        # compiles; the write happens
    np.testing.assert_array_equal(state.numpy(), [2.0, 3.0])
    with pytest.raises(fnx.linalg.LinAlgError):
        f(fnx.tensor(_batch(SINGULAR)))
    np.testing.assert_array_equal(state.numpy(), [2.0, 3.0])


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("diag", [[1.0, 2.0, -1.0, 3.0], [-1.0, 1.0, 1.0, 1.0],
                                  [1.0, -1.0, 1.0, 1.0], [2.0, 3.0, 4.0, 5.0]])
def test_cholesky_ex_info_is_the_minor_order(diag, upper):
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    # a congruence keeps the signs of the leading minors' determinants only for a
    # triangular factor: use a unit lower triangular one
    t = np.tril(rng.standard_normal((4, 4)), -1) + np.eye(4)
    a = t @ np.diag(diag) @ t.T
    a = np.stack([a, np.eye(4) + q @ q.T])
    expected = _potrf_info(a)
    x = fnx.tensor(a.transpose(0, 2, 1).copy() if upper else a)
    for f in (fnx.linalg.cholesky_ex, fnx.compile(fnx.linalg.cholesky_ex)):
        info = f(x, upper=upper)[1]      # (compiled functions return plain tuples)
        assert info.dtype is fnx.int32
        np.testing.assert_array_equal(info.numpy(), expected)


def test_cholesky_ex_info_complex():
    a = np.array([[2.0, 1j, 0], [-1j, 0.2, 0], [0, 0, 1]], np.complex128)
    expected = max(lapack.zpotrf(a, lower=True)[1], 0)
    assert expected == 2
    for f in (fnx.linalg.cholesky_ex, fnx.compile(fnx.linalg.cholesky_ex)):
        assert f(fnx.tensor(a))[1].item() == expected


def test_ex_functions_do_not_raise_when_compiled():
    s = fnx.tensor(_batch(SINGULAR))
    r = fnx.compile(fnx.linalg.inv_ex)(s)
    np.testing.assert_array_equal(r[-1].numpy(), _getrf_info(_batch(SINGULAR)))
    r = fnx.compile(lambda a: fnx.linalg.solve_ex(a, fnx.ones(3, 3, dtype=a.dtype)))(s)
    np.testing.assert_array_equal(r[-1].numpy(), _getrf_info(_batch(SINGULAR)))
    r = fnx.compile(fnx.linalg.lu_factor_ex)(s)
    np.testing.assert_array_equal(r[-1].numpy(), _getrf_info(_batch(SINGULAR)))


def test_value_checks_off_gives_nan_instead():
    f = fnx.compile(fnx.linalg.cholesky, options={"value_checks": False})
    r = f(fnx.tensor(_batch(np.diag([1.0, -2.0, 3.0]))))
    assert np.isnan(r.numpy()[1]).any() and np.isfinite(r.numpy()[0]).all()


def test_gradient_flows_through_the_check():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    x = fnx.tensor(a, requires_grad=True)
    fnx.linalg.inv(x).sum().backward()
    inv = np.linalg.inv(a)
    np.testing.assert_allclose(x.grad.numpy(), -inv.T @ np.ones((2, 2)) @ inv.T, rtol=1e-12)


_CUDA_SCRIPT = r"""
import numpy as np, fnx
bad = np.stack([np.eye(3), [[1., 2, 3], [2, 4, 6], [0, 0, 1]], np.eye(3)])
a = fnx.tensor(bad).to("cuda")
msgs = []
for f in (fnx.linalg.inv, fnx.linalg.cholesky,
          lambda a: fnx.linalg.solve(a, fnx.ones(3, dtype=a.dtype, device="cuda"))):
    try:
        f(a)
        msgs.append("no error")
    except fnx.linalg.LinAlgError as e:
        msgs.append(str(e))
print("|".join(msgs))
print(fnx.linalg.cholesky_ex(fnx.tensor(np.diag([1., 2, -1])).to("cuda")).info.item())
"""


def test_cuda_backend_raises():
    env = dict(os.environ, FNX_CUDA_ON_CPU="1")
    r = subprocess.run([sys.executable, "-c", _CUDA_SCRIPT], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    inv, chol, solve = r.stdout.splitlines()[0].split("|")
    assert inv.startswith("linalg.inv: (Batch element 1): The diagonal element 2 is zero")
    # [[1,2,3],[2,4,6],[0,0,1]] is not positive-definite at order 2 (det of minor = 0)
    assert chol.startswith("linalg.cholesky: (Batch element 1):") and "order 2" in chol
    assert solve.startswith("torch.linalg.solve: (Batch element 1): The solver failed")
    assert r.stdout.splitlines()[1] == "3"
