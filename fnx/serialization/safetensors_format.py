"""``.safetensors`` files (a JSON header of names, dtypes, shapes and offsets, then the raw
little-endian data), parsed and validated by the ``safetensors`` package: its Rust parser
checks the header, that the offsets tile the data exactly and that each size matches its
shape, which is the hard part to get right by hand.  Its ``deserialize`` (raw bytes per
tensor) rather than ``safetensors.numpy.load``, which has no NumPy dtype for BF16."""
from __future__ import annotations

import json
import struct
from collections import OrderedDict

import numpy as np
import safetensors

from .errors import CheckpointError
from .tensors import STORAGE, make

__all__ = ["looks_like_safetensors", "read"]

_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
           "I64": "int64", "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8",
           "BOOL": "bool", "C64": "complex64", "C128": "complex128"}


def looks_like_safetensors(data: bytes) -> bool:
    """An 8-byte header length, then a JSON object."""
    if len(data) < 10:
        return False
    (n,) = struct.unpack("<Q", data[:8])
    return n >= 2 and data[8:9] == b"{"


def read(data, name, map_location):
    try:
        views = safetensors.deserialize(bytes(data))
    except Exception as e:      # noqa: BLE001 - the package's own SafetensorError and kin
        raise CheckpointError(f"fnx.load: {name!r} is not a valid safetensors file: "
                              f"{e}") from None
    # in the header's order (the parser returns them in no particular order)
    (n,) = struct.unpack("<Q", data[:8])
    order = {k: i for i, k in enumerate(json.loads(data[8:8 + n]))}
    out = OrderedDict()
    for key, view in sorted(views, key=lambda kv: order.get(kv[0], len(order))):
        dtype_name = _DTYPES.get(view["dtype"])
        if dtype_name is None:
            raise CheckpointError(f"fnx.load: {name!r}: safetensors dtype {view['dtype']!r} "
                                  f"of {key!r} is not supported by fnx")
        storage = STORAGE[dtype_name].newbyteorder("<")
        arr = np.frombuffer(view["data"], dtype=storage).reshape(view["shape"])
        out[key] = make(arr.astype(STORAGE[dtype_name]), dtype_name, "cpu", False,
                        map_location)
    return out
