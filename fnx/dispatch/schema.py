"""ATen schema strings: parsing, and binding call arguments to them.

    add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor

A ``FunctionSchema`` holds the name, overload, ``Argument``s (type, default,
keyword-only, alias annotation) and returns.  ``bind`` normalizes a call to the
schema's argument order with defaults filled in, raising ``TypeError`` like
PyTorch's argument parser.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..core import dtype as _dtype
from ..core.device import device
from ..core.dtype import dtype

__all__ = ["FunctionSchema", "Argument", "Type", "AliasInfo", "parse_schema"]

_NO_DEFAULT = object()


@dataclass(frozen=True)
class AliasInfo:
    """``Tensor(a!)``: set ``a``, written by the op; ``Tensor(a -> *)``: may alias anything."""
    sets: tuple
    is_write: bool
    after: tuple = ()

    def __str__(self):
        s = "|".join(self.sets) + ("!" if self.is_write else "")
        if self.after:
            s += " -> " + "|".join(self.after)
        return s


@dataclass(frozen=True)
class Type:
    """A schema type: base name (``Tensor``, ``int``, ...), ``?``, list ``[N]``."""
    base: str
    optional: bool = False
    is_list: bool = False
    size: int | None = None
    alias: AliasInfo | None = None
    elem_optional: bool = False   # Tensor?[]

    @property
    def is_tensor(self) -> bool:
        return self.base == "Tensor"

    def __str__(self):
        s = self.base
        if self.alias is not None:
            s += f"({self.alias})"
        if self.elem_optional:
            s += "?"
        if self.is_list:
            s += f"[{self.size if self.size is not None else ''}]"
        if self.optional:
            s += "?"
        return s


@dataclass(frozen=True)
class Argument:
    name: str
    type: Type
    default: object = _NO_DEFAULT
    kwarg_only: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    @property
    def is_write(self) -> bool:
        return self.type.alias is not None and self.type.alias.is_write

    def __str__(self):
        s = f"{self.type} {self.name}"
        if self.has_default:
            s += "=" + _format_default(self.default, self.type)
        return s


@dataclass(frozen=True)
class Return:
    type: Type
    name: str | None = None

    def __str__(self):
        return f"{self.type} {self.name}" if self.name else str(self.type)


@dataclass(frozen=True)
class FunctionSchema:
    namespace: str
    name: str
    overload_name: str
    arguments: tuple
    returns: tuple
    is_vararg: bool = False
    _positional: tuple = field(default=(), compare=False, repr=False)

    @property
    def qualified_name(self) -> str:
        """``aten::add.Tensor`` (``aten::abs`` for the default overload)."""
        base = f"{self.namespace}::{self.name}"
        return f"{base}.{self.overload_name}" if self.overload_name else base

    @property
    def is_mutable(self) -> bool:
        return any(a.is_write for a in self.arguments)

    @property
    def tensor_arguments(self):
        return [a for a in self.arguments if a.type.is_tensor]

    def __str__(self):
        args = []
        star = False
        for a in self.arguments:
            if a.kwarg_only and not star:
                args.append("*")
                star = True
            args.append(str(a))
        if len(self.returns) == 1 and self.returns[0].name is None:
            rets = str(self.returns[0])
        else:
            rets = "(" + ", ".join(map(str, self.returns)) + ")"
        name = self.name + (f".{self.overload_name}" if self.overload_name else "")
        return f"{name}({', '.join(args)}) -> {rets}"

    def bind(self, args, kwargs) -> tuple[list, dict]:
        """Normalize a call: returns (positional values, keyword-only values), defaults filled.

        >>> s = parse_schema("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, "
        ...                  "*, ScalarType? dtype=None) -> Tensor")
        >>> import fnx
        >>> x = fnx.tensor([1])
        >>> s.bind((x,), {"dim": [0]}) == ([x, [0], False], {'dtype': None})
        True
        """
        qn = self.qualified_name
        positional = [a for a in self.arguments if not a.kwarg_only]
        if len(args) > len(positional):
            raise TypeError(f"{qn}() takes {len(positional)} positional arguments but "
                            f"{len(args)} were given")
        by_name = {a.name: a for a in self.arguments}
        for k in kwargs:
            if k not in by_name:
                raise TypeError(f"{qn}() got an unexpected keyword argument '{k}'")
        values = {}
        for a, v in zip(positional, args):
            if a.name in kwargs:
                raise TypeError(f"{qn}() got multiple values for argument '{a.name}'")
            values[a.name] = v
        for a in self.arguments:
            if a.name in values:
                continue
            if a.name in kwargs:
                values[a.name] = kwargs[a.name]
            elif a.has_default:
                values[a.name] = a.default
            else:
                raise TypeError(f"{qn}() missing required argument '{a.name}' "
                                f"(schema: {self})")
        for i, a in enumerate(self.arguments):
            check_argument_type(qn, i, a, values[a.name])
        return ([values[a.name] for a in positional],
                {a.name: values[a.name] for a in self.arguments if a.kwarg_only})


def _is_tensor(x) -> bool:
    return hasattr(x, "_ks")


_NUMBER = (bool, int, float, complex)


def _symbolic_size(v) -> bool:
    """A size that is a variable of a trace (``fnx.graph.symint.SymInt``)."""
    return getattr(type(v), "symbolic_size", False)


def _type_ok(base: str, v) -> bool:
    if base == "Tensor":
        return _is_tensor(v)
    if base in ("int", "SymInt"):
        return (isinstance(v, (int, np.integer)) and not isinstance(v, bool)) or \
            _symbolic_size(v) or \
            (_is_tensor(v) and v.ndim == 0 and not v.dtype.is_floating_point)
    if base == "float":
        return isinstance(v, (int, float, np.integer, np.floating)) and \
            not isinstance(v, bool) or _symbolic_size(v)
    if base == "bool":
        return isinstance(v, (bool, np.bool_))
    if base == "Scalar":
        return isinstance(v, _NUMBER + (np.generic,)) or (_is_tensor(v) and v.ndim == 0) or \
            _symbolic_size(v)
    if base == "str":
        return isinstance(v, str)
    if base == "ScalarType":
        return isinstance(v, dtype)
    if base == "Device":
        return isinstance(v, (str, device, int))
    return True   # Layout, MemoryFormat, Generator, Any: not checked


def check_argument_type(qn: str, index: int, a: Argument, v) -> None:
    """Raise PyTorch's ``TypeError`` when ``v`` does not fit argument ``a``."""
    t = a.type
    if v is None and (t.optional or (a.has_default and a.default is None)):
        return
    if t.is_list:
        if isinstance(v, (list, tuple)):
            bad = [x for x in v if not (x is None and t.elem_optional) and not _type_ok(t.base, x)]
            if not bad:
                return
        elif t.base in ("int", "SymInt", "float", "bool") and t.size is not None and \
                _type_ok(t.base, v):
            return      # int[2] accepts a single int, broadcast (PyTorch does the same)
        elif t.base == "Tensor" and _is_tensor(v) is False and False:
            pass
        got = type(v).__name__
        raise TypeError(f"{qn}(): argument '{a.name}' (position {index + 1}) must be "
                        f"{_type_name(t)}, not {got}")
    if not _type_ok(t.base, v):
        raise TypeError(f"{qn}(): argument '{a.name}' (position {index + 1}) must be "
                        f"{_type_name(t)}, not {type(v).__name__}")


