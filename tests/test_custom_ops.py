"""Custom operators (``fnx.library.custom_op``): schema inference, dispatch, tracing,
autograd through ``register_autograd``, lowering into compiled programs (a registered JAX
rule, or the ``pure_callback`` fallback), the cuda backend, mutation, by-name registration
and the coverage table. References are NumPy."""
from typing import List, Optional, Sequence

import jax.numpy as jnp
import numpy as np
import pytest

import fnx
from fnx.coverage import coverage_rows
from fnx.library import custom_ops as C


@pytest.fixture
def made():
    """Ops a test defines are removed after it."""
    ops = []
    yield ops
    for op in ops:
        op._destroy()


def _np_sin_scale(x, s):
    return np.sin(x) * s


def define_sin_scale(made, ns="ct", lowering=True, autograd=True):
    @fnx.library.custom_op(f"{ns}::sin_scale", mutates_args=(), device_types="cpu")
    def sin_scale(x: fnx.Tensor, s: float) -> fnx.Tensor:
        return fnx.from_numpy(np.sin(x.numpy(force=True)) * s)
    made.append(sin_scale)

    @sin_scale.register_fake
    def _(x, s):
        return fnx.empty_like(x)

    if autograd:
        def setup_context(ctx, inputs, output):
            x, s = inputs
            ctx.save_for_backward(x)
            ctx.s = s

        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x.cos() * ctx.s, None
        sin_scale.register_autograd(backward, setup_context=setup_context)
    if lowering:
        @sin_scale.register_lowering
        def _(x, s):
            return jnp.sin(x) * s
    return sin_scale


# ----------------------------------------------------------------------------- schema

def test_infer_schema_from_type_hints():
    def f(x: fnx.Tensor, w: Optional[fnx.Tensor], ts: Sequence[fnx.Tensor],
          ls: List[fnx.Tensor], n: int, p: float, flag: bool, mode: str,
          dims: Sequence[int], *, k: int = 3, name: str = "a") -> fnx.Tensor: ...
    assert C.infer_schema(f, mutates_args=()) == (
        '(Tensor x, Tensor? w, Tensor[] ts, Tensor[] ls, int n, float p, bool flag, str mode, '
        'int[] dims, *, int k=3, str name="a") -> Tensor')

    def g(x: fnx.Tensor, out: fnx.Tensor, buf: fnx.Tensor) -> tuple[fnx.Tensor, fnx.Tensor]: ...
    assert C.infer_schema(g, mutates_args=("out", "buf")) == \
        "(Tensor x, Tensor(a!) out, Tensor(b!) buf) -> (Tensor, Tensor)"

    def h(x: fnx.Tensor) -> None: ...
    assert C.infer_schema(h, mutates_args="unknown") == "(Tensor(a!) x) -> ()"


@pytest.mark.parametrize("fn, match", [
    (lambda: None, "needs a return type"),
])
def test_infer_schema_missing_return(fn, match):
    with pytest.raises(ValueError, match=match):
        C.infer_schema(fn, mutates_args=())


def test_schema_errors_name_the_op_and_the_problem(made):
    def no_hint(x) -> fnx.Tensor: ...
    with pytest.raises(ValueError, match=r"ct::bad.*'x' has no type hint"):
        fnx.library.custom_op("ct::bad", no_hint, mutates_args=())

    def bad_hint(x: dict) -> fnx.Tensor: ...
    with pytest.raises(ValueError, match="unsupported type hint"):
        fnx.library.custom_op("ct::bad", bad_hint, mutates_args=())

    def ok(x: fnx.Tensor) -> fnx.Tensor: ...
    with pytest.raises(ValueError, match="namespace::op_name"):
        fnx.library.custom_op("no_namespace", ok, mutates_args=())
    with pytest.raises(ValueError, match="not parameters"):
        fnx.library.custom_op("ct::bad", ok, mutates_args=("y",))
    with pytest.raises(ValueError, match="mutates_args must be"):
        fnx.library.custom_op("ct::bad", ok, mutates_args=None)
    with pytest.raises(RuntimeError, match="fnx's own"):
        fnx.library.custom_op("aten::add", ok, mutates_args=())
    made.append(fnx.library.custom_op("ct::once", ok, mutates_args=()))
    with pytest.raises(RuntimeError, match="already defined"):
        fnx.library.custom_op("ct::once", ok, mutates_args=())


