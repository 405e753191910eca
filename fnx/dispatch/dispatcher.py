"""Operators and their dispatch tables.

Every operator overload (``aten::add.Tensor``) is an ``OpOverload``.  Calling it
computes the call's keyset (keys of its tensor arguments, plus the thread-local
include set, minus the exclude set, minus the keys this op falls through) and calls
the kernel in its dispatch table at the highest key.  The table is recomputed when
something is registered, never on a call.  Per key the entry is, in order:

1. a kernel registered for that key;
2. for an Autograd (Autocast) key, a kernel registered for the ``Autograd``
   (``Autocast``) alias;
3. for a backend key, the ``CompositeExplicitAutograd`` kernel;
4. for backend and Autograd keys, the ``CompositeImplicitAutograd`` kernel (the op's
   decomposition), unless the backend has a kernel of its own;
5. the key's fallback (one boxed function for every op);
6. an error kernel that names the op, the key and the keys that have kernels.

A kernel takes the keyset first: ``kernel(keyset, *args, **kwargs)``; a kernel that
redispatches passes ``keyset & below(its key)`` to ``op.redispatch``.  The call
itself is Python generated from the schema, so argument binding (and its
``TypeError``) costs what a Python call costs.
"""
from __future__ import annotations

import keyword

from ..core import tls
from ..core.dispatch_key import (AUTOCAST_KEYS, AUTOGRAD_FOR_BACKEND, AUTOGRAD_KEYS, BACKEND_KEYS,
                                 FULL, KEYS, NUM_KEYS, AliasKey, DispatchKey, DispatchKeySet)
from ..core.errors import out_of_memory
from .schema import FunctionSchema, check_argument_type, parse_schema

__all__ = ["OpOverload", "OpOverloadPacket", "FALLTHROUGH", "register_fallback",
           "get_op", "all_ops"]


class _Fallthrough:
    """Register this as a kernel or fallback to make a key transparent for an op."""

    def __repr__(self):
        return "FALLTHROUGH"


FALLTHROUGH = _Fallthrough()

_fallbacks: dict = {}       # DispatchKey -> boxed fn(op, keyset, args, kwargs) | FALLTHROUGH
_ops: dict = {}             # qualified name -> OpOverload
_BACKEND_OF_AUTOGRAD = {v: k for k, v in AUTOGRAD_FOR_BACKEND.items()}


def all_ops():
    return list(_ops.values())


def get_op(qualified_name: str) -> "OpOverload":
    """The overload named ``ns::name[.overload]`` (``.default`` may be omitted)."""
    name = qualified_name.replace(".default", "")
    try:
        return _ops[name]
    except KeyError:
        raise RuntimeError(f"operator {qualified_name} does not exist") from None


def find_op(qualified_name: str):
    """The overload named exactly ``ns::name[.overload]``, or None."""
    return _ops.get(qualified_name)


def register_fallback(key: DispatchKey, fn) -> None:
    """Set ``key``'s boxed fallback, ``fn(op, keyset, args, kwargs)``, or FALLTHROUGH."""
    if fn is None:
        _fallbacks.pop(key, None)
    else:
        _fallbacks[key] = fn
    for op in _ops.values():
        op._update()


