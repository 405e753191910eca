"""Custom operators: ``fnx.library.custom_op`` and what registers against one.

A custom op is an ordinary ``OpOverload`` (``fnx.ops.<ns>.<name>``), defined from a schema
that is inferred from the function's type hints (or given), so it dispatches through the
keys like a built-in:

- its function is its backend kernel (the ``CPU`` key; ``cuda`` too when ``device_types``
  names it or is None); ``register_kernel(device_type)`` adds or replaces one;
- ``register_fake`` is its meta function: the Meta kernel, so the tracer records it;
- ``register_autograd(backward, setup_context=...)`` is its derivative formula, called the
  PyTorch way (``setup_context(ctx, inputs, output)``, ``backward(ctx, *grads)``);
- ``register_lowering(fn, target="jax")`` is its JAX rule, so it fuses into a compiled
  program. Without one, the op's rule is a ``jax.pure_callback`` that runs its CPU kernel
  on host copies of the operands (shapes from its fake): the program stays one program,
  but XLA cannot fuse across the call, the operands make a round trip through host
  memory, and JAX cannot differentiate it (a compiled function whose outputs require grad
  needs a lowering).
- On the cuda backend an op with no ``cuda`` kernel runs its lowering (or the callback),
  jitted for the device, as every built-in does there.

>>> import fnx, numpy as np
>>> @fnx.library.custom_op("doc_ops::cube", mutates_args=(), device_types="cpu")
... def cube(x: fnx.Tensor) -> fnx.Tensor:
...     return fnx.from_numpy(x.numpy() ** 3)
>>> @cube.register_fake
... def _(x):
...     return fnx.empty_like(x)
>>> fnx.ops.doc_ops.cube(fnx.tensor([1., 2.]))
tensor([1., 8.])
>>> cube._destroy()
"""
from __future__ import annotations

import collections.abc
import inspect
import re
import typing

import jax
import numpy as np

from ..autograd import kernels as _autograd_kernels
from ..backends.cpu import wrap as _cpu_wrap
from ..backends.meta import to_meta
from ..core import dtype as D
from ..core.dispatch_key import AliasKey, DispatchKey
from ..core.meta_array import meta_tensor
from ..core.tensor import Tensor
from ..dispatch import dispatcher as _d
from ..ir.variants import bind_names
from ..keys import inplace_or_view as _inplace_or_view
from ..core.grad_mode import no_grad
from ..graph.tracer import trace
from ..lower.jax import JAX_TARGET
from ..lower.jax_compile import graph_program
from ..ops import aten

__all__ = ["custom_op", "CustomOpDef", "infer_schema", "register_fake", "register_autograd",
           "register_kernel", "register_lowering", "get_custom_op"]

_DEVICE_KEYS = {"cpu": DispatchKey.CPU, "cuda": DispatchKey.CUDA}
_custom_ops: dict = {}      # qualified name -> CustomOpDef
_NAME = re.compile(r"^[A-Za-z_]\w*::[A-Za-z_]\w*$")


# ----------------------------------------------------------------------------- schema

def _is_tensor(t) -> bool:
    return isinstance(t, type) and issubclass(t, Tensor)


def _type_name(hint, where: str) -> str:
    """The schema type of one parameter's type hint."""
    if _is_tensor(hint):
        return "Tensor"
    simple = {int: "int", float: "float", bool: "bool", str: "str"}
    if hint in simple:
        return simple[hint]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union and len(args) == 2 and type(None) in args:
        inner = _type_name(args[0] if args[1] is type(None) else args[1], where)
        return inner + "?"
    if origin in (list, tuple, collections.abc.Sequence, typing.Sequence) and args:
        elem = args[0]
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            raise ValueError(f"{where}: use Sequence[...] or tuple[X, ...], got {hint}")
        if _is_tensor(elem):
            return "Tensor[]"
        if elem in (int, float, bool):
            return simple[elem] + "[]"
    raise ValueError(f"{where}: unsupported type hint {hint!r}; supported: Tensor, "
                     f"Optional[Tensor], Sequence[Tensor], int, float, bool, str, "
                     f"Sequence[int], Sequence[float], Sequence[bool] (and Optional of these)")


