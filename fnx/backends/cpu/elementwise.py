"""NumPy kernels for the pointwise ops of ``fnx.ir.aten.elementwise``.

One generic kernel per arity, keyed by the op objects (``{aten.exp: np.exp}``). The
result dtype is the op's declaration: the kernel calls the op's meta function (its
promotion kind applied once, with PyTorch's operand checks), computes in that dtype (or,
where the result is not the operands' common type, as for comparisons, in their promoted
type: ``promotion.computation_dtype``), half types in float32 (PyTorch's "opmath"), and
casts to the result dtype.  The common case (two tensors of one dtype, or a float32/64
tensor and a Python number, of a DEFAULT or ALWAYS_BOOL op) skips all of that: there the
declared dtype is the operand's (or bool).  In-place and ``out=`` kernels run the
functional kernel first, so every check has passed before anything is written.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.special as sp

from ...core import dtype as D
from ...core.device import CPU
from ...core.tensor import Tensor
from ...ir.aten import elementwise as E
from ...ir.aten._common import not_implemented
from ...ir.promotion import ALWAYS_BOOL, DEFAULT, INT_TO_FLOAT, computation_dtype, opmath_dtype
from ...ir.dims import broadcast_shapes
from ...ir.variants import check_writable
from ...ops import aten
from ._core import data, register, same_device_error, wrap

_HALF = (D.float16, D.bfloat16)
_NO_KWARGS = {}


def _cast(x, np_dtype):
    """An operand in the compute dtype (Python scalars wrap around like PyTorch's casts)."""
    if x.__class__ is np.ndarray:
        return x if x.dtype == np_dtype else x.astype(np_dtype)
    return np.asarray(x).astype(np_dtype)


def _no_bool(a, kernel_name):
    """PyTorch's kernels for these ops are dispatched over numeric types only."""
    if a.dtype.kind == "b":
        raise not_implemented(kernel_name, D.bool)


def _int_div_check(name, b):
    if np.any(np.asarray(b) == 0):
        raise RuntimeError(f"ZeroDivisionError ({name} of integers by zero)")


def _div_mode(a, b, rounding_mode):
    _no_bool(a, f"div_{rounding_mode}_cpu")
    if rounding_mode == "floor":
        if a.dtype.kind in "iu":
            _int_div_check("div", b)
        return np.floor_divide(a, b)
    if a.dtype.kind in "iu":      # "trunc" (the meta refused any other mode)
        _int_div_check("div", b)
        q = np.floor_divide(a, b)
        return q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0)))
    return np.trunc(np.true_divide(a, b))


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
    """``int_tensor ** -1``: PyTorch refuses a negative integer *scalar* exponent (also
    one wrapped in a tensor, which the meta's check does not see)."""
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
        raise not_implemented("frac_cpu", D.from_numpy_dtype(a.dtype))
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
    _no_bool(a, "clamp_min_cpu")
    return np.maximum(a, a.dtype.type(0))


# The NumPy function of each op, for all its overloads (``aten.add``: add.Tensor and
# add.Scalar).
def _shift(name, kernel_name):
    """PyTorch's shifts: integers only; an amount < 0 or >= the bit width moves every bit
    out (0, or the sign bit everywhere for a signed right shift). NumPy's right_shift of
    an unsigned dtype brings in zeros, as PyTorch's."""
    def fn(a, b):
        if a.dtype.kind not in "iu":
            raise NotImplementedError(str(not_implemented(kernel_name,
                                                          D.from_numpy_dtype(a.dtype))))
        bad = (b < 0) | (b >= a.dtype.itemsize * 8)
        s = np.where(bad, 0, b).astype(a.dtype)
        if name == "left":
            return np.where(bad, a.dtype.type(0), np.left_shift(a, s))
        return np.where(bad, np.where(a < 0, a.dtype.type(-1) if a.dtype.kind == "i"
                                      else a.dtype.type(0), a.dtype.type(0)),
                        np.right_shift(a, s))
    return fn


UNARY_FNS = {
    aten.abs: _abs, aten.neg: np.negative, aten.sign: _sign, aten.acos: np.arccos,
    aten.acosh: np.arccosh, aten.asin: np.arcsin, aten.asinh: np.arcsinh,
    aten.atan: np.arctan, aten.atanh: np.arctanh, aten.cos: np.cos, aten.cosh: np.cosh,
    aten.sin: np.sin, aten.sinh: np.sinh, aten.tan: np.tan, aten.tanh: np.tanh,
    aten.erf: sp.erf, aten.exp: np.exp, aten.expm1: np.expm1, aten.log: np.log,
    aten.log10: np.log10, aten.log1p: np.log1p, aten.log2: np.log2,
    aten.reciprocal: np.reciprocal, aten.rsqrt: lambda a: np.reciprocal(np.sqrt(a)),
    aten.sqrt: np.sqrt, aten.sigmoid: sp.expit, aten.exp2: np.exp2, aten.erfinv: sp.erfinv,
    aten.ceil: _identity_for_int(np.ceil, "ceil"),
    aten.floor: _identity_for_int(np.floor, "floor"),
    aten.round: _identity_for_int(np.round, "round"),
    aten.trunc: _identity_for_int(np.trunc, "trunc"), aten.frac: _frac, aten.relu: _relu,
    aten.bitwise_not: np.invert, aten.isnan: np.isnan, aten.isinf: np.isinf,
    aten.isfinite: np.isfinite, aten.logical_not: np.logical_not, aten.signbit: _signbit,
    aten.square: np.square,
}