def _type_name(t: Type) -> str:
    names = {"int": "int", "SymInt": "int", "float": "float", "bool": "bool", "Tensor": "Tensor",
             "Scalar": "Number", "ScalarType": "dtype", "Device": "device", "str": "str"}
    n = names.get(t.base, t.base)
    return f"tuple of {n}s" if t.is_list else n


# --------------------------------------------------------------------------- parsing

_TOKEN = re.compile(r"\s*(->|[A-Za-z_][A-Za-z0-9_]*|-?\d+\.?\d*(?:e[-+]?\d+)?|\.\d+|"
                    r"'[^']*'|\"[^\"]*\"|\S)")


def _tokenize(s: str) -> list:
    toks, pos = [], 0
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if not m:
            break
        toks.append(m.group(1))
        pos = m.end()
    return toks


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0

    def peek(self, k=0):
        return self.toks[self.i + k] if self.i + k < len(self.toks) else None

    def next(self):
        t = self.peek()
        if t is None:
            self.fail("unexpected end of schema")
        self.i += 1
        return t

    def expect(self, tok):
        t = self.next()
        if t != tok:
            self.fail(f"expected '{tok}' but found '{t}'")
        return t

    def accept(self, tok) -> bool:
        if self.peek() == tok:
            self.i += 1
            return True
        return False

    def fail(self, msg):
        raise RuntimeError(f"schema parse error: {msg} in '{self.text}'")

    def parse_alias(self) -> AliasInfo:
        sets = [self.next()]
        while self.accept("|"):
            sets.append(self.next())
        is_write = self.accept("!")
        after = ()
        if self.accept("->"):
            after = [self.next()]
            while self.accept("|"):
                after.append(self.next())
            after = tuple(after)
        self.expect(")")
        return AliasInfo(tuple(sets), is_write, after)

    def parse_type(self) -> Type:
        base = self.next()
        if base == "(":
            self.fail("tuple types are not supported")
        alias = None
        if self.accept("("):
            alias = self.parse_alias()
        elem_optional = False
        is_list = False
        size = None
        optional = False
        if self.peek() == "?" and self.peek(1) == "[":
            self.next()
            elem_optional = True
        if self.accept("["):
            is_list = True
            if self.peek() != "]":
                size = int(self.next())
            self.expect("]")
            if alias is None and self.accept("("):   # Tensor[](a!)
                alias = self.parse_alias()
        if self.accept("?"):
            optional = True
        return Type(base, optional, is_list, size, alias, elem_optional)

    def literal(self):
        tok = self.next()
        if tok == "-" and self.peek() in ("inf", "nan"):   # float x=-inf
            return -_literal(self.next())
        return _literal(tok)

    def parse_default(self, t: Type):
        if self.accept("["):
            items = []
            while not self.accept("]"):
                items.append(self.literal())
                if self.peek() != "]":
                    self.expect(",")
            return tuple(items) if t.is_list else items
        v = self.literal()
        if t.is_list and isinstance(v, (int, float)) and not isinstance(v, bool) and t.size:
            return (v,) * t.size          # int[2] padding=0 means (0, 0)
        if t.base == "ScalarType" and isinstance(v, int) and not isinstance(v, bool):
            return _scalar_type(v)        # ScalarType? dtype=4 means torch.long
        return v

    def name(self) -> str:
        tok = self.next()
        if not _IDENT.fullmatch(tok):
            self.fail(f"expected a name but found '{tok}'")
        return tok

    def parse_args(self):
        args, kwarg_only, vararg = [], False, False
        self.expect("(")
        while not self.accept(")"):
            if self.accept("*"):
                kwarg_only = True
                self.accept(",")
                continue
            if self.peek() == "." and self.peek(1) == "." and self.peek(2) == ".":
                self.i += 3
                vararg = True
                self.accept(",")
                continue
            t = self.parse_type()
            name = self.name()
            default = _NO_DEFAULT
            if self.accept("="):
                default = self.parse_default(t)
            args.append(Argument(name, t, default, kwarg_only))
            if not self.accept(","):
                self.expect(")")
                break
        return tuple(args), vararg

    def parse_returns(self):
        if self.accept("("):
            rets = []
            while not self.accept(")"):
                t = self.parse_type()
                name = None
                if self.peek() not in (",", ")"):
                    name = self.name()
                rets.append(Return(t, name))
                self.accept(",")
            return tuple(rets)
        t = self.parse_type()
        name = self.name() if self.peek() is not None else None
        return (Return(t, name),)

    def parse(self) -> FunctionSchema:
        name = self.name()
        ns = "aten"
        if self.accept(":"):
            self.expect(":")
            ns, name = name, self.name()
        overload = ""
        if self.accept("."):
            overload = self.name()
        args, vararg = self.parse_args()
        self.expect("->")
        rets = self.parse_returns()
        if self.peek() is not None:
            self.fail(f"unexpected '{self.peek()}'")
        return FunctionSchema(ns, name, overload, args, rets, vararg)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# c10::ScalarType's numbering, for ``ScalarType dtype=<int>`` defaults.
