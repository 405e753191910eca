"""The prims: a small closed op set modelled on ``jax.lax`` that every core op decomposes to.

Prims are explicit: no implicit broadcasting or type promotion, no Python scalars in
tensor slots, no negative dims and no ``-1`` in shapes (callers normalize).  Each prim's
meta function enforces that and raises ``RuntimeError("prims.<name>: <problem>")``;
the eager kernels call the same meta function first, so every backend checks alike.
Semantics follow ``jax.lax`` (so the JAX lowering is one lax call per prim), with the
exceptions the docstrings below spell out.

>>> import fnx
>>> prims = fnx.ops.prims
>>> prims.add(fnx.tensor([1, 2]), fnx.tensor([3, 4])).tolist()
[4, 6]
>>> prims.broadcast_in_dim(fnx.tensor([1, 2]), [3, 2], [1]).shape
fnx.Size([3, 2])
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ..core import dtype as D
from ..ops import prims as _p
from .backend_select import backend_select
from .grad_utils import trigamma
from .registry import TensorMeta, defop, derivative, nondifferentiable

__all__ = ["UNARY", "BINARY", "PRIM", "POINTWISE", "check_tensor", "check_dims",
           "category_name"]

PRIM = ("prim",)
POINTWISE = ("prim", "pointwise")

# dtype categories (``fnx.dtype.category``)
B, I, F, C = 0, 1, 2, 3  # noqa: E741  (I: integer, as the other category letters)
ANY = frozenset((B, I, F, C))
BI = frozenset((B, I))
BIF = frozenset((B, I, F))
IF = frozenset((I, F))
IFC = frozenset((I, F, C))
FC = frozenset((F, C))
FLOAT = frozenset((F,))
INT = frozenset((I,))
COMPLEX = frozenset((C,))
_CAT_NAMES = {B: "bool", I: "integer", F: "floating", C: "complex"}


def category_name(cats) -> str:
    return "/".join(_CAT_NAMES[c] for c in sorted(cats))


# ----------------------------------------------------------------------------- validation

def _fail(name, msg):
    return RuntimeError(f"prims.{name}: {msg}")


def check_tensor(name, arg, x):
    """A tensor slot must hold a tensor (prims take no Python scalars there)."""
    if not hasattr(x, "_ks"):
        raise _fail(name, f"expected a Tensor for '{arg}', got {type(x).__name__} "
                          f"(prims take no Python scalars in Tensor slots)")
    return x


def _check_category(name, x, cats, arg="self"):
    if x.dtype.category not in cats:
        raise _fail(name, f"expected a {category_name(cats)} tensor for '{arg}', got "
                          f"{x.dtype.name}")


def _int(name, what, v):
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise _fail(name, f"{what} must be an int, got {type(v).__name__}")
    return operator.index(v)


def _ints(name, what, xs) -> tuple:
    if not isinstance(xs, (list, tuple)):
        raise _fail(name, f"{what} must be a list of ints, got {type(xs).__name__}")
    return tuple(_int(name, what, v) for v in xs)


def _shape(name, shape, what="shape") -> tuple:
    shape = _ints(name, what, shape)
    for s in shape:
        if s < 0:
            raise _fail(name, f"{what} {list(shape)} has a negative size (prims take no -1)")
    return shape


def check_dims(name, dims, ndim, what="dims") -> tuple:
    """Dims already normalized: each in [0, ndim), no repeats."""
    dims = _ints(name, what, dims)
    for d in dims:
        if not 0 <= d < ndim:
            raise _fail(name, f"dim {d} in {what} out of range for a tensor of rank {ndim} "
                              f"(prims take normalized dims in [0, {ndim}))")
    if len(set(dims)) != len(dims):
        raise _fail(name, f"{what} {list(dims)} has repeated dims")
    return dims


def _dim(name, dim, ndim, what="dim") -> int:
    return check_dims(name, [dim], ndim, what)[0]


def _same_shape(name, *pairs):
    (an, a), *rest = pairs
    for bn, b in rest:
        if tuple(a.shape) != tuple(b.shape):
            raise _fail(name, f"shape mismatch: '{an}' has shape {list(a.shape)} but '{bn}' "
                              f"has shape {list(b.shape)} (prims do not broadcast)")


def _same_dtype(name, *pairs):
    (an, a), *rest = pairs
    for bn, b in rest:
        if a.dtype is not b.dtype:
            raise _fail(name, f"dtype mismatch: '{an}' is {a.dtype.name} but '{bn}' is "
                              f"{b.dtype.name} (prims do not promote)")


def _dtype_arg(name, dtype, cats=ANY):
    if not isinstance(dtype, D.dtype):
        raise _fail(name, f"dtype must be an fnx.dtype, got {type(dtype).__name__}")
    if dtype.category not in cats:
        raise _fail(name, f"expected a {category_name(cats)} dtype, got {dtype.name}")
    return dtype


def scalar_for(name, value, dtype):
    """A Scalar argument as a Python value of ``dtype``: a scalar of a higher category than
    the dtype (1.5 for an int tensor, a complex for a float one) is an error, not a cast."""
    if hasattr(value, "_ks"):
        if value.ndim != 0:
            raise _fail(name, f"expected a Scalar, got a tensor of shape {list(value.shape)}")
        value = value.item()
    elif hasattr(value, "item") and not isinstance(value, (bool, int, float, complex)):
        value = value.item()         # NumPy scalar
    if isinstance(value, bool):
        cat = B
    elif isinstance(value, int):
        cat = I
    elif isinstance(value, float):
        cat = F
    elif isinstance(value, complex):
        cat = C
    else:
        raise _fail(name, f"expected a Scalar, got {type(value).__name__}")
    if cat > dtype.category:
        raise _fail(name, f"value {value!r} is not representable as {dtype.name} "
                          f"(prims do not cast implicitly)")
    if dtype is D.bool:
        return bool(value)
    if dtype.category == I:
        info = np.iinfo(dtype.numpy)
        if not int(info.min) <= value <= int(info.max):
            raise _fail(name, f"value {value} out of range for {dtype.name}")
        return int(value)
    if dtype.category == F:
        return float(value)
    return complex(value)


# ----------------------------------------------------------------------------- gradients
# Derivative formulas (``@derivative``, next to each prim) are written with prims (``_p``), so
# the backward of a prim-level graph stays prim level and is itself differentiable. Complex
# inputs follow PyTorch's convention: the gradient of a holomorphic f is grad * conj(f'(z)).
# Shapes are static, so formulas branch on shapes and dtypes, never on values.

def _like(x, value, dtype=None):
    """A tensor of ``x``'s shape and device (and dtype, unless given) filled with ``value``."""
    return _p.full(list(x.shape), value, dtype=dtype or x.dtype, device=x.device)


def _zeros(shape, like):
    return _p.full(list(shape), 0, dtype=like.dtype, device=like.device)


def _cj(x):
    return _p.conj(x) if x.dtype.is_complex else x


def _scale(x, c):
    return _p.mul(x, _like(x, c))


def _plus(x, c):
    return _p.add(x, _like(x, c))


def _rsub(c, x):
    return _p.sub(_like(x, c), x)


def _square(x):
    return _p.mul(x, x)


def _to_complex(x):
    """A real tensor as the complex tensor ``x + 0j``."""
    return _p.complex(x, _like(x, 0))


def _times(grad, d):
    """``grad * conj(d)``: the chain rule through a function whose derivative is ``d``."""
    return _p.mul(grad, _cj(d))


def _over(grad, d):
    """``grad / conj(d)``."""
    return _p.div(grad, _cj(d))