def _default(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str):
        return '"' + value.replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_default(v) for v in value) + "]"
    return repr(value)


def _return_type(hint, where: str) -> str:
    if hint is None or hint is type(None):
        return "()"
    if _is_tensor(hint):
        return "Tensor"
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is tuple and args and all(_is_tensor(a) for a in args):
        return "(" + ", ".join("Tensor" for _ in args) + ")"
    if origin in (list, collections.abc.Sequence, typing.Sequence) and args and \
            _is_tensor(args[0]):
        return "Tensor[]"
    raise ValueError(f"{where}: unsupported return type {hint!r}; return Tensor, a tuple of "
                     f"Tensors, a list of Tensors or None")


def infer_schema(fn, *, mutates_args, op_name: str | None = None) -> str:
    """The schema string (without the name) of ``fn`` from its type hints.

    ``mutates_args`` names the tensor arguments ``fn`` writes (``Tensor(a!)``).

    >>> import fnx
    >>> from typing import Optional, Sequence
    >>> def f(x: fnx.Tensor, w: Optional[fnx.Tensor], dims: Sequence[int], p: float = 2.0
    ...       ) -> fnx.Tensor: ...
    >>> infer_schema(f, mutates_args=())
    '(Tensor x, Tensor? w, int[] dims, float p=2.0) -> Tensor'
    """
    where = f"custom_op {op_name or fn.__name__}"
    try:
        hints = typing.get_type_hints(fn)
    except Exception as e:  # an annotation naming something not importable
        raise ValueError(f"{where}: cannot read the type hints: {e}") from None
    sig = inspect.signature(fn)
    mutated = set(mutates_args) if mutates_args != "unknown" else None
    args, star = [], False
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ValueError(f"{where}: *args and **kwargs are not supported")
        if p.name not in hints:
            raise ValueError(f"{where}: parameter '{p.name}' has no type hint")
        t = _type_name(hints[p.name], f"{where}, parameter '{p.name}'")
        writes = mutated is None and t.startswith("Tensor") or \
            mutated is not None and p.name in mutated
        if writes:
            if not t.startswith("Tensor"):
                raise ValueError(f"{where}: mutates_args names '{p.name}', which is not a "
                                 f"Tensor")
            t = "Tensor(" + chr(ord("a") + len([a for a in args if "!" in a])) + "!)" + t[6:]
        if p.kind is p.KEYWORD_ONLY and not star:
            args.append("*")
            star = True
        text = f"{t} {p.name}"
        if p.default is not p.empty:
            text += "=" + _default(p.default)
        args.append(text)
    if mutated is not None:
        unknown = sorted(mutated - set(sig.parameters))
        if unknown:
            raise ValueError(f"{where}: mutates_args names {unknown}, which are not "
                             f"parameters of the function")
    if "return" not in hints:
        raise ValueError(f"{where}: the function needs a return type hint")
    return "(" + ", ".join(args) + ") -> " + _return_type(hints["return"], where)


# ----------------------------------------------------------------------------- the op object

class _Ctx:
    """The ``ctx`` that ``setup_context`` fills and ``backward`` reads (PyTorch's names)."""

    def __init__(self):
        self.saved_tensors = ()
        self.needs_input_grad = ()

    def save_for_backward(self, *tensors):
        self.saved_tensors = tuple(tensors)


