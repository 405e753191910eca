"""Op levels and the mode that decomposes what lies outside one.

Every op belongs to one level: ``prims`` (tag "prim"), ``core`` (tag "core", the Core
ATen opset) or ``aten`` (everything else).  An op's decomposition, registered at its
one definition site, is readable Python written with fnx ops; it may call ops of any
level, and decomposing *to* a level repeats until only ops of that level (or lower)
remain.  ``DecomposingMode`` is the base of the tracer and of the eager decomposer.
"""
from __future__ import annotations

from ..core.dispatch_key import AUTOGRAD_BITS
from ..core.tls import ExcludeDispatchKeyGuard
from ..dispatch.modes import DispatchMode

__all__ = ["LEVELS", "level", "in_target", "DecomposingMode", "run_decomposition"]

LEVELS = ("aten", "core", "prims")


def level(op) -> str:
    """``"prims"``, ``"core"`` or ``"aten"``."""
    tags = op.tags
    if "prim" in tags:
        return "prims"
    if "core" in tags:
        return "core"
    return "aten"


def in_target(op, to: str) -> bool:
    """True when ``op`` may stay in a program decomposed to level ``to``."""
    if to not in LEVELS:
        raise ValueError(f"decompose: `to` must be one of {LEVELS}, got {to!r}")
    return LEVELS.index(level(op)) >= LEVELS.index(to)


class DecomposingMode(DispatchMode):
    """Base of modes that replace ops outside the target level by their decompositions.

    ``handle`` calls the decomposition (whose own op calls come back here) when the op
    is outside the target and has one; otherwise ``emit`` runs or records the op.
    """

    def __init__(self, to: str = "prims"):
        in_target(_ANY_OP, to)      # validates ``to``
        self.to = to

    def handle(self, op, ks, args, kwargs):
        if op.decomposition is not None and not in_target(op, self.to):
            return run_decomposition(op, args, kwargs)
        return self.emit(op, ks, args, kwargs)

    def emit(self, op, ks, args, kwargs):
        raise NotImplementedError


def run_decomposition(op, args, kwargs):
    """``op``'s decomposition with the Autograd keys excluded: a mode sees ``op`` on the
    Tracer key, after autograd handled it, so the ops the decomposition calls must not
    record nodes of their own (through a non-differentiable op that autograd passed by,
    as ``detach``, they would give its result a history)."""
    with ExcludeDispatchKeyGuard(AUTOGRAD_BITS):
        return op.decomposition(*args, **kwargs)


class _Any:
    tags = frozenset()


_ANY_OP = _Any()
