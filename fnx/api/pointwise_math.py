"""Pointwise math beyond the arithmetic core, as ``torch.*``: ``fnx.hypot``,
``fnx.copysign``, ``fnx.logaddexp``, ``fnx.logaddexp2``, ``fnx.nextafter``,
``fnx.heaviside``, ``fnx.sgn``, ``fnx.ldexp``, ``fnx.float_power``, ``fnx.gcd``,
``fnx.lcm``, with their ``Tensor``
methods (and in-place forms where PyTorch has them).
"""
from __future__ import annotations

from ..core import dtype as D
from ..core.tensor import Tensor
from ..ir.variants import write_result
from ..ops import aten
from .math import _binary, _doc, _named, _wrapped
from .out_results import write_results
from .reduction import return_types
from .special import _method

__all__ = ["hypot", "copysign", "logaddexp", "logaddexp2", "nextafter", "heaviside", "sgn",
           "ldexp", "float_power", "gcd", "lcm", "frexp"]

hypot = _binary("hypot", "default")
copysign = _binary("copysign", "default")
nextafter = _binary("nextafter", "default")
heaviside = _binary("heaviside", "default")
gcd = _binary("gcd", "default")
lcm = _binary("lcm", "default")
for _f in (hypot, copysign, nextafter, heaviside, gcd, lcm):
    _f.__module__ = __name__        # made by math's builders, bound here
for _n in ("gcd", "lcm"):           # integer-only: examples on integers
    getattr(Tensor, _n).__doc__ = _doc(f"The method form of ``fnx.{_n}``, as "
                                       f"``torch.Tensor.{_n}``.",
                                       f"fnx.tensor([4]).{_n}(fnx.tensor([6])).shape",
                                       "fnx.Size([1])")
    getattr(Tensor, _n + "_").__doc__ = _doc(f"``{_n}`` in place: writes the result into "
                                             f"``self`` and returns it.",
                                             f"x = fnx.tensor([4]); x.{_n}_(fnx.tensor([6])) is x",
                                             "True")
hypot.__doc__ = _doc("``sqrt(input^2 + other^2)`` without overflow, as ``torch.hypot``.",
                     "fnx.hypot(fnx.tensor([3.0]), fnx.tensor([4.0]))", "tensor([5.])")
nextafter.__doc__ = _doc("The next floating-point value after ``input`` towards ``other``, "
                         "as ``torch.nextafter``.",
                         "fnx.nextafter(fnx.tensor([1.0]), fnx.tensor([2.0])) > 1",
                         "tensor([True])")


def _no_inplace(name):
    op = getattr(aten, name)

    def fn(input: Tensor, other, *, out: Tensor | None = None) -> Tensor:
        return op.default(input, other) if out is None else op.out(input, other, out=out)
    _method(name, lambda self, other: op.default(self, other),
            f"fnx.tensor([0.5]).{name}(fnx.tensor([1.0])).shape")
    return _named(fn, name, _doc(f"``{name}`` elementwise with broadcasting, as "
                                 f"``torch.{name}``.",
                                 f"fnx.{name}(fnx.tensor([0.0]), fnx.tensor([0.0])).shape",
                                 "fnx.Size([1])"))


logaddexp = _no_inplace("logaddexp")
logaddexp2 = _no_inplace("logaddexp2")


def _into(name, self, fn, *args):
    """``self`` overwritten by ``fn(self, *args)``, refused first when ``self`` cannot
    hold it (computed from a copy when autograd records: ``write_result``)."""
    return write_result(name, fn, self, *args)


def sgn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``x / |x|`` (0 at 0): the sign of a real tensor, the unit phase of a complex one, as
    ``torch.sgn``.

    >>> import fnx
    >>> fnx.sgn(fnx.tensor([-2.0, 0.0, 3.0]))
    tensor([-1.,  0.,  1.])
    """
    r = aten.sgn.default(input)
    return r if out is None else out.copy_(r)


def ldexp(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``input * 2 ** other``, as ``torch.ldexp``.

    >>> import fnx
    >>> fnx.ldexp(fnx.tensor([1.0, 3.0]), fnx.tensor([2, -1]))
    tensor([4.0000, 1.5000])
    """
    r = aten.ldexp.Tensor(input, other)
    return r if out is None else out.copy_(r)


def float_power(input, exponent, *, out: Tensor | None = None) -> Tensor:
    """``input ** exponent`` computed in double precision (complex128 if either is complex),
    as ``torch.float_power``.

    >>> import fnx
    >>> fnx.float_power(fnx.tensor([2, 3]), 2)
    tensor([4., 9.], dtype=fnx.float64)
    """
    if not isinstance(input, Tensor):
        input = _wrapped(input)
    if isinstance(exponent, Tensor):
        r = aten.float_power.Tensor_Tensor(input, exponent)
    else:
        r = aten.float_power.Tensor_Scalar(input, exponent)
    return r if out is None else out.copy_(r)


def frexp(input: Tensor, *, out=None):
    """``input`` as ``mantissa * 2 ** exponent`` with ``0.5 <= |mantissa| < 1`` (int32
    exponents), as ``torch.frexp``.

    >>> import fnx
    >>> r = fnx.frexp(fnx.tensor([8.0, -0.75]))
    >>> r.mantissa.tolist(), r.exponent.tolist(), r.exponent.dtype
    ([0.5, -0.75], [4, 0], fnx.int32)
    """
    m, e = aten.frexp.Tensor(input)
    if out is not None:
        m, e = write_results("frexp", (m, e), out, (input,), _FREXP_OUT)
    return return_types.frexp((m, e))


def _frexp_out(what, want):
    # out= must hold the results' dtypes exactly: PyTorch's frexp never casts
    def rule(r, o):
        if o.dtype is r.dtype:
            return None
        return (f"torch.frexp() expects {what} to have {want(r)} but got "
                f"{o.dtype.cpp_type}")
    return rule


_FREXP_OUT = [_frexp_out("mantissa", lambda r: f"dtype {r.dtype.cpp_type}"),
              _frexp_out("exponent", lambda r: "int dtype")]


def _float_power_(self, exponent):
    want = D.complex128 if self.dtype.is_complex or isinstance(exponent, complex) else D.float64
    if self.dtype is not want:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype.scalar_type} "
                           f"but the operation's result requires dtype {want.scalar_type}")
    return _into("float_power_", self, float_power, exponent)


_method("frexp", lambda self: frexp(self), "fnx.tensor([0.5]).frexp().mantissa.shape")
_method("sgn", lambda self: aten.sgn.default(self), "fnx.tensor([0.5]).sgn().shape")
_method("sgn_", lambda self: _into("sgn_", self, aten.sgn.default),
        "fnx.tensor([0.5]).sgn_().shape")
_method("ldexp", lambda self, other: aten.ldexp.Tensor(self, other),
        "fnx.tensor([0.5]).ldexp(fnx.tensor([1])).shape")
_method("ldexp_", lambda self, other: _into("ldexp_", self, aten.ldexp.Tensor, other),
        "fnx.tensor([0.5]).ldexp_(fnx.tensor([1])).shape")
_method("float_power", lambda self, exponent: float_power(self, exponent),
        "fnx.tensor([0.5]).float_power(2).shape")
_method("float_power_", _float_power_,
        "fnx.tensor([0.5], dtype=fnx.float64).float_power_(2).shape")
