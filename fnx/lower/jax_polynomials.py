"""The JAX rules of the orthogonal-polynomial prims (fnx/ir/prims/polynomials.py).

XLA has none of these functions, and their recurrences run to a data-dependent order, so
the program calls the NumPy kernels (PyTorch's algorithms) on the host through
``jax.pure_callback``: exact on every backend, at the cost of a host round-trip on a GPU.
"""
from __future__ import annotations

import jax
import numpy as np

from ..backends.cpu.polynomials import POLYNOMIAL_FNS
from ..ir import prims as P
from .jax import JAX_TARGET

__all__ = []


def _host_rule(fn):
    def host(x, n):
        return np.asarray(fn(np.asarray(x), np.asarray(n))).astype(x.dtype)

    def rule(x, n):
        return jax.pure_callback(host, jax.ShapeDtypeStruct(x.shape, x.dtype), x, n,
                                 vmap_method="expand_dims")
    return rule


for _name, _fn in POLYNOMIAL_FNS.items():
    JAX_TARGET.rule(getattr(P, _name))(_host_rule(_fn))
