"""The Autograd keys' kernels, built from each op's derivative formula.

``install()`` gives every op one entry at the ``Autograd`` alias key:

- a formula (``op.derivative``): run the op below autograd, then record an ``OpNode`` that
  saves what the formula names and calls it on backward (a ``ByArgument`` derivative: the
  formula of the call's argument value);
- an in-place op (``mul_``) uses its functional twin's formula, rebinds ``self``'s history
  (through the view's base when ``self`` is a view, see ``views.py``);
- ``out=`` ops refuse inputs that require grad, as PyTorch does;
- ``NONDIFFERENTIABLE``: falls through (outputs never require grad);
- everything else reaches the boxed fallback: differentiate through the op's decomposition,
  or record a node that raises at backward time naming the op.
"""
from __future__ import annotations

import inspect

from ..core import tls
from ..core.dispatch_key import AUTOGRAD_BITS, AUTOGRAD_KEYS, AliasKey, DispatchKey, below
from ..dispatch.dispatcher import FALLTHROUGH, all_ops, register_fallback
from ..ir.registry import NONDIFFERENTIABLE, ByArgument
from ..ir.variants import functional_variant
from ..ops import aten, prims
from .graph import FREED, Node, SavedTensor, ag_bit
from .history import edge_of, rebase_history
import math

__all__ = ["install", "OpNode"]

BELOW = below(DispatchKey.AutogradOther)
_SPECIAL = ("grad", "grads", "result", "needs_input_grad")


def _special(name: str) -> bool:
    """``resultN`` names one output only (so only it is saved); ``<arg>_shape`` and
    ``<arg>_meta`` ((shape, dtype, device)) describe a tensor argument without saving it."""
    return name in _SPECIAL or (name.startswith("result") and name[6:].isdigit()) or \
        name.endswith("_shape") or name.endswith("_meta")


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.strip("_").split("_"))


class _Spec:
    """What the kernel and node of one op need, computed once from schema and formula."""

    def __init__(self, op, formula, inplace):
        s = op.schema
        self.op = op
        self.formula = formula
        self.pos = [a.name for a in s.arguments if not a.kwarg_only]
        self.kw = [a.name for a in s.arguments if a.kwarg_only]
        self.defaults = {a.name: a.default for a in s.arguments if a.has_default}
        self.tensor_args = [(a.name, a.type.is_list) for a in s.arguments if a.type.is_tensor
                            and not (a.is_write and a.name != "self")]
        params = inspect.signature(formula).parameters
        names = {a.name for a in s.arguments}
        self.wants = tuple(p for p in params if p in names or _special(p))
        unknown = [p for p in params if p not in names and not _special(p)
                   and params[p].default is inspect.Parameter.empty]
        if unknown:
            raise TypeError(f"derivative of {op.qualname}: unknown parameter(s) {unknown}; "
                            f"use schema argument names or {_SPECIAL}")
        self.tensor_names = {n for n, _ in self.tensor_args}
        self.meta_names = {p for p in self.wants if p not in names and
                           (p.endswith("_shape") or p.endswith("_meta"))}
        bad = [p for p in self.meta_names if p.rpartition("_")[0] not in self.tensor_names]
        if bad:
            raise TypeError(f"derivative of {op.qualname}: {bad} name no tensor argument")
        self.inplace = inplace
        self.is_view = any(r.type.alias is not None and not r.type.alias.is_write
                           for r in s.returns)
        self.node_name = _camel(op.name) + "Backward0"

    def bind(self, args, kwargs):
        if len(args) == len(self.pos) and len(kwargs) == len(self.kw):
            vals = dict(zip(self.pos, args))
            vals.update(kwargs)
            return vals
        vals = dict(self.defaults)
        vals.update(zip(self.pos, args))
        vals.update(kwargs)
        return vals


class _Choice:
    """The specs of an op whose formula depends on an argument's value (``ByArgument``):
    ``pick(vals)`` is the spec of one call (all share the schema, so binding is alike)."""

    def __init__(self, op, by, inplace):
        self.arg = by.arg
        self.op = op
        made, self.specs = {}, {}       # one spec per distinct formula
        for value, f in by.formulas.items():
            if id(f) not in made:
                made[id(f)] = _Spec(op, f, inplace)
            self.specs[value] = made[id(f)]
        first = next(iter(self.specs.values()))
        self.bind, self.tensor_args = first.bind, first.tensor_args

    def pick(self, vals):
        spec = self.specs.get(vals[self.arg])
        if spec is None:
            raise RuntimeError(f"{self.op.qualname}: no derivative formula for "
                               f"{self.arg}={vals[self.arg]!r}")
        return spec


def _spec(op, formula, inplace):
    if isinstance(formula, ByArgument):
        return _Choice(op, formula, inplace)
    return _Spec(op, formula, inplace)


