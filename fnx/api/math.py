"""Pointwise math: ``fnx.add``, ``fnx.exp``, ``x + y``, ``x.add_(y)``, comparisons, logic."""
from __future__ import annotations

from ..core.tensor import Tensor, tensor_method
from ..ir.aten import elementwise as E
from ..ops import aten

__all__ = []


def _wrapped(x):
    """A Python scalar as a 0-dim tensor that still promotes like a scalar."""
    t = aten.scalar_tensor.default(x)
    t._is_wrapped_number = True
    return t


def _unary(name):
    fam = E.VARIANTS[getattr(aten, name).default]
    f, f_, f_out = fam["functional"]._call, fam.get("inplace"), fam["out"]._call

    def fn(input, *, out=None):
        return f(input) if out is None else f_out(input, out=out)
    fn.__name__ = fn.__qualname__ = name
    example = "[5]" if name == "bitwise_not" else "[0.5]"
    fn.__doc__ = (f"``{name}`` elementwise, as ``torch.{name}``.\n\n"
                  f"    >>> import fnx\n    >>> fnx.{name}(fnx.tensor({example})).shape\n"
                  f"    fnx.Size([1])\n")
    __all__.append(name)
    globals()[name] = fn
    setattr(Tensor, name, lambda self: f(self))
    if f_ is not None:
        g = f_._call
        setattr(Tensor, name + "_", lambda self: g(self))


for _name, _, _ in E.UNARY:
    _unary(_name)


def _binary(name, tensor_ov="Tensor", has_alpha=False, method=True):
    packet = getattr(aten, name)
    op = getattr(packet, tensor_ov)
    fam = E.VARIANTS[op]
    f, f_, f_out = op._call, fam["inplace"]._call, fam["out"]._call
    if has_alpha:
        def fn(input, other, *, alpha=1, out=None):
            return f(input, other, alpha=alpha) if out is None else \
                f_out(input, other, alpha=alpha, out=out)

        def method_(self, other, *, alpha=1):
            return f_(self, other, alpha=alpha)

        def meth(self, other, *, alpha=1):
            return f(self, other, alpha=alpha)
    else:
        def fn(input, other, *, out=None):
            return f(input, other) if out is None else f_out(input, other, out=out)

        def method_(self, other):
            return f_(self, other)

        def meth(self, other):
            return f(self, other)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``{name}`` elementwise with broadcasting and PyTorch's type promotion, "
                  f"as ``torch.{name}``.\n\n    >>> import fnx\n"
                  f"    >>> fnx.{name}(fnx.tensor([4, 6]), fnx.tensor([2, 3])).shape\n"
                  f"    fnx.Size([2])\n")
    __all__.append(name)
    globals()[name] = fn
    if method:
        setattr(Tensor, name, meth)
        setattr(Tensor, name + "_", method_)
    return f, f_


_add, _add_ = _binary("add", has_alpha=True)
_sub, _sub_ = _binary("sub", has_alpha=True)
_mul, _mul_ = _binary("mul")
_div_true, _div_ = _binary("div")
_floordiv, _floordiv_ = _binary("floor_divide", "default")
_rem, _rem_ = _binary("remainder")
_fmod, _ = _binary("fmod")
_pow, _pow_ = _binary("pow", "Tensor_Tensor")
_atan2, _ = _binary("atan2", "default")
_maximum, _ = _binary("maximum", "default")
_minimum, _ = _binary("minimum", "default")
_and, _and_ = _binary("bitwise_and")
_or, _or_ = _binary("bitwise_or")
_xor, _xor_ = _binary("bitwise_xor")
for _n in ("logical_and", "logical_or", "logical_xor"):
    _binary(_n, "default")
_eq, _ = _binary("eq")
_ne, _ = _binary("ne")
_lt, _ = _binary("lt")
_le, _ = _binary("le")
_gt, _ = _binary("gt")
_ge, _ = _binary("ge")
_div_mode = aten.div.Tensor_mode._call
_div_mode_ = aten.div_.Tensor_mode._call
_rsub = aten.rsub.Tensor._call
_pow_scalar = aten.pow.Scalar._call


@tensor_method()
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
    if rounding_mode is None:
        return _div_(self, other)
    return _div_mode_(self, other, rounding_mode=rounding_mode)


divide = true_divide = div
Tensor.divide = Tensor.true_divide = div
multiply, subtract = mul, sub
Tensor.multiply, Tensor.subtract = Tensor.mul, Tensor.sub
__all__ += ["div", "divide", "true_divide", "multiply", "subtract"]


@tensor_method()
def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
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
def where(condition, input=None, other=None):
    """Elements of ``input`` where ``condition`` else ``other``, as ``torch.where``.

    >>> import fnx
    >>> fnx.where(fnx.tensor([True, False]), fnx.tensor([1, 2]), 0)
    tensor([1, 0])
    """
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    return aten.where.self(condition, input, other)


def _where_method(self, condition, other):
    return aten.where.self(condition, self, other)


Tensor.where = _where_method


@tensor_method()
def clamp(input, min=None, max=None, *, out=None):
    """Limit values to ``[min, max]``, as ``torch.clamp`` (tensor or scalar bounds).

    >>> import fnx
    >>> fnx.clamp(fnx.tensor([-2., 0.5, 3.]), min=0, max=1)
    tensor([0.0000, 0.5000, 1.0000])
    """
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return aten.clamp.Tensor(input, min, max)
    return aten.clamp.default(input, min, max)


@tensor_method()
def clamp_(self, min=None, max=None):
    return aten.clamp_.default(self, min, max)


clip = clamp
Tensor.clip, Tensor.clip_ = clamp, clamp_


@tensor_method()
def clamp_min(input, min):
    return clamp(input, min=min)


@tensor_method()
def clamp_max(input, max):
    return clamp(input, max=max)


__all__ += ["rsub", "pow", "where", "clamp", "clip", "clamp_min", "clamp_max"]


# --------------------------------------------------------------------- Python operators
# The generated op functions take (self, other) and are bound as methods directly: one
# Python frame less on the hottest path.
def _r(f):
    return lambda self, other: f(_wrapped(other) if not isinstance(other, Tensor) else other,
                                 self)


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
Tensor.__rtruediv__ = _r(_div_true)
Tensor.__itruediv__ = _div_
Tensor.__floordiv__ = _floordiv
Tensor.__rfloordiv__ = _r(_floordiv)
Tensor.__ifloordiv__ = _floordiv_
Tensor.__mod__ = _rem
Tensor.__rmod__ = _r(_rem)
Tensor.__imod__ = _rem_
Tensor.__pow__ = _pow
Tensor.__rpow__ = lambda self, other: _pow_scalar(other, self)
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
Tensor.__eq__ = _eq
Tensor.__ne__ = _ne
Tensor.__lt__ = _lt
Tensor.__le__ = _le
Tensor.__gt__ = _gt
Tensor.__ge__ = _ge
Tensor.__neg__ = Tensor.neg
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = Tensor.abs
Tensor.__invert__ = Tensor.bitwise_not
Tensor.negative = Tensor.neg
