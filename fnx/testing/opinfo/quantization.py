"""OpInfo entries of fnx/ir/aten/quantization.py (fake quantization) against NumPy
references written from the kernels' arithmetic: ``x * float32(1 / scale)`` rounded half to
even, the clamp (per tensor: NaN to ``quant_min``, infinities to their bound; per channel:
every value without an int64 form to ``quant_min``) and the mapping back.

The gradient is a straight-through estimator, not the derivative of the (piecewise
constant) function, so finite differences cannot check it: tests/test_fake_quantize.py
checks it against a NumPy mask."""
from __future__ import annotations

import numpy as np

from ...api import tensor
from ...core import dtype as D
from ...ir.aten import quantization as Q
from ..database import ErrorInput, OpInfo, SampleInput, register
from ..database import make_tensor as mk

DT = (D.float32, D.float64, D.float16, D.bfloat16)
_NO_GRAD = {"grad": "a straight-through estimator: finite differences of the step function "
                    "do not give it (tests/test_fake_quantize.py checks it)"}


def _rounding_dtype(x):
    return np.float64 if x.dtype == np.float64 else np.float32


def ref_per_tensor(x, scale, zero_point, quant_min, quant_max):
    if isinstance(scale, np.ndarray):
        scale = float(scale.reshape(()))
    if isinstance(zero_point, np.ndarray):
        zero_point = int(zero_point.reshape(()))    # a C cast: truncation
    dt = _rounding_dtype(x)
    with np.errstate(all="ignore"):
        inv = dt(np.float32(1) / np.float32(scale))
        v = np.rint(x.astype(dt) * inv) + zero_point
        q = np.where(np.isnan(v), quant_min, np.clip(v, quant_min, quant_max))
        out = (q - zero_point).astype(np.float32) * np.float32(scale)
    return out.astype(x.dtype)


def ref_per_channel(x, scale, zero_point, axis, quant_min, quant_max):
    dt = _rounding_dtype(x)
    out = np.empty(x.shape, np.float64)
    for c in range(x.shape[axis]):
        xc = np.take(x, c, axis=axis).astype(dt)
        s = np.float32(scale[c])
        with np.errstate(all="ignore"):
            inv = dt(np.float32(1) / s)
            if zero_point.dtype.kind == "f":
                z = dt(zero_point[c])
                v = np.rint(xc * inv + z)
            else:
                z = int(zero_point[c])
                v = np.rint(xc * inv) + z
            castable = np.isfinite(v) & (np.abs(v) < 2.0 ** 63)
            q = np.where(castable, np.clip(v, quant_min, quant_max), quant_min)
            idx = [slice(None)] * x.ndim
            idx[axis] = c
            out[tuple(idx)] = (q - np.float64(z)) * np.float64(s)
    return out.astype(x.dtype)


def _specials(dtype, device):
    return tensor([float("nan"), float("inf"), -float("inf"), 0.0, 0.25, -0.75, 1e30],
                  dtype=dtype, device=device)


def _per_tensor_samples(info, device, dtype):
    yield SampleInput(mk((4, 5), dtype, device), 0.1, 3, -128, 127)
    yield SampleInput(mk((3, 4), dtype, device, low=-2, high=2), 0.25, 0, -4, 5)
    yield SampleInput(mk((6,), dtype, device, noncontiguous=True), 0.5, 2, 0, 15)
    yield SampleInput(mk((), dtype, device), 0.3, -1, -3, 3)
    yield SampleInput(mk((0, 3), dtype, device), 0.5, 1, -4, 5)
    yield SampleInput(_specials(dtype, device), 0.5, 1, -4, 5)
    yield SampleInput(mk((5,), dtype, device), 0.0, 1, -4, 5)        # scale 0: signed zeros


def _per_tensor_qparams_samples(info, device, dtype):
    def one(v, d):
        return tensor(v, dtype=d, device=device)
    yield SampleInput(mk((4, 5), dtype, device), one(0.1, D.float32), one(3, D.int32), -128, 127)
    yield SampleInput(mk((3, 4), dtype, device, low=-2, high=2), one([0.25], D.float64),
                      one([1.7], D.float32), -4, 5)
    yield SampleInput(_specials(dtype, device), one(0.5, D.float32), one(9, D.int64), -4, 5)
    yield SampleInput(mk((), dtype, device), one(2, D.int64), one(0, D.int32), -3, 3)


