"""Run with ``XLA_FLAGS=--xla_force_host_platform_device_count=8``: DeviceMesh,
distribute_tensor, ops on DTensors, distribute_module and a compiled data-parallel step
on 8 host devices in one process, checked against NumPy."""
import sys
import warnings

import numpy as np

import fnx
import fnx.distributed as dist
from fnx import nn
from fnx.distributed.fsdp import FSDPModule, fully_shard


def main():
    mesh = dist.init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    assert mesh.shape == (2, 4) and mesh.size() == 8 and mesh.size(1) == 4
    x = np.arange(8 * 12, dtype=np.float32).reshape(8, 12)
    d = dist.distribute_tensor(fnx.tensor(x), mesh, [dist.Shard(0), dist.Shard(1)])
    shards = d.local_shards()
    assert len(shards) == 8
    for k, s in enumerate(shards):              # mesh position (i, j) holds block (i, j)
        i, j = divmod(k, 4)
        np.testing.assert_array_equal(s.numpy(), x[4 * i:4 * i + 4, 3 * j:3 * j + 3])
    per_device = {s.device: s.data.nbytes for s in d._array.addressable_shards}
    assert len(per_device) == 8 and set(per_device.values()) == {x.nbytes // 8}
    np.testing.assert_array_equal(d.full_tensor().numpy(), x)
    # redistribute: replicate over dp, shard dim 1 over tp
    r = d.redistribute(placements=[dist.Replicate(), dist.Shard(1)])
    for k, s in enumerate(r.local_shards()):
        j = k % 4
        np.testing.assert_array_equal(s.numpy(), x[:, 3 * j:3 * j + 3])
    # both mesh dims on one tensor dim; int64 stays exact
    big = np.arange(16, dtype=np.int64) * (1 << 40)
    b = dist.distribute_tensor(fnx.tensor(big), mesh, [dist.Shard(0), dist.Shard(0)])
    assert [s.tolist() for s in b.local_shards()] == [big[2 * k:2 * k + 2].tolist()
                                                      for k in range(8)]
    assert b.full_tensor().dtype == fnx.int64
    for bad, kind in [([dist.Shard(0)], ValueError), ([dist.Shard(2), dist.Replicate()],
                                                      IndexError)]:
        try:
            dist.distribute_tensor(fnx.tensor(x), mesh, bad)
        except kind:
            pass
        else:
            raise AssertionError(f"{bad} did not raise {kind.__name__}")
    try:
        dist.distribute_tensor(fnx.ones(6), mesh, [dist.Shard(0), dist.Shard(0)])
    except ValueError as e:
        assert "does not split evenly into 8 shards" in str(e), e
    else:
        raise AssertionError("uneven shard did not raise")
    check_ops(mesh)
    check_eager_training(dist.init_device_mesh("cpu", (4,)))
    for n in (2, 4, 8):
        check_data_parallel_step(n)
    for n in (2, 8):
        check_fully_shard(n)
    print("spmd ok")


def check_ops(mesh2d):
    """Pointwise ops and matmul on DTensors keep the layout; values as NumPy's."""
    mesh = dist.init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
    x = np.arange(64, dtype=np.float32).reshape(16, 4) / 7
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    d = dist.distribute_tensor(fnx.tensor(x), mesh, [dist.Shard(0)])
    r = dist.distribute_tensor(fnx.tensor(w), mesh, [dist.Replicate()])
    for got, want in [(d * 2 + 1, x * 2 + 1), (fnx.relu(d - 3), np.maximum(x - 3, 0)),
                      (d.exp(), np.exp(x)), (d @ r, x @ w)]:
        assert isinstance(got, dist.DTensor) and got.placements == (dist.Shard(0),), got
        np.testing.assert_allclose(got.full_tensor().numpy(), want, rtol=1e-6)
        assert {s.data.shape[0] for s in got._array.addressable_shards} == {2}
    total = d.sum()
    assert isinstance(total, dist.DTensor) and total.placements == (dist.Replicate(),)
    np.testing.assert_allclose(total.full_tensor().item(), x.sum(), rtol=1e-6)
    assert d.mul_(3) is d                       # in place: the same DTensor, rebound
    assert d.placements == (dist.Shard(0),)
    np.testing.assert_allclose(d.full_tensor().numpy(), x * 3, rtol=1e-6)
    # on a 2-d mesh, matmul of a row-sharded by a replicated matrix stays row-sharded
    a = dist.distribute_tensor(fnx.tensor(x), mesh2d, [dist.Shard(0), dist.Replicate()])
    b = dist.distribute_tensor(fnx.tensor(w), mesh2d, [dist.Replicate(), dist.Replicate()])
    ab = a @ b
    assert ab.placements == (dist.Shard(0), dist.Replicate()), ab
    np.testing.assert_allclose(ab.full_tensor().numpy(), x @ w, rtol=1e-5)


B, LR, STEPS = 16, 0.1, 3


def make_model():
    fnx.manual_seed(3)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def numpy_step(w, x, y, with_loss=False):
    """One SGD step of mean((relu(x W1' + b1) W2' + b2 - y)^2) on the whole batch (and
    the loss before it)."""
    w1, b1, w2, b2 = w
    h = x @ w1.T + b1
    a = np.maximum(h, 0)
    out = a @ w2.T + b2
    dout = 2 * (out - y) / out.size
    dh = (dout @ w2) * (h > 0)
    grads = [dh.T @ x, dh.sum(0), dout.T @ a, dout.sum(0)]
    new = [p - LR * g for p, g in zip(w, grads)]
    return (new, float(np.mean((out - y) ** 2))) if with_loss else new


def check_eager_training(mesh):
    """Eager forward, backward and SGD step on DTensors: the gradients are DTensors with
    NumPy's values; the parameters stay replicated."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((B, 4)).astype(np.float32)
    y = rng.standard_normal((B, 2)).astype(np.float32)
    model = make_model()
    ref = [p.detach().numpy().astype(np.float64) for p in model.parameters()]
    model = dist.distribute_module(model, mesh)
    xs = dist.distribute_tensor(fnx.tensor(x), mesh, [dist.Shard(0)])
    ys = dist.distribute_tensor(fnx.tensor(y), mesh, [dist.Shard(0)])
    out = model(xs)
    assert isinstance(out, dist.DTensor) and out.placements == (dist.Shard(0),)
    nn.functional.mse_loss(out, ys).backward()
    new = numpy_step(ref, x.astype(np.float64), y.astype(np.float64))
    for p, q, r in zip(model.parameters(), ref, new):
        assert isinstance(p.grad, dist.DTensor)
        np.testing.assert_allclose(p.grad.full_tensor().numpy(), (q - r) / LR, rtol=1e-5,
                                   atol=1e-6)
    fnx.optim.SGD(model.parameters(), lr=LR).step()
    for p, r in zip(model.parameters(), new):
        assert p.placements == (dist.Replicate(),)
        np.testing.assert_allclose(p.full_tensor().numpy(), r, rtol=1e-5, atol=1e-6)


def check_data_parallel_step(n):
    """Batch Shard(0), parameters replicated, the step compiled: one program that XLA
    partitions over n devices (it inserts the gradient all-reduce); the weights equal
    full-batch SGD in NumPy."""
    mesh = dist.init_device_mesh("cpu", (n,), mesh_dim_names=("dp",))
    rng = np.random.default_rng(n)
    x = rng.standard_normal((B, 4)).astype(np.float32)
    y = rng.standard_normal((B, 2)).astype(np.float32)
    model = make_model()
    ref = [p.detach().numpy().astype(np.float64) for p in model.parameters()]
    model = dist.distribute_module(model, mesh)
    assert all(isinstance(p, dist.DTensor) and isinstance(p, nn.Parameter) and
               p.placements == (dist.Replicate(),) for p in model.parameters())
    opt = fnx.optim.SGD(model.parameters(), lr=LR)

    def step(xb, yb):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
        return loss
    compiled = fnx.compile(step)
    xs = dist.distribute_tensor(fnx.tensor(x), mesh, [dist.Shard(0)])
    ys = dist.distribute_tensor(fnx.tensor(y), mesh, [dist.Shard(0)])
    assert {s.data.shape for s in xs._array.addressable_shards} == {(B // n, 4)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no eager fallback
        for _ in range(STEPS):
            compiled(xs, ys)
            ref = numpy_step(ref, x.astype(np.float64), y.astype(np.float64))
    for p, q in zip(model.parameters(), ref):
        assert p.placements == (dist.Replicate(),)
        np.testing.assert_allclose(p.full_tensor().numpy(), q, rtol=1e-5, atol=1e-6)
    assert all(len(e.programs()) == 1 for e in compiled.entries())
    report = compiled.explain(xs, ys)
    assert len(report.regions) == 1 and not report.fallback_ops
    hlo = report.fusions[0]["hlo"]
    assert " all-reduce(" in hlo and f"f32[{B // n},4]" in hlo, hlo   # partitioned batch



def check_fully_shard(n):
    """fully_shard: parameters Shard(0) (1/n of the bytes per device), the compiled step
    gathers them and reduces the gradients back to shards; the losses of 10 steps equal
    full-batch SGD in NumPy; state_dict() holds full tensors and a model loaded from it
    trains on exactly as the original."""
    mesh = dist.init_device_mesh("cpu", (n,), mesh_dim_names=("fsdp",))
    rng = np.random.default_rng(10 + n)
    x = rng.standard_normal((B, 8)).astype(np.float32)
    y = rng.standard_normal((B, 2)).astype(np.float32)

    def build(seed):
        fnx.manual_seed(seed)
        return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8), nn.ReLU(),
                             nn.Linear(8, 2))
    model = build(4)
    ref = [p.detach().numpy().astype(np.float64) for p in model.parameters()]
    model = fully_shard(model, mesh=mesh)
    assert isinstance(model, FSDPModule) and isinstance(model, nn.Sequential)
    for p in model.parameters():
        # every dim 0 is sharded; one that does not split evenly (the last layer's 2 rows
        # over 8 devices) is padded: ceil(rows / n) rows on each device
        assert isinstance(p, dist.DTensor) and p.placements == (dist.Shard(0),), (p.shape, p)
        per_device = {s.data.nbytes for s in p._array.addressable_shards}
        row = p.element_size() * p.numel() // p.shape[0]
        assert per_device == {-(-p.shape[0] // n) * row}, per_device

    def trainer(m):
        opt = fnx.optim.SGD(m.parameters(), lr=LR)

        def step(xb, yb):
            opt.zero_grad()
            loss = nn.functional.mse_loss(m(xb), yb)
            loss.backward()
            opt.step()
            return loss
        return fnx.compile(step)
    step = trainer(model)
    xs = dist.distribute_tensor(fnx.tensor(x), mesh, [dist.Shard(0)])
    ys = dist.distribute_tensor(fnx.tensor(y), mesh, [dist.Shard(0)])
    x64, y64 = x.astype(np.float64), y.astype(np.float64)

    def numpy_step3(w):         # the 3-layer MLP, by hand
        w1, b1, w2, b2, w3, b3 = w
        h1 = x64 @ w1.T + b1
        a1 = np.maximum(h1, 0)
        h2 = a1 @ w2.T + b2
        a2 = np.maximum(h2, 0)
        out = a2 @ w3.T + b3
        d3 = 2 * (out - y64) / out.size
        d2 = (d3 @ w3) * (h2 > 0)
        d1 = (d2 @ w2) * (h1 > 0)
        grads = [d1.T @ x64, d1.sum(0), d2.T @ a1, d2.sum(0), d3.T @ a2, d3.sum(0)]
        return [p - LR * g for p, g in zip(w, grads)], float(np.mean((out - y64) ** 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(10):
            got = step(xs, ys).item()
            ref, want = numpy_step3(ref)
            assert abs(got - want) <= 1e-5 * max(1.0, abs(want)), (got, want)
    for p, q in zip(model.parameters(), ref):
        np.testing.assert_allclose(p.full_tensor().numpy(), q, rtol=1e-5, atol=1e-6)
        assert p.placements == (dist.Shard(0),)     # still sharded, and so is its gradient
        assert {s.data.nbytes for s in p.grad._jax.addressable_shards} == \
            {-(-p.shape[0] // n) * p.numel() * 4 // p.shape[0]}
    hlo = step.explain(xs, ys).fusions[0]["hlo"]
    assert " all-gather(" in hlo, hlo       # the shards are gathered for the compute
    # state_dict: full tensors; a model loaded from it continues identically
    sd = model.state_dict()
    for (k, v), q in zip(sd.items(), ref):
        assert type(v) is fnx.Tensor, (k, type(v))
        np.testing.assert_allclose(v.numpy(), q, rtol=1e-5, atol=1e-6)
    other = fully_shard(build(99), mesh=mesh)
    other.load_state_dict(sd)
    assert [p.placements for p in other.parameters()] == \
        [p.placements for p in model.parameters()]
    other_step = trainer(other)
    for _ in range(3):
        a, b = step(xs, ys).item(), other_step(xs, ys).item()
        assert a == b, (a, b)


if __name__ == "__main__":
    sys.exit(main())
