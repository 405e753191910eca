"""OpInfo entries of ``torch.special``'s Bessel and Airy functions (fnx/ir/aten/bessel.py)
and of the Bessel prims (fnx/ir/prims/bessel.py), against ``scipy.special`` in float64
rounded once to the result dtype.  Samples: the pointwise ones (0-dim, empty, strided,
transposed, and NaN, +-inf, +-0 for floats) plus each function's interesting range (the
oscillating tail, the poles at 0, negative arguments where Y and K are NaN)."""
from __future__ import annotations

import numpy as np
import scipy.special as sp

import fnx

from ...core import dtype as D
from ...ir import prims as P
from ...ops import aten
from ..database import INTS, ErrorInput, OpInfo, SampleInput, make_tensor, register
from ..reference_dtypes import INT_TO_FLOAT, pointwise
from .elementwise import _unary_samples

REAL = (D.float32, D.float64) + INTS + (D.bool,)
_TOLS = {D.float32: (1e-5, 1e-6), D.float64: (1e-10, 1e-12),
         **{d: (1e-5, 1e-6) for d in INTS + (D.bool,)}}
_NO_GRAD = {"grad": "no derivative (PyTorch defines none for these)"}


def _airy_ai(a):
    return sp.airy(a)[0]


REFS = {"bessel_j0": sp.j0, "bessel_j1": sp.j1, "bessel_y0": sp.y0, "bessel_y1": sp.y1,
        "modified_bessel_i0": sp.i0, "modified_bessel_i1": sp.i1,
        "modified_bessel_k0": sp.k0, "modified_bessel_k1": sp.k1,
        "scaled_modified_bessel_k0": sp.k0e, "scaled_modified_bessel_k1": sp.k1e,
        "spherical_bessel_j0": lambda a: sp.spherical_jn(0, a), "airy_ai": _airy_ai}
PRIM_REFS = {P.bessel_j0: sp.j0, P.bessel_j1: sp.j1, P.bessel_y0: sp.y0, P.bessel_y1: sp.y1,
             P.bessel_k0e: sp.k0e, P.bessel_k1e: sp.k1e, P.airy_ai: _airy_ai}

_RANGE = [-12.0, -3.3, -0.5, 1e-8, 0.2, 1.0, 2.4048, 5.0, 9.5, 25.0, 80.0, 200.0]


def _samples(info, device, dtype):
    yield from _unary_samples({})(info, device, dtype)
    if dtype.is_floating_point:
        yield SampleInput(fnx.tensor(np.array(_RANGE, dtype.numpy), device=device))


def _errors(name):
    def errors(info, device):
        for dt, word in ((D.complex64, "ComplexFloat"), (D.float16, "Half")):
            yield ErrorInput(SampleInput(make_tensor((3,), dt, device)), match=f'"{name}_cpu" '
                             f"not implemented for '{word}'")
    return errors


def _same(fn):
    def ref(a):
        with np.errstate(all="ignore"):
            return np.asarray(fn(a.astype(np.float64))).astype(a.dtype)
    return ref


register(
    *(OpInfo(getattr(aten, f"special_{n}").default, pointwise(fn, INT_TO_FLOAT, n=1), REAL,
             _samples, tols=_TOLS, error_inputs=_errors(n), skips=_NO_GRAD)
      for n, fn in REFS.items()),
    *(OpInfo(op, _same(fn), (D.float32, D.float64), _samples, tols=_TOLS, skips=_NO_GRAD)
      for op, fn in PRIM_REFS.items()),
)
