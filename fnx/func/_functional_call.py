"""``functional_call`` and ``stack_module_state``: a module as a function of its state.

``functional_call(module, {name: tensor}, args)`` runs ``module(*args)`` with the named
parameters and buffers replaced by the given tensors (put into the modules' ``_parameters``
and ``_buffers`` dicts directly, so any tensor will do, a transform's traced one included)
and put back afterwards, even when the call raises. Compiled programs that read the modules
are told their state changed (``fnx.graph.guards.bump``), both times.
"""
from __future__ import annotations

import collections.abc
import contextlib

from ..core.tensor import Tensor
from ..graph import guards
from .. import api as fnx
from ..nn import Module

__all__ = ["functional_call", "stack_module_state"]

_MISSING = object()


def _all_named(module) -> dict:
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    return named


def _untie(module, values: dict) -> dict:
    """``values`` plus, for each given name of a tied tensor, its other names."""
    by_tensor = {}
    for name, t in _all_named(module).items():
        by_tensor.setdefault(id(t), []).append(name)
    out = dict(values)
    for names in by_tensor.values():
        if len(names) < 2:
            continue
        given = [n for n in names if n in values]
        if not given:
            continue
        if len({id(values[n]) for n in given}) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             f"which are tied. Consider using tie_weights=False")
        for n in names:
            out.setdefault(n, values[given[0]])
    return out


def _swap(module, name: str, value):
    """Put ``value`` at ``name`` (dotted) and return what was there (``_MISSING``: nothing)."""
    prefix, _, attr = name.rpartition(".")
    owner = module.get_submodule(prefix) if prefix else module
    if value is not _MISSING and value is not None and not isinstance(value, Tensor):
        raise TypeError(f"functional_call: the value for {name!r} must be a Tensor, got "
                        f"{type(value).__name__}")
    for store in ("_parameters", "_buffers"):
        d = owner.__dict__.get(store)
        if d is not None and attr in d:
            old = d[attr]
            if value is _MISSING:
                del d[attr]
            else:
                d[attr] = value
            return old
    old = owner.__dict__.get(attr, _MISSING)
    if old is not _MISSING and old is not None and not isinstance(old, Tensor):
        raise TypeError(f"functional_call: attribute {name!r} of {type(owner).__name__} is "
                        f"not a Tensor")
    if value is _MISSING:
        owner.__dict__.pop(attr, None)
    else:
        owner.__dict__[attr] = value
    return old


@contextlib.contextmanager
def _reparametrize(module, values: dict, tie_weights: bool, strict: bool):
    if tie_weights:
        values = _untie(module, values)
    if strict:
        known = set(_all_named(module))
        unexpected = [k for k in values if k not in known]
        missing = [k for k in known if k not in values]
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               + "\n\t".join(msgs))
    originals = {}
    try:
        for name, value in values.items():
            originals[name] = _swap(module, name, value)
        guards.bump()
        yield
    finally:
        for name, old in reversed(list(originals.items())):
            _swap(module, name, old)
        guards.bump()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """Call ``module`` with its parameters and buffers replaced by the given tensors
    (``torch.func.functional_call``); the module is unchanged afterwards.

    ``parameter_and_buffer_dicts``: a dict from names (as ``named_parameters()``) to
    tensors, or a sequence of such dicts with no name in two of them. Names not given keep
    the module's own tensor. ``args`` is one argument or a tuple of them. ``tie_weights``:
    a tensor the module holds under several names (tied weights) is replaced under all of
    them when one is given. ``strict``: every parameter and buffer must be given, and no
    other name.

    >>> import fnx
    >>> lin = fnx.nn.Linear(2, 1)
    >>> params = {"weight": fnx.tensor([[1., 2.]]), "bias": fnx.tensor([0.5])}
    >>> fnx.func.functional_call(lin, params, (fnx.tensor([1., 1.]),))
    tensor([3.5000])
    """
    if not isinstance(module, Module):
        raise TypeError(f"functional_call: expected an nn.Module, got {type(module).__name__}")
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, collections.abc.Sequence) and \
            not isinstance(parameter_and_buffer_dicts, str):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        seen, repeated = set(), []
        for d in parameter_and_buffer_dicts:
            for k in d:
                if k in seen and k not in repeated:
                    repeated.append(k)
                seen.add(k)
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             f"functional call is ambiguous")
        values = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(parameter_and_buffer_dicts).__name__}")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, values, tie_weights, strict):
        return module(*args, **kwargs)


def stack_module_state(models):
    """``(params, buffers)``: each parameter and buffer of ``models`` (modules of one
    structure) stacked along a new first dimension, by name (``torch.func.stack_module_state``).
    The stacked parameters are new leaves that require grad as the originals do; use them
    with ``vmap`` over ``functional_call`` to run an ensemble at once.

    >>> import fnx
    >>> models = [fnx.nn.Linear(3, 2) for _ in range(4)]
    >>> params, buffers = fnx.func.stack_module_state(models)
    >>> params["weight"].shape, buffers
    (fnx.Size([4, 2, 3]), {})
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/"
                           "eval mode.")
    first = type(models[0])
    if any(type(m) is not first for m in models):
        raise RuntimeError(f"stack_module_state: Expected all models to be of the same class, "
                           f"got {sorted({type(m).__name__ for m in models})}")

    def stack(named_of):
        names = [n for n, _ in named_of(models[0])]
        for m in models[1:]:
            if [n for n, _ in named_of(m)] != names:
                raise RuntimeError("stack_module_state: Expected all models to have the same "
                                   "parameters and buffers (names)")
        out = {}
        for i, name in enumerate(names):
            ts = [list(named_of(m))[i][1] for m in models]
            out[name] = fnx.stack([t.detach() for t in ts])
        return out

    params = stack(lambda m: m.named_parameters())
    for name, p in models[0].named_parameters():
        if p.requires_grad:
            params[name].requires_grad_(True)
    buffers = stack(lambda m: m.named_buffers())
    return params, buffers
