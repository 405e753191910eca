"""Dimension and size arithmetic shared by meta functions and kernels: negative dims,
broadcasting, a reduction's output size, a -1 in a view's size; PyTorch's error messages."""
from __future__ import annotations

__all__ = ["broadcast_shapes", "wrap_dim", "reduction_shape", "infer_size"]


def broadcast_shapes(*shapes) -> tuple:
    """NumPy/PyTorch broadcasting; RuntimeError with PyTorch's message on mismatch.

    >>> broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        off = ndim - len(s)
        for i, d in enumerate(s):
            j = off + i
            if d == out[j] or d == 1:
                continue
            if out[j] == 1:
                out[j] = d
            else:
                raise RuntimeError(f"The size of tensor a ({out[j]}) must match the size of "
                                   f"tensor b ({d}) at non-singleton dimension {j}")
    return tuple(out)


def wrap_dim(dim: int, ndim: int) -> int:
    """Turn a negative dim into a positive one; a 0-dim tensor accepts dims -1 and 0."""
    if not isinstance(dim, int) or isinstance(dim, bool):
        if hasattr(dim, "__index__"):
            dim = dim.__index__()
        else:
            raise TypeError(f"dim must be an int, got {type(dim).__name__}")
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


def wrap_dims(dims, ndim: int) -> tuple:
    if isinstance(dims, int):
        dims = (dims,)
    out = tuple(wrap_dim(d, ndim) for d in dims)
    if len(set(out)) != len(out):
        dup = next(d for d in out if out.count(d) > 1)
        raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    return out


def reduction_shape(shape, dims, keepdim: bool) -> tuple:
    """Output shape of a reduction over ``dims`` (None or () means every dim)."""
    ndim = len(shape)
    dims = tuple(range(ndim)) if dims is None or len(dims) == 0 else wrap_dims(dims, ndim)
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def infer_size(shape, numel: int) -> tuple:
    """Resolve one -1 in a view/reshape target, PyTorch's errors otherwise."""
    shape = tuple(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input "
                               f"of size {numel}")
        shape = shape[:neg[0]] + (numel // known,) + shape[neg[0] + 1:]
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of "
                           f"size {numel}")
    return shape
