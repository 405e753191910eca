"""NumPy kernels for the pointwise ops of ``fnx.ir.aten.elementwise``.

One generic kernel per arity: it computes PyTorch's dtypes from the op's promotion
kind, casts the operands to the compute dtype (float16/bfloat16 compute in float32,
PyTorch's "opmath"), applies the NumPy function and casts to the result dtype.  The
common case (two tensors of one dtype, default promotion) skips all of that.
In-place and ``out=`` kernels run the functional kernel first, so every check has
passed before anything is written.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.special as sp

from ...core import dtype as D
from ...core.device import CPU
from ...core.tensor import Tensor
from ...ir.aten import elementwise as E
from ...ir.promotion import ALWAYS_BOOL, DEFAULT, INT_TO_FLOAT, elementwise_dtypes
from ...ir.shapes import broadcast_shapes
from ._core import data, register, same_device_error, wrap

_HALF = (D.float16, D.bfloat16)


def _np_dtype(d):
    return D.float32.numpy if d in _HALF else d.numpy


def _cast(x, np_dtype):
    """An operand in the compute dtype (Python scalars wrap around like PyTorch's casts)."""
    if x.__class__ is np.ndarray:
        return x if x.dtype == np_dtype else x.astype(np_dtype)
    return np.asarray(x).astype(np_dtype)


def _check_dtypes(name, compute, operands):
    if name.startswith("bitwise") and (compute.is_floating_point or compute.is_complex):
        raise RuntimeError(f"\"{name}_cpu\" not implemented for '{compute.scalar_type}'")
    if name in ("neg", "sub", "rsub"):
        E.check_operands(name, *operands)     # -bool and bool subtraction: PyTorch refuses


def _no_bool(a, kernel_name):
    """PyTorch's kernels for these ops are dispatched over numeric types only."""
    if a.dtype.kind == "b":
        raise RuntimeError(f"\"{kernel_name}\" not implemented for 'Bool'")


def _int_div_check(name, b):
    if np.any(np.asarray(b) == 0):
        raise RuntimeError(f"ZeroDivisionError ({name} of integers by zero)")


def _div_mode(a, b, rounding_mode):
    if rounding_mode is None:
        return np.true_divide(a, b)
    _no_bool(a, f"div_{rounding_mode}_cpu")
    if rounding_mode == "floor":
        if a.dtype.kind in "iu":
            _int_div_check("div", b)
        return np.floor_divide(a, b)
    if rounding_mode == "trunc":
        if a.dtype.kind in "iu":
            _int_div_check("div", b)
            q = np.floor_divide(a, b)
            return q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0)))
        return np.trunc(np.true_divide(a, b))
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                       f"but found '{rounding_mode}'")


def _int_checked(fn, name):
    def f(a, b):
        _no_bool(a, f"{name}_cpu")
        if a.dtype.kind in "iu":
            _int_div_check(name, b)
        return fn(a, b)
    return f


def _pow(a, b):
    _no_bool(a, "pow")
    if a.dtype.kind == "i" and np.any(b < 0):
        # PyTorch's integer pow with a negative tensor exponent: 1 ** n = 1,
        # (-1) ** n = +-1, anything else 0 (NumPy raises instead).
        neg = b < 0
        r = np.power(a, np.where(neg, 0, b))
        special = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 != 0, -1, 1), 0))
        return np.where(neg, special, r).astype(a.dtype)
    return np.power(a, b)


def _check_scalar_exponent(self, exponent):
    """``int_tensor ** -1``: PyTorch refuses a negative integer *scalar* exponent."""
    if isinstance(exponent, Tensor):
        if not exponent._is_wrapped_number:
            return
        exponent = exponent.item()
    if isinstance(exponent, (int, np.integer)) and exponent < 0 and \
            not (self._dtype.is_floating_point or self._dtype.is_complex):
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _pow_kernel(functional):
    def kernel(ks, self, exponent):
        _check_scalar_exponent(self, exponent)
        if self._dtype is D.bool and isinstance(exponent, (bool, np.bool_)):
            # PyTorch: x ** False fills ones, x ** True copies (no bool pow kernel needed)
            data(self, "pow")
            return wrap(self._data.copy() if exponent else np.ones(self._data.shape, np.bool_),
                        D.bool)
        return functional(ks, self, exponent)
    return kernel


def _identity_for_int(fn, name):
    """ceil/floor/round/trunc: integers are returned unchanged; bool is not supported."""
    def f(a):
        _no_bool(a, f"{name}_cpu")
        return a.copy() if a.dtype.kind in "iu" else fn(a)
    return f


