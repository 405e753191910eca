"""OpInfo entries for random ops (fnx/ir/aten/random.py).

Random results cannot be compared value by value (eager kernels draw PyTorch's CPU
stream, decompositions from the key-based prims), so every entry is ``nondeterministic``: the
checks compare dtypes and shapes, and the error inputs check PyTorch's argument errors.
Distributions, ranges and reproducibility under ``fnx.manual_seed`` are tested in
tests/test_decomp_factory_random.py and tests/test_random.py.

The decomposed samplers run ``jax.random``, which compiles once per shape and dtype, so
the samples reuse a few shapes.  In-place samplers (``uniform_``, ``normal_``, ...) are
entered as in-place variants: they are not decomposed (functionalization replaces them).
"""
from __future__ import annotations

import numpy as np

import fnx

from ...core import dtype as D
from ...ops import aten
from ..database import (ALL_DTYPES, FLOATS, INTS, ErrorInput, OpInfo, SampleInput, make_tensor,
                        register)

SIZES = ([2, 3], [0])
NUMERIC = FLOATS + INTS


def _gen(seed=0):
    return fnx.Generator().manual_seed(seed)


def _np(dtype, default):
    return default if dtype is None else np.dtype(dtype.numpy)


def _shaped(default):
    """Reference of a sampling factory: an array of the result's shape and dtype."""
    def ref(*args, size=None, dtype=None, **_):
        return np.zeros(size, _np(dtype, np.dtype(default)))
    return ref


# --------------------------------------------------------------------------- rand, randn

def _sampler_samples(info, device, dtype):
    for size in SIZES:
        yield SampleInput(size, dtype=dtype, device=device)
    if dtype is D.float32:
        yield SampleInput([], device=device)        # the default float dtype


def _sampler_generator_samples(info, device, dtype):
    for size in SIZES:
        yield SampleInput(size, generator=_gen(), dtype=dtype, device=device)


def _sampler_ref(size, *, dtype=None, **_):
    return np.zeros(size, _np(dtype, np.dtype(np.float32)))


def _sampler_errors(kernel):
    def errors(info, device):
        yield ErrorInput(SampleInput([2], dtype=D.int64, device=device), RuntimeError,
                         f"\"{kernel}\" not implemented for 'Long'")
        yield ErrorInput(SampleInput([-1], device=device), RuntimeError,
                         "negative dimension -1")
    return errors


# --------------------------------------------------------------------------- randint

def _bounds(dtype):
    if dtype is D.bool:
        return 0, 2
    if dtype is D.uint8:
        return 3, 200
    return (-5, 6) if dtype.is_floating_point else (-100, 100)


def _randint_low_samples(info, device, dtype, generator=False):
    low, high = _bounds(dtype)
    kw = {"generator": _gen()} if generator else {}
    for size in SIZES:
        yield SampleInput(low, high, size, dtype=dtype, device=device, **kw)
    if dtype is D.int64:
        yield SampleInput(0, 2 ** 40, [2, 3], device=device, **kw)    # int64 by default


def _randint_samples(info, device, dtype, generator=False):
    high = _bounds(dtype)[1]
    kw = {"generator": _gen()} if generator else {}
    for size in SIZES:
        yield SampleInput(high, size, dtype=dtype, device=device, **kw)


def _randint_low_ref(low, high, size, *, dtype=None, **_):
    return np.zeros(size, _np(dtype, np.dtype(np.int64)))


def _randint_ref(high, size, *, dtype=None, **_):
    return np.zeros(size, _np(dtype, np.dtype(np.int64)))


def _randint_errors(info, device):
    yield ErrorInput(SampleInput(5, 5, [2], device=device), RuntimeError,
                     "random_ expects 'from' to be less than 'to', but got from=5 >= to=5")
    yield ErrorInput(SampleInput(0, 300, [2], dtype=D.int8, device=device), RuntimeError,
                     "to - 1 is out of bounds for Char")


# --------------------------------------------------------------------------- randperm

def _randperm_samples(info, device, dtype, generator=False):
    kw = {"generator": _gen()} if generator else {}
    for n in (6, 0, 1):
        yield SampleInput(n, dtype=dtype, device=device, **kw)


def _randperm_ref(n, *, dtype=None, **_):
    return np.arange(n).astype(_np(dtype, np.dtype(np.int64)))


def _randperm_errors(info, device):
    yield ErrorInput(SampleInput(-1, device=device), RuntimeError,
                     "n must be non-negative, got -1")
    yield ErrorInput(SampleInput(300, dtype=D.int8, device=device), RuntimeError,
                     "n is too large for result tensor type")


# --------------------------------------------------------------------------- bernoulli

