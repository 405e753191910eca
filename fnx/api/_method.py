"""Attach public functions to ``Tensor`` as methods."""
from ..core.tensor import Tensor


def tensor_method(*names):
    """Decorator: make ``fn(self, ...)`` the Tensor method(s) ``names`` (default: its name)."""
    def deco(fn):
        for n in names or (fn.__name__,):
            setattr(Tensor, n, fn)
        return fn
    return deco
