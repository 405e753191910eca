"""Python floats a compiled program may take as float32 instead of float64.

A Python float read while tracing (a learning rate, ``fnx.compile``'s
``specialize_float=False``) is a 0-dim float64 program input, as PyTorch keeps it a
double. Fed to XLA, a float64 input costs the call an ``enable_x64`` context and a
64-bit conversion (~1 us of a ~70 us small training step). Many such floats only ever
meet float32 tensors: SGD's ``param.add_(grad, alpha=-lr)`` records ``neg(lr)`` and then
``full(..., dtype=float32)``. Rounding the float to float32 on entry then gives the same
program: negation and absolute value are exact and commute with rounding to nearest, so
``round32(-v) == -round32(v)``. Such inputs (``narrowable``) are fed as float32 and
widened back to float64 inside the program (``widened``), so the traced body is the one
that was traced. A float that takes part in float64 arithmetic first (Adam's
``lr / bias_correction``) stays float64.

>>> import fnx
>>> f = fnx.compile(lambda x, s: x * -s)          # s: a float input, only negated
>>> f(fnx.ones(2), 0.5).tolist()
[-0.5, -0.5]
>>> [p.meta.dtype for p in f.entries()[-1]._plan.program.places]
[fnx.float64, fnx.float32]
>>> sorted(f.entries()[-1]._plan.program.narrow)   # ... so it enters as float32
[0]
>>> g = fnx.compile(lambda x, s: x * (s / 3))    # divided in float64 first: it stays
>>> g(fnx.ones(2), 0.5).tolist() == (fnx.ones(2) * (0.5 / 3)).tolist()
True
>>> sorted(g.entries()[-1]._plan.program.narrow)
[]
"""
from __future__ import annotations

import jax
import numpy as np

from ..core import dtype as D
from ..ir import prims as P

__all__ = ["narrowable", "widened"]

_EXACT_SIGN = (P.neg, P.abs)     # float64 ops that commute with rounding to float32


def narrowable(graph) -> frozenset:
    """Placeholder positions of ``graph``'s 0-dim float64 inputs whose every use reaches
    float32 through ``neg``/``abs`` into a float32 ``full`` or ``convert_element_type``."""
    out = []
    for j, p in enumerate(graph.placeholders()):
        meta = getattr(p, "meta", None)
        if meta is not None and tuple(meta.shape) == () and meta.dtype is D.float64 and \
                _all_round_to_float32(p):
            out.append(j)
    return frozenset(out)


def _all_round_to_float32(value) -> bool:
    return bool(value.users) and all(_rounds_to_float32(u, value) for u in value.users)


def _rounds_to_float32(node, value) -> bool:
    if node.kind != "call" or node.kwargs.keys() - {"dtype", "device"}:
        return False
    args, target = node.args, node.target
    if target in _EXACT_SIGN:
        return args == (value,) and _all_round_to_float32(node)
    if target is P.full:        # full(shape, fill_value, dtype=, device=)
        return len(args) == 2 and args[1] is value and \
            all(s is not value for s in args[0]) and node.kwargs.get("dtype") is D.float32
    if target is P.convert_element_type:
        dtype = args[1] if len(args) > 1 else node.kwargs.get("dtype")
        return args[0] is value and all(a is not value for a in args[1:]) and \
            dtype is D.float32
    return False


def widened(program, narrow: frozenset):
    """``program`` (``graph_program``'s) taking the inputs at ``narrow`` as float32: each
    is widened to float64 before the body runs (exact), so the body is unchanged."""
    if not narrow:
        return program

    def run(*arrays):
        return program(*[jax.lax.convert_element_type(a, np.float64) if j in narrow else a
                         for j, a in enumerate(arrays)])
    run.checks = program.checks
    return run
