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
           "sym_ite", "sym_sqrt", "sym_sum"]
