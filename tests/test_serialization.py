"""fnx.save / fnx.load: round trips of state dicts (every dtype, bfloat16 included, nested
optimizer states), the safe format (no pickle), refusing files that are not checkpoints,
safetensors, map_location; pickling and deep copies of tensors and parameters."""
import copy
import io
import json
import pickle
import struct
import zipfile

import numpy as np
import pytest

import fnx
import fnx.nn as nn
import fnx.optim as optim
from fnx.serialization import load, save


def _round_trip(obj, **kw):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf, **kw)


DTYPES = [fnx.float32, fnx.float64, fnx.float16, fnx.bfloat16, fnx.int64, fnx.int32,
          fnx.int16, fnx.int8, fnx.uint8, fnx.bool, fnx.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_round_trip_every_dtype(dtype):
    if dtype is fnx.bool:
        t = fnx.tensor([[True, False, True]])
    elif dtype.is_complex:
        t = fnx.tensor([1 + 2j, -0.5j], dtype=dtype)
    elif dtype.is_floating_point:
        t = fnx.tensor([[1.5, -2.25, 3.0], [0.0, 1e-3, -7.0]], dtype=dtype)
    else:
        t = fnx.tensor([[1, 2, 3], [4, 5, 120]], dtype=dtype)
    back = _round_trip({"t": t})["t"]
    assert back.dtype is dtype and back.shape == t.shape and back.device.type == "cpu"
    assert np.array_equal(np.asarray(back.numpy()), np.asarray(t.numpy()))


def test_bfloat16_stored_as_raw_bits():
    t = fnx.tensor([1.0, -2.5, 3.140625], dtype=fnx.bfloat16)
    buf = io.BytesIO()
    save({"w": t}, buf)
    buf.seek(0)
    with zipfile.ZipFile(buf) as z:
        header = json.loads(z.read("fnx_format.json"))
        arr = np.load(io.BytesIO(z.read("tensors/0.npy")), allow_pickle=False)
    assert header["format"] == "fnx.save" and arr.dtype == np.uint16
    assert np.array_equal(arr, t.numpy().view(np.uint16))


def test_module_state_dict_round_trip():
    fnx.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.Flatten(), nn.Linear(3, 2))
    m(fnx.randn(4, 2, 3, 3))                         # move the running statistics
    sd = m.state_dict()
    back = _round_trip(sd)
    assert list(back) == list(sd)
    for k in sd:
        assert back[k].dtype is sd[k].dtype and back[k].shape == sd[k].shape
        assert np.array_equal(back[k].numpy(), sd[k].numpy()), k
    m2 = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.Flatten(), nn.Linear(3, 2))
    m2.load_state_dict(back)
    x = fnx.randn(2, 2, 3, 3)
    m.eval(), m2.eval()
    assert np.array_equal(m(x).numpy(force=True), m2(x).numpy(force=True))


def test_optimizer_state_dict_and_python_values_round_trip():
    m = nn.Linear(3, 2)
    opt = optim.AdamW(m.parameters(), lr=1e-3, betas=(0.8, 0.9))
    m(fnx.ones(4, 3)).sum().backward()
    opt.step()
    obj = {"opt": opt.state_dict(), "epoch": 3, "loss": 0.25, "nan": float("nan"),
           "inf": float("-inf"), "name": "run", "none": None, "flags": [True, False],
           "shape": (2, 3), "dtype": fnx.bfloat16, "device": fnx.device("cpu"), 7: "int key"}
    back = _round_trip(obj)
    assert back["epoch"] == 3 and back["loss"] == 0.25 and np.isnan(back["nan"])
    assert back["inf"] == float("-inf") and back["name"] == "run" and back["none"] is None
    assert back["flags"] == [True, False] and back["shape"] == (2, 3)
    assert back["dtype"] is fnx.bfloat16 and back["device"] == fnx.device("cpu")
    assert back[7] == "int key"
    st = back["opt"]
    assert sorted(st["state"]) == [0, 1] and st["param_groups"][0]["betas"] == (0.8, 0.9)
    assert st["state"][0]["step"].item() == 1
    opt2 = optim.AdamW(nn.Linear(3, 2).parameters())
    opt2.load_state_dict(st)
    assert opt2.param_groups[0]["betas"] == (0.8, 0.9)


def test_parameters_requires_grad_and_shared_tensors():
    p = nn.Parameter(fnx.ones(2))
    t = fnx.zeros(3).requires_grad_()
    back = _round_trip({"p": p, "t": t, "again": p, "plain": fnx.ones(1)})
    assert type(back["p"]) is nn.Parameter and back["p"].requires_grad
    assert back["t"].requires_grad and type(back["t"]) is fnx.Tensor
    assert back["again"] is back["p"]                  # one tensor saved once, loaded once
    assert not back["plain"].requires_grad


def test_save_to_path_and_map_location(tmp_path):
    path = tmp_path / "ckpt.fnx"
    save({"w": fnx.arange(4)}, path)
    assert load(str(path))["w"].tolist() == [0, 1, 2, 3]
    meta = load(path, map_location="meta")["w"]
    assert meta.device.type == "meta" and meta.shape == (4,)
    seen = []
    out = load(path, map_location=lambda t, loc: seen.append(loc) or t * 2)
    assert seen == ["cpu"] and out["w"].tolist() == [0, 2, 4, 6]
    assert load(path, map_location={"cpu": "meta"})["w"].device.type == "meta"


