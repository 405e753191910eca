"""``grouped_mm``: the grouped matrix product of mixture-of-experts layers, as
``F.grouped_mm``. Groups are either a leading dimension (3-D operands) or jagged slices of
one dimension of a 2-D operand, delimited by ``offs`` (int32 ends: group ``i`` is
``[offs[i-1], offs[i])``, the first from 0):

- 3-D ``(G, m, k)`` x 3-D ``(G, k, n)``: ``G`` products ``(G, m, n)`` (no ``offs``);
- 2-D ``(M, k)`` x 3-D ``(G, k, n)``: rows of group ``i`` times ``mat_b[i]``, ``(M, n)``;
- 3-D ``(G, m, k)`` x 2-D ``(k, N)``: ``mat_a[i]`` times the columns of group ``i``, ``(m, N)``;
- 2-D ``(m, K)`` x 2-D ``(K, n)``: the slice ``i`` of the shared ``K``, ``(G, m, n)``.

The groups are selected with masks over the whole products (no data-dependent shapes), so
it traces, compiles and differentiates; rows or columns past ``offs[-1]`` (PyTorch leaves
them unspecified) are zero. PyTorch's kernels also require 16-byte-aligned strides; fnx's
arrays need no such layout, so that restriction is not imposed."""
from __future__ import annotations

from ..core import dtype as D
from ..ops import aten

__all__ = ["grouped_mm"]

_FLOATS = {D.float32: "Float32", D.bfloat16: "BFloat16", D.float16: "Float16"}


def _check(mat_a, mat_b, offs, bias, out_dtype):
    for name, m in (("mat_a", mat_a), ("mat_b", mat_b)):
        if m.dtype not in _FLOATS:
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, "
                               f"got {m.dtype.scalar_type}")
        if m.ndim not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    if mat_a.dtype is not mat_b.dtype:
        raise RuntimeError(f"grouped_mm: expected mat_a and mat_b to have the same dtype, got "
                           f"{_FLOATS[mat_a.dtype]} and {_FLOATS[mat_b.dtype]}")
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    if mat_a.ndim == 3 and mat_b.ndim == 3 and mat_a.shape[0] != mat_b.shape[0]:
        raise RuntimeError("batched dimension has to match")
    if (offs is None) != (mat_a.ndim == 3 and mat_b.ndim == 3):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None:
        if offs.ndim != 1:
            raise RuntimeError("offs has to be 1D")
        if offs.dtype is not D.int32:
            raise RuntimeError("Offsets have to be int32")
        groups = [m.shape[0] for m in (mat_a, mat_b) if m.ndim == 3]
        if groups and groups[0] != offs.shape[0]:
            raise RuntimeError("matrix batch sizes have to match")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype not in (mat_a.dtype, D.float32):
        raise RuntimeError(f"grouped_mm: out_dtype must be the inputs' dtype or float32, got "
                           f"{out_dtype}")


def _group_masks(offs, length):
    """(G, length) bool: position ``j`` belongs to group ``i``."""
    ends = aten._to_copy(offs, dtype=D.int64)
    starts = aten.cat([aten.zeros([1], dtype=D.int64, device=offs.device), ends[:-1]])
    j = aten.arange.start_step(0, length, 1, dtype=D.int64, device=offs.device)
    return aten.logical_and(j >= starts.unsqueeze(1), j < ends.unsqueeze(1))


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """Grouped matrix products with jagged groups (see the module's cases).

    >>> import fnx, fnx.nn.functional as F
    >>> a = fnx.arange(8.0).reshape(4, 2)            # rows 0-1: group 0, rows 2-3: group 1
    >>> b = fnx.stack([fnx.eye(2), 2 * fnx.eye(2)])
    >>> F.grouped_mm(a, b, offs=fnx.tensor([2, 4], dtype=fnx.int32)).tolist()
    [[0.0, 1.0], [2.0, 3.0], [8.0, 10.0], [12.0, 14.0]]
    """
    _check(mat_a, mat_b, offs, bias, out_dtype)
    wide = out_dtype is D.float32 and mat_a.dtype is not D.float32
    if wide:     # accumulate low-precision inputs in float32
        mat_a, mat_b = aten._to_copy(mat_a, dtype=D.float32), aten._to_copy(mat_b, dtype=D.float32)
    zero = aten.zeros([], dtype=mat_a.dtype, device=mat_a.device)
    if offs is None:
        return aten.bmm(mat_a, mat_b)
    if mat_a.ndim == 2 and mat_b.ndim == 3:      # jagged rows of mat_a
        mask = _group_masks(offs, mat_a.shape[0]).unsqueeze(2)             # (G, M, 1)
        products = aten.matmul(mat_a.unsqueeze(0), mat_b)                  # (G, M, n)
        return aten.where.self(mask, products, zero).sum(0)
    if mat_a.ndim == 3:                          # jagged columns of mat_b
        mask = _group_masks(offs, mat_b.shape[1]).unsqueeze(1)             # (G, 1, N)
        products = aten.matmul(mat_a, mat_b.unsqueeze(0))                  # (G, m, N)
        return aten.where.self(mask, products, zero).sum(0)
    mask = _group_masks(offs, mat_a.shape[1])                              # (G, K)
    a = aten.where.self(mask.unsqueeze(1), mat_a.unsqueeze(0), zero)       # (G, m, K)
    b = aten.where.self(mask.unsqueeze(2), mat_b.unsqueeze(0), zero)       # (G, K, n)
    return aten.bmm(a, b)
