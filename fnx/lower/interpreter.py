"""The reference target: runs a graph op by op through the eager kernels.

It lowers every op (an op needs nothing but its eager kernels), so it is the yardstick
the JAX target is checked against and the fallback for regions nothing else handles.
"""
from __future__ import annotations

from .target import Target

__all__ = ["InterpreterTarget"]


class InterpreterTarget(Target):
    name = "interpreter"

    def has_rule(self, op) -> bool:
        return True

    def compile(self, graph):
        return graph.run
