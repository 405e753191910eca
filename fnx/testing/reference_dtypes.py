"""Helpers for writing NumPy references: PyTorch's result dtype, independently of fnx.

A reference must give PyTorch's result *dtype*, and NumPy's promotion differs from
PyTorch's (``int64 + float32`` is float64 in NumPy, float32 in PyTorch; a Python float
with an int array is float64 in NumPy, the default float dtype in PyTorch).  This module
restates PyTorch's documented rules on NumPy dtypes, without reading fnx's promotion
code, so a reference checks fnx's promotion instead of repeating it:

- categories bool < integer < floating < complex; within one category the wider type
  wins, ``uint8`` with a signed type gives at least ``int16``, ``float16`` with
  ``bfloat16`` gives ``float32``, and a higher category wins outright (int64 + float16
  is float16);
- operands form three tiers: tensors with dimensions, zero-dim tensors, Python numbers;
  a lower tier changes the result only when it is of a higher category, and a Python
  float (complex) then gives the default float (complex) dtype.

In a reference's arguments, tensors arrive as NumPy arrays (0-dim tensors as 0-dim
arrays) and Python numbers stay Python numbers, so the tiers can be told apart.

>>> import numpy as np
>>> result_dtype(np.arange(3), 1.5)                    # int tensor + Python float
dtype('float32')
>>> result_dtype(np.ones(2, np.int8), np.asarray(1000))  # 0-dim of the same category
dtype('int8')
>>> pointwise(np.add)(np.ones(2, np.uint8), np.ones(2, np.int8)).dtype
dtype('int16')
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

import fnx

__all__ = ["result_dtype", "promote", "category", "is_float", "pointwise", "np_dtype",
           "DEFAULT", "INT_TO_FLOAT", "ALWAYS_BOOL", "COMPLEX_TO_FLOAT", "BOOL_TO_LONG"]

DEFAULT, INT_TO_FLOAT, ALWAYS_BOOL = "default", "int_to_float", "always_bool"
COMPLEX_TO_FLOAT, BOOL_TO_LONG = "complex_to_float", "bool_to_long"

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
INT64, BOOL = np.dtype(np.int64), np.dtype(np.bool_)


def np_dtype(d) -> np.dtype:
    """A NumPy dtype from an fnx dtype, a NumPy dtype or a type."""
    return d.numpy if hasattr(d, "numpy") and hasattr(d, "is_floating_point") else np.dtype(d)


def category(d) -> int:
    """0 bool, 1 integer, 2 floating, 3 complex."""
    d = np.dtype(d)
    if d == BF16:
        return 2
    return {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}[d.kind]


def is_float(d) -> bool:
    return category(d) == 2


def promote(a, b) -> np.dtype:
    """``torch.promote_types`` on NumPy dtypes."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    ca, cb = category(a), category(b)
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        if category(hi) == 3 and lo == F64:
            return C128
        return hi
    if ca == 1:
        return np.promote_types(a, b)          # NumPy's integer lattice is PyTorch's
    if ca == 2:
        if {a, b} == {F16, BF16}:
            return F32
        return a if a.itemsize >= b.itemsize else b
    return a if a.itemsize >= b.itemsize else b


def _default_float():
    return fnx.get_default_dtype().numpy


def _scalar_dtype(x) -> np.dtype:
    if isinstance(x, (bool, np.bool_)):
        return BOOL
    if isinstance(x, (int, np.integer)):
        return INT64
    if isinstance(x, (float, np.floating)):
        return _default_float()
    if isinstance(x, (complex, np.complexfloating)):
        return C128 if _default_float() == F64 else C64
    raise TypeError(f"not a number: {x!r}")


def _combine(higher, lower):
    if higher is None:
        return lower
    if lower is None or category(lower) <= category(higher):
        return higher
    if category(lower) == 3 and category(higher) == 2:
        return C128 if higher == F64 else C64
    return lower


def result_dtype(*operands) -> np.dtype:
    """PyTorch's result dtype of arrays (tensors) and Python numbers; ``None``s are skipped."""
    tiers = [None, None, None]          # dimensioned, zero-dim, Python numbers
    for x in operands:
        if x is None:
            continue
        if isinstance(x, np.ndarray):
            t, d = (0 if x.ndim else 1), x.dtype
        else:
            t, d = 2, _scalar_dtype(x)
        tiers[t] = d if tiers[t] is None else promote(tiers[t], d)
    return _combine(tiers[0], _combine(tiers[1], tiers[2]))


def _apply_kind(kind, d):
    if kind == INT_TO_FLOAT and category(d) < 2:
        return _default_float()
    if kind == ALWAYS_BOOL:
        return BOOL
    if kind == COMPLEX_TO_FLOAT and category(d) == 3:
        return F32 if d == C64 else F64
    if kind == BOOL_TO_LONG and d == BOOL:
        return INT64
    return d


def _wide(d):
    """Where a reference computes: floats in float64, complex in complex128, else exact."""
    c = category(d)
    return F64 if c == 2 else C128 if c == 3 else d


def pointwise(fn, kind=DEFAULT, n=2, wide=True):
    """A reference for a pointwise op from a NumPy function.

    The first ``n`` positional arguments are the operands: they are cast to PyTorch's
    compute dtype (which rounds Python numbers like PyTorch does), floats are widened to
    float64 (``wide=False`` keeps the compute dtype), ``fn`` runs with the remaining
    arguments, and the result is cast to PyTorch's result dtype for ``kind``.
    """
    def ref(*args, **kwargs):
        operands, rest = args[:n], args[n:]
        common = result_dtype(*operands)
        out = _apply_kind(kind, common)
        compute = common if kind == ALWAYS_BOOL else _apply_kind(kind, common)
        work = _wide(compute) if wide else (F32 if compute in (F16, BF16) else compute)
        cast = [np.asarray(x).astype(compute).astype(work) for x in operands]
        with np.errstate(all="ignore"):
            r = fn(*cast, *rest, **kwargs)
        return np.asarray(r).astype(out)
    ref.__name__ = getattr(fn, "__name__", "ref")
    return ref
