"""``fnx.export.export``: a model as one functional program, lowered to portable StableHLO.

The model is traced with fnx's tracer (functional, under ``no_grad``) into an ATen-level
``Graph`` (``ExportedProgram.graph``); ``graph_program`` lowers the graph decomposed to
prims with the JAX target's rules, and ``jax.export`` turns that into a serialized
StableHLO module (``to_stablehlo()``, ``to_jax()``).

The weights are *program inputs*, not constants baked into the module: the program's
flat inputs are the user's tensors (in argument order), then every parameter, buffer and
captured tensor constant (``graph_signature.input_specs`` names each). ``state_dict``
holds the parameters and buffers by their module names, ``constants`` the captured
tensors that no module names (a closure's weights), so a weight can be swapped without
re-exporting and the StableHLO stays small.

>>> import fnx
>>> w = fnx.tensor([[1., 2.], [3., 4.]])
>>> ep = fnx.export.export(lambda x: (x @ w).relu(), (fnx.ones(1, 2),))
>>> [s.kind for s in ep.graph_signature.input_specs]
['user_input', 'constant']
>>> ep.module()(fnx.tensor([[1., -1.]]))
tensor([[0., 0.]])
"""
from __future__ import annotations

import inspect

import jax
import numpy as np

from ..backends.cpu import wrap
from ..core import dtype as D
from ..core.grad_mode import no_grad
from ..graph.decompose import decompose
from ..graph.graph import Node
from ..graph.tracer import trace
from ..lower.jax import JAX_TARGET
from ..lower.jax_compile import graph_program, raise_failed
from .module import ExportedModule
from .symbolic import (SpecializationError, dynamic_spec, flat_tensors, resized,
                       sample_points, symbolize)

__all__ = ["export", "ExportedProgram", "InputSpec", "OutputSpec", "ExportGraphSignature"]


class InputSpec:
    """One flat program input: ``kind`` is ``user_input``, ``parameter``, ``buffer`` or
    ``constant``; ``name`` its argument or state name; ``shape`` (a symbolic dim as its
    ``Dim`` name) and ``dtype``; ``persistent`` whether a buffer is in the module's
    ``state_dict`` (None for the other kinds)."""

    __slots__ = ("kind", "name", "shape", "dtype", "persistent")

    def __init__(self, kind, name, shape, dtype, persistent=None):
        self.kind, self.name, self.shape, self.dtype = kind, name, tuple(shape), dtype
        self.persistent = persistent

    def to_json(self):
        out = {"kind": self.kind, "name": self.name, "shape": list(self.shape),
               "dtype": self.dtype}
        if self.persistent is not None:
            out["persistent"] = self.persistent
        return out

    def __repr__(self):
        return f"InputSpec({self.kind}, {self.name!r}, {self.dtype}{list(self.shape)})"


class OutputSpec(InputSpec):
    """One flat program output (``kind`` is ``user_output``)."""


class ExportGraphSignature:
    """The program's flat inputs and outputs, in order."""

    def __init__(self, input_specs, output_specs):
        self.input_specs = list(input_specs)
        self.output_specs = list(output_specs)

    @property
    def user_inputs(self):
        return [s.name for s in self.input_specs if s.kind == "user_input"]

    @property
    def parameters(self):
        return [s.name for s in self.input_specs if s.kind == "parameter"]

    @property
    def buffers(self):
        return [s.name for s in self.input_specs if s.kind == "buffer"]