def test_explicit_schema(made):
    op = fnx.library.custom_op("ct::axpy", lambda a, x, y: x * a + y, mutates_args=(),
                               schema="(float a, Tensor x, Tensor y) -> Tensor")
    made.append(op)
    x, y = np.array([1., 2.], np.float32), np.array([3., 5.], np.float32)
    out = fnx.ops.ct.axpy(2.0, fnx.tensor(x), fnx.tensor(y))
    np.testing.assert_allclose(out.numpy(), 2 * x + y)
    assert str(op.schema) == "axpy(float a, Tensor x, Tensor y) -> Tensor"
    with pytest.raises(TypeError):
        op(2.0, fnx.tensor(x))          # y missing


# ----------------------------------------------------------------------------- eager, trace

def test_eager_cpu_and_ops_namespace(made):
    op = define_sin_scale(made)
    x = np.linspace(-2, 2, 7).astype(np.float32)
    np.testing.assert_allclose(op(fnx.tensor(x), 1.5).numpy(), _np_sin_scale(x, 1.5), rtol=1e-6)
    assert fnx.ops.ct.sin_scale.default is op._opoverload
    np.testing.assert_allclose(fnx.ops.ct.sin_scale(fnx.tensor(x), 2.0).numpy(),
                               _np_sin_scale(x, 2.0), rtol=1e-6)


def test_traces_with_its_fake(made):
    op = define_sin_scale(made)
    g = fnx.decompose(lambda x: op(x * 2, 3.0).sum(), fnx.ones(4, 5), to="prims")
    calls = [n for n in g.calls() if n.target is op._opoverload]
    assert len(calls) == 1 and calls[0].meta.shape == (4, 5)


def test_no_fake_means_no_trace(made):
    @fnx.library.custom_op("ct::nofake", mutates_args=(), device_types="cpu")
    def nofake(x: fnx.Tensor) -> fnx.Tensor:
        return fnx.from_numpy(x.numpy(force=True) + 1)
    made.append(nofake)
    with pytest.raises(Exception, match="ct::nofake"):
        fnx.decompose(lambda x: nofake(x), fnx.ones(2), to="prims")


def test_register_autograd_matches_finite_differences(made):
    op = define_sin_scale(made)
    xv = np.array([0.3, -1.2, 2.0])
    x = fnx.tensor(xv, dtype=fnx.float64, requires_grad=True)
    op(x, 2.5).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xv) * 2.5, rtol=1e-12)
    x2 = fnx.tensor(xv, dtype=fnx.float64, requires_grad=True)
    assert fnx.autograd.gradcheck(lambda t: op(t, 0.7), (x2,))


def test_no_autograd_refuses_backward_naming_the_op(made):
    op = define_sin_scale(made, autograd=False)
    x = fnx.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="ct::sin_scale"):
        op(x, 1.0).sum().backward()


def test_backward_with_wrong_gradient_count(made):
    op = define_sin_scale(made, autograd=False)
    op.register_autograd(lambda ctx, g: g)       # two inputs, one gradient
    x = fnx.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"ct::sin_scale.*expected one per input"):
        op(x, 1.0).sum().backward()


def test_multiple_outputs_and_tensor_lists(made):
    @fnx.library.custom_op("ct::split_sum", mutates_args=(), device_types="cpu")
    def split_sum(xs: Sequence[fnx.Tensor]) -> tuple[fnx.Tensor, fnx.Tensor]:
        arrs = [x.numpy(force=True) for x in xs]
        return fnx.from_numpy(sum(arrs)), fnx.from_numpy(np.stack(arrs))
    made.append(split_sum)

    @split_sum.register_fake
    def _(xs):
        return fnx.empty_like(xs[0]), fnx.empty(len(xs), *xs[0].shape)

    a, b = np.array([1., 2.], np.float32), np.array([10., 20.], np.float32)
    s, st = split_sum([fnx.tensor(a), fnx.tensor(b)])
    np.testing.assert_allclose(s.numpy(), a + b)
    np.testing.assert_allclose(st.numpy(), np.stack([a, b]))
    f = fnx.compile(lambda x, y: split_sum([x, y * 2]))
    s, st = f(fnx.tensor(a), fnx.tensor(b))
    np.testing.assert_allclose(s.numpy(), a + 2 * b)
    np.testing.assert_allclose(st.numpy(), np.stack([a, 2 * b]))


