"""Lowering targets: turning a traced Graph into something that runs.

Targets are pluggable (``fnx.lower.target``); fnx registers two: ``jax`` (a ``jax.lax``
rule per prim, one ``jax.jit`` per graph) and ``interpreter`` (the eager kernels, op by
op), the yardstick the JAX target is checked against.

>>> import fnx
>>> from fnx.lower import get_target
>>> sorted(targets())
['interpreter', 'jax']
>>> get_target("jax").has_rule(fnx.ops.prims.add.default)
True
"""
from __future__ import annotations

from .interpreter import InterpreterTarget
from . import jax_linalg  # noqa: F401  (registers the factorization prims' rules)
from . import jax_bessel  # noqa: F401  (registers the Bessel prims' rules)
from . import jax_polynomials  # noqa: F401  (the orthogonal-polynomial prims' rules)
from . import jax_zeta  # noqa: F401  (the Hurwitz zeta and polygamma prims' rules)
from .jax import JAX_TARGET
from .target import Target, get_target, register_target, targets

__all__ = ["register_target", "get_target", "targets", "Target"]

register_target(InterpreterTarget())
register_target(JAX_TARGET)
