"""OpInfo entries of the prims (fnx/ir/prims/), one module per prim family.

The references follow the prims' lax-like semantics: no broadcasting, no promotion, the
operand dtype is the result dtype unless stated, integer division truncates, ``rem`` has
C's fmod sign rule, reductions over an empty extent give the identity.  They call NumPy,
SciPy and Python's ``math`` directly (never a kernel table or helper from
``fnx.backends``) and compute another way than the kernel where the kernel's way could
hide a bug: element by element in float64 ``math``/``cmath`` where the kernels call
NumPy ufuncs, index arithmetic where they call NumPy's view functions, explicit DFTs where
they call ``np.fft``.
"""
from __future__ import annotations

# in the order the families define their prims (the order the entries register in)
from . import (elementwise, layout, reduction, scan, creation, contraction, gather_scatter,
               sorting, data_dependent, fft, linalg, random, recurrence, special, assertions)
from . import ctc  # noqa: F401 - the CTC prims' entries

__all__ = ["elementwise", "layout", "reduction", "scan", "creation", "contraction",
           "gather_scatter", "sorting", "data_dependent", "fft", "linalg", "random",
           "recurrence", "special", "assertions"]