# ----------------------------------------------------------------------------- compiled

def test_lowering_fuses_into_one_program(made):
    op = define_sin_scale(made)
    x = np.linspace(-1, 1, 6).astype(np.float32)
    f = fnx.compile(lambda t: (op(t, 2.0) + 1).exp())
    np.testing.assert_allclose(f(fnx.tensor(x)).numpy(), np.exp(_np_sin_scale(x, 2.0) + 1),
                               rtol=1e-5)
    report = f.explain(fnx.tensor(x))
    assert len(report.regions) == 1 and not report.fallback_ops
    assert report.fusions[0]["kernels"] == 1


def test_without_lowering_runs_through_pure_callback(made):
    op = define_sin_scale(made, lowering=False)
    ran = []
    kernel = op._opoverload.kernels[fnx.core.dispatch_key.DispatchKey.CPU]
    op.register_kernel("cpu", lambda x, s: (ran.append(1), kernel(0, x, s))[1])
    x = np.linspace(-1, 1, 6).astype(np.float32)
    f = fnx.compile(lambda t: (op(t, 2.0) + 1).exp())
    np.testing.assert_allclose(f(fnx.tensor(x)).numpy(), np.exp(_np_sin_scale(x, 2.0) + 1),
                               rtol=1e-5)
    assert ran, "the CPU kernel ran inside the compiled program"
    report = f.explain(fnx.tensor(x))
    assert len(report.regions) == 1 and not report.fallback_ops


def test_compiled_training_step_uses_register_autograd(made):
    op = define_sin_scale(made)
    xv = np.array([0.2, 0.4, -0.9], np.float32)
    w = fnx.tensor(xv, requires_grad=True)

    def step():
        w.grad = None
        loss = op(w, 3.0).sum()
        loss.backward()
        return loss
    f = fnx.compile(step)
    loss = f()
    np.testing.assert_allclose(loss.item(), _np_sin_scale(xv, 3.0).sum(), rtol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), np.cos(xv) * 3.0, rtol=1e-5)


def define_round_ste(made, ns, lowering=True):
    """``round(x * scale) / scale`` whose registered backward is a straight-through estimator
    scaled by 0.5: deliberately not the true derivative (zero almost everywhere), so the
    gradient says which one ran."""
    @fnx.library.custom_op(f"{ns}::round_ste", mutates_args=(), device_types="cpu")
    def round_ste(x: fnx.Tensor, scale: float) -> fnx.Tensor:
        return fnx.from_numpy(np.round(x.numpy(force=True) * scale) / scale)
    made.append(round_ste)
    round_ste.register_fake(lambda x, scale: fnx.empty_like(x))
    round_ste.register_autograd(lambda ctx, g: (g * 0.5, None))
    if lowering:
        round_ste.register_lowering(lambda x, scale: jnp.round(x * scale) / scale)
    return round_ste


@pytest.mark.parametrize("lowering", [True, False], ids=["lowered", "callback"])
def test_compiled_backward_calls_the_registered_backward(made, lowering):
    op = define_round_ste(made, "ste_" + str(lowering).lower(), lowering)
    x0 = np.array([0.3, -1.7, 2.2, 0.9, -0.1])
    # d/dx sum(ste(x) * x) = 0.5 (the registered backward) + round(2x) / 2
    want = 0.5 * x0 + np.round(x0 * 2) / 2
    grads = []

    def f(t):
        return (op(t, 2.0) * t).sum()
    for compiled in (False, True):
        x = fnx.tensor(x0, requires_grad=True)
        y = (fnx.compile(f) if compiled else f)(x)
        assert y.requires_grad
        y.backward()
        np.testing.assert_allclose(y.item(), (np.round(x0 * 2) / 2 * x0).sum(), rtol=1e-12)
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], want, rtol=1e-12)
    np.testing.assert_allclose(grads[1], want, rtol=1e-12)


