"""fnx quickstart: eager tensors through the dispatcher, then the same code compiled.

Run: python examples/quickstart.py
"""
import fnx

fnx.manual_seed(0)

# Eager math: every call below goes through the dispatcher to the NumPy CPU kernels.
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

# The same op by its ATen name, and what the dispatcher would run it on.
print("aten.add.Tensor(alpha=2):", fnx.ops.aten.add.Tensor(fnx.tensor([1, 2]),
                                                           fnx.tensor([3, 4]), alpha=2))
print("keyset of x:", x._keyset)
print("the same shapes on the meta device (no data):", fnx.zeros(4, 3, device="meta") @
      fnx.zeros(3, 2, device="meta"))

# ---------------------------------------------------------------------------- compiled
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

# What the compiler saw and did: the captured IR at each stage, regions, XLA fusions.
report = compiled.explain(x)
print(report.stages["traced"])
print(f"{report.eager_ops} aten ops -> {len(report.graph.calls())} prims -> "
      f"{report.fusions[0]['kernels']} XLA kernels ({report.fusions[0]['fusions']} fusions)")
print("the same program decomposed to Core ATen:")
print(fnx.decompose(mlp, x, to="core"))
