"""Pointwise math functions beyond the arithmetic core, as PyTorch defines them: ``hypot``,
``copysign``, ``logaddexp``, ``logaddexp2``, ``nextafter``, ``heaviside``, ``gcd``, ``lcm``
(each with its ``out=`` form and, where PyTorch has one, its in-place form), and the
composites ``sgn``, ``ldexp`` and ``float_power``.

Each decomposes to prims (the composites to ATen ops) and carries PyTorch's derivative
formula; ``nextafter`` and ``heaviside`` have none (as in PyTorch).
"""
from __future__ import annotations

import math

from ...core import dtype as D
from ...ops import aten, prims
from .. import refs
from ..promotion import DEFAULT, INT_TO_FLOAT
from ..grad_utils import is_tensor
from ..registry import TensorMeta, decomposition, defop, derivative, nondifferentiable
from .elementwise import full_like
from ._common import not_implemented
from .special import FAMILIES, pointwise_family, real_meta

__all__ = ["BINARY", "OPS", "gcd", "lcm", "frexp", "heaviside", "sgn", "ldexp", "float_power",
           "float_power_scalar"]

_ARGS = "Tensor self, Tensor other"
# name, promotion kind, floating results only, has an in-place variant
BINARY = [("hypot", DEFAULT, True, True), ("copysign", INT_TO_FLOAT, False, True),
          ("logaddexp", DEFAULT, True, False), ("logaddexp2", DEFAULT, True, False),
          ("nextafter", DEFAULT, True, True)]
OPS = {name: pointwise_family(name, "default", _ARGS, real_meta(name, 2, kind, floats), inplace,
                              kind)
       for name, kind, floats, inplace in BINARY}


def _heaviside_meta(self, values):
    if getattr(values, "dtype", self.dtype) is not self.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different "
                           "dtypes.")
    return real_meta("heaviside", 2, DEFAULT)(self, values)


def _integer_meta(name):
    base = real_meta(name, 2, DEFAULT)

    def meta(self, other):
        m = base(self, other)
        if m.dtype.is_floating_point or m.dtype is D.bool:
            raise not_implemented(f"{name}_cpu", m.dtype)
        return m
    return meta


gcd = pointwise_family("gcd", "default", _ARGS, _integer_meta("gcd"), True, DEFAULT)
lcm = pointwise_family("lcm", "default", _ARGS, _integer_meta("lcm"), True, DEFAULT)
heaviside = pointwise_family("heaviside", "default", "Tensor self, Tensor values",
                             _heaviside_meta, True, DEFAULT)
def _frexp_meta(self):
    if not self.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return TensorMeta(tuple(self.shape), self.dtype), TensorMeta(tuple(self.shape), D.int32)


frexp = defop("frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)",
              tags=("pointwise",), meta=_frexp_meta)
sgn = defop("sgn(Tensor self) -> Tensor", tags=("pointwise",))
ldexp = defop("ldexp.Tensor(Tensor self, Tensor other) -> Tensor", tags=("pointwise",))
float_power = defop("float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
                    tags=("pointwise",))
float_power_scalar = defop("float_power.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
                           tags=("pointwise",))


# ============================================================================ decompositions

def _c(x, v):
    return full_like(x, v)


def _binary(name):
    op = OPS[name]

    def deco(fn):
        promoted = refs.promote(op.promotion, ("self", "other"))(fn)

        def checked(self, other):
            op.meta(self, other)
            return promoted(self, other)
        return decomposition(op)(checked)
    return deco


@_binary("hypot")
def _hypot(self, other):
    # max * sqrt(1 + (min / max)^2): no overflow of the squares; inf wins over NaN
    a, b = prims.abs(self), prims.abs(other)
    hi, lo = prims.maximum(a, b), prims.minimum(a, b)
    zero = prims.eq(hi, _c(hi, 0))
    safe = prims.where(zero, _c(hi, 1), hi)
    r = prims.div(lo, safe)
    out = prims.mul(hi, prims.sqrt(prims.add(_c(r, 1), prims.mul(r, r))))
    out = prims.where(zero, _c(hi, 0), out)
    inf = prims.bitwise_or(prims.eq(a, _c(a, math.inf)), prims.eq(b, _c(b, math.inf)))
    return prims.where(inf, _c(hi, math.inf), out)


