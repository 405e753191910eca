"""Symbolic sizes: a dimension that stays a variable while a program is traced.

A ``SymInt`` stands for an integer size (``x.size(1)`` of a program input) as an
expression over the symbols of a ``ShapeEnv``, with the value it has in the call being
traced. Arithmetic (``t + 1``, ``t * 64``, ``t // 2``, ``max``) gives SymInts; every Python
decision made on one -- a comparison, ``bool``, ``int()``, ``hash``, its use as an index
(``range(t)``, NumPy reading it) -- records a ``Guard`` on the inputs instead, so a program
traced at one size is reused for another only where every decision comes out the same.
``int()``-specialization is the guard ``s == value``: correct, only less general.

``SymInt`` is not an ``int`` subclass on purpose: CPython reads an ``int`` subclass's value
directly in ``range``, indexing and NumPy without calling any method, which would let a
size be baked into the program with no guard. As PyTorch's ``SymInt``, it is an
``numbers.Integral`` with ``__index__``.

>>> env = ShapeEnv()
>>> t = env.create_symbol(5, (0, 1), "x.size(1)")
>>> n = t * 2 + 1
>>> n, env.guards
(SymInt(x.size(1)*2+1 = 11), [])
>>> t <= 8                  # a decision: recorded as a guard
True
>>> env.guards
[Guard(x.size(1) <= 8 == True)]
>>> env.evaluate(n, {t.symbols()[0]: 7})
15
"""
from __future__ import annotations

import builtins
import functools
import math
import numbers
import operator

from .guards import DecidedComparisons, Guard

__all__ = ["ShapeEnv", "SymInt", "is_symbolic", "guard_int", "substitute",
           "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_ite", "sym_sqrt",
           "sym_sum"]


class ShapeEnv:
    """The symbols of one trace and the guards its decisions recorded.

    A symbol's source is ``(position, dim)``: ``inputs[position].shape[dim]`` of the
    program inputs. ``guards`` are ``fnx.graph.guards.Guard`` objects on those inputs.
    """

    def __init__(self):
        self.sources: dict[str, tuple[int, int]] = {}
        self.names: dict[str, str] = {}
        self.values: dict[str, int] = {}      # each symbol's value in the traced call
        self.guards: list[Guard] = []
        self._checks: list = []     # (predicate on bindings, expected): ``holds_for``
        self._seen: set = set()     # (what, expected) of the guards recorded (once each)
        self.frozen = False

    def create_symbol(self, value, source, what=None) -> SymInt:
        """A new symbol for the size ``value`` read from ``source`` (``what``: in words)."""
        if isinstance(value, builtins.bool) or not isinstance(value, builtins.int):
            raise TypeError(f"create_symbol: a size must be an int, got {type(value).__name__}")
        if value < 0:
            raise ValueError(f"create_symbol: a size must be >= 0, got {value}")
        sym = f"s{len(self.sources)}"
        self.sources[sym] = tuple(source)
        self.names[sym] = what or sym
        self.values[sym] = value
        return SymInt(value, _Expr.symbol(sym, self.names[sym]), self)

    def bindings(self, inputs) -> dict:
        """Each symbol's value in ``inputs`` (the program inputs, placeholder order; a
        source ``(position, None)`` is an int input itself, not a size)."""
        return {s: builtins.int(inputs[p] if d is None else inputs[p].shape[d])
                for s, (p, d) in self.sources.items()}

    def evaluate(self, x, bindings):
        """``x`` (a SymInt or plain value) for the symbol values ``bindings``."""
        return x._expr.fn(bindings) if isinstance(x, SymInt) else x

    def guards_hold(self, inputs) -> bool:
        """Every recorded decision comes out the same for ``inputs``."""
        return all(g.holds(inputs) for g in self.guards)

    def failing(self, inputs) -> list[Guard]:
        """The guards that do not hold for ``inputs``."""
        return [g for g in self.guards if not g.holds(inputs)]

    def holds_for(self, bindings) -> bool:
        """Every recorded decision comes out the same for the symbol values ``bindings``."""
        try:
            return all(fn(bindings) == expected for fn, expected in self._checks)
        except (ArithmeticError, ValueError, TypeError):
            return False

    def freeze(self) -> None:
        """End the trace: a decision on one of its sizes from now on is an error (its
        guard could no longer protect the program), never a silently fixed value."""
        self.frozen = True

    def _guard(self, expr_fn, expected, what, syms):
        if self.frozen:
            raise RuntimeError(f"a symbolic size was decided on after its trace ended "
                               f"({what}); fnx.compile specializes this shape instead")
        if (what, expected) in self._seen:      # the same expression: one guard
            return
        self._seen.add((what, expected))
        deps = frozenset(self.sources[s][0] for s in syms)
        bind = self.bindings
        self.guards.append(Guard(lambda inputs: expr_fn(bind(inputs)), expected, what, deps))
        self._checks.append((expr_fn, expected))


