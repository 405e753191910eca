"""Pointwise operators: unary math, binary arithmetic, comparisons, logic, where, clamp.

Each op is one row: its schema and its type-promotion kind.  From the row come the
op, its in-place variant ``name_`` and its ``name.out`` variant, each with a meta
function derived from the promotion kind.  Each functional op's decomposition to prims
is at the end of this file (the unary ops': ``elementwise_unary``), attached to the same
op objects (with PyTorch's type promotion applied by declaration); in-place and ``out=``
variants are not decomposed (functionalization turns them into the functional op plus a
write-back).
"""
from __future__ import annotations

import cmath
import math

import numpy as np

from ...core import dtype as D
from ...dispatch.dispatcher import get_op
from ...ops import aten, prims
from .. import refs
from ..grad_utils import conj, is_tensor
from ..promotion import (ALWAYS_BOOL, COMPLEX_TO_FLOAT, DEFAULT, INT_TO_FLOAT, NO_OPMATH,
                         elementwise_dtypes)
from ..registry import TensorMeta, decomposition, defop, derivative, nondifferentiable
from ..dims import broadcast_shapes
from ..variants import VARIANTS
from ._common import inplace_meta, not_implemented, out_meta, pointwise_meta, shape_of

CORE = ("core", "pointwise")
ATEN = ("pointwise",)

# name, promotion kind, is core
UNARY = [
    ("abs", COMPLEX_TO_FLOAT, True), ("neg", DEFAULT, True), ("sign", DEFAULT, True),
    ("acos", INT_TO_FLOAT, True), ("acosh", INT_TO_FLOAT, True), ("asin", INT_TO_FLOAT, True),
    ("asinh", INT_TO_FLOAT, True), ("atan", INT_TO_FLOAT, True), ("atanh", INT_TO_FLOAT, True),
    ("cos", INT_TO_FLOAT, True), ("cosh", INT_TO_FLOAT, True), ("sin", INT_TO_FLOAT, True),
    ("sinh", INT_TO_FLOAT, True), ("tan", INT_TO_FLOAT, True), ("tanh", INT_TO_FLOAT, True),
    ("erf", INT_TO_FLOAT, True), ("exp", INT_TO_FLOAT, True), ("expm1", INT_TO_FLOAT, True),
    ("log", INT_TO_FLOAT, True), ("log10", INT_TO_FLOAT, True), ("log1p", INT_TO_FLOAT, True),
    ("log2", INT_TO_FLOAT, True), ("reciprocal", INT_TO_FLOAT, True),
    ("rsqrt", INT_TO_FLOAT, True), ("sqrt", INT_TO_FLOAT, True),
    ("sigmoid", INT_TO_FLOAT, True), ("exp2", INT_TO_FLOAT, False),
    ("erfinv", INT_TO_FLOAT, False), ("ceil", DEFAULT, True), ("floor", DEFAULT, True),
    ("round", DEFAULT, True), ("trunc", DEFAULT, True), ("frac", DEFAULT, False),
    ("relu", DEFAULT, True), ("bitwise_not", DEFAULT, True),
    ("isnan", ALWAYS_BOOL, True), ("isinf", ALWAYS_BOOL, True), ("isfinite", ALWAYS_BOOL, False),
    ("logical_not", ALWAYS_BOOL, True), ("signbit", ALWAYS_BOOL, False),
    ("square", DEFAULT, False),
]
_NO_INPLACE = {"isnan", "isinf", "isfinite", "signbit"}

