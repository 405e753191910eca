"""``fnx.save`` / ``fnx.load``: checkpoints in a safe format, no pickled code.

``fnx.save`` writes fnx's format (``fnx_format``): a zip archive of a JSON description of
the object and one ``.npy`` file per tensor.  ``fnx.load`` reads it, PyTorch checkpoints
(``torch.save``'s zip and legacy formats, with a restricted unpickler that follows
``torch.load(weights_only=True)``: ``torch_format``) and ``.safetensors`` files.  Loading
never runs code from the file: a class or function a checkpoint names (a whole module
saved with ``fnx.save(model)``) is rebuilt only when the user allowed it
(``add_safe_globals``/``safe_globals``).  Every file ``fnx.load`` cannot read -- truncated,
corrupt, of another format, naming a class that is not allowed -- raises
``CheckpointError``, a ``RuntimeError``.

>>> import fnx, io
>>> buf = io.BytesIO()
>>> fnx.save({"w": fnx.ones(2, dtype=fnx.bfloat16), "step": 3}, buf)
>>> _ = buf.seek(0)
>>> fnx.load(buf)
{'w': tensor([1., 1.], dtype=fnx.bfloat16), 'step': 3}
"""
from __future__ import annotations

import io
import os
import struct
import zipfile

from ..core.errors import out_of_memory
from . import fnx_format, safetensors_format, torch_format
from .errors import CheckpointError
from .fnx_format import _member
from .safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from .tensors import Placing, register_parameter_class
from .tensors import rebuild_tensor as _rebuild_tensor  # noqa: F401 - old pickles name it

__all__ = ["save", "load", "CheckpointError", "add_safe_globals", "safe_globals",
           "get_safe_globals", "clear_safe_globals", "get_unsafe_globals_in_checkpoint",
           "register_parameter_class"]


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Write ``obj`` (a state dict, an optimizer state dict, any nesting of dicts, lists,
    tuples and sets of tensors, numbers, strings, None, dtypes and devices, or a whole
    module) to ``f`` (a path or a binary file object).  Tensors are saved with their
    dtype, device and requires_grad; a tensor reached twice is stored once and loaded back
    as one object.  An object of a class (a whole ``nn.Module``) is saved as its class path
    and state; loading it needs the class allowed (``add_safe_globals``).

    >>> import fnx, fnx.nn, io
    >>> buf = io.BytesIO()
    >>> fnx.save(fnx.nn.Linear(3, 2).state_dict(), buf)
    >>> _ = buf.seek(0)
    >>> sorted(fnx.load(buf))
    ['bias', 'weight']
    """
    if pickle_module is not None:
        raise ValueError("fnx.save does not pickle: pickle_module is not supported")
    if isinstance(f, (str, os.PathLike)):
        buf = io.BytesIO()
        fnx_format.write(buf, obj)          # nothing is written when the object is refused
        with open(f, "wb") as fh:
            fh.write(buf.getvalue())
    else:
        fnx_format.write(f, obj)


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Read a checkpoint from ``f`` (a path or a binary file object): one written by
    ``fnx.save``, by ``torch.save`` (``.pt``/``.pth``), or a ``.safetensors`` file.
    ``map_location`` moves tensors: a device (or string), a dict ``{saved_device:
    device}``, or a function ``(tensor, saved_device) -> tensor``.

    Nothing in the file is executed.  Objects of classes (a whole module) and functions
    the file names are rebuilt only when allowed with ``add_safe_globals``/
    ``safe_globals``; ``weights_only=False`` also finds an fnx checkpoint's classes by
    importing them (trust the file first).  A file that cannot be read raises
    ``CheckpointError`` (a ``RuntimeError``) saying why.

    >>> import fnx, io
    >>> try:
    ...     fnx.load(io.BytesIO(b"PK\\x03\\x04 cut short"))
    ... except fnx.serialization.CheckpointError as e:
    ...     print(str(e).split(" (")[0])
    fnx.load: '<file>' is a truncated or corrupt zip archive
    """
    if pickle_module is not None:
        raise ValueError("fnx.load does not unpickle: pickle_module is not supported")
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "<file>")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            data = fh.read()
    else:
        data = f.read()
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError("fnx.load: expected a path or a binary file object")
    try:
        return _load(bytes(data), name, map_location, weights_only)
    except Placing as p:        # the user's map_location or a device move: not the file
        raise p.error from None
    except CheckpointError:
        raise
    except RecursionError:
        raise CheckpointError(f"fnx.load: {name!r}: the checkpoint is nested too deeply") \
            from None
    except MemoryError as e:   # sizes were checked against the data: memory is short
        raise out_of_memory(e, f"fnx.load: {name!r}") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError,
            TypeError, KeyError, IndexError, AttributeError, OverflowError, struct.error,
            UnicodeDecodeError, NotImplementedError) as e:
        raise CheckpointError(f"fnx.load: {name!r} is corrupt ({type(e).__name__}: "
                              f"{e})") from None


