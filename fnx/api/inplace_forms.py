"""In-place forms: ``torch.abs_(x)``, ``x.clamp_min_(0)``, ``torch.celu_(x)``, ...

Two generic builders, each row of a table one name:

- ``_writing(name, functional)`` makes the in-place method of an op that has no in-place
  operator of its own: it computes ``functional(self, ...)``, refuses a result that
  ``self`` cannot hold (shape, or a cast across categories: PyTorch's "result type Float
  can't be cast to the desired output type Long") before writing anything, then writes it
  with ``copy_`` (so autograd, views, version counters and tracing see one ordinary write).
- ``_function_form(name)`` makes ``fnx.<name>`` from the method ``Tensor.<name>``, as
  PyTorch's ``torch.abs_(x)`` is ``x.abs_()``: the method stays the one definition.

>>> import fnx
>>> x = fnx.tensor([-1.0, 4.0])
>>> fnx.sqrt_(fnx.abs_(x)) is x, x.tolist()
(True, [1.0, 2.0])
"""
from __future__ import annotations

import inspect

from ..core.tensor import Tensor, tensor_method
from ..ir.variants import write_result
from ..ops import aten
from . import aliases as _aliases
from . import complex_ops as _complex
from . import linalg as _linalg
from . import math as _math
from . import nn as _nn
from . import reduction as _reduction
from . import special as _special  # noqa: F401  (binds Tensor.xlogy_, logit_, ...)
from . import pointwise_math as _pointwise  # noqa: F401  (binds Tensor.ldexp_, ...)
from . import shape as _shape  # noqa: F401  (binds Tensor.fill_, zero_, detach_)
from . import matrix_extras as _matrix  # noqa: F401  (binds Tensor.addmv_)
from . import indexing as _indexing  # noqa: F401  (binds Tensor.index_put_)

__all__ = ["fill", "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_",
           "arcsinh_", "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_",
           "clamp_", "clamp_max_", "clamp_min_", "clip_", "conj_physical_", "cos_", "cosh_",
           "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_",
           "fix_", "floor_", "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_",
           "log1p_", "log2_", "log_", "logit_", "neg_", "negative_", "rad2deg_",
           "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_",
           "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_",
           "celu_", "selu_", "threshold_", "dropout_", "feature_dropout_"]


def _writing(name, functional):
    """The in-place method ``name`` (``"deg2rad_"``) writing ``functional(self, ...)``."""
    def method_(self, *args, **kwargs):
        return write_result(name, functional, self, *args, **kwargs)
    params = list(inspect.signature(functional).parameters.values())
    params = [p for p in params if p.name != "out"]
    method_.__signature__ = inspect.Signature([params[0].replace(name="self")] + params[1:])
    method_.__name__ = method_.__qualname__ = name
    method_.__doc__ = (f"``{name[:-1]}`` in place: writes the result into ``self`` and "
                       f"returns it, as ``torch.Tensor.{name}``.")
    return method_


# name -> (the op computing the value, a doctest call's arguments after ``self``)
_WRITING = {
    "clamp_min_": (_math.clamp_min, "0.0"), "clamp_max_": (_math.clamp_max, "0.0"),
    "deg2rad_": (_aliases.deg2rad, ""), "rad2deg_": (_aliases.rad2deg, ""),
    "conj_physical_": (_complex.conj_physical, ""),
    "cumsum_": (_reduction.cumsum, "0"), "cumprod_": (_reduction.cumprod, "0"),
    "addmm_": (_linalg.addmm, "fnx.ones(1, 1), fnx.ones(1, 1)"),
    "baddbmm_": (_linalg.baddbmm, "fnx.ones(1, 1, 1), fnx.ones(1, 1, 1)"),
}
for _name, (_fn, _args) in _WRITING.items():
    _m = _writing(_name, _fn)
    _shape_ = "(1, 1, 1)" if _name == "baddbmm_" else "(1, 1)" if _name == "addmm_" else "(1,)"
    _m.__doc__ += (f"\n\n    >>> import fnx\n    >>> x = fnx.ones{_shape_}; x.{_name}({_args}) "
                   f"is x\n    True\n")
    tensor_method(_name)(_m)