class ExportedProgram:
    """The result of ``export`` (or ``fnx.export.load``): print it, run ``module()``, or
    take the StableHLO (``to_stablehlo()`` bytes, ``to_jax()``, ``mlir_module()``)."""

    def __init__(self, exported, signature, state_dict, constants, out_tree, dims,
                 graph=None, graph_text=None, checks=()):
        self._exported = exported
        self.graph_signature = signature
        self.state_dict = state_dict
        self.constants = constants
        self._out_tree = out_tree
        self.dims = dims                # Dim name -> (min, max)
        self.graph = graph              # the fnx Graph (None for a loaded program)
        self._graph_text = graph_text if graph_text is not None else graph.to_python()
        self._checks = list(checks)     # value checks: their status is the last output

    # -- the portable program
    def to_jax(self) -> "jax.export.Exported":
        """The ``jax.export.Exported``: ``.call(*flat_inputs)`` runs it under plain JAX."""
        return self._exported

    def to_stablehlo(self) -> bytes:
        """The serialized program (``jax.export.deserialize`` reads it back)."""
        return bytes(self._exported.serialize())

    def mlir_module(self) -> str:
        """The StableHLO module as MLIR text."""
        return self._exported.mlir_module()

    def flat_inputs(self, *args, **kwargs) -> list:
        """The arrays ``to_jax().call`` takes for these user arguments: the user's tensors,
        then the state."""
        return self._flat_inputs(args, kwargs, None)

    def _flat_inputs(self, args, kwargs, state) -> list:
        """``flat_inputs``, the state read through ``state(spec)`` if given."""
        users = flat_tensors((args, kwargs))
        n_user = len(self.graph_signature.user_inputs)
        if len(users) != n_user:
            raise TypeError(f"exported program expects {n_user} tensor input(s), got "
                            f"{len(users)}")
        specs = self.graph_signature.input_specs
        sizes = {}
        for t, spec in zip(users, specs):
            self._check_input(t, spec, sizes)
        arrays = [_host(t) for t in users]
        for spec in specs[n_user:]:
            if state is not None:
                t = state(spec)
            elif spec.name in self.state_dict and spec.kind != "constant":
                t = self.state_dict[spec.name]
            else:
                t = self.constants[spec.name]
            arrays.append(_host(t))
        return arrays

    def _check_input(self, t, spec, sizes):
        if len(t.shape) != len(spec.shape):
            raise ValueError(f"exported program: input '{spec.name}' must have "
                             f"{len(spec.shape)} dimensions, got shape {list(t.shape)}")
        if t.dtype.name != spec.dtype:
            raise ValueError(f"exported program: input '{spec.name}' must be {spec.dtype}, got "
                             f"{t.dtype.name}")
        for axis, (size, want) in enumerate(zip(t.shape, spec.shape)):
            if isinstance(want, str):
                lo, hi = self.dims[want]
                if not lo <= size <= hi:
                    raise ValueError(f"exported program: input '{spec.name}' dim {axis} is "
                                     f"{size}, outside the range of Dim '{want}' "
                                     f"[{lo}, {hi}]")
                seen = sizes.setdefault(want, (size, spec.name, axis))
                if seen[0] != size:
                    raise ValueError(f"exported program: Dim '{want}' is {seen[0]} at input "
                                     f"'{seen[1]}' dim {seen[2]} but {size} at input "
                                     f"'{spec.name}' dim {axis}; one Dim is one size")
            elif size != want:
                raise ValueError(f"exported program: input '{spec.name}' dim {axis} must be "
                                 f"{want} (exported as static), got {size}")

    def __call__(self, *args, **kwargs):
        return self._run(self.flat_inputs(*args, **kwargs))

    def module(self) -> "ExportedModule":
        """An ``fnx.nn.Module`` that runs the program (no model code involved): its
        parameters and buffers are the program's state under the original names (the same
        ``state_dict()`` keys); it reads them on every call, so ``load_state_dict`` swaps
        the weights without re-exporting."""
        return ExportedModule(self)

    def _run(self, arrays):
        with jax.enable_x64(True):
            outs = list(self._exported.call(*arrays))
        if self._checks:
            raise_failed(self._checks, outs.pop())
        tensors = [wrap(np.array(o), D.from_numpy_dtype(np.dtype(o.dtype))) for o in outs]
        return _unflatten(self._out_tree, tensors)

    def run_decompositions(self, to: str = "core") -> "ExportedProgram":
        """The same program with ``.graph`` decomposed to ``to`` (``"core"`` or ``"prims"``);
        the lowered program is unchanged (it is always lowered from prims)."""
        if self.graph is None:
            raise RuntimeError("run_decompositions: a loaded program has no fnx graph (only "
                               "its StableHLO)")
        g = decompose(self.graph, to=to)
        return ExportedProgram(self._exported, self.graph_signature, self.state_dict,
                               self.constants, self._out_tree, self.dims, graph=g,
                               checks=self._checks)

    def __str__(self):
        sig = self.graph_signature
        lines = ["ExportedProgram:", *("    " + ln for ln in self._graph_text.splitlines()),
                 "Graph signature:"]
        for s in sig.input_specs:
            lines.append(f"    # input  {s.kind}: {s.name}  {s.dtype}{list(s.shape)}")
        for s in sig.output_specs:
            lines.append(f"    # output {s.kind}: {s.name}  {s.dtype}{list(s.shape)}")
        if self.dims:
            lines.append("Range constraints: " + ", ".join(
                f"{k}: [{lo}, {hi}]" for k, (lo, hi) in self.dims.items()))
        return "\n".join(lines)

    __repr__ = __str__


# ----------------------------------------------------------------------------- helpers

def _host(t) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy(force=True))


