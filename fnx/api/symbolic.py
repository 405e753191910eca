"""``torch.SymInt`` and the ``torch.sym_*`` helpers: size arithmetic that stays symbolic
on SymInts (``fnx.graph.symint``) and is plain Python arithmetic on ints and floats.

>>> import fnx
>>> fnx.sym_max(3, 5), fnx.sym_int(-2.5), fnx.sym_sum([1, 2, 3])
(5, -2, 6)
"""
from __future__ import annotations

from ..graph.symbolic import SymFloat
from ..graph.symint import (SymInt, sym_float, sym_int, sym_ite, sym_max, sym_min, sym_not,
                            sym_sqrt, sym_sum)

__all__ = ["SymInt", "SymFloat", "sym_int", "sym_float", "sym_max", "sym_min", "sym_not",
           "sym_ite", "sym_sqrt", "sym_sum", "sym_constrain_range",
           "sym_constrain_range_for_size", "sym_fresh_size"]

_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1


def _value(size):
    # a SymInt is checked at the value it was traced with: fnx's guards are on the program
    # inputs' sizes, and records no range for a symbol
    return size._value if isinstance(size, SymInt) else size


def sym_constrain_range(size, *, min=None, max=None):
    """Assert ``min <= size <= max`` (an unset bound is int64's), as
    ``torch.sym_constrain_range``; returns None.

    >>> import fnx
    >>> fnx.sym_constrain_range(5, min=0, max=10)
    >>> fnx.sym_constrain_range(5, min=6)
    Traceback (most recent call last):
        ...
    RuntimeError: Invalid value range for 5 between [6, 9223372036854775807].
    """
    lo = _INT64_MIN if min is None else min
    hi = _INT64_MAX if max is None else max
    v = _value(size)
    if not lo <= v <= hi:
        raise RuntimeError(f"Invalid value range for {v} between [{lo}, {hi}].")


def sym_constrain_range_for_size(size, *, min=None, max=None):
    """``sym_constrain_range`` for a value used as a size: ``min`` defaults to 0, as
    ``torch.sym_constrain_range_for_size``.

    >>> import fnx
    >>> fnx.sym_constrain_range_for_size(-1)
    Traceback (most recent call last):
        ...
    RuntimeError: Invalid value range for -1 between [0, 9223372036854775807].
    """
    sym_constrain_range(size, min=0 if min is None else min, max=max)


def sym_fresh_size(expr):
    """A fresh size equal to ``expr``, as ``torch.sym_fresh_size`` (an int for an int; a
    SymInt is read at its traced value).

    >>> import fnx
    >>> fnx.sym_fresh_size(7)
    7
    """
    return int(_value(expr))
