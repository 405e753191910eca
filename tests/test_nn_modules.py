"""nn.Module semantics: registration, iteration, state_dict/load_state_dict, _apply (device
and dtype moves in place of the objects), modes, hooks, repr, containers, Parameter."""
import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import fnx
import fnx.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.register_buffer("scale", fnx.ones(4))
        self.register_buffer("cache", fnx.zeros(2), persistent=False)
        self.fc2 = nn.Linear(4, 2, bias=False)

    def forward(self, x):
        return self.fc2(self.bn(self.fc1(x)) * self.scale)


# ----------------------------------------------------------------------------- registration

def test_setattr_registers_parameters_buffers_modules():
    m = Net()
    assert list(m._modules) == ["fc1", "bn", "fc2"]
    assert list(m._buffers) == ["scale", "cache"]
    assert m._non_persistent_buffers_set == {"cache"}
    assert isinstance(m.fc1.weight, nn.Parameter)
    assert m.fc2.bias is None and "bias" in m.fc2._parameters
    assert "fc1" not in m.__dict__ and "scale" not in m.__dict__
    m.extra = nn.Parameter(fnx.zeros(1))
    assert list(m._parameters) == ["extra"]
    del m.extra
    assert "extra" not in m._parameters
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'extra'"):
        m.extra


def test_reassigning_keeps_registration_order():
    # siamese_network swaps resnet.conv1 for a new conv, then drops the last child (fc)
    m = Net()
    m.fc1 = nn.Linear(4, 3)
    assert list(m._modules) == ["fc1", "bn", "fc2"]
    assert list(m.children())[:-1] == [m.fc1, m.bn]
    m.fc2.weight = nn.Parameter(fnx.zeros(2, 3))
    assert list(m.fc2._parameters) == ["weight", "bias"]
    m.scale = nn.Buffer(fnx.ones(1))
    assert list(m._buffers) == ["scale", "cache"]
    # a name moving to another store leaves the old one and is added last in the new one
    m.bn = nn.Parameter(fnx.zeros(1))
    assert list(m._modules) == ["fc1", "fc2"] and list(m._parameters) == ["bn"]


def test_state_dict_keys_in_pytorch_order():
    m = Net()
    sd = m.state_dict()
    assert isinstance(sd, OrderedDict)
    # own parameters, own persistent buffers, then each child in registration order
    assert list(sd) == ["scale", "fc1.weight", "fc1.bias", "bn.weight", "bn.bias",
                        "bn.running_mean", "bn.running_var", "bn.num_batches_tracked",
                        "fc2.weight"]
    assert sd["bn.num_batches_tracked"].dtype is fnx.int64
    assert not sd["fc1.weight"].requires_grad
    assert list(m.state_dict(prefix="net."))[0] == "net.scale"
    kv = m.state_dict(keep_vars=True)
    assert kv["fc1.weight"] is m.fc1.weight


def test_named_members_and_children():
    m = Net()
    assert [n for n, _ in m.named_parameters()] == ["fc1.weight", "fc1.bias", "bn.weight",
                                                     "bn.bias", "fc2.weight"]
    assert [n for n, _ in m.named_buffers()] == ["scale", "cache", "bn.running_mean",
                                                  "bn.running_var", "bn.num_batches_tracked"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "bn", "fc2"]
    assert list(m.children()) == [m.fc1, m.bn, m.fc2]
    assert len(list(m.parameters(recurse=False))) == 0
    assert m.get_submodule("bn") is m.bn
    assert m.get_parameter("fc1.bias") is m.fc1.bias
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        m.get_submodule("nope")