def _is_float(t) -> bool:
    d = t._dtype
    return d.is_floating_point or d.is_complex


def _save(spec, vals, self_clone):
    saved = {}
    for name in spec.wants:
        if name in spec.meta_names or (_special(name) and name not in vals):
            continue
        v = vals[name]
        if name in spec.tensor_names:
            if name == "self" and self_clone is not None:
                v = self_clone
            if isinstance(v, (list, tuple)):
                v = [SavedTensor(x) if x is not None else None for x in v]
            elif hasattr(v, "_ks"):
                v = SavedTensor(v)
        saved[name] = v
    return saved


def _edges(spec, vals, self_edge=None):
    edges, metas, needs, counts = [], [], [], {}
    for name, is_list in spec.tensor_args:
        v = vals[name]
        if is_list:
            counts[name] = len(v)
            es = [edge_of(x) if x is not None else None for x in v]
            edges.extend(es)
            metas.extend((x.shape, x._dtype, x._device) if x is not None else None for x in v)
            needs.append(any(e is not None for e in es))
        elif not hasattr(v, "_ks"):     # None, or a Python number in a pointwise op
            edges.append(None)
            metas.append(None)
            needs.append(False)
            continue
        else:
            e = self_edge if name == "self" and spec.inplace else edge_of(v)
            edges.append(e)
            metas.append((v.shape, v._dtype, v._device))
            needs.append(e is not None)
    return edges, metas, needs, counts


def _flat_outputs(out):
    if isinstance(out, (tuple, list)):
        flat = []
        for o in out:
            if isinstance(o, (tuple, list)):
                flat.extend(o)
            else:
                flat.append(o)
        return flat
    return [out]


class OpNode(Node):
    """The backward of one op call: its formula plus what the formula needs."""
    __slots__ = ("spec", "saved", "in_meta", "out_meta", "outs", "needs", "counts")

    def name(self) -> str:
        return self.spec.node_name

    @property
    def num_outputs(self):
        return len(self.out_meta)

    def release(self):
        self.saved = None
        self.outs = None

    def apply(self, grads, create_graph):
        saved = self.saved
        if saved is None:
            raise RuntimeError(FREED)
        spec = self.spec
        kw = {}
        for name in spec.wants:
            if name == "grad":
                g = grads[0]
                kw["grad"] = g if g is not None else _zeros(self.out_meta[0])
            elif name == "grads":
                kw["grads"] = tuple(grads)
            elif name == "result":
                outs = [s.unpack(self) if s is not None else None for s in self.outs]
                kw["result"] = outs[0] if self.single_output() else \
                    (outs if self._list_output() else tuple(outs))
            elif name == "needs_input_grad":
                kw["needs_input_grad"] = self.needs
            elif name.startswith("result") and name not in saved:
                s = self.outs[int(name[6:])]
                kw[name] = s.unpack(self) if s is not None else None
            elif name in spec.meta_names:
                kw[name] = self._arg_meta(name)
            else:
                v = saved[name]
                if isinstance(v, SavedTensor):
                    v = v.unpack(self)
                elif isinstance(v, list) and v and isinstance(v[0], (SavedTensor, type(None))) \
                        and name in spec.tensor_names:
                    v = [s.unpack(self) if s is not None else None for s in v]
                kw[name] = v
        res = spec.formula(**kw)
        if len(spec.tensor_args) == 1:
            # One tensor argument: the formula may return its gradient bare, or a tuple
            # whose first entry is it (a formula shared by .Tensor and .Scalar overloads).
            if spec.tensor_args[0][1]:
                res = (res[0],) if isinstance(res, tuple) and len(res) == 1 and \
                    isinstance(res[0], (list, tuple)) else (res,)
            else:
                res = (res[0],) if isinstance(res, tuple) else (res,)
        flat = []
        for (name, is_list), r in zip(spec.tensor_args, res):
            if is_list:
                flat.extend(r if r is not None else [None] * self.counts[name])
            else:
                flat.append(r)
        out = []
        for g, e, m in zip(flat, self.next_edges, self.in_meta):
            if e is None or g is None:
                out.append(None)
                continue
            out.append(_match(g, m, self))
        return out

    def _arg_meta(self, name):
        arg, _, what = name.rpartition("_")
        i = 0
        for n, is_list in self.spec.tensor_args:
            k = self.counts[n] if is_list else 1
            if n == arg:
                metas = self.in_meta[i:i + k]
                pick = (lambda m: None if m is None else tuple(m[0])) if what == "shape" \
                    else (lambda m: m)
                return [pick(m) for m in metas] if is_list else pick(metas[0])
            i += k
        raise TypeError(f"{self.spec.op.qualname}: no tensor argument {arg!r}")

    def single_output(self):
        return len(self.out_meta) == 1 and not self._list_output()

    def _list_output(self):
        r = self.spec.op.schema.returns
        return len(r) == 1 and r[0].type.is_list


