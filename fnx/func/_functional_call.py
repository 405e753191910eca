"""``functional_call`` and ``stack_module_state``: a module as a function of its state.

``functional_call(module, {name: tensor}, args)`` runs ``module(*args)`` with the named
parameters and buffers replaced by the given tensors (put into the modules' ``_parameters``
and ``_buffers`` dicts directly, so any tensor will do, a transform's traced one included)
and put back afterwards, even when the call raises; the implementation is
``fnx.nn.utils.stateless``'s.
"""
from __future__ import annotations

from .. import api as fnx
from ..nn import Module
from ..nn.utils.stateless import _functional_call

__all__ = ["functional_call", "stack_module_state"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """Call ``module`` with its parameters and buffers replaced by the given tensors
    (``torch.func.functional_call``); the module is unchanged afterwards. One
    implementation with ``fnx.nn.utils.stateless.functional_call`` (which warns that it is
    deprecated).

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
    return _functional_call(module, parameter_and_buffer_dicts, args, kwargs,
                            tie_weights=tie_weights, strict=strict)


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
