"""An out-of-tree backend for fnx, written without editing fnx: the ``mydev`` device.

PyTorch lets a backend that lives outside its source tree claim the ``PrivateUse1``
dispatch key, give it a device name and register kernels for the ops it supports.  fnx
has the same mechanism; this file is a complete backend in about a hundred lines:

1. ``fnx.utils.rename_privateuse1_backend("mydev")`` makes ``fnx.device("mydev:0")`` valid.
2. A tensor on the device is ``fnx.Tensor._make(payload, dtype, device, keyset)``: the
   payload is this backend's own memory object (here ``MyDevArray``, a NumPy array the
   host may not read directly), the keyset holds ``PrivateUse1`` (and ``ADInplaceOrView``,
   so in-place ops bump version counters like on every other backend).
3. Kernels are registered with ``fnx.library.Library("aten", "IMPL").impl(op, fn,
   "PrivateUse1")``.  Any call whose tensors carry the key dispatches to them; ``.to()``
   reaches the device through ``empty.memory_format`` + ``copy_`` (host -> device) and
   ``_to_copy`` (device -> host), exactly the ops PyTorch backends implement for that.
4. An op the backend did not register fails with a ``NotImplementedError`` naming the op,
   the key and the keys that do have kernels.

Run it: ``python examples/custom_backend.py``.
"""
from __future__ import annotations

import numpy as np

import fnx
from fnx.dispatch import DispatchKey
from fnx.library import Library

NAME = "mydev"
KEYSET = (1 << DispatchKey.PrivateUse1) | (1 << DispatchKey.ADInplaceOrView)


class MyDevArray:
    """Device memory: the host sees its shape, not its contents."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array

    @property
    def shape(self) -> tuple:
        return self.array.shape

    def __array__(self, *args, **kwargs):
        # Like real accelerator memory: reading it needs an explicit transfer (.to("cpu")).
        raise TypeError(f"{NAME} memory is not host-visible; use .to('cpu')")


def device(index: int = 0) -> fnx.device:
    return fnx.device(NAME, index)


def on_device(array, dtype) -> fnx.Tensor:
    """Wrap a NumPy array (already in ``dtype``) as a tensor on mydev:0."""
    return fnx.Tensor._make(MyDevArray(np.asarray(array, dtype.numpy)), dtype, device(0),
                            KEYSET)


def _array(x, op: str):
    """A kernel operand as a NumPy array: mydev tensors, 0-dim CPU tensors (allowed beside
    device tensors, as in PyTorch) and Python numbers."""
    if not isinstance(x, fnx.Tensor):
        return x
    if x.device.type == NAME:
        return x._data.array
    if x.device.type == "cpu" and x.ndim == 0:
        return x.numpy()
    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                       f"devices, {x.device} and {device(0)}! (when checking argument for "
                       f"aten::{op})")


# ------------------------------------------------------------------------------- kernels

def add(self, other, *, alpha=1):
    dtype = fnx.result_type(self, other)
    a, b = _array(self, "add"), _array(other, "add")
    return on_device(np.asarray(a).astype(dtype.numpy) +
                     np.asarray(b).astype(dtype.numpy) * alpha, dtype)


def mul(self, other):
    dtype = fnx.result_type(self, other)
    a, b = _array(self, "mul"), _array(other, "mul")
    return on_device(np.asarray(a).astype(dtype.numpy) * np.asarray(b).astype(dtype.numpy),
                     dtype)


def _sum_dtype(self, dtype):
    if dtype is not None:
        return dtype
    return fnx.int64 if not (self.dtype.is_floating_point or self.dtype.is_complex) \
        else self.dtype


def sum_all(self, *, dtype=None):
    out = _sum_dtype(self, dtype)
    return on_device(_array(self, "sum").sum(dtype=out.numpy), out)


def sum_dims(self, dim, keepdim=False, *, dtype=None):
    out = _sum_dtype(self, dtype)
    axis = None if not dim else tuple(dim)
    return on_device(_array(self, "sum").sum(axis=axis, keepdims=keepdim, dtype=out.numpy), out)


def empty(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    dtype = dtype if dtype is not None else fnx.get_default_dtype()
    return on_device(np.empty(tuple(size), dtype.numpy), dtype)


def copy_(self, src, non_blocking=False):
    """Host -> device, device -> device and device -> host copies (broadcasting src)."""
    dst = self._data.array if self.device.type == NAME else self.numpy()
    src_arr = src._data.array if src.device.type == NAME else src.numpy()
    np.copyto(dst, np.broadcast_to(src_arr, dst.shape), casting="unsafe")
    return self


def to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None,
            non_blocking=False, memory_format=None):
    dtype = dtype if dtype is not None else self.dtype
    target = fnx.device(device) if device is not None else self.device
    data = _array(self, "_to_copy").astype(dtype.numpy, copy=True)
    if target.type == "cpu":
        return fnx.from_numpy(data)
    if target.type == NAME:
        return on_device(data, dtype)
    raise NotImplementedError(f"{NAME}: no transfer to {target}")


def local_scalar_dense(self):
    return _array(self, "_local_scalar_dense").reshape(()).item()


def register() -> Library:
    """Claim PrivateUse1 as ``mydev`` and register the kernels; returns the Library so
    its registrations can be undone with ``_destroy()``."""
    fnx.utils.rename_privateuse1_backend(NAME)
    lib = Library("aten", "IMPL")
    kernels = {"add.Tensor": add, "mul.Tensor": mul, "_to_copy": to_copy, "copy_": copy_,
               "empty.memory_format": empty, "_local_scalar_dense": local_scalar_dense}
    # Ops another fnx version might not define are registered when they exist.
    if hasattr(fnx.ops.aten, "sum"):
        for overload, fn in (("default", sum_all), ("dim_IntList", sum_dims)):
            if overload in fnx.ops.aten.sum.overloads():
                kernels[f"sum.{overload}"] = fn
    for op, fn in kernels.items():
        lib.impl(op, fn, "PrivateUse1")
    return lib


# ------------------------------------------------------------------------------- demo

def main() -> dict:
    lib = register()
    try:
        x = fnx.tensor([[1.0, 2.0], [3.0, 4.0]])
        d = x.to(NAME)                                  # empty.memory_format + copy_
        print("on the device:   ", d)
        print("device, dtype:   ", d.device, d.dtype)
        s = d + d * 10                                  # mul.Tensor, add.Tensor
        print("d + d * 10:      ", s)
        i = fnx.tensor([1, 2, 3], device=NAME)          # fnx.tensor(..., device=) works too
        print("int + 0.5:       ", i + 0.5, "(promoted like on CPU)")
        total = s.sum() if hasattr(fnx.ops.aten, "sum") else None
        if total is not None:
            print("sum:             ", total, "->", total.item())
        back = s.to("cpu")                              # _to_copy to the host
        print("back on the cpu: ", back)
        try:
            fnx.exp(d)                                  # never registered
        except NotImplementedError as e:
            print("exp on mydev:     NotImplementedError:", e)
            missing = e
        else:
            raise AssertionError("exp should have no mydev kernel")
        return {"x": x, "d": d, "s": s, "i": i, "total": total, "back": back,
                "missing": missing}
    finally:
        lib._destroy()


if __name__ == "__main__":
    main()
