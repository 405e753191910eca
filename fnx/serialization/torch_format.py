"""PyTorch checkpoints (``torch.save``): the zip format (``<archive>/data.pkl`` plus one raw
``<archive>/data/<key>`` member per storage) and the legacy format (a stream of pickles,
then the storages' bytes), read with a restricted unpickler that follows the rules of
``torch.load(weights_only=True)``.

The unpickler interprets the opcodes itself; no global is ever imported.  A ``GLOBAL``
resolves only to the names in ``_ALLOWED`` (tensor rebuild functions, storage types,
dtypes, ``torch.device``/``Size``, ``OrderedDict``, ``Counter``, ``set``, ``complex``,
``bytes``) or to what the user allowed (``fnx.serialization.add_safe_globals``); any other
name is refused by name.  ``REDUCE``/``NEWOBJ`` call only those objects, ``BUILD`` sets
state only on an ``OrderedDict`` (its ``_metadata``) or an allowed class's instance,
``APPEND``/``SETITEM`` write only lists and dicts.  Each storage's size is checked against
its bytes and each tensor's extent against its storage before anything is copied.
A storage shared by several tensors (views) is copied per tensor: loaded tensors do not
alias each other.
"""
from __future__ import annotations

import pickletools
import struct
from collections import Counter, OrderedDict

import numpy as np

from ..core import dtype as D
from ..core.device import device as _device_cls
from ..core.meta_array import meta_tensor
from ..core.tensor import Size, Tensor
from . import safe_globals as _safe
from .errors import CheckpointError
from .tensors import STORAGE, make, parameter

__all__ = ["is_legacy", "read_zip", "read_legacy", "globals_in_zip", "globals_in_legacy"]

# The first pickle of a legacy torch.save file: this number.
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PREFIX = b"\x80\x02\x8a\x0a" + _LEGACY_MAGIC.to_bytes(10, "little")
_MAX_BROADCAST_BYTES = 1 << 30      # zero-stride tensors larger than their storage, in all


def is_legacy(data: bytes) -> bool:
    return data.startswith(_LEGACY_PREFIX)


# ----------------------------------------------------------------------------- the globals

class _StorageType:
    """What ``torch.FloatStorage`` (etc.) stands for: the element dtype of a storage."""

    def __init__(self, dtype_name):
        self.dtype_name = dtype_name        # None: untyped bytes


class _Storage:
    """A storage's bytes as a 1-D array of its element type (bytes when untyped), where it
    lived, and whether the file is big-endian."""

    def __init__(self, array, dtype_name, location, big=False):
        self.array, self.dtype_name, self.location = array, dtype_name, location
        self.big = big

    def typed(self, dtype_name):
        if dtype_name is None or dtype_name == self.dtype_name:
            return self.array, self.dtype_name
        if self.dtype_name is not None:
            raise CheckpointError(f"a {self.dtype_name} storage read as {dtype_name}")
        # an untyped (byte) storage, viewed with the tensor's dtype
        dt = STORAGE[dtype_name].newbyteorder(">" if self.big else "<")
        if len(self.array) % dt.itemsize:
            raise CheckpointError(f"an untyped storage of {len(self.array)} bytes is not a "
                                  f"whole number of {dtype_name} elements")
        return self.array.view(dt), dtype_name


class _Loader:
    """The context of one load: storages by key, map_location, the file's name."""

    dry = False     # True: build meta tensors, read no data (a legacy file's first pass)

    def __init__(self, name, map_location, storages):
        self.name, self.map_location, self.storages = name, map_location, storages
        self.amplified = 0      # bytes of expanded tensors beyond their storages