def _abs(a):
    _no_bool(a, "abs_cpu")
    return np.abs(a)


def _frac(a):
    if a.dtype.kind in "iub":
        raise RuntimeError(f"\"frac_cpu\" not implemented for "
                           f"'{D.from_numpy_dtype(a.dtype).scalar_type}'")
    return a - np.trunc(a)


def _signbit(a):
    return np.zeros(a.shape, np.bool_) if a.dtype.kind == "b" else np.signbit(a)


def _sign(a):
    if a.dtype.kind == "b":
        return a.copy()
    if a.dtype.kind == "f" or a.dtype == D.bfloat16.numpy:
        # PyTorch's sign is (0 < a) - (a < 0): nan gives 0 (np.sign gives nan)
        return np.sign(np.where(np.isnan(a), 0, a)).astype(a.dtype)
    return np.sign(a)


def _relu(a):
    if a.dtype.kind == "b":
        raise RuntimeError("\"clamp_min_cpu\" not implemented for 'Bool'")
    return np.maximum(a, a.dtype.type(0))


UNARY_FNS = {
    "abs": _abs, "neg": np.negative, "sign": _sign, "acos": np.arccos, "acosh": np.arccosh,
    "asin": np.arcsin, "asinh": np.arcsinh, "atan": np.arctan, "atanh": np.arctanh,
    "cos": np.cos, "cosh": np.cosh, "sin": np.sin, "sinh": np.sinh, "tan": np.tan,
    "tanh": np.tanh, "erf": sp.erf, "exp": np.exp, "expm1": np.expm1, "log": np.log,
    "log10": np.log10, "log1p": np.log1p, "log2": np.log2, "reciprocal": np.reciprocal,
    "rsqrt": lambda a: np.reciprocal(np.sqrt(a)), "sqrt": np.sqrt, "sigmoid": sp.expit,
    "exp2": np.exp2, "erfinv": sp.erfinv, "ceil": _identity_for_int(np.ceil, "ceil"),
    "floor": _identity_for_int(np.floor, "floor"),
    "round": _identity_for_int(np.round, "round"),
    "trunc": _identity_for_int(np.trunc, "trunc"), "frac": _frac, "relu": _relu,
    "bitwise_not": np.invert, "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "logical_not": np.logical_not, "signbit": _signbit, "square": np.square,
}

BINARY_FNS = {
    "add": np.add, "sub": np.subtract, "rsub": lambda a, b: np.subtract(b, a),
    "mul": np.multiply, "div": np.true_divide,
    "floor_divide": _int_checked(np.floor_divide, "floor_divide"),
    "remainder": _int_checked(np.remainder, "remainder"), "fmod": _int_checked(np.fmod, "fmod"),
    "pow": _pow, "atan2": np.arctan2, "maximum": np.maximum, "minimum": np.minimum,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "logical_and": np.logical_and,
    "logical_or": np.logical_or, "logical_xor": np.logical_xor, "eq": np.equal,
    "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal,
}
_WARNS = {"div", "floor_divide", "remainder", "fmod", "pow", "log", "log10", "log2", "log1p",
          "sqrt", "rsqrt", "reciprocal", "acos", "asin", "acosh", "atanh", "erfinv", "exp",
          "expm1", "exp2", "cosh", "sinh", "atan2", "sub", "add", "mul", "square",
          "sin", "cos", "tan", "frac"}   # (sin/cos/tan/frac of inf warn "invalid value")
# Ops whose float inputs need the slow path's dtype checks (bitwise_not of a float raises).
_CHECKED = {"bitwise_not"}


def _apply(name, fn, kind, operands, extra=()):
    """The slow path: promotion, casting, the NumPy call, and errors PyTorch would raise."""
    arrays = [data(x, name) for x in operands]
    compute, result = elementwise_dtypes(kind, *operands)
    _check_dtypes(name, compute, operands)
    np_compute = _np_dtype(compute)
    cast = [_cast(a, np_compute) for a in arrays]
    try:
        with np.errstate(all="ignore"):
            r = fn(*cast, *extra)
    except ValueError:
        broadcast_shapes(*(np.shape(a) for a in arrays))  # raises PyTorch's message
        raise
    except TypeError:
        raise RuntimeError(f"\"{name}_cpu\" not implemented for '{compute.scalar_type}'") \
            from None
    r = np.asarray(r)
    if r.dtype != result.numpy:
        r = r.astype(result.numpy)
    return wrap(r, result)


