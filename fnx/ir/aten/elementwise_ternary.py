"""Pointwise ops of three operands: ``addcmul``, ``addcdiv`` and ``lerp`` (its ``Scalar``
and ``Tensor`` weight overloads), each with its in-place and ``out=`` variants.

- ``addcmul(self, t1, t2, value)``: ``self + value * t1 * t2``; ``addcdiv``:
  ``self + value * t1 / t2``. The three tensors promote together (DEFAULT), ``value`` is
  cast to the computation dtype as a C cast (so an integer result truncates a float
  value, as PyTorch's). ``addcdiv`` refuses integer division (both ``t1`` and ``t2``
  integral); neither has a bool loop.
- ``lerp(self, end, weight)``: ``self + weight * (end - self)`` for ``|weight| < 0.5``,
  else ``end - (end - self) * (1 - weight)`` (exact at both ends, as PyTorch's kernel).
  ``end`` and a tensor ``weight`` must have ``self``'s dtype, floating or complex.
"""
from __future__ import annotations

from ...core import dtype as D
from ...ops import prims
from .. import refs
from ..grad_utils import conj, is_tensor
from ..promotion import DEFAULT
from ..registry import TensorMeta, decomposition, defop, derivative
from ..dims import broadcast_shapes
from ..variants import VARIANTS
from ._common import inplace_meta, not_implemented, out_meta, pointwise_meta, shape_of
from .elementwise import _python_value, full_like, is_one

__all__ = ["addcmul", "addcdiv", "lerp_Scalar", "lerp_Tensor", "INTEGER_ADDCDIV"]

ATEN = ("pointwise",)

INTEGER_ADDCDIV = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
    "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
    "tensor2), for all dtypes.")

def _check_value(name, dtype, value):
    value = _python_value(value)
    if isinstance(value, complex) and not dtype.is_complex:
        raise RuntimeError(f"{name}: value cannot be converted to type "
                           f"{dtype.scalar_type.lower()} without overflow")


_ternary = pointwise_meta(DEFAULT, 3)


def _addc_meta(name):
    def meta(self, tensor1, tensor2, *, value=1):
        r = _ternary(self, tensor1, tensor2)
        if name == "addcdiv" and not (tensor1.dtype.is_floating_point or
                                      tensor1.dtype.is_complex) and \
                not (tensor2.dtype.is_floating_point or tensor2.dtype.is_complex):
            raise RuntimeError(INTEGER_ADDCDIV)
        if r.dtype is D.bool:
            raise not_implemented(f"{name}_cpu_out", D.bool)
        _check_value(name, r.dtype, value)
        return r
    return meta


def _lerp_meta(self, end, weight):
    if end.dtype is not self.dtype:
        raise RuntimeError(f"expected dtype {self.dtype.cpp_type} for `end` but got dtype "
                           f"{end.dtype.cpp_type}")
    shapes = [shape_of(self), shape_of(end)]
    if is_tensor(weight):
        if weight.dtype is not self.dtype:
            raise RuntimeError(f"expected dtype {self.dtype.cpp_type} for `weight` but got dtype "
                               f"{weight.dtype.cpp_type}")
        shapes.append(shape_of(weight))
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        kernel = "lerp_kernel_tensor" if is_tensor(weight) else "lerp_kernel_scalar"
        raise not_implemented(kernel, self.dtype)
    return TensorMeta(broadcast_shapes(*shapes), self.dtype)


def _family(schema_name, overload, args, meta, out_overload):
    """The functional op, ``name_`` and ``name.<out_overload>`` from one argument list."""
    ov = "" if overload == "default" else f".{overload}"
    op = defop(f"{schema_name}{ov}(Tensor self, {args}) -> Tensor", tags=ATEN,
               promotion=DEFAULT, meta=meta)
    inplace = defop(f"{schema_name}_{ov}(Tensor(a!) self, {args}) -> Tensor(a!)",
                    tags=("inplace", "pointwise"), promotion=DEFAULT,
                    meta=inplace_meta(meta, f"{schema_name}_"))
    kw = "" if "*" in args else ", *"
    out = defop(f"{schema_name}.{out_overload}(Tensor self, {args}{kw}, Tensor(a!) out) -> "
                f"Tensor(a!)", tags=("out", "pointwise"), promotion=DEFAULT,
                meta=out_meta(meta, schema_name))
    VARIANTS[op] = {"functional": op, "inplace": inplace, "out": out}
    return op


