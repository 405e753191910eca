"""The JAX rules of the Bessel prims (fnx/ir/prims/bessel.py).

XLA has none of these functions, so the program calls SciPy's (Cephes', PyTorch's values)
on the host through ``jax.pure_callback``, elementwise on the whole array: exact on every
backend, at the cost of a host round-trip on a GPU.  (``bessel_i0e``/``bessel_i1e``, which
``modified_bessel_i0``/``i1`` use, are ``jax.lax``'s own.)
"""
from __future__ import annotations

import jax
import numpy as np

from ..backends.cpu.bessel import PRIM_FNS
from .jax import JAX_TARGET

__all__ = ["host_rule"]


def host_rule(fn):
    """The JAX rule of a prim computed by the NumPy function ``fn`` on the host: its
    result has the first operand's shape and dtype."""
    def host(*arrays):
        with np.errstate(all="ignore"):
            return np.asarray(fn(*map(np.asarray, arrays))).astype(arrays[0].dtype)

    def rule(*xs):
        return jax.pure_callback(host, jax.ShapeDtypeStruct(xs[0].shape, xs[0].dtype), *xs,
                                 vmap_method="expand_dims")
    return rule


for _op, _fn in PRIM_FNS.items():
    JAX_TARGET.rule(_op)(host_rule(_fn))