BINARY_FNS = {
    aten.add: np.add, aten.sub: np.subtract, aten.rsub: lambda a, b: np.subtract(b, a),
    aten.mul: np.multiply, aten.div: np.true_divide,
    aten.floor_divide: _int_checked(np.floor_divide, "floor_divide"),
    aten.remainder: _int_checked(np.remainder, "remainder"),
    aten.fmod: _int_checked(np.fmod, "fmod"), aten.pow: _pow, aten.atan2: np.arctan2,
    aten.maximum: np.maximum, aten.minimum: np.minimum, aten.bitwise_and: np.bitwise_and,
    aten.bitwise_or: np.bitwise_or, aten.bitwise_xor: np.bitwise_xor,
    aten.logical_and: np.logical_and, aten.logical_or: np.logical_or,
    aten.logical_xor: np.logical_xor, aten.eq: np.equal, aten.ne: np.not_equal,
    aten.lt: np.less, aten.le: np.less_equal, aten.gt: np.greater, aten.ge: np.greater_equal,
    aten.bitwise_left_shift: _shift("left", "lshift_cpu"),
    aten.bitwise_right_shift: _shift("right", "rshift_cpu"),
}


def _ops_of(*packets):
    """Every overload of ``packets`` (``aten.add``: add.Tensor, add.Scalar, add.out, ...)."""
    return frozenset(getattr(p, name) for p in packets for name in p.overloads())


# Ops whose NumPy call can warn (overflow, invalid values: sin/cos/tan/frac of inf): never
# the shortcut, which runs without np.errstate.
_WARNS = _ops_of(aten.div, aten.floor_divide, aten.remainder, aten.fmod, aten.pow, aten.log,
                 aten.log10, aten.log2, aten.log1p, aten.sqrt, aten.rsqrt, aten.reciprocal,
                 aten.acos, aten.asin, aten.acosh, aten.atanh, aten.erfinv, aten.exp,
                 aten.expm1, aten.exp2, aten.cosh, aten.sinh, aten.atan2, aten.sub, aten.add,
                 aten.mul, aten.square, aten.sin, aten.cos, aten.tan, aten.frac)
# PyTorch compiles these for integral types only: a float computation is an error.
_INTEGRAL_ONLY = _ops_of(aten.bitwise_not, aten.bitwise_and, aten.bitwise_or,
                         aten.bitwise_xor)
# Binary ops that need the slow path's checks even on one dtype (zero divisors, bool pow).
_CHECKED = _ops_of(aten.pow, aten.floor_divide, aten.remainder, aten.fmod,
                   aten.bitwise_left_shift, aten.bitwise_right_shift) | _INTEGRAL_ONLY
# sub of bools must raise, so bool never takes the shortcut for sub/rsub
_NO_BOOL_SHORTCUT = _ops_of(aten.sub, aten.rsub)
_RSUB = _ops_of(aten.rsub)


def _dtypes(op, operands, meta_kwargs):
    """(compute, result): the result dtype from the op's meta function (the promotion its
    declaration names, and PyTorch's operand checks), the computation dtype from it."""
    result = op.meta(*operands, **meta_kwargs).dtype
    return computation_dtype(op.promotion, result, *operands), result


def _run(op, fn, arrays, compute, result, extra=()):
    """Cast to the compute dtype (half types: float32), call NumPy, cast to the result."""
    if op in _INTEGRAL_ONLY and (compute.is_floating_point or compute.is_complex):
        raise not_implemented(f"{op.name}_cpu", compute)
    np_compute = opmath_dtype(compute).numpy
    try:
        with np.errstate(all="ignore"):
            r = fn(*[_cast(a, np_compute) for a in arrays], *extra)
    except TypeError:
        raise not_implemented(f"{op.name}_cpu", compute) from None
    if r.__class__ is not np.ndarray:
        r = np.asarray(r)
    if r.dtype != result.numpy:
        r = r.astype(result.numpy)
    return wrap(r, result)


def _apply(op, fn, operands, extra=(), meta_kwargs=_NO_KWARGS):
    """The slow path: the declared dtypes, casting, the NumPy call, PyTorch's errors."""
    arrays = [data(x, op.name) for x in operands]
    compute, result = _dtypes(op, operands, meta_kwargs)
    return _run(op, fn, arrays, compute, result, extra)


def _unary_kernel(op, fn):
    fast = op.promotion in (DEFAULT, INT_TO_FLOAT) and op not in _WARNS | _INTEGRAL_ONLY

    def kernel(ks, self):
        d = self._dtype
        if fast and self._device is CPU and (d is D.float32 or d is D.float64):
            return wrap(fn(self._data), d)
        return _apply(op, fn, (self,))
    return kernel


