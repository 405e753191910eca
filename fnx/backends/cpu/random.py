"""CPU kernels for random ops: PyTorch's CPU sampling over ``fnx.random.Generator``.

``rand``/``uniform_``, ``randn``/``normal_``, ``randint``/``random_`` and ``randperm``
draw exactly PyTorch's values for real dtypes (see ``random_transforms``; the
``Generator`` docstring lists what is not exact).  Complex samples view the output as
pairs of reals, as PyTorch does (``randn``: each part has variance 1/2).  In-place
samplers validate through the op's meta function before writing anything.
"""
from __future__ import annotations

import math

import numpy as np

from ...core import dtype as D
from ...core.random import engine
from ...ir.aten import random as R
from . import random_transforms as T
from ._core import data, kernel, wrap

# random_/randint draw 64 bits for ranges >= 2**32 in these dtypes, 32 bits otherwise.
_WIDE = (D.int64, D.float64, D.float32, D.bfloat16)


def _real(dtype):
    return dtype.to_real() if dtype.is_complex else dtype


def _numel(shape):
    return int(np.prod(shape, dtype=np.int64))


def _as_dtype(flat, shape, dtype):
    """Real samples (complex: interleaved real, imaginary) as an array of ``dtype``."""
    r = _real(dtype)
    out = flat.astype(r.numpy, copy=False)
    if dtype.is_complex:
        out = out.reshape(-1, 2)
        out = out[:, 0] + 1j * out[:, 1].astype(out.dtype)
    return out.astype(dtype.numpy, copy=False).reshape(shape)


def _uniform(gen, shape, dtype, low=0.0, high=1.0):
    r = _real(dtype)
    n = _numel(shape) * (2 if dtype.is_complex else 1)
    flat = np.empty(n, r.numpy)
    cast = r.numpy.type
    for start in range(0, n, T.CHUNK):     # (one block's temporaries at a time)
        part = flat[start:start + T.CHUNK]
        part[:] = T.uniform(gen, len(part), r is D.float64, low, high)
        # PyTorch keeps [from, to): a sample that rounds to ``to`` becomes ``from``.
        part[part == cast(high)] = cast(low)
    return _as_dtype(flat, shape, dtype)


def _normal(gen, shape, dtype, mean=0.0, std=1.0, contiguous=True):
    r = _real(dtype)
    n = _numel(shape)
    if dtype.is_complex:        # PyTorch: normal_ of the real view, std / sqrt(2)
        n, std = 2 * n, std / np.sqrt(2.0)
    if n >= 16 and contiguous:
        flat = T.normal_fill(gen, n, mean, std, double=r is D.float64)
    else:
        flat = T.normal_scalar(gen, n, mean, std)
    return _as_dtype(flat, shape, dtype)


@kernel(R.rand, R.rand_generator)
def _rand(ks, size, *, generator=None, dtype=None, layout=None, device=None,
          pin_memory=None):
    m = R.rand.meta(size, dtype=dtype)
    return wrap(_uniform(engine(generator, "rand"), m.shape, m.dtype), m.dtype)


@kernel(R.randn, R.randn_generator)
def _randn(ks, size, *, generator=None, dtype=None, layout=None, device=None,
           pin_memory=None):
    m = R.randn.meta(size, dtype=dtype)
    return wrap(_normal(engine(generator, "randn"), m.shape, m.dtype), m.dtype)


def _integers(gen, low, high, shape, dtype):
    """PyTorch's ``random() % range + low`` (``random64()`` for wide ranges of the 64-bit
    capable dtypes; the full int64 range takes a 64-bit draw as is)."""
    n = _numel(shape)
    width = high - low
    if width >= 1 << 64:
        vals = gen.random64(n)
    else:
        raw = gen.random64(n) if width >= 1 << 32 and dtype in _WIDE else gen.random32(n)
        vals = raw % np.uint64(width) + np.uint64(low % (1 << 64))     # wraps mod 2**64
    return vals.view(np.int64).astype(dtype.numpy).reshape(shape)


@kernel(R.randint, R.randint_generator)
def _randint(ks, high, size, *, generator=None, dtype=None, layout=None, device=None,
             pin_memory=None):
    return _randint_low(ks, 0, high, size, generator=generator, dtype=dtype)