def _probs(shape, dtype, device, **kw):
    return make_tensor(shape, dtype, device, low=0, high=1, **kw)


def _bernoulli_samples(info, device, dtype):
    yield SampleInput(_probs((2, 3), dtype, device))
    yield SampleInput(_probs((), dtype, device))
    yield SampleInput(_probs((0, 3), dtype, device))
    yield SampleInput(_probs((3, 2), dtype, device, noncontiguous=True), generator=_gen())


def _bernoulli_p_samples(info, device, dtype):
    yield SampleInput(make_tensor((2, 3), dtype, device), 0.3)
    yield SampleInput(make_tensor((), dtype, device), 1.0)
    yield SampleInput(make_tensor((0, 2), dtype, device), 0.0, generator=_gen())


def _bernoulli_tensor_samples(info, device, dtype):
    p_dtype = dtype if dtype.is_floating_point else D.float32
    yield SampleInput(make_tensor((2, 3), dtype, device), _probs((2, 3), p_dtype, device))
    yield SampleInput(make_tensor((2, 3), dtype, device), _probs((3,), p_dtype, device))
    yield SampleInput(make_tensor((0, 3), dtype, device), _probs((), D.float64, device))


def _like_ref(a, *args, dtype=None, **_):
    return np.zeros(a.shape, _np(dtype, a.dtype))


def _bernoulli_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2,), D.int64, device)), RuntimeError,
                     "\"bernoulli_tensor_cpu_self_\" not implemented for 'Long'")


def _bernoulli_p_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2,), D.float32, device), 1.5), RuntimeError,
                     "bernoulli_ expects p to be in \\[0, 1\\], but got p=1.5")


def _bernoulli_tensor_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2,), D.float32, device),
                                 make_tensor((3,), D.float32, device)), RuntimeError,
                     "must match the size|cannot be broadcast")


# --------------------------------------------------------------------------- normal

def _std(shape, dtype, device):
    return make_tensor(shape, dtype, device, low=0, high=3)


def _normal_tensor_float_samples(info, device, dtype):
    yield SampleInput(make_tensor((2, 3), dtype, device), 2.0)
    yield SampleInput(make_tensor((), dtype, device))
    yield SampleInput(make_tensor((0, 3), dtype, device), 0.5, generator=_gen())


def _normal_float_tensor_samples(info, device, dtype):
    yield SampleInput(1.5, _std((2, 3), dtype, device))
    yield SampleInput(-1.0, _std((0,), dtype, device))


def _normal_tensor_tensor_samples(info, device, dtype):
    yield SampleInput(make_tensor((2, 3), dtype, device), _std((2, 3), dtype, device))
    yield SampleInput(make_tensor((3,), dtype, device), _std((2, 1), dtype, device))
    yield SampleInput(make_tensor((0, 3), dtype, device), _std((), D.float32, device))


def _normal_tensor_ref(mean, std=1.0, **_):
    arrays = [x for x in (mean, std) if isinstance(x, np.ndarray)]
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    dtype = arrays[0].dtype
    for a in arrays[1:]:
        dtype = _promote_floats(dtype, a.dtype)
    return np.zeros(shape, dtype)


def _promote_floats(a, b):
    """PyTorch's promotion of two floating dtypes (float16 with bfloat16 is float32)."""
    if a == b:
        return a
    if {a.name, b.name} == {"float16", "bfloat16"}:
        return np.dtype(np.float32)
    return a if a.itemsize >= b.itemsize else b


def _normal_float_float_samples(info, device, dtype):
    for size in SIZES:
        yield SampleInput(0.5, 2.0, size, dtype=dtype, device=device)
    if dtype is D.float32:
        yield SampleInput(0.0, 1.0, [2, 3], generator=_gen(), device=device)


def _normal_float_float_ref(mean, std, size, *, dtype=None, **_):
    return np.zeros(size, _np(dtype, np.dtype(np.float32)))


def _normal_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2,), D.float32, device), -1.0), RuntimeError,
                     "normal expects std >= 0.0, but found std -1")
    yield ErrorInput(SampleInput(make_tensor((2,), D.int64, device), 1.0), RuntimeError,
                     "normal expects floating point mean and std")


# --------------------------------------------------------------------------- multinomial

def _multinomial_samples(info, device, dtype):
    probs = make_tensor((2, 5), dtype, device, low=0.1, high=1)
    yield SampleInput(probs, 3)
    yield SampleInput(probs, 7, True)
    yield SampleInput(make_tensor((4,), dtype, device, low=0.1, high=1), 4)
    yield SampleInput(make_tensor((4,), dtype, device, low=0.1, high=1), 2, True,
                      generator=_gen())