def _shift(x, dim, d, fill):
    """``y[k] = x[k + d]`` along ``dim``, ``fill`` where ``k + d`` is out of range."""
    low, high = [0] * x.ndim, [0] * x.ndim
    low[dim], high[dim] = -d, d
    return _p.pad(x, fill, low, high, [0] * x.ndim)


def _permute_to(x, src):
    """``x``, whose dim ``j`` is dim ``src[j]`` of the wanted layout, transposed into it."""
    perm = [src.index(d) for d in range(len(src))]
    return x if perm == list(range(len(perm))) else _p.transpose(x, perm)


def _unreduce(g, shape, dims):
    """A reduction's result-shaped ``g`` broadcast back over the reduced ``dims``."""
    keep = [d for d in range(len(shape)) if d not in dims]
    return _p.broadcast_in_dim(g, list(shape), keep)


# ----------------------------------------------------------------------------- elementwise

def _real_of(d):
    return d.to_real() if d.is_complex else d


# name, allowed input categories, result: "same" | "bool" | "real" (complex -> its float)
UNARY = [
    ("abs", IFC, "real"), ("neg", IFC, "same"), ("sign", IFC, "same"),
    *((n, FC, "same") for n in (
        "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin",
        "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sqrt", "rsqrt",
        "reciprocal")),
    *((n, FLOAT, "same") for n in ("erf", "erfc", "erf_inv", "lgamma", "digamma")),
    *((n, FLOAT, "same") for n in ("floor", "ceil", "round", "trunc")),
    ("bitwise_not", BI, "same"), ("conj", ANY, "same"),
    ("signbit", IF, "bool"), ("isfinite", FLOAT, "bool"),
    ("real", COMPLEX, "real"), ("imag", COMPLEX, "real"),
]

# name, allowed input categories, result: "same" | "bool"
BINARY = [
    ("add", ANY, "same"), ("sub", IFC, "same"), ("mul", ANY, "same"), ("div", IFC, "same"),
    ("rem", IF, "same"), ("pow", IFC, "same"), ("atan2", FLOAT, "same"),
    ("maximum", BIF, "same"), ("minimum", BIF, "same"),
    ("bitwise_and", BI, "same"), ("bitwise_or", BI, "same"), ("bitwise_xor", BI, "same"),
    ("shift_left", INT, "same"), ("shift_right_arithmetic", INT, "same"),
    ("nextafter", FLOAT, "same"),
    ("eq", ANY, "bool"), ("ne", ANY, "bool"),
    ("lt", BIF, "bool"), ("le", BIF, "bool"), ("gt", BIF, "bool"), ("ge", BIF, "bool"),
]


def _result_dtype(d, rule):
    if rule == "bool":
        return D.bool
    if rule == "real":
        return _real_of(d)
    return d


def _unary_meta(name, cats, rule):
    def meta(self):
        check_tensor(name, "self", self)
        _check_category(name, self, cats)
        return TensorMeta(tuple(self.shape), _result_dtype(self.dtype, rule))
    meta.__name__ = f"{name}_meta"
    return meta


def _binary_meta(name, cats, rule):
    def meta(self, other):
        check_tensor(name, "self", self)
        check_tensor(name, "other", other)
        _same_shape(name, ("self", self), ("other", other))
        _same_dtype(name, ("self", self), ("other", other))
        _check_category(name, self, cats)
        return TensorMeta(tuple(self.shape), _result_dtype(self.dtype, rule))
    meta.__name__ = f"{name}_meta"
    return meta


# ``OPS[name]``: every prim by name (the namespace is also ``fnx.ops.prims``).
OPS = {}
for _name, _cats, _rule in UNARY:
    OPS[_name] = defop(f"{_name}(Tensor self) -> Tensor", tags=POINTWISE,
                       meta=_unary_meta(_name, _cats, _rule), namespace="prims")
    OPS[_name].categories = _cats
for _name, _cats, _rule in BINARY:
    OPS[_name] = defop(f"{_name}(Tensor self, Tensor other) -> Tensor", tags=POINTWISE,
                       meta=_binary_meta(_name, _cats, _rule), namespace="prims")
    OPS[_name].categories = _cats


# ----------------------------------------------------------------------------- elementwise grads

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_2_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _zero_backward(grad):
    # Piecewise constant (floor, ceil, round, trunc; sign of a real): zero, as in PyTorch.
    return _like(grad, 0)


def _abs_backward(grad, self):
    if self.dtype.is_complex:
        return _p.mul(_to_complex(grad), _p.sign(self))      # grad * z / |z|, 0 at 0
    return _p.mul(grad, _p.sign(self))


def _sign_backward(grad, self):
    if not self.dtype.is_complex:
        return _like(grad, 0)
    # s = z / |z|: (g - s * re(conj(s) * g)) / |z|, and 0 at z = 0 (PyTorch's sgn_backward)
    s, a = _p.sign(self), _p.abs(self)
    along = _p.mul(s, _to_complex(_p.real(_p.mul(_p.conj(s), grad))))
    out = _p.div(_p.sub(grad, along), _to_complex(a))
    return _p.where(_p.eq(a, _like(a, 0)), _like(grad, 0), out)


def _digamma_backward(grad, self):
    return _p.mul(grad, trigamma(self))


# name -> formula; parameters as in ``registry.derivative`` (``self``: the input)
UNARY_GRADS = {
    "abs": _abs_backward,
    "neg": lambda grad: _p.neg(grad),
    "sign": _sign_backward,
    "exp": lambda grad, result: _times(grad, result),
    "exp2": lambda grad, result: _times(grad, _scale(result, _LN2)),
    "expm1": lambda grad, result: _times(grad, _plus(result, 1)),
    "log": lambda grad, self: _over(grad, self),
    "log1p": lambda grad, self: _over(grad, _plus(self, 1)),
    "log2": lambda grad, self: _over(grad, _scale(self, _LN2)),
    "log10": lambda grad, self: _over(grad, _scale(self, _LN10)),
    "sin": lambda grad, self: _times(grad, _p.cos(self)),
    "cos": lambda grad, self: _times(grad, _p.neg(_p.sin(self))),
    "tan": lambda grad, result: _times(grad, _plus(_square(result), 1)),
    "asin": lambda grad, self: _over(grad, _p.sqrt(_rsub(1, _square(self)))),
    "acos": lambda grad, self: _over(grad, _p.neg(_p.sqrt(_rsub(1, _square(self))))),
    "atan": lambda grad, self: _over(grad, _plus(_square(self), 1)),
    "sinh": lambda grad, self: _times(grad, _p.cosh(self)),
    "cosh": lambda grad, self: _times(grad, _p.sinh(self)),
    "tanh": lambda grad, result: _times(grad, _rsub(1, _square(result))),
    "asinh": lambda grad, self: _over(grad, _p.sqrt(_plus(_square(self), 1))),
    # sqrt(z - 1) * sqrt(z + 1), not sqrt(z^2 - 1): the right branch for complex z
    "acosh": lambda grad, self: _over(grad, _p.mul(_p.sqrt(_plus(self, -1)),
                                                   _p.sqrt(_plus(self, 1)))),
    "atanh": lambda grad, self: _over(grad, _rsub(1, _square(self))),
    "sqrt": lambda grad, result: _over(grad, _scale(result, 2)),
    "rsqrt": lambda grad, result: _times(grad, _scale(_p.mul(result, _square(result)), -0.5)),
    "reciprocal": lambda grad, result: _times(grad, _p.neg(_square(result))),
    "erf": lambda grad, self: _p.mul(grad, _scale(_p.exp(_p.neg(_square(self))),
                                                  _2_OVER_SQRT_PI)),
    "erfc": lambda grad, self: _p.mul(grad, _scale(_p.exp(_p.neg(_square(self))),
                                                   -_2_OVER_SQRT_PI)),
    "erf_inv": lambda grad, result: _p.mul(grad, _scale(_p.exp(_square(result)),
                                                        math.sqrt(math.pi) / 2)),
    "lgamma": lambda grad, self: _p.mul(grad, _p.digamma(self)),
    "digamma": _digamma_backward,
    "floor": _zero_backward, "ceil": _zero_backward, "round": _zero_backward,
    "trunc": _zero_backward,
    "conj": lambda grad: _cj(grad),
    "real": lambda grad: _to_complex(grad),
    "imag": lambda grad: _p.complex(_like(grad, 0), grad),
}


