"""The CUDA backend (jax.Array tensors, functionalized in-place ops and views) and fnx.cuda.

Everything but the first test needs a cuda device: a JAX GPU, or the FNX_CUDA_ON_CPU=1
switch that maps cuda devices onto JAX's CPU devices (two of them).
"""
import jax
import numpy as np
import pytest

import fnx
import fnx.testing as ft
from fnx.backends.cuda import devices as cuda_devices
from fnx.backends.cuda import jit_kernel as _generic
from fnx.ir.variants import is_view_op

pytestmark = pytest.mark.skipif(not fnx.cuda.is_available(),
                                reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")


def cuda(x, i=0):
    return x.to(f"cuda:{i}")


def host(t):
    return t.cpu().numpy()


# ----------------------------------------------------------------------------- devices

def test_device_api():
    assert fnx.cuda.is_available() and fnx.cuda.device_count() >= 1
    assert fnx.cuda.current_device() == 0
    x = fnx.ones(2, device="cuda")
    assert x.device == fnx.device("cuda", 0) and x.is_cuda and not x.is_cpu
    assert x.get_device() == 0
    assert isinstance(fnx.cuda.get_device_name(), str)
    fnx.cuda.synchronize()


@pytest.mark.skipif(fnx.cuda.device_count() < 2, reason="one cuda device")
def test_second_device_and_current_device():
    x = fnx.arange(3, device="cuda:1")
    assert x.device == fnx.device("cuda:1") and x._data.devices() == {cuda_devices.jax_device(1)}
    y = x * 2
    assert y.device == fnx.device("cuda:1") and y._data.devices() == x._data.devices()
    with fnx.cuda.device(1):
        assert fnx.cuda.current_device() == 1
        assert fnx.zeros(1, device="cuda").device == fnx.device("cuda:1")
    assert fnx.cuda.current_device() == 0
    with pytest.raises(RuntimeError, match="found at least two devices, cuda:1 and cuda:0"):
        x + fnx.zeros(3, device="cuda:0")
    z = x.to("cuda:0")
    assert z.device == fnx.device("cuda:0") and z.tolist() == [0, 1, 2]
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        fnx.zeros(1, device="cuda:7")


def test_moves_and_dtypes_are_exact():
    a = fnx.tensor([[1, 2], [3, 4]])
    x = a.cuda()
    assert x.dtype is fnx.int64 and x._data.dtype == np.int64     # JAX would narrow it
    assert x.to("cuda:0") is x and x.cuda() is x
    assert x.to("cuda", copy=True) is not x
    assert x.cpu().device == fnx.device("cpu") and host(x).tolist() == [[1, 2], [3, 4]]
    assert x.to("cpu", fnx.float64).dtype is fnx.float64
    assert x.to(fnx.float16).device == fnx.device("cuda:0")
    assert x.to(fnx.float16).dtype is fnx.float16
    assert a.to("cuda:0", non_blocking=True).device == fnx.device("cuda:0")
    assert x.cpu().is_cpu and x.double().dtype is fnx.float64
    f = fnx.tensor([1.7, -2.5, -0.5]).cuda()      # truncation toward zero, as on CPU
    assert f.to(fnx.int32).tolist() == [1, -2, 0]
    b = fnx.tensor([0.0, 0.5]).cuda().bool()
    assert b.dtype is fnx.bool and b.tolist() == [False, True]
    bf = fnx.tensor([1.5, 2.25]).cuda().bfloat16()
    assert bf.dtype is fnx.bfloat16 and bf.tolist() == [1.5, 2.25]
    c = fnx.tensor([1 + 2j]).cuda()
    assert c.dtype is fnx.complex64 and c.tolist() == [1 + 2j]


def test_upload_does_not_alias_host_memory():
    a = fnx.zeros(1024)
    x = a.cuda()
    a.add_(1)
    assert x.sum().item() == 0.0
    b = x.cpu()
    b.add_(1)
    assert x.sum().item() == 0.0


def test_numpy_item_and_printing():
    x = fnx.tensor([1.5, 2.5]).cuda()
    with pytest.raises(TypeError, match="can't convert cuda device type tensor to numpy"):
        x.numpy()
    assert x[1].item() == 2.5 and float(x[0]) == 1.5 and x.tolist() == [1.5, 2.5]
    assert repr(x) == "tensor([1.5000, 2.5000], device='cuda:0')"
    assert repr(fnx.tensor([1, 2], dtype=fnx.int32).cuda()) == \
        "tensor([1, 2], device='cuda:0', dtype=fnx.int32)"
    assert bool(fnx.tensor([True]).cuda())
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted"):
        x.item()


def test_mixing_devices():
    x = fnx.ones(2, 3, device="cuda")
    with pytest.raises(RuntimeError, match=r"Expected all tensors to be on the same device, "
                                           r"but found at least two devices, cuda:0 and cpu!"):
        x + fnx.ones(2, 3)
    with pytest.raises(RuntimeError, match="cuda:0 and cpu"):
        fnx.ones(2, 3) * x
    with pytest.raises(RuntimeError, match="cuda:0 and cpu"):
        fnx.cat([x, fnx.ones(1, 3)])
    with pytest.raises(RuntimeError, match="cuda:0 and cpu"):
        x.add_(fnx.ones(2, 3))
    # 0-dim CPU tensors and Python scalars join any device
    for y in (x + fnx.tensor(2.0), fnx.tensor(2.0) + x, x + 2, 2 * x, x.add_(fnx.tensor(0.0))):
        assert y.device == fnx.device("cuda:0")
    assert host(x + fnx.tensor(2.0)).tolist() == [[3.0] * 3] * 2
    assert (x + fnx.tensor(2, dtype=fnx.int64)).dtype is fnx.float32


def test_factories_and_like_ops():
    assert fnx.zeros(2, 3, device="cuda").tolist() == [[0.0] * 3] * 2
    assert fnx.empty(2, device="cuda").shape == (2,)
    assert fnx.arange(4, device="cuda").dtype is fnx.int64
    assert fnx.full((2,), 7, device="cuda").tolist() == [7, 7]
    e = fnx.eye(2, device="cuda")
    assert e.device == fnx.device("cuda:0") and e.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    x = fnx.ones(2, device="cuda")
    assert fnx.zeros_like(x).device == x.device
    assert fnx.zeros_like(x, device="cpu").device == fnx.device("cpu")
    assert fnx.ones_like(fnx.ones(2), device="cuda").device == fnx.device("cuda:0")
    assert fnx.linspace(0, 1, 5, device="cuda").tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_data_dependent_ops_run_on_the_host():
    x = fnx.tensor([[0.0, 1.0], [2.0, 0.0]]).cuda()
    nz = fnx.nonzero(x)
    assert nz.device == x.device and nz.dtype is fnx.int64
    assert host(nz).tolist() == [[0, 1], [1, 0]]
    m = fnx.masked_select(x, x > 0)
    assert m.device == x.device and host(m).tolist() == [1.0, 2.0]
    assert x[x > 0].tolist() == [1.0, 2.0]


# ----------------------------------------------------------------------------- functionalization

def test_inplace_rebinds_and_bumps_the_version():
    x = fnx.ones(3, device="cuda")
    v0 = x._version
    r = x.add_(2)
    assert r is x and x._version == v0 + 1 and x.tolist() == [3.0, 3.0, 3.0]
    x.mul_(fnx.tensor([1.0, 2.0, 3.0]).cuda())
    assert x.tolist() == [3.0, 6.0, 9.0] and x._version == v0 + 2
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        fnx.ones(3, dtype=fnx.int64).cuda().add_(1.5)


def test_data_is_an_alias_outside_autograd():
    w = fnx.zeros(3, device="cuda", requires_grad=True)
    d = w.data
    assert not d.requires_grad and d.device == w.device
    d.add_(2)                         # PyTorch: .data shares the storage...
    w.data[0] = 7.0                   # ...also through a view of it
    assert w.tolist() == [7.0, 2.0, 2.0] and d.tolist() == [7.0, 2.0, 2.0]
    assert w._version == 0            # ...but not the version counter
    assert w.requires_grad and w.is_leaf
    t = fnx.arange(6.0, device="cuda").view(2, 3).t()
    assert t.data.stride() == t.stride() == (1, 3)


def test_no_partial_write_on_error():
    x = fnx.ones(2, 3, device="cuda")
    with pytest.raises(RuntimeError):
        x.add_(fnx.ones(4, device="cuda"))
    assert x.tolist() == [[1.0] * 3] * 2 and x._version == 0


def test_writes_through_views_reach_the_base_and_every_view():
    base = fnx.arange(12.0).view(3, 4).cuda()
    row, col, t = base[1], base[:, 2], base.t()
    row.mul_(10)
    expect = np.arange(12.0).reshape(3, 4)
    expect[1] *= 10
    np.testing.assert_array_equal(host(base), expect)
    np.testing.assert_array_equal(host(col), expect[:, 2])
    np.testing.assert_array_equal(host(t), expect.T)
    assert row._version == base._version == col._version == 1
    # a view of a view, written
    t[0, 1:].fill_(-1)
    expect[1:, 0] = -1
    np.testing.assert_array_equal(host(base), expect)
    np.testing.assert_array_equal(host(row), expect[1])
    # the base written: views follow
    base.zero_()
    assert host(row).tolist() == [0.0] * 4 and host(t).sum() == 0


def test_setitem_and_out():
    x = fnx.zeros(2, 3, device="cuda")
    x[:, 1] = 5
    x[0] = fnx.tensor([1.0, 2.0, 3.0])      # a CPU source, copied over
    assert x.tolist() == [[1.0, 2.0, 3.0], [0.0, 5.0, 0.0]]
    out = fnx.empty(0, device="cuda")
    r = fnx.add(x, 1, out=out)
    assert r is out and out.shape == (2, 3) and out.tolist() == [[2.0, 3.0, 4.0], [1.0, 6.0, 1.0]]
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        fnx.add(x, 1, out=fnx.empty(2, 3, dtype=fnx.int64, device="cuda"))


def test_copy_between_devices():
    x = fnx.zeros(3, device="cuda")
    x.copy_(fnx.tensor([1, 2, 3]))
    assert x.dtype is fnx.float32 and x.tolist() == [1.0, 2.0, 3.0]
    c = fnx.zeros(3, dtype=fnx.int64)
    c.copy_(x)
    assert c.device == fnx.device("cpu") and c.tolist() == [1, 2, 3]


def test_overlapping_write_is_refused():
    x = fnx.ones(3, device="cuda")
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        x.expand(2, 3).add_(1)


def test_as_strided_and_view_as_real_write_back():
    x = fnx.zeros(2, 3, device="cuda")
    x.as_strided((2, 2), (1, 2), 1).add_(1)
    c = fnx.zeros(2, 3)
    c.as_strided((2, 2), (1, 2), 1).add_(1)
    assert x.tolist() == c.tolist()
    z = fnx.tensor([1 + 1j, 2 + 2j]).cuda()
    fnx.view_as_real(z).mul_(2)
    assert z.tolist() == [2 + 2j, 4 + 4j]


def _view_cases():
    out = []
    for info in ft.entries():
        if info.variant not in (None, "functional") or not _is_view(info.op):
            continue
        dtype = fnx.float32 if fnx.float32 in info.dtypes else info.dtypes[0]
        for i, s in enumerate(info.sample_inputs("cpu", dtype)[:4]):
            marks = () if isinstance(s.input, fnx.Tensor) else pytest.mark.skip(
                reason="views of a list of tensors (broadcast_tensors): the write-through "
                       "harness takes one base tensor")
            out.append(pytest.param(info, s, id=f"{info.name}-{i}", marks=marks))
    return out


def _is_view(op):
    return is_view_op(op)


def _overlaps(t):
    """True when two elements of ``t`` share memory (PyTorch refuses writes to those)."""
    st = np.asarray(t.stride())
    pos = np.indices(tuple(t.shape)).reshape(t.ndim, -1).T @ st if t.ndim else np.zeros(1)
    return np.unique(pos).size != t.numel()


def _write_through(info, sample, overlap=None):
    """Take the view and another view of the base, write the first, read everything."""
    base = sample.input
    other = base.unsqueeze(0)
    v = info.op(base, *sample.args, **sample.kwargs)
    views = list(v) if isinstance(v, (list, tuple)) else [v]
    if views and views[0].numel():
        if overlap is None:
            overlap = _overlaps(views[0])
        if not overlap:
            views[0].add_(1.5)
        elif views[0].is_cuda:
            with pytest.raises(RuntimeError, match="more than one element of the written-to"):
                views[0].add_(1.5)
    return [base, other] + views, overlap


@pytest.mark.parametrize("info,sample", _view_cases() if fnx.cuda.is_available() else [])
def test_view_writes_match_cpu(info, sample):
    dev = ft.checks.to_device(sample, "cuda")
    want, overlap = _write_through(info, ft.checks.clone_sample(sample))
    got, _ = _write_through(info, dev, overlap)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert g.device == fnx.device("cuda:0") and g.dtype is w.dtype
        assert g.stride() == w.stride() or g.numel() <= 1
        np.testing.assert_array_equal(host(g), w.numpy())


# ----------------------------------------------------------------------------- kernels

def test_eager_kernels_are_cached_per_signature():
    x = fnx.randn(5, 7, device="cuda")
    fnx.tanh(x)
    before = _generic.cache_info()
    for _ in range(3):
        fnx.tanh(x)
    after = _generic.cache_info()
    assert after["misses"] == before["misses"] and after["hits"] == before["hits"] + 3
    fnx.tanh(fnx.randn(5, 8, device="cuda"))
    assert _generic.cache_info()["misses"] == after["misses"] + 2     # randn and tanh


def test_random_ops_follow_the_seed():
    fnx.manual_seed(7)
    a = fnx.rand(4, device="cuda")
    n = fnx.randn(3, device="cuda")
    fnx.manual_seed(7)
    assert fnx.rand(4, device="cuda").tolist() == a.tolist()
    assert fnx.randn(3, device="cuda").tolist() == n.tolist()
    assert fnx.rand(4, device="cuda").tolist() != a.tolist()
    fnx.cuda.manual_seed_all(3)
    b = fnx.empty(1000, device="cuda").uniform_(-1, 1)
    fnx.cuda.manual_seed(3)
    c = fnx.empty(1000, device="cuda").uniform_(-1, 1)
    assert b.tolist() == c.tolist() and -1 <= host(b).min() and host(b).max() < 1
    d = fnx.nn.functional.dropout(fnx.ones(1000, device="cuda"), 0.5)
    assert d.device == fnx.device("cuda:0")


def test_fork_rng_restores_the_cuda_generators():
    # Every visible cuda device's generator is forked by default (warned about when there
    # are several); ``devices=`` names the ones to fork, the others move on.
    fnx.manual_seed(2)
    with fnx.random.fork_rng(devices=[0]):
        inside = fnx.rand(5, device="cuda").tolist()
        fnx.rand(3)
    assert fnx.rand(5, device="cuda").tolist() == inside        # the draw is replayed
    fnx.manual_seed(2)
    fnx.rand(5, device="cuda")
    expected = fnx.rand(4, device="cuda").tolist()
    fnx.manual_seed(2)
    fnx.rand(5, device="cuda")
    with fnx.random.fork_rng(devices=[]):
        fnx.rand(4, device="cuda")
    assert fnx.rand(4, device="cuda").tolist() != expected     # not forked: moved on
    fnx.manual_seed(2)
    fnx.rand(5, device="cuda")
    with fnx.random.fork_rng():
        fnx.rand(4, device="cuda")
    assert fnx.rand(4, device="cuda").tolist() == expected
    with pytest.raises(ValueError, match="fork_rng: expected a cuda device"):
        with fnx.random.fork_rng(devices=["cpu"]):
            pass


def test_next_key_draws_from_the_devices_generator():
    # generator=None means the device's own generator, as for cuda's eager random ops:
    # reseeding the cuda generator replays the keys; the CPU generator is left alone.
    fnx.manual_seed(11)
    cpu_state = fnx.random.get_rng_state()
    fnx.cuda.manual_seed(5)
    a = fnx.random.next_key("cuda")
    fnx.cuda.manual_seed(5)
    b = fnx.random.next_key("cuda")
    assert a.device == fnx.device("cuda:0") and a.tolist() == b.tolist()
    assert fnx.random.get_rng_state().tolist() == cpu_state.tolist()
    # the generator is PyTorch's mt19937 seeded with 5, as NumPy's RandomState(5) seeds it
    expected = np.random.RandomState(5).randint(0, 1 << 32, size=2, dtype=np.uint64)
    assert a.tolist() == expected.astype(np.int64).tolist()


def test_compile_keeps_arrays_on_the_device():
    w = fnx.randn(4, 3).cuda()
    f = fnx.compile(lambda x: (x @ w).relu().sum(-1))
    x = fnx.randn(2, 4).cuda()
    r = f(x)
    assert r.device == fnx.device("cuda:0") and isinstance(r._data, jax.Array)
    np.testing.assert_allclose(host(r), np.maximum(host(x) @ host(w), 0).sum(-1), rtol=1e-5)
    # a buffer written in place by the compiled program is written back on the device
    buf = fnx.zeros(3, device="cuda")

    def step(x):
        buf.add_(x)
        return buf * 2
    g = fnx.compile(step)
    out = g(fnx.ones(3, device="cuda"))
    assert buf.tolist() == [1.0] * 3 and out.tolist() == [2.0] * 3 and out.is_cuda


def test_model_moves_and_trains():
    nn = pytest.importorskip("fnx.nn")
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).cuda()
    assert all(p.device == fnx.device("cuda:0") for p in model.parameters())
    x = fnx.randn(5, 4, device="cuda")
    target = fnx.tensor([0, 1, 2, 0, 1]).cuda()
    loss = nn.functional.cross_entropy(model(x), target)
    assert loss.device == fnx.device("cuda:0")
    loss.backward()
    for p in model.parameters():
        assert p.grad is not None and p.grad.device == p.device
    w = model[0].weight
    before = host(w.detach()).copy()
    with fnx.no_grad():
        w.sub_(0.1 * w.grad)
    np.testing.assert_allclose(host(w.detach()), before - 0.1 * host(w.grad), rtol=1e-6)
    # the same model on the CPU gives the same loss
    cpu_model = model.cpu()
    np.testing.assert_allclose(
        nn.functional.cross_entropy(cpu_model(x.cpu()), target.cpu()).item(),
        nn.functional.cross_entropy(model.cuda()(x), target).item(), rtol=1e-5)


