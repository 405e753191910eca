"""Pointwise math: ``fnx.add``, ``fnx.exp``, ``x + y``, ``x.add_(y)``, comparisons, logic.

The unary functions (``exp(input, *, out=None)``) and the binary ones (``add(input, other,
*, alpha=1, out=None)``) are uniform families: a builder makes each function, with its
signature and docstring, and binds the matching ``Tensor`` methods; a plain assignment per
name (``exp = _unary("exp")``) binds the function where readers and linters see it.
"""
from __future__ import annotations

from ..core.tensor import Tensor, tensor_method
from ..ir.aten import elementwise as E
from ..ir.aten import elementwise_ternary as T
from ..ops import aten

__all__ = ["abs", "neg", "sign", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cos",
           "cosh", "sin", "sinh", "tan", "tanh", "erf", "exp", "expm1", "log", "log10",
           "log1p", "log2", "reciprocal", "rsqrt", "sqrt", "sigmoid", "exp2", "erfinv", "ceil",
           "floor", "round", "trunc", "frac", "relu", "bitwise_not", "isnan", "isinf",
           "isfinite", "logical_not", "signbit", "square",
           "add", "sub", "mul", "floor_divide", "remainder", "fmod", "atan2", "maximum",
           "minimum", "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or",
           "bitwise_left_shift", "bitwise_right_shift",
           "logical_xor", "eq", "ne", "lt", "le", "gt", "ge",
           "div", "divide", "true_divide", "multiply", "subtract", "rsub", "pow", "where",
           "clamp", "clip", "clamp_min", "clamp_max", "addcmul", "addcdiv", "lerp",
           # PyTorch's second (NumPy's) names of the functions above
           "absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
           "negative", "fix", "greater", "greater_equal", "less", "less_equal", "not_equal"]


def _wrapped(x):
    """A Python scalar as a 0-dim tensor that still promotes like a scalar."""
    t = aten.scalar_tensor.default(x)
    t._is_wrapped_number = True
    return t


def _variants(name, overload="default"):
    """The functional, in-place (None if there is none) and ``out=`` callables of
    ``aten.<name>.<overload>``: the generated calls themselves, one frame less."""
    fam = E.VARIANTS[getattr(getattr(aten, name), overload)]
    inplace = fam.get("inplace")
    return fam["functional"]._call, inplace and inplace._call, fam["out"]._call


def _doc(summary, statement, result):
    return f"{summary}\n\n    >>> import fnx\n    >>> {statement}\n    {result}\n"


def _named(fn, name, doc):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _methods(name, method, method_):
    """Bind ``Tensor.<name>`` and, unless ``method_`` is None, ``Tensor.<name>_``."""
    x = "fnx.tensor([5])" if name.startswith("bitwise") else "fnx.tensor([0.5])"
    args = "" if method.__code__.co_argcount == 1 else x
    method.__doc__ = _doc(f"The method form of ``fnx.{name}``, as ``torch.Tensor.{name}``.",
                          f"{x}.{name}({args}).shape", "fnx.Size([1])")
    tensor_method(name)(method)
    if method_ is not None:
        method_.__doc__ = _doc(f"``{name}`` in place: writes the result into ``self`` and "
                               f"returns it.", f"x = {x}; x.{name}_({args}) is x", "True")
        tensor_method(name + "_")(method_)


def _unary(name):
    """``fnx.<name>(input, *, out=None)``, ``Tensor.<name>(self)`` and, where the op has an
    in-place variant, ``Tensor.<name>_(self)``."""
    f, f_, f_out = _variants(name)

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        return f(input) if out is None else f_out(input, out=out)

    def method(self) -> Tensor:
        return f(self)

    def method_(self) -> Tensor:
        return f_(self)
    _methods(name, method, method_ if f_ is not None else None)
    x = "[5]" if name == "bitwise_not" else "[0.5]"
    return _named(fn, name, _doc(f"``{name}`` elementwise, as ``torch.{name}``.",
                                 f"fnx.{name}(fnx.tensor({x})).shape", "fnx.Size([1])"))


