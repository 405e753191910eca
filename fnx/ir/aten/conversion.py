"""Conversions between dtypes, devices and Python: _to_copy, _local_scalar_dense, copy_."""
from __future__ import annotations

from ...core import dtype as D
from ...core.device import canonical
from ...ops import aten, prims
from .. import refs
from ..registry import TensorMeta, decomposition, defop, derivative, nondifferentiable
from ..dims import broadcast_shapes
from .elementwise import copy_of, full
from .factory import backend_select, device_arg

_to_copy = defop("_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, "
                 "Device? device=None, bool? pin_memory=None, bool non_blocking=False, "
                 "MemoryFormat? memory_format=None) -> Tensor", tags=("core",),
                 meta=lambda self, *, dtype=None, **kw: TensorMeta(
                     tuple(self.shape), dtype if dtype is not None else self.dtype))

_local_scalar_dense = defop("_local_scalar_dense(Tensor self) -> Scalar", tags=("core",))


def _copy_meta(self, src, non_blocking=False):
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

backend_select(scalar_tensor)

# ---------------------------------------------------------------------------- decompositions



@decomposition(_to_copy)
def _to_copy_decomp(self, *, dtype=None, layout=None, device=None, pin_memory=None,
                    non_blocking=False, memory_format=None):
    # convert_element_type: float -> int truncates toward zero, anything -> bool is != 0,
    # complex -> real drops the imaginary part (out-of-range values are implementation
    # defined, as in PyTorch)
    out = self if dtype is None else refs.to_dtype(self, dtype)
    if device is not None and canonical(device) != self.device:
        out = prims.device_put(out, canonical(device))
    return copy_of(out) if out is self else out     # _to_copy always copies


@decomposition(copy)
def _copy_decomp(self, src, non_blocking=False):
    # self's shape, dtype and device with src's values (broadcast)
    copy.meta(self, src)
    out = src
    if src.device != self.device:
        out = prims.device_put(out, self.device)
    out = refs.broadcast_to(refs.to_dtype(out, self.dtype), tuple(self.shape))
    return copy_of(out) if out is src else out


@decomposition(scalar_tensor)
def _scalar_tensor_decomp(s, *, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = dtype if dtype is not None else D.scalar_dtype(s)
    return full([], s, dtype, device_arg(device))       # cast as a C cast (NumPy astype)


# ---------------------------------------------------------------------------- derivatives



@derivative(_to_copy)
def _to_copy_backward(grad, self):
    # autograd casts back to self's dtype; a copy to another device sends the gradient back
    if grad.device != self.device:
        grad = _to_copy(grad, device=self.device)
    return grad


@derivative(copy)
def _copy_backward(grad, needs_input_grad):
    # self's values are overwritten (only its shape, dtype and device are used): a zero
    # gradient, as in PyTorch
    return (aten.zeros_like.default(grad) if needs_input_grad[0] else None,
            grad if needs_input_grad[1] else None)


# copy_ is in place, but its functional twin (copy) is not how it is differentiated
# through a view's base: the formula is copy_'s own (the same as copy's).
derivative(copy_)(_copy_backward)
nondifferentiable(_local_scalar_dense, scalar_tensor)
