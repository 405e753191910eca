"""OpInfo entries of the reduction prims (fnx/ir/prims/reduction.py).

The references reduce row by row in Python (the kernels call NumPy reductions):
``math.fsum`` for float sums (exactly rounded), float64 products, max/min where a NaN
wins and an empty extent gives the identity, integers wrapped to their type, and on
bool ``any``/``all`` (add and mul on bool are or and and).
"""
from __future__ import annotations

import math

import numpy as np

from ....core import dtype as D
from ....ir import prims as P
from ...database import ErrorInput, OpInfo, SampleInput, make_tensor, register
from ._common import ALL, dims_errors, from_py, is_float, moved_rows, tensor

HALF_TOLS = {D.float16: (2e-3, 1e-2), D.bfloat16: (1.6e-2, 1e-1)}


def _reduce_samples(low=None, high=None):
    def samples(info, device, dtype):
        def t(shape, **kw):
            return make_tensor(shape, dtype, device, low=low, high=high, **kw)
        yield SampleInput(t((3, 4)), [1])
        yield SampleInput(t((3, 4)), [0, 1])
        yield SampleInput(t((2, 3, 4), noncontiguous=True), [0, 2])
        yield SampleInput(t((3, 4)), [])
        yield SampleInput(t((0, 3)), [0])            # the identity over an empty extent
        yield SampleInput(t(()), [])
        if is_float(dtype):
            yield SampleInput(tensor([[1.0, np.nan, 2.0], [3.0, -np.inf, 0.5]], dtype,
                                     device), [1])
    return samples


def _fsum(xs):
    """The exactly rounded sum, with IEEE's NaN and infinities (math.fsum raises on
    inf - inf)."""
    if any(x != x for x in xs) or (math.inf in xs and -math.inf in xs):
        return math.nan
    if math.inf in xs or -math.inf in xs:
        return math.inf if math.inf in xs else -math.inf
    return math.fsum(xs)


def _extreme(pick, identity):
    def f(xs):
        if any(x != x for x in xs):
            return math.nan
        return pick(xs, default=identity)
    return f


def _row_fns(kind, dtype):
    """The reduction of one row (a list of Python numbers) for ``dtype``."""
    if dtype.kind == "b":
        return any if kind in ("sum", "max") else all
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return {"sum": sum, "prod": math.prod,
                "max": lambda xs: max(xs, default=int(info.min)),
                "min": lambda xs: min(xs, default=int(info.max))}[kind]
    return {"sum": _fsum, "prod": math.prod, "max": _extreme(max, -math.inf),
            "min": _extreme(min, math.inf)}[kind]


def _reduce_ref(kind):
    def ref(a, dims):
        kept, rows = moved_rows(a, tuple(dims))
        fn = _row_fns(kind, a.dtype)
        values = rows.astype(np.float64) if a.dtype.kind not in "iub" else rows
        return from_py([fn(row) for row in values.tolist()], a.dtype, kept)
    return ref


def _arg_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device), 1)
    yield SampleInput(make_tensor((3, 4), dtype, device, low=0, high=2), 0)   # ties
    yield SampleInput(make_tensor((2, 3), dtype, device, noncontiguous=True), 1)
    yield SampleInput(make_tensor((0, 3), dtype, device), 1)
    if is_float(dtype):
        yield SampleInput(tensor([[1.0, np.nan, 2.0, np.nan], [3.0, -np.inf, np.inf, 0.5]],
                                 dtype, device), 1)


def _arg_ref(kind):
    """The index of the first extreme along ``dim``; a NaN is the extreme either way."""
    def first(row):
        best = None
        for i, v in enumerate(row):
            if v != v:
                return i
            if best is None or (v > row[best] if kind == "max" else v < row[best]):
                best = i
        return best

    def ref(a, dim):
        kept, rows = moved_rows(a, (dim,))
        values = rows.astype(np.float64) if a.dtype.kind not in "iub" else rows
        return np.array([first(row) for row in values.tolist()], np.int64).reshape(kept)
    return ref


def _arg_errors(name):
    def errors(info, device):
        yield ErrorInput(SampleInput(make_tensor((3, 0), D.float32, device), 1), RuntimeError,
                         f"prims.{name}: cannot take {name} over dim 1 of size 0")
    return errors


register(
    OpInfo(P.reduce_sum, _reduce_ref("sum"), ALL, _reduce_samples(),
           error_inputs=dims_errors("reduce_sum"), tols=HALF_TOLS),
    OpInfo(P.reduce_prod, _reduce_ref("prod"), ALL, _reduce_samples(-2, 3),
           error_inputs=dims_errors("reduce_prod")),
    OpInfo(P.reduce_max, _reduce_ref("max"), ALL, _reduce_samples(),
           error_inputs=dims_errors("reduce_max")),
    OpInfo(P.reduce_min, _reduce_ref("min"), ALL, _reduce_samples(),
           error_inputs=dims_errors("reduce_min")),
    OpInfo(P.argmax, _arg_ref("max"), ALL, _arg_samples, error_inputs=_arg_errors("argmax")),
    OpInfo(P.argmin, _arg_ref("min"), ALL, _arg_samples, error_inputs=_arg_errors("argmin")),
)