def _binary(name, overload="Tensor"):
    """``fnx.<name>(input, other, *, out=None)`` with broadcasting and type promotion, and
    ``Tensor.<name>(self, other)`` and ``Tensor.<name>_(self, other)``."""
    f, f_, f_out = _variants(name, overload)

    def fn(input: Tensor, other, *, out: Tensor | None = None) -> Tensor:
        return f(input, other) if out is None else f_out(input, other, out=out)

    def method(self, other) -> Tensor:
        return f(self, other)

    def method_(self, other) -> Tensor:
        return f_(self, other)
    _methods(name, method, method_)
    return _named(fn, name, _binary_doc(name))


def _binary_alpha(name):
    """``_binary`` for ``add`` and ``sub``, which scale ``other`` by ``alpha``."""
    f, f_, f_out = _variants(name, "Tensor")

    def fn(input: Tensor, other, *, alpha=1, out: Tensor | None = None) -> Tensor:
        if out is None:
            return f(input, other, alpha=alpha)
        return f_out(input, other, alpha=alpha, out=out)

    def method(self, other, *, alpha=1) -> Tensor:
        return f(self, other, alpha=alpha)

    def method_(self, other, *, alpha=1) -> Tensor:
        return f_(self, other, alpha=alpha)
    _methods(name, method, method_)
    return _named(fn, name, _binary_doc(name))


def _binary_doc(name):
    return _doc(f"``{name}`` elementwise with broadcasting and PyTorch's type promotion, as "
                f"``torch.{name}``.", f"fnx.{name}(fnx.tensor([4, 6]), fnx.tensor([2, 3])).shape",
                "fnx.Size([2])")


abs = _unary("abs")
neg = _unary("neg")
sign = _unary("sign")
acos = _unary("acos")
acosh = _unary("acosh")
asin = _unary("asin")
asinh = _unary("asinh")
atan = _unary("atan")
atanh = _unary("atanh")
cos = _unary("cos")
cosh = _unary("cosh")
sin = _unary("sin")
sinh = _unary("sinh")
tan = _unary("tan")
tanh = _unary("tanh")
erf = _unary("erf")
exp = _unary("exp")
expm1 = _unary("expm1")
log = _unary("log")
log10 = _unary("log10")
log1p = _unary("log1p")
log2 = _unary("log2")
reciprocal = _unary("reciprocal")
rsqrt = _unary("rsqrt")
sqrt = _unary("sqrt")
sigmoid = _unary("sigmoid")
exp2 = _unary("exp2")
erfinv = _unary("erfinv")
ceil = _unary("ceil")
floor = _unary("floor")
round = _unary("round")
trunc = _unary("trunc")
frac = _unary("frac")
relu = _unary("relu")
bitwise_not = _unary("bitwise_not")
isnan = _unary("isnan")
isinf = _unary("isinf")
isfinite = _unary("isfinite")
logical_not = _unary("logical_not")
signbit = _unary("signbit")
square = _unary("square")

add = _binary_alpha("add")
sub = _binary_alpha("sub")
mul = _binary("mul")
floor_divide = _binary("floor_divide", "default")
remainder = _binary("remainder")
fmod = _binary("fmod")
atan2 = _binary("atan2", "default")
maximum = _binary("maximum", "default")
minimum = _binary("minimum", "default")
bitwise_and = _binary("bitwise_and")
bitwise_or = _binary("bitwise_or")
bitwise_xor = _binary("bitwise_xor")
bitwise_left_shift = _binary("bitwise_left_shift")
bitwise_right_shift = _binary("bitwise_right_shift")
logical_and = _binary("logical_and", "default")
logical_or = _binary("logical_or", "default")
logical_xor = _binary("logical_xor", "default")
eq = _binary("eq")
ne = _binary("ne")
lt = _binary("lt")
le = _binary("le")
gt = _binary("gt")
ge = _binary("ge")