def test_compiled_training_step_with_a_straight_through_op(made):
    op = define_round_ste(made, "ste_step")
    w0 = np.array([0.26, -0.74, 1.1], np.float32)
    w = fnx.tensor(w0, requires_grad=True)
    opt = fnx.optim.SGD([w], lr=0.1)

    def step():
        opt.zero_grad()
        loss = (op(w, 4.0) ** 2).sum()
        loss.backward()
        opt.step()
        return loss
    f = fnx.compile(step)
    f()
    q = np.round(w0 * 4) / 4
    np.testing.assert_allclose(w.detach().numpy(), w0 - 0.1 * (2 * q * 0.5), rtol=1e-6)


@pytest.mark.skipif(not fnx.cuda.is_available(),
                    reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")
def test_cuda_backend(made):
    op = define_sin_scale(made, ns="ct_cuda")
    x = np.linspace(-1, 1, 5).astype(np.float32)
    out = op(fnx.tensor(x, device="cuda"), 2.0)       # through its lowering, jitted
    assert out.device.type == "cuda"
    np.testing.assert_allclose(out.cpu().numpy(), _np_sin_scale(x, 2.0), rtol=1e-5)
    xg = fnx.tensor(x, device="cuda", requires_grad=True)
    op(xg, 2.0).sum().backward()
    np.testing.assert_allclose(xg.grad.cpu().numpy(), np.cos(x) * 2.0, rtol=1e-5)
    op.register_kernel("cuda", lambda t, s: t.sin() * s + 100)   # a kernel of its own
    np.testing.assert_allclose(op(fnx.tensor(x, device="cuda"), 2.0).cpu().numpy(),
                               _np_sin_scale(x, 2.0) + 100, rtol=1e-5)


# ----------------------------------------------------------------------------- mutation, by name

def test_declared_mutation_bumps_the_version(made):
    @fnx.library.custom_op("ct::double_into", mutates_args=("out",), device_types="cpu")
    def double_into(x: fnx.Tensor, out: fnx.Tensor) -> None:
        out.numpy()[...] = 2 * x.numpy()
    made.append(double_into)
    o = fnx.zeros(3)
    v = o._version
    assert double_into(fnx.tensor([1., 2., 3.]), o) is None
    np.testing.assert_array_equal(o.numpy(), [2., 4., 6.])
    assert o._version > v


def test_registration_by_name(made):
    @fnx.library.custom_op("ct::plus", mutates_args=(), device_types="cpu")
    def plus(x: fnx.Tensor, y: fnx.Tensor) -> fnx.Tensor:
        return fnx.from_numpy(x.numpy(force=True) + y.numpy(force=True))
    made.append(plus)
    fnx.library.register_fake("ct::plus", lambda x, y: fnx.empty_like(x))
    fnx.library.register_autograd("ct::plus", lambda ctx, g: (g, g * 2))
    fnx.library.register_lowering(fnx.ops.ct.plus.default, lambda x, y: x + y)
    fnx.library.register_kernel(fnx.ops.ct.plus, "cpu",
                                lambda x, y: fnx.from_numpy(x.numpy(force=True) +
                                                            y.numpy(force=True)))
    a = fnx.tensor([1., 2.], requires_grad=True)
    b = fnx.tensor([3., 4.], requires_grad=True)
    plus(a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [1., 1.])
    np.testing.assert_array_equal(b.grad.numpy(), [2., 2.])
    f = fnx.compile(lambda x, y: plus(x, y) * 2)
    np.testing.assert_array_equal(f(fnx.tensor([1., 2.]), fnx.tensor([3., 4.])).numpy(),
                                  [8., 12.])
    with pytest.raises(ValueError, match="not a custom op"):
        fnx.library.register_fake("aten::add.Tensor", lambda x, y: x)
    with pytest.raises(ValueError, match="unknown device type"):
        plus.register_kernel("tpu", lambda x, y: x)
    with pytest.raises(ValueError, match="target='jax'"):
        plus.register_lowering(lambda x, y: x, target="triton")


def test_coverage_lists_custom_ops(made):
    define_sin_scale(made)
    rows = {r["op"]: r for r in coverage_rows(run=False, level="aten")}
    row = rows["ct.sin_scale.default"]
    assert row["schema"] == "sin_scale(Tensor x, float s) -> Tensor"
    assert "jax" in row["lowering"]


@pytest.mark.parametrize("lowered", [False, True])
def test_a_writing_op_compiles_through_its_functional_companion(made, lowered):
    @fnx.library.custom_op("ct::scale_into", mutates_args=("out",), device_types="cpu")
    def scale_into(x: fnx.Tensor, out: fnx.Tensor, s: float) -> fnx.Tensor:
        out.numpy(force=True)[...] = x.numpy(force=True) * s
        return fnx.from_numpy(x.numpy(force=True).sum(keepdims=True))
    made.append(scale_into)
    scale_into.register_fake(lambda x, out, s: fnx.empty(1))
    assert str(fnx.ops.ct.scale_into_functional.default.schema) == \
        "scale_into_functional(Tensor x, Tensor out, float s) -> (Tensor, Tensor)"
    if lowered:     # outputs first, then the new value of each written argument
        scale_into.register_lowering(lambda x, out, s: (x.sum(keepdims=True), x * s))

    def f(x, buf):
        total = scale_into(x + 1, buf, 3.0)
        return buf * 2 + total
    xv = np.array([1., 2., 4.], np.float32)
    buf = fnx.zeros(3)
    cf = fnx.compile(f)
    got = cf(fnx.tensor(xv), buf)
    np.testing.assert_allclose(buf.numpy(), (xv + 1) * 3)
    np.testing.assert_allclose(got.numpy(), (xv + 1) * 6 + (xv + 1).sum())
    report = cf.explain(fnx.tensor(xv), fnx.zeros(3))
    assert len(report.regions) == 1 and not report.fallback_ops


@pytest.mark.parametrize("lowered", [False, True])
def test_writing_a_tensor_list_and_an_optional_compiles(made, lowered):
    @fnx.library.custom_op("ct::acc_into", mutates_args=("bufs", "count"),
                           device_types="cpu")
    def acc_into(x: fnx.Tensor, bufs: List[fnx.Tensor],
                 count: Optional[fnx.Tensor]) -> fnx.Tensor:
        for i, b in enumerate(bufs):
            b.numpy(force=True)[...] += x.numpy(force=True) * (i + 1)
        if count is not None:
            count.numpy(force=True)[...] += 1
        return fnx.from_numpy(x.numpy(force=True).sum(keepdims=True))
    made.append(acc_into)
    acc_into.register_fake(lambda x, bufs, count: fnx.empty(1))
    # one flat list: the output, then each written tensor (none for an absent optional)
    assert str(fnx.ops.ct.acc_into_functional.default.schema) == \
        "acc_into_functional(Tensor x, Tensor[] bufs, Tensor? count) -> Tensor[]"
    if lowered:     # outputs, then a list per Tensor[] and None for an absent Tensor?
        acc_into.register_lowering(lambda x, bufs, count: (
            x.sum(keepdims=True), [b + x * (i + 1) for i, b in enumerate(bufs)],
            None if count is None else count + 1))

    def f(x, a, b, c):
        total = acc_into(x + 1, [a, b], c)
        return a * 2 + total

    def g(x, a):
        return acc_into(x, [a], None) * 3
    xv = np.array([1., 2., 4.], np.float32)
    a, b, c = fnx.zeros(3), fnx.ones(3), fnx.zeros(())
    cf = fnx.compile(f)
    got = cf(fnx.tensor(xv), a, b, c)
    np.testing.assert_allclose(a.numpy(), xv + 1)
    np.testing.assert_allclose(b.numpy(), 1 + 2 * (xv + 1))
    assert c.item() == 1
    np.testing.assert_allclose(got.numpy(), 2 * (xv + 1) + (xv + 1).sum())
    report = cf.explain(fnx.tensor(xv), fnx.zeros(3), fnx.ones(3), fnx.zeros(()))
    assert len(report.regions) == 1 and not report.fallback_ops
    a = fnx.zeros(3)
    cg = fnx.compile(g)
    np.testing.assert_allclose(cg(fnx.tensor(xv), a).numpy(), [3 * xv.sum()])
    np.testing.assert_allclose(a.numpy(), xv)
    assert not cg.explain(fnx.tensor(xv), fnx.zeros(3)).fallback_ops
