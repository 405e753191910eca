"""``functional_call``: run a module with some of its parameters and buffers replaced,
for one call, by the tensors of a dict (``torch.nn.utils.stateless`` and
``torch.func.functional_call``; ``fnx.func`` imports it from here)."""
from __future__ import annotations

import contextlib
import warnings

from ...core.tensor import Tensor
from ...graph import guards

__all__ = ["functional_call"]

_MISSING = object()


def _owner(module, name):
    """(submodule, attribute) of a dotted name."""
    *path, attr = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, attr


def _swap(module, name, value):
    """Put ``value`` at ``name`` and return what was there (``_MISSING``: nothing); a
    parameter or buffer slot is replaced in its dict, anything else (a parametrized
    tensor's property included) is assigned."""
    owner, attr = _owner(module, name)
    d = owner.__dict__
    for store in ("_parameters", "_buffers"):
        slots = d.get(store)
        if slots is not None and attr in slots:
            old = slots[attr]
            if value is _MISSING:
                del slots[attr]
            else:
                slots[attr] = value
            return old
    if hasattr(owner, attr):
        old = getattr(owner, attr)
        if not isinstance(old, Tensor):
            raise TypeError(f"attribute `{attr}`: {old} is not an instance of Tensor")
    else:
        old = _MISSING
    if value is not _MISSING:
        if isinstance(type(owner).__dict__.get(attr), property) or old is not _MISSING:
            setattr(owner, attr, value)
        else:
            object.__setattr__(owner, attr, value)
    elif old is not _MISSING:
        delattr(owner, attr)
    return old


def _untie(module, values):
    """Give every name tied to a given one (the same tensor under several names) that
    value too; several different values for one tied tensor are refused."""
    names_of = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        names_of.setdefault(id(t), set()).add(name)
    tied = {n: group for group in names_of.values() if len(group) > 1 for n in group}
    out = dict(values)
    for name in values:
        group = tied.get(name)
        if group is None:
            continue
        given = {id(values[n]) for n in group if n in values}
        if len(given) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(group)}, "
                             f"which are tied. Consider using tie_weights=False")
        for other in group:
            out[other] = values[name]
    return out


@contextlib.contextmanager
def _reparametrize_module(module, values, tie_weights=False, strict=False):
    """Within the block, ``module``'s tensors at the keys of ``values`` are those values."""
    given = values      # rebound tensors are written back into the caller's dict
    if tie_weights:
        values = _untie(module, values)
    if strict:
        known = {n for n, _ in module.named_parameters(remove_duplicate=False)} | \
            {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing = sorted(known - set(values))
        unexpected = sorted(set(values) - known)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(msgs)))
    saved = []
    try:
        for name, value in values.items():
            saved.append((name, _swap(module, name, value)))
        # compiled programs that read the module's tensors see the swap (and the undo)
        guards.bump()
        yield
    finally:
        for name, old in reversed(saved):
            new = _swap(module, name, old)
            # a module that rebinds its own tensors (a buffer update) reports that back
            if name in given and new is not _MISSING:
                given[name] = new
        guards.bump()


def _functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                     tie_weights=True, strict=False):
    """``torch.func.functional_call``'s semantics, without the deprecation warning: what
    ``fnx.func.functional_call`` calls (see ``functional_call``)."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        values, repeated = {}, []
        for d in parameter_and_buffer_dicts:
            for key, value in d.items():
                if key in values and key not in repeated:
                    repeated.append(key)
                values[key] = value
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             f"functional call is ambiguous")
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(parameter_and_buffer_dicts)}")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, values, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameters_and_buffers`` (a dict, or several with distinct keys) in place of
    its own, then put its own back. Names tied to a given one (one tensor under two
    names) take its value too unless ``tie_weights=False``; ``strict=True`` requires
    exactly the module's names. On a parametrized module, ``"weight"`` assigns through
    the parametrization, ``"parametrizations.weight.original"`` replaces the original.

    >>> import fnx
    >>> from fnx.nn.utils.stateless import functional_call
    >>> m = fnx.nn.Linear(2, 1)
    >>> functional_call(m, {"weight": fnx.ones(1, 2), "bias": fnx.zeros(1)},
    ...                 (fnx.tensor([[1.0, 2.0]]),))
    tensor([[3.]])
    """
    warnings.warn("`fnx.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`fnx.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
