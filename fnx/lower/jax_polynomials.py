"""The JAX rules of the orthogonal-polynomial prims (fnx/ir/prims/polynomials.py).

XLA has none of these functions, and their recurrences run to a data-dependent order, so
the program calls the NumPy kernels (PyTorch's algorithms) on the host through
``jax.pure_callback``: exact on every backend, at the cost of a host round-trip on a GPU.
"""
from __future__ import annotations

from ..backends.cpu.polynomials import POLYNOMIAL_FNS
from ..ir import prims as P
from .jax import JAX_TARGET
from .jax_bessel import host_rule

__all__ = []


for _name, _fn in POLYNOMIAL_FNS.items():
    JAX_TARGET.rule(getattr(P, _name))(host_rule(_fn))
