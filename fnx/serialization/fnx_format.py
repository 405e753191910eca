"""fnx's own checkpoint format: a zip archive (entries stored, not compressed) holding
``fnx_format.json`` -- the saved object's structure: dicts, lists, tuples, sets, numbers,
strings, dtypes, devices, tensor and NumPy-array references, and objects of classes as
their class path and state -- and one ``.npy`` file per tensor or NumPy array.  bfloat16
data is stored as its raw uint16 bits.  Reading checks every size against the data before
allocating anything, and rebuilds an object of a class only when the user allowed the
class (``safe_globals``)."""
from __future__ import annotations

import importlib
import io
import json
import types
import zipfile
import zlib
from collections import OrderedDict

import numpy as np

from ..core import dtype as D
from ..core.device import device as _device_cls
from ..core.grad_mode import no_grad
from ..core.layout import strided
from ..core.tensor import Tensor
from . import safe_globals as _safe
from .errors import CheckpointError
from .tensors import STORAGE, make

__all__ = ["HEADER", "write", "read", "globals_in"]

HEADER = "fnx_format.json"
_FORMAT = "fnx.save"
_VERSION = 1
_NDARRAY = "numpy.ndarray"
_NOT_OBJECTS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                types.ModuleType, type, types.GeneratorType, io.IOBase)


# ----------------------------------------------------------------------------- save

def write(fh, obj):
    arrays, memo = [], {}
    root = _Encoder(arrays, memo).encode(obj, [])
    header = json.dumps({"format": _FORMAT, "version": _VERSION, "root": root})
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(HEADER, header)
        for i, arr in enumerate(arrays):
            buf = io.BytesIO()
            np.save(buf, arr, allow_pickle=False)
            z.writestr(f"tensors/{i}.npy", buf.getvalue())


def _where(path):
    return "the top level" if not path else "".join(f"[{p!r}]" for p in path)