def _zeros(meta):
    shape, dtype, device = meta
    return aten.zeros.default(list(shape), dtype=dtype, device=device)


def _match(g, meta, node):
    """Sum broadcast dimensions away and cast to the input's dtype."""
    shape, dtype, _ = meta
    gs = tuple(g.shape)
    if gs != tuple(shape):
        g = _sum_to(g, tuple(shape), node)
    if g._dtype is not dtype:
        if g._dtype.is_complex and not dtype.is_complex:
            g = prims.real(g)
        g = g.to(dtype)
    return g


def _sum_to(g, shape, node):
    gs = tuple(g.shape)
    lead = len(gs) - len(shape)
    if lead < 0:
        raise RuntimeError(f"Function {node.name()} returned an invalid gradient: got shape "
                           f"{list(gs)}, expected {list(shape)}")
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape)
                                if s == 1 and gs[lead + i] != 1]
    if dims:
        g = aten.sum.dim_IntList(g, dims, True)
    if lead or tuple(g.shape) != shape:
        if g.numel() != math.prod(shape):
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient: got shape "
                               f"{list(gs)}, expected {list(shape)}")
        g = aten.reshape.default(g, list(shape))
    return g




def _record(spec, vals, out, self_edge=None, self_clone=None):
    """Make the node for a call whose outputs are ``out``; mark the outputs."""
    edges, metas, needs, counts = _edges(spec, vals, self_edge)
    if not any(e is not None for e in edges):
        return None
    node = OpNode(edges)
    node.spec = spec
    node.in_meta = metas
    node.needs = tuple(needs)
    node.counts = counts
    node.saved = _save(spec, vals, self_clone)
    flat = _flat_outputs(out)
    node.out_meta = [(o.shape, o._dtype, o._device) for o in flat]
    want_all = "result" in spec.wants
    wanted = None if want_all else {int(n[6:]) for n in spec.wants if n.startswith("result")}
    want_result = want_all or bool(wanted)
    saved_outs = [] if want_result else None
    for i, o in enumerate(flat):
        if o._base is not None and not spec.is_view and not spec.inplace:
            # A non-view op whose kernel (an explicit decomposition) returned a view of one
            # of its own temporaries: the output is a fresh tensor to autograd.
            o._base, o._view_chain, o._vc = None, (), None
        if want_result and not want_all and i not in wanted:
            saved_outs.append(None)
            if _is_float(o) and not (spec.inplace and i == 0):
                o._ks |= ag_bit(o._ks)
                o.grad_fn = node
                o._output_nr = i
            continue
        if _is_float(o):
            if want_result:
                a = type(o)._make(o._data, o._dtype, o._device, o._ks & ~AUTOGRAD_BITS)
                a._vc = o._shared_version_counter()
                saved_outs.append(SavedTensor(a, node, i))
            if not (spec.inplace and i == 0):
                o._ks |= ag_bit(o._ks)
                o.grad_fn = node
                o._output_nr = i
        elif want_result:
            saved_outs.append(SavedTensor(o))
    node.outs = saved_outs
    return node


def _needs_grad(spec, vals):
    for name, is_list in spec.tensor_args:
        v = vals[name]
        if is_list:
            if any(x is not None and x._ks & AUTOGRAD_BITS for x in v):
                return True
        elif getattr(v, "_ks", 0) & AUTOGRAD_BITS:
            return True
    return False


def _functional_kernel(op, spec):
    redispatch = op.redispatch
    pick = getattr(spec, "pick", None)

    def kernel(ks, *args, **kwargs):
        out = _below(redispatch, ks, args, kwargs)
        vals = spec.bind(args, kwargs)
        if _needs_grad(spec, vals):
            _record(spec if pick is None else pick(vals), vals, out)
        return out
    return kernel


def _below(redispatch, ks, args, kwargs):
    """Run the op below autograd with the Autograd keys excluded, so ops a backend kernel
    calls (an explicit decomposition) do not record nodes of their own."""
    state = tls.state
    saved = state.mask
    state.mask = saved & ~AUTOGRAD_BITS
    state.below_autograd += 1
    try:
        return redispatch(ks & BELOW, *args, **kwargs)
    finally:
        state.mask = saved
        state.below_autograd -= 1


def _inplace_kernel(op, spec):
    redispatch = op.redispatch
    pick = getattr(spec, "pick", None)

    def kernel(ks, *args, **kwargs):
        vals = spec.bind(args, kwargs)
        if not _needs_grad(spec, vals):
            return redispatch(ks & BELOW, *args, **kwargs)
        call_spec = spec if pick is None else pick(vals)
        self = vals["self"]
        check_inplace(self, op)
        self_edge = edge_of(self)
        self_clone = self.clone() if "self" in call_spec.wants else None
        out = _below(redispatch, ks, args, kwargs)
        node = _record(call_spec, vals, out, self_edge, self_clone)
        if node is not None:
            rebase_history(self, node)
        return out
    return kernel


