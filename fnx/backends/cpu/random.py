"""CPU kernels for random ops: NumPy's PCG64 through ``fnx.random.Generator``.

Samples are drawn in float32/float64 (half types draw float32 and round, except
``rand``/``uniform_`` on [0, 1) which draw exact multiples of 2**-mantissa so 1.0 never
appears).  Complex samples draw real and imaginary parts separately, as PyTorch does
(``randn``: each part has variance 1/2).  In-place samplers validate through the op's
meta function before writing anything.
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...core.random import rng
from ...ir.aten import random as R
from ._core import data, kernel, wrap

_SQRT_HALF = np.sqrt(0.5)
_DIGITS = {D.float16: 11, D.bfloat16: 8}


def _real(dtype):
    return dtype.to_real() if dtype.is_complex else dtype


def _draw_dtype(dtype):
    return np.float64 if _real(dtype) is D.float64 else np.float32


def uniform01(g, shape, dtype):
    """Uniform [0, 1) samples of a real ``dtype`` (NumPy array of that dtype)."""
    digits = _DIGITS.get(dtype)
    if digits is not None:    # exact multiples of 2**-digits: never rounds up to 1
        return (g.integers(0, 1 << digits, shape) * 2.0 ** -digits).astype(dtype.numpy)
    return g.random(shape, dtype=_draw_dtype(dtype))


def _uniform(g, shape, dtype):
    if dtype.is_complex:
        r = _real(dtype)
        return (uniform01(g, shape, r) + 1j * uniform01(g, shape, r)).astype(dtype.numpy)
    return uniform01(g, shape, dtype)


def _normal(g, shape, dtype):
    nt = _draw_dtype(dtype)
    if dtype.is_complex:
        z = g.standard_normal(shape, dtype=nt) + 1j * g.standard_normal(shape, dtype=nt)
        return (z * _SQRT_HALF).astype(dtype.numpy)
    return g.standard_normal(shape, dtype=nt)


@kernel(R.rand, R.rand_generator)
def _rand(ks, size, *, generator=None, dtype=None, layout=None, device=None,
          pin_memory=None):
    m = R.rand.meta(size, dtype=dtype)
    return wrap(_uniform(rng(generator, "rand"), m.shape, m.dtype).astype(m.dtype.numpy),
                m.dtype)


@kernel(R.randn, R.randn_generator)
def _randn(ks, size, *, generator=None, dtype=None, layout=None, device=None,
           pin_memory=None):
    m = R.randn.meta(size, dtype=dtype)
    return wrap(_normal(rng(generator, "randn"), m.shape, m.dtype).astype(m.dtype.numpy),
                m.dtype)


def _integers(g, low, high, shape, dtype):
    # NumPy's int64 sampler takes an exclusive bound up to 2**63, random_()'s int64 range.
    out = g.integers(low, high - 1, shape, dtype=np.int64, endpoint=True)
    return out.astype(dtype.numpy)


@kernel(R.randint, R.randint_generator)
def _randint(ks, high, size, *, generator=None, dtype=None, layout=None, device=None,
             pin_memory=None):
    return _randint_low(ks, 0, high, size, generator=generator, dtype=dtype)


@kernel(R.randint_low, R.randint_low_generator)
def _randint_low(ks, low, high, size, *, generator=None, dtype=None, layout=None,
                 device=None, pin_memory=None):
    m = R.randint_low.meta(low, high, size, dtype=dtype)
    return wrap(_integers(rng(generator, "randint"), int(low), int(high), m.shape, m.dtype),
                m.dtype)


@kernel(R.randperm, R.randperm_generator)
def _randperm(ks, n, *, generator=None, dtype=None, layout=None, device=None,
              pin_memory=None):
    m = R.randperm.meta(n, dtype=dtype)
    return wrap(rng(generator, "randperm").permutation(m.shape[0]).astype(m.dtype.numpy),
                m.dtype)


# ---------------------------------------------------------------------------- in place

def _write(self, values):
    """Write into self's array (possibly a view), casting like PyTorch's copy."""
    np.copyto(data(self, "random"), values, casting="unsafe")
    return self


@kernel(R.uniform_)
def _uniform_(ks, self, from_=0.0, to=1.0, *, generator=None):
    R.uniform_.meta(self, from_, to)
    g = rng(generator, "uniform_")
    shape, dtype = self.shape, self.dtype
    if from_ == 0 and to == 1:
        return _write(self, _uniform(g, shape, dtype))
    nt = _draw_dtype(dtype)
    width = nt(to) - nt(from_)

    def one():
        return nt(from_) + width * g.random(shape, dtype=nt)
    return _write(self, one() + 1j * one() if dtype.is_complex else one())


@kernel(R.normal_)
def _normal_(ks, self, mean=0.0, std=1.0, *, generator=None):
    R.normal_.meta(self, mean, std)
    z = _normal(rng(generator, "normal_"), self.shape, self.dtype)
    if self.dtype.is_complex:       # PyTorch: both parts get ``mean``
        return _write(self, z * std + mean * (1 + 1j))
    return _write(self, z * std + mean)


def _check_probs(p):
    if not np.all((p >= 0) & (p <= 1)):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")


def _bernoulli_values(g, shape, p):
    return g.random(shape) < p


@kernel(R.bernoulli__float)
def _bernoulli_float_(ks, self, p=0.5, *, generator=None):
    R.bernoulli__float.meta(self, p)
    return _write(self, _bernoulli_values(rng(generator, "bernoulli_"), self.shape, p))


@kernel(R.bernoulli__tensor)
def _bernoulli_tensor_(ks, self, p, *, generator=None):
    R.bernoulli__tensor.meta(self, p)
    pd = data(p, "bernoulli_")
    _check_probs(pd)
    return _write(self, _bernoulli_values(rng(generator, "bernoulli_"), self.shape, pd))


@kernel(R.exponential_)
def _exponential_(ks, self, lambd=1.0, *, generator=None):
    R.exponential_.meta(self, lambd)
    g = rng(generator, "exponential_")
    return _write(self, g.exponential(1.0 / lambd, self.shape))


def _random_kernel(op, bounds):
    def k(ks, self, *args, generator=None):
        low, high = bounds(self, *args)
        g = rng(generator, "random_")
        return _write(self, _integers(g, low, high, self.shape, D.int64))
    kernel(op)(k)


_random_kernel(R.random_, lambda self: R.random_bounds(self))
_random_kernel(R.random__to, lambda self, to: R.random_bounds(self, 0, to))
_random_kernel(R.random__from, lambda self, from_, to: R.random_bounds(self, from_, to))

# ---------------------------------------------------------------------------- functional


@kernel(R.bernoulli)
def _bernoulli(ks, self, *, generator=None):
    m = R.bernoulli.meta(self)
    p = data(self, "bernoulli")
    _check_probs(p)
    out = _bernoulli_values(rng(generator, "bernoulli"), m.shape, p)
    return wrap(out.astype(m.dtype.numpy), m.dtype)


@kernel(R.bernoulli_p)
def _bernoulli_p(ks, self, p, *, generator=None):
    m = R.bernoulli_p.meta(self, p)
    out = _bernoulli_values(rng(generator, "bernoulli"), m.shape, p)
    return wrap(out.astype(m.dtype.numpy), m.dtype)


@kernel(R.bernoulli_tensor)
def _bernoulli_tensor(ks, self, p, *, generator=None):
    m = R.bernoulli_tensor.meta(self, p)
    pd = data(p, "bernoulli")
    _check_probs(pd)
    out = _bernoulli_values(rng(generator, "bernoulli"), m.shape, pd)
    return wrap(out.astype(m.dtype.numpy), m.dtype)


def _normal_from(mean, std, m, generator):
    if hasattr(std, "_ks") and np.any(data(std, "normal") < 0):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    z = _normal(rng(generator, "normal"), m.shape, m.dtype)
    out = z * data(std, "normal") + data(mean, "normal")
    return wrap(np.asarray(out).astype(m.dtype.numpy), m.dtype)


@kernel(R.normal_tensor_float)
def _normal_tensor_float(ks, mean, std=1.0, *, generator=None):
    return _normal_from(mean, std, R.normal_tensor_float.meta(mean, std), generator)


@kernel(R.normal_float_tensor)
def _normal_float_tensor(ks, mean, std, *, generator=None):
    return _normal_from(mean, std, R.normal_float_tensor.meta(mean, std), generator)


@kernel(R.normal_tensor_tensor)
def _normal_tensor_tensor(ks, mean, std, *, generator=None):
    return _normal_from(mean, std, R.normal_tensor_tensor.meta(mean, std), generator)


@kernel(R.normal_float_float)
def _normal_float_float(ks, mean, std, size, *, generator=None, dtype=None, layout=None,
                        device=None, pin_memory=None):
    m = R.normal_float_float.meta(mean, std, size, dtype=dtype)
    return _normal_from(mean, std, m, generator)


@kernel(R.multinomial)
def _multinomial(ks, self, num_samples, replacement=False, *, generator=None):
    m = R.multinomial.meta(self, num_samples, replacement)
    probs = np.asarray(data(self, "multinomial"), dtype=np.float64)
    rows = probs.reshape(-1, probs.shape[-1])
    if not np.all(np.isfinite(rows) & (rows >= 0)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    sums = rows.sum(axis=1)
    if np.any(sums <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and np.any((rows > 0).sum(axis=1) < num_samples):
        raise RuntimeError("invalid multinomial distribution (with replacement=False, not "
                           "enough non-negative category to sample)")
    g = rng(generator, "multinomial")
    out = np.stack([g.choice(rows.shape[1], num_samples, replace=bool(replacement),
                             p=row / s) for row, s in zip(rows, sums)])
    return wrap(out.reshape(m.shape).astype(np.int64), D.int64)