class _Expr:
    """A size expression: ``fn(bindings) -> value``, its text, and the symbols it reads."""
    __slots__ = ("fn", "text", "syms")

    def __init__(self, fn, text, syms):
        self.fn, self.text, self.syms = fn, text, syms

    @staticmethod
    def symbol(sym, name):
        return _Expr(lambda b: b[sym], name, frozenset((sym,)))

    @staticmethod
    def const(c):
        return _Expr(lambda b: c, repr(c), frozenset())


def _expr(x) -> _Expr:
    return x._expr if isinstance(x, SymInt) else _Expr.const(x)


def _plain(x):
    return x._value if isinstance(x, SymInt) else x


def _is_int(x) -> bool:
    return isinstance(x, (SymInt, builtins.int)) and not isinstance(x, builtins.bool)


class SymInt(DecidedComparisons):
    """An integer size as an expression over a ``ShapeEnv``'s symbols (see the module)."""
    __slots__ = ("_value", "_expr", "_env")
    symbolic_size = True        # what lower layers (MetaArray) recognize it by

    def __init__(self, value, expr, env):
        self._value = value
        self._expr = expr
        self._env = env

    def symbols(self) -> list[str]:
        """The symbols the expression reads, sorted."""
        return sorted(self._expr.syms)

    def __repr__(self):
        return f"SymInt({self._expr.text} = {self._value})"

    def __str__(self):
        # Python code that prints a size (``str(T)``, ``f"{T}"``, a cache key made of
        # text) uses its value: a decision, guarded. ``text`` is the expression.
        return str(self.__int__())

    def __format__(self, spec):
        return format(self.__int__(), spec)

    @property
    def text(self) -> str:
        """The expression, in words (``x.size(1)*2+1``)."""
        return self._expr.text

    # -- arithmetic with ints gives SymInts
    def _binary(self, other, op, name, reflected=False):
        if not _is_int(other):
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        if op in (operator.floordiv, operator.mod):
            if isinstance(b, SymInt):
                b._decide(operator.ne, 0, "!=")
        value = op(_plain(a), _plain(b))
        ea, eb = _expr(a), _expr(b)
        fa, fb = ea.fn, eb.fn
        text = f"{ea.text}{name}{eb.text}"
        if name in ("*", "//", "%", "**"):
            text = f"{_paren(ea.text)}{name}{_paren(eb.text)}"
        return SymInt(value, _Expr(lambda bnd: op(fa(bnd), fb(bnd)), text, ea.syms | eb.syms),
                      self._env)

    def __add__(self, o):
        return self._binary(o, operator.add, "+")

    def __radd__(self, o):
        return self._binary(o, operator.add, "+", True)

    def __sub__(self, o):
        return self._binary(o, operator.sub, "-")

    def __rsub__(self, o):
        return self._binary(o, operator.sub, "-", True)

    def __mul__(self, o):
        return self._binary(o, operator.mul, "*")

    def __rmul__(self, o):
        return self._binary(o, operator.mul, "*", True)

    def __floordiv__(self, o):
        return self._binary(o, operator.floordiv, "//")

    def __rfloordiv__(self, o):
        return self._binary(o, operator.floordiv, "//", True)

    def __mod__(self, o):
        return self._binary(o, operator.mod, "%")

    def __rmod__(self, o):
        return self._binary(o, operator.mod, "%", True)

    def __pow__(self, o):
        # a negative exponent gives a float: only a plain exponent >= 0 stays an int
        if isinstance(o, builtins.int) and not isinstance(o, builtins.bool) and o >= 0:
            return self._binary(o, operator.pow, "**")
        return NotImplemented if not _is_int(o) else self._specialize() ** guard_int(o)

    def __neg__(self):
        e = self._expr
        return SymInt(-self._value, _Expr(lambda b: -e.fn(b), f"-{_paren(e.text)}", e.syms),
                      self._env)

    def __pos__(self):
        return self

    def __abs__(self):
        e = self._expr
        return SymInt(abs(self._value), _Expr(lambda b: abs(e.fn(b)), f"abs({e.text})", e.syms),
                      self._env)

    # true division leaves the integers: the value is fixed with a guard
    def __truediv__(self, o):
        return self._specialize() / (guard_int(o) if isinstance(o, SymInt) else o)

    def __rtruediv__(self, o):
        return o / self._specialize()

    # -- decisions: a guard on the inputs, and a plain Python result
    def _decide(self, fn, other, name):
        if other is not _NONE and not isinstance(other, (numbers.Real, SymInt)):
            return NotImplemented
        e, eo = self._expr, _expr(other) if other is not _NONE else None
        if other is _NONE:
            result = fn(self._value)
            def pred(b):
                return fn(e.fn(b))
            what, syms = f"{name}({e.text})", e.syms
        else:
            result = fn(self._value, _plain(other))
            def pred(b):
                return fn(e.fn(b), eo.fn(b))
            what, syms = f"{e.text} {name} {eo.text}", e.syms | eo.syms
        if syms:
            self._env._guard(pred, result, what, syms)
        return result

    def _specialize(self) -> int:
        """The value as a plain int, guarded by ``expr == value``."""
        value = self._value
        self._decide(operator.eq, value, "==")
        return value

    def __bool__(self):
        return self._decide(builtins.bool, _NONE, "bool")

    def __hash__(self):
        return hash(self._specialize())

    def __int__(self):
        return self._specialize()

    __index__ = __int__

    def __float__(self):
        return builtins.float(self._specialize())

    def __trunc__(self):
        return self

    __floor__ = __ceil__ = __trunc__

    def __round__(self, ndigits=None):
        return self if ndigits is None or ndigits >= 0 else round(self._specialize(), ndigits)

    def __reduce__(self):      # (a copy or pickle is a plain int: specialized)
        return builtins.int, (self._specialize(),)

    # numbers.Integral's remaining members
    def __and__(self, o):
        return self._specialize() & guard_int(o)

    def __rand__(self, o):
        return guard_int(o) & self._specialize()

    def __or__(self, o):
        return self._specialize() | guard_int(o)

    def __ror__(self, o):
        return guard_int(o) | self._specialize()

    def __xor__(self, o):
        return self._specialize() ^ guard_int(o)

    def __rxor__(self, o):
        return guard_int(o) ^ self._specialize()

    def __lshift__(self, o):
        return self._specialize() << guard_int(o)

    def __rlshift__(self, o):
        return guard_int(o) << self._specialize()

    def __rshift__(self, o):
        return self._specialize() >> guard_int(o)

    def __rrshift__(self, o):
        return guard_int(o) >> self._specialize()

    def __invert__(self):
        return ~self._specialize()

    def __rpow__(self, o):
        return o ** self._specialize()

    def __divmod__(self, o):
        return self // o, self % o

    def __rdivmod__(self, o):
        return o // self, o % self

    @property
    def real(self):
        return self

    @property
    def imag(self):
        return 0

    def conjugate(self):
        return self

    @property
    def numerator(self):
        return self

    @property
    def denominator(self):
        return 1


