"""Random ops: sampling factories (``rand``, ``randn``, ``randint``, ``randperm``), their
``*_like`` forms, in-place samplers (``uniform_``, ``normal_``, ``bernoulli_``, ...) and
``bernoulli``/``normal``/``multinomial``.

Each takes ``Generator? generator`` where ATen has it (None: the backend's default
generator, see ``fnx.random``).  All are tagged ``nondeterministic``: a compiled graph
must thread an explicit random state through them.
"""
from __future__ import annotations

import operator

import numpy as np

from ...core import dtype as D
from ...core.device import CPU, canonical
from ...core.dispatch_key import CPU_KS
from ...core.random import default_generator_for, rng
from ...core.tensor import Tensor
from ...core.tls import current_mode
from ...dispatch.dispatcher import get_op
from ...ops import aten, prims
from .. import refs
from ..backend_select import device_arg
from ..registry import TensorMeta, decomposition, defop, nondifferentiable
from ..dims import broadcast_shapes
from .elementwise import full
from .factory import OPTS, backend_select, dtype_arg, size_arg

# ---------------------------------------------------------------------------- samplers
# Decompositions draw with the key-based prims: each call takes a fresh key from the
# generator (``fnx.random.next_key``), so decomposed programs are reproducible under
# ``fnx.manual_seed``, though their numbers differ from the eager kernels' (another
# generator).  Samples that are transformed (normal, bernoulli) are computed in float32 for
# half types and rounded once, as the eager kernels do.


def next_key(device=None, generator=None):
    """A fresh key for the key-based random prims (``prims.uniform``, ``prims.normal``, ...).

    Draws two 32-bit words from ``generator``'s state (when None, the default generator of
    ``device``: the CPU one, or the cuda device's own), advancing it, and returns them as an
    int64 tensor of shape [2] on ``device`` (cpu when None or meta): the raw data of a
    threefry2x32 key.  Decomposed random ops take their keys from here, so they are
    reproducible under ``fnx.manual_seed`` and advance the same state as the eager kernels.

    >>> import fnx
    >>> _ = fnx.manual_seed(0); a = fnx.random.next_key()
    >>> _ = fnx.manual_seed(0); b = fnx.random.next_key()
    >>> a.dtype, a.shape, bool((a == b).all())
    (fnx.int64, fnx.Size([2]), True)
    """
    mode = current_mode()
    if mode is not None and hasattr(mode, "rng_key"):
        # Tracing for fnx.compile: the key becomes a graph input, fresh on every call.
        key = mode.rng_key(device, generator)
        if key is not None:
            return key
    dev = CPU if device is None else canonical(device)
    if generator is None:
        generator = default_generator_for(dev)
    words = rng(generator, "next_key").integers(0, 1 << 32, size=2, dtype=np.uint64)
    key = Tensor._make(words.astype(np.int64), D.int64, CPU, CPU_KS)   # no op is called
    # A meta device has no data (and traced tensors live there): the key stays a CPU
    # constant, which a trace records by value.
    if dev is not CPU and dev.type != "meta":
        key = aten._to_copy.default(key, device=dev)
    return key


_key = next_key


def _uniform(shape, dtype, device, generator, low=0.0, high=1.0):
    """Uniform samples in [low, high) of a floating or complex ``dtype`` (complex: the real
    and imaginary parts are independent, as PyTorch's)."""
    if dtype.is_complex:
        real = dtype.to_real()
        return prims.complex(_uniform(shape, real, device, generator, low, high),
                             _uniform(shape, real, device, generator, low, high))
    return prims.uniform(_key(device, generator), list(shape), low, high, dtype=dtype)


def _standard_normal(shape, dtype, device, generator):
    """N(0, 1) samples; a complex sample has variance 1 split evenly over its two parts."""
    if dtype.is_complex:
        real = dtype.to_real()
        half = 0.5 ** 0.5

        def part():
            return prims.normal(_key(device, generator), list(shape), 0.0, half, dtype=real)
        return prims.complex(part(), part())
    return prims.normal(_key(device, generator), list(shape), 0.0, 1.0, dtype=dtype)


def _convert(x, dtype):
    return x if x.dtype is dtype else prims.convert_element_type(x, dtype)


def _device(device):
    return device_arg(device)