def _multinomial_ref(probs, num_samples, replacement=False, **_):
    return np.zeros(probs.shape[:-1] + (num_samples,), np.int64)


def _multinomial_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2, 2, 2), D.float32, device), 1), RuntimeError,
                     "prob_dist must be 1 or 2 dim")
    yield ErrorInput(SampleInput(make_tensor((3,), D.float32, device, low=0.1), 4),
                     RuntimeError, "cannot sample n_sample > prob_dist.size\\(-1\\) samples "
                                   "without replacement")
    yield ErrorInput(SampleInput(make_tensor((3,), D.int64, device), 1), RuntimeError,
                     "multinomial only supports floating-point dtypes")


# --------------------------------------------------------------------------- *_like

def _like_samples(info, device, dtype):
    yield SampleInput(make_tensor((2, 3), dtype, device))
    yield SampleInput(make_tensor((0,), dtype, device))
    yield SampleInput(make_tensor((2, 3), D.float64, device), dtype=dtype, device=device)


def _randint_like_samples(info, device, dtype):
    low, high = _bounds(dtype)
    yield SampleInput(make_tensor((2, 3), dtype, device), high)
    yield SampleInput(make_tensor((0,), dtype, device), high)
    yield SampleInput(make_tensor((2, 3), D.float64, device), high, dtype=dtype)


def _randint_like_low_samples(info, device, dtype):
    low, high = _bounds(dtype)
    yield SampleInput(make_tensor((2, 3), dtype, device), low, high)
    yield SampleInput(make_tensor((0,), D.float32, device), low, high, dtype=dtype)


# --------------------------------------------------------------------------- in place

def _uniform__samples(info, device, dtype):
    yield SampleInput(make_tensor((2, 3), dtype, device))
    yield SampleInput(make_tensor((), dtype, device), -2.0, 3.0)
    yield SampleInput(make_tensor((4, 3), dtype, device).t(), 1.0, 1.0, generator=_gen())


def _normal__samples(info, device, dtype):
    yield SampleInput(make_tensor((2, 3), dtype, device))
    yield SampleInput(make_tensor((0, 2), dtype, device), 1.0, 0.5)
    yield SampleInput(make_tensor((3, 2), dtype, device, noncontiguous=True), -1.0, 2.0,
                      generator=_gen())


def _bernoulli__float_samples(info, device, dtype):
    yield SampleInput(make_tensor((2, 3), dtype, device))
    yield SampleInput(make_tensor((), dtype, device), 0.25, generator=_gen())


def _bernoulli__tensor_samples(info, device, dtype):
    yield SampleInput(make_tensor((2, 3), dtype, device), _probs((3,), D.float32, device))
    yield SampleInput(make_tensor((2,), dtype, device), _probs((2,), D.float64, device))


def _exponential__samples(info, device, dtype):
    yield SampleInput(make_tensor((2, 3), dtype, device))
    yield SampleInput(make_tensor((), dtype, device), 0.5, generator=_gen())


def _random__samples(info, device, dtype):
    yield SampleInput(make_tensor((2, 3), dtype, device))
    yield SampleInput(make_tensor((0,), dtype, device), generator=_gen())


def _random__to_samples(info, device, dtype):
    yield SampleInput(make_tensor((2, 3), dtype, device), 2)
    yield SampleInput(make_tensor((), dtype, device), 1)


def _random__from_samples(info, device, dtype):
    low, high = _bounds(dtype)
    yield SampleInput(make_tensor((2, 3), dtype, device), low, high)
    yield SampleInput(make_tensor((3,), dtype, device), 0, None)


def _self_ref(a, *args, **_):
    return np.zeros(a.shape, a.dtype)


def _uniform__errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2,), D.float32, device), 1.0, 0.0),
                     RuntimeError, "uniform_ expects to return a \\[from, to\\) range")
    yield ErrorInput(SampleInput(make_tensor((2,), D.int64, device)), RuntimeError,
                     "\"check_uniform_bounds\" not implemented for 'Long'")


def _exponential__errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2,), D.float32, device), 0.0), RuntimeError,
                     "exponential_ expects lambda > 0.0")


def _inplace(op, samples, dtypes=FLOATS, errors=None):
    return OpInfo(op, _self_ref, dtypes, samples, error_inputs=errors, nondeterministic=True,
                  variant="inplace", variants=False)


def _random(op, ref, dtypes, samples, errors=None):
    return OpInfo(op, ref, dtypes, samples, error_inputs=errors, nondeterministic=True)


