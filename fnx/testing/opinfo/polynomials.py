"""OpInfo entries of ``torch.special``'s orthogonal polynomials (fnx/ir/aten/polynomials.py)
and their prims (fnx/ir/prims/polynomials.py), against ``scipy.special``'s ``eval_*``
functions in float64 (the third and fourth Chebyshev kinds through ``V_n = U_n - U_{n-1}``
and ``W_n = U_n + U_{n-1}``). Samples: x in the polynomials' interval and a little beyond,
integer orders 0..6 (SciPy continues non-integer orders analytically, PyTorch truncates
them), broadcast, 0-dim, empty and strided."""
from __future__ import annotations

import numpy as np
import scipy.special as sp

from ...core import dtype as D
from ...ir import prims as P
from ...ir.prims.polynomials import POLYNOMIALS
from ...ops import aten
from ..database import INTS, OpInfo, SampleInput, make_tensor, register
from ..reference_dtypes import INT_TO_FLOAT, pointwise

__all__ = ["SCIPY_REFS"]

_TOLS = {D.float32: (1e-4, 1e-4), D.float64: (1e-9, 1e-9),
         **{d: (1e-4, 1e-4) for d in INTS + (D.bool,)}}
_NO_GRAD = {"grad": "no derivative (PyTorch defines none for these)"}


def _u(n, x):
    return np.where(n >= 0, sp.eval_chebyu(np.maximum(n, 0), x), 0.0)


SCIPY_REFS = {
    "chebyshev_polynomial_t": sp.eval_chebyt,
    "chebyshev_polynomial_u": sp.eval_chebyu,
    "chebyshev_polynomial_v": lambda n, x: _u(n, x) - _u(n - 1, x),
    "chebyshev_polynomial_w": lambda n, x: _u(n, x) + _u(n - 1, x),
    "shifted_chebyshev_polynomial_t": sp.eval_sh_chebyt,
    "shifted_chebyshev_polynomial_u": sp.eval_sh_chebyu,
    "shifted_chebyshev_polynomial_v": lambda n, x: _u(n, 2 * x - 1) - _u(n - 1, 2 * x - 1),
    "shifted_chebyshev_polynomial_w": lambda n, x: _u(n, 2 * x - 1) + _u(n - 1, 2 * x - 1),
    "hermite_polynomial_h": sp.eval_hermite,
    "hermite_polynomial_he": sp.eval_hermitenorm,
    "laguerre_polynomial_l": sp.eval_laguerre,
    "legendre_polynomial_p": sp.eval_legendre,
}
assert set(SCIPY_REFS) == set(POLYNOMIALS)


def _ref(name):
    def ref(x, n):
        # (SciPy takes the order first; negative orders are 0 in PyTorch)
        n = np.trunc(n).astype(np.int64)
        return np.where(n < 0, 0.0, SCIPY_REFS[name](np.maximum(n, 0), x))
    ref.__name__ = name
    return ref


def _samples(name, prim):
    low, high = (-0.2, 1.2) if name.startswith("shifted") else (-1.2, 1.2)

    def samples(info, device, dtype):
        def x(shape, **kw):
            return make_tensor(shape, dtype, device, low=low, high=high, **kw)

        def n(shape):
            return make_tensor(shape, D.int64 if not prim else dtype, device, low=0, high=7)
        if dtype.is_floating_point:
            yield SampleInput(x((3, 4)), n((3, 4)))
            yield SampleInput(x((5,), noncontiguous=True), n((5,)))
            yield SampleInput(x(()), n(()))
            yield SampleInput(x((0, 3)), n((0, 3)))
            if not prim:
                yield SampleInput(x((2, 3)), n((3,)))          # broadcasting
        else:
            yield SampleInput(make_tensor((4,), dtype, device, low=-1, high=2), n((4,)))
    return samples


register(
    *(OpInfo(getattr(aten, f"special_{name}").default,
             pointwise(_ref(name), INT_TO_FLOAT, n=2), (D.float32, D.float64) + INTS,
             _samples(name, False), tols=_TOLS, skips=_NO_GRAD)
      for name in POLYNOMIALS),
    *(OpInfo(getattr(P, name), pointwise(_ref(name), INT_TO_FLOAT, n=2),
             (D.float32, D.float64), _samples(name, True), tols=_TOLS, skips=_NO_GRAD)
      for name in POLYNOMIALS),
)
