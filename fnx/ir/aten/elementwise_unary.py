"""Decompositions and derivatives of the unary pointwise ops defined in ``elementwise``
(abs, neg, exp, sin, ..., rounding, relu, isnan, logical_not, ...), attached to the op
objects defined there.  Type promotion is applied by declaration (``refs.promote``), as
for the other decompositions of ``elementwise``.
"""
from __future__ import annotations

import math

from ...core import dtype as D
from ...ops import aten, prims
from .. import refs
from ..grad_utils import conj, sgn
from ..promotion import (ALWAYS_BOOL, COMPLEX_TO_FLOAT, DEFAULT, INT_TO_FLOAT, NO_OPMATH,
                         elementwise_dtypes)
from ..registry import decomposition, derivative, nondifferentiable
from ._common import not_implemented
from .elementwise import _is_int, _op, copy_of, full_like


# ---------------------------------------------------------------------------- unary

def _float_unary(prim):
    """exp, sin, log1p, ...: INT_TO_FLOAT promotion already made the operand floating."""
    def fn(self):
        return prim(self)
    return fn


_FLOAT_UNARY = {n: getattr(prims, n) for n in (
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "sin", "sinh", "tan",
    "tanh", "erf", "exp", "expm1", "log", "log10", "log1p", "log2", "reciprocal", "rsqrt",
    "sqrt", "exp2")}
_FLOAT_UNARY["erfinv"] = prims.erf_inv
for _name, _prim in _FLOAT_UNARY.items():
    decomposition(_op(f"aten::{_name}"))(refs.promote(INT_TO_FLOAT, ("self",))(_float_unary(_prim)))


@decomposition(_op("aten::sigmoid"))
@refs.promote(INT_TO_FLOAT, ("self",))
def _sigmoid(self):
    # 1 / (1 + exp(-x)): exp overflows to inf for very negative x, giving exactly 0.
    one = full_like(self, 1)
    return prims.div(one, prims.add(one, prims.exp(prims.neg(self))))


@decomposition(_op("aten::abs"))
@refs.promote(COMPLEX_TO_FLOAT, ("self",))
def _abs(self):
    if self.dtype is D.bool:
        raise not_implemented("abs_cpu", D.bool)
    if not self.dtype.is_floating_point:
        return prims.abs(self)
    # selects whose JAX derivative (jax.vjp of a compiled module, fnx.lower.jax_autograd)
    # is abs's own, sign(x), where lax.abs passes the gradient at 0: the last branch is
    # x * 0 + 0 (+0 for -0, NaN for NaN, derivative 0, finite even where not selected)
    zero = full_like(self, 0)
    return prims.where(prims.gt(self, zero), self,
                       prims.where(prims.lt(self, zero), prims.neg(self),
                                   prims.add(prims.mul(self, zero), zero)))


@decomposition(_op("aten::neg"))
@refs.promote(NO_OPMATH, ("self",))
def _neg(self):
    if self.dtype is D.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")
    return prims.neg(self)


@decomposition(_op("aten::sign"))
@refs.promote(NO_OPMATH, ("self",))
def _sign(self):
    # sign of a bool is the bool itself (False -> 0, True -> 1); PyTorch's sign is
    # (0 < x) - (x < 0), so sign(nan) is 0 (the prim, like lax.sign, gives nan)
    if self.dtype is D.bool:
        return copy_of(self)
    out = prims.sign(self)
    if self.dtype.is_floating_point:
        out = prims.where(prims.ne(self, self), refs.full(self.shape, 0, self.dtype,
                                                          self.device), out)
    return out


def _rounding(name):
    """ceil/floor/round/trunc: integers are already whole; bool has no kernel."""
    prim = getattr(prims, name)

    def fn(self):
        if self.dtype is D.bool:
            raise not_implemented(f"{name}_cpu", D.bool)
        if _is_int(self):
            return copy_of(self)
        return prim(self)      # prims.round rounds half to even, as torch.round
    fn.__name__ = f"_{name}"
    return fn


for _name in ("ceil", "floor", "round", "trunc"):
    decomposition(_op(f"aten::{_name}"))(refs.promote(NO_OPMATH, ("self",))(_rounding(_name)))


@decomposition(_op("aten::round.decimals"))
@refs.promote(DEFAULT, ("self",))
def _round_decimals(self, *, decimals):
    if not self.dtype.is_floating_point:
        return copy_of(self)
    # Scale, round half to even, unscale.  A negative ``decimals`` divides first so that the
    # scale factor 10**-decimals stays an exact integer (PyTorch and NumPy do the same).
    if decimals >= 0:
        scale = full_like(self, 10.0 ** decimals)
        return prims.div(prims.round(prims.mul(self, scale)), scale)
    scale = full_like(self, 10.0 ** -decimals)
    return prims.mul(prims.round(prims.div(self, scale)), scale)


