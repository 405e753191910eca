"""nn.Module state-dict hooks: ``register_state_dict_pre_hook``/``post_hook``,
``register_load_state_dict_pre_hook``/``_register_load_state_dict_pre_hook(with_module=)``,
``register_load_state_dict_post_hook``: PyTorch's call order, arguments and handles; and
``parametrizations.weight_norm`` loading a checkpoint of the older ``utils.weight_norm``.
Expected values are written by hand or computed with NumPy."""
import numpy as np
import pytest

import fnx
import fnx.nn as nn


def _model():
    fnx.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 1)))


def _hook_everything(m, log):
    handles = []
    for name, mod in m.named_modules():
        handles += [
            mod.register_state_dict_pre_hook(
                lambda mod, prefix, kv, n=name: log.append(("sd_pre", n, prefix, kv))),
            mod.register_state_dict_post_hook(
                lambda mod, sd, prefix, md, n=name: log.append(("sd_post", n, len(sd)))),
            mod.register_load_state_dict_pre_hook(
                lambda mod, sd, prefix, md, strict, mk, uk, em, n=name:
                log.append(("ld_pre", n, prefix, mod is dict(m.named_modules())[n]))),
            mod._register_load_state_dict_pre_hook(
                lambda sd, prefix, md, strict, mk, uk, em, n=name:
                log.append(("ld_pre_nomod", n, prefix))),
            mod.register_load_state_dict_post_hook(
                lambda mod, keys, n=name: log.append(("ld_post", n)))]
    return handles


def test_state_dict_hooks_order_and_arguments():
    m, log = _model(), []
    _hook_everything(m, log)
    m.state_dict(keep_vars=True)
    # pre-hooks parent first, post-hooks children first (a post-hook sees the entries so far)
    assert log == [("sd_pre", "", "", True), ("sd_pre", "0", "0.", True),
                   ("sd_post", "0", 2), ("sd_pre", "1", "1.", True),
                   ("sd_pre", "1.0", "1.0.", True), ("sd_post", "1.0", 4),
                   ("sd_post", "1", 4), ("sd_post", "", 4)]


def test_load_state_dict_hooks_order_once_each():
    m, log = _model(), []
    _hook_everything(m, log)
    m.load_state_dict(m.state_dict())
    # pre-hooks parent first, post-hooks children first, each once.  (fnx runs every
    # pre-hook in its checking pass, before any copy, so before any post-hook; PyTorch
    # runs a module's post-hook before its next sibling's pre-hook.)
    assert [e for e in log if e[0].startswith("ld_pre")] == [
        ("ld_pre", "", "", True), ("ld_pre_nomod", "", ""),
        ("ld_pre", "0", "0.", True), ("ld_pre_nomod", "0", "0."),
        ("ld_pre", "1", "1.", True), ("ld_pre_nomod", "1", "1."),
        ("ld_pre", "1.0", "1.0.", True), ("ld_pre_nomod", "1.0", "1.0.")]
    assert [e for e in log if e[0] == "ld_post"] == [
        ("ld_post", "0"), ("ld_post", "1.0"), ("ld_post", "1"), ("ld_post", "")]


def test_handles_remove():
    m, log = _model(), []
    for h in _hook_everything(m, log):
        h.remove()
    m.load_state_dict(m.state_dict())
    assert log == []


def test_public_state_dict_post_hook_must_return_none_private_may_replace():
    m = nn.Linear(1, 1)
    h = m.register_state_dict_post_hook(lambda mod, sd, prefix, md: {"x": 1})
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        m.state_dict()
    h.remove()
    m._register_state_dict_hook(lambda mod, sd, prefix, md: {"x": 1})
    assert m.state_dict() == {"x": 1}


def test_load_pre_hook_renames_keys_without_touching_callers_dict():
    m = nn.Linear(2, 1)
    m._register_load_state_dict_pre_hook(
        lambda sd, prefix, *rest: sd.__setitem__(prefix + "weight", sd.pop(prefix + "w")))
    sd = {"w": fnx.tensor([[3.0, 4.0]]), "bias": fnx.tensor([5.0])}
    assert m.load_state_dict(sd) == ([], [])
    assert m.weight.tolist() == [[3.0, 4.0]] and m.bias.tolist() == [5.0]
    assert list(sd) == ["w", "bias"]


