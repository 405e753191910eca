"""Pytrees (as ``torch.utils._pytree``): the nested inputs and outputs of ``fnx.func``'s
transforms and of a checkpointed function. Tuples, lists, dicts (in insertion order, as
PyTorch's pytrees: a gradient dict lists its keys as the parameter dict did), namedtuples
and None (an empty node); anything else is a leaf.

>>> leaves, spec = flatten(({"w": 1, "b": 2}, [3, None]))
>>> leaves
[1, 2, 3]
>>> unflatten(spec, [4, 5, 6])
({'w': 4, 'b': 5}, [6, None])
"""
from __future__ import annotations

__all__ = ["Spec", "flatten", "unflatten", "broadcast_prefix"]


class Spec:
    """The structure of a pytree: ``kind`` (``leaf``, ``none``, ``tuple``, ``list``,
    ``dict``, ``namedtuple``), ``meta`` (a dict's keys, a namedtuple's type), children."""

    __slots__ = ("kind", "meta", "children", "n_leaves", "_key")

    def __init__(self, kind, meta=None, children=()):
        self.kind, self.meta, self.children = kind, meta, tuple(children)
        self.n_leaves = 1 if kind == "leaf" else sum(c.n_leaves for c in self.children)
        self._key = (kind, meta, tuple(c._key for c in self.children))

    def __eq__(self, other):
        return isinstance(other, Spec) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(repr(c) for c in self.children)
        if self.kind == "dict":
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.meta, self.children))
            return "{" + inner + "}"
        if self.kind == "list":
            return "[" + inner + "]"
        if self.kind == "namedtuple":
            return f"{self.meta.__name__}({inner})"
        return "(" + inner + ("," if len(self.children) == 1 else "") + ")"


def _children(value):
    """``(kind, meta, children)`` of a container, or None for a leaf."""
    if value is None:
        return "none", None, ()
    if isinstance(value, tuple):
        if hasattr(type(value), "_fields"):
            return "namedtuple", type(value), tuple(value)
        return "tuple", None, tuple(value)
    if isinstance(value, list):
        return "list", None, tuple(value)
    if isinstance(value, dict):
        return "dict", tuple(value), tuple(value.values())
    return None


def flatten(tree):
    """``(leaves, spec)``."""
    leaves = []

    def walk(v):
        node = _children(v)
        if node is None:
            leaves.append(v)
            return Spec("leaf")
        kind, meta, kids = node
        return Spec(kind, meta, [walk(c) for c in kids])
    spec = walk(tree)
    return leaves, spec


def unflatten(spec: Spec, leaves):
    """The pytree of structure ``spec`` holding ``leaves`` in order."""
    it = iter(leaves)

    def build(s):
        if s.kind == "leaf":
            return next(it)
        if s.kind == "none":
            return None
        kids = [build(c) for c in s.children]
        if s.kind == "tuple":
            return tuple(kids)
        if s.kind == "list":
            return kids
        if s.kind == "dict":
            return dict(zip(s.meta, kids))
        return s.meta(*kids)
    return build(spec)


def broadcast_prefix(prefix, tree, is_leaf) -> list:
    """One value per leaf of ``tree``: ``prefix`` is a value (``is_leaf``) standing for a
    whole subtree, or a container of the same kind as the tree's node, recursively.
    ValueError when it is not a prefix of ``tree``'s structure."""
    out = []

    def walk(p, v):
        if is_leaf(p):
            out.extend([p] * len(flatten(v)[0]))
            return
        pn, vn = _children(p), _children(v)
        if pn is None or vn is None or pn[0] != vn[0] or len(pn[2]) != len(vn[2]) or \
                (pn[0] == "dict" and set(pn[1]) != set(vn[1])):
            raise ValueError("not a prefix")
        if pn[0] == "dict":
            for k in vn[1]:
                walk(p[k], v[k])
        else:
            for a, b in zip(pn[2], vn[2]):
                walk(a, b)
    walk(prefix, tree)
    return out
