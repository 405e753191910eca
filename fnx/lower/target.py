"""The target registry: a target is an object with a ``name``, ``has_rule(op) -> bool`` and
``compile(graph) -> callable``; the callable takes and returns fnx tensors like
``graph.run``.  ``register_target(target)`` makes one available to
``fnx.compile(backend=name)`` and to the coverage table's lowering column.
"""
from __future__ import annotations

__all__ = ["register_target", "get_target", "targets", "Target"]

_targets: dict = {}


class Target:
    """Base class of lowering targets: a table of rules keyed by op."""

    name = "target"

    def __init__(self):
        self.rules = {}

    def has_rule(self, op) -> bool:
        return op in self.rules

    def supports(self, node) -> bool:
        """Whether this call (a graph node) can be lowered: by default, whether its op
        has a rule."""
        return self.has_rule(node.target)

    def rule(self, *ops):
        """Decorator: register ``fn`` as the rule of ``ops``."""
        def deco(fn):
            for op in ops:
                self.rules[op] = fn
            return fn
        return deco

    def compile(self, graph):
        raise NotImplementedError


def register_target(target) -> None:
    """Make ``target`` available by ``target.name`` (replacing one of the same name)."""
    _targets[target.name] = target


def get_target(name: str):
    try:
        return _targets[name]
    except KeyError:
        raise ValueError(f"unknown lowering target {name!r}; registered: "
                         f"{sorted(_targets)}") from None


def targets() -> dict:
    """Every registered target by name."""
    return dict(_targets)
