"""Elementwise prims (lax's standard unary and n-ary ops): math, comparisons and bit
operations, then ``complex``, ``where``, ``convert_element_type`` and ``device_put``.

A unary or binary prim is one definition: the dtype categories it accepts and its result
rule make its meta function (``unary``/``binary``), and its derivative formula stands
beside it (``NONDIFFERENTIABLE`` where outputs carry no gradient: bool results, integer-only
ops, and nextafter, which PyTorch does not differentiate either). Prims are named as
``jax.lax`` names them, so ``abs``, ``round``, ``pow`` and ``complex`` shadow the builtins
in this module, whose code uses none of those builtins.
"""
from __future__ import annotations

import math

from ...core import dtype as D
from ...ops import prims as _p
from ..grad_utils import trigamma
from ..registry import NONDIFFERENTIABLE, TensorMeta, derivative, nondifferentiable
from ._common import (POINTWISE, cj, like, over, plus, prim, rsub, scale, square, times,
                      to_complex)
from .checks import (ANY, BI, BIF, COMPLEX, FC, FLOAT, IF, IFC, INT, check_category,
                     check_tensor, dtype_arg, fail, same_dtype, same_shape)

# (name, accepted dtype categories, result rule) of each unary and binary prim, in order.
# Result rules: "same" (the operand's dtype), "bool", "real" (complex -> its float type).
UNARY = []
BINARY = []


def _result_dtype(d, rule):
    if rule == "bool":
        return D.bool
    if rule == "real":
        return d.to_real() if d.is_complex else d
    return d


def _unary_meta(name, cats, rule):
    def meta(self):
        check_tensor(name, "self", self)
        check_category(name, self, cats)
        return TensorMeta(tuple(self.shape), _result_dtype(self.dtype, rule))
    meta.__name__ = f"{name}_meta"
    return meta


def _binary_meta(name, cats, rule):
    def meta(self, other):
        check_tensor(name, "self", self)
        check_tensor(name, "other", other)
        same_shape(name, ("self", self), ("other", other))
        same_dtype(name, ("self", self), ("other", other))
        check_category(name, self, cats)
        return TensorMeta(tuple(self.shape), _result_dtype(self.dtype, rule))
    meta.__name__ = f"{name}_meta"
    return meta


def _define(rows, schema, meta, name, cats, rule, grad):
    op = prim(schema, meta, POINTWISE)
    op.categories = cats
    rows.append((name, cats, rule))
    if grad is NONDIFFERENTIABLE:
        nondifferentiable(op)
        return op
    if grad.__name__ == "<lambda>":
        grad.__name__ = f"_{name}_backward"
    derivative(op)(grad)
    return op


def unary(name, cats, grad, rule="same"):
    """The unary prim ``name`` on dtypes of categories ``cats``, differentiated by ``grad``
    (parameters as in ``registry.derivative``; ``self`` is the input)."""
    return _define(UNARY, f"{name}(Tensor self) -> Tensor", _unary_meta(name, cats, rule),
                   name, cats, rule, grad)


def binary(name, cats, grad, rule="same"):
    """The binary prim ``name``: operands of one shape and one dtype of ``cats``."""
    return _define(BINARY, f"{name}(Tensor self, Tensor other) -> Tensor",
                   _binary_meta(name, cats, rule), name, cats, rule, grad)


# ----------------------------------------------------------------------------- unary

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_2_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _zero_backward(grad):
    # Piecewise constant (floor, ceil, round, trunc; sign of a real): zero, as in PyTorch.
    return like(grad, 0)


def _abs_backward(grad, self):
    if self.dtype.is_complex:
        return _p.mul(to_complex(grad), _p.sign(self))      # grad * z / |z|, 0 at 0
    return _p.mul(grad, _p.sign(self))


abs = unary("abs", IFC, _abs_backward, "real")
neg = unary("neg", IFC, lambda grad: _p.neg(grad))