def _unary_kernel(name, kind):
    fn = UNARY_FNS[name]
    fast = kind in (DEFAULT, INT_TO_FLOAT) and name not in _WARNS and name not in _CHECKED

    def kernel(ks, self):
        d = self._dtype
        if fast and self._device is CPU and (d is D.float32 or d is D.float64):
            return wrap(fn(self._data), d)
        return _apply(name, fn, kind, (self,))
    return kernel


_ONE = 1     # the schema default of ``alpha`` is this cached int: ``is`` tests for "no alpha"


# Comparisons and logical ops return bool for any input dtype: they take the shortcuts too.
_BOOL_FAST = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"}


def _binary_kernel(name, kind, has_alpha):
    """The functional kernel of a binary row.  Two shortcuts skip promotion, casting and
    the error checks where they cannot matter: two CPU tensors of one dtype, and a
    float32/float64 tensor with a Python int or float (NumPy 2's weak scalars then give
    exactly PyTorch's dtype).  Everything else takes ``_apply``."""
    fn = BINARY_FNS[name]
    fast = (kind == DEFAULT or name in _BOOL_FAST) and name not in (
        "pow", "floor_divide", "remainder", "fmod") and not name.startswith("bitwise")
    bool_out = kind == ALWAYS_BOOL
    # sub of bools must raise, so bool never takes the shortcut for sub/rsub
    slow_dtypes = _HALF + (D.bool,) if name in ("sub", "rsub") else _HALF

    def kernel(ks, self, other, alpha=_ONE):
        if alpha is not _ONE:
            return _apply_alpha(name, fn, kind, self, other, alpha)
        if fast and self._device is CPU:
            d = self._dtype
            c = other.__class__
            if c is Tensor:
                if other._dtype is d and other._device is CPU and d not in slow_dtypes:
                    try:
                        return wrap(fn(self._data, other._data), D.bool if bool_out else d)
                    except ValueError:
                        broadcast_shapes(self._data.shape, other._data.shape)
                        raise
            elif (c is float or c is int) and (d is D.float32 or d is D.float64):
                return wrap(fn(self._data, other), D.bool if bool_out else d)
        return _apply(name, fn, kind, (self, other))

    # what ``inplace_from`` needs for its own shortcut
    kernel._ufunc = fn if fast and not bool_out and isinstance(fn, np.ufunc) else None
    kernel._slow_dtypes = slow_dtypes
    return kernel


def _apply_alpha(name, fn, kind, self, other, alpha):
    """add/sub: ``self + alpha * other``; rsub: ``other - alpha * self``, computed in the
    compute dtype (alpha is cast to it, like PyTorch), after PyTorch's checks on alpha."""
    if isinstance(alpha, Tensor):
        alpha = alpha.item()
    E.check_alpha(D.result_type(self, other), alpha)
    if name == "rsub":
        def scaled(a, b):
            return fn(a * _cast(alpha, a.dtype), b)
    else:
        def scaled(a, b):
            return fn(a, b * _cast(alpha, b.dtype))
    return _apply(name, scaled, kind, (self, other))


def _div_mode_kernel(ks, self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _apply("div", np.true_divide, INT_TO_FLOAT, (self, other))
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                           f"'floor' but found '{rounding_mode}'")
    return _apply("div", _div_mode, DEFAULT, (self, other), (rounding_mode,))


def _round_decimals(ks, self, *, decimals):
    if not self._dtype.is_floating_point:
        return _apply("round", np.round, DEFAULT, (self,))
    return _apply("round", lambda a: np.round(a, decimals), DEFAULT, (self,))


def _clamp(ks, self, min=None, max=None):
    E.clamp_Tensor.meta(self, min, max)   # the None/None error and the shape checks
    operands = [x for x in (self, min, max) if x is not None]
    compute, result = elementwise_dtypes(DEFAULT, *operands)
    a = _cast(data(self, "clamp"), _np_dtype(compute))
    if min is not None:
        a = np.maximum(a, _cast(data(min, "clamp"), a.dtype))
    if max is not None:
        a = np.minimum(a, _cast(data(max, "clamp"), a.dtype))
    # where min > max PyTorch gives max; NaN bounds propagate NaN
    return wrap(np.asarray(a).astype(result.numpy, copy=False), result)


def _where(ks, condition, self, other):
    E.where_self.meta(condition, self, other)
    compute, result = elementwise_dtypes(DEFAULT, self, other)
    c = data(condition, "where")
    r = np.where(c, _cast(data(self, "where"), result.numpy), _cast(data(other, "where"),
                                                                     result.numpy))
    return wrap(np.asarray(r), result)