def test_shared_parameters_listed_once():
    a = nn.Linear(2, 2)
    seq = nn.Sequential(a, nn.ReLU(), a)
    assert len(list(seq.parameters())) == 2
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]
    # the state dict lists each path, as PyTorch
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_registration_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match=r'buffer name can.+t contain "\."'):
        m.register_buffer("a.b", fnx.zeros(1))
    with pytest.raises(KeyError, match="buffer name can.+t be empty string"):
        m.register_buffer("", fnx.zeros(1))
    with pytest.raises(TypeError, match="buffer name should be a string. Got int"):
        m.register_buffer(3, fnx.zeros(1))
    with pytest.raises(TypeError, match="cannot assign 'int' object to buffer 'b'"):
        m.register_buffer("b", 3)
    m.plain = 5
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        m.register_buffer("plain", fnx.zeros(1))
    with pytest.raises(TypeError, match=r"cannot assign 'fnx.FloatTensor' object to parameter "
                                        r"'w' \(fnx.nn.Parameter or None required\)"):
        m.register_parameter("w", fnx.zeros(1))
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("x", 3)
    lin = nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"cannot assign 'fnx.FloatTensor' as parameter "
                                        r"'weight' \(fnx.nn.Parameter or None expected\)"):
        lin.weight = fnx.zeros(2, 2)
    lin.bias = None
    assert lin.bias is None and "bias" in lin._parameters

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(fnx.zeros(1))
    with pytest.raises(AttributeError, match="cannot assign parameters before "
                                             "Module.__init__\\(\\) call"):
        Early()


def test_non_leaf_parameter_refused():
    w = fnx.ones(2, requires_grad=True)
    p = nn.Parameter(w)          # a Parameter of a leaf tensor that requires grad is fine
    assert p.is_leaf and p.requires_grad
    m = nn.Module()
    fake = nn.Parameter(fnx.ones(2))
    fake.grad_fn = object()      # what a non-leaf looks like to register_parameter
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'w'"):
        m.register_parameter("w", fake)


def test_buffer_assignment_and_nn_buffer():
    m = Net()
    m.scale = fnx.full((4,), 2.0)          # a registered buffer name takes a tensor
    assert m._buffers["scale"].tolist() == [2.0] * 4
    with pytest.raises(TypeError, match="cannot assign 'int' as buffer 'scale'"):
        m.scale = 3
    m.stat = nn.Buffer(fnx.zeros(3), persistent=False)
    assert "stat" in m._buffers and "stat" in m._non_persistent_buffers_set
    assert type(m.stat) is fnx.Tensor
    assert "stat" not in m.state_dict()


# ----------------------------------------------------------------------------- parameter

def test_parameter_shares_data_and_reprs():
    t = fnx.tensor([1.0, 2.0])
    p = nn.Parameter(t)
    assert p.requires_grad and p.is_leaf and isinstance(p, fnx.Tensor)
    t.add_(1)                                        # shares the data (and version counter)
    assert p.tolist() == [2.0, 3.0]
    assert p._version == t._version == 1
    assert repr(p) == "Parameter containing:\ntensor([2., 3.], requires_grad=True)"
    q = nn.Parameter(fnx.tensor([1, 2]), requires_grad=False)
    assert not q.requires_grad and q.dtype is fnx.int64
    with pytest.raises(RuntimeError, match="floating point and complex dtype"):
        nn.Parameter(fnx.tensor([1, 2]))
    e = nn.Parameter()
    assert e.shape == (0,) and e.requires_grad
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        nn.Parameter([1.0])


def test_parameter_deepcopy_and_pickle():
    p = nn.Parameter(fnx.tensor([1.0, 2.0]))
    p.grad = fnx.tensor([0.5, 0.5])
    c = copy.deepcopy(p)
    assert type(c) is nn.Parameter and c.requires_grad and c is not p
    assert c.tolist() == [1.0, 2.0] and c.grad.tolist() == [0.5, 0.5]
    assert c.grad is not p.grad
    with fnx.no_grad():
        c.add_(1)
    assert p.tolist() == [1.0, 2.0]                   # new data
    u = pickle.loads(pickle.dumps(p))
    assert type(u) is nn.Parameter and u.requires_grad and u.tolist() == [1.0, 2.0]


# ----------------------------------------------------------------------------- load_state_dict

def test_load_state_dict_copies_in_place():
    a, b = Net(), Net()
    ids = [id(p) for p in b.parameters()]
    res = b.load_state_dict(a.state_dict())
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert repr(res) == "<All keys matched successfully>"
    assert [id(p) for p in b.parameters()] == ids       # same objects, new values
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ka == kb and np.array_equal(va.numpy(), vb.numpy())
    assert b.fc1.weight.requires_grad


