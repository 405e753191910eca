"""The prims' argument checks: what every prim's meta function (and, through it, every
backend's kernel) enforces before computing anything.

Prims take no Python scalars in tensor slots, do not broadcast or promote, and take
normalized dims and sizes (no negative dims, no ``-1``).  A violation raises
``RuntimeError("prims.<name>: <problem>")`` (``fail``).

>>> import fnx
>>> scalar_for("full", 3, fnx.float32)
3.0
>>> scalar_for("full", 1.5, fnx.int64)
Traceback (most recent call last):
    ...
RuntimeError: prims.full: value 1.5 is not representable as int64 (prims do not cast implicitly)
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ..strides import is_symbolic_size, size_index

__all__ = ["B", "I", "F", "C", "ANY", "BI", "BIF", "IF", "IFC", "FC", "FLOAT", "INT", "COMPLEX",
           "category_name", "fail", "check_tensor", "check_category", "int_arg", "int_list",
           "shape_arg", "check_dims", "dim_arg", "per_dim", "same_shape", "same_dtype",
           "dtype_arg", "scalar_for"]

# dtype categories (``fnx.dtype.category``)
B, I, F, C = 0, 1, 2, 3  # noqa: E741  (I: integer, as the other category letters)
ANY = frozenset((B, I, F, C))
BI = frozenset((B, I))
BIF = frozenset((B, I, F))
IF = frozenset((I, F))
IFC = frozenset((I, F, C))
FC = frozenset((F, C))
FLOAT = frozenset((F,))
INT = frozenset((I,))
COMPLEX = frozenset((C,))
_CAT_NAMES = {B: "bool", I: "integer", F: "floating", C: "complex"}


def category_name(cats) -> str:
    return "/".join(_CAT_NAMES[c] for c in sorted(cats))


def fail(name, msg) -> RuntimeError:
    """The error of prim ``name`` (raised by meta functions and kernels alike)."""
    return RuntimeError(f"prims.{name}: {msg}")


def check_tensor(name, arg, x):
    """A tensor slot must hold a tensor (prims take no Python scalars there)."""
    if not hasattr(x, "_ks"):
        raise fail(name, f"expected a Tensor for '{arg}', got {type(x).__name__} "
                         f"(prims take no Python scalars in Tensor slots)")
    return x


def check_category(name, x, cats, arg="self"):
    if x.dtype.category not in cats:
        raise fail(name, f"expected a {category_name(cats)} tensor for '{arg}', got "
                         f"{x.dtype.name}")


def int_arg(name, what, v) -> int:
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise fail(name, f"{what} must be an int, got {type(v).__name__}")
    # a symbolic size (fnx.graph.symint) stays one: its decisions below are guarded
    return size_index(v)


def int_list(name, what, xs) -> tuple:
    if not isinstance(xs, (list, tuple)):
        raise fail(name, f"{what} must be a list of ints, got {type(xs).__name__}")
    return tuple(int_arg(name, what, v) for v in xs)


def shape_arg(name, shape, what="shape") -> tuple:
    shape = int_list(name, what, shape)
    for s in shape:
        if s < 0:
            raise fail(name, f"{what} {list(shape)} has a negative size (prims take no -1)")
    return shape


def check_dims(name, dims, ndim, what="dims") -> tuple:
    """Dims already normalized: each in [0, ndim), no repeats."""
    dims = int_list(name, what, dims)
    for d in dims:
        if not 0 <= d < ndim:
            raise fail(name, f"dim {d} in {what} out of range for a tensor of rank {ndim} "
                             f"(prims take normalized dims in [0, {ndim}))")
    if len(set(dims)) != len(dims):
        raise fail(name, f"{what} {list(dims)} has repeated dims")
    return dims


def dim_arg(name, dim, ndim, what="dim") -> int:
    return check_dims(name, [dim], ndim, what)[0]


def per_dim(name, what, xs, ndim) -> tuple:
    """One int per dim (slice bounds, padding, strides)."""
    xs = int_list(name, what, xs)
    if len(xs) != ndim:
        raise fail(name, f"{what} {list(xs)} must have one entry per dim (rank {ndim})")
    return xs


def same_shape(name, *pairs):
    (an, a), *rest = pairs
    for bn, b in rest:
        if tuple(a.shape) != tuple(b.shape):
            raise fail(name, f"shape mismatch: '{an}' has shape {list(a.shape)} but '{bn}' "
                             f"has shape {list(b.shape)} (prims do not broadcast)")


def same_dtype(name, *pairs):
    (an, a), *rest = pairs
    for bn, b in rest:
        if a.dtype is not b.dtype:
            raise fail(name, f"dtype mismatch: '{an}' is {a.dtype.name} but '{bn}' is "
                             f"{b.dtype.name} (prims do not promote)")


def dtype_arg(name, dtype, cats=ANY):
    if not isinstance(dtype, D.dtype):
        raise fail(name, f"dtype must be an fnx.dtype, got {type(dtype).__name__}")
    if dtype.category not in cats:
        raise fail(name, f"expected a {category_name(cats)} dtype, got {dtype.name}")
    return dtype


def scalar_for(name, value, dtype):
    """A Scalar argument as a Python value of ``dtype``: a scalar of a higher category than
    the dtype (1.5 for an int tensor, a complex for a float one) is an error, not a cast."""
    if hasattr(value, "_ks"):
        if value.ndim != 0:
            raise fail(name, f"expected a Scalar, got a tensor of shape {list(value.shape)}")
        value = value.item()
    elif hasattr(value, "item") and not isinstance(value, (bool, int, float, complex)):
        value = value.item()         # NumPy scalar
    if isinstance(value, bool):
        cat = B
    elif isinstance(value, int):
        cat = I
    elif isinstance(value, float):
        cat = F
    elif isinstance(value, complex):
        cat = C
    elif is_symbolic_size(value):
        # a symbolic size (fnx.graph.symint) as a fill value (a mean's count): it stays a
        # symbol, made concrete when the graph is lowered for a size
        if dtype is D.bool or dtype.category == C:
            return value._specialize()
        if dtype.category == I:
            info = np.iinfo(dtype.numpy)
            if not int(info.min) <= value <= int(info.max):
                raise fail(name, f"value {value} out of range for {dtype.name}")
        return value
    else:
        raise fail(name, f"expected a Scalar, got {type(value).__name__}")
    if cat > dtype.category:
        raise fail(name, f"value {value!r} is not representable as {dtype.name} "
                         f"(prims do not cast implicitly)")
    if dtype is D.bool:
        return bool(value)
    if dtype.category == I:
        info = np.iinfo(dtype.numpy)
        if not int(info.min) <= value <= int(info.max):
            raise fail(name, f"value {value} out of range for {dtype.name}")
        return int(value)
    if dtype.category == F:
        # a float subclass other than NumPy's (fnx.compile's SymFloat) stays itself
        return value if isinstance(value, float) and not isinstance(value, np.floating) \
            else float(value)
    return complex(value)


