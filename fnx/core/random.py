"""Random number state: ``fnx.Generator``, ``fnx.manual_seed``, ``fnx.seed``.

A CPU ``Generator`` wraps a NumPy ``Generator(PCG64)``.  Every random op takes an
optional ``generator=``; without one it draws from ``default_generator``, which, like
PyTorch's, starts from the fixed seed 67280421310721 so a fresh process is reproducible.
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

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "fork_rng", "register_seed_hook",
           "register_default_generator", "default_generator_for"]

DEFAULT_SEED = 67280421310721       # PyTorch's default CPU seed
_U64 = (1 << 64) - 1
_U128 = (1 << 128) - 1
# Serialized state: initial seed, PCG64 state and increment, has_uint32 flag, cached uint32.
_STATE = struct.Struct("<Q16s16sQQ")


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

    >>> import fnx
    >>> g = fnx.Generator().manual_seed(42)
    >>> g.initial_seed(), g.device
    (42, device(type='cpu'))
    >>> s = g.get_state(); x = fnx.rand(2, generator=g); _ = g.set_state(s)
    >>> bool((fnx.rand(2, generator=g) == x).all())
    True
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
        self._bitgen = np.random.PCG64(self._seed)
        self._rng = np.random.Generator(self._bitgen)
        return self

    def seed(self) -> int:
        """Seed from OS entropy; returns the new seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        """The state as a uint8 tensor (pass it to ``set_state``)."""
        st = self._bitgen.state
        raw = _STATE.pack(self._seed, st["state"]["state"].to_bytes(16, "little"),
                          st["state"]["inc"].to_bytes(16, "little"), st["has_uint32"],
                          st["uinteger"])
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
        seed, state, inc, has_uint32, uinteger = _STATE.unpack(raw)
        bitgen = np.random.PCG64()
        bitgen.state = {"bit_generator": "PCG64",
                        "state": {"state": int.from_bytes(state, "little") & _U128,
                                  "inc": int.from_bytes(inc, "little") & _U128},
                        "has_uint32": int(has_uint32), "uinteger": int(uinteger)}
        self._seed = seed
        self._bitgen = bitgen
        self._rng = np.random.Generator(bitgen)
        return self

    def __repr__(self):
        return f"<fnx.Generator device='{self.device}' initial_seed={self._seed}>"


def rng(generator, op_name="random op") -> np.random.Generator:
    """The NumPy generator a CPU kernel draws from (the default one when ``None``)."""
    if generator is None:
        return default_generator._rng
    r = getattr(generator, "_rng", None)
    if r is None or getattr(generator, "device", CPU).type != "cpu":
        dev = getattr(generator, "device", type(generator).__name__)
        raise RuntimeError(f"{op_name}: Expected a 'cpu' device type for generator but found "
                           f"'{dev}'")
    return r


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