# The op callables the operators and ``div``/``pow`` call directly.
_add, _add_, _ = _variants("add", "Tensor")
_sub, _sub_, _ = _variants("sub", "Tensor")
_mul, _mul_, _ = _variants("mul", "Tensor")
_div_true, _div_, _ = _variants("div", "Tensor")
_floordiv, _floordiv_, _ = _variants("floor_divide")
_rem, _rem_, _ = _variants("remainder", "Tensor")
_pow, _pow_, _ = _variants("pow", "Tensor_Tensor")
_and, _and_, _ = _variants("bitwise_and", "Tensor")
_or, _or_, _ = _variants("bitwise_or", "Tensor")
_xor, _xor_, _ = _variants("bitwise_xor", "Tensor")
_shl, _shl_, _ = _variants("bitwise_left_shift", "Tensor")
_shr, _shr_, _ = _variants("bitwise_right_shift", "Tensor")
_div_mode = aten.div.Tensor_mode._call
_div_mode_ = aten.div_.Tensor_mode._call
_rsub = aten.rsub.Tensor._call
_pow_scalar = aten.pow.Scalar._call


@tensor_method("div", "divide", "true_divide")
def div(input, other, *, rounding_mode=None, out=None):
    """True division, or ``rounding_mode='trunc'|'floor'``, as ``torch.div``.

    >>> import fnx
    >>> fnx.div(fnx.tensor([-7, 7]), 2, rounding_mode="trunc")
    tensor([-3,  3])
    """
    if out is not None:
        return aten.div.Tensor_mode_out(input, other, rounding_mode=rounding_mode, out=out)
    if rounding_mode is None:
        return _div_true(input, other)
    return _div_mode(input, other, rounding_mode=rounding_mode)


@tensor_method()
def div_(self, other, *, rounding_mode=None):
    """``div`` in place.

    >>> import fnx
    >>> fnx.tensor([7., -7.]).div_(2, rounding_mode="floor")
    tensor([ 3., -4.])
    """
    if rounding_mode is None:
        return _div_(self, other)
    return _div_mode_(self, other, rounding_mode=rounding_mode)


divide = true_divide = div
multiply, subtract = mul, sub
Tensor.multiply, Tensor.subtract = Tensor.mul, Tensor.sub


@tensor_method()
def rsub(input, other, *, alpha=1):
    """``other - alpha * input``, as ``torch.rsub``.

    >>> import fnx
    >>> fnx.rsub(fnx.tensor([1, 2]), 10, alpha=2)
    tensor([8, 6])
    """
    return _rsub(input, other, alpha=alpha)


@tensor_method()
def pow(input, exponent, *, out=None):
    """``input ** exponent``; ``input`` may be a Python number.

    >>> import fnx
    >>> fnx.pow(2, fnx.tensor([1, 2, 3]))
    tensor([2, 4, 8])
    """
    if not isinstance(input, Tensor):
        return _pow_scalar(input, exponent)
    if out is not None:
        return aten.pow.Tensor_Tensor_out(input, exponent, out=out)
    return _pow(input, exponent)


@tensor_method()
def pow_(self, exponent):
    """``pow`` in place.

    >>> import fnx
    >>> fnx.tensor([2., 3.]).pow_(2)
    tensor([4., 9.])
    """
    return _pow_(self, exponent)


def where(condition, input=None, other=None):
    """Elements of ``input`` where ``condition`` else ``other``, as ``torch.where``; with
    the condition alone, ``condition.nonzero(as_tuple=True)``.

    >>> import fnx
    >>> fnx.where(fnx.tensor([True, False]), fnx.tensor([1, 2]), 0)
    tensor([1, 0])
    """
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    return aten.where.self(condition, input, other)


@tensor_method("where")
def _where_method(self, condition, other):
    """``fnx.where(condition, self, other)``.

    >>> import fnx
    >>> fnx.tensor([1, 2]).where(fnx.tensor([False, True]), 0)
    tensor([0, 2])
    """
    return aten.where.self(condition, self, other)


@tensor_method("clamp", "clip")
def clamp(input, min=None, max=None, *, out=None):
    """Limit values to ``[min, max]``, as ``torch.clamp`` (tensor or scalar bounds).

    >>> import fnx
    >>> fnx.clamp(fnx.tensor([-2., 0.5, 3.]), min=0, max=1)
    tensor([0.0000, 0.5000, 1.0000])
    """
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return aten.clamp.Tensor(input, min, max)
    return aten.clamp.default(input, min, max)