class OpOverload:
    """One operator overload: schema, tags, semantic hooks and dispatch table.

    >>> import fnx
    >>> op = fnx.ops.aten.add.Tensor
    >>> str(op.schema), "pointwise" in op.tags
    ('add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor', True)
    >>> op(fnx.tensor([1, 2]), fnx.tensor([3, 4]), alpha=2).numpy().tolist()
    [7, 10]
    """

    def __init__(self, schema: FunctionSchema, tags=()):
        self.schema = schema
        self.namespace = schema.namespace
        self.name = schema.name
        self.overload_name = schema.overload_name or "default"
        self.qualname = schema.qualified_name
        self.tags = frozenset(tags)
        self.meta = None             # fn(*args, **kwargs) -> TensorMeta(s) | the written tensor
        self.decomposition = None    # fn(*args, **kwargs) written with fnx ops
        self.derivative = None       # autograd formula (see fnx.autograd)
        self.kernels: dict = {}      # DispatchKey | AliasKey -> kernel | FALLTHROUGH
        self._table = [None] * (NUM_KEYS + 1)   # slot -1: no key left in the keyset
        self._mask = FULL
        self._call = _generate_call(self)
        if self.qualname in _ops:
            raise RuntimeError(f"operator {self.qualname} is already defined")
        _ops[self.qualname] = self
        self._update()

    # -- calling
    def __call__(self, /, *args, **kwargs):
        return self._call(*args, **kwargs)

    def redispatch(self, keyset, /, *args, **kwargs):
        """Call the kernel for the highest key of ``keyset`` (already masked by the caller)."""
        ks = int(keyset) & self._mask
        return self._table[ks.bit_length() - 1](ks, *args, **kwargs)

    def kernel_for(self, key: DispatchKey):
        """The table entry for ``key`` (for tests and tools)."""
        return self._table[key]

    def has_kernel_for(self, key) -> bool:
        """True when a call reaching ``key`` runs something other than the error kernel."""
        return not (self._mask >> int(key) & 1) or \
            not getattr(self._table[key], "_fnx_missing", False)

    # -- registration
    def register(self, key, kernel) -> None:
        """Register ``kernel(keyset, *args, **kwargs)`` for a runtime or alias key."""
        if not isinstance(key, (DispatchKey, AliasKey)):
            raise TypeError(f"{self.qualname}: expected a DispatchKey, got {key!r}")
        self.kernels[key] = kernel
        self._update()

    def unregister(self, key) -> None:
        self.kernels.pop(key, None)
        self._update()

    def _resolve(self, key: DispatchKey):
        k = self.kernels
        if key in k:
            return k[key]
        if key in AUTOGRAD_KEYS and AliasKey.Autograd in k:
            return k[AliasKey.Autograd]
        if key in AUTOCAST_KEYS and AliasKey.Autocast in k:
            return k[AliasKey.Autocast]
        is_backend = key in BACKEND_KEYS
        if is_backend and AliasKey.CompositeExplicitAutograd in k:
            return k[AliasKey.CompositeExplicitAutograd]
        if AliasKey.CompositeImplicitAutograd in k:
            if is_backend:
                return k[AliasKey.CompositeImplicitAutograd]
            backend = _BACKEND_OF_AUTOGRAD.get(key)
            if key in AUTOGRAD_KEYS and (backend is None or backend not in k) and \
                    AliasKey.CompositeExplicitAutograd not in k:
                return k[AliasKey.CompositeImplicitAutograd]
        fb = _fallbacks.get(key)
        if fb is FALLTHROUGH:
            return FALLTHROUGH
        if fb is not None:
            return _boxed(self, fb)
        return _missing(self, key)

    def _update(self) -> None:
        mask = FULL
        for key in KEYS:
            entry = self._resolve(key)
            if entry is FALLTHROUGH:
                mask &= ~(1 << key)
                entry = _missing(self, key)
            self._table[key] = entry
        self._table[NUM_KEYS] = _missing(self, None)
        self._mask = mask
        self._call.__globals__["_m"] = mask

    def registered_keys(self):
        return sorted((k for k, v in self.kernels.items() if v is not FALLTHROUGH),
                      key=lambda k: k.name if isinstance(k, AliasKey) else f"{k.value:03d}")

    def __repr__(self):
        return f"<OpOverload {self.qualname}>"

    def __str__(self):
        return self.qualname

    def __reduce__(self):
        return (get_op, (self.qualname,))


def _boxed(op, fb):
    def boxed(ks, *args, **kwargs):
        return fb(op, DispatchKeySet(ks), args, kwargs)
    return boxed


def _missing(op, key):
    def missing(ks, *args, **kwargs):
        have = ", ".join(k.name for k in op.registered_keys()) or "none"
        if key is None:
            raise NotImplementedError(
                f"There were no tensor arguments to {op.qualname} and no backend to select "
                f"from them; pass device= or a tensor. Kernels exist for: [{have}].")
        raise NotImplementedError(
            f"Could not run '{op.qualname}' with arguments from the '{key.name}' backend: "
            f"no kernel is registered for this key, no composite kernel applies and the key "
            f"has no fallback. '{op.qualname}' has kernels for: [{have}].")
    missing._fnx_missing = True
    return missing


# --------------------------------------------------------------------------- code generation

def _ks_list(xs) -> int:
    ks = 0
    for x in xs:
        if x is not None:
            ks |= x._ks
    return ks


def _bad_arguments(op, values):
    """A tensor argument was not a tensor: raise PyTorch's TypeError naming it."""
    for i, (a, value) in enumerate(zip(op.schema.arguments, values)):
        check_argument_type(op.qualname, i, a, value)
        if a.type.is_tensor and a.type.is_list and value is not None:
            for x in value:
                if x is not None and not hasattr(x, "_ks"):
                    raise TypeError(f"{op.qualname}(): argument '{a.name}' (position {i + 1}) "
                                    f"must be tuple of Tensors, not {type(x).__name__}")
    raise TypeError(f"{op.qualname}(): invalid arguments")