# name, overload, schema arguments after ``self``, promotion kind, is core
BINARY = [
    ("add", "Tensor", "Tensor other, *, Scalar alpha=1", DEFAULT, True),
    ("add", "Scalar", "Scalar other, Scalar alpha=1", DEFAULT, True),
    ("sub", "Tensor", "Tensor other, *, Scalar alpha=1", DEFAULT, True),
    ("sub", "Scalar", "Scalar other, Scalar alpha=1", DEFAULT, True),
    ("rsub", "Tensor", "Tensor other, *, Scalar alpha=1", DEFAULT, False),
    ("rsub", "Scalar", "Scalar other, Scalar alpha=1", DEFAULT, False),
    ("mul", "Tensor", "Tensor other", DEFAULT, True),
    ("mul", "Scalar", "Scalar other", DEFAULT, True),
    ("div", "Tensor", "Tensor other", INT_TO_FLOAT, True),
    ("div", "Scalar", "Scalar other", INT_TO_FLOAT, True),
    ("div", "Tensor_mode", "Tensor other, *, str? rounding_mode", DEFAULT, True),
    ("div", "Scalar_mode", "Scalar other, *, str? rounding_mode", DEFAULT, True),
    ("floor_divide", "default", "Tensor other", DEFAULT, False),
    ("floor_divide", "Scalar", "Scalar other", DEFAULT, False),
    ("remainder", "Tensor", "Tensor other", DEFAULT, True),
    ("remainder", "Scalar", "Scalar other", DEFAULT, True),
    ("fmod", "Tensor", "Tensor other", DEFAULT, True),
    ("fmod", "Scalar", "Scalar other", DEFAULT, True),
    ("pow", "Tensor_Tensor", "Tensor exponent", DEFAULT, True),
    ("pow", "Tensor_Scalar", "Scalar exponent", DEFAULT, True),
    ("atan2", "default", "Tensor other", INT_TO_FLOAT, True),
    ("maximum", "default", "Tensor other", DEFAULT, True),
    ("minimum", "default", "Tensor other", DEFAULT, True),
    ("bitwise_and", "Tensor", "Tensor other", DEFAULT, True),
    ("bitwise_and", "Scalar", "Scalar other", DEFAULT, True),
    ("bitwise_or", "Tensor", "Tensor other", DEFAULT, True),
    ("bitwise_or", "Scalar", "Scalar other", DEFAULT, True),
    ("bitwise_xor", "Tensor", "Tensor other", DEFAULT, True),
    ("bitwise_xor", "Scalar", "Scalar other", DEFAULT, True),
    ("bitwise_left_shift", "Tensor", "Tensor other", DEFAULT, False),
    ("bitwise_left_shift", "Tensor_Scalar", "Scalar other", DEFAULT, False),
    ("bitwise_right_shift", "Tensor", "Tensor other", DEFAULT, False),
    ("bitwise_right_shift", "Tensor_Scalar", "Scalar other", DEFAULT, False),
    ("logical_and", "default", "Tensor other", ALWAYS_BOOL, True),
    ("logical_or", "default", "Tensor other", ALWAYS_BOOL, True),
    ("logical_xor", "default", "Tensor other", ALWAYS_BOOL, True),
]
for _cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
    BINARY.append((_cmp, "Tensor", "Tensor other", ALWAYS_BOOL, True))
    BINARY.append((_cmp, "Scalar", "Scalar other", ALWAYS_BOOL, True))


def _define_family(name, overload, args, kind, core, n_tensors):
    """Define ``name.overload``, ``name_.overload`` and ``name.out`` from one row."""
    ov = "" if overload == "default" else f".{overload}"
    tags = CORE if core else ATEN
    meta = pointwise_meta(kind, n_tensors)
    if name == "div" and overload.endswith("_mode"):
        meta = _div_mode_meta(n_tensors)
    if name in _OPERAND_CHECKS or (name, overload) == ("pow", "Tensor_Scalar"):
        meta = _checked(name, meta)
    sep = ", " if args else ""
    op = defop(f"{name}{ov}(Tensor self{sep}{args}) -> Tensor", tags=tags, promotion=kind,
               meta=meta)
    ops = {"functional": op}
    if name not in _NO_INPLACE:
        ops["inplace"] = defop(f"{name}_{ov}(Tensor(a!) self{sep}{args}) -> Tensor(a!)",
                               tags=("inplace", "pointwise"), promotion=kind,
                               meta=inplace_meta(meta, f"{name}_"))
    out_ov = "out" if overload in ("default", "Tensor") else f"{overload}_out"
    kw = ", *" if "*" not in args else ""
    # atan2.out is the one out= overload in the Core ATen opset
    out_tags = ("out", "pointwise") + (("core",) if (name, out_ov) == ("atan2", "out") else ())
    ops["out"] = defop(f"{name}.{out_ov}(Tensor self{sep}{args}{kw}, Tensor(a!) out) "
                       f"-> Tensor(a!)", tags=out_tags, promotion=kind,
                       meta=out_meta(meta, name))
    return ops


NEG_BOOL = ("Negation, the `-` operator, on a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
SUB_BOOLS = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
             "`^` or `logical_xor()` operator instead.")
SUB_BOOL = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
_OPERAND_CHECKS = {"neg", "sub", "rsub"}


def _is_bool(x) -> bool:
    return x.dtype is D.bool if hasattr(x, "_ks") else isinstance(x, bool)


def check_operands(name, self, other=None):
    """PyTorch's refusals that do not follow from promotion: -bool, bool - x, and an
    integer tensor to a negative integer scalar power.  Meta functions and kernels share it."""
    if name == "neg" and _is_bool(self):
        raise RuntimeError(NEG_BOOL)
    if name in ("sub", "rsub"):
        bools = [_is_bool(self), _is_bool(other)]
        if all(bools):
            raise RuntimeError(SUB_BOOLS)
        if any(bools):
            raise RuntimeError(SUB_BOOL)
    if name == "pow" and isinstance(other, int) and not isinstance(other, bool) and \
            other < 0 and not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _checked(name, meta):
    def checked(self, *args, **kwargs):
        check_operands(name, self, args[0] if args else None)
        return meta(self, *args, **kwargs)
    return checked


def _div_mode_meta(n_tensors):
    """div with rounding_mode: None is true division (integers give floats), 'trunc' and
    'floor' keep the promoted type; anything else is an error."""
    true_div = pointwise_meta(INT_TO_FLOAT, n_tensors)
    rounded = pointwise_meta(DEFAULT, n_tensors)

    def meta(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return true_div(self, other)
        if rounding_mode not in ("trunc", "floor"):
            raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                               f"'floor' but found '{rounding_mode}'")
        return rounded(self, other)
    return meta


