"""Creation prims: iota and full (factories: ``device=`` picks the backend)."""
from __future__ import annotations

from ..backend_select import backend_select
from ..registry import TensorMeta, nondifferentiable
from ._common import prim
from .checks import IF, dim_arg, dtype_arg, scalar_for, shape_arg

__all__ = ["iota", "full"]


def _iota_meta(shape, dimension, *, dtype, device):
    shape = shape_arg("iota", shape)
    dim_arg("iota", dimension, len(shape), "dimension")
    return TensorMeta(shape, dtype_arg("iota", dtype, IF))


def _full_meta(shape, fill_value, *, dtype, device):
    shape = shape_arg("full", shape)
    dtype = dtype_arg("full", dtype)
    scalar_for("full", fill_value, dtype)
    return TensorMeta(shape, dtype)


def _factory(op):
    backend_select(op)
    return op


iota = _factory(prim("iota(SymInt[] shape, int dimension, *, ScalarType dtype, "
                     "Device device) -> Tensor", _iota_meta))
full = _factory(prim("full(SymInt[] shape, Scalar fill_value, *, ScalarType dtype, "
                     "Device device) -> Tensor", _full_meta))
nondifferentiable(iota, full)