class CustomOpDef:
    """What ``custom_op`` returns: call it like the op; register its other pieces on it."""

    def __init__(self, qualname: str, fn, mutates_args, device_types, schema):
        if not isinstance(qualname, str) or not _NAME.match(qualname):
            raise ValueError(f"custom_op: the name must be 'namespace::op_name', got "
                             f"{qualname!r}")
        if mutates_args is None or isinstance(mutates_args, str) and mutates_args != "unknown":
            raise ValueError(f"custom_op {qualname}: mutates_args must be an iterable of "
                             f"argument names (or 'unknown'), got {mutates_args!r}")
        ns, name = qualname.split("::")
        if ns in ("aten", "prims"):
            raise RuntimeError(f"custom_op {qualname}: the namespace '{ns}' is fnx's own")
        if _d.find_op(qualname) is not None:
            raise RuntimeError(f"custom_op: operator {qualname} is already defined")
        if schema is None:
            schema = infer_schema(fn, mutates_args=mutates_args, op_name=qualname)
        elif not schema.startswith("("):
            raise ValueError(f"custom_op {qualname}: an explicit schema starts at its argument "
                             f"list, as '(Tensor x) -> Tensor', got {schema!r}")
        self._qualname = qualname
        self._init_fn = fn
        self._op = _d.define(name + schema, (), ns)
        _inplace_or_view.register_op(self._op)
        self._op.custom = self
        self._fake = None
        self._lowering = None
        self._backward = None
        _custom_ops[qualname] = self
        self._functional = _functional_companion(self) if self._op.schema.is_mutable else None
        JAX_TARGET.rules[self._op] = _with_registered_backward(self, _callback_rule(self._op))
        if device_types is None:
            device_types = ("cpu", "cuda")
        self.register_kernel(device_types, fn)
        self.__name__ = name
        self.__doc__ = fn.__doc__ if fn is not None else None

    # -- calling
    def __call__(self, *args, **kwargs):
        return self._op(*args, **kwargs)

    @property
    def _opoverload(self):
        return self._op

    @property
    def schema(self):
        return self._op.schema

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    # -- registration
    def register_kernel(self, device_types, fn=None):
        """The kernel of this op for ``device_types`` (``"cpu"``, ``"cuda"`` or a sequence)."""
        def deco(f):
            types = (device_types,) if isinstance(device_types, str) else tuple(device_types)
            for t in types:
                if t not in _DEVICE_KEYS:
                    raise ValueError(f"{self._qualname}: unknown device type {t!r}; one of "
                                     f"{sorted(_DEVICE_KEYS)}")
                self._op.register(_DEVICE_KEYS[t], lambda ks, *a, _f=f, **k: _f(*a, **k))
            return f
        return deco(fn) if fn is not None else deco

    def register_fake(self, fn=None):
        """The op's meta function: called with meta tensors, it returns tensors (as
        ``fnx.empty_like(x)``) of the output shapes and dtypes. The tracer uses it."""
        def deco(f):
            self._fake = f
            self._op.meta = f
            self._op.register(DispatchKey.Meta,
                              lambda ks, *a, **k: to_meta(f(*a, **k)))
            return f
        return deco(fn) if fn is not None else deco

    def register_autograd(self, backward, *, setup_context=None):
        """Gradients: ``setup_context(ctx, inputs, output)`` saves what ``backward(ctx,
        *grads)`` needs; backward returns one gradient per input (None for non-tensors).
        Both run at backward time, on the inputs and output autograd saved."""
        if self._op.schema.is_mutable:
            raise RuntimeError(f"{self._qualname}: register_autograd on an op that mutates "
                               f"its arguments is not supported")
        self._backward = (backward, setup_context)
        self._op.derivative = _formula(self._op, backward, setup_context)
        self._op.unregister(AliasKey.Autograd)
        _autograd_kernels.register_op(self._op)

    def register_lowering(self, fn=None, *, target: str = "jax"):
        """The op's rule for a lowering target (``"jax"``: a function of JAX arrays and the
        op's non-tensor arguments, returning arrays), so compiled programs fuse it."""
        if target != "jax":
            raise ValueError(f"{self._qualname}: register_lowering supports target='jax', "
                             f"got {target!r}")

        def deco(f):
            self._lowering = f
            # an op that writes its arguments is lowered as its functional companion: the
            # rule returns the op's outputs, then the new value of each written argument
            fop = self._functional
            JAX_TARGET.rules[fop or self._op] = \
                _with_registered_backward(self, f) if fop is None else \
                _flattened_rule(f) if fop.flat_writes else f
            return f
        return deco(fn) if fn is not None else deco

    def _destroy(self) -> None:
        """Remove the op (tests; PyTorch's ``Library._destroy``)."""
        _custom_ops.pop(self._qualname, None)
        for op in (self._op, self._functional):
            if op is None:
                continue
            JAX_TARGET.rules.pop(op, None)
            _d._ops.pop(op.qualname, None)
            ns = _d.ops.namespace(op.namespace)
            ns._packets.pop(op.name, None)
            if op.name in ns.__dict__:
                delattr(ns, op.name)