# ``VARIANTS[functional op] = {"functional", "inplace", "out"}`` (fnx.ir.variants): backends
# derive in-place and out= kernels from the functional one.
for _name, _kind, _core in UNARY:
    _fam = _define_family(_name, "default", "", _kind, _core, 1)
    VARIANTS[_fam["functional"]] = _fam
for _name, _ov, _args, _kind, _core in BINARY:
    _fam = _define_family(_name, _ov, _args, _kind, _core, 2)
    VARIANTS[_fam["functional"]] = _fam

round_decimals = defop("round.decimals(Tensor self, *, int decimals) -> Tensor", tags=ATEN,
                       promotion=DEFAULT, meta=pointwise_meta(DEFAULT, 1))
pow_Scalar = defop("pow.Scalar(Scalar self, Tensor exponent) -> Tensor", tags=CORE,
                   promotion=DEFAULT, meta=pointwise_meta(DEFAULT, 2))
where_self = defop("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
                   tags=CORE, promotion=DEFAULT)
clamp = defop("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", tags=CORE,
              promotion=DEFAULT)
clamp_Tensor = defop("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
                     tags=CORE, promotion=DEFAULT)


def _where_meta(condition, self, other):
    if hasattr(condition, "_ks") and condition.dtype is not D.bool:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                           f"tensor with dtype {condition.dtype.name}")
    shape = broadcast_shapes(shape_of(condition), shape_of(self), shape_of(other))
    return TensorMeta(shape, elementwise_dtypes(DEFAULT, self, other)[1])


def _clamp_tensor_meta(self, min=None, max=None):
    present = [x for x in (self, min, max) if x is not None]
    if len(present) == 1:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return TensorMeta(broadcast_shapes(*(shape_of(x) for x in present)),
                      elementwise_dtypes(DEFAULT, *present)[1])


where_self.meta = _where_meta
clamp_Tensor.meta = _clamp_tensor_meta
clamp.meta = _clamp_tensor_meta
clamp_ = defop("clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)",
               tags=("inplace", "pointwise"), promotion=DEFAULT,
               meta=inplace_meta(clamp.meta, "clamp_"))
VARIANTS[clamp] = {"functional": clamp, "inplace": clamp_}


def _square_meta(self):
    # PyTorch's square is pow(x, 2): a bool tensor squares to int64.
    return TensorMeta(tuple(self.shape), elementwise_dtypes(DEFAULT, self, 2)[1])


get_op("aten::square").meta = _square_meta
# bool.square_() is an error (the int64 square does not fit back into bool)
get_op("aten::square_").meta = inplace_meta(_square_meta, "square_")


# ============================================================================ decompositions
# Every functional op above decomposes to prims.  ``refs.promote(kind, args)`` applies the
# op's type promotion by declaration: the named arguments arrive converted to the
# computation dtype (half types compute in float32, as PyTorch's CPU kernels do; Python
# ints wrap into an integer dtype, as the kernels' casts do) and broadcast to one shape,
# and the result is converted to the result dtype.  The bodies then only say what the op
# computes.  Ops that are exact in any dtype (comparisons, selections, sign flips,
# rounding to integers, bit operations) declare NO_OPMATH: half types stay half, with no
# round trip through float32.


def _python_value(value):
    """A Scalar argument as a Python number (0-dim tensors and NumPy scalars unwrap)."""
    if hasattr(value, "_ks") or isinstance(value, np.generic):
        return value.item()
    return value


def _fits(value, dtype) -> bool:
    """True when ``prims.full`` takes ``value`` for ``dtype`` as it is (no lossy cast)."""
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        if dtype is D.bool:
            return False
        if dtype.is_floating_point or dtype.is_complex:
            return True
        info = np.iinfo(dtype.numpy)
        return int(info.min) <= value <= int(info.max)
    if isinstance(value, float):
        return dtype.is_floating_point or dtype.is_complex
    return dtype.is_complex


_NATURAL = {bool: D.bool, int: D.int64, float: D.float64, complex: D.complex128}


def full(shape, value, dtype, device):
    """``prims.full`` of ``value`` cast to ``dtype`` as a C cast (NumPy's ``astype``) does.

    A value the dtype cannot hold as it is (``2`` for bool, ``1.5`` for int64, ``300`` for
    int8, a complex for a float) is made in its own type and converted with
    ``convert_element_type``: that gives ``!= 0`` for bool, truncation toward zero for
    floats to ints, wrap-around for integers and dropping the imaginary part."""
    value = _python_value(value)
    if _fits(value, dtype):
        return prims.full(list(shape), value, dtype=dtype, device=device)
    wide = prims.full(list(shape), value, dtype=_NATURAL[type(value)], device=device)
    return prims.convert_element_type(wide, dtype)


