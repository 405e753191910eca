"""The dispatcher's rules, one by one: key priority, thread-local include/exclude guards,
kernel resolution order, fallthrough, redispatch, boxed fallbacks, registration-time
tables, error messages, op packets and the DispatchKeySet API.

Every test defines fresh operators in the ``test_xyz`` namespace with
``fnx.library.Library`` and undoes its registrations with ``_destroy()``.  Kernels return
strings (or the call's keyset) so a test sees exactly which entry of the table ran.
"""
import threading

import numpy as np
import pytest

import fnx
from fnx.dispatch import DispatchKey as K
from fnx.dispatch import (DispatchKeySet, ExcludeDispatchKeyGuard, IncludeDispatchKeyGuard, below,
                          dispatcher, local_exclude_set, local_include_set)
from fnx.library import Library, fallthrough_kernel

ADIOV = 1 << K.ADInplaceOrView


def make(key, requires_grad=False, data=None):
    """A tensor whose keyset is ``key`` (+ ADInplaceOrView, as every real tensor has)."""
    bits = (1 << key) | ADIOV
    if requires_grad:
        bits |= 1 << {K.CPU: K.AutogradCPU, K.Meta: K.AutogradMeta, K.CUDA: K.AutogradCUDA,
                      K.PrivateUse1: K.AutogradPrivateUse1}[key]
    dev = {K.CPU: "cpu", K.Meta: "meta", K.CUDA: "cpu", K.PrivateUse1: "cpu"}[key]
    arr = np.zeros(2, np.float32) if data is None else data
    return fnx.Tensor._make(arr, fnx.float32, fnx.device(dev), bits)


def tag(name):
    """A keyset-taking kernel that reports its name and the key it ran at."""
    def k(ks, *args, **kwargs):
        return name, ks.highest_priority_key()
    return k


@pytest.fixture
def lib(no_fallback):
    # Requests no_fallback so that the fallbacks it saved are restored after this
    # library's _destroy() (which resets them to what it saw when it registered).
    lib = Library("test_xyz", "DEF")
    yield lib
    lib._destroy()


@pytest.fixture
def no_fallback():
    """Remove the fallbacks of the given keys for one test (fnx installs a Tracer
    fallback at import); restored afterwards."""
    saved = {}

    def clear(*keys):
        for key in keys:
            saved.setdefault(key, dispatcher._fallbacks.get(key))
            dispatcher.register_fallback(key, None)
    yield clear
    for key, fb in saved.items():
        dispatcher.register_fallback(key, fb)


def define(lib, schema="foo(Tensor x) -> Tensor"):
    qualname = lib.define(schema)
    return dispatcher.get_op(qualname)


# --------------------------------------------------------------------------- key priority

def test_highest_key_of_the_keyset_wins(lib):
    op = define(lib)
    lib.impl(op, tag("cpu"), "CPU", with_keyset=True)
    lib.impl(op, tag("autograd"), "AutogradCPU", with_keyset=True)
    x = fnx.tensor([1.0, 2.0])
    assert op(x) == ("cpu", K.CPU)
    x.requires_grad_(True)
    assert K.AutogradCPU in x._keyset and K.CPU in x._keyset
    assert op(x) == ("autograd", K.AutogradCPU)
    x.requires_grad_(False)
    assert op(x) == ("cpu", K.CPU)


def test_keyset_is_the_union_over_tensor_arguments(lib):
    op = define(lib, "two(Tensor a, Tensor b) -> Tensor")
    lst = define(lib, "many(Tensor[] xs, Tensor? opt=None) -> Tensor")
    for o in (op, lst):
        lib.impl(o, tag("cpu"), "CPU", with_keyset=True)
        lib.impl(o, tag("pu1"), "PrivateUse1", with_keyset=True)
    cpu, pu1 = make(K.CPU), make(K.PrivateUse1)
    assert op(cpu, cpu) == ("cpu", K.CPU)
    assert op(cpu, pu1) == ("pu1", K.PrivateUse1)
    assert op(pu1, cpu) == ("pu1", K.PrivateUse1)
    assert lst([cpu, cpu]) == ("cpu", K.CPU)
    assert lst([cpu, pu1]) == ("pu1", K.PrivateUse1)
    assert lst([cpu], opt=pu1) == ("pu1", K.PrivateUse1)
    assert lst([cpu], opt=None) == ("cpu", K.CPU)


