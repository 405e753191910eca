"""Helpers shared by op families: meta functions for common shapes of op."""
from __future__ import annotations

from ...core import dtype as D
from ...core.meta_array import MetaArray
from ..promotion import elementwise_dtypes
from ..registry import TensorMeta
from ..shapes import broadcast_shapes

__all__ = ["pointwise_meta", "inplace_meta", "out_meta", "shape_of"]


def shape_of(x) -> tuple:
    return tuple(x.shape) if hasattr(x, "_ks") else ()


def pointwise_meta(kind: str, n_tensor_args: int):
    """Meta for an op whose first ``n_tensor_args`` arguments broadcast together."""
    def meta(*args, **kwargs):
        operands = args[:n_tensor_args]
        shape = broadcast_shapes(*(shape_of(x) for x in operands))
        return TensorMeta(shape, elementwise_dtypes(kind, *operands)[1])
    return meta


def inplace_meta(functional_meta, name: str):
    """Meta of ``op_``: the functional result must broadcast to and cast to ``self``."""
    def meta(self, *args, **kwargs):
        r = functional_meta(self, *args, **kwargs)
        if tuple(r.shape) != tuple(self.shape):
            raise RuntimeError(f"{name}: output with shape {list(self.shape)} doesn't match "
                               f"the broadcast shape {list(r.shape)}")
        if not D.can_cast(r.dtype, self.dtype):
            raise RuntimeError(f"{name}: result type {r.dtype.scalar_type} can't be cast to "
                               f"the desired output type {self.dtype.scalar_type}")
        return self
    return meta


def out_meta(functional_meta, name: str):
    """Meta of ``op.out``: the result must cast to ``out``'s dtype; out is resized."""
    def meta(*args, out, **kwargs):
        r = functional_meta(*args, **kwargs)
        if not D.can_cast(r.dtype, out.dtype):
            raise RuntimeError(f"{name}: result type {r.dtype.scalar_type} can't be cast to "
                               f"the desired output type {out.dtype.scalar_type}")
        if isinstance(out._data, MetaArray) and tuple(out.shape) != tuple(r.shape):
            out._data = MetaArray(r.shape, out._data.dtype)     # out= resizes, as on CPU
        return out
    return meta

