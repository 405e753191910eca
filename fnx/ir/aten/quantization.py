"""Fake quantization: ``fake_quantize_per_tensor_affine`` (a Python or a one-element tensor
scale and zero point) and ``fake_quantize_per_channel_affine`` (one scale and zero point
per slice along ``axis``). Float in, float out: each value is rounded to the integer grid
``q = round(x / scale) + zero_point`` (half to even; ``x * (1 / scale)`` with ``1 / scale``
in float32, as PyTorch's kernels), clamped to ``[quant_min, quant_max]`` and mapped back,
``(q - zero_point) * scale``.

PyTorch's kernels differ in their corners, and fnx follows each:

- per tensor, ``q`` is clamped as a float: NaN goes to ``quant_min``, ``+inf`` to
  ``quant_max``, ``-inf`` to ``quant_min``; the result is computed in float32 (a float64
  input's too), then cast to the input's dtype;
- per channel, ``q`` passes through an int64 cast: every value that has none (NaN, +-inf,
  beyond 2**63) lands on ``quant_min``; a floating zero point (float32 or float16) is added
  before rounding, ``round(x / scale + zero_point)``, and the result is computed in float64.

The gradient is the straight-through estimator: the output's gradient passes where
``q`` was inside ``[quant_min, quant_max]`` before clamping and is zero elsewhere (NaN and
infinities included); scale and zero point get none.
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...ops import aten, prims
from ..registry import TensorMeta, defop, derivative
from ._common import not_implemented

__all__ = ["fake_quantize_per_tensor_affine", "fake_quantize_per_tensor_affine_tensor_qparams",
           "fake_quantize_per_channel_affine", "QUANT_RANGE", "ZERO_POINT_RANGE"]

# PyTorch's messages (the run of spaces is in PyTorch's string)
QUANT_RANGE = "`quant_min` should be less than or         equal to `quant_max`."
ZERO_POINT_RANGE = "`zero_point` must be between `quant_min` and `quant_max`."
_INT64_LIMIT = 2.0 ** 63


def _check_input(self, kernel):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(str(not_implemented(kernel, self.dtype)))


def _check_range(quant_min, quant_max):
    if quant_min > quant_max:
        raise RuntimeError(QUANT_RANGE)


def _one_value(t):
    if t.numel() != 1:
        raise RuntimeError(f"a Tensor with {t.numel()} elements cannot be converted to Scalar")


def _opmath(x):
    """The dtype the kernels round in: float64 for float64 input, float32 otherwise."""
    return D.float64 if x.dtype is D.float64 else D.float32


def _float32_reciprocal(scale) -> float:
    with np.errstate(divide="ignore", over="ignore"):
        return float(np.float32(1.0) / np.float32(scale))


# ----------------------------------------------------------------------------- per tensor

def _per_tensor_meta(self, scale, zero_point, quant_min, quant_max):
    _check_input(self, "fake_quantize_tensor_cachemask_kernel_type_handling")
    _check_range(quant_min, quant_max)
    if not quant_min <= zero_point <= quant_max:
        raise RuntimeError(ZERO_POINT_RANGE)
    return TensorMeta(tuple(self.shape), self.dtype)


def _per_tensor_qparams_meta(self, scale, zero_point, quant_min, quant_max):
    _check_input(self, "fake_quantize_tensor_cachemask_kernel_type_handling")
    _one_value(scale)
    _one_value(zero_point)
    _check_range(quant_min, quant_max)
    return TensorMeta(tuple(self.shape), self.dtype)


def _tensor_qparams(self, scale, zero_point):
    """scale as float32, 1/scale in float32 and the zero point truncated to an integer,
    each 0-dim in the rounding dtype."""
    s = aten._to_copy(aten.reshape(scale, []), dtype=D.float32)
    inv = aten.reciprocal(s)
    z = aten._to_copy(aten._to_copy(aten.reshape(zero_point, []), dtype=D.int64),
                      dtype=_opmath(self))
    return s, aten._to_copy(inv, dtype=_opmath(self)), z


def _per_tensor_q(self, inv_scale, zero_point):
    """``round(x * (1 / scale)) + zero_point``, before clamping."""
    x = aten._to_copy(self, dtype=_opmath(self))
    return aten.round(x * inv_scale) + zero_point


def _per_tensor_out(self, q, scale, zero_point, quant_min, quant_max):
    # fmax/fmin of a float: NaN -> quant_min, +-inf -> the bound
    q = aten.where.self(aten.isnan(q), float(quant_min), aten.clamp(q, quant_min, quant_max))
    out = aten._to_copy(q - zero_point, dtype=D.float32) * scale
    return aten._to_copy(out, dtype=self.dtype)


def _straight_through_value(self, out, q, quant_min, quant_max):
    """``out`` as it is, with the straight-through estimator as its derivative (1 where
    ``q`` is in range) for a program that JAX differentiates (jax.vjp of a compiled
    module, fnx.lower.jax_autograd), which would differentiate ``round`` to 0: ``x - x``
    is exactly 0 where it is added (in range, so finite)."""
    inside = aten.logical_and(q >= quant_min, q <= quant_max)    # False for NaN
    passed = aten.where.self(inside, self - aten.detach(self), 0.0)
    return aten.detach(out) + passed


def _per_tensor(self, scale, zero_point, quant_min, quant_max):
    _per_tensor_meta(self, scale, zero_point, quant_min, quant_max)
    scale32 = float(np.float32(scale))
    q = _per_tensor_q(self, _float32_reciprocal(scale), zero_point)
    out = _per_tensor_out(self, q, scale32, zero_point, quant_min, quant_max)
    return _straight_through_value(self, out, q, quant_min, quant_max)


def _per_tensor_qparams(self, scale, zero_point, quant_min, quant_max):
    _per_tensor_qparams_meta(self, scale, zero_point, quant_min, quant_max)
    s, inv, z = _tensor_qparams(self, scale, zero_point)
    q = _per_tensor_q(self, inv, z)
    out = _per_tensor_out(self, q, s, z, quant_min, quant_max)
    return _straight_through_value(self, out, q, quant_min, quant_max)


fake_quantize_per_tensor_affine = defop(
    "fake_quantize_per_tensor_affine(Tensor self, float scale, int zero_point, int quant_min, "
    "int quant_max) -> Tensor", meta=_per_tensor_meta, decomposition=_per_tensor)
fake_quantize_per_tensor_affine_tensor_qparams = defop(
    "fake_quantize_per_tensor_affine.tensor_qparams(Tensor self, Tensor scale, "
    "Tensor zero_point, int quant_min, int quant_max) -> Tensor",
    meta=_per_tensor_qparams_meta, decomposition=_per_tensor_qparams)


# ----------------------------------------------------------------------------- per channel

def _per_channel_meta(self, scale, zero_point, axis, quant_min, quant_max):
    _check_input(self, "fake_quantize_channel_cachemask_cpu_type_handling")
    if scale.dtype not in (D.float32, D.bfloat16):
        raise RuntimeError(f"Scale must be Float or BFloat16, found {scale.dtype.scalar_type}")
    if zero_point.dtype not in (D.int32, D.float32, D.float16):
        raise RuntimeError(f"Zero-point must be Int32, Float or Half, found "
                           f"{zero_point.dtype.scalar_type}")
    if scale.ndim != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.ndim != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.shape[0] != zero_point.shape[0]:
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    # (PyTorch reads self.size(axis) here, before checking axis itself)
    if self.ndim == 0:
        raise IndexError(f"Dimension specified as {axis} but tensor has no dimensions")
    n = self.ndim
    if not -n <= axis < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {axis})")
    if scale.shape[0] != self.shape[axis]:
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input "
                           "tensor")
    _check_range(quant_min, quant_max)
    if axis < 0:
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    return TensorMeta(tuple(self.shape), self.dtype)


def _along(t, axis, ndim, dtype):
    """A per-channel vector as ``dtype``, shaped to broadcast along ``axis``."""
    shape = [1] * ndim
    shape[axis] = t.shape[0]
    return aten.reshape(aten._to_copy(t, dtype=dtype), shape)


def _per_channel_q(self, scale, zero_point, axis):
    """``round(x * (1 / scale)) + zero_point`` (``round(x * (1 / scale) + zero_point)`` for a
    floating zero point), before clamping."""
    dt = _opmath(self)
    inv = _along(aten.reciprocal(aten._to_copy(scale, dtype=D.float32)), axis, self.ndim, dt)
    z = _along(zero_point, axis, self.ndim, dt)
    x = aten._to_copy(self, dtype=dt) * inv
    if zero_point.dtype.is_floating_point:
        return aten.round(x + z)
    return aten.round(x) + z


def _per_channel(self, scale, zero_point, axis, quant_min, quant_max):
    _per_channel_meta(self, scale, zero_point, axis, quant_min, quant_max)
    if not zero_point.dtype.is_floating_point:
        # a value check on data: compiled programs refuse it too
        zero_point = prims.check_in_range(aten._to_copy(zero_point, dtype=D.int64), quant_min,
                                          quant_max + 1, "RuntimeError", ZERO_POINT_RANGE)
    raw = _per_channel_q(self, scale, zero_point, axis)
    # an int64 cast: NaN, infinities and values past int64 all become quant_min
    castable = aten.logical_and(aten.isfinite(raw), aten.abs(raw) < _INT64_LIMIT)
    q = aten.where.self(castable, aten.clamp(raw, quant_min, quant_max), float(quant_min))
    wide = aten._to_copy(q, dtype=D.float64)
    out = ((wide - _along(zero_point, axis, self.ndim, D.float64))
           * _along(scale, axis, self.ndim, D.float64))
    return _straight_through_value(self, aten._to_copy(out, dtype=self.dtype), raw,
                                   quant_min, quant_max)


fake_quantize_per_channel_affine = defop(
    "fake_quantize_per_channel_affine(Tensor self, Tensor scale, Tensor zero_point, int axis, "
    "int quant_min, int quant_max) -> Tensor",
    meta=_per_channel_meta, decomposition=_per_channel)


# ----------------------------------------------------------------------------- derivatives

def _straight_through(grad, q, quant_min, quant_max):
    inside = aten.logical_and(q >= quant_min, q <= quant_max)    # False for NaN
    return aten.where.self(inside, grad, 0.0)


@derivative(fake_quantize_per_tensor_affine)
def _per_tensor_backward(grad, self, scale, zero_point, quant_min, quant_max):
    q = _per_tensor_q(self, _float32_reciprocal(scale), zero_point)
    return _straight_through(grad, q, quant_min, quant_max)


@derivative(fake_quantize_per_tensor_affine_tensor_qparams)
def _per_tensor_qparams_backward(grad, self, scale, zero_point, quant_min, quant_max):
    _, inv, z = _tensor_qparams(self, scale, zero_point)
    return (_straight_through(grad, _per_tensor_q(self, inv, z), quant_min, quant_max),
            None, None)


@derivative(fake_quantize_per_channel_affine)
def _per_channel_backward(grad, self, scale, zero_point, axis, quant_min, quant_max):
    q = _per_channel_q(self, scale, zero_point, axis)
    return _straight_through(grad, q, quant_min, quant_max), None, None