def _add_backward(grad):
    return grad, grad


def _sub_backward(grad):
    return grad, _p.neg(grad)


def _mul_backward(grad, self, other, needs_input_grad):
    return (_times(grad, other) if needs_input_grad[0] else None,
            _times(grad, self) if needs_input_grad[1] else None)


def _div_backward(grad, self, other, needs_input_grad):
    return (_over(grad, other) if needs_input_grad[0] else None,
            _p.neg(_times(grad, _p.div(_p.div(self, other), other)))
            if needs_input_grad[1] else None)


def _rem_backward(grad, self, other, needs_input_grad):
    # C's fmod: self - trunc(self / other) * other (PyTorch's fmod formula)
    return grad, (_p.neg(_p.mul(grad, _p.trunc(_p.div(self, other))))
                  if needs_input_grad[1] else None)


def _pow_backward(grad, self, other, result, needs_input_grad):
    zero = _like(grad, 0)
    gs = go = None
    if needs_input_grad[0]:
        # 0 where the exponent is 0 (also at self = 0, where other * self^(other-1) is NaN)
        d = _p.mul(other, _p.pow(self, _plus(other, -1)))
        gs = _p.where(_p.eq(other, _like(other, 0)), zero, _times(grad, d))
    if needs_input_grad[1]:
        # at self = 0 with a real exponent >= 0 the gradient is 0, as PyTorch's (there
        # result * log(self) is NaN)
        if other.dtype.is_complex:
            im, re = _p.imag(other), _p.real(other)
            real_exp = _p.bitwise_and(_p.eq(im, _like(im, 0)), _p.ge(re, _like(re, 0)))
        else:
            real_exp = _p.ge(other, _like(other, 0))
        at_zero = _p.bitwise_and(_p.eq(self, _like(self, 0)), real_exp)
        go = _times(grad, _p.where(at_zero, zero, _p.mul(result, _p.log(self))))
    return gs, go


def _atan2_backward(grad, self, other, needs_input_grad):
    denom = _p.add(_square(self), _square(other))
    return (_p.mul(grad, _p.div(other, denom)) if needs_input_grad[0] else None,
            _p.mul(grad, _p.div(_p.neg(self), denom)) if needs_input_grad[1] else None)


def _split_ties(grad, self, other, self_loses, other_loses, needs_input_grad):
    """maximum/minimum: the winner gets grad, ties split it evenly (as PyTorch)."""
    zero = _like(grad, 0)
    shared = _p.where(_p.eq(self, other), _scale(grad, 0.5), grad)
    return (_p.where(self_loses(self, other), zero, shared) if needs_input_grad[0] else None,
            _p.where(other_loses(self, other), zero, shared) if needs_input_grad[1] else None)


def _maximum_backward(grad, self, other, needs_input_grad):
    return _split_ties(grad, self, other, _p.lt, _p.gt, needs_input_grad)


def _minimum_backward(grad, self, other, needs_input_grad):
    return _split_ties(grad, self, other, _p.gt, _p.lt, needs_input_grad)


BINARY_GRADS = {
    "add": _add_backward, "sub": _sub_backward, "mul": _mul_backward, "div": _div_backward,
    "rem": _rem_backward, "pow": _pow_backward, "atan2": _atan2_backward,
    "maximum": _maximum_backward, "minimum": _minimum_backward,
}

# Outputs that never carry a gradient: bool results, integer-only ops, and nextafter
# (PyTorch does not differentiate it either).
NONDIFFERENTIABLE_ELEMENTWISE = (
    "bitwise_not", "signbit", "isfinite", "bitwise_and", "bitwise_or", "bitwise_xor",
    "shift_left", "shift_right_arithmetic", "nextafter", "eq", "ne", "lt", "le", "gt", "ge")


for _name, _fn in (*UNARY_GRADS.items(), *BINARY_GRADS.items()):
    if _fn.__name__ == "<lambda>":
        _fn.__name__ = f"_{_name}_backward"
    derivative(OPS[_name])(_fn)
nondifferentiable(*(OPS[n] for n in NONDIFFERENTIABLE_ELEMENTWISE))


def _prim(schema, meta, tags=PRIM):
    op = defop(schema, tags=tags, meta=meta, namespace="prims")
    OPS[op.name] = op
    return op


def _complex_meta(real, imag):
    check_tensor("complex", "real", real)
    check_tensor("complex", "imag", imag)
    _same_shape("complex", ("real", real), ("imag", imag))
    _same_dtype("complex", ("real", real), ("imag", imag))
    if real.dtype not in (D.float32, D.float64):
        raise _fail("complex", f"expected float32 or float64 parts, got {real.dtype.name}")
    return TensorMeta(tuple(real.shape), real.dtype.to_complex())


complex_ = _prim("complex(Tensor real, Tensor imag) -> Tensor", _complex_meta, POINTWISE)


@derivative(complex_)
def _complex_backward(grad, needs_input_grad):
    return (_p.real(grad) if needs_input_grad[0] else None,
            _p.imag(grad) if needs_input_grad[1] else None)


def _where_meta(pred, self, other):
    for arg, x in (("pred", pred), ("self", self), ("other", other)):
        check_tensor("where", arg, x)
    if pred.dtype is not D.bool:
        raise _fail("where", f"expected a bool tensor for 'pred', got {pred.dtype.name}")
    _same_shape("where", ("pred", pred), ("self", self), ("other", other))
    _same_dtype("where", ("self", self), ("other", other))
    return TensorMeta(tuple(self.shape), self.dtype)


where = _prim("where(Tensor pred, Tensor self, Tensor other) -> Tensor", _where_meta, POINTWISE)


@derivative(where)
def _where_backward(grad, pred, needs_input_grad):
    zero = _like(grad, 0)
    return (None, _p.where(pred, grad, zero) if needs_input_grad[1] else None,
            _p.where(pred, zero, grad) if needs_input_grad[2] else None)


def _convert_meta(self, dtype):
    check_tensor("convert_element_type", "self", self)
    return TensorMeta(tuple(self.shape), _dtype_arg("convert_element_type", dtype))


# float -> int truncates toward zero and saturates (NaN -> 0), as XLA does.
convert_element_type = _prim(
    "convert_element_type(Tensor self, ScalarType dtype) -> Tensor", _convert_meta, POINTWISE)


@derivative(convert_element_type)
def _convert_element_type_backward(grad, self):
    if grad.dtype.is_complex and not self.dtype.is_complex:
        grad = _p.real(grad)
    return grad if grad.dtype is self.dtype else _p.convert_element_type(grad, self.dtype)