register(
    _random(aten.rand.default, _sampler_ref, FLOATS, _sampler_samples,
            _sampler_errors("check_uniform_bounds")),
    _random(aten.rand.generator, _sampler_ref, FLOATS, _sampler_generator_samples),
    _random(aten.randn.default, _sampler_ref, FLOATS, _sampler_samples,
            _sampler_errors("normal_kernel_cpu")),
    _random(aten.randn.generator, _sampler_ref, FLOATS, _sampler_generator_samples),
    _random(aten.randint.low, _randint_low_ref, ALL_DTYPES, _randint_low_samples,
            _randint_errors),
    _random(aten.randint.low_generator, _randint_low_ref, ALL_DTYPES,
            lambda i, dev, dt: _randint_low_samples(i, dev, dt, generator=True)),
    _random(aten.randint.default, _randint_ref, ALL_DTYPES, _randint_samples),
    _random(aten.randint.generator, _randint_ref, ALL_DTYPES,
            lambda i, dev, dt: _randint_samples(i, dev, dt, generator=True)),
    _random(aten.randperm.default, _randperm_ref, NUMERIC, _randperm_samples,
            _randperm_errors),
    _random(aten.randperm.generator, _randperm_ref, NUMERIC,
            lambda i, dev, dt: _randperm_samples(i, dev, dt, generator=True)),
    _random(aten.bernoulli.default, _like_ref, FLOATS, _bernoulli_samples, _bernoulli_errors),
    _random(aten.bernoulli.p, _like_ref, ALL_DTYPES, _bernoulli_p_samples,
            _bernoulli_p_errors),
    _random(aten.bernoulli.Tensor, _like_ref, ALL_DTYPES, _bernoulli_tensor_samples,
            _bernoulli_tensor_errors),
    _random(aten.normal.Tensor_float, _normal_tensor_ref, FLOATS,
            _normal_tensor_float_samples, _normal_errors),
    _random(aten.normal.float_Tensor, _normal_tensor_ref, FLOATS,
            _normal_float_tensor_samples),
    _random(aten.normal.Tensor_Tensor, _normal_tensor_ref, FLOATS,
            _normal_tensor_tensor_samples),
    _random(aten.normal.float_float, _normal_float_float_ref, FLOATS,
            _normal_float_float_samples),
    _random(aten.multinomial.default, _multinomial_ref, FLOATS, _multinomial_samples,
            _multinomial_errors),
    _random(aten.rand_like.default, _like_ref, FLOATS, _like_samples),
    _random(aten.randn_like.default, _like_ref, FLOATS, _like_samples),
    _random(aten.randint_like.default, _like_ref, NUMERIC, _randint_like_samples),
    _random(aten.randint_like.low_dtype, _like_ref, NUMERIC, _randint_like_low_samples),
    _inplace(aten.uniform_.default, _uniform__samples, errors=_uniform__errors),
    _inplace(aten.normal_.default, _normal__samples),
    _inplace(aten.bernoulli_.float, _bernoulli__float_samples, ALL_DTYPES),
    _inplace(aten.bernoulli_.Tensor, _bernoulli__tensor_samples, ALL_DTYPES),
    _inplace(aten.exponential_.default, _exponential__samples, errors=_exponential__errors),
    _inplace(aten.random_.default, _random__samples, NUMERIC),
    _inplace(aten.random_.to, _random__to_samples, ALL_DTYPES),
    _inplace(getattr(aten.random_, "from"), _random__from_samples, NUMERIC),
)


# --------------------------------------------------------------------------- poisson, binomial

def _poisson_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device, low=0.0, high=5.0))
    yield SampleInput(make_tensor((), dtype, device, low=0.5, high=2.0), generator=_gen())


def _poisson_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2,), D.int64, device)), RuntimeError,
                     "\"poisson_cpu\" not implemented for 'Long'")


def _binomial_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device, low=0.0, high=9.0).round(),
                      make_tensor((3, 4), dtype, device, low=0.0, high=1.0))
    yield SampleInput(make_tensor((2, 1), dtype, device, low=1.0, high=4.0).round(),
                      make_tensor((3,), dtype, device, low=0.0, high=1.0), generator=_gen())


def _binomial_ref(count, prob, **_):
    return np.zeros(np.broadcast_shapes(count.shape, prob.shape), count.dtype)


def _binomial_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2,), D.int64, device),
                                 make_tensor((2,), D.float32, device)), RuntimeError,
                     "\"binomial_cpu\" not implemented for 'Long'")


register(
    _random(aten.poisson.default, _like_ref, FLOATS, _poisson_samples, _poisson_errors),
    _random(aten.binomial.default, _binomial_ref, FLOATS, _binomial_samples, _binomial_errors),
)
