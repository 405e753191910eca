"""fnx quickstart: a PyTorch training step as written for PyTorch, eager then compiled, and
a tour of what runs underneath (the dispatcher, the captured IR, the compiled program).

Run: python examples/quickstart.py      (on CUDA when fnx.cuda.is_available(), else CPU)
"""
import fnx
from fnx import nn, optim

fnx.manual_seed(0)
_cuda = getattr(fnx, "cuda", None)
device = "cuda" if _cuda is not None and _cuda.is_available() else "cpu"
print("device:", device)


# ---------------------------------------------------------------------------- the seed workflow
# PyTorch's tutorial step, unchanged apart from the import and the device.
class ToyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


model = ToyModel().to(device)
loss_fn = nn.MSELoss()
optimizer = optim.SGD(model.parameters(), lr=0.001)
optimizer.zero_grad()
outputs = model(fnx.randn(20, 10, device=device))
labels = fnx.randn(20, 5).to(device)
loss = loss_fn(outputs, labels)
loss.backward()
optimizer.step()
print(model)
print("eager loss:", loss)

# The same step with the model compiled: traced once, lowered to jax.lax, jitted by XLA.
# Parameters are graph inputs (the optimizer's in-place updates are seen on the next call)
# and the compiled forward is differentiable.
compiled_model = fnx.compile(model)
x = fnx.randn(20, 10, device=device)
for step in range(3):
    optimizer.zero_grad()
    loss = loss_fn(compiled_model(x), labels)
    loss.backward()
    optimizer.step()
    print(f"compiled step {step}: loss {loss.item():.4f}")
with fnx.no_grad():
    same = (compiled_model(x) - model(x)).abs().max().item()
print(f"compiled vs eager forward, max difference: {same:.2e}")

# What the compiler captured for the model: the aten ops it traced, then the graph after
# functionalization and decomposition to prims, the regions it lowered and XLA's fusions.
report = compiled_model.explain(x)
print(report.stages["traced"])
print(f"{report.eager_ops} aten ops -> {len(report.graph.calls())} prims -> "
      f"{report.fusions[0]['kernels']} XLA kernels ({report.fusions[0]['fusions']} fusions)")

# ---------------------------------------------------------------------------- eager tensors
# Every call below goes through the dispatcher to the backend kernels (NumPy on CPU).
x = fnx.randn(4, 3)
w = fnx.randn(3, 2)
b = fnx.zeros(2)
y = (x @ w + b).relu()
print("x @ w + b, relu:\n", y)
print("shape", y.shape, "dtype", y.dtype, "device", y.device)

# PyTorch's promotion rules: int tensor + Python float -> the default float dtype.
i = fnx.arange(6).reshape(2, 3)
print("int64 + 0.5 ->", (i + 0.5).dtype)
print("sum over dim 1:", i.sum(dim=1))

# Views alias their base; in-place ops bump the shared version counter.
row = i[0]
row.add_(100)
print("after i[0].add_(100):\n", i, "\nversion", i._version)

# Advanced indexing and masked assignment.
mask = i > 100
i[mask] = -1
print("masked assignment:\n", i)

# Autograd: every differentiable op records a grad_fn node.
a = fnx.tensor([1.0, 2.0, 3.0], requires_grad=True)
(a * a).sum().backward()
print("d/da sum(a * a) =", a.grad)

# The same op by its ATen name, and what the dispatcher would run it on.
print("aten.add.Tensor(alpha=2):", fnx.ops.aten.add.Tensor(fnx.tensor([1, 2]),
                                                           fnx.tensor([3, 4]), alpha=2))
print("keyset of x:", x._keyset)
print("the same shapes on the meta device (no data):", fnx.zeros(4, 3, device="meta") @
      fnx.zeros(3, 2, device="meta"))

# ---------------------------------------------------------------------------- compiled functions
# fnx.compile traces the function once on meta tensors (no data), functionalizes and
# decomposes it to prims, lowers it to jax.lax and jits it: XLA fuses the whole thing.
w1, b1, w2 = fnx.randn(3, 16), fnx.zeros(16), fnx.randn(16, 2)


def mlp(x):
    return fnx.softmax((x @ w1 + b1).relu() @ w2, dim=-1)


compiled = fnx.compile(mlp)
eager_out, compiled_out = mlp(x), compiled(x)
print("compiled == eager:", bool(((compiled_out - eager_out).abs() < 1e-5).all()))
w2.mul_(2)      # parameters are graph inputs: an in-place update is seen, no recompile
print("after w2 *= 2, still equal:", bool(((compiled(x) - mlp(x)).abs() < 1e-5).all()))

report = compiled.explain(x)
print(report.stages["traced"])
print(f"{report.eager_ops} aten ops -> {len(report.graph.calls())} prims -> "
      f"{report.fusions[0]['kernels']} XLA kernels ({report.fusions[0]['fusions']} fusions)")
print("the same program decomposed to Core ATen:")
print(fnx.decompose(mlp, x, to="core"))
