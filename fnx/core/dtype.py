"""dtypes and PyTorch's type-promotion rules.

A ``dtype`` is a small immutable object (``fnx.float32``) that knows its NumPy
counterpart.  ``promote_types`` is PyTorch's promotion lattice and
``result_type`` its three-tier rule (dimensioned tensors > zero-dim tensors >
Python scalars, and a lower tier only wins when it is of a higher category).
"""
from __future__ import annotations

import threading

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "bool", "uint8", "int8", "int16", "int32", "int64", "float16",
    "bfloat16", "float32", "float64", "complex64", "complex128",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type",
    "can_cast",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type, e.g. ``fnx.float32``.

    >>> import fnx
    >>> fnx.float32.is_floating_point, fnx.int64.itemsize
    (True, 8)
    """

    __slots__ = ("name", "itemsize", "is_floating_point", "is_complex", "is_signed",
                 "category", "numpy", "scalar_type", "c_type", "cpp_type", "_index")

    def __init__(self, name, np_dtype, category, signed, names, index):
        self.name = name
        # The names PyTorch's messages use: the ScalarType ("Float", "... not implemented
        # for 'Float'"), the C type of a checked conversion ("value cannot be converted to
        # type int64_t without overflow") and the demangled C++ type ("expected m1 and m2
        # to have the same dtype, but got: long int != float").
        self.scalar_type, self.c_type, self.cpp_type = names
        self.numpy = np.dtype(np_dtype)
        self.itemsize = self.numpy.itemsize
        self.category = category
        self.is_floating_point = category == _FLOAT
        self.is_complex = category == _COMPLEX
        self.is_signed = signed
        self._index = index

    def to_complex(self):
        return {float16: complex64, bfloat16: complex64, float32: complex64,
                float64: complex128}.get(self, self)

    def to_real(self):
        return {complex64: float32, complex128: float64}.get(self, self)

    def tensor_type(self, device_type: str = "cpu") -> str:
        """PyTorch's legacy tensor type name: ``fnx.FloatTensor``, ``fnx.cuda.LongTensor``.

        >>> import fnx
        >>> fnx.float32.tensor_type(), fnx.int64.tensor_type("cuda")
        ('fnx.FloatTensor', 'fnx.cuda.LongTensor')
        """
        dev = "" if device_type == "cpu" else f"{device_type}."
        return f"fnx.{dev}{self.scalar_type}Tensor"

    def __repr__(self):
        return f"fnx.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


def _by_name(name):
    return _NAMES[name]


_C10_HALF, _C10_BF16 = "c10::Half", "c10::BFloat16"
_C10_CF, _C10_CD = "c10::complex<float>", "c10::complex<double>"
_ORDER = [  # name, numpy dtype, category, signed, (ScalarType, C type, C++ type)
    ("bool", np.bool_, _BOOL, False, ("Bool", "bool", "bool")),
    ("uint8", np.uint8, _INT, False, ("Byte", "uint8_t", "unsigned char")),
    ("int8", np.int8, _INT, True, ("Char", "int8_t", "signed char")),
    ("int16", np.int16, _INT, True, ("Short", "int16_t", "short int")),
    ("int32", np.int32, _INT, True, ("Int", "int", "int")),
    ("int64", np.int64, _INT, True, ("Long", "int64_t", "long int")),
    ("float16", np.float16, _FLOAT, True, ("Half", _C10_HALF, _C10_HALF)),
    ("bfloat16", ml_dtypes.bfloat16, _FLOAT, True, ("BFloat16", _C10_BF16, _C10_BF16)),
    ("float32", np.float32, _FLOAT, True, ("Float", "float", "float")),
    ("float64", np.float64, _FLOAT, True, ("Double", "double", "double")),
    ("complex64", np.complex64, _COMPLEX, True, ("ComplexFloat", _C10_CF, _C10_CF)),
    ("complex128", np.complex128, _COMPLEX, True, ("ComplexDouble", _C10_CD, _C10_CD)),
]
_ALL = [dtype(n, d, c, s, names, i) for i, (n, d, c, s, names) in enumerate(_ORDER)]
(bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
 complex64, complex128) = _ALL
_NAMES = {d.name: d for d in _ALL}
_FROM_NUMPY = {d.numpy: d for d in _ALL}
# PyTorch's aliases.
ALIASES = {"half": float16, "float": float32, "double": float64, "short": int16,
           "int": int32, "long": int64, "cfloat": complex64, "cdouble": complex128}


_FROM_TENSOR_TYPE = {d.scalar_type + "Tensor": d for d in _ALL}


def from_tensor_type(name: str):
    """The (dtype, device type) a legacy tensor type name stands for, the inverse of
    ``dtype.tensor_type``; None when ``name`` names none.

    >>> from fnx.core.dtype import from_tensor_type
    >>> from_tensor_type("torch.cuda.LongTensor"), from_tensor_type("fnx.Float")
    ((fnx.int64, 'cuda'), None)
    """
    parts = name.split(".")
    if len(parts) not in (2, 3) or parts[0] not in ("fnx", "torch") or \
            len(parts) == 3 and parts[1] != "cuda":
        return None
    d = _FROM_TENSOR_TYPE.get(parts[-1])
    return None if d is None else (d, "cuda" if len(parts) == 3 else "cpu")


def all_dtypes() -> tuple:
    """Every dtype, bool first, in PyTorch's promotion order."""
    return tuple(_ALL)


