"""``torch.special``'s orthogonal polynomials ``P_n(x)``: ``special_chebyshev_polynomial_t``
/``u``/``v``/``w`` (and ``special_shifted_chebyshev_polynomial_*``, on [0, 1]),
``special_hermite_polynomial_h``/``he``, ``special_laguerre_polynomial_l`` and
``special_legendre_polynomial_p``, each ``(Tensor x, Tensor n)`` with its ``out=`` form.

``x`` and ``n`` broadcast and promote as a binary op (integers to the default float);
complex is refused. Each decomposes to its prim (``fnx/ir/prims/polynomials.py``); like
PyTorch's, none has a derivative.
"""
from __future__ import annotations

from ..promotion import INT_TO_FLOAT
from ...ops import aten, prims
from .. import refs
from ..registry import decomposition, nondifferentiable
from ..prims.polynomials import POLYNOMIALS
from .special import FAMILIES, pointwise_family, real_meta

__all__ = ["POLYNOMIALS"]


def _decompose(op, prim):
    def polynomial(x, n):
        op.meta(x, n)
        return prim(x, n)
    decomposition(op)(refs.promote(INT_TO_FLOAT, ("x", "n"))(polynomial))


for _name in POLYNOMIALS:
    _op = pointwise_family(f"special_{_name}", "default", "Tensor x, Tensor n",
                           real_meta(_name, 2), False)
    nondifferentiable(*FAMILIES[_op].values())
    _decompose(getattr(aten, f"special_{_name}").default, getattr(prims, _name))
