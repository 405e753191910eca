"""fnx quickstart: eager tensors on the CPU through the dispatcher.

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