def _formula(op, backward, setup_context):
    """``op.derivative`` calling ``setup_context``/``backward`` the PyTorch way."""
    names = [a.name for a in op.schema.arguments]
    tensor_at = [i for i, a in enumerate(op.schema.arguments) if a.type.is_tensor]

    def formula(**kw):
        grads, result = kw.pop("grads"), kw.pop("result")
        outs = result if isinstance(result, (tuple, list)) else (result,)
        grads = tuple(aten.zeros_like.default(o) if g is None else g
                      for g, o in zip(grads, outs))
        ctx = _Ctx()
        ctx.needs_input_grad = tuple(isinstance(kw[n], Tensor) and kw[n].requires_grad
                                     for n in names)
        if setup_context is not None:
            setup_context(ctx, tuple(kw[n] for n in names), result)
        res = backward(ctx, *grads)
        if not isinstance(res, (tuple, list)) or len(names) == 1 and not isinstance(res, tuple):
            res = (res,)
        if len(res) != len(names):
            raise RuntimeError(f"{op.qualname}: backward returned {len(res)} gradient(s); "
                               f"expected one per input ({len(names)}: {names})")
        return tuple(res[i] for i in tensor_at)

    formula.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY)
         for n in names + ["grads", "result"]])
    formula.__name__ = f"{op.name}_backward"
    return formula


# ----------------------------------------------------------------------------- writing ops

def _one_or_tuple(values):
    return values[0] if len(values) == 1 else values


