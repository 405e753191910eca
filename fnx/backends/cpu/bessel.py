"""SciPy kernels of the Bessel prims (``fnx/ir/prims/bessel.py``) and of ``torch.special``'s
Bessel ATen ops (``fnx/ir/aten/bessel.py``) with their ``out=`` forms; Cephes' values,
which are PyTorch's.  Also the functions the JAX rules call back on the host."""
from __future__ import annotations

import numpy as np
import scipy.special as sp

from ...ir import prims as P
from ...ir.aten.bessel import BESSEL
from ...ops import aten
from ._core import data, kernel, wrap
from .special import kernel_of, no_extra, register_family

__all__ = ["PRIM_FNS", "ATEN_FNS", "prim_kernel"]


def _airy_ai(a):
    return sp.airy(a)[0]


PRIM_FNS = {P.bessel_j0: sp.j0, P.bessel_j1: sp.j1, P.bessel_y0: sp.y0, P.bessel_y1: sp.y1,
            P.bessel_k0e: sp.k0e, P.bessel_k1e: sp.k1e, P.airy_ai: _airy_ai}
ATEN_FNS = {"bessel_j0": sp.j0, "bessel_j1": sp.j1, "bessel_y0": sp.y0, "bessel_y1": sp.y1,
            "modified_bessel_i0": sp.i0, "modified_bessel_i1": sp.i1,
            "modified_bessel_k0": sp.k0, "modified_bessel_k1": sp.k1,
            "scaled_modified_bessel_k0": sp.k0e, "scaled_modified_bessel_k1": sp.k1e,
            "spherical_bessel_j0": lambda a: sp.spherical_jn(0, a), "airy_ai": _airy_ai}
assert set(ATEN_FNS) == set(BESSEL)


def prim_kernel(op, fn):
    """The CPU kernel of the elementwise prim ``op`` computed by the NumPy function ``fn``
    on its operands' arrays (also fnx/backends/cpu/polynomials.py)."""
    def k(ks, *args):
        m = op.meta(*args)
        with np.errstate(all="ignore"):
            r = fn(*(data(a, f"prims.{op.name}") for a in args))
        return wrap(np.asarray(r).astype(m.dtype.numpy), m.dtype)
    return k


for _op, _fn in PRIM_FNS.items():
    kernel(_op)(prim_kernel(_op, _fn))
for _name, _fn in ATEN_FNS.items():
    _aop = getattr(aten, f"special_{_name}").default
    register_family(_aop, kernel_of(_aop, _fn, (0,), no_extra))