def _per_channel_samples(info, device, dtype):
    def vec(n, low, high, d):
        return mk((n,), d, device, low=low, high=high)
    int_zp = tensor([3, -5, 0], dtype=D.int32, device=device)
    yield SampleInput(mk((3, 5), dtype, device), vec(3, 0.05, 0.5, D.float32), int_zp, 0,
                      -128, 127)
    yield SampleInput(mk((2, 3, 4), dtype, device), vec(3, 0.5, 2, D.float32), int_zp, 1,
                      -10, 10)
    yield SampleInput(mk((2, 4), dtype, device), vec(4, 0.1, 1, D.float32),
                      vec(4, -3, 3, D.float32), 1, -8, 7)
    yield SampleInput(mk((4, 2), dtype, device), vec(4, 0.1, 1, D.float32),
                      vec(4, -3, 3, D.float16), 0, -8, 7)
    yield SampleInput(_specials(dtype, device).reshape(1, 7), tensor([0.5], device=device),
                      tensor([1], dtype=D.int32, device=device), 0, -4, 5)
    yield SampleInput(mk((0, 3), dtype, device), vec(3, 0.1, 1, D.float32), int_zp, 1, -8, 7)


def _per_tensor_errors(info, device):
    x = mk((2, 3), D.float32, device)
    yield ErrorInput(SampleInput(x, 0.5, 1, 5, -4), RuntimeError, "`quant_min` should be less")
    yield ErrorInput(SampleInput(x, 0.5, 10, -4, 5), RuntimeError,
                     "`zero_point` must be between `quant_min` and `quant_max`.")
    yield ErrorInput(SampleInput(mk((2,), D.int64, device), 0.5, 1, -4, 5), NotImplementedError,
                     "\"fake_quantize_tensor_cachemask_kernel_type_handling\" not implemented "
                     "for 'Long'")


def _per_tensor_qparams_errors(info, device):
    x = mk((2, 3), D.float32, device)
    s, z = mk((2,), D.float32, device, low=0.1, high=1), mk((1,), D.int32, device)
    yield ErrorInput(SampleInput(x, s, z, -4, 5), RuntimeError,
                     "a Tensor with 2 elements cannot be converted to Scalar")
    yield ErrorInput(SampleInput(x, s[:1], z, 5, -4), RuntimeError, "`quant_min` should be less")


def _per_channel_errors(info, device):
    x = mk((2, 3), D.float32, device)
    s = tensor([0.5, 0.25], device=device)
    z = tensor([1, -2], dtype=D.int32, device=device)
    cases = [
        ((x, s.double(), z, 0, -4, 5), RuntimeError, "Scale must be Float or BFloat16, found "
                                                     "Double"),
        ((x, s, z.long(), 0, -4, 5), RuntimeError, "Zero-point must be Int32, Float or Half, "
                                                   "found Long"),
        ((x, s.reshape(2, 1), z, 0, -4, 5), RuntimeError, "scale should be a 1-D tensor"),
        ((x, s, z.reshape(2, 1), 0, -4, 5), RuntimeError, "zero point should be a 1-D tensor"),
        ((x, s[:1], z, 0, -4, 5), RuntimeError, "scale and zero-point need to have the same"),
        ((x, s, z, 1, -4, 5), RuntimeError, "dimensions of scale and zero-point are not "
                                            "consistent with input tensor"),
        ((x, s, z, 2, -4, 5), IndexError, "Dimension out of range"),
        ((x.t(), s, z, -1, -4, 5), RuntimeError, "`axis` must be between 0 and number of"),
        ((x, s, z, 0, 5, -4), RuntimeError, "`quant_min` should be less"),
        ((mk((), D.float32, device), s[:1], z[:1], 0, -4, 5), IndexError,
         "Dimension specified as 0 but tensor has no dimensions"),
        ((mk((2, 3), D.int64, device), s, z, 0, -4, 5), NotImplementedError,
         "\"fake_quantize_channel_cachemask_cpu_type_handling\" not implemented for 'Long'"),
    ]
    for args, exc, msg in cases:
        yield ErrorInput(SampleInput(*args), exc, msg)
    # a value check on the zero points' data: meta cannot see it
    yield ErrorInput(SampleInput(x, s, tensor([1, 9], dtype=D.int32, device=device), 0, -4, 5),
                     RuntimeError, "`zero_point` must be between `quant_min` and `quant_max`.",
                     meta=False)


register(
    OpInfo(Q.fake_quantize_per_tensor_affine, ref_per_tensor, DT, _per_tensor_samples,
           error_inputs=_per_tensor_errors, skips=_NO_GRAD),
    OpInfo(Q.fake_quantize_per_tensor_affine_tensor_qparams, ref_per_tensor, DT,
           _per_tensor_qparams_samples, error_inputs=_per_tensor_qparams_errors,
           skips=_NO_GRAD),
    OpInfo(Q.fake_quantize_per_channel_affine, ref_per_channel, DT, _per_channel_samples,
           error_inputs=_per_channel_errors, skips=_NO_GRAD),
)
