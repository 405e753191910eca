"""``fnx.autograd.Variable``: PyTorch's pre-0.4 wrapper, kept (as PyTorch keeps it) so old
code runs. Every tensor is a ``Variable`` (``isinstance(t, Variable)``); calling it gives
a new leaf tensor sharing ``data``'s storage and version counter, with the
``requires_grad`` asked for (``data`` itself is left as it was). ``volatile`` has no
effect any more and warns, as in PyTorch.

>>> import fnx
>>> from fnx.autograd import Variable
>>> x = fnx.ones(2)
>>> v = Variable(x, requires_grad=True)
>>> v.requires_grad, v.is_leaf, x.requires_grad, isinstance(x, Variable)
(True, True, False, True)
"""
from __future__ import annotations

import warnings

from ..core.tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """A leaf tensor sharing ``data``'s storage, with ``requires_grad`` as given."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(data).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "fnx.no_grad():` instead.", UserWarning, stacklevel=2)
        return data.detach().requires_grad_(bool(requires_grad))