def _sign_backward(grad, self):
    if not self.dtype.is_complex:
        return like(grad, 0)
    # s = z / |z|: (g - s * re(conj(s) * g)) / |z|, and 0 at z = 0 (PyTorch's sgn_backward)
    s, a = _p.sign(self), _p.abs(self)
    along = _p.mul(s, to_complex(_p.real(_p.mul(_p.conj(s), grad))))
    out = _p.div(_p.sub(grad, along), to_complex(a))
    return _p.where(_p.eq(a, like(a, 0)), like(grad, 0), out)


sign = unary("sign", IFC, _sign_backward)
exp = unary("exp", FC, lambda grad, result: times(grad, result))
exp2 = unary("exp2", FC, lambda grad, result: times(grad, scale(result, _LN2)))
expm1 = unary("expm1", FC, lambda grad, result: times(grad, plus(result, 1)))
log = unary("log", FC, lambda grad, self: over(grad, self))
log1p = unary("log1p", FC, lambda grad, self: over(grad, plus(self, 1)))
log2 = unary("log2", FC, lambda grad, self: over(grad, scale(self, _LN2)))
log10 = unary("log10", FC, lambda grad, self: over(grad, scale(self, _LN10)))
sin = unary("sin", FC, lambda grad, self: times(grad, _p.cos(self)))
cos = unary("cos", FC, lambda grad, self: times(grad, _p.neg(_p.sin(self))))
tan = unary("tan", FC, lambda grad, result: times(grad, plus(square(result), 1)))
asin = unary("asin", FC, lambda grad, self: over(grad, _p.sqrt(rsub(1, square(self)))))
acos = unary("acos", FC,
             lambda grad, self: over(grad, _p.neg(_p.sqrt(rsub(1, square(self))))))
atan = unary("atan", FC, lambda grad, self: over(grad, plus(square(self), 1)))
sinh = unary("sinh", FC, lambda grad, self: times(grad, _p.cosh(self)))
cosh = unary("cosh", FC, lambda grad, self: times(grad, _p.sinh(self)))
tanh = unary("tanh", FC, lambda grad, result: times(grad, rsub(1, square(result))))
asinh = unary("asinh", FC, lambda grad, self: over(grad, _p.sqrt(plus(square(self), 1))))
# sqrt(z - 1) * sqrt(z + 1), not sqrt(z^2 - 1): the right branch for complex z
acosh = unary("acosh", FC, lambda grad, self: over(grad, _p.mul(_p.sqrt(plus(self, -1)),
                                                                _p.sqrt(plus(self, 1)))))
atanh = unary("atanh", FC, lambda grad, self: over(grad, rsub(1, square(self))))
sqrt = unary("sqrt", FC, lambda grad, result: over(grad, scale(result, 2)))
rsqrt = unary("rsqrt", FC,
              lambda grad, result: times(grad, scale(_p.mul(result, square(result)), -0.5)))
reciprocal = unary("reciprocal", FC, lambda grad, result: times(grad, _p.neg(square(result))))
erf = unary("erf", FLOAT, lambda grad, self: _p.mul(
    grad, scale(_p.exp(_p.neg(square(self))), _2_OVER_SQRT_PI)))
erfc = unary("erfc", FLOAT, lambda grad, self: _p.mul(
    grad, scale(_p.exp(_p.neg(square(self))), -_2_OVER_SQRT_PI)))
erf_inv = unary("erf_inv", FLOAT, lambda grad, result: _p.mul(
    grad, scale(_p.exp(square(result)), math.sqrt(math.pi) / 2)))
lgamma = unary("lgamma", FLOAT, lambda grad, self: _p.mul(grad, _p.digamma(self)))
digamma = unary("digamma", FLOAT, lambda grad, self: _p.mul(grad, trigamma(self)))
floor = unary("floor", FLOAT, _zero_backward)
ceil = unary("ceil", FLOAT, _zero_backward)
round = unary("round", FLOAT, _zero_backward)       # half to even
trunc = unary("trunc", FLOAT, _zero_backward)
bitwise_not = unary("bitwise_not", BI, NONDIFFERENTIABLE)
conj = unary("conj", ANY, lambda grad: cj(grad))
signbit = unary("signbit", IF, NONDIFFERENTIABLE, "bool")
isfinite = unary("isfinite", FLOAT, NONDIFFERENTIABLE, "bool")
real = unary("real", COMPLEX, lambda grad: to_complex(grad), "real")
imag = unary("imag", COMPLEX, lambda grad: _p.complex(like(grad, 0), grad), "real")


