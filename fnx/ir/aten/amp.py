"""The ops GradScaler's bookkeeping is made of (``fnx.amp.GradScaler``), as in ATen.

Both are written with tensor ops only (no ``.item()``), so a compiled training step keeps
the inf check, the unscale and the scale update on the device, in one program.

- ``_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)``: multiplies
  every gradient by ``inv_scale`` and sets ``found_inf`` to 1.0 when any of them holds an
  inf or a NaN (it is never reset to 0 here: the caller passes a fresh 0.0).
- ``_amp_update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
  growth_interval)``: after a skipped step the scale is multiplied by ``backoff_factor``
  and the tracker reset; otherwise the tracker counts the step, and at
  ``growth_interval`` consecutive good steps the scale grows by ``growth_factor`` (unless
  that overflows float32) and the tracker restarts at 0.
"""
from __future__ import annotations

from ...core import dtype as D
from ...core.grad_mode import no_grad
from ...ops import aten
from ..registry import NONDIFFERENTIABLE, defop

__all__ = ["_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_"]


def _check_scalar(name, what, t, dtype):
    if t.numel() != 1:
        raise RuntimeError(f"{name}: {what} must be a 1-element tensor.")
    if t.dtype != dtype:
        raise RuntimeError(f"{name}: {what} must be a {dtype.scalar_type} tensor.")


def _unscale_check(self, found_inf, inv_scale):
    name = "_amp_foreach_non_finite_check_and_unscale_"
    _check_scalar(name, "found_inf", found_inf, D.float32)
    _check_scalar(name, "inv_scale", inv_scale, D.float32)
    for g in self:
        if g.device != found_inf.device or g.device != inv_scale.device:
            raise RuntimeError(f"{name}: scaled_grads, found_inf and inv_scale must be on the "
                               f"same device (got {g.device}, {found_inf.device} and "
                               f"{inv_scale.device})")
        if not g.dtype.is_floating_point:
            raise RuntimeError(f"{name}: scaled_grads must be floating point tensors, got "
                               f"{g.dtype}")


def _unscale_meta(self, found_inf, inv_scale):
    _unscale_check(self, found_inf, inv_scale)
    return ()


def _unscale_impl(self, found_inf, inv_scale):
    _unscale_check(self, found_inf, inv_scale)
    with no_grad():
        if not self:
            return ()
        bad = None
        for g in self:
            nonfinite = aten.logical_not(aten.all.default(aten.isfinite(g)))
            bad = nonfinite if bad is None else aten.logical_or(bad, nonfinite)
        new_found = aten.where.self(bad, aten.ones_like(found_inf), found_inf)
        updated = [aten._to_copy(aten.mul.Tensor(aten._to_copy(g, dtype=D.float32), inv_scale),
                                 dtype=g.dtype) for g in self]
        for g, u in zip(self, updated):
            aten.copy_(g, u)
        aten.copy_(found_inf, aten.reshape(new_found, list(found_inf.shape)))
    return ()


_amp_foreach_non_finite_check_and_unscale_ = defop(
    "_amp_foreach_non_finite_check_and_unscale_(Tensor(a!)[] self, Tensor(b!) found_inf, "
    "Tensor inv_scale) -> ()",
    meta=_unscale_meta, decomposition=_unscale_impl,
    derivative=NONDIFFERENTIABLE)


def _update_check(self, growth_tracker, found_inf):
    name = "_amp_update_scale_"
    _check_scalar(name, "current_scale", self, D.float32)
    _check_scalar(name, "growth_tracker", growth_tracker, D.int32)
    _check_scalar(name, "found_inf", found_inf, D.float32)
    if not (self.device == growth_tracker.device == found_inf.device):
        raise RuntimeError(f"{name}: current_scale, growth_tracker and found_inf must be on "
                           f"the same device (got {self.device}, {growth_tracker.device} and "
                           f"{found_inf.device})")


def _update_meta(self, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor,
                 growth_interval):
    _update_check(self, growth_tracker, found_inf)
    return self


def _update_impl(self, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor,
                 growth_interval):
    _update_check(self, growth_tracker, found_inf)
    with no_grad():
        skipped = aten.ne.Scalar(found_inf, 0.0)
        successful = aten.add.Scalar(growth_tracker, 1)
        grow = aten.eq.Scalar(successful, growth_interval)
        grown = aten.mul.Scalar(self, scale_growth_factor)
        grown = aten.where.self(aten.isfinite(grown), grown, self)
        new_scale = aten.where.self(
            skipped, aten.mul.Scalar(self, scale_backoff_factor),
            aten.where.self(grow, grown, self))
        zero = aten.zeros_like(growth_tracker)
        new_tracker = aten.where.self(skipped, zero, aten.where.self(grow, zero, successful))
        aten.copy_(growth_tracker, new_tracker)
        aten.copy_(self, new_scale)
    return self


_amp_update_scale_ = defop(
    "_amp_update_scale_(Tensor(a!) self, Tensor(b!) growth_tracker, Tensor found_inf, "
    "float scale_growth_factor, float scale_backoff_factor, int growth_interval) "
    "-> Tensor(a!)",
    meta=_update_meta, decomposition=_update_impl,
    derivative=NONDIFFERENTIABLE)