def test_crafted_keyset_with_two_backends_runs_the_higher(lib):
    op = define(lib)
    lib.impl(op, tag("meta"), "Meta", with_keyset=True)
    lib.impl(op, tag("cuda"), "CUDA", with_keyset=True)
    t = fnx.Tensor._make(np.zeros(1), fnx.float32, fnx.device("cpu"),
                         (1 << K.Meta) | (1 << K.CUDA))
    assert op(t) == ("cuda", K.CUDA)
    assert op(make(K.Meta)) == ("meta", K.Meta)


# --------------------------------------------------------------------------- guards

def test_include_guard_adds_a_key(lib, no_fallback):
    no_fallback(K.Tracer)
    op = define(lib)
    lib.impl(op, tag("cpu"), "CPU", with_keyset=True)
    lib.impl(op, tag("tracer"), "Tracer", with_keyset=True)
    x = fnx.tensor([1.0])
    assert op(x) == ("cpu", K.CPU)
    with IncludeDispatchKeyGuard(K.Tracer):
        assert K.Tracer in local_include_set()
        assert op(x) == ("tracer", K.Tracer)
    assert K.Tracer not in local_include_set()
    assert op(x) == ("cpu", K.CPU)


def test_exclude_guard_removes_a_key(lib):
    op = define(lib)
    lib.impl(op, tag("cpu"), "CPU", with_keyset=True)
    lib.impl(op, tag("autograd"), "AutogradCPU", with_keyset=True)
    x = fnx.tensor([1.0], requires_grad=True)
    assert op(x)[0] == "autograd"
    with ExcludeDispatchKeyGuard(K.AutogradCPU):
        assert K.AutogradCPU in local_exclude_set()
        assert op(x) == ("cpu", K.CPU)
    assert K.AutogradCPU not in local_exclude_set()
    assert op(x)[0] == "autograd"


def test_exclude_wins_over_include(lib, no_fallback):
    no_fallback(K.Tracer)
    op = define(lib)
    lib.impl(op, tag("cpu"), "CPU", with_keyset=True)
    lib.impl(op, tag("tracer"), "Tracer", with_keyset=True)
    x = fnx.tensor([1.0])
    with IncludeDispatchKeyGuard(K.Tracer), ExcludeDispatchKeyGuard(K.Tracer):
        assert op(x) == ("cpu", K.CPU)
    with ExcludeDispatchKeyGuard(K.Tracer), IncludeDispatchKeyGuard(K.Tracer):
        assert op(x) == ("cpu", K.CPU)


def test_guards_nest_and_restore(lib, no_fallback):
    no_fallback(K.Tracer, K.Functionalize)
    op = define(lib)
    lib.impl(op, tag("cpu"), "CPU", with_keyset=True)
    lib.impl(op, tag("tracer"), "Tracer", with_keyset=True)
    lib.impl(op, tag("func"), "Functionalize", with_keyset=True)
    x = fnx.tensor([1.0])
    with IncludeDispatchKeyGuard(K.Tracer):
        assert op(x)[0] == "tracer"
        with IncludeDispatchKeyGuard(K.Functionalize):
            assert local_include_set() == DispatchKeySet(K.Tracer, K.Functionalize)
            assert op(x)[0] == "func"
            with ExcludeDispatchKeyGuard(K.Functionalize):
                assert op(x)[0] == "tracer"
                with ExcludeDispatchKeyGuard(DispatchKeySet(K.Tracer, K.Functionalize)):
                    assert op(x)[0] == "cpu"
                assert op(x)[0] == "tracer"
            assert op(x)[0] == "func"
        assert local_include_set() == DispatchKeySet(K.Tracer)
        assert op(x)[0] == "tracer"
    assert local_include_set() == DispatchKeySet()
    assert local_exclude_set() == DispatchKeySet()
    assert op(x)[0] == "cpu"


def test_guards_restore_on_exception(lib, no_fallback):
    no_fallback(K.Tracer)
    op = define(lib)
    lib.impl(op, tag("cpu"), "CPU", with_keyset=True)
    lib.impl(op, tag("tracer"), "Tracer", with_keyset=True)
    x = fnx.tensor([1.0])
    with pytest.raises(ValueError, match="boom"):
        with IncludeDispatchKeyGuard(K.Tracer):
            with ExcludeDispatchKeyGuard(K.AutogradCPU):
                raise ValueError("boom")
    assert local_include_set() == DispatchKeySet()
    assert local_exclude_set() == DispatchKeySet()
    # an error raised by a kernel under a guard restores too
    lib.impl(op, lambda ks, x: 1 / 0, "Tracer", with_keyset=True)
    with pytest.raises(ZeroDivisionError):
        with IncludeDispatchKeyGuard(K.Tracer):
            op(x)
    assert op(x)[0] == "cpu"


