"""Run with ``XLA_FLAGS=--xla_force_host_platform_device_count=8``: fully_shard of a model
whose parameters' dim 0 does not split evenly over 8 devices (Embedding(50, 8),
Linear(8, 13)): padded Shard(0) storage (ceil(rows / 8) rows per device) with the logical
shape kept; training (SGD and AdamW, compiled and eager) as the unsharded model in NumPy;
the optimizer state is sharded as the parameters; the state dict and clip_grad_norm_
see no padding."""
import sys
import warnings

import numpy as np

import fnx
import fnx.distributed as dist
from fnx import nn
from fnx.distributed.fsdp import fully_shard

N, B, V, D, H = 8, 16, 50, 8, 13
rng = np.random.default_rng(0)
IDX = rng.integers(0, V, size=B)
Y = rng.standard_normal((B, H)).astype(np.float32)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.lin = nn.Linear(D, H)

    def forward(self, idx):
        return self.lin(self.emb(idx))


def build(seed):
    fnx.manual_seed(seed)
    return Model()


def numpy_grads(w):
    """The loss mean((E[idx] W' + b - y)^2) and its gradients, by hand (float64)."""
    emb, weight, bias = w
    e = emb[IDX]
    out = e @ weight.T + bias
    d = 2 * (out - Y) / out.size
    g_emb = np.zeros_like(emb)
    np.add.at(g_emb, IDX, d @ weight)
    return float(np.mean((out - Y) ** 2)), [g_emb, d.T @ e, d.sum(0)]


def sgd(w, g, state, lr=0.5):
    return [p - lr * q for p, q in zip(w, g)]


def adamw(w, g, state, lr=0.05, b1=0.9, b2=0.999, eps=1e-8, wd=0.01):
    t = state["t"] = state.get("t", 0) + 1
    m = state["m"] = [b1 * a + (1 - b1) * q for a, q in zip(state.get("m", [0] * 3), g)]
    v = state["v"] = [b2 * a + (1 - b2) * q * q for a, q in zip(state.get("v", [0] * 3), g)]
    return [p * (1 - lr * wd) - lr * (a / (1 - b1 ** t)) / (np.sqrt(c / (1 - b2 ** t)) + eps)
            for p, a, c in zip(w, m, v)]


