"""``fnx._dynamo``: the parts of ``torch._dynamo`` that PyTorch scripts call, for
``fnx.compile``.

``config`` holds Dynamo's switches (``fnx.lower.settings``): ``recompile_limit`` (alias
``cache_size_limit``), ``automatic_dynamic_shapes``, ``assume_static_by_default``,
``specialize_int``, ``suppress_errors`` and ``error_on_recompile`` are honored; the others
tune how Dynamo reads bytecode, which fnx does not do, and are accepted with no effect.
An unknown name is an AttributeError.

>>> import fnx
>>> fnx._dynamo.config.cache_size_limit = 16
>>> fnx._dynamo.config.recompile_limit
16
>>> fnx._dynamo.config.cache_size_limit = 8
>>> f = fnx.compile(lambda x: x.sum(0))
>>> x = fnx.ones(4, 3)
>>> fnx._dynamo.mark_dynamic(x, 0)
>>> f(x)
tensor([4., 4., 4.])
>>> fnx._dynamo.explain(lambda x: x * 2 if x.sum().item() > 0 else x)(fnx.ones(2)).graph_break_count
1
"""
from __future__ import annotations

from .compiler import allow_in_graph, disable, is_compiling, mark_dynamic, reset
from .lower.dynamic_shapes import mark_static
from .lower.frontend import compile as _compile
from .lower.settings import DYNAMO as config

__all__ = ["config", "reset", "mark_dynamic", "maybe_mark_dynamic", "mark_static",
           "disable", "allow_in_graph", "is_compiling", "explain", "ExplainOutput",
           "optimize"]


def maybe_mark_dynamic(t, index) -> None:
    """``mark_dynamic``: fnx never turns a marked dim back into a constant silently (a
    guard that pins its size traces it statically instead), so a hint and a mark agree."""
    mark_dynamic(t, index)


def optimize(backend="inductor", *, nopython=False, dynamic=None, disable=False):
    """The older spelling of ``fnx.compile``: ``optimize(backend)(fn)``; ``nopython`` is
    ``fullgraph``."""
    def apply(fn):
        return _compile(fn, backend=backend, fullgraph=nopython, dynamic=dynamic,
                        disable=disable)
    return apply


class ExplainOutput:
    """What ``explain`` found: ``graph_count`` (compiled programs: one plus one per graph
    break), ``graph_break_count``, ``break_reasons`` (each break's kind and source line),
    ``op_count`` (the ops traced), ``graphs`` (fnx's graphs, per stage) and ``report``
    (the whole ``CompileReport``)."""

    def __init__(self, report):
        self.report = report
        self.break_reasons = list(report.breaks)
        self.graph_break_count = len(self.break_reasons)
        self.graph_count = self.graph_break_count + 1
        self.graphs = list(report.stages.values())
        self.op_count = report.eager_ops

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        lines += [f"  Break Reason {i + 1}: {r}" for i, r in enumerate(self.break_reasons)]
        return "\n".join(lines)


def explain(fn, *extra_args, **extra_kwargs):
    """``explain(fn)(*args, **kwargs)``: trace ``fn`` for these arguments as
    ``fnx.compile`` would and say how many graphs and graph breaks it makes, and why
    (``ExplainOutput``), as ``torch._dynamo.explain``. The function runs once, eagerly
    where it breaks."""
    def inner(*args, **kwargs):
        cf = _compile(fn)
        return ExplainOutput(cf.explain(*extra_args, *args, **extra_kwargs, **kwargs))
    return inner