# ----------------------------------------------------------------------------- binary

add = binary("add", ANY, lambda grad: (grad, grad))     # on bool: or
sub = binary("sub", IFC, lambda grad: (grad, _p.neg(grad)))


def _mul_backward(grad, self, other, needs_input_grad):
    return (times(grad, other) if needs_input_grad[0] else None,
            times(grad, self) if needs_input_grad[1] else None)


mul = binary("mul", ANY, _mul_backward)                 # on bool: and


def _div_backward(grad, self, other, needs_input_grad):
    return (over(grad, other) if needs_input_grad[0] else None,
            _p.neg(times(grad, _p.div(_p.div(self, other), other)))
            if needs_input_grad[1] else None)


div = binary("div", IFC, _div_backward)                 # integers: truncating, as C


def _rem_backward(grad, self, other, needs_input_grad):
    # C's fmod: self - trunc(self / other) * other (PyTorch's fmod formula)
    return grad, (_p.neg(_p.mul(grad, _p.trunc(_p.div(self, other))))
                  if needs_input_grad[1] else None)


rem = binary("rem", IF, _rem_backward)                  # the sign of the dividend, as C


def _pow_backward(grad, self, other, result, needs_input_grad):
    zero = like(grad, 0)
    gs = go = None
    if needs_input_grad[0]:
        # 0 where the exponent is 0 (also at self = 0, where other * self^(other-1) is NaN)
        d = _p.mul(other, _p.pow(self, plus(other, -1)))
        gs = _p.where(_p.eq(other, like(other, 0)), zero, times(grad, d))
    if needs_input_grad[1]:
        # at self = 0 with a real exponent >= 0 the gradient is 0, as PyTorch's (there
        # result * log(self) is NaN)
        if other.dtype.is_complex:
            im, re = _p.imag(other), _p.real(other)
            real_exp = _p.bitwise_and(_p.eq(im, like(im, 0)), _p.ge(re, like(re, 0)))
        else:
            real_exp = _p.ge(other, like(other, 0))
        at_zero = _p.bitwise_and(_p.eq(self, like(self, 0)), real_exp)
        go = times(grad, _p.where(at_zero, zero, _p.mul(result, _p.log(self))))
    return gs, go


pow = binary("pow", IFC, _pow_backward)


def _atan2_backward(grad, self, other, needs_input_grad):
    denom = _p.add(square(self), square(other))
    return (_p.mul(grad, _p.div(other, denom)) if needs_input_grad[0] else None,
            _p.mul(grad, _p.div(_p.neg(self), denom)) if needs_input_grad[1] else None)


atan2 = binary("atan2", FLOAT, _atan2_backward)


def _split_ties(grad, self, other, self_loses, other_loses, needs_input_grad):
    """maximum/minimum: the winner gets grad, ties split it evenly (as PyTorch)."""
    zero = like(grad, 0)
    shared = _p.where(_p.eq(self, other), scale(grad, 0.5), grad)
    return (_p.where(self_loses(self, other), zero, shared) if needs_input_grad[0] else None,
            _p.where(other_loses(self, other), zero, shared) if needs_input_grad[1] else None)


def _maximum_backward(grad, self, other, needs_input_grad):
    return _split_ties(grad, self, other, _p.lt, _p.gt, needs_input_grad)


def _minimum_backward(grad, self, other, needs_input_grad):
    return _split_ties(grad, self, other, _p.gt, _p.lt, needs_input_grad)