def check_layout(model):
    """Every parameter Shard(0) with ceil(rows / N) rows on each device, logical shape."""
    for p, shape in zip(model.parameters(), [(V, D), (H, D), (H,)]):
        assert isinstance(p, dist.DTensor) and p.placements == (dist.Shard(0),), p
        assert tuple(p.shape) == shape, (p.shape, shape)
        row = p.element_size() * int(np.prod(shape[1:]))
        per_device = [s.data.nbytes for s in p._array.addressable_shards]
        assert per_device == [-(-shape[0] // N) * row] * N, (shape, per_device)
        rows = [s.shape[0] for s in p.local_shards()]     # the padding is not shown
        assert sum(rows) == shape[0] and len(rows) == N, rows


def train(model, make_opt, ref_step, compiled, steps=10):
    """``steps`` steps of the model and of NumPy; the losses and the weights agree."""
    ref = [p.full_tensor().numpy().astype(np.float64) for p in model.parameters()]
    opt = make_opt(model.parameters())
    idx, y = fnx.tensor(IDX), fnx.tensor(Y)

    def step(i, t):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(i), t)
        loss.backward()
        opt.step()
        return loss
    run = fnx.compile(step) if compiled else step
    state = {}
    with warnings.catch_warnings():
        if compiled:
            warnings.simplefilter("error")      # no eager fallback
        for _ in range(steps):
            got = run(idx, y).item()
            want, grads = numpy_grads(ref)
            ref = ref_step(ref, grads, state)
            assert abs(got - want) <= 1e-5 * max(1.0, abs(want)), (got, want)
    for p, q in zip(model.parameters(), ref):
        np.testing.assert_allclose(p.full_tensor().numpy(), q, rtol=2e-5, atol=2e-6)
    check_layout(model)
    if compiled:        # one program, compiled once
        assert len(run.entries()) == 1 and len(run.entries()[0].programs()) == 1
    for p in model.parameters():        # optimizer state: sharded (padded) as its parameter
        for v in opt.state[p].values():
            if isinstance(v, fnx.Tensor) and tuple(v.shape) == tuple(p.shape):
                assert isinstance(v, dist.DTensor) and v.placements == (dist.Shard(0),), v
                assert v._array.shape == p._array.shape
    for p, g in zip(model.parameters(), grads):
        # the last gradients: padded and laid out as the parameters, without the padding
        assert isinstance(p.grad, dist.DTensor) and p.grad.placements == (dist.Shard(0),)
        assert tuple(p.grad.shape) == tuple(p.shape)
        assert p.grad._array.shape == p._array.shape
        np.testing.assert_allclose(p.grad.full_tensor().numpy(), g, rtol=1e-4, atol=1e-7)
    if compiled:
        # it takes and returns each device's block of the padded storage (50 -> 56 rows,
        # 13 -> 16: 7 and 2 rows), so the update is computed on the shards
        hlo = run.explain(idx, y).fusions[0]["hlo"]
        entry = next(ln for ln in hlo.splitlines() if ln.startswith("ENTRY"))
        params, results = entry.split(" -> ")
        for block in ("f32[7,8]", "f32[2,8]", "f32[2]"):
            assert block in params and block in results, entry
        assert "f32[50,8]" not in entry and "f32[13,8]" not in entry, entry
    return run


def main():
    mesh = dist.init_device_mesh("cpu", (N,), mesh_dim_names=("fsdp",))
    model = fully_shard(build(1), mesh=mesh)
    check_layout(model)
    train(model, lambda ps: fnx.optim.SGD(ps, lr=0.5), sgd, compiled=True)
    train(fully_shard(build(2), mesh=mesh), lambda ps: fnx.optim.AdamW(ps, lr=0.05),
          adamw, compiled=True)
    train(fully_shard(build(3), mesh=mesh), lambda ps: fnx.optim.SGD(ps, lr=0.5), sgd,
          compiled=False, steps=3)
    train(fully_shard(build(4), mesh=mesh), lambda ps: fnx.optim.AdamW(ps, lr=0.05),
          adamw, compiled=False, steps=3)

    # state_dict: full logical tensors; a model loaded from it trains on identically
    sd = model.state_dict()
    want = [p.full_tensor().numpy() for p in model.parameters()]
    assert [tuple(v.shape) for v in sd.values()] == [(V, D), (H, D), (H,)]
    for v, q in zip(sd.values(), want):
        assert type(v) is fnx.Tensor
        np.testing.assert_array_equal(v.numpy(), q)
    other = fully_shard(build(99), mesh=mesh)
    other.load_state_dict(sd)
    check_layout(other)
    for p, q in zip(other.parameters(), want):
        np.testing.assert_array_equal(p.full_tensor().numpy(), q)
    plain = build(99)
    plain.load_state_dict(sd)           # an unsharded model takes it as it is
    for p, q in zip(plain.parameters(), want):
        np.testing.assert_array_equal(p.detach().numpy(), q)

    # clip_grad_norm_: the norm of the unsharded gradients, and they are scaled by it
    ref = [q.astype(np.float64) for q in want]
    _, grads = numpy_grads(ref)
    norm = np.sqrt(sum(float((g ** 2).sum()) for g in grads))
    for compiled in (False, True):
        m = fully_shard(build(5), mesh=mesh)
        m.load_state_dict(sd)

        def clip(i, t, m=m):
            for p in m.parameters():
                p.grad = None
            nn.functional.mse_loss(m(i), t).backward()
            return nn.utils.clip_grad_norm_(m.parameters(), max_norm=norm / 2)
        run = fnx.compile(clip) if compiled else clip
        total = run(fnx.tensor(IDX), fnx.tensor(Y))
        total = total.full_tensor() if isinstance(total, dist.DTensor) else total
        np.testing.assert_allclose(float(total), norm, rtol=1e-5)
        for p, g in zip(m.parameters(), grads):
            grad = p.grad.full_tensor() if isinstance(p.grad, dist.DTensor) else p.grad
            np.testing.assert_allclose(grad.numpy(), g * (norm / 2) / (norm + 1e-6),
                                       rtol=1e-4, atol=1e-7)
    # float64 and int64 storage stays exact through the padding
    holder = nn.Module()
    exact = rng.standard_normal((13, 3)) * (1 + 1e-12)
    holder.w = nn.Parameter(fnx.tensor(exact))
    holder.register_buffer("ids", fnx.tensor(np.arange(13, dtype=np.int64) << 40))
    fully_shard(holder, mesh=mesh)
    assert holder.w.dtype == fnx.float64 and holder.w.placements == (dist.Shard(0),)
    assert [s.data.shape for s in holder.w._array.addressable_shards] == [(2, 3)] * N
    for got in (holder.w.full_tensor().numpy(), holder.w.detach().numpy(),
                holder.state_dict()["w"].numpy(), (holder.w * 1).full_tensor().numpy()):
        np.testing.assert_array_equal(got, exact)
    assert holder.state_dict()["ids"].tolist() == (np.arange(13) << 40).tolist()
    print("fsdp uneven ok")


if __name__ == "__main__":
    sys.exit(main())