@_binary("copysign")
def _copysign(self, other):
    a = prims.abs(self)
    return prims.where(prims.signbit(other), prims.neg(a), a)


def _logaddexp_with(log1p_of_exp):
    def fn(self, other):
        # max + log(1 + e^-|a - b|); equal infinities give themselves (not inf - inf)
        hi = prims.maximum(self, other)
        d = prims.neg(prims.abs(prims.sub(self, other)))
        out = prims.add(hi, log1p_of_exp(d))
        same_inf = prims.bitwise_and(prims.eq(self, other),
                                     prims.eq(prims.abs(self), _c(self, math.inf)))
        return prims.where(same_inf, self, out)
    return fn


_binary("logaddexp")(_logaddexp_with(lambda d: prims.log1p(prims.exp(d))))
_binary("logaddexp2")(_logaddexp_with(
    lambda d: prims.mul(prims.log1p(prims.exp2(d)), _c(d, 1 / math.log(2)))))


@_binary("nextafter")
def _nextafter(self, other):
    return prims.nextafter(self, other)


@decomposition(heaviside)
def _heaviside(self, values):
    _heaviside_meta(self, values)
    return _heaviside_promoted(self, values)


@refs.promote(DEFAULT, ("self", "values"))
def _heaviside_promoted(self, values):
    # values where x is 0, else x > 0 (NaN gives 0, as PyTorch)
    pos = prims.convert_element_type(prims.gt(self, _c(self, 0)), self.dtype)
    return prims.where(prims.eq(self, _c(self, 0)), values, pos)


def _euclid_steps(dtype):
    """Euclid's algorithm on values below 2^bits ends within n steps, F(n) > 2^bits (Lamé)."""
    a, b, n = 1, 1, 2
    while b <= 2 ** (8 * dtype.itemsize):
        a, b, n = b, a + b, n + 1
    return n


def _gcd_of(self, other):
    a, b = prims.abs(self), prims.abs(other)
    zero = _c(b, 0)
    for _ in range(_euclid_steps(self.dtype)):    # a fixed number of steps: no loop prim
        nz = prims.ne(b, zero)
        r = prims.rem(a, prims.where(nz, b, _c(b, 1)))
        a, b = prims.where(nz, b, a), prims.where(nz, r, b)
    return a


@decomposition(gcd)
def _gcd(self, other):
    gcd.meta(self, other)
    return refs.promote(DEFAULT, ("self", "other"))(_gcd_of)(self, other)


@decomposition(lcm)
def _lcm(self, other):
    lcm.meta(self, other)
    return refs.promote(DEFAULT, ("self", "other"))(_lcm_of)(self, other)


def _lcm_of(self, other):
    g = _gcd_of(self, other)
    zero = prims.eq(g, _c(g, 0))
    out = prims.abs(prims.mul(prims.div(self, prims.where(zero, _c(g, 1), g)), other))
    return prims.where(zero, _c(g, 0), out)


def _pow2(x, e):
    """x * 2^e for a whole-valued float tensor e, in two halves (2^e alone can over- or
    underflow); pow, not exp2, which XLA approximates even at integers."""
    half = prims.floor(prims.mul(e, _c(e, 0.5)))
    two = _c(e, 2)
    return prims.mul(prims.mul(x, prims.pow(two, half)), prims.pow(two, prims.sub(e, half)))


def _renormalize(cond, m, e, factor, step):
    return (prims.where(cond, prims.mul(m, _c(m, factor)), m),
            prims.where(cond, prims.add(e, _c(e, step)), e))


