"""Symbolic dimensions for ``fnx.export``: which example axes are dynamic, and rewriting a
graph traced at one size so its sizes are expressions of a ``jax.export`` symbolic dim.

fnx's tracer records concrete sizes. The export traces the model again at other sizes in
the ``Dim``'s range: graphs that call different ops mean the program specializes the dim
(a Python branch on a size), and is refused naming the first op that differs; every int
argument that changes with the size is fitted as a polynomial of it (degree 2 at most,
fitted on three sizes and confirmed on a fourth) and replaced by that expression of the
symbolic dim before lowering.

>>> _fit([4, 5, 6, 7], [8, 10, 12, 14])     # 2 * d
(0, 2, 0)
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..backends.cpu import wrap
from ..core.tensor import Tensor
from .dims import Dim

__all__ = ["flat_tensors", "dynamic_spec", "probe_sizes", "resized", "symbolize",
           "same_structure"]


def flat_tensors(value, out=None):
    """Every tensor in nested args/kwargs, in order (the order of the trace's inputs)."""
    out = [] if out is None else out
    if isinstance(value, Tensor):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            flat_tensors(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            flat_tensors(v, out)
    return out


def dynamic_spec(dynamic_shapes, arg_names, args, kwargs):
    """[(input position among the user tensors, axis, Dim)] from ``dynamic_shapes``."""
    if dynamic_shapes is None:
        return []
    by_name = dict(zip(arg_names, args))
    by_name.update(kwargs)
    if isinstance(dynamic_shapes, (list, tuple)):
        dynamic_shapes = dict(zip(arg_names, dynamic_shapes))
    if not isinstance(dynamic_shapes, dict):
        raise TypeError("export: dynamic_shapes must be a dict by argument name, or a "
                        "tuple/list by position")
    order = {id(t): i for i, t in enumerate(flat_tensors((args, kwargs)))}
    found = []
    for name, spec in dynamic_shapes.items():
        if spec is None:
            continue
        if name not in by_name:
            raise ValueError(f"export: dynamic_shapes names '{name}', which is not an "
                             f"argument ({list(by_name)})")
        t = by_name[name]
        if not isinstance(t, Tensor) or not isinstance(spec, dict):
            raise NotImplementedError(f"export: dynamic_shapes['{name}'] must map the axes "
                                      f"of a tensor argument to Dims ({{0: Dim(...)}})")
        for axis, dim in spec.items():
            if dim is None:
                continue
            if not isinstance(dim, Dim):
                raise TypeError(f"export: dynamic_shapes['{name}'][{axis}] must be an "
                                f"fnx.export.Dim, got {dim!r}")
            if not -t.ndim <= axis < t.ndim:
                raise ValueError(f"export: dynamic_shapes['{name}'] names axis {axis} of a "
                                 f"{t.ndim}-d input")
            axis %= t.ndim
            if not dim.contains(t.shape[axis]):
                raise ValueError(f"export: the example input '{name}' has size "
                                 f"{t.shape[axis]} at dim {axis}, outside Dim '{dim.name}' "
                                 f"[{dim.min}, {dim.max}]")
            found.append((order[id(t)], axis, dim))
    return found


def probe_sizes(dim: Dim, size: int, n: int) -> list:
    """``n`` other sizes in the dim's range (above the example's if possible)."""
    up = [s for s in range(size + 1, size + 1 + n) if dim.contains(s)]
    down = [s for s in range(size - 1, max(size - 1 - n, 1), -1) if dim.contains(s)]
    sizes = (up + down)[:n]
    if len(sizes) < n:
        raise ValueError(f"export: Dim '{dim.name}' [{dim.min}, {dim.max}] leaves too few "
                         f"sizes to check the program over its range")
    return sizes


def resized(args, kwargs, dynamic, size):
    """The example arguments with every dynamic axis resized to ``size`` (zeros)."""
    flat = flat_tensors((args, kwargs))
    new = {}
    for pos, axis, _ in dynamic:
        t = new.get(pos, flat[pos])
        shape = list(t.shape)
        shape[axis] = size
        new[pos] = wrap(np.zeros(shape, t.dtype.numpy), t.dtype)
    it = iter(range(len(flat)))

    def swap(v):
        if isinstance(v, Tensor):
            i = next(it)
            return new.get(i, v)
        if isinstance(v, (list, tuple)):
            return type(v)(swap(x) for x in v)
        if isinstance(v, dict):
            return {k: swap(x) for k, x in v.items()}
        return v
    return swap(args), swap(kwargs)


def _ints(value, path=()):
    """(path, int) for every int in a node's arguments."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield path, value
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _ints(v, path + (i,))
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _ints(v, path + (k,))


def _replace(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        out = dict(value)
        out[head] = _replace(value[head], rest, new)
        return out
    out = list(value)
    out[head] = _replace(value[head], rest, new)
    return type(value)(out) if isinstance(value, tuple) else out


def _fit(sizes, values):
    """Integer coefficients ``c`` with ``values[i] == sum(c[k] * sizes[i] ** k)`` (degree at
    most 2, fitted on three points and confirmed on the rest), or None."""
    s, v = [Fraction(x) for x in sizes[:3]], [Fraction(x) for x in values[:3]]
    # Newton's divided differences, then expand to monomials
    d1 = [(v[1] - v[0]) / (s[1] - s[0]), (v[2] - v[1]) / (s[2] - s[1])]
    d2 = (d1[1] - d1[0]) / (s[2] - s[0])
    c2 = d2
    c1 = d1[0] - d2 * (s[0] + s[1])
    c0 = v[0] - d1[0] * s[0] + d2 * s[0] * s[1]
    coeffs = (c0, c1, c2)
    if any(c.denominator != 1 for c in coeffs):
        return None
    for x, y in zip(sizes, values):
        if c0 + c1 * x + c2 * x * x != y:
            return None
    return tuple(int(c) for c in coeffs)


def symbolize(graphs, sizes, sym, dim):
    """Rewrite ``graphs[0]`` (traced at ``sizes[0]``) so every int that follows the dim is
    an expression of the symbolic ``sym``; the other graphs were traced at the other sizes."""
    base = graphs[0]
    node_lists = [g.nodes for g in graphs]
    if len({len(n) for n in node_lists}) != 1:
        raise _specialized(dim, base, graphs, sizes)
    for nodes in zip(*node_lists):
        if any(n.kind != nodes[0].kind or n.target is not nodes[0].target and
               nodes[0].kind == "call" for n in nodes):
            raise _specialized(dim, base, graphs, sizes)
    for nodes in zip(*node_lists):
        n0 = nodes[0]
        if n0.kind == "constant":
            if len({tuple(n.meta.shape) for n in nodes}) != 1:
                raise ValueError(f"export: a tensor constant's shape depends on Dim "
                                 f"'{dim.name}' (node {n0.name}); make it from the input "
                                 f"(e.g. fnx.ones_like(x)) instead of a captured size")
            continue
        if n0.kind != "call":
            continue
        for part in ("args", "kwargs"):
            value = getattr(n0, part)
            lists = [list(_ints(getattr(n, part))) for n in nodes]
            if len({len(x) for x in lists}) != 1:
                raise _specialized(dim, base, graphs, sizes, n0)
            for k, (path, v0) in enumerate(lists[0]):
                vals = [x[k][1] for x in lists]
                if len(set(vals)) == 1:
                    continue
                c = _fit(sizes, vals)
                if c is None:
                    raise ValueError(
                        f"export: {n0.target.qualname} (node {n0.name}) takes a size that "
                        f"depends on Dim '{dim.name}' in a way export cannot express "
                        f"({dict(zip(sizes, vals))}); mark the dim static instead")
                expr = c[0] + c[1] * sym + c[2] * sym * sym if c[2] else c[0] + c[1] * sym
                value = _replace(value, path, expr)
            setattr(n0, part, value)
    return base


def same_structure(graphs, sizes, dim):
    """Refuse graphs (traced at ``sizes``) that call different ops, naming the first."""
    node_lists = [g.nodes for g in graphs]
    for nodes in zip(*node_lists):
        if any(n.kind != nodes[0].kind or nodes[0].kind == "call" and
               n.target is not nodes[0].target for n in nodes):
            raise _specialized(dim, graphs[0], graphs, sizes)
    if len({len(n) for n in node_lists}) != 1:
        raise _specialized(dim, graphs[0], graphs, sizes)


def _specialized(dim, base, graphs, sizes, node=None):
    if node is None:
        for nodes in zip(*[g.nodes for g in graphs]):
            if any(n.kind != nodes[0].kind or nodes[0].kind == "call" and
                   n.target is not nodes[0].target for n in nodes):
                node = nodes[0]
                break
    what = f"{node.target.qualname if node.kind == 'call' else node.kind} (node {node.name})" \
        if node is not None else "the program's structure"
    return ValueError(f"export: the program specializes Dim '{dim.name}': {what} differs "
                      f"between sizes {sizes}; the program is not valid for the whole range "
                      f"(mark the dim static, or remove the size-dependent Python branch)")
