"""``segment_reduce`` (``torch.segment_reduce``): a reduction over consecutive segments of
one dim, given their lengths (or offsets), as one ``scatter_reduce`` into a segment each,
so it differentiates (ties of ``max``/``min`` share the gradient, as ``scatter_reduce``'s)
and compiles. Empty segments hold ``initial`` or the reduction's identity (``mean``: NaN).

>>> import fnx
>>> data = fnx.tensor([1., 2., 3., 4., 5., 6.])
>>> fnx.segment_reduce(data, "sum", lengths=fnx.tensor([2, 0, 3, 1])).tolist()
[3.0, 0.0, 12.0, 6.0]
"""
from __future__ import annotations

from ..core import dtype as D
from ..ops import aten

__all__ = ["segment_reduce"]

_REDUCE = {"sum": "sum", "prod": "prod", "mean": "mean", "max": "amax", "amax": "amax",
           "min": "amin", "amin": "amin"}
_EMPTY = {"sum": 0.0, "prod": 1.0, "mean": float("nan"), "amax": float("-inf"),
          "amin": float("inf")}


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """Reduce (``"sum"``, ``"prod"``, ``"mean"``, ``"max"``, ``"min"``) each segment of
    ``data`` along ``axis``: ``lengths[..., i]`` consecutive elements make segment ``i``
    (``lengths`` has ``data``'s leading dims before ``axis``), or segment ``i`` runs from
    ``offsets[..., i]`` to ``offsets[..., i + 1]``. ``initial`` joins every segment's
    reduction (and fills empty ones); ``unsafe`` skips the check that the lengths cover
    the dim.

    >>> import fnx
    >>> fnx.segment_reduce(fnx.tensor([1., 5., 2.]), "max", lengths=fnx.tensor([2, 1]))
    tensor([5., 2.])
    """
    if reduce not in _REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    op = _REDUCE[reduce]
    if not (data.dtype.is_floating_point or data.dtype.is_complex):
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for "
                                  f"'{data.dtype.scalar_type}'")
    if lengths is None:
        if offsets is None:
            raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
        lengths = offsets[..., 1:] - offsets[..., :-1]
    axis = axis + data.ndim if axis < 0 else axis
    if lengths.ndim - 1 != axis or tuple(lengths.shape[:-1]) != tuple(data.shape[:axis]):
        raise RuntimeError(f"segment_reduce(): Expected lengths of shape "
                           f"{list(data.shape[:axis])} + [segments] for axis={axis}, but got "
                           f"{list(lengths.shape)}")
    if bool((lengths < 0).any()):
        raise RuntimeError("lengths contains negative value!")
    n, segments = data.shape[axis], lengths.shape[-1]
    ends = lengths.cumsum(-1)
    if not unsafe and segments and bool((ends[..., -1] != n).any()):
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                           "to data.size(lengths.dim()-1) when !unsafe.")
    # each element's segment; those past the last segment go to an extra one, dropped
    where = aten.arange.default(n, dtype=D.int64, device=data.device)
    where = where.expand(*lengths.shape[:-1], n).contiguous()
    seg = aten.searchsorted.Tensor(ends.contiguous(), where, right=True)
    trailing = data.ndim - axis - 1
    seg = seg.reshape(*seg.shape, *[1] * trailing).expand(*data.shape)
    shape = list(data.shape)
    shape[axis] = segments + 1
    fill = _EMPTY[op] if initial is None else float(initial)
    if op == "mean":    # (initial + the segment's sum) / its length, as PyTorch's
        base = aten.full.default(shape, 0.0 if initial is None else fill, dtype=data.dtype,
                                 device=data.device)
        total = base.scatter_reduce(axis, seg, data, "sum", include_self=True)
        total = total.narrow(axis, 0, segments)
        count = lengths.to(data.dtype).reshape(*lengths.shape, *[1] * trailing)
        return (total / count).where(count > 0, total.new_full((), fill))
    start = aten.full.default(shape, fill, dtype=data.dtype, device=data.device)
    out = start.scatter_reduce(axis, seg, data, op, include_self=initial is not None)
    return out.narrow(axis, 0, segments)