CORE = ("core", "factory", "nondeterministic")
FACTORY = ("factory", "nondeterministic")
RANDOM = ("nondeterministic",)
INPLACE = ("inplace", "nondeterministic")
_GEN = "Generator? generator"


def _float_only(name, kernel_name, dtype):
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"\"{kernel_name}\" not implemented for '{dtype.scalar_type}'")
    return dtype


def _sample_meta(name, kernel_name):
    def meta(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
        dtype = dtype_arg(name, dtype, D.get_default_dtype())
        return TensorMeta(size_arg(name, size), _float_only(name, kernel_name, dtype))
    return meta


def _like_sample_meta(name, kernel_name):
    def meta(self, *, generator=None, dtype=None, layout=None, device=None,
             pin_memory=None, memory_format=None):
        dtype = dtype_arg(name, dtype, self.dtype)
        return TensorMeta(tuple(self.shape), _float_only(name, kernel_name, dtype))
    return meta


_UNIFORM, _NORMAL = "check_uniform_bounds", "normal_kernel_cpu"
rand = defop(f"rand(SymInt[] size, *, {OPTS}) -> Tensor", tags=CORE,
             meta=_sample_meta("rand", _UNIFORM))
rand_generator = defop(f"rand.generator(SymInt[] size, *, {_GEN}, {OPTS}) -> Tensor",
                       tags=FACTORY, meta=_sample_meta("rand", _UNIFORM))
randn = defop(f"randn(SymInt[] size, *, {OPTS}) -> Tensor", tags=CORE,
              meta=_sample_meta("randn", _NORMAL))
randn_generator = defop(f"randn.generator(SymInt[] size, *, {_GEN}, {OPTS}) -> Tensor",
                        tags=FACTORY, meta=_sample_meta("randn", _NORMAL))

# ---------------------------------------------------------------------------- integers

_INT_OPTS = OPTS.replace("ScalarType? dtype=None", "ScalarType? dtype=4")


def int_bounds(name, low, high, dtype):
    """Check ``[low, high)`` against each other and ``dtype``'s range (PyTorch's random_)."""
    if not low < high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    if dtype.is_complex:
        raise RuntimeError(f"\"random_from_to\" not implemented for '{dtype.scalar_type}'")
    if dtype is D.bool:
        lo, hi = 0, 1
    elif dtype.is_floating_point:
        lo, hi = -(1 << _MANTISSA[dtype]), 1 << _MANTISSA[dtype]
    else:
        info = np.iinfo(dtype.numpy)
        lo, hi = int(info.min), int(info.max)
    if low < lo or low > hi:
        raise RuntimeError(f"{name}: from is out of bounds for {dtype.scalar_type}")
    if high - 1 > hi:
        raise RuntimeError(f"{name}: to - 1 is out of bounds for {dtype.scalar_type}")


# Integers a float type holds exactly: random_() without bounds samples [0, 2**digits].
_MANTISSA = {D.float16: 11, D.bfloat16: 8, D.float32: 24, D.float64: 53}


def _int(name, arg, v):
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise TypeError(f"{name}(): argument '{arg}' must be int, not {type(v).__name__}")
    return operator.index(v)


def _randint_meta(low, high, size, *, generator=None, dtype=None, layout=None, device=None,
                  pin_memory=None):
    dtype = dtype_arg("randint", dtype, D.int64)
    low, high = _int("randint", "low", low), _int("randint", "high", high)
    int_bounds("randint", low, high, dtype)
    return TensorMeta(size_arg("randint", size), dtype)


def _randint_high_meta(high, size, **kw):
    return _randint_meta(0, high, size, **kw)


def _randint_decomp(low, high, size, *, generator=None, dtype=None, layout=None, device=None,
                    pin_memory=None):
    """``low + floor(u * (high - low))`` with double-precision uniforms u in [0, 1).

    Exactly uniform for ranges up to 2**32 and close to it up to 2**53; computed in float64
    and clamped into [low, high - 1] (the product may round up to the range), then
    converted to the dtype."""
    m = _randint_meta(low, high, size, dtype=dtype)
    dev = _device(device)
    shape = list(m.shape)
    u = _uniform(shape, D.float64, dev, generator)
    v = prims.floor(prims.mul(u, full(shape, float(high - low), D.float64, dev)))
    v = prims.convert_element_type(prims.add(v, full(shape, float(low), D.float64, dev)),
                                   D.int64)
    v = prims.minimum(prims.maximum(v, full(shape, low, D.int64, dev)),
                      full(shape, high - 1, D.int64, dev))
    return _convert(v, m.dtype)


def _randint_high_decomp(high, size, **kw):
    return _randint_decomp(0, high, size, **kw)


randint = defop(f"randint(SymInt high, SymInt[] size, *, {_INT_OPTS}) -> Tensor",
                tags=FACTORY, meta=_randint_high_meta, decomposition=_randint_high_decomp)
randint_generator = defop(f"randint.generator(SymInt high, SymInt[] size, *, {_GEN}, "
                          f"{_INT_OPTS}) -> Tensor", tags=FACTORY, meta=_randint_high_meta,
                          decomposition=_randint_high_decomp)
randint_low = defop(f"randint.low(SymInt low, SymInt high, SymInt[] size, *, {_INT_OPTS}) "
                    f"-> Tensor", tags=FACTORY, meta=_randint_meta,
                    decomposition=_randint_decomp)
randint_low_generator = defop(f"randint.low_generator(SymInt low, SymInt high, SymInt[] size, "
                              f"*, {_GEN}, {_INT_OPTS}) -> Tensor", tags=FACTORY,
                              meta=_randint_meta, decomposition=_randint_decomp)


def _randperm_meta(n, *, generator=None, dtype=None, layout=None, device=None,
                   pin_memory=None):
    n = _int("randperm", "n", n)
    if n < 0:
        raise RuntimeError(f"randperm(): n must be non-negative, got {n}")
    dtype = dtype_arg("randperm", dtype, D.int64)
    if dtype.is_complex or dtype is D.bool:
        raise RuntimeError(f"\"randperm_cpu\" not implemented for '{dtype.scalar_type}'")
    if not dtype.is_floating_point and n - 1 > np.iinfo(dtype.numpy).max:
        raise RuntimeError(f"randperm(): n is too large for result tensor type: "
                           f"'{dtype.scalar_type}'")
    return TensorMeta((n,), dtype)


randperm = defop(f"randperm(SymInt n, *, {_INT_OPTS}) -> Tensor", tags=CORE,
                 meta=_randperm_meta)
randperm_generator = defop(f"randperm.generator(SymInt n, *, {_GEN}, {_INT_OPTS}) -> Tensor",
                           tags=FACTORY, meta=_randperm_meta)

for _f in (rand, rand_generator, randn, randn_generator, randint, randint_generator,
           randint_low, randint_low_generator, randperm, randperm_generator):
    backend_select(_f)

# ---------------------------------------------------------------------------- *_like

_LIKE = f"(Tensor self, *, {OPTS}, MemoryFormat? memory_format=None) -> Tensor"


def _op(qualname):
    return get_op(qualname)


def _like_decomp(factory):
    def decomp(self, *args, dtype=None, layout=None, device=None, pin_memory=None,
               memory_format=None):
        dtype = dtype_arg(factory, dtype, self.dtype)
        dev = self.device if device is None else device
        return _op(f"aten::{factory}")(*args, list(self.shape), dtype=dtype, device=dev)
    return decomp


def _randint_like_meta(self, low, high=None, *, dtype=None, layout=None, device=None,
                       pin_memory=None, memory_format=None):
    if high is None:
        low, high = 0, low
    dtype = dtype_arg("randint_like", dtype, self.dtype)
    int_bounds("randint_like", _int("randint_like", "low", low),
               _int("randint_like", "high", high), dtype)
    return TensorMeta(tuple(self.shape), dtype)


rand_like = defop("rand_like" + _LIKE, tags=RANDOM,
                  meta=_like_sample_meta("rand_like", _UNIFORM),
                  decomposition=_like_decomp("rand"))
randn_like = defop("randn_like" + _LIKE, tags=RANDOM,
                   meta=_like_sample_meta("randn_like", _NORMAL),
                   decomposition=_like_decomp("randn"))
randint_like = defop(f"randint_like(Tensor self, SymInt high, *, {OPTS}, "
                     f"MemoryFormat? memory_format=None) -> Tensor", tags=RANDOM,
                     meta=_randint_like_meta,
                     decomposition=lambda self, high, **kw: _like_decomp("randint.low")(
                         self, 0, high, **kw))
randint_like_low = defop(f"randint_like.low_dtype(Tensor self, SymInt low, SymInt high, *, "
                         f"{OPTS}, MemoryFormat? memory_format=None) -> Tensor", tags=RANDOM,
                         meta=_randint_like_meta, decomposition=_like_decomp("randint.low"))

# ---------------------------------------------------------------------------- in place


def _check_float(name, self):
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(f"\"{name}\" not implemented for '{self.dtype.scalar_type}'")


def _uniform_meta(self, from_=0.0, to=1.0, *, generator=None):
    _check_float(_UNIFORM, self)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_} > to={to}")
    return self


