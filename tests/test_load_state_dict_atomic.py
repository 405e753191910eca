"""Module.load_state_dict checks every key and shape before it writes anything: a load that
raises leaves every parameter and buffer byte-for-byte as it was (PyTorch copies the
tensors that fit, then raises)."""
import numpy as np
import pytest

import fnx
import fnx.nn as nn


def _model():
    fnx.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))


def _snapshot(m):
    """Every parameter and buffer's bytes, and the tensor objects themselves."""
    return {k: (v, v.detach().numpy().tobytes()) for k, v in m.state_dict(keep_vars=True).items()}


def _assert_unchanged(m, snap):
    now = m.state_dict(keep_vars=True)
    assert list(now) == list(snap)
    for k, (obj, raw) in snap.items():
        assert now[k] is obj, k
        assert now[k].detach().numpy().tobytes() == raw, k


def _other_values(m):
    """A state dict with the model's keys and shapes and different values."""
    return {k: v.detach() + 1 for k, v in m.state_dict().items()}


@pytest.mark.parametrize("problem", ["shape", "missing", "unexpected", "not_a_tensor"])
def test_failed_strict_load_writes_nothing(problem):
    m = _model()
    snap = _snapshot(m)
    sd = _other_values(m)
    if problem == "shape":
        sd["2.bias"] = fnx.zeros(3)                 # the last key: all others fit
    elif problem == "missing":
        del sd["2.weight"]
    elif problem == "unexpected":
        sd["2.extra"] = fnx.zeros(1)
    else:
        sd["2.bias"] = [0.0, 0.0]
    with pytest.raises(RuntimeError, match="Error\\(s\\) in loading state_dict for Sequential"):
        m.load_state_dict(sd)
    _assert_unchanged(m, snap)


def test_shape_mismatch_raises_and_writes_nothing_even_when_not_strict():
    m = _model()
    snap = _snapshot(m)
    sd = _other_values(m)
    sd["0.weight"] = fnx.zeros(4, 4)
    with pytest.raises(RuntimeError, match=r"size mismatch for 0.weight: copying a param with "
                                           r"shape fnx.Size\(\[4, 4\]\)"):
        m.load_state_dict(sd, strict=False)
    _assert_unchanged(m, snap)
    with pytest.raises(RuntimeError, match="size mismatch"):
        m.load_state_dict(sd, assign=True)
    _assert_unchanged(m, snap)


def test_every_problem_is_listed():
    m = _model()
    sd = _other_values(m)
    sd["0.weight"] = fnx.zeros(1)
    del sd["2.bias"]
    sd["zzz"] = fnx.zeros(1)
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict(sd)
    msg = str(info.value)
    assert 'Missing key(s) in state_dict: "2.bias"' in msg
    assert 'Unexpected key(s) in state_dict: "zzz"' in msg
    assert "size mismatch for 0.weight" in msg


def test_successful_loads_still_copy_and_run_hooks():
    m = _model()
    sd = _other_values(m)
    calls = []
    m.register_load_state_dict_post_hook(lambda mod, keys: calls.append(list(keys.missing_keys)))
    weight = m[0].weight
    assert m.load_state_dict(sd) == ([], [])
    assert m[0].weight is weight                    # copied in place
    for k, v in m.state_dict().items():
        assert np.array_equal(v.numpy(), sd[k].numpy()), k
    assert calls == [[]]
    # non-strict: a missing key is reported, the rest is loaded
    del sd["2.bias"]
    sd = {k: v + 1 for k, v in sd.items()}
    result = m.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["2.bias"] and result.unexpected_keys == []
    assert np.array_equal(m[0].weight.detach().numpy(), sd["0.weight"].numpy())
