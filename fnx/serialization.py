"""``fnx.save`` / ``fnx.load``: checkpoints in a safe format, no pickled code.

A checkpoint is a zip archive with ``fnx_format.json`` (the saved object's structure:
dicts, lists, tuples, numbers, strings, dtypes, devices, and tensor references) and one
``.npy`` file per tensor, read back with ``np.load(allow_pickle=False)``.  bfloat16 data is
stored as its raw uint16 bits.  Loading never runs code from the file, so a checkpoint from
an untrusted source is as safe as its arrays.  ``fnx.load`` also reads ``.safetensors``
files (a dict of tensors), and refuses pickles, PyTorch zip checkpoints and anything else
with a clear error.

Also here: ``_rebuild_tensor`` (what ``pickle`` of a tensor calls) and
``_deepcopy_tensor`` (``copy.deepcopy``), which ``fnx.Tensor`` uses.

>>> import fnx, io
>>> buf = io.BytesIO()
>>> fnx.save({"w": fnx.ones(2, dtype=fnx.bfloat16), "step": 3}, buf)
>>> _ = buf.seek(0)
>>> fnx.load(buf)
{'w': tensor([1., 1.], dtype=fnx.bfloat16), 'step': 3}
"""
from __future__ import annotations

import copy
import io
import json
import os
import struct
import zipfile
from collections import OrderedDict

import numpy as np

from .backends.cpu._core import wrap
from .core import dtype as D
from .core.device import device as _device_cls
from .core.grad_mode import no_grad
from .core.tensor import Tensor, _autograd_bit, tensor_method

__all__ = ["save", "load"]

_HEADER = "fnx_format.json"
_FORMAT = "fnx.save"
_VERSION = 1
# On-disk storage dtype of each fnx dtype (bfloat16 as its bits).
_STORAGE = {d.name: (np.dtype(np.uint16) if d is D.bfloat16 else d.numpy) for d in D._ALL}


# ----------------------------------------------------------------------------- save

