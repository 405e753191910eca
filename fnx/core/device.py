"""``fnx.device``: a device type plus an optional index, interned so ``is`` works."""
from __future__ import annotations

__all__ = ["device"]

_KNOWN_TYPES = {"cpu", "cuda", "meta"}
_privateuse1_name = "privateuseone"


class device:
    """A device, as in PyTorch: ``fnx.device("cuda:0")``, ``fnx.device("cuda", 1)``.

    >>> import fnx
    >>> fnx.device("cuda:1").index, fnx.device("cpu") == "cpu"
    (1, True)
    """

    __slots__ = ("type", "index")
    _interned: dict = {}

    def __new__(cls, type_or_str, index=None):
        if isinstance(type_or_str, device):
            return type_or_str
        key = (type_or_str, index)
        d = cls._interned.get(key)
        if d is not None:
            return d
        if not isinstance(type_or_str, str):
            if isinstance(type_or_str, int) and not isinstance(type_or_str, bool):
                return cls("cuda", type_or_str)  # PyTorch: an int means that CUDA device
            raise TypeError(f"device(): expected a str or int, got {type(type_or_str).__name__}")
        typ, _, idx = type_or_str.partition(":")
        if idx:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index "
                                   f"was passed explicitly: {type_or_str}")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type_or_str}'")
            index = int(idx)
        if typ not in _KNOWN_TYPES and typ != _privateuse1_name:
            raise RuntimeError(
                f"Expected one of cpu, cuda, meta, {_privateuse1_name} device type at start "
                f"of device string: {type_or_str}")
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError(f"Device index must not be negative, got {index}")
        # one object per (type, index), however it was spelled ("cuda:0", ("cuda", 0)):
        # devices that are equal are the same object, so they hash by identity
        d = cls._interned.get((typ, index))
        if d is None:
            d = object.__new__(cls)
            object.__setattr__(d, "type", typ)
            object.__setattr__(d, "index", index)
            cls._interned[(typ, index)] = d
        cls._interned[key] = d
        return d

    def __setattr__(self, name, value):
        raise AttributeError("fnx.device is immutable")

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    # (interned: equal devices are one object; the C slot keeps dict keys and fnx.compile's
    # guard keys, which hold devices, cheap to hash)
    __hash__ = object.__hash__

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        """``with fnx.device("meta"):``: factories inside make tensors on this device (the
        default device), as ``with torch.device(...)`` does; the previous default returns
        on exit."""
        _entered.append(_default_device)
        set_default_device(self)
        return self

    def __exit__(self, *exc):
        set_default_device(_entered.pop())
        return False


def canonical(dev) -> device:
    """The device a tensor lives on: cuda gets an index (current device), cpu/meta none."""
    d = device(dev) if dev is not None else CPU
    if d.type == "cuda":
        # one object per cuda device ("cuda:0" and ("cuda", 0) intern separately), so
        # tensors' devices compare with ``is``
        return device("cuda", current_index("cuda") if d.index is None else d.index)
    if d.type == "cpu" and d.index is not None:
        return CPU
    if d.index is None and d.type == _privateuse1_name:
        # No device guard for out-of-tree backends: their "current device" is index 0, so
        # ``x.to("npu")`` lands on the same interned device as tensors made on "npu:0".
        return device(d.type, 0)
    return d


# The index a device type without one means ("cuda" is cuda:current_index("cuda")).
# The backend owning the type changes it (``fnx.cuda.set_device``); it is 0 until then.
_current: dict = {}


def current_index(device_type: str) -> int:
    return _current.get(device_type, 0)


def set_current_index(device_type: str, index: int) -> None:
    _current[device_type] = index


def rename_privateuse1_backend(name: str) -> None:
    """Give the PrivateUse1 backend a device name, as ``torch.utils.rename_privateuse1_backend``.

    >>> import fnx
    >>> fnx.utils.rename_privateuse1_backend("npu_doc")
    >>> fnx.device("npu_doc:0")
    device(type='npu_doc', index=0)
    """
    global _privateuse1_name
    if name in _KNOWN_TYPES:
        raise RuntimeError(f"cannot rename PrivateUse1 to the built-in device type '{name}'")
    _privateuse1_name = name


def privateuse1_name() -> str:
    return _privateuse1_name


CPU = device("cpu")
META = device("meta")


# The device factories use when ``device=`` is not given (``fnx.set_default_device``);
# None means cpu.
_default_device = None
_entered: list = []     # the defaults that ``with device(...)`` blocks replaced


def get_default_device() -> device:
    """The device factories create tensors on when not told (cpu unless set).

    >>> import fnx
    >>> fnx.get_default_device()
    device(type='cpu')
    """
    return CPU if _default_device is None else canonical(_default_device)


def set_default_device(dev) -> None:
    """Make factories without ``device=`` create tensors on ``dev`` (None: back to cpu).

    >>> import fnx
    >>> fnx.set_default_device("meta")
    >>> fnx.zeros(2).device
    device(type='meta')
    >>> fnx.set_default_device(None)
    """
    global _default_device
    _default_device = None if dev is None else device(dev) if not isinstance(dev, device) else dev

