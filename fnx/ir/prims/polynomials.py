"""Orthogonal-polynomial prims with no ``jax.lax`` counterpart: ``P_n(x)`` of
``torch.special``'s Chebyshev (first to fourth kind, and shifted to [0, 1]), Hermite
(physicists' and probabilists'), Laguerre and Legendre families, for an order tensor ``n``
(floats truncated to integers, as PyTorch). Their values are PyTorch's recurrences and
special cases (``fnx/backends/cpu/polynomials.py``). No derivatives: PyTorch defines none.
The ATen ops of ``fnx/ir/aten/polynomials.py`` decompose to these.
"""
from __future__ import annotations

from ..registry import NONDIFFERENTIABLE
from .checks import FLOAT
from .elementwise import binary

POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]
__all__ = list(POLYNOMIALS)  # (each defined below)

chebyshev_polynomial_t = binary("chebyshev_polynomial_t", FLOAT, NONDIFFERENTIABLE)
chebyshev_polynomial_u = binary("chebyshev_polynomial_u", FLOAT, NONDIFFERENTIABLE)
chebyshev_polynomial_v = binary("chebyshev_polynomial_v", FLOAT, NONDIFFERENTIABLE)
chebyshev_polynomial_w = binary("chebyshev_polynomial_w", FLOAT, NONDIFFERENTIABLE)
shifted_chebyshev_polynomial_t = binary("shifted_chebyshev_polynomial_t", FLOAT,
                                        NONDIFFERENTIABLE)
shifted_chebyshev_polynomial_u = binary("shifted_chebyshev_polynomial_u", FLOAT,
                                        NONDIFFERENTIABLE)
shifted_chebyshev_polynomial_v = binary("shifted_chebyshev_polynomial_v", FLOAT,
                                        NONDIFFERENTIABLE)
shifted_chebyshev_polynomial_w = binary("shifted_chebyshev_polynomial_w", FLOAT,
                                        NONDIFFERENTIABLE)
hermite_polynomial_h = binary("hermite_polynomial_h", FLOAT, NONDIFFERENTIABLE)
hermite_polynomial_he = binary("hermite_polynomial_he", FLOAT, NONDIFFERENTIABLE)
laguerre_polynomial_l = binary("laguerre_polynomial_l", FLOAT, NONDIFFERENTIABLE)
legendre_polynomial_p = binary("legendre_polynomial_p", FLOAT, NONDIFFERENTIABLE)
