"""``fnx.cuda``: CUDA devices, as ``torch.cuda``.

fnx's CUDA devices are JAX GPU devices: ``cuda:i`` is ``jax.devices("gpu")[i]``, and a
cuda tensor holds a ``jax.Array`` committed to it.  The JAX CUDA plugin ships as an extra
(``pip install 'fnx[cuda12]'``); without it ``is_available()`` is False and asking for a
cuda tensor raises a RuntimeError that says so.

Test switch: with the environment variable ``FNX_CUDA_ON_CPU=1``, ``cuda:i`` maps onto
JAX's CPU devices instead (two of them, when JAX is not initialized yet), so the whole
CUDA backend runs, and is tested, on a machine without a GPU.

>>> import fnx
>>> isinstance(fnx.cuda.is_available(), bool), fnx.cuda.current_device()
(True, 0)
"""
from __future__ import annotations

import os

import jax

from ...core.autocast_mode import register_autocast_device
from ...core.device import current_index, set_current_index
from ...core.device import device as _device
from ...core.random import Generator, register_default_generator, register_seed_hook

try:
    from jax._src import xla_bridge  # private: asked only whether JAX's backends are up
except ImportError:                     # a JAX without it: one fake device then
    xla_bridge = None

__all__ = ["is_available", "device_count", "current_device", "set_device", "device",
           "synchronize", "manual_seed", "manual_seed_all", "seed", "seed_all",
           "initial_seed", "get_rng_state", "set_rng_state", "get_device_name",
           "is_initialized", "init", "on_cpu"]

ON_CPU_DEVICES = 2      # fake devices under the switch (when JAX is not initialized yet)
INSTALL_HINT = ("install it with pip install 'fnx[cuda12]' (or 'fnx[cuda13]'), which "
                "brings JAX's CUDA plugin; or set FNX_CUDA_ON_CPU=1 to run cuda tensors on "
                "JAX's CPU devices (for tests)")


def on_cpu() -> bool:
    """True when the test switch ``FNX_CUDA_ON_CPU`` maps cuda devices onto JAX CPUs."""
    return os.environ.get("FNX_CUDA_ON_CPU", "").strip() not in ("", "0")


def _configure_fake_devices() -> None:
    """Ask JAX for several CPU devices (so cuda:1 exists) if its backends are not up yet."""
    if not on_cpu() or xla_bridge is None:
        return
    try:
        if not xla_bridge.backends_are_initialized():
            jax.config.update("jax_num_cpu_devices", ON_CPU_DEVICES)
    except Exception:       # an older/newer JAX without these hooks: one device then
        pass


_configure_fake_devices()

_devices = None         # the JAX devices standing for cuda:0, cuda:1, ...
_generators = None


def _jax_devices():
    global _devices
    if _devices is None:
        try:
            if on_cpu():
                _devices = list(jax.devices("cpu"))
            else:
                try:
                    _devices = list(jax.devices("gpu"))
                except RuntimeError:    # no GPU platform: JAX has no CUDA plugin
                    _devices = []
        except Exception:
            _devices = []
    return _devices


def unavailable_error() -> RuntimeError:
    return RuntimeError(f"fnx: CUDA requested but no JAX GPU backend is available (JAX found "
                        f"no GPU device); {INSTALL_HINT}")


def jax_device(index: int):
    """The JAX device of ``cuda:index``; RuntimeError when there is none."""
    devs = _jax_devices()
    if not devs:
        raise unavailable_error()
    if not 0 <= index < len(devs):
        raise RuntimeError(f"CUDA error: invalid device ordinal (cuda:{index} requested, "
                           f"{len(devs)} device(s) available)")
    return devs[index]


def is_available() -> bool:
    """True when cuda tensors can be made (a JAX GPU, or the FNX_CUDA_ON_CPU switch)."""
    return bool(_jax_devices())


def device_count() -> int:
    """How many cuda devices there are (0 without a JAX GPU backend)."""
    return len(_jax_devices())


def is_initialized() -> bool:
    return _devices is not None


def init() -> None:
    """Look the devices up now (PyTorch initializes lazily too); raises when none."""
    if not _jax_devices():
        raise unavailable_error()


def current_device() -> int:
    """The index ``"cuda"`` without an index means (0 unless ``set_device`` changed it)."""
    return current_index("cuda")


def _index(dev) -> int:
    if isinstance(dev, int) and not isinstance(dev, bool):
        return dev
    d = _device(dev)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return current_index("cuda") if d.index is None else d.index


def set_device(dev) -> None:
    """Make ``dev`` (an index, "cuda:N" or a ``fnx.device``) the current cuda device."""
    i = _index(dev)
    if i < 0:
        return          # PyTorch ignores negative indices here
    jax_device(i)       # validates
    set_current_index("cuda", i)


class device:
    """Context manager: ``with fnx.cuda.device(1): ...`` makes cuda:1 current inside."""

    def __init__(self, dev):
        self.idx = -1 if dev is None else _index(dev)

    def __enter__(self):
        self.prev = current_index("cuda")
        if self.idx >= 0:
            set_device(self.idx)
        return self

    def __exit__(self, *exc):
        set_current_index("cuda", self.prev)
        return False


def synchronize(dev=None) -> None:
    """Wait until every computation queued on the device has finished (JAX dispatches
    asynchronously, like CUDA streams)."""
    jd = jax_device(current_device() if dev is None else _index(dev))
    arrays_on(jd, lambda a, _: a.block_until_ready())


def arrays_on(jd, fn) -> list:
    """``fn(array, its devices)`` for each live ``jax.Array`` with a buffer on the JAX
    device ``jd`` (an array deleted meanwhile, donated to a program, is skipped); the
    results in order."""
    out = []
    for a in jax.live_arrays():
        try:
            held = a.devices()
            if jd in held:
                out.append(fn(a, held))
        except RuntimeError:     # deleted meanwhile
            pass
    return out


def get_device_name(dev=None) -> str:
    jd = jax_device(current_device() if dev is None else _index(dev))
    return getattr(jd, "device_kind", str(jd))


# ----------------------------------------------------------------------------- random state

def default_generators() -> tuple:
    """One random generator per cuda device (a ``fnx.Generator``'s state, kept per device):
    cuda random ops draw their JAX keys from it unless given ``generator=``."""
    global _generators
    if _generators is None:
        _generators = tuple(Generator() for _ in range(max(device_count(), 1)))
    return _generators


def generator_for(index: int):
    gens = default_generators()
    return gens[index] if index < len(gens) else gens[0]


def manual_seed(seed) -> None:
    """Seed the current device's generator."""
    generator_for(current_device()).manual_seed(seed)


def manual_seed_all(seed) -> None:
    """Seed every cuda device's generator (``fnx.manual_seed`` calls this too)."""
    for g in default_generators():
        g.manual_seed(seed)


def seed() -> None:
    generator_for(current_device()).seed()


def seed_all() -> None:
    s = generator_for(current_device()).seed()
    manual_seed_all(s)


def initial_seed() -> int:
    return generator_for(current_device()).initial_seed()


def get_rng_state(dev="cuda"):
    return generator_for(_index(dev)).get_state()


def set_rng_state(new_state, dev="cuda") -> None:
    generator_for(_index(dev)).set_state(new_state)


def _seed_hook(s) -> None:
    if _generators is not None or is_available():
        manual_seed_all(s)


register_seed_hook(_seed_hook)
register_default_generator("cuda", generator_for, device_count)
register_autocast_device("cuda", is_available)
