"""Python floats that stay program inputs while ``fnx.compile`` traces.

A float the traced code reads from a known place (a float argument of the compiled
function, an optimizer's ``param_groups`` option) enters the trace as a ``SymFloat``: a
``float`` with the value it has now, plus the 0-dim float64 graph input it stands for.
Arithmetic on it (``-lr``, ``1 - momentum``, ``lr * 0.5``) is recorded as graph ops and
ops that take a Scalar (``prims.full``'s fill value, ...) read the input, so the next call
runs with the new value and does not recompile -- as ``jax.jit`` does with weak-typed
Python scalars and PyTorch with ``specialize_float=False``.

Anything that turns it into a Python decision (``if lr > 0``, ``int(lr)``, ``float(lr)``,
``round``) records a guard on the inputs instead: the program is reused only while the
decision comes out the same. What cannot be seen is ``math.cos(lr)`` and NumPy reading the
double directly; those fold the trace-time value into the program.

>>> import fnx
>>> f = fnx.compile(lambda x, s: x * s + 1)
>>> f(fnx.ones(2), 2.0), f(fnx.ones(2), 3.0)
(tensor([3., 3.]), tensor([4., 4.]))
>>> len(f.entries())        # one program: the float is an input
1
"""
from __future__ import annotations

import math
import operator

from ..core import dtype as D
from ..core.device import CPU
from ..ops import prims
from .graph import NodeMeta
from .guards import DecidedComparisons, Guard

__all__ = ["SymFloat"]

_META = NodeMeta((), D.float64, CPU)


def _expr(x):
    """``x``'s value as a function of the program inputs."""
    if isinstance(x, SymFloat):
        return x._expr
    return lambda inputs, c=x: c


def _deps(*xs) -> frozenset:
    """The input positions the SymFloats among ``xs`` are computed from."""
    return frozenset().union(*(x._deps for x in xs if isinstance(x, SymFloat)))


class SymFloat(DecidedComparisons, float):
    """A float read while tracing that stays a program input (see the module docstring).

    ``_node`` is the float64 graph node computing it, ``_expr(inputs)`` its value from
    the program inputs (``_deps`` the positions of those it reads), ``_mode`` the tracing
    mode that records guards, ``_what`` its origin in words (``"group['lr']"``).
    """
    __slots__ = ("_node", "_expr", "_deps", "_mode", "_what")

    def __new__(cls, value, node, expr, mode, what, deps=frozenset()):
        self = super().__new__(cls, value)
        self._node = node
        self._expr = expr
        self._deps = deps
        self._mode = mode
        self._what = what
        return self

    def __reduce__(self):
        return float, (float(self.real),)

    # -- arithmetic: recorded as prims on float64 0-dim nodes
    def _lift(self, other):
        if isinstance(other, SymFloat):
            return other._node
        return self._mode.graph.call(prims.full.default, ([], other),
                                     {"dtype": D.float64, "device": CPU}, _META)

    def _binary(self, other, op, prim, name, reflected=False):
        if isinstance(other, bool) or not isinstance(other, (int, float)):
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        value = op(float.__float__(a) if isinstance(a, SymFloat) else a,
                   float.__float__(b) if isinstance(b, SymFloat) else b)
        if not self._mode.recording():
            return value
        ea, eb = _expr(a), _expr(b)
        if op is operator.truediv:
            self._mode.add_guard(Guard(lambda v: eb(v) != 0, True,
                                       f"{_what(b)} != 0", _deps(b)))
        na, nb = (self._lift(other), self._node) if reflected else \
            (self._node, self._lift(other))
        node = self._mode.graph.call(prim.default, (na, nb), {}, _META)
        return SymFloat(value, node, lambda v: op(ea(v), eb(v)), self._mode,
                        f"({_what(a)} {name} {_what(b)})", _deps(a, b))

    def __add__(self, o):
        return self._binary(o, operator.add, prims.add, "+")

    def __radd__(self, o):
        return self._binary(o, operator.add, prims.add, "+", True)

    def __sub__(self, o):
        return self._binary(o, operator.sub, prims.sub, "-")

    def __rsub__(self, o):
        return self._binary(o, operator.sub, prims.sub, "-", True)

    def __mul__(self, o):
        return self._binary(o, operator.mul, prims.mul, "*")

    def __rmul__(self, o):
        return self._binary(o, operator.mul, prims.mul, "*", True)

    def __truediv__(self, o):
        return self._binary(o, operator.truediv, prims.div, "/")

    def __rtruediv__(self, o):
        return self._binary(o, operator.truediv, prims.div, "/", True)

    def __pow__(self, o):
        return self._binary(o, operator.pow, prims.pow, "**")

    def __rpow__(self, o):
        return self._binary(o, operator.pow, prims.pow, "**", True)

    def _unary(self, op, prim, name):
        value = op(float.__float__(self))
        if not self._mode.recording():
            return value
        node = self._mode.graph.call(prim.default, (self._node,), {}, _META)
        e = self._expr
        return SymFloat(value, node, lambda v: op(e(v)), self._mode, f"{name}{self._what}",
                        self._deps)

    def __neg__(self):
        return self._unary(operator.neg, prims.neg, "-")

    def __pos__(self):
        return self

    def __abs__(self):
        return self._unary(abs, prims.abs, "abs")

    # -- decisions: a guard on the inputs, and a plain Python result
    def _decide(self, fn, other, name):
        plain = float.__float__(self)
        o = float.__float__(other) if isinstance(other, SymFloat) else other
        result = fn(plain, o) if other is not _NONE else fn(plain)
        if self._mode.recording() and result is not NotImplemented:
            e, eo = self._expr, _expr(other)
            pred = (lambda v: fn(e(v), eo(v))) if other is not _NONE else \
                (lambda v: fn(e(v)))
            what = f"{self._what} {name} {_what(other)}" if other is not _NONE else \
                f"{name}({self._what})"
            self._mode.add_guard(Guard(pred, result, what, _deps(self, other)))
        return result

    __hash__ = float.__hash__

    def __bool__(self):
        return self._decide(bool, _NONE, "bool")

    def __int__(self):
        return self._decide(int, _NONE, "int")

    def __float__(self):
        return self._decide(float, _NONE, "float")

    def __trunc__(self):
        return self._decide(math.trunc, _NONE, "trunc")

    def __floor__(self):
        return self._decide(math.floor, _NONE, "floor")

    def __ceil__(self):
        return self._decide(math.ceil, _NONE, "ceil")

    def __round__(self, ndigits=None):
        # (ndigits is in the wording: guards are told apart by it, see Tracer.add_guard)
        return self._decide(lambda x: round(x, ndigits), _NONE,
                            "round" if ndigits is None else f"round[{ndigits}]")

    def is_integer(self):
        return self._decide(float.is_integer, _NONE, "is_integer")


_NONE = object()


def _what(x) -> str:
    return x._what if isinstance(x, SymFloat) else repr(x)