def _device_put_meta(self, device):
    check_tensor("device_put", "self", self)
    return TensorMeta(tuple(self.shape), self.dtype)


device_put = _prim("device_put(Tensor self, Device device) -> Tensor", _device_put_meta)


@derivative(device_put)
def _device_put_backward(grad, self):
    return _p.device_put(grad, self.device)


# ----------------------------------------------------------------------------- layout


def _broadcast_in_dim_meta(self, shape, broadcast_dimensions):
    n = "broadcast_in_dim"
    check_tensor(n, "self", self)
    shape = _shape(n, shape)
    bd = _ints(n, "broadcast_dimensions", broadcast_dimensions)
    if len(bd) != self.ndim:
        raise _fail(n, f"broadcast_dimensions {list(bd)} must have one entry per operand dim "
                       f"(operand rank {self.ndim})")
    check_dims(n, bd, len(shape), "broadcast_dimensions")
    if any(a >= b for a, b in zip(bd, bd[1:])):
        raise _fail(n, f"broadcast_dimensions {list(bd)} must be strictly increasing")
    for i, d in enumerate(bd):
        if self.shape[i] not in (1, shape[d]):
            raise _fail(n, f"operand dim {i} has size {self.shape[i]}, which is neither 1 nor "
                           f"the output size {shape[d]} at output dim {d}")
    return TensorMeta(shape, self.dtype)


broadcast_in_dim = _prim(
    "broadcast_in_dim(Tensor self, SymInt[] shape, int[] broadcast_dimensions) -> Tensor",
    _broadcast_in_dim_meta)


@derivative(broadcast_in_dim)
def _broadcast_in_dim_backward(grad, shape, broadcast_dimensions):
    # Sum the new dims away; operand dims of size 1 that were expanded are summed by autograd
    # (which knows the operand's shape), so ``self`` need not be saved.
    new = [d for d in range(len(shape)) if d not in broadcast_dimensions]
    return _p.reduce_sum(grad, new) if new else grad


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _reshape_meta(self, shape):
    check_tensor("reshape", "self", self)
    shape = _shape("reshape", shape)
    if _numel(shape) != _numel(self.shape):
        raise _fail("reshape", f"cannot reshape a tensor of shape {list(self.shape)} "
                               f"({_numel(self.shape)} elements) to {list(shape)}")
    return TensorMeta(shape, self.dtype)


reshape = _prim("reshape(Tensor self, SymInt[] shape) -> Tensor", _reshape_meta)


@derivative(reshape)
def _reshape_backward(grad, self):
    return _p.reshape(grad, list(self.shape))


def _transpose_meta(self, permutation):
    check_tensor("transpose", "self", self)
    perm = _ints("transpose", "permutation", permutation)
    if sorted(perm) != list(range(self.ndim)):
        raise _fail("transpose", f"permutation {list(perm)} is not a permutation of the "
                                 f"{self.ndim} dims")
    return TensorMeta(tuple(self.shape[p] for p in perm), self.dtype)


transpose = _prim("transpose(Tensor self, int[] permutation) -> Tensor", _transpose_meta)


@derivative(transpose)
def _transpose_backward(grad, permutation):
    return _p.transpose(grad, [list(permutation).index(d) for d in range(len(permutation))])


def _squeeze_meta(self, dimensions):
    check_tensor("squeeze", "self", self)
    dims = check_dims("squeeze", dimensions, self.ndim, "dimensions")
    for d in dims:
        if self.shape[d] != 1:
            raise _fail("squeeze", f"dim {d} has size {self.shape[d]}, not 1")
    return TensorMeta(tuple(s for i, s in enumerate(self.shape) if i not in dims), self.dtype)


squeeze = _prim("squeeze(Tensor self, int[] dimensions) -> Tensor", _squeeze_meta)


@derivative(squeeze)
def _squeeze_backward(grad, dimensions):
    shape = list(grad.shape)
    for d in sorted(dimensions):
        shape.insert(d, 1)
    return _p.reshape(grad, shape)


def _per_dim(name, what, xs, ndim):
    xs = _ints(name, what, xs)
    if len(xs) != ndim:
        raise _fail(name, f"{what} {list(xs)} must have one entry per dim (rank {ndim})")
    return xs