def full_like(x, value):
    """A tensor of ``x``'s shape, dtype and device filled with ``value``."""
    return full(x.shape, value, x.dtype, x.device)


def copy_of(x):
    """A fresh tensor equal to ``x`` (an op result must not alias its input)."""
    return prims.convert_element_type(x, x.dtype)


_op = get_op


def _decompose(qualnames, fn):
    """Register ``fn`` as the decomposition of each op named in ``qualnames``."""
    for q in qualnames.split():
        decomposition(_op(q))(fn)
    return fn


def _is_int(x) -> bool:
    return x.dtype.category == D.int64.category


# ---------------------------------------------------------------------------- add, sub, mul

def check_alpha(dtype, alpha):
    """PyTorch's checks on ``alpha`` against the computation dtype of add/sub/rsub."""
    if isinstance(alpha, (bool, np.bool_)) and dtype is not D.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if not (dtype.is_floating_point or dtype.is_complex) and \
            not isinstance(alpha, (int, np.integer, np.bool_)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if not dtype.is_complex and isinstance(alpha, (complex, np.complexfloating)):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a "
                           "complex number.")


def is_one(value) -> bool:
    """Whether the Scalar ``value`` is a plain 1, so scaling by it can be skipped. A
    symbolic float (a learning rate fed to a compiled program, ``SymFloat``) is never
    compared: that would guard the program on its value, and ``x * 1`` is ``x`` exactly."""
    return type(value) in (int, float, bool) and value == 1


def _scaled(x, alpha):
    """``alpha * x`` in x's dtype (alpha is cast to it, as PyTorch does); alpha=1 is free."""
    alpha = _python_value(alpha)
    check_alpha(x.dtype, alpha)
    if is_one(alpha):
        return x
    return prims.mul(x, full_like(x, alpha))


@refs.promote(DEFAULT)
def _add_impl(self, other, alpha=1):
    return prims.add(self, _scaled(other, alpha))       # on bool, add is logical or


@refs.promote(DEFAULT)
def _sub_impl(self, other, alpha=1):
    return prims.sub(self, _scaled(other, alpha))


def _check_sub(*operands):
    # PyTorch refuses a bool operand even when the other one promotes the result.
    bools = [x.dtype is D.bool if hasattr(x, "_ks") else isinstance(x, bool)
             for x in operands]
    if all(bools):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if any(bools):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")


@decomposition(_op("aten::add.Tensor"))
@decomposition(_op("aten::add.Scalar"))
def _add(self, other, alpha=1):
    return _add_impl(self, other, alpha)


@decomposition(_op("aten::sub.Tensor"))
@decomposition(_op("aten::sub.Scalar"))
def _sub(self, other, alpha=1):
    _check_sub(self, other)
    return _sub_impl(self, other, alpha)


@decomposition(_op("aten::rsub.Tensor"))
@decomposition(_op("aten::rsub.Scalar"))
def _rsub(self, other, alpha=1):
    # other - alpha * self (``other`` may be a Python number, so not sub.Tensor(other, ...))
    _check_sub(self, other)
    return _sub_impl(other, self, alpha)


@decomposition(_op("aten::mul.Tensor"))
@decomposition(_op("aten::mul.Scalar"))
@refs.promote(DEFAULT)
def _mul(self, other):
    return prims.mul(self, other)       # on bool, mul is logical and


@derivative(_op("aten::add.Tensor"), _op("aten::add.Scalar"))
def _add_backward(grad, alpha):
    return grad, (grad if alpha == 1 else grad * conj(alpha))


@derivative(_op("aten::sub.Tensor"), _op("aten::sub.Scalar"))
def _sub_backward(grad, alpha):
    return grad, -grad if alpha == 1 else grad * -conj(alpha)


@derivative(_op("aten::mul.Tensor"), _op("aten::mul.Scalar"))
def _mul_backward(grad, self, other, needs_input_grad):
    need_self, need_other = needs_input_grad + (False,) * (2 - len(needs_input_grad))
    return (grad * conj(other) if need_self else None,
            grad * conj(self) if need_other else None)


@derivative(_op("aten::rsub.Tensor"), _op("aten::rsub.Scalar"))
def _rsub_backward(grad, alpha):
    # other - alpha * self
    return (aten.neg.default(grad) if alpha == 1 else grad * -conj(alpha)), grad

# ---------------------------------------------------------------------------- division

@decomposition(_op("aten::div.Tensor"))
@decomposition(_op("aten::div.Scalar"))
@refs.promote(INT_TO_FLOAT)
def _true_div(self, other):
    return prims.div(self, other)       # integers were promoted to the default float


def _int_floor_div(a, b):
    """Floor division of integers from C's truncating division (division by 0 raises)."""
    q = prims.div(a, b)
    r = prims.rem(a, b)
    zero = full_like(r, 0)
    # truncation rounded up where the exact quotient is negative and not whole
    fix = prims.bitwise_and(prims.ne(r, zero),
                            prims.ne(prims.lt(r, zero), prims.lt(b, zero)))
    return prims.sub(q, prims.convert_element_type(fix, q.dtype))