def test_load_state_dict_strict_errors():
    m = nn.Linear(3, 2)
    sd = m.state_dict()
    del sd["bias"]
    sd["extra"] = fnx.zeros(1)
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(sd)
    assert str(e.value) == ('Error(s) in loading state_dict for Linear:\n\tMissing key(s) in '
                            'state_dict: "bias". \n\tUnexpected key(s) in state_dict: "extra". ')
    res = m.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["bias"] and res.unexpected_keys == ["extra"]
    assert res == (["bias"], ["extra"])


def test_load_state_dict_size_mismatch_always_raises():
    m = nn.Linear(3, 2)
    sd = {"weight": fnx.zeros(2, 4), "bias": fnx.zeros(2)}
    before = m.weight.tolist()
    for strict in (True, False):
        with pytest.raises(RuntimeError) as e:
            m.load_state_dict(sd, strict=strict)
        assert str(e.value) == ("Error(s) in loading state_dict for Linear:\n\tsize mismatch "
                                "for weight: copying a param with shape fnx.Size([2, 4]) from "
                                "checkpoint, the shape in current model is fnx.Size([2, 3]).")
    assert m.weight.tolist() == before
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        m.load_state_dict([1, 2])
    with pytest.raises(RuntimeError, match='expected fnx.Tensor or Tensor-like object from '
                                           'checkpoint but received'):
        m.load_state_dict({"weight": [[0.0] * 3] * 2, "bias": fnx.zeros(2)})


def test_load_state_dict_nested_unexpected_and_assign():
    m = nn.Sequential(nn.Linear(2, 2))
    sd = m.state_dict()
    sd["0.running"] = fnx.zeros(1)
    sd["1.weight"] = fnx.zeros(1)
    res = m.load_state_dict(sd, strict=False)
    # the root reports its keys before its children, as PyTorch
    assert res.unexpected_keys == ["1.weight", "0.running"]
    new_w = fnx.full((2, 2), 7.0)
    m.load_state_dict({"0.weight": new_w, "0.bias": fnx.zeros(2)}, assign=True)
    assert isinstance(m[0].weight, nn.Parameter) and m[0].weight.requires_grad
    assert m[0].weight.tolist() == [[7.0, 7.0]] * 2


def test_load_state_dict_casts_dtype():
    m = nn.Linear(2, 2)
    sd = {k: v.double() for k, v in m.state_dict().items()}
    with fnx.no_grad():
        m.weight.zero_()
    m.load_state_dict(sd)
    assert m.weight.dtype is fnx.float32
    assert np.allclose(m.weight.numpy(force=True), sd["weight"].numpy())


# ----------------------------------------------------------------------------- _apply / to

def test_to_dtype_keeps_parameter_objects():
    m = Net()
    w = m.fc1.weight
    m.fc1.weight.grad = fnx.ones(4, 3)
    g = m.fc1.weight.grad
    assert m.double() is m
    assert m.fc1.weight is w and w.dtype is fnx.float64 and w.requires_grad
    assert isinstance(w, nn.Parameter) and w.is_leaf
    assert w.grad is g and g.dtype is fnx.float64
    assert m.bn.running_mean.dtype is fnx.float64
    assert m.bn.num_batches_tracked.dtype is fnx.int64     # only floating tensors change
    assert m(fnx.ones(5, 3, dtype=fnx.float64)).dtype is fnx.float64
    m.to(fnx.float16)
    assert w.dtype is fnx.float16
    m.float()
    assert w.dtype is fnx.float32
    m.bfloat16()
    assert w.dtype is fnx.bfloat16 and m.bn.num_batches_tracked.dtype is fnx.int64
    m.to(dtype=fnx.float32)
    assert w.dtype is fnx.float32
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex "
                                        "dtypes, but got desired dtype=fnx.int64"):
        m.to(fnx.int64)


def test_to_device_meta_and_back():
    m = nn.Linear(3, 2)
    w = m.weight
    m.to("meta")
    assert m.weight is w and w.device.type == "meta" and w.requires_grad
    assert m(fnx.ones(4, 3, device="meta")).shape == (4, 2)
    m2 = nn.Linear(3, 2)
    assert m2.to("cpu") is m2 and m2.cpu().weight.device.type == "cpu"
    m2.to(fnx.zeros(1, dtype=fnx.float64))           # to(tensor): its dtype and device
    assert m2.weight.dtype is fnx.float64