# PyTorch's second names of in-place methods
Tensor.divide_ = Tensor.true_divide_ = Tensor.div_
Tensor.multiply_, Tensor.subtract_ = Tensor.mul_, Tensor.sub_

# in-place forms that PyTorch offers only as functions (``torch.celu_``, ``F.selu_``)
_celu_ = _writing("celu_", _nn.celu)
_selu_ = _writing("selu_", _nn.selu)
_threshold_ = _writing("threshold_", _nn.threshold)
_dropout_ = _writing("dropout_", _nn.dropout)
_feature_dropout_ = _writing("feature_dropout_", _nn.feature_dropout)


def _function_form(name, fn=None, example="fnx.tensor([0.5])", args=""):
    """``fnx.<name>(input, ...)``: the in-place method ``Tensor.<name>`` (or ``fn``) called
    on ``input``, with the method's signature."""
    method = fn or getattr(Tensor, name)

    def form(input, *args, **kwargs):
        return method(input, *args, **kwargs)
    params = list(inspect.signature(method).parameters.values())
    form.__signature__ = inspect.Signature([params[0].replace(name="input")] + params[1:])
    form.__name__ = form.__qualname__ = name
    form.__doc__ = (f"``input.{name}(...)`` as a function, as ``torch.{name}``: writes into "
                    f"``input`` and returns it.\n\n    >>> import fnx\n    >>> x = {example}; "
                    f"fnx.{name}(x{', ' if args else ''}{args}) is x\n    True\n")
    return form


_I = "fnx.tensor([4, 6])"
(abs_, acos_, acosh_, arccos_, arccosh_, arcsin_, arcsinh_, arctan_, arctanh_, asin_, asinh_,
 atan_, atanh_, ceil_, cos_, cosh_, deg2rad_, detach_, erf_, erfc_, exp2_, exp_, expm1_, fix_,
 floor_, frac_, i0_, log10_, log1p_, log2_, log_, logit_, neg_, negative_, rad2deg_,
 reciprocal_, relu_, round_, rsqrt_, sigmoid_, sin_, sinc_, sinh_, sqrt_, square_, tan_,
 tanh_, trunc_, zero_, conj_physical_) = (_function_form(n) for n in (
    "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ "
    "atan_ atanh_ ceil_ cos_ cosh_ deg2rad_ detach_ erf_ erfc_ exp2_ exp_ expm1_ fix_ "
    "floor_ frac_ i0_ log10_ log1p_ log2_ log_ logit_ neg_ negative_ rad2deg_ reciprocal_ "
    "relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ zero_ "
    "conj_physical_").split())
clamp_ = _function_form("clamp_", args="0.0, 1.0")
clip_ = _function_form("clip_", args="0.0, 1.0")
clamp_min_ = _function_form("clamp_min_", args="0.0")
clamp_max_ = _function_form("clamp_max_", args="1.0")
fill_ = _function_form("fill_", args="2.0")
gcd_ = _function_form("gcd_", example=_I, args="fnx.tensor([4, 4])")
lcm_ = _function_form("lcm_", example=_I, args="fnx.tensor([4, 4])")
ldexp_ = _function_form("ldexp_", args="fnx.tensor([2])")
xlogy_ = _function_form("xlogy_", args="2.0")
index_put_ = _function_form("index_put_", args="(fnx.tensor([0]),), fnx.tensor(1.0)")
addmv_ = _function_form("addmv_", example="fnx.ones(1)", args="fnx.ones(1, 1), fnx.ones(1)")
celu_ = _function_form("celu_", _celu_)
selu_ = _function_form("selu_", _selu_)
threshold_ = _function_form("threshold_", _threshold_, args="0.1, 20.0")
dropout_ = _function_form("dropout_", _dropout_, args="0.0, True")
feature_dropout_ = _function_form("feature_dropout_", _feature_dropout_,
                                  example="fnx.ones(1, 2, 3)", args="0.0, True")


def fill(input, value):
    """A tensor like ``input`` filled with ``value`` (a number or a 0-dim tensor), as
    ``torch.fill``; ``input`` is not changed.

    >>> import fnx
    >>> fnx.fill(fnx.tensor([1, 2]), 7).tolist()
    [7, 7]
    """
    if isinstance(value, Tensor):
        return aten.fill.Tensor(input, value)
    return aten.fill.Scalar(input, value)