_ADDC_ARGS = "Tensor tensor1, Tensor tensor2, *, Scalar value=1"
addcmul = _family("addcmul", "default", _ADDC_ARGS, _addc_meta("addcmul"), "out")
addcdiv = _family("addcdiv", "default", _ADDC_ARGS, _addc_meta("addcdiv"), "out")
lerp_Scalar = _family("lerp", "Scalar", "Tensor end, Scalar weight", _lerp_meta, "Scalar_out")
lerp_Tensor = _family("lerp", "Tensor", "Tensor end, Tensor weight", _lerp_meta, "Tensor_out")


# ---------------------------------------------------------------------------- decompositions

def _scaled(x, value):
    """``value * x`` with ``value`` cast to x's dtype (a C cast); value 1 is free."""
    value = _python_value(value)
    if is_one(value):
        return x
    return prims.mul(full_like(x, value), x)


@refs.promote(DEFAULT, ("self", "tensor1", "tensor2"))
def _addcmul_impl(self, tensor1, tensor2, value=1):
    # PyTorch's order: self + (value * t1) * t2
    return prims.add(self, prims.mul(_scaled(tensor1, value), tensor2))


@refs.promote(DEFAULT, ("self", "tensor1", "tensor2"))
def _addcdiv_impl(self, tensor1, tensor2, value=1):
    return prims.add(self, prims.div(_scaled(tensor1, value), tensor2))


@decomposition(addcmul)
def _addcmul(self, tensor1, tensor2, *, value=1):
    addcmul.meta(self, tensor1, tensor2, value=value)
    return _addcmul_impl(self, tensor1, tensor2, value)


@decomposition(addcdiv)
def _addcdiv(self, tensor1, tensor2, *, value=1):
    addcdiv.meta(self, tensor1, tensor2, value=value)
    return _addcdiv_impl(self, tensor1, tensor2, value)


@refs.promote(DEFAULT, ("self", "end", "weight"))
def _lerp_impl(self, end, weight):
    diff = prims.sub(end, self)
    size = prims.abs(weight)            # (real for a complex weight)
    near_self = prims.lt(size, full_like(size, 0.5))
    from_self = prims.add(self, prims.mul(weight, diff))
    from_end = prims.sub(end, prims.mul(diff, prims.sub(full_like(weight, 1), weight)))
    return prims.where(near_self, from_self, from_end)


@decomposition(lerp_Scalar)
@decomposition(lerp_Tensor)
def _lerp(self, end, weight):
    _lerp_meta(self, end, weight)
    # (a Python weight joins the promotion as a scalar: it is cast to the op-math dtype,
    # float32 for half types, not rounded to self's dtype first)
    return _lerp_impl(self, end, weight if is_tensor(weight) else _python_value(weight))


# ---------------------------------------------------------------------------- derivatives

@derivative(addcmul)
def _addcmul_backward(grad, tensor1, tensor2, value, needs_input_grad):
    return (grad if needs_input_grad[0] else None,
            grad * conj(tensor2 * value) if needs_input_grad[1] else None,
            grad * conj(tensor1 * value) if needs_input_grad[2] else None)


@derivative(addcdiv)
def _addcdiv_backward(grad, tensor1, tensor2, value, needs_input_grad):
    return (grad if needs_input_grad[0] else None,
            grad * conj(value / tensor2) if needs_input_grad[1] else None,
            -grad * conj(value * tensor1 / (tensor2 * tensor2)) if needs_input_grad[2]
            else None)


@derivative(lerp_Scalar)
def _lerp_scalar_backward(grad, weight, needs_input_grad):
    return (grad * (1 - conj(weight)) if needs_input_grad[0] else None,
            grad * conj(weight) if needs_input_grad[1] else None)


@derivative(lerp_Tensor)
def _lerp_tensor_backward(grad, self, end, weight, needs_input_grad):
    return (grad * conj(1 - weight) if needs_input_grad[0] else None,
            grad * conj(weight) if needs_input_grad[1] else None,
            grad * conj(end - self) if needs_input_grad[2] else None)