def _functional_companion(custom):
    """``ns::<name>_functional`` for an op that writes its arguments: the same arguments,
    unwritten, returning the op's outputs and then the new value of each written argument
    (its kernel runs the op on copies). The writing op's decomposition calls it and copies
    the new values in, so the tracer and the cuda backend's functionalization handle the
    op like a built-in in-place op; eager calls still run the kernel itself.

    Where a written argument is a ``Tensor[]`` or a ``Tensor?`` the companion returns one
    flat ``Tensor[]``: the outputs, then each written tensor's new value (a list's in order,
    none for an absent optional), as PyTorch's auto-functionalization flattens them."""
    op = custom._op
    written = [a for a in op.schema.arguments if a.is_write]
    flat = any(a.type.is_list or a.type.optional for a in written)
    if flat and any(r.type.is_list or r.type.optional for r in op.schema.returns):
        return None     # lists on both sides: compiled programs cannot call the op
    names = [a.name for a in written]
    args = ", ".join(str(a).replace(f"({a.type.alias})", "") if a.is_write else str(a)
                     for a in op.schema.arguments)
    rets = [str(r.type) for r in op.schema.returns] + ["Tensor"] * len(written)
    ret = "Tensor[]" if flat else rets[0] if len(rets) == 1 else "(" + ", ".join(rets) + ")"
    fop = _d.define(f"{op.name}_functional({args}) -> {ret}", (), op.namespace)
    n_out = len(op.schema.returns)

    def present(value):
        """The written tensors of one argument's value (a list's, none for None)."""
        return [] if value is None else list(value) if isinstance(value, (list, tuple)) \
            else [value]

    def on_copies(*args, **kwargs):
        bound = bind_names(op, args, kwargs)
        copies = {n: _map(bound[n], lambda t: t.clone() if isinstance(t, Tensor) else t)
                  for n in names}
        pos = [copies.get(a.name, bound[a.name]) for a in op.schema.arguments
               if not a.kwarg_only and a.name in bound]
        kw = {a.name: copies.get(a.name, bound[a.name]) for a in op.schema.arguments
              if a.kwarg_only and a.name in bound}
        return pos, kw, [t for n in names for t in present(copies[n])]

    def pack(outs, news):
        return [*outs, *news] if flat else _one_or_tuple((*outs, *news))

    def kernel(ks, *args, **kwargs):
        pos, kw, news = on_copies(*args, **kwargs)
        out = op.redispatch(1 << DispatchKey.CPU, *pos, **kw)
        outs = () if n_out == 0 else tuple(out) if n_out > 1 else (out,)
        return pack(outs, news)

    def fake(*args, **kwargs):
        bound = bind_names(op, args, kwargs)
        out = custom._fake(*args, **kwargs) if n_out and custom._fake is not None else None
        if n_out and out is None:
            raise NotImplementedError(f"{op.qualname} returns tensors: register_fake")
        outs = () if n_out == 0 else tuple(out) if n_out > 1 else (out,)
        return pack(outs, [aten.empty_like.default(t) for n in names
                           for t in present(bound[n])])

    def decomposition(*args, **kwargs):
        bound = bind_names(op, args, kwargs)
        res = fop(*args, **kwargs)
        res = res if isinstance(res, (tuple, list)) else (res,)
        targets = [t for n in names for t in present(bound[n])]
        for t, new in zip(targets, res[n_out:]):
            t.copy_(new)
        return None if n_out == 0 else res[0] if n_out == 1 else tuple(res[:n_out])

    fop.register(DispatchKey.CPU, kernel)
    fop.meta = fake
    fop.register(DispatchKey.Meta, lambda ks, *a, **k: to_meta(fake(*a, **k)))
    _inplace_or_view.register_op(fop)
    fop.custom = custom
    fop.flat_writes = flat
    JAX_TARGET.rules[fop] = _callback_rule(fop)
    op.decomposition = decomposition
    return fop


def _flattened_rule(f):
    """A user's rule for a writing op (outputs, then each written argument's new value: a
    list of arrays for a ``Tensor[]``, None for an absent ``Tensor?``) as the flat list the
    functional companion returns."""
    def rule(*args, **kwargs):
        res = f(*args, **kwargs)
        res = res if isinstance(res, (tuple, list)) else (res,)
        return [a for r in res for a in (r if isinstance(r, (tuple, list)) else
                                         () if r is None else (r,))]
    rule.__name__ = getattr(f, "__name__", "rule")
    return rule


# ----------------------------------------------------------------------------- compiled autograd

class _Leaf:
    """Stands for the ``i``-th array operand while binding a rule's arguments by name."""
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


def _with_registered_backward(custom, rule):
    """``rule`` (a JAX rule of ``custom``'s op) whose derivative, once ``register_autograd``
    gave one, is the registered backward rather than JAX's derivative of the rule: a
    ``jax.custom_vjp`` whose backward is the formula traced (it is made of fnx ops) and
    lowered. So a compiled program's backward (``jax.vjp``) computes what eager autograd
    computes, even where the registered backward is not the rule's true derivative (a
    straight-through estimator), and an op lowered as a callback is differentiable."""
    op = custom._op

    def wrapped(*args, **kwargs):
        if custom._backward is None:
            return rule(*args, **kwargs)
        flat = _leaves((args, kwargs), [])
        it = iter(range(len(flat)))
        bound = bind_names(op, *_map((args, kwargs),
                                     lambda x: _Leaf(next(it)) if _is_array(x) else x))
        names = {v.i: n for n, v in bound.items() if isinstance(v, _Leaf)}
        if not flat or len(names) != len(flat):
            return rule(*args, **kwargs)    # an array inside a list: JAX's derivative

        def rebuild(arrays):
            it = iter(arrays)
            return _map((args, kwargs), lambda x: next(it) if _is_array(x) else x)

        @jax.custom_vjp
        def call(*arrays):
            a, k = rebuild(arrays)
            return rule(*a, **k)

        def fwd(*arrays):
            out = call(*arrays)
            return out, (arrays, out)

        def bwd(res, cts):
            arrays, out = res
            return _registered_vjp(op, bound, names, arrays, out, cts)
        call.defvjp(fwd, bwd)
        return call(*flat)
    wrapped.__name__ = getattr(rule, "__name__", "rule")
    wrapped.host_callback = getattr(rule, "host_callback", False)
    return wrapped