class _Encoder:
    def __init__(self, arrays, memo):
        self.arrays = arrays
        self.memo = memo            # id -> (tensor index or object index, the object)
        self.objects = 0

    def encode(self, obj, path):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, (int, float)):
            if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
                return {"__float__": repr(obj)}
            return int(obj) if isinstance(obj, int) else float(obj)
        if isinstance(obj, Tensor):
            if id(obj) in self.memo:
                return {"__tensor__": self.memo[id(obj)][0]}
            return self.tensor(obj, path)
        if isinstance(obj, D.dtype):
            return {"__dtype__": obj.name}
        if isinstance(obj, _device_cls):
            return {"__device__": str(obj)}
        # subclasses (fnx.Size, named tuples) are saved as the plain container
        if isinstance(obj, dict):
            return self.dict(obj, path)
        if isinstance(obj, tuple):
            return {"__tuple__": [self.encode(v, path + [i]) for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return [self.encode(v, path + [i]) for i, v in enumerate(obj)]
        if isinstance(obj, (set, frozenset)):
            return {"__set__": [self.encode(v, path + [i]) for i, v in enumerate(obj)],
                    "frozen": isinstance(obj, frozenset)}
        if isinstance(obj, (np.integer, np.floating, np.bool_)):
            return self.encode(obj.item(), path)
        if isinstance(obj, np.ndarray):
            return self.ndarray(obj, path)
        if isinstance(obj, (types.FunctionType, type)) and "<" not in obj.__qualname__:
            return {"__global__": _safe.path_of(obj)}    # by name, as pickle does
        return self.object(obj, path)

    def dict(self, obj, path):
        items = [[self.encode(k, path + [k]), self.encode(v, path + [k])]
                 for k, v in obj.items()]
        for (k, _), key in zip(items, obj):
            if isinstance(k, (dict, list)) and not (isinstance(k, dict) and "__tuple__" in k):
                raise TypeError(f"fnx.save: dict key {key!r} at {_where(path)} is not a "
                                f"number, string, None or tuple")
        return {"__dict__": items, "ordered": isinstance(obj, OrderedDict)}

    def object(self, obj, path):
        """An object of a class: its class path and state (what pickle would store), for a
        whole module saved with ``fnx.save(model)``."""
        cls = type(obj)
        state = None
        if not isinstance(obj, _NOT_OBJECTS) and "<" not in cls.__qualname__ and \
                hasattr(obj, "__dict__"):
            state = obj.__getstate__()
        if not isinstance(state, dict):
            raise TypeError(f"fnx.save: cannot save an object of type {cls.__name__} at "
                            f"{_where(path)}: only tensors, numbers, strings, None, dtypes, "
                            f"devices, dicts, lists, tuples and sets of them, and objects of "
                            f"module-level classes with a dict state are saved (fnx "
                            f"checkpoints hold no pickled code)")
        if id(obj) in self.memo:
            return {"__object_ref__": self.memo[id(obj)][0]}
        idx = self.objects
        self.objects += 1
        self.memo[id(obj)] = (idx, obj)
        return {"__object__": _safe.path_of(cls), "id": idx,
                "state": self.dict(state, path)}

    def ndarray(self, a, path):
        """A NumPy array (``torch.save`` pickles them): its data as a ``.npy`` member;
        loading it back needs ``weights_only=False`` or ``numpy.ndarray`` allowed, as
        PyTorch's loader refuses NumPy's globals by default."""
        if id(a) in self.memo:
            return {"__ndarray__": self.memo[id(a)][0]}
        if a.dtype.hasobject or a.dtype.fields is not None or a.dtype.subdtype is not None:
            raise TypeError(f"fnx.save: cannot save the NumPy array of dtype {a.dtype} at "
                            f"{_where(path)} (its elements need pickle; fnx checkpoints hold "
                            f"no pickled code)")
        idx = len(self.arrays)
        self.arrays.append(np.array(a, order="C", copy=True))
        self.memo[id(a)] = (idx, a)
        return {"__ndarray__": idx}

    def tensor(self, t, path):
        if t._device.type == "meta":
            raise RuntimeError(f"fnx.save: cannot save the meta tensor at {_where(path)} (it "
                               f"has no data)")
        if t.layout is not strided:
            raise RuntimeError(f"fnx.save: cannot save the sparse tensor ({t.layout}) at "
                               f"{_where(path)}: save its components (indices() and values(), "
                               f"...) or its to_dense()")
        with no_grad():
            arr = np.asarray(t.cpu()._data)
        if t._dtype is D.bfloat16:
            arr = arr.view(np.uint16)
        idx = len(self.arrays)
        self.arrays.append(np.array(arr, order="C", copy=True))    # keeps 0-d arrays 0-d
        self.memo[id(t)] = (idx, t)
        return {"__tensor__": idx, "dtype": t._dtype.name, "device": str(t._device),
                "requires_grad": t.requires_grad, "parameter": bool(t._is_param)}


# ----------------------------------------------------------------------------- load

def _member(z, member, name):
    try:
        info = z.getinfo(member)
    except KeyError:
        raise CheckpointError(f"fnx.load: {name!r} is missing the member {member!r} (truncated "
                              f"or corrupt checkpoint)") from None
    if info.compress_type != zipfile.ZIP_STORED:
        raise CheckpointError(f"fnx.load: {name!r}: member {member!r} is compressed; fnx and "
                              f"PyTorch checkpoints store their members uncompressed")
    try:
        return z.read(member)   # checks the size and the CRC
    except (zipfile.BadZipFile, RuntimeError, NotImplementedError, EOFError, OSError,
            ValueError, zlib.error) as e:    # zipfile's RuntimeError: "encrypted" flag set
        raise CheckpointError(f"fnx.load: {name!r}: member {member!r} is corrupt "
                              f"({type(e).__name__}: {e})") from None


def read_npy(raw: bytes, what: str):
    """An array from ``.npy`` bytes, with its header checked against the data size before
    anything is allocated (``np.load`` allocates what the header says first)."""
    fh = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise ValueError(f"unsupported .npy version {version}")
    except Exception as e:      # noqa: BLE001 - NumPy's parser raises ValueError,
        # SyntaxError, tokenize.TokenError, ... for a corrupt header
        raise CheckpointError(f"fnx.load: {what}: corrupt .npy header ({e})") from None
    if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
        raise CheckpointError(f"fnx.load: {what}: array of dtype {dtype} (object arrays need "
                              f"pickle, which fnx does not run)")
    count = 1
    for s in shape:
        count *= s
    body = raw[fh.tell():]
    if count * dtype.itemsize != len(body):
        raise CheckpointError(f"fnx.load: {what}: header says shape {shape} of {dtype} "
                              f"({count * dtype.itemsize} bytes) but {len(body)} bytes follow")
    arr = np.frombuffer(body, dtype=dtype)
    return arr.reshape(shape[::-1]).T if fortran else arr.reshape(shape)


def read(z, name, map_location, weights_only):
    raw = _member(z, HEADER, name)
    try:
        header = json.loads(raw)
    except ValueError as e:
        raise CheckpointError(f"fnx.load: {name!r} has a corrupt header: {e}") from None
    if not isinstance(header, dict) or header.get("format") != _FORMAT or \
            not isinstance(header.get("version", 0), int):
        raise CheckpointError(f"fnx.load: {name!r} is not an fnx checkpoint (bad header)")
    if header.get("version", 0) > _VERSION:
        raise CheckpointError(f"fnx.load: {name!r} was written by a newer fnx (format version "
                              f"{header['version']}, this fnx reads up to {_VERSION})")
    if "root" not in header:
        raise CheckpointError(f"fnx.load: {name!r}: the header has no root entry")
    return _Decoder(z, name, map_location, weights_only).decode(header["root"])


class _Decoder:
    def __init__(self, z, name, map_location, weights_only):
        self.z, self.name, self.map_location = z, name, map_location
        self.weights_only = weights_only
        self.tensors, self.ndarrays, self.objects = {}, {}, {}

    def bad(self, what):
        return CheckpointError(f"fnx.load: {self.name!r}: {what} (corrupt checkpoint)")

    def decode(self, v):
        if isinstance(v, list):
            return [self.decode(x) for x in v]
        if not isinstance(v, dict):
            return v
        if "__tensor__" in v:
            return self.tensor(v)
        if "__ndarray__" in v:
            return self.ndarray(v["__ndarray__"])
        if "__dict__" in v:
            d = OrderedDict() if v.get("ordered") else {}
            for kv in self.seq(v["__dict__"]):
                if not isinstance(kv, list) or len(kv) != 2:
                    raise self.bad(f"dict entry {kv!r} is not a [key, value] pair")
                k = self.decode(kv[0])
                try:
                    d[k] = self.decode(kv[1])
                except TypeError:
                    raise self.bad(f"unhashable dict key {k!r}") from None
            return d
        if "__tuple__" in v:
            return tuple(self.decode(x) for x in self.seq(v["__tuple__"]))
        if "__set__" in v:
            try:
                items = [self.decode(x) for x in self.seq(v["__set__"])]
                return frozenset(items) if v.get("frozen") else set(items)
            except TypeError:
                raise self.bad("unhashable set element") from None
        if "__float__" in v:
            try:
                return float(v["__float__"])
            except (TypeError, ValueError):
                raise self.bad(f"bad float {v['__float__']!r}") from None
        if "__dtype__" in v:
            dt = D._NAMES.get(v["__dtype__"]) if isinstance(v["__dtype__"], str) else None
            if dt is None:
                raise self.bad(f"unknown dtype {v['__dtype__']!r}")
            return dt
        if "__device__" in v:
            return self.device(v["__device__"])
        if "__object_ref__" in v:
            if v["__object_ref__"] not in self.objects:
                raise self.bad(f"reference to an unknown object {v['__object_ref__']!r}")
            return self.objects[v["__object_ref__"]]
        if "__object__" in v:
            return self.object(v)
        if "__global__" in v:
            return self.resolve(v["__global__"], "function or class")
        raise self.bad(f"unknown entry {str(v)[:80]}")

    def seq(self, v):
        if not isinstance(v, list):
            raise self.bad(f"expected a list, found {type(v).__name__}")
        return v

    def device(self, s):
        try:
            return _device_cls(s)
        except (TypeError, ValueError, RuntimeError) as e:
            raise self.bad(f"bad device {s!r}: {e}") from None

    def resolve(self, path, what):
        if not isinstance(path, str):
            raise self.bad(f"bad class path {path!r}")
        obj = _safe.allowed().get(path)
        if obj is None and not self.weights_only and not _safe.blocked(path):
            obj = _import(path)
        if obj is None:
            raise _safe.refuse(path, repr(self.name), what)
        return obj

    def object(self, v):
        """An object of a class the user allowed: ``cls.__new__`` then its state, as
        unpickling does (``__setstate__`` when the class has one)."""
        cls = self.resolve(v["__object__"], "class")
        if not isinstance(cls, type):
            raise self.bad(f"{v['__object__']} is not a class")
        idx = v.get("id")
        if idx in self.objects:
            raise self.bad(f"object id {idx!r} defined twice")
        obj = cls.__new__(cls)
        self.objects[idx] = obj     # before its state: the state may refer back to it
        state = self.decode(v.get("state"))
        if not isinstance(state, dict):
            raise self.bad(f"the state of a {v['__object__']} is not a dict")
        setstate = getattr(obj, "__setstate__", None)
        if setstate is not None:
            setstate(state)
        else:
            obj.__dict__.update(state)
        return obj

    def ndarray(self, idx):
        self.resolve(_NDARRAY, "class")     # refused under weights_only unless allowed
        if not isinstance(idx, int) or isinstance(idx, bool):
            raise self.bad(f"bad array index {idx!r}")
        if idx not in self.ndarrays:
            arr = read_npy(_member(self.z, f"tensors/{idx}.npy", self.name),
                           f"{self.name!r}: array {idx}")
            self.ndarrays[idx] = arr.copy()      # writable, as unpickled arrays are
        return self.ndarrays[idx]

    def tensor(self, spec):
        idx = spec["__tensor__"]
        if not isinstance(idx, int) or isinstance(idx, bool):
            raise self.bad(f"bad tensor index {idx!r}")
        if idx in self.tensors:
            return self.tensors[idx]
        dtype_name = spec.get("dtype")
        if not isinstance(dtype_name, str) or dtype_name not in STORAGE:
            raise self.bad(f"unknown dtype {dtype_name!r}")
        device_str = spec.get("device", "cpu")
        self.device(device_str)
        arr = read_npy(_member(self.z, f"tensors/{idx}.npy", self.name),
                       f"{self.name!r}: tensor {idx}")
        if arr.dtype != STORAGE[dtype_name]:
            raise CheckpointError(f"fnx.load: {self.name!r}: tensor {idx} is stored as "
                                  f"{arr.dtype}, expected {STORAGE[dtype_name]} for "
                                  f"{dtype_name}")
        t = make(arr, dtype_name, device_str, bool(spec.get("requires_grad")),
                 self.map_location, bool(spec.get("parameter", False)))
        self.tensors[idx] = t
        return t


def _import(path):
    """``weights_only=False``: the user trusts the file; find the class by importing its
    module (the longest importable prefix of the path)."""
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for p in parts[i:]:
                obj = getattr(obj, p)
        except AttributeError:
            return None
        return obj
    return None


def globals_in(z, name):
    """The class and function paths an fnx checkpoint names (none is allowed by default)."""
    header = json.loads(_member(z, HEADER, name))
    found, todo = [], [header.get("root") if isinstance(header, dict) else None]
    while todo:
        v = todo.pop()
        if isinstance(v, list):
            todo.extend(reversed(v))
        elif isinstance(v, dict):
            for key in ("__object__", "__global__"):
                if isinstance(v.get(key), str):
                    found.append(v[key])
            if "__ndarray__" in v:
                found.append(_NDARRAY)
            todo.extend(reversed(list(v.values())))
    return list(dict.fromkeys(found))