def _float_floor_div(a, b):
    """PyTorch's (and Python's) float floor division.

    Not floor(a / b): the quotient is computed from ``a - fmod(a, b)``, which is exact, so
    e.g. 1 // 0.1 is 9 (0.1 is slightly more than 1/10), and the result is rounded to the
    nearest integer to undo the division's rounding.  A zero quotient keeps the sign of
    a / b, and division by zero gives a / b (inf or NaN) as IEEE does."""
    zero, one = full_like(a, 0), full_like(a, 1)
    mod = prims.rem(a, b)
    div = prims.div(prims.sub(a, mod), b)
    # fmod has the sign of the dividend; where it differs from the divisor's, floor is one
    # lower than the truncated quotient
    fix = prims.bitwise_and(prims.ne(mod, zero),
                            prims.ne(prims.lt(b, zero), prims.lt(mod, zero)))
    div = prims.where(fix, prims.sub(div, one), div)
    floordiv = prims.floor(div)
    up = prims.gt(prims.sub(div, floordiv), full_like(a, 0.5))
    floordiv = prims.where(up, prims.add(floordiv, one), floordiv)
    true_div = prims.div(a, b)
    signed_zero = prims.where(prims.signbit(true_div), full_like(a, -0.0), zero)
    floordiv = prims.where(prims.ne(div, zero), floordiv, signed_zero)    # NaN != 0
    return prims.where(prims.eq(b, zero), true_div, floordiv)


@refs.promote(DEFAULT)
def _rounded_div(self, other, rounding_mode):
    if self.dtype is D.bool:
        raise not_implemented(f"div_{rounding_mode}_cpu", D.bool)
    if _is_int(self):
        # prims.div truncates integers toward zero (and raises on division by zero)
        return prims.div(self, other) if rounding_mode == "trunc" else \
            _int_floor_div(self, other)
    if rounding_mode == "trunc":
        return prims.trunc(prims.div(self, other))
    return _float_floor_div(self, other)


@decomposition(_op("aten::div.Tensor_mode"))
@decomposition(_op("aten::div.Scalar_mode"))
def _div_mode(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _true_div(self, other)       # true division promotes integers to float
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                           f"'floor' but found '{rounding_mode}'")
    return _rounded_div(self, other, rounding_mode)     # keeps the promoted (integer) type


@decomposition(_op("aten::floor_divide"))
def _floor_divide(self, other):
    return aten.div.Tensor_mode(self, other, rounding_mode="floor")


@decomposition(_op("aten::floor_divide.Scalar"))
def _floor_divide_scalar(self, other):
    return aten.div.Scalar_mode(self, other, rounding_mode="floor")


@decomposition(_op("aten::remainder.Tensor"))
@decomposition(_op("aten::remainder.Scalar"))
@refs.promote(DEFAULT)
def _remainder(self, other):
    if self.dtype is D.bool:
        raise not_implemented("remainder_cpu", D.bool)
    # Python's modulo: fmod (sign of the dividend) moved by one divisor where the signs
    # differ, so the result has the divisor's sign.  remainder(-5., inf) is inf.
    mod = prims.rem(self, other)
    zero = full_like(mod, 0)
    fix = prims.bitwise_and(prims.ne(mod, zero),
                            prims.ne(prims.lt(other, zero), prims.lt(mod, zero)))
    return prims.where(fix, prims.add(mod, other), mod)


@decomposition(_op("aten::fmod.Tensor"))
@decomposition(_op("aten::fmod.Scalar"))
@refs.promote(DEFAULT)
def _fmod(self, other):
    if self.dtype is D.bool:
        raise not_implemented("fmod_cpu", D.bool)
    return prims.rem(self, other)       # C fmod: the result has the dividend's sign


@derivative(_op("aten::div.Tensor"))
def _div_backward(grad, self, other, needs_input_grad):
    return (aten.div.Tensor(grad, conj(other)) if needs_input_grad[0] else None,
            aten.neg.default(aten.mul.Tensor(grad, conj(aten.div.Tensor(
                aten.div.Tensor(self, other), other)))) if needs_input_grad[1] else None)


@derivative(_op("aten::div.Scalar"))
def _div_scalar_backward(grad, other):
    return aten.div.Tensor(grad, conj(other))


@derivative(_op("aten::div.Tensor_mode"))
def _div_mode_backward(grad, self, other, rounding_mode, needs_input_grad):
    if rounding_mode is not None:       # a step function of both operands
        z = aten.zeros_like.default(grad)
        return z, z
    return _div_backward(grad, self, other, needs_input_grad)


@derivative(_op("aten::div.Scalar_mode"))
def _div_scalar_mode_backward(grad, other, rounding_mode):
    if rounding_mode is not None:
        return aten.zeros_like.default(grad)
    return aten.div.Tensor(grad, conj(other))


@derivative(_op("aten::floor_divide"), _op("aten::floor_divide.Scalar"))
def _floor_divide_backward(grad):
    z = aten.zeros_like.default(grad)
    return z, z


