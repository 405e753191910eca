"""Runtime switches PyTorch keeps at its top level: thread counts, deterministic
algorithms, the default device and tensor type, the default generator's state, warn-always,
flush-denormal, the anomaly-mode flags, the per-device autocast getters and setters, and
small queries (``typename``, ``is_storage``, ``get_device``, ``get_device_module``).

fnx computes with NumPy and XLA, which size their own thread pools when they start: the
thread counts are recorded and reported as PyTorch does, but do not resize those pools.
Likewise the deterministic flags are state that ops and tools may read; the anomaly
switches live in ``fnx.core.anomaly_mode`` (the autograd engine reads them).

>>> import fnx
>>> fnx.use_deterministic_algorithms(True)
>>> fnx.are_deterministic_algorithms_enabled(), fnx.get_deterministic_debug_mode()
(True, 2)
>>> fnx.use_deterministic_algorithms(False)
"""
from __future__ import annotations

import importlib
import os
import sys
import warnings

from ..core import autocast_mode as _amp, dtype as D
from ..core.anomaly_mode import (is_anomaly_check_nan_enabled, is_anomaly_enabled,
                                 set_anomaly_enabled)
from ..core.device import canonical, get_default_device, set_default_device
from ..core.random import get_rng_state, set_rng_state
from ..core.tensor import Tensor, tensor_method

__all__ = ["thread_safe_generator", "get_num_threads", "set_num_threads", "get_num_interop_threads",
           "set_num_interop_threads", "init_num_threads", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
           "set_deterministic_debug_mode", "get_deterministic_debug_mode", "get_default_device",
           "set_default_device", "set_default_tensor_type", "get_rng_state", "set_rng_state",
           "set_warn_always", "is_warn_always_enabled", "set_flush_denormal",
           "set_anomaly_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "get_autocast_cpu_dtype", "get_autocast_gpu_dtype", "get_autocast_ipu_dtype",
           "get_autocast_xla_dtype", "set_autocast_cpu_dtype", "set_autocast_gpu_dtype",
           "set_autocast_ipu_dtype", "set_autocast_xla_dtype", "is_autocast_cpu_enabled",
           "is_autocast_ipu_enabled", "is_autocast_xla_enabled", "set_autocast_cpu_enabled",
           "set_autocast_ipu_enabled", "set_autocast_xla_enabled", "typename", "is_storage",
           "is_inference", "get_device", "get_device_module", "is_distributed"]

_state = {"threads": os.cpu_count() or 1, "interop": os.cpu_count() or 1, "interop_set": False,
          "deterministic": False, "warn_only": False, "warn_always": False}


# ----------------------------------------------------------------------------- threads

def get_num_threads() -> int:
    """The number of intra-op threads (the machine's cores unless set).

    >>> import fnx
    >>> fnx.get_num_threads() >= 1
    True
    """
    return _state["threads"]


def set_num_threads(num: int) -> None:
    """Set the intra-op thread count (recorded: NumPy and XLA keep their own pools).

    >>> import fnx
    >>> n = fnx.get_num_threads(); fnx.set_num_threads(2); fnx.get_num_threads()
    2
    >>> fnx.set_num_threads(n)
    """
    if not isinstance(num, int) or isinstance(num, bool) or num <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _state["threads"] = num


def get_num_interop_threads() -> int:
    """The number of inter-op threads.

    >>> import fnx
    >>> fnx.get_num_interop_threads() >= 1
    True
    """
    return _state["interop"]


