"""fnx.load on malformed files: every one raises fnx.serialization.CheckpointError (a
RuntimeError and a pickle.UnpicklingError, as torch.load's errors) with a message saying
what is wrong -- truncated, wrong magic, missing member, bad CRC, sizes that disagree with
the data, nesting too deep -- and a seeded fuzz of byte flips and truncations of real
checkpoints (fnx, PyTorch zip and legacy, safetensors) finds no other exception and no
hang."""
import io
import json
import pickle
import struct
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

import fnx
import fnx.nn as nn
from fnx.serialization import CheckpointError, load, save

DATA = Path(__file__).parent / "data"


def _checkpoint(obj):
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


def _state():
    fnx.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Linear(4, 2))
    return {"model": m.state_dict(), "step": 7, "lr": 0.5, "names": ["a", "b"],
            "shape": (2, 3), "bf": fnx.ones(3, dtype=fnx.bfloat16), "dtype": fnx.float16}


def _rezip(data, drop=None, replace=None):
    """The archive ``data`` with member ``drop`` left out or members replaced."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for n in src.namelist():
            if n == drop:
                continue
            z.writestr(n, (replace or {}).get(n, src.read(n)))
    return out.getvalue()


def _raises(data, match):
    with pytest.raises(CheckpointError, match=match) as info:
        load(io.BytesIO(data))
    assert isinstance(info.value, RuntimeError)
    assert isinstance(info.value, pickle.UnpicklingError)
    return info.value


def test_error_type_is_documented_and_catchable_as_pytorchs():
    assert issubclass(CheckpointError, RuntimeError)
    assert issubclass(CheckpointError, pickle.UnpicklingError)
    assert CheckpointError.__doc__ and fnx.load.__doc__ and "CheckpointError" in fnx.load.__doc__


def test_truncated_fnx_checkpoint_is_called_truncated():
    data = _checkpoint(_state())
    for cut in (len(data) - 1, len(data) // 2, 30, 3):
        _raises(data[:cut], "truncated or corrupt zip archive")


def test_wrong_magic_and_empty_file():
    _raises(b"", "is not an fnx checkpoint")
    _raises(b"GIF89a........", "is not an fnx checkpoint .* it starts with b'GIF89a")
    data = _checkpoint({"w": fnx.ones(2)})
    _raises(b"XX" + data[2:], "is not an fnx checkpoint")


def test_missing_members():
    data = _checkpoint({"w": fnx.ones(2), "v": fnx.zeros(3)})
    _raises(_rezip(data, drop="tensors/1.npy"), "missing the member 'tensors/1.npy'")
    _raises(_rezip(data, drop="fnx_format.json"), "zip archive but not an fnx checkpoint")


def test_bad_crc():
    data = bytearray(_checkpoint({"w": fnx.arange(64, dtype=fnx.float32)}))
    at = data.rindex(np.arange(64, dtype=np.float32).tobytes()) + 17
    data[at] ^= 0xFF                    # one byte of the tensor data, CRC left as it was
    _raises(bytes(data), "Bad CRC-32")


def test_absurd_sizes_are_refused_before_allocating():
    data = _checkpoint({"w": fnx.ones(4)})
    arr = np.ones(4, np.float32)
    header = {"descr": "<f4", "fortran_order": False, "shape": (10**13,)}
    h = io.BytesIO()
    np.lib.format.write_array_header_1_0(h, header)     # a .npy header claiming 40 TB
    raw = h.getvalue() + arr.tobytes()
    t0 = time.perf_counter()
    _raises(_rezip(data, replace={"tensors/0.npy": raw}),
            r"shape \(10000000000000,\) of float32 \(40000000000000 bytes\) but 16 bytes")
    assert time.perf_counter() - t0 < 5
    # a shape that disagrees with the data the other way
    h = io.BytesIO()
    np.lib.format.write_array_header_1_0(h, {**header, "shape": (2,)})
    _raises(_rezip(data, replace={"tensors/0.npy": h.getvalue() + arr.tobytes()}),
            r"\(8 bytes\) but 16 bytes follow")


def test_deep_nesting():
    data = _checkpoint({"w": 1})
    for depth in (600, 100000):     # past the decoder's recursion; past JSON's own
        root = '{"__tuple__": [' * depth + "1" + "]}" * depth
        text = '{"format": "fnx.save", "version": 1, "root": ' + root + "}"
        _raises(_rezip(data, replace={"fnx_format.json": text}), "nested too deeply")
    # a pickle nested as deep loads: the restricted unpickler keeps no Python recursion
    pkl = b"\x80\x02" + b"]" * 100000 + b"a" * 99999 + b"."
    deep = _torch_zip(pkl, {})
    out = load(io.BytesIO(deep))
    for _ in range(99999):
        (out,) = out
    assert out == []


def test_bad_header_entries():
    data = _checkpoint({"w": fnx.ones(2)})

    def with_root(root, version=1):
        return _rezip(data, replace={"fnx_format.json": json.dumps(
            {"format": "fnx.save", "version": version, "root": root})})

    _raises(with_root({"__tensor__": 0, "dtype": "float99", "device": "cpu"}),
            "unknown dtype 'float99'")
    _raises(with_root({"__tensor__": "x", "dtype": "float32"}), "bad tensor index")
    _raises(with_root({"__dict__": [[1]]}), r"is not a \[key, value\] pair")
    _raises(with_root({"__dict__": [[[1], 2]]}), "unhashable dict key")
    _raises(with_root({"__dtype__": 3}), "unknown dtype 3")
    _raises(with_root({"__device__": "nowhere"}), "bad device 'nowhere'")
    _raises(with_root({"__what__": 1}), "unknown entry")
    _raises(with_root({"__object_ref__": 5}), "unknown object")
    _raises(with_root(1, version=99), "written by a newer fnx")
    _raises(_rezip(data, replace={"fnx_format.json": b"{not json"}), "corrupt header")
    _raises(_rezip(data, replace={"fnx_format.json": b"[]"}), "bad header")


def test_plain_pickles_are_refused_and_never_run(tmp_path):
    ran = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (Path.touch, (ran,))

    e = _raises(pickle.dumps(Evil()), "is a Python pickle; fnx does not unpickle")
    assert "arbitrary code" in str(e) and not ran.exists()


def _torch_zip(pkl, storages, prefix="archive"):
    """A torch.save-style zip archive: the pickle and the raw storages."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(f"{prefix}/data.pkl", pkl)
        z.writestr(f"{prefix}/byteorder", "little")
        for key, raw in storages.items():
            z.writestr(f"{prefix}/data/{key}", raw)
        z.writestr(f"{prefix}/version", "3\n")
    return out.getvalue()