def test_guards_are_thread_local(lib, no_fallback):
    no_fallback(K.Tracer)
    op = define(lib)
    lib.impl(op, tag("cpu"), "CPU", with_keyset=True)
    lib.impl(op, tag("tracer"), "Tracer", with_keyset=True)
    x = fnx.tensor([1.0])
    seen = {}

    def other_thread(name):
        seen[name] = (op(x)[0], local_include_set(), local_exclude_set())

    with IncludeDispatchKeyGuard(K.Tracer), ExcludeDispatchKeyGuard(K.AutogradCPU):
        t = threading.Thread(target=other_thread, args=("a",))
        t.start()
        t.join()
        assert op(x)[0] == "tracer"
    assert seen["a"] == ("cpu", DispatchKeySet(), DispatchKeySet())

    # and a guard held by another thread is not seen here
    entered, release = threading.Event(), threading.Event()

    def holder():
        with IncludeDispatchKeyGuard(K.Tracer):
            seen["b"] = op(x)[0]
            entered.set()
            release.wait(5)

    t = threading.Thread(target=holder)
    t.start()
    assert entered.wait(5)
    try:
        assert op(x)[0] == "cpu"
        assert local_include_set() == DispatchKeySet()
    finally:
        release.set()
        t.join()
    assert seen["b"] == "tracer"


# --------------------------------------------------------------------------- resolution order

def test_step1_direct_kernel_beats_composite_explicit(lib):
    op = define(lib)
    lib.impl(op, tag("cpu"), "CPU", with_keyset=True)
    lib.impl(op, tag("explicit"), "CompositeExplicitAutograd", with_keyset=True)
    assert op(make(K.CPU)) == ("cpu", K.CPU)
    assert op(make(K.Meta)) == ("explicit", K.Meta)


def test_step2_composite_explicit_beats_composite_implicit(lib):
    op = define(lib)
    lib.impl(op, tag("explicit"), "CompositeExplicitAutograd", with_keyset=True)
    lib.impl(op, tag("implicit"), "CompositeImplicitAutograd", with_keyset=True)
    assert op(make(K.CPU)) == ("explicit", K.CPU)
    assert op(make(K.PrivateUse1)) == ("explicit", K.PrivateUse1)


def test_step3_composite_implicit_beats_the_key_fallback(lib):
    op = define(lib)
    plain = define(lib, "plain(Tensor x) -> Tensor")
    lib.impl(op, tag("implicit"), "CompositeImplicitAutograd", with_keyset=True)
    lib.fallback(lambda o, ks, *a, **kw: ("fallback", o.qualname), "PrivateUse1",
                 with_keyset=True)
    assert op(make(K.PrivateUse1)) == ("implicit", K.PrivateUse1)
    assert plain(make(K.PrivateUse1)) == ("fallback", "test_xyz::plain")


def test_step4_fallback_beats_the_error(lib):
    op = define(lib)
    with pytest.raises(NotImplementedError):
        op(make(K.PrivateUse1))
    lib.fallback(lambda o, x: ("fallback", o.qualname), "PrivateUse1")
    assert op(make(K.PrivateUse1)) == ("fallback", "test_xyz::foo")


def test_step5_error_when_nothing_applies(lib):
    op = define(lib, "foo.ovl(Tensor x) -> Tensor")
    lib.impl(op, tag("meta"), "Meta", with_keyset=True)
    lib.impl(op, tag("cuda"), "CUDA", with_keyset=True)
    with pytest.raises(NotImplementedError) as ei:
        op(make(K.CPU))
    msg = str(ei.value)
    assert "test_xyz::foo.ovl" in msg
    assert "'CPU'" in msg
    assert "Meta" in msg and "CUDA" in msg
    assert not op.has_kernel_for(K.CPU) and op.has_kernel_for(K.Meta)