@decomposition(_op("aten::frac"))
def _frac(self):
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise not_implemented("frac_cpu", self.dtype)
    # x - trunc(x): the result keeps the sign of x; frac(+-inf) is NaN, as in PyTorch.
    return aten.sub.Tensor(self, aten.trunc.default(self))


@decomposition(_op("aten::relu"))
@refs.promote(NO_OPMATH, ("self",))
def _relu(self):
    if self.dtype is D.bool:
        raise not_implemented("clamp_min_cpu", D.bool)
    # a select, not maximum(self, 0): a compiled function differentiated by jax.vjp
    # (fnx.lower.jax_autograd) then gets PyTorch's gradient, zero at 0 (maximum splits a
    # tie), and NaN stays NaN
    zero = full_like(self, 0)
    return prims.where(prims.le(self, zero), zero, self)


@decomposition(_op("aten::bitwise_not"))
@refs.promote(NO_OPMATH, ("self",))
def _bitwise_not(self):
    if self.dtype.is_floating_point or self.dtype.is_complex:
        raise not_implemented("bitwise_not_cpu", self.dtype)
    return prims.bitwise_not(self)      # on bool: logical not


@decomposition(_op("aten::square"))
def _square(self):
    # square is pow(x, 2): a bool tensor squares to int64 (the type of the literal 2)
    dtype = elementwise_dtypes(DEFAULT, self, 2)[1]
    x = self if self.dtype is dtype else aten._to_copy.default(self, dtype=dtype)
    return aten.mul.Tensor(x, x)


@decomposition(_op("aten::isnan"))
@refs.promote(ALWAYS_BOOL, ("self",))
def _isnan(self):
    return prims.ne(self, self)      # only NaN differs from itself (always False for ints)


@decomposition(_op("aten::isinf"))
@refs.promote(ALWAYS_BOOL, ("self",))
def _isinf(self):
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        return prims.full(list(self.shape), False, dtype=D.bool, device=self.device)
    # |z| of a complex is inf when either part is (even if the other is NaN)
    mag = prims.abs(self)
    return prims.eq(mag, full_like(mag, float("inf")))


@decomposition(_op("aten::isfinite"))
@refs.promote(ALWAYS_BOOL, ("self",))
def _isfinite(self):
    if self.dtype.is_complex:
        return prims.bitwise_and(prims.isfinite(prims.real(self)),
                                 prims.isfinite(prims.imag(self)))
    if not self.dtype.is_floating_point:
        return prims.full(list(self.shape), True, dtype=D.bool, device=self.device)
    return prims.isfinite(self)


@decomposition(_op("aten::signbit"))
@refs.promote(ALWAYS_BOOL, ("self",))
def _signbit(self):
    if self.dtype is D.bool:
        return prims.full(list(self.shape), False, dtype=D.bool, device=self.device)
    return prims.signbit(self)      # True for -0.0 and negative NaNs too


@decomposition(_op("aten::logical_not"))
@refs.promote(ALWAYS_BOOL, ("self",))
def _logical_not(self):
    return prims.eq(self, full_like(self, 0))       # NaN counts as true, so not(NaN) is False


# ---------------------------------------------------------------------------- unary derivatives
# PyTorch's formulas, with the factor conjugated for complex inputs (the gradient is the
# conjugate Wirtinger derivative).  Formulas that can be written from the output name
# ``result`` instead of ``self`` (exp, tanh, sigmoid, sqrt, relu, ...): then the input is
# not kept alive for backward, and ``relu_`` after ``relu`` stays legal.

_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _unary(name):
    return derivative(_op(f"aten::{name}"))


@_unary("neg")
def _neg_backward(grad):
    return aten.neg.default(grad)


@_unary("abs")
def _abs_backward(grad, self):
    return aten.mul.Tensor(grad, sgn(self))


# Piecewise-constant ops: zero gradient, as in PyTorch (not "no gradient").
@derivative(*(_op(f"aten::{n}") for n in ("sign", "ceil", "floor", "round", "trunc",
                                          "round.decimals")))
def _zero_backward(grad):
    return aten.zeros_like.default(grad)


@_unary("frac")
def _frac_backward(grad):
    return grad


@_unary("exp")
def _exp_backward(grad, result):
    return aten.mul.Tensor(grad, conj(result))


@_unary("exp2")
def _exp2_backward(grad, result):
    return aten.mul.Tensor(grad, aten.mul.Scalar(conj(result), _LN2))


@_unary("expm1")
def _expm1_backward(grad, result):
    return aten.mul.Tensor(grad, aten.add.Scalar(conj(result), 1))


@_unary("log")
def _log_backward(grad, self):
    return aten.div.Tensor(grad, conj(self))


