"""``fnx.export.Dim``: a named symbolic dimension with a range, for ``dynamic_shapes``.

>>> import fnx
>>> batch = fnx.export.Dim("batch", min=1, max=1024)
>>> batch
Dim('batch', min=1, max=1024)
"""
from __future__ import annotations

__all__ = ["Dim"]

_INT_MAX = 2 ** 31 - 1


class Dim:
    """A symbolic size named ``name`` in ``[min, max]`` (PyTorch's ``torch.export.Dim``).
    ``min`` defaults to 1: a ``jax.export`` symbolic dimension is at least 1."""

    def __init__(self, name: str, *, min: int | None = None, max: int | None = None):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"Dim: the name must be an identifier, got {name!r}")
        lo = 1 if min is None else min
        hi = _INT_MAX if max is None else max
        if not (isinstance(lo, int) and isinstance(hi, int)) or lo < 1 or hi < lo:
            raise ValueError(f"Dim {name!r}: need 1 <= min <= max (a symbolic size is at "
                             f"least 1), got min={min}, max={max}")
        self.__name__ = name
        self.min = lo
        self.max = hi

    @property
    def name(self) -> str:
        return self.__name__

    def contains(self, size: int) -> bool:
        return self.min <= size <= self.max

    def __repr__(self):
        return f"Dim({self.__name__!r}, min={self.min}, max={self.max})"