def _cuda_training(compiled, momentum=0.9):
    nn = pytest.importorskip("fnx.nn")
    optim = pytest.importorskip("fnx.optim")
    fnx.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).cuda()
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=momentum)

    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()
    return model, (fnx.compile(step) if compiled else step)


def test_compiled_step_rebinds_parameters_without_copying(monkeypatch):
    x = fnx.randn(5, 4, device="cuda")
    y = fnx.tensor([0, 1, 2, 0, 1]).cuda()
    model, step = _cuda_training(True, momentum=0.0)
    eager_model, eager_step = _cuda_training(False, momentum=0.0)
    for _ in range(2):
        step(x, y)
        eager_step(x, y)
    copies = []
    original = fnx.Tensor.copy_
    monkeypatch.setattr(fnx.Tensor, "copy_",
                        lambda self, *a, **k: copies.append(self) or original(self, *a, **k))
    w = model[0].weight
    version = w._version
    ptr = w._data.unsafe_buffer_pointer()
    for _ in range(3):
        np.testing.assert_allclose(host(step(x, y)), host(eager_step(x, y)), rtol=1e-5)
        for p, q in zip(model.parameters(), eager_model.parameters()):
            np.testing.assert_allclose(host(p.detach()), host(q.detach()), rtol=1e-5, atol=1e-6)
    assert copies == [] and w._version == version + 3 and w.is_cuda
    assert w._data.unsafe_buffer_pointer() == ptr        # donated: updated in place


