"""``out=`` for the functions that return several tensors (``sort``, ``linalg.eigh``, ...):
``write_results`` checks every out tensor against its result first (the count, PyTorch's
dtype rule and message, no autograd), then writes each through ``clone``'s out= form
(fnx/ir/aten/out_variants.py), which resizes it as PyTorch does (a warning when it had
elements) on every backend and in traces.  Nothing is written unless every check passes.

>>> import fnx
>>> values, indices = fnx.empty(0), fnx.empty(0, dtype=fnx.int64)
>>> r = fnx.sort(fnx.tensor([3., 1., 2.]), out=(values, indices))
>>> r.values is values, values.tolist(), indices.tolist()
(True, [1.0, 2.0, 3.0], [1, 2, 0])
"""
from __future__ import annotations

from ..core import dtype as D
from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor
from ..ir.aten.out_variants import cpp_name
from ..ir.variants import VARIANTS
from ..ops import aten

__all__ = ["write_results", "exact", "castable", "VALUES_INDICES"]


def exact(r, o):
    """PyTorch's usual rule: exactly the result's dtype."""
    if r.dtype is not o.dtype:
        return (f"Expected out tensor to have dtype {cpp_name(r.dtype)}, but got "
                f"{cpp_name(o.dtype)} instead")
    return None


def castable(what, name):
    """linalg.eig's rule: a dtype the (complex) result casts to safely."""
    def rule(r, o):
        if not o.dtype.is_complex or o.dtype.itemsize < r.dtype.itemsize:
            return (f"{name}: Expected {what} to be safely castable from "
                    f"{r.dtype.scalar_type} dtype, but got {what} with dtype "
                    f"{o.dtype.scalar_type}")
        return None
    return rule


def _torch_type(dtype):
    return f"torch.{dtype.scalar_type}Tensor"


def _median(r, o):
    if r.dtype is o.dtype:
        return None
    if r.dtype is D.int64:
        return (f"Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                f"{_torch_type(o.dtype)} instead (while checking arguments for median)")
    return (f"Expected tensor for 'values' to have the same type as tensor for argument #2 "
            f"'self'; but type {_torch_type(o.dtype)} does not equal {_torch_type(r.dtype)} "
            f"(while checking arguments for median)")


def _mode(r, o):
    which = "indices" if r.dtype is D.int64 else "values"
    if r.dtype is not o.dtype:
        return (f"expected scalar type '{r.dtype.scalar_type}' but got "
                f"'{o.dtype.scalar_type}' for {which} output")
    return None


def _kthvalue(r, o):
    if r.dtype is not o.dtype:
        return ("output indices must be of scalar type Long" if r.dtype is D.int64 else
                "output values must be of same type as input")
    return None


def _cumulative(r, o):
    if r.dtype is not o.dtype:
        return f"expected scalar_type {r.dtype.scalar_type} but found {o.dtype.scalar_type}"
    return None


# the (values, indices) functions whose dtype message is not ``exact``'s
VALUES_INDICES = {"median": _median, "nanmedian": _median, "mode": _mode,
                  "kthvalue": _kthvalue, "cummax": _cumulative, "cummin": _cumulative}


def write_results(name, results, out, inputs=(), rules=None):
    """Write ``results`` into the tensors of ``out`` (a tuple or list, one per result) and
    return them as a tuple; ``rules[i](result, out_i)`` gives the dtype error message (or
    None), ``exact`` by default.  ``inputs`` that require grad refuse out=, as PyTorch."""
    if not isinstance(out, (tuple, list)) or len(out) != len(results) or \
            not all(isinstance(o, Tensor) for o in out):
        got = len(out) if isinstance(out, (tuple, list)) else type(out).__name__
        raise TypeError(f"{name}(): expected tuple of {len(results)} elements but got {got}")
    if is_grad_enabled() and any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires "
                           f"grad.")
    rules = rules or [VALUES_INDICES.get(name, exact)] * len(results)
    for r, o, rule in zip(results, out, rules):
        msg = rule(r, o)
        if msg is not None:
            raise RuntimeError(msg)
    write = VARIANTS[aten.clone.default]["out"]
    for r, o in zip(results, out):
        write(r if r.dtype is o.dtype else r.to(o.dtype), out=o)
    return tuple(out)
