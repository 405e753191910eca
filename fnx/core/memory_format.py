"""Memory formats, as ``torch.memory_format``: the order of a dense tensor's dims in
memory. ``contiguous_format`` (row-major), ``channels_last`` (NHWC for a 4-d tensor),
``channels_last_3d`` (NDHWC for a 5-d one), and ``preserve_format`` (keep the input's, where
an op offers it). Values are computed the same in every format; the format shows in
``stride()`` and ``is_contiguous(memory_format=...)``. Ops also take the names as strings.

>>> import fnx
>>> x = fnx.zeros(1, 3, 2, 2).to(memory_format=fnx.channels_last)
>>> x.stride(), x.is_contiguous(memory_format=fnx.channels_last)
((12, 1, 6, 3), True)
"""
from __future__ import annotations

__all__ = ["memory_format", "contiguous_format", "channels_last", "channels_last_3d",
           "preserve_format", "legacy_contiguous_format", "by_name", "format_name",
           "channels_last_rank", "channels_last_strides", "contiguous_strides", "strides_for"]


class memory_format:
    """One memory format; one object per name, compared by identity."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"fnx.{self.name}"

    def __reduce__(self):
        return (by_name, (self.name,))


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
legacy_contiguous_format = memory_format("legacy_contiguous_format")
_BY_NAME = {f.name: f for f in (contiguous_format, channels_last, channels_last_3d,
                                preserve_format, legacy_contiguous_format)}


def by_name(name: str) -> memory_format:
    """The memory format called ``name`` (``"channels_last"``)."""
    return _BY_NAME[name]


def format_name(mf) -> str:
    """The name of memory format ``mf`` (a ``memory_format``, a string naming one, or None
    for ``preserve_format``); ``legacy_contiguous_format`` is ``contiguous_format``."""
    if mf is None:
        return "preserve_format"
    name = mf.name if isinstance(mf, memory_format) else \
        (mf if isinstance(mf, str) else repr(mf)).rsplit(".", 1)[-1]
    if name not in _BY_NAME:
        raise TypeError(f"memory_format must be a fnx.memory_format, got {mf!r}")
    return "contiguous_format" if name == "legacy_contiguous_format" else name


_RANK = {"channels_last": 4, "channels_last_3d": 5}


def channels_last_rank(name: str):
    """The rank a channels-last format ``name`` needs (4 or 5), None for the others."""
    return _RANK.get(name)


def channels_last_strides(shape, name: str = "channels_last") -> tuple:
    """Element strides of a dense ``shape`` laid out channels-last: channels innermost,
    then the spatial dims last to first, the batch outermost (NHWC, NDHWC)."""
    rank = _RANK[name]
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {name} format")
    strides = [0] * rank
    step = 1
    for d in (1, *range(rank - 1, 1, -1), 0):
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def contiguous_strides(shape) -> tuple:
    """Element strides of a dense row-major ``shape`` (a size-0 or 1 dim counts as 1)."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def strides_for(shape, name: str) -> tuple:
    """The dense strides of ``shape`` in format ``name`` (contiguous or channels-last)."""
    return channels_last_strides(shape, name) if name in _RANK else contiguous_strides(shape)