def test_cuda_move_when_available():
    cuda = getattr(fnx, "cuda", None)
    if cuda is None or not cuda.is_available():
        pytest.skip("no CUDA backend available (set FNX_CUDA_ON_CPU=1 to emulate one)")
    m = nn.Linear(3, 2)
    w = m.weight
    m.cuda()
    assert m.weight is w and w.device.type == "cuda"
    out = m(fnx.ones(4, 3, device="cuda"))
    assert out.device.type == "cuda"
    m.cpu()
    assert w.device.type == "cpu"


# ----------------------------------------------------------------------------- modes, grads

def test_train_eval_requires_grad_zero_grad_apply():
    m = Net()
    assert m.training and m.bn.training
    assert m.eval() is m and not m.bn.training and not m.fc1.training
    m.train()
    assert m.bn.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train("yes")
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_()
    for p in m.parameters():
        p.grad = fnx.ones(p.shape)
    m.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any() for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "BatchNorm1d", "Linear", "Net"]


def test_forward_missing_and_call_args():
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required '
                                                  r'"forward" function'):
        nn.Module()(1)


# ----------------------------------------------------------------------------- hooks

def test_forward_hooks_modify_and_remove():
    m = nn.Identity()
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    h2 = m.register_forward_hook(lambda mod, args, out: out + 1)
    m.register_forward_hook(lambda mod, args, out: calls.append("first"), prepend=True)
    x = fnx.tensor([1.0])
    assert m(x).tolist() == [3.0] and calls == ["first"]
    h1.remove()
    assert m(x).tolist() == [2.0]
    h2.remove()
    assert m(x).tolist() == [1.0]
    h1.remove()                                       # removing twice is harmless
    with m.register_forward_pre_hook(lambda mod, args, kw: ((args[0] * 10,), kw),
                                     with_kwargs=True):
        assert m(x).tolist() == [10.0]
    assert m(x).tolist() == [1.0]
    m2 = nn.Linear(1, 1)
    m2.register_forward_hook(lambda mod, args, kw, out: out * 0, with_kwargs=True)
    assert m2(fnx.ones(1, 1)).tolist() == [[0.0]]


def test_always_call_hook_runs_on_error():
    m = nn.Linear(2, 2)
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        m(fnx.ones(3, 5))
    assert seen == [None]


# ----------------------------------------------------------------------------- repr

def test_repr_nested():
    m = nn.Sequential(nn.Linear(3, 2), nn.Sequential(nn.ReLU(inplace=True), nn.Dropout(0.1)))
    assert repr(m) == ("Sequential(\n"
                       "  (0): Linear(in_features=3, out_features=2, bias=True)\n"
                       "  (1): Sequential(\n"
                       "    (0): ReLU(inplace=True)\n"
                       "    (1): Dropout(p=0.1, inplace=False)\n"
                       "  )\n"
                       ")")
    assert repr(nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)) == \
        "Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)"
    # torch 2.13's norm layers print bias= (False when there is no bias, as without affine)
    assert repr(nn.LayerNorm((4, 5))) == \
        "LayerNorm((4, 5), eps=1e-05, elementwise_affine=True, bias=True)"
    assert repr(nn.LayerNorm(4, bias=False)) == \
        "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=False)"
    assert repr(nn.BatchNorm2d(3)) == \
        "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    assert repr(nn.BatchNorm1d(3, affine=False)) == ("BatchNorm1d(3, eps=1e-05, momentum=0.1, "
                                                      "affine=False, bias=False, "
                                                      "track_running_stats=True)")
    assert repr(nn.InstanceNorm2d(3)) == ("InstanceNorm2d(3, eps=1e-05, momentum=0.1, "
                                          "affine=False, bias=False, track_running_stats=False)")
    assert repr(nn.GroupNorm(1, 3, bias=False)) == \
        "GroupNorm(1, 3, eps=1e-05, affine=True, bias=False)"
    assert repr(nn.Embedding(10, 3)) == "Embedding(10, 3)"
    assert repr(nn.GELU()) == "GELU(approximate='none')"
    assert repr(nn.MSELoss()) == "MSELoss()"
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    assert repr(nn.AdaptiveAvgPool2d((1, 1))) == "AdaptiveAvgPool2d(output_size=(1, 1))"
    assert repr(nn.Softmax(dim=1)) == "Softmax(dim=1)"