def get_unsafe_globals_in_checkpoint(f) -> list:
    """The classes and functions (as ``"module.qualname"``) a checkpoint names that
    ``fnx.load`` does not allow by default, read without loading anything, as
    ``torch.serialization.get_unsafe_globals_in_checkpoint``: what to check, then allow with
    ``add_safe_globals``, before loading it.

    >>> import fnx, io
    >>> buf = io.BytesIO()
    >>> fnx.save({"net": fnx.nn.ReLU(), "w": fnx.ones(1)}, buf)
    >>> _ = buf.seek(0)
    >>> fnx.serialization.get_unsafe_globals_in_checkpoint(buf)
    ['fnx.nn.modules.activation.ReLU']
    """
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            data = fh.read()
    else:
        data = f.read()
    try:
        if data[:2] == b"PK":
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                if fnx_format.HEADER in z.namelist():
                    return fnx_format.globals_in(z, "<file>")
                return torch_format.globals_in_zip(z, _member)
        if torch_format.is_legacy(data):
            return torch_format.globals_in_legacy(data)
        return []
    except CheckpointError:
        raise
    except (zipfile.BadZipFile, ValueError, StopIteration, OSError, EOFError) as e:
        raise CheckpointError(f"fnx.serialization.get_unsafe_globals_in_checkpoint: the file "
                              f"is corrupt ({type(e).__name__}: {e})") from None


def _load(data, name, map_location, weights_only):
    if data[:2] == b"PK":
        try:
            z = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, ValueError, OSError, EOFError) as e:
            raise CheckpointError(f"fnx.load: {name!r} is a truncated or corrupt zip archive "
                                  f"({e})") from None
        with z:
            names = z.namelist()
            if fnx_format.HEADER in names:
                return fnx_format.read(z, name, map_location, weights_only)
            if any(n == "data.pkl" or n.endswith("/data.pkl") for n in names):
                return torch_format.read_zip(z, name, map_location, _member)
            raise CheckpointError(f"fnx.load: {name!r} is a zip archive but not an fnx checkpoint "
                                  f"(no {fnx_format.HEADER}) nor a PyTorch one (no data.pkl)")
    if torch_format.is_legacy(data):
        return torch_format.read_legacy(data, name, map_location)
    if safetensors_format.looks_like_safetensors(data):
        return safetensors_format.read(data, name, map_location)
    if data[:1] == b"\x80":
        raise CheckpointError(f"fnx.load: {name!r} is a Python pickle; fnx does not unpickle "
                              f"files (a pickle can run arbitrary code)")
    raise CheckpointError(f"fnx.load: {name!r} is not an fnx checkpoint (expected a zip "
                          f"archive written by fnx.save or torch.save, or a .safetensors file; "
                          f"it starts with {data[:8]!r})")