def _generate_call(op: OpOverload):
    """Python for ``op(...)``: bind like the schema, compute the keyset, call the table."""
    s = op.schema
    params, names, pos_call, kw_call, ks_terms = [], [], [], [], []
    env = {"_S": tls.state, "_tbl": op._table, "_m": FULL, "_op": op,
           "_ksl": _ks_list, "_bad": _bad_arguments,
           # an allocation failure (NumPy's MemoryError, XLA's RESOURCE_EXHAUSTED) becomes
           # OutOfMemoryError naming the innermost op; no cost unless something raised
           "_oom": out_of_memory}
    star = False
    first_tensor = True
    scalar_ok = "pointwise" in op.tags
    for i, a in enumerate(s.arguments):
        name = a.name + "_" if keyword.iskeyword(a.name) else a.name
        if a.kwarg_only and not star:
            params.append("*")
            star = True
        if a.has_default:
            env[f"_d{i}"] = a.default
            params.append(f"{name}=_d{i}")
        else:
            params.append(name)
        names.append(name)
        if not a.kwarg_only:
            pos_call.append(name)
        elif name != a.name:    # a keyword-named argument (``from``): pass it unpacked
            kw_call.append(f"**{{{a.name!r}: {name}}}")
        else:
            kw_call.append(f"{a.name}={name}")
        t = a.type
        if not t.is_tensor:
            continue
        if t.is_list:
            ks_terms.append(f"_ksl({name})")
        elif t.optional:
            ks_terms.append(f"({name}._ks if {name} is not None else 0)")
        elif first_tensor or not scalar_ok:
            ks_terms.append(f"{name}._ks")
        else:   # pointwise ops take Python numbers where PyTorch wraps them as 0-dim tensors
            ks_terms.append(f"getattr({name}, '_ks', 0)")
        first_tensor = False
    ks_expr = " | ".join(ks_terms) or "0"
    call_args = ", ".join(["_k"] + pos_call + kw_call)
    fname = f"{s.namespace}_{s.name}_{s.overload_name or 'default'}"
    src = (f"def {fname}({', '.join(params)}):\n"
           f"    try:\n"
           f"        _k = {ks_expr}\n"
           f"    except (AttributeError, TypeError):\n"
           f"        _bad(_op, ({', '.join(names)}{',' if names else ''}))\n"
           f"    _k = (_k | _S.include) & _S.mask & _m\n"
           f"    try:\n"
           f"        return _tbl[_k.bit_length() - 1]({call_args})\n"
           f"    except (MemoryError, RuntimeError) as _e:\n"
           f"        _o = _oom(_e, _op.qualname)\n"
           f"        if _o is None:\n"
           f"            raise\n"
           f"        raise _o from None\n")
    exec(compile(src, f"<fnx op {op.qualname}>", "exec"), env)
    fn = env[fname]
    fn.__qualname__ = op.qualname
    fn.__name__ = op.qualname
    fn._fnx_source = src
    return fn


# --------------------------------------------------------------------------- packets

class OpOverloadPacket:
    """All overloads of one name: ``fnx.ops.aten.add`` with ``.Tensor``, ``.Scalar``, ...

    Calling the packet picks the first overload whose schema accepts the arguments.
    """

    def __init__(self, namespace: str, name: str):
        self._namespace = namespace
        self._name = name
        self._overloads: dict = {}

    def _add(self, op: OpOverload):
        self._overloads[op.overload_name] = op
        setattr(self, op.overload_name, op)

    def overloads(self):
        return list(self._overloads)

    def __getattr__(self, item):
        if item.startswith("__"):
            raise AttributeError(item)
        raise AttributeError(f"'{self._namespace}::{self._name}' has no overload '{item}'; "
                             f"overloads: {self.overloads()}")

    def __call__(self, *args, **kwargs):
        errors = []
        for op in self._overloads.values():
            try:
                op.schema.bind(args, kwargs)
            except TypeError as e:
                errors.append(str(e))
                continue
            return op(*args, **kwargs)
        raise TypeError(f"{self._namespace}::{self._name}() received an invalid combination "
                        f"of arguments:\n  " + "\n  ".join(errors))

    def __repr__(self):
        return f"<OpOverloadPacket {self._namespace}::{self._name}>"


class OpNamespace:
    """``fnx.ops.aten``: attribute access gives ``OpOverloadPacket``s."""

    def __init__(self, name: str):
        self._name = name
        self._packets: dict = {}

    def _packet(self, name: str) -> OpOverloadPacket:
        p = self._packets.get(name)
        if p is None:
            p = self._packets[name] = OpOverloadPacket(self._name, name)
            setattr(self, name, p)
        return p

    def __getattr__(self, item):
        if item.startswith("__"):
            raise AttributeError(item)
        raise AttributeError(f"operator '{self._name}::{item}' does not exist")

    def __iter__(self):
        return iter(self._packets)

    def __repr__(self):
        return f"<OpNamespace {self._name}>"


class _Ops:
    """``fnx.ops``: namespaces by name (``fnx.ops.aten``, ``fnx.ops.prims``, ...)."""

    def __init__(self):
        self._namespaces: dict = {}

    def namespace(self, name: str) -> OpNamespace:
        ns = self._namespaces.get(name)
        if ns is None:
            ns = self._namespaces[name] = OpNamespace(name)
            setattr(self, name, ns)
        return ns

    def __getattr__(self, item):
        if item.startswith("__"):
            raise AttributeError(item)
        raise AttributeError(f"no operator namespace '{item}'")


ops = _Ops()


def define(schema: str, tags=(), namespace: str = "aten") -> OpOverload:
    """Define a new operator from a schema string and make it reachable under ``fnx.ops``."""
    s = parse_schema(schema, namespace)
    op = OpOverload(s, tags)
    ops.namespace(s.namespace)._packet(s.name)._add(op)
    return op
