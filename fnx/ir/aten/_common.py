"""Helpers shared by op families: meta functions for common shapes of op, and PyTorch's
error for a dtype a kernel has no loop for."""
from __future__ import annotations

from ...core.meta_array import MetaArray
from ..promotion import elementwise_dtypes
from ..registry import TensorMeta
from ..dims import broadcast_shapes
from ..variants import check_writable

__all__ = ["pointwise_meta", "inplace_meta", "out_meta", "shape_of", "not_implemented"]


def not_implemented(kernel_name: str, dtype) -> RuntimeError:
    """PyTorch's error for a kernel that has no loop for ``dtype``.

    >>> import fnx
    >>> print(not_implemented("abs_cpu", fnx.bool))
    "abs_cpu" not implemented for 'Bool'
    """
    return RuntimeError(f"\"{kernel_name}\" not implemented for '{dtype.scalar_type}'")


def shape_of(x) -> tuple:
    return tuple(x.shape) if hasattr(x, "_ks") else ()


def pointwise_meta(kind: str, n_tensor_args: int):
    """Meta for an op whose first ``n_tensor_args`` arguments broadcast together.

    CPU kernels call it on every call off their shortcuts (the result dtype is the meta's),
    so the common arities avoid the general broadcast.
    """
    if n_tensor_args == 1:
        def meta(*args, **kwargs):
            return TensorMeta(shape_of(args[0]), elementwise_dtypes(kind, args[0])[1])
    elif n_tensor_args == 2:
        def meta(*args, **kwargs):
            a, b = args[0], args[1]
            sa, sb = shape_of(a), shape_of(b)
            shape = sa if sa == sb or not sb else sb if not sa else broadcast_shapes(sa, sb)
            return TensorMeta(shape, elementwise_dtypes(kind, a, b)[1])
    else:
        def meta(*args, **kwargs):
            operands = args[:n_tensor_args]
            shape = broadcast_shapes(*(shape_of(x) for x in operands))
            return TensorMeta(shape, elementwise_dtypes(kind, *operands)[1])
    return meta


def inplace_meta(functional_meta, name: str):
    """Meta of ``op_``: the functional result must broadcast to and cast to ``self``."""
    def meta(self, *args, **kwargs):
        check_writable(name, functional_meta(self, *args, **kwargs), self, resize=False)
        return self
    return meta


def out_meta(functional_meta, name: str):
    """Meta of ``op.out``: the result must cast to ``out``'s dtype; out is resized."""
    def meta(*args, out, **kwargs):
        r = functional_meta(*args, **kwargs)
        check_writable(name, r, out, resize=True)
        if isinstance(out._data, MetaArray) and tuple(out.shape) != tuple(r.shape):
            out._data = MetaArray(r.shape, out._data.dtype)     # out= resizes, as on CPU
        return out
    return meta

