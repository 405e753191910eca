"""hypot, copysign, logaddexp, logaddexp2, nextafter, heaviside, sgn, ldexp, float_power as
torch's: values against NumPy (eager and compiled), PyTorch's edge values and errors,
in-place forms, gradients against finite differences."""
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

import fnx
from fnx.autograd import gradcheck

NAN, INF = math.nan, math.inf
A = np.array([1.0, -2.0, 0.0, NAN, INF, -0.0, 3e200, -INF])
B = np.array([-1.0, 3.0, 0.5, 1.0, NAN, 2.0, 4e200, -INF])


def T(a, dtype=fnx.float64):
    return fnx.tensor(np.asarray(a), dtype=dtype)


def _close(t, want, rtol=1e-12):
    np.testing.assert_allclose(t.numpy(), want, rtol=rtol, atol=1e-300)


def _compiled(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fnx.compile(fn, fullgraph=True)(*args)


@pytest.mark.parametrize("name", ["hypot", "copysign", "logaddexp", "logaddexp2", "nextafter"])
def test_values_eager_and_compiled(name):
    with np.errstate(all="ignore"):
        want = getattr(np, name)(A, B)
    if name == "hypot":
        want[4] = INF                     # C's hypot: inf wins over NaN (as PyTorch)
    fn = getattr(fnx, name)
    _close(fn(T(A), T(B)), want)
    _close(_compiled(fn, T(A), T(B)), want)


def test_hand_written_edges():
    # overflow-free hypot, equal infinities in logaddexp, heaviside of NaN is 0
    _close(fnx.hypot(T([3e200, 0.0]), T([4e200, 0.0])), [5e200, 0.0])
    _close(fnx.logaddexp(T([-INF, INF]), T([-INF, INF])), [-INF, INF])
    _close(fnx.heaviside(T([-1.0, 0.0, 2.0, NAN]), T([0.5, 0.5, 0.5, 0.5])),
           [0.0, 0.5, 1.0, 0.0])
    _close(_compiled(fnx.heaviside, T([-1.0, 0.0, 2.0, NAN]), T([0.5, 0.5, 0.5, 0.5])),
           [0.0, 0.5, 1.0, 0.0])
    assert np.signbit(fnx.copysign(T([1.0]), T([-0.0])).numpy())[0]
    assert fnx.nextafter(T([1.0], fnx.float32), T([2.0], fnx.float32)).item() == \
        float(np.nextafter(np.float32(1), np.float32(2)))
    z = fnx.tensor([3 + 4j, 0j, complex(INF, 0)], dtype=fnx.complex128)
    _close(fnx.sgn(z), [0.6 + 0.8j, 0, complex(NAN, NAN)])
    _close(fnx.sgn(T([-2.0, 0.0, NAN])), [-1.0, 0.0, 0.0])
    _close(fnx.ldexp(T([1.0, -3.0]), fnx.tensor([3, -2])), [8.0, -0.75])
    r = fnx.float_power(fnx.tensor([2, 3]), fnx.tensor([0.5, -1.0]))
    assert r.dtype is fnx.float64
    _close(r, [math.sqrt(2), 1 / 3])
    assert fnx.float_power(fnx.tensor([1j]), 2).dtype is fnx.complex128


def test_errors_and_dtypes():
    ints = fnx.arange(3)
    for name in ("hypot", "logaddexp", "logaddexp2", "nextafter"):
        with pytest.raises(RuntimeError, match=f"\"{name}_cpu\" not implemented for 'Long'"):
            getattr(fnx, name)(ints, ints)
    assert fnx.copysign(ints, ints).dtype is fnx.float32
    with pytest.raises(RuntimeError, match="different dtypes"):
        fnx.heaviside(fnx.ones(2), fnx.ones(2, dtype=fnx.float64))
    np.testing.assert_array_equal(fnx.heaviside(ints - 1, fnx.tensor([5])).numpy(), [0, 5, 1])
    x = fnx.ones(2)
    with pytest.raises(RuntimeError, match="float_power_ has dtype Float but the operation's "
                                           "result requires dtype Double"):
        x.float_power_(2)
    np.testing.assert_array_equal(x.numpy(), [1.0, 1.0])


def test_in_place():
    x = T([3.0, -1.0])
    assert x.hypot_(T([4.0, 0.0])) is x
    _close(x, [5.0, 1.0])
    x.copysign_(T([-1.0, 1.0]))
    _close(x, [-5.0, 1.0])
    x.nextafter_(T([0.0, 0.0]))
    _close(x, np.nextafter([-5.0, 1.0], 0.0))
    y = T([2.0, -2.0])
    y.float_power_(2)
    _close(y, [4.0, 4.0])
    y.ldexp_(fnx.tensor([1, -1]))
    _close(y, [8.0, 2.0])
    s = T([-3.0, 2.0])
    s.sgn_()
    _close(s, [-1.0, 1.0])
    out = fnx.empty(0, dtype=fnx.float64)
    fnx.logaddexp2(T([1.0]), T([1.0]), out=out)
    _close(out, [2.0])


def test_gradients():
    rng = np.random.default_rng(0)
    a = T(rng.uniform(0.5, 2, (2, 3))).requires_grad_()
    b = T(rng.uniform(-2, -0.5, (3,))).requires_grad_()
    for f in (fnx.hypot, fnx.logaddexp, fnx.logaddexp2, fnx.copysign,
              lambda x, y: fnx.float_power(x, y), lambda x, y: fnx.ldexp(x, y)):
        assert gradcheck(f, [a, b])
    z = (T([0.6, -1.2]).to(fnx.complex128) + T([0.3, 0.7]).to(fnx.complex128) * 1j)
    re = T([0.6, -1.2]).requires_grad_()
    assert gradcheck(lambda r: fnx.view_as_real(fnx.sgn(r.to(fnx.complex128) + z)), [re])
    # copysign sends nothing to ``other``; logaddexp splits the gradient by softmax weights
    x, y = T([1.0]).requires_grad_(), T([-1.0]).requires_grad_()
    fnx.logaddexp(x, y).backward()
    _close(x.grad, [1 / (1 + math.exp(-2))])
    _close(y.grad, [1 / (1 + math.exp(2))])


def test_gcd_lcm():
    rng = np.random.default_rng(1)
    a, b = rng.integers(-50, 50, (4, 5)), rng.integers(-50, 50, (5,))
    np.testing.assert_array_equal(fnx.gcd(fnx.tensor(a), fnx.tensor(b)).numpy(), np.gcd(a, b))
    np.testing.assert_array_equal(_compiled(fnx.gcd, fnx.tensor(a), fnx.tensor(b)).numpy(),
                                  np.gcd(a, b))
    np.testing.assert_array_equal(fnx.lcm(fnx.tensor(a), fnx.tensor(b)).numpy(), np.lcm(a, b))
    np.testing.assert_array_equal(_compiled(fnx.lcm, fnx.tensor(a), fnx.tensor(b)).numpy(),
                                  np.lcm(a, b))
    # 64-bit values need Euclid's longest runs (consecutive Fibonacci numbers)
    f = [1, 1]
    while f[-1] < 2 ** 62:
        f.append(f[-1] + f[-2])
    x, y = fnx.tensor([f[-1], 2 ** 61 * 3]), fnx.tensor([f[-2], 2 ** 40 * 9])
    np.testing.assert_array_equal(_compiled(fnx.gcd, x, y).numpy(), [1, 2 ** 40 * 3])
    with pytest.raises(RuntimeError, match="\"gcd_cpu\" not implemented for 'Float'"):
        fnx.gcd(fnx.ones(2), fnx.ones(2))
    t = fnx.tensor([4, 6])
    assert t.gcd_(fnx.tensor([6, 4])) is t and t.tolist() == [2, 2]
    assert fnx.tensor([4, 6]).lcm(fnx.tensor([6, 4])).tolist() == [12, 12]


def test_frexp():
    v = np.array([0.0, -0.0, 1.0, 0.5, 3.0, -7.25, 1e-310, 1.7e308, INF, -INF, NAN, 2.0 ** -1074])
    for fn, values in ((fnx.frexp, v),
                       # XLA's CPU flushes subnormal numbers to zero: normal values only
                       (lambda t: _compiled(fnx.ops.aten.frexp.Tensor, t), v[v != 1e-310][:-1])):
        m, e = fn(T(values))
        want_m, want_e = np.frexp(values)
        np.testing.assert_array_equal(m.numpy(), want_m)
        np.testing.assert_array_equal(e.numpy(), want_e)
        assert e.dtype is fnx.int32
    r = fnx.tensor([6.0]).frexp()
    assert r.mantissa.tolist() == [0.75] and r.exponent.tolist() == [3]
    with pytest.raises(RuntimeError, match=r"frexp\(\) only supports floating-point dtypes"):
        fnx.frexp(fnx.arange(3))
    x = T([3.0, -0.3]).requires_grad_()
    assert gradcheck(lambda t: fnx.frexp(t).mantissa, [x])


def test_ieee_special_values_are_silent_as_in_pytorch():
    """inf - inf, 0 * inf, log(0), 0 / 0 give NaN/inf without a warning (NumPy warns;
    PyTorch does not), even under ``-W error::RuntimeWarning``; the values are NumPy's."""
    code = ("import fnx, numpy as np\n"
            "a = fnx.tensor([float('inf'), 1.0, 0.0]); b = fnx.tensor([float('inf'), 0.0, 0.0])\n"
            "for r in (a - b, a * b, a / b, fnx.log(b), fnx.isclose(a, b), (a - b).mean()):\n"
            "    print(r.tolist())\n")
    out = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", code],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    x, y = np.array([np.inf, 1.0, 0.0], np.float32), np.array([np.inf, 0.0, 0.0], np.float32)
    with np.errstate(all="ignore"):
        expected = [x - y, x * y, x / y, np.log(y), np.isclose(x, y), (x - y).mean()]
    for line, want in zip(out, expected, strict=True):
        np.testing.assert_array_equal(np.array(eval(line, {"nan": np.nan, "inf": np.inf})), want)  # noqa: S307