@kernel(R.randint_low, R.randint_low_generator)
def _randint_low(ks, low, high, size, *, generator=None, dtype=None, layout=None,
                 device=None, pin_memory=None):
    m = R.randint_low.meta(low, high, size, dtype=dtype)
    return wrap(_integers(engine(generator, "randint"), int(low), int(high), m.shape,
                          m.dtype), m.dtype)


@kernel(R.randperm, R.randperm_generator)
def _randperm(ks, n, *, generator=None, dtype=None, layout=None, device=None,
              pin_memory=None):
    m = R.randperm.meta(n, dtype=dtype)
    n = m.shape[0]
    gen = engine(generator, "randperm")
    # PyTorch's Fisher-Yates: swap i with i + random() % (n - i) (64-bit draws for huge n).
    steps = max(n - 1, 0)
    raw = gen.random32(steps) if n < (1 << 32) // 20 else gen.random64(steps)
    perm = list(range(n))
    for i, z in enumerate((raw % np.arange(n, 1, -1, dtype=np.uint64)).tolist()):
        j = i + z
        perm[i], perm[j] = perm[j], perm[i]
    return wrap(np.asarray(perm, np.int64).astype(m.dtype.numpy), m.dtype)


# ---------------------------------------------------------------------------- in place

def _write(self, values):
    """Write into self's array (possibly a view), casting like PyTorch's copy."""
    np.copyto(data(self, "random"), values, casting="unsafe")
    return self


def _fill(self, draw):
    """``draw(shape)`` written into ``self`` in its memory order, as PyTorch's kernels
    visit a strided tensor (the outermost dimension is the one of largest stride)."""
    if self.is_contiguous():
        return _write(self, draw(tuple(self.shape)))
    strides = self.stride()
    order = sorted(range(self.dim()), key=lambda d: -strides[d])
    values = draw(tuple(self.shape[d] for d in order))
    return _write(self, np.transpose(values, np.argsort(order)))


@kernel(R.uniform_)
def _uniform_(ks, self, from_=0.0, to=1.0, *, generator=None):
    R.uniform_.meta(self, from_, to)
    gen = engine(generator, "uniform_")
    return _fill(self, lambda shape: _uniform(gen, shape, self.dtype, from_, to))


@kernel(R.normal_)
def _normal_(ks, self, mean=0.0, std=1.0, *, generator=None):
    R.normal_.meta(self, mean, std)
    gen = engine(generator, "normal_")
    contiguous = self.is_contiguous()
    return _fill(self, lambda shape: _normal(gen, shape, self.dtype, mean, std, contiguous))


def _check_probs(p):
    if not np.all((p >= 0) & (p <= 1)):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")


def _bernoulli_values(gen, shape, p, p_dtype=None):
    """PyTorch's serial CPU bernoulli: one uniform per element, ``u < p``.  A float ``p``
    (``bernoulli_(p)``, hence dropout) or a float64 tensor compares 53-bit double
    uniforms; a tensor of any other float dtype compares 24-bit float32 ones with ``p``
    as float32."""
    n = _numel(shape)
    if p_dtype is None or p_dtype is D.float64:
        return (T.uniform(gen, n, True).reshape(shape) < p)
    u = T.uniform(gen, n, False).reshape(shape)
    return u < np.asarray(p).astype(np.float32)


@kernel(R.bernoulli__float)
def _bernoulli_float_(ks, self, p=0.5, *, generator=None):
    R.bernoulli__float.meta(self, p)
    gen = engine(generator, "bernoulli_")
    return _fill(self, lambda shape: _bernoulli_values(gen, shape, p))


@kernel(R.bernoulli__tensor)
def _bernoulli_tensor_(ks, self, p, *, generator=None):
    R.bernoulli__tensor.meta(self, p)
    pd = data(p, "bernoulli_")
    _check_probs(pd)
    gen = engine(generator, "bernoulli_")
    pd = np.broadcast_to(pd, tuple(self.shape))
    if self.is_contiguous():
        return _write(self, _bernoulli_values(gen, tuple(self.shape), pd, p.dtype))
    # strided self: draw in its memory order, each element against its own p
    strides = self.stride()
    order = sorted(range(self.dim()), key=lambda d: -strides[d])
    vals = _bernoulli_values(gen, tuple(self.shape[d] for d in order),
                             np.transpose(pd, order), p.dtype)
    return _write(self, np.transpose(vals, np.argsort(order)))


