"""Symbolic dimensions for ``fnx.export``: which example axes are dynamic, and rewriting a
graph traced at one set of sizes so its sizes are expressions of ``jax.export`` symbolic
dims.

fnx's tracer records concrete sizes. The export traces the model again at other sizes in
the ``Dim``s' ranges (``sample_points``): graphs that call different ops mean the program
specializes a dim (a Python branch on a size), and is refused naming the first op that
differs; every int argument that changes with the sizes is fitted as a polynomial of the
dims (total degree 2 at most, so ``B * T`` of a ``view(B * T, C)`` is found), confirmed on
extra sizes, and replaced by that expression of the symbolic dims before lowering.

>>> _fit([(4,), (5,), (6,)], [8, 10, 12], [(4,), (7,)], [8, 14])     # 2 * d
{(1,): 2}
>>> pts = [(2, 3), (3, 3), (4, 3), (2, 4), (2, 5), (3, 4)]
>>> _fit(pts, [b * t + 1 for b, t in pts], [(5, 6)], [31])            # b * t + 1
{(0, 0): 1, (1, 1): 1}
"""
from __future__ import annotations

from fractions import Fraction
from itertools import combinations_with_replacement

import numpy as np

from ..backends.cpu import wrap
from ..core.tensor import Tensor
from ..graph.graph import Node
from .dims import Dim

__all__ = ["flat_tensors", "dynamic_spec", "sample_points", "resized", "symbolize",
           "first_difference", "SpecializationError", "expression"]


class SpecializationError(ValueError):
    """The program is not one program over the Dims' ranges; ``index`` is the position of
    the node at fault in the example's graph (the export adds its source line)."""

    def __init__(self, message, index=None):
        super().__init__(message)
        self.index = index


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
    """[(input position among the user tensors, axis, Dim)] from ``dynamic_shapes``; a
    name used twice means one Dim, so its example sizes must agree."""
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
    found, seen = [], {}
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
            size = t.shape[axis]
            if not dim.contains(size):
                raise ValueError(f"export: the example input '{name}' has size "
                                 f"{size} at dim {axis}, outside Dim '{dim.name}' "
                                 f"[{dim.min}, {dim.max}]")
            if dim.name in seen:
                other, other_size, where = seen[dim.name]
                if (other.min, other.max) != (dim.min, dim.max):
                    raise ValueError(f"export: two Dims named '{dim.name}' with different "
                                     f"ranges ({other!r}, {dim!r})")
                if other_size != size:
                    raise ValueError(f"export: Dim '{dim.name}' is {other_size} at {where} "
                                     f"but {size} at '{name}' dim {axis} in the example "
                                     f"inputs; one Dim is one size")
                dim = other
            else:
                seen[dim.name] = (dim, size, f"'{name}' dim {axis}")
            found.append((order[id(t)], axis, dim))
    return found


def _levels(dim: Dim, size: int, n: int) -> list:
    """The example size then ``n`` other sizes in the dim's range (above it if possible)."""
    up = [s for s in range(size + 1, size + 1 + n) if dim.contains(s)]
    down = [s for s in range(size - 1, max(size - 1 - n, 1), -1) if dim.contains(s)]
    sizes = (up + down)[:n]
    if len(sizes) < n:
        raise ValueError(f"export: Dim '{dim.name}' [{dim.min}, {dim.max}] leaves too few "
                         f"sizes to check the program over its range")
    return [size] + sizes


def _basis(k: int) -> list:
    """Exponent tuples of the monomials of total degree <= 2 in ``k`` variables."""
    out = [(0,) * k]
    for degree in (1, 2):
        for combo in combinations_with_replacement(range(k), degree):
            e = [0] * k
            for i in combo:
                e[i] += 1
            out.append(tuple(e))
    return out


def sample_points(dims: list, base: tuple):
    """``(fit, check)`` lists of size tuples (one size per dim, ``fit[0] == base``).

    The fit points take, in each dim's list of sizes, levels 0 (the example), (1 and 2 in
    one dim) and (1 in two dims): a lower set of the level grid, on which a polynomial of
    total degree 2 is determined; the check points (level 3 in one dim, 2 in the others)
    lie off it, so a higher degree or a non-polynomial size shows."""
    k = len(dims)
    levels = [_levels(d, s, 3) for d, s in zip(dims, base)]

    def point(lv):
        return tuple(levels[i][lv[i]] for i in range(k))
    fit = [point(e) for e in _basis(k)]
    check = [point(tuple(3 if i == j else 2 for i in range(k))) for j in range(min(k, 2))]
    return fit, check


def resized(args, kwargs, dynamic, sizes: dict):
    """The example arguments with every dynamic axis at ``sizes[dim name]`` (zeros)."""
    flat = flat_tensors((args, kwargs))
    new = {}
    for pos, axis, dim in dynamic:
        t = new.get(pos, flat[pos])
        shape = list(t.shape)
        shape[axis] = sizes[dim.name]
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


def _leaves(value, path=()):
    """(path, value) for every non-container value in a node's arguments."""
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _leaves(v, path + (i,))
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, path + (k,))
    else:
        yield path, value


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


