"""Type promotion by declaration: each pointwise op names its PyTorch promotion kind.

``elementwise_dtypes(kind, *operands)`` returns ``(compute dtype, result dtype)``
for the kinds of ``torch._prims_common.ELEMENTWISE_TYPE_PROMOTION_KIND``.
"""
from __future__ import annotations

from ..core import dtype as D

__all__ = ["DEFAULT", "INT_TO_FLOAT", "ALWAYS_BOOL", "COMPLEX_TO_FLOAT", "BOOL_TO_LONG",
           "NO_OPMATH", "elementwise_dtypes"]

DEFAULT = "default"                   # add, mul, where: the promoted type
INT_TO_FLOAT = "int_to_float"         # div, exp, sin: integers and bool compute in float
ALWAYS_BOOL = "always_bool"           # eq, lt, logical_and: result is bool
COMPLEX_TO_FLOAT = "complex_to_float" # abs: complex inputs give their real type
BOOL_TO_LONG = "bool_to_long"         # sum-like: bool becomes int64
NO_OPMATH = "no_opmath"               # like DEFAULT, no upcast of half types


def elementwise_dtypes(kind: str, *operands):
    """(compute dtype, result dtype) of a pointwise op over ``operands``.

    >>> import fnx
    >>> elementwise_dtypes(INT_TO_FLOAT, fnx.tensor([1, 2]))
    (fnx.float32, fnx.float32)
    >>> elementwise_dtypes(ALWAYS_BOOL, fnx.tensor([1.0]), 2)
    (fnx.float32, fnx.bool)
    """
    t = D.result_type(*operands)
    if kind == DEFAULT or kind == NO_OPMATH:
        return t, t
    if kind == INT_TO_FLOAT:
        if not (t.is_floating_point or t.is_complex):
            t = D.get_default_dtype()
        return t, t
    if kind == ALWAYS_BOOL:
        return t, D.bool
    if kind == COMPLEX_TO_FLOAT:
        return t, t.to_real()
    if kind == BOOL_TO_LONG:
        return (D.int64, D.int64) if t is D.bool else (t, t)
    raise ValueError(f"unknown promotion kind {kind}")