def test_composite_explicit_applies_to_every_backend_key_only(lib, no_fallback):
    no_fallback(K.Tracer)
    op = define(lib)
    lib.impl(op, tag("explicit"), "CompositeExplicitAutograd", with_keyset=True)
    for key in (K.Meta, K.CPU, K.CUDA, K.PrivateUse1):
        assert op(make(key)) == ("explicit", key)
    # Autograd keys do not get it: they fall through to the backend (the ran-at key is CPU)
    assert op(make(K.CPU, requires_grad=True)) == ("explicit", K.CPU)
    # nor do other keys
    with IncludeDispatchKeyGuard(K.Tracer):
        with pytest.raises(NotImplementedError, match="'Tracer'"):
            op(make(K.CPU))


def test_composite_implicit_covers_autograd_unless_backend_has_a_kernel(lib):
    only = define(lib, "only(Tensor x) -> Tensor")
    both = define(lib, "both(Tensor x) -> Tensor")
    lib.impl(only, tag("implicit"), "CompositeImplicitAutograd", with_keyset=True)
    lib.impl(both, tag("implicit"), "CompositeImplicitAutograd", with_keyset=True)
    lib.impl(both, tag("cpu"), "CPU", with_keyset=True)
    g = make(K.CPU, requires_grad=True)
    # no CPU kernel: the decomposition runs at AutogradCPU (autograd sees the ops it calls)
    assert only(g) == ("implicit", K.AutogradCPU)
    assert only(make(K.CPU)) == ("implicit", K.CPU)
    # a direct CPU kernel: CompositeImplicit no longer applies to AutogradCPU
    assert both(g) == ("cpu", K.CPU)
    assert both(make(K.CPU)) == ("cpu", K.CPU)
    # ... but still to the other backends and their autograd keys
    assert both(make(K.Meta, requires_grad=True)) == ("implicit", K.AutogradMeta)


def test_composite_implicit_from_an_empty_key(lib):
    """``impl(op, fn)`` with no key registers CompositeImplicitAutograd, as in PyTorch."""
    op = define(lib)
    lib.impl(op, lambda x: "implicit")
    assert op(make(K.CPU)) == "implicit"
    assert op(make(K.PrivateUse1)) == "implicit"


def test_autograd_alias_covers_every_autograd_key(lib):
    op = define(lib)
    lib.impl(op, tag("cpu"), "CPU", with_keyset=True)
    lib.impl(op, tag("meta"), "Meta", with_keyset=True)
    lib.impl(op, tag("ag"), "Autograd", with_keyset=True)
    assert op(make(K.CPU, requires_grad=True)) == ("ag", K.AutogradCPU)
    assert op(make(K.Meta, requires_grad=True)) == ("ag", K.AutogradMeta)
    lib.impl(op, tag("agcpu"), "AutogradCPU", with_keyset=True)   # a direct kernel wins
    assert op(make(K.CPU, requires_grad=True)) == ("agcpu", K.AutogradCPU)
    assert op(make(K.Meta, requires_grad=True)) == ("ag", K.AutogradMeta)


def test_autocast_alias_covers_every_autocast_key(lib):
    op = define(lib)
    lib.impl(op, tag("cpu"), "CPU", with_keyset=True)
    lib.impl(op, tag("cast"), "Autocast", with_keyset=True)
    x = make(K.CPU)
    assert op(x) == ("cpu", K.CPU)
    for key in (K.AutocastCPU, K.AutocastCUDA):
        with IncludeDispatchKeyGuard(key):
            assert op(x) == ("cast", key)


def test_backend_select_is_in_every_keyset(lib):
    op = define(lib, "factory(int n) -> Tensor")
    with pytest.raises(NotImplementedError, match="no tensor arguments to test_xyz::factory"):
        op(3)
    lib.impl(op, lambda ks, n: ("select", ks.highest_priority_key(), n), "BackendSelect",
             with_keyset=True)
    assert op(3) == ("select", K.BackendSelect, 3)


# --------------------------------------------------------------------------- fallthrough

def test_per_op_fallthrough(lib, no_fallback):
    no_fallback(K.Tracer)
    op = define(lib)
    other = define(lib, "other(Tensor x) -> Tensor")
    for o in (op, other):
        lib.impl(o, tag("cpu"), "CPU", with_keyset=True)
    x = fnx.tensor([1.0])
    with IncludeDispatchKeyGuard(K.Tracer):
        with pytest.raises(NotImplementedError, match="Tracer"):
            op(x)
        lib.impl(op, fallthrough_kernel, "Tracer")
        assert op(x) == ("cpu", K.CPU)
        # only that op: the other one still has nothing at Tracer
        with pytest.raises(NotImplementedError, match="test_xyz::other"):
            other(x)
    assert op.has_kernel_for(K.Tracer)


