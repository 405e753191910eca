"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``,
``ParameterDict``."""
from __future__ import annotations

import operator
from collections import OrderedDict
from itertools import islice

from ...core.tensor import Tensor
from ..parameter import Parameter
from .module import Module

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _index(idx, n, what):
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n if n else idx


class Sequential(Module):
    """Modules called in order, each on the previous one's output.

    >>> import fnx
    >>> from fnx import nn
    >>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> net
    Sequential(
      (0): Linear(in_features=4, out_features=8, bias=True)
      (1): ReLU()
      (2): Linear(in_features=8, out_features=2, bias=True)
    )
    >>> net(fnx.ones(3, 4)).shape, len(net), type(net[1:]).__name__
    (fnx.Size([3, 2]), 3, 'Sequential')
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (OrderedDict, dict)):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        i = _index(idx, len(self), "Sequential")
        return next(islice(self._modules.values(), i, None))

    def __setitem__(self, idx, module):
        key = list(self._modules)[_index(idx, len(self), "Sequential")]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        if isinstance(idx, slice):
            for key in keys[idx]:
                delattr(self, key)
        else:
            delattr(self, keys[_index(idx, len(self), "Sequential")])
        # keep the numbering contiguous, as PyTorch
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        ret = Sequential()
        for m in self:
            ret.append(m)
        for m in other:
            ret.append(m)
        return ret

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m
        return self

    def extend(self, sequential):
        for layer in sequential:
            self.append(layer)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered so their parameters are the parent's.

    >>> import fnx
    >>> layers = fnx.nn.ModuleList([fnx.nn.Linear(2, 2) for _ in range(3)])
    >>> len(layers), len(list(layers.parameters()))
    (3, 6)
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module):
        setattr(self, str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice)
                    else [keys[_index(idx, len(self), "ModuleList")]]):
            delattr(self, key)
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        ret = ModuleList()
        for m in list(self) + list(other):
            ret.append(m)
        return ret

    def insert(self, index, module):
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def extend(self, modules):
        if isinstance(modules, Module) and not isinstance(modules, (ModuleList, Sequential)) \
                or not hasattr(modules, "__iter__"):
            raise TypeError(f"ModuleList.extend should be called with an iterable, but got "
                            f"{type(modules).__name__}")
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList is a container: call its modules, not the list")


class ModuleDict(Module):
    """An ordered dict of modules, registered under their keys.

    >>> import fnx
    >>> d = fnx.nn.ModuleDict({"enc": fnx.nn.Linear(2, 3), "act": fnx.nn.ReLU()})
    >>> list(d.keys()), "enc" in d
    (['enc', 'act'], True)
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        if hasattr(modules, "items"):
            for k, m in modules.items():
                self[k] = m
        else:
            for j, pair in enumerate(modules):
                if len(pair) != 2:
                    raise ValueError(f"ModuleDict update sequence element #{j} has length "
                                     f"{len(pair)}; 2 is required")
                self[pair[0]] = pair[1]

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict is a container: call its modules")


class ParameterList(Module):
    """A list of parameters (tensors are wrapped in ``Parameter``)."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index(idx, len(self), "ParameterList")))

    def __setitem__(self, idx, param):
        idx = _index(idx, len(self), "ParameterList")
        setattr(self, str(idx), _as_param(param))

    def __len__(self):
        return self._size

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def append(self, value):
        new_idx = len(self)
        self._size += 1
        setattr(self, str(new_idx), _as_param(value))
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        lines = []
        for k, p in enumerate(self):
            lines.append(f"({k}): Parameter containing: [{p.type()} of size "
                         f"{'x'.join(map(str, p.shape))}]")
        return "\n".join(lines)


class ParameterDict(Module):
    """An ordered dict of parameters (tensors are wrapped in ``Parameter``)."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        self._keys[key] = None
        setattr(self, key, _as_param(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters):
        items = parameters.items() if hasattr(parameters, "items") else parameters
        for k, v in items:
            self[k] = v


def _as_param(value):
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value
