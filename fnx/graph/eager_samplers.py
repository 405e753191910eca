"""Random ops in a trace under ``fnx._inductor.config.fallback_random``.

A compiled program draws its random numbers from keys it takes from the generator:
reproducible under ``manual_seed``, but not eager's numbers. With ``fallback_random`` each
aten sampler (``rand``, ``bernoulli_``, ``multinomial``, ...) is instead a graph break
(``fnx.lower.graph_breaks.BreakTracer.sampler``) that runs eager's kernel when called, so
it draws eager's numbers from eager's generator. ``FunctionalTracingMode.handle`` asks
``samples(op)`` and hands such an op to ``eager_sample``.
"""
from __future__ import annotations

from ..core.tensor import Tensor
from ..ir.variants import written_args

__all__ = ["samples", "eager_sample"]

# Random ops whose randomness is a sampler they call (dropout's bernoulli): they
# decompose, and the sampler breaks; their own derivative (a dropout mask, sdpa's) needs
# the values inside.
_SAMPLER_CALLERS = frozenset(("dropout", "feature_dropout", "alpha_dropout",
                              "feature_alpha_dropout", "native_dropout", "rrelu",
                              "scaled_dot_product_attention"))


def samples(op) -> bool:
    """Whether ``op`` draws random numbers itself (an aten sampler: ``rand``,
    ``bernoulli_``, ``multinomial``; not a prim, which takes its key as an argument)."""
    return "nondeterministic" in op.tags and op.namespace == "aten" and \
        op.name not in _SAMPLER_CALLERS


def eager_sample(breaks, mode, op, args, kwargs):
    """Sampler ``op`` as a break of ``breaks``: its result, which an in-place sampler
    (``uniform_``) is to write into ``args[0]``. None: not handled (no break could be
    made: the op is traced as any other)."""
    if not op.schema.is_mutable:
        return breaks.sampler(mode, op, args, kwargs)
    if written_args(op) != ["self"] or not args or not isinstance(args[0], Tensor):
        return None
    return breaks.sampler(mode, _Filled(op), args, kwargs)


class _Filled:
    """In-place sampler ``op`` (``uniform_``) run on a copy of its tensor: the value it
    writes, for a break that must not change the real tensor it was handed."""

    def __init__(self, op):
        self.op, self.qualname = op, op.qualname

    def __call__(self, target, *args, **kwargs):
        copy = target.clone()
        self.op(copy, *args, **kwargs)
        return copy