def test_compiled_step_updates_views_and_aliases_of_cuda_parameters():
    x = fnx.randn(5, 4, device="cuda")
    y = fnx.tensor([0, 1, 2, 0, 1]).cuda()
    model, step = _cuda_training(True)
    eager_model, eager_step = _cuda_training(False)
    step(x, y)
    eager_step(x, y)
    row = model[0].weight.detach()[2]
    alias = model[2].bias.data
    for _ in range(3):
        step(x, y)
        eager_step(x, y)
        np.testing.assert_allclose(host(row), host(eager_model[0].weight.detach())[2],
                                   rtol=1e-5)
        np.testing.assert_allclose(host(alias), host(eager_model[2].bias.detach()), rtol=1e-5)
    alias.fill_(0.5)            # and a write through the alias reaches the next step
    eager_model[2].bias.data.fill_(0.5)
    step(x, y)
    eager_step(x, y)
    np.testing.assert_allclose(host(model[2].bias.detach()),
                               host(eager_model[2].bias.detach()), rtol=1e-5)


def test_the_default_device_is_part_of_a_compiled_functions_key():
    # factories read the default device when traced: a program traced for cpu must not
    # serve a call under ``with fnx.device("cuda")`` (eager makes cuda tensors there)
    def f():
        return fnx.ones(2) * 3

    compiled = fnx.compile(f)
    assert compiled().device == fnx.device("cpu")
    with fnx.device("cuda"):
        eager, got = f(), compiled()
    assert got.device == eager.device == fnx.device("cuda:0")
    np.testing.assert_array_equal(got.cpu().numpy(), eager.cpu().numpy())
    assert compiled().device == fnx.device("cpu")


def test_tensor_made_on_cuda_inside_a_compiled_function_stays_on_cuda():
    # the device reaches the trace positionally (prims.device_put(x, device)): it must be
    # recorded, not the host data's cpu
    def f(x):
        return x + fnx.tensor([1.0, 2.0], device="cuda")

    x = fnx.ones(2, device="cuda")
    eager, compiled = f(x), fnx.compile(f)(x)
    assert compiled.device == eager.device == fnx.device("cuda:0")
    np.testing.assert_array_equal(compiled.cpu().numpy(), eager.cpu().numpy())
    made = fnx.compile(lambda x: fnx.tensor([3.0], device="cuda") * 2)(x)
    assert made.device == fnx.device("cuda:0")
    np.testing.assert_array_equal(made.cpu().numpy(), [6.0])
