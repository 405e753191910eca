"""Registering operators and kernels from outside fnx, as ``torch.library``.

``Library`` (here) registers schemas and kernels by dispatch key (out-of-tree backends);
``custom_op`` (``custom_ops.py``) defines an operator from a Python function, with its
fake, autograd, kernels and lowering; ``opcheck`` (``opcheck.py``) checks one.

>>> import fnx
>>> lib = fnx.library.Library("doc_demo", "DEF")
>>> lib.define("twice(Tensor x) -> Tensor")
'doc_demo::twice'
>>> lib.impl("twice", lambda x: x * 2, "CPU")
>>> fnx.ops.doc_demo.twice(fnx.tensor([1, 2]))
tensor([2, 4])
>>> lib._destroy()
"""
from __future__ import annotations

from ..core.dispatch_key import AliasKey, DispatchKey, DispatchKeySet
from ..dispatch import dispatcher as _d
from ..dispatch.dispatcher import FALLTHROUGH, OpOverload, get_op
from ..keys import inplace_or_view as _inplace_or_view
from .custom_ops import (CustomOpDef, custom_op, get_custom_op, infer_schema, register_autograd,
                         register_fake, register_kernel, register_lowering)
from .opcheck import OpCheckError, opcheck

__all__ = ["Library", "fallthrough_kernel", "impl", "define", "custom_op", "CustomOpDef",
           "infer_schema", "get_custom_op", "register_fake", "register_autograd",
           "register_kernel", "register_lowering", "opcheck", "OpCheckError"]

fallthrough_kernel = FALLTHROUGH


def _key(k):
    if isinstance(k, (DispatchKey, AliasKey)):
        return k
    if k in ("", None):
        return AliasKey.CompositeImplicitAutograd
    if isinstance(k, str):
        if k in DispatchKey.__members__:
            return DispatchKey[k]
        if k in AliasKey.__members__:
            return AliasKey[k]
        if k == "CompositeExplicit":
            return AliasKey.CompositeExplicitAutograd
    raise ValueError(f"unknown dispatch key {k!r}; keys: {list(DispatchKey.__members__)} "
                     f"and {list(AliasKey.__members__)}")


class Library:
    """A handle for registrations into one namespace; ``kind`` is DEF, IMPL or FRAGMENT.

    ``DEF`` may define new ops in a new namespace; ``IMPL`` only adds kernels;
    ``_destroy()`` undoes everything this library registered.
    """

    _defined_namespaces: set = set()

    def __init__(self, ns: str, kind: str):
        if kind not in ("DEF", "IMPL", "FRAGMENT"):
            raise ValueError(f"Library kind must be DEF, IMPL or FRAGMENT, got {kind!r}")
        if kind == "DEF":
            if ns in Library._defined_namespaces or ns in ("aten", "prims"):
                raise RuntimeError(f"Only a single Library(\"{ns}\", \"DEF\") is allowed; use "
                                   f"FRAGMENT to add definitions to it")
            Library._defined_namespaces.add(ns)
        self.ns = ns
        self.kind = kind
        self._impls = []       # (op, key, previous kernel or None)
        self._fallbacks = []   # (key, previous fallback or None)
        self._defs = []

    def define(self, schema: str, *, tags=()) -> str:
        """Define ``ns::name.overload`` from a schema string; returns its qualified name."""
        if self.kind == "IMPL":
            raise RuntimeError("define() needs a DEF or FRAGMENT library")
        op = _d.define(schema, tags, self.ns)
        _inplace_or_view.register_op(op)
        self._defs.append(op)
        return op.qualname

    def _op(self, op) -> OpOverload:
        if isinstance(op, OpOverload):
            return op
        if isinstance(op, _d.OpOverloadPacket):
            return op.default
        name = op if "::" in op else f"{self.ns}::{op}"
        return get_op(name)

    def impl(self, op, fn, dispatch_key="", *, with_keyset: bool = False) -> None:
        """Register ``fn`` for ``op`` on ``dispatch_key`` (a key name or ``DispatchKey``).

        ``fn`` takes the op's arguments; with ``with_keyset=True`` it takes the call's
        ``DispatchKeySet`` first (to redispatch below its key).
        """
        o, key = self._op(op), _key(dispatch_key)
        if fn is FALLTHROUGH:
            kernel = FALLTHROUGH
        elif with_keyset:
            def kernel(ks, *args, **kwargs):
                return fn(DispatchKeySet(ks), *args, **kwargs)
        else:
            def kernel(ks, *args, **kwargs):
                return fn(*args, **kwargs)
        self._impls.append((o, key, o.kernels.get(key)))
        o.register(key, kernel)

    def fallback(self, fn, dispatch_key, *, with_keyset: bool = False) -> None:
        """One boxed kernel for every op on ``dispatch_key``: ``fn(op, *args, **kwargs)``
        (``fn(op, keyset, *args, **kwargs)`` with ``with_keyset=True``), or
        ``fallthrough_kernel``."""
        key = _key(dispatch_key)
        if fn is FALLTHROUGH:
            boxed = FALLTHROUGH
        elif with_keyset:
            def boxed(op, ks, args, kwargs):
                return fn(op, ks, *args, **kwargs)
        else:
            def boxed(op, ks, args, kwargs):
                return fn(op, *args, **kwargs)
        self._fallbacks.append((key, _d._fallbacks.get(key)))
        _d.register_fallback(key, boxed)

    def _destroy(self) -> None:
        """Undo this library's registrations, newest first."""
        for op, key, prev in reversed(self._impls):
            op.register(key, prev) if prev is not None else op.unregister(key)
        for key, prev in reversed(self._fallbacks):
            _d.register_fallback(key, prev)
        for op in self._defs:
            _d._ops.pop(op.qualname, None)
            ns = _d.ops.namespace(op.namespace)
            pkt = ns._packets.get(op.name)
            if pkt is not None:
                pkt._overloads.pop(op.overload_name, None)
                if pkt.__dict__.get(op.overload_name) is op:
                    delattr(pkt, op.overload_name)
        if self.kind == "DEF":
            Library._defined_namespaces.discard(self.ns)
        self._impls, self._fallbacks, self._defs = [], [], []


def define(qualname_schema: str, *, tags=()) -> str:
    """Define ``ns::name(...)`` without keeping a Library handle."""
    ns, _, rest = qualname_schema.partition("::")
    return Library(ns, "FRAGMENT").define(rest, tags=tags)


def impl(qualname: str, dispatch_key, fn=None):
    """Register a kernel by qualified name; usable as a decorator."""
    ns = qualname.split("::")[0]

    def deco(f):
        Library(ns, "FRAGMENT").impl(qualname, f, dispatch_key)
        return f
    return deco(fn) if fn is not None else deco