numbers.Integral.register(SymInt)
_NONE = object()


def _paren(text: str) -> str:
    return text if text.replace("_", "").replace(".", "").replace("(", "").replace(
        ")", "").isalnum() else f"({text})"


def is_symbolic(x) -> bool:
    """``x`` is a SymInt (a size that is a variable of the program)."""
    return isinstance(x, SymInt)


def guard_int(x):
    """``x`` as a plain int; a SymInt is specialized (the guard ``s == value``)."""
    return x._specialize() if isinstance(x, SymInt) else x


def substitute(obj, bindings):
    """``obj`` (nested tuples/lists/dicts holding SymInts) with every SymInt replaced by its
    value for the symbol values ``bindings`` -- how a graph recorded with symbolic sizes is
    made concrete for a new shape without tracing it again."""
    if isinstance(obj, SymInt):
        return obj._expr.fn(bindings)
    if isinstance(obj, (list, tuple)):
        out = [substitute(o, bindings) for o in obj]
        if type(obj) in (list, tuple):
            return type(obj)(out)
        return type(obj)(*out) if hasattr(obj, "_fields") else type(obj)(out)
    if isinstance(obj, dict):
        return {k: substitute(v, bindings) for k, v in obj.items()}
    return obj


# -- torch.sym_* : on plain numbers what Python does; on SymInts an expression or a guard