def _slice_meta(self, start_indices, limit_indices, strides=None):
    n = "slice"
    check_tensor(n, "self", self)
    start = _per_dim(n, "start_indices", start_indices, self.ndim)
    limit = _per_dim(n, "limit_indices", limit_indices, self.ndim)
    strides = (1,) * self.ndim if strides is None else _per_dim(n, "strides", strides, self.ndim)
    out = []
    for d, (s, lim, st, size) in enumerate(zip(start, limit, strides, self.shape)):
        if not 0 <= s <= lim <= size:
            raise _fail(n, f"dim {d}: need 0 <= start ({s}) <= limit ({lim}) <= size ({size})")
        if st < 1:
            raise _fail(n, f"dim {d}: stride {st} must be >= 1")
        out.append(-(-(lim - s) // st))
    return TensorMeta(tuple(out), self.dtype)


slice_ = _prim("slice(Tensor self, SymInt[] start_indices, SymInt[] limit_indices, "
               "SymInt[]? strides=None) -> Tensor", _slice_meta)


@derivative(slice_)
def _slice_backward(grad, self, start_indices, strides):
    # Scatter the slice back with pad: interior padding fills the strides' gaps.
    strides = strides or [1] * self.ndim
    high = []
    for start, stride, n, size in zip(start_indices, strides, grad.shape, self.shape):
        last = start + (n - 1) * stride if n else start - 1
        high.append(size - last - 1)
    return _p.pad(grad, 0, list(start_indices), high, [st - 1 for st in strides])


def pad_sizes(name, shape, low, high, interior) -> tuple:
    """Output sizes of ``lax.pad``; shared with conv_general's input dilation."""
    out = []
    for d, (size, lo, hi, it) in enumerate(zip(shape, low, high, interior)):
        if it < 0:
            raise _fail(name, f"dim {d}: interior padding {it} must be >= 0")
        n = lo + hi + size + max(size - 1, 0) * it
        if n < 0:
            raise _fail(name, f"dim {d}: padding ({lo}, {hi}, {it}) of size {size} gives a "
                              f"negative size {n}")
        out.append(n)
    return tuple(out)


def _pad_meta(self, padding_value, low, high, interior):
    n = "pad"
    check_tensor(n, "self", self)
    scalar_for(n, padding_value, self.dtype)
    low = _per_dim(n, "low", low, self.ndim)
    high = _per_dim(n, "high", high, self.ndim)
    interior = _per_dim(n, "interior", interior, self.ndim)
    return TensorMeta(pad_sizes(n, self.shape, low, high, interior), self.dtype)


pad = _prim("pad(Tensor self, Scalar padding_value, SymInt[] low, SymInt[] high, "
            "SymInt[] interior) -> Tensor", _pad_meta)


@derivative(pad)
def _pad_backward(grad, low, high, interior):
    # Undo the edges (cropped elements come back as zeros), then drop the interior padding.
    dilated = _p.pad(grad, 0, [-x for x in low], [-x for x in high], [0] * grad.ndim)
    if not any(interior):
        return dilated
    return _p.slice(dilated, [0] * grad.ndim, list(dilated.shape), [i + 1 for i in interior])


def _concatenate_meta(tensors, dim):
    n = "concatenate"
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise _fail(n, "expected a non-empty list of tensors")
    for i, t in enumerate(tensors):
        check_tensor(n, f"tensors[{i}]", t)
    first = tensors[0]
    dim = _dim(n, dim, first.ndim)
    total = 0
    for i, t in enumerate(tensors):
        _same_dtype(n, ("tensors[0]", first), (f"tensors[{i}]", t))
        if t.ndim != first.ndim:
            raise _fail(n, f"tensors[{i}] has rank {t.ndim}, tensors[0] has rank {first.ndim}")
        for d in range(first.ndim):
            if d != dim and t.shape[d] != first.shape[d]:
                raise _fail(n, f"tensors[{i}] has size {t.shape[d]} at dim {d}, tensors[0] "
                               f"has {first.shape[d]}")
        total += t.shape[dim]
    shape = list(first.shape)
    shape[dim] = total
    return TensorMeta(tuple(shape), first.dtype)


concatenate = _prim("concatenate(Tensor[] tensors, int dim) -> Tensor", _concatenate_meta)


@derivative(concatenate)
def _concatenate_backward(grad, tensors, dim):
    out, start = [], 0
    limit = list(grad.shape)
    for t in tensors:
        lo = [0] * grad.ndim
        lo[dim], limit[dim] = start, start + t.shape[dim]
        out.append(_p.slice(grad, lo, list(limit)))
        start = limit[dim]
    return out


def _rev_meta(self, dims):
    check_tensor("rev", "self", self)
    check_dims("rev", dims, self.ndim)
    return TensorMeta(tuple(self.shape), self.dtype)


rev = _prim("rev(Tensor self, int[] dims) -> Tensor", _rev_meta)


@derivative(rev)
def _rev_backward(grad, dims):
    return _p.rev(grad, dims)


# ----------------------------------------------------------------------------- reductions


def _reduce_meta(name, cats):
    def meta(self, dims):
        check_tensor(name, "self", self)
        _check_category(name, self, cats)
        dims = check_dims(name, dims, self.ndim)
        return TensorMeta(tuple(s for i, s in enumerate(self.shape) if i not in dims),
                          self.dtype)
    return meta


# The output dtype is the input's (callers convert first); on bool, sum is "any" and prod
# "all" (add/mul on bool are or/and).  Over an empty extent: the reduction's identity.
reduce_sum = _prim("reduce_sum(Tensor self, int[] dims) -> Tensor", _reduce_meta("reduce_sum",
                                                                                   ANY))
reduce_prod = _prim("reduce_prod(Tensor self, int[] dims) -> Tensor",
                    _reduce_meta("reduce_prod", ANY))
reduce_max = _prim("reduce_max(Tensor self, int[] dims) -> Tensor", _reduce_meta("reduce_max",
                                                                                   BIF))
reduce_min = _prim("reduce_min(Tensor self, int[] dims) -> Tensor", _reduce_meta("reduce_min",
                                                                                   BIF))


@derivative(reduce_sum)
def _reduce_sum_backward(grad, self, dims):
    return _unreduce(grad, self.shape, dims)


def _exclusive_products(x):
    """Along the last dim: each element's product of all the others, without division (so
    zeros are exact): the exclusive product from the left times that from the right."""
    d = x.ndim - 1
    left = _p.cumprod(_shift(x, d, -1, 1), d)
    right = _p.rev(_p.cumprod(_p.rev(_shift(x, d, 1, 1), [d]), d), [d])
    return _p.mul(left, right)


@derivative(reduce_prod)
def _reduce_prod_backward(grad, self, dims):
    dims = sorted(dims)
    if not dims:
        return grad
    if _numel(self.shape) == 0:
        return _zeros(self.shape, grad)
    # The reduced dims last and flattened into one, the products of the others along it.
    keep = [d for d in range(self.ndim) if d not in dims]
    perm = keep + dims
    x = self if perm == sorted(perm) else _p.transpose(self, perm)
    moved = [self.shape[d] for d in perm]
    x = _p.reshape(x, [self.shape[d] for d in keep] + [_numel(self.shape[d] for d in dims)])
    others = _p.reshape(_exclusive_products(x), moved)
    others = _permute_to(others, perm)
    return _times(_unreduce(grad, self.shape, dims), others)


def _extremum_backward(grad, self, dims, result):
    # Ties share the gradient evenly (PyTorch's amax/amin rule).
    hit = _p.convert_element_type(_p.eq(self, _unreduce(result, self.shape, dims)), grad.dtype)
    share = _p.div(grad, _p.reduce_sum(hit, dims))
    return _p.mul(_unreduce(share, self.shape, dims), hit)


derivative(reduce_max, reduce_min)(_extremum_backward)


def _arg_meta(name):
    def meta(self, dim):
        check_tensor(name, "self", self)
        _check_category(name, self, BIF)
        dim = _dim(name, dim, self.ndim)
        if self.shape[dim] == 0:
            raise _fail(name, f"cannot take {name} over dim {dim} of size 0")
        return TensorMeta(tuple(s for i, s in enumerate(self.shape) if i != dim), D.int64)
    return meta


argmax = _prim("argmax(Tensor self, int dim) -> Tensor", _arg_meta("argmax"))
argmin = _prim("argmin(Tensor self, int dim) -> Tensor", _arg_meta("argmin"))
nondifferentiable(argmax, argmin)


def _scan_meta(name):
    def meta(self, dim):
        check_tensor(name, "self", self)
        _dim(name, dim, self.ndim)
        return TensorMeta(tuple(self.shape), self.dtype)
    return meta


cumsum = _prim("cumsum(Tensor self, int dim) -> Tensor", _scan_meta("cumsum"))
cumprod = _prim("cumprod(Tensor self, int dim) -> Tensor", _scan_meta("cumprod"))


@derivative(cumsum)
def _cumsum_backward(grad, dim):
    return _p.rev(_p.cumsum(_p.rev(grad, [dim]), dim), [dim])


@derivative(cumprod)
def _cumprod_backward(grad, self, dim, result):
    # d out[j] / d x[k] = out[k-1] * x[k+1] * ... * x[j] for j >= k, so the gradient is
    # out[k-1] * S[k] with S[k] = g[k] + x[k+1] * S[k+1]: a linear recurrence, solved by a
    # log-step suffix scan. No division, so zeros in ``self`` are exact.
    n = self.shape[dim]
    a, s = _cj(_shift(self, dim, 1, 0)), grad
    step = 1
    while step < n:
        s = _p.add(s, _p.mul(a, _shift(s, dim, step, 0)))
        a = _p.mul(a, _shift(a, dim, step, 0))
        step *= 2
    return _p.mul(_cj(_shift(result, dim, -1, 1)), s)


# ----------------------------------------------------------------------------- creation


def _iota_meta(shape, dimension, *, dtype, device):
    shape = _shape("iota", shape)
    _dim("iota", dimension, len(shape), "dimension")
    return TensorMeta(shape, _dtype_arg("iota", dtype, IF))


def _full_meta(shape, fill_value, *, dtype, device):
    shape = _shape("full", shape)
    dtype = _dtype_arg("full", dtype)
    scalar_for("full", fill_value, dtype)
    return TensorMeta(shape, dtype)


def _factory(op):
    backend_select(op)
    return op


iota = _factory(_prim("iota(SymInt[] shape, int dimension, *, ScalarType dtype, "
                      "Device device) -> Tensor", _iota_meta))
full = _factory(_prim("full(SymInt[] shape, Scalar fill_value, *, ScalarType dtype, "
                      "Device device) -> Tensor", _full_meta))
nondifferentiable(iota, full)

# ----------------------------------------------------------------------------- contraction


def dot_general_dims(lhs, rhs, lhs_contracting_dims, rhs_contracting_dims, lhs_batch_dims,
                     rhs_batch_dims):
    """Validated dims of a dot_general: (lc, rc, lb, rb, lhs free, rhs free)."""
    n = "dot_general"
    check_tensor(n, "lhs", lhs)
    check_tensor(n, "rhs", rhs)
    _same_dtype(n, ("lhs", lhs), ("rhs", rhs))
    lc = check_dims(n, lhs_contracting_dims, lhs.ndim, "lhs_contracting_dims")
    rc = check_dims(n, rhs_contracting_dims, rhs.ndim, "rhs_contracting_dims")
    lb = check_dims(n, lhs_batch_dims, lhs.ndim, "lhs_batch_dims")
    rb = check_dims(n, rhs_batch_dims, rhs.ndim, "rhs_batch_dims")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise _fail(n, "lhs and rhs need as many contracting dims and as many batch dims")
    if set(lc) & set(lb) or set(rc) & set(rb):
        raise _fail(n, "a dim cannot be both a contracting and a batch dim")
    for kind, ld, rd in (("contracting", lc, rc), ("batch", lb, rb)):
        for a, b in zip(ld, rd):
            if lhs.shape[a] != rhs.shape[b]:
                raise _fail(n, f"{kind} dims have different sizes: lhs dim {a} is "
                               f"{lhs.shape[a]}, rhs dim {b} is {rhs.shape[b]}")
    lf = tuple(d for d in range(lhs.ndim) if d not in lc and d not in lb)
    rf = tuple(d for d in range(rhs.ndim) if d not in rc and d not in rb)
    return lc, rc, lb, rb, lf, rf


def _dot_general_meta(lhs, rhs, lhs_contracting_dims, rhs_contracting_dims, lhs_batch_dims,
                      rhs_batch_dims):
    lc, rc, lb, rb, lf, rf = dot_general_dims(lhs, rhs, lhs_contracting_dims,
                                              rhs_contracting_dims, lhs_batch_dims,
                                              rhs_batch_dims)
    shape = tuple(lhs.shape[d] for d in lb + lf) + tuple(rhs.shape[d] for d in rf)
    return TensorMeta(shape, lhs.dtype)


# Accumulates in the operands' dtype (ints wrap; bool: or of ands); half types in float32.
dot_general = _prim(
    "dot_general(Tensor lhs, Tensor rhs, int[] lhs_contracting_dims, "
    "int[] rhs_contracting_dims, int[] lhs_batch_dims, int[] rhs_batch_dims) -> Tensor",
    _dot_general_meta)


@derivative(dot_general)
def _dot_general_backward(grad, lhs, rhs, lhs_contracting_dims, rhs_contracting_dims,
                          lhs_batch_dims, rhs_batch_dims, needs_input_grad):
    lc, rc, lb, rb = (list(x) for x in (lhs_contracting_dims, rhs_contracting_dims,
                                         lhs_batch_dims, rhs_batch_dims))
    lf = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rf = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    # grad's dims: batch, lhs free, rhs free
    gb = list(range(len(lb)))
    g_lf = list(range(len(lb), len(lb) + len(lf)))
    g_rf = list(range(len(lb) + len(lf), grad.ndim))
    gl = gr = None
    if needs_input_grad[0]:
        # grad contracted with rhs over rhs's free dims: (batch, lhs free, rhs's contracting
        # dims in ascending order), each of which stands for its lhs contracting partner
        x = _p.dot_general(grad, _cj(rhs), g_rf, rf, gb, rb)
        gl = _permute_to(x, lb + lf + [lc[rc.index(r)] for r in sorted(rc)])
    if needs_input_grad[1]:
        x = _p.dot_general(grad, _cj(lhs), g_lf, lf, gb, lb)
        gr = _permute_to(x, rb + rf + [rc[lc.index(ld)] for ld in sorted(lc)])
    return gl, gr


def conv_shape(lhs, rhs, window_strides, padding_low, padding_high, lhs_dilation,
               rhs_dilation, feature_group_count):
    """Validated conv_general arguments and output shape, as a dict."""
    n = "conv_general"
    check_tensor(n, "lhs", lhs)
    check_tensor(n, "rhs", rhs)
    _same_dtype(n, ("lhs", lhs), ("rhs", rhs))
    _check_category(n, lhs, IFC, "lhs")
    if lhs.ndim != rhs.ndim or lhs.ndim not in (3, 4, 5):
        raise _fail(n, f"expected lhs (N, C, *spatial) and rhs (O, C/groups, *kernel) of the "
                       f"same rank 3, 4 or 5, got ranks {lhs.ndim} and {rhs.ndim}")
    ns = lhs.ndim - 2
    strides = _per_dim(n, "window_strides", window_strides, ns)
    plo = _per_dim(n, "padding_low", padding_low, ns)
    phi = _per_dim(n, "padding_high", padding_high, ns)
    ld = _per_dim(n, "lhs_dilation", lhs_dilation, ns)
    rd = _per_dim(n, "rhs_dilation", rhs_dilation, ns)
    g = _int(n, "feature_group_count", feature_group_count)
    for what, xs in (("window_strides", strides), ("lhs_dilation", ld),
                     ("rhs_dilation", rd)):
        if any(x < 1 for x in xs):
            raise _fail(n, f"{what} {list(xs)} must be >= 1")
    nb, c = lhs.shape[:2]
    o, cg = rhs.shape[:2]
    if g < 1 or c % g or o % g:
        raise _fail(n, f"feature_group_count {g} must be >= 1 and divide the input channels "
                       f"({c}) and output channels ({o})")
    if cg * g != c:
        raise _fail(n, f"rhs has {cg} input channels per group, expected {c} / {g} = "
                       f"{c // g}")
    kernel = tuple(rhs.shape[2:])
    if any(k < 1 for k in kernel):
        raise _fail(n, f"kernel spatial sizes {list(kernel)} must be >= 1")
    padded = pad_sizes(n, lhs.shape[2:], plo, phi, [x - 1 for x in ld])
    out = []
    for p, k, r, s in zip(padded, kernel, rd, strides):
        kd = (k - 1) * r + 1
        out.append(max(0, (p - kd) // s + 1) if p >= kd else 0)
    return dict(strides=strides, plo=plo, phi=phi, ld=ld, rd=rd, groups=g,
                shape=(nb, o, *out))


def _conv_meta(lhs, rhs, window_strides, padding_low, padding_high, lhs_dilation,
               rhs_dilation, feature_group_count):
    c = conv_shape(lhs, rhs, window_strides, padding_low, padding_high, lhs_dilation,
                   rhs_dilation, feature_group_count)
    return TensorMeta(c["shape"], lhs.dtype)


conv_general = _prim(
    "conv_general(Tensor lhs, Tensor rhs, int[] window_strides, SymInt[] padding_low, "
    "SymInt[] padding_high, int[] lhs_dilation, int[] rhs_dilation, int feature_group_count)"
    " -> Tensor", _conv_meta)


def _conv_lhs_grad(grad, rhs, strides, plo, lhs_size, ld, rd, groups):
    """The gradient of conv_general wrt ``lhs``: a conv of ``grad`` dilated by the strides
    with the kernel flipped and its channel axes swapped per group."""
    o, cg = rhs.shape[:2]
    k = list(rhs.shape[2:])
    ns = len(k)
    spatial = list(range(2, 2 + ns))
    # (O, C/g, *K) -> (g, O/g, C/g, *K) -> (g, C/g, O/g, *K) -> (C, O/g, *K), flipped
    w = _p.reshape(_cj(rhs), [groups, o // groups, cg] + k)
    w = _p.transpose(w, [0, 2, 1] + [3 + i for i in range(ns)])
    w = _p.rev(_p.reshape(w, [groups * cg, o // groups] + k), spatial)
    low, high = [], []
    for kk, r, lo, n, s, d, p in zip(k, rd, plo, lhs_size, strides, ld, grad.shape[2:]):
        # lhs element i sits at lo + i * d of the padded input; output p reads it through
        # tap kk' where p * s + kk' * r = lo + i * d
        kd = (kk - 1) * r + 1
        low.append(kd - 1 - lo)
        high.append((n - 1) * d + lo - (p - 1) * s)
    return _p.conv_general(grad, w, list(ld), low, high, list(strides), list(rd), groups)


def _conv_rhs_grad(grad, lhs, strides, plo, kernel, ld, rd, groups):
    """The gradient of conv_general wrt ``rhs``: a conv of ``lhs`` (batch as channels) with
    ``grad`` (batch as input channels); groups go through the batch axis."""
    n, c = lhs.shape[:2]
    ns = lhs.ndim - 2
    sp = [3 + i for i in range(ns)]
    # (N, C, *S) -> (N, g, C/g, *S) -> (C/g, g, N, *S) -> (C/g, g*N, *S)
    x = _p.reshape(_cj(lhs), [n, groups, c // groups] + list(lhs.shape[2:]))
    x = _p.reshape(_p.transpose(x, [2, 1, 0] + sp), [c // groups, groups * n]
                   + list(lhs.shape[2:]))
    g = _p.transpose(grad, [1, 0] + [2 + i for i in range(ns)])       # (O, N, *P)
    high = []
    for kk, r, lo, size, s, d, p in zip(kernel, rd, plo, lhs.shape[2:], strides, ld,
                                        grad.shape[2:]):
        # exactly K outputs: the padded length is (K - 1) * r + (P - 1) * s + 1
        high.append((kk - 1) * r + (p - 1) * s - lo - (size - 1) * d)
    w = _p.conv_general(x, g, list(rd), list(plo), high, list(ld), list(strides), groups)
    return _p.transpose(w, [1, 0] + [2 + i for i in range(ns)])       # (O, C/g, *K)


@derivative(conv_general)
def _conv_general_backward(grad, lhs, rhs, window_strides, padding_low, lhs_dilation,
                           rhs_dilation, feature_group_count, needs_input_grad):
    empty = _numel(grad.shape) == 0 or _numel(lhs.shape) == 0 or _numel(rhs.shape) == 0
    gl = gr = None
    if needs_input_grad[0]:
        gl = _zeros(lhs.shape, grad) if empty else _conv_lhs_grad(
            grad, rhs, window_strides, padding_low, lhs.shape[2:], lhs_dilation, rhs_dilation,
            feature_group_count)
    if needs_input_grad[1]:
        gr = _zeros(rhs.shape, grad) if empty else _conv_rhs_grad(
            grad, lhs, window_strides, padding_low, rhs.shape[2:], lhs_dilation, rhs_dilation,
            feature_group_count)
    return gl, gr


# ----------------------------------------------------------------------------- gather/scatter


def _index_checks(name, self, dim, index):
    check_tensor(name, "self", self)
    check_tensor(name, "index", index)
    if index.dtype is not D.int64:
        raise _fail(name, f"expected an int64 index, got {index.dtype.name}")
    if index.ndim != self.ndim:
        raise _fail(name, f"index has rank {index.ndim}, self has rank {self.ndim}")
    dim = _dim(name, dim, self.ndim)
    for d in range(self.ndim):
        if d != dim and index.shape[d] > self.shape[d]:
            raise _fail(name, f"index size {index.shape[d]} at dim {d} exceeds self's size "
                              f"{self.shape[d]}")
    return dim


def _gather_meta(self, dim, index):
    _index_checks("gather", self, dim, index)
    return TensorMeta(tuple(index.shape), self.dtype)


gather = _prim("gather(Tensor self, int dim, Tensor index) -> Tensor", _gather_meta)


@derivative(gather)
def _gather_backward(grad, self, dim, index):
    return _p.scatter(_zeros(self.shape, grad), dim, index, grad, "add"), None


SCATTER_REDUCES = ("none", "add", "mul", "max", "min")


def _scatter_meta(self, dim, index, src, reduce="none"):
    n = "scatter"
    _index_checks(n, self, dim, index)
    check_tensor(n, "src", src)
    _same_shape(n, ("index", index), ("src", src))
    _same_dtype(n, ("self", self), ("src", src))
    if reduce not in SCATTER_REDUCES:
        raise _fail(n, f"reduce must be one of {', '.join(SCATTER_REDUCES)}, got {reduce!r}")
    if reduce in ("max", "min"):
        _check_category(n, self, BIF)
    return TensorMeta(tuple(self.shape), self.dtype)


scatter = _prim("scatter(Tensor self, int dim, Tensor index, Tensor src, "
                "str reduce=\"none\") -> Tensor", _scatter_meta)


def _scatter_mul_src_grad(grad, self, dim, index, src, result):
    """d result / d src of a scatter-multiply: the product of everything else written to the
    same slot. Division by ``src`` is exact except at zeros: a slot's only zero gets the
    product of the rest recomputed; with two or more zeros every product is 0 anyway."""
    zero, one = _like(src, 0), _like(src, 1)
    src_zero = _p.eq(src, zero)
    zeros_in_slot = _p.gather(_p.scatter(_zeros(self.shape, src), dim, index,
                                         _p.convert_element_type(src_zero, src.dtype), "add"),
                              dim, index)
    single = _p.bitwise_and(src_zero, _p.eq(zeros_in_slot, one))
    others = _p.scatter(self, dim, index, _p.where(single, one, src), "mul")
    from_others = _p.gather(_times(grad, others), dim, index)
    from_result = _over(_p.gather(_times(grad, result), dim, index),
                        _p.where(src_zero, one, src))
    return _p.where(single, from_others, from_result)


@derivative(scatter)
def _scatter_backward(grad, self, dim, index, src, reduce, result, needs_input_grad):
    gs = gsrc = None
    if reduce in ("none", "add"):
        if needs_input_grad[0]:
            # "none": overwritten slots get nothing (a duplicate index: every writer gets
            # the slot's gradient, as PyTorch's scatter)
            gs = grad if reduce == "add" else \
                _p.scatter(grad, dim, index, _zeros(index.shape, grad), "none")
        if needs_input_grad[2]:
            gsrc = _p.gather(grad, dim, index)
    elif reduce == "mul":
        if needs_input_grad[0]:
            gs = _times(grad, _p.scatter(_like(self, 1), dim, index, src, "mul"))
        if needs_input_grad[2]:
            gsrc = _scatter_mul_src_grad(grad, self, dim, index, src, result)
    else:
        # max/min: every value equal to the result shares the slot's gradient evenly
        value = _p.gather(result, dim, index)
        self_hit = _p.convert_element_type(_p.eq(self, result), grad.dtype)
        src_hit = _p.convert_element_type(_p.eq(src, value), grad.dtype)
        share = _p.div(grad, _p.scatter(self_hit, dim, index, src_hit, "add"))
        if needs_input_grad[0]:
            gs = _p.mul(share, self_hit)
        if needs_input_grad[2]:
            gsrc = _p.mul(_p.gather(share, dim, index), src_hit)
    return gs, None, gsrc


# ----------------------------------------------------------------------------- sorting


def _sort_meta(self, dim, descending, stable):
    check_tensor("sort", "self", self)
    _check_category("sort", self, BIF)
    _dim("sort", dim, self.ndim)
    return (TensorMeta(tuple(self.shape), self.dtype), TensorMeta(tuple(self.shape), D.int64))


sort = _prim("sort(Tensor self, int dim, bool descending, bool stable) "
             "-> (Tensor values, Tensor indices)", _sort_meta)


@derivative(sort)
def _sort_backward(grad, dim, result):
    # the indices are a permutation along dim: each slot is written exactly once
    return _p.scatter(_like(grad, 0), dim, result[1], grad, "none")


def _top_k_meta(self, k, dim, largest):
    n = "top_k"
    check_tensor(n, "self", self)
    _check_category(n, self, BIF)
    dim = _dim(n, dim, self.ndim)
    k = _int(n, "k", k)
    if not 0 <= k <= self.shape[dim]:
        raise _fail(n, f"k ({k}) must be in [0, {self.shape[dim]}] (the size of dim {dim})")
    shape = list(self.shape)
    shape[dim] = k
    return (TensorMeta(tuple(shape), self.dtype), TensorMeta(tuple(shape), D.int64))


top_k = _prim("top_k(Tensor self, int k, int dim, bool largest) "
              "-> (Tensor values, Tensor indices)", _top_k_meta)


@derivative(top_k)
def _top_k_backward(grad, self, dim, result):
    return _p.scatter(_zeros(self.shape, grad), dim, result[1], grad, "none")


# ----------------------------------------------------------------------------- data-dependent


def _nonzero_meta(self):
    raise NotImplementedError("prims.nonzero: output shape depends on data")


def nonzero_check(self):
    check_tensor("nonzero", "self", self)


nonzero = _prim("nonzero(Tensor self) -> Tensor", _nonzero_meta)
nondifferentiable(nonzero)

# ----------------------------------------------------------------------------- fft


def _fft_dims(name, self, dim):
    dims = check_dims(name, dim, self.ndim, "dim")
    for d in dims:
        if self.shape[d] == 0:
            raise _fail(name, f"invalid number of data points (0) along dim {d}")
    return dims


def _fft_c2c_meta(self, dim, forward):
    check_tensor("fft_c2c", "self", self)
    _check_category("fft_c2c", self, COMPLEX)
    _fft_dims("fft_c2c", self, dim)
    return TensorMeta(tuple(self.shape), self.dtype)


def _fft_r2c_meta(self, dim, onesided):
    n = "fft_r2c"
    check_tensor(n, "self", self)
    if self.dtype not in (D.float32, D.float64):
        raise _fail(n, f"expected a float32 or float64 tensor, got {self.dtype.name}")
    dims = _fft_dims(n, self, dim)
    shape = list(self.shape)
    if onesided and dims:
        shape[dims[-1]] = shape[dims[-1]] // 2 + 1
    return TensorMeta(tuple(shape), self.dtype.to_complex())


def _fft_c2r_meta(self, dim, last_dim_size):
    n = "fft_c2r"
    check_tensor(n, "self", self)
    _check_category(n, self, COMPLEX)
    dims = _fft_dims(n, self, dim)
    if not dims:
        raise _fail(n, "needs at least one dim")
    last = _int(n, "last_dim_size", last_dim_size)
    if last < 1:
        raise _fail(n, f"last_dim_size {last} must be >= 1")
    if self.shape[dims[-1]] != last // 2 + 1:
        raise _fail(n, f"dim {dims[-1]} has size {self.shape[dims[-1]]}, expected "
                       f"last_dim_size // 2 + 1 = {last // 2 + 1}")
    shape = list(self.shape)
    shape[dims[-1]] = last
    return TensorMeta(tuple(shape), self.dtype.to_real())


fft_c2c = _prim("fft_c2c(Tensor self, int[] dim, bool forward) -> Tensor", _fft_c2c_meta)
fft_r2c = _prim("fft_r2c(Tensor self, int[] dim, bool onesided) -> Tensor", _fft_r2c_meta)
fft_c2r = _prim("fft_c2r(Tensor self, int[] dim, SymInt last_dim_size) -> Tensor",
                _fft_c2r_meta)


# Unnormalized transforms are linear maps A; the gradient is A^H applied to grad (the
# transform the other way), restricted as the forward was.

@derivative(fft_c2c)
def _fft_c2c_backward(grad, dim, forward):
    return _p.fft_c2c(grad, dim, not forward)


@derivative(fft_r2c)
def _fft_r2c_backward(grad, self, dim, onesided):
    if onesided and dim:
        # the one-sided half is the full transform cropped: zero-pad it back
        last = dim[-1]
        high = [0] * grad.ndim
        high[last] = self.shape[last] - grad.shape[last]
        if high[last]:
            grad = _p.pad(grad, 0, [0] * grad.ndim, high, [0] * grad.ndim)
    return _p.real(_p.fft_c2c(grad, dim, False))


@derivative(fft_c2r)
def _fft_c2r_backward(grad, dim, last_dim_size):
    # c2r reads entries 1 .. n - m of the half spectrum twice (once through their Hermitian
    # mirror), so their gradient doubles (PyTorch's fft_c2r_backward)
    g = _p.fft_r2c(grad, dim, True)
    last = dim[-1]
    m = g.shape[last]
    twice = last_dim_size - m
    if twice > 0:
        parts = [_p.full([1], 1, dtype=g.dtype, device=g.device),
                 _p.full([twice], 2, dtype=g.dtype, device=g.device)]
        if m - 1 - twice:
            parts.append(_p.full([m - 1 - twice], 1, dtype=g.dtype, device=g.device))
        w = _p.broadcast_in_dim(_p.concatenate(parts, 0), list(g.shape), [last])
        g = _p.mul(g, w)
    return g


# ----------------------------------------------------------------------------- random
RNG = ("prim", "nondeterministic")


def check_key(name, key):
    check_tensor(name, "key", key)
    if key.dtype is not D.int64 or tuple(key.shape) != (2,):
        raise _fail(name, f"expected an int64 key of shape [2], got {key.dtype.name} of shape "
                          f"{list(key.shape)}")


def _random_bits_meta(key, shape):
    check_key("random_bits", key)
    return TensorMeta(_shape("random_bits", shape), D.int64)


def _sampler_meta(name):
    def meta(key, shape, a, b, *, dtype):
        check_key(name, key)
        shape = _shape(name, shape)
        dtype = _dtype_arg(name, dtype, FLOAT)
        scalar_for(name, a, dtype)
        scalar_for(name, b, dtype)
        return TensorMeta(shape, dtype)
    return meta


def _split_key_meta(key, num):
    check_key("split_key", key)
    num = _int("split_key", "num", num)
    if num < 0:
        raise _fail("split_key", f"num {num} must be >= 0")
    return TensorMeta((num, 2), D.int64)


random_bits = _prim("random_bits(Tensor key, SymInt[] shape) -> Tensor", _random_bits_meta, RNG)
uniform = _prim("uniform(Tensor key, SymInt[] shape, Scalar low, Scalar high, *, "
                "ScalarType dtype) -> Tensor", _sampler_meta("uniform"), RNG)
normal = _prim("normal(Tensor key, SymInt[] shape, Scalar mean, Scalar std, *, "
               "ScalarType dtype) -> Tensor", _sampler_meta("normal"), RNG)
split_key = _prim("split_key(Tensor key, int num) -> Tensor", _split_key_meta, RNG)
nondifferentiable(random_bits, uniform, normal, split_key)