def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Write ``obj`` (a state dict, an optimizer state dict, or any nesting of dicts, lists
    and tuples of tensors, numbers, strings, None, dtypes and devices) to ``f`` (a path or
    a binary file object).  Tensors are saved with their dtype, device and requires_grad;
    a tensor reached twice is stored once and loaded back as one object.

    >>> import fnx, fnx.nn, io
    >>> buf = io.BytesIO()
    >>> fnx.save(fnx.nn.Linear(3, 2).state_dict(), buf)
    >>> _ = buf.seek(0)
    >>> sorted(fnx.load(buf))
    ['bias', 'weight']
    """
    if pickle_module is not None:
        raise ValueError("fnx.save does not pickle: pickle_module is not supported")
    arrays = []
    memo = {}
    root = _encode(obj, arrays, memo, [])
    header = json.dumps({"format": _FORMAT, "version": _VERSION, "root": root})
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            _write(fh, header, arrays)
    else:
        _write(f, header, arrays)


def _write(fh, header, arrays):
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(_HEADER, header)
        for i, arr in enumerate(arrays):
            buf = io.BytesIO()
            np.save(buf, arr, allow_pickle=False)
            z.writestr(f"tensors/{i}.npy", buf.getvalue())


def _encode(obj, arrays, memo, path):
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
            return {"__float__": repr(obj)}
        return obj
    if isinstance(obj, Tensor):
        if id(obj) in memo:
            return {"__tensor__": memo[id(obj)][0]}
        return _encode_tensor(obj, arrays, memo, path)
    if isinstance(obj, D.dtype):
        return {"__dtype__": obj.name}
    if isinstance(obj, _device_cls):
        return {"__device__": str(obj)}
    if isinstance(obj, dict):
        items = [[_encode(k, arrays, memo, path + [k]), _encode(v, arrays, memo, path + [k])]
                 for k, v in obj.items()]
        for (k, _), key in zip(items, obj):
            if isinstance(k, (dict, list)) and not (isinstance(k, dict) and "__tuple__" in k):
                raise TypeError(f"fnx.save: dict key {key!r} at {_where(path)} is not a "
                                f"number, string, None or tuple")
        return {"__dict__": items, "ordered": isinstance(obj, OrderedDict)}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v, arrays, memo, path + [i]) for i, v in enumerate(obj)]}
    if isinstance(obj, list):
        return [_encode(v, arrays, memo, path + [i]) for i, v in enumerate(obj)]
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return _encode(obj.item(), arrays, memo, path)
    raise TypeError(f"fnx.save: cannot save an object of type {type(obj).__name__} at "
                    f"{_where(path)}: only tensors, numbers, strings, None, dtypes, devices "
                    f"and dicts, lists and tuples of them are saved (fnx checkpoints hold no "
                    f"pickled code)")


def _where(path):
    return "the top level" if not path else "".join(f"[{p!r}]" for p in path)


def _encode_tensor(t, arrays, memo, path):
    if t._device.type == "meta":
        raise RuntimeError(f"fnx.save: cannot save the meta tensor at {_where(path)} (it has "
                           f"no data)")
    with no_grad():
        arr = np.asarray(t.cpu()._data)
    if t._dtype is D.bfloat16:
        arr = arr.view(np.uint16)
    idx = len(arrays)
    arrays.append(np.array(arr, order="C", copy=True))    # keeps 0-d arrays 0-d
    memo[id(t)] = (idx, t)
    return {"__tensor__": idx, "dtype": t._dtype.name, "device": str(t._device),
            "requires_grad": t.requires_grad, "parameter": bool(t._is_param)}


# ----------------------------------------------------------------------------- load

def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Read an object written by ``fnx.save`` (or a ``.safetensors`` file) from ``f`` (a
    path or a binary file object).  ``map_location`` moves tensors: a device (or string),
    a dict ``{saved_device: device}``, or a function ``(tensor, saved_device) -> tensor``.

    Files that are not fnx checkpoints (pickles, ``torch.save`` archives, anything else)
    are refused with a RuntimeError: nothing in them is executed.
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
    buf = io.BytesIO(data)
    if zipfile.is_zipfile(buf):
        with zipfile.ZipFile(buf) as z:
            names = z.namelist()
            if _HEADER in names:
                return _load_fnx(z, name, map_location)
            if any(n.endswith("data.pkl") for n in names):
                raise RuntimeError(f"fnx.load: {name!r} is a PyTorch (torch.save) checkpoint: "
                                   f"its tensors are described by a pickle, which fnx does "
                                   f"not execute. Export it as safetensors (or load it with "
                                   f"torch and save the arrays) to read it with fnx.")
            raise RuntimeError(f"fnx.load: {name!r} is a zip archive but not an fnx "
                               f"checkpoint (no {_HEADER})")
    if _looks_like_safetensors(data):
        return _load_safetensors(data, name, map_location)
    if data[:1] == b"\x80":
        raise RuntimeError(f"fnx.load: {name!r} is a Python pickle; fnx does not unpickle "
                           f"files (a pickle can run arbitrary code)")
    raise RuntimeError(f"fnx.load: {name!r} is not an fnx checkpoint (expected a zip archive "
                       f"written by fnx.save, or a .safetensors file)")


def _load_fnx(z, name, map_location):
    try:
        header = json.loads(z.read(_HEADER))
    except ValueError as e:
        raise RuntimeError(f"fnx.load: {name!r} has a corrupt header: {e}") from None
    if not isinstance(header, dict) or header.get("format") != _FORMAT:
        raise RuntimeError(f"fnx.load: {name!r} is not an fnx checkpoint (bad header)")
    if header.get("version", 0) > _VERSION:
        raise RuntimeError(f"fnx.load: {name!r} was written by a newer fnx (format version "
                           f"{header['version']}, this fnx reads up to {_VERSION})")
    tensors = {}

    def tensor(spec):
        idx = spec["__tensor__"]
        if idx in tensors:
            return tensors[idx]
        dtype_name = spec.get("dtype")
        if dtype_name not in _STORAGE:
            raise RuntimeError(f"fnx.load: {name!r}: unknown dtype {dtype_name!r}")
        with z.open(f"tensors/{idx}.npy") as fh:
            arr = np.load(io.BytesIO(fh.read()), allow_pickle=False)
        if arr.dtype != _STORAGE[dtype_name]:
            raise RuntimeError(f"fnx.load: {name!r}: tensor {idx} is stored as {arr.dtype}, "
                               f"expected {_STORAGE[dtype_name]} for {dtype_name}")
        t = _make(arr, dtype_name, spec["device"], spec["requires_grad"], map_location,
                  spec.get("parameter", False))
        tensors[idx] = t
        return t

    def decode(v):
        if isinstance(v, list):
            return [decode(x) for x in v]
        if not isinstance(v, dict):
            return v
        if "__tensor__" in v:
            return tensor(v)
        if "__dict__" in v:
            d = OrderedDict() if v.get("ordered") else {}
            for k, x in v["__dict__"]:
                d[decode(k)] = decode(x)
            return d
        if "__tuple__" in v:
            return tuple(decode(x) for x in v["__tuple__"])
        if "__float__" in v:
            return float(v["__float__"])
        if "__dtype__" in v:
            return D._NAMES[v["__dtype__"]]
        if "__device__" in v:
            return _device_cls(v["__device__"])
        raise RuntimeError(f"fnx.load: {name!r}: unknown entry {v!r}")

    return decode(header["root"])


_parameter_class = None     # fnx.nn.Parameter, registered by fnx.nn (a layer above)


def register_parameter_class(cls) -> None:
    """Entries saved as parameters load as ``cls`` instances (``fnx.nn`` registers
    ``nn.Parameter``)."""
    global _parameter_class
    _parameter_class = cls


def _make(arr, dtype_name, device_str, requires_grad, map_location, parameter=False):
    """A tensor from its stored array, moved where ``map_location`` says."""
    dtype = D._NAMES[dtype_name]
    if dtype is D.bfloat16:
        arr = arr.view(D.bfloat16.numpy)
    t = wrap(np.array(arr, copy=True), dtype)
    target = _target(map_location, device_str)
    if callable(target):
        t = target(t, device_str)
    elif target.type != "cpu":
        try:
            t = t.to(target)
        except RuntimeError as e:
            if target.type == "cuda":
                raise RuntimeError(f"Attempting to deserialize object on a CUDA device but "
                                   f"fnx.cuda.is_available() is False. If you are running on a "
                                   f"CPU-only machine, please use fnx.load with "
                                   f"map_location='cpu' to map your tensors to the CPU. "
                                   f"({e})") from None
            raise
    if parameter:
        return _parameter_class(t, requires_grad=requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _target(map_location, device_str):
    if map_location is None:
        return _device_cls(device_str)
    if isinstance(map_location, dict):
        return _device_cls(map_location.get(device_str, device_str))
    if isinstance(map_location, (str, _device_cls)):
        return _device_cls(map_location)
    if callable(map_location):
        return map_location
    raise TypeError(f"fnx.load: map_location must be a device, a string, a dict or a "
                    f"callable, not {type(map_location).__name__}")


# ----------------------------------------------------------------------------- safetensors

_ST_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
              "I64": "int64", "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8",
              "BOOL": "bool", "C64": "complex64", "C128": "complex128"}


def _looks_like_safetensors(data: bytes) -> bool:
    if len(data) < 10:
        return False
    (n,) = struct.unpack("<Q", data[:8])
    return 2 <= n <= len(data) - 8 and data[8:9] == b"{"


def _load_safetensors(data, name, map_location):
    (n,) = struct.unpack("<Q", data[:8])
    try:
        header = json.loads(data[8:8 + n])
    except ValueError as e:
        raise RuntimeError(f"fnx.load: {name!r} is not a valid safetensors file: {e}") from None
    body = memoryview(data)[8 + n:]
    out = OrderedDict()
    for key, spec in header.items():
        if key == "__metadata__":
            continue
        dtype_name = _ST_DTYPES.get(spec.get("dtype"))
        if dtype_name is None:
            raise RuntimeError(f"fnx.load: {name!r}: unsupported safetensors dtype "
                               f"{spec.get('dtype')!r} for {key!r}")
        begin, end = spec["data_offsets"]
        storage = _STORAGE[dtype_name].newbyteorder("<")
        shape = tuple(spec["shape"])
        count = int(np.prod(shape)) if shape else 1
        if end - begin != count * storage.itemsize or end > len(body):
            raise RuntimeError(f"fnx.load: {name!r}: bad data offsets for {key!r}")
        arr = np.frombuffer(body[begin:end], dtype=storage).reshape(shape)
        arr = arr.astype(_STORAGE[dtype_name])
        out[key] = _make(arr, dtype_name, "cpu", False, map_location)
    return out


# ----------------------------------------------------------------------------- pickle, copy

def _rebuild_tensor(array, dtype_name, device_str, requires_grad):
    """What unpickling a tensor calls (see ``Tensor.__reduce_ex__``)."""
    t = wrap(np.asarray(array), D._NAMES[dtype_name])
    if device_str != "cpu":
        t = t.to(device_str)
    if requires_grad:
        t.requires_grad_(True)
    return t


_INTERNAL = {"grad", "grad_fn"}


def _deepcopy_tensor(t, memo):
    """``copy.deepcopy`` of a leaf tensor: new data, same class (``nn.Parameter`` stays
    one), dtype, device and requires_grad; ``.grad`` and public attributes are copied too."""
    if id(t) in memo:
        return memo[id(t)]
    if t.grad_fn is not None:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                           "the deepcopy protocol at the moment.")
    with no_grad():
        c = t.clone()
    new = object.__new__(type(t))
    new._data, new._dtype, new._device = c._data, c._dtype, c._device
    ks = c._ks
    new._ks = ks | _autograd_bit(ks) if t.requires_grad else ks
    memo[id(t)] = new
    if t.grad is not None:
        new.grad = copy.deepcopy(t.grad, memo)
    for k, v in t.__dict__.items():
        if not k.startswith("_") and k not in _INTERNAL:
            setattr(new, k, copy.deepcopy(v, memo))
    return new


@tensor_method()
def __reduce_ex__(self, proto):
    return (_rebuild_tensor, (self.cpu().detach().numpy().copy(), self._dtype.name,
                              str(self._device), self.requires_grad))


@tensor_method()
def __deepcopy__(self, memo):
    return _deepcopy_tensor(self, memo)
