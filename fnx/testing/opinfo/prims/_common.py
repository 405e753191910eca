"""What the prim OpInfo modules share: dtype lists, special values, and helpers for
samples and references."""
from __future__ import annotations

import numpy as np

import fnx

from ....core import dtype as D
from ....ir.prims.checks import B, C, F, I
from ...database import FLOATS, INTS, ErrorInput, SampleInput, make_tensor

__all__ = ["COMPLEX", "ALL", "ALLC", "SPECIAL", "SPECIAL_OTHER", "dtypes_of", "tensor",
           "is_float", "wide", "dims_errors", "moved_rows", "wrap_int", "py_values", "from_py"]

COMPLEX = (D.complex64, D.complex128)
ALL = FLOATS + INTS + (D.bool,)
ALLC = ALL + COMPLEX
_BY_CATEGORY = {B: (D.bool,), I: INTS, F: FLOATS, C: COMPLEX}
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5]
SPECIAL_OTHER = [1.0, 0.0, -0.0, np.nan, 2.0, np.inf, -np.inf, 0.0, -1.5, 3.0]


def dtypes_of(cats):
    """The sample dtypes of a prim accepting dtype categories ``cats``."""
    return tuple(d for c in (F, I, B, C) if c in cats for d in _BY_CATEGORY[c])


def tensor(values, dtype, device="cpu"):
    with np.errstate(all="ignore"):
        t = fnx.from_numpy(np.array(values).astype(dtype.numpy))
    return t if str(device) == "cpu" else t.to(device)


def is_float(d):
    return d.is_floating_point


def wide(a):
    """float64/complex128 for floating inputs (a more precise reference), else as is."""
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        return a.astype(np.float64)
    return a


def wrap_int(v, dtype):
    """The Python int ``v`` wrapped into integer NumPy ``dtype`` (two's complement)."""
    info = np.iinfo(dtype)
    return (v - int(info.min)) % (1 << (8 * np.dtype(dtype).itemsize)) + int(info.min)


def py_values(a):
    """Each element of ``a`` as a Python number (exact: float, complex, int or bool)."""
    if a.dtype.kind == "c":
        a = a.astype(np.complex128)
    elif a.dtype.kind in "iu":
        a = a.astype(np.int64)
    elif a.dtype.kind != "b":
        a = a.astype(np.float64)
    return a.ravel().tolist()


def from_py(values, dtype, shape):
    """Python numbers as an array of NumPy ``dtype``: integers wrap around, floats and
    complex numbers are rounded once (from float64/complex128)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.array(values, np.bool_).reshape(shape)
    if dtype.kind in "iu":
        return np.array([wrap_int(v, dtype) for v in values], dtype).reshape(shape)
    exact = np.complex128 if dtype.kind == "c" else np.float64
    return np.array(values, exact).reshape(shape).astype(dtype)


def moved_rows(a, dims):
    """``a`` with ``dims`` moved last and flattened into rows: (kept shape, 2-d array)."""
    keep = [d for d in range(a.ndim) if d not in dims]
    kept = tuple(a.shape[d] for d in keep)
    n = int(np.prod([a.shape[d] for d in dims], dtype=np.int64))
    rows = int(np.prod(kept, dtype=np.int64))
    return kept, np.transpose(a, keep + list(dims)).reshape((rows, n))


def dims_errors(name, *extra):
    def errors(info, device):
        x = make_tensor((2, 3), D.float32, device)
        yield ErrorInput(SampleInput(x, [2], *extra), RuntimeError,
                         f"prims.{name}: dim 2 .* out of range")
        yield ErrorInput(SampleInput(x, [-1], *extra), RuntimeError,
                         f"prims.{name}: dim -1 .* out of range")
    return errors