def _out_tree(value, out_nodes):
    """The output's structure with each tensor as its index among ``out_nodes``."""
    if isinstance(value, Node):
        return {"out": next(i for i, n in enumerate(out_nodes) if n is value)}
    if isinstance(value, (list, tuple)):
        return {"list" if isinstance(value, list) else "tuple":
                [_out_tree(v, out_nodes) for v in value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    raise NotImplementedError(f"export: an output of type {type(value).__name__} is not "
                              f"supported (return tensors, lists/tuples of them, or numbers)")


def _unflatten(tree, tensors):
    if "out" in tree:
        return tensors[tree["out"]]
    if "list" in tree:
        return [_unflatten(t, tensors) for t in tree["list"]]
    if "tuple" in tree:
        return tuple(_unflatten(t, tensors) for t in tree["tuple"])
    return tree["value"]


def _state_names(model) -> dict:
    """id(tensor) -> (kind, name, tensor, persistent) for a module's parameters and
    buffers (``persistent``: a buffer in the module's ``state_dict``)."""
    names = {}
    saved = model.state_dict() if callable(getattr(model, "state_dict", None)) else {}
    for kind, method in (("parameter", "named_parameters"), ("buffer", "named_buffers")):
        fn = getattr(model, method, None)
        if callable(fn):
            for name, t in fn():
                names.setdefault(id(t), (kind, name, t,
                                         name in saved if kind == "buffer" else None))
    return names


def _arg_names(model, n) -> list:
    fn = getattr(model, "forward", model)
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"arg{i}" for i in range(n)]


# ----------------------------------------------------------------------------- export

def _trace(model, args, kwargs, names, to, record_lines=False):
    with no_grad():
        return trace(model, *args, decompose_to=to, input_names=names,
                     lift_captured=True, functional=True, record_lines=record_lines,
                     **kwargs)


def _symbolic(model, args, kwargs, flat_names, dynamic, dims, graph, prims):
    """``graph``'s prims program with its sizes as expressions of symbolic dims, checked
    by tracing at ``sample_points``; and the symbolic dims by name."""
    flat = flat_tensors((args, kwargs))
    order = list(dims.values())
    base = {}
    for pos, axis, d in dynamic:
        base.setdefault(d.name, flat[pos].shape[axis])
    fit, check = sample_points(order, tuple(base[d.name] for d in order))
    points = fit + check
    atens, progs = [graph], [prims]
    for point in points[1:]:
        a2, k2 = resized(args, kwargs, dynamic, {d.name: s for d, s in zip(order, point)})
        atens.append(_trace(model, a2, k2, flat_names, "aten"))
        progs.append(decompose(atens[-1], to="prims"))
    constraints = [c for d in order for c in (f"{d.name} >= {d.min}", f"{d.name} <= {d.max}")]
    syms = jax.export.symbolic_shape(", ".join(d.name for d in order),
                                     constraints=constraints)
    try:
        # at the ATen level first: an error there can name the user's line
        symbolize(atens, points, len(fit), syms, order, rewrite=False)
    except SpecializationError as e:
        again = _trace(model, args, kwargs, flat_names, "aten", record_lines=True)
        where = None
        if e.index is not None and e.index < len(again.nodes):
            where = again.lines.get(again.nodes[e.index])
        raise ValueError(f"{e} (at {where})" if where else str(e)) from None
    try:
        prims = symbolize(progs, points, len(fit), syms, order)
    except SpecializationError as e:
        raise ValueError(f"{e} (inside the decomposition of an op)") from None
    return prims, dict(zip((d.name for d in order), syms))


def export(model, args, kwargs=None, *, dynamic_shapes=None, strict: bool = False
           ) -> ExportedProgram:
    """Export ``model(*args, **kwargs)`` (an ``nn.Module`` or any function of tensors) as
    an ``ExportedProgram``: its functional graph, state and portable StableHLO.

    ``dynamic_shapes`` maps argument names (or positions) to ``{axis: Dim}``; the export
    checks, by tracing at several sizes in the dims' ranges, that the program is the same
    for all of them (else it names the op and the line that specializes a dim), fits every
    size the program uses as a polynomial of the dims (``B * T`` for a ``view(B * T, C)``)
    and lowers it with symbolic dimensions (``jax.export.symbolic_shape("b, t")``). A Dim
    may be shared by several inputs and axes; its ``min``/``max`` are checked on each call.

    >>> import fnx
    >>> ep = fnx.export.export(lambda x: x.sum(1), (fnx.ones(2, 3),),
    ...                        dynamic_shapes={"x": {0: fnx.export.Dim("b", min=1)}})
    >>> ep.module()(fnx.ones(5, 3))
    tensor([3., 3., 3., 3., 3.])
    >>> b, t = fnx.export.Dim("b"), fnx.export.Dim("t", max=128)
    >>> ep = fnx.export.export(lambda x: x.reshape(-1), (fnx.ones(2, 3),),
    ...                        dynamic_shapes={"x": {0: b, 1: t}})
    >>> ep.graph_signature.output_specs[0].shape, ep.module()(fnx.ones(4, 5)).shape
    (('b*t',), fnx.Size([20]))
    """
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    kwargs = dict(kwargs or {})
    names = _arg_names(model, len(args))
    dynamic = dynamic_spec(dynamic_shapes, names, args, kwargs)
    dims = {d.name: d for _, _, d in dynamic}
    flat_names = [f"{n}" for n in names] + list(kwargs)
    graph = _trace(model, args, kwargs, flat_names, "aten")
    if graph.mutated_inputs:
        raise NotImplementedError(
            "export: the program writes its inputs or buffers (batch norm running stats in "
            "training mode?); call model.eval() or export a function that does not write")
    kinds = {s[0] for s in graph.input_sources}
    if "rng" in kinds:
        raise NotImplementedError("export: the program draws random numbers (dropout in "
                                  "training mode?); call model.eval()")
    prims = decompose(graph, to="prims")
    syms = {}
    if dynamic:
        prims, syms = _symbolic(model, args, kwargs, flat_names, dynamic, dims, graph, prims)
    # input specs
    state = _state_names(model)
    specs, state_dict, constants = [], {}, {}
    dyn_axes = {(p, a): d.name for p, a, d in dynamic}
    user_i = 0
    n_user = sum(1 for s in graph.input_sources if s[0] == "arg")
    taken = {p.name for p in graph.placeholders()}
    for p, src in zip(graph.placeholders(), graph.input_sources):
        meta = p.meta
        if src[0] == "arg":
            shape = [dyn_axes.get((user_i, a), s) for a, s in enumerate(meta.shape)]
            name = flat_names[user_i] if n_user == len(flat_names) else p.name
            specs.append(InputSpec("user_input", name, shape, meta.dtype.name))
            user_i += 1
            continue
        t = src[1]
        kind, name, _, persistent = state.get(id(t), ("constant", f"c{len(constants)}", t,
                                                      None))
        # as PyTorch's: a non-persistent buffer is a program input held in ``constants``
        (constants if kind == "constant" or persistent is False else state_dict)[name] = t
        specs.append(InputSpec(kind, name, meta.shape, meta.dtype.name, persistent))
        # the graph's placeholder says which state it is (p_fc_weight, b_bn_running_mean)
        pretty = kind[0] + "_" + "".join(c if c.isalnum() else "_" for c in name)
        if pretty not in taken:
            taken.add(pretty)
            p.name = pretty
    callbacks = sorted({str(n.target) for n in prims.calls()
                        if getattr(JAX_TARGET.rules.get(n.target), "host_callback", False)})
    if callbacks:
        raise NotImplementedError(
            f"export: {', '.join(callbacks)} has no lowering, and a program that calls back "
            f"into Python cannot be portable StableHLO; give it one with register_lowering")
    program, out_nodes = graph_program(JAX_TARGET, prims)
    out_tree = _out_tree(prims.output_node.args[0], out_nodes)
    shapes = []
    for spec in specs:
        shape = tuple(syms[s] if isinstance(s, str) else s for s in spec.shape)
        shapes.append(jax.ShapeDtypeStruct(shape, getattr(D, spec.dtype).numpy))
    try:
        with jax.enable_x64(True):
            exported = jax.export.export(jax.jit(program))(*shapes)
    except Exception as e:
        if not dynamic:
            raise
        raise ValueError(f"export: lowering with the symbolic Dims {sorted(dims)} failed (a "
                         f"lowering rule needs a static size): {type(e).__name__}: "
                         f"{str(e).splitlines()[0]}") from e
    out_specs = []
    for i, n in enumerate(out_nodes):
        aval = exported.out_avals[i]
        out_specs.append(OutputSpec("user_output", f"output_{i}",
                                    [str(s) if not isinstance(s, int) else s
                                     for s in aval.shape], n.meta.dtype.name))
    sig = ExportGraphSignature(specs, out_specs)
    return ExportedProgram(exported, sig, state_dict, constants, out_tree,
                           {d.name: (d.min, d.max) for d in dims.values()}, graph=graph,
                           checks=program.checks)