_SCALAR_TYPES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16",
                 6: "float32", 7: "float64", 9: "complex64", 10: "complex128", 11: "bool",
                 15: "bfloat16"}


def _scalar_type(code: int):
    if code not in _SCALAR_TYPES:
        raise RuntimeError(f"schema parse error: unsupported ScalarType default {code}")
    return getattr(_dtype, _SCALAR_TYPES[code])


def _literal(tok: str):
    if tok in ("True", "False"):
        return tok == "True"
    if tok == "None":
        return None
    if tok[0] in "'\"":
        return tok[1:-1]
    if tok in ("Mean", "Sum", "None_"):
        return {"Mean": 1, "Sum": 2}.get(tok, 0)   # at::Reduction
    if tok in ("contiguous_format", "long", "strided", "preserve_format"):
        return tok
    try:
        return int(tok)
    except ValueError:
        pass
    try:
        return float(tok)
    except ValueError:
        raise RuntimeError(f"schema parse error: bad default '{tok}'") from None


def _format_default(v, t: Type) -> str:
    if t.base == "ScalarType" and v is not None:
        return str(next(c for c, n in _SCALAR_TYPES.items() if n == v.name))
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_format_default(x, t) for x in v) + "]"
    if isinstance(v, str):
        return v if v in ("contiguous_format", "long", "strided", "preserve_format") else f'"{v}"'
    return repr(v)


def parse_schema(text: str, namespace: str | None = None) -> FunctionSchema:
    """Parse ``[ns::]name[.overload](args) -> returns``.

    >>> s = parse_schema("aten::max.dim(Tensor self, int dim, bool keepdim=False) "
    ...                  "-> (Tensor values, Tensor indices)")
    >>> s.qualified_name, [a.name for a in s.arguments], [r.name for r in s.returns]
    ('aten::max.dim', ['self', 'dim', 'keepdim'], ['values', 'indices'])
    """
    s = _Parser(text.strip()).parse()
    if namespace is not None and "::" not in text:
        s = FunctionSchema(namespace, s.name, s.overload_name, s.arguments, s.returns,
                           s.is_vararg)
    return s
