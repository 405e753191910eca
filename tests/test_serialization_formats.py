"""fnx.load reads PyTorch checkpoints (zip and legacy formats) and safetensors files, with
the rules of torch.load(weights_only=True): only tensors and plain containers unless a
class is allowed (fnx.serialization.add_safe_globals / safe_globals); fnx.save of a whole
module writes its class path and state, and fnx.load rebuilds it only for allowed classes.

No torch here: PyTorch checkpoints are written by hand below (pickle protocol 2 opcodes in a
zip archive, as torch.save lays them out), and tests/data holds two tiny files that
PyTorch 2.13 wrote once, for a cross-check:

    obj = {"w": torch.arange(4.).reshape(2, 2), "n": torch.tensor([1, -2]),
           "h": torch.tensor([0.5], dtype=torch.bfloat16),
           "v": torch.arange(6.).view(2, 3)[:, 1], "p": torch.nn.Parameter(torch.ones(2))}
    torch.save(obj, "tests/data/torch_small.pt")
    torch.save(obj, "tests/data/torch_small_legacy.pt", _use_new_zipfile_serialization=False)
"""
import collections
import io
import json
import struct
import zipfile
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import safetensors.numpy

import fnx
import fnx.nn as nn
from fnx.serialization import (CheckpointError, add_safe_globals, clear_safe_globals,
                               get_safe_globals, get_unsafe_globals_in_checkpoint, load,
                               safe_globals, save)

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def _no_safe_globals():
    clear_safe_globals()
    yield
    clear_safe_globals()


# ----------------------------------------------------------------------------- a tiny writer