def _registered_vjp(op, bound, names, arrays, out, cts):
    """The operands' cotangents from ``op.derivative`` (the registered backward), traced on
    meta tensors of the operands' shapes and lowered to one JAX program."""
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    cts = list(cts) if isinstance(cts, (tuple, list)) else [cts]
    live = [i for i, c in enumerate(cts) if np.dtype(c.dtype) != jax.dtypes.float0]

    def meta(x, grad=False):
        t = meta_tensor(tuple(x.shape), D.from_numpy_dtype(np.dtype(x.dtype)))
        return t.requires_grad_(True) if grad and (t.dtype.is_floating_point or
                                                   t.dtype.is_complex) else t
    inputs = [meta(a, grad=True) for a in arrays]
    n_in, n_out = len(arrays), len(outs)
    several = len(op.schema.returns) > 1
    missing = []

    def backward(*ts):
        kw = {n: v for n, v in bound.items() if not isinstance(v, _Leaf)}
        kw.update({names[i]: ts[i] for i in range(n_in)})
        res = ts[n_in:n_in + n_out]
        grads = [None] * n_out
        for j, i in enumerate(live):
            grads[i] = ts[n_in + n_out + j]
        with no_grad():
            got = op.derivative(**kw, grads=tuple(grads),
                                result=tuple(res) if several else res[0])
        tensor_names = [a.name for a in op.schema.arguments if a.type.is_tensor]
        by_name = dict(zip(tensor_names, got))
        picked = [by_name.get(names[i]) for i in range(n_in)]
        missing[:] = [g is None for g in picked]
        return [g for g in picked if g is not None]
    g = trace(backward, *inputs, *[meta(o) for o in outs], *[meta(cts[i]) for i in live],
              decompose_to="prims")
    program, out_nodes = graph_program(JAX_TARGET, g)
    with jax.enable_x64(True):
        values = iter(program(*arrays, *outs, *[cts[i] for i in live])[:len(out_nodes)])
    result = []
    for a, none in zip(arrays, missing):
        float_like = np.issubdtype(np.dtype(a.dtype), np.inexact)
        if none or not float_like:
            if not none:
                next(values)
            result.append(jax.numpy.zeros(a.shape, a.dtype) if float_like else
                          np.zeros(a.shape, jax.dtypes.float0))
        else:
            result.append(jax.numpy.asarray(next(values)).astype(a.dtype))
    return tuple(result)


# ----------------------------------------------------------------------------- pure_callback rule

def _is_array(x) -> bool:
    return isinstance(x, jax.Array)


