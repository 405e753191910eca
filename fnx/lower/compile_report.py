"""What ``CompiledFunction.explain`` reports for one call: the graph at each stage (traced,
functional, optimized, backward), the graph breaks, the partition into compiled regions
and eager ops, and how XLA fused each region (``_dynamo.explain`` builds on it)."""
from __future__ import annotations

import numpy as np

from ..backends.cpu import wrap
from ..core.tensor import Tensor

__all__ = ["CompileReport"]


class CompileReport:
    """The result of ``CompiledFunction.explain``: printable, and its parts are attributes."""

    def __init__(self, entry, inputs):
        """``entry``: the compiled entry for the call; ``inputs``: its inputs."""
        breaks = getattr(entry, "breaks", None) or []
        # graph breaks: where, and the last segment's regions (the first path traced)
        self.breaks = [str(b) for b in breaks]
        if breaks:
            entry, stages = entry.report
            self.stages = dict(stages, optimized=entry.stages["optimized"])
        else:
            self.stages = entry.stages
        self.regions = entry.parts.regions
        self.fallback_ops = entry.parts.fallback_ops
        self.graph = entry.graph
        self.eager_ops = len(self.stages["traced"].calls())
        self.prim_calls = len(entry.graph.calls())
        self.fusions = []
        given = dict(zip(entry.places, inputs))     # the call's own inputs (their layout)
        for step, fn in entry.steps:
            if fn is not None and hasattr(fn, "hlo_fusions"):
                self.fusions.append(fn.hlo_fusions(*[
                    given[i] if isinstance(given.get(i), Tensor) else _example(i)
                    for i in step.inputs]))

    def __str__(self):
        lines = []
        for name, g in self.stages.items():
            lines.append(f"== {name} graph ({len(g.calls())} calls) ==")
            lines.append(str(g))
        if self.breaks:
            lines.append(f"== {len(self.breaks)} graph break(s); the last segment's "
                         f"partition follows ==")
            lines += [f"break {i}: {b}" for i, b in enumerate(self.breaks)]
        lines.append(f"== partition: {len(self.regions)} compiled region(s), "
                     f"{len(self.fallback_ops)} eager op(s) ==")
        for i, r in enumerate(self.regions):
            lines.append(f"region {i}: {len(r.nodes)} nodes, {len(r.inputs)} inputs, "
                         f"{len(r.outputs)} outputs")
        if self.fallback_ops:
            lines.append("eager fallback: " + ", ".join(str(o) for o in self.fallback_ops))
        for i, f in enumerate(self.fusions):
            lines.append(f"XLA region {i}: {self.prim_calls} prims -> {f['kernels']} "
                         f"kernels ({f['fusions']} fusion(s)); eager runs "
                         f"{self.eager_ops} aten kernels")
        return "\n".join(lines)

    __repr__ = __str__


def _example(node):
    return wrap(np.zeros(node.meta.shape, node.meta.dtype.numpy), node.meta.dtype)