def test_torch_checkpoint_with_lying_storage_sizes():
    def tensor_pkl(numel, size, stride, offset=0):
        g = b"ctorch._utils\n_rebuild_tensor_v2\n"
        pid = (b"(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000"
               b"X\x03\x00\x00\x00cpuJ" + struct.pack("<i", numel) + b"tQ")
        ints = b"".join(b"J" + struct.pack("<i", v) for v in size)
        strides = b"".join(b"J" + struct.pack("<i", v) for v in stride)
        return (b"\x80\x02" + g + b"(" + pid + b"J" + struct.pack("<i", offset) +
                b"(" + ints + b"t(" + strides + b"t\x89ccollections\nOrderedDict\n)Rt" +
                b"R.")

    raw = np.arange(4, dtype=np.float32).tobytes()
    ok = load(io.BytesIO(_torch_zip(tensor_pkl(4, (2, 2), (2, 1)), {"0": raw})))
    assert ok.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    _raises(_torch_zip(tensor_pkl(1000, (2, 2), (2, 1)), {"0": raw}),
            "a storage of 1000 float32 elements has 16 bytes")
    _raises(_torch_zip(tensor_pkl(4, (3, 2), (2, 1)), {"0": raw}),
            r"reaches element 5 of a storage of 4 elements")
    _raises(_torch_zip(tensor_pkl(4, (2, 2), (2, 1), offset=1), {"0": raw}),
            r"reaches element 4 of a storage of 4 elements")
    _raises(_torch_zip(tensor_pkl(4, (2, -2), (2, 1)), {"0": raw}), "bad tensor geometry")
    _raises(_torch_zip(tensor_pkl(4, (10**9, 10**9), (0, 0)), {"0": raw}),
            "implausibly large")
    _raises(_torch_zip(tensor_pkl(4, (2, 2), (2, 1)), {}), "missing the member 'archive/data/0'")
    _raises(_torch_zip(b"\x80\x02]q\x00(K\x01", {}), "the pickle is truncated")
    _raises(_torch_zip(b"\x80\x02K\x01K\x02s.", {}), "malformed pickle")
    _raises(_torch_zip(b"\x80\x02I1\n.", {}), "unsupported pickle opcode b'I'")