def _check_std(std):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")


def _normal_meta(self, mean=0.0, std=1.0, *, generator=None):
    _check_float(_NORMAL, self)
    _check_std(std)
    return self


def _check_p(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")


def _bernoulli_float_meta(self, p=0.5, *, generator=None):
    _check_p(p)
    return self


def _bernoulli_tensor_meta(self, p, *, generator=None):
    _check_float("bernoulli_tensor_cpu_p_", p)
    if broadcast_shapes(tuple(self.shape), tuple(p.shape)) != tuple(self.shape):
        raise RuntimeError(f"bernoulli_: the probability shape {list(p.shape)} cannot be "
                           f"broadcast to the tensor shape {list(self.shape)}")
    return self


def _exponential_meta(self, lambd=1.0, *, generator=None):
    _check_float("exponential_cpu", self)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return self


def random_bounds(self, from_=None, to=None):
    """``[low, high)`` of ``random_``: the dtype's non-negative range when not given."""
    dtype = self.dtype
    if dtype is D.bool:
        top = 2
    elif dtype.is_floating_point:
        top = (1 << _MANTISSA[dtype]) + 1
    elif dtype.is_complex:
        raise RuntimeError(f"\"random_\" not implemented for '{dtype.scalar_type}'")
    else:
        top = int(np.iinfo(dtype.numpy).max) + 1
    low = 0 if from_ is None else from_
    high = top if to is None else to
    int_bounds("random_", low, high, dtype)
    return low, high


uniform_ = defop(f"uniform_(Tensor(a!) self, float from=0, float to=1, *, "
                 f"{_GEN}=None) -> Tensor(a!)", tags=INPLACE, meta=_uniform_meta)
normal_ = defop(f"normal_(Tensor(a!) self, float mean=0, float std=1, *, {_GEN}=None) "
                f"-> Tensor(a!)", tags=INPLACE, meta=_normal_meta)
bernoulli__float = defop(f"bernoulli_.float(Tensor(a!) self, float p=0.5, *, {_GEN}=None) "
                         f"-> Tensor(a!)", tags=INPLACE, meta=_bernoulli_float_meta)
bernoulli__tensor = defop(f"bernoulli_.Tensor(Tensor(a!) self, Tensor p, *, {_GEN}=None) "
                          f"-> Tensor(a!)", tags=INPLACE, meta=_bernoulli_tensor_meta)
exponential_ = defop(f"exponential_(Tensor(a!) self, float lambd=1, *, {_GEN}=None) "
                     f"-> Tensor(a!)", tags=INPLACE, meta=_exponential_meta)


def _random_meta(self, from_=None, to=None, *, generator=None):
    random_bounds(self, from_, to)
    return self


random_ = defop(f"random_(Tensor(a!) self, *, {_GEN}=None) -> Tensor(a!)", tags=INPLACE,
                meta=_random_meta)
random__to = defop(f"random_.to(Tensor(a!) self, int to, *, {_GEN}=None) -> Tensor(a!)",
                   tags=INPLACE,
                   meta=lambda self, to, *, generator=None: _random_meta(self, 0, to))
random__from = defop(f"random_.from(Tensor(a!) self, int from, int? to, *, {_GEN}=None) "
                     f"-> Tensor(a!)", tags=INPLACE, meta=_random_meta)

# ---------------------------------------------------------------------------- functional


def _bernoulli_meta(self, *, generator=None):
    _check_float("bernoulli_tensor_cpu_self_", self)
    return TensorMeta(tuple(self.shape), self.dtype)


def _bernoulli_p_meta(self, p, *, generator=None):
    _check_p(p)
    return TensorMeta(tuple(self.shape), self.dtype)


def _bernoulli_decomp(meta_fn):
    """``uniform < p`` converted to self's dtype; p is self, a float, or a tensor that
    broadcasts to self, whose values outside [0, 1] (or NaN) are refused by a value
    check, as the eager kernel refuses them."""
    def decomp(self, p=None, *, generator=None):
        m = meta_fn(self, p, generator=generator) if p is not None else meta_fn(self)
        p = self if p is None else p
        shape = list(m.shape)
        if hasattr(p, "_ks"):
            ct = refs.opmath_dtype(p.dtype)
            prob = refs.broadcast_to(_convert(p, ct), tuple(shape))
            prob = refs.checked(prob, aten.logical_and(aten.ge.Scalar(prob, 0),
                                                       aten.le.Scalar(prob, 1)),
                                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.",
                                0.0)
        else:
            ct = D.float64 if self.dtype is D.float64 else D.float32
            prob = full(shape, float(p), ct, self.device)
        u = _uniform(shape, ct, self.device, generator)
        return _convert(prims.lt(u, prob), m.dtype)
    return decomp


def _bernoulli_t_meta(self, p, *, generator=None):
    return TensorMeta(tuple(_bernoulli_tensor_meta(self, p).shape), self.dtype)


bernoulli = defop(f"bernoulli(Tensor self, *, {_GEN}=None) -> Tensor", tags=RANDOM,
                  meta=_bernoulli_meta, decomposition=_bernoulli_decomp(_bernoulli_meta))
bernoulli_p = defop(f"bernoulli.p(Tensor self, float p, *, {_GEN}=None) -> Tensor",
                    tags=RANDOM, meta=_bernoulli_p_meta,
                    decomposition=_bernoulli_decomp(_bernoulli_p_meta))
bernoulli_tensor = defop(f"bernoulli.Tensor(Tensor self, Tensor p, *, {_GEN}=None) -> Tensor",
                         tags=RANDOM, meta=_bernoulli_t_meta,
                         decomposition=_bernoulli_decomp(_bernoulli_t_meta))


def _normal_tensor_meta(mean, std, *, generator=None):
    """normal with a tensor mean and/or std: the broadcast shape, the tensors' dtype."""
    tensors = [t for t in (mean, std) if hasattr(t, "_ks")]
    for t in tensors:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(f"normal expects floating point mean and std, but got "
                               f"{t.dtype.scalar_type}")
    if not hasattr(std, "_ks"):
        _check_std(std)
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = D.promote_types(dtype, t.dtype)
    return TensorMeta(broadcast_shapes(*(tuple(t.shape) for t in tensors)), dtype)


def _normal_float_float_meta(mean, std, size, *, generator=None, dtype=None, layout=None,
                             device=None, pin_memory=None):
    _check_std(std)
    dtype = dtype_arg("normal", dtype, D.get_default_dtype())
    return TensorMeta(size_arg("normal", size), _float_only("normal", _NORMAL, dtype))


def _normal_decomp(mean, std, size=None, *, generator=None, dtype=None, layout=None,
                   device=None, pin_memory=None):
    """``z * std + mean`` with z ~ N(0, 1); mean and std are floats or tensors that
    broadcast together (their shape is the output's), computed in float32 for half types.
    A negative std in a tensor is not checked (that would read data)."""
    if size is None:
        m = _normal_tensor_meta(mean, std)
        dev = next(t.device for t in (mean, std) if hasattr(t, "_ks"))
    else:
        m = _normal_float_float_meta(mean, std, size, dtype=dtype)
        dev = _device(device)
    ct = refs.opmath_dtype(m.dtype)
    z = _standard_normal(m.shape, ct, dev, generator)
    scale = refs.broadcast_to(refs.as_tensor(std, ct, dev), tuple(m.shape))
    shift = refs.broadcast_to(refs.as_tensor(mean, ct, dev), tuple(m.shape))
    return _convert(prims.add(prims.mul(z, scale), shift), m.dtype)


normal_tensor_float = defop(f"normal.Tensor_float(Tensor mean, float std=1, *, {_GEN}=None) "
                            f"-> Tensor", tags=RANDOM, meta=_normal_tensor_meta,
                            decomposition=_normal_decomp)
normal_float_tensor = defop(f"normal.float_Tensor(float mean, Tensor std, *, {_GEN}=None) "
                            f"-> Tensor", tags=RANDOM, meta=_normal_tensor_meta,
                            decomposition=_normal_decomp)
normal_tensor_tensor = defop(f"normal.Tensor_Tensor(Tensor mean, Tensor std, *, {_GEN}=None) "
                             f"-> Tensor", tags=RANDOM, meta=_normal_tensor_meta,
                             decomposition=_normal_decomp)
normal_float_float = backend_select(defop(
    f"normal.float_float(float mean, float std, SymInt[] size, *, {_GEN}=None, {OPTS}) "
    f"-> Tensor", tags=FACTORY, meta=_normal_float_float_meta,
    decomposition=_normal_decomp))


def _multinomial_meta(self, num_samples, replacement=False, *, generator=None):
    if self.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{self.dtype.scalar_type}")
    num_samples = _int("multinomial", "num_samples", num_samples)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_categories = self.shape[-1]
    if not replacement and num_samples > n_categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if n_categories > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    return TensorMeta(tuple(self.shape[:-1]) + (num_samples,), D.int64)


multinomial = defop(f"multinomial(Tensor self, int num_samples, bool replacement=False, *, "
                    f"{_GEN}=None) -> Tensor", tags=RANDOM, meta=_multinomial_meta)

# ---------------------------------------------------------------------------- decompositions
# (randint, bernoulli and normal decompose where they are defined, above; the *_like ops
# decompose to their factories.  In-place samplers are not decomposed: functionalization
# turns ``x.uniform_()`` into a functional sample plus a write-back.)



@decomposition(rand)
@decomposition(rand_generator)
def _rand_decomp(size, *, generator=None, dtype=None, layout=None, device=None,
                 pin_memory=None):
    m = rand.meta(size, dtype=dtype)
    # Sampled in the dtype itself: a float32 sample rounded to a half type could become 1.0
    return _uniform(m.shape, m.dtype, _device(device), generator)


@decomposition(randn)
@decomposition(randn_generator)
def _randn_decomp(size, *, generator=None, dtype=None, layout=None, device=None,
                  pin_memory=None):
    m = randn.meta(size, dtype=dtype)
    z = _standard_normal(m.shape, refs.opmath_dtype(m.dtype), _device(device), generator)
    return _convert(z, m.dtype)


@decomposition(randperm)
@decomposition(randperm_generator)
def _randperm_decomp(n, *, generator=None, dtype=None, layout=None, device=None,
                     pin_memory=None):
    """The order that sorts n random 63-bit keys (two 32-bit draws each): a uniformly random
    permutation up to the (negligible) chance of equal keys, which the stable sort breaks
    by position."""
    m = _randperm_meta(n, dtype=dtype)
    dev = _device(device)
    shape = list(m.shape)
    high = prims.random_bits(_key(dev, generator), shape)
    low = prims.random_bits(_key(dev, generator), shape)
    # (high >> 1) * 2**32 + low stays below 2**63: no int64 overflow
    high = prims.shift_right_arithmetic(high, full(shape, 1, D.int64, dev))
    keys = prims.add(prims.mul(high, full(shape, 1 << 32, D.int64, dev)), low)
    _, order = prims.sort(keys, 0, False, True)
    return _convert(order, m.dtype)


@decomposition(multinomial)
def _multinomial_decomp(self, num_samples, replacement=False, *, generator=None):
    """Category indices drawn with probabilities proportional to the rows of ``self``.

    With replacement: inverse transform sampling, the number of cumulative sums that are
    <= u * total for u uniform in [0, 1) (zero-probability categories are never drawn).
    Without replacement: the Gumbel top-k trick, the k largest log(p) + Gumbel noise, which
    has the distribution of drawing k times without putting back.  The eager kernel's
    refusals (a negative, infinite or NaN probability, a row summing to 0) are value
    checks, so a compiled program refuses what it refuses."""
    m = _multinomial_meta(self, num_samples, replacement)
    dev = self.device
    ct = refs.opmath_dtype(self.dtype)
    p = _convert(self, ct)
    if p.ndim == 1:
        p = prims.broadcast_in_dim(p, [1, p.shape[0]], [1])
    rows, n = p.shape
    p = refs.checked(p, aten.logical_and(aten.isfinite(p), aten.ge.Scalar(p, 0)),
                     "probability tensor contains either `inf`, `nan` or element < 0", 0.0)
    p = refs.checked(p, aten.gt.Scalar(aten.sum.dim_IntList(p, [1], True), 0),
                     "invalid multinomial distribution (sum of probabilities <= 0)", 0.0)
    k = int(num_samples)
    if not replacement:
        # u in [tiny, 1) keeps -log(-log(u)) finite
        tiny = float(np.finfo(ct.numpy).tiny)
        u = prims.uniform(_key(dev, generator), [rows, n], tiny, 1.0, dtype=ct)
        gumbel = prims.neg(prims.log(prims.neg(prims.log(u))))
        _, idx = prims.top_k(prims.add(prims.log(p), gumbel), k, 1, True)
    else:
        cdf = prims.cumsum(p, 1)
        total = prims.slice(cdf, [0, n - 1], [rows, n])                    # [rows, 1]
        u = prims.mul(prims.uniform(_key(dev, generator), [rows, k], 0.0, 1.0, dtype=ct),
                      refs.broadcast_to(total, (rows, k)))
        below = prims.le(prims.broadcast_in_dim(cdf, [rows, k, n], [0, 2]),
                         prims.broadcast_in_dim(u, [rows, k, n], [0, 1]))
        idx = prims.reduce_sum(prims.convert_element_type(below, D.int64), [2])
        # u * total may round up to total: stay on the last category
        idx = prims.minimum(idx, full([rows, k], n - 1, D.int64, dev))
    if self.ndim == 1:
        idx = prims.reshape(idx, list(m.shape))
    return idx


# ---------------------------------------------------------------------------- poisson, binomial
# Counts drawn by the key-based prims (one key per call), in float32 for half types.

def _poisson_meta(self, generator=None):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"\"poisson_cpu\" not implemented for '{self.dtype.scalar_type}'")
    return TensorMeta(tuple(self.shape), self.dtype)