def test_load_pre_hook_error_messages_reach_the_error():
    m = nn.Linear(1, 1)
    w = m.weight.clone()
    m.register_load_state_dict_pre_hook(lambda mod, sd, p, md, s, mk, uk, em: em.append("no"))
    with pytest.raises(RuntimeError, match="Error\\(s\\) in loading state_dict for Linear:\n\tno"):
        m.load_state_dict(m.state_dict())
    assert fnx.equal(m.weight, w)


def test_load_post_hook_can_forgive_keys_and_must_return_none():
    m = nn.Linear(1, 1)
    m.register_load_state_dict_post_hook(lambda mod, keys: keys.missing_keys.clear())
    out = m.load_state_dict({"weight": fnx.tensor([[7.0]])})
    assert out == ([], []) and m.weight.item() == 7.0
    m2 = nn.Linear(1, 1)
    m2.register_load_state_dict_post_hook(lambda mod, keys: 1)
    with pytest.raises(AssertionError, match="not expected to return new values"):
        m2.load_state_dict(m2.state_dict())


def test_load_post_hook_sees_missing_and_unexpected():
    m, seen = _model(), []
    m.register_load_state_dict_post_hook(
        lambda mod, keys: seen.append((list(keys.missing_keys), list(keys.unexpected_keys))))
    sd = m.state_dict()
    del sd["1.0.bias"]
    sd["extra"] = fnx.zeros(1)
    m.load_state_dict(sd, strict=False)
    assert seen == [(["1.0.bias"], ["extra"])]


def _weight_norm_ref(g, v):
    return g * v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.parametrize("wrap", [lambda m: nn.Sequential(m), lambda m: m], ids=["child", "root"])
def test_parametrized_weight_norm_loads_old_weight_norm_checkpoint(wrap):
    fnx.manual_seed(1)
    old = wrap(nn.utils.weight_norm(nn.Linear(3, 2)))
    sd = old.state_dict()
    assert any(k.endswith("weight_g") for k in sd) and any(k.endswith("weight_v") for k in sd)
    new = wrap(nn.utils.parametrizations.weight_norm(nn.Linear(3, 2)))
    assert new.load_state_dict(sd) == ([], [])
    pre = "0." if isinstance(new, nn.Sequential) else ""
    g, v = sd[pre + "weight_g"].numpy(), sd[pre + "weight_v"].numpy()
    lin = new[0] if isinstance(new, nn.Sequential) else new
    np.testing.assert_allclose(lin.weight.detach().numpy(), _weight_norm_ref(g, v), rtol=1e-6)
    np.testing.assert_array_equal(lin.parametrizations.weight.original0.detach().numpy(), g)
    np.testing.assert_array_equal(lin.parametrizations.weight.original1.detach().numpy(), v)
    x = fnx.tensor([[1.0, -2.0, 0.5]])
    np.testing.assert_allclose(new(x).detach().numpy(), old(x).detach().numpy(), rtol=1e-6)
    # its own keys still load, and a checkpoint with only one of g/v is left as it is
    assert new.load_state_dict(new.state_dict()) == ([], [])
    del sd[pre + "weight_v"]
    with pytest.raises(RuntimeError, match="Unexpected key"):
        new.load_state_dict(sd)


def test_strict_failure_with_a_post_hook_copies_then_raises_as_pytorch():
    m = nn.Linear(1, 1)
    calls = []
    m.register_load_state_dict_post_hook(lambda mod, keys: calls.append(list(keys.missing_keys)))
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        m.load_state_dict({"weight": fnx.tensor([[9.0]])})
    assert calls == [["bias"]] and m.weight.item() == 9.0


def test_public_post_hook_may_be_a_bound_method():
    class Counter:
        def hook(self, module, sd, prefix, md):
            sd["n"] = fnx.tensor(float(len(sd)))
    m = nn.Linear(1, 1)
    h = m.register_state_dict_post_hook(Counter().hook)
    assert m.state_dict()["n"].item() == 2.0
    h.remove()
    assert list(m.state_dict()) == ["weight", "bias"]