def set_num_interop_threads(num: int) -> None:
    """Set the inter-op thread count, once (as PyTorch: a second call is an error).

    >>> import fnx
    >>> fnx.set_num_interop_threads(0)
    Traceback (most recent call last):
        ...
    RuntimeError: Expected positive number of threads
    """
    if not isinstance(num, int) or isinstance(num, bool) or num <= 0:
        raise RuntimeError("Expected positive number of threads")
    if _state["interop_set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _state["interop"], _state["interop_set"] = num, True


def init_num_threads() -> None:
    """Initialise the thread pools for this thread (nothing to do in fnx).

    >>> import fnx
    >>> fnx.init_num_threads()
    """


# ----------------------------------------------------------------------------- determinism

def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms (``warn_only``: warn rather than raise).

    >>> import fnx
    >>> fnx.use_deterministic_algorithms(True, warn_only=True)
    >>> fnx.is_deterministic_algorithms_warn_only_enabled()
    True
    >>> fnx.use_deterministic_algorithms(False)
    """
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' must be bool, not "
                        f"{type(mode).__name__}")
    _state["deterministic"], _state["warn_only"] = mode, bool(warn_only) and mode


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in force.

    >>> import fnx
    >>> fnx.are_deterministic_algorithms_enabled()
    False
    """
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether deterministic mode only warns.

    >>> import fnx
    >>> fnx.is_deterministic_algorithms_warn_only_enabled()
    False
    """
    return _state["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode) -> None:
    """0/"default": off, 1/"warn": warn-only, 2/"error": deterministic algorithms.

    >>> import fnx
    >>> fnx.set_deterministic_debug_mode("warn")
    >>> fnx.is_deterministic_algorithms_warn_only_enabled()
    True
    >>> fnx.set_deterministic_debug_mode(0)
    """
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (warn-only) or 2 (deterministic algorithms).

    >>> import fnx
    >>> fnx.get_deterministic_debug_mode()
    0
    """
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


# ----------------------------------------------------------------------------- defaults

def set_default_tensor_type(t) -> None:
    """Deprecated: set the default float dtype (and device, for ``cuda`` types) from a
    tensor type name (``"fnx.DoubleTensor"``, ``"torch.cuda.FloatTensor"``) or a dtype.

    >>> import fnx, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     fnx.set_default_tensor_type("torch.DoubleTensor")
    >>> fnx.ones(1).dtype
    fnx.float64
    >>> fnx.set_default_dtype(fnx.float32)
    """
    warnings.warn("set_default_tensor_type() is deprecated, please use set_default_dtype() "
                  "and set_default_device() as alternatives.", UserWarning, stacklevel=2)
    if isinstance(t, D.dtype):
        dtype, dev = t, None
    else:
        name = t if isinstance(t, str) else f"{t.__module__}.{t.__name__}" \
            if isinstance(t, type) else str(t)
        named = D.from_tensor_type(name)
        if named is None:
            raise TypeError(f"invalid type: '{name}'")
        dtype, dev = named
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(dtype)
    if dev is not None:
        set_default_device(None if dev == "cpu" else dev)


# ----------------------------------------------------------------------------- warnings, numerics

def set_warn_always(b: bool) -> None:
    """Make warnings PyTorch gives once per process be given every time.

    >>> import fnx
    >>> fnx.set_warn_always(True); fnx.is_warn_always_enabled()
    True
    >>> fnx.set_warn_always(False)
    """
    _state["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    """Whether ``set_warn_always(True)`` is in force.

    >>> import fnx
    >>> fnx.is_warn_always_enabled()
    False
    """
    return _state["warn_always"]


def set_flush_denormal(mode: bool) -> bool:
    """Flushing denormals to zero is not supported (NumPy keeps IEEE subnormals): returns
    False, as PyTorch does on a CPU without the flag.

    >>> import fnx
    >>> fnx.set_flush_denormal(True)
    False
    """
    return False


# ----------------------------------------------------------------------------- autocast per device
# Only cpu and cuda (PyTorch's "gpu") autocast exist; ipu and xla behave as on a PyTorch
# build without them: disabled, with their fixed default dtypes, setters accepted.

_OTHER = {"ipu": [False, D.float16], "xla": [False, D.bfloat16]}


def get_autocast_cpu_dtype():
    """The dtype cpu autocast casts to (``get_autocast_dtype("cpu")``).

    >>> import fnx
    >>> fnx.get_autocast_cpu_dtype()
    fnx.bfloat16
    """
    return _amp.get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    """The dtype cuda autocast casts to (``get_autocast_dtype("cuda")``).

    >>> import fnx
    >>> fnx.get_autocast_gpu_dtype()
    fnx.float16
    """
    return _amp.get_autocast_dtype("cuda")


def get_autocast_ipu_dtype():
    """float16: fnx has no ipu autocast (as a PyTorch build without ipu).

    >>> import fnx
    >>> fnx.get_autocast_ipu_dtype()
    fnx.float16
    """
    return _OTHER["ipu"][1]


def get_autocast_xla_dtype():
    """bfloat16: fnx has no xla autocast (as a PyTorch build without xla).

    >>> import fnx
    >>> fnx.get_autocast_xla_dtype()
    fnx.bfloat16
    """
    return _OTHER["xla"][1]


def set_autocast_cpu_dtype(dtype) -> None:
    """Set the dtype cpu autocast casts to.

    >>> import fnx
    >>> fnx.set_autocast_cpu_dtype(fnx.float16); fnx.get_autocast_dtype("cpu")
    fnx.float16
    >>> fnx.set_autocast_cpu_dtype(fnx.bfloat16)
    """
    _amp.set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype) -> None:
    """Set the dtype cuda autocast casts to.

    >>> import fnx
    >>> fnx.set_autocast_gpu_dtype(fnx.bfloat16); fnx.get_autocast_dtype("cuda")
    fnx.bfloat16
    >>> fnx.set_autocast_gpu_dtype(fnx.float16)
    """
    _amp.set_autocast_dtype("cuda", dtype)


def set_autocast_ipu_dtype(dtype) -> None:
    """Recorded only: there is no ipu autocast.

    >>> import fnx
    >>> fnx.set_autocast_ipu_dtype(fnx.float16)
    """
    _OTHER["ipu"][1] = dtype


def set_autocast_xla_dtype(dtype) -> None:
    """Recorded only: there is no xla autocast.

    >>> import fnx
    >>> fnx.set_autocast_xla_dtype(fnx.bfloat16)
    """
    _OTHER["xla"][1] = dtype


def is_autocast_cpu_enabled() -> bool:
    """Whether cpu autocast is on (``fnx.autocast("cpu")`` turns it on).

    >>> import fnx
    >>> with fnx.autocast("cpu"):
    ...     fnx.is_autocast_cpu_enabled()
    True
    """
    return _amp.is_autocast_enabled("cpu")


def is_autocast_ipu_enabled() -> bool:
    """Whether ipu autocast is on (recorded flag; there is no ipu).

    >>> import fnx
    >>> fnx.is_autocast_ipu_enabled()
    False
    """
    return _OTHER["ipu"][0]


def is_autocast_xla_enabled() -> bool:
    """Whether xla autocast is on (recorded flag; there is no xla).

    >>> import fnx
    >>> fnx.is_autocast_xla_enabled()
    False
    """
    return _OTHER["xla"][0]


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Turn cpu autocast on or off (``set_autocast_enabled("cpu", ...)``).

    >>> import fnx
    >>> fnx.set_autocast_cpu_enabled(True); fnx.is_autocast_enabled("cpu")
    True
    >>> fnx.set_autocast_cpu_enabled(False)
    """
    _amp.set_autocast_enabled("cpu", enabled)


def set_autocast_ipu_enabled(enabled: bool) -> None:
    """Recorded only: there is no ipu autocast.

    >>> import fnx
    >>> fnx.set_autocast_ipu_enabled(False)
    """
    _OTHER["ipu"][0] = bool(enabled)


def set_autocast_xla_enabled(enabled: bool) -> None:
    """Recorded only: there is no xla autocast.

    >>> import fnx
    >>> fnx.set_autocast_xla_enabled(False)
    """
    _OTHER["xla"][0] = bool(enabled)


# ----------------------------------------------------------------------------- queries

def typename(obj) -> str:
    """The type name of ``obj``: ``'fnx.FloatTensor'`` for a tensor, else its qualified name.

    >>> import fnx
    >>> fnx.typename(fnx.ones(1)), fnx.typename(3)
    ('fnx.FloatTensor', 'int')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", None) or type(obj).__module__ or ""
    qualname = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


def is_storage(obj) -> bool:
    """Whether ``obj`` is a storage object (``Tensor.untyped_storage()``/``storage()``,
    fnx/api/storage.py).

    >>> import fnx
    >>> fnx.is_storage(fnx.ones(1))
    False
    """
    return type(obj).__name__ in ("TypedStorage", "UntypedStorage") and \
        type(obj).__module__.startswith("fnx")


@tensor_method()
def is_inference(input) -> bool:
    """Whether ``input`` is an inference tensor: fnx's ``inference_mode`` makes ordinary
    tensors (see its doc), so this is False for every tensor.

    >>> import fnx
    >>> with fnx.inference_mode():
    ...     t = fnx.ones(1)
    >>> t.is_inference()
    False
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    return False


@tensor_method()
def is_distributed(input) -> bool:
    """False: fnx tensors are never distributed tensors (as PyTorch's ordinary tensors).

    >>> import fnx
    >>> fnx.ones(1).is_distributed()
    False
    """
    return False


def get_device(input) -> int:
    """The device index of ``input``: -1 on cpu.

    >>> import fnx
    >>> fnx.get_device(fnx.ones(1))
    -1
    """
    dev = input.device
    return -1 if dev.type in ("cpu", "meta") or dev.index is None else dev.index


def get_device_module(device=None):
    """The ``fnx.<type>`` module for ``device`` (default: the default device's type).

    >>> import fnx
    >>> fnx.get_device_module("cuda") is fnx.cuda
    True
    """
    if device is None:
        kind = get_default_device().type
    elif isinstance(device, str) and ":" not in device and device.isidentifier():
        kind = device
    else:
        kind = canonical(device).type
    name = f"fnx.{kind}"
    module = sys.modules.get(name)
    if module is None:
        try:
            module = importlib.import_module(name)
        except ImportError:
            raise RuntimeError(f"Device '{kind}' does not have a corresponding module "
                               f"registered as 'fnx.{kind}'.") from None
    return module


def thread_safe_generator():
    """The generator random code should use in a DataLoader worker thread, else None (the
    default generator), as ``torch.thread_safe_generator``. fnx's DataLoader workers are
    processes, each with its own default generator, so this is always None.

    >>> import fnx
    >>> fnx.thread_safe_generator() is None
    True
    """
    return None
