"""``fnx.compile`` as a drop-in ``torch.compile``: a compiled module is a module sharing
the original's state, ``Module.compile()`` compiles in place, torch.compile's keywords, and
``fnx.compiler.reset``/``disable``. References: the eager twin of each model (same seed)."""
import copy
import warnings

import numpy as np
import pytest

import fnx
from fnx import nn, optim
from fnx.lower.compiled_function import CompiledFunction
from fnx.lower.frontend import MODES
from fnx.nn.modules.compiled import OptimizedModule


class Net(nn.Module):
    def __init__(self, p=0.0):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.drop = nn.Dropout(p)
        self.fc2 = nn.Linear(8, 3)
        self.register_buffer("scale", fnx.full((3,), 2.0))
        self.temperature = 0.5

    def forward(self, x):
        return self.fc2(self.drop(self.bn(self.fc1(x)).relu())) * self.scale

    def generate(self, x):
        return self(x).argmax(-1)


def _net(seed=0, p=0.0):
    fnx.manual_seed(seed)
    return Net(p)


def _np(t):
    return t.detach().numpy()


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


# ----------------------------------------------------------------------------- a module

def test_compiled_module_is_a_module_sharing_the_originals_state():
    net = _net()
    compiled = fnx.compile(net)
    assert isinstance(compiled, nn.Module) and isinstance(compiled, OptimizedModule)
    assert compiled._orig_mod is net and isinstance(compiled.forward, CompiledFunction)
    assert compiled.fc1 is net.fc1 and compiled.scale is net.scale
    assert compiled.temperature == 0.5
    assert [id(p) for p in compiled.parameters()] == [id(p) for p in net.parameters()]
    assert [id(b) for b in compiled.buffers()] == [id(b) for b in net.buffers()]
    assert [n for n, _ in compiled.named_parameters()] == [n for n, _ in net.named_parameters()]
    assert [n for n, _ in compiled.named_buffers()] == [n for n, _ in net.named_buffers()]
    assert list(compiled.modules())[1:] == list(net.modules())[1:]
    assert compiled.get_submodule("fc2") is net.fc2
    compiled.temperature = 2.0                      # attributes are written on the original
    compiled.extra = nn.Linear(1, 1)
    assert net.temperature == 2.0 and net.extra is compiled.extra
    assert "fc1.weight" in dict(net.named_parameters()) and "extra.weight" in net.state_dict()
    del compiled.extra
    assert not hasattr(net, "extra")
    assert "generate" in dir(compiled) and "fc1" in dir(compiled)
    x = fnx.randn(6, 4)
    np.testing.assert_array_equal(_np(compiled.generate(x)), _np(net.generate(x)))
    assert repr(compiled).startswith("OptimizedModule(\n  (_orig_mod): Net(\n")
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        compiled.missing