def test_per_key_fallthrough(lib, no_fallback):
    no_fallback(K.Tracer)
    op = define(lib)
    other = define(lib, "other(Tensor x) -> Tensor")
    for o in (op, other):
        lib.impl(o, tag("cpu"), "CPU", with_keyset=True)
    lib.impl(other, tag("tracer"), "Tracer", with_keyset=True)
    lib.fallback(fallthrough_kernel, "Tracer")
    x = fnx.tensor([1.0])
    with IncludeDispatchKeyGuard(K.Tracer):
        assert op(x) == ("cpu", K.CPU)
        assert fnx.ops.aten.add.Tensor(x, x).tolist() == [2.0]
        # an op's own kernel still beats the key's fallthrough fallback
        assert other(x) == ("tracer", K.Tracer)


def test_fallthrough_keys_are_removed_from_the_redispatched_keyset(lib):
    """ADInplaceOrView and AutogradCPU fall through by default: the CPU kernel gets a
    keyset whose highest key is CPU."""
    op = define(lib)
    lib.impl(op, lambda ks, x: DispatchKeySet(ks), "CPU", with_keyset=True)
    ks = op(make(K.CPU, requires_grad=True))
    assert ks.highest_priority_key() is K.CPU
    assert K.AutogradCPU not in ks and K.ADInplaceOrView not in ks


# --------------------------------------------------------------------------- redispatch

def test_redispatch_below_a_key_reaches_the_backend(lib):
    op = define(lib)
    calls = []

    def autograd_kernel(ks, x):
        calls.append(ks.highest_priority_key())
        inner = op.redispatch(ks & below(K.AutogradCPU), x)
        return "wrapped", inner

    lib.impl(op, tag("cpu"), "CPU", with_keyset=True)
    lib.impl(op, autograd_kernel, "AutogradCPU", with_keyset=True)
    assert op(make(K.CPU, requires_grad=True)) == ("wrapped", ("cpu", K.CPU))
    assert calls == [K.AutogradCPU]
    # redispatching with a keyset that still holds the key would call the same kernel:
    # the mask is the kernel's job, the dispatcher does not strip it.
    assert op.redispatch(DispatchKeySet(K.CPU), make(K.CPU)) == ("cpu", K.CPU)


def test_redispatch_with_an_empty_keyset_raises(lib):
    op = define(lib)
    lib.impl(op, tag("cpu"), "CPU", with_keyset=True)
    with pytest.raises(NotImplementedError, match="test_xyz::foo"):
        op.redispatch(DispatchKeySet(), make(K.CPU))


# --------------------------------------------------------------------------- boxed fallbacks

def test_boxed_logging_fallback_sees_every_op(lib, no_fallback):
    no_fallback(K.Tracer)
    op = define(lib, "scale(Tensor x, *, float factor=2.0) -> Tensor")
    lib.impl(op, lambda x, factor=2.0: fnx.ops.aten.mul.Tensor(x, factor), "CPU")
    log = []

    def logger(o, ks, *args, **kwargs):
        log.append((o.qualname, ks.highest_priority_key(), args, kwargs))
        return o.redispatch(ks & below(K.Tracer), *args, **kwargs)

    lib.fallback(logger, "Tracer", with_keyset=True)
    x = fnx.tensor([1.0, 2.0])
    y = fnx.tensor([3.0, 4.0])
    with IncludeDispatchKeyGuard(K.Tracer):
        r1 = fnx.ops.aten.add.Tensor(x, y, alpha=2)
        r2 = op(x, factor=3.0)
    assert r1.tolist() == [7.0, 10.0]
    assert r2.tolist() == [3.0, 6.0]
    names = [entry[0] for entry in log]
    assert names[0] == "aten::add.Tensor"
    assert log[0][1] is K.Tracer
    assert log[0][2] == (x, y) and log[0][3] == {"alpha": 2}
    assert "test_xyz::scale" in names
    scale_entry = log[names.index("test_xyz::scale")]
    assert scale_entry[2] == (x,) and scale_entry[3] == {"factor": 3.0}
    # the kernel of scale calls mul under the guard: the fallback saw it too
    assert "aten::mul.Tensor" in names[names.index("test_xyz::scale"):]
    n = len(log)
    fnx.ops.aten.add.Tensor(x, y)            # outside the guard: not logged
    assert len(log) == n