@derivative(_op("aten::remainder.Tensor"))
def _remainder_backward(grad, self, other, needs_input_grad):
    # self - floor(self / other) * other
    return grad, (aten.neg.default(aten.mul.Tensor(grad, aten.div.Tensor_mode(
        self, other, rounding_mode="floor"))) if needs_input_grad[1] else None)


@derivative(_op("aten::fmod.Tensor"))
def _fmod_backward(grad, self, other, needs_input_grad):
    # self - trunc(self / other) * other
    return grad, (aten.neg.default(aten.mul.Tensor(grad, aten.div.Tensor_mode(
        self, other, rounding_mode="trunc"))) if needs_input_grad[1] else None)


@derivative(_op("aten::remainder.Scalar"), _op("aten::fmod.Scalar"))
def _remainder_scalar_backward(grad):
    return grad


# ---------------------------------------------------------------------------- pow

@refs.promote(DEFAULT, ("self", "exponent"))
def _pow_impl(self, exponent):
    if self.dtype is D.bool:
        raise not_implemented("pow", D.bool)
    if not _is_int(self):
        return prims.pow(self, exponent)
    # Integer powers: a negative exponent gives 1 ** n = 1, (-1) ** n = +-1 and 0 otherwise
    # (the integer part of the true value); prims.pow itself refuses negative exponents.
    zero, one = full_like(self, 0), full_like(self, 1)
    negative = prims.lt(exponent, zero)
    r = prims.pow(self, prims.where(negative, zero, exponent))
    odd = prims.ne(prims.rem(exponent, full_like(self, 2)), zero)
    minus_one = full_like(self, -1)
    of_minus_one = prims.where(odd, minus_one, one)
    special = prims.where(prims.eq(self, one), one,
                          prims.where(prims.eq(self, minus_one), of_minus_one, zero))
    return prims.where(negative, special, r)


def _scalar_exponent(self, exponent):
    """``pow(self, e)`` with a Python-number exponent: PyTorch's special cases first."""
    if hasattr(exponent, "_ks"):
        if not exponent._is_wrapped_number:
            return _pow_impl(self, exponent)
        exponent = exponent.item()
    integral = not (self.dtype.is_floating_point or self.dtype.is_complex)
    if isinstance(exponent, (int, np.integer)) and not isinstance(exponent, bool) and \
            exponent < 0 and integral:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if self.dtype is D.bool and isinstance(exponent, (bool, np.bool_)):
        # x ** True is x; x ** False is all True (no bool pow kernel is involved)
        return copy_of(self) if exponent else full_like(self, True)
    return _pow_impl(self, exponent)


_decompose("aten::pow.Tensor_Tensor aten::pow.Tensor_Scalar", _scalar_exponent)


@decomposition(_op("aten::pow.Scalar"))
def _pow_scalar(self, exponent):
    return _pow_impl(self, exponent)        # a Python-number base, a tensor exponent


def _pow_self_grad(grad, self, exponent):
    """d self**e / d self = e * self**(e - 1); 0 where e == 0 (also at self == 0)."""
    if not is_tensor(exponent):
        if exponent == 0:
            return aten.zeros_like.default(grad)
        e1 = exponent - 1
        return aten.mul.Tensor(grad, conj(aten.mul.Scalar(
            aten.pow.Tensor_Scalar(self, e1), exponent)))
    g = aten.mul.Tensor(grad, conj(aten.mul.Tensor(
        aten.pow.Tensor_Tensor(self, aten.sub.Scalar(exponent, 1)), exponent)))
    return aten.where.self(aten.eq.Scalar(exponent, 0), 0.0, g)


def _nonnegative_real(e):
    if e.dtype.is_complex:
        return aten.logical_and.default(aten.eq.Scalar(prims.imag(e), 0),
                                        aten.ge.Scalar(prims.real(e), 0))
    return aten.ge.Scalar(e, 0)


@derivative(_op("aten::pow.Tensor_Scalar"))
def _pow_tensor_scalar_backward(grad, self, exponent):
    return _pow_self_grad(grad, self, exponent)


@derivative(_op("aten::pow.Tensor_Tensor"))
def _pow_backward(grad, self, exponent, result, needs_input_grad):
    gself = _pow_self_grad(grad, self, exponent) if needs_input_grad[0] else None
    gexp = None
    if needs_input_grad[1]:
        # d self**e / d e = self**e * log(self); 0 at self == 0 for e >= 0 (not nan)
        base = self
        if base.dtype is not result.dtype:
            base = aten._to_copy.default(base, dtype=result.dtype)
        g = aten.mul.Tensor(grad, conj(aten.mul.Tensor(result, aten.log.default(base))))
        at_zero = aten.logical_and.default(aten.eq.Scalar(self, 0), _nonnegative_real(exponent))
        gexp = aten.where.self(at_zero, 0.0, g)
    return gself, gexp