def _solve(rows, rhs):
    """Exact solution of the square system ``rows @ x == rhs`` (Fractions), or None."""
    n = len(rows)
    a = [[Fraction(v) for v in row] + [Fraction(b)] for row, b in zip(rows, rhs)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if a[r][col] != 0), None)
        if pivot is None:
            return None
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(n):
            if r != col and a[r][col] != 0:
                f = a[r][col] / a[col][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
    return [a[i][n] / a[i][i] for i in range(n)]


def _monomial(point, exps):
    out = 1
    for x, e in zip(point, exps):
        out *= x ** e
    return out


def _fit(points, values, check_points, check_values):
    """``{exponents: int coefficient}`` (nonzero terms) of the polynomial of total degree
    <= 2 through ``values`` at ``points`` that also gives ``check_values``, or None."""
    basis = _basis(len(points[0]))
    coeffs = _solve([[_monomial(p, e) for e in basis] for p in points], values)
    if coeffs is None or any(c.denominator != 1 for c in coeffs):
        return None
    terms = {e: int(c) for e, c in zip(basis, coeffs) if c != 0}
    for p, v in zip(check_points, check_values):
        if sum(c * _monomial(p, e) for e, c in terms.items()) != v:
            return None
    return terms


def expression(terms, syms):
    """The polynomial ``terms`` of the symbolic dims ``syms`` (a ``jax.export`` dim expr)."""
    out = 0
    for exps, c in terms.items():
        m = c
        for s, e in zip(syms, exps):
            for _ in range(e):
                m = m * s
        out = out + m
    return out


def _same_kind(nodes):
    n0 = nodes[0]
    return all(n.kind == n0.kind and (n0.kind != "call" or n.target is n0.target)
               for n in nodes)


def first_difference(graphs):
    """The index of the first node whose op differs between ``graphs``, else None."""
    lists = [g.nodes for g in graphs]
    for i, nodes in enumerate(zip(*lists)):
        if not _same_kind(nodes):
            return i
    if len({len(n) for n in lists}) != 1:
        return min(len(n) for n in lists)
    return None


def _describe(node):
    return f"{node.target.qualname if node.kind == 'call' else node.kind} (node {node.name})"


def symbolize(graphs, points, n_fit, syms, dims, rewrite=True):
    """Check that ``graphs`` (traced at ``points``, the first ``n_fit`` of them fit points,
    the rest check points) are one program, and (``rewrite``) make every size argument of
    ``graphs[0]`` that follows the dims a polynomial of the symbolic ``syms``."""
    names = ("Dim " if len(dims) == 1 else "Dims ") + ", ".join(f"'{d.name}'" for d in dims)
    base = graphs[0]
    at = first_difference(graphs)
    if at is not None:
        what = _describe(base.nodes[at]) if at < len(base.nodes) else "the program's end"
        raise SpecializationError(
            f"export: the program specializes {names}: {what} differs between the "
            f"sizes {_show(points, dims)}; it is not one program over the dims' ranges (mark "
            f"the dim static, or remove the size-dependent Python branch)", at)
    for index, nodes in enumerate(zip(*[g.nodes for g in graphs])):
        n0 = nodes[0]
        if n0.kind == "constant":
            if len({tuple(n.meta.shape) for n in nodes}) != 1:
                raise SpecializationError(
                    f"export: a tensor constant's shape depends on {names} (node "
                    f"{n0.name}); make it from the input (e.g. fnx.ones_like(x)) instead of "
                    f"a captured size", index)
            continue
        if n0.kind != "call":
            continue
        for part in ("args", "kwargs"):
            value = getattr(n0, part)
            lists = [list(_leaves(getattr(n, part))) for n in nodes]
            if len({len(x) for x in lists}) != 1 or \
                    len({tuple(p for p, _ in x) for x in lists}) != 1:
                raise SpecializationError(
                    f"export: {_describe(n0)} takes arguments whose structure depends on "
                    f"{names}", index)
            for k, (path, v0) in enumerate(lists[0]):
                vals = [x[k][1] for x in lists]
                if all(_equal(v, v0) for v in vals):
                    continue
                terms = None
                if all(type(v) is int for v in vals):
                    terms = _fit(points[:n_fit], vals[:n_fit], points[n_fit:], vals[n_fit:])
                if terms is None:
                    raise SpecializationError(
                        f"export: {_describe(n0)} takes a value that depends on "
                        f"{names} in a way export cannot express (not a polynomial of "
                        f"degree <= 2 with integer coefficients: "
                        f"{dict(zip(_show(points, dims), vals))}); mark the dim static "
                        f"instead", index)
                if rewrite:
                    value = _replace(value, path, expression(terms, syms))
            if rewrite:
                setattr(n0, part, value)
    return base


def _equal(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, Node):         # the same position in the same structure
        return a.name == b.name
    if isinstance(a, float) and a != a:
        return b != b
    return a is b or bool(a == b)


def _show(points, dims):
    if len(dims) == 1:
        return [p[0] for p in points]
    return [", ".join(f"{d.name}={s}" for d, s in zip(dims, p)) for p in points]