_REAL = (builtins.int, builtins.float, numbers.Integral, numbers.Real)


def _check_real(op, x):
    if isinstance(x, builtins.bool) or not isinstance(x, _REAL):
        raise AssertionError(f"{op}: expected an int or float, got {type(x).__name__}")


def sym_int(a):
    """``a`` as an int, truncating a float toward zero (``torch.sym_int``); a SymInt stays
    symbolic, a SymFloat is read with a guard.

    >>> sym_int(2.7), sym_int(-2.7), sym_int(3)
    (2, -2, 3)
    """
    if isinstance(a, SymInt):
        return a
    if isinstance(a, builtins.float):
        return math.trunc(a)
    return builtins.int(a)


def sym_float(a):
    """``a`` as a float (``torch.sym_float``); a SymInt is specialized with a guard, a
    SymFloat is returned as it is.

    >>> sym_float(3)
    3.0
    """
    if isinstance(a, builtins.float):
        return a
    return builtins.float(a)


def _sym_minmax(op, name, a, b):
    _check_real(name, a)
    _check_real(name, b)
    if _is_int(a) and _is_int(b) and (isinstance(a, SymInt) or isinstance(b, SymInt)):
        env = a._env if isinstance(a, SymInt) else b._env
        ea, eb = _expr(a), _expr(b)
        return SymInt(op(_plain(a), _plain(b)),
                      _Expr(lambda bnd: op(ea.fn(bnd), eb.fn(bnd)),
                            f"{name[4:]}({ea.text}, {eb.text})", ea.syms | eb.syms), env)
    if isinstance(a, builtins.float) or isinstance(b, builtins.float):
        return builtins.float(op(a, b))     # compares, so a SymFloat records its guard
    return op(a, b)


def sym_max(a, b):
    """The larger of ``a`` and ``b`` without a Python decision on SymInts
    (``torch.sym_max``): a float if either is a float.

    >>> sym_max(2, 3), sym_max(2, 3.0)
    (3, 3.0)
    """
    return _sym_minmax(builtins.max, "sym_max", a, b)


def sym_min(a, b):
    """The smaller of ``a`` and ``b`` (``torch.sym_min``): a float if either is a float.

    >>> sym_min(2.0, 3), sym_min(4, 3)
    (2.0, 3)
    """
    return _sym_minmax(builtins.min, "sym_min", a, b)


def sym_not(a):
    """``not a`` (``torch.sym_not``); a symbolic ``a`` records its guard.

    >>> sym_not(0), sym_not(True)
    (True, False)
    """
    return not a


def sym_ite(b, t, f):
    """``t if b else f`` (``torch.sym_ite``): ``b`` must be a bool, ``t`` and ``f`` of one type.

    >>> sym_ite(True, 1, 2)
    1
    """
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"sym_ite: expected a bool condition, got {type(b).__name__}")
    if type(t) is not type(f):
        raise AssertionError(f"sym_ite: type mismatch: {type(t).__name__} vs {type(f).__name__}")
    return t if b else f


def sym_sqrt(a):
    """The square root of ``a`` as a float (``torch.sym_sqrt``); a SymInt is specialized.

    >>> sym_sqrt(4)
    2.0
    """
    _check_real("sym_sqrt", a)
    return math.sqrt(builtins.float(a) if isinstance(a, SymInt) else a)


def sym_sum(args):
    """The sum of ``args`` (``torch.sym_sum``): SymInts add up to one SymInt expression.

    >>> sym_sum([1, 2, 3]), sym_sum([1.5, 2]), sym_sum([])
    (6, 3.5, 0)
    """
    return functools.reduce(operator.add, args, 0)
