"""The JAX rules of the orthogonal-polynomial prims (fnx/ir/prims/polynomials.py): the
functions of ``fnx/backends/cpu/polynomials.py`` (PyTorch's algorithms, which are also the
NumPy kernels) with ``jax.numpy`` and ``lax.while_loop``, so the recurrence runs on the
device for as many steps as the largest order in the array needs, and the program is plain
XLA (no host callback: it runs on a GPU without a round trip and exports).

The recurrences, the interval ends and the special orders give the NumPy kernels' values
bit for bit (each product is kept from fusing into a multiply-add, as NumPy rounds it). The
closed trigonometric forms inside (-1, 1) use XLA's ``acos``, ``cos`` and ``sin``, which
differ from NumPy's by an ulp here and there; ``cos(n * acos(x))`` multiplies such a
difference by about ``n``, so near the polynomial's zeros the relative difference grows
with the order.
"""
from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from ..backends.cpu.polynomials import POLYNOMIALS, ArrayOps
from ..ir import prims as P
from .jax import JAX_TARGET

__all__ = []


def _rounded(v):
    # a select XLA and LLVM keep: the product is an operand of it, not of the addition
    # after it, which therefore cannot become a fused multiply-add
    return jnp.where(jnp.isnan(v), jnp.nan, v)


def _divide(a, k):
    # by an opaque array equal to k: XLA divides as it is told. A quotient by a broadcast
    # scalar it turns into a product with 1 / k, one more rounding; newer XLA (jax 0.11)
    # also saw through the select that guarded this before.
    return a / lax.optimization_barrier(jnp.broadcast_to(k, a.shape).astype(a.dtype))


_JAX = ArrayOps(jnp, lax.while_loop, _rounded, _divide)


def _rule(fn):
    def rule(x, n):
        return fn(_JAX, x, n)
    return rule


for _name, _fn in POLYNOMIALS.items():
    JAX_TARGET.rule(getattr(P, _name))(_rule(_fn))