@tensor_method("clamp_", "clip_")
def clamp_(self, min=None, max=None):
    """``clamp`` in place.

    >>> import fnx
    >>> fnx.tensor([-2., 3.]).clamp_(max=1)
    tensor([-2.,  1.])
    """
    return aten.clamp_.default(self, min, max)


clip = clamp


@tensor_method()
def clamp_min(input, min):
    """``clamp(input, min=min)``.

    >>> import fnx
    >>> fnx.clamp_min(fnx.tensor([-1, 2]), 0)
    tensor([0, 2])
    """
    return clamp(input, min=min)


@tensor_method()
def clamp_max(input, max):
    """``clamp(input, max=max)``.

    >>> import fnx
    >>> fnx.clamp_max(fnx.tensor([-1, 2]), 0)
    tensor([-1,  0])
    """
    return clamp(input, max=max)


# --------------------------------------------------------------------- Python operators
# The generated op functions take (self, other) and are bound as methods directly: one
# Python frame less on the hottest path.
def _r(f, name):
    """The reflected operator ``other <op> self``; a Python number becomes a wrapped 0-dim
    tensor (it still promotes like a number)."""
    def reflected(self, other):
        return f(_wrapped(other) if not isinstance(other, Tensor) else other, self)
    reflected.__name__, reflected.__qualname__ = name, f"Tensor.{name}"
    return reflected


@tensor_method("__rpow__")
def _rpow(self, other):
    return _pow_scalar(other, self)


@tensor_method("__pos__")
def _pos(self):
    return self


Tensor.__add__ = _add
Tensor.__radd__ = _add
Tensor.__iadd__ = _add_
Tensor.__sub__ = _sub
Tensor.__rsub__ = _rsub
Tensor.__isub__ = _sub_
Tensor.__mul__ = _mul
Tensor.__rmul__ = _mul
Tensor.__imul__ = _mul_
Tensor.__truediv__ = _div_true
Tensor.__rtruediv__ = _r(_div_true, "__rtruediv__")
Tensor.__itruediv__ = _div_
Tensor.__floordiv__ = _floordiv
Tensor.__rfloordiv__ = _r(_floordiv, "__rfloordiv__")
Tensor.__ifloordiv__ = _floordiv_
Tensor.__mod__ = _rem
Tensor.__rmod__ = _r(_rem, "__rmod__")
Tensor.__imod__ = _rem_
Tensor.__pow__ = _pow
Tensor.__ipow__ = _pow_
Tensor.__and__ = _and
Tensor.__rand__ = _and
Tensor.__iand__ = _and_
Tensor.__or__ = _or
Tensor.__ror__ = _or
Tensor.__ior__ = _or_
Tensor.__xor__ = _xor
Tensor.__rxor__ = _xor
Tensor.__ixor__ = _xor_
Tensor.__lshift__ = _shl
Tensor.__rlshift__ = _r(_shl, "__rlshift__")
Tensor.__ilshift__ = _shl_
Tensor.__rshift__ = _shr
Tensor.__rrshift__ = _r(_shr, "__rrshift__")
Tensor.__irshift__ = _shr_
Tensor.__eq__ = aten.eq.Tensor._call
Tensor.__ne__ = aten.ne.Tensor._call
Tensor.__lt__ = aten.lt.Tensor._call
Tensor.__le__ = aten.le.Tensor._call
Tensor.__gt__ = aten.gt.Tensor._call
Tensor.__ge__ = aten.ge.Tensor._call
Tensor.__neg__ = Tensor.neg
Tensor.__abs__ = Tensor.abs
Tensor.__invert__ = Tensor.bitwise_not
Tensor.negative = Tensor.neg


# ---------------------------------------------------------------- addcmul, addcdiv, lerp

def _ternary_variants(op):
    fam = E.VARIANTS[op]
    return fam["functional"]._call, fam["inplace"]._call, fam["out"]._call