def _map(value, fn):
    if isinstance(value, (list, tuple)):
        return type(value)(_map(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    return fn(value)


def _leaves(value, out):
    if isinstance(value, (list, tuple)):
        for v in value:
            _leaves(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _leaves(v, out)
    elif _is_array(value):
        out.append(value)
    return out


def _callback_rule(op):
    """The JAX rule of a custom op with no lowering: a ``jax.pure_callback`` running its
    CPU kernel; the result shapes come from its fake (meta function)."""
    def rule(*args, **kwargs):
        if op.meta is None:
            raise NotImplementedError(
                f"{op.qualname} has no lowering and no fake: register_lowering (so it fuses) "
                f"or register_fake (so a compiled program can call its kernel back)")

        def as_meta(x):
            if _is_array(x):
                return meta_tensor(tuple(x.shape), D.from_numpy_dtype(np.dtype(x.dtype)))
            return x
        out = to_meta(op.meta(*_map(args, as_meta), **_map(kwargs, as_meta)))
        outs = out if isinstance(out, (tuple, list)) else (out,)
        shapes = [jax.ShapeDtypeStruct(tuple(o.shape), o.dtype.numpy) for o in outs]
        flat = _leaves((args, kwargs), [])

        def host(*arrays):
            it = iter(arrays)

            def as_tensor(x):
                if _is_array(x):
                    a = np.array(next(it))
                    return _cpu_wrap(a, D.from_numpy_dtype(a.dtype))
                return x
            a2, k2 = _map(args, as_tensor), _map(kwargs, as_tensor)
            res = op.redispatch(1 << DispatchKey.CPU, *a2, **k2)
            res = res if isinstance(res, (tuple, list)) else (res,)
            return [np.asarray(r.numpy(), dtype=s.dtype) for r, s in zip(res, shapes)]

        res = jax.pure_callback(host, shapes, *flat, vmap_method="sequential")
        return res[0] if not isinstance(out, (tuple, list)) else tuple(res)
    rule.__name__ = f"{op.name}_callback"
    rule.host_callback = True       # fnx.export refuses it: StableHLO cannot call Python
    return rule


# ----------------------------------------------------------------------------- by name

def custom_op(name: str, fn=None, /, *, mutates_args, device_types=None, schema=None):
    """Define an operator ``name`` (``"namespace::op"``) from a Python function.

    The schema is inferred from ``fn``'s type hints unless ``schema`` gives it
    (``"(Tensor x, float p) -> Tensor"``); ``mutates_args`` names the tensor arguments
    ``fn`` writes (``()`` for none). ``device_types`` (``"cpu"``, ``"cuda"``, a sequence, or
    None for both) says which backends run ``fn``. Usable as a decorator; returns a
    ``CustomOpDef``, and the op is also ``fnx.ops.<namespace>.<op>``.

    >>> import fnx
    >>> @fnx.library.custom_op("doc_ops::add_one", mutates_args=())
    ... def add_one(x: fnx.Tensor) -> fnx.Tensor:
    ...     return x + 1
    >>> add_one(fnx.tensor([1., 2.])), str(add_one.schema)
    (tensor([2., 3.]), 'add_one(Tensor x) -> Tensor')
    >>> add_one._destroy()
    """
    def inner(f):
        return CustomOpDef(name, f, mutates_args, device_types, schema)
    return inner(fn) if fn is not None else inner


def get_custom_op(op) -> CustomOpDef:
    """The ``CustomOpDef`` of ``op`` (itself, its OpOverload, its packet or its name)."""
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, _d.OpOverloadPacket):
        op = op.default
    if isinstance(op, _d.OpOverload):
        op = op.qualname
    if isinstance(op, str):
        found = _custom_ops.get(op.replace(".default", ""))
        if found is not None:
            return found
    raise ValueError(f"{op!r} is not a custom op defined with fnx.library.custom_op")


def register_fake(op, fn=None):
    """``fnx.library.register_fake("ns::op")``: see ``CustomOpDef.register_fake``."""
    return get_custom_op(op).register_fake(fn)


def register_autograd(op, backward, *, setup_context=None):
    """``fnx.library.register_autograd("ns::op", backward, setup_context=...)``."""
    return get_custom_op(op).register_autograd(backward, setup_context=setup_context)


def register_kernel(op, device_types, fn=None):
    """``fnx.library.register_kernel("ns::op", "cuda")``: see ``CustomOpDef.register_kernel``."""
    return get_custom_op(op).register_kernel(device_types, fn)


def register_lowering(op, fn=None, *, target: str = "jax"):
    """``fnx.library.register_lowering("ns::op", target="jax")``: the op's JAX rule."""
    return get_custom_op(op).register_lowering(fn, target=target)