@decomposition(frexp)
def _frexp(self):
    """x = m 2^e with 0.5 <= |m| < 1 (C's frexp): e from log2|x|, corrected by one where
    log2 rounded across a power of two; 0, inf and NaN give (x, 0)."""
    _frexp_meta(self)
    x = self if self.dtype.itemsize >= 4 else prims.convert_element_type(self, D.float32)
    ax = prims.abs(x)
    normal = prims.bitwise_and(prims.isfinite(x), prims.ne(x, _c(x, 0)))
    safe = prims.where(normal, ax, _c(x, 1))
    e = prims.add(prims.floor(prims.log2(safe)), _c(x, 1))
    m = _pow2(prims.where(normal, x, _c(x, 0)), prims.neg(e))
    m, e = _renormalize(prims.ge(prims.abs(m), _c(m, 1)), m, e, 0.5, 1)
    small = prims.bitwise_and(prims.lt(prims.abs(m), _c(m, 0.5)), normal)
    m, e = _renormalize(small, m, e, 2, -1)
    m = prims.where(normal, m, x)
    e = prims.convert_element_type(prims.where(normal, e, _c(e, 0)), D.int32)
    return prims.convert_element_type(m, self.dtype), e


@derivative(frexp)
def _frexp_backward(grads, self, result1):
    # mantissa = x / 2^exponent; the exponent is piecewise constant (no gradient)
    g = grads[0]
    if g is None:
        return None
    return aten.div.Tensor(g, aten.pow.Scalar(2.0, result1))


@decomposition(sgn)
def _sgn(self):
    if self.dtype.is_complex:
        # z / |z|, 0 at 0 (an infinite z gives NaN, as PyTorch; lax's sign gives z's phase)
        m = prims.abs(self)
        zero = prims.eq(m, _c(m, 0))
        safe = prims.complex(prims.where(zero, _c(m, 1), m), _c(m, 0))
        return prims.where(zero, _c(self, 0), prims.div(self, safe))
    return aten.sign.default(self)


@decomposition(ldexp)
def _ldexp(self, other):
    return aten.mul.Tensor(self, aten.pow.Scalar(2.0, other))


@decomposition(float_power)
def _float_power(self, exponent):
    # float64 (complex128 if either is complex) whatever the inputs, as PyTorch
    if self.dtype.is_complex or exponent.dtype.is_complex:
        target = D.complex128
    else:
        target = D.float64
    return aten.pow.Tensor_Tensor(aten._to_copy.default(self, dtype=target),
                                  aten._to_copy.default(exponent, dtype=target))


@decomposition(float_power_scalar)
def _float_power_scalar(self, exponent):
    target = D.complex128 if self.dtype.is_complex or isinstance(exponent, complex) \
        else D.float64
    return aten.pow.Tensor_Scalar(aten._to_copy.default(self, dtype=target), exponent)


# ============================================================================ derivatives

@derivative(OPS["hypot"])
def _hypot_backward(grad, self, other, result, needs_input_grad):
    return (aten.mul.Tensor(grad, aten.div.Tensor(self, result)) if needs_input_grad[0] else None,
            aten.mul.Tensor(grad, aten.div.Tensor(other, result)) if needs_input_grad[1]
            else None)


@derivative(OPS["copysign"])
def _copysign_backward(grad, self, result, needs_input_grad):
    # result / self: +-1, 0 where self is 0; nothing flows to other
    zero = aten.eq.Scalar(self, 0)
    ratio = aten.div.Tensor(result, aten.where.self(zero, aten.ones_like.default(self), self))
    return aten.mul.Tensor(grad, aten.where.self(zero, 0.0, ratio)), None


def _logaddexp_backward(exp):
    def formula(grad, self, other, needs_input_grad):
        def part(a, b):       # a is a tensor; b may be a number
            diff = aten.sub.Tensor(b, a) if is_tensor(b) else aten.rsub.Scalar(a, b)
            return aten.div.Tensor(grad, aten.add.Scalar(exp(diff), 1))
        return (part(self, other) if needs_input_grad[0] else None,
                part(other, self) if needs_input_grad[1] else None)
    return formula


derivative(OPS["logaddexp"])(_logaddexp_backward(aten.exp.default))
derivative(OPS["logaddexp2"])(_logaddexp_backward(aten.exp2.default))
# no derivative in PyTorch (nextafter's finite differences would say 1: it is not)
nondifferentiable(*(v for op in (OPS["nextafter"], heaviside, gcd, lcm)
                    for v in FAMILIES[op].values()))