# ----------------------------------------------------------------------------- fuzz

def _safetensors_blob():
    header = {"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
              "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]}}
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + np.arange(6, dtype=np.float32).tobytes() + \
        np.array([1, -2], np.int64).tobytes()


_SEEDS = {"fnx": _checkpoint(_state()),
          "torch_zip": (DATA / "torch_small.pt").read_bytes(),
          "torch_legacy": (DATA / "torch_small_legacy.pt").read_bytes(),
          "safetensors": _safetensors_blob()}


def _mutate(data, rng, truncate):
    """``data`` cut at a random length, or with 1 to 4 random bytes changed (a fifth of
    them in the first 64 bytes, where the magic and the headers are)."""
    if truncate:
        return data[:int(rng.integers(0, len(data)))]
    b = bytearray(data)
    for _ in range(int(rng.integers(1, 5))):
        at = int(rng.integers(0, min(64, len(b)) if rng.random() < 0.2 else len(b)))
        b[at] = int(rng.integers(0, 256))
    return bytes(b)


def _mutants(data, rng, n):
    """``n`` seeded mutants of ``data``: a third truncations, the rest byte flips."""
    for i in range(n):
        yield _mutate(data, rng, i % 3 == 0)


def _member_mutants(data, rng, n):
    """Mutants of one member of the archive ``data`` (the JSON header, a .npy file, the
    pickle, a storage), re-zipped with correct CRCs, so the parsers behind the zip layer
    see them."""
    src = zipfile.ZipFile(io.BytesIO(data))
    members = {m: src.read(m) for m in src.namelist()}
    names = [m for m, raw in members.items() if raw]
    for i in range(n):
        member = names[int(rng.integers(0, len(names)))]
        yield _rezip(data, replace={member: _mutate(members[member], rng, i % 4 == 0)})


_FUZZ = {"fnx": (_mutants, 3000), "torch_zip": (_mutants, 2000),
         "torch_legacy": (_mutants, 1500), "safetensors": (_mutants, 1000),
         "fnx_members": (_member_mutants, 1500), "torch_zip_members": (_member_mutants, 1500)}


@pytest.mark.parametrize("kind", list(_FUZZ))
def test_fuzzed_checkpoints_raise_only_checkpoint_error(kind):
    data = _SEEDS[kind.replace("_members", "")]
    load(io.BytesIO(data))                      # the unmutated file loads
    rng = np.random.default_rng(1234)
    mutate, n = _FUZZ[kind]
    outcomes = {"loaded": 0, "refused": 0}
    slowest = 0.0
    for mutant in mutate(data, rng, n):
        t0 = time.perf_counter()
        try:
            load(io.BytesIO(mutant))
            outcomes["loaded"] += 1             # a flip in tensor data or padding
        except CheckpointError:
            outcomes["refused"] += 1
        except Exception as e:                  # noqa: BLE001 - the point of the test
            pytest.fail(f"{kind}: {type(e).__name__} (not CheckpointError) for a mutant: {e}")
        slowest = max(slowest, time.perf_counter() - t0)
    assert outcomes["refused"] > n // 4, outcomes       # truncations at least
    assert slowest < 2.0, f"{kind}: one load took {slowest:.2f} s"