def test_boxed_fallback_without_keyset_gets_op_and_args(lib):
    op = define(lib, "pair(Tensor a, int n=5) -> Tensor")
    seen = []
    lib.fallback(lambda o, *args, **kwargs: seen.append((o, args, kwargs)) or "done",
                 "PrivateUse1")
    t = make(K.PrivateUse1)
    assert op(t) == "done"
    assert op(t, 7) == "done"
    assert seen == [(op, (t, 5), {}), (op, (t, 7), {})]


def test_destroy_restores_the_previous_fallback(lib):
    op = define(lib)
    lib.fallback(lambda o, x: "first", "PrivateUse1")
    lib2 = Library("test_xyz", "FRAGMENT")
    lib2.fallback(lambda o, x: "second", "PrivateUse1")
    assert op(make(K.PrivateUse1)) == "second"
    lib2._destroy()
    assert op(make(K.PrivateUse1)) == "first"


# --------------------------------------------------------------------------- registration

def test_registration_after_the_first_call_changes_the_next_call(lib):
    op = define(lib)
    lib.impl(op, lambda x: "v1", "CPU")
    x = make(K.CPU)
    assert op(x) == "v1"
    entry = op.kernel_for(K.CPU)
    for _ in range(3):
        op(x)
        assert op.kernel_for(K.CPU) is entry      # calls never rebuild the table
    lib2 = Library("test_xyz", "FRAGMENT")
    lib2.impl(op, lambda x: "v2", "CPU")
    assert op.kernel_for(K.CPU) is not entry
    assert op(x) == "v2"
    lib2._destroy()
    assert op(x) == "v1"


def test_tables_are_computed_at_registration_not_per_call(lib, monkeypatch):
    op = define(lib)
    lib.impl(op, lambda x: "cpu", "CPU")
    x = make(K.CPU)
    count = []
    orig = dispatcher.OpOverload._resolve

    def counting(self, key):
        count.append(key)
        return orig(self, key)

    monkeypatch.setattr(dispatcher.OpOverload, "_resolve", counting)
    for _ in range(10):
        assert op(x) == "cpu"
    assert count == []
    lib.impl(op, lambda x: "meta", "Meta")
    assert sorted(count) == sorted(K)          # one resolution per runtime key
    count.clear()
    assert op(x) == "cpu" and op(make(K.Meta)) == "meta"
    assert count == []


def test_registering_a_fallback_updates_every_op(lib):
    a = define(lib, "a(Tensor x) -> Tensor")
    b = define(lib, "b(Tensor x) -> Tensor")
    t = make(K.PrivateUse1)
    for o in (a, b):
        with pytest.raises(NotImplementedError):
            o(t)
    lib.fallback(lambda o, x: o.name, "PrivateUse1")
    assert a(t) == "a" and b(t) == "b"


def test_destroy_removes_definitions(lib):
    define(lib, "gone(Tensor x) -> Tensor")
    lib._destroy()
    with pytest.raises(RuntimeError, match="test_xyz::gone"):
        dispatcher.get_op("test_xyz::gone")
    lib2 = Library("test_xyz", "DEF")           # the namespace may be defined again
    try:
        op = define(lib2, "gone(Tensor x) -> Tensor")
        lib2.impl(op, lambda x: "again", "CPU")
        assert fnx.ops.test_xyz.gone(make(K.CPU)) == "again"
    finally:
        lib2._destroy()


