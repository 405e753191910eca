"""Conversions between dtypes, devices and Python: _to_copy, _local_scalar_dense, copy_."""
from __future__ import annotations

from ... import _dtype as D
from ..registry import TensorMeta, defop

_to_copy = defop("_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, "
                 "Device? device=None, bool? pin_memory=None, bool non_blocking=False, "
                 "MemoryFormat? memory_format=None) -> Tensor", tags=("core",),
                 meta=lambda self, *, dtype=None, **kw: TensorMeta(
                     tuple(self.shape), dtype if dtype is not None else self.dtype))

_local_scalar_dense = defop("_local_scalar_dense(Tensor self) -> Scalar", tags=("core",))


def _copy_meta(self, src, non_blocking=False):
    from ..shapes import broadcast_shapes
    if broadcast_shapes(tuple(self.shape), tuple(src.shape)) != tuple(self.shape):
        raise RuntimeError(f"copy_: the src shape {list(src.shape)} cannot be broadcast to "
                           f"the destination shape {list(self.shape)}")
    return self


copy_ = defop("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
              tags=("inplace",), meta=_copy_meta)
copy = defop("copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor",
             tags=("core",), meta=lambda self, src, non_blocking=False: TensorMeta(
                 tuple(_copy_meta(self, src).shape), self.dtype))
scalar_tensor = defop("scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, "
                      "Device? device=None, bool? pin_memory=None) -> Tensor",
                      tags=("core", "factory"),
                      meta=lambda s, *, dtype=None, **kw: TensorMeta(
                          (), dtype if dtype is not None else D.scalar_dtype(s)))

# A factory: without a tensor argument, ``device=`` picks the backend.
from .factory import backend_select  # noqa: E402

backend_select(scalar_tensor)