def test_the_pytorch_training_idiom_matches_an_eager_twin():
    eager, model = _net(1), _net(1)
    model = fnx.compile(model)                      # before the optimizer, as in PyTorch
    opts = [optim.SGD(m.parameters(), lr=0.05, momentum=0.9) for m in (eager, model)]
    loss_fn = nn.CrossEntropyLoss()
    fnx.manual_seed(2)
    batches = [(fnx.randn(16, 4), fnx.randint(0, 3, (16,))) for _ in range(6)]
    for x, y in batches:
        losses = []
        for m, opt in zip((eager, model), opts):
            opt.zero_grad()
            loss = loss_fn(m(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert losses[0] == pytest.approx(losses[1], rel=1e-5, abs=1e-6)
    for (name, a), (_, b) in zip(eager.state_dict().items(), model.state_dict().items()):
        _close(a, b, 1e-4)                          # weights and batch-norm running stats
    assert model.bn.num_batches_tracked.item() == len(batches)
    assert len(model.forward.entries()) == 1        # one program for every step


def test_eval_changes_behaviour_and_compiled_eval_equals_eager_eval():
    net = _net(3, p=0.5)
    compiled = fnx.compile(net)
    x = fnx.randn(32, 4)
    with fnx.no_grad():
        trained = compiled(x)                       # dropout on, batch statistics
        mean = net.bn.running_mean.clone()
        assert compiled.eval() is compiled
        assert not net.training and not net.drop.training and not compiled.training
        got = compiled(x)
        np.testing.assert_array_equal(_np(net.bn.running_mean), _np(mean))   # not updated
        _close(got, net._call_impl(x))              # the eager forward, in eval mode
        _close(compiled(x), got)                    # eval is deterministic
        assert not np.allclose(_np(trained), _np(got), atol=1e-3)
        compiled.train()
        assert net.training and net.drop.training and compiled.training
    assert len(compiled.forward.entries()) == 2     # one per training flag


def test_state_dict_round_trips_between_compiled_and_plain(tmp_path):
    src = fnx.compile(_net(4))
    with fnx.no_grad():
        src(fnx.randn(8, 4))                        # running stats move away from init
    assert list(src.state_dict()) == list(_net().state_dict())
    fnx.save(src.state_dict(), tmp_path / "compiled.pt")
    plain = _net(5)
    assert repr(plain.load_state_dict(fnx.load(tmp_path / "compiled.pt"))) == \
        "<All keys matched successfully>"
    x = fnx.randn(5, 4)
    for m in (src, plain):
        m.eval()
    _close(plain(x), src(x))
    fnx.save(plain.state_dict(), tmp_path / "plain.pt")
    dst = fnx.compile(_net(6).eval())
    weight = dst.fc1.weight
    dst.load_state_dict(fnx.load(tmp_path / "plain.pt"))
    assert dst.fc1.weight is weight                 # loaded in place, into the original
    _close(dst(x), plain(x))
    with pytest.raises(RuntimeError, match='Missing key.*"fc2.bias"'):
        dst.load_state_dict({k: v for k, v in plain.state_dict().items() if k != "fc2.bias"})


def test_mode_and_device_methods_act_on_the_original():
    net = _net()
    compiled = fnx.compile(net)
    x = fnx.randn(3, 4)
    compiled(x).sum().backward()
    assert net.fc1.weight.grad is not None
    compiled.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    assert compiled.requires_grad_(False) is compiled
    assert not any(p.requires_grad for p in net.parameters())
    assert compiled.double() is compiled and net.fc1.weight.dtype == fnx.float64
    out = compiled.eval()(x.double())
    assert out.dtype == fnx.float64 and not out.requires_grad
    _close(out, net._call_impl(x.double()))
    seen = []
    assert compiled.apply(lambda m: seen.append(type(m).__name__)) is compiled
    assert seen[-1] == "Net"                        # apply reaches the original itself


def test_hooks_of_the_original_run_compiled_and_the_wrappers_outside():
    net = _net()
    compiled = fnx.compile(net)
    x = fnx.randn(3, 4)
    net.register_forward_hook(lambda m, args, out: out * 10)
    calls = []
    compiled.register_forward_pre_hook(lambda m, args: calls.append(fnx.compiler.is_compiling()))
    with fnx.no_grad():
        _close(compiled(x), net(x))
    assert calls == [False]                         # the wrapper's hook is not traced


def test_a_compiled_submodule_keeps_its_parents_keys():
    class Parent(nn.Module):
        def __init__(self, compile_block):
            super().__init__()
            fnx.manual_seed(0)
            self.block = fnx.compile(Net()) if compile_block else Net()
            self.head = nn.Linear(3, 1)

        def forward(self, x):
            return self.head(self.block(x))

    a, b = Parent(True), Parent(False)
    assert list(a.state_dict()) == list(b.state_dict())
    assert "block.fc1.weight" in a.state_dict()
    b.load_state_dict(a.state_dict())
    a.eval()
    b.eval()
    assert not a.block._orig_mod.bn.training
    x = fnx.randn(2, 4)
    with fnx.no_grad():
        _close(a(x), b(x))


def test_deepcopy_of_a_compiled_module_is_an_independent_compiled_module():
    compiled = fnx.compile(_net())
    twin = copy.deepcopy(compiled)
    assert isinstance(twin, OptimizedModule) and twin._orig_mod is not compiled._orig_mod
    assert twin.forward is not compiled.forward
    with fnx.no_grad():
        twin.fc1.weight.add_(1)
        x = fnx.randn(4, 4)
        assert not np.allclose(_np(twin(x)), _np(compiled(x)))
        _close(twin(x), twin._orig_mod._call_impl(x))


def test_deepcopy_of_a_model_whose_forward_was_compiled():
    # ``model.forward = fnx.compile(model.forward)``, then ``copy.deepcopy(model)`` (an
    # EMA twin): the copy runs its own forward, compiled anew with the same options; a
    # compiled function copied alone is itself, as a function is
    model = _net()
    model.forward = fnx.compile(model.forward, dynamic=False)
    twin = copy.deepcopy(model)
    assert isinstance(twin.forward, CompiledFunction) and twin.forward is not model.forward
    assert twin.forward.fn.__self__ is twin and twin.forward.dynamic is False
    with fnx.no_grad():
        twin.fc1.weight.add_(1)
        x = fnx.randn(4, 4)
        _close(twin(x), type(twin).forward(twin, x))      # (the class's, eagerly)
        assert not np.allclose(_np(twin(x)), _np(model(x)))
    f = fnx.compile(lambda x: x + 1)
    assert copy.deepcopy(f) is f


def test_wrong_arguments_raise_what_eager_raises():
    net = nn.Linear(3, 2)
    compiled = fnx.compile(net)
    x = fnx.ones(4, 3)
    for args in [(x, x), (), (x.long(),), (fnx.ones(4, 5),), (x.double(),)]:
        errors = []
        for f in (net, compiled):
            with pytest.raises((TypeError, RuntimeError)) as info:
                f(*args)
            errors.append((info.type, str(info.value)))
        assert errors[0] == errors[1], args
    _close(compiled(x), net(x))                     # and it still compiles afterwards
    assert len(compiled.forward.entries()) == 1


# ----------------------------------------------------------------------------- in place

def test_module_compile_compiles_in_place():
    traced = []

    class Probe(nn.Linear):
        def forward(self, x):
            traced.append(fnx.compiler.is_compiling())
            return super().forward(x)

    fnx.manual_seed(0)
    m = Probe(3, 2)
    x = fnx.randn(4, 3)
    eager = m(x)
    assert m.compile() is None and type(m) is Probe
    cf = m.__dict__["_compiled_call_impl"]
    assert isinstance(cf, CompiledFunction)
    _close(m(x), eager)
    _close(m(x), eager)
    assert traced[0] is False and True in traced[1:]      # traced, then never run again
    assert len(traced) <= 3 and len(cf.entries()) == 1
    assert list(m.state_dict()) == ["weight", "bias"]
    twin = copy.deepcopy(m)                          # a copy is compiled afresh, for itself
    twin_cf = twin.__dict__["_compiled_call_impl"]
    assert twin_cf is not cf and twin_cf.fn.module is twin and twin_cf.entries() == []
    with fnx.no_grad():
        twin.weight.add_(1)
        _close(twin(x), twin._call_impl(x))
        assert not np.allclose(_np(twin(x)), _np(m(x)))
    m.compile(disable=True)
    _close(m(x), eager)
    assert traced[-1] is False


# ----------------------------------------------------------------------------- keywords

def test_decorator_and_call_forms():
    def f(x):
        return (x * 2).exp()

    x = fnx.randn(3)
    forms = [fnx.compile(f), fnx.compile()(f), fnx.compile(mode="max-autotune")(f),
             fnx.compile(f, backend="inductor", fullgraph=True, dynamic=False),
             fnx.compile(f, options={"triton.cudagraphs": True, "max_autotune": False})]

    @fnx.compile
    def g(x):
        return (x * 2).exp()

    @fnx.compile(mode="reduce-overhead", dynamic=None)
    def h(x):
        return (x * 2).exp()

    for cf in forms + [g, h]:
        assert isinstance(cf, CompiledFunction) and cf.target.name == "jax"
        _close(cf(x), f(x))
        assert len(cf.entries()) == 1
    assert g.__name__ == "g"
    assert fnx.compile(f, disable=True) is f
    assert fnx.compile(disable=True, mode="max-autotune")(f) is f
    assert fnx.compile(f, backend="eager").target.name == "interpreter"
    assert fnx.compile(f, backend="interpreter").target.name == "interpreter"
    for mode in MODES + (None,):
        _close(fnx.compile(f, mode=mode)(x), f(x))


def test_options_honored_and_recompile_limit():
    cf = fnx.compile(lambda x: x + 1, options={"decompose": "core", "cache_limit": 1})
    assert cf.decompose == "core" and cf.cache_limit == 1
    cf = fnx.compile(lambda x: x + 1, recompile_limit=1)
    cf(fnx.ones(1))
    with pytest.warns(UserWarning, match="cache_limit"):
        np.testing.assert_array_equal(_np(cf(fnx.ones(2))), [2.0, 2.0])   # ran eagerly
    assert len(cf.entries()) == 1


@pytest.mark.parametrize("kwargs, error, match", [
    ({"mode": "fast"}, RuntimeError, "Unrecognized mode=fast, should be one of: default"),
    ({"mode": "default", "options": {}}, RuntimeError, "Either mode or options"),
    ({"options": {"nope": 1}}, RuntimeError, "Unexpected optimization option nope"),
    ({"options": {"max_autotune": 1}}, RuntimeError, "Unexpected type of attr max_autotune"),
    ({"options": [("max_autotune", True)]}, TypeError, "options must be a dict"),
    ({"backend": "nope"}, RuntimeError, "Invalid backend: 'nope'"),
    ({"backend": lambda gm, example_inputs: gm}, NotImplementedError, "callable backend"),
    ({"dynamic": "yes"}, AssertionError, "Expected enable to be a bool"),
    ({"decompose": "everything"}, ValueError, "decompose must be"),
    ({"cache_limit": -1}, ValueError, "recompile limit"),
])
def test_bad_keywords_raise_pytorchs_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        fnx.compile(lambda x: x, **kwargs)
    with pytest.raises(error, match=match):
        nn.Linear(1, 1).compile(**kwargs)


def test_only_callables_compile():
    with pytest.raises(AssertionError, match="A callable function is expected"):
        fnx.compile(5)
    with pytest.raises(RuntimeError, match="Model can't be None"):
        fnx.compile()(None)


# ----------------------------------------------------------------------------- fnx.compiler

def test_reset_forgets_every_compiled_program(monkeypatch):
    # (traces are counted at the compiler: a list appended to inside the function would be
    # Python state a compiled program cannot replay, which makes the function run eagerly)
    traces = []
    original = CompiledFunction._compile

    def counting(self, *a, **k):
        traces.append(True)
        return original(self, *a, **k)
    monkeypatch.setattr(CompiledFunction, "_compile", counting)

    def f(x):
        return x.sin()

    cf = fnx.compile(f)
    compiled = fnx.compile(_net())
    x = fnx.randn(2, 4)
    for _ in range(2):
        cf(x)
        compiled(x)
    assert len(cf.entries()) == 1
    assert len(compiled.forward.entries()) == 1
    before = len(traces)
    cf(x)
    assert len(traces) == before             # cached: no retrace
    fnx.compiler.reset()
    assert cf.entries() == [] and compiled.forward.entries() == []
    _close(cf(x), x.sin())
    assert len(traces) > before and len(cf.entries()) == 1
    compiled(x)
    assert len(compiled.forward.entries()) == 1


def test_reset_lifts_the_eager_fallback():
    cf = fnx.compile(lambda x: x * 2, cache_limit=1)
    cf(fnx.ones(1))
    with pytest.warns(UserWarning, match="cache_limit"):
        cf(fnx.ones(2))
    fnx.compiler.reset()
    cf(fnx.ones(2))
    assert len(cf.entries()) == 1


def test_compiler_disable_runs_a_function_eagerly():
    calls = []

    @fnx.compiler.disable(reason="logs")
    def log(x):
        calls.append(fnx.compiler.is_compiling())
        return x * 3

    def f(x):
        return log(x) + 1

    x = fnx.ones(2)
    np.testing.assert_array_equal(_np(log(x)), [3.0, 3.0])
    cf = fnx.compile(f)
    with pytest.warns(UserWarning, match=r"log is disabled by fnx.compiler.disable \(logs\)"):
        np.testing.assert_array_equal(_np(cf(x)), [4.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(_np(cf(x)), [4.0, 4.0])   # eager from now on
    # every call of log ran eagerly, outside any trace (is_compiling() was False in each)
    assert len(calls) >= 3 and not any(calls) and cf.entries() == []
    with pytest.raises(RuntimeError, match="disabled by fnx.compiler.disable"):
        fnx.compile(f, fullgraph=True)(x)
    assert fnx.compiler.disable(f).__name__ == "f"
    # recursive=False (PyTorch compiles what the function calls) is accepted: same values
    shallow = fnx.compiler.disable(recursive=False)(lambda x: log(x) * 2)
    with pytest.warns(UserWarning, match="disabled by fnx.compiler.disable"):
        np.testing.assert_array_equal(_np(fnx.compile(lambda x: shallow(x) + 1)(x)),
                                      [7.0, 7.0])


def test_a_compiled_container_stays_a_container():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    compiled = fnx.compile(seq)
    assert compiled[0] is seq[0] and len(compiled) == 3 and list(compiled) == list(seq)
    assert isinstance(compiled[1:], nn.Sequential) and bool(fnx.compile(nn.Linear(1, 1)))
