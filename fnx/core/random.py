"""Random number state: ``fnx.Generator``, ``fnx.manual_seed``, ``fnx.seed``.

A CPU ``Generator`` runs PyTorch's CPU engine: a 32-bit Mersenne Twister (mt19937) seeded
with the low 32 bits of the seed, as PyTorch's ``CPUGeneratorImpl`` does (NumPy's
``MT19937`` produces the raw stream, vectorized), plus the cached second Box-Muller value
of PyTorch's scalar normal sampler.  The CPU kernels (``fnx.backends.cpu.random``) apply
PyTorch's transforms to that stream, so a seeded program draws PyTorch's numbers.
Every random op takes an optional ``generator=``; without one it draws from
``default_generator``, which, like PyTorch's, starts from the fixed seed 67280421310721 so
a fresh process is reproducible.
Other backends (CUDA) keep their own state; they register a hook with
``register_seed_hook`` so ``fnx.manual_seed`` seeds them too.

>>> import fnx
>>> _ = fnx.manual_seed(0); a = fnx.rand(3)
>>> _ = fnx.manual_seed(0); b = fnx.rand(3)
>>> bool((a == b).all())
True
"""
from __future__ import annotations

import os
import struct

import numpy as np

from . import dtype as D
from .device import CPU
from .device import device as _device
from .dispatch_key import CPU_KS
from .tensor import Tensor

__all__ = ["Generator", "default_generator", "engine", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "fork_rng", "register_seed_hook",
           "register_default_generator", "default_generator_for"]

DEFAULT_SEED = 67280421310721       # PyTorch's default CPU seed
_U64 = (1 << 64) - 1
_MT_N = 624                         # mt19937's state words
# Serialized state: initial seed, position in the mt19937 block, has-cached-normal flag,
# the cached normal (a double), then the 624 state words.
_STATE = struct.Struct(f"<QqQd{_MT_N}I")


