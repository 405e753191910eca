"""Pruning: zeroing parts of a module's parameter through a mask, as
``torch.nn.utils.prune``.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, adds a buffer
``<name>_mask`` and makes ``<name>`` the plain tensor ``<name>_orig * <name>_mask``,
recomputed by a forward pre-hook (the method object itself) before every call: gradients
reach the kept entries of ``<name>_orig`` only. Pruning the same tensor again prunes
among the entries still kept (a ``PruningContainer`` of the methods applied); ``remove``
makes the pruned values the parameter again.

Which entries go: ``l1_unstructured`` the ``amount`` smallest in magnitude (an int: how
many; a float: what fraction, rounded), ``random_unstructured`` random ones,
``ln_structured``/``random_structured`` whole slices along ``dim`` (smallest ``n``-norm, or
random), ``global_unstructured`` the smallest across several parameters at once,
``custom_from_mask`` a given mask.

>>> import fnx
>>> from fnx.nn.utils import prune
>>> m = fnx.nn.Linear(4, 1, bias=False)
>>> with fnx.no_grad():
...     _ = m.weight.copy_(fnx.tensor([[0.5, -3.0, 0.1, 2.0]]))
>>> _ = prune.l1_unstructured(m, "weight", amount=0.5)
>>> m.weight.tolist(), sorted(n for n, _ in m.named_parameters()), prune.is_pruned(m)
([[0.0, -3.0, 0.0, 2.0]], ['weight_orig'], True)
>>> _ = prune.remove(m, "weight"); sorted(n for n, _ in m.named_parameters())
['weight']
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ... import api as fnx
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask", "identity",
           "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
           "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """A way to compute a pruning mask. Subclasses define ``compute_mask(t, default_mask)``
    (the mask for ``t``, keeping ``default_mask``'s zeros) and ``PRUNING_TYPE``
    (``"unstructured"``, ``"structured"`` with a ``dim``, or ``"global"``)."""

    _tensor_name = None

    def __call__(self, module, inputs):
        # the forward pre-hook: the pruned tensor from the current parameter and mask
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask to apply to ``t`` (1 keeps an entry, 0 prunes it)."""

    def apply_mask(self, module):
        """``<name>_orig * <name>_mask`` of ``module``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with a new ``cls(*args, **kwargs)``, ranking its entries
        by ``importance_scores`` (the parameter's own values when None); returns the method
        (a ``PruningContainer`` when the tensor was pruned before)."""
        method = _method_for(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(f"importance_scores should have the same shape as "
                                     f"parameter {name} of {module}, got "
                                     f"{importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = fnx.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(
                memory_format=fnx.contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:       # the parameter goes back where it was
                module.register_parameter(name, module._parameters.pop(name + "_orig"))
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` with this method's mask applied (the mask computed from
        ``importance_scores`` when given)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(f"importance_scores should have the same shape as tensor "
                                     f"t, got {importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        if default_mask is None:
            default_mask = fnx.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module) -> None:
        """Make the pruned values ``module.<name>``'s parameter again (the ``_orig``
        parameter object, holding them), dropping ``_orig`` and ``_mask``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be "
                                 f"removed")
        name = self._tensor_name
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters.pop(name + "_orig")
        orig.data = weight.data
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


def _method_for(cls, module, name, *args, **kwargs):
    """A new ``cls`` method for ``module.<name>``, joined with the method already pruning
    it (whose hook is taken off: the result is registered in its place)."""
    old, keys = None, []
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old = hook
            keys.append(k)
    if len(keys) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} "
                             f"of module {module}. Use a PruningContainer.")
    for k in keys:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if isinstance(old, PruningContainer):
        old.add_pruning_method(method)
        return old
    if old is not None:
        container = PruningContainer(old)
        container.add_pruning_method(method)
        return container
    return method


class PruningContainer(BasePruningMethod):
    """The methods applied to one tensor in turn: the last one prunes among the entries
    (or, structured, the slices) the earlier ones kept."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        if method is not None and not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            where = default_mask == 1               # the entries still kept
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to '
                                     'have the attribute `dim` defined.')
            n = t.dim()
            dim = method.dim + n if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n}")
            # the slices along dim that still hold a kept entry
            kept = default_mask.sum(dim=[d for d in range(n) if d != dim]) != 0
            where = tuple(kept if d == dim else slice(None) for d in range(n))
        elif kind == "global":
            where = (slice(None),) * t.dim()
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[where], default_mask=default_mask[where])
        mask[where] = partial.to(dtype=mask.dtype)
        return mask


class Identity(BasePruningMethod):
    """Prunes nothing (a mask of ones)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Prunes ``amount`` entries: those ``_drop(t, k)`` picks among the kept ones."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _how_many(self.amount, t.nelement())
        mask = default_mask.clone(memory_format=fnx.contiguous_format)
        if k:
            mask.view(-1)[self._drop(t, k)] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Prunes ``amount`` entries chosen at random."""

    def _drop(self, t, k):
        return fnx.topk(fnx.rand_like(t).view(-1), k=k).indices

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prunes the ``amount`` entries of smallest magnitude."""

    def _drop(self, t, k):
        return fnx.topk(fnx.abs(t).view(-1), k=k, largest=False).indices

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class _Structured(BasePruningMethod):
    """Prunes ``amount`` whole slices along ``dim``: all but those ``_keep(t, size, k)``
    picks (a mask or positions along ``dim``)."""

    PRUNING_TYPE = "structured"

    def compute_mask(self, t, default_mask):
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        k = _how_many(self.amount, size)
        if k == 0:
            return default_mask
        mask = fnx.zeros_like(t)
        mask[_along(t, self.dim, self._keep(t, size, k))] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask


class RandomStructured(_Structured):
    """Prunes ``amount`` whole slices along ``dim``, chosen at random."""

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def _keep(self, t, size, k):
        score = fnx.rand(size)
        return score > fnx.kthvalue(score, k=k).values

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_Structured):
    """Prunes the ``amount`` slices along ``dim`` of smallest ``n``-norm."""

    def __init__(self, amount, n, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def _keep(self, t, size, k):
        dim = self.dim % t.dim()
        norms = fnx.norm(t, p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        return fnx.topk(norms, k=size - k, largest=True).indices

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where ``mask`` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match "
                                 f"self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Prune ``module.<name>`` with a mask of ones (the pruning machinery, nothing pruned)."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune ``amount`` random entries of ``module.<name>``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the ``amount`` entries of ``module.<name>`` of smallest magnitude (of
    ``importance_scores``, when given)."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prune ``amount`` random slices of ``module.<name>`` along ``dim``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune the ``amount`` slices of ``module.<name>`` along ``dim`` of smallest
    ``n``-norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune the ``(module, name)`` tensors in ``parameters`` together: the unstructured
    ``pruning_method(**kwargs)`` ranks all their entries at once (``amount`` counts over
    all of them), and each tensor gets its part of the mask.

    >>> import fnx
    >>> from fnx.nn.utils import prune
    >>> a, b = fnx.nn.Linear(2, 1, bias=False), fnx.nn.Linear(2, 1, bias=False)
    >>> with fnx.no_grad():
    ...     _ = a.weight.copy_(fnx.tensor([[1.0, 4.0]]))
    ...     _ = b.weight.copy_(fnx.tensor([[2.0, 3.0]]))
    >>> prune.global_unstructured([(a, "weight"), (b, "weight")], prune.L1Unstructured, amount=2)
    >>> a.weight.tolist(), b.weight.tolist()
    ([[0.0, 4.0]], [[0.0, 3.0]])
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n))
                                   for m, n in parameters])
    masks = parameters_to_vector([getattr(m, n + "_mask", fnx.ones_like(getattr(m, n)))
                                  for m, n in parameters])
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the '
                        f'`pruning_method`. Found method {pruning_method} of type '
                        f'{method.PRUNING_TYPE}')
    container = PruningContainer()
    container._tensor_name = "temp"
    container.add_pruning_method(method)
    mask = container.compute_mask(scores, masks)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        size = param.numel()
        custom_from_mask(module, name, mask=mask[start:start + size].view_as(param))
        start += size


def custom_from_mask(module, name, mask):
    """Prune ``module.<name>`` where ``mask`` is 0."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent: the pruned values become the
    parameter ``<name>`` again; ``_orig``, ``_mask`` and the hook go."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     f"can be removed")


def is_pruned(module) -> bool:
    """Whether ``module`` or a submodule has a pruned tensor."""
    return any(isinstance(hook, BasePruningMethod) for _, m in module.named_modules()
               for hook in m._forward_pre_hooks.values())


def _check_amount(amount) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or \
            (not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         f"non-negative integer")


def _how_many(amount, size: int) -> int:
    """How many of ``size`` entries (or slices) ``amount`` prunes."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of "
                             f"parameters to prune={size}")
        return int(amount)
    return round(amount * size)


def _check_structured(t, dim) -> None:
    if t.dim() <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {t.shape} with {t.dim()} dims")
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _along(t, dim, index):
    """An index selecting ``index`` (a mask or positions) along ``dim`` of ``t``."""
    dim = dim % t.dim()
    return tuple(index if d == dim else slice(None) for d in range(t.dim()))
