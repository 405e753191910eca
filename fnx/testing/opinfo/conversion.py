"""OpInfo entries for conversions: _to_copy, copy (and copy_, derived), scalar_tensor,
_local_scalar_dense.  (clone's entry lives with the shape family, where clone is defined.)

Float -> integer conversions truncate toward zero; values outside the target's range and
NaN/inf have no defined integer result (C casts), so samples stay inside the range.
"""
from __future__ import annotations

import numpy as np

import fnx

from ...core import dtype as D
from ...ops import aten
from ..database import ALL_DTYPES, ErrorInput, OpInfo, SampleInput, make_tensor, register

TARGETS = (D.float32, D.float64, D.float16, D.bfloat16, D.int64, D.int32, D.int8, D.uint8,
           D.bool)


def _is_float(d):
    return d.is_floating_point or d.is_complex


def _src(shape, dtype, device, target, **kw):
    """Values every target can hold: non-negative for unsigned targets."""
    low = 0 if target is D.uint8 or dtype is D.uint8 else None
    return make_tensor(shape, dtype, device, low=low, **kw)


def _special(dtype, device):
    vals = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.5, 1e30], np.float64)
    with np.errstate(over="ignore"):        # 1e30 is inf in float16
        t = fnx.from_numpy(vals.astype(dtype.numpy))
    return t if str(device) == "cpu" else t.to(device)


# --------------------------------------------------------------------------- _to_copy

def _to_copy_samples(info, device, dtype):
    for i, target in enumerate(TARGETS):
        shape = ((3, 4), (), (0, 2), (2, 3))[i % 4]
        yield SampleInput(_src(shape, dtype, device, target, noncontiguous=i % 4 == 3),
                          dtype=target)
    yield SampleInput(_src((4, 3), dtype, device, dtype).t())           # a plain copy
    yield SampleInput(_src((2, 2), dtype, device, dtype), device=device)
    if _is_float(dtype):
        for target in (D.float32, D.float64, D.float16, D.bfloat16, D.bool):
            yield SampleInput(_special(dtype, device), dtype=target)


def _to_copy_ref(a, *, dtype=None, **_):
    return a.astype(dtype.numpy if dtype is not None else a.dtype, copy=True)


# --------------------------------------------------------------------------- copy

def _copy_samples(info, device, dtype):
    other = D.int64 if _is_float(dtype) else D.float32
    yield SampleInput(make_tensor((3, 4), dtype, device), _src((3, 4), dtype, device, dtype))
    yield SampleInput(make_tensor((3, 4), dtype, device), _src((4,), other, device, dtype))
    yield SampleInput(make_tensor((), dtype, device), _src((), other, device, dtype))
    yield SampleInput(make_tensor((0, 3), dtype, device), _src((1, 3), dtype, device, dtype))
    yield SampleInput(make_tensor((2, 3), dtype, device, noncontiguous=True),
                      _src((3, 2), other, device, dtype).t())
    yield SampleInput(make_tensor((2, 3), dtype, device), _src((2, 1), dtype, device, dtype),
                      True)


def _copy_ref(a, src, non_blocking=False):
    return np.broadcast_to(src, a.shape).astype(a.dtype)


def _copy_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2, 3), D.float32, device),
                                 make_tensor((4,), D.float32, device)), RuntimeError,
                     r"copy_?: the src shape \[4\] cannot be broadcast to the destination "
                     r"shape \[2, 3\]|must match the size")


# --------------------------------------------------------------------------- scalar_tensor

def _scalar_tensor_samples(info, device, dtype):
    values = [3, True, 0] if not _is_float(dtype) else [2.5, -3, True, float("inf")]
    if dtype is D.uint8:
        values = [3, True, 0]
    for v in values:
        yield SampleInput(v, dtype=dtype, device=device)
    if dtype is D.float32:      # no dtype: the Python number's (int -> int64, float -> default)
        yield SampleInput(7, device=device)
        yield SampleInput(-1.5, device=device)
        yield SampleInput(False, device=device)


def _scalar_tensor_ref(s, *, dtype=None, **_):
    if dtype is None:
        dtype = D.scalar_dtype(s)
    return np.asarray(s).astype(dtype.numpy)


# --------------------------------------------------------------------------- item

def _item_samples(info, device, dtype):
    yield SampleInput(make_tensor((), dtype, device))
    yield SampleInput(make_tensor((1,), dtype, device))
    yield SampleInput(make_tensor((1, 1), dtype, device).t())


def _item_ref(a):
    v = a.reshape(())
    if a.dtype == np.bool_:
        return bool(v)
    if a.dtype.kind in "iu":
        return int(v)
    return float(v.astype(np.float64))


def _item_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2,), D.float32, device)), RuntimeError,
                     "a Tensor with 2 elements cannot be converted to Scalar", meta=False)


register(
    OpInfo(aten._to_copy.default, _to_copy_ref, ALL_DTYPES, _to_copy_samples),
    OpInfo(aten.copy.default, _copy_ref, ALL_DTYPES, _copy_samples,
           error_inputs=_copy_errors),
    OpInfo(aten.scalar_tensor.default, _scalar_tensor_ref, ALL_DTYPES,
           _scalar_tensor_samples),
    OpInfo(aten._local_scalar_dense.default, _item_ref, ALL_DTYPES, _item_samples,
           error_inputs=_item_errors,
           skips={"meta": "returns a Python number read from the data: no meta result",
                  "decomp_prims": "reads a value out of a tensor (Tensor.item()): "
                                  "data-dependent, outside any op set",
                  "lowering": "Tensor.item() cannot be traced (data-dependent)"}),
)