def from_numpy_dtype(np_dtype) -> dtype:
    """The fnx dtype of a NumPy dtype; TypeError for ones fnx does not have."""
    try:
        return _FROM_NUMPY[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only "
                        "supported types are: " + ", ".join(d.name for d in _ALL)) from None


def _build_promotion_table():
    # Integers: the wider signed type wins; uint8 with a signed type needs int16 at least.
    def promote(a, b):
        if a is b:
            return a
        if a.category < b.category:
            a, b = b, a                       # a has the higher category
        if b is bool:
            return a
        if a.category == _INT:            # both integral
            if not a.is_signed or not b.is_signed:
                signed = a if a.is_signed else b
                return int16 if signed is int8 else signed
            return a if a.itemsize >= b.itemsize else b
        if a.category == _FLOAT and b.category == _INT:
            return a
        if a.category == _FLOAT:          # both floating
            if {a, b} == {float16, bfloat16}:
                return float32
            return a if a.itemsize >= b.itemsize else b
        # a is complex
        if b.category == _COMPLEX:
            return a if a.itemsize >= b.itemsize else b
        if b is float64:
            return complex128
        return a
    return [[promote(a, b) for b in _ALL] for a in _ALL]


_PROMOTE = _build_promotion_table()


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """PyTorch's ``promote_types``: the smallest dtype both can be cast to.

    >>> import fnx
    >>> fnx.promote_types(fnx.uint8, fnx.int8), fnx.promote_types(fnx.float16, fnx.bfloat16)
    (fnx.int16, fnx.float32)
    """
    return _PROMOTE[type1._index][type2._index]


class _DefaultDtype(threading.local):
    value = float32


_default = _DefaultDtype()


def get_default_dtype() -> dtype:
    """The dtype of floating factories and Python floats (float32 unless changed)."""
    return _default.value


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype; like PyTorch, only float32/float64 (and
    float16/bfloat16) are allowed.

    >>> import fnx
    >>> fnx.set_default_dtype(fnx.float64); fnx.tensor(1.5).dtype
    fnx.float64
    >>> fnx.set_default_dtype(fnx.float32)
    """
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default.value = d


def default_complex_dtype() -> dtype:
    return complex128 if _default.value is float64 else complex64


_pybool = type(True)


def scalar_dtype(x) -> dtype:
    """The dtype a Python scalar takes when it becomes a tensor (``fnx.tensor(x)``)."""
    t = type(x)
    if t is float:
        return _default.value
    if t is int:
        return int64
    if t is _pybool:
        return bool
    return _scalar_dtype_slow(x)


def _scalar_dtype_slow(x) -> dtype:
    if isinstance(x, _pybool):
        return bool
    if isinstance(x, int):
        return int64
    if isinstance(x, float):
        return _default.value
    if isinstance(x, complex):
        return default_complex_dtype()
    if isinstance(x, np.generic):
        return from_numpy_dtype(x.dtype)
    if getattr(type(x), "symbolic_size", False):    # a traced int (graph.symint.SymInt)
        return int64
    raise TypeError(f"expected a Tensor or a Python number, got {type(x).__name__}")


def _combine(higher, lower):
    """PyTorch's combine_categories: a lower tier only matters when its category is higher."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def result_type(*operands) -> dtype:
    """The dtype PyTorch's binary/n-ary ops compute in, from tensors and scalars.

    >>> import fnx
    >>> fnx.result_type(fnx.tensor([1, 2]), 1.5)          # int tensor + Python float
    fnx.float32
    >>> fnx.result_type(fnx.tensor([1], dtype=fnx.int8), fnx.tensor(1000))  # 0-dim
    fnx.int8
    """
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, "_dtype", None)
        if d is None or x._is_wrapped_number:
            if isinstance(x, dtype):
                dim = x if dim is None else promote_types(dim, x)
                continue
            # A wrapped number's dtype has its Python scalar's category; reading the dtype
            # rather than the value keeps this data-free (tracing, lazy arrays).
            sd = d if d is not None else _scalar_dtype_slow(x)
            if sd.is_complex:
                sd = default_complex_dtype()
            elif sd.is_floating_point:
                sd = _default.value
            wrapped = sd if wrapped is None else promote_types(wrapped, sd)
        elif x.ndim == 0:
            zero = d if zero is None else promote_types(zero, d)
        else:
            dim = d if dim is None else promote_types(dim, d)
    return _combine(dim, _combine(zero, wrapped))


def can_cast(from_: dtype, to: dtype) -> bool:
    """PyTorch's same-kind rule: no cast to a lower category (float -> int, complex -> float,
    non-bool -> bool).

    >>> import fnx
    >>> fnx.can_cast(fnx.float32, fnx.int32), fnx.can_cast(fnx.int64, fnx.float16)
    (False, True)
    """
    return from_.category <= to.category