def _ints(v, what):
    if not isinstance(v, (tuple, list)) or not all(
            isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise CheckpointError(f"{what} is not a tuple of ints: {v!r}")
    return tuple(v)


def _tensor(ld, storage, offset, size, stride, requires_grad, dtype_name=None):
    if not isinstance(storage, _Storage):
        raise CheckpointError(f"a tensor's storage is a {type(storage).__name__}")
    arr, dtype_name = storage.typed(dtype_name)
    size, stride = _ints(size, "a tensor's size"), _ints(stride, "a tensor's stride")
    if not isinstance(offset, int) or offset < 0 or len(size) != len(stride) or \
            any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise CheckpointError(f"bad tensor geometry: offset {offset!r}, size {size}, stride "
                              f"{stride}")
    numel = 1
    for s in size:
        numel *= s
    if ld.dry:
        return meta_tensor(size, D._NAMES[dtype_name or "uint8"])
    item = arr.dtype.itemsize
    if numel:
        extent = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
        if extent > len(arr):
            raise CheckpointError(f"a tensor of size {size}, stride {stride} and offset "
                                  f"{offset} reaches element {extent - 1} of a storage of "
                                  f"{len(arr)} elements")
        if numel > len(arr):        # zero strides (an expanded tensor): a copy is bigger
            ld.amplified += numel * item        # than the file; bounded, per file
            if ld.amplified > _MAX_BROADCAST_BYTES:
                raise CheckpointError(f"a tensor of size {size} ({numel} elements) over a "
                                      f"storage of {len(arr)} elements is implausibly large")
        view = np.ndarray(size, arr.dtype, arr, offset * item, tuple(s * item for s in stride))
    else:
        view = np.empty(size, arr.dtype)
    if view.dtype.byteorder == ">":
        view = view.astype(view.dtype.newbyteorder("="))
    return make(view, dtype_name, storage.location, bool(requires_grad), ld.map_location)


def _rebuild_tensor(ld, storage, offset, size, stride):
    return _tensor(ld, storage, offset, size, stride, False)


def _rebuild_tensor_v2(ld, storage, offset, size, stride, requires_grad, hooks,
                       metadata=None):
    return _tensor(ld, storage, offset, size, stride, requires_grad)


def _rebuild_tensor_v3(ld, storage, offset, size, stride, requires_grad, hooks, dtype,
                       metadata=None):
    if not isinstance(dtype, D.dtype):
        raise CheckpointError(f"_rebuild_tensor_v3: {dtype!r} is not a dtype")
    return _tensor(ld, storage, offset, size, stride, requires_grad, dtype.name)


def _rebuild_parameter(ld, data, requires_grad, hooks):
    if not isinstance(data, Tensor):
        raise CheckpointError(f"_rebuild_parameter: {type(data).__name__} is not a tensor")
    return parameter(data, bool(requires_grad))


def _rebuild_parameter_with_state(ld, data, requires_grad, hooks, state):
    return _set_state(_rebuild_parameter(ld, data, requires_grad, hooks), state)


def _rebuild_meta_tensor_no_storage(ld, dtype, size, stride, requires_grad=False):
    if not isinstance(dtype, D.dtype):
        raise CheckpointError(f"_rebuild_meta_tensor_no_storage: {dtype!r} is not a dtype")
    return meta_tensor(_ints(size, "a meta tensor's size"), dtype)


def _rebuild_device_tensor_from_cpu_tensor(ld, data, dtype, device, requires_grad):
    if not isinstance(data, Tensor):
        raise CheckpointError("_rebuild_device_tensor_from_cpu_tensor: not a tensor")
    if requires_grad:
        data.requires_grad_(True)
    return data


def _rebuild_from_type_v2(ld, func, new_type, args, state):
    if func not in _CALLABLE or not isinstance(args, tuple):
        raise CheckpointError(f"_rebuild_from_type_v2: cannot call {func!r}")
    ret = _call(ld, func, args)
    if not isinstance(ret, Tensor):
        raise CheckpointError(f"_rebuild_from_type_v2: {func!r} made a {type(ret).__name__}")
    if new_type is _PARAMETER:
        ret = parameter(ret, ret.requires_grad)
    elif new_type is not Tensor:
        raise CheckpointError(f"_rebuild_from_type_v2: tensor subclass {new_type!r} is not "
                              f"supported")
    return _set_state(ret, state)


def _set_state(t, state):
    """A tensor's Python attributes (``_set_obj_state``): public names the class lacks."""
    if isinstance(state, tuple) and len(state) == 2:
        state = state[0]
    if state is None or state == {}:
        return t
    if not isinstance(state, dict):
        raise CheckpointError(f"a tensor's state is a {type(state).__name__}")
    for k, v in state.items():
        if not isinstance(k, str) or k.startswith("_") or hasattr(type(t), k):
            raise CheckpointError(f"a tensor's state sets the attribute {k!r}")
        setattr(t, k, v)
    return t


def _unsupported(kind):
    def refuse(ld, *args):
        raise CheckpointError(f"{kind} tensors are not supported by fnx")
    return refuse


def _device(ld, type_or_str, index=None):
    try:
        return _device_cls(type_or_str, index)
    except (TypeError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"bad device {type_or_str!r}: {e}") from None


def _encode(ld, text, encoding="latin1"):
    # how protocol 2 stores bytes: _codecs.encode(str, "latin1")
    if encoding not in ("latin1", "latin-1") or not isinstance(text, str):
        raise CheckpointError(f"_codecs.encode with encoding {encoding!r} is not allowed")
    return text.encode("latin1")


def _plain(fn):
    def call(ld, *args):
        return fn(*args)
    call.__name__ = getattr(fn, "__name__", "call")
    return call


_PARAMETER = _StorageType("parameter")     # a marker: torch.nn.Parameter, made by fnx.nn

_ALLOWED = {
    "collections.OrderedDict": OrderedDict,
    "collections.Counter": Counter,
    "builtins.set": set,
    "builtins.complex": complex,
    "builtins.bytearray": bytearray,
    "builtins.bytes": bytes,
    "_codecs.encode": _encode,
    "torch.device": _device,
    "torch.Size": _plain(Size),
    "torch.Tensor": Tensor,
    "torch.nn.parameter.Parameter": _PARAMETER,
    "torch._utils._rebuild_tensor": _rebuild_tensor,
    "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
    "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
    "torch._utils._rebuild_parameter": _rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
    "torch._utils._rebuild_meta_tensor_no_storage": _rebuild_meta_tensor_no_storage,
    "torch._utils._rebuild_device_tensor_from_cpu_tensor":
        _rebuild_device_tensor_from_cpu_tensor,
    "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    "torch._utils._rebuild_qtensor": _unsupported("quantized"),
    "torch._utils._rebuild_sparse_tensor": _unsupported("sparse"),
    "torch._utils._rebuild_nested_tensor": _unsupported("nested"),
    "torch._utils._rebuild_wrapper_subclass": _unsupported("wrapper subclass"),
    "torch.storage.UntypedStorage": _StorageType(None),
    "torch.UntypedStorage": _StorageType(None),
}
for _d in D._ALL:
    _ALLOWED[f"torch.{_d.name}"] = _d
    for _prefix in ("torch", "torch.cuda"):
        _ALLOWED[f"{_prefix}.{_d.scalar_type}Storage"] = _StorageType(_d.name)
# functions the loader calls with itself first; classes are called as they are
_WITH_LOADER = {id(v) for v in _ALLOWED.values() if callable(v) and not isinstance(v, type)}
_CALLABLE = [v for v in _ALLOWED.values() if callable(v)]
# Python 2 module names protocol 2 writes (Python's own pickle maps them the same way)
_RENAMED = {"__builtin__": "builtins", "copy_reg": "copyreg"}


def _call(ld, fn, args):
    if id(fn) in _WITH_LOADER:
        return fn(ld, *args)
    if fn is _PARAMETER:
        return parameter(*args)
    return fn(*args)


# ----------------------------------------------------------------------------- the unpickler

class _Unpickler:
    """Runs the opcodes of one pickle; raises CheckpointError for anything else."""

    def __init__(self, data, pos, ld, persistent_load):
        self.data, self.pos, self.ld = data, pos, ld
        self.persistent_load = persistent_load
        self.user = _safe.allowed()
        self.memo = {}

    def read(self, n):
        end = self.pos + n
        if n < 0 or end > len(self.data):
            raise CheckpointError(f"the pickle is truncated (wants {n} bytes at byte "
                                  f"{self.pos}, the data has {len(self.data)})")
        b = self.data[self.pos:end]
        self.pos = end
        return b

    def readline(self):
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise CheckpointError("the pickle is truncated (a line has no end)")
        b = self.data[self.pos:end]
        self.pos = end + 1
        return b

    def find(self, module, name):
        module = _RENAMED.get(module, module)
        path = f"{module}.{name}"
        if path in _ALLOWED:
            return _ALLOWED[path]
        obj = self.user.get(path)
        if obj is None:
            raise _safe.refuse(path, "the checkpoint", "global")
        return obj

    def is_allowed(self, obj):
        return any(obj is v for v in _CALLABLE) or any(obj is v for v in self.user.values())

    def load(self):
        self.stack, self.metastack = [], []
        ops = _OPS
        while True:
            code = self.read(1)[0]
            op = ops.get(code)
            if op is None:
                raise CheckpointError(f"unsupported pickle opcode {bytes([code])!r} at byte "
                                      f"{self.pos - 1}")
            if op(self) is _STOP:
                return self.stack.pop() if self.stack else _empty()

    def pop_mark(self):
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def push(self, v):
        self.stack.append(v)


def _empty():
    raise CheckpointError("the pickle ends with an empty stack")


_STOP = object()
_OPS: dict = {}


def _op(code):
    def deco(fn):
        _OPS[code[0]] = fn
        return fn
    return deco


def _simple(code, value_fn):
    _OPS[code[0]] = lambda u: u.push(value_fn())


_simple(b"N", lambda: None)                             # NONE
_simple(b"\x88", lambda: True)                          # NEWTRUE
_simple(b"\x89", lambda: False)                         # NEWFALSE
_simple(b")", tuple)                                    # EMPTY_TUPLE
_simple(b"]", list)                                     # EMPTY_LIST
_simple(b"}", dict)                                     # EMPTY_DICT
_simple(b"\x8f", set)                                   # EMPTY_SET


@_op(b"\x80")   # PROTO
def _proto(u):
    if u.read(1)[0] > 5:
        raise CheckpointError("unsupported pickle protocol")


@_op(b"\x95")   # FRAME: a length prefix, nothing to do
def _frame(u):
    u.read(8)


@_op(b".")      # STOP
def _stop(u):
    return _STOP


@_op(b"(")      # MARK
def _mark(u):
    u.metastack.append(u.stack)
    u.stack = []


@_op(b"0")      # POP
def _pop(u):
    if u.stack:
        u.stack.pop()
    else:
        u.pop_mark()


@_op(b"1")      # POP_MARK
def _pop_mark(u):
    u.pop_mark()


@_op(b"2")      # DUP
def _dup(u):
    u.push(u.stack[-1])


@_op(b"J")      # BININT
def _binint(u):
    u.push(struct.unpack("<i", u.read(4))[0])


@_op(b"K")      # BININT1
def _binint1(u):
    u.push(u.read(1)[0])


@_op(b"M")      # BININT2
def _binint2(u):
    u.push(struct.unpack("<H", u.read(2))[0])


@_op(b"\x8a")   # LONG1
def _long1(u):
    u.push(int.from_bytes(u.read(u.read(1)[0]), "little", signed=True))


@_op(b"\x8b")   # LONG4
def _long4(u):
    n = struct.unpack("<i", u.read(4))[0]
    if n > 64:
        raise CheckpointError(f"an integer of {n} bytes")
    u.push(int.from_bytes(u.read(n), "little", signed=True))


@_op(b"G")      # BINFLOAT
def _binfloat(u):
    u.push(struct.unpack(">d", u.read(8))[0])


def _text(u, n):
    return str(u.read(n), "utf-8", "surrogatepass")


_OPS[b"X"[0]] = lambda u: u.push(_text(u, struct.unpack("<I", u.read(4))[0]))  # BINUNICODE
_OPS[b"\x8c"[0]] = lambda u: u.push(_text(u, u.read(1)[0]))        # SHORT_BINUNICODE
_OPS[b"\x8d"[0]] = lambda u: u.push(_text(u, struct.unpack("<Q", u.read(8))[0]))
_OPS[b"U"[0]] = lambda u: u.push(_text(u, u.read(1)[0]))           # SHORT_BINSTRING (py2)
_OPS[b"T"[0]] = lambda u: u.push(_text(u, struct.unpack("<i", u.read(4))[0]))  # BINSTRING
_OPS[b"C"[0]] = lambda u: u.push(bytes(u.read(u.read(1)[0])))      # SHORT_BINBYTES
_OPS[b"B"[0]] = lambda u: u.push(bytes(u.read(struct.unpack("<I", u.read(4))[0])))
_OPS[b"\x8e"[0]] = lambda u: u.push(bytes(u.read(struct.unpack("<Q", u.read(8))[0])))


@_op(b"t")      # TUPLE
def _tuple(u):
    u.push(tuple(u.pop_mark()))


@_op(b"\x85")   # TUPLE1
def _tuple1(u):
    u.stack[-1] = (u.stack[-1],)


@_op(b"\x86")   # TUPLE2
def _tuple2(u):
    b, a = u.stack.pop(), u.stack.pop()
    u.push((a, b))


@_op(b"\x87")   # TUPLE3
def _tuple3(u):
    c, b, a = u.stack.pop(), u.stack.pop(), u.stack.pop()
    u.push((a, b, c))


@_op(b"l")      # LIST
def _list(u):
    u.push(u.pop_mark())


@_op(b"d")      # DICT
def _dict(u):
    items = u.pop_mark()
    if len(items) % 2:
        raise CheckpointError("DICT with an odd number of items")
    u.push({items[i]: items[i + 1] for i in range(0, len(items), 2)})


@_op(b"a")      # APPEND
def _append(u):
    v = u.stack.pop()
    _list_target(u).append(v)


@_op(b"e")      # APPENDS
def _appends(u):
    items = u.pop_mark()
    _list_target(u).extend(items)


def _list_target(u):
    t = u.stack[-1]
    if type(t) is not list:
        raise CheckpointError(f"APPEND to a {type(t).__name__} (only lists)")
    return t


def _dict_target(u):
    t = u.stack[-1]
    if type(t) not in (dict, OrderedDict, Counter):
        raise CheckpointError(f"SETITEM on a {type(t).__name__} (only dicts)")
    return t


@_op(b"s")      # SETITEM
def _setitem(u):
    v, k = u.stack.pop(), u.stack.pop()
    _dict_target(u)[k] = v


@_op(b"u")      # SETITEMS
def _setitems(u):
    items = u.pop_mark()
    if len(items) % 2:
        raise CheckpointError("SETITEMS with an odd number of items")
    d = _dict_target(u)
    for i in range(0, len(items), 2):
        d[items[i]] = items[i + 1]


@_op(b"\x90")   # ADDITEMS
def _additems(u):
    items = u.pop_mark()
    t = u.stack[-1]
    if type(t) is not set:
        raise CheckpointError(f"ADDITEMS on a {type(t).__name__} (only sets)")
    t.update(items)


@_op(b"\x91")   # FROZENSET
def _frozenset(u):
    u.push(frozenset(u.pop_mark()))


@_op(b"c")      # GLOBAL
def _global(u):
    module = u.readline().decode("utf-8")
    name = u.readline().decode("utf-8")
    u.push(u.find(module, name))


@_op(b"\x93")   # STACK_GLOBAL
def _stack_global(u):
    name, module = u.stack.pop(), u.stack.pop()
    if not isinstance(name, str) or not isinstance(module, str):
        raise CheckpointError("STACK_GLOBAL with names that are not strings")
    u.push(u.find(module, name))


@_op(b"R")      # REDUCE
def _reduce(u):
    args = u.stack.pop()
    fn = u.stack[-1]
    if not isinstance(args, tuple):
        raise CheckpointError(f"REDUCE with arguments of type {type(args).__name__}")
    if not u.is_allowed(fn):
        raise CheckpointError(f"REDUCE calls {fn!r}, which is not an allowed function")
    u.stack[-1] = _call(u.ld, fn, args)


@_op(b"\x81")   # NEWOBJ
def _newobj(u):
    args = u.stack.pop()
    cls = u.stack.pop()
    if not isinstance(args, tuple):
        raise CheckpointError(f"NEWOBJ with arguments of type {type(args).__name__}")
    if cls is _PARAMETER:
        u.push(parameter(*args))
    elif isinstance(cls, type) and u.is_allowed(cls) and cls is not Tensor:
        u.push(cls.__new__(cls, *args))
    else:
        raise CheckpointError(f"NEWOBJ of {cls!r}, which is not an allowed class")


@_op(b"b")      # BUILD
def _build(u):
    state = u.stack.pop()
    inst = u.stack[-1]
    cls = type(inst)
    if cls is OrderedDict:
        if not isinstance(state, dict):
            raise CheckpointError("BUILD of an OrderedDict with a state that is not a dict")
        inst.__dict__.update(state)             # the state dict's _metadata
    elif isinstance(inst, Tensor):
        _set_state(inst, state)
    elif any(cls is v for v in u.user.values()):
        setstate = getattr(inst, "__setstate__", None)
        if setstate is not None:
            setstate(state)
            return
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        if state:
            inst.__dict__.update(state)
        for k, v in (slots or {}).items():
            setattr(inst, k, v)
    else:
        raise CheckpointError(f"BUILD of a {cls.__name__}, which is not an allowed class")


@_op(b"Q")      # BINPERSID: a storage
def _binpersid(u):
    pid = u.stack.pop()
    if type(pid) is not tuple or not pid or pid[0] not in ("storage", b"storage"):
        raise CheckpointError(f"a persistent id that is not a storage: {str(pid)[:80]}")
    u.push(u.persistent_load(pid))


@_op(b"h")      # BINGET
def _binget(u):
    u.push(u.memo[u.read(1)[0]])


@_op(b"j")      # LONG_BINGET
def _long_binget(u):
    u.push(u.memo[struct.unpack("<I", u.read(4))[0]])


@_op(b"q")      # BINPUT
def _binput(u):
    u.memo[u.read(1)[0]] = u.stack[-1]


@_op(b"r")      # LONG_BINPUT
def _long_binput(u):
    u.memo[struct.unpack("<I", u.read(4))[0]] = u.stack[-1]


@_op(b"\x94")   # MEMOIZE
def _memoize(u):
    u.memo[len(u.memo)] = u.stack[-1]


def _unpickle(data, pos, ld, persistent_load):
    """The object of the pickle at ``data[pos:]`` and the position after it."""
    u = _Unpickler(data, pos, ld, persistent_load)
    try:
        obj = u.load()
    except CheckpointError as e:
        raise CheckpointError(f"fnx.load: {ld.name!r}: {_strip(e)}") from None
    except (IndexError, KeyError, TypeError, ValueError, AttributeError, OverflowError,
            struct.error, UnicodeDecodeError) as e:
        raise CheckpointError(f"fnx.load: {ld.name!r}: malformed pickle near byte {u.pos} "
                              f"({type(e).__name__}: {e})") from None
    return obj, u.pos


def _strip(e):
    s = str(e)
    return s[len("fnx.load: "):] if s.startswith("fnx.load: ") else s


# ----------------------------------------------------------------------------- the files

def _storage(raw, stype, location, numel, byteorder, where):
    if not isinstance(stype, _StorageType) or stype is _PARAMETER:
        raise CheckpointError(f"{where}: {stype!r} is not a storage type")
    if not isinstance(location, str):
        raise CheckpointError(f"{where}: bad storage location {location!r}")
    dt = np.dtype(np.uint8) if stype.dtype_name is None else STORAGE[stype.dtype_name]
    if isinstance(numel, int) and numel * dt.itemsize != len(raw):
        raise CheckpointError(f"{where}: a storage of {numel} {stype.dtype_name or 'byte'} "
                              f"elements has {len(raw)} bytes")
    if len(raw) % dt.itemsize:
        raise CheckpointError(f"{where}: {len(raw)} bytes are not whole elements")
    if byteorder == "big" and dt.itemsize > 1:
        dt = dt.newbyteorder(">")
    return _Storage(np.frombuffer(raw, dt), stype.dtype_name, location, byteorder == "big")


def read_zip(z, name, map_location, member):
    """A checkpoint written by ``torch.save`` (zip format); ``member`` reads and checks one
    member of the archive."""
    pkl = next(n for n in z.namelist() if n == "data.pkl" or n.endswith("/data.pkl"))
    prefix = pkl[:-len("data.pkl")]
    order = "little"
    if prefix + "byteorder" in z.namelist():
        order = member(z, prefix + "byteorder", name).decode("ascii", "replace").strip()
        if order not in ("little", "big"):
            raise CheckpointError(f"fnx.load: {name!r}: unknown byte order {order!r}")
    storages = {}
    ld = _Loader(name, map_location, storages)

    def persistent_load(pid):
        if len(pid) != 5:
            raise CheckpointError(f"a storage id of {len(pid)} fields (expected 5)")
        _, stype, key, location, numel = pid
        if not isinstance(key, str):
            raise CheckpointError(f"bad storage key {key!r}")
        if key not in storages:
            where = f"storage {key}"
            raw = member(z, f"{prefix}data/{key}", name)
            storages[key] = _storage(raw, stype, location, numel, order, where)
        return storages[key]

    return _unpickle(member(z, pkl, name), 0, ld, persistent_load)[0]


def read_legacy(data, name, map_location):
    """A checkpoint in the legacy (before PyTorch 1.6) stream format: pickles of the magic
    number, the protocol version and the system info, the object (storages by key), the
    storage keys; then each storage as its element count (int64) and its bytes.  The
    object's pickle runs twice: first without data, to learn each storage's type (its
    element size), then with the storages read."""
    pos = len(_LEGACY_PREFIX)
    if data[pos:pos + 1] != b".":
        raise CheckpointError(f"fnx.load: {name!r}: corrupt legacy header")
    ld = _Loader(name, map_location, {})
    version, pos = _unpickle(data, pos + 1, ld, _no_storage)
    if version != 1001:
        raise CheckpointError(f"fnx.load: {name!r}: legacy protocol version {version!r} is "
                              f"not supported (1001 is)")
    info, main = _unpickle(data, pos, ld, _no_storage)
    if not isinstance(info, dict) or info.get("little_endian") is not True:
        raise CheckpointError(f"fnx.load: {name!r}: only little-endian legacy files are read")
    found = {}

    def record(pid):
        stype, key, location = _legacy_pid(pid)[:3]
        found.setdefault(key, (stype, location))
        return _Storage(np.zeros(0, np.uint8), stype.dtype_name, "meta")

    dry = _Loader(name, "meta", {})
    dry.dry = True
    _, pos = _unpickle(data, main, dry, record)
    keys, pos = _unpickle(data, pos, ld, _no_storage)
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise CheckpointError(f"fnx.load: {name!r}: corrupt legacy storage list")
    storages = ld.storages
    for key in keys:
        if key not in found:
            raise CheckpointError(f"fnx.load: {name!r}: storage {key} is never used")
        stype, location = found[key]
        if pos + 8 > len(data):
            raise CheckpointError(f"fnx.load: {name!r}: truncated at storage {key}")
        (count,) = struct.unpack("<q", data[pos:pos + 8])
        item = 1 if stype.dtype_name is None else STORAGE[stype.dtype_name].itemsize
        end = pos + 8 + count * item
        if count < 0 or end > len(data):
            raise CheckpointError(f"fnx.load: {name!r}: storage {key} claims {count} "
                                  f"elements, more than the file holds")
        storages[key] = _storage(data[pos + 8:end], stype, location, count, "little",
                                 f"storage {key}")
        pos = end

    def persistent_load(pid):
        _, key, _, view = _legacy_pid(pid)
        if key not in storages:
            raise CheckpointError(f"storage {key!r} is not in the file")
        root = storages[key]
        if view is None:
            return root
        if not isinstance(view, tuple) or len(view) != 3:
            raise CheckpointError(f"bad storage view {view!r}")
        _, offset, size = view
        if not (isinstance(offset, int) and isinstance(size, int) and 0 <= offset and
                0 <= size and offset + size <= len(root.array)):
            raise CheckpointError(f"bad storage view {view!r}")
        return _Storage(root.array[offset:offset + size], root.dtype_name, root.location)

    return _unpickle(data, main, ld, persistent_load)[0]


def _legacy_pid(pid):
    """(storage type, key, location, view) of a legacy storage id."""
    if len(pid) != 6:
        raise CheckpointError(f"a legacy storage id of {len(pid)} fields (expected 6)")
    _, stype, key, location, _, view = pid
    if not isinstance(stype, _StorageType) or stype is _PARAMETER:
        raise CheckpointError(f"{stype!r} is not a storage type")
    if not isinstance(key, str) or not isinstance(location, str):
        raise CheckpointError(f"bad storage key {key!r} or location {location!r}")
    return stype, key, location, view


def _no_storage(pid):
    raise CheckpointError("a storage where none is expected")


# ----------------------------------------------------------------------------- listing globals

def _globals_in(data, pos):
    """The globals the pickle at ``data[pos:]`` names, read without running it, and the
    position after it."""
    found, strings, end = [], [], pos
    try:
        for op, arg, at in pickletools.genops(data[pos:]):
            end = pos + at + 1
            if op.name == "GLOBAL":
                module, _, name = arg.partition(" ")
                found.append(f"{_RENAMED.get(module, module)}.{name}")
            elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                found.append(f"{strings[-2]}.{strings[-1]}")
            elif isinstance(arg, str):
                strings.append(arg)
    except ValueError as e:
        raise CheckpointError(f"corrupt pickle ({e})") from None
    return found, end


def unsafe(paths):
    """The names of ``paths`` that are not allowed by default, in order, once each."""
    return list(dict.fromkeys(p for p in paths if p not in _ALLOWED))


def globals_in_zip(z, member):
    pkl = next(n for n in z.namelist() if n == "data.pkl" or n.endswith("/data.pkl"))
    return unsafe(_globals_in(member(z, pkl, "<file>"), 0)[0])


def globals_in_legacy(data):
    pos, found = len(_LEGACY_PREFIX) + 1, []
    for _ in range(3):          # the protocol version, the system info, the object
        names, pos = _globals_in(data, pos)
        found += names
    return unsafe(found)