def check_inplace(self, op):
    if self._ks & AUTOGRAD_BITS and self.grad_fn is None and self._base is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           f"operation ({op.qualname}).")
    base = self._base
    if base is not None and base._ks & AUTOGRAD_BITS and base.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           f"in-place operation ({op.qualname}).")


def _out_kernel(op):
    redispatch = op.redispatch
    tensor_names = [a.name for a in op.schema.arguments if a.type.is_tensor and not a.is_write]
    pos = [a.name for a in op.schema.arguments if not a.kwarg_only]

    def kernel(ks, *args, **kwargs):
        vals = dict(zip(pos, args))
        vals.update(kwargs)
        for n in tensor_names:
            v = vals.get(n)
            vs = v if isinstance(v, (list, tuple)) else (v,)
            if any(x is not None and hasattr(x, "_ks") and x._ks & AUTOGRAD_BITS for x in vs):
                raise RuntimeError(f"{op.name}(): functions with out=... arguments don't support "
                                   f"automatic differentiation, but one of the arguments "
                                   f"requires grad.")
        return redispatch(ks & BELOW, *args, **kwargs)
    return kernel


class NotDifferentiable(Node):
    """Recorded for an op with neither a formula nor a decomposition: fails on backward."""
    __slots__ = ("opname", "num_outputs")

    def name(self):
        return "NotImplemented"

    def apply(self, grads, create_graph):
        raise RuntimeError(f"the derivative for '{self.opname}' is not implemented: it has no "
                           f"derivative formula and no decomposition to differentiate through")


def _fallback(op, ks, args, kwargs):
    """Ops with no formula: differentiate through the decomposition, else refuse at backward."""
    if op.decomposition is not None:
        return op.decomposition(*args, **kwargs)
    out = _below(op.redispatch, int(ks), args, kwargs)
    ins = [x for x in _flat_outputs(list(args) + list(kwargs.values()))
           if hasattr(x, "_ks") and x._ks & AUTOGRAD_BITS]
    outs = [o for o in _flat_outputs(out) if hasattr(o, "_ks") and _is_float(o)]
    if ins and outs:
        node = NotDifferentiable([edge_of(x) for x in ins])
        node.opname = op.qualname
        node.num_outputs = len(outs)
        for i, o in enumerate(outs):
            if any(o is x for x in ins):
                continue
            o._ks |= ag_bit(o._ks)
            o.grad_fn = node
            o._output_nr = i
    return out


def _no_gradient(op):
    """A formula giving none of ``op``'s tensor arguments a gradient."""
    n = sum(1 for a in op.schema.arguments if a.type.is_tensor)

    def no_gradient():
        return (None,) * n if n > 1 else None
    return no_gradient


def _written(op):
    return [a.name for a in op.schema.arguments if a.is_write]


def register_op(op) -> None:
    """Give ``op`` its Autograd kernel from its (or its functional twin's) formula."""
    if any(k in op.kernels for k in AUTOGRAD_KEYS) or AliasKey.Autograd in op.kernels:
        return
    f = op.derivative
    written = _written(op)
    if f is NONDIFFERENTIABLE:
        op.register(AliasKey.Autograd, FALLTHROUGH)
        return
    if written and written != ["self"] and ("out" in written or any(
            a.kwarg_only and a.is_write for a in op.schema.arguments)):
        op.register(AliasKey.Autograd, _out_kernel(op))
        return
    if f is None and written == ["self"]:
        fv = functional_variant(op)
        fv_formula = getattr(fv, "derivative", None)
        if fv_formula is NONDIFFERENTIABLE:
            # e.g. ``x.eq_(y)`` on a float x: x's value no longer depends on its history
            fv_formula = _no_gradient(op)
        # Fills (zero_, uniform_, ...) have no functional overload: nothing flows to self.
        f = fv_formula if fv is None or hasattr(fv, "derivative") else _no_gradient(op)
        if f is not None:
            op.register(AliasKey.Autograd, _inplace_kernel(op, _spec(op, f, inplace=True)))
        return
    if f is None:
        return
    if written == ["self"]:
        op.register(AliasKey.Autograd, _inplace_kernel(op, _spec(op, f, inplace=True)))
    else:
        op.register(AliasKey.Autograd, _functional_kernel(op, _spec(op, f, inplace=False)))


def install() -> None:
    for key in AUTOGRAD_KEYS:
        register_fallback(key, _fallback)
    for op in all_ops():
        register_op(op)