@_unary("log2")
def _log2_backward(grad, self):
    return aten.div.Tensor(grad, aten.mul.Scalar(conj(self), _LN2))


@_unary("log10")
def _log10_backward(grad, self):
    return aten.div.Tensor(grad, aten.mul.Scalar(conj(self), _LN10))


@_unary("log1p")
def _log1p_backward(grad, self):
    return aten.div.Tensor(grad, aten.add.Scalar(conj(self), 1))


@_unary("sqrt")
def _sqrt_backward(grad, result):
    return aten.div.Tensor(grad, aten.mul.Scalar(conj(result), 2))


@_unary("rsqrt")
def _rsqrt_backward(grad, result):
    # d/dx x^-1/2 = -1/2 x^-3/2 = -1/2 result^3
    r = conj(result)
    return aten.mul.Tensor(grad, aten.mul.Scalar(aten.mul.Tensor(aten.mul.Tensor(r, r), r),
                                                 -0.5))


@_unary("reciprocal")
def _reciprocal_backward(grad, result):
    r = conj(result)
    return aten.mul.Tensor(grad, aten.neg.default(aten.mul.Tensor(r, r)))


@_unary("square")
def _square_backward(grad, self):
    return aten.mul.Tensor(grad, aten.mul.Scalar(conj(self), 2))


@_unary("sin")
def _sin_backward(grad, self):
    return aten.mul.Tensor(grad, conj(aten.cos.default(self)))


@_unary("cos")
def _cos_backward(grad, self):
    return aten.mul.Tensor(grad, aten.neg.default(conj(aten.sin.default(self))))


@_unary("tan")
def _tan_backward(grad, result):
    r = conj(result)
    return aten.mul.Tensor(grad, aten.add.Scalar(aten.mul.Tensor(r, r), 1))


@_unary("sinh")
def _sinh_backward(grad, self):
    return aten.mul.Tensor(grad, conj(aten.cosh.default(self)))


@_unary("cosh")
def _cosh_backward(grad, self):
    return aten.mul.Tensor(grad, conj(aten.sinh.default(self)))


@_unary("tanh")
def _tanh_backward(grad, result):
    r = conj(result)
    return aten.mul.Tensor(grad, aten.rsub.Scalar(aten.mul.Tensor(r, r), 1))


@_unary("sigmoid")
def _sigmoid_backward(grad, result):
    r = conj(result)
    return aten.mul.Tensor(grad, aten.mul.Tensor(r, aten.rsub.Scalar(r, 1)))


def _one_minus_square(x):
    return aten.rsub.Scalar(aten.mul.Tensor(x, x), 1)


@_unary("asin")
def _asin_backward(grad, self):
    return aten.mul.Tensor(grad, conj(aten.rsqrt.default(_one_minus_square(self))))


@_unary("acos")
def _acos_backward(grad, self):
    return aten.mul.Tensor(grad, aten.neg.default(conj(aten.rsqrt.default(
        _one_minus_square(self)))))


@_unary("atan")
def _atan_backward(grad, self):
    return aten.div.Tensor(grad, conj(aten.add.Scalar(aten.mul.Tensor(self, self), 1)))


@_unary("asinh")
def _asinh_backward(grad, self):
    return aten.mul.Tensor(grad, conj(aten.rsqrt.default(
        aten.add.Scalar(aten.mul.Tensor(self, self), 1))))


@_unary("acosh")
def _acosh_backward(grad, self):
    return aten.mul.Tensor(grad, conj(aten.rsqrt.default(
        aten.sub.Scalar(aten.mul.Tensor(self, self), 1))))


@_unary("atanh")
def _atanh_backward(grad, self):
    return aten.div.Tensor(grad, conj(_one_minus_square(self)))


@_unary("erf")
def _erf_backward(grad, self):
    # 2 / sqrt(pi) * exp(-x^2)
    e = aten.exp.default(aten.neg.default(aten.mul.Tensor(self, self)))
    return aten.mul.Tensor(grad, aten.mul.Scalar(e, 2.0 / math.sqrt(math.pi)))


@_unary("erfinv")
def _erfinv_backward(grad, result):
    # sqrt(pi) / 2 * exp(erfinv(x)^2)
    e = aten.exp.default(aten.mul.Tensor(result, result))
    return aten.mul.Tensor(grad, aten.mul.Scalar(e, math.sqrt(math.pi) / 2))


@_unary("relu")
def _relu_backward(grad, result):
    # PyTorch's threshold_backward: zero where result <= 0, so a NaN passes the gradient
    return aten.where.self(aten.le.Scalar(result, 0), 0, grad)


nondifferentiable(*(_op(f"aten::{n}") for n in (
    "bitwise_not", "isnan", "isinf", "isfinite", "logical_not", "signbit")))