def test_library_argument_errors(lib):
    with pytest.raises(RuntimeError, match="Only a single Library"):
        Library("test_xyz", "DEF")
    with pytest.raises(RuntimeError, match="Only a single Library"):
        Library("aten", "DEF")
    with pytest.raises(ValueError, match="DEF, IMPL or FRAGMENT"):
        Library("test_xyz", "BOGUS")
    op = define(lib)
    with pytest.raises(ValueError, match="unknown dispatch key 'NoSuchKey'"):
        lib.impl(op, lambda x: x, "NoSuchKey")
    with pytest.raises(RuntimeError, match="DEF or FRAGMENT"):
        Library("test_xyz", "IMPL").define("bar(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="already defined"):
        lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(TypeError, match="expected a DispatchKey"):
        op.register("CPU", lambda ks, x: x)


# --------------------------------------------------------------------------- argument errors

def test_wrong_arity_names_the_op():
    add = fnx.ops.aten.add.Tensor
    x = fnx.tensor([1.0])
    with pytest.raises(TypeError, match=r"aten::add\.Tensor\(\) takes 2 positional arguments "
                                        r"but 3 were given"):
        add(x, x, x)
    with pytest.raises(TypeError, match=r"aten::add\.Tensor\(\) missing 1 required "
                                        r"positional argument: 'other'"):
        add(x)
    with pytest.raises(TypeError, match=r"aten::add\.Tensor\(\) got an unexpected keyword "
                                        r"argument 'beta'"):
        add(x, x, beta=2)
    with pytest.raises(TypeError, match=r"aten::add\.Tensor\(\) got multiple values for "
                                        r"argument 'other'"):
        add(x, x, other=x)
    # alpha is keyword-only in the schema
    with pytest.raises(TypeError, match=r"aten::add\.Tensor\(\) takes 2 positional"):
        add(x, x, 2)


def test_non_tensor_where_a_tensor_is_required(lib):
    x = fnx.tensor([1.0])
    with pytest.raises(TypeError, match=r"aten::add\.Tensor\(\): argument 'self' "
                                        r"\(position 1\) must be Tensor, not int"):
        fnx.ops.aten.add.Tensor(3, x)
    op = define(lib, "mm2(Tensor a, Tensor b) -> Tensor")
    lib.impl(op, lambda a, b: "ok", "CPU")
    with pytest.raises(TypeError, match=r"test_xyz::mm2\(\): argument 'b' \(position 2\) "
                                        r"must be Tensor, not float"):
        op(x, 2.5)
    with pytest.raises(TypeError, match=r"test_xyz::mm2\(\): argument 'a' \(position 1\) "
                                        r"must be Tensor, not NoneType"):
        op(None, x)
    lst = define(lib, "cat2(Tensor[] xs) -> Tensor")
    lib.impl(lst, lambda xs: "ok", "CPU")
    assert lst([x, x]) == "ok"
    with pytest.raises(TypeError, match=r"test_xyz::cat2\(\): argument 'xs' \(position 1\)"):
        lst([x, 3])
    opt = define(lib, "opt(Tensor a, Tensor? b=None) -> Tensor")
    lib.impl(opt, lambda a, b=None: "ok", "CPU")
    assert opt(x) == "ok" and opt(x, None) == "ok" and opt(x, x) == "ok"
    with pytest.raises(TypeError, match=r"test_xyz::opt\(\): argument 'b' \(position 2\) "
                                        r"must be Tensor, not str"):
        opt(x, "no")


def test_mm_type_errors_name_the_op():
    mm = getattr(fnx.ops.aten, "mm", None)
    if mm is None:
        pytest.skip("aten::mm is not defined yet")
    x = fnx.tensor([[1.0]])
    with pytest.raises(TypeError, match=r"aten::mm\(\) takes 2 positional arguments"):
        mm.default(x, x, x)
    with pytest.raises(TypeError, match=r"aten::mm\(\): argument 'mat2' \(position 2\) "
                                        r"must be Tensor, not int"):
        mm.default(x, 3)


def test_unknown_op_and_overload():
    with pytest.raises(AttributeError, match="aten::not_an_op"):
        fnx.ops.aten.not_an_op
    with pytest.raises(RuntimeError, match="aten::not_an_op"):
        dispatcher.get_op("aten::not_an_op")
    with pytest.raises(AttributeError, match="no_such_namespace"):
        fnx.ops.no_such_namespace
    with pytest.raises(AttributeError, match=r"'aten::add' has no overload 'Bogus'.*Tensor"):
        fnx.ops.aten.add.Bogus
    assert dispatcher.get_op("aten::add.Tensor") is fnx.ops.aten.add.Tensor


# --------------------------------------------------------------------------- packets

def test_packet_resolves_add_overloads(lib, no_fallback):
    no_fallback(K.Tracer)
    log = []

    def logger(o, ks, *args, **kwargs):
        log.append(o.qualname)
        return o.redispatch(ks & below(K.Tracer), *args, **kwargs)

    lib.fallback(logger, "Tracer", with_keyset=True)
    add = fnx.ops.aten.add
    x = fnx.tensor([1, 2])
    with IncludeDispatchKeyGuard(K.Tracer):
        r_tensor = add(x, fnx.tensor([10, 20]))
        r_scalar = add(x, 5, 2)
        out = fnx.tensor([0, 0])
        r_out = add(x, x, out=out)
    assert log[:3] == ["aten::add.Tensor", "aten::add.Scalar", "aten::add.out"]
    assert r_tensor.tolist() == [11, 22]
    assert r_scalar.tolist() == [11, 12]
    assert r_out is out and out.tolist() == [2, 4]
    assert set(add.overloads()) >= {"Tensor", "Scalar", "out"}


def test_packet_picks_the_first_overload_that_binds(lib):
    lib.define("bar.Tensor(Tensor x, Tensor y) -> Tensor")
    lib.define("bar.int(Tensor x, int y) -> Tensor")
    lib.define("bar.str(Tensor x, *, str mode) -> Tensor")
    for ov in ("Tensor", "int", "str"):
        lib.impl(f"bar.{ov}", lambda *a, _ov=ov, **k: _ov, "CPU")
    bar = fnx.ops.test_xyz.bar
    x = fnx.tensor([1.0])
    assert bar(x, x) == "Tensor"
    assert bar(x, 3) == "int"
    assert bar(x, mode="m") == "str"
    assert bar.overloads() == ["Tensor", "int", "str"]
    with pytest.raises(TypeError, match=r"test_xyz::bar\(\) received an invalid combination "
                                        r"of arguments") as ei:
        bar(x, 2.5)
    assert "test_xyz::bar.int(): argument 'y' (position 2) must be int, not float" in \
        str(ei.value)


# --------------------------------------------------------------------------- keysets

def test_dispatch_keyset_api():
    ks = DispatchKeySet(K.CPU, K.AutogradCPU, K.ADInplaceOrView)
    assert ks.highest_priority_key() is K.AutogradCPU
    assert list(ks) == [K.AutogradCPU, K.ADInplaceOrView, K.CPU]     # highest first
    assert len(ks) == 3
    assert K.CPU in ks and K.CUDA not in ks
    ks2 = ks.add(K.Tracer)
    assert K.Tracer in ks2 and K.Tracer not in ks          # immutable: add returns a new set
    assert ks2.highest_priority_key() is K.AutogradCPU
    ks3 = ks.remove(K.AutogradCPU)
    assert ks3.highest_priority_key() is K.ADInplaceOrView
    assert ks3.remove(K.AutogradCPU) == ks3                # removing an absent key: no-op
    assert DispatchKeySet().highest_priority_key() is None
    assert list(DispatchKeySet()) == [] and len(DispatchKeySet()) == 0
    assert DispatchKeySet([K.Meta, K.CUDA]) == DispatchKeySet(K.CUDA, K.Meta)
    assert int(DispatchKeySet(K.CPU)) == 1 << K.CPU
    assert DispatchKeySet(1 << K.CUDA) == DispatchKeySet(K.CUDA)
    # set algebra with keysets, bit masks and single keys
    assert (ks & below(K.AutogradCPU)) == DispatchKeySet(K.ADInplaceOrView, K.CPU)
    assert isinstance(ks & below(K.CPU), DispatchKeySet)
    assert (ks3 | K.CUDA) == DispatchKeySet(K.ADInplaceOrView, K.CPU, K.CUDA)
    assert (ks - K.AutogradCPU) == ks3
    assert (ks - DispatchKeySet(K.CPU, K.ADInplaceOrView)) == DispatchKeySet(K.AutogradCPU)
    assert (ks & K.CPU) == DispatchKeySet(K.CPU)
    assert repr(ks) == "DispatchKeySet(AutogradCPU, ADInplaceOrView, CPU)"
    assert below(K.CPU) == 1 << K.Meta
    assert below(K.Meta) == 0


def test_key_order_matches_the_design():
    order = [K.Meta, K.CPU, K.CUDA, K.PrivateUse1, K.BackendSelect, K.Tracer,
             K.Functionalize, K.ADInplaceOrView, K.AutogradCPU, K.AutocastCPU]
    assert order == sorted(order)
    assert K.AutocastCUDA > K.AutogradCUDA > K.ADInplaceOrView


def test_tensor_keysets():
    x = fnx.tensor([1.0, 2.0])
    assert x._keyset == DispatchKeySet(K.CPU, K.ADInplaceOrView)
    x.requires_grad_(True)
    assert x._keyset == DispatchKeySet(K.CPU, K.ADInplaceOrView, K.AutogradCPU)
    assert x._keyset.highest_priority_key() is K.AutogradCPU