def _str(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def _int(i):
    return b"J" + struct.pack("<i", i)


def _global(module, name):
    return b"c" + f"{module}\n{name}\n".encode()


def _tuple(*items):
    return b"(" + b"".join(items) + b"t"


def _obj(v):
    if isinstance(v, bytes):        # already opcodes
        return v
    if isinstance(v, bool):
        return b"\x88" if v else b"\x89"
    if isinstance(v, int):
        return _int(v)
    if isinstance(v, str):
        return _str(v)
    if isinstance(v, float):
        return b"G" + struct.pack(">d", v)
    if v is None:
        return b"N"
    if isinstance(v, tuple):
        return _tuple(*map(_obj, v))
    if isinstance(v, list):
        return b"](" + b"".join(map(_obj, v)) + b"e"
    if isinstance(v, dict):
        head = (_global("collections", "OrderedDict") + b")R"
                if isinstance(v, collections.OrderedDict) else b"}")
        return head + b"(" + b"".join(_obj(k) + _obj(x) for k, x in v.items()) + b"u"
    raise TypeError(type(v))


class _Storages:
    """The storages of one hand-written checkpoint: key -> raw bytes."""

    def __init__(self):
        self.raw = {}

    def tensor(self, arr, storage, offset=0, size=None, stride=None, requires_grad=False,
               location="cpu", key=None):
        """``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
        OrderedDict())`` over ``arr``'s bytes."""
        arr = np.ascontiguousarray(arr)
        key = key or str(len(self.raw))
        self.raw[key] = arr.tobytes()
        size = arr.shape if size is None else size
        if stride is None:
            stride = tuple(s // arr.itemsize for s in arr.strides)
        pid = _tuple(_str("storage"), _global("torch", storage), _str(key), _str(location),
                     _int(arr.size)) + b"Q"
        return (_global("torch._utils", "_rebuild_tensor_v2") +
                _tuple(pid, _int(offset), _obj(tuple(size)), _obj(tuple(stride)),
                       _obj(requires_grad), _global("collections", "OrderedDict") + b")R")
                + b"R")


def _torch_file(obj_ops, storages, prefix="archive"):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(f"{prefix}/data.pkl", b"\x80\x02" + obj_ops + b".")
        z.writestr(f"{prefix}/byteorder", "little")
        for key, raw in storages.raw.items():
            z.writestr(f"{prefix}/data/{key}", raw)
        z.writestr(f"{prefix}/version", "3\n")
    out.seek(0)
    return out


# ----------------------------------------------------------------------------- PyTorch files

def test_hand_written_state_dict_every_dtype():
    st = _Storages()
    rng = np.random.default_rng(0)
    arrays = {
        "f32": (rng.standard_normal((2, 3)).astype(np.float32), "FloatStorage", fnx.float32),
        "f64": (rng.standard_normal(4), "DoubleStorage", fnx.float64),
        "f16": (np.array([0.5, -2.0], np.float16), "HalfStorage", fnx.float16),
        "i64": (np.array([2**40, -3], np.int64), "LongStorage", fnx.int64),
        "i32": (np.array([7, -8], np.int32), "IntStorage", fnx.int32),
        "i16": (np.array([1, 2], np.int16), "ShortStorage", fnx.int16),
        "i8": (np.array([-1, 2], np.int8), "CharStorage", fnx.int8),
        "u8": (np.array([255, 0], np.uint8), "ByteStorage", fnx.uint8),
        "b": (np.array([True, False]), "BoolStorage", fnx.bool),
        "c64": (np.array([1 + 2j], np.complex64), "ComplexFloatStorage", fnx.complex64),
        "bf16": (np.array([1.5, -3.0], ml_dtypes.bfloat16).view(np.uint16),
                 "BFloat16Storage", fnx.bfloat16),
    }
    sd = collections.OrderedDict((k, st.tensor(a, s)) for k, (a, s, _) in arrays.items())
    out = load(_torch_file(_obj(sd), st))
    assert type(out) is collections.OrderedDict and list(out) == list(arrays)
    for k, (a, _, dtype) in arrays.items():
        t = out[k]
        assert type(t) is fnx.Tensor and t.dtype is dtype and tuple(t.shape) == a.shape, k
        got = t.numpy()
        if dtype is fnx.bfloat16:
            got = got.view(np.uint16)
        assert np.array_equal(got, a), k
        assert not t.requires_grad


def test_views_offsets_zero_strides_and_scalars():
    st = _Storages()
    base = np.arange(12, dtype=np.float32)
    obj = {"col": st.tensor(base, "FloatStorage", offset=1, size=(3,), stride=(4,)),
           "t": st.tensor(base, "FloatStorage", size=(4, 3), stride=(1, 4)),
           "expanded": st.tensor(np.array([5.0], np.float32), "FloatStorage", size=(2, 3),
                                 stride=(0, 0)),
           "scalar": st.tensor(np.array([9], np.int64), "LongStorage", size=(), stride=()),
           "empty": st.tensor(np.zeros(0, np.float32), "FloatStorage", size=(0, 4),
                              stride=(4, 1))}
    out = load(_torch_file(_obj(obj), st))
    assert out["col"].tolist() == [1.0, 5.0, 9.0]
    assert np.array_equal(out["t"].numpy(), base.reshape(3, 4).T)
    assert out["expanded"].tolist() == [[5.0] * 3] * 2
    assert out["scalar"].shape == () and out["scalar"].item() == 9
    assert out["empty"].shape == (0, 4)
    out["col"].add_(1)                      # loaded tensors own their data
    assert out["t"].numpy()[0, 1] == 4.0


def test_untyped_storage_v3_and_big_endian_files():
    """_rebuild_tensor_v3 over an UntypedStorage (bytes) names its dtype; a file whose
    byteorder member says big holds big-endian data."""
    raw = np.array([1.5, -2.0, 4.0], ">f4").tobytes()
    pid = _tuple(_str("storage"), _global("torch", "UntypedStorage"), _str("0"), _str("cpu"),
                 _int(len(raw))) + b"Q"
    ops = (_global("torch._utils", "_rebuild_tensor_v3") +
           _tuple(pid, _int(1), _obj((2,)), _obj((1,)), _obj(False),
                  _global("collections", "OrderedDict") + b")R", _global("torch", "float32"))
           + b"R")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("archive/data.pkl", b"\x80\x02" + ops + b".")
        z.writestr("archive/byteorder", "big")
        z.writestr("archive/data/0", raw)
    out.seek(0)
    t = load(out)
    assert t.dtype is fnx.float32 and t.tolist() == [-2.0, 4.0]


def test_parameters_python_values_and_containers():
    st = _Storages()
    param = (_global("torch._utils", "_rebuild_parameter") +
             _tuple(st.tensor(np.ones(2, np.float32), "FloatStorage"), _obj(True),
                    _global("collections", "OrderedDict") + b")R") + b"R")
    obj = {"p": param,
           "frozen": _global("torch._utils", "_rebuild_parameter") +
           _tuple(st.tensor(np.zeros(1, np.float32), "FloatStorage"), _obj(False),
                  _global("collections", "OrderedDict") + b")R") + b"R",
           "lr": 0.125, "betas": (0.9, 0.999), "names": ["a", "b"], "none": None,
           "dev": _global("torch", "device") + _tuple(_str("cpu")) + b"R",
           "dtype": _global("torch", "bfloat16"),
           "size": _global("torch", "Size") + _tuple(_obj((2, 3))) + b"R",
           "set": _global("__builtin__", "set") + _tuple(_obj([1, 2])) + b"R",
           "bytes": _global("_codecs", "encode") + _tuple(_str("xy"), _str("latin1")) + b"R",
           "c": _global("__builtin__", "complex") + _tuple(_obj(1.0), _obj(-2.0)) + b"R",
           "count": _global("collections", "Counter") + b")R" + b"(" + _str("a") + _int(3)
           + b"u"}
    out = load(_torch_file(_obj(obj), st))
    assert type(out["p"]) is nn.Parameter and out["p"].requires_grad
    assert out["p"].tolist() == [1.0, 1.0]
    assert type(out["frozen"]) is nn.Parameter and not out["frozen"].requires_grad
    assert out["lr"] == 0.125 and out["betas"] == (0.9, 0.999) and out["names"] == ["a", "b"]
    assert out["none"] is None and out["dev"] == fnx.device("cpu")
    assert out["dtype"] is fnx.bfloat16 and tuple(out["size"]) == (2, 3)
    assert out["set"] == {1, 2} and out["bytes"] == b"xy" and out["c"] == 1 - 2j
    assert out["count"] == collections.Counter(a=3)


def test_state_dict_metadata_build_and_load_into_a_module():
    """torch.save(model.state_dict()) pickles an OrderedDict with a _metadata attribute set
    by BUILD; it loads into an fnx module."""
    st = _Storages()
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([0.5, -0.5], np.float32)
    sd = collections.OrderedDict([("weight", st.tensor(w, "FloatStorage")),
                                  ("bias", st.tensor(b, "FloatStorage"))])
    meta = b"}" + _str("_metadata") + _obj({"": {"version": 1}}) + b"s"
    out = load(_torch_file(_obj(sd) + meta + b"b", st))
    assert out._metadata == {"": {"version": 1}}
    m = nn.Linear(3, 2)
    m.load_state_dict(out)
    x = np.array([[1.0, 2.0, 3.0]], np.float32)
    assert np.allclose(m(fnx.tensor(x)).detach().numpy(), x @ w.T + b)


def test_map_location_and_saved_device():
    st = _Storages()
    obj = {"w": st.tensor(np.ones(2, np.float32), "FloatStorage", location="cuda:0")}
    data = _torch_file(_obj(obj), st).getvalue()
    out = load(io.BytesIO(data), map_location="cpu")
    assert out["w"].device.type == "cpu" and out["w"].tolist() == [1.0, 1.0]
    seen = []
    load(io.BytesIO(data), map_location=lambda t, loc: seen.append(loc) or t)
    assert seen == ["cuda:0"]
    assert load(io.BytesIO(data), map_location={"cuda:0": "meta"})["w"].device.type == "meta"


def test_saved_cuda_location_loads_on_cuda():
    if not fnx.cuda.is_available():
        pytest.skip("no cuda device (run with FNX_CUDA_ON_CPU=1 to test the cuda backend)")
    st = _Storages()
    obj = {"w": st.tensor(np.array([1.0, 2.0], np.float32), "FloatStorage",
                          location="cuda:0")}
    w = load(_torch_file(_obj(obj), st))["w"]
    assert w.device == fnx.device("cuda:0") and w.cpu().tolist() == [1.0, 2.0]


def test_real_pytorch_files_match_hand_computed_values():
    for path in (DATA / "torch_small.pt", DATA / "torch_small_legacy.pt"):
        out = load(path)
        assert sorted(out) == ["h", "n", "p", "v", "w"], path
        assert out["w"].dtype is fnx.float32 and out["w"].tolist() == [[0.0, 1.0], [2.0, 3.0]]
        assert out["n"].dtype is fnx.int64 and out["n"].tolist() == [1, -2]
        assert out["h"].dtype is fnx.bfloat16 and out["h"].float().tolist() == [0.5]
        assert out["v"].tolist() == [1.0, 4.0]          # column 1 of arange(6).view(2, 3)
        assert type(out["p"]) is nn.Parameter and out["p"].requires_grad
        assert out["p"].tolist() == [1.0, 1.0]


def test_hand_written_file_equals_pytorchs():
    st = _Storages()
    obj = {"w": st.tensor(np.arange(4, dtype=np.float32).reshape(2, 2), "FloatStorage"),
           "n": st.tensor(np.array([1, -2], np.int64), "LongStorage")}
    mine = load(_torch_file(_obj(obj), st, prefix="torch_small"))
    theirs = load(DATA / "torch_small.pt")
    for k in mine:
        assert mine[k].dtype is theirs[k].dtype
        assert np.array_equal(mine[k].numpy(), theirs[k].numpy())


# ----------------------------------------------------------------------------- refused globals

def test_unknown_globals_are_refused_by_name_and_never_imported(tmp_path):
    flag = tmp_path / "ran"
    # os.system would run a command; the name alone is refused, nothing is imported
    evil = _global("os", "system") + _tuple(_str(f"touch {flag}")) + b"R"
    with pytest.raises(CheckpointError, match="uses the global os.system, from a module "
                                              "whose names are never allowed"):
        load(_torch_file(evil, _Storages()))
    assert not flag.exists()
    evil = _global("mypkg.models", "Net") + b")R"
    with pytest.raises(CheckpointError) as info:
        load(_torch_file(evil, _Storages()))
    msg = str(info.value)
    assert "uses the global mypkg.models.Net, which is not allowed by default" in msg
    assert "fnx.serialization.add_safe_globals([mypkg.models.Net])" in msg
    assert "fnx.serialization.safe_globals([mypkg.models.Net])" in msg
    with pytest.raises(CheckpointError, match="uses the global builtins.eval"):
        load(_torch_file(_global("__builtin__", "eval") + _tuple(_str("1")) + b"R",
                         _Storages()))


def test_only_lists_and_dicts_are_written_by_append_and_setitem():
    with pytest.raises(CheckpointError, match="APPEND to a tuple"):
        load(_torch_file(b")" + _int(1) + b"a", _Storages()))
    with pytest.raises(CheckpointError, match="SETITEM on a list"):
        load(_torch_file(b"]" + _int(1) + _int(2) + b"s", _Storages()))
    with pytest.raises(CheckpointError, match="BUILD of a dict"):
        load(_torch_file(b"}}b", _Storages()))
    with pytest.raises(CheckpointError, match="a persistent id that is not a storage"):
        load(_torch_file(_tuple(_str("module"), _int(1)) + b"Q", _Storages()))


class _Point:
    """A user class saved inside a checkpoint."""

    def __init__(self, x):
        self.x = x


def test_user_classes_load_when_allowed():
    ops = _global(__name__, "_Point") + b")\x81" + b"}" + _str("x") + _int(3) + b"sb"
    data = _torch_file(ops, _Storages()).getvalue()
    path = f"{__name__}._Point"
    with pytest.raises(CheckpointError, match=f"uses the global {path}, which is not allowed"):
        load(io.BytesIO(data))
    with safe_globals([_Point]):
        p = load(io.BytesIO(data))
    assert type(p) is _Point and p.x == 3
    assert get_safe_globals() == []
    with pytest.raises(CheckpointError):
        load(io.BytesIO(data))
    add_safe_globals([(_Point, "elsewhere.Point")])     # accepted under another name
    ops = _global("elsewhere", "Point") + b")\x81" + b"}" + _str("x") + _int(4) + b"sb"
    assert load(_torch_file(ops, _Storages())).x == 4
    with pytest.raises(TypeError, match="expected a class or function"):
        add_safe_globals([3])


# ----------------------------------------------------------------------------- safetensors

def test_safetensors_written_by_the_safetensors_package():
    rng = np.random.default_rng(1)
    arrays = {"emb.weight": rng.standard_normal((3, 4)).astype(np.float32),
              "ids": np.array([3, -1], np.int64), "half": np.array([0.25], np.float16),
              "mask": np.array([True, False])}
    blob = safetensors.numpy.save(arrays)
    out = load(io.BytesIO(blob))
    assert sorted(out) == sorted(arrays)
    for k, a in arrays.items():
        assert np.array_equal(out[k].numpy(), a) and out[k].numpy().dtype == a.dtype, k


def test_safetensors_bfloat16_and_bad_files():
    bits = np.array([1.5, -2.0], ml_dtypes.bfloat16).view(np.uint16)
    h = json.dumps({"x": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}).encode()
    out = load(io.BytesIO(struct.pack("<Q", len(h)) + h + bits.tobytes()))
    assert out["x"].dtype is fnx.bfloat16 and out["x"].float().tolist() == [1.5, -2.0]
    # offsets past the data, and data the header does not cover
    h = json.dumps({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    with pytest.raises(CheckpointError, match="not a valid safetensors file"):
        load(io.BytesIO(struct.pack("<Q", len(h)) + h + b"\0" * 8))
    with pytest.raises(CheckpointError, match="not a valid safetensors file"):
        load(io.BytesIO(struct.pack("<Q", len(h)) + h + b"\0" * 24))
    h = json.dumps({"x": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}}).encode()
    with pytest.raises(CheckpointError, match="'F8_E4M3' of 'x' is not supported"):
        load(io.BytesIO(struct.pack("<Q", len(h)) + h + b"\0"))


# ----------------------------------------------------------------------------- whole modules

class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
        self.scale = 0.5
        self.register_buffer("offset", fnx.tensor([1.0, -1.0]))

    def forward(self, x):
        return self.body(x) * self.scale + self.offset


def test_whole_module_round_trip_when_allowed(tmp_path):
    fnx.manual_seed(0)
    net = _Net()
    path = tmp_path / "net.fnx"
    save(net, path)
    with pytest.raises(CheckpointError) as info:
        load(path)
    msg = str(info.value)
    cls = f"{__name__}._Net"
    assert f"uses the class {cls}, which is not allowed by default" in msg
    assert f"fnx.serialization.add_safe_globals([{cls}])" in msg
    with safe_globals([_Net, nn.Sequential, nn.Linear, nn.ReLU]):
        back = load(path)
    assert type(back) is _Net and back.scale == 0.5 and back.training
    assert [type(m) for m in back.body] == [nn.Linear, nn.ReLU, nn.Linear]
    assert type(back.body[0].weight) is nn.Parameter and back.body[0].weight.requires_grad
    assert list(back.state_dict()) == list(net.state_dict())
    for k, v in net.state_dict().items():
        assert np.array_equal(back.state_dict()[k].numpy(), v.numpy()), k
    x = fnx.randn(5, 3)
    w0, b0 = net.body[0].weight.detach().numpy(), net.body[0].bias.detach().numpy()
    w2, b2 = net.body[2].weight.detach().numpy(), net.body[2].bias.detach().numpy()
    ref = np.maximum(x.numpy() @ w0.T + b0, 0) @ w2.T + b2
    ref = ref * 0.5 + np.array([1.0, -1.0], np.float32)
    assert np.allclose(back(x).detach().numpy(), ref, atol=1e-6)
    back(x).sum().backward()                    # trainable as it was
    assert back.body[0].weight.grad is not None
    # allowing only the outer class is not enough: its submodules are named too
    with safe_globals([_Net]):
        with pytest.raises(CheckpointError, match="Sequential, which is not allowed"):
            load(path)


def test_whole_module_shared_parameters_and_hooks():
    lin = nn.Linear(2, 2)
    model = nn.Sequential(lin, lin)             # one module twice
    buf = io.BytesIO()
    save(model, buf)
    buf.seek(0)
    with safe_globals([nn.Sequential, nn.Linear]):
        back = load(buf)
    assert back[0] is back[1] and back[0].weight is back[1].weight
    model.register_forward_hook(lambda m, i, o: o)
    with pytest.raises(TypeError, match=r"cannot save an object of type function at "
                                        r"\['_forward_hooks'\]"):
        save(model, io.BytesIO())                # hooks are code: never saved


class _Act(nn.Module):
    """A module holding a function and a shape as plain attributes."""

    def __init__(self):
        super().__init__()
        self.fn = nn.functional.relu
        self.shape = fnx.zeros(2, 3).shape

    def forward(self, x):
        return self.fn(x).reshape(self.shape)


def test_whole_module_with_a_function_attribute():
    buf = io.BytesIO()
    save(_Act(), buf)
    data = buf.getvalue()
    with safe_globals([_Act]):
        with pytest.raises(CheckpointError, match="uses the function or class "
                                                  "fnx.nn.functional.relu, which is not allowed"):
            load(io.BytesIO(data))
    with safe_globals([_Act, nn.functional.relu]):
        m = load(io.BytesIO(data))
    assert m.fn is nn.functional.relu and tuple(m.shape) == (2, 3)
    x = np.array([-1.0, 2.0, -3.0, 4.0, 0.5, -0.5], np.float32)
    assert np.array_equal(m(fnx.tensor(x)).numpy(), np.maximum(x, 0).reshape(2, 3))


def test_weights_only_false_trusts_the_file():
    buf = io.BytesIO()
    save(nn.Linear(2, 3), buf)
    buf.seek(0)
    m = load(buf, weights_only=False)
    assert type(m) is nn.Linear and m.weight.shape == (3, 2)


def test_listing_the_globals_a_checkpoint_needs():
    buf = io.BytesIO()
    save({"net": _Net(), "act": _Act()}, buf)
    buf.seek(0)
    assert get_unsafe_globals_in_checkpoint(buf) == [
        f"{__name__}._Net", "fnx.nn.modules.container.Sequential",
        "fnx.nn.modules.linear.Linear", "fnx.nn.modules.activation.ReLU", f"{__name__}._Act",
        "fnx.nn.functional.relu"]
    for path in (DATA / "torch_small.pt", DATA / "torch_small_legacy.pt"):
        assert get_unsafe_globals_in_checkpoint(path) == []     # tensors only
    ops = _global("mypkg", "Net") + b")\x81" + _global("os", "system") + b"0"
    assert get_unsafe_globals_in_checkpoint(_torch_file(ops, _Storages())) == [
        "mypkg.Net", "os.system"]
    assert get_unsafe_globals_in_checkpoint(io.BytesIO(b"garbage")) == []