def _check_seed(seed) -> int:
    """PyTorch accepts any int in [-2**63, 2**64) and keeps it modulo 2**64."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        if hasattr(seed, "__index__"):
            seed = seed.__index__()
        else:
            raise TypeError(f"manual_seed expected an int seed, got {type(seed).__name__}")
    seed = int(seed)
    if not -(1 << 63) <= seed <= _U64:
        raise RuntimeError(f"Overflow when unpacking long: seed {seed} is out of the range "
                           f"[-2**63, 2**64 - 1]")
    return seed & _U64


class Generator:
    """A random number generator, as ``torch.Generator``: seedable, with a savable state.

    The engine is PyTorch's CPU one (mt19937 seeded with ``seed mod 2**32``), and these
    draws reproduce PyTorch's CPU values bit for bit: ``rand``/``uniform_`` (so
    ``nn.init.uniform_``/``kaiming_uniform_``, hence Linear/Conv/RNN initializations),
    ``randn``/``normal_``/``normal`` (both of PyTorch's paths: the block-of-16 Box-Muller
    for >= 16 contiguous elements, the scalar one with its cached second value
    otherwise), ``randint``/``random_``, ``randperm``, ``bernoulli``/``bernoulli_`` and
    the dropout masks (``dropout``, ``dropout1d/2d/3d``); float32, float64, complex, and
    half/bfloat16 for uniforms and for normals of < 16 elements; strided in-place fills
    in memory order, as PyTorch.  Drawn from the same stream but NOT PyTorch-exact:
    half/bfloat16 ``normal_`` of >= 16 elements, alpha dropout, ``exponential_``
    and the distributions built on it, ``multinomial``, ``poisson``/``binomial``, and
    compiled (traced) random ops, which draw a key from the generator.

    >>> import fnx
    >>> g = fnx.Generator().manual_seed(42)
    >>> g.initial_seed(), g.device
    (42, device(type='cpu'))
    >>> s = g.get_state(); x = fnx.rand(2, generator=g); _ = g.set_state(s)
    >>> bool((fnx.rand(2, generator=g) == x).all())
    True
    >>> fnx.rand(3, generator=fnx.Generator().manual_seed(0))  # PyTorch's values
    tensor([0.4963, 0.7682, 0.0885])
    """

    def __init__(self, device="cpu"):
        dev = _device(device)
        if dev.type != "cpu":
            raise RuntimeError(f"Generator: fnx has no random number generator for device "
                               f"type '{dev.type}' (only 'cpu' generators exist)")
        self.device = CPU
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed) -> "Generator":
        """Reset the state from ``seed``; returns the generator."""
        self._seed = _check_seed(seed)
        # mt19937's standard initialisation from a 32-bit seed (PyTorch keeps the low
        # 32 bits of its 64-bit seed); NumPy's legacy RandomState seeding is exactly it.
        key = np.random.RandomState(self._seed & 0xFFFFFFFF).get_state(legacy=False)
        self._set_engine(key["state"]["key"], key["state"]["pos"])
        self._normal = None          # PyTorch's cached second Box-Muller value (a double)
        return self

    def _set_engine(self, key, pos):
        self._bitgen = np.random.MT19937()
        self._bitgen.state = {"bit_generator": "MT19937",
                              "state": {"key": np.asarray(key, np.uint32), "pos": int(pos)}}
        # NumPy's sampler over the same stream, for the ops that are not PyTorch-exact.
        self._rng = np.random.Generator(self._bitgen)

    def random32(self, n: int) -> np.ndarray:
        """The next ``n`` raw 32-bit outputs (PyTorch's ``random()``), as uint64."""
        return self._bitgen.random_raw(int(n)) if n else np.zeros(0, np.uint64)

    def random64(self, n: int) -> np.ndarray:
        """The next ``n`` 64-bit values (PyTorch's ``random64()``: two outputs, the first
        the high word), as uint64."""
        r = self.random32(2 * n)
        return (r[0::2] << np.uint64(32)) | r[1::2]

    def seed(self) -> int:
        """Seed from OS entropy; returns the new seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        """The state as a uint8 tensor (pass it to ``set_state``)."""
        st = self._bitgen.state["state"]
        cached = self._normal is not None
        raw = _STATE.pack(self._seed, int(st["pos"]), int(cached),
                          self._normal if cached else 0.0, *st["key"].tolist())
        return Tensor._make(np.frombuffer(raw, np.uint8).copy(), D.uint8, CPU, CPU_KS)

    def set_state(self, new_state) -> "Generator":
        """Restore a state from ``get_state`` (a uint8 tensor, or its bytes)."""
        if hasattr(new_state, "_ks"):
            if new_state.dtype is not D.uint8:
                raise TypeError(f"expected a torch.ByteTensor (uint8) state, but got "
                                f"{new_state.dtype}")
            raw = bytes(np.asarray(new_state.numpy(force=True)).reshape(-1))
        elif isinstance(new_state, (bytes, bytearray, memoryview)):
            raw = bytes(new_state)
        else:
            raise TypeError(f"set_state expected a uint8 tensor or bytes, got "
                            f"{type(new_state).__name__}")
        if len(raw) != _STATE.size:
            raise RuntimeError(f"Expected a state of {_STATE.size} bytes, but got "
                               f"{len(raw)} (not a fnx CPU generator state)")
        seed, pos, cached, normal, *key = _STATE.unpack(raw)
        if not 0 <= pos <= _MT_N:
            raise RuntimeError(f"set_state: invalid mt19937 position {pos} (not a fnx CPU "
                               f"generator state)")
        self._set_engine(key, pos)
        self._seed = seed
        self._normal = normal if cached else None
        return self

    def __repr__(self):
        return f"<fnx.Generator device='{self.device}' initial_seed={self._seed}>"


def engine(generator, op_name="random op") -> Generator:
    """The CPU ``Generator`` a kernel draws from (the default one when ``None``)."""
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator) or generator.device.type != "cpu":
        dev = getattr(generator, "device", type(generator).__name__)
        raise RuntimeError(f"{op_name}: Expected a 'cpu' device type for generator but found "
                           f"'{dev}'")
    return generator


def rng(generator, op_name="random op") -> np.random.Generator:
    """The NumPy sampler over ``engine(generator)``'s stream, for the draws that are not
    PyTorch-exact."""
    return engine(generator, op_name)._rng


default_generator = Generator()
_seed_hooks: list = []
_default_generators: dict = {"cpu": lambda index: default_generator}


def register_seed_hook(fn) -> None:
    """``fn(seed)`` runs on every ``manual_seed``/``seed``: other backends' generators."""
    if fn not in _seed_hooks:
        _seed_hooks.append(fn)


def register_default_generator(device_type: str, generator_for) -> None:
    """``generator_for(index)`` is the default generator of device ``device_type:index``
    (a backend with its own random state registers it: ``fnx.cuda`` keeps one per device)."""
    _default_generators[device_type] = generator_for


def default_generator_for(dev):
    """The generator a random op on device ``dev`` draws from when given none; the CPU
    default generator for a device type without its own (meta, out-of-tree backends)."""
    fn = _default_generators.get(dev.type)
    return default_generator if fn is None else fn(dev.index or 0)


def manual_seed(seed) -> Generator:
    """Seed every generator (the CPU default one and each backend's); returns the CPU one.

    >>> import fnx
    >>> fnx.manual_seed(3).initial_seed()
    3
    """
    default_generator.manual_seed(seed)
    s = default_generator.initial_seed()
    for hook in _seed_hooks:
        hook(s)
    return default_generator


def seed() -> int:
    """Seed every generator from OS entropy; returns the seed."""
    s = default_generator.seed()
    for hook in _seed_hooks:
        hook(s)
    return s


def initial_seed() -> int:
    """The seed the default CPU generator started from."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default CPU generator's state as a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


class fork_rng:
    """Context manager: random calls inside leave the default generator's state unchanged.

    >>> import fnx
    >>> with fnx.random.fork_rng():
    ...     _ = fnx.rand(2)
    """

    def __init__(self, devices=None, enabled=True):
        self.enabled = enabled

    def __enter__(self):
        if self.enabled:
            self.state = default_generator.get_state()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            default_generator.set_state(self.state)
