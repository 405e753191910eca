"""``out=`` of the torch.linalg functions with one result and of the fft transforms:
values against NumPy, PyTorch's dtype rules (linalg: exactly the result's dtype; fft: the
result's category, cast within it), resizing, writing through; eager, compiled and on the
cuda backend."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import fnx

RNG = np.random.default_rng(5)
A = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
B = RNG.standard_normal((3, 2))


@pytest.mark.parametrize("name,args,ref", [
    ("inv", (A,), lambda: np.linalg.inv(A)),
    ("solve", (A, B), lambda: np.linalg.solve(A, B)),
    ("det", (A,), lambda: np.linalg.det(A)),
    ("vector_norm", (B,), lambda: np.linalg.norm(B)),
    ("svdvals", (A,), lambda: np.linalg.svd(A, compute_uv=False)),
    ("cross", (B.T[:, :3], B.T[:, :3] + 1), lambda: np.cross(B.T, B.T + 1)),
    ("matrix_power", (A, 3), lambda: np.linalg.matrix_power(A, 3)),
    ("pinv", (B,), lambda: np.linalg.pinv(B)),
])
def test_linalg_out_values(name, args, ref):
    out = fnx.empty(0, dtype=fnx.float64)
    targs = [fnx.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    r = getattr(fnx.linalg, name)(*targs, out=out)
    assert r is out
    np.testing.assert_allclose(out.numpy(), ref(), rtol=1e-10, atol=1e-12)


def test_linalg_out_wrong_dtype_is_refused_unchanged():
    out = fnx.zeros(3, 3)                         # float32 for a float64 result
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype double, but got "
                                           "float instead"):
        fnx.linalg.inv(fnx.tensor(A), out=out)
    assert (out.numpy() == 0).all()
    with pytest.raises(RuntimeError, match="dtype float, but got long int instead"):
        fnx.linalg.inv(fnx.tensor(A, dtype=fnx.float32), out=fnx.zeros(3, 3, dtype=fnx.int64))


def test_out_is_resized_with_a_warning_and_views_see_writes():
    out = fnx.zeros(2, 2, dtype=fnx.float64)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fnx.linalg.inv(fnx.tensor(A), out=out)
    assert tuple(out.shape) == (3, 3) and any("resized" in str(x.message) for x in w)
    base = fnx.zeros(2, 3, 3, dtype=fnx.float64)
    fnx.linalg.inv(fnx.tensor(A), out=base[1])
    np.testing.assert_allclose(base.numpy()[1], np.linalg.inv(A), rtol=1e-10)
    assert (base.numpy()[0] == 0).all()


def test_fft_out_category_rule():
    x = RNG.standard_normal(8)
    out = fnx.empty(0, dtype=fnx.complex128)
    fnx.fft.fft(fnx.tensor(x, dtype=fnx.float32), out=out)    # complex64 result, cast up
    np.testing.assert_allclose(out.numpy(), np.fft.fft(x), rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="fft expects a complex output tensor, but got "
                                           "Float"):
        fnx.fft.fft(fnx.tensor(x), out=fnx.empty(0))
    with pytest.raises(RuntimeError, match="irfft expects a floating point output tensor"):
        fnx.fft.irfft(fnx.tensor(x + 0j), out=fnx.empty(0, dtype=fnx.complex128))
    r = fnx.empty(0, dtype=fnx.float64)
    fnx.fft.irfft2(fnx.tensor(np.fft.rfft2(x.reshape(2, 4))), out=r)
    np.testing.assert_allclose(r.numpy(), x.reshape(2, 4), atol=1e-12)


def test_compiled_out():
    def f(a, o):
        return fnx.linalg.inv(a, out=o)

    out = fnx.empty(3, 3, dtype=fnx.float64)
    fnx.compile(f)(fnx.tensor(A), out)
    np.testing.assert_allclose(out.numpy(), np.linalg.inv(A), rtol=1e-10)


def test_out_refuses_inputs_that_require_grad():
    with pytest.raises(RuntimeError):
        fnx.linalg.inv(fnx.tensor(A, requires_grad=True), out=fnx.empty(3, 3,
                                                                        dtype=fnx.float64))


def test_cuda_backend():
    code = ("import fnx, numpy as np\n"
            "a = np.array([[2., 1.], [1., 3.]])\n"
            "o = fnx.empty(0, dtype=fnx.float64, device='cuda')\n"
            "fnx.linalg.inv(fnx.tensor(a).cuda(), out=o)\n"
            "assert np.allclose(o.cpu().numpy(), np.linalg.inv(a))\n"
            "c = fnx.empty(4, dtype=fnx.complex64, device='cuda')\n"
            "fnx.fft.fft(fnx.ones(4).cuda(), out=c)\n"
            "assert np.allclose(c.cpu().numpy(), [4, 0, 0, 0])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, FNX_CUDA_ON_CPU="1"), timeout=300)
    assert r.returncode == 0, r.stderr


def test_index_ops_out():
    x, i, s = fnx.zeros(4), fnx.tensor([0, 2, 2]), fnx.tensor([1.0, 2.0, 3.0])
    out = fnx.empty(0)
    fnx.ops.aten.index_add.out(x, 0, i, s, out=out)
    ref = np.zeros(4, np.float32)
    np.add.at(ref, [0, 2, 2], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(out.numpy(), ref)
    o = fnx.empty(0, dtype=fnx.int64)
    fnx.searchsorted(fnx.tensor([1.0, 3.0]), fnx.tensor([0.0, 2.0, 5.0]), out=o)
    np.testing.assert_array_equal(o.numpy(), np.searchsorted([1.0, 3.0], [0.0, 2.0, 5.0]))
    with pytest.raises(RuntimeError, match="output tensor's dtype is wrong"):
        fnx.bucketize(fnx.tensor([0.5]), fnx.tensor([1.0]), out=fnx.empty(0))
    with pytest.raises(RuntimeError, match=r"take\(\): self and out expected to have the same "
                                           r"dtype"):
        fnx.ops.aten.take.out(x, i, out=fnx.empty(0, dtype=fnx.float64))
