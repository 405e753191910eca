"""Defining operators: ``defop`` gives an op its schema, tags and meta function.

Each op family module (in ``fnx/ir/aten/``) is the one place an op's semantics
live: schema, tags, type-promotion kind, meta function (output shape and dtype),
decomposition and derivative.  Backends and lowerings register implementations
against the ``OpOverload`` objects defined there.
"""
from __future__ import annotations

from typing import NamedTuple

from ..core.dispatch_key import AliasKey
from ..dispatch.dispatcher import OpOverload, define

__all__ = ["defop", "TensorMeta", "derivative", "nondifferentiable", "NONDIFFERENTIABLE",
           "ByArgument"]


class TensorMeta(NamedTuple):
    """What a meta function returns for each tensor output: its shape and dtype."""
    shape: tuple
    dtype: object


def defop(schema: str, *, tags=(), meta=None, decomposition=None, namespace="aten",
          promotion=None, explicit=False, derivative=None) -> OpOverload:
    """Define an operator.

    ``decomposition`` on an op not tagged ``core`` or ``prim`` is also its
    ``CompositeImplicitAutograd`` kernel, so every backend runs it without a kernel
    of its own (PyTorch's rule for non-core ATen ops).  A core op whose backends run
    its decomposition (no direct kernel) passes ``explicit=True``: the decomposition
    becomes its ``CompositeExplicitAutograd`` kernel, so autograd still sees the core op.
    """
    op = define(schema, tags, namespace)
    op.promotion = promotion
    if meta is not None:
        op.meta = meta
    if decomposition is not None:
        set_decomposition(op, decomposition, explicit)
    if derivative is not None:
        op.derivative = derivative
    return op


def set_decomposition(op: OpOverload, fn, explicit: bool = False) -> None:
    op.decomposition = fn
    if explicit:
        op.register(AliasKey.CompositeExplicitAutograd, lambda ks, *a, **k: fn(*a, **k))
    elif not ({"core", "prim"} & op.tags):
        op.register(AliasKey.CompositeImplicitAutograd, lambda ks, *a, **k: fn(*a, **k))


def meta(op: OpOverload):
    """Decorator: ``@meta(aten.mm.default) def _(self, mat2): ...``."""
    def deco(fn):
        op.meta = fn
        return fn
    return deco


def decomposition(op: OpOverload, explicit: bool = False):
    """Decorator: register ``fn`` as the op's decomposition (see ``defop``)."""
    def deco(fn):
        set_decomposition(op, fn, explicit)
        return fn
    return deco


class _NonDifferentiable:
    """``op.derivative`` of an op whose outputs never carry a gradient (comparisons,
    argmax, integer ops, ``detach``): autograd runs it without recording anything."""

    def __repr__(self):
        return "NONDIFFERENTIABLE"


NONDIFFERENTIABLE = _NonDifferentiable()


class ByArgument:
    """``op.derivative`` of an op whose formula depends on one argument's value (scatter's
    ``reduce``): each call runs, and saves what is named by, the formula of its value only.

    >>> import fnx
    >>> d = fnx.ops.prims.scatter.default.derivative
    >>> d.arg, d.formulas["add"].__name__, d.formulas["mul"].__name__
    ('reduce', '_scatter_backward', '_scatter_mul_backward')
    """

    __slots__ = ("arg", "formulas")

    def __init__(self, arg: str):
        self.arg = arg
        self.formulas = {}

    def __repr__(self):
        return f"ByArgument({self.arg!r}, {sorted(self.formulas)})"


def derivative(*ops: OpOverload, **when):
    """Decorator: the backward formula of ``ops`` (see ``fnx.autograd.formulas``).

    ``fn``'s parameters name what it needs: ``grad`` (the output's gradient), ``grads``
    (all outputs' gradients, None where none flowed), ``result`` (the output), ``resultN``
    (output N alone), any of the op's schema arguments by name, and ``<arg>_shape`` /
    ``<arg>_meta`` (a tensor argument's shape / (shape, dtype, device), without keeping the
    tensor). It returns one gradient per tensor argument, in schema order (None for no
    gradient, a list for ``Tensor[]``). Broadcast dimensions are summed and the dtype
    matched by autograd, so a formula need not do it.

    ``when``, one argument and the values it covers (``reduce=("none", "add")``), makes
    ``fn`` the formula of those calls only (``ByArgument``), so it saves only what they need.

    >>> import fnx
    >>> from fnx.ir.registry import derivative
    >>> fnx.ops.aten.mul.Tensor.derivative.__name__
    '_mul_backward'
    """
    if len(when) > 1:
        raise TypeError(f"derivative: one argument may choose the formula, got {list(when)}")

    def deco(fn):
        for op in ops:
            if not when:
                op.derivative = fn
                continue
            ((arg, values),) = when.items()
            if not isinstance(op.derivative, ByArgument) or op.derivative.arg != arg:
                op.derivative = ByArgument(arg)
            for v in values:
                op.derivative.formulas[v] = fn
        return fn
    return deco


def nondifferentiable(*ops: OpOverload) -> None:
    """Mark ``ops`` as having no gradient (see ``NONDIFFERENTIABLE``)."""
    for op in ops:
        op.derivative = NONDIFFERENTIABLE