_ONE = 1     # the schema default of ``alpha`` is this cached int: ``is`` tests for "no alpha"


def _binary_kernel(op, fn):
    """The functional kernel of a binary op.  Two shortcuts skip the meta call, casting and
    the error checks where they cannot matter: two CPU tensors of one dtype, and a
    float32/float64 tensor with a Python int or float (NumPy 2's weak scalars then give
    exactly PyTorch's dtype).  Everything else takes ``_apply``."""
    bool_out = op.promotion == ALWAYS_BOOL
    fast = (op.promotion == DEFAULT or bool_out) and op not in _CHECKED
    slow_dtypes = _HALF + (D.bool,) if op in _NO_BOOL_SHORTCUT else _HALF

    def kernel(ks, self, other, alpha=_ONE):
        if alpha is not _ONE:
            return _apply_alpha(op, fn, self, other, alpha)
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
        return _apply(op, fn, (self, other))

    # what ``inplace_from`` needs for its own shortcut
    kernel._ufunc = fn if fast and not bool_out and isinstance(fn, np.ufunc) else None
    kernel._slow_dtypes = slow_dtypes
    return kernel


def _apply_alpha(op, fn, self, other, alpha):
    """add/sub: ``self + alpha * other``; rsub: ``other - alpha * self``, computed in the
    compute dtype (alpha is cast to it, like PyTorch), after PyTorch's checks on alpha."""
    if isinstance(alpha, Tensor):
        alpha = alpha.item()
    arrays = [data(self, op.name), data(other, op.name)]
    compute, result = _dtypes(op, (self, other), _NO_KWARGS)
    E.check_alpha(result, alpha)
    if op in _RSUB:
        def scaled(a, b):
            return fn(a * _cast(alpha, a.dtype), b)
    else:
        def scaled(a, b):
            return fn(a, b * _cast(alpha, b.dtype))
    return _run(op, scaled, arrays, compute, result)


def _div_mode_kernel(op):
    def kernel(ks, self, other, *, rounding_mode=None):
        # the meta refuses unknown modes; None is true division (its result a float)
        arrays = [data(self, "div"), data(other, "div")]
        compute, result = _dtypes(op, (self, other), {"rounding_mode": rounding_mode})
        if rounding_mode is None:
            return _run(op, np.true_divide, arrays, compute, result)
        return _run(op, _div_mode, arrays, compute, result, (rounding_mode,))
    return kernel


def _round_decimals(ks, self, *, decimals):
    if not self._dtype.is_floating_point:
        return _apply(E.round_decimals, np.round, (self,), meta_kwargs={"decimals": decimals})
    return _apply(E.round_decimals, lambda a: np.round(a, decimals), (self,),
                  meta_kwargs={"decimals": decimals})


def _clamp(ks, self, min=None, max=None):
    # the meta: the None/None error, the shape checks and the result dtype
    result = E.clamp.meta(self, min, max).dtype
    a = _cast(data(self, "clamp"), opmath_dtype(result).numpy)
    if min is not None:
        a = np.maximum(a, _cast(data(min, "clamp"), a.dtype))
    if max is not None:
        a = np.minimum(a, _cast(data(max, "clamp"), a.dtype))
    # where min > max PyTorch gives max; NaN bounds propagate NaN
    return wrap(np.asarray(a).astype(result.numpy, copy=False), result)


def _where(ks, condition, self, other):
    result = E.where_self.meta(condition, self, other).dtype
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
        check_writable(name, r, self, resize=False)
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
    check_writable(name, r, out, resize=True)
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
    for table, make in ((UNARY_FNS, _unary_kernel), (BINARY_FNS, _binary_kernel)):
        for packet, fn in table.items():
            for op in _ops_of(packet):
                if op in E.VARIANTS:        # the functional overloads (not out=)
                    functional[op] = make(op, fn)
    for op in (aten.pow.Tensor_Tensor, aten.pow.Tensor_Scalar):
        functional[op] = _pow_kernel(functional[op])
    for op in (aten.div.Tensor_mode, aten.div.Scalar_mode):
        functional[op] = _div_mode_kernel(op)
    for op, fk in functional.items():
        family = E.VARIANTS[op]
        register(op, fk)
        if "inplace" in family:
            register(family["inplace"], inplace_from(fk, family["inplace"].name))
        if "out" in family:
            register(family["out"], out_from(fk, op.name))
    register(E.round_decimals, _round_decimals)
    # (pow.Scalar: a Scalar base with a tensor exponent is PyTorch's Tensor_Tensor case)
    register(E.pow_Scalar, lambda ks, self, exponent: _apply(E.pow_Scalar, _pow,
                                                             (self, exponent)))
    register(E.clamp, _clamp)
    register(E.clamp_Tensor, _clamp)
    register(E.clamp_, inplace_from(_clamp, "clamp_"))
    register(E.where_self, _where)


_register_all()