@derivative(_op("aten::pow.Scalar"))
def _pow_scalar_backward(grad, self, exponent, result):
    # a Python-number base: d b**e / d e = b**e * log(b)
    b = _python_value(self)
    if isinstance(b, complex):
        log_b = cmath.log(b) if b != 0 else complex(-math.inf)
    else:
        b = float(b)
        log_b = math.log(b) if b > 0 else (-math.inf if b == 0 else math.nan)
    g = aten.mul.Tensor(grad, conj(aten.mul.Scalar(result, log_b)))
    if b == 0:
        g = aten.where.self(_nonnegative_real(exponent), 0.0, g)
    return g


# ---------------------------------------------------------------------------- others

@decomposition(_op("aten::atan2"))
@refs.promote(INT_TO_FLOAT)
def _atan2(self, other):
    return prims.atan2(self, other)


@decomposition(_op("aten::maximum"))
@refs.promote(NO_OPMATH)
def _maximum(self, other):
    return prims.maximum(self, other)       # propagates NaN


@decomposition(_op("aten::minimum"))
@refs.promote(NO_OPMATH)
def _minimum(self, other):
    return prims.minimum(self, other)


def _bitwise(name):
    prim = getattr(prims, name)

    def fn(self, other):
        if self.dtype.is_floating_point or self.dtype.is_complex:
            raise not_implemented(f"{name}_cpu", self.dtype)
        return prim(self, other)
    fn.__name__ = f"_{name}"
    return fn


for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    _decompose(f"aten::{_name}.Tensor aten::{_name}.Scalar",
               refs.promote(NO_OPMATH)(_bitwise(_name)))


def _shift(name):
    """bitwise_left/right_shift on integers, as PyTorch: a shift by a negative amount or by
    the bit width or more moves every bit out (0, or the sign for a right shift); a right
    shift of an unsigned value brings in zeros."""
    kernel = "lshift_cpu" if name == "bitwise_left_shift" else "rshift_cpu"

    def fn(self, other):
        if not _is_int(self) or self.dtype is D.bool:
            raise NotImplementedError(str(not_implemented(kernel, self.dtype)))
        if name == "bitwise_left_shift":
            return prims.shift_left(self, other)
        if self.dtype is D.uint8:       # the prim shifts the two's-complement bits
            wide = prims.shift_right_arithmetic(prims.convert_element_type(self, D.int16),
                                                prims.convert_element_type(other, D.int16))
            return prims.convert_element_type(wide, D.uint8)
        return prims.shift_right_arithmetic(self, other)
    fn.__name__ = f"_{name}"
    return fn


for _name in ("bitwise_left_shift", "bitwise_right_shift"):
    _decompose(f"aten::{_name}.Tensor aten::{_name}.Tensor_Scalar",
               refs.promote(NO_OPMATH)(_shift(_name)))


def _logical(name):
    """logical_and/or/xor: each operand is true where it is nonzero (NaN is true)."""
    prim = getattr(prims, name.replace("logical", "bitwise"))

    def fn(self, other):
        zero = full_like(self, 0)
        return prim(prims.ne(self, zero), prims.ne(other, zero))
    fn.__name__ = f"_{name}"
    return fn


for _name in ("logical_and", "logical_or", "logical_xor"):
    decomposition(_op(f"aten::{_name}"))(refs.promote(ALWAYS_BOOL)(_logical(_name)))


def _compare(name):
    prim = getattr(prims, name)

    def fn(self, other):
        return prim(self, other)        # compared in the promoted dtype
    fn.__name__ = f"_{name}"
    return fn


for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    _decompose(f"aten::{_name}.Tensor aten::{_name}.Scalar",
               refs.promote(ALWAYS_BOOL)(_compare(_name)))


@refs.promote(NO_OPMATH, ("self", "min", "max"))
def _clamp_impl(self, min=None, max=None):
    # max first, then min: where min > max every element becomes max, as in PyTorch;
    # NaN (in self or a bound) propagates
    if min is not None:
        self = prims.maximum(self, min)
    if max is not None:
        self = prims.minimum(self, max)
    return self


@refs.promote(NO_OPMATH, ("self", "min", "max"))
def _clamp_select(self, min=None, max=None):
    # clamp of a float tensor by numbers, as selects whose derivative (a compiled function
    # differentiated by jax.vjp, fnx.lower.jax_autograd) is clamp's: the gradient passes
    # at the bounds (maximum/minimum would halve it there) and not at NaN, whose value
    # comes from a constant
    # (promote made the bounds tensors of self's shape and dtype)
    out = self
    if min is not None:
        out = prims.where(prims.lt(out, min), min, out)
    if max is not None:
        out = prims.where(prims.gt(out, max), max, out)
    return prims.where(prims.ne(self, self), full_like(self, math.nan), out)


@decomposition(clamp)
@decomposition(clamp_Tensor)
def _clamp(self, min=None, max=None):
    clamp_Tensor.meta(self, min, max)       # at least one bound; shapes broadcast
    bounds = [b for b in (min, max) if b is not None]
    if self.dtype.is_floating_point and all(type(b) in (int, float) and b == b
                                            for b in bounds):
        return _clamp_select(self, min, max)
    return _clamp_impl(self, min, max)