# ----------------------------------------------------------------------------- containers

def test_sequential_indexing_and_editing():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    s = nn.Sequential(a, b, c)
    assert s[0] is a and s[-1] is c and len(s) == 3
    assert isinstance(s[1:], nn.Sequential) and list(s[1:]) == [b, c]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        s[3]
    del s[1]
    assert list(s._modules) == ["0", "1"] and s[1] is c
    s.insert(1, b)
    assert list(s) == [a, b, c]
    s.append(nn.Sigmoid())
    assert len(s) == 4
    assert s.pop(3).__class__ is nn.Sigmoid
    s2 = nn.Sequential(OrderedDict([("enc", a), ("act", b)]))
    assert list(s2._modules) == ["enc", "act"] and s2.enc is a
    assert len(s + s2) == 5
    x = fnx.ones(4, 2)
    assert np.allclose(s(x).numpy(force=True), c(b(a(x))).numpy(force=True))


def test_modulelist_moduledict():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(layers) == 3 and len(list(layers.parameters())) == 6
    layers.append(nn.ReLU())
    layers.extend([nn.Tanh()])
    assert [type(m).__name__ for m in layers] == ["Linear"] * 3 + ["ReLU", "Tanh"]
    assert isinstance(layers[1:3], nn.ModuleList) and len(layers[1:3]) == 2
    del layers[0]
    assert list(layers._modules) == ["0", "1", "2", "3"]
    layers.insert(0, nn.Identity())
    assert isinstance(layers[0], nn.Identity)
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        layers.extend(5)
    d = nn.ModuleDict({"a": nn.Linear(1, 1)})
    d["b"] = nn.ReLU()
    d.update([("c", nn.Tanh())])
    assert list(d.keys()) == ["a", "b", "c"] and "b" in d and len(d) == 3
    assert d.pop("b").__class__ is nn.ReLU and list(d) == ["a", "c"]
    assert [n for n, _ in d.named_parameters()] == ["a.weight", "a.bias"]


def test_parameterlist_parameterdict():
    pl = nn.ParameterList([fnx.zeros(2), nn.Parameter(fnx.ones(3))])
    assert len(pl) == 2 and all(isinstance(p, nn.Parameter) for p in pl)
    pl.append(fnx.zeros(1))
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    pd = nn.ParameterDict({"w": fnx.zeros(2)})
    pd["b"] = fnx.ones(1)
    assert list(pd.keys()) == ["w", "b"] and isinstance(pd["b"], nn.Parameter)
    assert list(pd.state_dict()) == ["w", "b"]


# ----------------------------------------------------------------------------- copies, compile

def test_module_deepcopy_is_independent():
    m = Net()
    c = copy.deepcopy(m)
    assert c.fc1.weight is not m.fc1.weight and isinstance(c.fc1.weight, nn.Parameter)
    assert np.array_equal(c.fc1.weight.numpy(force=True), m.fc1.weight.numpy(force=True))
    with fnx.no_grad():
        c.fc1.weight.add_(1)
    assert not np.array_equal(c.fc1.weight.numpy(force=True), m.fc1.weight.numpy(force=True))
    assert c._non_persistent_buffers_set == {"cache"}
    x = fnx.ones(5, 3)
    assert c(x).shape == m(x).shape


def test_compiled_module_matches_eager_and_sees_updates():
    fnx.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3))
    cm = fnx.compile(m)
    x = fnx.randn(5, 4)
    with fnx.no_grad():
        assert np.allclose(cm(x).numpy(), m(x).numpy(), atol=1e-5)
        m[0].weight.mul_(2)                          # parameters are inputs, not constants
        assert np.allclose(cm(x).numpy(), m(x).numpy(), atol=1e-5)
    m.compile()                                       # Module.compile: in place
    with fnx.no_grad():
        assert np.allclose(m(x).numpy(), cm(x).numpy(), atol=1e-5)
    assert "_compiled_call_impl" in m.__dict__


def test_registration_methods_have_docstrings():
    # a statement placed before the string once made it a no-op expression (no __doc__)
    for name in ("register_buffer", "register_parameter", "add_module"):
        assert getattr(nn.Module, name).__doc__, name
