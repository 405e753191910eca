"""The JAX rules of the Hurwitz zeta and polygamma prims, right for negative arguments.

``lax.zeta(s, q)`` sums a few terms and then an asymptotic tail that assumes q is not far
below 0: from about q < -8 its values are wrong (``lax.polygamma(1, -8.8)`` is -1347, not
35.8), and so was a compiled digamma's gradient there. As Cephes (SciPy, PyTorch) does, a
negative q is first shifted up by the recurrence zeta(s, q) = q^-s + zeta(s, q + 1); a
non-integer s with q < 0 gives NaN and a non-positive integer q a pole, as there (the
poles and infinities of polygamma are SciPy's, the eager kernel's).
Trigamma (polygamma of order 1, every digamma gradient) takes the reflection formula
instead, in O(1) for any x. The shift runs as many steps as the most negative q needs (none
when no q is negative); past ``MAX_SHIFT`` steps (|q| > 2^23, where float32 holds only
integers) the value is NaN rather than a wrong number.
"""
from __future__ import annotations

import math

import jax.numpy as jnp
from jax import lax

from ..ir import prims as P
from .jax import JAX_TARGET

__all__ = ["zeta", "polygamma", "MAX_SHIFT"]

MAX_SHIFT = 2 ** 23


def _shifted_zeta(s, q, active):
    """zeta(s, q) where ``active`` (q < 0, finite) by the shift, else ``lax.zeta``."""
    k = jnp.where(active, jnp.ceil(-q), 0)
    too_far = k > MAX_SHIFT
    k = jnp.where(too_far, 0, k)
    steps = jnp.max(k, initial=0).astype(jnp.int64 if k.dtype == jnp.float64 else jnp.int32)

    def add(j, acc):
        at = q + j.astype(q.dtype)
        return acc + jnp.where(j < k, jnp.power(at, -s), 0)

    head = lax.fori_loop(jnp.zeros_like(steps), steps, add, jnp.zeros_like(q))
    return jnp.where(too_far, jnp.nan, head + lax.zeta(s, q + k))


@JAX_TARGET.rule(P.zeta)
def zeta(s, q):
    s, q = jnp.broadcast_arrays(s, q)
    # s < 1 is outside the Hurwitz zeta's domain: NaN, as Cephes (lax.zeta(0, 0) is inf)
    return jnp.where(s < 1, jnp.nan, _shifted_zeta(s, q, (q < 0) & jnp.isfinite(q)))


@JAX_TARGET.rule(P.polygamma)
def polygamma(n, x):
    n, x = jnp.broadcast_arrays(n, x)
    negative = (x < 0) & jnp.isfinite(x)
    pole = (x <= 0) & (x == jnp.floor(x))      # 0, -0, the negative integers, -inf
    # trigamma: psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)
    sine = jnp.sin(math.pi * jnp.where(negative, x, 0.5))
    reflected = math.pi ** 2 / (sine * sine) - lax.polygamma(jnp.ones_like(x),
                                                             jnp.where(negative, 1 - x, 1))
    # order n >= 2: (-1)^(n+1) n! zeta(n + 1, x)
    odd = jnp.fmod(n, 2) == 1
    factorial = jnp.exp(lax.lgamma(n + 1))
    high = negative & (n >= 2)
    shifted = jnp.where(odd, factorial, -factorial) * _shifted_zeta(n + 1, x, high)
    value = jnp.where(high, shifted, lax.polygamma(n, jnp.where(high, 1, x)))
    value = jnp.where(negative & (n == 1), reflected, value)
    # a pole: +inf for odd orders, -inf for even ones; 0 at +inf (SciPy's, i.e. eager's)
    value = jnp.where((x == jnp.inf) & (n >= 1), 0, value)
    return jnp.where(pole & (n >= 1), jnp.where(odd, jnp.inf, -jnp.inf), value)