def _poisson_decomp(self, generator=None):
    m = _poisson_meta(self)
    ct = refs.opmath_dtype(m.dtype)
    rate = _convert(self, ct)
    rate = refs.checked(rate, aten.ge.Scalar(rate, 0),
                        "invalid Poisson rate, expected rate to be non-negative", 0.0)
    return _convert(prims.poisson(_key(self.device, generator), rate), m.dtype)


def _binomial_meta(count, prob, generator=None):
    for name, t in (("count", count), ("prob", prob)):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"\"binomial_cpu\" not implemented for "
                               f"'{t.dtype.scalar_type}' ({name})")
    if count.dtype is not prob.dtype:
        raise RuntimeError(f"binomial: expected count and prob to have the same dtype, got "
                           f"{count.dtype.scalar_type} and {prob.dtype.scalar_type}")
    return TensorMeta(broadcast_shapes(tuple(count.shape), tuple(prob.shape)), count.dtype)


def _binomial_decomp(count, prob, generator=None):
    m = _binomial_meta(count, prob)
    ct = refs.opmath_dtype(m.dtype)
    n = refs.broadcast_to(_convert(count, ct), tuple(m.shape))
    p = refs.broadcast_to(_convert(prob, ct), tuple(m.shape))
    return _convert(prims.binomial(_key(count.device, generator), n, p), m.dtype)


poisson = defop(f"poisson(Tensor self, {_GEN}=None) -> Tensor", tags=RANDOM,
                meta=_poisson_meta, decomposition=_poisson_decomp)
binomial = defop(f"binomial(Tensor count, Tensor prob, {_GEN}=None) -> Tensor", tags=RANDOM,
                 meta=_binomial_meta, decomposition=_binomial_decomp)


# ---------------------------------------------------------------------------- autograd
# Samples get no gradient (PyTorch's rule for these ops: no reparameterization).


nondifferentiable(rand, rand_generator, randn, randn_generator, randint, randint_generator,
                  randint_low, randint_low_generator, randperm, randperm_generator, rand_like,
                  randn_like, randint_like, randint_like_low, bernoulli, bernoulli_p,
                  bernoulli_tensor, normal_tensor_float, normal_float_tensor,
                  normal_tensor_tensor, normal_float_float, multinomial, poisson, binomial)