maximum = binary("maximum", BIF, _maximum_backward)
minimum = binary("minimum", BIF, _minimum_backward)
bitwise_and = binary("bitwise_and", BI, NONDIFFERENTIABLE)
bitwise_or = binary("bitwise_or", BI, NONDIFFERENTIABLE)
bitwise_xor = binary("bitwise_xor", BI, NONDIFFERENTIABLE)
shift_left = binary("shift_left", INT, NONDIFFERENTIABLE)
shift_right_arithmetic = binary("shift_right_arithmetic", INT, NONDIFFERENTIABLE)
nextafter = binary("nextafter", FLOAT, NONDIFFERENTIABLE)
eq = binary("eq", ANY, NONDIFFERENTIABLE, "bool")
ne = binary("ne", ANY, NONDIFFERENTIABLE, "bool")
lt = binary("lt", BIF, NONDIFFERENTIABLE, "bool")
le = binary("le", BIF, NONDIFFERENTIABLE, "bool")
gt = binary("gt", BIF, NONDIFFERENTIABLE, "bool")
ge = binary("ge", BIF, NONDIFFERENTIABLE, "bool")


# ----------------------------------------------------------------------------- the others

def _complex_meta(real, imag):
    check_tensor("complex", "real", real)
    check_tensor("complex", "imag", imag)
    same_shape("complex", ("real", real), ("imag", imag))
    same_dtype("complex", ("real", real), ("imag", imag))
    if real.dtype not in (D.float32, D.float64):
        raise fail("complex", f"expected float32 or float64 parts, got {real.dtype.name}")
    return TensorMeta(tuple(real.shape), real.dtype.to_complex())


complex = prim("complex(Tensor real, Tensor imag) -> Tensor", _complex_meta, POINTWISE)


@derivative(complex)
def _complex_backward(grad, needs_input_grad):
    return (_p.real(grad) if needs_input_grad[0] else None,
            _p.imag(grad) if needs_input_grad[1] else None)


def _where_meta(pred, self, other):
    for arg, x in (("pred", pred), ("self", self), ("other", other)):
        check_tensor("where", arg, x)
    if pred.dtype is not D.bool:
        raise fail("where", f"expected a bool tensor for 'pred', got {pred.dtype.name}")
    same_shape("where", ("pred", pred), ("self", self), ("other", other))
    same_dtype("where", ("self", self), ("other", other))
    return TensorMeta(tuple(self.shape), self.dtype)


where = prim("where(Tensor pred, Tensor self, Tensor other) -> Tensor", _where_meta, POINTWISE)


@derivative(where)
def _where_backward(grad, pred, needs_input_grad):
    zero = like(grad, 0)
    return (None, _p.where(pred, grad, zero) if needs_input_grad[1] else None,
            _p.where(pred, zero, grad) if needs_input_grad[2] else None)


def _convert_meta(self, dtype):
    check_tensor("convert_element_type", "self", self)
    return TensorMeta(tuple(self.shape), dtype_arg("convert_element_type", dtype))


# float -> int truncates toward zero and saturates (NaN -> 0), as XLA does.
convert_element_type = prim(
    "convert_element_type(Tensor self, ScalarType dtype) -> Tensor", _convert_meta, POINTWISE)


@derivative(convert_element_type)
def _convert_element_type_backward(grad, self_meta):
    dtype = self_meta[1]
    if grad.dtype.is_complex and not dtype.is_complex:
        grad = _p.real(grad)
    return grad if grad.dtype is dtype else _p.convert_element_type(grad, dtype)


def _device_put_meta(self, device):
    check_tensor("device_put", "self", self)
    return TensorMeta(tuple(self.shape), self.dtype)


device_put = prim("device_put(Tensor self, Device device) -> Tensor", _device_put_meta)


@derivative(device_put)
def _device_put_backward(grad, self_meta):
    return _p.device_put(grad, self_meta[2])


def _stop_gradient_meta(self):
    check_tensor("stop_gradient", "self", self)
    return TensorMeta(tuple(self.shape), self.dtype)


# A copy of its operand that differentiation treats as a constant: what ``detach()``
# decomposes to, so that a program differentiated by JAX (``jax.vjp`` of a compiled
# module, fnx.lower.jax_autograd) stops where autograd stops (lax.stop_gradient).
stop_gradient = prim("stop_gradient(Tensor self) -> Tensor", _stop_gradient_meta)
nondifferentiable(stop_gradient)


__all__ = ["UNARY", "BINARY", "unary", "binary", *(row[0] for row in UNARY + BINARY),
           "complex", "where", "convert_element_type", "device_put", "stop_gradient"]