def inplace_from(functional_kernel, name):
    """``op_``: compute out of place, check shape and dtype, then write into ``self``.

    Binary ops with a shortcut (see ``_binary_kernel``) write straight into ``self`` with
    the ufunc's ``out=`` when the dtypes match; NumPy checks broadcasting before writing
    anything, and a failure falls back to the checked path for PyTorch's message."""
    def checked(ks, self, *args, **kwargs):
        r = functional_kernel(ks, self, *args, **kwargs)
        if r._data.shape != self._data.shape:
            raise RuntimeError(f"{name}: output with shape {list(self._data.shape)} doesn't "
                               f"match the broadcast shape {list(r._data.shape)}")
        if not D.can_cast(r._dtype, self._dtype):
            raise RuntimeError(f"{name}: result type {r._dtype.scalar_type} can't be cast to "
                               f"the desired output type {self._dtype.scalar_type}")
        np.copyto(self._data, r._data, casting="unsafe")
        return self

    uf = getattr(functional_kernel, "_ufunc", None)
    if uf is None:
        return checked
    slow_dtypes = functional_kernel._slow_dtypes

    def kernel(ks, self, other, alpha=_ONE):
        if alpha is _ONE and self._device is CPU:
            d = self._dtype
            c = other.__class__
            try:
                if c is Tensor:
                    if other._dtype is d and other._device is CPU and d not in slow_dtypes:
                        uf(self._data, other._data, out=self._data)
                        return self
                elif (c is float or c is int) and (d is D.float32 or d is D.float64):
                    uf(self._data, other, out=self._data)
                    return self
            except ValueError:      # not broadcastable to self, read-only data: checked path
                pass
            return checked(ks, self, other)
        return checked(ks, self, other, alpha=alpha)
    return kernel


def out_from(functional_kernel, name):
    """``op.out``: compute, check the cast, resize ``out`` if needed, write into it."""
    def kernel(ks, *args, out, **kwargs):
        r = functional_kernel(ks, *args, **kwargs)
        write_out(name, out, r)
        return out
    return kernel


def write_out(name, out, r):
    if out._device is not CPU:
        raise same_device_error(name, out._device, "cpu")
    if not D.can_cast(r._dtype, out._dtype):
        raise RuntimeError(f"{name}: result type {r._dtype.scalar_type} can't be cast to "
                           f"the desired output type {out._dtype.scalar_type}")
    if r._data.shape != out._data.shape:
        if out._base is not None:
            raise RuntimeError(f"{name}: cannot resize the out= view of shape "
                               f"{list(out._data.shape)} to {list(r._data.shape)}")
        if out._data.size:
            warnings.warn(f"An output with one or more elements was resized since it had "
                          f"shape {list(out._data.shape)}, which does not match the required "
                          f"output shape {list(r._data.shape)}.", UserWarning, stacklevel=4)
        out._data = np.empty(r._data.shape, out._dtype.numpy)
    np.copyto(out._data, r._data, casting="unsafe")


def _register_all():
    functional = {}
    for name, kind, _ in E.UNARY:
        functional[name, "default"] = _unary_kernel(name, kind)
    # PyTorch's square is pow(x, 2): a bool tensor squares to int64.
    functional["square", "default"] = lambda ks, self: _apply("pow", _pow, DEFAULT, (self, 2))
    for name, ov, args, kind, _ in E.BINARY:
        functional[name, ov] = _binary_kernel(name, kind, "alpha" in args)
    for ov in ("Tensor_Tensor", "Tensor_Scalar"):
        functional["pow", ov] = _pow_kernel(functional["pow", ov])
    functional["div", "Tensor_mode"] = functional["div", "Scalar_mode"] = _div_mode_kernel
    for op, family in E.VARIANTS.items():
        fk = functional.get((op.name, op.overload_name))
        if fk is None:
            continue
        register(op, fk)
        if "inplace" in family:
            register(family["inplace"], inplace_from(fk, family["inplace"].name))
        if "out" in family:
            register(family["out"], out_from(fk, op.name))
    register(E.round_decimals, _round_decimals)
    register(E.pow_Scalar, lambda ks, self, exponent: _apply("pow", _pow, DEFAULT,
                                                             (self, exponent)))
    # (pow.Scalar: a Scalar base with a tensor exponent is PyTorch's Tensor_Tensor case)
    register(E.clamp, _clamp)
    register(E.clamp_Tensor, _clamp)
    register(E.clamp_, inplace_from(_clamp, "clamp_"))
    register(E.where_self, _where)


_register_all()