def _exponentials(gen, shape, lambd=1.0):
    """PyTorch's serial CPU exponential: ``-1/lambd * log1p(-u)`` in double per 53-bit
    uniform ``u``.  libm's ``log1p`` (Python's ``math``), not NumPy's, which differs in
    the last bit for some arguments."""
    u = T.uniform(gen, _numel(shape), True)
    logs = np.fromiter(map(math.log1p, (-u).tolist()), np.float64, count=u.size)
    return ((-1.0 / lambd) * logs).reshape(shape)


@kernel(R.exponential_)
def _exponential_(ks, self, lambd=1.0, *, generator=None):
    R.exponential_.meta(self, lambd)
    gen = engine(generator, "exponential_")
    return _fill(self, lambda shape: _exponentials(gen, shape, lambd))


def _random_kernel(op, bounds):
    def k(ks, self, *args, generator=None):
        low, high = bounds(self, *args)
        g = engine(generator, "random_")
        return _fill(self, lambda shape: _integers(g, low, high, shape, self.dtype))
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
    out = _bernoulli_values(engine(generator, "bernoulli"), m.shape, p, self.dtype)
    return wrap(out.astype(m.dtype.numpy), m.dtype)


@kernel(R.bernoulli_p)
def _bernoulli_p(ks, self, p, *, generator=None):
    m = R.bernoulli_p.meta(self, p)
    out = _bernoulli_values(engine(generator, "bernoulli"), m.shape, p)
    return wrap(out.astype(m.dtype.numpy), m.dtype)


@kernel(R.bernoulli_tensor)
def _bernoulli_tensor(ks, self, p, *, generator=None):
    m = R.bernoulli_tensor.meta(self, p)
    pd = data(p, "bernoulli")
    _check_probs(pd)
    out = _bernoulli_values(engine(generator, "bernoulli"), m.shape,
                            np.broadcast_to(pd, m.shape), p.dtype)
    return wrap(out.astype(m.dtype.numpy), m.dtype)


def _normal_from(mean, std, m, generator):
    """PyTorch's order: ``normal_(0, std)`` for a float std (``normal_(0, 1)`` then
    ``mul_(std)`` for a tensor one), then ``add_(mean)``."""
    std_is_tensor = hasattr(std, "_ks")
    if std_is_tensor and np.any(data(std, "normal") < 0):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    gen = engine(generator, "normal")
    z = _normal(gen, m.shape, m.dtype, 0.0, 1.0 if std_is_tensor else std)
    if std_is_tensor:
        z = z * data(std, "normal").astype(m.dtype.numpy)
    mean = data(mean, "normal").astype(m.dtype.numpy) if hasattr(mean, "_ks") else mean
    return wrap(np.asarray(z + mean).astype(m.dtype.numpy), m.dtype)


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
    # PyTorch: empty(size).normal_(mean, std)
    return wrap(_normal(engine(generator, "normal"), m.shape, m.dtype, mean, std), m.dtype)


@kernel(R.multinomial)
def _multinomial(ks, self, num_samples, replacement=False, *, generator=None):
    """PyTorch's CPU multinomial.  One sample or none put back: ``argmax``/``topk`` of
    ``p / q`` with ``q`` exponential(1) draws of p's dtype (the exponential race: the
    k first arrivals, each category arriving at rate p).  Several put back: per row the
    running sum of p in p's dtype, divided by the total, then for each sample a double
    uniform and the first category whose cumulative probability reaches it."""
    m = R.multinomial.meta(self, num_samples, replacement)
    probs = data(self, "multinomial")
    rows = probs.reshape(-1, probs.shape[-1])
    if not np.all(np.isfinite(rows) & (rows >= 0)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(rows.astype(np.float64).sum(axis=1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    gen = engine(generator, "multinomial")
    k = int(num_samples)
    if not replacement or k == 1:
        q = _exponentials(gen, rows.shape).astype(rows.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            race = rows / q
        # first index among equal keys, as argmax; topk returns them largest first
        out = np.argsort(-race, axis=1, kind="stable")[:, :k]
    else:
        cum = np.cumsum(rows, axis=1, dtype=rows.dtype)
        cum = cum / cum[:, -1:]
        cum[:, -1] = 1
        u = T.uniform(gen, rows.shape[0] * k, True).reshape(rows.shape[0], k)
        out = np.stack([np.searchsorted(c.astype(np.float64), r, side="left")
                        for c, r in zip(cum, u)])
    return wrap(out.reshape(m.shape).astype(np.int64), D.int64)
