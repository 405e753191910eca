"""The JAX rules of the orthogonal-polynomial prims (fnx/ir/prims/polynomials.py): the
functions of ``fnx/backends/cpu/polynomials.py`` (PyTorch's algorithms, which are also the
NumPy kernels) with ``jax.numpy`` and ``lax.while_loop``, so the recurrence runs on the
device for as many steps as the largest order in the array needs, and the program is plain
XLA (no host callback: it runs on a GPU without a round trip and exports).

The recurrences, the interval ends and the special orders give the NumPy kernels' values
bit for bit (each product is kept from fusing into a multiply-add, and each quotient is
rounded once, as NumPy rounds them; checked with jax 0.10 on CPU and jax 0.11 on CPU and
an H200). The closed trigonometric forms inside (-1, 1) use XLA's ``acos``, ``cos`` and
``sin``, which differ from NumPy's by an ulp here and there; ``cos(n * acos(x))``
multiplies such a difference by about ``n``, so near the polynomial's zeros the relative
difference grows with the order.
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
    # a / k rounded once, as NumPy divides. XLA may make a quotient by a broadcast scalar
    # a product with 1 / k (so k arrives as an opaque array), and jax 0.11's XLA divides
    # float32 by a reciprocal on CPU and GPU alike (17 / 3 gave 5.666667, not 5.6666665),
    # while its float64 division is exact. So a float32 quotient is taken in float64 and
    # rounded to float32: that is the correctly rounded float32 quotient (53 >= 2 * 24 + 2
    # bits, so the double rounding cannot change it).
    wide = a.dtype == jnp.float32
    num = a.astype(jnp.float64) if wide else a
    q = num / lax.optimization_barrier(jnp.broadcast_to(k, a.shape).astype(num.dtype))
    return q.astype(a.dtype) if wide else q


_JAX = ArrayOps(jnp, lax.while_loop, _rounded, _divide)


def _rule(fn):
    def rule(x, n):
        return fn(_JAX, x, n)
    return rule


for _name, _fn in POLYNOMIALS.items():
    JAX_TARGET.rule(getattr(P, _name))(_rule(_fn))
