"""Bessel-function prims with no ``jax.lax`` counterpart: ``bessel_j0``/``bessel_j1``,
``bessel_y0``/``bessel_y1`` (first and second kind), ``bessel_k0e``/``bessel_k1e``
(exponentially scaled modified, second kind: ``e^x K(x)``) and ``airy_ai``.  Values are
Cephes' (SciPy's, PyTorch's): NaN outside the domain (negative x for Y and K), -inf / inf
at 0 for Y / K.  No derivatives: PyTorch defines none for ``torch.special``'s Bessel
functions.  The ATen ops of ``fnx/ir/aten/bessel.py`` decompose to these.
"""
from __future__ import annotations

from ..registry import NONDIFFERENTIABLE
from .checks import FLOAT
from .elementwise import unary

__all__ = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "bessel_k0e", "bessel_k1e",
           "airy_ai"]

bessel_j0 = unary("bessel_j0", FLOAT, NONDIFFERENTIABLE)
bessel_j1 = unary("bessel_j1", FLOAT, NONDIFFERENTIABLE)
bessel_y0 = unary("bessel_y0", FLOAT, NONDIFFERENTIABLE)
bessel_y1 = unary("bessel_y1", FLOAT, NONDIFFERENTIABLE)
bessel_k0e = unary("bessel_k0e", FLOAT, NONDIFFERENTIABLE)
bessel_k1e = unary("bessel_k1e", FLOAT, NONDIFFERENTIABLE)
airy_ai = unary("airy_ai", FLOAT, NONDIFFERENTIABLE)