@decomposition(where_self)
def _where(condition, self, other):
    meta = where_self.meta(condition, self, other)      # condition must be bool
    device = refs.device_of(condition, self, other)
    a, b = (refs.to_dtype(v, meta.dtype) if hasattr(v, "_ks") else full([], v, meta.dtype, device)
            for v in (self, other))     # (a Python int wraps around like eager's cast)
    return prims.where(refs.broadcast_to(condition, meta.shape),
                       refs.broadcast_to(a, meta.shape), refs.broadcast_to(b, meta.shape))


# ---------------------------------------------------------------------------- derivatives

@derivative(_op("aten::atan2"))
def _atan2_backward(grad, self, other, needs_input_grad):
    # (operators: either operand may be a Python number)
    scale = grad / (self * self + other * other)
    return (scale * other if needs_input_grad[0] else None,
            scale * -self if needs_input_grad[1] else None)


def _lt(a, b):
    return a < b


def _gt(a, b):
    return a > b


def _max_min_backward(grad, self, other, needs_input_grad, loses_self, loses_other):
    """maximum/minimum: the gradient goes to the selected operand; ties split it evenly."""
    g = aten.where.self(self == other, aten.div.Scalar(grad, 2), grad)   # (either may be a number)
    return (aten.where.self(loses_self(self, other), 0.0, g) if needs_input_grad[0] else None,
            aten.where.self(loses_other(self, other), 0.0, g) if needs_input_grad[1] else None)


@derivative(_op("aten::maximum"))
def _maximum_backward(grad, self, other, needs_input_grad):
    return _max_min_backward(grad, self, other, needs_input_grad, _lt, _gt)


@derivative(_op("aten::minimum"))
def _minimum_backward(grad, self, other, needs_input_grad):
    return _max_min_backward(grad, self, other, needs_input_grad, _gt, _lt)


@derivative(where_self)
def _where_backward(grad, condition, needs_input_grad):
    return (None,
            aten.where.self(condition, grad, 0.0) if needs_input_grad[1] else None,
            aten.where.self(condition, 0.0, grad) if needs_input_grad[2] else None)


def _and(a, b):
    return b if a is None else aten.logical_and.default(a, b)


@derivative(clamp)
def _clamp_backward(grad, self, min, max):
    # the gradient passes where self is inside [min, max] (NaN: nowhere)
    inside = None
    if min is not None:
        inside = aten.ge.Scalar(self, min)
    if max is not None:
        inside = _and(inside, aten.le.Scalar(self, max))
    return aten.where.self(inside, grad, 0.0)


@derivative(clamp_Tensor)
def _clamp_tensor_backward(grad, self, min, max, needs_input_grad):
    # PyTorch's rule: where min > max every element is max, so max gets the gradient there
    # (operators: a bound may be a Python number)
    gs = gmin = gmax = None
    if min is not None and max is not None:
        if needs_input_grad[0]:
            inside = aten.logical_and.default(self >= min, self <= max)
            gs = aten.where.self(inside, grad, 0.0)
        if needs_input_grad[1]:
            gmin = aten.where.self(aten.logical_and.default(
                self < min, min < max), grad, 0.0)
        if needs_input_grad[2]:
            gmax = aten.where.self(aten.logical_or.default(
                self > max, max < min), grad, 0.0)
    elif min is not None:
        gs = aten.where.self(self >= min, grad, 0.0)
        gmin = aten.where.self(self < min, grad, 0.0)
    elif max is not None:
        gs = aten.where.self(self <= max, grad, 0.0)
        gmax = aten.where.self(self > max, grad, 0.0)
    return gs, gmin, gmax


nondifferentiable(*(_op(f"aten::{n}.{ov}") for n in (
    "bitwise_and", "bitwise_or", "bitwise_xor", "eq", "ne", "lt", "le", "gt", "ge")
    for ov in ("Tensor", "Scalar")))
nondifferentiable(*(_op(f"aten::{n}.{ov}") for n in ("bitwise_left_shift", "bitwise_right_shift")
                    for ov in ("Tensor", "Tensor_Scalar")))
nondifferentiable(*(_op(f"aten::{n}") for n in ("logical_and", "logical_or", "logical_xor")))


# Their in-place variants write 0/1 into a (possibly float) self: a zero gradient, as
# PyTorch's eq_ & co. have, so self's earlier history gets nothing.
@derivative(*(_op(f"aten::{n}_.{ov}") for n in ("eq", "ne", "lt", "le", "gt", "ge")
              for ov in ("Tensor", "Scalar")),
            *(_op(f"aten::{n}_") for n in ("logical_and", "logical_or", "logical_xor",
                                           "logical_not")))
def _inplace_compare_backward(grad, needs_input_grad):
    z = aten.zeros_like.default(grad)
    return tuple(z if n else None for n in needs_input_grad)
