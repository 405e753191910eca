"""Type promotion by declaration: each pointwise op names its PyTorch promotion kind.

``elementwise_dtypes(kind, *operands)`` returns ``(compute dtype, result dtype)``
for the kinds of ``torch._prims_common.ELEMENTWISE_TYPE_PROMOTION_KIND``; the op's meta
function applies it, and a kernel takes the result dtype from there
(``computation_dtype``, ``opmath_dtype``: the dtypes its math runs in).
"""
from __future__ import annotations

from ..core import dtype as D

__all__ = ["DEFAULT", "INT_TO_FLOAT", "ALWAYS_BOOL", "COMPLEX_TO_FLOAT", "BOOL_TO_LONG",
           "NO_OPMATH", "elementwise_dtypes", "computation_dtype", "opmath_dtype"]

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


def computation_dtype(kind: str, result, *operands):
    """The dtype a pointwise kernel computes in, from the ``result`` dtype the op's meta
    declared: the result's own, but for the kinds whose result is not the operands' common
    type (a comparison's bool, abs's real type of a complex), where it is their promoted
    type.

    >>> import fnx
    >>> computation_dtype(ALWAYS_BOOL, fnx.bool, fnx.tensor([1, 2]), 2.5)
    fnx.float32
    >>> computation_dtype(INT_TO_FLOAT, fnx.float32, fnx.tensor([1, 2]))
    fnx.float32
    """
    if kind == ALWAYS_BOOL or kind == COMPLEX_TO_FLOAT:
        return D.result_type(*operands)
    return result


def opmath_dtype(dtype):
    """The dtype pointwise math runs in: half types compute in float32, as PyTorch's CPU
    kernels do (``at::opmath_type``)."""
    return D.float32 if dtype is D.float16 or dtype is D.bfloat16 else dtype