_addcmul, _addcmul_, _addcmul_out = _ternary_variants(T.addcmul)
_addcdiv, _addcdiv_, _addcdiv_out = _ternary_variants(T.addcdiv)
_lerp_s, _lerp_s_, _lerp_s_out = _ternary_variants(T.lerp_Scalar)
_lerp_t, _lerp_t_, _lerp_t_out = _ternary_variants(T.lerp_Tensor)


@tensor_method()
def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 * tensor2`` with broadcasting, as ``torch.addcmul``.

    >>> import fnx
    >>> fnx.addcmul(fnx.tensor([1., 1.]), fnx.tensor([2., 3.]), fnx.tensor([4., 5.]), value=0.5)
    tensor([5.0000, 8.5000])
    """
    if out is not None:
        return _addcmul_out(input, tensor1, tensor2, value=value, out=out)
    return _addcmul(input, tensor1, tensor2, value=value)


@tensor_method()
def addcmul_(self, tensor1, tensor2, *, value=1):
    """``addcmul`` in place.

    >>> import fnx
    >>> fnx.zeros(2).addcmul_(fnx.tensor([1., 2.]), fnx.tensor([3., 4.]))
    tensor([3., 8.])
    """
    return _addcmul_(self, tensor1, tensor2, value=value)


@tensor_method()
def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 / tensor2`` with broadcasting, as ``torch.addcdiv``
    (integer ``tensor1`` and ``tensor2`` are refused, as in PyTorch).

    >>> import fnx
    >>> fnx.addcdiv(fnx.tensor([1., 1.]), fnx.tensor([2., 3.]), fnx.tensor([4., 6.]), value=2)
    tensor([2., 2.])
    """
    if out is not None:
        return _addcdiv_out(input, tensor1, tensor2, value=value, out=out)
    return _addcdiv(input, tensor1, tensor2, value=value)


@tensor_method()
def addcdiv_(self, tensor1, tensor2, *, value=1):
    """``addcdiv`` in place.

    >>> import fnx
    >>> fnx.ones(2).addcdiv_(fnx.tensor([1., 2.]), fnx.tensor([4., 4.]))
    tensor([1.2500, 1.5000])
    """
    return _addcdiv_(self, tensor1, tensor2, value=value)


@tensor_method()
def lerp(input, end, weight, *, out=None):
    """``input + weight * (end - input)``, as ``torch.lerp``; ``weight`` a number or a
    tensor (of ``input``'s dtype, broadcasting).

    >>> import fnx
    >>> fnx.lerp(fnx.tensor([0., 10.]), fnx.tensor([10., 20.]), 0.25)
    tensor([ 2.5000, 12.5000])
    """
    tensor_weight = isinstance(weight, Tensor)
    if out is not None:
        return (_lerp_t_out if tensor_weight else _lerp_s_out)(input, end, weight, out=out)
    return (_lerp_t if tensor_weight else _lerp_s)(input, end, weight)


@tensor_method()
def lerp_(self, end, weight):
    """``lerp`` in place.

    >>> import fnx
    >>> fnx.zeros(2).lerp_(fnx.tensor([4., 8.]), fnx.tensor([0.5, 0.25]))
    tensor([2., 2.])
    """
    return (_lerp_t_ if isinstance(weight, Tensor) else _lerp_s_)(self, end, weight)


# PyTorch's second names (NumPy's spellings): the same functions and Tensor methods
# (in-place ones too: Tensor.absolute_ is abs_)
_SECOND_NAMES = [("absolute", "abs"), ("arccos", "acos"), ("arccosh", "acosh"),
                 ("arcsin", "asin"), ("arcsinh", "asinh"), ("arctan", "atan"),
                 ("arctan2", "atan2"), ("arctanh", "atanh"), ("negative", "neg"),
                 ("fix", "trunc"), ("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"),
                 ("less_equal", "le"), ("not_equal", "ne")]
absolute, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, negative, fix, \
    greater, greater_equal, less, less_equal, not_equal = \
    (globals()[_name] for _, _name in _SECOND_NAMES)
for _alias, _name in _SECOND_NAMES:
    setattr(Tensor, _alias, getattr(Tensor, _name))
    if hasattr(Tensor, _name + "_"):
        setattr(Tensor, _alias + "_", getattr(Tensor, _name + "_"))