def test_save_refuses_unsupported_objects():
    with pytest.raises(TypeError, match=r"cannot save an object of type function at "
                                        r"\['f'\]"):
        save({"f": lambda: 0}, io.BytesIO())
    with pytest.raises(TypeError, match="cannot save an object of type object"):
        save([object()], io.BytesIO())
    with pytest.raises(RuntimeError, match="cannot save the meta tensor"):
        save(fnx.zeros(2, device="meta"), io.BytesIO())


def test_load_refuses_files_that_are_not_checkpoints(tmp_path):
    pkl = tmp_path / "x.pkl"
    pkl.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(RuntimeError, match="is a Python pickle; fnx does not unpickle"):
        load(pkl)
    # a PyTorch zip checkpoint's pickle may name only allowed globals
    # (tests/test_serialization_safety.py reads real ones)
    torch_like = io.BytesIO()
    with zipfile.ZipFile(torch_like, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps({"a": copy.copy}))
    torch_like.seek(0)
    with pytest.raises(RuntimeError, match="uses the global copy.copy, which is not allowed"):
        load(torch_like)
    other_zip = io.BytesIO()
    with zipfile.ZipFile(other_zip, "w") as z:
        z.writestr("readme.txt", "hi")
    other_zip.seek(0)
    with pytest.raises(RuntimeError, match="a zip archive but not an fnx checkpoint"):
        load(other_zip)
    with pytest.raises(RuntimeError, match="is not an fnx checkpoint"):
        load(io.BytesIO(b"hello world, not a checkpoint"))


def test_load_refuses_pickled_npy_and_tampered_dtype():
    buf = io.BytesIO()
    save({"w": fnx.ones(2)}, buf)
    buf.seek(0)
    with zipfile.ZipFile(buf) as z:
        header = z.read("fnx_format.json")
    # an object array inside (which would need pickle) is refused by np.load
    evil = io.BytesIO()
    obj = io.BytesIO()
    np.save(obj, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("fnx_format.json", header)
        z.writestr("tensors/0.npy", obj.getvalue())
    evil.seek(0)
    with pytest.raises(RuntimeError, match="object arrays need pickle"):
        load(evil)
    # an array whose stored dtype disagrees with the header
    bad = io.BytesIO()
    arr = io.BytesIO()
    np.save(arr, np.ones(2, np.int64))
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("fnx_format.json", header)
        z.writestr("tensors/0.npy", arr.getvalue())
    bad.seek(0)
    with pytest.raises(RuntimeError, match="is stored as int64, expected float32"):
        load(bad)


def test_load_safetensors():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([1, -2], dtype=np.int64)
    header = {"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
              "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]},
              "__metadata__": {"format": "pt"}}
    h = json.dumps(header).encode()
    blob = struct.pack("<Q", len(h)) + h + a.tobytes() + b.tobytes()
    out = load(io.BytesIO(blob))
    assert list(out) == ["a", "b"]
    assert out["a"].dtype is fnx.float32 and out["a"].numpy().tolist() == a.tolist()
    assert out["b"].dtype is fnx.int64 and out["b"].tolist() == [1, -2]


def test_pickle_and_deepcopy_of_tensors():
    t = fnx.tensor([1.0, 2.0], dtype=fnx.bfloat16)
    u = pickle.loads(pickle.dumps(t))
    assert u.dtype is fnx.bfloat16 and u.tolist() == [1.0, 2.0]
    r = fnx.tensor([3.0]).requires_grad_()
    r.grad = fnx.tensor([0.5])
    c = copy.deepcopy(r)
    assert c.requires_grad and c.is_leaf and c.grad.tolist() == [0.5] and c is not r
    assert c.dtype is fnx.float32 and c.device == r.device
    shared = [r, r]
    cs = copy.deepcopy(shared)
    assert cs[0] is cs[1]
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
        copy.deepcopy(r * 2)


def test_numpy_arrays_round_trip_behind_weights_only(tmp_path):
    # torch.save pickles NumPy arrays (pytorch/examples' time_sequence_prediction saves its
    # training data so) and torch.load refuses NumPy's globals unless weights_only=False
    a = np.sin(np.arange(12.0).reshape(3, 4) / 7)
    ints = np.arange(5, dtype=np.int16)[::2]
    path = tmp_path / "data.pt"
    fnx.save({"a": a, "same": a, "ints": ints, "t": fnx.ones(2)}, path)
    with pytest.raises(pickle.UnpicklingError, match="numpy.ndarray"):
        fnx.load(path)
    assert fnx.serialization.get_unsafe_globals_in_checkpoint(path) == ["numpy.ndarray"]
    d = fnx.load(path, weights_only=False)
    assert type(d["a"]) is np.ndarray and d["a"].dtype == np.float64
    np.testing.assert_array_equal(d["a"], a)
    np.testing.assert_array_equal(d["ints"], [0, 2, 4])
    assert d["ints"].dtype == np.int16 and d["same"] is d["a"] and d["a"].flags.writeable
    with fnx.serialization.safe_globals([np.ndarray]):
        np.testing.assert_array_equal(fnx.load(path)["a"], a)
    with pytest.raises(TypeError, match="NumPy array of dtype object"):
        fnx.save([np.array([{}], dtype=object)], tmp_path / "bad.pt")
